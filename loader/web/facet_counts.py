"""Facet counts over a page's matching papers, from a per-worker copy in memory of the link
tables (authors, affiliations) and of the facet table (venue, year, status, area, track).

The papers table's author box counted, for each matching paper, its rows of paper_authors: a
look-up of the paper's text id, a seek into paper_authors, then SQLite's group by of every
(paper, author) pair, most of a search page's SQL. The served catalog never changes, so each
worker keeps, once, every paper's linked ids by the paper's rowid (one 4-byte int a link) and
each linked row's place in value order; a page then fetches only its matches' rowids (one
string from SQLite, matched_rowids) and counts them with numpy: the matches' linked ids
gathered and counted as arrays, where Python's Counter over a slice a match cost about ten
times the CPU (8.9 -> 0.9 ms for the authors of 14,802 matches). The five column boxes, read
from `papers` for every match, are summed from each match's combination of the five values
(loader/build/facet_table.py: one int a paper here). Same counts, same order (count, then
value), same limit as the SQL they replace (tests/test_facet_counts.py compares the two).
"""

import sqlite3
from collections.abc import Collection, Iterable, Mapping
from contextlib import closing
from dataclasses import dataclass
from typing import TYPE_CHECKING, Any, Protocol

import numpy as np
import numpy.typing as npt

from loader.build.facet_table import COLUMNS as COMBO_COLUMNS
from loader.web.search_request import NEWEST_FIRST
from loader.web.worker_reads import ReadOnce

if TYPE_CHECKING:
    from datasette.database import Database

# SQLite's own ceiling on a value (SQLITE_MAX_LENGTH): the rowids of 90 million matches
JOINED_ROWIDS_BYTES = 1_000_000_000
# a value of a facet column (venue, year, status, area, track)
Value = str | int | None


class LinkTable(Protocol):
    """What reading a link table needs of its description (plugins/facets.py Link)."""

    @property
    def table(self) -> str: ...  # the link table: (paper_id, <column>)
    @property
    def column(self) -> str: ...
    @property
    def entity(self) -> str: ...  # the linked table
    @property
    def value(self) -> str: ...  # its column a facet orders by
    @property
    def label(self) -> str: ...  # its column a reader sees


@dataclass(frozen=True)
class LinkIndex:
    """One link table in memory: paper rowid -> linked ids, linked id -> place in value order."""

    # where paper rowid r's ids are in `ids`: ids[offsets[r]:offsets[r + 1]]
    offsets: npt.NDArray[np.int64]
    ids: npt.NDArray[np.int32]  # linked ids, grouped by paper rowid
    # order[linked id]: its place in `order by value` (the facet's tie-break)
    order: npt.NDArray[np.int32]


@dataclass(frozen=True)
class ComboIndex:
    """The facet table in memory: paper rowid -> its combination of the facet columns."""

    of_paper: npt.NDArray[np.int32]  # combination id of paper rowid r, 0 for none
    values: dict[int, dict[str, Value]]  # combination id -> {column: value}


@dataclass(frozen=True)
class Indexes:
    links: dict[str, LinkIndex]  # link column -> LinkIndex
    combos: ComboIndex | None  # None: a catalog without the facet table


def read_link_index(connection: sqlite3.Connection, link: LinkTable) -> LinkIndex:
    """Read `link` (plugins/facets.py Link) from a catalog connection. Only links whose linked
    row exists count, as the facet's join with the linked table does.

    The papers are read in key order from their id index, each one's links from the link
    table's key (`paper_id` first: a range in the same order), one seek a paper; driven from
    the link table, each link sought its paper in the id index, ten times the time at 1M papers
    (22 -> 2.2 s for 3.2M author links), a wait each worker had before its facets were fast.
    Both columns come as one string each (joined_integers) and are grouped by rowid in numpy."""
    (last_rowid,) = connection.execute("select coalesce(max(rowid), 0) from papers").fetchone()
    rowids, ids = joined_integers(
        connection,
        f"select papers.rowid, {link.table}.{link.column} from papers"
        f" cross join {link.table} on {link.table}.paper_id = papers.id order by papers.id",
        2,
    )
    (last_id,) = connection.execute(f"select coalesce(max(id), 0) from {link.entity}").fetchone()
    (existing,) = joined_integers(connection, f"select id from {link.entity}", 1)
    exists = np.zeros(last_id + 1, dtype=bool)
    exists[existing] = True
    kept = (ids >= 0) & (ids <= last_id)
    kept[kept] = exists[ids[kept]]
    rowids, ids = rowids[kept], ids[kept]
    by_rowid = np.argsort(rowids, kind="stable")
    offsets = np.zeros(last_rowid + 2, dtype=np.int64)
    np.cumsum(np.bincount(rowids, minlength=last_rowid + 1), out=offsets[1:])
    (ranked,) = joined_integers(
        connection, f"select id from {link.entity} order by {link.value}, id", 1
    )
    order = np.zeros(last_id + 1, dtype=np.int32)
    order[ranked] = np.arange(len(ranked), dtype=np.int32)
    return LinkIndex(offsets, ids[by_rowid].astype(np.int32), order)


