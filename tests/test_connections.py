"""Idle and slow-header connections against a real `paper-catalog serve` on 127.0.0.1 whose
descriptor limit is lowered to 1024: they are closed, the workers refuse what they cannot hold
with a quick 503 instead of running out of descriptors, and a normal request still gets its
answer within a bounded wait. The answers the protocol writes itself carry the security
headers."""

import asyncio
import contextlib
import resource
import selectors
import shutil
import socket
import threading
import time

import h11
import httpx
import pytest
import uvicorn

from loader.serve.connections import ACCEPT_BATCH, HeadDeadlineProtocol, connection_cap

from . import local_http
from .test_security_headers import FIXED
from .test_serve import assert_stopped_cleanly, load_module, served

DESCRIPTOR_LIMIT = 1024
IDLE_SOCKETS = 1300  # more than the two workers hold together under the limit (2 x 576)
SLOW_SOCKETS = 60
# the server here gives each request head 2 s (`serve --head-timeout`; 5 s by default): the
# tests wait for that deadline, whatever its length; the flood takes about half a second to
# open and must be open all at once to go over the workers' cap
FLOOD_HEAD_TIMEOUT_SECONDS = 2
TRICKLE_SECONDS = 0.25  # between two bytes of a slow head: well within the deadline
WAIT_BOUND_SECONDS = 15  # a bound on the wait, far above the head deadline
CLOSE_BOUND_SECONDS = 30
LOG_BOUND_BYTES = 20_000
# the load run after the flood: a second, longer on a machine too busy to answer in one
LOAD_SECONDS = (1, 4, 16)


def lower_descriptor_limit():
    resource.setrlimit(resource.RLIMIT_NOFILE, (DESCRIPTOR_LIMIT, DESCRIPTOR_LIMIT))


@contextlib.contextmanager
def descriptors_for_the_test(needed):
    soft, hard = resource.getrlimit(resource.RLIMIT_NOFILE)
    if hard != resource.RLIM_INFINITY and hard < needed:
        pytest.skip(f"needs {needed} descriptors, the hard limit is {hard}")
    resource.setrlimit(resource.RLIMIT_NOFILE, (max(soft, needed), hard))
    try:
        yield
    finally:
        resource.setrlimit(resource.RLIMIT_NOFILE, (soft, hard))


def open_sockets(address, count):
    """count connections, opened in batches the listening socket's queue holds: beyond it the
    kernel drops a SYN and the client sends it again only a second later, so the flood would
    take seconds to open and its first sockets reach their head deadline before the last."""
    sockets = []
    for number in range(count):
        if number and number % ACCEPT_BATCH == 0:
            time.sleep(0.05)  # the workers accept the batch
        sock = socket.create_connection(address, timeout=10)
        sock.setblocking(False)
        sockets.append(sock)
    return sockets


def trickle_headers(sockets, stop):
    """A slowloris: a request line, then one header byte every TRICKLE_SECONDS (each byte well
    within the head deadline), never the blank line."""
    for sock in sockets:
        with contextlib.suppress(OSError):
            sock.send(b"GET /catalog/papers HTTP/1.1\r\nHost: x\r\nX-Slow: ")
    while not stop.wait(TRICKLE_SECONDS):
        for sock in sockets:
            with contextlib.suppress(OSError):
                sock.send(b"a")


def wait_until_closed(sockets, seconds):
    """Read every socket until the server closes it; returns (still open, answered 503)."""
    selector = selectors.DefaultSelector()
    received = {}
    for sock in sockets:
        selector.register(sock, selectors.EVENT_READ)
        received[sock] = b""
    deadline = time.monotonic() + seconds
    open_ = set(sockets)
    while open_ and time.monotonic() < deadline:
        for key, _ in selector.select(timeout=0.5):
            sock = key.fileobj
            try:
                data = sock.recv(4096)
            except (ConnectionResetError, BlockingIOError) as error:
                data = b"" if isinstance(error, ConnectionResetError) else None
            if data is None:
                continue
            if data:
                received[sock] += data
            else:
                selector.unregister(sock)
                open_.discard(sock)
    selector.close()
    busy = sum(1 for data in received.values() if data.startswith(b"HTTP/1.1 503"))
    return len(open_), busy


