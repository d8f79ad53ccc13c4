"""Titled records without an abstract are papers (tests/fixtures/dumps/paperlists_noabstract,
see SOURCE.md there): read from every format, given an id of their title and first author,
merged by title and authors, labelled by their title, found by search, shown with no
abstract block; only a record with neither a title nor an abstract is a problem."""

import json
import sqlite3

import pytest

from loader.build.catalog import build_catalog
from loader.build.prepare import entry_paper_id, prepare_entry
from loader.read.sources import read_source
from loader.records import Entry, PreparedEntry, Problem
from loader.rules.normalize import paper_id

from .conftest import FIXTURES, second_datasette

NO_ABSTRACT = FIXTURES / "dumps" / "paperlists_noabstract"
# the three NeurIPS 2017 papers Paper Copilot lists twice: a poster with its abstract and an
# oral or spotlight without one
TWICE = (
    "A Unified Approach to Interpreting Model Predictions",
    "End-to-End Differentiable Proving",
    "Style Transfer from Non-parallel Text by Cross-Alignment",
)


def read(name):
    source, items = read_source(NO_ABSTRACT / name)
    items = list(items)
    entries = [i for i in items if isinstance(i, Entry)]
    return source.format, entries, [i for i in items if isinstance(i, Problem)]


@pytest.fixture(scope="module")
def catalog(tmp_path_factory):
    path = tmp_path_factory.mktemp("no-abstract") / "catalog.db"
    build_catalog(sorted(NO_ABSTRACT.glob("*.json")), path)  # not its SOURCE.md
    connection = sqlite3.connect(path)
    yield path, connection
    connection.close()


@pytest.mark.parametrize("name", ["kdd2024.json", "siggraph2012.json"])
def test_a_paper_copilot_list_without_abstracts_is_read(name):
    """KDD 2024's and SIGGRAPH 2012's lists (no `site`, no `aff`, no abstract anywhere) were
    "unknown format", and each record "record has no abstract"."""
    format, entries, problems = read(name)
    assert (format, len(entries), problems) == ("paperlists", 6, [])
    assert all(e.title and e.authors and e.abstract == "" for e in entries)


def test_an_author_list_written_with_commas_is_split():
    """SIGGRAPH writes `author` as "A, B, C": one name a person, not one name of seven."""
    entries = read("siggraph2012.json")[1]
    assert entries[0].authors == [
        "Min H. Kim",
        "Todd Alan Harvey",
        "David S. Kittle",
        "Holly Rushmeier",
        "Julie Dorsey",
        "Richard O. Prum",
        "David J. Brady",
    ]
    oral = next(e for e in read("nips2017.json")[1] if e.status == "Oral")
    assert oral.authors == ["Scott M Lundberg", "Su-In Lee"]  # "Scott M Lundberg, Su-In Lee"


def test_a_no_abstract_paper_id_is_its_title_and_first_author():
    entries = read("kdd2024.json")[1]
    ids = [entry_paper_id(e) for e in entries]
    assert len(set(ids)) == len(ids)
    assert paper_id("") not in ids and all(paper_id("", e.title) not in ids for e in entries)
    first = entries[0]
    same = Entry(**{**first.__dict__, "line": 99, "authors": list(first.authors[:1])})
    other = Entry(**{**first.__dict__, "authors": ["Ann Lee", *first.authors]})
    assert entry_paper_id(same) == ids[0] != entry_paper_id(other)
    prepared = prepare_entry(first)
    assert isinstance(prepared, PreparedEntry)
    assert (prepared.paper_id, prepared.label, prepared.abstract) == (ids[0], first.title, "")


