"""One non-streamed response holds at most MAX_RESPONSE_BYTES, refused with a 400 before it
is built.

SQLite's limits (plugins/limits.py) bound each value, not a result: `select zeroblob(249990),
zeroblob(249990) from papers` was answered in full, with gigabytes of server memory to build it
(docs/security-figures.md). Every
query result on every connection is therefore counted as SQLite hands its rows over, and the
query stops with ResponseTooLarge once the result passes the cap: no more rows are fetched, kept
or encoded. Datasette builds every non-streamed response (HTML, JSON, canned and custom SQL, CSV
of a query) from such queries of at most `max_returned_rows` rows. A streamed export (table CSV
with `_stream=on`) is a query per page of rows, each counted on its own, so it still sends every
row with flat memory.

A result is counted as the bytes Datasette's JSON, its widest encoding, makes of it: values,
column names (repeated in every row of `_shape=objects`) and an allowance per cell. Measuring a
string's JSON escapes costs many times what its length does, so a result is first counted by
the length of its values and measured as JSON only past a third of the cap. Below that its JSON
can still pass the cap (six bytes for a control character), and HTML escaping (`<` is `&lt;`)
can make a page larger than its count, so as a second line a non-streamed body longer than the
cap is replaced by the same 400 before it is sent.
"""

import sqlite3
import weakref
from collections.abc import Awaitable, Callable, Sequence
from json.encoder import encode_basestring_ascii
from typing import TYPE_CHECKING, Any

from datasette.utils.asgi import Request
from datasette.views.base import DatasetteError

from loader.web.catalog_scope import in_catalog_scope, is_catalog
from loader.web.error_pages import error_page

if TYPE_CHECKING:
    from datasette.app import Datasette

    from loader.web.asgi_types import ASGIApp, Message, Receive, Scope, Send

# the largest page the catalog serves is max_returned_rows papers of a few KB each, so 16 MiB
# is far above any legitimate result and far below what exhausts the server
MAX_RESPONSE_BYTES = 16 * 1024 * 1024
# quotes, separators, a JSON key's punctuation or a table cell's markup
CELL_ALLOWANCE = 8
# an integer, float or null as JSON: at most 24 characters (-1.2345678901234567e-308)
NUMBER_BYTES = 24
# JSON writes a control or non-ASCII character as a six-byte \uXXXX escape, and Datasette's
# JSON a blob byte the same way
ESCAPE_BYTES = 6
# a result is measured as JSON once its values' length passes a third of the cap; below that,
# measuring would cost a good part of a CSV export's time on every page of rows, and its JSON
# is at most six times that length, which the body check bounds
MEASURE_FROM_FRACTION = 3
REFUSAL = (
    "Response too large: a response may hold at most {cap:,} bytes. "
    "Select fewer rows or columns, or shorter values (substr(), length())."
)


class ResponseTooLarge(Exception):
    """A query result passed MAX_RESPONSE_BYTES."""


def rough_bytes(values: Sequence[Any]) -> int:
    """A row's characters and bytes, a number as NUMBER_BYTES: cheap, by length. Its JSON is at
    most six times this (a control or non-ASCII character, or a blob byte, as a \\uXXXX escape),
    twelve for a character outside the BMP."""
    total = 0
    for value in values:
        kind = value.__class__
        total += len(value) if kind is str or kind is bytes else NUMBER_BYTES
    return total


def json_bytes(values: Sequence[Any]) -> int:
    """A row's values as Datasette's JSON writes them (blob bytes as escapes)."""
    total = 0
    for value in values:
        kind = value.__class__
        if kind is str:
            total += len(encode_basestring_ascii(value)) - 2
        elif kind is bytes:
            total += ESCAPE_BYTES * len(value)
        else:
            total += NUMBER_BYTES
    return total


class ResultCount:
    """One query's result so far: counted by length up to a third of the cap, then as JSON (the
    rows seen until then are kept, to be measured too)."""

    __slots__ = ("exact", "fixed", "rough", "rows")

    def __init__(self, description: Sequence[Sequence[Any]]) -> None:
        # column names and cell allowances, the same in every row
        self.fixed = sum(len(column[0]) + CELL_ALLOWANCE for column in description)
        self.rough = 0
        self.exact: int | None = None
        self.rows: list[Sequence[Any]] | None = []

    def add(self, values: Sequence[Any], cap: int) -> None:
        if self.exact is None:
            # the rows are kept until the count is exact
            assert self.rows is not None
            self.rough += rough_bytes(values) + self.fixed
            self.rows.append(values)
            if self.rough <= cap // MEASURE_FROM_FRACTION:
                return
            self.exact = sum(json_bytes(row) + self.fixed for row in self.rows)
            self.rows = None
        else:
            self.exact += json_bytes(values) + self.fixed
        if self.exact > cap:
            raise ResponseTooLarge(REFUSAL.format(cap=cap))


def counting_row_factory(row_class: Any, cap: int) -> Callable[[sqlite3.Cursor, Any], Any]:
    """A row factory that makes row_class rows and counts each cursor's rows against cap."""
    # one count per cursor (one query), forgotten with it
    counts: weakref.WeakKeyDictionary[sqlite3.Cursor, ResultCount] = weakref.WeakKeyDictionary()

    def make_row(cursor: sqlite3.Cursor, values: Any) -> Any:
        count = counts.get(cursor)
        if count is None:
            count = counts[cursor] = ResultCount(cursor.description)
        count.add(values, cap)
        return row_class(cursor, values)

    return make_row


def prepare_connection(conn: sqlite3.Connection, database: str, datasette: "Datasette") -> None:
    if not is_catalog(datasette, database):
        return
    # Datasette has set sqlite3.Row; keep it, counted
    conn.row_factory = counting_row_factory(conn.row_factory, MAX_RESPONSE_BYTES)


def refusal_error() -> DatasetteError:
    return DatasetteError(
        REFUSAL.format(cap=MAX_RESPONSE_BYTES), title="Response too large", status=400
    )


def handle_exception(
    datasette: "Datasette", request: Request | None, exception: BaseException
) -> Callable[[], Awaitable[Any]] | None:
    if isinstance(exception, ResponseTooLarge) and request is not None:
        return error_page(datasette, request, refusal_error())
    return None


def cap_bodies(app: "ASGIApp", datasette: "Datasette") -> "ASGIApp":
    """Replace a one-piece response body longer than the cap with the 400; streams pass."""

    async def capped(scope: "Scope", receive: "Receive", send: "Send") -> None:
        if scope["type"] != "http" or not in_catalog_scope(datasette, scope["path"]):
            await app(scope, receive, send)
            return
        start: Message | None = None

        async def guarded_send(message: "Message") -> None:
            nonlocal start
            if message["type"] == "http.response.start":
                start = message
                return
            if start is not None:
                held, start = start, None
                body = message.get("body", b"")
                if not message.get("more_body") and len(body) > MAX_RESPONSE_BYTES:
                    request = Request(scope, receive)
                    error = error_page(datasette, request, refusal_error())
                    response = await error()
                    await response.asgi_send(send)
                    return
                await send(held)
            await send(message)

        await app(scope, receive, guarded_send)

    return capped


def asgi_wrapper(datasette: "Datasette") -> Callable[["ASGIApp"], "ASGIApp"]:
    return lambda app: cap_bodies(app, datasette)
