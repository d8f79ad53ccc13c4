"""How the catalog is served: Datasette's command lines, the settings of a public
site, and a supervisor that moves a running server onto each new build safely.

Datasette opens an immutable (`-i`) database with `immutable=1`: SQLite then trusts that the file
never changes, caches pages and skips locking. `paper-catalog build` replaces catalog.db with
os.replace(), which gives the path a new inode; a server still holding the old file keeps answering
from it, but every new connection (one per SQL thread, opened lazily) would open the new file while
the inspect data (counts, hash) still describe the old one. So the server never opens catalog.db
itself: it serves a hard link to the build, `<dir>/.serving/<build-id>/catalog.db` (same name, so
the database is still `catalog` in URLs), which no later build touches. When catalog.db changes,
the supervisor links and inspects the new build (loader/serve/inspection.py) while the old server keeps answering, then
restarts Datasette on it and removes snapshots nobody serves any more.

The server itself (loader/serve/workers.py) is uvicorn with one worker process per core, each an
identical read-only replica of the site. The supervisor opens the listening socket once and hands
it to every server it starts, so during a restart new connections wait in the kernel's queue
instead of being refused. The new build's server starts while the old one still answers: its
workers build the site, say they are ready and wait at a gate, a file the supervisor holds
locked. Once all are ready the supervisor stops every worker of the old build (each drains its
connections: loader/serve/drain.py) and only then opens the gate, so no answer from an old
build ever follows one from the new build, and new connections wait for the drain, not for a
whole start. A new server that exits before it is ready leaves the old one serving.
"""

import dataclasses
import errno
import fcntl
import os
import secrets
import shutil
import signal
import socket
import subprocess
import sys
import time
from collections.abc import Callable
from dataclasses import dataclass
from pathlib import Path

from loader.lifetime import adopt_orphans, die_with_parent
from loader.serve.inspection import CannotInspect, write_inspect_file
from loader.serve.settings import SECRET_VARIABLE, SERVED_NAME
from loader.serve.site import DEFAULT_CACHE_BYTES, Site

SERVING_DIRECTORY = ".serving"
LOCK_NAME = "lock"
STOP_TIMEOUT_SECONDS = 10
# seconds a connection has to send each complete request head (loader/serve/connections.py),
# unless `paper-catalog serve --head-timeout` says otherwise
HEAD_TIMEOUT_SECONDS = 5
GATE_NAME = "gate"
GATE_VARIABLE = "PAPER_CATALOG_GATE"
# a worker waiting at the gate has made this file, with its process id after the prefix
READY_PREFIX = "ready-"
# how long the old build keeps serving while the new one starts; past it the old one is
# stopped anyway and the new one opened whenever it is ready
READY_TIMEOUT_SECONDS = 120
READY_POLL_SECONDS = 0.05


def build_id(stat: os.stat_result) -> str:
    """Names one build: os.replace() gives every build a new inode and modification time."""
    return f"{stat.st_mtime_ns:x}-{stat.st_ino:x}-{stat.st_size:x}"


@dataclass
class Snapshot:
    """One build as served: a hard link that later builds never touch, and its inspect file.

    The shared flock on `lock` says "in use"; the server process inherits the descriptor, so
    the snapshot stays protected for as long as either process lives.
    """

    directory: Path
    database: Path
    inspect_file: Path
    lock: int

    @property
    def build_id(self) -> str:
        return self.directory.name

    def release(self) -> None:
        if self.lock >= 0:
            os.close(self.lock)
            self.lock = -1


def link_or_copy(source: Path, target: Path) -> None:
    try:
        os.link(source, target)
    except OSError as error:
        if error.errno not in (errno.EXDEV, errno.EPERM, errno.EMLINK, errno.ENOTSUP):
            raise
        shutil.copy2(source, target)


def lock_directory(directory: Path) -> int | None:
    """A shared lock on directory/lock, or None when a cleanup removed the directory meanwhile."""
    try:
        descriptor = os.open(directory / LOCK_NAME, os.O_RDWR | os.O_CREAT, 0o644)
    except FileNotFoundError:
        return None
    fcntl.flock(descriptor, fcntl.LOCK_SH)
    try:
        current = os.stat(directory / LOCK_NAME)
    except FileNotFoundError:
        current = None
    if current is None or current.st_ino != os.fstat(descriptor).st_ino:
        os.close(descriptor)
        return None
    return descriptor


