"""How a worker lets go of its connections when it stops (a rebuild, or `serve` stopping), so
that a client through a rebuild sees no error.

uvicorn's own graceful shutdown closes every connection that has no request in flight at once,
and lets a request in flight finish without telling its client the connection will close.
Both lose requests on keep-alive connections: a client sends its next request as soon as a
response is complete, so a connection that looks idle to the worker may already carry a
request on the wire or in the socket's buffer, and closing it then resets it (wrk counts a
read error; a browser sees a failed request). So here, once the worker starts shutting down:

- a request in flight, and any request that arrives on an open connection, is answered with
  `Connection: close`, and the connection is closed after that answer: the client knows not
  to send another on it and opens a new connection, which waits in the listening socket's
  queue for the next build's workers;
- a response already under way (its head was sent) finishes, and its connection is then
  treated as idle;
- an idle connection stays open `DRAIN_IDLE_SECONDS`, long enough for a request already sent
  to arrive, and is closed if none did: a clean close between requests, which HTTP clients
  expect of a keep-alive connection.

uvicorn's `timeout_graceful_shutdown` (loader/serve/workers.py) bounds the whole drain: a
response still running then (a long export) is cut.
"""

import asyncio
import weakref

import h11
from uvicorn.server import ServerState

from loader.serve.connections import HeadDeadlineProtocol

# how long an idle connection is kept once the worker drains: a request its client sent
# before it could see the close arrives well within this on any network a server is used over
DRAIN_IDLE_SECONDS = 0.5
CLOSE_HEADER = (b"connection", b"close")
# the servers (their shared state) shutting down: set by the first connection told to shut
# down, so a connection accepted just before the server stopped listening drains too
DRAINING: "weakref.WeakSet[ServerState]" = weakref.WeakSet()


class DrainingProtocol(HeadDeadlineProtocol):
    """The worker's HTTP protocol: HeadDeadlineProtocol, plus the drain above."""

    # ignore[override]: uvicorn's own signature, which narrows asyncio's BaseTransport
    def connection_made(self, transport: asyncio.Transport) -> None:  # type: ignore[override]
        self.idle_close: asyncio.TimerHandle | None = None
        super().connection_made(transport)
        if self.draining and not transport.is_closing():
            self.drain()

    @property
    def draining(self) -> bool:
        return self.server_state in DRAINING

    def shutdown(self) -> None:
        """Called by uvicorn on every open connection when the worker starts shutting down."""
        DRAINING.add(self.server_state)
        self.drain()

    def drain(self) -> None:
        if self.transport.is_closing():
            return
        if self.cycle is not None and not self.cycle.response_complete:
            if not self.cycle.response_started:
                self.answer_then_close()
            # else the response finishes, then on_response_complete arms the idle close
        elif self.is_idle():
            self.arm_idle_close()

    def handle_events(self) -> None:
        super().handle_events()
        # a request that arrived while draining (or was waiting behind a pipelined one)
        if (
            self.draining
            and self.cycle is not None
            and not self.cycle.response_started
            and not self.transport.is_closing()
        ):
            self.answer_then_close()

    def on_response_complete(self) -> None:
        super().on_response_complete()
        if self.draining and not self.transport.is_closing() and self.is_idle():
            self.arm_idle_close()

    def connection_lost(self, exc: Exception | None) -> None:
        self.cancel_idle_close()
        super().connection_lost(exc)

    def answer_then_close(self) -> None:
        """The cycle's response says `Connection: close`; h11 then closes after it."""
        assert self.cycle is not None
        if CLOSE_HEADER not in self.cycle.default_headers:
            self.cycle.default_headers = [*self.cycle.default_headers, CLOSE_HEADER]
        self.cycle.keep_alive = False
        self.cancel_idle_close()

    def is_idle(self) -> bool:
        """No request in flight, and not a byte of the next one received."""
        in_flight = self.cycle is not None and not self.cycle.response_complete
        return (
            not in_flight and self.conn.their_state is h11.IDLE and not self.conn.trailing_data[0]
        )

    def arm_idle_close(self) -> None:
        self.cancel_idle_close()
        self.idle_close = self.loop.call_later(DRAIN_IDLE_SECONDS, self.close_if_idle)

    def cancel_idle_close(self) -> None:
        if self.idle_close is not None:
            self.idle_close.cancel()
            self.idle_close = None

    def close_if_idle(self) -> None:
        self.idle_close = None
        # a request that began arriving meanwhile is answered with `Connection: close` instead
        if self.is_idle() and not self.transport.is_closing():
            self.transport.close()
