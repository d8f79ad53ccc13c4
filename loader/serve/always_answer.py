"""Every request gets an answer from the site, even one the app inside failed to start.

A layer inside can end a request without ever sending `http.response.start`: gzip holds the
start of an answer until its first body bytes, and a CSV stream whose second page passed the
time limit before 64 KB were sent returned with nothing sent at all. uvicorn then answers with
a bare 500 of its own, without the site's security headers; an exception raised before the
answer started meets the same bare 500. Here such a request gets a short plain-text 500 instead,
inside loader/serve/security_headers.py so it carries the same headers as every other answer,
and the failure is logged with the request's path.

An answer that has started cannot be replaced: an exception after its start goes on to uvicorn,
which closes the connection (an aborted transfer, as for any other mid-stream error), and an app
that returns with its body unfinished is closed the same way by uvicorn.
"""

import logging

from loader.web.asgi_types import ASGIApp, Message, Receive, Scope, Send

FAILURE_STATUS = 500
FAILURE_BODY = b"Server error: this request could not be answered. Try again later.\n"
FAILURE_HEADERS = (
    (b"content-type", b"text/plain; charset=utf-8"),
    (b"content-length", str(len(FAILURE_BODY)).encode("ascii")),
)

logger = logging.getLogger("uvicorn.error")


async def send_failure(send: Send) -> None:
    await send(
        {"type": "http.response.start", "status": FAILURE_STATUS, "headers": FAILURE_HEADERS}
    )
    await send({"type": "http.response.body", "body": FAILURE_BODY, "more_body": False})


class AlwaysAnswer:
    """ASGI wrapper: a short 500 for an HTTP request the app leaves without starting an
    answer, whether it returns or raises."""

    def __init__(self, app: ASGIApp) -> None:
        self.app = app

    async def __call__(self, scope: Scope, receive: Receive, send: Send) -> None:
        if scope["type"] != "http":
            await self.app(scope, receive, send)
            return
        started = False

        async def watched_send(message: Message) -> None:
            nonlocal started
            if message["type"] == "http.response.start":
                started = True
            await send(message)

        try:
            await self.app(scope, receive, watched_send)
        except Exception:
            if started:
                raise
            logger.exception("Exception before an answer started: %s", scope.get("path"))
        else:
            if started:
                return
            logger.error("The app returned without starting an answer: %s", scope.get("path"))
        await send_failure(send)
