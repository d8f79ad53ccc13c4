"""The papers' full-text index, written by a thread into a side database while the writer
fills the catalog, then copied in.

FTS5 keeps an external-content index in four shadow tables and reads nothing else while rows
are added or taken out by value, its segments merged (optimize) and its structure checked
(integrity-check, rank 0), so all of that can run on a database of its own. SQLite releases
the GIL while it tokenizes and merges: the thread's connection uses the core the serial end
of a build otherwise leaves idle (the writer counts papers and builds indexes meanwhile).
Copied row for row into the catalog's empty shadow tables, the index is the one the writer
would have built in place (tests/test_build.py matches it against a rebuild). Companions,
other indexes over the same rows (the search vocabulary's words, vocabulary.py), are fed the
same rows and removals on the same thread, finished after the merge and copied in with it.
"""

import collections
import concurrent.futures
import sqlite3
from collections.abc import Callable, Iterable, Sequence
from typing import Protocol

SHADOW_TABLES = ("data", "idx", "docsize", "config")
# batches given to the thread and not yet indexed: the writer waits beyond this (memory)
MAX_PENDING = 2
# the side file's page cache: its pages are written once, in order, and read once by the
# merge; the OS file cache does the rest
SIDE_CACHE_KB = 4096
# an FTS5 configuration option and its value, as `insert into t (t, rank) values (?, ?)` sets it
Setting = tuple[str, int]
# (rowid, *columns) of one row to index, or ("delete", rowid, *columns) to take out
IndexRow = Sequence[object]


class Companion(Protocol):
    """An index over the rows the full-text index is given, made in the side database: created
    with the index, given every row and removal (by the FTS5 `delete` command, with the
    text), finished by the thread once the last rows are in, then copied into the catalog."""

    name: str  # its FTS5 table in the side database

    def create(
        self, connection: sqlite3.Connection, columns: Sequence[str], settings: Sequence[Setting]
    ) -> None: ...

    def finish(self, connection: sqlite3.Connection) -> None: ...

    def copy_into(self, connection: sqlite3.Connection, schema: str) -> None: ...


class CatalogCheckFailed(Exception):
    """The new catalog failed an integrity check: a SQLite or disk fault, not bad input."""


