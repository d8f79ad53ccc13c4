"""Every CSV of the catalog (tables and their streams, rows, canned and custom SQL queries),
written by a fast row encoder with formula-safe cells (loader/web/csv_cells.py).

Datasette 0.65 writes a table's CSV one `csv.writer.writerow()` and one ASGI message per row;
with abstracts of a few KB, the C writer's character-by-character quoting alone is most of a
full `_stream=on` download, and re-running the table view for each page of rows a small part
(figures: docs/benchmark.md). The views below are Datasette's own TableView, DatabaseView and
RowView, served on the same URLs; only their `as_csv` differs: every page still comes from the
view's `data()` (filters, `_search`, `_where`, `_sort`, `_col`, `_labels`, keyset `_next`,
canned queries, `sql=`, permissions, time limits), but rows of text, integers, floats and nulls
are quoted with `str` methods and written in ~64 KB pieces. Any other value goes through
`csv.writer` as before, blobs become the same blob URLs, `max_csv_mb` stops at the same row
with the same message, `_trace` wraps the CSV in the same HTML. Unlike Datasette's:
- a cell a spreadsheet would read as a formula (`=HYPERLINK(...)`, `@SUM(...)`) starts with `'`;
- `/catalog.csv` without `sql=` is a 400 (Datasette's is a 500);
- an error after the first page aborts the download (loader/web/export_stream.py) instead of
  ending the CSV with the error's text, which a browser saved as a finished file;
- a stream sorted with `_sort`/`_sort_desc` (or a table's default sort) has every row once:
  Datasette orders its first page by the sort column alone and the next ones by that column
  and the primary key, continuing after the first page's last row, so rows that tie with it
  were repeated or skipped. The stream starts instead from a `_next` before every row, so
  every page, the first one too, is in (sort column, primary key) order (sorted_stream_start);
- `_dl=1` names the file after the table and what filters it (`papers-applications.csv`).

A copy of Datasette's DataView.as_csv (views/base.py), checked against it by
loader/web/datasette_coupling.py: served for the catalog only, and only while the check passes;
other databases keep Datasette's own CSV.
"""

import csv
import functools
import hashlib
import io
import re
import sqlite3
import sys

from datasette.utils import (
    InvalidSql,
    WriteLimitExceeded,
    add_cors_headers,
    escape_sqlite,
    path_from_row_pks,
    path_with_format,
    tilde_encode,
)
from datasette.utils.asgi import BadRequest, Request, Response
from datasette.views.base import DatasetteError
from loader.web.datasette_coupling import patches_enabled
from markupsafe import escape

from loader.web.catalog_scope import catalog_name, serves_catalog
from loader.web.csv_cells import CHECKED_STARTS, safe_row, safe_text
from loader.web.export_names import attachment, export_file_name
from loader.web.export_stream import AbortingStream

CHUNK_CHARACTERS = 64 * 1024
# Datasette's database, table and row routes, for the catalog's .csv only: plugin routes are
# matched before Datasette's own
DATABASE_CSV_ROUTE = r"/(?P<database>{route})(\.(?P<format>csv))$"
TABLE_CSV_ROUTE = r"/(?P<database>{route})/(?P<table>[^\/\.]+)(\.(?P<format>csv))$"
ROW_CSV_ROUTE = r"/(?P<database>{route})/(?P<table>[^/]+?)/(?P<pks>[^/]+?)(\.(?P<format>csv))$"
# what makes csv.writer's excel dialect (QUOTE_MINIMAL) quote a field
QUOTE_TRIGGERS = (",", "\n", "\r")
# Datasette's `_trace` CSV: the CSV as text in an HTML page
TRACE_PREAMBLE = (
    '<html><head><title>CSV debug</title></head><body><textarea style="width: 90%; height: 70vh">'
)
TRACE_POSTAMBLE = "</textarea></body></html>"
NO_QUERY = "A CSV of a database needs a query: add ?sql=select ..."
# a `_next` value below every value of a primary key column of this affinity, as Datasette
# binds it (text, which SQLite converts for a numeric column: -infinity); a column without
# affinity can hold any type, and no one text is below them all
KEY_BEFORE_ALL = {"INTEGER": "-1e999", "REAL": "-1e999", "NUMERIC": "-1e999", "TEXT": ""}
# filters named in a download's file name by their value alone; other operators by all three
PLAIN_FILTER_OPERATORS = ("", "exact", "arraycontains")


class SlowRow(Exception):
    """A value the fast encoder does not write itself; csv.writer writes the row."""


def encode_field(value):
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


def fast_line(row):
    """The CSV line of a row of two or more text, number or null cells; else SlowRow."""
    return ",".join([encode_field(value) for value in row]) + "\r\n"


