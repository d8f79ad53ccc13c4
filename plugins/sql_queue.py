"""A visitor's own SQL queues for its own SQL threads, so pages never wait behind it.

Datasette runs every query on one pool of `num_sql_threads` threads, first come first served.
Any visitor may send SQL that runs to the time limit: a normal page then waited for a thread
behind every such query queued before it (docs/security-figures.md). Requests whose SQL the visitor writes (`sql=`,
or a table page's `_where=`) therefore wait here until fewer than `num_sql_threads - 1` of them
run: at least one thread is always left to the pages the site's own queries build. They are
queued, not refused, and in the order they came. A CSV of the catalog is left out: its view
(plugins/csv_stream.py) asks for its rows a page at a time as JSON requests, each queued here on
its own; queued itself too, it would hold a place while its pages wait for one.
"""

import asyncio
from collections.abc import Callable
from typing import TYPE_CHECKING
from urllib.parse import parse_qsl

from loader.web.catalog_scope import in_catalog_scope

if TYPE_CHECKING:
    from datasette.app import Datasette

    from loader.web.asgi_types import ASGIApp, Receive, Scope, Send


def writes_own_sql(query_string: bytes) -> bool:
    keys = {key for key, _ in parse_qsl(query_string.decode("latin-1"), keep_blank_values=True)}
    return "sql" in keys or ("_where" in keys and "_stream" not in keys)


def queue_own_sql(app: "ASGIApp", datasette: "Datasette") -> "ASGIApp":
    slots: asyncio.Semaphore | None = None

    async def queued(scope: "Scope", receive: "Receive", send: "Send") -> None:
        nonlocal slots
        query_string = scope.get("query_string", b"") if scope["type"] == "http" else b""
        if not (b"sql=" in query_string or b"_where=" in query_string):
            await app(scope, receive, send)
            return
        if (
            not writes_own_sql(query_string)
            or scope["path"].endswith(".csv")
            or not in_catalog_scope(datasette, scope["path"])
        ):
            await app(scope, receive, send)
            return
        if slots is None:
            # made on first use, inside the server's event loop
            slots = asyncio.Semaphore(max(1, datasette.setting("num_sql_threads") - 1))
        async with slots:
            await app(scope, receive, send)

    return queued


def asgi_wrapper(datasette: "Datasette") -> Callable[["ASGIApp"], "ASGIApp"]:
    return lambda app: queue_own_sql(app, datasette)