class SideIndex:
    """The full-text index `name` (an external-content FTS5 table) built in a side database
    at `path` by one thread, in the order the calls come.

    The thread starts with the first rows: after the parsing workers are forked (prepare.py
    forks only while no other thread runs). Call define() first, complete() once all rows
    are given, then copy_into() and checked(); close() whatever happens."""

    def __init__(
        self,
        path: str,
        name: str,
        page_size: int,
        build_settings: Sequence[Setting] = (),
        companions: Sequence[Companion] = (),
    ) -> None:
        """`build_settings`: FTS5 settings only for building (dropped after the merge), the
        companions' too."""
        self.path = path
        self.name = name
        self.page_size = page_size
        self.build_settings = build_settings
        self.companions = companions
        self.columns: Sequence[str] = ()
        self.sql: str | None = None
        self.settings: Sequence[Setting] = ()
        self.executor: concurrent.futures.ThreadPoolExecutor | None = None
        self.pending: collections.deque[concurrent.futures.Future[None]] = collections.deque()
        # complete()'s structural check, awaited apart from the batches
        self.check: concurrent.futures.Future[None] | None = None
        self.connection: sqlite3.Connection | None = None  # the thread's own

    def define(self, sql: str, columns: Sequence[str], settings: Sequence[Setting]) -> None:
        """The catalog's `create virtual table` statement, its columns and the FTS5 settings
        it keeps."""
        self.sql, self.columns, self.settings = sql, columns, settings

    def thread(self) -> concurrent.futures.ThreadPoolExecutor:
        """The index's thread, started by the first task, which opens the side database."""
        if self.executor is None:
            self.executor = concurrent.futures.ThreadPoolExecutor(1, "full-text")
            self.pending.append(self.executor.submit(self.open))
        return self.executor

    def submit(self, function: Callable[..., None], *args: object) -> None:
        self.pending.append(self.thread().submit(function, *args))
        while len(self.pending) > MAX_PENDING:
            self.pending.popleft().result()  # raises the thread's error here

    def wait(self) -> None:
        while self.pending:
            self.pending.popleft().result()

    def open_connection(self) -> sqlite3.Connection:
        """The thread's connection, for the tasks that follow open()."""
        if self.connection is None:
            raise RuntimeError(f"{self.name}: the side database is not open")
        return self.connection

    def open(self) -> None:
        if self.sql is None:
            raise RuntimeError(f"{self.name}: define() must come before the first rows")
        self.connection = sqlite3.connect(self.path, isolation_level=None)
        for pragma in (
            # the catalog's: a block of the index fills a page (no overflow pages to follow)
            f"page_size = {self.page_size}",
            "journal_mode = off",
            "synchronous = off",
            f"cache_size = -{SIDE_CACHE_KB}",
        ):
            self.connection.execute(f"pragma {pragma}")
        self.connection.execute("begin")
        self.connection.execute(self.sql)
        self.connection.executemany(
            f"insert into {self.name} ({self.name}, rank) values (?, ?)",
            (*self.settings, *self.build_settings),
        )
        for companion in self.companions:
            companion.create(self.connection, self.columns, self.build_settings)

    def add(self, columns: Sequence[str], rows: Sequence[IndexRow]) -> None:
        """Index rows of (rowid, *columns): in rowid order, each rowid once."""
        self.submit(self.insert, columns, rows)

    def remove(self, columns: Sequence[str], rows: Iterable[IndexRow]) -> None:
        """Take rows of (rowid, *columns) out, with the text they were indexed with."""
        self.submit(self.insert, columns, [("delete", *row) for row in rows], True)

    def insert(
        self, columns: Sequence[str], rows: Sequence[IndexRow], command: bool = False
    ) -> None:
        names = ", ".join(columns)
        values = ", ".join("?" * len(columns))
        for table in (self.name, *(companion.name for companion in self.companions)):
            if command:
                sql = f"insert into {table} ({table}, rowid, {names}) values (?, ?, {values})"
            else:
                sql = f"insert into {table} (rowid, {names}) values (?, {values})"
            self.open_connection().executemany(sql, rows)

    def complete(self) -> None:
        """Merge the segments into one and drop the build settings, finish the companions,
        then check the structure; the writer goes on meanwhile. copy_into() waits for the
        merge and the companions only: the check, longer than the merge, reads the side
        database while the writer copies it and runs ANALYZE and quick_check; checked()
        gives its verdict."""
        self.submit(self.merge)
        self.check = self.thread().submit(self.check_structure)

    def merge(self) -> None:
        execute = self.open_connection().execute
        execute(f"insert into {self.name} ({self.name}) values ('optimize')")
        execute(
            f"delete from {self.name}_config where k in ({', '.join('?' * len(self.build_settings))})",
            [key for key, _ in self.build_settings],
        )
        for companion in self.companions:
            companion.finish(self.open_connection())
        execute("commit")

    def check_structure(self) -> None:
        check_full_text_index(self.open_connection(), self.name)
        self.open_connection().close()
        self.connection = None

    def checked(self) -> None:
        """Wait for the structural check; raises CatalogCheckFailed if the index failed it."""
        if self.check is None:
            raise RuntimeError(f"{self.name}: complete() must come before checked()")
        self.check.result()

    def copy_into(self, connection: sqlite3.Connection) -> None:
        """Wait for the thread, then replace the rows of the catalog's shadow tables (the
        empty index its create wrote) with the side database's. `connection` must be outside
        a transaction (ATTACH)."""
        self.wait()
        connection.execute("attach database ? as full_text", [self.path])
        try:
            with connection:
                for table in SHADOW_TABLES:
                    shadow = f"{self.name}_{table}"
                    connection.execute(f"delete from main.{shadow}")
                    # the same table into an empty one: SQLite copies the records as they are
                    connection.execute(
                        f"insert into main.{shadow} select * from full_text.{shadow}"
                    )
                for companion in self.companions:
                    companion.copy_into(connection, "full_text")
        finally:
            connection.execute("detach database full_text")

    def close(self) -> None:
        """Stop the thread (after what it is doing) and close its connection."""
        if self.executor is None:
            return
        for future in (*self.pending, self.check):
            if future is not None:
                future.cancel()
        self.pending.clear()
        self.executor.submit(self.close_connection)
        self.executor.shutdown(wait=True)

    def close_connection(self) -> None:
        if self.connection is not None:
            self.connection.close()
            self.connection = None


def check_full_text_index(connection: sqlite3.Connection, name: str) -> None:
    """FTS5's integrity-check of the index's own structure: every segment read, without
    tokenizing every row again to match it against its content (rank 1, which costs much
    more)."""
    try:
        connection.execute(f"insert into {name} ({name}, rank) values ('integrity-check', 0)")
    except sqlite3.DatabaseError as error:
        raise CatalogCheckFailed(f"full-text index integrity-check: {error}") from error
