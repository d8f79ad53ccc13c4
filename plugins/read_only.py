"""The published catalog is read-only: refuse every method but GET, HEAD and OPTIONS with
405 before Datasette sees it (0.65 answers a POST to a read-only canned query with a 500).
Another database of the same Datasette is left as Datasette serves it."""

from collections.abc import Callable
from typing import TYPE_CHECKING

from loader.web.catalog_scope import in_catalog_scope

if TYPE_CHECKING:
    from datasette.app import Datasette

    from loader.web.asgi_types import ASGIApp, Receive, Scope, Send

READ_METHODS = {"GET", "HEAD", "OPTIONS"}


def refuse_writes(app: "ASGIApp", datasette: "Datasette") -> "ASGIApp":
    async def guarded(scope: "Scope", receive: "Receive", send: "Send") -> None:
        if (
            scope["type"] == "http"
            and scope["method"] not in READ_METHODS
            and in_catalog_scope(datasette, scope["path"])
        ):
            await send(
                {
                    "type": "http.response.start",
                    "status": 405,
                    "headers": [
                        (b"allow", b"GET, HEAD, OPTIONS"),
                        (b"content-type", b"text/plain; charset=utf-8"),
                    ],
                }
            )
            await send({"type": "http.response.body", "body": b"This catalog is read-only.\n"})
            return
        await app(scope, receive, send)

    return guarded


def asgi_wrapper(datasette: "Datasette") -> Callable[["ASGIApp"], "ASGIApp"]:
    return lambda app: refuse_writes(app, datasette)
