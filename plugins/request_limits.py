"""Bounds on a request's URL, so no URL costs more than a few dozen of any parameter's work.

Datasette 0.65 does work for each copy of a repeated parameter, and some of it for each pair:
`_facet=venue` 2,000 times cost a worker 47 s and 1 GB, 5,000 times grew one to 6.5 GB until it
died; `_where=1` 5,000 times took 18 s (SECURITY.md). No page of the site needs more than
a handful of any parameter, so before Datasette sees a request:

- its path and query string together hold at most MAX_URL_BYTES;
- no parameter name (`_facet`, `_where`, `_col`, a filter such as `venue__exact`, ...) comes more
  than MAX_REPEATS times, the query asks for at most MAX_FACETS facets of all types, and it
  holds at most MAX_PARAMETERS parameters in all.

More is a 400 naming the limit (Datasette's error page, or its JSON error for `.json`). The
check reads the query string once, split on `&` as Datasette's own parsing splits it, so it costs
linear time in a URL that is already bounded. Counted by the name as Datasette reads it
(percent-escapes and `+` decoded): `%5Ffacet` is `_facet`.

An `asgi_wrapper` hook rather than a wrapper of `paper-catalog serve` alone: the costs are
Datasette's, so the bound holds wherever the plugins are installed, plain `datasette` included.
It is the outermost of the plugin's wrappers (last of plugins/hooks.py ASGI_WRAPPERS),
so no other wrapper reads an unbounded query first.
"""

from collections.abc import Callable
from typing import TYPE_CHECKING
from urllib.parse import unquote_plus

from datasette.utils.asgi import Request
from datasette.views.base import DatasetteError

from loader.web.catalog_scope import in_catalog_scope
from loader.web.error_pages import error_page

if TYPE_CHECKING:
    from datasette.app import Datasette

    from loader.web.asgi_types import ASGIApp, Receive, Scope, Send

# far above the URLs the site's own links make; common servers and proxies refuse longer
# request lines too (nginx's and Apache's defaults are about 8 KiB)
MAX_URL_BYTES = 8 * 1024
# a table's columns for `_col` (papers has fewer than 30), its facets, a few `_where`
MAX_REPEATS = 32
MAX_PARAMETERS = 256
# each facet is a query of its own (up to facet_time_limit_ms), whatever its type: 32 of each
# of `_facet`, `_facet_array` and `_facet_date` would be 96 queries for one page. With slow
# filters a page of 32 facets took 10 s of SQL threads on 11,485 papers, of 16 facets 4 s
# (SECURITY.md); papers, the table with the most, has 8 facets of its own
MAX_FACETS = 16
FACET_PREFIX = "_facet"
NOT_A_FACET = "_facet_size"


def parameter_names(query_string: bytes) -> list[str]:
    """The name of each parameter of a query string, decoded as Datasette decodes it."""
    names = []
    for part in query_string.decode("latin-1").split("&"):
        if part:
            names.append(unquote_plus(part.partition("=")[0], encoding="latin-1"))
    return names


def limit_problem(raw_path: bytes, query_string: bytes) -> str | None:
    """Which limit a request's URL passes, in words, or None when it is within them."""
    size = len(raw_path) + len(query_string)
    if size > MAX_URL_BYTES:
        return (
            f"URL too long: {size:,} bytes of path and query; the limit is {MAX_URL_BYTES:,} bytes"
        )
    names = parameter_names(query_string)
    if len(names) > MAX_PARAMETERS:
        return (
            f"Too many parameters: {len(names):,} in the query; "
            f"the limit is {MAX_PARAMETERS} in all"
        )
    counts: dict[str, int] = {}
    for name in names:
        counts[name] = counts.get(name, 0) + 1
        if counts[name] > MAX_REPEATS:
            return (
                f"Too many parameters: more than {MAX_REPEATS} of {name}; "
                f"the limit is {MAX_REPEATS} of each name"
            )
    facets = sum(name.startswith(FACET_PREFIX) and name != NOT_A_FACET for name in names)
    if facets > MAX_FACETS:
        return (
            f"Too many facets: {facets:,} _facet parameters; "
            f"the limit is {MAX_FACETS} facets in all"
        )
    return None


def bounded_requests(app: "ASGIApp", datasette: "Datasette") -> "ASGIApp":
    async def bounded(scope: "Scope", receive: "Receive", send: "Send") -> None:
        if scope["type"] == "http" and in_catalog_scope(datasette, scope["path"]):
            # some clients (httpx's ASGI transport, Datasette's own client) put the query in
            # raw_path too, as Datasette's Request allows
            raw_path = (scope.get("raw_path") or scope["path"].encode("utf-8")).partition(b"?")[0]
            problem = limit_problem(raw_path, scope.get("query_string") or b"")
            if problem:
                error = DatasetteError(problem, title="Bad request", status=400)
                request = Request(scope, receive)
                response = await error_page(datasette, request, error)()
                await response.asgi_send(send)
                return
        await app(scope, receive, send)

    return bounded


def asgi_wrapper(datasette: "Datasette") -> Callable[["ASGIApp"], "ASGIApp"]:
    return lambda app: bounded_requests(app, datasette)
