"""Every export returns every match, at real sizes, through the app `paper-catalog serve` runs.

The catalog: more than 10,000 papers made of the real samples (tests/real_size.py). Exports
of a search bind their ids as one JSON parameter each (loader/web/search_request.py): bound one
variable an id, a batch of 1,000 papers passed the 1,000 variables a connection of the site
allows (plugins/limits.py), and every export of 1,000 matches or more failed. Each count here
is checked against SQL run directly on the catalog file.
"""

import asyncio
import contextlib
import csv
import io
import json
import logging
import re
import shutil
import sqlite3
import subprocess
import zlib
from dataclasses import dataclass
from pathlib import Path
from urllib.parse import urlencode

import httpx
import pytest
import yaml
from datasette.database import QueryInterrupted

from loader.serve.app import DEFAULT_CACHE_BYTES
from loader.web import search_exports
from loader.web import search_request as search
from loader.web import search_results as search_run

from .asgi_requests import get_scope
from .conftest import ROOT, served_app
from .plugin_files import load_plugin
from .test_security import peak_rss_mb
from .test_serve import served

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


@pytest.fixture
def client(real_size_client):
    return real_size_client


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


# the same export through the whole served stack: test_the_served_stack_streams_an_export_...
@pytest.mark.slow
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


# --- every paper, sorted streams -------------------------------------------------------------


@pytest.fixture(scope="module")
def catalog_sql(real_size_catalog):
    connection = sqlite3.connect(real_size_catalog)
    yield lambda text, params=(): connection.execute(text, params).fetchall()
    connection.close()


# each order with one format in `make test` (both formats and both orders still whole at the
# real size), each with the other in `make test-slow`
WHOLE_CATALOG_EXPORTS = [
    ("newest", "csv"),
    ("oldest", "json"),
    pytest.param("newest", "json", marks=pytest.mark.slow),
    pytest.param("oldest", "csv", marks=pytest.mark.slow),
]


@on_the_session_loop
@pytest.mark.parametrize("sort, extension", WHOLE_CATALOG_EXPORTS)
async def test_every_paper_exports_in_the_pages_order(client, catalog_sql, sort, extension):
    """No words and no filter: the largest match set, the whole catalog."""
    expected = [row[0] for row in catalog_sql("select id from papers")]
    check = {"csv": check_csv, "json": check_json}[extension]
    await check(client, [("sort", sort)], expected)


SORTED_STREAMS = {
    "papers by year": ("papers", [("_sort", "year")], "year", False),
    "papers by year, descending": ("papers", [("_sort_desc", "year")], "year", True),
    "authors by paper count": ("authors", [("_sort_desc", "paper_count")], "paper_count", True),
    "a search by year": ("papers", [("_search", "the"), ("_sort", "year")], "year", False),
}


@on_the_session_loop
@pytest.mark.parametrize("name", SORTED_STREAMS)
async def test_a_table_stream_sorted_on_repeated_values_has_every_row_once(
    client, catalog_sql, name
):
    """Datasette's first page is sorted by the column alone, its next ones by the column and
    the key: rows tying with the first page's last one came twice or never (plugins/csv_stream.py
    sorted_stream_start)."""
    table, sort, column, descending = SORTED_STREAMS[name]
    search_term = dict(sort).get("_search")
    where = " where rowid in (select rowid from papers_fts where papers_fts match ?)"
    expected = catalog_sql(
        f"select id, {column} from {table}" + (where if search_term else ""),
        [search_term] if search_term else [],
    )
    assert len(expected) > 2_000 and len({value for _, value in expected}) < len(expected) / 100
    pairs = sort + [("_stream", "on"), ("_size", "max"), ("_col", column)]
    response = await download(client, f"/catalog/{table}.csv", pairs)
    rows = list(csv.DictReader(io.StringIO(response.text)))
    ids = [row["id"] for row in rows]
    assert len(ids) == len(set(ids)) == len(expected)
    assert set(ids) == {str(row_id) for row_id, _ in expected}
    # SQLite's order: nulls first ascending, last descending
    cells = [row[column] for row in rows]
    if descending:
        keys = [(cell == "", -int(cell or 0)) for cell in cells]
    else:
        keys = [(cell != "", int(cell or 0)) for cell in cells]
    assert keys == sorted(keys)


