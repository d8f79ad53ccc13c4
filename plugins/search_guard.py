"""Datasette 0.65 answers HTTP 400 for a table `?_search=` that escapes to invalid FTS5
syntax: empty or blank (`escape_fts('')`), only quotes (`"`, `""`), a NUL byte, or a quoted
phrase broken by a newline. Clean such parameters before the request reaches Datasette, so a
user gets rows, not an error page."""

from collections.abc import Callable
from typing import TYPE_CHECKING
from urllib.parse import parse_qsl, urlencode

from datasette.utils import escape_fts

from loader.web.catalog_scope import in_catalog_scope

if TYPE_CHECKING:
    from datasette.app import Datasette

    from loader.web.asgi_types import ASGIApp, Receive, Scope, Send


def is_search(key: str) -> bool:
    return key == "_search" or key.startswith("_search_")


def clean_search(value: str) -> str:
    """Whitespace (newlines included) collapsed and NUL bytes dropped: escape_fts() only
    balances quotes on one line and passes NUL through to FTS5."""
    return " ".join(value.replace("\0", " ").split())


def cleaned_query_string(query_string: bytes) -> bytes | None:
    """The query string with every _search/_search_<column> value cleaned, and dropped when
    nothing searchable is left; None when nothing needed changing."""
    pairs = parse_qsl(query_string.decode("latin-1"), keep_blank_values=True)
    kept = []
    for key, value in pairs:
        if is_search(key):
            value = clean_search(value)
            if not escape_fts(value).strip():
                continue
        kept.append((key, value))
    if kept == pairs:
        return None
    return urlencode(kept).encode("latin-1")


def guard_search(app: "ASGIApp", datasette: "Datasette") -> "ASGIApp":
    async def guarded(scope: "Scope", receive: "Receive", send: "Send") -> None:
        if (
            scope["type"] == "http"
            and b"_search" in scope.get("query_string", b"")
            and in_catalog_scope(datasette, scope["path"])
        ):
            cleaned = cleaned_query_string(scope["query_string"])
            if cleaned is not None:
                scope = dict(scope, query_string=cleaned)
        await app(scope, receive, send)

    return guarded


def asgi_wrapper(datasette: "Datasette") -> Callable[["ASGIApp"], "ASGIApp"]:
    return lambda app: guard_search(app, datasette)
