"""A step of a page under Datasette's time limit, on a connection of Datasette's SQL thread.

Pages that run several statements in one hand-off to the thread (`db.execute_fn`: the paper and
author pages, related papers, /search) keep the limit each statement would have had through
`db.execute`, and meet its end as Datasette's own queries do: QueryInterrupted.
"""

import sqlite3
from collections.abc import Iterator, Mapping, Sequence
from contextlib import contextmanager
from typing import Any

from datasette.database import QueryInterrupted
from datasette.utils import sqlite_timelimit


@contextmanager
def within_time_limit(
    conn: sqlite3.Connection,
    ms: int | None,
    sql: str = "",
    params: Mapping[str, Any] | Sequence[Any] | None = None,
) -> Iterator[None]:
    """Datasette's time limit of `ms` on what runs inside; QueryInterrupted past it. None: no
    limit (the benchmark's raw side); 0 interrupts at once, as in Datasette."""
    if ms is None:
        yield
        return
    try:
        with sqlite_timelimit(conn, ms):
            yield
    except sqlite3.OperationalError as error:
        if error.args == ("interrupted",):
            raise QueryInterrupted(error, sql, params or {}) from error
        raise
