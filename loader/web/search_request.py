"""The /search contract: URL parameters -> a checked request -> the SQL that answers it.

Pure (no Datasette, no I/O), so the rules are tested on their own and the page, its JSON and its
exports all run the same statements. Values of one filter are OR-ed, filters are AND-ed; a
facet's own filter is left out when counting that facet, so choosing one track still shows the
other tracks' counts.
"""

import dataclasses
import json
import math
import re
import unicodedata
from collections.abc import Collection, Iterable, Sequence
from dataclasses import dataclass
from typing import Any

from loader.build.facet_table import COLUMNS as FACET_COLUMNS
from loader.web.search_syntax import FilterWord, Query, QueryError, parse_query

DEFAULT_SIZE = 20
MAX_SIZE = 100
FACET_LIMIT = 20
# "citations": most cited first, papers of no known count last (catalogs with signals only)
SORTS = ("relevance", "newest", "oldest", "citations")
# more matches than this are shown newest first instead of by relevance: FTS5 ranks a match at
# a time (about 1 µs each at 1M papers), so a word in most papers would take the page's whole
# time limit to rank and answer "took too long" (docs/benchmark.md, issue 26, third session)
RANKED_MATCHES_MAX = 200_000
# bm25 weights of the papers_fts columns (label, authors, abstract_text): a word in the title
# counts most, then an author's name (`levine offline`), then the abstract
FTS_WEIGHTS = (10.0, 4.0, 1.0)
SNIPPET_COLUMN = 2
SNIPPET_TOKENS = 24
# the column each plain filter reads; affiliation and author go through their link tables
COLUMN_FILTERS = {
    "area": "area",
    "track": "track",
    "venue": "venue",
    "year": "year",
    "status": "status",
}
# has_code, country and rating_min read columns only catalogs with signals have (issue 34):
# `has_signals` says whether a request may use them
SIGNAL_FILTERS = ("has_code", "country", "rating_min")
# filters counted as facets through papers and the link tables, cheapest first
LINK_FILTERS = ("has_code", "country", "affiliation", "author")
FILTERS = tuple(COLUMN_FILTERS) + LINK_FILTERS + ("rating_min",)
# the filters a facet box counts (rating_min is a bound, not a value to count)
FACET_FILTERS = tuple(COLUMN_FILTERS) + LINK_FILTERS
# facets listed in value order, newest first (a year list read by count jumps: 2023, 2024, 2020)
NEWEST_FIRST = frozenset({"year"})
# facets as readers see them, in the order pages show them: /search's (one per filter) and the
# papers table's (its columns, plugins/template_patches.py)
FACET_TITLES = {
    "venue": "Venue",
    "year": "Year",
    "status": "Status",
    "area": "Area",
    "track": "Track",
    "has_code": "Code",
    "country": "Country",
    "affiliation": "Affiliation",
    "author": "Author",
    "rating_min": "Rating at least",
    "authors": "Authors",
    "affiliations": "Affiliations",
    "authors_truncated": "Author list cut short",
    "source_count": "Sources",
}
INTEGER_FILTERS = ("year", "author", "has_code")
# what a has_code value reads as in a facet box and a chosen filter
HAS_CODE_LABELS = {1: "Has code", 0: "No code"}
# an empty value asks for papers with no value at all (they facet as null)
NULLABLE_FILTERS = ("area", "track", "venue", "year", "status")
# a filter's value: None asks for papers with no value
FilterValue = str | int | float | None
# the named parameters of a statement
Params = dict[str, Any]
PAGE_COLUMNS = "id, label, title, venue, year, status, track, url, authors_truncated, abstract"
# the signals a result carries (null in a catalog built before them)
SIGNAL_COLUMNS = (
    "links",
    "citations",
    "citations_source",
    "citations_as_of",
    "rating",
    "rating_count",
    "tldr",
)


class SearchError(ValueError):
    """A client mistake in the parameters: answered with 400 and this message."""


