"""The paper page (row-catalog-papers.html) and the author page (row-catalog-authors.html):
Datasette's own row pages, with the context a reader needs.

Every query looks rows up by primary key or through an indexed link table, so a page costs the
same on a 1M-paper catalog as on the seeds. An author page shows at most AUTHOR_PAPERS_SHOWN
papers and COAUTHORS_SHOWN co-authors, cut in SQL, and links to all of them: the most prolific
author of the 1M-paper benchmark has thousands of papers and co-authors (docs/benchmark.md).

Served (page_view(), on the catalog's row route), a page reads its row and everything it shows in
one hand-off to the SQL thread, and skips what Datasette's row view prepares for its generic
row table, which these templates never show (every cell rendered, the counts of other tables'
links to the row). Elsewhere (Datasette's own RowView: the patches off, a user's own template
for these pages, a row URL with several key values) the extra_template_vars hook reads the
same context after Datasette's own lookups.
"""

import functools
import json
import re
from pathlib import Path

from datasette import hookimpl
from datasette.utils import tilde_decode, to_css_class, urlsafe_components
from datasette.utils.asgi import Forbidden, NotFound

from loader.web.catalog_scope import catalog_database, is_catalog, row_template, serves_catalog
from loader.web.datasette_coupling import patches_enabled
from loader.web.related import kept_counts, kept_scores, related_within
from loader.web.request_scope import mark_incomplete
from loader.web.time_limit import within_time_limit
from loader.web.versions import http_link, paper_versions

AUTHOR_PAPERS_SHOWN = 100
COAUTHORS_SHOWN = 50

PAPER_SQL = "select * from papers where id = :id"
PAPER_AUTHORS_SQL = """
select authors.id, authors.name, paper_authors.position
from paper_authors
join authors on authors.id = paper_authors.author_id
where paper_authors.paper_id = :id
order by paper_authors.position is null, paper_authors.position, authors.id
"""
PAPER_AFFILIATIONS_SQL = """
select affiliations.id, affiliations.slug, affiliations.name
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


def primary_key(request):
    values = urlsafe_components(request.url_vars["pks"])
    return values[0] if len(values) == 1 else None


def limited(sql):
    """A canned query's first :limit rows, in its own order."""
    return f"select * from ({sql}) limit :limit"


async def canned_sql(datasette, database, name, actor):
    """A canned query of metadata.yml, so a page and its query never disagree."""
    query = await datasette.get_canned_query(database, name, actor)
    if query is None:
        raise LookupError(f"canned query {name!r} is missing from metadata.yml")
    return query["sql"]


def read_rows(connection, sql, params, time_limit_ms):
    """A statement's rows as dicts within the time limit, past it QueryInterrupted, as
    Datasette's own execute() gives them. A page runs all its statements in one go on one SQL
    thread: one hand-off between the event loop and the thread instead of one per query."""
    with within_time_limit(connection, time_limit_ms, sql, params):
        return [dict(row) for row in connection.execute(sql, params)]


def paper_page(connection, paper, time_limit_ms, related_kept):
    """Everything the paper page shows of `paper`, its row of papers as a dict;
    related_kept: related_kept() of the database it is read from."""

    def rows(sql):
        return read_rows(connection, sql, {"id": paper["id"]}, time_limit_ms)

    authors = rows(PAPER_AUTHORS_SQL)
    sources = rows(PAPER_SOURCES_SQL)
    return {
        "paper": paper,
        "paper_url": http_link(paper["url"]),
        "paper_authors": [a for a in authors if a["position"] is not None],
        # the profile owner: an author even when the cut-short list does not show them
        "paper_owner": next((a for a in authors if a["position"] is None), None),
        "paper_affiliations": rows(PAPER_AFFILIATIONS_SQL),
        # JSON lists of the row (null when no source gave any)
        "paper_categories": json.loads(paper.get("categories") or "[]"),
        "paper_keywords": json.loads(paper.get("keywords") or "[]"),
        "paper_sources": sources,
        # a merged paper's versions (loader/web/versions.py); one entry is no versions
        "paper_versions": paper_versions(sources, paper["title"] or paper["label"])
        if len(sources) > 1
        else [],
        # the related_papers canned query's rows (loader/web/related.py), None past the limit
        "related_papers": related_within(connection, paper["id"], time_limit_ms, *related_kept),
    }