class RowEncoder:
    """One CSV line per row, exactly as `csv.writer(...).writerow(safe_row(row))` writes it."""

    def __init__(self):
        self.buffer = io.StringIO()
        self.writer = csv.writer(self.buffer)

    def slow(self, row):
        self.buffer.seek(0)
        self.buffer.truncate()
        self.writer.writerow(safe_row(row))
        return self.buffer.getvalue()

    def line(self, row):
        # a row of one empty field is written as "" by csv.writer: leave short rows to it
        if len(row) < 2:
            return self.slow(row)
        try:
            return fast_line(row)
        except SlowRow:
            return self.slow(row)


class ChunkWriter:
    """Lines gathered into ~64 KB writes; counts characters as Datasette's LimitedWriter does."""

    def __init__(self, writer, limit_mb):
        self.writer = writer
        self.limit = limit_mb * 1024 * 1024
        self.count = 0
        self.pending = []
        self.size = 0

    async def line(self, text):
        self.count += len(text)
        if self.limit and self.count > self.limit:
            await self.flush()
            raise WriteLimitExceeded(f"CSV contains more than {self.limit} bytes")
        self.pending.append(text)
        self.size += len(text)
        if self.size >= CHUNK_CHARACTERS:
            await self.flush()

    async def flush(self):
        if self.pending:
            text = "".join(self.pending)
            self.pending, self.size = [], 0
            await self.writer.write(text)


class TraceWriter(ChunkWriter):
    """`_trace`: the same lines, HTML-escaped, as Datasette's EscapeHtmlWriter writes them."""

    async def line(self, text):
        await self.markup(str(escape(text)))

    async def markup(self, html):
        await super().line(html)


def blob_url(datasette, request, database, data, row, column, cell):
    """A blob as Datasette's CSV writes it: the absolute URL of the row's blob on a table, of
    the query's blob on a query."""
    if data.get("table"):
        pks = data.get("primary_keys") or []
        return datasette.absolute_url(
            request,
            datasette.urls.row_blob(
                database, data["table"], path_from_row_pks(row, pks, not pks), column
            ),
        )
    url = datasette.absolute_url(
        request,
        path_with_format(
            request=request,
            format="blob",
            extra_qs={"_blob_column": column, "_blob_hash": hashlib.sha256(cell).hexdigest()},
            replace_format="csv",
        ),
    )
    return url.replace("&_nocount=1", "").replace("&_nofacet=1", "")


def blob_cells(datasette, request, database, data, headings, row):
    if not any(isinstance(cell, bytes) for cell in row):
        return row
    cells = []
    for column, cell in zip(headings, row):
        if isinstance(cell, bytes):
            cell = blob_url(datasette, request, database, data, row, column, cell)
        cells.append(cell)
    return cells


def labelled_cells(columns, expanded_columns, row):
    cells = []
    for heading, cell in zip(columns, row):
        if heading in expanded_columns:
            if cell is None:
                cells.extend(("", ""))
            elif not isinstance(cell, dict):
                cells.extend((cell, ""))
            else:
                cells.append(cell["value"])
                cells.append(cell["label"])
        else:
            cells.append(cell)
    return cells


def with_nofacet_nocount(request):
    """The request as Datasette's as_csv rewrites it: no facets, no count."""
    extra = [f"{key}=1" for key in ("_nofacet", "_nocount") if not request.args.get(key)]
    if not extra:
        return request
    query_string = "&".join(extra)
    if request.query_string:
        query_string = request.query_string + "&" + query_string
    scope = dict(request.scope, query_string=query_string.encode("latin-1"))
    return Request(scope, request.receive)


def column_affinity(declared):
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


def sort_of(datasette, request, database, table):
    """(column, descending) a table view sorts by, as Datasette reads it; (None, False)."""
    sort, sort_desc = request.args.get("_sort"), request.args.get("_sort_desc")
    if not sort and not sort_desc:
        metadata = datasette.table_metadata(database, table)
        sort, sort_desc = metadata.get("sort"), metadata.get("sort_desc")
    return (sort_desc, True) if sort_desc else (sort, False)


def next_component(value):
    return "$null" if value is None else tilde_encode(str(value))


async def sorted_stream_start(datasette, request, data):
    """A `_next` before every row of a sorted table stream, or None when the stream is not
    sorted or no such value exists. With it, Datasette orders the first page as the others:
    by the sort column, then the primary key. Ascending, null values come first, so
    `$null,<key before all>` starts at the first row; descending, from the first page's first
    value, the largest, with a key before all."""
    table = data.get("table")
    if not table or data.get("is_view"):
        return None
    column, descending = sort_of(datasette, request, data["database"], table)
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
        largest = data["rows"][0][column]
        if isinstance(largest, dict):
            largest = largest.get("value")
    else:
        sql = f"select max({escape_sqlite(column)}) from {escape_sqlite(table)}"
        largest = (await db.execute(sql)).single_value()
    if isinstance(largest, bytes):
        return None
    return f"{next_component(largest)},{keys}"


