"""/search's exports: every match of a search as CSV, BibTeX or JSON (`/search.json?_all=1`), in
the page's order, of any size, with memory that does not grow with the papers' text.

The order is read once: one time-limited statement ranks or sorts every match (the page's own
SQL, loader/web/search_request.py page_sql, without its limit) and hands over rowids only,
kept as 8-byte integers, never as rows. Then the papers are read EXPORT_BATCH at a time by
rowid (search_results.fetch_results: each list of ids is one bound parameter), each batch its
own time-limited step on one of Datasette's SQL threads, written before the next is read.
Continuing each batch after the previous one's last sort keys, as a page does, ranked or
sorted every match again for every batch: a thousand times over for a million matches.
What grows with the matches is the rowids and, for BibTeX, the keys given out (8 bytes each,
loader/web/bibtex.py KeyMaker); the figures at 1M: docs/benchmark.md.

The statement that orders every match is the one step whose cost grows with the matches (a
page ranks them all too, but keeps only its best few): it may take ORDER_LIMIT_FACTOR times
a statement's time limit (or the search plugin's `export_order_time_limit_ms`), so that
exporting the whole catalog, or a word in half of it, is not refused on a busy server. Every
other step keeps the statement's limit: a batch past it (on a busy server the limit is wall
time shared with everything else) is read again as two halves, down to RETRY_BATCH papers, so
a long export survives a burst of load without any step holding a SQL thread longer than a
statement may.

The order and the first batch are read before the answer starts: a search that passes its
time limit there is an error answer, never a 200. An error once the first byte is out aborts
the download (loader/web/export_stream.py), and so does the client leaving.
"""

import csv
import io
import json
import sqlite3
from array import array
from collections.abc import Awaitable, Callable, Mapping, Sequence
from typing import Any, TypeVar

from datasette.database import QueryInterrupted

from loader.web import search_request as search
from loader.web import search_results as search_run
from loader.web.bibtex import KeyMaker, format_entry
from loader.web.csv_cells import safe_row
from loader.web.export_names import attachment, export_file_name
from loader.web.export_stream import AbortingStream, Receive, StreamWriter
from loader.web.paper_signals import LINK_LABELS
from loader.web.time_limit import within_time_limit

EXPORT_BATCH = 1000
# the ordering statement's time limit, in statements' time limits (see above)
ORDER_LIMIT_FACTOR = 10
# the smallest batch read again in halves after passing its time limit
RETRY_BATCH = 50
# rows taken from the ordering statement at a time: tuples for these only, then integers
ORDER_FETCH_ROWS = 10_000
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
    # the signals (issue 34): empty for a catalog built without them
    "countries",
    *(f"link_{kind}" for kind in LINK_LABELS),
    *(column for column in search.SIGNAL_COLUMNS if column != "links"),
    "abstract",
)
CONTENT_TYPES = {
    "csv": "text/csv; charset=utf-8",
    "bib": "application/x-bibtex; charset=utf-8",
    "json": "application/json; charset=utf-8",
}
FILE_STEM = "papers"
# the filters in a file name in the order the page shows its facets
NAMED_FILTERS = [name for name in search.FACET_TITLES if name in search.FILTERS]
# a request that reads papers only (no words, no filters): what read_papers_by_id reads with
EVERY_PAPER = search.parse_search([])

Result = dict[str, Any]
T = TypeVar("T")
# a step run on a connection of one of Datasette's SQL threads (Database.execute_fn)
Run = Callable[[Callable[[sqlite3.Connection], T]], Awaitable[T]]


def filter_words(name: str, value: search.FilterValue) -> str:
    if value is None:
        return f"no {name}"
    if name == "author":
        return f"author {value}"  # an id: the name says it is one
    return str(value)


def export_name(request: search.SearchRequest, extension: str) -> str:
    """`papers-diffusion-icml-2023.csv`: the query's words, then each filter's values."""
    parts = [request.words_q] if request.words_q else []
    for name in NAMED_FILTERS:
        parts += [filter_words(name, value) for value in request.chosen(name)]
    return export_file_name(FILE_STEM, parts, extension)


def order_time_limit(sql_ms: int | None, plugin_config: Mapping[str, Any] | None) -> int | None:
    """The ordering statement's time limit: the plugin's `export_order_time_limit_ms`, else
    ORDER_LIMIT_FACTOR statements' limits (None: no limit)."""
    configured = (plugin_config or {}).get("export_order_time_limit_ms")
    if configured is not None:
        return int(configured)
    return None if sql_ms is None else sql_ms * ORDER_LIMIT_FACTOR


def order_matches(
    conn: sqlite3.Connection, request: search.SearchRequest, limit_ms: int | None
) -> array:
    """The rowids of every match in the page's order, in one statement of at most
    `limit_ms` (order_time_limit)."""
    with within_time_limit(conn, limit_ms):
        exact = search_run.find_exact_rowids(conn, request)
        sql, params = search.page_sql(request, exact, limit=-1)
        cursor = conn.cursor()
        # plain tuples: the catalog's row factory counts a result against the size of a
        # response (plugins/response_cap.py), and these rowids are never one
        cursor.row_factory = None
        cursor.execute(sql, params)
        rowids = array("q")
        while rows := cursor.fetchmany(ORDER_FETCH_ROWS):
            rowids.extend(row[0] for row in rows)
    return rowids


