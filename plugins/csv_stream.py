"""Every CSV of the catalog (tables and their streams, rows, canned and custom SQL queries), as a
view of our own that asks Datasette for the same rows as JSON.

For `/catalog.csv`, `/catalog/<table or canned query>.csv` and `/catalog/<table>/<row>.csv`,
the view asks Datasette's JSON of the same URL through its internal client
(`datasette.client`), with the visitor's cookies and credentials: Datasette's own filters,
`_search`, `_where`, `_sort`, `_col`, `_labels`, canned queries, `sql=`, permissions and time
limits choose the rows, and a stream follows the JSON's keyset `next` page by page. The rows are
written by a string-method encoder with formula-safe cells (loader/web/csv_cells.py) in ~64 KB
pieces: the same bytes as Datasette's own CSV (`csv.writer`) of an ordinary table, but
- a cell a spreadsheet would read as a formula (`=HYPERLINK(...)`, `@SUM(...)`) starts with `'`,
  and the search highlight characters (U+E000/U+E001, the canned `search` query's snippet
  marks) are left out;
- every stream ends: each `_where` is sent to Datasette in parentheses (Datasette joins them and
  its keyset clause with `and`: `1 or 0` would otherwise match page 1 again on every page), a
  `_where` that is not one expression (`1) or (1`) is refused, and a stream whose next page
  would repeat a row or a `next` it has sent stops, logged, as an aborted transfer;
- a stream sorted with `_sort`/`_sort_desc` (or a table's default sort) has every row once:
  Datasette orders its first page by the sort column alone and the next ones by that column and
  the primary key, continuing after the first page's last row, so rows that tie with it were
  repeated or skipped. The stream starts instead from a `_next` before every row, so every
  page, the first one too, is in (sort column, primary key) order (sorted_stream_start);
- a query that fails is its error answer (a 400 with the reason for bad SQL, where Datasette's
  CSV was an empty 200), `/catalog.csv` without `sql=` a 400; an error on a later page aborts
  the download (loader/web/export_stream.py), one before the first byte is an error answer;
- `_dl=1` names the file after the table and what filters it (`papers-applications.csv`).
Other databases keep Datasette's own CSV.
"""

import csv
import hashlib
import io
import json
import re
from base64 import b64decode
from collections.abc import Awaitable, Callable
from typing import Any
from urllib.parse import parse_qsl, urlencode

from datasette.utils import (
    add_cors_headers,
    escape_sqlite,
    path_from_row_pks,
    path_with_format,
    tilde_decode,
    tilde_encode,
)
from datasette.utils.asgi import BadRequest, Base400, Request, Response
from markupsafe import escape

from loader.web.catalog_scope import catalog_name, serves_catalog
from loader.web.csv_cells import CHECKED_STARTS, HIGHLIGHTS, safe_row, safe_text
from loader.web.datasette_api import as_065_json, json_extras, query_path, table_config
from loader.web.export_names import attachment, export_file_name
from loader.web.export_stream import AbortingStream, DownloadRefused, StreamStopped

