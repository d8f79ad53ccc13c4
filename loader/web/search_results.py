"""One /search request's statements (loader/web/search_request.py) run on one SQLite connection.

The page runs this whole sequence in one call on one of Datasette's SQL threads
(`db.execute_fn`): a rare term needs ~10 statements of ~0.1 ms each, and every `db.execute` is a
hop to a thread and back (~0.13 ms) on top. Each step keeps its own time limit, as
`db.execute(..., custom_time_limit=...)` would give it. The benchmark runs the same functions
on a plain connection as the raw SQL the page is measured against.
"""

from dataclasses import dataclass, field

from datasette.database import QueryInterrupted

from loader.web import search_request as search
from loader.web.time_limit import within_time_limit

# facets counted by joining every match to the link tables: slow for a large match set;
# cheapest first (a paper has fewer affiliations than authors)
LINK_FACETS = ("affiliation", "author")


@dataclass
class Limits:
    """Milliseconds a step may take: the page's own statements, and each facet."""

    sql_ms: int | None = None
    facet_ms: int | None = None


@dataclass
class Answer:
    request: search.SearchRequest
    total: int = 0
    results: list = field(default_factory=list)
    facets: dict = field(default_factory=dict)  # name -> [{value, label, count}]
    timed_out: list = field(default_factory=list)
    deferred: list = field(default_factory=list)  # facets left for a second request
    suggestions: list = field(default_factory=list)


NO_LIMITS = Limits()


def fetch(conn, sql_and_params):
    sql, params = sql_and_params
    return conn.execute(sql, params).fetchall()


def find_exact_rowids(conn, request):
    """Papers whose title equals the query (case and punctuation aside) come first."""
    if request.expression is None:
        return ()
    sql, params = search.exact_title_sql(request)
    if sql is None:
        return ()
    wanted = search.normalized_title(request.q)
    return tuple(
        row[0] for row in fetch(conn, (sql, params)) if search.normalized_title(row[1]) == wanted
    )


def count_total(conn, request):
    return fetch(conn, search.count_sql(request))[0][0]


def find_page(conn, request, exact_rowids, after=None, limit=None, offset=0):
    """(rowid, sort keys...) of a page, or of an export's batch after a row's keys."""
    return fetch(conn, search.page_sql(request, exact_rowids, after, limit, offset))


def fetch_results(conn, request, rowids):
    """The papers of these rowids with authors, affiliations and snippets, in that order."""
    if not rowids:
        return []
    by_rowid = {row[0]: row for row in fetch(conn, search.details_sql(rowids))}
    paper_ids = [by_rowid[rowid][1] for rowid in rowids if rowid in by_rowid]
    authors, affiliations, snippets = {}, {}, {}
    for paper_id, author_id, name in fetch(conn, search.authors_sql(paper_ids)):
        authors.setdefault(paper_id, []).append({"id": author_id, "name": name})
    for paper_id, slug, name in fetch(conn, search.affiliations_sql(paper_ids)):
        affiliations.setdefault(paper_id, []).append({"slug": slug, "name": name})
    if request.expression is not None:
        snippets = dict(fetch(conn, search.snippets_sql(request, rowids)))
    results = []
    for rowid in rowids:
        row = by_rowid.get(rowid)
        if row is None:
            continue
        (_, paper_id, label, title, venue, year, status, track, url, truncated, abstract) = row
        results.append(
            {
                "id": paper_id,
                "label": label,
                "title": title,
                "authors": authors.get(paper_id, []),
                "authors_truncated": bool(truncated),
                "venue": venue,
                "year": year,
                "status": status,
                "track": track,
                "affiliations": affiliations.get(paper_id, []),
                "snippet": snippets.get(rowid),
                "url": url,
                "abstract": abstract,
            }
        )
    return results


def label_of(value, label):
    if value is None:
        return "(none)"
    return str(label if label is not None else value)