def related_kept(db):
    """The word counts and scores kept for db's related papers (read on the event loop: the
    SQL threads share them)."""
    return kept_counts(db), kept_scores(db)


def paper_lookups(paper_id, time_limit_ms, related_kept):
    """Everything the paper page shows ({} for no such paper), read on the SQL thread."""

    def read(connection):
        found = read_rows(connection, PAPER_SQL, {"id": paper_id}, time_limit_ms)
        return paper_page(connection, found[0], time_limit_ms, related_kept) if found else {}

    return read


async def paper_context(datasette, database, paper_id, request):
    db = datasette.get_database(database)
    time_limit_ms = datasette.setting("sql_time_limit_ms")
    context = await db.execute_fn(paper_lookups(paper_id, time_limit_ms, related_kept(db)))
    if context and context["related_papers"] is None:
        mark_incomplete(request.scope, "related papers")
    return context


def papers_by_year(counts, papers):
    """Newest year first (papers of no year last): each year's count and its venues' counts
    (most papers first) for all of the author's papers, and those of `papers` (the ones the
    page shows) in that year, in their order."""
    years = {}
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


def author_page(connection, author, papers_sql, time_limit_ms, max_returned_rows):
    """Everything the author page shows of `author`, its row of authors as a dict."""

    def rows(sql, **params):
        return read_rows(connection, sql, {"id": author["id"], **params}, time_limit_ms)

    coauthors = rows(AUTHOR_COAUTHORS_SQL, limit=COAUTHORS_SHOWN)
    papers = rows(papers_sql, author_id=str(author["id"]), limit=AUTHOR_PAPERS_SHOWN)
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
    }


def author_lookups(author_id, papers_sql, time_limit_ms, max_returned_rows):
    """Everything the author page shows ({} for no such author), read on the SQL thread."""

    def read(connection):
        found = read_rows(connection, AUTHOR_SQL, {"id": author_id}, time_limit_ms)
        if not found:
            return {}
        return author_page(connection, found[0], papers_sql, time_limit_ms, max_returned_rows)

    return read


async def author_context(datasette, database, author_id, actor):
    papers_sql = limited(await canned_sql(datasette, database, "papers_by_author", actor))
    lookups = author_lookups(
        author_id,
        papers_sql,
        datasette.setting("sql_time_limit_ms"),
        datasette.setting("max_returned_rows"),
    )
    return await datasette.get_database(database).execute_fn(lookups)


# the catalog's HTML paper and author pages: Datasette's row route (plugin routes are matched
# before Datasette's own) without a format (a last segment ending `.json` or `.csv` is one)
PAGE_ROUTE = (
    r"/(?P<database>{route})/(?P<table>papers|authors)"
    r"/(?P<pks>(?![^/]*\.\w+$)[^/]+)(\.(?P<format>\w+))?$"
)
# our templates, shown instead of Datasette's row table (a user's --template-dir may replace them)
OWN_TEMPLATES = Path(__file__).parent / "templates"
# where page_view() leaves a page's context for the extra_template_vars hook
PAGE_CONTEXT = "paper_catalog.page_context"