def take_snapshot(db: str | os.PathLike[str]) -> Snapshot:
    """Link the current build of db under .serving/<build-id>/ and inspect it (once per build)."""
    path = Path(db).resolve()
    serving = path.parent / SERVING_DIRECTORY
    serving.mkdir(exist_ok=True)
    ignore = serving / ".gitignore"
    if not ignore.exists():
        ignore.write_text("*\n")
    temporary = serving / f".link-{os.getpid()}"
    while True:
        if temporary.exists():
            temporary.unlink()
        link_or_copy(path, temporary)
        directory = serving / build_id(temporary.stat())
        directory.mkdir(exist_ok=True)
        lock = lock_directory(directory)
        if lock is None:
            continue
        database = directory / SERVED_NAME
        if database.exists() and os.path.samefile(database, temporary):
            temporary.unlink()
        else:
            os.replace(temporary, database)
        break
    inspect_file = directory / f"{SERVED_NAME}.inspect.json"
    try:
        if not inspect_file.exists():
            partial = directory / f".{inspect_file.name}.{os.getpid()}"
            write_inspect_file(database, partial)
            os.replace(partial, inspect_file)
    except BaseException:
        os.close(lock)
        raise
    return Snapshot(directory, database, inspect_file, lock)


def remove_stale_snapshots(db: str | os.PathLike[str], keep: Path | None = None) -> None:
    """Remove every snapshot of db no process serves (nobody holds its lock), except keep."""
    serving = Path(db).resolve().parent / SERVING_DIRECTORY
    if not serving.is_dir():
        return
    for path in serving.iterdir():
        if path.name.startswith(".link-"):
            remove_orphan_link(path)
        elif path.is_dir() and path != keep:
            remove_if_unused(path)


def remove_orphan_link(path: Path) -> None:
    try:
        os.kill(int(path.name.removeprefix(".link-")), 0)
    except (ValueError, ProcessLookupError):
        path.unlink(missing_ok=True)
    except PermissionError:
        pass


def remove_if_unused(directory: Path) -> None:
    try:
        descriptor = os.open(directory / LOCK_NAME, os.O_RDWR | os.O_CREAT, 0o644)
    except OSError:
        return
    try:
        fcntl.flock(descriptor, fcntl.LOCK_EX | fcntl.LOCK_NB)
    except BlockingIOError:
        os.close(descriptor)
        return
    try:
        shutil.rmtree(directory)
    except OSError:
        pass
    finally:
        os.close(descriptor)


class ListenError(Exception):
    """The address cannot be listened on (taken, or not this machine's)."""


def open_listener(host: str, port: int) -> socket.socket:
    """The listening socket every server of this run accepts on, opened once."""
    family = socket.AF_INET6 if ":" in host else socket.AF_INET
    listener = socket.socket(family, socket.SOCK_STREAM)
    listener.setsockopt(socket.SOL_SOCKET, socket.SO_REUSEADDR, 1)
    try:
        listener.bind((host, port))
    except OSError as error:
        listener.close()
        raise ListenError(f"cannot listen on {host}:{port}: {error.strerror}") from error
    # imported here: connections.py brings uvicorn, which `paper-catalog build` never imports
    from loader.serve.connections import ACCEPT_BATCH

    # connections the kernel queues while no worker accepts them (e.g. during a restart); the
    # workers listen again with the same figure
    listener.listen(ACCEPT_BATCH)
    return listener


def usable_cores() -> int:
    return len(os.sched_getaffinity(0))


def server_command(
    listener: socket.socket, workers: int | None, head_timeout: int | None = None
) -> list[str]:
    command = [sys.executable, "-m", "loader.serve.workers", "--fd", str(listener.fileno())]
    command += ["--workers", str(workers)] if workers else []
    return command + (["--head-timeout", str(head_timeout)] if head_timeout else [])


def server_environment(snapshot: Snapshot, site: Site, gate: Path | None = None) -> dict[str, str]:
    """The site for this build, in the environment (not the command line, which any local user
    can read with ps: it holds the signing secret), and the gate its workers wait at, if any."""
    site = dataclasses.replace(
        site,
        db=str(snapshot.database),
        inspect_file=str(snapshot.inspect_file),
        build_id=snapshot.build_id,
    )
    environment = {**os.environ, site.ENVIRONMENT_VARIABLE: site.to_environment()}
    environment.pop(GATE_VARIABLE, None)
    if gate is not None:
        environment[GATE_VARIABLE] = str(gate)
    return environment


class Gate:
    """What a new build's workers wait at before they take a connection: a file in the build's
    snapshot directory, locked by the supervisor until the old build's workers are gone. Each
    waiting worker leaves a `ready-<pid>` file beside it."""

    def __init__(self, directory: Path) -> None:
        self.path = directory / GATE_NAME
        for old in directory.glob(f"{READY_PREFIX}*"):
            old.unlink(missing_ok=True)  # from an earlier start of this build that failed
        self.descriptor = os.open(self.path, os.O_RDWR | os.O_CREAT, 0o644)
        fcntl.flock(self.descriptor, fcntl.LOCK_EX)

    def ready_workers(self) -> int:
        return sum(1 for _ in self.path.parent.glob(f"{READY_PREFIX}*"))

    def open(self) -> None:
        if self.descriptor >= 0:
            os.close(self.descriptor)
            self.descriptor = -1


