"""Every CSV stream of the catalog ends, with every row once, or says it stopped
(plugins/csv_stream.py): `_where` clauses cannot defeat Datasette's keyset pages, a stream whose
next page would repeat rows stops, aborted after its first byte or answered as an error
before it, through the app `paper-catalog serve` runs."""

import asyncio
import csv
import io
import logging
import shutil
import sqlite3
from urllib.parse import urlencode

import pytest

from .asgi_requests import get_scope
from .conftest import served_app
from .test_exports_real_size import drive

on_the_session_loop = pytest.mark.asyncio(loop_scope="session")


def csv_rows(text):
    return list(csv.DictReader(io.StringIO(text, newline="")))


@pytest.fixture(scope="module")
def catalog_sql(real_size_catalog):
    connection = sqlite3.connect(real_size_catalog)
    yield lambda text, params=(): connection.execute(text, params).fetchall()
    connection.close()


ENDLESS_WHERE = {
    "or": [("_where", "1 or 0")],
    "or, sorted on few values": [("_where", "1 or 0"), ("_sort", "year")],
    "or, descending": [("_where", "year is null or year > 0"), ("_sort_desc", "year")],
    "two clauses with or": [("_where", "1 or 0"), ("_where", "0 or 1")],
}


class TooLong(Exception):
    """The answer passed the bound a test gives it."""


async def bounded_get(app, path, query, limit):
    """A GET through the ASGI app that stops reading past `limit` body bytes, so a stream that
    would never end fails the test instead of hanging it: (status, body, completed)."""
    start, bodies, done = {}, [], []
    requested = []

    async def receive():
        if not requested:
            requested.append(True)
            return {"type": "http.request", "body": b"", "more_body": False}
        await asyncio.Event().wait()

    async def send(message):
        if message["type"] == "http.response.start":
            start.update(message)
            return
        bodies.append(message.get("body", b""))
        if sum(map(len, bodies)) > limit:
            raise TooLong
        if not message.get("more_body", False):
            done.append(True)

    scope = get_scope(path, query)
    try:
        await app(scope, receive, send)
    except TooLong:
        pass
    return start.get("status"), b"".join(bodies), bool(done)


@on_the_session_loop
@pytest.mark.parametrize("name", ENDLESS_WHERE)
async def test_a_where_with_or_streams_every_row_once(real_size_app, catalog_sql, name):
    """Datasette joins `_where` and its keyset clause with `and`: `1 or 0 and <after the
    last row>` matched page 1 again on every page, forever."""
    expected = {row[0] for row in catalog_sql("select id from papers")}
    assert len(expected) > 10_000
    pairs = ENDLESS_WHERE[name] + [("_stream", "on"), ("_col", "year")]
    # each row is its 16-character id and a year: twice the size is far more than the CSV
    status, body, completed = await bounded_get(
        real_size_app, "/catalog/papers.csv", urlencode(pairs), limit=2 * 24 * len(expected)
    )
    assert status == 200 and completed
    ids = [row["id"] for row in csv_rows(body.decode("utf-8"))]
    assert len(ids) == len(set(ids)) == len(expected) and set(ids) == expected


# the same sorted stream of one column: tests/test_exports_real_size.py, "papers by year"
@pytest.mark.slow
@on_the_session_loop
async def test_a_stream_of_every_column_sorted_on_few_values_has_every_row_once(
    real_size_client, catalog_sql
):
    """The papers table whole (a sort shows every column), by a year 18 values share:
    Datasette's own CSV sends 675 rows of this catalog twice and 232 never."""
    response = await real_size_client.get("/catalog/papers.csv?_stream=on&_sort=year")
    assert response.status_code == 200
    rows = csv_rows(response.text)
    assert "abstract_plain" in rows[0]
    ids = [row["id"] for row in rows]
    expected = {row[0] for row in catalog_sql("select id from papers")}
    assert len(ids) == len(set(ids)) == len(expected) and set(ids) == expected
    keys = [(row["year"] != "", int(row["year"] or 0), row["id"]) for row in rows]
    assert keys == sorted(keys)


@on_the_session_loop
@pytest.mark.parametrize("where", ["1) or (1", "1 -- the keyset clause", "1 /* and", "'1) or (1"])
async def test_a_where_that_would_escape_its_parentheses_is_refused(real_size_client, where):
    pairs = [("_where", where), ("_stream", "on"), ("_col", "year")]
    response = await real_size_client.get("/catalog/papers.csv", params=pairs)
    assert response.status_code == 400
    assert "one SQL expression" in response.text


# -- a stream that cannot go on --------------------------------------------------------------

# rows sorted by a blob: Datasette's next page starts after the last row's blob written as
# text, and SQLite holds every blob greater than any text, so each page was the first again
# (blobs that are not UTF-8: Datasette's JSON gives those as blobs, the others as text)
BLOB_ROWS = 1_500


@pytest.fixture(scope="module")
def blob_catalog(seed_catalog, tmp_path_factory):
    """The seed catalog and a table of rows sorted by a blob: short rows, and long ones (more
    than a 64 KB piece of CSV on the first page)."""
    path = tmp_path_factory.mktemp("blob-sort") / "catalog.db"
    shutil.copyfile(seed_catalog, path)
    with sqlite3.connect(path) as connection:
        connection.execute("create table blobs (id integer primary key, data blob, note text)")
        connection.executemany(
            "insert into blobs values (?, ?, ?)",
            [(n, bytes([0x80 + n % 7]), f"row {n} " + "x" * 100) for n in range(1, BLOB_ROWS + 1)],
        )
    connection.close()
    return path


