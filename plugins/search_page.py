"""/search: ranked results with filters, exact totals, facets, pages and exports.

`/search` (HTML through Datasette's templates), `/search.json`, and the exports `/search.csv`,
`/search.bib` and `/search.json?_all=1`, which stream every match in the page's order with flat
memory: each batch is its own time-limited query that continues after the last row's sort keys.
The SQL and the parameter rules live in loader/search.py.
"""

import asyncio
import csv
import io
import json
from urllib.parse import urlencode

from datasette import hookimpl
from datasette.database import QueryInterrupted
from datasette.utils.asgi import AsgiStream, Response

from loader import search
from loader.bibtex import KeyMaker, format_entry

DATABASE = "catalog"
EXPORT_BATCH = 1000
EXPORT_NAME = "papers-search"
CSV_COLUMNS = (
    "id",
    "title",
    "label",
    "authors",
    "venue",
    "year",
    "status",
    "track",
    "affiliations",
    "url",
    "abstract",
)
PAGE_LINKS_AROUND = 2


class Searcher:
    """Runs one request's statements on the catalog."""

    def __init__(self, datasette, request):
        self.datasette = datasette
        self.db = datasette.get_database(DATABASE)
        self.request = request
        self.exact_ids = ()

    async def rows(self, sql_and_params, time_limit=None):
        sql, params = sql_and_params
        return (await self.db.execute(sql, params, custom_time_limit=time_limit)).rows

    async def find_exact_titles(self):
        """Papers whose title equals the query (case and punctuation aside) come first."""
        if self.request.expression is None:
            return
        sql, params = search.exact_title_sql(self.request)
        if sql is None:
            return
        wanted = search.normalized_title(self.request.q)
        self.exact_ids = tuple(
            row[0]
            for row in await self.rows((sql, params))
            if search.normalized_title(row[1]) == wanted
        )

    async def total(self):
        return (await self.rows(search.count_sql(self.request, self.exact_ids)))[0][0]

    async def facet(self, name):
        """[{value, label, count}], most frequent first, the chosen values always listed."""
        limit = self.datasette.setting("facet_time_limit_ms")
        try:
            rows = await self.rows(search.facet_sql(self.request, name, self.exact_ids), limit)
            items = [
                {"value": r[0], "label": label_of(name, r[0], r[1]), "count": r[2]} for r in rows
            ]
            chosen = self.request.chosen(name)
            missing = [value for value in chosen if value not in {item["value"] for item in items}]
            if missing:
                sql = search.facet_sql(self.request, name, self.exact_ids, only=missing)
                found = {r[0]: r for r in await self.rows(sql, limit)}
                for value in missing:
                    row = found.get(value)
                    items.append(
                        {
                            "value": value,
                            "label": label_of(name, value, row[1] if row else value),
                            "count": row[2] if row else 0,
                        }
                    )
            return items, False
        except QueryInterrupted:
            return [], True

    async def page_rowids(self, after=None, limit=None, offset=0):
        rows = await self.rows(search.page_sql(self.request, self.exact_ids, after, limit, offset))
        return rows

    async def results(self, rowids):
        """The page's papers with authors, affiliations and snippets, in rowid order given."""
        if not rowids:
            return []
        details = await self.rows(search.details_sql(rowids))
        by_rowid = {row[0]: row for row in details}
        paper_ids = [by_rowid[rowid][1] for rowid in rowids if rowid in by_rowid]
        authors, affiliations, snippets = {}, {}, {}
        for paper_id, author_id, name in await self.rows(search.authors_sql(paper_ids)):
            authors.setdefault(paper_id, []).append({"id": author_id, "name": name})
        for paper_id, slug, name in await self.rows(search.affiliations_sql(paper_ids)):
            affiliations.setdefault(paper_id, []).append({"slug": slug, "name": name})
        if self.request.expression is not None:
            snippets = dict(await self.rows(search.snippets_sql(self.request, rowids)))
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

    async def suggestions(self):
        """This query with each misspelt word replaced by a word the catalog uses."""
        words = search.query_words(self.request.q)
        replacements = {}
        for word in words:
            if (
                len(word) < 3
                or word in replacements
                or await self.rows(search.word_exists_sql(word))
            ):
                continue
            stems = search.close_stems(word, await self.rows(search.stem_candidates_sql(word)))
            surfaces = set()
            for stem in stems:
                for row in await self.rows(search.surface_word_sql(stem)):
                    surfaces |= search.marked_words(row)
            found = search.best_words(word, surfaces)
            if found:
                replacements[word] = found
        return search.suggested_queries(words, replacements)

    async def batches(self):
        """Every match in the page's order, EXPORT_BATCH papers at a time."""
        after = None
        while True:
            rows = await self.page_rowids(after=after, limit=EXPORT_BATCH)
            if not rows:
                return
            yield await self.results([row[0] for row in rows])
            if len(rows) < EXPORT_BATCH:
                return
            after = tuple(rows[-1][1:])


