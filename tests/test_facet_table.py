"""The facet table (loader/facet_table.py) holds each paper's five facet values exactly as
`papers` does, on the catalogs the real loader builds from the seeds and real listings."""

import sqlite3

import pytest

from loader.facet_table import COLUMNS


@pytest.fixture(params=["seed_catalog", "search_catalog"])
def catalog(request):
    connection = sqlite3.connect(request.getfixturevalue(request.param))
    yield connection
    connection.close()


def test_every_paper_has_its_own_values(catalog):
    columns = ", ".join(COLUMNS)
    papers = catalog.execute(f"select rowid, {columns} from papers order by rowid").fetchall()
    coded = catalog.execute(
        f"select paper_facets.paper, {', '.join(f'facet_combos.{c}' for c in COLUMNS)}"
        " from paper_facets join facet_combos on facet_combos.id = paper_facets.combo"
        " order by paper_facets.paper"
    ).fetchall()
    assert len(papers) > 80
    assert coded == papers


def test_each_combination_is_listed_once_with_its_papers(catalog):
    columns = ", ".join(COLUMNS)
    combos = catalog.execute(f"select {columns}, paper_count from facet_combos").fetchall()
    grouped = catalog.execute(
        f"select {columns}, count(*) from papers group by {columns}"
    ).fetchall()
    assert sorted(combos, key=repr) == sorted(grouped, key=repr)
    assert len(combos) > 1