CHUNK_CHARACTERS = 64 * 1024
# the catalog's database, SQL query, table (or canned query) and row CSV routes: plugin
# routes are matched before Datasette's own
DATABASE_CSV_ROUTE = r"/(?P<database>{route})\.csv$"
QUERY_CSV_ROUTE = r"{query}\.csv$"
TABLE_CSV_ROUTE = r"/(?P<database>{route})/(?P<table>[^\/\.]+)\.csv$"
ROW_CSV_ROUTE = r"/(?P<database>{route})/(?P<table>[^/]+?)/(?P<pks>[^/]+?)\.csv$"
# what makes csv.writer's excel dialect (QUOTE_MINIMAL) quote a field
QUOTE_TRIGGERS = (",", "\n", "\r")
# Datasette's `_trace` CSV: the CSV as text in an HTML page
TRACE_PREAMBLE = (
    '<html><head><title>CSV debug</title></head><body><textarea style="width: 90%; height: 70vh">'
)
TRACE_POSTAMBLE = "</textarea></body></html>"
NO_QUERY = "A CSV of a database needs a query: add ?sql=select ..."
# the title of Datasette's error for a query past its time limit, and what its HTML message holds
INTERRUPTED = "SQL Interrupted"
INTERRUPTED_MARKUP = "<textarea"
ONE_EXPRESSION = "Each _where must be one SQL expression: its parentheses must balance"
# a `_next` value below every value of a primary key column of this affinity, as Datasette
# binds it (text, which SQLite converts for a numeric column: -infinity); a column without
# affinity can hold any type, and no one text is below them all
KEY_BEFORE_ALL = {"INTEGER": "-1e999", "REAL": "-1e999", "NUMERIC": "-1e999", "TEXT": ""}
# filters named in a download's file name by their value alone; other operators by all three
PLAIN_FILTER_OPERATORS = ("", "exact", "arraycontains")
# parameters of the CSV alone, or of JSON alone (a shape, parsed JSON cells, infinities written
# as null, JSONP, facets):
# never passed on to the JSON the rows come from
CSV_ONLY = {"_stream", "_dl", "_trace", "_header", "_nofacet", "_nocount"}
JSON_ONLY = {
    "_shape",
    "_json",
    "_json_infinity",
    "_nl",
    "_callback",
    "_facet",
    "_facet_array",
    "_facet_size",
}
# what the JSON is asked for on top of the CSV's parameters: no facets, no count (as
# Datasette's CSV), infinite floats as they are (not null), rows as lists (0.65's default
# shape, which 1.0 gives when asked)
ADDED = [("_nofacet", "1"), ("_nocount", "1"), ("_json_infinity", "1"), ("_shape", "arrays")]
# what tells Datasette who asks (its actor_from_request hooks read these)
CREDENTIALS = ("cookie", "authorization")
# SQLite's tokens as far as parentheses go: quoted names and strings, comments (an unclosed one
# runs to the end, as SQLite reads it), parentheses, anything else
SQL_PIECES = re.compile(
    r"""'(?:[^']|'')*'?|"(?:[^"]|"")*"?|`(?:[^`]|``)*`?|\[[^\]]*\]?|--[^\n]*|/\*.*?(?:\*/|$)"""
    r"""|[()]|[^'"`\[()/-]+|.""",
    re.DOTALL,
)


class SlowRow(Exception):
    """A value the fast encoder does not write itself; csv.writer writes the row."""


def encode_field(value: Any) -> str:
    kind = value.__class__
    if kind is str:
        if value[:1] in CHECKED_STARTS:
            value = safe_text(value)
        if '"' in value:
            return '"' + value.replace('"', '""') + '"'
        for trigger in QUOTE_TRIGGERS:
            if trigger in value:
                return '"' + value + '"'
        return value
    if value is None:
        return ""
    if kind is int or kind is float:
        # csv.writer writes repr() of a float, which is str() of it
        return str(value)
    raise SlowRow


def fast_line(row: list[Any]) -> str:
    """The CSV line of a row of two or more text, number or null cells; else SlowRow."""
    return ",".join([encode_field(value) for value in row]) + "\r\n"


class RowEncoder:
    """One CSV line per row, exactly as `csv.writer(...).writerow(safe_row(row))` writes it."""

    def __init__(self) -> None:
        self.buffer = io.StringIO()
        self.writer = csv.writer(self.buffer)

    def slow(self, row: list[Any]) -> str:
        self.buffer.seek(0)
        self.buffer.truncate()
        self.writer.writerow(safe_row(row))
        return self.buffer.getvalue()

    def line(self, row: list[Any]) -> str:
        # a row of one empty field is written as "" by csv.writer: leave short rows to it
        if len(row) < 2:
            return self.slow(row)
        try:
            return fast_line(row)
        except SlowRow:
            return self.slow(row)


class WriteLimitExceeded(Exception):
    """The CSV passed `max_csv_mb`."""


def without_highlights(text: str) -> str:
    for marker in HIGHLIGHTS:
        text = text.replace(marker, "")
    return text


class ChunkWriter:
    """Lines gathered into ~64 KB writes; counts characters as Datasette's CSV counts them for
    `max_csv_mb`."""

    def __init__(self, writer: Any, limit_mb: float) -> None:
        self.writer = writer
        self.limit = limit_mb * 1024 * 1024
        self.count = 0
        self.pending: list[str] = []
        self.size = 0

    async def line(self, text: str) -> None:
        self.count += len(text)
        if self.limit and self.count > self.limit:
            await self.flush()
            raise WriteLimitExceeded(f"CSV contains more than {self.limit} bytes")
        self.pending.append(text)
        self.size += len(text)
        if self.size >= CHUNK_CHARACTERS:
            await self.flush()

    async def flush(self) -> None:
        if self.pending:
            text = without_highlights("".join(self.pending))
            self.pending, self.size = [], 0
            await self.writer.write(text)


