"""A client's mistake in a URL is a 4xx with a readable message, never a 500.

Datasette 0.65 reads several URL parameters with bare `int()` or `json.loads()`, raises some of
its own request checks with its default status 500, and lets a few SQLite errors that only a
request can cause reach its 500 page. Two pieces, each limited to errors the request caused:

- parameters with a fixed syntax (`_timelimit`, `_through`, a table's `_facet...` names,
  JSON `_facet` configs naming their column, `__in` lists, boolean flags) and integers past
  Python's 4,300 digits (`_ttl`, `_facet_size`, filter values) are checked before Datasette
  sees the request;
- `handle_exception` turns into 400/404 only the errors that name a request mistake: Datasette's
  own request checks raised as 500s, a NUL byte or an out-of-range integer from the URL reaching
  SQLite, the time limit (also Datasette's own page for it, which runs an inline script), and a
  row URL with the wrong number of key values.
"""

import json
import re
import sqlite3
import sys
from collections.abc import Awaitable, Callable
from typing import TYPE_CHECKING, Any
from urllib.parse import parse_qsl

from datasette.database import QueryInterrupted
from datasette.utils import tilde_decode, urlsafe_components
from datasette.utils.asgi import Request
from datasette.views.base import DatasetteError

from loader.web.absent_columns import absent_facet_column
from loader.web.catalog_scope import in_catalog_scope
from loader.web.error_pages import error_page

if TYPE_CHECKING:
    from datasette.app import Datasette

    from loader.web.asgi_types import ASGIApp, Receive, Scope, Send

BOOLEANS = {"on", "off", "true", "false", "1", "0"}
# an integer as int() reads it: spaces around, a sign, digits with single underscores between
INTEGER = re.compile(r"\s*[+-]?\d+(?:_\d+)*\s*")
BOOLEAN_PARAMETERS = {"_json_infinity"}
# Datasette's own request checks that it raises with the default status 500
REQUEST_CHECKS = ("Cannot sort table by ", "Cannot use _sort and _sort_desc", "Invalid _through")
# sqlite3 refuses SQL text with a NUL before running it; only a URL puts one there
NUL_IN_SQL = "the query contains a null character"
# Python's sqlite3 on a text of several statements (Datasette 1.0 passes it on)
SEVERAL_STATEMENTS = "You can only execute one statement at a time."
# a filter value that looks like an integer is bound as one
INTEGER_TOO_LARGE = "Python int too large to convert to SQLite INTEGER"
TOO_LONG = "SQL query took too long; the time limit is {limit} ms."
# the title of Datasette's time-limit error page
INTERRUPTED = "SQL Interrupted"


def parsed_json(value: str) -> Any:
    """The JSON value, or None when it is not JSON (or nested past Python's recursion limit)."""
    try:
        return json.loads(value)
    except (ValueError, RecursionError):
        return None


def facet_column(config: Any) -> Any:
    """The column a JSON facet config names, as Datasette reads it (`column`, else `simple`),
    or None when it is no object or names none."""
    if not isinstance(config, dict):
        return None
    return config.get("column") or config.get("simple") or None


def too_many_digits(value: str) -> bool:
    """Whether int() would refuse value for its length (Python's limit on the digits of an
    integer read from text), where Datasette reads it with a bare int()."""
    limit = sys.get_int_max_str_digits()
    return (
        bool(limit)
        and len(value) > limit
        and INTEGER.fullmatch(value) is not None
        and sum(character.isdigit() for character in value) > limit
    )


def parameter_problem(key: str, value: str) -> str | None:
    """Why one URL parameter cannot be read, or None when it can."""
    if too_many_digits(value):
        return f"{key} is a number of more than {sys.get_int_max_str_digits()} digits"
    if key == "_timelimit":
        try:
            milliseconds = int(value) if value else 0
        except ValueError:
            milliseconds = -1
        if milliseconds < 0:
            return "_timelimit must be a whole number of milliseconds (0 or more)"
    elif key in BOOLEAN_PARAMETERS:
        if value.lower() not in BOOLEANS:
            return f"{key} must be one of {', '.join(sorted(BOOLEANS))}"
    elif key == "_through":
        through = parsed_json(value)
        if not (
            isinstance(through, dict)
            and isinstance(through.get("table"), str)
            and isinstance(through.get("column"), str)
            and "value" in through
        ):
            return '_through must be a JSON object {"table": ..., "column": ..., "value": ...}'
    elif key.startswith("_facet") and value.startswith("{"):
        if not isinstance(facet_column(parsed_json(value)), str):
            return f'{key} must be a column name or a JSON object {{"column": "a column name"}}'
    elif key.endswith(("__in", "__notin")) and value.startswith("["):
        values = parsed_json(value)
        if not isinstance(values, list) or not all(
            isinstance(item, (str, int, float)) for item in values
        ):
            return f"{key} must be a comma-separated list or a JSON list of strings and numbers"
    return None


