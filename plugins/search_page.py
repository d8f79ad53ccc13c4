"""/search: ranked results with filters, exact totals, facets, pages and exports.

`/search` (HTML through Datasette's templates), `/search.json`, and the exports `/search.csv`,
`/search.bib` and `/search.json?_all=1`, which stream every match in the page's order
(loader/web/search_exports.py). The SQL and the parameter rules live in
loader/web/search_request.py.
"""

import sqlite3
import weakref
from collections.abc import Callable, Iterable, Mapping, Sequence
from typing import TYPE_CHECKING, Any
from urllib.parse import urlencode

from datasette.database import QueryInterrupted
from datasette.utils.asgi import Request, Response
from markupsafe import Markup, escape

from loader.web import facet_counts as facet_memory
from loader.web import search_request as search
from loader.web import search_results as search_run
from loader.web.catalog_scope import catalog_database, catalog_name, serves_catalog
from loader.web.datasette_api import jinja_environment
from loader.web.export_stream import AbortingStream
from loader.web.paper_signals import (
    catalog_has_signals,
    catalog_signal_facets,
    rating_text,
    shown_links,
)
from loader.web.request_scope import mark_incomplete
from loader.web.search_exports import export_response, order_time_limit

if TYPE_CHECKING:
    from datasette.app import Datasette
    from jinja2 import Environment

PAGE_LINKS_AROUND = 2
# per Datasette instance: a synchronous overlay of its template environment (render_partial)
PARTIALS: "weakref.WeakKeyDictionary[Datasette, Environment]" = weakref.WeakKeyDictionary()
# metadata.yml `plugins:` key of this page's settings
PLUGIN = "paper-catalog-search"
# counting authors costs time for every match: up to this many the page counts them itself,
# within a small part of its time limit; beyond, they come in a second request
LINK_FACETS_UP_TO = 10_000


class Searcher:
    """Runs one request's statements on the catalog, each batch in one call on one of
    Datasette's SQL threads (loader/web/search_results.py)."""

    def __init__(self, datasette: "Datasette", request: search.SearchRequest) -> None:
        self.datasette = datasette
        self.db = catalog_database(datasette)
        self.request = request
        self.limits = search_run.Limits(
            datasette.setting("sql_time_limit_ms"), datasette.setting("facet_time_limit_ms")
        )
        # how the query was read: its own notes, then the filter words' (read_filters)
        self.notes = list(request.query.notes)

    async def read_filters(self) -> None:
        """The filter words of q (`venue:iclr`) as the values the catalog stores."""
        if not self.request.query.filters:
            return
        self.request, notes = await self.run(
            lambda conn: search_run.read_filter_words(conn, self.request)
        )
        self.notes += notes

    async def run(self, work: Callable[[sqlite3.Connection], Any]) -> Any:
        return await self.db.execute_fn(work)

    async def answer(self, link_facets_up_to: int | None) -> search_run.Answer:
        # the worker's facet table in memory, once read (plugins/facets.py starts the read)
        combos = facet_memory.combos_read(self.db)
        return await self.run(
            lambda conn: search_run.answer_search(
                conn, self.request, self.limits, link_facets_up_to, combos
            )
        )

    async def export(self, extension: str, http_request: Request) -> AbortingStream:
        """Every match as a download; QueryInterrupted before it starts."""
        config = self.datasette.plugin_config(PLUGIN)
        return await export_response(
            self.run,
            self.request,
            extension,
            self.limits.sql_ms,
            order_time_limit(self.limits.sql_ms, config),
            http_request.path + "?" + http_request.query_string,
            receive=http_request.receive,
        )


def link_facets_up_to(datasette: "Datasette", request: Request) -> int | None:
    """Matches up to which the author and affiliation facets come with the page; `_facets=all`
    counts them however many match (the link the page shows instead, and its script)."""
    if request.args.get("_facets") == "all":
        return None
    config = datasette.plugin_config(PLUGIN) or {}
    return config.get("link_facets_up_to", LINK_FACETS_UP_TO)


def public_result(result: Mapping[str, Any], base_url: str) -> dict[str, Any]:
    shown = {key: value for key, value in result.items() if key != "abstract"}
    shown["page"] = base_url + result["id"]
    return shown


