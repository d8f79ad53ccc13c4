"""Affiliation names on catalogs built from real records: as Paper Copilot writes them, a
profile page's slugs with their words' case back (loader/rules/normalize.py), and the papers
table showing the names the build gave (plugins/render_cells.py)."""

import re
import shutil
import sqlite3

import pytest

from loader.build.catalog import build_catalog

from .conftest import FIXTURES, served_app


@pytest.fixture(scope="module")
def catalog(tmp_path_factory):
    """Paper Copilot's CVPR 2017 and NeurIPS 2018 lists (`aff` names) and Sergey Levine's
    profile page (slugs made from Paper Copilot's normalised names)."""
    folder = tmp_path_factory.mktemp("affiliations")
    for source in (
        FIXTURES / "dumps" / "paperlists" / "cvpr2017.json",
        FIXTURES / "dumps" / "paperlists" / "nips2018.json",
        FIXTURES / "real" / "sample" / "profile_sergey_levine.txt",
    ):
        shutil.copy(source, folder)
    build_catalog(sorted(folder.iterdir()), folder / "catalog.db", skip_invalid=True)
    return folder / "catalog.db"


def names(catalog):
    with sqlite3.connect(catalog) as db:
        return dict(db.execute("select slug, name from affiliations"))


def test_a_source_name_is_shown_as_written(catalog):
    shown = names(catalog)
    # Paper Copilot's normalised names (`aff_unique_norm`), not its `aff` as written ("MIT
    # CSAIL", "IMATI-CNR, Milan, Italy", "Baidu Autonomous Driving Business Unit†")
    assert shown["massachusetts institute of technology"] == "Massachusetts Institute of Technology"
    assert shown["imati-cnr"] == "IMATI-CNR"
    assert shown["baidu"] == "Baidu"
    assert shown["deepmind"] == "DeepMind"
    assert not {"mit csail", "imati-cnr, milan, italy", "google deepmind"} & set(shown)
    # the profile page's names as it writes them
    assert shown["university of california, berkeley"] == "University of California, Berkeley"


def test_a_slug_is_shown_with_its_words_cased(catalog):
    shown = names(catalog)
    assert shown["university-of-california-berkeley"] == "University of California Berkeley"
    assert shown["google"] == "Google"
    assert not [name for name in shown.values() if re.search(r"\b(Of|For|And|At)\b", name)]


@pytest.mark.asyncio
async def test_the_papers_table_shows_the_source_name(catalog):
    page = await served_app(catalog).datasette.client.get(
        "/catalog/papers?affiliations__arraycontains=imati-cnr"
    )
    assert page.status_code == 200
    assert ">IMATI-CNR</a>" in page.text
    assert "Imati-Cnr" not in page.text
