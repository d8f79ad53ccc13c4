"""Data for the paper page (row-catalog-papers.html) and the author page
(row-catalog-authors.html): Datasette's own row pages, with the context a reader needs.

Every query looks rows up by primary key or through an indexed link table, so a page costs the
same on a 1M-paper catalog as on the seeds. An author page shows at most AUTHOR_PAPERS_SHOWN
papers and COAUTHORS_SHOWN co-authors, cut in SQL, and links to all of them: the most prolific
author of the 1M-paper benchmark has thousands of papers and co-authors (docs/benchmark.md).
"""

import json

from datasette import hookimpl
from datasette.utils import urlsafe_components

from loader.web.catalog_scope import is_catalog, row_template
from loader.web.related import kept_counts, related_within
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


def paper_lookups(paper_id, time_limit_ms, kept):
    """Everything the paper page shows."""

    def read(connection):
        def rows(sql):
            return read_rows(connection, sql, {"id": paper_id}, time_limit_ms)

        found = rows(PAPER_SQL)
        if not found:
            return {}
        authors = rows(PAPER_AUTHORS_SQL)
        sources = rows(PAPER_SOURCES_SQL)
        return {
            "paper": found[0],
            "paper_url": http_link(found[0]["url"]),
            "paper_authors": [a for a in authors if a["position"] is not None],
            # the profile owner: an author even when the cut-short list does not show them
            "paper_owner": next((a for a in authors if a["position"] is None), None),
            "paper_affiliations": rows(PAPER_AFFILIATIONS_SQL),
            # JSON lists of the row (null when no source gave any)
            "paper_categories": json.loads(found[0].get("categories") or "[]"),
            "paper_keywords": json.loads(found[0].get("keywords") or "[]"),
            "paper_sources": sources,
            # a merged paper's versions (loader/web/versions.py); one entry is no versions
            "paper_versions": paper_versions(sources, found[0]["title"] or found[0]["label"])
            if len(sources) > 1
            else [],
            # the related_papers canned query's rows (loader/web/related.py), None past the limit
            "related_papers": related_within(connection, paper_id, time_limit_ms, kept),
        }

    return read


async def paper_context(datasette, database, paper_id, request):
    db = datasette.get_database(database)
    time_limit_ms = datasette.setting("sql_time_limit_ms")
    context = await db.execute_fn(paper_lookups(paper_id, time_limit_ms, kept_counts(db)))
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


def author_lookups(author_id, papers_sql, time_limit_ms, max_returned_rows):
    """Everything the author page shows."""

    def read(connection):
        def rows(sql, **params):
            return read_rows(connection, sql, {"id": author_id, **params}, time_limit_ms)

        found = rows(AUTHOR_SQL)
        if not found:
            return {}
        author = found[0]
        coauthors = rows(AUTHOR_COAUTHORS_SQL, limit=COAUTHORS_SHOWN)
        papers = rows(papers_sql, author_id=str(author_id), limit=AUTHOR_PAPERS_SHOWN)
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


@hookimpl
def extra_template_vars(template, database, request, datasette):
    # a template rendered from a string has no name
    if request is None or not (template or "").startswith("row-"):
        return None
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