# --- errors, the client leaving, the served stack --------------------------------------------


@pytest.fixture(scope="module")
def order_time_limited(real_size_catalog, tmp_path_factory):
    """The served app with an export's ordering statement limited to 1 ms."""
    metadata = yaml.safe_load((ROOT / "metadata.yml").read_text(encoding="utf-8"))
    metadata.setdefault("plugins", {})["paper-catalog-search"] = {"export_order_time_limit_ms": 1}
    path = tmp_path_factory.mktemp("order-limit") / "metadata.yml"
    path.write_text(yaml.safe_dump(metadata), encoding="utf-8")
    return served_app(real_size_catalog, metadata=path)


@on_the_session_loop
@pytest.mark.parametrize("extension", ["csv", "bib", "json"])
async def test_an_export_past_its_time_limit_before_its_first_byte_is_an_error(
    order_time_limited, extension
):
    answer = await drive(order_time_limited, f"/search.{extension}", "q=the&_all=1")
    assert answer.status == 400 and answer.complete
    assert "content-disposition" not in answer.headers
    assert json.loads(answer.body)["error"] == "This export took too long: add words or filters."


class Answer:
    """What an ASGI app sent for one request, as a server would see it."""

    def __init__(self):
        self.start = None
        self.bodies = []
        self.complete = False

    @property
    def status(self):
        return self.start["status"]

    @property
    def headers(self):
        return {name.decode().lower(): value.decode() for name, value in self.start["headers"]}

    @property
    def body(self):
        return b"".join(self.bodies)

    def text(self):
        """The body as text, decompressed as far as it goes when gzipped."""
        if self.headers.get("content-encoding") == "gzip":
            return zlib.decompressobj(wbits=31).decompress(self.body).decode("utf-8", "replace")
        return self.body.decode("utf-8", "replace")


async def drive(app, path, query="", on_first_body=None, leave_after_first_body=False):
    """One GET through the ASGI app as uvicorn serves it (gzip accepted): the answer, whether
    or not it completed. `on_first_body` runs when the first piece of the body is sent;
    `leave_after_first_body` makes the client disconnect then."""
    answer = Answer()
    first_body = asyncio.Event()
    requested = False

    async def receive():
        nonlocal requested
        if not requested:
            requested = True
            return {"type": "http.request", "body": b"", "more_body": False}
        if leave_after_first_body:
            await first_body.wait()
        else:
            await asyncio.Event().wait()  # a client that stays until the answer ends
        return {"type": "http.disconnect"}

    async def send(message):
        if message["type"] == "http.response.start":
            answer.start = message
            return
        answer.bodies.append(message.get("body", b""))
        if not message.get("more_body", False):
            answer.complete = True
        if not first_body.is_set():
            first_body.set()
            if on_first_body is not None:
                on_first_body()

    scope = get_scope(path, query, headers=((b"accept-encoding", b"gzip"),))
    await app(scope, receive, send)
    return answer


@pytest.fixture
def catalog_copy(real_size_catalog, tmp_path):
    """A copy of the catalog a test may break."""
    copy = tmp_path / "catalog.db"
    shutil.copyfile(real_size_catalog, copy)
    return copy


# what SQLite says of the wiped file: a page it reads is garbage, or page 1 (its header) is,
# when the statement is the first of a connection that had not read it (Datasette's SQL
# threads each hold one, and a batch may run on any of them)
DAMAGED = ("malformed", "file is not a database")


def wipe(path):
    """Every byte of the file zero, in place: each page SQLite reads from now on is garbage.
    Not a truncation: the site's connections map the file (plugins/limits.py), and reading a
    mapped page past the end of a file is a bus error, not an SQLite error."""
    size = path.stat().st_size
    with path.open("r+b") as file:
        for _ in range(0, size, 1 << 20):
            file.write(bytes(min(1 << 20, size - file.tell())))


