"""The site's own pages: home (`/`), the paper page (`/catalog/papers/<id>`) and the author
page (`/catalog/authors/<id>`), each a route of ours rendered with our templates (home.html,
paper.html, author.html, all extending catalog_base.html). Only the HTML page is ours: a row's
`.json` stays Datasette's, `.bib` is plugins/paper_bibtex.py's, `/.json` is Datasette's index.

Every query looks rows up by primary key or through an indexed link table, so a page costs the
same on a 1M-paper catalog as on the seeds. An author page shows at most AUTHOR_PAPERS_SHOWN
papers and COAUTHORS_SHOWN co-authors, cut in SQL, and links to all of them: the most prolific
author of the 1M-paper benchmark has thousands of papers and co-authors (docs/benchmark.md).
A page reads its row and everything it shows in one hand-off to an SQL thread.

The pages' lists (related papers, sources, an author's papers, co-authors, tracks) are macros of
_page_lists.html rendered without Jinja's async mode (as /search's results are): a list of a
hundred papers costs an awaited step per expression in the page's own async template.
"""

import json
import re
import sqlite3
import weakref
from collections.abc import Callable, Iterable, Mapping
from typing import Any

from datasette.utils import tilde_decode
from datasette.utils.asgi import NotFound, Request, Response

from loader.web.catalog_scope import catalog_database, serves_catalog
from loader.web.datasette_api import canned_query, index_tables, jinja_environment
from loader.web.kept_renderings import KeptRenderings
from loader.web.paper_signals import (
    catalog_has_signals,
    citation_origin,
    rating_text,
    shown_links,
    stored_links,
)
from loader.web.permissions import can_view, ensure_view, table_visibility
from loader.web.persons import person_context
from loader.web.related import WordScores, kept_counts, kept_scores, related_within
from loader.web.rendering import title_html
from loader.web.request_scope import mark_incomplete
from loader.web.time_limit import within_time_limit
from loader.web.versions import Version, http_link, paper_versions

from .charts import area_chart
from .data_source import instance_metadata

AUTHOR_PAPERS_SHOWN = 100
COAUTHORS_SHOWN = 50

PAPER_SQL = "select * from papers where id = :id"
# the source titles of a list's papers: the canned queries give labels (titles as plain text),
# where a list renders the title's markup
PAPER_TITLES_SQL = (
    "select id, title from papers where id in (select value from json_each(:ids)) "
    "and title is not null"
)
PAPER_AUTHORS_SQL = """
select authors.id, authors.name, paper_authors.position
from paper_authors
join authors on authors.id = paper_authors.author_id
where paper_authors.paper_id = :id
order by paper_authors.position is null, paper_authors.position, authors.id
"""
PAPER_AFFILIATIONS_SQL = """
select affiliations.*
from paper_affiliations
join affiliations on affiliations.id = paper_affiliations.affiliation_id
where paper_affiliations.paper_id = :id
order by affiliations.name
"""
PAPER_SOURCES_SQL = """
select sources.id, sources.path, sources.format, paper_sources.line,
  paper_sources.venue, paper_sources.year, paper_sources.status,
  paper_sources.title, paper_sources.url
from paper_sources
join sources on sources.id = paper_sources.source_id
where paper_sources.paper_id = :id
order by sources.path, paper_sources.line
"""
# where each version's citation count comes from (a catalog with signals only)
PAPER_CITATIONS_SQL = """
select sources.format, sources.as_of, paper_sources.citations
from paper_sources
join sources on sources.id = paper_sources.source_id
where paper_sources.paper_id = :id and paper_sources.citations is not null
order by paper_sources.citations desc, sources.path, paper_sources.line
"""
AUTHOR_SQL = "select * from authors where id = :id"
# author_tracks holds the counts (built by the loader): no need to read every paper of theirs
AUTHOR_TRACKS_SQL = """
select tracks.id, tracks.name, tracks.area, author_tracks.paper_count as papers
from author_tracks
join tracks on tracks.id = author_tracks.track_id
where author_tracks.author_id = :id
order by papers desc, name
"""
# how many of an author's papers each year and venue has: through the narrow facet tables
# (loader/build/facet_table.py), so counting thousands of papers reads no paper row
AUTHOR_YEARS_SQL = """
select facet_combos.year, facet_combos.venue, count(*) as papers
from paper_authors
join papers on papers.id = paper_authors.paper_id
join paper_facets on paper_facets.paper = papers.rowid
join facet_combos on facet_combos.id = paper_facets.combo
where paper_authors.author_id = :id
group by facet_combos.year, facet_combos.venue
"""
# the canned `coauthors` order (most shared first, then name), with names looked up only for
# the first :limit: joining authors for every one of thousands of co-authors before the sort
# cost much more. `total` counts them all.
AUTHOR_COAUTHORS_SQL = """
with shared as (
  select other.author_id, count(*) as shared_papers
  from paper_authors as own
  join paper_authors as other on other.paper_id = own.paper_id
    and other.author_id != own.author_id
  where own.author_id = :id
  group by other.author_id
)
select authors.id as author_id, authors.name, shared.shared_papers,
  (select count(*) from shared) as total
from shared
join authors on authors.id = shared.author_id
where shared.shared_papers >= coalesce(
  (select shared_papers from shared order by shared_papers desc limit 1 offset :limit - 1), 0
)
order by shared.shared_papers desc, authors.name
limit :limit
"""