def test_only_a_record_with_no_title_and_no_abstract_is_a_problem(tmp_path):
    records = [
        {"title": "A Titled Paper", "author": "Ann Lee;Bo Chen", "aff": ""},
        {"title": "", "author": "Cy Dai", "abstract": " ", "aff": ""},
        {"author": "Di Fox", "abstract": "An untitled paper with an abstract.", "aff": ""},
    ]
    (tmp_path / "kdd2024.json").write_text(json.dumps(records, indent=4), encoding="utf-8")
    _, items = read_source(tmp_path / "kdd2024.json")
    items = list(items)
    assert [i.title for i in items if isinstance(i, Entry)] == ["A Titled Paper", None]
    assert [str(i).split("/")[-1] for i in items if isinstance(i, Problem)] == [
        "kdd2024.json:7: record has no title and no abstract"
    ]


def test_no_abstract_arxiv_and_openreview_records_are_papers(tmp_path):
    snapshot = {"id": "0704.0001", "authors": "Ann Lee", "title": "A Title", "versions": []}
    note = {"id": "abc", "content": {"title": {"value": "T"}, "authors": {"value": ["A B"]}}}
    (tmp_path / "snapshot.json").write_text(json.dumps(snapshot) + "\n", encoding="utf-8")
    (tmp_path / "notes.json").write_text(json.dumps({"notes": [note]}), encoding="utf-8")
    for name, title in (("snapshot.json", "A Title"), ("notes.json", "T")):
        _, items = read_source(tmp_path / name)
        (entry,) = items
        assert isinstance(entry, Entry) and (entry.title, entry.abstract) == (title, "")


def test_the_build_gives_papers_labelled_by_title(catalog):
    _, connection = catalog
    rows = connection.execute(
        "select venue, count(*), sum(abstract = ''), sum(label = title) from papers group by venue"
    ).fetchall()
    assert sorted(rows) == [("KDD", 6, 6, 6), ("NeurIPS", 3, 0, 3), ("SIGGRAPH", 6, 6, 6)]
    assert connection.execute("select count(*) from load_problems").fetchone() == (0,)


def test_a_version_without_abstract_merges_by_title_and_authors_and_keeps_the_abstract(catalog):
    """The oral or spotlight (no abstract) and the poster (its abstract) are one paper, which
    shows the poster's abstract whichever version is shown."""
    _, connection = catalog
    for title in TWICE:
        row = connection.execute(
            "select source_count, length(abstract) > 100 from papers where lower(title) = lower(?)",
            [title],
        ).fetchall()
        assert row == [(2, 1)], title


@pytest.mark.parametrize(
    "q, label",
    [
        ("hyperspectral", "3D Imaging Spectroscopy for Measuring 3D Hyperspectral Patterns on"),
        ("Rushmeier", "3D Imaging Spectroscopy for Measuring 3D Hyperspectral Patterns on"),
        ("pseudo cliques", "A Fast Exact Algorithm to Enumerate Maximal Pseudo-cliques in"),
    ],
)
def test_full_text_search_finds_them_by_title_and_authors(catalog, q, label):
    _, connection = catalog
    found = connection.execute(
        "select papers.label from papers_fts join papers on papers.rowid = papers_fts.rowid "
        "where papers_fts match ?",
        [q],
    ).fetchall()
    assert [row[0][: len(label)] for row in found] == [label]


@pytest.mark.asyncio
async def test_the_paper_page_shows_no_abstract_block_and_search_finds_it(catalog):
    path, connection = catalog
    (pid,) = connection.execute(
        "select id from papers where title like 'A Theory of Monte Carlo Visibility%'"
    ).fetchone()
    (with_abstract,) = connection.execute(
        "select id from papers where title like 'End-to-%'"
    ).fetchone()
    site = second_datasette(path)
    html = (await site.client.get(f"/catalog/papers/{pid}")).text
    assert "A Theory of Monte Carlo Visibility Sampling" in html
    assert 'class="abstract-section"' not in html
    html = (await site.client.get(f"/catalog/papers/{with_abstract}")).text
    assert 'class="abstract-section"' in html
    body = (await site.client.get("/search.json?q=visibility+sampling")).json()
    assert [result["id"] for result in body["results"]] == [pid]
