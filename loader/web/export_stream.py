"""A streamed download that fails as a download: an error after its first byte aborts it, an
error before it is an error answer.

Datasette's AsgiStream ends a response normally whatever its stream function does: an export
cut short by an error was a 200 whose end looked like any other end (a table CSV ended in the
error's text, and an error Datasette turned into its error page put that HTML after the CSV
lines). A browser then saves a broken file as a finished download. Here the answer starts as
usual, and an error once it has started is logged and ends the answer without its last
message: uvicorn then closes the connection without the final chunk of the chunked body, so
curl reports a partial transfer (exit 18), a browser a failed download, and nothing in between
(the response cache, loader/serve/response_cache.py) keeps the answer, which never completed.

The client leaving ends the stream too: uvicorn drops what is sent to a closed connection
without telling the app, so a download of a million papers abandoned after its first rows
would otherwise be read to its end. The disconnect comes through `receive`, watched while the
stream runs.
"""

import asyncio
import logging
from collections.abc import Awaitable, Callable, Mapping
from typing import Any

from datasette.database import QueryInterrupted

log = logging.getLogger("paper_catalog.exports")

Message = dict[str, Any]
Send = Callable[[Message], Awaitable[None]]
Receive = Callable[[], Awaitable[Message]]


class ClientLeft(Exception):
    """The client closed the connection: nobody reads what the stream would write."""


class StreamStopped(Exception):
    """A stream that cannot go on (its next page would repeat what it has sent): logged in one
    line, then the transfer is aborted like any error."""


class DownloadRefused(Exception):
    """An error with the status and the short message to answer when nothing is sent yet."""

    def __init__(self, message: str, status: int = 400) -> None:
        super().__init__(message)
        self.message = message
        self.status = status


class StreamWriter:
    """What a stream function writes to: text (UTF-8) or bytes, each write one body message."""

    def __init__(self, send: Send, left: asyncio.Event, start: Message) -> None:
        self.send = send
        self.left = left
        self.start: Message | None = start
        self.bytes_sent = 0

    async def write(self, chunk: str | bytes) -> None:
        if self.left.is_set():
            raise ClientLeft
        body = chunk.encode("utf-8") if isinstance(chunk, str) else chunk
        await self.begin()
        await self.send({"type": "http.response.body", "body": body, "more_body": True})
        self.bytes_sent += len(body)

    async def begin(self) -> None:
        """Send the start of the answer, once."""
        if self.start is not None:
            start, self.start = self.start, None
            await self.send(start)

    @property
    def started(self) -> bool:
        return self.start is None


StreamFunction = Callable[[StreamWriter], Awaitable[None]]


async def watch_for_disconnect(receive: Receive, left: asyncio.Event) -> None:
    try:
        while (await receive())["type"] != "http.disconnect":
            pass
    except Exception:  # noqa: BLE001 - a server that cannot tell: the stream runs to its end
        return
    left.set()


class AbortingStream:
    """A response (Datasette's `asgi_send` protocol, like its AsgiStream) whose body is what
    `stream_fn` writes. `description` names the download in the log (its path and query);
    `receive` is the request's, to stop when the client leaves."""

    def __init__(
        self,
        stream_fn: StreamFunction,
        *,
        description: str,
        receive: Receive | None = None,
        status: int = 200,
        headers: Mapping[str, str] | None = None,
        content_type: str = "text/plain; charset=utf-8",
    ) -> None:
        self.stream_fn = stream_fn
        self.description = description
        self.receive = receive
        self.status = status
        self.headers = dict(headers or {})
        self.content_type = content_type

    def start_message(self) -> Message:
        headers = {k: v for k, v in self.headers.items() if k.lower() != "content-type"}
        headers["content-type"] = self.content_type
        return {
            "type": "http.response.start",
            "status": self.status,
            "headers": [
                [key.encode("latin-1"), value.encode("latin-1")] for key, value in headers.items()
            ],
        }

    async def asgi_send(self, send: Send) -> None:
        left = asyncio.Event()
        watcher = None
        if self.receive is not None:
            watcher = asyncio.create_task(watch_for_disconnect(self.receive, left))
        writer = StreamWriter(send, left, self.start_message())
        try:
            await self.stream_fn(writer)
        except ClientLeft:
            return
        except Exception as error:  # noqa: BLE001 - logged, then answered or aborted
            self.log_abort(error, writer.bytes_sent)
            if not writer.started:
                await send_error(send, error)
            return
        finally:
            if watcher is not None:
                watcher.cancel()
        await writer.begin()
        await send({"type": "http.response.body", "body": b"", "more_body": False})

    def log_abort(self, error: Exception, bytes_sent: int) -> None:
        # expected on a large export (a time limit, a refused page, a stream that stops): one
        # line; anything else with its trace
        message = "download aborted after %s bytes: %s: %s"
        sent = f"{bytes_sent:,}"
        if isinstance(error, QueryInterrupted):
            log.error(message, sent, self.description, "a step passed its time limit")
        elif isinstance(error, (StreamStopped, DownloadRefused)):
            log.error(message, sent, self.description, f"{type(error).__name__}: {error}")
        else:
            reason = f"{type(error).__name__}: {error}"
            log.error(message, sent, self.description, reason, exc_info=error)


def error_answer(error: Exception) -> tuple[int, str]:
    """The status and message of a download that failed before its first byte."""
    if isinstance(error, DownloadRefused):
        return error.status, error.message
    if isinstance(error, QueryInterrupted):
        return 400, "This download took too long: add filters or choose fewer columns."
    if isinstance(error, StreamStopped):
        return 500, f"This download stopped: {error}"
    return 500, "This download failed before it started."


async def send_error(send: Send, error: Exception) -> None:
    status, message = error_answer(error)
    body = (message + "\n").encode("utf-8")
    headers = [
        [b"content-type", b"text/plain; charset=utf-8"],
        [b"content-length", str(len(body)).encode("latin-1")],
    ]
    await send({"type": "http.response.start", "status": status, "headers": headers})
    await send({"type": "http.response.body", "body": body, "more_body": False})