class TraceWriter(ChunkWriter):
    """`_trace`: the same lines, HTML-escaped, as Datasette's debug CSV shows them."""

    async def line(self, text: str) -> None:
        await self.markup(str(escape(text)))

    async def markup(self, html: str) -> None:
        await super().line(html)


# -- the JSON the rows come from --------------------------------------------------------------


def is_one_expression(value: str) -> bool:
    """`(value)` is one parenthesised expression: none of its parentheses closes the outer one
    before its end, quotes and comments read as SQLite reads them."""
    depth = 0
    pieces = SQL_PIECES.findall(f"({value})")
    for index, piece in enumerate(pieces):
        if piece == "(":
            depth += 1
        elif piece == ")":
            depth -= 1
            if depth == 0 and index != len(pieces) - 1:
                return False
    return depth == 0


def json_pairs(request: Request, stream: bool) -> list[tuple[str, str]]:
    """The query string of the JSON the CSV's rows come from: the CSV's, each `_where` in
    parentheses, no facets and no count (as Datasette's CSV), the largest pages for a stream."""
    pairs = []
    for key, value in parse_qsl(request.query_string, keep_blank_values=True):
        if key in CSV_ONLY or key in JSON_ONLY or (stream and key == "_size"):
            continue
        if key == "_where":
            if not is_one_expression(value):
                raise BadRequest(ONE_EXPRESSION)
            value = f"({value})"
        pairs.append((key, value))
    pairs += ADDED
    if stream:
        pairs.append(("_size", "max"))
    return pairs


def json_path(request: Request) -> str:
    """The JSON of the CSV's URL: its database, table and row as the URL spells them; the
    database's SQL query page for a query."""
    url_vars = request.url_vars
    parts = [url_vars["database"]] + [url_vars[k] for k in ("table", "pks") if url_vars.get(k)]
    if len(parts) == 1:
        return query_path(url_vars["database"]) + ".json"
    return "/" + "/".join(parts) + ".json"


async def json_keys(datasette: Any, request: Request) -> list[tuple[str, str]]:
    """What the JSON is asked for to carry the keys the view reads (`columns`, `table`...)."""
    table = request.url_vars.get("table")
    return await json_extras(
        datasette,
        catalog_name(datasette),
        tilde_decode(table) if table else None,
        row=bool(request.url_vars.get("pks")),
    )


class RowSource:
    """The pages of the CSV's rows, as Datasette's JSON gives them to the visitor."""

    def __init__(
        self, datasette: Any, request: Request, stream: bool, keys: list[tuple[str, str]]
    ) -> None:
        self.datasette = datasette
        self.path = json_path(request)
        self.pairs = json_pairs(request, stream) + keys
        self.headers = {
            name: request.headers[name] for name in CREDENTIALS if name in request.headers
        }

    async def page(self, next_value: str | None = None) -> dict[str, Any]:
        pairs = self.pairs + ([("_next", next_value)] if next_value is not None else [])
        response = await self.datasette.client.get(
            f"{self.path}?{urlencode(pairs)}", headers=self.headers
        )
        if response.status_code == 200:
            data: dict[str, Any] = as_065_json(json.loads(response.content), pairs)
            if any(isinstance(row, dict) for row in data["rows"]):
                # rows with `_labels` come as objects
                columns = data["columns"]
                data["rows"] = [[row[c] for c in columns] for row in data["rows"]]
            return data
        if 300 <= response.status_code < 400:
            raise Redirect(response.headers.get("location", ""), response.status_code)
        raise DownloadRefused(error_message(response), response.status_code)


class Redirect(Exception):
    """Datasette redirects the JSON (`_sort_by_desc`, a filter from the table's form)."""

    def __init__(self, location: str, status: int) -> None:
        super().__init__(location)
        self.location = location
        self.status = status


def csv_location(request: Request, location: str, extension: str = "csv") -> str:
    """Where Datasette redirects the JSON, as the CSV (or another download of the rows, as
    `extension`): the same changes to the download's own URL, without what the view adds to
    the JSON, with the download's own parameters."""
    path, _, query = location.partition("?")
    if path.endswith(".json"):
        path = path[: -len(".json")] + "." + extension
    # `_extra`: what Datasette 1.0 is asked for the keys the view reads (json_keys)
    added = {key for key, _ in ADDED} | {"_size", "_extra"}
    pairs = [
        (key, value[1:-1] if key == "_where" else value)
        for key, value in parse_qsl(query, keep_blank_values=True)
        if key not in added
    ]
    own = [
        (key, value)
        for key, value in parse_qsl(request.query_string, keep_blank_values=True)
        if key in CSV_ONLY or key == "_size"
    ]
    pairs += own
    return path + ("?" + urlencode(pairs) if pairs else "")


