"""What a worker reads once from the served catalog and keeps for its life (the facet counts'
arrays, the papers' ranks in id order): read in a thread of its own on first use, so no request
waits for it; until it is read, and for good if it cannot be, the pages do without it."""

import asyncio
import weakref
from collections.abc import Callable
from typing import TYPE_CHECKING, Any, Generic, TypeVar

if TYPE_CHECKING:
    from datasette.database import Database

Kept = TypeVar("Kept")

# every ReadOnce of this process, for all_read()
_everything: "weakref.WeakSet[ReadOnce[Any]]" = weakref.WeakSet()


class ReadOnce(Generic[Kept]):
    """`read(path, *arguments)` of an immutable catalog, once per Database."""

    def __init__(self, read: Callable[..., Kept | None]) -> None:
        self.read = read
        self.futures: weakref.WeakKeyDictionary[Database, asyncio.Future[Kept | None]]
        self.futures = weakref.WeakKeyDictionary()
        _everything.add(self)

    def get(self, db: "Database", *arguments: Any) -> Kept | None:
        """What was read, or None until it is (the first call starts the read) and for a
        database that may change or has no file."""
        if db.path is None or db.is_mutable:
            return None
        if db not in self.futures:
            loop = asyncio.get_running_loop()
            self.futures[db] = loop.run_in_executor(None, self.read, db.path, *arguments)
        return self.read_already(db)

    def read_already(self, db: "Database") -> Kept | None:
        """What was read for `db`, or None when no read has finished (none is started)."""
        future = self.futures.get(db)
        if future is not None and future.done() and future.exception() is None:
            return future.result()
        return None

    async def loaded(self, db: "Database", *arguments: Any) -> Kept | None:
        """get(), waiting for the read to finish."""
        self.get(db, *arguments)
        future = self.futures.get(db)
        if future is not None:
            await asyncio.wait([future])
        return self.get(db, *arguments)


async def all_read() -> None:
    """Wait for every read started in this process (a benchmark measures the steady state)."""
    futures = [future for kept in list(_everything) for future in kept.futures.values()]
    if futures:
        await asyncio.wait(futures)