def limited(sql: str) -> str:
    """A canned query's first :limit rows, in its own order."""
    return f"select * from ({sql}) limit :limit"


async def canned_sql(datasette: Any, database: str, name: str, actor: Any) -> str:
    """A canned query of metadata.yml, so a page and its query never disagree."""
    query = await canned_query(datasette, database, name, actor)
    if not query or not query.get("sql"):
        raise LookupError(f"canned query {name!r} is missing from metadata.yml")
    return query["sql"]


def read_rows(
    connection: sqlite3.Connection,
    sql: str,
    params: Mapping[str, Any],
    time_limit_ms: int | None,
) -> list[dict[str, Any]]:
    """A statement's rows as dicts within the time limit, past it QueryInterrupted, as
    Datasette's own execute() gives them. A page runs all its statements in one go on one SQL
    thread: one hand-off between the event loop and the thread instead of one per query."""
    with within_time_limit(connection, time_limit_ms, sql, params):
        return [dict(row) for row in connection.execute(sql, params)]


def with_source_titles(
    connection: sqlite3.Connection, papers: list[dict[str, Any]] | None, time_limit_ms: int | None
) -> list[dict[str, Any]] | None:
    """The papers of a list, each with its source title (None for a paper without one)."""
    if not papers:
        return papers
    ids = json.dumps([paper["id"] for paper in papers])
    found = read_rows(connection, PAPER_TITLES_SQL, {"ids": ids}, time_limit_ms)
    titles = {row["id"]: row["title"] for row in found}
    return [dict(paper, title=titles.get(paper["id"])) for paper in papers]


def paper_signals(paper: Mapping[str, Any], citing: list[dict[str, Any]]) -> dict[str, Any]:
    """What _paper_signals.html shows of a paper: its links, citations with their source and
    date, rating and TL;DR (none of them for a catalog built without them). `citing`: its
    versions' counts, PAPER_CITATIONS_SQL's rows."""
    citations = paper.get("citations")
    return {
        "paper_links": shown_links(stored_links(paper.get("links"))),
        "paper_citations": None
        if citations is None
        else {
            "text": f"{citations:,} citation{'' if citations == 1 else 's'}",
            "origin": citation_origin(
                paper.get("citations_source"), paper.get("citations_as_of"), citing, citations
            ),
        },
        "paper_rating": rating_text(paper.get("rating"), paper.get("rating_count")),
        "paper_tldr": paper.get("tldr") or None,
    }


def listed_versions(sources: list[dict[str, Any]], title: str | None) -> list[Version]:
    """The paper's versions (all, for the provenance fold) when the page lists any, else []."""
    if len(sources) < 2:
        return []
    versions = paper_versions(sources, title)
    return versions if any(version.listed for version in versions) else []


