"""The server process `paper-catalog serve` starts for one build: uvicorn with one worker process
per core on a listening socket the supervisor opened, each worker an identical replica of the
site (loader/serve/app.py). Run as `python -m loader.serve.workers --fd N` with the site in the
environment (PAPER_CATALOG_SITE, JSON); not a user command.

uvicorn's own multi-process supervisor starts the workers, replaces any that die and stops them
all on SIGTERM; this module only fixes the settings: the connection deadlines and cap of
loader/serve/connections.py, the drain of loader/serve/drain.py, no access log (the reverse proxy
in front keeps one; a line per request costs CPU and, under a flood, the disk), and a bounded
graceful shutdown.
"""

import argparse
import asyncio
import fcntl
import logging
import os
import socket
import sys
import time
from pathlib import Path

import uvicorn
from uvicorn.config import STARTUP_FAILURE
from uvicorn.supervisors import Multiprocess

from loader.lifetime import die_with_parent
from loader.serve.app import StartedSite, create_app
from loader.serve.connections import ACCEPT_BATCH, raise_descriptor_limit
from loader.serve.site import ENVIRONMENT_VARIABLE, Site
from loader.serve.supervisor import (
    GATE_VARIABLE,
    HEAD_TIMEOUT_SECONDS,
    READY_POLL_SECONDS,
    READY_PREFIX,
    usable_cores,
)

GRACEFUL_SHUTDOWN_SECONDS = 5
LOG_INTERVAL_SECONDS = 10.0


class OncePerInterval(logging.Filter):
    """Lets each distinct message through once per interval: a flood of bad requests or
    refused connections leaves a line every few seconds, not gigabytes."""

    def __init__(self, interval: float = LOG_INTERVAL_SECONDS) -> None:
        super().__init__()
        self.interval = interval
        self.last: dict[tuple[str, object], float] = {}  # (logger, message) -> when let through

    def filter(self, record: logging.LogRecord) -> bool:
        now = time.monotonic()
        key = (record.name, record.msg)
        if now - self.last.get(key, -self.interval) < self.interval:
            return False
        self.last[key] = now
        return True


def stop_with_parent() -> None:
    """The worker gets SIGTERM when the process that started it dies, even by kill -9."""
    die_with_parent()
    if os.getppid() == 1:
        sys.exit(1)  # the parent died before the signal was set


async def wait_at_gate(gate: Path) -> None:
    """Say this worker is ready, then wait until the supervisor unlocks the gate (the previous
    build's workers are gone): uvicorn takes no connection before the app's startup is done."""
    (gate.parent / f"{READY_PREFIX}{os.getpid()}").touch()
    descriptor = os.open(gate, os.O_RDONLY)
    try:
        while True:
            try:
                fcntl.flock(descriptor, fcntl.LOCK_SH | fcntl.LOCK_NB)
                return
            except BlockingIOError:
                await asyncio.sleep(READY_POLL_SECONDS)
    finally:
        os.close(descriptor)


def worker_app() -> StartedSite:
    """uvicorn's app factory, called once in each worker process."""
    stop_with_parent()
    raise_descriptor_limit()
    for name in ("uvicorn.error", "asyncio"):
        logging.getLogger(name).addFilter(OncePerInterval())
    site = create_app(Site.from_environment())
    gate = os.environ.get(GATE_VARIABLE)
    if gate:
        site.prepare = [*site.prepare, lambda: wait_at_gate(Path(gate))]
    return site


def server_config(workers: int, head_timeout: int = HEAD_TIMEOUT_SECONDS) -> uvicorn.Config:
    return uvicorn.Config(
        "loader.serve.workers:worker_app",
        factory=True,
        workers=workers,
        http="loader.serve.drain:DrainingProtocol",
        timeout_keep_alive=head_timeout,
        timeout_graceful_shutdown=GRACEFUL_SHUTDOWN_SECONDS,
        backlog=ACCEPT_BATCH,  # also the kernel's queue: asyncio ties the two together
        access_log=False,
        lifespan="on",
        log_level="info",
    )


def run(fd: int, workers: int, head_timeout: int = HEAD_TIMEOUT_SECONDS) -> None:
    listener = socket.socket(fileno=fd)
    config = server_config(workers, head_timeout)
    if workers > 1:
        Multiprocess(config, sockets=[listener]).run()
    else:
        uvicorn.Server(config).run(sockets=[listener])


def main(argv: list[str] | None = None) -> None:
    parser = argparse.ArgumentParser(prog="python -m loader.serve.workers")
    parser.add_argument("--fd", type=int, required=True, help="a listening socket")
    parser.add_argument("--workers", type=int, default=usable_cores())
    parser.add_argument("--head-timeout", type=int, default=HEAD_TIMEOUT_SECONDS)
    args = parser.parse_args(argv)
    # the workers are new processes: they read the site from the environment they inherit
    if ENVIRONMENT_VARIABLE not in os.environ:
        parser.error(f"{ENVIRONMENT_VARIABLE} is not set")
    # build the site once here: bad metadata or a plugin that cannot be imported is one
    # `Error:` line and an exit, not a worker that uvicorn restarts for ever
    try:
        create_app(Site.from_environment())
    except Exception as error:  # noqa: BLE001 - whatever stops the site, say it and stop
        print(f"Error: cannot start the site: {error}", file=sys.stderr)
        sys.exit(STARTUP_FAILURE)
    run(args.fd, max(1, args.workers), max(1, args.head_timeout))


if __name__ == "__main__":
    main()
