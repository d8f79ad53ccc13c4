"""One /search request's statements (loader/web/search_request.py) run on one SQLite connection.

The page runs this whole sequence in one call on one of Datasette's SQL threads
(`db.execute_fn`): a rare term needs many short statements, and every `db.execute` is a hop to a
thread and back, costing as much as a statement, on top. Each step keeps its own time limit, as
`db.execute(..., custom_time_limit=...)` would give it. The benchmark runs the same functions
on a plain connection as the raw SQL the page is measured against.
"""

import sqlite3
from collections.abc import Sequence
from dataclasses import dataclass, field
from typing import Any, TypedDict

from datasette.database import QueryInterrupted

from loader.web import search_request as search
from loader.web import spelling
from loader.web.facet_counts import ComboIndex, combo_counts, matched_rowids
from loader.web.paper_signals import stored_links
from loader.web.time_limit import within_time_limit

# facets counted by joining every match to papers or the link tables: slow for a large match
# set; cheapest first (a paper has fewer affiliations than authors)
LINK_FACETS = search.LINK_FILTERS


class FacetItem(TypedDict):
    """One value of a facet as the page lists it."""

    value: search.FilterValue
    label: str
    count: int


@dataclass
class Limits:
    """Milliseconds a step may take: the page's own statements, and each facet."""

    sql_ms: int | None = None
    facet_ms: int | None = None


@dataclass
class Answer:
    request: search.SearchRequest
    total: int = 0
    results: list[dict[str, Any]] = field(default_factory=list)  # fetch_results' papers
    facets: dict[str, list[FacetItem]] = field(default_factory=dict)
    timed_out: list[str] = field(default_factory=list)
    deferred: list[str] = field(default_factory=list)  # facets left for a second request
    suggestions: list[str] = field(default_factory=list)
    # relevance was asked for, but too many papers matched to rank: newest first instead
    unranked: bool = False


NO_LIMITS = Limits()


def fetch(conn: sqlite3.Connection, sql_and_params: tuple[str, search.Params]) -> list[Any]:
    sql, params = sql_and_params
    return conn.execute(sql, params).fetchall()


def find_exact_rowids(conn: sqlite3.Connection, request: search.SearchRequest) -> tuple[int, ...]:
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


def count_total(conn: sqlite3.Connection, request: search.SearchRequest) -> int:
    return fetch(conn, search.count_sql(request))[0][0]


def find_page(
    conn: sqlite3.Connection,
    request: search.SearchRequest,
    exact_rowids: Sequence[int],
    after: Sequence[Any] | None = None,
    limit: int | None = None,
    offset: int = 0,
) -> list[Any]:
    """(rowid, sort keys...) of a page, or of an export's batch after a row's keys."""
    return fetch(conn, search.page_sql(request, exact_rowids, after, limit, offset))


def fetch_results(
    conn: sqlite3.Connection,
    request: search.SearchRequest,
    rowids: Sequence[int],
    with_snippets: bool = True,
) -> list[dict[str, Any]]:
    """The papers of these rowids with authors, affiliations and (unless an export, which
    shows none) snippets, in that order. Each list of ids is one bound parameter, so a batch
    of any size fits a connection's limit on bound variables."""
    if not rowids:
        return []
    rows = fetch(conn, search.details_sql(rowids, request.has_signals))
    paper_ids = [row[1] for row in rows]
    authors: dict[str, list[dict[str, Any]]] = {}
    affiliations: dict[str, list[dict[str, Any]]] = {}
    snippets: dict[int, str] = {}
    for paper_id, author_id, name in fetch(conn, search.authors_sql(paper_ids)):
        authors.setdefault(paper_id, []).append({"id": author_id, "name": name})
    affiliation_rows = fetch(conn, search.affiliations_sql(paper_ids, request.has_signals))
    for paper_id, slug, name, country in affiliation_rows:
        affiliations.setdefault(paper_id, []).append(
            {"slug": slug, "name": name, "country": country}
        )
    if with_snippets and request.expression is not None:
        snippets = dict(fetch(conn, search.snippets_sql(request, rowids)))
    results = []
    for row in rows:
        (rowid, paper_id, label, title, venue, year, status, track, url, truncated, abstract) = row[
            :11
        ]
        signals = dict(zip(search.SIGNAL_COLUMNS, row[11:]))
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
                **signals,
                "links": stored_links(signals["links"]),
                "abstract": abstract,
            }
        )
    return results