def read_papers(
    conn: sqlite3.Connection,
    request: search.SearchRequest,
    rowids: Sequence[int],
    limit_ms: int | None,
) -> list[Result]:
    with within_time_limit(conn, limit_ms):
        return search_run.fetch_results(conn, request, rowids, with_snippets=False)


async def read_batch(
    run: Run, request: search.SearchRequest, rowids: Sequence[int], limit_ms: int | None
) -> list[Result]:
    """The papers of these rowids, each step within `limit_ms`: a batch past it is read again
    as two halves, down to RETRY_BATCH papers (then QueryInterrupted)."""
    try:
        return await run(lambda conn: read_papers(conn, request, rowids, limit_ms))
    except QueryInterrupted:
        if len(rowids) <= RETRY_BATCH:
            raise
    middle = len(rowids) // 2
    first = await read_batch(run, request, rowids[:middle], limit_ms)
    return first + await read_batch(run, request, rowids[middle:], limit_ms)


def blank(value: object) -> object:
    return "" if value is None else value


def countries(result: Result) -> str:
    """The paper's affiliations' countries, each once, in the affiliations' order."""
    found = [affiliation.get("country") for affiliation in result["affiliations"]]
    return "; ".join(dict.fromkeys(country for country in found if country))


def csv_line(result: Result) -> str:
    links = result.get("links") or {}
    buffer = io.StringIO()
    csv.writer(buffer).writerow(
        safe_row(
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
                countries(result),
                *(links.get(kind, "") for kind in LINK_LABELS),
                blank(result.get("citations")),
                result.get("citations_source") or "",
                result.get("citations_as_of") or "",
                blank(result.get("rating")),
                blank(result.get("rating_count")),
                result.get("tldr") or "",
                result["abstract"] or "",
            ]
        )
    )
    return buffer.getvalue()


def bib_paper(result: Result) -> dict[str, Any]:
    return {
        "title": result["title"],
        "label": result["label"],
        "authors": [author["name"] for author in result["authors"]],
        "truncated": result["authors_truncated"],
        "venue": result["venue"],
        "year": result["year"],
        "url": result["url"],
    }


def rowids_of(
    conn: sqlite3.Connection, paper_ids: Sequence[str], limit_ms: int | None
) -> list[int]:
    """The rowids of these papers, in their order (an id no paper has is left out)."""
    params: search.Params = {}
    wanted = search.json_list(params, "paper_ids", paper_ids)
    sql = (
        f"select papers.rowid from {wanted} as wanted"
        " join papers on papers.id = wanted.value order by wanted.key"
    )
    with within_time_limit(conn, limit_ms):
        return [row[0] for row in conn.execute(sql, params)]


async def read_papers_by_id(
    run: Run, paper_ids: Sequence[str], limit_ms: int | None
) -> list[Result]:
    """The papers of these ids in their order, as an export of a search writes them: for a
    download whose rows another query chose (a table page's, plugins/table_exports.py)."""
    rowids = await run(lambda conn: rowids_of(conn, paper_ids, limit_ms))
    return await read_batch(run, EVERY_PAPER, rowids, limit_ms)


class ExportText:
    """The text of one export: its start, its papers batch by batch, its end. A JSON export
    whose total is not known when it starts (None) gives the papers it wrote at its end."""

    def __init__(self, extension: str, total: int | None) -> None:
        self.extension = extension
        self.total = total
        self.keys = KeyMaker()
        self.first = True
        self.written = 0

    def start(self) -> str:
        if self.extension == "csv":
            return ",".join(CSV_COLUMNS) + "\r\n"
        if self.extension == "json":
            if self.total is None:
                return '{"results": ['
            return f'{{"total": {self.total}, "results": ['
        return ""

    def papers(self, results: list[Result]) -> str:
        self.written += len(results)
        if self.extension == "csv":
            return "".join(csv_line(result) for result in results)
        if self.extension == "bib":
            return "".join(format_entry(bib_paper(result), self.keys) + "\n" for result in results)
        pieces = []
        for result in results:
            shown = {key: value for key, value in result.items() if key != "abstract"}
            pieces.append(("" if self.first else ", ") + json.dumps(shown, ensure_ascii=False))
            self.first = False
        return "".join(pieces)

    def end(self) -> str:
        if self.extension != "json":
            return ""
        return "]}" if self.total is not None else f'], "total": {self.written}}}'


async def export_response(
    run: Run,
    request: search.SearchRequest,
    extension: str,
    limit_ms: int | None,
    order_limit_ms: int | None,
    description: str,
    receive: Receive | None = None,
) -> AbortingStream:
    """The download of every match as `extension` (csv, bib or json). Reads the order (within
    `order_limit_ms`) and the first batch (each batch within `limit_ms`) first:
    QueryInterrupted then, before any answer is sent."""
    rowids = await run(lambda conn: order_matches(conn, request, order_limit_ms))
    first = await read_batch(run, request, rowids[:EXPORT_BATCH], limit_ms)
    text = ExportText(extension, len(rowids))

    async def stream(writer: StreamWriter) -> None:
        nonlocal first
        opening, first = text.start() + text.papers(first), []
        await writer.write(opening)
        for start in range(EXPORT_BATCH, len(rowids), EXPORT_BATCH):
            batch = rowids[start : start + EXPORT_BATCH]
            results = await read_batch(run, request, batch, limit_ms)
            await writer.write(text.papers(results))
        await writer.write(text.end())

    return AbortingStream(
        stream,
        description=description,
        receive=receive,
        headers={"content-disposition": attachment(export_name(request, extension))},
        content_type=CONTENT_TYPES[extension],
    )
