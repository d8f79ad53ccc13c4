"""loader/web/request_matches.py: a table search reads its matches from the full-text index
once per request (its first page), and its count and facet boxes take them from there, with
the answers SQL gives; matches are never kept beyond their request."""

import asyncio
import sqlite3

import numpy as np
import pytest
from datasette.utils import escape_fts

from loader.web import datasette_coupling, facet_counts, request_matches, worker_reads

IDS_SQL = "select rowid from papers_fts where papers_fts match escape_fts(:search)"
SEARCH = "rowid in (select rowid from papers_fts where papers_fts match escape_fts(:search))"
TERMS = ("learning", "graph neural", "bandit", "zzzqqqnothing")


def test_matches_are_kept_only_within_a_request():
    rowids = np.array([3, 1, 2], dtype=np.int64)
    request_matches.keep_matches(IDS_SQL, {"search": "a"}, rowids)  # no request: not kept
    assert request_matches.kept_matches(IDS_SQL, {"search": "a"}) is None
    with request_matches.one_read_per_request():
        request_matches.keep_matches(IDS_SQL, {"search": "a"}, rowids)
        assert request_matches.kept_matches(IDS_SQL, {"search": "a"}) is rowids
        assert request_matches.kept_matches(IDS_SQL, {"search": "b"}) is None
        assert request_matches.kept_matches(IDS_SQL + " ", {"search": "a"}) is None
        with request_matches.one_read_per_request():  # another request: its own
            assert request_matches.kept_matches(IDS_SQL, {"search": "a"}) is None
        assert request_matches.kept_matches(IDS_SQL, {"search": "a"}) is rowids
    assert request_matches.kept_matches(IDS_SQL, {"search": "a"}) is None


def test_unhashable_parameters_keep_nothing():
    with request_matches.one_read_per_request():
        request_matches.keep_matches(IDS_SQL, {"search": ["a"]}, np.zeros(0, dtype=np.int64))
        assert request_matches.kept_matches(IDS_SQL, {"search": ["a"]}) is None
        assert request_matches.key_of(IDS_SQL, None) is None


async def worker_and_sql(client, catalog):
    """The served worker's reads done (a first search starts them), and a connection to ask
    SQL what the pages should show."""
    await client.get("/catalog/papers.json?_search=learning")
    await worker_reads.all_read()
    connection = sqlite3.connect(f"file:{catalog}?mode=ro", uri=True)
    connection.create_function("escape_fts", 1, escape_fts)
    return connection


def matching(connection, term):
    """How many papers a search for `term` matches, as SQL counts them."""
    sql = f"select count(*) from papers where {SEARCH}"
    return connection.execute(sql, {"search": term}).fetchone()[0]


@pytest.fixture
def reads(monkeypatch):
    """How often each request read its matches from SQLite, and took them from what it kept."""
    counted = {"read": 0, "kept": 0}
    read, kept = facet_counts.matched_rowids, request_matches.kept_matches

    def counting_read(*args, **kwargs):
        counted["read"] += 1
        return read(*args, **kwargs)

    def counting_kept(*args, **kwargs):
        found = kept(*args, **kwargs)
        counted["kept"] += found is not None
        return found

    monkeypatch.setattr(datasette_coupling, "matched_rowids", counting_read)
    monkeypatch.setattr(facet_counts, "matched_rowids", counting_read)
    monkeypatch.setattr(datasette_coupling, "kept_matches", counting_kept)
    from paper_catalog_site.plugins import facets

    monkeypatch.setattr(facets, "kept_matches", counting_kept)
    return counted


@pytest.mark.asyncio(loop_scope="session")
async def test_a_served_search_reads_its_matches_once_with_the_counts_sql_gives(
    real_size_client, real_size_catalog, reads
):
    """Through the app `paper-catalog serve` runs, on more than 10,000 papers: the count and
    the venue and author boxes of each search are SQL's, from one read of the matches."""
    connection = await worker_and_sql(real_size_client, real_size_catalog)
    for term in TERMS:
        params = {"search": term}
        count = matching(connection, term)
        venues = connection.execute(
            f"select venue, count(*) as n from papers where {SEARCH} and venue is not null"
            " group by venue order by n desc, venue limit 5",
            params,
        ).fetchall()
        authors = connection.execute(
            "select authors.name, count(*) as n from paper_authors"
            " join authors on authors.id = paper_authors.author_id"
            " join papers on papers.id = paper_authors.paper_id"
            f" where papers.{SEARCH} group by authors.id order by n desc, authors.name limit 3",
            params,
        ).fetchall()
        reads.update(read=0, kept=0)
        response = await real_size_client.get(
            "/catalog/papers.json", params={"_search": term, "_facet_size": 5}
        )
        data = response.json()
        assert data["filtered_table_rows_count"] == count, term
        assert reads == {"read": 1, "kept": 2} or (count == 0 and reads["read"] <= 1), term
        boxes = {box["name"]: box["results"] for box in data["facet_results"].values()}
        assert [(r["value"], r["count"]) for r in boxes.get("venue", [])] == venues, term
        shown = [(r["label"], r["count"]) for r in boxes.get("authors", [])[:3]]
        assert [n for _, n in shown] == [n for _, n in authors], term
        reads.update(read=0, kept=0)
        html = (await real_size_client.get("/catalog/papers", params={"_search": term})).text
        assert f"{count:,} row" in html or count == 0, term
        assert reads["read"] <= 1, term
    connection.close()


@pytest.mark.asyncio(loop_scope="session")
async def test_requests_at_once_keep_their_own_matches(real_size_client, real_size_catalog):
    connection = await worker_and_sql(real_size_client, real_size_catalog)
    counts = {term: matching(connection, term) for term in TERMS}
    connection.close()
    responses = await asyncio.gather(
        *(
            real_size_client.get("/catalog/papers.json", params={"_search": term})
            for term in TERMS * 3
        )
    )
    for term, response in zip(TERMS * 3, responses):
        assert response.json()["filtered_table_rows_count"] == counts[term], term


@pytest.mark.asyncio(loop_scope="session")
async def test_served_search_facets_from_memory_are_sqls(
    real_size_client, real_size_catalog, monkeypatch
):
    """/search's total and venue facet through the served app, once the worker has read its
    facet table (its column facets then come from memory), are what SQL counts."""
    from loader.web import search_results

    in_memory = []
    counted = search_results.combo_counts_in_memory

    def counting(*args):
        rows = counted(*args)
        in_memory.append(rows is not None)
        return rows

    monkeypatch.setattr(search_results, "combo_counts_in_memory", counting)
    connection = await worker_and_sql(real_size_client, real_size_catalog)
    for term in TERMS:
        params = {"search": term}
        count = matching(connection, term)
        venues = dict(
            connection.execute(
                f"select venue, count(*) from papers where {SEARCH} group by venue",
                params,
            ).fetchall()
        )
        body = (await real_size_client.get("/search.json", params={"q": term})).json()
        assert body["total"] == count, term
        shown = {item["value"]: item["count"] for item in body["facets"].get("venue", [])}
        assert shown == {venue: venues[venue] for venue in shown}, term
        assert len(shown) == min(len(venues), len(shown)) and (shown or not venues), term
    connection.close()
    assert in_memory and all(in_memory)