def joined_integers(
    connection: sqlite3.Connection, sql: str, columns: int, params: Any = ()
) -> list[npt.NDArray[np.int64]]:
    """Each integer column of `sql`'s rows as an array, the rows in the statement's order: one
    group_concat string a column, read by numpy (a row at a time through the sqlite3 module
    costs several times as much). The columns' strings are made from the same rows in the same
    pass, so position i of each array is one row's. The site caps a value's length
    (plugins/limits.py, against what visitors' SQL could make); these values hold every row,
    and are ours: the cap is lifted while the statement runs."""
    names = [f"c{number}" for number in range(columns)]
    joined = ", ".join(f"group_concat({name})" for name in names)
    capped = connection.setlimit(sqlite3.SQLITE_LIMIT_LENGTH, JOINED_ROWIDS_BYTES)
    try:
        row = connection.execute(
            f"with rows ({', '.join(names)}) as ({sql}) select {joined} from rows", params
        ).fetchone()
    finally:
        connection.setlimit(sqlite3.SQLITE_LIMIT_LENGTH, capped)
    return [
        np.fromstring(text, dtype=np.int64, sep=",") if text else np.zeros(0, dtype=np.int64)
        for text in row
    ]


def matched_rowids(
    connection: sqlite3.Connection, ids_sql: str, params: Any = ()
) -> npt.NDArray[np.int64]:
    """The rowids `ids_sql` (a `select rowid ...`) gives, in any order (joined_integers: a row
    a match through the sqlite3 module cost three times as much, 5.0 -> 1.1 ms for 14,802
    matches)."""
    (rowids,) = joined_integers(connection, ids_sql, 1, params)
    return rowids


def rowid_array(rowids: Iterable[int]) -> npt.NDArray[np.int64]:
    if isinstance(rowids, np.ndarray):
        return rowids.astype(np.int64, copy=False)
    return np.fromiter(rowids, dtype=np.int64)


def count_links(index: LinkIndex, rowids: Iterable[int], limit: int) -> list[tuple[int, int]]:
    """[(linked id, papers)] of the papers `rowids`: most papers first, then in value order,
    at most `limit`, as `group by ... order by count desc, value limit N` gives them."""
    matches = rowid_array(rowids)
    if not len(index.ids) or not len(matches):
        return []
    starts = index.offsets[matches]
    lengths = index.offsets[matches + 1] - starts
    total = int(lengths.sum())
    if not total:
        return []
    # the matches' slices of `ids`, end to end: position i of the output reads ids at i plus
    # the distance from where its match's slice sits in the output to where it sits in `ids`
    placed = np.cumsum(lengths) - lengths
    linked = index.ids[np.arange(total) + np.repeat(starts - placed, lengths)]
    keys, counts = counted_values(linked, len(index.order))
    if len(keys) > limit:
        least = np.partition(counts, len(counts) - limit)[len(counts) - limit]
        kept = counts >= least
        keys, counts = keys[kept], counts[kept]
    ranked = np.lexsort((index.order[keys], -counts))[:limit]
    return list(zip(keys[ranked].tolist(), counts[ranked].tolist(), strict=True))


def counted_values(
    values: npt.NDArray[np.int32], bound: int
) -> tuple[npt.NDArray[np.intp], npt.NDArray[np.intp]]:
    """(the distinct values, how often each comes), of values in [0, bound): a count a
    possible value where the values are many against `bound`, else by sorting them."""
    if len(values) * 4 >= bound:
        counts = np.bincount(values, minlength=bound)
        keys = np.flatnonzero(counts)
        return keys, counts[keys]
    return np.unique(values, return_counts=True)


def read_combo_index(connection: sqlite3.Connection) -> ComboIndex:
    (last_rowid,) = connection.execute(
        "select coalesce(max(paper), 0) from paper_facets"
    ).fetchone()
    papers, combos = joined_integers(connection, "select paper, combo from paper_facets", 2)
    of_paper = np.zeros(last_rowid + 1, dtype=np.int32)
    of_paper[papers] = combos
    columns = ", ".join(COMBO_COLUMNS)
    values = {
        combo: dict(zip(COMBO_COLUMNS, row, strict=True))
        for combo, *row in connection.execute(f"select id, {columns} from facet_combos")
    }
    return ComboIndex(of_paper, values)