def get_within(url, seconds):
    """A normal visitor that retries a refused or 503 answer, as browsers and proxies do."""
    deadline = time.monotonic() + seconds
    while time.monotonic() < deadline:
        try:
            response = local_http.get(url, timeout=max(0.1, deadline - time.monotonic()))
        except httpx.TransportError:
            response = None
        if response is not None and response.status_code == 200:
            return response
        time.sleep(0.2)
    return None


@pytest.fixture(scope="module")
def flood_server(tmp_path_factory, seed_catalog):
    """Two workers whose descriptor limit is lowered to 1024 (576 client sockets each), each
    request head given FLOOD_HEAD_TIMEOUT_SECONDS; yields (base URL, process, catalog, log).
    Each test leaves it as it found it: no connection of its own open."""
    folder = tmp_path_factory.mktemp("flood")
    db = folder / "catalog.db"
    shutil.copy(seed_catalog, db)
    log_path = folder / "server.log"
    with (
        descriptors_for_the_test(IDLE_SOCKETS + SLOW_SOCKETS + 256),
        log_path.open("wb") as log,
        served(
            db,
            workers=2,
            log=log,
            preexec_fn=lower_descriptor_limit,
            head_timeout=FLOOD_HEAD_TIMEOUT_SECONDS,
        ) as (url, process),
    ):
        yield url, process, db, log_path
    # two workers stopped (SIGTERM by `served`): no snapshot left, the port closed
    assert_stopped_cleanly(db, url)


def test_idle_and_slow_header_sockets_cannot_starve_the_server(flood_server):
    """More idle sockets than the workers hold together, and slowloris heads: a normal request
    still gets its answer within a bounded wait, the sockets over the workers' caps get a 503
    at once, every other one is closed at its head deadline, and the workers answer a load
    run afterwards without one error."""
    url, process, db, log_path = flood_server
    address = ("127.0.0.1", int(url.rsplit(":", 1)[1]))
    idle = open_sockets(address, IDLE_SOCKETS)
    slow = open_sockets(address, SLOW_SOCKETS)
    stop = threading.Event()
    trickler = threading.Thread(target=trickle_headers, args=(slow, stop))
    trickler.start()
    try:
        response = get_within(f"{url}/catalog/papers", WAIT_BOUND_SECONDS)
        assert response is not None, "a normal request waited past the bound"
        assert "papers" in response.text
        still_open, busy = wait_until_closed(idle + slow, CLOSE_BOUND_SECONDS)
    finally:
        stop.set()
        trickler.join()
        for sock in idle + slow:
            sock.close()
    assert still_open == 0, f"{still_open} idle or slow-header sockets never closed"
    assert busy > 0, "the flood never went over the workers' cap"
    assert process.poll() is None
    assert get_within(f"{url}/catalog/papers", WAIT_BOUND_SECONDS) is not None

    if shutil.which("wrk") is not None:
        load = load_module()
        kinds = load.pick_urls(db)
        paths = [path for kind in kinds.values() for path in kind]
        # a busy machine may answer nothing within a second: the run is longer until it has
        # answered something, and every run must be free of errors
        for duration in LOAD_SECONDS:
            figures, _ = load.run_wrk(url, paths, duration=duration, connections=64, threads=2)
            assert figures["non_2xx"] == 0 and load.socket_errors(figures) == 0
            if figures["requests"] > 0:
                break
        assert figures["requests"] > 0
    text = log_path.read_text(errors="replace")
    assert "Too many open files" not in text
    assert log_path.stat().st_size < LOG_BOUND_BYTES, text[-2000:]


@pytest.mark.parametrize(("limit", "cap"), [(512, 64), (DESCRIPTOR_LIMIT, 576)])
def test_a_workers_cap_leaves_room_below_its_descriptor_limit(limit, cap):
    """The cap the flood above goes over (576 a worker under 1024 descriptors), and a worker's
    at 512, in this process: what is left after SQLite, pipes and asyncio's accept batches."""
    soft, hard = resource.getrlimit(resource.RLIMIT_NOFILE)
    resource.setrlimit(resource.RLIMIT_NOFILE, (limit, hard))
    try:
        assert connection_cap() == cap
    finally:
        resource.setrlimit(resource.RLIMIT_NOFILE, (soft, hard))


