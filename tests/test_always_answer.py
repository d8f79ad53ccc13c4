"""A request the app leaves without an answer gets a short 500 with the site's security headers
(loader/serve/always_answer.py), not uvicorn's bare one: around small fake apps, and through the
served app for a CSV stream whose second page fails before any byte of it was sent."""

import asyncio
import logging
import shutil
import sqlite3
from contextlib import closing

import datasette.app  # noqa: F401 (before any plugin file: tests/test_security.py says why)
import httpx
import pytest
from asgi_gzip import GZipMiddleware
from datasette import hookimpl
from datasette.plugins import pm

from loader.serve import always_answer
from loader.serve.always_answer import FAILURE_BODY, AlwaysAnswer
from loader.serve.security_headers import BARE_ANSWER_HEADERS, SecurityHeaders

from .conftest import served_app
from .test_http_wrappers import ask_async
from .test_security_headers import assert_security_headers

START = {"type": "http.response.start", "status": 200, "headers": [(b"content-type", b"text/csv")]}


async def returns_without_answering(scope, receive, send):
    return


async def raises_before_answering(scope, receive, send):
    raise RuntimeError("a failure of ours")


async def starts_then_raises(scope, receive, send):
    await send(START)
    raise RuntimeError("a failure after the start")


async def starts_then_returns(scope, receive, send):
    # what a stream that failed before its first body byte does: gzip holds the start
    await send(START)


async def answers(scope, receive, send):
    await send(START)
    await send({"type": "http.response.body", "body": b"a,b\n", "more_body": False})


def guarded(app):
    """The app inside the guard and the security headers, as create_app stacks them."""
    headers = SecurityHeaders(AlwaysAnswer(app), datasette=None)
    headers.headers = list(BARE_ANSWER_HEADERS)
    return headers


@pytest.mark.parametrize(
    "app",
    [returns_without_answering, raises_before_answering, GZipMiddleware(starts_then_returns)],
    ids=["returns", "raises", "gzip holds the start"],
)
def test_a_request_left_unanswered_gets_a_500_with_the_headers(app):
    # the guard's own logger, read directly: another test of this process may have quietened
    # it or kept it from the root logger (a server's logging configuration)
    logged: list[str] = []
    handler = logging.Handler(logging.ERROR)
    handler.emit = lambda record: logged.append(record.getMessage())  # type: ignore[method-assign]
    server_log, level = always_answer.logger, always_answer.logger.level
    server_log.addHandler(handler)
    server_log.setLevel(logging.ERROR)
    try:
        status, headers, body = asyncio.run(
            ask_async(guarded(app), "/catalog/papers.csv", headers=[(b"accept-encoding", b"gzip")])
        )
    finally:
        server_log.removeHandler(handler)
        server_log.setLevel(level)
    assert (status, body) == (500, FAILURE_BODY)
    for name, value in BARE_ANSWER_HEADERS:
        assert headers[name] == value
    assert headers[b"content-type"].startswith(b"text/plain")
    assert any("/catalog/papers.csv" in message for message in logged), logged


def test_an_answer_that_started_is_never_replaced():
    with pytest.raises(RuntimeError, match="after the start"):
        asyncio.run(ask_async(guarded(starts_then_raises), "/catalog/papers.csv"))
    # returning unfinished: uvicorn closes the connection, an aborted transfer
    sent = []

    async def send(message):
        sent.append(message)

    scope = {"type": "http", "path": "/", "headers": []}
    asyncio.run(AlwaysAnswer(starts_then_returns)(scope, None, send))
    assert sent == [START]
    status, _, body = asyncio.run(ask_async(guarded(answers), "/catalog/papers.csv"))
    assert (status, body) == (200, b"a,b\n")


class SecondPageFails:
    """A test plugin: `stop_past(rowid, n)` interrupts its statement at a row past n, as the
    time limit interrupts one (SQLite's "interrupted"), so a stream's second page fails the
    same way every run, whatever the machine's speed."""

    # Datasette lists its plugins by name when it builds an app
    __name__ = "second_page_fails"

    @hookimpl
    def prepare_connection(self, conn):
        def stop_past(rowid, last):
            if rowid > last:
                conn.interrupt()
            return 1

        conn.create_function("stop_past", 2, stop_past)


@pytest.fixture
def numbers_app(seed_catalog, tmp_path):
    """The served app on the seed catalog plus a table of 1,500 short rows: two pages of a
    stream (1,000 rows a page), the first far below 64 KB."""
    catalog = tmp_path / "catalog.db"
    shutil.copy(seed_catalog, catalog)
    with closing(sqlite3.connect(catalog)) as connection, connection:
        connection.execute("create table numbers (id integer primary key, n integer)")
        connection.executemany(
            "insert into numbers values (?, ?)", [(i, i) for i in range(1, 1501)]
        )
    pm.register(SecondPageFails(), name="second_page_fails")
    try:
        yield served_app(catalog)
    finally:
        pm.unregister(name="second_page_fails")


@pytest.mark.asyncio(loop_scope="session")
async def test_a_stream_whose_second_page_fails_before_its_first_bytes_is_an_error_with_headers(
    numbers_app,
):
    await numbers_app.prepare[0]()
    transport = httpx.ASGITransport(app=numbers_app)
    async with httpx.AsyncClient(transport=transport, base_url="http://site", timeout=60) as c:
        # the first page asks rows 1-1,001 (one more tells there is a next page)
        path = "/catalog/numbers.csv?_stream=on&_where=stop_past(id,+1001)"
        response = await c.get(path, headers={"accept-encoding": "gzip"})
        # the CSV view answers the interrupted page itself (plugins/csv_stream.py); the guard
        # answers any request it would have left unanswered: never a bare response either way
        assert response.status_code in (400, 500)
        assert b"too long" in response.content or response.content == FAILURE_BODY
        assert_security_headers(response, path)
        whole = await c.get("/catalog/numbers.csv?_stream=on&_where=stop_past(id,+1500)")
        assert whole.status_code == 200 and len(whole.text.splitlines()) == 1501
