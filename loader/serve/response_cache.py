"""A per-worker cache of whole answers to repeated GETs, bounded in bytes.

Safe because a worker serves one immutable build: the same URL gives the same page until the
worker is replaced, and a rebuild replaces every worker (and so every cache). Only complete 200
answers sent in one piece are kept: never an error, a time-limited partial page's status, a
stream (CSV exports come in many pieces), an answer that sets a cookie, a page that left
something out past a time limit (http_scope.mark_incomplete), or anything for a signed-in actor. The key is the full URL and whether the client takes gzip, since the cache sits
outside the compression. Requests for a page that is being built wait for it instead of building
it again: a popular page asked by many visitors at once costs one build, not one each.
"""

import asyncio
from collections import OrderedDict

from loader.web.asgi_types import ASGIApp, Message, Receive, Scope, Send
from loader.web.request_scope import INCOMPLETE, header, is_personal

# bytes an entry costs besides its body and headers: the key, the tuples, the dict slot
ENTRY_OVERHEAD = 400
# what tells two requests apart: scheme, host, root path, raw path, query, takes gzip
CacheKey = tuple[str, bytes | None, str, bytes, bytes, bool]
# a kept answer: its start message, its body and what it costs in bytes
Answer = tuple[Message, bytes, int]


def cache_key(scope: Scope) -> CacheKey:
    accepts_gzip = b"gzip" in (header(scope, b"accept-encoding") or b"")
    return (
        scope["scheme"],
        header(scope, b"host"),
        scope.get("root_path", ""),
        scope["raw_path"],
        scope["query_string"],
        accepts_gzip,
    )


class ResponseCache:
    """ASGI wrapper: answer a repeated GET from memory, least recently used out first."""

    def __init__(self, app: ASGIApp, max_bytes: int, max_entry_bytes: int | None = None) -> None:
        self.app = app
        self.max_bytes = max_bytes
        self.max_entry_bytes = max_entry_bytes or max_bytes // 16
        self.entries: OrderedDict[CacheKey, Answer] = OrderedDict()
        self.size = 0
        # key -> Event set when the first request for it is answered
        self.building: dict[CacheKey, asyncio.Event] = {}

    async def __call__(self, scope: Scope, receive: Receive, send: Send) -> None:
        if scope["type"] != "http" or scope["method"] != "GET" or is_personal(scope):
            await self.app(scope, receive, send)
            return
        key = cache_key(scope)
        building = self.building.get(key)
        if building is not None:
            await building.wait()
        if await self.answer_from_memory(key, send):
            return
        if building is not None:
            # the first answer could not be kept (an error, a stream): build our own
            await self.app(scope, receive, send)
            return
        built = self.building[key] = asyncio.Event()
        try:
            await self.build(key, scope, receive, send, built)
        finally:
            del self.building[key]
            built.set()

    async def answer_from_memory(self, key: CacheKey, send: Send) -> bool:
        entry = self.entries.get(key)
        if entry is None:
            return False
        self.entries.move_to_end(key)
        start, body, _ = entry
        await send(start)
        await send({"type": "http.response.body", "body": body})
        return True

    async def build(
        self, key: CacheKey, scope: Scope, receive: Receive, send: Send, built: asyncio.Event
    ) -> None:
        """Answer through the app, keeping the answer if it may be kept; `built` is set as soon
        as waiting requests can tell (kept, or not keepable), before a slow client is served."""
        recorded: dict[str, Message] = {}
        incomplete: list[str] = []  # request_scope.mark_incomplete adds to it
        scope = {**scope, INCOMPLETE: incomplete}

        async def send_recording(message: Message) -> None:
            if message["type"] == "http.response.start":
                if keepable(message):
                    recorded["start"] = message
                else:
                    built.set()
            elif message["type"] == "http.response.body" and "start" in recorded:
                if message.get("more_body", False) or incomplete:
                    recorded.clear()  # a stream, or a page cut short: never kept
                else:
                    self.store(key, recorded.pop("start"), message.get("body", b""))
                built.set()
            await send(message)

        await self.app(scope, receive, send_recording)

    def store(self, key: CacheKey, start: Message, body: bytes) -> None:
        cost = len(body) + sum(len(n) + len(v) for n, v in start["headers"]) + ENTRY_OVERHEAD
        # the key too: a long query string with a small answer is mostly key
        cost += sum(len(part) for part in key[1:5] if part)
        if cost > self.max_entry_bytes:
            return
        old = self.entries.pop(key, None)
        if old is not None:
            self.size -= old[2]
        # a copy: wrappers outside may edit the header list of the message they were sent
        self.entries[key] = (dict(start, headers=list(start["headers"])), body, cost)
        self.size += cost
        while self.size > self.max_bytes:
            _, (_, _, evicted) = self.entries.popitem(last=False)
            self.size -= evicted


def keepable(start: Message) -> bool:
    if start["status"] != 200:
        return False
    return not any(name.lower() == b"set-cookie" for name, _ in start.get("headers", []))