def label_of(value: object, label: object, name: str = "") -> str:
    if value is None:
        return "(none)"
    if name == "has_code" and isinstance(value, int) and value in search.HAS_CODE_LABELS:
        return search.HAS_CODE_LABELS[value]
    return str(label if label is not None else value)


def count_column_facets(
    conn: sqlite3.Connection, request: search.SearchRequest, combos: ComboIndex | None = None
) -> tuple[int, dict[str, list[FacetItem]]]:
    """(total, {facet: items}) of the venue, year, status, area and track facets; counted from
    the facet table in memory (`combos`) where the request allows."""
    rows = combo_counts_in_memory(conn, request, combos) if combos else None
    if rows is None:
        rows = fetch(conn, search.combo_counts_sql(request))
    total, counted = search.column_facets(request, rows)
    return total, {
        name: [
            {"value": value, "label": label_of(value, value), "count": count}
            for value, count in values
        ]
        for name, values in counted.items()
    }


def combo_counts_in_memory(
    conn: sqlite3.Connection, request: search.SearchRequest, combos: ComboIndex
) -> list[tuple[Any, ...]] | None:
    """combo_counts_sql's rows of a search with no author or affiliation filter, from its
    matches' rowids and the facet table in memory (loader/web/facet_counts.py); None for any
    other request. The statement joined every match to paper_facets and grouped them: at 1M
    papers a third of a second for a common word, against the matches' one read here
    (column_facets applies the column filters to the rows either way)."""
    if request.expression is None or any(
        name not in search.COLUMN_FILTERS for name in request.filters
    ):
        return None
    params: search.Params = {}
    matches = search.matches_sql(request, params, ranked=False)
    return combo_counts(combos, matched_rowids(conn, matches, params))


def count_link_facet(
    conn: sqlite3.Connection, request: search.SearchRequest, name: str
) -> list[FacetItem]:
    """The author or affiliation facet: [{value, label, count}], the chosen values listed."""
    rows = fetch(conn, search.facet_sql(request, name))
    items: list[FacetItem] = [
        {"value": r[0], "label": label_of(r[0], r[1], name), "count": r[2]} for r in rows
    ]
    listed = {item["value"] for item in items}
    missing = [value for value in request.chosen(name) if value not in listed]
    if missing:
        found = {r[0]: r for r in fetch(conn, search.facet_sql(request, name, only=missing))}
        for value in missing:
            row = found.get(value)
            items.append(
                {
                    "value": value,
                    "label": label_of(value, row[1] if row else value, name),
                    "count": row[2] if row else 0,
                }
            )
    return items


def read_filter_words(
    conn: sqlite3.Connection, request: search.SearchRequest
) -> tuple[search.SearchRequest, list[str]]:
    """The request with each filter word's value as the catalog stores it (`venue:iclr` is
    the venue ICLR, as its facet link would ask), and a note for each word saying so."""
    stored: dict[tuple[str, search.FilterValue], search.FilterValue] = {}
    notes = []
    for word in request.query.filters:
        typed = search.filter_word_value(word)
        values = [row[0] for row in fetch(conn, search.filter_word_sql(word))]
        shown = f"{word.name}:{word.value}"
        if not values:
            notes.append(f"{shown} is a filter: applied; no paper has this {word.name}.")
            continue
        value = typed if typed in values else values[0]
        stored[(word.name, typed)] = value
        if value == typed:
            notes.append(f"{shown} is a filter: applied.")
        else:
            notes.append(f"{shown} is a filter: applied as {word.name} {value}.")
    return request.with_stored_values(stored), list(dict.fromkeys(notes))


def is_known(conn: sqlite3.Connection, word: str) -> bool:
    """At least MIN_PAPERS papers write the word as typed (search_vocabulary holds it)."""
    return fetch(conn, spelling.known_sql(word))[0][0] > 0


def words_to_check(request: search.SearchRequest) -> list[spelling.Span]:
    """The spans of q whose spelling is checked: every word to find, in a phrase or not, and
    every word to leave out (`-nueral` leaves nothing out, however many papers the rest
    finds); never a LaTeX command typed as one (`\\textbf`)."""
    return [
        span for span in request.query.words_to_check() if not spelling.is_markup(request.q, span)
    ]


