"""The home page's data-source line (loader/web/catalog_summary.py, plugins/data_source.py):
what the catalog built holds, from its own tables."""

import re
import shutil

import pytest

from loader.build.catalog import build_catalog
from loader.web.catalog_summary import data_source, year_ranges

from .conftest import FIXTURES, served_app


def test_years_run_together():
    assert year_ranges([2018, 2013, 2014, 2017, 2014]) == "2013–2014, 2017–2018"
    assert year_ranges([1987]) == "1987"
    assert year_ranges([]) == ""


def test_venues_with_their_years_most_papers_first():
    rows = [("ICLR", 2017, 12), ("ICLR", 2018, 12), ("NeurIPS", 2017, 10), (None, None, 90)]
    assert data_source(rows, 4) == (
        "124 papers read from 4 files: ICLR 2017–2018 (24), NeurIPS 2017 (10) and 90 with no venue"
    )
    assert data_source([(None, None, 90)], 3) == "90 papers read from 3 files, none with a venue"
    assert data_source([("arXiv", None, 1)], 1) == "1 paper read from 1 file: arXiv (1)"
    many = [(f"V{number:02d}", 2020, 1) for number in range(15)]
    assert data_source(many, 15).endswith("V11 2020 (1) and 3 more venues")


async def home_line(catalog):
    home = (await served_app(catalog).datasette.client.get("/")).text
    return re.search(r'<p class="data-source">(.*?)</p>', home, re.DOTALL).group(1), home


@pytest.mark.asyncio
async def test_the_home_page_names_the_venues_and_years_built(search_catalog):
    """The seeds (no venue) and 34 real ICLR and NeurIPS papers (fixtures/search)."""
    line, home = await home_line(search_catalog)
    assert line == (
        "Data source: 124 papers read from 4 files: ICLR 2017–2018 (24), NeurIPS 2017 (10) and "
        "90 with no venue; built by the paper-catalog loader."
    )
    assert home.count("Data source") == 1
    assert "seeds/" not in home


@pytest.mark.asyncio
async def test_another_catalog_says_what_it_holds(tmp_path):
    """Paper Copilot's lists and an arXiv snapshot's first records: not the seeds."""
    for source in (
        FIXTURES / "dumps" / "paperlists" / "iclr2017.json",
        FIXTURES / "dumps" / "paperlists" / "corl2024.json",
        FIXTURES / "real" / "origin" / "arxiv_snapshot_head.jsonl",
    ):
        shutil.copy(source, tmp_path)
    build_catalog(sorted(tmp_path.iterdir()), tmp_path / "catalog.db", skip_invalid=True)
    line, _ = await home_line(tmp_path / "catalog.db")
    assert re.fullmatch(
        r"Data source: [\d,]+ papers read from 3 files: ICLR 2017 \(\d+\), CoRL 2024 \(\d+\) "
        r"and arXiv 2007 \(\d+\); built by the paper-catalog loader\.",
        line,
    ), line
