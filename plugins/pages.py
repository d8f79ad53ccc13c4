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
  paper_sources.venue, paper_sources.year, paper_sources.status
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


def safe_url(url):
    """Only http(s) links from the sources become links; anything else could run script."""
    if url and url.strip().lower().startswith(("http://", "https://")):
        return url.strip()
    return None


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
        return {
            "paper": found[0],
            "paper_url": safe_url(found[0]["url"]),
            "paper_authors": [a for a in authors if a["position"] is not None],
            # the profile owner: an author even when the cut-short list does not show them
            "paper_owner": next((a for a in authors if a["position"] is None), None),
            "paper_affiliations": rows(PAPER_AFFILIATIONS_SQL),
            # JSON lists of the row (null when no source gave any)
            "paper_categories": json.loads(found[0].get("categories") or "[]"),
            "paper_keywords": json.loads(found[0].get("keywords") or "[]"),
            "paper_sources": rows(PAPER_SOURCES_SQL),
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
        return {
            "author": author,
            "author_papers": rows(papers_sql, author_id=str(author_id), limit=AUTHOR_PAPERS_SHOWN),
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