@dataclass(frozen=True)
class SearchRequest:
    q: str
    expression: str | None  # the FTS5 query, None when q holds no words
    filters: dict[str, tuple[FilterValue, ...]]  # name -> its values
    sort: str
    page: int
    size: int
    query: Query = dataclasses.field(default_factory=Query)  # q parsed (search_syntax.py)
    # the catalog has the signal columns (links, citations, ratings, countries)
    has_signals: bool = False
    # the facets of SIGNAL_FILTERS some paper of the catalog has a value of (has_code, country)
    signal_facets: tuple[str, ...] = ()

    @property
    def offset(self) -> int:
        return (self.page - 1) * self.size

    def with_page(self, page: int) -> "SearchRequest":
        return dataclasses.replace(self, page=page)

    def with_sort(self, sort: str) -> "SearchRequest":
        return dataclasses.replace(self, sort=sort)

    def chosen(self, name: str) -> tuple[FilterValue, ...]:
        return self.filters.get(name, ())

    @property
    def words_q(self) -> str:
        """q without its filter words (`graph venue:ICLR` -> `graph`)."""
        q = self.q
        for word in sorted(self.query.filters, key=lambda word: word.start, reverse=True):
            q = q[: word.start] + q[word.end :]
        return " ".join(q.split())

    def with_stored_values(
        self, stored: dict[tuple[str, FilterValue], FilterValue]
    ) -> "SearchRequest":
        """The filters with the values typed in q (`venue:iclr`) replaced by the values the
        catalog stores (`ICLR`): (name, typed) -> stored."""
        filters: dict[str, tuple[FilterValue, ...]] = {}
        for name, values in self.filters.items():
            replaced = [stored.get((name, value), value) for value in values]
            filters[name] = tuple(dict.fromkeys(replaced))
        return dataclasses.replace(self, filters=filters)

    def for_catalog(
        self, has_signals: bool, signal_facets: Collection[str] = ()
    ) -> "SearchRequest":
        """This request on a catalog with or without the signal columns, whose papers fill
        `signal_facets`; SearchError when it asks for a column the catalog lacks."""
        if not has_signals:
            asked = [name for name in SIGNAL_FILTERS if name in self.filters]
            if self.sort == "citations":
                asked.append("sort=citations")
            if asked:
                raise SearchError(
                    f"this catalog has no citations, ratings, links or countries"
                    f" ({', '.join(asked)}): build it again with this version of the loader"
                )
        facets = tuple(name for name in SIGNAL_FILTERS if name in signal_facets and has_signals)
        return dataclasses.replace(self, has_signals=has_signals, signal_facets=facets)

    def counts(self, name: str) -> bool:
        """Whether this request's page counts the facet `name` (of FACET_FILTERS)."""
        return name not in SIGNAL_FILTERS or name in self.signal_facets or name in self.filters


def filter_word_value(word: FilterWord) -> FilterValue:
    """A filter word's value as its parameter's (`year:2023` -> 2023)."""
    if word.name in INTEGER_FILTERS:
        try:
            return int(word.value)
        except ValueError:
            raise SearchError(
                f"{word.name}:{word.value[:40]} names a filter: {word.name} must be a whole"
                f" number, as in {word.name}:2023."
            ) from None
    return word.value


def filter_word_sql(word: FilterWord) -> tuple[str, Params]:
    """The values of the word's column the catalog stores, the case typed aside: the facet
    table holds each combination once, so this reads a few thousand rows at most."""
    column = f"facet_combos.{COLUMN_FILTERS[word.name]}"
    if word.name in INTEGER_FILTERS:
        test = f"{column} = :value"
    else:
        test = f"{column} = :value collate nocase"
    return (
        f"select distinct {column} from facet_combos where {test} order by {column}",
        {"value": filter_word_value(word)},
    )


def clean_query(text: str) -> str:
    """q as FTS5 can take it: control characters (NUL, newlines) are spaces."""
    return " ".join("".join(" " if unicodedata.category(c) == "Cc" else c for c in text).split())


def whole_number(name: str, text: str) -> int:
    try:
        return int(text.strip())
    except ValueError:
        raise SearchError(f"{name} must be a whole number, not {text[:40]!r}") from None


def rating_bound(text: str) -> float:
    try:
        bound = float(text.strip())
    except ValueError:
        bound = math.nan
    if not math.isfinite(bound):
        raise SearchError(f"rating_min must be a number, not {text[:40]!r}")
    return bound


def filter_value(name: str, text: str) -> FilterValue:
    if text == "" and name in NULLABLE_FILTERS:
        return None
    if name == "rating_min":
        return rating_bound(text)
    if name in INTEGER_FILTERS:
        return whole_number(name, text)
    return text