def test_a_connection_gets_a_deadline_for_each_request_head(flood_server):
    """Between keep-alive requests too: a client that got its answer and then trickles the next
    head byte by byte is cut off, while one that asks promptly is served again."""
    url, *_ = flood_server
    address = ("127.0.0.1", int(url.rsplit(":", 1)[1]))
    request = b"GET /-/versions.json HTTP/1.1\r\nHost: x\r\n\r\n"
    with socket.create_connection(address, timeout=10) as prompt:
        for _ in range(3):
            prompt.sendall(request)
            assert read_response(prompt).startswith(b"HTTP/1.1 200")
    with socket.create_connection(address, timeout=10) as trickler:
        trickler.sendall(request)
        assert read_response(trickler).startswith(b"HTTP/1.1 200")
        closed_at = None
        started = time.monotonic()
        for byte in b"GET /-/versions.json HTTP/1.1\r\nHost: x\r\nX-Slow: " + b"a" * 60:
            try:
                trickler.send(bytes([byte]))
                if trickler.recv(1, socket.MSG_DONTWAIT) == b"":
                    closed_at = time.monotonic()
                    break
            except BlockingIOError:
                pass
            except OSError:
                closed_at = time.monotonic()
                break
            time.sleep(TRICKLE_SECONDS)
        assert closed_at is not None, "a trickled head kept its connection"
        assert closed_at - started < WAIT_BOUND_SECONDS


def read_response(sock):
    """The head of one whole response (Content-Length or chunked body read to its end)."""
    data = b""
    while b"\r\n\r\n" not in data:
        chunk = sock.recv(65536)
        assert chunk, "closed before the response head"
        data += chunk
    head, _, body = data.partition(b"\r\n\r\n")
    lines = [line.lower() for line in head.split(b"\r\n")]
    lengths = [int(line.split(b":", 1)[1]) for line in lines if line.startswith(b"content-length:")]
    while (len(body) < lengths[0]) if lengths else not body.endswith(b"0\r\n\r\n"):
        chunk = sock.recv(65536)
        assert chunk, "closed before the response body ended"
        body += chunk
    return head


class RefusingProtocol(HeadDeadlineProtocol):
    """The workers' protocol with a connection cap of none: every connection is over it."""

    max_connections = 0


async def protocol_answer(protocol, request):
    """What a real uvicorn server with `protocol` answers `request` with, read to the close."""

    async def app(scope, receive, send):
        raise AssertionError("the protocol answers, never the app")

    with socket.socket() as listener:
        listener.bind(("127.0.0.1", 0))
        config = uvicorn.Config(app, http=protocol, lifespan="off", log_level="critical")
        server = uvicorn.Server(config)
        serving = asyncio.create_task(server.serve(sockets=[listener]))
        try:
            while not server.started:
                await asyncio.sleep(0.01)
            reader, writer = await asyncio.open_connection(*listener.getsockname())
            writer.write(request)
            answer = await asyncio.wait_for(reader.read(), 10)
            writer.close()
        finally:
            server.should_exit = True
            await asyncio.wait_for(serving, 10)
    client = h11.Connection(h11.CLIENT)
    client.send(h11.Request(method="GET", target="/", headers=[("host", "x")]))
    client.receive_data(answer)
    head = client.next_event()
    assert isinstance(head, h11.Response), answer
    return head.status_code, {name.decode(): value.decode() for name, value in head.headers}


@pytest.mark.parametrize(
    ("protocol", "request_bytes", "status"),
    [
        (HeadDeadlineProtocol, b"NOT HTTP AT ALL\r\n\r\n", 400),
        (RefusingProtocol, b"GET / HTTP/1.1\r\nHost: x\r\n\r\n", 503),
    ],
    ids=["malformed request", "over the connection cap"],
)
@pytest.mark.asyncio(loop_scope="session")
async def test_the_protocols_own_answers_carry_the_headers(protocol, request_bytes, status):
    answered, headers = await protocol_answer(protocol, request_bytes)
    assert answered == status
    for name, value in FIXED.items():
        assert headers[name] == value, name
    assert headers["content-security-policy"] == "default-src 'none'; frame-ancestors 'none'"
    assert headers["connection"] == "close"