def paper_page(
    connection: sqlite3.Connection,
    paper: dict[str, Any],
    time_limit_ms: int | None,
    related_kept: tuple[dict[str, int], WordScores],
    has_signals: bool = False,
) -> dict[str, Any]:
    """Everything the paper page shows of `paper`, its row of papers as a dict;
    related_kept: related_kept() of the database it is read from; has_signals: whether it has
    the signal columns (loader/web/paper_signals.py)."""

    def rows(sql: str) -> list[dict[str, Any]]:
        return read_rows(connection, sql, {"id": paper["id"]}, time_limit_ms)

    authors = rows(PAPER_AUTHORS_SQL)
    sources = rows(PAPER_SOURCES_SQL)
    citing = rows(PAPER_CITATIONS_SQL) if has_signals and paper.get("citations") else []
    return {
        **paper_signals(paper, citing),
        "paper": paper,
        "paper_url": http_link(paper["url"]),
        "paper_authors": [a for a in authors if a["position"] is not None],
        # profile owners: authors even when the cut-short list does not show them (a paper
        # two owners' profiles list has two); the heading counts them with the list
        "paper_owners": [a for a in authors if a["position"] is None],
        "paper_affiliations": rows(PAPER_AFFILIATIONS_SQL),
        # JSON lists of the row (null when no source gave any)
        "paper_categories": json.loads(paper.get("categories") or "[]"),
        "paper_keywords": json.loads(paper.get("keywords") or "[]"),
        "paper_sources": sources,
        # a merged paper's versions (loader/web/versions.py); one entry, or entries of which
        # none adds a venue, year, link or title, are no versions
        "paper_versions": listed_versions(sources, paper["title"] or paper["label"]),
        # the related_papers canned query's rows (loader/web/related.py), None past the limit
        "related_papers": with_source_titles(
            connection,
            related_within(connection, paper["id"], time_limit_ms, *related_kept),
            time_limit_ms,
        ),
    }


def related_kept(db: Any) -> tuple[dict[str, int], WordScores]:
    """The word counts and scores kept for db's related papers (read on the event loop: the
    SQL threads share them)."""
    return kept_counts(db), kept_scores(db)


def paper_lookups(
    paper_id: str,
    time_limit_ms: int | None,
    related_kept: tuple[dict[str, int], WordScores],
    has_signals: bool = False,
) -> Callable[[sqlite3.Connection], dict[str, Any]]:
    """Everything the paper page shows ({} for no such paper), read on the SQL thread."""

    def read(connection: sqlite3.Connection) -> dict[str, Any]:
        found = read_rows(connection, PAPER_SQL, {"id": paper_id}, time_limit_ms)
        if not found:
            return {}
        return paper_page(connection, found[0], time_limit_ms, related_kept, has_signals)

    return read


async def paper_context(datasette: Any, db: Any, paper_id: str, request: Request) -> dict:
    """What paper.html shows of a paper of the catalog `db` ({} for no such paper)."""
    time_limit_ms = datasette.setting("sql_time_limit_ms")
    has_signals = await catalog_has_signals(db)
    context = await db.execute_fn(
        paper_lookups(paper_id, time_limit_ms, related_kept(db), has_signals)
    )
    if context and context["related_papers"] is None:
        mark_incomplete(request.scope, "related papers")
    return context


def papers_by_year(
    counts: Iterable[Mapping[str, Any]], papers: list[dict[str, Any]]
) -> list[dict[str, Any]]:
    """Newest year first (papers of no year last): each year's count and its venues' counts
    (most papers first) for all of the author's papers, and those of `papers` (the ones the
    page shows) in that year, in their order."""
    years: dict[int | None, dict] = {}
    for row in counts:
        year = years.setdefault(row["year"], {"year": row["year"], "count": 0, "venues": []})
        year["count"] += row["papers"]
        year["venues"].append((row["venue"], row["papers"]))
    for year in years.values():
        # named venues by count, papers of no venue last; none at all when no venue is named
        year["venues"].sort(key=lambda venue: (venue[0] is None, -venue[1], venue[0] or ""))
        if year["venues"][0][0] is None:
            year["venues"] = []
        year["papers"] = [paper for paper in papers if paper["year"] == year["year"]]
    return sorted(years.values(), key=lambda year: (year["year"] is None, -(year["year"] or 0)))


