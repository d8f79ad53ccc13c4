"""Author, affiliation and category facets counted from the indexed link tables, not from JSON
per row; column facets that hide when they have no values (venue, year, status).

Datasette's array facet runs json_each() over every row of the view, so at any real size it
always times out (docs/benchmark.md). The same counts come from paper_authors,
paper_affiliations and paper_categories by index, and for the unfiltered table from the
precomputed paper_count columns. Users see the same facets and the same value links (`authors__arraycontains=<name>`);
a filter hook adds the equivalent link-table condition to those links so SQLite reads only the
matching papers instead of parsing every row's JSON.
"""

import asyncio
import sqlite3
import weakref
from collections.abc import Awaitable, Callable
from dataclasses import dataclass
from typing import TYPE_CHECKING, Any
from urllib.parse import urlencode

from datasette.database import Database, QueryInterrupted
from datasette.facets import Facet, load_facet_configs
from datasette.filters import FilterArguments
from datasette.tracer import trace
from datasette.utils import escape_sqlite, path_with_added_args, path_with_removed_args
from datasette.utils.asgi import Request

from loader.web import facet_counts as facet_memory
from loader.web.catalog_scope import catalog_database, is_catalog, serves_catalog
from loader.web.datasette_api import is_datasette_1
from loader.web.facet_counts import COMBO_COLUMNS
from loader.web.rendering import affiliation_slug, name_key
from loader.web.request_scope import mark_incomplete
from loader.web.search_request import FACET_TITLES, NEWEST_FIRST
from loader.web.time_limit import within_time_limit

if TYPE_CHECKING:
    from datasette.app import Datasette

TABLE = "papers"


@dataclass(frozen=True)
class Link:
    """A JSON list column of papers and the link table behind it."""

    table: str  # link table: (paper_id, <column>)
    column: str
    entity: str  # the linked table, with a paper_count column
    value: str  # what the JSON list holds
    key: str  # indexed column a JSON value maps to
    to_key: Callable[[str], object]  # JSON value -> key
    label: str = "name"  # what a reader sees for a value: a name, never a slug


LINKS = {
    "authors": Link("paper_authors", "author_id", "authors", "name", "key", name_key),
    "affiliations": Link(
        "paper_affiliations", "affiliation_id", "affiliations", "slug", "slug", affiliation_slug
    ),
    # arXiv's categories are written one way (cs.LG): the value is the name
    "categories": Link("paper_categories", "category_id", "categories", "name", "name", str),
}


def is_papers_table(facet: Facet) -> bool:
    """The facet is of the catalog's papers table (another database may have one too)."""
    return facet.table == TABLE and is_catalog(facet.ds, facet.database)


def is_unfiltered(sql: str, params: Any) -> bool:
    """Datasette's facet SQL for the whole table ends with the table name and has no where."""
    return not params and sql.rstrip().endswith(f" from {TABLE}")


# Each facet box used to be its own query, each running the page's search or filter again: seven
# full-text matches for one search page. Now every box comes from one statement, run once a
# page by whichever of the two facet classes asks first, that finds the matching papers once
# (`matched`) and counts each box from them; the arms are numbered so the rows can be told
# apart, and each arm keeps its own order and limit. Once a worker has read the link tables and
# the facet table into memory (loader/web/facet_counts.py, at startup, in a thread of its own), a
# filtered page's boxes are instead counted there from its matches' rowids, fetched once.
SHARED_COUNTS = "paper_catalog.facet_counts"
# 1/0 columns whose box shows only when some row has 1
FLAG_COLUMNS = ("has_code",)


def combined_sql(matched_columns: str, arms: list[tuple[int, str]], sql: str) -> str:
    """arms: [(box number, arm)]."""
    numbered = (f"select * from (select {number} as facet, {arm})" for number, arm in arms)
    union = " union all ".join(numbered)
    if not matched_columns:
        return f"{union} order by facet, count desc, value"
    return (
        f"with matched as materialized (select {matched_columns} from ({sql})) "
        f"{union} order by facet, count desc, value"
    )


