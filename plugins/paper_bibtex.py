"""BibTeX for one paper: shown on its page and downloadable at /catalog/papers/<id>.bib."""

import re
from collections.abc import Callable, Iterable, Mapping
from typing import TYPE_CHECKING, Any

from datasette.utils.asgi import Request, Response

from loader.web import search_request as search
from loader.web.bibtex import format_entry
from loader.web.catalog_scope import catalog_database, serves_catalog

if TYPE_CHECKING:
    from datasette.app import Datasette

# the papers table's route under the catalog's: /catalog/papers/<id>.bib
BIBTEX_ROUTE = r"^/{route}/papers/(?P<paper_id>[0-9a-f]{{1,64}})\.bib$"
PAPER_SQL = (
    "select id, label, title, venue, year, url, authors_truncated from papers where id = :id"
)


def paper_entry(paper: Any, author_names: Iterable[str]) -> str:
    """The BibTeX entry of a papers row (a mapping) and its authors' names in order."""
    paper = dict(paper)
    return format_entry(
        {
            "title": paper.get("title"),
            "label": paper.get("label"),
            "authors": list(author_names),
            "truncated": bool(paper.get("authors_truncated")),
            "venue": paper.get("venue"),
            "year": paper.get("year"),
            "url": paper.get("url"),
        }
    )


def page_entry(
    paper: Any,
    paper_authors: Iterable[Mapping[str, Any]],
    paper_owners: Iterable[Mapping[str, Any]] = (),
) -> str:
    """For the paper page's template: its authors in order, profile owners last."""
    names = [author["name"] for author in (*paper_authors, *paper_owners)]
    return paper_entry(paper, names)


async def bibtex_download(datasette: "Datasette", request: Request) -> Response:
    db = catalog_database(datasette)
    paper_id = request.url_vars["paper_id"]
    found = (await db.execute(PAPER_SQL, {"id": paper_id})).rows
    if not found:
        return Response.text(f"No paper with id {paper_id[:40]}", status=404)
    # the authors in the order /search lists them (a profile owner of unknown position last)
    sql, params = search.authors_sql([paper_id])
    names = [row[2] for row in (await db.execute(sql, params)).rows]
    return Response(
        paper_entry(found[0], names),
        content_type="application/x-bibtex; charset=utf-8",
        headers={"content-disposition": f'attachment; filename="{paper_id}.bib"'},
    )


def register_routes(datasette: "Datasette") -> list[tuple[str, Callable[..., Any]]] | None:
    if not serves_catalog(datasette):
        return None
    route = re.escape(catalog_database(datasette).route)
    return [(BIBTEX_ROUTE.format(route=route), bibtex_download)]


def prepare_jinja2_environment(env: Any) -> None:
    env.globals["paper_bibtex"] = page_entry