def error_message(response: Any) -> str:
    """The reason an error answer of Datasette's JSON gives."""
    try:
        body = json.loads(response.content)
    except ValueError:
        body = None
    if not isinstance(body, dict) or not body.get("error"):
        return f"Error {response.status_code}"
    message = str(body["error"])
    if INTERRUPTED_MARKUP in message:
        # Datasette's own message for a query past its time limit is HTML (a link, the SQL in a
        # textarea, a script), titled so in 0.65's JSON, untitled in 1.0's; the site's
        # (plugins/client_errors.py) is a sentence, passed on as it is
        return f"{INTERRUPTED}: a query took longer than the site's time limit"
    return message


class RefusedCsv(Base400):
    """A CSV whose JSON Datasette refused: answered with the JSON's status and reason, as
    Datasette's error page."""

    def __init__(self, message: str, status: int) -> None:
        super().__init__(message)
        self.status = status


# -- sorted streams ---------------------------------------------------------------------------


def column_affinity(declared: str | None) -> str:
    """SQLite's affinity of a column declared as `declared` (its rules, in their order)."""
    declared = (declared or "").upper()
    if "INT" in declared:
        return "INTEGER"
    if any(word in declared for word in ("CHAR", "CLOB", "TEXT")):
        return "TEXT"
    if "BLOB" in declared or not declared:
        return "BLOB"
    if any(word in declared for word in ("REAL", "FLOA", "DOUB")):
        return "REAL"
    return "NUMERIC"


async def sort_of(
    datasette: Any, request: Request, database: str, table: str
) -> tuple[str | None, bool]:
    """(column, descending) a table's rows are sorted by, as Datasette reads it; (None, False)."""
    sort, sort_desc = request.args.get("_sort"), request.args.get("_sort_desc")
    if not sort and not sort_desc:
        config = await table_config(datasette, database, table)
        sort, sort_desc = config.get("sort"), config.get("sort_desc")
    return (sort_desc, True) if sort_desc else (sort, False)


def next_component(value: Any) -> str:
    return "$null" if value is None else tilde_encode(str(value))


def cell_value(cell: Any) -> Any:
    """A cell's value, its `_labels` label left out."""
    return cell.get("value") if isinstance(cell, dict) else cell


async def sorted_stream_start(datasette: Any, request: Request, data: dict[str, Any]) -> str | None:
    """A `_next` before every row of a sorted table stream, or None when the stream is not
    sorted or no such value exists. With it, Datasette orders the first page as the others:
    by the sort column, then the primary key. Ascending, null values come first, so
    `$null,<key before all>` starts at the first row; descending, from the first page's first
    value, the largest, with a key before all."""
    table = data.get("table")
    if not table or data.get("is_view") or not data["rows"]:
        return None
    column, descending = await sort_of(datasette, request, data["database"], table)
    if not column:
        return None
    db = datasette.get_database(data["database"])
    pks = data.get("primary_keys") or []
    if pks:
        declared = {c.name: c.type for c in await db.table_column_details(table)}
        affinities = [column_affinity(declared.get(pk)) for pk in pks]
    else:
        affinities = ["INTEGER"]  # rowid
    if any(affinity not in KEY_BEFORE_ALL for affinity in affinities):
        return None
    keys = ",".join(KEY_BEFORE_ALL[affinity] for affinity in affinities)
    if not descending:
        return f"$null,{keys}"
    if column in data["columns"]:
        largest = cell_value(data["rows"][0][data["columns"].index(column)])
    else:
        sql = f"select max({escape_sqlite(column)}) from {escape_sqlite(table)}"
        largest = (await db.execute(sql)).single_value()
    if isinstance(largest, (bytes, dict)):
        return None
    return f"{next_component(largest)},{keys}"


# -- rows as CSV ------------------------------------------------------------------------------


def is_blob(cell: Any) -> bool:
    """A blob as Datasette's JSON writes it."""
    return isinstance(cell, dict) and cell.get("$base64") is True


def blob_text(cell: dict[str, Any]) -> str | None:
    """A blob's text when it is valid UTF-8, else None: Datasette 0.65's JSON gives such a
    blob as its text, 1.0's in base64 as any other; the CSV writes its text on both."""
    try:
        return b64decode(cell["encoded"]).decode("utf-8")
    except UnicodeDecodeError:
        return None


