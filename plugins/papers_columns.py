"""The papers table shows each paper's text once, and no column that is empty everywhere.

`abstract_plain` (storage) and `abstract_text` (what search indexes) repeat the abstract; a
catalog built from pages without titles has `title` and `url` empty in every row, one built
without public dumps `keywords` and `categories`. The HTML
table and its CSV leave those columns out unless the URL chooses columns itself (`_col`,
`_nocol`), so `?_col=abstract_text` still reaches them, and the JSON API keeps every column.
The request is rewritten inside the server: the address the reader sees does not change.

Which columns are empty is read once per server, at startup and without the request time
limit: on a 1M-paper catalog without titles, finding that `title` is empty everywhere reads the
whole table, longer than the limit, and read on a request it failed that request and every
one after it.
"""

import asyncio
import sqlite3
import weakref
from collections.abc import Awaitable, Callable, Sequence
from typing import TYPE_CHECKING
from urllib.parse import urlencode

from loader.web.catalog_scope import catalog_database, catalog_name, serves_catalog
from loader.web.search_request import SIGNAL_COLUMNS

if TYPE_CHECKING:
    from datasette.app import Datasette

    from loader.web.asgi_types import ASGIApp, Receive, Scope, Send

TABLE = "papers"
ALWAYS_HIDDEN = ("abstract_plain", "abstract_text")
# columns some catalogs never fill; checked once per server (the catalog is immutable)
MAYBE_EMPTY = (
    "title",
    "url",
    "venue",
    "year",
    "status",
    "track",
    "area",
    "track_id",
    "keywords",
    "categories",
    # what public dumps carry: none of them in a catalog built from pages
    *SIGNAL_COLUMNS,
)


# the first rows tell most columns that have values; the others take one pass over the table
FIRST_ROWS = 1000


def empty_columns(connection: sqlite3.Connection, columns: Sequence[str]) -> list[str]:
    """Those of `columns` that hold no value in any row of papers."""
    if not columns:
        return []
    seen = ", ".join(f"max([{column}] is not null)" for column in columns)
    first = connection.execute(f"select {seen} from (select * from papers limit {FIRST_ROWS})")
    unsure = [column for column, found in zip(columns, first.fetchone()) if not found]
    if not unsure:
        return []
    seen = ", ".join(f"max([{column}] is not null)" for column in unsure)
    found = connection.execute(f"select {seen} from papers").fetchone()
    return [column for column, present in zip(unsure, found) if not present]


class HiddenColumns:
    """The papers table's hidden columns, read once (the catalog is immutable); every request
    waits for the one read."""

    def __init__(self, datasette: "Datasette") -> None:
        self.datasette = datasette
        self.columns: list[str] | None = None
        self.read: asyncio.Future[list[str]] | None = None

    async def get(self) -> list[str]:
        if self.columns is None:
            if self.read is None:
                self.read = asyncio.ensure_future(self.read_columns())
            self.columns = await asyncio.shield(self.read)
        return self.columns

    async def read_columns(self) -> list[str]:
        db = catalog_database(self.datasette)
        present = set(await db.table_columns("papers"))
        maybe = [column for column in MAYBE_EMPTY if column in present]
        # a fact of the file, not a visitor's query: no time limit
        empty = await db.execute_fn(lambda connection: empty_columns(connection, maybe))
        return [c for c in ALWAYS_HIDDEN if c in present] + empty


_hidden: "weakref.WeakKeyDictionary[Datasette, HiddenColumns]" = weakref.WeakKeyDictionary()


def hidden_columns(datasette: "Datasette") -> HiddenColumns:
    if datasette not in _hidden:
        _hidden[datasette] = HiddenColumns(datasette)
    return _hidden[datasette]


def chooses_columns(query_string: str) -> bool:
    """The URL chooses columns itself, or sorts by one (a sort column must stay shown)."""
    names = {part.split("=", 1)[0] for part in query_string.split("&") if part}
    return bool(names & {"_col", "_nocol", "_sort", "_sort_desc"})


def table_paths(datasette: "Datasette") -> tuple[str, ...]:
    """The papers table's HTML and CSV paths, or none when the catalog is not served."""
    if not serves_catalog(datasette):
        return ()
    table = datasette.urls.table(catalog_name(datasette), TABLE)
    return (table, datasette.urls.table(catalog_name(datasette), TABLE, format="csv"))


def hide_columns(app: "ASGIApp", datasette: "Datasette") -> "ASGIApp":
    hidden = hidden_columns(datasette)

    async def wrapped(scope: "Scope", receive: "Receive", send: "Send") -> None:
        if (
            scope["type"] == "http"
            and scope["path"] in table_paths(datasette)
            and not chooses_columns(scope.get("query_string", b"").decode("latin-1"))
        ):
            extra = urlencode([("_nocol", column) for column in await hidden.get()])
            if extra:
                query = scope.get("query_string", b"")
                scope = dict(scope, query_string=(query + b"&" if query else b"") + extra.encode())
        await app(scope, receive, send)

    return wrapped


def asgi_wrapper(datasette: "Datasette") -> Callable[["ASGIApp"], "ASGIApp"]:
    return lambda app: hide_columns(app, datasette)


def startup(datasette: "Datasette") -> Callable[[], Awaitable[list[str]]] | None:
    if not serves_catalog(datasette):
        return None
    return hidden_columns(datasette).get