def count_column_facets(conn, request):
    """(total, {facet: items}) of the venue, year, status, area and track facets."""
    total, counted = search.column_facets(request, fetch(conn, search.combo_counts_sql(request)))
    return total, {
        name: [
            {"value": value, "label": label_of(value, value), "count": count}
            for value, count in values
        ]
        for name, values in counted.items()
    }


def count_link_facet(conn, request, name):
    """The author or affiliation facet: [{value, label, count}], the chosen values listed."""
    rows = fetch(conn, search.facet_sql(request, name))
    items = [{"value": r[0], "label": label_of(r[0], r[1]), "count": r[2]} for r in rows]
    listed = {item["value"] for item in items}
    missing = [value for value in request.chosen(name) if value not in listed]
    if missing:
        found = {r[0]: r for r in fetch(conn, search.facet_sql(request, name, only=missing))}
        for value in missing:
            row = found.get(value)
            items.append(
                {
                    "value": value,
                    "label": label_of(value, row[1] if row else value),
                    "count": row[2] if row else 0,
                }
            )
    return items


def find_suggestions(conn, request):
    """This query with each misspelt word replaced by a word the catalog uses."""
    words = search.query_words(request.q)
    replacements = {}
    for word in words:
        if len(word) < 3 or word in replacements or fetch(conn, search.word_exists_sql(word)):
            continue
        stems = search.close_stems(word, fetch(conn, search.stem_candidates_sql(word)))
        surfaces = set()
        for stem in stems:
            for row in fetch(conn, search.surface_word_sql(stem)):
                surfaces |= search.marked_words(row)
        found = search.best_words(word, surfaces)
        if found:
            replacements[word] = found
    return search.suggested_queries(words, replacements)


def count_link_facets(conn, request, limits=NO_LIMITS):
    """({facet: items}, timed-out facets) of the author and affiliation facets."""
    facets, timed_out = {}, []
    for name in LINK_FACETS:
        if timed_out:
            # the author facet joins more rows than the affiliation facet that just timed out
            timed_out.append(name)
            continue
        try:
            with within_time_limit(conn, limits.facet_ms):
                items = count_link_facet(conn, request, name)
            if items or request.chosen(name):
                facets[name] = items
        except QueryInterrupted:
            timed_out.append(name)
    return facets, timed_out


def answer_search(conn, request, limits=NO_LIMITS, link_facets_up_to=None):
    """Everything a /search page shows. Author and affiliation facets are left for a second
    request (`deferred`) when more than `link_facets_up_to` papers match (None: never).
    QueryInterrupted when the total or the page runs past its limit; a facet that does is
    listed in `timed_out`."""
    answer = Answer(request)
    with within_time_limit(conn, limits.sql_ms):
        exact = find_exact_rowids(conn, request)
    total = None
    try:
        # the page's total as well as five facets: the statement's limit, not a facet's
        with within_time_limit(conn, limits.sql_ms):
            total, column = count_column_facets(conn, request)
        answer.facets.update(column)
    except QueryInterrupted:
        answer.timed_out += list(search.COLUMN_FILTERS)
    if total is None:
        with within_time_limit(conn, limits.sql_ms):
            total = count_total(conn, request)
    answer.total = total
    last_page = max(1, -(-total // request.size))
    if request.page > last_page:
        request = answer.request = request.with_page(last_page)
    with within_time_limit(conn, limits.sql_ms):
        rows = find_page(conn, request, exact, offset=request.offset)
        answer.results = fetch_results(conn, request, [row[0] for row in rows])
    if link_facets_up_to is not None and total > link_facets_up_to:
        answer.deferred = list(LINK_FACETS)
    else:
        facets, timed_out = count_link_facets(conn, request, limits)
        answer.facets.update(facets)
        answer.timed_out += timed_out
    answer.facets = {
        name: answer.facets.get(name, [])
        for name in search.FILTERS
        if answer.facets.get(name) or request.chosen(name)
    }
    if not total and request.expression:
        with within_time_limit(conn, limits.sql_ms):
            answer.suggestions = find_suggestions(conn, request)
    return answer
