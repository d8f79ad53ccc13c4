"""The build as an ETag: browsers and any cache in front revalidate and get a 304.

The catalog never changes under a running server (a rebuild starts new workers), so every
successful GET answer is fixed by two things: the build and the site's own files. Their
fingerprint is the ETag of every 200; a request whose If-None-Match names it gets a 304 without
the page being built. `Cache-Control: no-cache` makes clients ask every time, so a rebuild is
seen at once and no page older than one already seen is shown from a browser's cache.
"""

from collections.abc import Sequence

from loader.web.asgi_types import ASGIApp, Header, Message, Receive, Scope, Send
from loader.web.request_scope import header, is_personal

REVALIDATE = b"no-cache"
# what Datasette says and we keep: its own static files and anything per visitor
KEPT_CACHE_CONTROL = (b"immutable", b"private", b"no-store")


def etag_value(fingerprint: str) -> bytes:
    # weak: the gzip and the identity body of one page are the same page, not the same bytes
    return f'W/"{fingerprint}"'.encode()


def matches(if_none_match: bytes, etag: bytes) -> bool:
    """If-None-Match with weak comparison (RFC 9110 13.1.2): a list of tags, or *."""
    wanted = etag.removeprefix(b"W/")
    for tag in if_none_match.split(b","):
        tag = tag.strip()
        if tag == b"*" or tag.removeprefix(b"W/") == wanted:
            return True
    return False


class BuildETag:
    """ASGI wrapper: tag 200 answers to GET and HEAD, answer 304 to a matching If-None-Match."""

    def __init__(self, app: ASGIApp, fingerprint: str) -> None:
        self.app = app
        self.etag = etag_value(fingerprint)

    async def __call__(self, scope: Scope, receive: Receive, send: Send) -> None:
        if scope["type"] != "http" or scope["method"] not in ("GET", "HEAD") or is_personal(scope):
            await self.app(scope, receive, send)
            return
        if_none_match = header(scope, b"if-none-match")
        if if_none_match is not None and matches(if_none_match, self.etag):
            headers = [(b"etag", self.etag), (b"cache-control", REVALIDATE)]
            await send({"type": "http.response.start", "status": 304, "headers": headers})
            await send({"type": "http.response.body", "body": b""})
            return

        async def send_tagged(message: Message) -> None:
            if message["type"] == "http.response.start" and message["status"] == 200:
                message = dict(message, headers=self.tagged(message.get("headers", [])))
            await send(message)

        await self.app(scope, receive, send_tagged)

    def tagged(self, headers: Sequence[Header]) -> Sequence[Header]:
        names = {name.lower() for name, _ in headers}
        if b"set-cookie" in names:
            return headers  # a cookie is for one visitor: no shared validator
        cache_control = b",".join(v for n, v in headers if n.lower() == b"cache-control")
        if any(word in cache_control for word in KEPT_CACHE_CONTROL):
            return [*headers, (b"etag", self.etag)]
        kept = [(n, v) for n, v in headers if n.lower() not in (b"cache-control", b"etag")]
        return [*kept, (b"etag", self.etag), (b"cache-control", REVALIDATE)]
