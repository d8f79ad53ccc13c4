"""A search's matched rowids, read from the full-text index once per request.

A table search asks SQLite three times for the same matches: its first page (id_order takes
the first rows of the matches' rowids), its count, and its facet boxes (facet_counts counts the
matches' rowids). On a common word of a large catalog each read walks a long doclist of
papers_fts: at 1M papers most of a search's time. The first read keeps the rowids for the rest
of the request; the count is then their number. Kept only while the request runs (a context
variable that one_read_per_request sets), never across requests: each new URL does its own read.

The rowids are the same whichever reader asks: the statement is the same text over the same
immutable catalog with the same parameters (the key), and papers_fts gives each match once.
"""

import contextlib
import contextvars
from collections.abc import Hashable, Iterator, Mapping
from typing import Any

import numpy as np
import numpy.typing as npt

# (statement, parameters) -> rowids; None outside a request that keeps them
_kept: contextvars.ContextVar[dict[Hashable, npt.NDArray[np.int64]] | None]
_kept = contextvars.ContextVar("paper_catalog_request_matches", default=None)


def key_of(ids_sql: str, params: Any) -> Hashable | None:
    """The key of a statement's matches, or None when its parameters cannot make one."""
    if isinstance(params, Mapping):
        items = sorted(params.items())
    elif isinstance(params, list | tuple):
        items = list(enumerate(params))
    else:
        return None
    key = ids_sql, tuple(items)
    try:
        hash(key)
    except TypeError:  # an unhashable parameter value: not kept
        return None
    return key


def kept_matches(ids_sql: str, params: Any) -> npt.NDArray[np.int64] | None:
    """The rowids this request already read for `ids_sql` with `params`, or None."""
    kept = _kept.get()
    key = key_of(ids_sql, params) if kept is not None else None
    return None if key is None or kept is None else kept.get(key)


def keep_matches(ids_sql: str, params: Any, rowids: npt.NDArray[np.int64]) -> None:
    """Keep the rowids read for the rest of the request (when the request keeps any)."""
    kept = _kept.get()
    key = key_of(ids_sql, params) if kept is not None else None
    if key is not None and kept is not None:
        kept[key] = rowids


@contextlib.contextmanager
def one_read_per_request() -> Iterator[None]:
    """Within: matches read are kept (loader/serve/matches_scope.py: one HTTP request)."""
    token = _kept.set({})
    try:
        yield
    finally:
        _kept.reset(token)