def sqlite_order(value: Value | float | bytes) -> tuple[int, Any]:
    """SQLite's order of a column's values: numbers, then text (in code point order, as its
    BINARY collation of UTF-8), then blobs."""
    if isinstance(value, int | float):
        return (0, value)
    return (1, value) if isinstance(value, str) else (2, value)


def count_columns(
    combos: ComboIndex | None, rowids: Iterable[int], columns: Iterable[str], limit: int
) -> dict[str, list[tuple[Value, int]]]:
    """{column: [(value, papers)]} of the papers `rowids` for those of `columns` the facet
    table holds, as `count(*) ... where column is not null group by column order by count desc,
    value limit N` gives them (a NEWEST_FIRST column: `order by value desc`); {} when a paper has no combination (the facet table is not this
    catalog's: count in SQL)."""
    columns = [column for column in columns if column in COMBO_COLUMNS]
    if combos is None or not columns:
        return {}
    papers_of = papers_per_combo(combos, rowids)
    if papers_of is None:
        return {}
    counted: dict[str, list[tuple[Value, int]]] = {}
    for column in columns:
        counts: dict[Value, int] = {}
        for combo, papers in papers_of.items():
            value = combos.values[combo][column]
            if value is not None:
                counts[value] = counts.get(value, 0) + papers
        if column in NEWEST_FIRST:
            ordered = sorted(counts.items(), key=lambda item: sqlite_order(item[0]), reverse=True)
        else:
            ordered = sorted(counts.items(), key=lambda item: (-item[1], sqlite_order(item[0])))
        counted[column] = ordered[:limit]
    return counted


def papers_per_combo(combos: ComboIndex, rowids: Iterable[int]) -> dict[int, int] | None:
    """{combination id: papers} of the papers `rowids`; None when a paper has no combination
    (the facet table is not this catalog's: count in SQL)."""
    matches = rowid_array(rowids)
    if len(matches) and (matches.min() < 0 or matches.max() >= len(combos.of_paper)):
        return None
    of_matches = combos.of_paper[matches]
    if not of_matches.all():
        return None
    per_combo = np.bincount(of_matches)
    present = np.flatnonzero(per_combo)
    return dict(zip(present.tolist(), per_combo[present].tolist(), strict=True))


def combo_counts(combos: ComboIndex, rowids: Iterable[int]) -> list[tuple[Any, ...]] | None:
    """search_request.combo_counts_sql's rows for the papers `rowids`: (combination id, its
    five values, papers), one a combination they have; None as papers_per_combo."""
    papers_of = papers_per_combo(combos, rowids)
    if papers_of is None:
        return None
    return [
        (combo, *(combos.values[combo][column] for column in COMBO_COLUMNS), papers)
        for combo, papers in papers_of.items()
    ]


def labels_of(
    connection: sqlite3.Connection, link: LinkTable, ids: Collection[int]
) -> dict[int, tuple[Any, Any]]:
    """{linked id: (value, label)} of the few ids a facet shows."""
    if not ids:
        return {}
    marks = ", ".join("?" * len(ids))
    rows = connection.execute(
        f"select id, {link.value}, {link.label} from {link.entity} where id in ({marks})",
        list(ids),
    )
    return {linked: (value, label) for linked, value, label in rows}


def open_catalog(path: str) -> sqlite3.Connection:
    """A read-only connection of its own, so reading the index takes no SQL thread of the site."""
    return sqlite3.connect(f"file:{path}?mode=ro&immutable=1", uri=True, check_same_thread=False)


def read_indexes(path: str, links: Mapping[str, LinkTable]) -> Indexes | None:
    """Indexes of `links` ({column: Link}) and the facet table; None for a database without
    the link tables."""
    with closing(open_catalog(path)) as connection:
        try:
            linked = {column: read_link_index(connection, link) for column, link in links.items()}
        except sqlite3.Error:
            return None
        try:
            combos = read_combo_index(connection)
        except sqlite3.Error:
            combos = None
    return Indexes(linked, combos)


# read once per worker, in a thread of its own (loader/web/worker_reads.py)
_indexes: ReadOnce[Indexes] = ReadOnce(read_indexes)


def indexes(db: "Database", links: Mapping[str, LinkTable]) -> Indexes | None:
    """The catalog's Indexes, or None until they are read. The first call starts reading them;
    until they are read, and for good if they cannot be, the SQL counts."""
    return _indexes.get(db, links)


def combos_read(db: "Database") -> ComboIndex | None:
    """The facet table in memory once this worker has read its indexes (plugins/facets.py
    starts the read when the worker starts), else None."""
    read = _indexes.read_already(db)
    return read.combos if read is not None else None


async def loaded_indexes(db: "Database", links: Mapping[str, LinkTable]) -> Indexes | None:
    """indexes(), waiting for the read to finish."""
    return await _indexes.loaded(db, links)
