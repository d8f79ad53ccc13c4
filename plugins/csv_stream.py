"""Table CSV downloads written by a fast row encoder, byte for byte what Datasette writes.

Datasette 0.65 writes a table's CSV one `csv.writer.writerow()` and one ASGI message per row;
with abstracts of a few KB, the C writer's character-by-character quoting alone is most of a
full `_stream=on` download, and re-running the table view for each page of rows a small part
(figures: docs/benchmark.md). The view below is Datasette's own TableView, served on the same URLs; only its `as_csv` differs:
every page still comes from `TableView.data()` (filters, `_search`, `_where`, `_sort`, `_col`,
`_labels`, keyset `_next`, permissions, time limits), but rows of text, integers, floats and
nulls are quoted with `str` methods and written in ~64 KB pieces. Any other value goes through
`csv.writer` as before, blobs become the same row-blob URLs, `max_csv_mb` stops at the same row
with the same message; `_trace` and canned queries are left to Datasette's own `as_csv`.

A copy of Datasette's DataView.as_csv (views/base.py), checked against it by
loader/web/datasette_coupling.py: served for the catalog's tables only, and only while the
check passes.
"""

import csv
import functools
import io
import re
import sqlite3
import sys

from datasette import hookimpl
from datasette.utils import (
    InvalidSql,
    WriteLimitExceeded,
    add_cors_headers,
    path_from_row_pks,
    tilde_decode,
)
from datasette.utils.asgi import AsgiStream, BadRequest, Request, Response
from datasette.views.base import DatasetteError

from loader.web.catalog_scope import catalog_name, serves_catalog
from loader.web.datasette_coupling import patches_enabled

CHUNK_CHARACTERS = 64 * 1024
# Datasette's table route, for the catalog's .csv only: plugin routes are matched before
# Datasette's own
TABLE_CSV_ROUTE = r"/(?P<database>{route})/(?P<table>[^\/\.]+)(\.(?P<format>csv))$"
# what makes csv.writer's excel dialect (QUOTE_MINIMAL) quote a field
QUOTE_TRIGGERS = (",", "\n", "\r")


class SlowRow(Exception):
    """A value the fast encoder does not write itself; csv.writer writes the row."""


def encode_field(value):
    kind = value.__class__
    if kind is str:
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
    """One CSV line per row, exactly as `csv.writer(...).writerow(row)` writes it."""

    def __init__(self):
        self.buffer = io.StringIO()
        self.writer = csv.writer(self.buffer)

    def slow(self, row):
        self.buffer.seek(0)
        self.buffer.truncate()
        self.writer.writerow(row)
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


def blob_cells(datasette, request, database, data, headings, row):
    """Blobs as Datasette's table CSV writes them: the absolute URL of the row's blob."""
    if not any(isinstance(cell, bytes) for cell in row):
        return row
    pks = data.get("primary_keys") or []
    cells = []
    for column, cell in zip(headings, row):
        if isinstance(cell, bytes):
            cell = datasette.absolute_url(
                request,
                datasette.urls.row_blob(
                    database, data["table"], path_from_row_pks(row, pks, not pks), column
                ),
            )
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


class FastCsv:
    """Datasette's TableView with this as_csv (mixed in by fast_csv_view: Datasette's views
    import its plugins, so a plugin module cannot import them as it loads)."""

    async def as_csv(self, request, database):
        if request.args.get("_trace") or await self.is_canned_query(request):
            return await super().as_csv(request, database)
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
            out = ChunkWriter(r, self.ds.setting("max_csv_mb"))
            encoder = RowEncoder()
            first, next_value = True, None
            try:
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
            except Exception as e:  # noqa: BLE001 (as Datasette: the message ends the CSV)
                await out.flush()
                sys.stderr.write(f"Caught this error: {e}\n")
                sys.stderr.flush()
                await r.write(str(e))

        headers = {}
        if self.ds.cors:
            add_cors_headers(headers)
        content_type = "text/plain; charset=utf-8"
        if request.args.get("_dl", None):
            content_type = "text/csv; charset=utf-8"
            table = request.url_vars.get("table", database)
            headers["content-disposition"] = f'attachment; filename="{table}.csv"'
        return AsgiStream(stream_fn, headers=headers, content_type=content_type)

    async def is_canned_query(self, request):
        db = self.ds.get_database(route=tilde_decode(request.url_vars["database"]))
        table = tilde_decode(request.url_vars["table"])
        return bool(await self.ds.get_canned_query(db.name, table, request.actor))


def csv_route(datasette):
    """TABLE_CSV_ROUTE of the catalog's tables."""
    route = datasette.get_database(catalog_name(datasette)).route
    return TABLE_CSV_ROUTE.format(route=re.escape(route))


@functools.cache
def fast_csv_view():
    from datasette.views.table import TableView

    return type("FastCsvTableView", (FastCsv, TableView), {})


@hookimpl
def register_routes(datasette):
    if not serves_catalog(datasette) or not patches_enabled():
        return None
    return [(csv_route(datasette), fast_csv_view().as_view(datasette))]
