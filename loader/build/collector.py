"""Python's cyclic garbage collector paused around work that makes many objects and no cycles:
its passes would walk every object the build holds, again and again."""

import contextlib
import gc
from collections.abc import Iterator


@contextlib.contextmanager
def collector_paused(paused: bool = True, collect_after: bool = False) -> Iterator[None]:
    """The collector off while `paused` (as it was if someone else turned it off), on again
    after, then one collection when `collect_after`."""
    if not paused or not gc.isenabled():
        yield
        return
    gc.disable()
    try:
        yield
    finally:
        gc.enable()
        if collect_after:
            gc.collect()