def parse_search(pairs: Iterable[tuple[str, str]]) -> SearchRequest:
    """Parameters as (name, value) pairs -> SearchRequest; unknown parameters are ignored."""
    values: dict[str, list[str]] = {}
    for name, given in pairs:
        values.setdefault(name, []).append(given)
    q = clean_query(values.get("q", [""])[-1])
    try:
        query = parse_query(q)
    except QueryError as error:
        raise SearchError(str(error)) from None
    expression = query.expression
    filters: dict[str, tuple[FilterValue, ...]] = {}
    for name in FILTERS:
        chosen: list[FilterValue] = []
        for text in values.get(name, []):
            if text == "" and name not in NULLABLE_FILTERS:
                continue
            value = filter_value(name, text)
            if value not in chosen:
                chosen.append(value)
        # `venue:ICLR` in q is the filter venue=ICLR: one more value of that parameter
        for word in query.filters:
            if word.name == name and filter_word_value(word) not in chosen:
                chosen.append(filter_word_value(word))
        if chosen:
            # one bound: the last given, as for sort and page
            filters[name] = tuple(chosen[-1:] if name == "rating_min" else chosen)
    sort = values.get("sort", [""])[-1] or ("relevance" if expression else "newest")
    if sort not in SORTS:
        raise SearchError(f"sort must be one of {', '.join(SORTS)}, not {sort[:40]!r}")
    if sort == "relevance" and not expression:
        sort = "newest"
    page = whole_number("page", values["page"][-1]) if values.get("page", [""])[-1] else 1
    size = whole_number("size", values["size"][-1]) if values.get("size", [""])[-1] else None
    size = DEFAULT_SIZE if size is None else min(max(size, 1), MAX_SIZE)
    return SearchRequest(q, expression, filters, sort, max(page, 1), size, query)


def normalized_title(text: str | None) -> str:
    """Case, accents, punctuation and spacing ignored: `Attention is all you need!`."""
    text = unicodedata.normalize("NFKD", text or "").casefold()
    words = re.findall(r"[^\W_]+", "".join(c for c in text if not unicodedata.combining(c)))
    return " ".join(words)


def bind(params: Params, prefix: str, values: Iterable[Any]) -> str:
    """Bind values as :prefix_0, :prefix_1, ... and return the placeholders, comma-separated.

    Only for a few values: a row's sort keys, the values a reader chose for a filter. A list
    that grows with the matches (ids) is one parameter (json_list): a connection of the site
    allows 1,000 bound variables (plugins/limits.py)."""
    names = []
    for index, value in enumerate(values):
        params[f"{prefix}_{index}"] = value
        names.append(f":{prefix}_{index}")
    return ", ".join(names)


def json_list(params: Params, name: str, values: Iterable[Any]) -> str:
    """Bind values as ONE parameter, a JSON array, however many there are; return the table
    that reads them back (`value`, and `key`: the position, for their order)."""
    params[name] = json.dumps(list(values))
    return f"json_each(:{name})"


def link_filter(name: str, placeholders: str, rowid: str) -> str:
    """A filter read from papers or a link table (has_code, rating_min, country, affiliation,
    author) as a test on a paper's rowid."""
    if name == "has_code":
        return f"{rowid} in (select rowid from papers where has_code in ({placeholders}))"
    if name == "rating_min":
        return f"{rowid} in (select rowid from papers where rating >= {placeholders})"
    if name in ("affiliation", "country"):
        column = "slug" if name == "affiliation" else "country"
        ids = (
            "select paper_affiliations.paper_id from paper_affiliations"
            " join affiliations on affiliations.id = paper_affiliations.affiliation_id"
            f" where affiliations.{column} in ({placeholders})"
        )
    else:
        ids = f"select paper_id from paper_authors where author_id in ({placeholders})"
    return f"{rowid} in (select papers.rowid from papers where papers.id in ({ids}))"


def filter_clause(name: str, values: Sequence[FilterValue], params: Params, rowid: str) -> str:
    """One filter as SQL, its values bound as parameters: the five facet columns read from
    facet_combos, the author and affiliation filters test `rowid`."""
    placeholders = bind(params, name, [v for v in values if v is not None])
    if name not in COLUMN_FILTERS:
        return link_filter(name, placeholders, rowid)
    column = f"facet_combos.{COLUMN_FILTERS[name]}"
    tests = [f"{column} in ({placeholders})"] if placeholders else []
    if None in values:
        tests.append(f"{column} is null")
    return "(" + " or ".join(tests) + ")"