@on_the_session_loop
async def test_the_served_stack_streams_an_export_as_it_is_read(real_size_catalog, client, matches):
    """gzip and the response cache pass each piece on as it comes: none holds the export. The
    search CSV of more than 10,000 matches has every row, in the page's order."""
    expected = matches(COMMON)
    assert len(expected) > 10_000
    app = served_app(real_size_catalog, cache_bytes=DEFAULT_CACHE_BYTES)
    answer = await drive(app, "/search.csv", "q=the")
    assert answer.status == 200 and answer.complete
    assert answer.headers["content-type"].startswith("text/csv")
    assert answer.headers["content-encoding"] == "gzip"
    assert answer.headers["content-disposition"] == 'attachment; filename="papers-the.csv"'
    batches = -(-len(expected) // search_exports.EXPORT_BATCH)
    assert len(answer.bodies) > batches
    assert max(len(body) for body in answer.bodies) < len(answer.body) / 4
    ids = csv_ids(answer.text())
    page, total = await first_page(client, COMMON)
    assert total == len(ids) == len(expected) and set(ids) == set(expected)
    assert ids[: len(page)] == page, "the export keeps the page's order"


@on_the_session_loop
async def test_an_error_after_the_first_byte_aborts_the_download(catalog_copy, matches, caplog):
    """The catalog file wiped while the export streams: the next batch's read fails.
    The answer ends without its last piece (uvicorn then closes the connection: a failed
    download), holds no error page, is logged, and is never kept by the response cache,
    although an answer of its size would be."""
    app = served_app(catalog_copy, cache_bytes=DEFAULT_CACHE_BYTES)
    pairs = BETWEEN_1000_AND_2000["word"]
    query = urlencode(pairs)
    with caplog.at_level(logging.ERROR, logger="paper_catalog.exports"):
        answer = await drive(app, "/search.csv", query, on_first_body=lambda: wipe(catalog_copy))
    assert answer.status == 200 and not answer.complete
    text = answer.text()
    assert text.startswith(",".join(search_exports.CSV_COLUMNS))
    assert 0 < len(csv_ids(text.rsplit("\r\n", 1)[0] + "\r\n")) < len(matches(pairs))
    assert "<html" not in text.lower() and not any(error in text for error in DAMAGED)
    logged = [record.getMessage() for record in caplog.records]
    assert any(
        "download aborted" in line
        and f"/search.csv?{query}" in line
        and any(error in line for error in DAMAGED)
        for line in logged
    ), logged
    assert len(answer.body) < DEFAULT_CACHE_BYTES / 16, "small enough to be kept if complete"
    again = await drive(app, "/search.csv", query)
    assert not (again.status == 200 and again.complete), "the aborted answer was not kept"


@on_the_session_loop
async def test_an_error_in_a_table_stream_after_its_first_page_aborts_it(catalog_copy, caplog):
    app = served_app(catalog_copy)
    with caplog.at_level(logging.ERROR, logger="paper_catalog.exports"):
        answer = await drive(
            app,
            "/catalog/papers.csv",
            "_search=the&_stream=on&_size=max&_dl=1",
            on_first_body=lambda: wipe(catalog_copy),
        )
    assert answer.status == 200 and not answer.complete
    assert answer.headers["content-disposition"] == 'attachment; filename="papers-the.csv"'
    text = answer.text()
    assert text.startswith("id,") and "<html" not in text.lower()
    assert not any(error in text for error in DAMAGED)
    assert any("download aborted" in record.getMessage() for record in caplog.records)


@on_the_session_loop
@pytest.mark.parametrize(
    "path, query", [("/search.csv", "q=the"), ("/catalog/papers.csv", "_stream=on&_size=max")]
)
async def test_an_export_stops_when_the_client_leaves(real_size_app, matches, path, query):
    answer = await drive(real_size_app, path, query, leave_after_first_body=True)
    assert answer.status == 200 and not answer.complete
    papers = len(matches(COMMON))
    read = len(csv_ids(answer.text().rsplit("\r\n", 1)[0] + "\r\n"))
    assert read <= 3 * search_exports.EXPORT_BATCH < papers, "no batch read for nobody"


@dataclass
class RealSizeServer:
    url: str
    supervisor: subprocess.Popen
    db: Path
    log: Path


@pytest.fixture(scope="module")
def real_size_server(real_size_catalog, tmp_path_factory):
    """One real `paper-catalog serve` (a worker) on a copy of the catalog, for the two tests
    over HTTP: a start on this catalog costs seconds. The whole stream is read first; the
    test of a failed download, last in this file, then wipes the copy (the server, asked to
    look for a new catalog once an hour, keeps serving it)."""
    folder = tmp_path_factory.mktemp("real-size-served")
    db = folder / "catalog.db"
    # a copy: the server keeps its snapshot beside the file, and the real-size catalog is shared
    shutil.copyfile(real_size_catalog, db)
    log_path = folder / "serve.log"
    with log_path.open("w") as log, served(db, poll=3600, log=log) as (url, supervisor):
        yield RealSizeServer(url, supervisor, db, log_path)


def test_streamed_csv_sends_every_row_past_the_cap_against_a_real_server(real_size_server):
    url, supervisor, db = real_size_server.url, real_size_server.supervisor, real_size_server.db
    with contextlib.closing(sqlite3.connect(db)) as connection:
        (papers,) = connection.execute("select count(*) from papers").fetchone()
    # every column (the plain text too): past the cap at the real size (11,000+ papers)
    params = {"_stream": "on", "_size": "max", "_nocol": "url"}
    with httpx.stream("GET", f"{url}/catalog/papers.csv", params=params, timeout=300) as r:
        assert r.status_code == 200
        text = b"".join(r.iter_bytes()).decode("utf-8")
    size = len(text.encode("utf-8"))
    peak = peak_rss_mb(supervisor)
    rows = list(csv.reader(io.StringIO(text)))
    print(
        f"\nstreamed CSV: {len(rows) - 1} rows, {size / 1e6:.1f} MB; server peak RSS {peak:.0f} MB"
    )
    assert papers > 10_000
    assert len(rows) - 1 == papers
    assert size > load_plugin("response_cap").MAX_RESPONSE_BYTES


def test_a_failed_export_is_a_failed_download_for_a_real_client(real_size_server):
    """`paper-catalog serve` itself, over HTTP: both exports started, then the catalog file
    wiped; each transfer ends without the last chunk of its chunked body, as curl
    (exit 18) and browsers report a failed download, and the server logs both."""
    urls = ["/search.csv?q=the", "/catalog/papers.csv?_search=the&_stream=on&_size=max"]
    with contextlib.ExitStack() as stack:
        http = stack.enter_context(httpx.Client(base_url=real_size_server.url, timeout=60))
        streams = [stack.enter_context(http.stream("GET", u)) for u in urls]
        pieces = [stream.iter_raw() for stream in streams]
        for stream, piece in zip(streams, pieces):
            assert stream.status_code == 200 and next(piece)
        wipe(real_size_server.db)
        for piece in pieces:
            with pytest.raises(httpx.RemoteProtocolError, match="incomplete chunked"):
                for _ in piece:
                    pass
    logged = real_size_server.log.read_text()
    assert logged.count("download aborted") == 2, logged[-2000:]


class InstructionBudget:
    """Steps run on one connection that SQLite interrupts past `budget` thousand virtual
    machine instructions: a server that affords only so much work a step, deterministically
    (a time limit is the same interruption, after a time that depends on the machine)."""

    def __init__(self, connection, budget=None):
        self.connection = connection
        self.budget = budget
        self.used = 0

    async def __call__(self, step):
        self.used = 0

        def count():
            self.used += 1
            return self.budget is not None and self.used > self.budget

        self.connection.set_progress_handler(count, 1000)
        try:
            return step(self.connection)
        except sqlite3.OperationalError as error:
            raise QueryInterrupted(error, "", {}) from error
        finally:
            self.connection.set_progress_handler(None, 1000)


@on_the_session_loop
async def test_a_batch_past_its_limit_is_read_again_in_halves(real_size_catalog):
    connection = sqlite3.connect(real_size_catalog)
    request = search.parse_search(COMMON)
    rowids = search_exports.order_matches(connection, request, None)[:1000]
    unlimited = InstructionBudget(connection)
    whole = await search_exports.read_batch(unlimited, request, rowids, None)
    assert [paper["id"] for paper in whole] == [
        paper["id"] for paper in search_run.fetch_results(connection, request, rowids, False)
    ]
    # enough for a quarter of the batch in one step, not for half of it
    busy = InstructionBudget(connection, budget=unlimited.used // 3)
    with pytest.raises(QueryInterrupted):
        await busy(lambda conn: search_exports.read_papers(conn, request, rowids, None))
    assert await search_exports.read_batch(busy, request, rowids, None) == whole
    hopeless = InstructionBudget(connection, budget=0)
    with pytest.raises(QueryInterrupted):
        await search_exports.read_batch(hopeless, request, rowids, None)
    connection.close()
