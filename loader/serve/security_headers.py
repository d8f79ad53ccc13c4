"""The security headers of every answer the served site sends.

Outside the ETag and the response cache, so a 304 and an answer from memory carry them as a
fresh page does. Each replaces any header of its name from inside (Datasette sends its own
Referrer-Policy on some pages):

- Content-Security-Policy: only the site itself, and the inline scripts of the templates it
  serves (loader/web/content_policy.py); no page may frame the site;
- X-Frame-Options: DENY, for browsers that do not read frame-ancestors;
- X-Content-Type-Options: nosniff: a CSV or JSON answer is never run as a script or a page;
- Referrer-Policy: no-referrer: a search URL never leaves the site in a Referer header.

The policy is read from Datasette's templates once they are in place (its startup hooks install
the site's edits), before the first answer. The answers the HTTP protocol writes itself, never
reaching the app (the 503 of the connection cap, the 400 for a request that is not HTTP:
loader/serve/connections.py), carry BARE_ANSWER_HEADERS: the same headers with a policy that
allows nothing, since such an answer is a line of plain text.
"""

import asyncio
from typing import TYPE_CHECKING

from loader.web.asgi_types import ASGIApp, Header, Message, Receive, Scope, Send
from loader.web.content_policy import content_security_policy

if TYPE_CHECKING:
    from datasette.app import Datasette

FIXED_HEADERS = (
    (b"x-frame-options", b"DENY"),
    (b"x-content-type-options", b"nosniff"),
    (b"referrer-policy", b"no-referrer"),
)
CONTENT_SECURITY_POLICY = b"content-security-policy"
REPLACED = {CONTENT_SECURITY_POLICY, *(name for name, _ in FIXED_HEADERS)}
BARE_ANSWER_HEADERS = (
    (CONTENT_SECURITY_POLICY, b"default-src 'none'; frame-ancestors 'none'"),
    *FIXED_HEADERS,
)


class SecurityHeaders:
    """ASGI wrapper: the site's security headers on every HTTP answer."""

    def __init__(self, app: ASGIApp, datasette: "Datasette") -> None:
        self.app = app
        self.datasette = datasette
        self.headers: list[Header] | None = None
        self.lock = asyncio.Lock()

    async def prepare(self) -> list[Header]:
        """The headers, with the policy of the started Datasette's templates (read once)."""
        async with self.lock:
            if self.headers is None:
                await self.datasette.invoke_startup()
                policy = (await content_security_policy(self.datasette)).encode("ascii")
                self.headers = [(CONTENT_SECURITY_POLICY, policy), *FIXED_HEADERS]
        return self.headers

    async def __call__(self, scope: Scope, receive: Receive, send: Send) -> None:
        if scope["type"] != "http":
            await self.app(scope, receive, send)
            return
        headers = self.headers or await self.prepare()

        async def send_with_headers(message: Message) -> None:
            if message["type"] == "http.response.start":
                kept = [
                    (name, value)
                    for name, value in message.get("headers", [])
                    if name.lower() not in REPLACED
                ]
                message = dict(message, headers=[*kept, *headers])
            await send(message)

        await self.app(scope, receive, send_with_headers)