def label_of(name, value, label):
    if value is None:
        return "(none)"
    return str(label if label is not None else value)


def public_result(result, base_url):
    shown = {key: value for key, value in result.items() if key != "abstract"}
    shown["page"] = base_url + result["id"]
    return shown


def export_headers(extension):
    return {"content-disposition": f'attachment; filename="{EXPORT_NAME}.{extension}"'}


def csv_line(result):
    buffer = io.StringIO()
    csv.writer(buffer).writerow(
        [
            result["id"],
            result["title"] or "",
            result["label"] or "",
            "; ".join(author["name"] for author in result["authors"]),
            result["venue"] or "",
            "" if result["year"] is None else result["year"],
            result["status"] or "",
            result["track"] or "",
            "; ".join(affiliation["name"] for affiliation in result["affiliations"]),
            result["url"] or "",
            result["abstract"] or "",
        ]
    )
    return buffer.getvalue()


def bib_paper(result):
    return {
        "title": result["title"],
        "label": result["label"],
        "authors": [author["name"] for author in result["authors"]],
        "truncated": result["authors_truncated"],
        "venue": result["venue"],
        "year": result["year"],
        "url": result["url"],
    }


def export_stream(searcher, extension):
    """A streamed export of every match; an SQL step over its time limit ends the stream."""

    async def stream(writer):
        keys = KeyMaker()
        first = True
        if extension == "csv":
            await writer.write(",".join(CSV_COLUMNS) + "\r\n")
        elif extension == "json":
            total = await searcher.total()
            await writer.write(f'{{"total": {total}, "results": [')
        try:
            async for batch in searcher.batches():
                pieces = []
                for result in batch:
                    if extension == "csv":
                        pieces.append(csv_line(result))
                    elif extension == "bib":
                        pieces.append(format_entry(bib_paper(result), keys) + "\n")
                    else:
                        shown = dict(result, snippet=None)
                        shown.pop("abstract")
                        pieces.append(
                            ("" if first else ", ") + json.dumps(shown, ensure_ascii=False)
                        )
                        first = False
                await writer.write("".join(pieces))
        except QueryInterrupted:
            await writer.write("\n(stopped: a step of this export took too long)\n")
        if extension == "json":
            await writer.write("]}")

    content_types = {
        "csv": "text/csv; charset=utf-8",
        "bib": "application/x-bibtex; charset=utf-8",
        "json": "application/json; charset=utf-8",
    }
    return AsgiStream(
        stream, headers=export_headers(extension), content_type=content_types[extension]
    )


def query_url(datasette, pairs, **changes):
    """This search's URL with some parameters changed (None removes one)."""
    kept = [(name, value) for name, value in pairs if name not in changes]
    for name, value in changes.items():
        if value is None:
            continue
        values = value if isinstance(value, list) else [value]
        kept += [(name, str(v)) for v in values]
    query = urlencode(kept)
    return datasette.urls.path("/search") + ("?" + query if query else "")


def request_pairs(request):
    pairs = []
    for name in ["q", *search.FILTERS, "sort", "size"]:
        for value in request.args.getlist(name):
            pairs.append((name, value))
    return pairs


