"""Renderings of a paper's stored text kept per worker, bounded in bytes.

A table page renders each row's abstract (markup, math as MathML, sanitized) and its author and
affiliation links on every request, though they depend only on the stored text, which never
changes under a running worker. Searches list the same papers again and again (a common word
matches thousands, and a page shows the first 26 in id order), so each worker keeps what it
rendered, least recently used out first: a paper is rendered once, not once a page.
"""

from collections import OrderedDict
from collections.abc import Callable, Hashable

# bytes an entry costs besides its strings: the key tuple, the dict slot, the Markup object
ENTRY_OVERHEAD = 200


class KeptRenderings:
    """render(*key), remembered by key within max_bytes (strings counted by length); a None
    rendering is not kept."""

    def __init__(self, render: Callable[..., str | None], max_bytes: int) -> None:
        self.render = render
        self.max_bytes = max_bytes
        # key -> (rendering, bytes)
        self.entries: OrderedDict[tuple[Hashable, ...], tuple[str, int]] = OrderedDict()
        self.size = 0

    def __call__(self, *key: Hashable) -> str | None:
        found = self.kept(*key)
        if found is not None:
            return found
        return self.keep(key, self.render(*key))

    def kept(self, *key: Hashable) -> str | None:
        """The rendering kept for `key`, or None."""
        found = self.entries.get(key)
        if found is None:
            return None
        self.entries.move_to_end(key)
        return found[0]

    def keep(self, key: tuple[Hashable, ...], rendering: str | None) -> str | None:
        """Keep a rendering made elsewhere (one that needed a query first); returns it."""
        if rendering is None:
            return None
        size = ENTRY_OVERHEAD + len(rendering) + sum(len(k) for k in key if isinstance(k, str))
        if size <= self.max_bytes // 16:  # one huge abstract does not empty the rest
            self.entries[key] = (rendering, size)
            self.size += size
            while self.size > self.max_bytes:
                _, (_, dropped) = self.entries.popitem(last=False)
                self.size -= dropped
        return rendering