def author_page(
    connection: sqlite3.Connection,
    author: dict[str, Any],
    papers_sql: str,
    time_limit_ms: int | None,
    max_returned_rows: int,
) -> dict[str, Any]:
    """Everything the author page shows of `author`, its row of authors as a dict."""

    def rows(sql: str, **params: Any) -> list[dict[str, Any]]:
        return read_rows(connection, sql, {"id": author["id"], **params}, time_limit_ms)

    coauthors = rows(AUTHOR_COAUTHORS_SQL, limit=COAUTHORS_SHOWN)
    papers = rows(papers_sql, author_id=str(author["id"]), limit=AUTHOR_PAPERS_SHOWN)
    papers = with_source_titles(connection, papers, time_limit_ms) or []
    return {
        "author": author,
        "author_papers": papers,
        # the papers shown, under a heading a year with the counts of all of them
        "author_years": papers_by_year(rows(AUTHOR_YEARS_SQL), papers),
        # the loader counts paper_authors rows into paper_count
        "author_paper_count": author["paper_count"] or 0,
        "coauthors": coauthors,
        "coauthor_count": coauthors[0]["total"] if coauthors else 0,
        # the canned coauthors query (the link to all of them) stops at this many rows
        "query_row_limit": max_returned_rows,
        "author_tracks": rows(AUTHOR_TRACKS_SQL),
        # their ids as links, and the other people of their name told apart
        **person_context(
            connection,
            author,
            lambda sql, params: read_rows(connection, sql, params, time_limit_ms),
        ),
    }


def author_lookups(
    author_id: str, papers_sql: str, time_limit_ms: int | None, max_returned_rows: int
) -> Callable[[sqlite3.Connection], dict[str, Any]]:
    """Everything the author page shows ({} for no such author), read on the SQL thread."""

    def read(connection: sqlite3.Connection) -> dict[str, Any]:
        found = read_rows(connection, AUTHOR_SQL, {"id": author_id}, time_limit_ms)
        if not found:
            return {}
        return author_page(connection, found[0], papers_sql, time_limit_ms, max_returned_rows)

    return read


async def author_context(datasette: Any, db: Any, author_id: str, request: Request) -> dict:
    """What author.html shows of an author of the catalog `db` ({} for no such author)."""
    papers_sql = limited(await canned_sql(datasette, db.name, "papers_by_author", request.actor))
    lookups = author_lookups(
        author_id,
        papers_sql,
        datasette.setting("sql_time_limit_ms"),
        datasette.setting("max_returned_rows"),
    )
    return await db.execute_fn(lookups)


# per worker: the titles of the pages' lists (a paper is listed as related on many pages)
TITLES_KEPT_BYTES = 4 * 1024 * 1024
kept_title_html = KeptRenderings(title_html, TITLES_KEPT_BYTES)
# per Datasette instance: its template environment without async mode, for the pages' lists
SYNC_ENVIRONMENTS: "weakref.WeakKeyDictionary[Any, Any]" = weakref.WeakKeyDictionary()
# the page routes under the catalog's: the HTML page only (a key of `.`-free characters, which
# leaves `<id>.json` and `<id>.bib` to their own routes); ids are tilde-encoded as Datasette's
# row URLs encode them
PAGE_ROUTE = r"^/{route}/(?P<table>papers|authors)/(?P<key>[^/.]+)$"
# databases the home page lists by name, tables and rows; a database's first few tables
HOME_TABLES_SHOWN = 5
# a table's rows counted within this many ms for the home page (Datasette's index does so too)
COUNT_LIMIT_MS = 10


def page_lists(datasette: Any) -> Any:
    """The macros of _page_lists.html, rendered synchronously (the module docstring says why)."""
    environment = SYNC_ENVIRONMENTS.get(datasette)
    if environment is None:
        own = jinja_environment(datasette)
        environment = SYNC_ENVIRONMENTS[datasette] = own.overlay(enable_async=False)
    return environment.get_template("_page_lists.html").module


def with_titles(papers: list[dict]) -> list[dict]:
    """Papers of a list, each with its title (else its label) rendered (math, markup) as its
    link's text."""
    return [
        dict(paper, label_html=kept_title_html(paper.get("title") or paper["label"]))
        for paper in papers
    ]


