"""Streamed responses sent in ~64 KB pieces instead of one piece per CSV row.

Datasette's CSV streaming (`_stream=on`) writes every row as its own ASGI message, so a 100k-row
download costs 100k trips through the server and the client. Gathering the body into pieces of
at least CHUNK_BYTES keeps the bytes and the order exactly the same and the memory bounded.
"""

from collections.abc import Callable
from typing import TYPE_CHECKING

from loader.web.catalog_scope import in_catalog_scope

if TYPE_CHECKING:
    from datasette.app import Datasette

    from loader.web.asgi_types import ASGIApp, Message, Receive, Scope, Send

CHUNK_BYTES = 64 * 1024


def buffer_body(app: "ASGIApp", datasette: "Datasette") -> "ASGIApp":
    async def wrapped(scope: "Scope", receive: "Receive", send: "Send") -> None:
        if scope["type"] != "http" or not in_catalog_scope(datasette, scope["path"]):
            await app(scope, receive, send)
            return
        pending: list[bytes]
        pending, size = [], 0

        async def buffered_send(message: "Message") -> None:
            nonlocal pending, size
            if message["type"] != "http.response.body":
                await send(message)
                return
            more = message.get("more_body", False)
            body = message.get("body", b"")
            if more and not pending and len(body) >= CHUNK_BYTES:
                await send(message)
                return
            pending.append(body)
            size += len(body)
            if more and size < CHUNK_BYTES:
                return
            await send({"type": "http.response.body", "body": b"".join(pending), "more_body": more})
            pending, size = [], 0

        await app(scope, receive, buffered_send)

    return wrapped


def asgi_wrapper(datasette: "Datasette") -> Callable[["ASGIApp"], "ASGIApp"]:
    return lambda app: buffer_body(app, datasette)
