"""A step of a page under Datasette's time limit, on a connection of Datasette's SQL thread.

Pages that run several statements in one hand-off to the thread (`db.execute_fn`: the paper and
author pages, related papers, /search) keep the limit each statement would have had through
`db.execute`, and meet its end as Datasette's own queries do: QueryInterrupted.
"""

import sqlite3
import time
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
    started = time.perf_counter()
    try:
        with sqlite_timelimit(conn, ms):
            yield
    except sqlite3.OperationalError as error:
        if interrupted(error, (time.perf_counter() - started) * 1000, ms):
            raise QueryInterrupted(error, sql, params or {}) from error
        raise


def interrupted(error: sqlite3.OperationalError, elapsed_ms: float, ms: int) -> bool:
    """Whether the time limit stopped the statement: SQLite's 'interrupted', or, once the limit
    has passed, 'vtable constructor failed: papers_fts', what SQLite says instead when the
    interrupt comes while FTS5 opens its table (its first statement on a connection; under
    load, a page then failed with a 500 instead of "took too long")."""
    if error.args == ("interrupted",):
        return True
    return str(error).startswith("vtable constructor failed") and elapsed_ms >= ms


def open_virtual_tables(conn: sqlite3.Connection) -> None:
    """Have SQLite open each virtual table of the database (FTS5's papers_fts, authors_fts, the
    vocabulary table) on a new connection, before any time limit applies. SQLite opens one the
    first time a statement of the connection names it, reading its configuration with
    statements of its own; an interrupt then ends the construction ('vtable constructor
    failed'), which Datasette's own queries report as an error, not as the time limit (a 500
    under load just after a worker starts). Opened once, a table stays open for the connection's
    life (a served catalog's schema never changes)."""
    names = conn.execute(
        "select name from sqlite_master where type = 'table' and sql like 'create virtual table%'"
    ).fetchall()
    for (name,) in names:
        conn.execute(f"select 1 from [{name}] where 0").fetchall()