def column_arm(column: str, unfiltered: bool, limit: int) -> str:
    """Datasette's column facet query (facets.py ColumnFacet), over the matched papers; for
    the whole table, summed from the build's per-combination counts (loader/build/facet_table.py):
    a group by over every row grows with the catalog, the sum of the few combinations does not.
    A year box lists its years newest first, as /search's does (NEWEST_FIRST)."""
    order = "value desc" if column in NEWEST_FIRST else "count desc, value"
    if unfiltered and column in COMBO_COLUMNS:
        return (
            f"{column} as value, null as label, sum(paper_count) as count from facet_combos "
            f"where {column} is not null group by {column} order by {order} "
            f"limit {limit}"
        )
    # the whole table's other columns (has_code) read from it alone, never through `matched`,
    # which would copy every row's columns first
    source = TABLE if unfiltered else "matched"
    column = escape_sqlite(column)
    return (
        f"{column} as value, null as label, count(*) as count from {source} "
        f"where {column} is not null group by {column} order by {order} limit {limit}"
    )


def link_arm(link: Link, unfiltered: bool, limit: int) -> str:
    if unfiltered:
        return (
            f"{link.value} as value, {link.label} as label, paper_count as count "
            f"from {link.entity} "
            f"where paper_count > 0 order by paper_count desc, {link.value} limit {limit}"
        )
    return (
        f"{link.entity}.{link.value} as value, {link.entity}.{link.label} as label, "
        "count(*) as count "
        f"from {link.table} join {link.entity} on {link.entity}.id = {link.table}.{link.column} "
        f"where {link.table}.paper_id in (select id from matched) "
        f"group by {link.table}.{link.column} order by count desc, value limit {limit}"
    )


def box_columns(facet: Facet) -> list[tuple[str, str, str]]:
    """The page's boxes: ("present", column, source) and ("link", column, source), from
    metadata.yml and the URL's `_facet_present` / `_facet_link`; none on another database's
    page (the facet classes are registered for every table Datasette serves)."""
    if not is_catalog(facet.ds, facet.database):
        return []
    # the table's configuration: 0.65 hands it to a facet as `metadata`, 1.0 as `table_config`
    table_config = facet.table_config if is_datasette_1() else facet.metadata
    configs = load_facet_configs(facet.request, table_config)
    boxes = []
    for kind in ("present", "link"):
        for config in configs.get(kind) or []:
            column = config["config"].get("column") or config["config"]["simple"]
            if kind == "link" and not (is_papers_table(facet) and column in LINKS):
                continue
            boxes.append((kind, column, config["source"]))
    return boxes


async def page_boxes(facet: Facet) -> list[tuple[str, str, str]]:
    """box_columns() but metadata.yml's column boxes whose column the table lacks: a catalog
    built before a column (has_code) shows the others."""
    boxes = box_columns(facet)
    if not any(kind == "present" and source == "metadata" for kind, _, source in boxes):
        return boxes
    db = facet.ds.get_database(facet.database)
    columns = set(await db.table_columns(facet.table))
    return [
        (kind, column, source)
        for kind, column, source in boxes
        if kind != "present" or source != "metadata" or column in columns
    ]


async def count_boxes(facet: Facet) -> dict[tuple[str, str], list[Any]] | None:
    """{(kind, column): rows} for every box of the page, or None when the statement ran out of
    facet time."""
    boxes = await page_boxes(facet)
    if not boxes:
        return {}
    limit = facet.get_facet_size() + 1
    papers = is_papers_table(facet)
    # the precomputed counts and the link tables are the catalog's papers' only
    unfiltered = papers and is_unfiltered(facet.sql, facet.params)
    db = facet.ds.get_database(facet.database)
    ids_sql = None if unfiltered or not papers else matched_ids_sql(facet.sql, TABLE)
    memory = facet_memory.indexes(db, LINKS) if ids_sql else None
    try:
        if memory is not None and ids_sql:
            with trace("sql", database=db.name, sql=ids_sql, params=facet.params):
                rows = await db.execute_fn(
                    lambda conn: count_in_memory(
                        conn, facet, boxes, memory, ids_sql, limit, facet.ds
                    )
                )
        else:
            rows = await count_in_sql(facet, boxes, unfiltered, limit)
    except QueryInterrupted:
        return None
    counted: dict[tuple[str, str], list] = {(kind, column): [] for kind, column, _ in boxes}
    for row in rows:
        kind, column, _ = boxes[row["facet"]]
        counted[kind, column].append(row)
    for (kind, column), box_rows in counted.items():
        if kind == "present" and column in NEWEST_FIRST:
            # the statement orders its rows by count across boxes
            box_rows.sort(key=lambda row: facet_memory.sqlite_order(row["value"]), reverse=True)
    return counted


