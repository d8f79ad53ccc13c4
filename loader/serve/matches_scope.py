"""Each HTTP request keeps the search matches it reads until its end
(loader/web/request_matches.py): its count and facet boxes reuse its first page's read."""

from loader.serve.asgi_types import ASGIApp, Receive, Scope, Send
from loader.web.request_matches import one_read_per_request


class OneReadPerRequest:
    """ASGI middleware around Datasette: the matches a request reads are its own, dropped at its
    end (a context variable: the request's task and the tasks it starts see it)."""

    def __init__(self, app: ASGIApp) -> None:
        self.app = app

    async def __call__(self, scope: Scope, receive: Receive, send: Send) -> None:
        if scope["type"] != "http":
            await self.app(scope, receive, send)
            return
        with one_read_per_request():
            await self.app(scope, receive, send)
