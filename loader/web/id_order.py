"""A plain search's first page of papers in id order, from the matches' rowids and a per-worker
rank of every paper in id order.

Datasette lists a table search in primary-key order, and the papers' key is their text id (a
hash): SQLite reads every match's row to keep the first 25, the whole cost of a search page at
1M papers (1,119 ms for a pair of words in 27,981 papers, 250 ms with keys sorted first,
index_only.keys_first). The served catalog never changes, so each worker reads once, from the
id index, the place of every paper in id order (4 bytes a paper); a page then fetches its
matches' rowids from the full-text index alone (facet_counts.matched_rowids), takes the first
by rank with numpy, and reads only those rows, in the same order (ids are unique).
"""

import asyncio
import sqlite3
import weakref
from contextlib import closing
from typing import TYPE_CHECKING

import numpy as np
import numpy.typing as npt

from loader.web.facet_counts import open_catalog

if TYPE_CHECKING:
    from datasette.database import Database

# no rank: a rowid no paper has (the array's holes)
UNRANKED = np.iinfo(np.int32).max


def read_ranks(path: str) -> npt.NDArray[np.int32] | None:
    """ranks[rowid]: the paper's place in `order by id`; None for a database without papers."""
    with closing(open_catalog(path)) as connection:
        try:
            (joined,) = connection.execute(
                "select group_concat(rowid) from (select rowid from papers order by id)"
            ).fetchone()
        except sqlite3.Error:
            return None
    in_order = np.fromstring(joined or "", dtype=np.int64, sep=",")
    ranks = np.full(int(in_order.max(initial=0)) + 1, UNRANKED, dtype=np.int32)
    ranks[in_order] = np.arange(len(in_order), dtype=np.int32)
    return ranks


def first_by_id(
    ranks: npt.NDArray[np.int32], rowids: npt.NDArray[np.int64], count: int
) -> list[int] | None:
    """The rowids of the first `count` of `rowids` in id order, in that order; None when one
    of them is not a ranked paper (the ranks are not this catalog's: let SQLite sort)."""
    if len(rowids) and (rowids.min() < 0 or rowids.max() >= len(ranks)):
        return None
    of_matches = ranks[rowids]
    if len(of_matches) and of_matches.max() == UNRANKED:
        return None
    if len(of_matches) > count:
        kept = np.argpartition(of_matches, count - 1)[:count]
    else:
        kept = np.arange(len(of_matches))
    ordered = kept[np.argsort(of_matches[kept], kind="stable")]
    return rowids[ordered].tolist()


# Database -> future of read_ranks(): read once per worker, in a thread of its own
_ranks: "weakref.WeakKeyDictionary[Database, asyncio.Future[npt.NDArray[np.int32] | None]]" = (
    weakref.WeakKeyDictionary()
)


def ranks_of(db: "Database") -> npt.NDArray[np.int32] | None:
    """The catalog's ranks, or None until they are read (the first call starts reading them)
    and for good if they cannot be: SQLite sorts the page then."""
    if db.path is None or db.is_mutable:
        return None
    future = _ranks.get(db)
    if future is None:
        loop = asyncio.get_running_loop()
        future = _ranks[db] = loop.run_in_executor(None, read_ranks, db.path)
    if future.done() and future.exception() is None:
        return future.result()
    return None


async def all_read() -> None:
    """Wait for every read started in this process (a benchmark measures the steady state)."""
    futures = list(_ranks.values())
    if futures:
        await asyncio.wait(futures)