async def count_in_sql(
    facet: Facet, boxes: list[tuple[str, str, str]], unfiltered: bool, limit: int
) -> list[Any]:
    """Every box's rows from one statement."""
    arms = [
        (number, column_arm(column, unfiltered, limit))
        if kind == "present"
        else (number, link_arm(LINKS[column], unfiltered, limit))
        for number, (kind, column, _) in enumerate(boxes)
    ]
    matched = sorted({escape_sqlite(column) for kind, column, _ in boxes if kind == "present"})
    if any(kind == "link" for kind, _, _ in boxes):
        matched.append("id")
    if unfiltered:
        matched = []  # every arm reads precomputed counts or the table itself
    results = await facet.ds.execute(
        facet.database,
        combined_sql(", ".join(matched), arms, facet.sql),
        facet.params,
        truncate=False,
        custom_time_limit=facet.ds.setting("facet_time_limit_ms"),
    )
    return results.rows


def matched_ids_sql(sql: str, table: str) -> str | None:
    """`select rowid from <table> <where>` for Datasette's facet SQL of a table page, `select
    <columns> from <table> <where>`; None for any other shape."""
    head = f" from {escape_sqlite(table)} "
    start = sql.find(head) if sql.startswith("select ") else -1
    if start < 0 or any(character in sql[:start] for character in "()'"):
        return None
    return "select rowid" + sql[start:]


def count_in_memory(
    conn: sqlite3.Connection,
    facet: Facet,
    boxes: list[tuple[str, str, str]],
    memory: facet_memory.Indexes,
    ids_sql: str,
    limit: int,
    datasette: "Datasette",
) -> list[Any]:
    """Every box's rows in one SQL-thread hand-off, counted from the matches' rowids
    (loader/web/facet_counts.py); a column box the facet table does not hold, from SQL."""
    params = facet.params
    with within_time_limit(conn, datasette.setting("facet_time_limit_ms"), ids_sql, params):
        rowids = facet_memory.matched_rowids(conn, ids_sql, params)
    present = [column for kind, column, _ in boxes if kind == "present"]
    columns = facet_memory.count_columns(memory.combos, rowids, present, limit)
    rows, arms = [], []
    for number, (kind, column, _) in enumerate(boxes):
        if kind == "link":
            top = facet_memory.count_links(memory.links[column], rowids, limit)
            labels = facet_memory.labels_of(conn, LINKS[column], [linked for linked, _ in top])
            rows += [
                {"facet": number, "value": labels[key][0], "label": labels[key][1], "count": n}
                for key, n in top
            ]
        elif column in columns:
            rows += [
                {"facet": number, "value": value, "label": None, "count": n}
                for value, n in columns[column]
            ]
        else:
            arms.append((number, column_arm(column, False, limit)))
    if arms:
        matched = ", ".join(sorted({escape_sqlite(column) for column in present}))
        sql = combined_sql(matched, arms, facet.sql)
        with within_time_limit(conn, datasette.setting("facet_time_limit_ms"), sql, params):
            rows += list(conn.execute(sql, params))
    return rows


async def shared_counts(facet: Facet) -> dict[tuple[str, str], list[Any]] | None:
    """count_boxes() once a page: both facet classes of a request await the same run."""
    runs = facet.request.scope.setdefault(SHARED_COUNTS, {})
    # params: a dict, or an empty list for the whole table
    key = (facet.sql, repr(sorted(dict(facet.params or {}).items())))
    if key not in runs:
        runs[key] = asyncio.ensure_future(count_boxes(facet))
    return await runs[key]


async def own_boxes(facet: Facet) -> list[tuple[str, str]]:
    """(column, source) of this facet class's boxes."""
    boxes = await page_boxes(facet)
    return [(column, source) for kind, column, source in boxes if kind == facet.type]