def query_url(datasette: "Datasette", pairs: Sequence[tuple[str, str]], **changes: Any) -> str:
    """This search's URL with some parameters changed (None removes one)."""
    kept = [(name, value) for name, value in pairs if name not in changes]
    for name, value in changes.items():
        if value is None:
            continue
        values = value if isinstance(value, list) else [value]
        kept += [(name, str(v)) for v in values]
    query = urlencode(kept)
    return datasette.urls.path("/search") + ("?" + query if query else "")


def request_pairs(request: Request) -> list[tuple[str, str]]:
    pairs = []
    for name in ["q", *search.FILTERS, "sort", "size"]:
        for value in request.args.getlist(name):
            pairs.append((name, value))
    return pairs


def link_pairs(
    pairs: Sequence[tuple[str, str]], parsed: search.SearchRequest
) -> list[tuple[str, str]]:
    """The parameters links of the page start from: q without its filter words, which become
    the parameters a facet link sets (`q=graph venue:iclr` -> `q=graph&venue=ICLR`), so a
    filter chosen in q is removed, counted and paged as one chosen from a facet."""
    if not parsed.query.filters:
        return list(pairs)
    kept = [(name, value) for name, value in pairs if name != "q"]
    kept = ([("q", parsed.words_q)] if parsed.words_q else []) + kept
    for name, values in parsed.filters.items():
        for value in values:
            pair = (name, "" if value is None else str(value))
            if pair not in kept:
                kept.append(pair)
    return kept


def facet_links(
    datasette: "Datasette",
    pairs: Sequence[tuple[str, str]],
    name: str,
    items: Iterable[Mapping[str, Any]],
    chosen: Iterable[Any],
) -> list[dict[str, Any]]:
    """Each facet value with the URL that adds it to the filters, or removes it when chosen."""
    links = []
    path = datasette.urls.path("/search")
    current = [value for key, value in pairs if key == name]
    # the other parameters encoded once: a page lists up to 140 values
    others = urlencode([(key, value) for key, value in pairs if key not in (name, "page")])
    for item in items:
        text = "" if item["value"] is None else str(item["value"])
        selected = item["value"] in chosen
        values = [v for v in current if v != text] if selected else current + [text]
        query = "&".join(part for part in (others, urlencode([(name, v) for v in values])) if part)
        url = path + ("?" + query if query else "")
        links.append(dict(item, url=url, selected=selected, count_text=f"{item['count']:,}"))
    return links


def page_numbers(page: int, last: int) -> list[int]:
    shown = {1, last, *range(page - PAGE_LINKS_AROUND, page + PAGE_LINKS_AROUND + 1)}
    return [number for number in sorted(shown) if 1 <= number <= last]


async def parse_request(datasette: "Datasette", request: Request) -> search.SearchRequest:
    """The request's parameters checked against the catalog it searches (SearchError)."""
    db = catalog_database(datasette)
    parsed = search.parse_search(
        [(name, value) for name in request.args for value in request.args.getlist(name)]
    )
    return parsed.for_catalog(await catalog_has_signals(db), await catalog_signal_facets(db))


def chosen_text(name: str, value: search.FilterValue) -> str:
    """A chosen filter's value as its chip says it."""
    if value is None:
        return "(none)"
    if name == "has_code" and isinstance(value, int):
        return search.HAS_CODE_LABELS.get(value, str(value))
    if name == "rating_min" and isinstance(value, float):
        return f"{value:g}"
    return str(value)


def chosen_pair(name: str, value: search.FilterValue, pairs: Sequence[tuple[str, str]]) -> bool:
    """Whether a parameter of the URL chose this value (a bound as the reader typed it)."""
    text = "" if value is None else str(value)
    if name == "rating_min":
        return any(key == name for key, _ in pairs)
    return (name, text) in pairs


def result_signals(result: Mapping[str, Any]) -> dict[str, Any]:
    """What a result row shows of its signals: its links, count of citations, rating."""
    citations = result.get("citations")
    return {
        "shown_links": shown_links(result.get("links") or {}),
        "citations_text": None
        if citations is None
        else f"{citations:,} citation{'' if citations == 1 else 's'}",
        "rating_text": rating_text(result.get("rating"), result.get("rating_count")),
    }