def download_name(request, database):
    """`<table>-<what its filters and search choose>.csv` (`papers-applications.csv`)."""
    table = request.url_vars.get("table")
    if not table:
        return export_file_name(database, [], "csv")
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
    return export_file_name(table, parts, "csv")


def error_line(error):
    """The message that ends a CSV cut short, as Datasette writes it (no line end), formula-safe
    like any cell."""
    return safe_text(str(error))


class FastCsv:
    """Datasette's views with this as_csv (mixed in by fast_csv_view: Datasette's views import
    its plugins, so a plugin module cannot import them as it loads)."""

    async def as_csv(self, request, database):
        if self.name == "database" and not request.args.get("sql"):
            raise BadRequest(NO_QUERY)
        stream = request.args.get("_stream")
        request = with_nofacet_nocount(request)
        if stream:
            if not self.ds.setting("allow_csv_stream"):
                raise BadRequest("CSV streaming is disabled")
            if request.args.get("_next"):
                raise BadRequest("_next not allowed for CSV streaming")
        try:
            result = await self.data(request)
            if isinstance(result, Response):
                return result
            data = result[0]
            if stream and data.get("next"):
                start = await sorted_stream_start(self.ds, request, data)
                if start is not None:
                    data = (await self.data(request, _next=start))[0]
        except (sqlite3.OperationalError, InvalidSql) as e:
            raise DatasetteError(str(e), title="Invalid SQL", status=400)

        columns = data["columns"]
        expanded_columns = set(data.get("expanded_columns") or [])
        headings = columns
        if expanded_columns:
            headings = []
            for column in columns:
                headings.append(column)
                if column in expanded_columns:
                    headings.append(f"{column}_label")
        trace = request.args.get("_trace")

        def line_of(encoder, row):
            if not expanded_columns and len(row) > 1:
                try:
                    return fast_line(row)
                except SlowRow:
                    pass
            row = blob_cells(self.ds, request, database, data, headings, row)
            if expanded_columns:
                row = labelled_cells(data["columns"], expanded_columns, row)
            return encoder.line(row)

        async def stream_fn(r):
            nonlocal data
            limit = self.ds.setting("max_csv_mb")
            out = TraceWriter(r, limit) if trace else ChunkWriter(r, limit)
            encoder = RowEncoder()
            first, next_value = True, None
            try:
                if trace:
                    await out.markup(TRACE_PREAMBLE)
                while first or (next_value and stream):
                    if not first:
                        data, _, _ = await self.data(request, _next=next_value)
                    else:
                        if request.args.get("_header") != "off":
                            await out.line(encoder.line(headings))
                        first = False
                    next_value = data.get("next")
                    for row in data["rows"]:
                        await out.line(line_of(encoder, row))
                    await out.flush()
            except WriteLimitExceeded as e:
                # max_csv_mb: as Datasette, the message ends the CSV (0 on the site: no cap)
                await out.flush()
                sys.stderr.write(f"Caught this error: {e}\n")
                sys.stderr.flush()
                message = error_line(e)
                await r.write(str(escape(message)) if trace else message)
                return
            if trace:
                await out.markup(TRACE_POSTAMBLE)
                await out.flush()

        headers = {}
        if self.ds.cors:
            add_cors_headers(headers)
        content_type = "text/html; charset=utf-8" if trace else "text/plain; charset=utf-8"
        if request.args.get("_dl", None):
            if not trace:
                content_type = "text/csv; charset=utf-8"
            headers["content-disposition"] = attachment(download_name(request, database))
        return AbortingStream(
            stream_fn,
            description=request.path + "?" + request.query_string,
            receive=request.receive,
            headers=headers,
            content_type=content_type,
        )


def csv_route(datasette, template=TABLE_CSV_ROUTE):
    """A CSV route (the table's unless told) of the catalog."""
    route = datasette.get_database(catalog_name(datasette)).route
    return template.format(route=re.escape(route))


def csv_routes(datasette):
    """The catalog's database, table and row CSV routes, each with the view it is served by."""
    return [
        (csv_route(datasette, DATABASE_CSV_ROUTE), fast_csv_view("DatabaseView")),
        (csv_route(datasette, TABLE_CSV_ROUTE), fast_csv_view("TableView")),
        (csv_route(datasette, ROW_CSV_ROUTE), fast_csv_view("RowView")),
    ]


@functools.cache
def fast_csv_view(upstream):
    """Datasette's view class `upstream` with FastCsv's as_csv: FastCsvTableView, ..."""
    from datasette.views.database import DatabaseView
    from datasette.views.row import RowView
    from datasette.views.table import TableView

    views = {"DatabaseView": DatabaseView, "TableView": TableView, "RowView": RowView}
    return type(f"FastCsv{upstream}", (FastCsv, views[upstream]), {})


def register_routes(datasette):
    if not serves_catalog(datasette) or not patches_enabled():
        return None
    return [(regex, view.as_view(datasette)) for regex, view in csv_routes(datasette)]