def blob_url(
    datasette: Any,
    request: Request,
    data: dict[str, Any],
    row: list[Any],
    column: str,
    cell: dict[str, Any],
) -> str:
    """A blob as Datasette's CSV writes it: the absolute URL of the row's blob on a table, of
    the query's blob on a query."""
    database = request.url_vars["database"]
    if data.get("table"):
        pks = data.get("primary_keys") or []
        values = dict(zip(data["columns"], row))
        return str(
            datasette.absolute_url(
                request,
                datasette.urls.row_blob(
                    database, data["table"], path_from_row_pks(values, pks, not pks), column
                ),
            )
        )
    digest = hashlib.sha256(b64decode(cell["encoded"])).hexdigest()
    return str(
        datasette.absolute_url(
            request,
            path_with_format(
                request=request,
                format="blob",
                extra_qs={"_blob_column": column, "_blob_hash": digest},
                replace_format="csv",
            ),
        )
    )


def labelled_cells(columns: list[str], expanded: set[str], row: list[Any]) -> list[Any]:
    cells: list[Any] = []
    for heading, cell in zip(columns, row):
        if heading in expanded:
            if cell is None:
                cells.extend(("", ""))
            elif not isinstance(cell, dict) or is_blob(cell):
                cells.extend((cell, ""))
            else:
                cells.append(cell["value"])
                cells.append(cell["label"])
        else:
            cells.append(cell)
    return cells


def headings_of(data: dict[str, Any]) -> list[str]:
    expanded = set(data.get("expanded_columns") or [])
    headings = []
    for column in data["columns"]:
        headings.append(column)
        if column in expanded:
            headings.append(f"{column}_label")
    return headings


class Lines:
    """The CSV lines of a page's rows."""

    def __init__(self, datasette: Any, request: Request) -> None:
        self.datasette = datasette
        self.request = request
        self.encoder = RowEncoder()

    def of(self, data: dict[str, Any]) -> list[str]:
        expanded = set(data.get("expanded_columns") or [])
        columns = data["columns"]
        lines = []
        for row in data["rows"]:
            if not expanded and len(row) > 1:
                try:
                    lines.append(fast_line(row))
                    continue
                except SlowRow:
                    pass
            if any(is_blob(cell) for cell in row):
                row = [
                    self.blob(data, row, column, cell) if is_blob(cell) else cell
                    for column, cell in zip(columns, row)
                ]
            if expanded:
                row = labelled_cells(columns, expanded, row)
            lines.append(self.encoder.line(row))
        return lines

    def blob(self, data: dict[str, Any], row: list[Any], column: str, cell: Any) -> str:
        text = blob_text(cell)
        if text is not None:
            return text
        return blob_url(self.datasette, self.request, data, row, column, cell)


def row_keys(data: dict[str, Any]) -> set[tuple[Any, ...]]:
    """The primary keys (or rowids) of a table page's rows; none for a query or a view."""
    if not data.get("table") or data.get("is_view"):
        return set()
    columns = data["columns"]
    names = data.get("primary_keys") or ["rowid"]
    if not all(name in columns for name in names):
        return set()
    places = [columns.index(name) for name in names]
    return {tuple(cell_value(row[place]) for place in places) for row in data["rows"]}


class Pages:
    """A stream's pages after the first, each from the `next` of the one before; stops, with
    StreamStopped, when a page would repeat a `next` or a row of the page before it (a
    `_where` or a plugin that defeats Datasette's keyset would repeat pages forever)."""

    def __init__(self, source: RowSource, first: dict[str, Any]) -> None:
        self.source = source
        self.seen: set[str] = set()
        self.keys = row_keys(first)
        self.next_value = first.get("next")

    async def following(self) -> dict[str, Any] | None:
        next_value = self.next_value
        if next_value is None:
            return None
        token = str(next_value)
        if token in self.seen:
            raise StreamStopped(f"the next page repeats one already sent (_next={token})")
        self.seen.add(token)
        data = await self.source.page(token)
        keys = row_keys(data)
        if keys & self.keys:
            raise StreamStopped(f"the page after _next={token} repeats rows already sent")
        self.keys, self.next_value = keys, data.get("next")
        return data