def where_sql(request: SearchRequest, params: Params, rowid: str, names: Collection[str]) -> str:
    """The request's filters of those names as a where clause."""
    where = [
        filter_clause(name, values, params, rowid)
        for name, values in request.filters.items()
        if name in names
    ]
    return (" where " + " and ".join(where)) if where else ""


def sort_keys(request: SearchRequest) -> list[str]:
    """Sort keys that are never NULL, so pages and streamed exports can continue after a row.
    Ties break on the row (build order), which the index and the facet table both hold."""
    if request.sort == "relevance":
        return ["exact", "rank", "rowid"]
    if request.sort == "newest":
        return ["year is null", "coalesce(-year, 0)", "rowid"]
    if request.sort == "citations":
        return ["citations is null", "coalesce(-citations, 0)", "rowid"]
    return ["year is null", "coalesce(year, 0)", "rowid"]


def exact_sql(params: Params, exact_rowids: Sequence[int], rowid: str) -> str:
    """0 for the papers whose title is the query (they sort first), else 1."""
    if not exact_rowids:
        return "0"
    exact = json_list(params, "exact", exact_rowids)
    return f"({rowid} not in (select value from {exact}))"


def matches_sql(request: SearchRequest, params: Params, ranked: bool = True) -> str:
    """The full-text match alone, ranked or not."""
    params["expression"] = request.expression
    rank = ""
    if ranked:
        rank = f", bm25(papers_fts, {', '.join(str(weight) for weight in FTS_WEIGHTS)}) as rank"
    return f"select rowid{rank} from papers_fts where papers_fts match :expression"


def hits_sql(
    request: SearchRequest,
    params: Params,
    exact_rowids: Sequence[int] = (),
    leave_out: str | None = None,
    ranked: bool = True,
) -> str:
    """`hits`: every paper matching q and the filters (but `leave_out`'s), with its sort keys.

    The facet columns are read from the narrow facet table, never from `papers`' wide rows,
    which are much slower to read a track's papers, or every paper, in year order from (the
    year index holds only papers with a year, and cannot give the `year is null` order)."""
    names = [name for name in request.filters if name != leave_out]
    if request.expression is None:
        rowid, exact, rank, source = "paper_facets.paper", "0", "0", "paper_facets"
    else:
        rowid = "matches.rowid"
        exact = exact_sql(params, exact_rowids, rowid)
        rank = "matches.rank" if ranked else "0"
        source = (
            f"({matches_sql(request, params, ranked)}) as matches"
            " join paper_facets on paper_facets.paper = matches.rowid"
        )
    where = where_sql(request, params, rowid, names)
    # the count looked up by rowid only when ordering by it (a sort key, sort_keys)
    citations = ""
    if request.sort == "citations":
        citations = f", (select citations from papers where papers.rowid = {rowid}) as citations"
    return (
        f"select {rowid} as rowid, facet_combos.year as year, {exact} as exact, {rank} as rank"
        f"{citations} from {source} join facet_combos on facet_combos.id = paper_facets.combo"
        f"{where}"
    )


def count_sql(request: SearchRequest) -> tuple[str, Params]:
    if request.expression is not None and not request.filters:
        # nothing to check beyond the index: it alone counts, without a look-up a match
        return (
            "select count(*) from papers_fts where papers_fts match :expression",
            {"expression": request.expression},
        )
    params: Params = {}
    hits = hits_sql(request, params, ranked=False)
    return f"with hits as ({hits}) select count(*) from hits", params


def ranked_hits_sql(request: SearchRequest, params: Params, exact_rowids: Sequence[int]) -> str:
    """`hits` of a ranked search with no filter, from the index alone: joining every match to
    `papers` only to sort it costs more than ranking it in the index."""
    exact = exact_sql(params, exact_rowids, "rowid")
    weights = ", ".join(str(weight) for weight in FTS_WEIGHTS)
    params["expression"] = request.expression
    return (
        f"select rowid, {exact} as exact, bm25(papers_fts, {weights}) as rank"
        " from papers_fts where papers_fts match :expression"
    )