def find_suggestions(conn: sqlite3.Connection, request: search.SearchRequest) -> list[str]:
    """q with each word that fewer than MIN_PAPERS papers write replaced by the closest words
    more do (spelling.py), whatever the search finds."""
    spans = words_to_check(request)
    replacements: dict[str, list[str]] = {}
    checked: set[str] = set()
    looked_up = 0
    for start, end in spans:
        word = spelling.fold(request.q[start:end])
        if word in checked or not spelling.worth_checking(word):
            continue
        checked.add(word)
        if is_known(conn, word):
            continue
        looked_up += 1
        found = spelling.best_words(word, fetch(conn, spelling.candidates_sql(word)))
        if found:
            replacements[word] = found
        if len(replacements) == spelling.MAX_MISSPELT or looked_up == spelling.MAX_LOOKED_UP:
            break
    return spelling.suggested_queries(request.q, spans, replacements)


def count_link_facets(
    conn: sqlite3.Connection, request: search.SearchRequest, limits: Limits = NO_LIMITS
) -> tuple[dict[str, list[FacetItem]], list[str]]:
    """({facet: items}, timed-out facets) of LINK_FACETS. The code facet is left out where no
    match has code (a catalog read from pages only: every paper "No code")."""
    facets: dict[str, list[FacetItem]] = {}
    timed_out: list[str] = []
    for name in LINK_FACETS:
        if not request.counts(name):
            continue
        if timed_out:
            # each facet joins more rows than the one before it, which just timed out
            timed_out.append(name)
            continue
        try:
            with within_time_limit(conn, limits.facet_ms):
                items = count_link_facet(conn, request, name)
            if name == "has_code" and not any(item["value"] == 1 for item in items):
                items = items if request.chosen(name) else []
            if items or request.chosen(name):
                facets[name] = items
        except QueryInterrupted:
            timed_out.append(name)
    return facets, timed_out


def answer_search(
    conn: sqlite3.Connection,
    request: search.SearchRequest,
    limits: Limits = NO_LIMITS,
    link_facets_up_to: int | None = None,
    combos: ComboIndex | None = None,
) -> Answer:
    """Everything a /search page shows. Author and affiliation facets are left for a second
    request (`deferred`) when more than `link_facets_up_to` papers match (None: never).
    QueryInterrupted when the total or the page runs past its limit; a facet that does is
    listed in `timed_out`. `combos`: the facet table in memory, for the column facets. More
    than RANKED_MATCHES_MAX matches asked for by relevance come newest first (`unranked`)."""
    answer = Answer(request)
    with within_time_limit(conn, limits.sql_ms):
        exact = find_exact_rowids(conn, request)
    total = None
    try:
        # the page's total as well as five facets: the statement's limit, not a facet's
        with within_time_limit(conn, limits.sql_ms):
            total, column = count_column_facets(conn, request, combos)
        answer.facets.update(column)
    except QueryInterrupted:
        answer.timed_out += list(search.COLUMN_FILTERS)
    if total is None:
        with within_time_limit(conn, limits.sql_ms):
            total = count_total(conn, request)
    answer.total = total
    if request.sort == "relevance" and total > search.RANKED_MATCHES_MAX:
        request = answer.request = request.with_sort("newest")
        answer.unranked = True
    last_page = max(1, -(-total // request.size))
    if request.page > last_page:
        request = answer.request = request.with_page(last_page)
    with within_time_limit(conn, limits.sql_ms):
        rows = find_page(conn, request, exact, offset=request.offset)
        answer.results = fetch_results(conn, request, [row[0] for row in rows])
    if link_facets_up_to is not None and total > link_facets_up_to:
        answer.deferred = [name for name in LINK_FACETS if request.counts(name)]
    else:
        facets, timed_out = count_link_facets(conn, request, limits)
        answer.facets.update(facets)
        answer.timed_out += timed_out
    answer.facets = {
        name: answer.facets.get(name, [])
        for name in search.FACET_FILTERS
        if answer.facets.get(name) or request.chosen(name)
    }
    if request.expression:
        try:
            with within_time_limit(conn, limits.sql_ms):
                answer.suggestions = find_suggestions(conn, request)
        except QueryInterrupted:
            pass  # a page without suggestions rather than no page
    return answer