class PageData:
    """Datasette's RowView (views/row.py) with its data() read as the page needs it: the row
    and the page's own lookups in one hand-off, and none of what the row table of row.html
    needs. A copy of RowView.data checked by loader/web/datasette_coupling.py; Datasette's own
    data() whenever the page is not ours to read. Served as page_view()."""

    async def data(self, request, default_labels=False):
        page = await self.page_data(request)
        return page if page is not None else await super().data(request, default_labels)

    async def page_data(self, request):
        # Datasette's views load the installed plugins, this module among them
        from datasette.views.table import _sql_params_pks

        database_route = tilde_decode(request.url_vars["database"])
        table = tilde_decode(request.url_vars["table"])
        try:
            db = self.ds.get_database(route=database_route)
        except KeyError:
            raise NotFound("Database not found") from None
        database = db.name
        templates = (
            f"row-{to_css_class(database)}-{to_css_class(table)}.html",
            "row.html",
        )
        pk_values = urlsafe_components(request.url_vars["pks"])
        if len(pk_values) != 1 or not self.own_template(templates):
            return None

        # Ensure user has permission to view this row
        visible, private = await self.ds.check_visibility(
            request.actor,
            permissions=[
                ("view-table", (database, table)),
                ("view-database", database),
                "view-instance",
            ],
        )
        if not visible:
            raise Forbidden("You do not have permission to view this table")

        sql, params, pks = await _sql_params_pks(db, table, pk_values)
        read = await self.page_reader(table, database, request.actor)
        time_limit_ms = self.ds.setting("sql_time_limit_ms")
        columns, rows, page = await db.execute_fn(
            lambda connection: read_page(connection, sql, params, time_limit_ms, read)
        )
        if not rows:
            raise NotFound("Record not found")
        if page.get("related_papers", []) is None:
            mark_incomplete(request.scope, "related papers")
        request.scope[PAGE_CONTEXT] = page

        async def template_data():
            # what RowView.data's template_data gives, but for its row table (the display
            # rows, the counts of incoming foreign keys), which the page's template never shows
            return {
                "private": private,
                "foreign_key_tables": [],
                "display_columns": [],
                "display_rows": [],
                "custom_table_templates": [
                    f"_table-{to_css_class(database)}-{to_css_class(table)}.html",
                    f"_table-row-{to_css_class(database)}-{to_css_class(table)}.html",
                    "_table.html",
                ],
                "metadata": (self.ds.metadata("databases") or {})
                .get(database, {})
                .get("tables", {})
                .get(table, {}),
            }

        data = {
            "database": database,
            "table": table,
            "rows": rows,
            "columns": columns,
            "primary_keys": pks,
            "primary_key_values": pk_values,
            "units": self.ds.table_metadata(database, table).get("units", {}),
        }
        return data, template_data, templates

    def own_template(self, templates):
        """The page is one of ours: our template is the one Datasette will render."""
        template = self.ds.jinja_env.select_template(templates)
        return template.filename is not None and Path(template.filename).parent == OWN_TEMPLATES

    async def page_reader(self, table, database, actor):
        """What reads the rest of the page from its row, on the SQL thread."""
        time_limit_ms = self.ds.setting("sql_time_limit_ms")
        if table == "papers":
            kept = related_kept(self.ds.get_database(database))
            return lambda connection, paper: paper_page(connection, paper, time_limit_ms, kept)
        papers_sql = limited(await canned_sql(self.ds, database, "papers_by_author", actor))
        max_returned_rows = self.ds.setting("max_returned_rows")
        return lambda connection, author: author_page(
            connection, author, papers_sql, time_limit_ms, max_returned_rows
        )


@functools.cache
def page_view():
    """Datasette's RowView with PageData's data()."""
    from datasette.views.row import RowView

    return type("PageView", (PageData, RowView), {})


def read_page(connection, sql, params, time_limit_ms, read):
    """The row as Datasette's row view reads it (columns and rows) and, when there is one, the
    page's context from it: one hand-off."""
    with within_time_limit(connection, time_limit_ms, sql, params):
        cursor = connection.execute(sql, params)
        rows = cursor.fetchall()
    columns = [column[0] for column in cursor.description]
    page = read(connection, dict(rows[0])) if rows else None
    return columns, rows, page


@hookimpl
def register_routes(datasette):
    if not serves_catalog(datasette) or not patches_enabled():
        return None
    route = PAGE_ROUTE.format(route=re.escape(catalog_database(datasette).route))
    return [(route, page_view().as_view(datasette))]


@hookimpl
def extra_template_vars(template, database, request, datasette):
    # a template rendered from a string has no name
    if request is None or not (template or "").startswith("row-"):
        return None
    page = request.scope.get(PAGE_CONTEXT)
    if page is not None:  # read by page_view() with the row
        return page
    if not is_catalog(datasette, database):
        return None
    paper_template = row_template(datasette, "papers")
    if template not in (paper_template, row_template(datasette, "authors")):
        return None
    key = primary_key(request)
    if key is None:
        return None
    if template == paper_template:
        return paper_context(datasette, database, key, request)
    return author_context(datasette, database, key, request.actor)
