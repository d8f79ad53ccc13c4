"""Facets that name a column their table lacks: a 400 on every Datasette version.

Datasette 0.65 refuses such a facet as bad SQL (a 400, `no such column`). Datasette 1.0 writes
the name double-quoted into the facet's SQL: a name SQLite cannot find fails as a 500, and one
it reads as a string literal instead (`title; drop table papers`) is counted as a text, a
facet of one value. plugins/client_errors.py asks here before Datasette sees a table page.
"""

from typing import TYPE_CHECKING

from datasette.utils import tilde_decode

if TYPE_CHECKING:  # datasette.app loads the installed plugins: never as a plugin loads
    from datasette.app import Datasette

# what SQLite reads as a table's rowid, a column no table_info() lists; not for an array facet,
# whose SQL reads its column from a subquery, which has no rowid
ROWID_NAMES = {"rowid", "oid", "_rowid_"}
ARRAY_FACET = "_facet_array"


async def absent_facet_column(
    datasette: "Datasette", path: str, facets: list[tuple[str, str]]
) -> str | None:
    """`no such column: X` when one of a table page's `facets` ((facet parameter, column)
    pairs) names a column its table lacks (names compared as SQLite compares them, without
    case), else None; None too for a path of no table or view (Datasette's 404)."""
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
