"""Every export returns every match, at real sizes, through the app `paper-catalog serve` runs.

The catalog: more than 10,000 papers made of the real samples (tests/real_size.py). Exports
of a search bind their ids as one JSON parameter each (loader/web/search_request.py): bound one
variable an id, a batch of 1,000 papers passed the 1,000 variables a connection of the site
allows (plugins/limits.py), and every export of 1,000 matches or more failed. Each count here
is checked against SQL run directly on the catalog file.
"""

import csv
import io
import re
import sqlite3

import httpx
import pytest
import pytest_asyncio

from loader.web import search_request as search
from loader.web import search_results as search_run

from .conftest import served_app
from .plugin_files import load_plugin

on_the_session_loop = pytest.mark.asyncio(loop_scope="session")

# a word in more than 10,000 of the papers
COMMON = [("q", "the")]
# the original bug's size, 1,000-2,000 matches: a ranked word alone (ranked from the index),
# and a word with a filter (ranked over the facet table)
BETWEEN_1000_AND_2000 = {
    "word": [("q", "reinforcement")],
    "word and venue": [("q", "learning"), ("venue", "ICLR")],
}
BIBTEX_ENTRY = re.compile(r"^@\w+\{([^,\n]+),", re.MULTILINE)


@pytest.fixture(scope="module")
def app(real_size_catalog):
    return served_app(real_size_catalog)


@pytest_asyncio.fixture(loop_scope="session")
async def client(app):
    transport = httpx.ASGITransport(app=app)
    async with httpx.AsyncClient(transport=transport, base_url="http://site", timeout=120) as c:
        yield c


@pytest.fixture(scope="module")
def matches(real_size_catalog):
    """The ids of the papers matching q (and a venue), read from the catalog file itself."""
    connection = sqlite3.connect(real_size_catalog)

    def ids(pairs):
        given = dict(pairs)
        sql = (
            "select papers.id from papers_fts join papers on papers.rowid = papers_fts.rowid"
            " where papers_fts match :q and (:venue is null or papers.venue = :venue)"
        )
        return [row[0] for row in connection.execute(sql, {"venue": None, **given})]

    yield ids
    connection.close()


async def download(client, path, pairs):
    response = await client.get(path, params=pairs)
    assert response.status_code == 200, response.text[:300]
    return response


async def first_page(client, pairs):
    """The ids of the first page of /search.json, in its order, and the search's total."""
    body = (await download(client, "/search.json", pairs + [("size", "100")])).json()
    return [result["id"] for result in body["results"]], body["total"]


def csv_ids(text):
    rows = list(csv.reader(io.StringIO(text)))
    assert rows[0][0] == "id"
    return [row[0] for row in rows[1:]]


async def check_csv(client, pairs, expected):
    page, total = await first_page(client, pairs)
    assert total == len(expected)
    response = await download(client, "/search.csv", pairs)
    assert response.headers["content-type"].startswith("text/csv")
    ids = csv_ids(response.text)
    assert len(ids) == total and set(ids) == set(expected)
    assert ids[: len(page)] == page, "the export keeps the page's order"


async def check_bibtex(client, pairs, expected):
    response = await download(client, "/search.bib", pairs)
    keys = BIBTEX_ENTRY.findall(response.text)
    assert len(keys) == len(expected) and len(set(keys)) == len(keys)
    assert response.text.count("\n@") + response.text.startswith("@") == len(expected)


async def check_json(client, pairs, expected):
    page, _ = await first_page(client, pairs)
    body = (await download(client, "/search.json", pairs + [("_all", "1")])).json()
    ids = [result["id"] for result in body["results"]]
    assert body["total"] == len(ids) == len(expected) and set(ids) == set(expected)
    assert ids[: len(page)] == page
    assert all(result["snippet"] is None for result in body["results"]), "exports show none"


@on_the_session_loop
async def test_the_search_csv_of_more_than_10000_matches_has_every_row(client, matches):
    expected = matches(COMMON)
    assert len(expected) > 10_000
    await check_csv(client, COMMON, expected)


@on_the_session_loop
async def test_the_search_bibtex_of_more_than_10000_matches_has_every_entry(client, matches):
    await check_bibtex(client, COMMON, matches(COMMON))


@on_the_session_loop
async def test_the_search_json_of_more_than_10000_matches_has_every_result(client, matches):
    await check_json(client, COMMON, matches(COMMON))


@on_the_session_loop
async def test_the_table_csv_stream_of_more_than_10000_matches_has_every_row(client, matches):
    expected = matches(COMMON)
    pairs = [("_search", "the"), ("_stream", "1"), ("_size", "max")]
    response = await download(client, "/catalog/papers.csv", pairs)
    ids = csv_ids(response.text)
    assert len(ids) == len(expected) and set(ids) == set(expected)


@on_the_session_loop
@pytest.mark.parametrize("search", BETWEEN_1000_AND_2000)
async def test_every_export_of_1000_to_2000_matches_is_whole(client, matches, search):
    pairs = BETWEEN_1000_AND_2000[search]
    expected = matches(pairs)
    assert 1_000 <= len(expected) <= 2_000
    await check_csv(client, pairs, expected)
    await check_bibtex(client, pairs, expected)
    await check_json(client, pairs, expected)


def test_one_batch_of_every_match_fits_a_connection_of_the_site(real_size_catalog):
    """The site's connections allow 1,000 bound variables; a batch of 10,000 ids binds one."""
    connection = sqlite3.connect(real_size_catalog)
    load_plugin("limits").apply_limits(connection)
    request = search.parse_search(COMMON)
    rowids = [row[0] for row in search_run.find_page(connection, request, (), limit=20_000)]
    assert len(rowids) > 10_000
    results = search_run.fetch_results(connection, request, rowids, with_snippets=False)
    by_rowid = dict(connection.execute("select rowid, id from papers"))
    assert [result["id"] for result in results] == [by_rowid[rowid] for rowid in rowids]
    links = connection.execute(
        "select count(*) from paper_authors join papers on papers.id = paper_authors.paper_id"
        " where papers.rowid in (select rowid from papers_fts where papers_fts match 'the')"
    ).fetchone()[0]
    assert sum(len(result["authors"]) for result in results) == links
    few = search_run.fetch_results(connection, request, rowids[:20])
    assert [result["id"] for result in few] == [by_rowid[rowid] for rowid in rowids[:20]]
    assert all("\ue000" in result["snippet"] for result in few), "pages keep their snippets"
    connection.close()


def test_the_catalog_holds_more_than_10000_real_papers(real_size_catalog):
    with sqlite3.connect(real_size_catalog) as connection:
        papers = connection.execute("select count(*) from papers").fetchone()[0]
        venues = connection.execute("select count(distinct venue) from papers").fetchone()[0]
    assert papers > 10_000 and venues > 5