def page_sql(
    request: SearchRequest,
    exact_rowids: Sequence[int] = (),
    after: Sequence[Any] | None = None,
    limit: int | None = None,
    offset: int = 0,
) -> tuple[str, Params]:
    """Rowids of one page in the request's order; `after` continues past a row's sort keys."""
    params: Params = {}
    keys = sort_keys(request)
    if request.sort == "relevance" and not request.filters:
        hits = ranked_hits_sql(request, params, exact_rowids)
    else:
        hits = hits_sql(request, params, exact_rowids, ranked=request.sort == "relevance")
    sql = f"with hits as ({hits}) select rowid, "
    sql += ", ".join(f"{key} as key_{index}" for index, key in enumerate(keys))
    sql += " from hits"
    if after is not None:
        sql += f" where ({', '.join(keys)}) > ({bind(params, 'after', after)})"
    sql += " order by " + ", ".join(keys)
    params["limit"] = request.size if limit is None else limit
    params["offset"] = offset
    return sql + " limit :limit offset :offset", params


def combo_counts_sql(request: SearchRequest) -> tuple[str, Params]:
    """Matches per combination of the five facet columns (loader/build/facet_table.py), with every
    filter but those columns': one pass gives the total and all five facets (column_facets)."""
    params: Params = {}
    links = [name for name in request.filters if name not in COLUMN_FILTERS]
    combos = f"facet_combos.id, {', '.join(f'facet_combos.{c}' for c in FACET_COLUMNS)}"
    if request.expression is None:
        where = where_sql(request, params, "paper_facets.paper", links)
        if not where:
            return f"select {combos}, facet_combos.paper_count from facet_combos", params
        source = f"paper_facets{where}"
    else:
        where = where_sql(request, params, "matches.rowid", links)
        source = (
            f"({matches_sql(request, params, ranked=False)}) as matches"
            f" join paper_facets on paper_facets.paper = matches.rowid{where}"
        )
    # grouped on the narrow table first: only then looked up in facet_combos
    return (
        f"select {combos}, grouped.count from (select paper_facets.combo as combo,"
        f" count(*) as count from {source} group by paper_facets.combo) as grouped"
        " join facet_combos on facet_combos.id = grouped.combo"
    ), params


def facet_order(item: tuple[FilterValue, int]) -> tuple[int, bool, str | int | float]:
    """As the SQL facets order: most frequent first, then no value last, then by value."""
    value, count = item
    return (-count, value is None, value if value is not None else 0)


def newest_first(item: tuple[FilterValue, int]) -> tuple[bool, int]:
    """A year facet's order: the years, newest first, then no year."""
    value, _count = item
    return (value is None, -value if isinstance(value, int) else 0)


def only_none(values: Sequence[tuple[FilterValue, int]], chosen: Collection[FilterValue]) -> bool:
    """A facet that would list "(none)" alone (a source without statuses, tracks or areas): it
    narrows nothing, so pages leave it out, unless a value of it is chosen."""
    return all(value is None for value, _count in values) and not chosen


def column_facets(
    request: SearchRequest, rows: Iterable[Sequence[Any]]
) -> tuple[int, dict[str, list[tuple[FilterValue, int]]]]:
    """(total, {facet: [(value, count)]}) from combo_counts_sql's rows: a facet counts the
    combinations that pass every filter but its own, the total those that pass them all."""
    chosen = {name: set(values) for name, values in request.filters.items()}
    total = 0
    counts: dict[str, dict[FilterValue, int]] = {name: {} for name in COLUMN_FILTERS}
    for _combo, *values, count in rows:
        row = dict(zip(FACET_COLUMNS, values))
        missed = [
            name
            for name, column in COLUMN_FILTERS.items()
            if name in chosen and row[column] not in chosen[name]
        ]
        if len(missed) > 1:
            continue
        names = missed or list(COLUMN_FILTERS)
        if not missed:
            total += count
        for name in names:
            value = row[COLUMN_FILTERS[name]]
            counts[name][value] = counts[name].get(value, 0) + count
    facets: dict[str, list[tuple[FilterValue, int]]] = {}
    for name, found in counts.items():
        ordered = sorted(found.items(), key=newest_first if name in NEWEST_FIRST else facet_order)
        shown = ordered[:FACET_LIMIT]
        listed = {value for value, _ in shown}
        shown += [
            (value, found.get(value, 0)) for value in request.chosen(name) if value not in listed
        ]
        if only_none(shown, request.chosen(name)):
            continue
        facets[name] = shown
    return total, facets


