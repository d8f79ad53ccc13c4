"""The facet table (loader/build/facet_table.py) holds each paper's five facet values exactly as
`papers` does, on the catalogs the real loader builds from the seeds and real listings."""

import json
import sqlite3

import pytest

from loader.build.catalog import build_catalog
from loader.build.facet_table import COLUMNS, add_facet_table

from .merge_fixtures import MERGE_FIXTURES

TABLES = ("facet_combos", "paper_facets")
ABSTRACT = "We describe an engine that computes tables of numbers and prints them itself."


@pytest.fixture(scope="module")
def merged_catalog(tmp_path_factory):
    """The merge fixtures: versions merged into one paper (its venue, year, status and track
    chosen from them), their other rows deleted. The build writes the facet table from what
    it kept in memory while streaming and merging, not from `papers`."""
    folder = tmp_path_factory.mktemp("merged")
    # and one paper whose venue and year only its second entry gives
    record = {"abstract": ABSTRACT, "authors": ["Ada Lovelace"], "title": "Notes on Engines"}
    (folder / "first.jsonl").write_text(json.dumps(record) + "\n", encoding="utf-8")
    later = {**record, "venue": "ICML", "year": 2020}
    (folder / "second.jsonl").write_text(json.dumps(later) + "\n", encoding="utf-8")
    path = folder / "catalog.db"
    build_catalog(sorted([*MERGE_FIXTURES.glob("*.jsonl"), *folder.glob("*.jsonl")]), path)
    connection = sqlite3.connect(path)
    assert connection.execute("select count(*) from paper_aliases").fetchone()[0] > 0
    assert connection.execute(
        "select venue, year from papers where title = 'Notes on Engines'"
    ).fetchall() == [("ICML", 2020)]
    connection.close()
    return path


@pytest.fixture(params=["seed_catalog", "search_catalog", "merged_catalog"])
def catalog(request):
    connection = sqlite3.connect(request.getfixturevalue(request.param))
    yield connection
    connection.close()


def test_the_build_writes_what_reading_papers_writes(merged_catalog, tmp_path):
    """Same codes, same order: the table add_facet_table reads from `papers` is the one the
    build wrote from memory."""
    copy = tmp_path / "copy.db"
    copy.write_bytes(merged_catalog.read_bytes())
    connection = sqlite3.connect(copy)
    built = [connection.execute(f"select * from {table}").fetchall() for table in TABLES]
    for table in TABLES:
        connection.execute(f"drop table {table}")
    add_facet_table(connection)
    assert [connection.execute(f"select * from {table}").fetchall() for table in TABLES] == built
    assert len(built[0]) > 1


def test_every_paper_has_its_own_values(catalog):
    columns = ", ".join(COLUMNS)
    papers = catalog.execute(f"select rowid, {columns} from papers order by rowid").fetchall()
    coded = catalog.execute(
        f"select paper_facets.paper, {', '.join(f'facet_combos.{c}' for c in COLUMNS)}"
        " from paper_facets join facet_combos on facet_combos.id = paper_facets.combo"
        " order by paper_facets.paper"
    ).fetchall()
    assert len(papers) > 20
    assert coded == papers


def test_each_combination_is_listed_once_with_its_papers(catalog):
    columns = ", ".join(COLUMNS)
    combos = catalog.execute(f"select {columns}, paper_count from facet_combos").fetchall()
    grouped = catalog.execute(
        f"select {columns}, count(*) from papers group by {columns}"
    ).fetchall()
    assert sorted(combos, key=repr) == sorted(grouped, key=repr)
    assert len(combos) > 1