def download_name(request: Request, extension: str = "csv") -> str:
    """`<table>-<what its filters and search choose>.csv` (`papers-applications.csv`)."""
    table = request.url_vars.get("table")
    if not table:
        return export_file_name(request.url_vars["database"], [], extension)
    parts = []
    for name in request.args:
        if name.startswith("_") and not name.startswith("_search"):
            continue
        column, _, operator = name.partition("__")
        for value in request.args.getlist(name):
            if name.startswith("_search") or operator in PLAIN_FILTER_OPERATORS:
                parts.append(value)
            else:
                parts.append(f"{column} {operator} {value}")
    return export_file_name(table, parts, extension)


async def first_page(
    datasette: Any, request: Request, source: RowSource, stream: bool
) -> dict[str, Any]:
    """The first page of rows (of a sorted stream, from before its first row); Datasette's
    refusal as the CSV's own error."""
    try:
        data = await source.page()
        if stream and data.get("next"):
            start = await sorted_stream_start(datasette, request, data)
            if start is not None:
                data = await source.page(start)
    except DownloadRefused as refused:
        raise RefusedCsv(refused.message, refused.status) from refused
    return data


async def csv_view(request: Request, datasette: Any) -> Any:
    """The CSV of the catalog's database, table, canned query or row at this URL."""
    if request.method not in ("GET", "HEAD"):
        # as Datasette's own views: a CSV is read, never posted to (a writable canned query)
        return Response.text("Method not allowed", status=405)
    if "table" not in request.url_vars and not request.args.get("sql"):
        raise BadRequest(NO_QUERY)
    stream = bool(request.args.get("_stream"))
    if stream:
        if not datasette.setting("allow_csv_stream"):
            raise BadRequest("CSV streaming is disabled")
        if request.args.get("_next"):
            raise BadRequest("_next not allowed for CSV streaming")
    source = RowSource(datasette, request, stream, await json_keys(datasette, request))
    try:
        data = await first_page(datasette, request, source, stream)
    except Redirect as redirect:
        return Response.redirect(csv_location(request, redirect.location), status=redirect.status)
    trace = bool(request.args.get("_trace"))
    lines = Lines(datasette, request)

    async def write(writer: Any) -> None:
        page: dict[str, Any] | None = data
        pages = Pages(source, data)
        out = TraceWriter(writer, limit) if trace else ChunkWriter(writer, limit)
        try:
            if isinstance(out, TraceWriter):  # trace is on
                await out.markup(TRACE_PREAMBLE)
            if request.args.get("_header") != "off":
                await out.line(lines.encoder.line(headings_of(data)))
            while page is not None:
                for line in lines.of(page):
                    await out.line(line)
                page = await pages.following() if stream else None
        except WriteLimitExceeded as exceeded:
            # max_csv_mb: as Datasette, the message ends the CSV (0 on the site: no cap)
            message = safe_text(str(exceeded))
            await out.writer.write(str(escape(message)) if trace else message)
            return
        if isinstance(out, TraceWriter):  # trace is on
            await out.markup(TRACE_POSTAMBLE)
        await out.flush()

    limit = datasette.setting("max_csv_mb")
    headers: dict[str, str] = {}
    if datasette.cors:
        add_cors_headers(headers)
    content_type = "text/html; charset=utf-8" if trace else "text/plain; charset=utf-8"
    if request.args.get("_dl"):
        if not trace:
            content_type = "text/csv; charset=utf-8"
        headers["content-disposition"] = attachment(download_name(request))
    return AbortingStream(
        write,
        description=request.path + "?" + request.query_string,
        receive=request.receive,
        headers=headers,
        content_type=content_type,
    )


def csv_route(datasette: Any, template: str = TABLE_CSV_ROUTE) -> str:
    """A CSV route (the table's unless told) of the catalog."""
    route = datasette.get_database(catalog_name(datasette)).route
    return template.format(route=re.escape(route))


View = Callable[[Request, Any], Awaitable[Any]]


def csv_routes(datasette: Any) -> list[tuple[str, View]]:
    """The catalog's database, SQL query (1.0's has a path of its own), table and row CSV
    routes: the query's before the row's, which would take `/<db>/-/query.csv`."""
    query = QUERY_CSV_ROUTE.format(query=query_path(r"(?P<database>{route})"))
    templates = (DATABASE_CSV_ROUTE, query, TABLE_CSV_ROUTE, ROW_CSV_ROUTE)
    routes = dict.fromkeys(csv_route(datasette, template) for template in templates)
    return [(route, csv_view) for route in routes]


def register_routes(datasette: Any) -> list[tuple[str, View]] | None:
    if not serves_catalog(datasette):
        return None
    return csv_routes(datasette)
