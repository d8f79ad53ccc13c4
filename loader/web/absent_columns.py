"""Facets that name a column their table lacks: a 400 on every Datasette version.

Datasette 0.65 refuses such a facet as bad SQL (a 400, `no such column`). Datasette 1.0 writes
the name double-quoted into the facet's SQL: a name SQLite cannot find fails as a 500, and one
it reads as a string literal instead (`title; drop table papers`) is counted as a text, a
facet of one value. plugins/client_errors.py asks here before Datasette sees a table page.
"""

import json
from typing import TYPE_CHECKING
from urllib.parse import parse_qsl

from datasette.utils import tilde_decode

if TYPE_CHECKING:  # datasette.app loads the installed plugins: never as a plugin loads
    from datasette.app import Datasette

# Datasette's facets whose value (or JSON config) names a column of the table
COLUMN_FACETS = ("_facet", "_facet_array", "_facet_date")
# what SQLite reads as a table's rowid, a column no table_info() lists; not for an array facet,
# whose SQL reads its column from a subquery, which has no rowid
ROWID_NAMES = {"rowid", "oid", "_rowid_"}
ARRAY_FACET = "_facet_array"


def faceted_columns(query_string: bytes) -> list[tuple[str, str]]:
    """(facet parameter, column) for each column, array and date facet of a query string, as
    Datasette reads them: a name, or a JSON config's `column` (else `simple`); an empty value,
    which Datasette ignores, and a config that names no column (plugins/client_errors.py
    refuses it first) name none."""
    facets = []
    for key, value in parse_qsl(query_string.decode("latin-1"), keep_blank_values=True):
        if key not in COLUMN_FACETS or not value:
            continue
        column: object = value
        if value.startswith("{"):
            try:
                config = json.loads(value)
            except (ValueError, RecursionError):
                continue
            column = (
                config.get("column") or config.get("simple") if isinstance(config, dict) else None
            )
        if isinstance(column, str):
            facets.append((key, column))
    return facets


async def absent_facet_column(datasette: "Datasette", path: str, query_string: bytes) -> str | None:
    """`no such column: X` when a facet of a table page (faceted_columns()) names a column its
    table lacks (names compared as SQLite compares them, without case), else None; None too
    for a path of no table or view (Datasette's 404)."""
    facets = faceted_columns(query_string)
    if not facets:
        return None
    base_url = datasette.setting("base_url")
    if base_url != "/" and path.startswith(base_url):
        path = "/" + path[len(base_url) :]
    route, _, table = path.strip("/").partition("/")
    try:
        db = datasette.get_database(route=tilde_decode(route))
    except KeyError:
        return None
    # a table's URL is its name without a format, dots tilde-encoded
    columns = await db.table_columns(tilde_decode(table.split(".", 1)[0]))
    # none: no such table or view, or the name of a canned query
    known = {name.lower() for name in columns}
    if not known:
        return None
    for parameter, column in facets:
        if column.lower() not in (known if parameter == ARRAY_FACET else known | ROWID_NAMES):
            return f"no such column: {column}"
    return None