def facet_sql(
    request: SearchRequest, name: str, only: Sequence[FilterValue] | None = None
) -> tuple[str, Params]:
    """Counts of a facet of LINK_FILTERS (has_code, country, affiliation, author) over the
    match set, its own filter left out; papers without a value are not counted.

    `only` counts just those values (the chosen ones that missed the top FACET_LIMIT).
    """
    params: Params = {}
    hits = hits_sql(request, params, leave_out=name, ranked=False)
    affiliations = (
        "join paper_affiliations on paper_affiliations.paper_id = papers.id"
        " join affiliations on affiliations.id = paper_affiliations.affiliation_id"
    )
    # a paper counts once for a country however many of its affiliations are there
    count = "count(*)"
    tests = []
    if name == "has_code":
        value = label = group = "papers.has_code"
        source = ""
        tests.append("papers.has_code is not null")
    elif name == "country":
        value = label = group = "affiliations.country"
        source = affiliations
        count = "count(distinct papers.rowid)"
        tests.append("affiliations.country is not null")
    elif name == "affiliation":
        value, label, group = "affiliations.slug", "affiliations.name", "affiliations.id"
        source = affiliations
    else:
        value, label, group = "authors.id", "authors.name", "authors.id"
        source = (
            "join paper_authors on paper_authors.paper_id = papers.id"
            " join authors on authors.id = paper_authors.author_id"
        )
    if only is not None:
        tests.append(f"{value} in (select value from {json_list(params, 'only', only)})")
    where = (" where " + " and ".join(tests)) if tests else ""
    params["facet_limit"] = FACET_LIMIT
    return (
        f"with hits as ({hits}) select {value} as value, {label} as label, {count} as count"
        f" from hits join papers on papers.rowid = hits.rowid {source}{where}"
        f" group by {group} order by count desc, value limit :facet_limit"
    ), params


def exact_title_sql(request: SearchRequest) -> tuple[str | None, Params]:
    """Candidates whose title holds the query as a phrase; Python keeps those equal to it.
    Only for a query of plain words and phrases: one with operators, fields or prefixes is
    no title."""
    words = normalized_title(request.q)
    if not words or not request.query.plain:
        return None, {}
    return (
        "select papers.rowid, papers.label from papers_fts"
        " join papers on papers.rowid = papers_fts.rowid"
        " where papers_fts match :phrase limit 50"
    ), {"phrase": 'label : "' + words.replace('"', "") + '"'}


def details_sql(rowids: Sequence[int], has_signals: bool = False) -> tuple[str, Params]:
    """The papers of these rowids, in their order: PAGE_COLUMNS, then SIGNAL_COLUMNS (null
    when the catalog has none)."""
    params: Params = {}
    wanted = json_list(params, "rowids", rowids)
    columns = [f"papers.{column.strip()}" for column in PAGE_COLUMNS.split(",")]
    columns += [
        f"papers.{column}" if has_signals else f"null as {column}" for column in SIGNAL_COLUMNS
    ]
    return (
        f"select papers.rowid, {', '.join(columns)} from {wanted} as wanted"
        " join papers on papers.rowid = wanted.value order by wanted.key"
    ), params


def authors_sql(paper_ids: Sequence[str]) -> tuple[str, Params]:
    params: Params = {}
    wanted = json_list(params, "paper_ids", paper_ids)
    return (
        "select paper_authors.paper_id, authors.id, authors.name from paper_authors"
        " join authors on authors.id = paper_authors.author_id"
        f" where paper_authors.paper_id in (select value from {wanted})"
        " order by paper_authors.paper_id, paper_authors.position is null,"
        " paper_authors.position, authors.id"
    ), params


def affiliations_sql(paper_ids: Sequence[str], has_signals: bool = False) -> tuple[str, Params]:
    params: Params = {}
    wanted = json_list(params, "paper_ids", paper_ids)
    country = "affiliations.country" if has_signals else "null"
    return (
        "select paper_affiliations.paper_id, affiliations.slug, affiliations.name,"
        f" {country} from paper_affiliations"
        " join affiliations on affiliations.id = paper_affiliations.affiliation_id"
        f" where paper_affiliations.paper_id in (select value from {wanted})"
        " order by paper_affiliations.paper_id, affiliations.name"
    ), params


def snippets_sql(request: SearchRequest, rowids: Sequence[int]) -> tuple[str, Params]:
    params: Params = {"expression": request.expression}
    wanted = json_list(params, "rowids", rowids)
    return (
        f"select rowid, snippet(papers_fts, {SNIPPET_COLUMN}, char(57344), char(57345),"
        f" '…', {SNIPPET_TOKENS}) from papers_fts"
        f" where papers_fts match :expression and rowid in (select value from {wanted})"
    ), params
