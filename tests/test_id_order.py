"""loader/web/id_order.py: a plain search's first page from its matches' ranks in id order is
the page SQLite's `order by id` gives (the served app's use of it: tests/test_datasette_coupling.py)."""

import re
import sqlite3

import numpy as np
import pytest
from datasette.utils import escape_fts

from loader.web import id_order, worker_reads
from loader.web.facet_counts import matched_rowids

SEARCH = "rowid in (select rowid from papers_fts where papers_fts match escape_fts(:search))"


@pytest.mark.parametrize("size", [1, 26, 101])
def test_first_by_id_is_order_by_id(real_catalog, size):
    """On real papers, for each word of their titles, and a word in no paper."""
    ranks = id_order.read_ranks(str(real_catalog))
    assert ranks is not None
    connection = sqlite3.connect(f"file:{real_catalog}?mode=ro", uri=True)
    connection.create_function("escape_fts", 1, escape_fts)
    titles = " ".join(t for (t,) in connection.execute("select label from papers limit 300"))
    terms = sorted({w for w in re.findall(r"[a-z]{4,}", titles.lower())})[:120]
    ids_sql = "select rowid from papers_fts where papers_fts match escape_fts(:search)"
    page = f"select rowid from papers where {SEARCH} order by id limit {size}"
    matched = 0
    for term in [*terms, "learning", "zzzqqqnothing"]:
        expected = [rowid for (rowid,) in connection.execute(page, {"search": term})]
        rowids = matched_rowids(connection, ids_sql, {"search": term})
        assert id_order.first_by_id(ranks, rowids, size) == expected, term
        matched += bool(expected)
    connection.close()
    assert matched > len(terms) / 2  # most terms match papers


def test_ranks_are_the_id_order_and_a_stranger_is_left_to_sqlite(real_catalog):
    ranks = id_order.read_ranks(str(real_catalog))
    with sqlite3.connect(f"file:{real_catalog}?mode=ro", uri=True) as connection:
        in_order = [r for (r,) in connection.execute("select rowid from papers order by id")]
    assert ranks[in_order].tolist() == list(range(len(in_order)))
    everything = np.array(sorted(in_order), dtype=np.int64)
    assert id_order.first_by_id(ranks, everything, 5) == in_order[:5]
    assert id_order.first_by_id(ranks, np.array([len(ranks)], dtype=np.int64), 5) is None
    holes = np.flatnonzero(ranks == id_order.UNRANKED)
    if len(holes):  # a rowid no paper has (a merged version's)
        assert id_order.first_by_id(ranks, holes[:1].astype(np.int64), 5) is None
    assert id_order.first_by_id(ranks, np.zeros(0, dtype=np.int64), 5) == []


def test_a_database_without_papers_has_no_ranks(tmp_path):
    path = tmp_path / "other.db"
    with sqlite3.connect(path) as connection:
        connection.execute("create table other (id text primary key)")
    assert id_order.read_ranks(str(path)) is None


@pytest.mark.asyncio(loop_scope="session")
async def test_the_served_first_page_is_the_catalogs_id_order_at_real_size(
    real_size_client, real_size_catalog
):
    """Through the app `paper-catalog serve` runs, on more than 10,000 papers: once the worker
    has read its ranks, each plain search's first page (JSON and HTML) is SQLite's `order by
    id` of the matches, and its next page follows on."""
    await real_size_client.get("/catalog/papers.json?_search=learning")  # starts the read
    await worker_reads.all_read()
    assert any(f.result() is not None for f in id_order._ranks.futures.values())
    connection = sqlite3.connect(f"file:{real_size_catalog}?mode=ro", uri=True)
    connection.create_function("escape_fts", 1, escape_fts)
    ordered = f"select id from papers where {SEARCH} order by id"
    for term in ("learning", "graph neural", "reinforcement", "bandit", "zzzqqqnothing"):
        expected = [paper for (paper,) in connection.execute(ordered, {"search": term})]
        response = await real_size_client.get(
            "/catalog/papers.json", params={"_search": term, "_shape": "objects"}
        )
        page = [row["id"] for row in response.json()["rows"]]
        assert page == expected[: len(page)] and len(page) == min(len(expected), 25), term
        if response.json()["next"]:
            after = await real_size_client.get(response.json()["next_url"])
            assert [row["id"] for row in after.json()["rows"]] == expected[25:50], term
        html = (await real_size_client.get("/catalog/papers", params={"_search": term})).text
        assert all(f"/catalog/papers/{paper}" in html for paper in page), term
    connection.close()


@pytest.mark.asyncio(loop_scope="session")
async def test_a_served_app_starts_reading_its_ranks_when_it_starts(search_catalog):
    """Before its first request: the first searches then take their page from the ranks."""
    from .conftest import served_app

    app = served_app(search_catalog)
    catalog = app.datasette.get_database("catalog")
    assert id_order._ranks.futures.get(catalog) is None
    messages = iter([{"type": "lifespan.startup"}, {"type": "lifespan.shutdown"}])

    async def receive():
        return next(messages)

    async def send(message):
        pass

    await app({"type": "lifespan"}, receive, send)
    await worker_reads.all_read()
    assert id_order.ranks_of(catalog) is not None