async def row_page(datasette: Any, request: Request) -> Response:
    """The HTML paper or author page of the route's key: a 404 for none, a 403 for an actor
    who may not see the table."""
    db = catalog_database(datasette)
    table = request.url_vars["table"]
    await ensure_view(datasette, request.actor, db.name, table)
    key = tilde_decode(request.url_vars["key"])
    read = paper_context if table == "papers" else author_context
    context = await read(datasette, db, key, request)
    if not context:
        # plugins/aliases.py turns this 404 of a merged paper's old id into a redirect
        raise NotFound("No such paper" if table == "papers" else "No such author")
    urls = datasette.urls
    lists = page_lists(datasette)
    papers_url = urls.table(db.name, "papers")
    if table == "papers":
        template = "paper.html"
        context["related_html"] = lists.related_items(
            with_titles(context["related_papers"] or []), papers_url
        )
        context["sources_html"] = lists.source_items(context["paper_sources"])
    else:
        template = "author.html"
        for group in context["author_years"]:
            group["papers_html"] = lists.year_paper_items(with_titles(group["papers"]), papers_url)
        context["coauthors_html"] = lists.coauthor_items(
            context["coauthors"], urls.table(db.name, "authors")
        )
        context["tracks_html"] = lists.track_items(context["author_tracks"], papers_url)
    json_url = urls.row(db.name, table, request.url_vars["key"], format="json")
    alternate = datasette.absolute_url(request, json_url)
    context.update(
        database=db.name,
        table=table,
        crumbs=[(db.name, urls.database(db.name)), (table, urls.table(db.name, table))],
        json_url=json_url,
        alternate_url_json=alternate,
    )
    html = await datasette.render_template(template, context, request=request)
    # the row's JSON, announced as Datasette's own row pages announce it
    link = f'<{alternate}>; rel="alternate"; type="application/json+datasette"'
    return Response.html(html, headers={"Link": link})


async def database_summary(datasette: Any, name: str, db: Any, actor: Any) -> dict | None:
    """A database as the home page lists it (None when the actor may not see it): its tables,
    hidden ones apart, their rows when every count is quick, and the largest few linked, with
    a lock on those others may not see (as Datasette's index says them)."""
    if not await can_view(datasette, actor, name):
        return None
    tables = await index_tables(datasette, name, actor)
    hidden = set(await db.hidden_table_names()) & set(tables)
    names = [table for table in tables if table not in hidden]
    counts = await db.table_counts(COUNT_LIMIT_MS)
    counted = all(count is not None for count in counts.values())
    largest = sorted(names, key=lambda table: (-(counts.get(table) or 0), table))
    shown: list[dict] = []
    for table in largest:
        if len(shown) == HOME_TABLES_SHOWN:
            break
        visible, private = await table_visibility(datasette, actor, name, table)
        if not visible:
            continue
        shown.append({"name": table, "url": datasette.urls.table(name, table), "private": private})
    return {
        "name": name,
        "url": datasette.urls.database(name),
        "tables_count": len(names),
        "rows": sum(counts[table] for table in names) if counted else None,
        "hidden_count": len(hidden),
        "hidden_rows": sum(counts[table] for table in hidden) if counted else None,
        "views_count": len(await db.view_names()),
        "tables_shown": shown,
        "more": len(names) > len(shown),
    }


async def home_page(datasette: Any, request: Request) -> Response:
    """The home page: the site's title and description, the catalog's search boxes, links and
    area chart (_catalog_home.html), and the databases served."""
    await ensure_view(datasette, request.actor)
    catalog = catalog_database(datasette)
    databases = []
    for name, db in datasette.databases.items():
        if name == "_internal":  # Datasette's own bookkeeping, never listed
            continue
        summary = await database_summary(datasette, name, db, request.actor)
        if summary is not None:
            databases.append(summary)
    context = {
        "metadata": await instance_metadata(datasette),
        "catalog_database": catalog.name,
        "area_chart": await area_chart(datasette, catalog),
        "databases": databases,
    }
    html = await datasette.render_template("home.html", context, request=request)
    return Response.html(html)


def register_routes(datasette: Any) -> list[tuple[str, Callable[..., Any]]] | None:
    if not serves_catalog(datasette):
        return None
    route = PAGE_ROUTE.format(route=re.escape(catalog_database(datasette).route))
    # plugin routes come before Datasette's: `/` is ours, `/.json` stays Datasette's index
    return [(r"^/$", home_page), (route, row_page)]
