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

import sqlite3
from contextlib import closing
from typing import TYPE_CHECKING

import numpy as np
import numpy.typing as npt

from loader.web.facet_counts import open_catalog
from loader.web.worker_reads import ReadOnce

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


# read once per worker, in a thread of its own (loader/web/worker_reads.py)
_ranks: ReadOnce[npt.NDArray[np.int32]] = ReadOnce(read_ranks)


def ranks_of(db: "Database") -> npt.NDArray[np.int32] | None:
    """The catalog's ranks, or None until they are read (the first call starts reading them)
    and for good if they cannot be: SQLite sorts the page then."""
    return _ranks.get(db)