async def search_view(datasette: "Datasette", request: Request) -> Response:
    extension = request.url_vars.get("format")
    try:
        parsed = await parse_request(datasette, request)
    except search.SearchError as error:
        return await error_response(datasette, request, extension, str(error))
    searcher = Searcher(datasette, request=parsed)
    await searcher.read_filters()
    if extension in ("csv", "bib") or (extension == "json" and request.args.get("_all")):
        try:
            return await searcher.export(extension, request)
        except QueryInterrupted:
            return await error_response(
                datasette, request, extension, "This export took too long: add words or filters."
            )
    try:
        answer = await searcher.answer(link_facets_up_to(datasette, request))
    except QueryInterrupted:
        return await error_response(
            datasette, request, extension, "This search took too long: add words or filters."
        )
    parsed = answer.request
    if answer.timed_out:
        mark_incomplete(request.scope, "facets")
    base_url = str(datasette.urls.row(catalog_name(datasette), "papers", ""))
    if extension == "json":
        body = {
            "total": answer.total,
            "page": parsed.page,
            "size": parsed.size,
            "results": [public_result(result, base_url) for result in answer.results],
            "facets": answer.facets,
            "suggestions": answer.suggestions,
            "notes": searcher.notes,
        }
        if answer.timed_out:
            body["facets_timed_out"] = answer.timed_out
        if answer.deferred:
            body["facets_deferred"] = answer.deferred
        if answer.unranked:
            body["unranked"] = True
        return Response.json(body)
    pairs = link_pairs(request_pairs(request), parsed)
    last_page = max(1, -(-answer.total // parsed.size))
    context = {
        "q": parsed.q,
        "parsed": parsed,
        "notes": searcher.notes,
        # the filters of the URL's own parameters (those of q stay in q)
        "hidden": [
            (name, value) for name, value in request_pairs(request) if name in search.FILTERS
        ],
        "total": answer.total,
        "results_html": render_partial(
            datasette,
            "_search_results.html",
            parsed=parsed,
            results=[
                dict(
                    result,
                    page_url=base_url + result["id"],
                    author_links=author_links(datasette, result),
                    **result_signals(result),
                )
                for result in answer.results
            ],
        ),
        "facets_html": render_partial(
            datasette,
            "_search_facets.html",
            facets=facet_sections(datasette, pairs, parsed, answer.facets),
            timed_out=answer.timed_out,
        ),
        "deferred": deferred_facets(datasette, pairs, parsed, answer.deferred),
        "timed_out": answer.timed_out,
        "unranked": answer.unranked,
        "pages": [
            {"number": n, "url": query_url(datasette, pairs, page=n), "current": n == parsed.page}
            for n in page_numbers(parsed.page, last_page)
        ],
        "sorts": [
            {
                "value": sort,
                "url": query_url(datasette, pairs, sort=sort, page=None),
                "current": sort == parsed.sort,
            }
            for sort in search.SORTS
            if (sort != "relevance" or parsed.expression)
            and (sort != "citations" or parsed.has_signals)
        ],
        "rating_form": rating_form(pairs) if parsed.has_signals else None,
        "exports": [
            (
                label,
                datasette.urls.path("/search." + ext)
                + "?"
                + urlencode(pairs_for_export(pairs, ext)),
            )
            for label, ext in (("CSV", "csv"), ("BibTeX", "bib"), ("JSON", "json"))
        ],
        "chosen": [
            {
                "title": search.FACET_TITLES[name],
                "value": chosen_text(name, value),
                "url": query_url(
                    datasette,
                    [(k, v) for k, v in pairs if not chosen_pair(name, value, [(k, v)])],
                    page=None,
                ),
            }
            for name, values in parsed.filters.items()
            for value in values
        ],
        # a suggestion is q as typed, filter words and all: with the URL's own parameters
        "suggestions": [
            {
                "q": suggestion,
                "url": query_url(datasette, request_pairs(request), q=suggestion, page=None),
            }
            for suggestion in answer.suggestions
        ],
    }
    return Response.html(await datasette.render_template("search.html", context, request=request))


def rating_form(pairs: Sequence[tuple[str, str]]) -> dict[str, Any]:
    """The Filters' rating control: the bound chosen, and the search's other parameters (kept
    as hidden fields, a new bound starting at page 1)."""
    bound = [value for name, value in pairs if name == "rating_min"]
    return {
        "value": bound[-1] if bound else "",
        "hidden": [(name, value) for name, value in pairs if name not in ("rating_min", "page")],
    }


def render_partial(datasette: "Datasette", name: str, **context: Any) -> Markup:
    """A part of the page rendered without Jinja's async mode, which Datasette's environment
    uses: it awaits every expression, and the results and facets hold hundreds; the same
    templates, filters and escaping run synchronously in much less time."""
    environment = PARTIALS.get(datasette)
    if environment is None:
        environment = PARTIALS[datasette] = jinja_environment(datasette).overlay(enable_async=False)
    return Markup(environment.get_template(name).render(**context))


def author_links(datasette: "Datasette", result: Mapping[str, Any]) -> Markup:
    """A result's authors as links, built here: in the template's loop, an awaited step an
    author, they were a large part of a page's rendering."""
    base = str(datasette.urls.row(catalog_name(datasette), "authors", ""))
    return Markup(
        ", ".join(
            f'<a href="{escape(base + str(author["id"]))}">{escape(author["name"])}</a>'
            for author in result["authors"]
        )
    )


def facet_sections(
    datasette: "Datasette",
    pairs: Sequence[tuple[str, str]],
    parsed: search.SearchRequest,
    facets: Mapping[str, Any],
) -> list[dict[str, Any]]:
    """The facets in the order pages show them, each value with its link."""
    return [
        {
            "name": name,
            "title": search.FACET_TITLES[name],
            "values": facet_links(datasette, pairs, name, facets[name], parsed.chosen(name)),
        }
        for name in search.FACET_TITLES
        if name in facets
    ]


def deferred_facets(
    datasette: "Datasette",
    pairs: Sequence[tuple[str, str]],
    parsed: search.SearchRequest,
    names: list[str],
) -> dict[str, Any] | None:
    """What stands in for facets left for a second request: their titles, the page's own URL
    counting them (without script), and the fragment its script fetches instead."""
    if not names:
        return None
    page = parsed.page if parsed.page > 1 else None
    titles = [search.FACET_TITLES[name].lower() for name in names]
    return {
        # "code, country, affiliation and author"
        "titles": " and ".join([", ".join(titles[:-1]), titles[-1]] if len(titles) > 1 else titles),
        "url": query_url(datasette, pairs, page=page, _facets="all"),
        "fragment_url": datasette.urls.path("/search/facets") + "?" + urlencode(pairs),
    }


async def facets_fragment(datasette: "Datasette", request: Request) -> Response:
    """The facets counted through papers and the link tables alone, as HTML for the page's
    script to put in."""
    try:
        parsed = await parse_request(datasette, request)
    except search.SearchError as error:
        return Response.text(str(error), status=400)
    searcher = Searcher(datasette, request=parsed)
    await searcher.read_filters()
    facets, timed_out = await searcher.run(
        lambda conn: search_run.count_link_facets(conn, searcher.request, searcher.limits)
    )
    if timed_out:
        mark_incomplete(request.scope, "facets")
    html = render_partial(
        datasette,
        "_search_facets.html",
        facets=facet_sections(
            datasette,
            link_pairs(request_pairs(request), searcher.request),
            searcher.request,
            facets,
        ),
        timed_out=timed_out,
    )
    return Response.html(html)


def pairs_for_export(pairs: Sequence[tuple[str, str]], extension: str) -> list[tuple[str, str]]:
    kept = [(name, value) for name, value in pairs if name not in ("size",)]
    return kept + ([("_all", "1")] if extension == "json" else [])


async def error_response(
    datasette: "Datasette", request: Request, extension: str | None, message: str
) -> Response:
    if extension in ("json", "csv", "bib"):
        return Response.json({"ok": False, "error": message, "status": 400}, status=400)
    html = await datasette.render_template(
        "search.html", {"error": message, "q": request.args.get("q", "")}, request=request
    )
    return Response.html(html, status=400)


def register_routes(datasette: "Datasette") -> list[tuple[str, Callable[..., Any]]] | None:
    if not serves_catalog(datasette):
        return None
    return [
        (r"^/search(\.(?P<format>json|csv|bib))?$", search_view),
        (r"^/search/facets$", facets_fragment),
    ]
