"""The papers table's downloads beside its CSV: every row its page chooses as BibTeX
(`/catalog/papers.bib`) or as JSON (`/catalog/papers.all.json`), in the page's order.

Datasette's own JSON of the table is one page of rows (25 unless `_size`), and it has no
BibTeX. The rows are chosen as the table's CSV chooses them (plugins/csv_stream.py): Datasette's
JSON of the same URL, with the visitor's credentials, page after page by its keyset `next`, so
its filters, `_search`, `_where`, `_sort` and permissions decide; only the ids are asked for.
Each page's papers are then read and written as /search's exports write theirs
(loader/web/search_exports.py): the same BibTeX keys and entries, the same JSON objects.
"""

import re
from collections.abc import Awaitable, Callable
from typing import TYPE_CHECKING, Any
from urllib.parse import parse_qsl, urlencode

from datasette.database import QueryInterrupted
from datasette.utils.asgi import BadRequest, Request, Response

from loader.web.catalog_scope import catalog_database, is_catalog, serves_catalog
from loader.web.export_names import attachment
from loader.web.export_stream import AbortingStream, StreamWriter
from loader.web.search_exports import CONTENT_TYPES, ExportText, read_papers_by_id

from .csv_links import export_pairs
from .csv_stream import (
    Pages,
    Redirect,
    RefusedCsv,
    RowSource,
    cell_value,
    csv_location,
    download_name,
    first_page,
    json_keys,
)

if TYPE_CHECKING:
    from datasette.app import Datasette

TABLE = "papers"
# a table's name never holds a dot in a URL (Datasette writes it as ~2E): these are no table's
SUFFIXES = {"bib": "bib", "json": "all.json"}
EXPORT_ROUTE = r"^/(?P<database>{route})/(?P<table>papers)\.(?P<suffix>bib|all\.json)$"
# what the rows' JSON is not asked for: the download reads each paper itself
ROW_SHAPE = ("_col", "_nocol", "_labels", "_label")
ID_COLUMN = ("_col", "id")
# the page's parameters that choose or order its rows, besides `_search...` (the rest are the
# page's own: its size, facets, shape)
KEPT = {"_where", "_sort", "_sort_desc"}
TOO_LONG = "This download took too long: add a filter or a search."


def without_id_column(location: str) -> str:
    """A redirect of the rows' JSON, as the download's: without the `_col=id` it was asked."""
    path, _, query = location.partition("?")
    pairs = [pair for pair in parse_qsl(query, keep_blank_values=True) if pair != ID_COLUMN]
    return path + (f"?{urlencode(pairs)}" if pairs else "")


def paper_ids(page: dict[str, Any]) -> list[str]:
    place = page["columns"].index("id")
    return [str(cell_value(row[place])) for row in page["rows"]]


async def table_export(request: Request, datasette: "Datasette") -> Any:
    """Every row of the papers table this URL chooses, as BibTeX or JSON."""
    if request.method not in ("GET", "HEAD"):
        return Response.text("Method not allowed", status=405)
    if request.args.get("_next"):
        raise BadRequest("_next is not allowed: a download has every row")
    suffix = request.url_vars["suffix"]
    extension = "bib" if suffix == "bib" else "json"
    source = RowSource(datasette, request, True, await json_keys(datasette, request))
    source.pairs = [pair for pair in source.pairs if pair[0] not in ROW_SHAPE] + [ID_COLUMN]
    try:
        data = await first_page(datasette, request, source, True)
    except Redirect as redirect:
        location = without_id_column(csv_location(request, redirect.location, suffix))
        return Response.redirect(location, status=redirect.status)
    run = catalog_database(datasette).execute_fn
    limit_ms = datasette.setting("sql_time_limit_ms")
    try:
        papers = await read_papers_by_id(run, paper_ids(data), limit_ms)
    except QueryInterrupted:
        raise RefusedCsv(TOO_LONG, 400) from None
    text = ExportText(extension, None)

    async def stream(writer: StreamWriter) -> None:
        pages = Pages(source, data)
        await writer.write(text.start() + text.papers(papers))
        while (page := await pages.following()) is not None:
            await writer.write(text.papers(await read_papers_by_id(run, paper_ids(page), limit_ms)))
        await writer.write(text.end())

    return AbortingStream(
        stream,
        description=request.path + "?" + request.query_string,
        receive=request.receive,
        headers={"content-disposition": attachment(download_name(request, extension))},
        content_type=CONTENT_TYPES[extension],
    )


def export_urls(datasette: "Datasette", database: str, request: Request) -> list[tuple[str, str]]:
    """[(label, URL)] of the BibTeX and JSON of every row the table page chooses."""
    pairs = [
        (key, value)
        for key, value in export_pairs(request.query_string, False)
        if not key.startswith("_") or key.startswith("_search") or key in KEPT
    ]
    query = urlencode(pairs)
    base = datasette.urls.table(database, TABLE)
    return [
        (label, f"{base}.{SUFFIXES[extension]}" + (f"?{query}" if query else ""))
        for label, extension in (("BibTeX", "bib"), ("JSON", "json"))
    ]


def extra_template_vars(
    template: str | None,
    database: str | None,
    table: str | None,
    request: Request | None,
    datasette: "Datasette",
) -> Callable[[], Awaitable[dict[str, Any]]] | None:
    if (
        request is None
        or table != TABLE
        or not (template or "").startswith("table")
        or not is_catalog(datasette, database)
    ):
        return None

    async def links() -> dict[str, Any]:
        return {"table_exports": export_urls(datasette, str(database), request)}

    return links


def register_routes(datasette: "Datasette") -> list[tuple[str, Callable[..., Any]]] | None:
    if not serves_catalog(datasette):
        return None
    route = re.escape(catalog_database(datasette).route)
    return [(EXPORT_ROUTE.format(route=route), table_export)]
