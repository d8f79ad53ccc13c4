"""How long a connection may take to ask, and how many one worker holds.

uvicorn's `timeout_keep_alive` is armed only after a response and cancelled by any byte that
arrives, so a client that connects and says nothing, or sends one header byte a second, keeps its
socket (and a file descriptor) for ever: enough of them and the worker cannot accept anyone. Here
every connection gets `timeout_keep_alive` seconds to send each complete request head, counted
from the moment it is accepted or its previous response is done, however the bytes trickle in.

A worker also refuses connections beyond a cap below its descriptor limit with an immediate 503,
so a flood turns into quick refusals and the worker never reaches "Too many open files" (which
asyncio answers by logging a traceback and pausing accept()). uvicorn's own `limit_concurrency`
counts idle connections too: under an idle flood it would answer 503 to requests on connections
that are already open, so the cap is enforced here, where a connection is made.
"""

import asyncio
import logging
import resource
import time

import h11
from uvicorn.protocols.http.h11_impl import H11Protocol

from loader.serve.security_headers import BARE_ANSWER_HEADERS

# descriptors a worker needs besides client sockets: SQLite files (one per SQL thread), the
# listening socket, pipes to the supervisor, log files, imported modules
RESERVED_DESCRIPTORS = 64
# asyncio accepts up to `backlog` sockets each time the listener is readable, and a socket is
# counted here only two loop turns after its accept(): room for three batches stays free
ACCEPT_BATCH = 128
UNCOUNTED_DESCRIPTORS = 3 * ACCEPT_BATCH
# beyond this a reverse proxy should hold the crowd (docs/serving.md): every held connection
# costs the worker memory in Python objects
MAX_CONNECTIONS_PER_WORKER = 4096
PLAIN_TEXT = (b"content-type", b"text/plain; charset=utf-8")
CLOSE = (b"connection", b"close")
BUSY_RESPONSE = h11.Connection(h11.SERVER).send(
    h11.Response(
        status_code=503,
        reason=b"Service Unavailable",
        headers=[PLAIN_TEXT, (b"retry-after", b"1"), CLOSE, (b"content-length", b"20")]
        + list(BARE_ANSWER_HEADERS),
    )
) + (b"Too many connections")
LOG_INTERVAL_SECONDS = 10.0

logger = logging.getLogger("uvicorn.error")


def raise_descriptor_limit() -> None:
    """Take the descriptors the cap wants, up to the hard limit (as nginx's
    worker_rlimit_nofile does): a soft limit of 1024 would otherwise cap a worker at 576."""
    soft, hard = resource.getrlimit(resource.RLIMIT_NOFILE)
    wanted = MAX_CONNECTIONS_PER_WORKER + RESERVED_DESCRIPTORS + UNCOUNTED_DESCRIPTORS
    if soft != resource.RLIM_INFINITY and soft < wanted:
        target = wanted if hard == resource.RLIM_INFINITY else min(hard, wanted)
        resource.setrlimit(resource.RLIMIT_NOFILE, (max(soft, target), hard))


def connection_cap() -> int:
    """How many client sockets one worker may hold without accept() failing for descriptors."""
    soft, _ = resource.getrlimit(resource.RLIMIT_NOFILE)
    if soft == resource.RLIM_INFINITY:
        return MAX_CONNECTIONS_PER_WORKER
    free = soft - RESERVED_DESCRIPTORS - UNCOUNTED_DESCRIPTORS
    return max(1, min(MAX_CONNECTIONS_PER_WORKER, free))


class HeadDeadlineProtocol(H11Protocol):
    """uvicorn's h11 protocol, plus a deadline on each request head and a connection cap."""

    # per worker process, from its descriptor limit at first use
    max_connections: int | None = None
    refused = 0
    refused_logged_at = 0.0

    # ignore[override]: uvicorn's own signature, which narrows asyncio's BaseTransport
    def connection_made(self, transport: asyncio.Transport) -> None:  # type: ignore[override]
        super().connection_made(transport)
        self.head_deadline: asyncio.TimerHandle | None = None
        cls = type(self)
        if cls.max_connections is None:
            cls.max_connections = connection_cap()
        if len(self.connections) > cls.max_connections:
            self.refuse()
            return
        self.arm_head_deadline()

    def refuse(self) -> None:
        self.transport.write(BUSY_RESPONSE)
        self.transport.close()
        cls = type(self)
        cls.refused += 1
        now = time.monotonic()
        # one line per interval, however hard the flood: the log must not fill the disk
        if now - cls.refused_logged_at >= LOG_INTERVAL_SECONDS:
            cls.refused_logged_at = now
            logger.warning(
                "%d connections refused: over %d open in this worker",
                cls.refused,
                cls.max_connections,
            )
            cls.refused = 0

    def send_400_response(self, msg: str) -> None:
        """uvicorn's answer to bytes that are not an HTTP request, with the security headers
        (uvicorn writes it itself: it never reaches the app and its wrappers)."""
        headers = [PLAIN_TEXT, CLOSE, *BARE_ANSWER_HEADERS]
        response = h11.Response(status_code=400, headers=headers, reason=b"Bad Request")
        self.transport.write(self.conn.send(response))
        self.transport.write(self.conn.send(h11.Data(data=msg.encode("ascii"))))
        self.transport.write(self.conn.send(h11.EndOfMessage()))
        self.transport.close()

    def data_received(self, data: bytes) -> None:
        super().data_received(data)
        if self.conn.their_state is not h11.IDLE:
            self.cancel_head_deadline()  # the head is complete: the request is being answered

    def on_response_complete(self) -> None:
        super().on_response_complete()
        # pipelined requests may already have started the next cycle
        if not self.transport.is_closing() and self.conn.their_state is h11.IDLE:
            self.arm_head_deadline()

    def connection_lost(self, exc: Exception | None) -> None:
        self.cancel_head_deadline()
        super().connection_lost(exc)

    def arm_head_deadline(self) -> None:
        self.cancel_head_deadline()
        self.head_deadline = self.loop.call_later(self.timeout_keep_alive, self.head_timed_out)

    def cancel_head_deadline(self) -> None:
        if self.head_deadline is not None:
            self.head_deadline.cancel()
            self.head_deadline = None

    def head_timed_out(self) -> None:
        self.head_deadline = None
        if self.conn.their_state is h11.IDLE and not self.transport.is_closing():
            self.transport.close()