def wait_until_ready(process: subprocess.Popen[bytes], gate: Gate, workers: int) -> bool:
    """True once `workers` workers wait at the gate (or the wait timed out); False if the server
    exited first."""
    deadline = time.monotonic() + READY_TIMEOUT_SECONDS
    while gate.ready_workers() < workers and time.monotonic() < deadline:
        if process.poll() is not None:
            return False
        time.sleep(READY_POLL_SECONDS)
    return True


def start_server(
    snapshot: Snapshot,
    listener: socket.socket,
    site: Site,
    workers: int | None,
    gate: Gate | None = None,
    head_timeout: int | None = None,
) -> subprocess.Popen[bytes]:
    command = server_command(listener, workers, head_timeout)
    # its own process group: stopping it stops every worker it started, whatever happens to it;
    # the supervisor runs no threads, so preexec_fn is safe here
    return subprocess.Popen(
        command,
        env=server_environment(snapshot, site, gate.path if gate else None),
        pass_fds=(snapshot.lock, listener.fileno()),
        preexec_fn=die_with_parent,  # noqa: PLW1509
        process_group=0,
    )


def group_alive(process: subprocess.Popen[bytes]) -> bool:
    """True while any process of the server's group exists; reaps those that are ours."""
    process.poll()  # an exited server is a zombie, and a zombie still counts as a member
    try:
        # processes orphaned by a server that exited first (its workers if it died, the
        # resource tracker multiprocessing starts) are re-parented to us: adopt_orphans()
        while os.waitpid(-process.pid, os.WNOHANG)[0]:
            pass
    except ChildProcessError:
        pass
    try:
        os.killpg(process.pid, 0)
    except ProcessLookupError:
        return False
    return True


def stop_server(process: subprocess.Popen[bytes]) -> None:
    """Stop the server and every worker in its process group; return when none is left."""
    if process.poll() is None:
        process.terminate()
        try:
            process.wait(STOP_TIMEOUT_SECONDS)
        except subprocess.TimeoutExpired:
            pass
    deadline = time.monotonic() + STOP_TIMEOUT_SECONDS
    while group_alive(process):
        if time.monotonic() > deadline:
            os.killpg(process.pid, signal.SIGKILL)
        time.sleep(0.05)


def current_build(db: str | os.PathLike[str]) -> str | None:
    try:
        return build_id(os.stat(db))
    except FileNotFoundError:
        return None


def serve_catalog(
    db: str | os.PathLike[str],
    host: str,
    port: int,
    metadata: str | os.PathLike[str],
    poll_seconds: float = 1.0,
    say: Callable[[str], object] = print,
    workers: int | None = None,
    cache_bytes: int | None = None,
    head_timeout: int | None = None,
) -> int:
    """Serve db until interrupted, restarting the server on every new build of db.

    Returns the server's exit status if it stops by itself (e.g. its workers cannot start).
    """
    signal.signal(signal.SIGTERM, lambda *_: sys.exit(0))
    adopt_orphans()
    site = Site(
        db=str(db),
        inspect_file=None,
        metadata=str(Path(metadata).resolve()),
        build_id="",
        secret=os.environ.get(SECRET_VARIABLE) or secrets.token_hex(32),
        cache_bytes=DEFAULT_CACHE_BYTES if cache_bytes is None else cache_bytes,
    )
    listener = open_listener(host, port)
    snapshot = take_snapshot(db)
    process = start_server(snapshot, listener, site, workers, head_timeout=head_timeout)
    remove_stale_snapshots(db, keep=snapshot.directory)
    refused = None
    # the next build while its server starts: its snapshot, server and gate
    new: Snapshot | None = None
    starting: subprocess.Popen[bytes] | None = None
    gate: Gate | None = None
    try:
        while process.poll() is None:
            time.sleep(poll_seconds)
            build = current_build(db)
            if build in (None, snapshot.build_id, refused):
                continue
            try:
                new = take_snapshot(db)
            except (OSError, CannotInspect) as error:
                say(f"{db}: cannot serve build {build} ({error}); still serving the previous one")
                refused = build
                continue
            say(f"{db}: new build {new.build_id}, starting its server")
            gate = Gate(new.directory)
            starting = start_server(new, listener, site, workers, gate, head_timeout)
            if not wait_until_ready(starting, gate, workers or usable_cores()):
                say(f"{db}: the server of build {build} exited; still serving the previous one")
                gate.open()
                stop_server(starting)
                new.release()
                new = starting = None
                refused = build
                continue
            stop_server(process)
            gate.open()
            snapshot.release()
            process, snapshot = starting, new
            new = starting = None
            remove_stale_snapshots(db, keep=snapshot.directory)
        return process.returncode
    finally:
        stop_server(process)
        if starting is not None and gate is not None:
            gate.open()  # its workers see the stop only once past the gate
            stop_server(starting)
        if new is not None:
            new.release()
        listener.close()
        snapshot.release()
        remove_stale_snapshots(db)
