"""What the ASGI wrappers read from a request scope."""

from collections.abc import Mapping
from http.cookies import CookieError, SimpleCookie
from typing import Any

# Datasette's signed actor cookie: a page for a signed-in actor may differ from the public one
ACTOR_COOKIE = "ds_actor"

# a list the response cache puts in the scope: a page that left something out past a time limit
# (facets, related papers) says so there, and is then never kept. A list, not a flag: Datasette
# copies the scope on its way to a view, and the copies share the list.
INCOMPLETE = "paper_catalog.incomplete"


def header(scope: Mapping[str, Any], name: bytes) -> bytes | None:
    """The first value of header `name` (lower-case bytes), or None."""
    for key, value in scope["headers"]:
        if key == name:
            return value
    return None


def is_personal(scope: Mapping[str, Any]) -> bool:
    """True when the answer may depend on who asks: never shared or revalidated for others."""
    if header(scope, b"authorization") is not None:
        return True
    cookie = header(scope, b"cookie")
    if cookie is None:
        return False
    try:
        return ACTOR_COOKIE in SimpleCookie(cookie.decode("latin-1"))
    except CookieError:
        return True


def mark_incomplete(scope: Mapping[str, Any], what: str) -> None:
    """Tell the response cache (if any) that this answer lacks `what`: it will not be kept."""
    incomplete = scope.get(INCOMPLETE)
    if incomplete is not None:
        incomplete.append(what)