async def own_counts(
    facet: Facet,
) -> tuple[list[tuple[str, str]], dict[tuple[str, str], list[Any]] | None]:
    """(this facet class's boxes, the counted rows of every box). The rows are None past the
    facet time limit; the page is then marked incomplete, so no response cache keeps it."""
    configs = await own_boxes(facet)
    if not configs:
        return configs, {}
    counted = await shared_counts(facet)
    if counted is None:
        mark_incomplete(facet.request.scope, "facets")
    return configs, counted


def value_links(request: Request) -> Callable[[str, object], str]:
    """`link(name, value)`: the page's address with name=value added, what Datasette's
    path_with_added_args(request, {name: value}) gives, for each of a page's ~100 values:
    Datasette's helper parses and writes the whole query again for each, so it writes the
    page's own address once here and each value's pair is added to it."""
    own = path_with_added_args(request, {})
    joiner = "&" if "?" in own else "?"

    def link(name: str, value: object) -> str:
        return f"{own}{joiner}{urlencode([(name, value)])}"

    return link


# Database -> {table: whether it has a row}: an immutable file's answers, kept
_has_rows: "weakref.WeakKeyDictionary[Database, dict[str, bool]]" = weakref.WeakKeyDictionary()


async def has_rows(datasette: "Datasette", database: str, table: str) -> bool:
    """The table has a row: a link box of a catalog whose sources give no such links (no
    arXiv snapshot: no categories) is left out, as an empty column box is. Asked on every page
    whose matches have no such link; an immutable catalog's answer is kept."""
    db = datasette.get_database(database)
    kept = _has_rows.setdefault(db, {}) if not db.is_mutable else {}
    if table not in kept:
        rows = (await db.execute(f"select exists(select 1 from {table})")).rows
        kept[table] = bool(rows[0][0])
    return kept[table]


class LinkFacet(Facet):
    """`facets: [{link: authors}]`: a JSON list column's values counted through its link table,
    each linked as Datasette's array facet links it (`authors__arraycontains=<name>`)."""

    type = "link"

    async def suggest(self) -> list[dict[str, Any]]:
        return []

    async def facet_results(self) -> tuple[list[dict[str, Any]], list[str]]:
        results = []
        facet_size = self.get_facet_size()
        pairs = self.get_querystring_pairs()
        configs, counted = await own_counts(self)
        if counted is None:
            return [], [column for column, _ in configs]
        link = value_links(self.request)
        for column, source in configs:
            rows = counted["link", column]
            if not rows and not await has_rows(self.ds, self.database, LINKS[column].entity):
                continue  # a catalog with no categories at all (no arXiv input)
            values = []
            for row in rows[:facet_size]:
                value = str(row["value"])
                argument = {f"{column}__arraycontains": value}
                selected = (f"{column}__arraycontains", value) in pairs
                if selected:
                    toggle = path_with_removed_args(self.request, argument)
                else:
                    toggle = link(f"{column}__arraycontains", value)
                values.append(
                    {
                        "value": value,
                        "label": row["label"] or value,
                        "count": row["count"],
                        "toggle_url": self.ds.absolute_url(self.request, toggle),
                        "selected": selected,
                    }
                )
            results.append(
                {
                    "name": column,
                    # shown as the array facet it replaces: "authors (array)"
                    "type": "array",
                    "results": values,
                    "hideable": source != "metadata",
                    "toggle_url": self.ds.urls.path(
                        path_with_removed_args(self.request, {"_facet_link": column})
                    ),
                    "truncated": len(rows) > facet_size,
                }
            )
        return results, []