@pytest.fixture(scope="module")
def blob_app(blob_catalog):
    return served_app(blob_catalog)


@on_the_session_loop
async def test_a_stream_that_repeats_rows_after_its_first_byte_is_aborted(blob_app, caplog):
    query = urlencode({"_sort": "data", "_stream": "on", "_col": ["data", "note"]}, doseq=True)
    with caplog.at_level(logging.ERROR, logger="paper_catalog.exports"):
        answer = await drive(blob_app, "/catalog/blobs.csv", query)
    assert answer.status == 200 and not answer.complete
    assert answer.body, "the first piece was sent (gzipped: its text may still be held)"
    # what came through holds no row twice
    rows = csv_rows(answer.text().rsplit("\r\n", 1)[0] + "\r\n")
    ids = [row["id"] for row in rows]
    assert len(ids) == len(set(ids)) < BLOB_ROWS
    logged = [record.getMessage() for record in caplog.records]
    assert any("download aborted" in line and "repeats" in line for line in logged), logged


@on_the_session_loop
async def test_a_stream_that_fails_before_its_first_byte_is_an_error_answer(blob_app, caplog):
    """Nothing sent yet (short rows: the first page is less than a 64 KB piece): a status and
    a short message, with the site's headers, not a started 200 without a body."""
    query = urlencode({"_sort": "data", "_stream": "on", "_col": "data", "_dl": "1"})
    with caplog.at_level(logging.ERROR, logger="paper_catalog.exports"):
        answer = await drive(blob_app, "/catalog/blobs.csv", query)
    assert answer.status == 500 and answer.complete
    assert answer.headers["content-type"].startswith("text/plain")
    assert "content-disposition" not in answer.headers
    assert "x-content-type-options" in answer.headers, "the site's security headers"
    assert answer.text().startswith("This download stopped: ")
    assert any("download aborted after 0 bytes" in r.getMessage() for r in caplog.records)


@on_the_session_loop
async def test_a_blob_stream_that_ends_is_whole(blob_app):
    """The same table, keyed on its primary key: every row once, blobs as their URLs."""
    answer = await drive(blob_app, "/catalog/blobs.csv", "_stream=on&_col=data")
    assert answer.status == 200 and answer.complete
    rows = csv_rows(answer.text())
    assert [int(row["id"]) for row in rows] == list(range(1, BLOB_ROWS + 1))
    assert rows[0]["data"] == "http://site/catalog/blobs/1.blob?_blob_column=data"


@on_the_session_loop
async def test_csvs_of_visitors_sql_at_once_all_finish(datasette):
    """A CSV's rows are JSON requests, each queued with the visitor's SQL (plugins/sql_queue.py):
    the CSV itself is not, or CSVs at once would hold every place while their pages wait."""
    queries = [f"select id, {n} as n from papers" for n in range(2 * 3 + 1)]

    async def download(sql):
        return await datasette.client.get("/catalog.csv?" + urlencode({"sql": sql}))

    # a guard against a hang only: the downloads take a fraction of it
    responses = await asyncio.wait_for(asyncio.gather(*map(download, queries)), timeout=300)
    for number, response in enumerate(responses):
        assert response.status_code == 200
        rows = csv_rows(response.text)
        assert len(rows) == 90 and {row["n"] for row in rows} == {str(number)}


@on_the_session_loop
async def test_the_csv_of_a_query_past_its_time_limit_is_a_400_that_says_so(datasette):
    """A query that never ends: interrupted at the time limit, whatever the machine's speed."""
    sql = "with recursive r(n) as (select 1 union all select n + 1 from r) select count(*) from r"
    response = await datasette.client.get("/catalog.csv?" + urlencode({"sql": sql, "_dl": "1"}))
    assert response.status_code == 400
    # the site's sentence (plugins/client_errors.py), the same on both versions
    assert "SQL query took too long; the time limit is" in response.text
    assert "<textarea" not in response.text and "content-disposition" not in response.headers


@on_the_session_loop
async def test_the_csv_asks_for_its_rows_as_the_visitor(seed_catalog):
    """Datasette's own permission checks decide, with the visitor's actor (its signed cookie
    passed on to the JSON the rows come from)."""
    from datasette.app import Datasette

    from loader.serve.settings import SETTINGS

    metadata = {"databases": {"catalog": {"allow": {"id": "reader"}}}}
    ds = Datasette(immutables=[str(seed_catalog)], metadata=metadata, settings=SETTINGS)
    reader = {"ds_actor": ds.sign({"a": {"id": "reader"}}, "actor")}
    stranger = {"ds_actor": ds.sign({"a": {"id": "stranger"}}, "actor")}
    for url in ("/catalog/papers.csv?_stream=on", "/catalog.csv?sql=select+1+as+one"):
        assert (await ds.client.get(url)).status_code == 403
        assert (await ds.client.get(url, cookies=stranger)).status_code == 403
        allowed = await ds.client.get(url, cookies=reader)
        assert allowed.status_code == 200 and len(csv_rows(allowed.text)) >= 1