def facet_name_problem(key: str) -> str | None:
    """Why a table page cannot read a `_facet...` parameter's name, or None. Datasette reads the
    facet type from the name after `_facet_`; a name with neither (`_facets`) failed as a 500
    (an unset variable) on every table without facets in metadata.yml."""
    if key.startswith("_facet") and key != "_facet" and not key.startswith("_facet_"):
        return f"{key} is not a facet parameter: use _facet, _facet_<type> or _facet_size"
    return None


def is_table_path(datasette: "Datasette", path: str) -> bool:
    """/<database>/<table>, with or without a format: the pages Datasette reads facets on (the
    site's own pages, such as /search, have parameters of their own)."""
    base_url = datasette.setting("base_url")
    if base_url != "/" and path.startswith(base_url):
        path = "/" + path[len(base_url) :]
    parts = path.strip("/").split("/")
    return len(parts) == 2 and parts[0] != "-"


def query_problem(query_string: bytes, table_page: bool = False) -> str | None:
    """The first unreadable parameter of a query string, read as Datasette reads it."""
    for key, value in parse_qsl(query_string.decode("latin-1"), keep_blank_values=True):
        problem = parameter_problem(key, value) or (table_page and facet_name_problem(key))
        if problem:
            return problem
    return None


async def send_error(
    datasette: "Datasette", scope: "Scope", receive: "Receive", send: "Send", error: Exception
) -> None:
    """The site's error page (HTML) or Datasette's error object (.json) for error."""
    request = Request(scope, receive)
    response = await error_page(datasette, request, error)()
    await response.asgi_send(send)


def check_parameters(app: "ASGIApp", datasette: "Datasette") -> "ASGIApp":
    async def checked(scope: "Scope", receive: "Receive", send: "Send") -> None:
        if (
            scope["type"] == "http"
            and scope.get("query_string")
            and in_catalog_scope(datasette, scope["path"])
        ):
            table_page = is_table_path(datasette, scope["path"])
            problem = query_problem(scope["query_string"], table_page)
            if not problem and table_page:
                path, query_string = scope["path"], scope["query_string"]
                problem = await absent_facet_column(datasette, path, query_string)
            if problem:
                error = DatasetteError(problem, title="Bad request", status=400)
                await send_error(datasette, scope, receive, send, error)
                return
        await app(scope, receive, send)

    return checked


def asgi_wrapper(datasette: "Datasette") -> Callable[["ASGIApp"], "ASGIApp"]:
    return lambda app: check_parameters(app, datasette)


async def wrong_row_key(datasette: "Datasette", request: Request) -> DatasetteError | None:
    """A 404 when a row URL does not give one value per primary-key column, else None."""
    url_vars = request.url_vars
    if "pks" not in url_vars or "table" not in url_vars:
        return None
    try:
        db = datasette.get_database(route=tilde_decode(url_vars["database"]))
    except KeyError:
        return None
    table = tilde_decode(url_vars["table"])
    if not await db.table_exists(table):
        return None
    expected = len(await db.primary_keys(table)) or 1
    given = len(urlsafe_components(url_vars["pks"]))
    if given == expected:
        return None
    return DatasetteError(
        f"Record not found: {table} rows are named by {expected} key value(s), not {given}",
        title="Not found",
        status=404,
    )


def request_error(datasette: "Datasette", exception: BaseException) -> DatasetteError | None:
    """The 4xx a request-caused exception stands for, or None."""
    # Datasette's own time-limit page runs an inline script, which the site's
    # Content-Security-Policy would refuse: the same plain message as everywhere else instead
    if isinstance(exception, QueryInterrupted) or (
        isinstance(exception, DatasetteError) and exception.title == INTERRUPTED
    ):
        limit = datasette.setting("sql_time_limit_ms")
        return DatasetteError(TOO_LONG.format(limit=limit), title=INTERRUPTED, status=400)
    if (
        isinstance(exception, DatasetteError)
        and exception.status == 500
        and str(exception.message).startswith(REQUEST_CHECKS)
    ):
        return DatasetteError(exception.message, title="Bad request", status=400)
    if isinstance(exception, sqlite3.ProgrammingError) and str(exception) == NUL_IN_SQL:
        return DatasetteError("NUL bytes are not allowed in SQL", title="Bad request", status=400)
    if isinstance(exception, sqlite3.ProgrammingError) and str(exception) == SEVERAL_STATEMENTS:
        return DatasetteError("Only one SQL statement is allowed", title="Bad request", status=400)
    if isinstance(exception, OverflowError) and str(exception) == INTEGER_TOO_LARGE:
        return DatasetteError(
            "A number in the request is out of SQLite's 64-bit integer range",
            title="Bad request",
            status=400,
        )
    return None


def handle_exception(
    datasette: "Datasette", request: Request | None, exception: BaseException
) -> Callable[[], Awaitable[Any]] | None:
    if request is None or not in_catalog_scope(datasette, request.path):
        return None
    error = request_error(datasette, exception)
    if error is not None:
        return error_page(datasette, request, error)
    if not isinstance(exception, sqlite3.ProgrammingError):
        return None

    async def row_key_or_default() -> Any:
        error = await wrong_row_key(datasette, request)
        if error is None:
            return None
        return await error_page(datasette, request, error)()

    return row_key_or_default