def facet_links(datasette, pairs, name, items, chosen):
    """Each facet value with the URL that adds it to the filters, or removes it when chosen."""
    links = []
    for item in items:
        text = "" if item["value"] is None else str(item["value"])
        current = [value for key, value in pairs if key == name]
        selected = item["value"] in chosen
        values = [v for v in current if v != text] if selected else current + [text]
        others = [(key, value) for key, value in pairs if key not in (name, "page")]
        url = query_url(datasette, others, **{name: values})
        links.append(dict(item, url=url, selected=selected))
    return links


def page_numbers(page, last):
    shown = {1, last, *range(page - PAGE_LINKS_AROUND, page + PAGE_LINKS_AROUND + 1)}
    return [number for number in sorted(shown) if 1 <= number <= last]


async def search_view(datasette, request):
    extension = request.url_vars.get("format")
    try:
        parsed = search.parse_search(
            [(name, value) for name in request.args for value in request.args.getlist(name)]
        )
    except search.SearchError as error:
        return await error_response(datasette, request, extension, str(error))
    searcher = Searcher(datasette, request=parsed)
    try:
        await searcher.find_exact_titles()
        if extension in ("csv", "bib") or (extension == "json" and request.args.get("_all")):
            return export_stream(searcher, extension)
        total = await searcher.total()
        last_page = max(1, -(-total // parsed.size))
        if parsed.page > last_page:
            parsed = parsed.with_page(last_page)
            searcher.request = parsed
        rows = await searcher.page_rowids(offset=parsed.offset)
        results = await searcher.results([row[0] for row in rows])
    except QueryInterrupted:
        return await error_response(
            datasette, request, extension, "This search took too long: add words or filters."
        )
    facets, timed_out = {}, []
    # side by side on Datasette's SQL threads: at 1M a common term's facets each run into the
    # facet time limit, and one after the other those waits added up to seconds
    counted = await asyncio.gather(*(searcher.facet(name) for name in search.FILTERS))
    for name, (items, interrupted) in zip(search.FILTERS, counted):
        if items or parsed.chosen(name):
            facets[name] = items
        if interrupted:
            timed_out.append(name)
    base_url = datasette.urls.row(DATABASE, "papers", "")
    if extension == "json":
        body = {
            "total": total,
            "page": parsed.page,
            "size": parsed.size,
            "results": [public_result(result, base_url) for result in results],
            "facets": facets,
        }
        if timed_out:
            body["facets_timed_out"] = timed_out
        return Response.json(body)
    pairs = request_pairs(request)
    context = {
        "q": parsed.q,
        "parsed": parsed,
        "total": total,
        "results": [dict(result, page_url=base_url + result["id"]) for result in results],
        "facets": [
            {
                "name": name,
                "title": search.FACET_TITLES[name],
                "values": facet_links(datasette, pairs, name, facets[name], parsed.chosen(name)),
            }
            for name in search.FACET_TITLES
            if name in facets
        ],
        "timed_out": timed_out,
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
            if sort != "relevance" or parsed.expression
        ],
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
                "value": "(none)" if value is None else str(value),
                "url": query_url(
                    datasette,
                    [
                        (k, v)
                        for k, v in pairs
                        if not (k == name and v == ("" if value is None else str(value)))
                    ],
                    page=None,
                ),
            }
            for name, values in parsed.filters.items()
            for value in values
        ],
        "suggestions": [
            {"q": suggestion, "url": query_url(datasette, pairs, q=suggestion, page=None)}
            for suggestion in (
                await searcher.suggestions() if not total and parsed.expression else []
            )
        ],
    }
    return Response.html(await datasette.render_template("search.html", context, request=request))


def pairs_for_export(pairs, extension):
    kept = [(name, value) for name, value in pairs if name not in ("size",)]
    return kept + ([("_all", "1")] if extension == "json" else [])


async def error_response(datasette, request, extension, message):
    if extension in ("json", "csv", "bib"):
        return Response.json({"ok": False, "error": message, "status": 400}, status=400)
    html = await datasette.render_template(
        "search.html", {"error": message, "q": request.args.get("q", "")}, request=request
    )
    return Response.html(html, status=400)


@hookimpl
def register_routes():
    return [(r"^/search(\.(?P<format>json|csv|bib))?$", search_view)]