class PresentFacet(Facet):
    """`facets: [{present: venue}]`: a column facet shown only when the rows have a value
    there. A catalog built from listings without sources.yml has no venue or year, and an
    empty facet box would only say so. Shown and linked exactly as the column facet it is."""

    type = "present"

    async def suggest(self) -> list[dict[str, Any]]:
        return []

    async def facet_results(self) -> tuple[list[dict[str, Any]], list[str]]:
        configs, counted = await own_counts(self)
        if counted is None:
            return [], [column for column, _ in configs]
        facet_size = self.get_facet_size()
        foreign_keys = set()
        if self.table:
            db = self.ds.get_database(self.database)
            foreign_keys = {fk["column"] for fk in await db.foreign_keys_for_table(self.table)}
        pairs = self.get_querystring_pairs()
        link = value_links(self.request)
        results = []
        for column, source in configs:
            rows = counted["present", column]
            # a flag (has_code) is 0 for every paper of a catalog read from pages: no value
            if not rows or (column in FLAG_COLUMNS and not any(row["value"] for row in rows)):
                continue
            shown = rows[:facet_size]
            expanded = {}
            if column in foreign_keys:
                values = [row["value"] for row in shown]
                expanded = await self.ds.expand_foreign_keys(
                    self.database, self.table, column, values
                )
            results.append(
                {
                    "name": column,
                    "type": "column",
                    "hideable": source != "metadata",
                    "toggle_url": self.ds.urls.path(
                        path_with_removed_args(self.request, {"_facet": column})
                    ),
                    "results": [
                        self.value_result(column, row, expanded, pairs, link) for row in shown
                    ],
                    "truncated": len(rows) > facet_size,
                }
            )
        return results, []

    def value_result(
        self,
        column: str,
        row: Any,
        expanded: dict[Any, Any],
        pairs: list[tuple[str, str]],
        link: Callable[[str, object], str],
    ) -> dict[str, Any]:
        """One value of a box, linked as Datasette's column facet links it."""
        argument = f"{column}__exact" if column.startswith("_") else column
        selected = (argument, str(row["value"])) in pairs
        if selected:
            toggle = path_with_removed_args(self.request, {argument: str(row["value"])})
        else:
            toggle = link(argument, row["value"])
        return {
            "value": row["value"],
            "label": expanded.get((column, row["value"]), row["value"]),
            "count": row["count"],
            "toggle_url": self.ds.absolute_url(self.request, self.ds.urls.path(toggle)),
            "selected": selected,
        }


def facet_title(name: str) -> str:
    """A box's heading in words, as /search heads its boxes: "Authors", not "authors (array)"."""
    return FACET_TITLES.get(name, name.replace("_", " ").capitalize())


def facet_boxes(sorted_facet_results: list[dict]) -> list[dict]:
    """The page's boxes for templates/_facet_results.html: each with its title, in /search's
    order (Datasette orders them by how many values each shows, so they jump after a click)."""
    order = {name: index for index, name in enumerate(FACET_TITLES)}
    boxes = sorted(
        sorted_facet_results, key=lambda box: (order.get(box["name"], len(order)), box["name"])
    )
    return [dict(box, title=facet_title(box["name"])) for box in boxes]


def extra_template_vars(database: str | None, datasette: "Datasette") -> dict[str, Any] | None:
    if not is_catalog(datasette, database):
        return None
    return {"catalog_facet_boxes": facet_boxes}


def startup(datasette: "Datasette") -> Callable[[], Awaitable[None]] | None:
    if not serves_catalog(datasette):
        return None

    async def start_reading_indexes() -> None:
        # returns at once; read in a thread of its own
        facet_memory.indexes(catalog_database(datasette), LINKS)

    return start_reading_indexes


def register_facet_classes() -> list[type[Facet]]:
    return [LinkFacet, PresentFacet]


def filters_from_request(
    request: Request, database: str, table: str, datasette: "Datasette"
) -> FilterArguments | None:
    """`authors__arraycontains=X` scans every row's JSON; the same papers are the ones linked
    to X, which an index finds. The JSON condition stays, so results are exactly the same."""
    if table != TABLE or not is_catalog(datasette, database):
        return None
    clauses: list[str] = []
    params: dict[str, object] = {}
    for column, link in LINKS.items():
        for value in request.args.getlist(f"{column}__arraycontains"):
            name = f"link_{len(params)}"
            params[name] = link.to_key(value)
            clauses.append(
                f"id in (select paper_id from {link.table} where {link.column} in "
                f"(select id from {link.entity} where {link.key} = :{name}))"
            )
    return FilterArguments(clauses, params) if clauses else None
