"""A worker that shuts down (a rebuild) lets go of its connections without an error on any of
them (loader/serve/drain.py): a real uvicorn server with the workers' protocol, in this
process, and clients speaking HTTP/1.1 over real sockets. The whole site through a rebuild
under wrk: tests/test_serve.py."""

import asyncio
import contextlib
import socket

import h11
import pytest
import uvicorn

from loader.serve.drain import DRAIN_IDLE_SECONDS, DRAINING, DrainingProtocol

# far above the drain's own waits, so a slow machine does not fail the test
BOUND_SECONDS = 10


class GatedApp:
    """Answers `ok`; /slow waits for `release` before it answers, /stream sends half its body,
    waits for `release`, then the rest."""

    def __init__(self) -> None:
        self.release = asyncio.Event()

    async def __call__(self, scope, receive, send) -> None:
        assert scope["type"] == "http"
        start = {"type": "http.response.start", "status": 200, "headers": []}
        if scope["path"] == "/stream":
            await send({**start, "headers": [(b"content-length", b"4")]})
            await send({"type": "http.response.body", "body": b"ha", "more_body": True})
            await self.release.wait()
            await send({"type": "http.response.body", "body": b"lf"})
            return
        if scope["path"] == "/slow":
            await self.release.wait()
        await send({**start, "headers": [(b"content-length", b"2")]})
        await send({"type": "http.response.body", "body": b"ok"})


class Client:
    """One keep-alive HTTP/1.1 connection, parsed by h11."""

    def __init__(self, reader: asyncio.StreamReader, writer: asyncio.StreamWriter) -> None:
        self.reader, self.writer = reader, writer
        self.http = h11.Connection(h11.CLIENT)

    async def send(self, path: str) -> None:
        if self.http.our_state is h11.DONE:
            self.http.start_next_cycle()
        request = h11.Request(method="GET", target=path, headers=[("host", "test")])
        self.writer.write(self.http.send(request) + self.http.send(h11.EndOfMessage()))
        await self.writer.drain()

    async def next_event(self) -> h11.Event:
        while True:
            event = self.http.next_event()
            if event is not h11.NEED_DATA:
                return event
            self.http.receive_data(await self.reader.read(65536))

    async def response(self) -> tuple[h11.Response, bytes]:
        head = await self.next_event()
        assert isinstance(head, h11.Response)
        body = b""
        while not isinstance(event := await self.next_event(), h11.EndOfMessage):
            assert isinstance(event, h11.Data)
            body += event.data
        return head, body

    async def closed_cleanly(self) -> bool:
        """True when the server closes the connection with a FIN and nothing unread; a reset
        raises ConnectionResetError."""
        return await asyncio.wait_for(self.reader.read(1), BOUND_SECONDS) == b""


def closes(head: h11.Response) -> bool:
    return (b"connection", b"close") in [(n.lower(), v.lower()) for n, v in head.headers]


@contextlib.asynccontextmanager
async def draining_server():
    """A uvicorn server with the workers' protocol; yields (app, connect, stop): stop() starts
    its graceful shutdown and returns once its connections are draining (or at once)."""
    app = GatedApp()
    listener = socket.socket()
    listener.bind(("127.0.0.1", 0))
    listener.listen(16)
    port = listener.getsockname()[1]
    config = uvicorn.Config(
        app,
        http=DrainingProtocol,
        lifespan="off",
        timeout_keep_alive=BOUND_SECONDS,
        timeout_graceful_shutdown=BOUND_SECONDS,
        log_level="warning",
    )
    server = uvicorn.Server(config)
    serving = asyncio.create_task(server.serve(sockets=[listener]))
    while not server.started:
        await asyncio.sleep(0.01)

    async def connect() -> Client:
        return Client(*await asyncio.open_connection("127.0.0.1", port))

    async def stop(wait_for_drain: bool = True) -> None:
        server.should_exit = True
        if not wait_for_drain:
            return

        async def drain_begun() -> None:
            while server.server_state not in DRAINING:
                await asyncio.sleep(0.01)

        await asyncio.wait_for(drain_begun(), BOUND_SECONDS)

    try:
        yield app, connect, stop
    finally:
        server.should_exit = True
        app.release.set()
        await asyncio.wait_for(serving, BOUND_SECONDS)
        listener.close()


@pytest.mark.asyncio
async def test_an_idle_keep_alive_connection_is_closed_cleanly_after_a_wait():
    async with draining_server() as (_, connect, stop):
        client = await connect()
        await client.send("/")
        head, body = await client.response()
        assert body == b"ok" and not closes(head)
        loop = asyncio.get_running_loop()
        began = loop.time()
        await stop(wait_for_drain=False)
        assert await client.closed_cleanly()
        # kept open long enough for a request already sent to arrive
        assert loop.time() - began >= DRAIN_IDLE_SECONDS * 0.9


@pytest.mark.asyncio
async def test_a_request_sent_while_draining_is_answered_and_told_to_close():
    async with draining_server() as (_, connect, stop):
        client = await connect()
        await client.send("/")
        await client.response()
        await stop()
        # what a client does the moment a response is complete: it asks again at once
        await client.send("/")
        head, body = await client.response()
        assert head.status_code == 200 and body == b"ok" and closes(head)
        assert await client.closed_cleanly()


@pytest.mark.asyncio
async def test_a_request_in_flight_finishes_and_is_told_to_close():
    async with draining_server() as (app, connect, stop):
        client = await connect()
        await client.send("/slow")
        await asyncio.sleep(0.1)  # the request reached the app
        await stop()
        app.release.set()
        head, body = await client.response()
        assert head.status_code == 200 and body == b"ok" and closes(head)
        assert await client.closed_cleanly()


@pytest.mark.asyncio
async def test_a_response_under_way_finishes_then_its_connection_drains():
    async with draining_server() as (app, connect, stop):
        client = await connect()
        await client.send("/stream")
        head = await client.next_event()
        assert isinstance(head, h11.Response) and not closes(head)
        await stop()
        app.release.set()
        body = b""
        while not isinstance(event := await client.next_event(), h11.EndOfMessage):
            body += event.data
        assert body == b"half"
        # its head went out without `Connection: close`: the next request is still answered
        await client.send("/")
        head, body = await client.response()
        assert body == b"ok" and closes(head)
        assert await client.closed_cleanly()
