"""Finding an author by name.

/-/author?name=Sergey+Levine: the author page of a name as the papers table shows it. The
papers table holds author names (a JSON list for reading and CSV); each one links here and is
sent to its author page, found through the indexed name key (the same folding the loader uses
to merge spellings), so a page of 25 papers needs no lookup until a reader clicks.

/catalog/authors?_search=zhang: namesakes ranked by their papers, most first, where Datasette
lists them by id (the one with 50 papers after two with 5). A search of the authors table that
chooses no order is sorted by `paper_count` descending (indexed), rewritten inside the server
as the papers table's hidden columns are: HTML, JSON and CSV alike, and the page says how it
is sorted. Each name links to its author page, as the id does (plugins/render_cells.py).
Unsearched, the table keeps its id order: every page after the first of a table sorted on
another column costs a scan at 1M papers (docs/site.md).
"""

from collections.abc import Callable
from typing import TYPE_CHECKING, Any
from urllib.parse import parse_qsl

from datasette.utils.asgi import BadRequest, NotFound, Request, Response

from loader.web.catalog_scope import catalog_database, catalog_name, serves_catalog
from loader.web.rendering import name_key

if TYPE_CHECKING:
    from datasette.app import Datasette

    from loader.web.asgi_types import ASGIApp, Receive, Scope, Send

AUTHORS = "authors"
RANKED = b"_sort_desc=paper_count"
SORTS = {"_sort", "_sort_desc"}


async def author_page(datasette: "Datasette", request: Request) -> Response:
    name = request.args.get("name", "")
    if not name.strip() or len(name) > 500:
        raise BadRequest("Give an author's name: /-/author?name=...")
    db = catalog_database(datasette)
    found = (
        # several people may share a name (docs/names.md, "People by their ids"): the one
        # with most papers, whose page names the others
        await db.execute(
            "select id from authors where key = :key order by paper_count desc, id limit 1",
            {"key": name_key(name)},
        )
    ).rows
    if not found:
        raise NotFound(f"No author named {name[:100]}")
    return Response.redirect(datasette.urls.row(db.name, "authors", found[0][0]))


def searches_without_order(query_string: bytes) -> bool:
    """A table search (`_search`, `_search_<column>`) with words, and no `_sort`."""
    pairs = parse_qsl(query_string.decode("latin-1"), keep_blank_values=True)
    names = {key for key, _ in pairs}
    searched = any(
        (key == "_search" or key.startswith("_search_")) and value.strip() for key, value in pairs
    )
    return searched and not names & SORTS


def author_table_paths(datasette: "Datasette") -> tuple[str, ...]:
    if not serves_catalog(datasette):
        return ()
    database = catalog_name(datasette)
    return (datasette.urls.table(database, AUTHORS),) + tuple(
        datasette.urls.table(database, AUTHORS, format=format) for format in ("json", "csv")
    )


def rank_author_searches(app: "ASGIApp", datasette: "Datasette") -> "ASGIApp":
    async def ranked(scope: "Scope", receive: "Receive", send: "Send") -> None:
        if (
            scope["type"] == "http"
            and b"_search" in scope.get("query_string", b"")
            and scope["path"] in author_table_paths(datasette)
            and searches_without_order(scope["query_string"])
        ):
            scope = dict(scope, query_string=scope["query_string"] + b"&" + RANKED)
        await app(scope, receive, send)

    return ranked


def register_routes(datasette: "Datasette") -> list[tuple[str, Callable[..., Any]]] | None:
    if not serves_catalog(datasette):
        return None
    return [(r"^/-/author$", author_page)]


def asgi_wrapper(datasette: "Datasette") -> Callable[["ASGIApp"], "ASGIApp"]:
    return lambda app: rank_author_searches(app, datasette)
