"""Author and affiliation facet counts over a page's matching papers, from a per-worker copy
of the link tables in memory.

The papers table's author box counted, for each matching paper, its rows of paper_authors: a
look-up of the paper's text id, a seek into paper_authors, then SQLite's group by of every
(paper, author) pair. A search matching 1,500 of 20,000 papers spent ~7 ms there, most of a
search page's SQL. The served catalog never changes, so each worker keeps, once, every paper's
linked ids by the paper's rowid (4 bytes a link: ~18 MB for 4.4M author links at 1M papers) and
each linked row's place in value order; a page then fetches only its matches' rowids and counts
in C (Counter over an int array). Same counts, same order (count, then value), same limit as
the SQL it replaces (tests/test_throughput_facets.py compares the two).
"""

import asyncio
import heapq
import sqlite3
import weakref
from array import array
from collections import Counter
from contextlib import closing
from dataclasses import dataclass

ITEM = "i"  # 4-byte signed ints: rowids and ids of a catalog stay below 2**31
ITEM_BYTES = array(ITEM).itemsize


@dataclass(frozen=True)
class LinkIndex:
    """One link table in memory: paper rowid -> linked ids, linked id -> place in value order."""

    offsets: array  # byte offset of paper rowid r's ids in `ids`: ids[offsets[r]:offsets[r + 1]]
    ids: bytes  # linked ids, ITEM ints, grouped by paper rowid
    order: array  # order[linked id]: its place in `order by value` (the facet's tie-break)


def read_link_index(connection, link):
    """Read `link` (plugins/facets.py Link) from a catalog connection. Only links whose linked
    row exists count, as the facet's join with the linked table does."""
    (last_rowid,) = connection.execute("select coalesce(max(rowid), 0) from papers").fetchone()
    sizes = array(ITEM, bytes(ITEM_BYTES * (last_rowid + 2)))
    ids = array(ITEM)
    # link table first, in its key order; papers' id index gives the rowid; sorted by rowid in
    # SQLite (a scan of papers would read every wide row)
    rows = connection.execute(
        f"select papers.rowid, {link.table}.{link.column} from {link.table}"
        f" cross join papers on papers.id = {link.table}.paper_id"
        f" join {link.entity} on {link.entity}.id = {link.table}.{link.column}"
        " order by papers.rowid"
    )
    for rowid, linked in rows:
        ids.append(linked)
        sizes[rowid + 1] += ITEM_BYTES
    offsets = array(ITEM, bytes(ITEM_BYTES * len(sizes)))
    total = 0
    for rowid, size in enumerate(sizes):
        total += size
        offsets[rowid] = total
    (last_id,) = connection.execute(f"select coalesce(max(id), 0) from {link.entity}").fetchone()
    order = array(ITEM, bytes(ITEM_BYTES * (last_id + 1)))
    ranked = connection.execute(f"select id from {link.entity} order by {link.value}, id")
    for place, (linked,) in enumerate(ranked):
        order[linked] = place
    return LinkIndex(offsets, ids.tobytes(), order)


def count_links(index, rowids, limit):
    """[(linked id, papers)] of the papers `rowids`: most papers first, then in value order,
    at most `limit`, as `group by ... order by count desc, value limit N` gives them."""
    ids, offsets = memoryview(index.ids), index.offsets
    linked = array(ITEM)
    linked.frombytes(b"".join([ids[offsets[rowid] : offsets[rowid + 1]] for rowid in rowids]))
    counts = Counter(linked)
    if len(counts) > limit:
        least = heapq.nlargest(limit, counts.values())[-1]
        counts = {key: count for key, count in counts.items() if count >= least}
    order = index.order
    return sorted(counts.items(), key=lambda item: (-item[1], order[item[0]]))[:limit]


def labels_of(connection, link, ids):
    """{linked id: (value, label)} of the few ids a facet shows."""
    if not ids:
        return {}
    marks = ", ".join("?" * len(ids))
    rows = connection.execute(
        f"select id, {link.value}, {link.label} from {link.entity} where id in ({marks})",
        list(ids),
    )
    return {linked: (value, label) for linked, value, label in rows}


def open_catalog(path):
    """A read-only connection of its own, so reading the index takes no SQL thread of the site."""
    return sqlite3.connect(f"file:{path}?mode=ro&immutable=1", uri=True, check_same_thread=False)


def read_link_indexes(path, links):
    """{column: LinkIndex} of `links` ({column: Link}); None for a database without them."""
    try:
        with closing(open_catalog(path)) as connection:
            return {column: read_link_index(connection, link) for column, link in links.items()}
    except sqlite3.Error:
        return None


# Database -> future of read_link_indexes(): read once per worker, in a thread of its own
_indexes = weakref.WeakKeyDictionary()


def link_indexes(db, links):
    """The catalog's link tables in memory, or None until they are read. The first call starts
    reading them; until they are read, and for good if they cannot be, the SQL counts."""
    if db.path is None or db.is_mutable:
        return None
    future = _indexes.get(db)
    if future is None:
        loop = asyncio.get_running_loop()
        future = _indexes[db] = loop.run_in_executor(None, read_link_indexes, db.path, links)
    if future.done() and future.exception() is None:
        return future.result()
    return None


async def loaded_link_indexes(db, links):
    """link_indexes(), waiting for the read to finish."""
    link_indexes(db, links)
    future = _indexes.get(db)
    if future is not None:
        await asyncio.wait([future])
    return link_indexes(db, links)
