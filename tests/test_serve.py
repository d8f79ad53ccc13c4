"""`paper-catalog serve`: the command line, and a real server moved onto a new
build while clients keep asking it questions."""

import contextlib
import importlib.util
import json
import os
import shutil
import signal
import socket
import sqlite3
import subprocess
import sys
import threading
import time
from pathlib import Path

import httpx
import pytest
import pytest_asyncio
from click.testing import CliRunner
from datasette.cli import cli as datasette_cli

from loader.build.catalog import build_catalog
from loader.read.sources import discover
from loader.serve import supervisor
from loader.serve.app import Site
from loader.serve.settings import SETTINGS, setting_text
from loader.serve.supervisor import (
    HEAD_TIMEOUT_SECONDS,
    READY_PREFIX,
    SERVING_DIRECTORY,
    Snapshot,
    remove_stale_snapshots,
    server_command,
    server_environment,
    take_snapshot,
)
from loader.serve.workers import server_config

from . import local_http
from .conftest import ROOT, SEEDS

STARTUP_SECONDS = 90
POLL_SECONDS = 0.05  # between two checks of a condition a test waits for
COUNT_SQL = "select count(*) as n from papers"


def free_port():
    with socket.socket() as sock:
        sock.bind(("127.0.0.1", 0))
        return sock.getsockname()[1]


def wait_until_answering(url, process, seconds=STARTUP_SECONDS):
    deadline = time.monotonic() + seconds
    while time.monotonic() < deadline:
        if process.poll() is not None:
            raise RuntimeError(f"server exited with status {process.returncode}")
        try:
            if local_http.get(f"{url}/-/versions.json", timeout=5).status_code == 200:
                return
        except httpx.TransportError:
            pass
        time.sleep(POLL_SECONDS)
    raise RuntimeError(f"{url} did not answer within {seconds} s")


@contextlib.contextmanager
def served(db, poll=0.2, workers=1, log=subprocess.DEVNULL, preexec_fn=None, head_timeout=None):
    """`paper-catalog serve` on db as a real process; yields (base URL, process). One worker
    unless the test is about several (the tests share two cores); the default request-head
    deadline unless `head_timeout` (seconds) is given."""
    port = free_port()
    command = [sys.executable, "-c", "from loader.cli import cli; cli()", "serve"]
    command += ["--db", str(db), "--port", str(port), "--poll", str(poll)]
    command += ["--metadata", str(ROOT / "metadata.yml"), "--workers", str(workers)]
    command += ["--head-timeout", str(head_timeout)] if head_timeout else []
    process = subprocess.Popen(
        command,
        cwd=ROOT,
        stdout=log,
        stderr=subprocess.STDOUT if log is not subprocess.DEVNULL else log,
        preexec_fn=preexec_fn,  # noqa: PLW1509 - the test runs no threads while starting it
    )
    url = f"http://127.0.0.1:{port}"
    try:
        wait_until_answering(url, process)
        yield url, process
    finally:
        if process.poll() is None:
            process.send_signal(signal.SIGTERM)
            process.wait(30)


def paper_count(url):
    response = local_http.get(
        f"{url}/catalog.json", params={"sql": COUNT_SQL, "_shape": "array"}, timeout=10
    )
    response.raise_for_status()
    return response.json()[0]["n"]


def snapshot_directories(db):
    serving = db.parent / SERVING_DIRECTORY
    return sorted(p for p in serving.iterdir() if p.is_dir()) if serving.exists() else []


def port_is_open(url):
    try:
        local_http.get(url, timeout=2)
    except httpx.TransportError:
        return False
    return True


def test_server_command_passes_the_snapshot_socket_and_site(tmp_path):
    db = tmp_path / "catalog.db"
    directory = tmp_path / SERVING_DIRECTORY / "1a2b-3c-4d"  # as take_snapshot() names one
    snapshot = Snapshot(directory, directory / "catalog.db", directory / "inspect.json", lock=-1)
    site = Site(str(db), None, "metadata.yml", "", "s3cret")
    with contextlib.closing(socket.socket()) as listener:
        command = server_command(listener, workers=3, head_timeout=2)
        assert command[command.index("--fd") + 1] == str(listener.fileno())
    assert command[1:3] == ["-m", "loader.serve.workers"]
    assert command[command.index("--workers") + 1] == "3"
    assert command[command.index("--head-timeout") + 1] == "2"
    assert "--head-timeout" not in server_command(listener, workers=3)  # the workers' default
    assert server_config(3).timeout_keep_alive == HEAD_TIMEOUT_SECONDS
    assert server_config(3, head_timeout=2).timeout_keep_alive == 2
    assert not any("s3cret" in part for part in command), "ps shows the command line"
    served_site = Site(**json.loads(server_environment(snapshot, site)[Site.ENVIRONMENT_VARIABLE]))
    assert served_site.db == str(snapshot.database) and served_site.build_id == snapshot.build_id
    assert served_site.inspect_file == str(snapshot.inspect_file)
    assert served_site.secret == "s3cret"


def open_files():
    return {os.path.realpath(f"/proc/self/fd/{fd}") for fd in os.listdir("/proc/self/fd")}


def test_a_snapshots_inspect_file_is_what_datasette_inspect_writes(tmp_path, seed_catalog):
    """take_snapshot() writes the inspect file `datasette inspect` writes of the build
    (loader/serve/inspection.py computes it in process), and leaves no connection to the build
    open in the long-lived supervisor."""
    db = tmp_path / "catalog.db"
    shutil.copy(seed_catalog, db)
    before = open_files()
    snapshot = take_snapshot(db)
    assert str(snapshot.database) not in open_files() - before
    by_the_command = tmp_path / "by-the-command.json"
    # the command run here (Click's runner; no second Python to import Datasette), in a thread
    # of its own: it makes and closes an event loop of its own, and sets it as its thread's
    results = []
    arguments = ["inspect", str(snapshot.database), "--inspect-file", str(by_the_command)]
    runner = threading.Thread(
        target=lambda: results.append(CliRunner().invoke(datasette_cli, arguments))
    )
    runner.start()
    runner.join()
    [result] = results
    assert result.exit_code == 0, result.output
    ours = json.loads(snapshot.inspect_file.read_text())
    assert ours == json.loads(by_the_command.read_text())
    assert ours["catalog"]["tables"]["papers"]["count"] == 90
    snapshot.release()


def test_snapshots_in_use_survive_cleanup_and_unused_ones_go(tmp_path, monkeypatch):
    # what `datasette inspect` writes is the test above's: here a stand-in, not a second Python
    monkeypatch.setattr(supervisor, "write_inspect_file", lambda db, path: path.write_text("{}"))
    seeds = discover([SEEDS])
    db = tmp_path / "catalog.db"
    build_catalog(seeds[:1], db)
    first = take_snapshot(db)
    assert os.path.samefile(first.database, db)
    assert first.database.name == "catalog.db" and first.inspect_file.exists()
    build_catalog(seeds, db)
    second = take_snapshot(db)
    assert second.directory != first.directory
    remove_stale_snapshots(db, keep=second.directory)
    assert snapshot_directories(db) == sorted([first.directory, second.directory])
    first.release()
    remove_stale_snapshots(db, keep=second.directory)
    assert snapshot_directories(db) == [second.directory]
    second.release()
    remove_stale_snapshots(db)
    assert snapshot_directories(db) == []
    assert db.exists()


# what wrk asks through a rebuild: cached pages, searches, SQL
REBUILD_LOAD_PATHS = [
    "/catalog/papers",
    "/catalog/search?q=learning",
    "/catalog/papers?_search=model",
    f"/catalog.json?sql={COUNT_SQL.replace(' ', '+')}",
]


def server_processes(process):
    """The servers (`python -m loader.serve.workers`) the supervisor `process` has started."""
    found = []
    for task in Path(f"/proc/{process.pid}/task").glob("*"):
        with contextlib.suppress(OSError):
            for child in map(int, (task / "children").read_text().split()):
                with contextlib.suppress(OSError):
                    if b"loader.serve.workers" in Path(f"/proc/{child}/cmdline").read_bytes():
                        found.append(child)
    return found


def wait_for(condition, what, seconds=STARTUP_SECONDS, poll=POLL_SECONDS):
    deadline = time.monotonic() + seconds
    while not condition():
        assert time.monotonic() < deadline, f"{what}: not within {seconds} s"
        time.sleep(poll)


def hold_the_switch(process, db, before, workers):
    """After a new build: stop the supervisor (SIGSTOP) as soon as it has started the new
    build's server, and return once that server's workers all wait at the gate. The old build
    answers until the supervisor goes on (SIGCONT): it then stops the old workers (they drain
    their connections) and opens the gate, as it does unheld."""
    [old_server] = server_processes(process)
    # the new workers take seconds to start (Python, Datasette, the site): polled far more often
    wait_for(
        lambda: set(server_processes(process)) - {old_server}, "the new build's server", poll=0.005
    )
    process.send_signal(signal.SIGSTOP)

    def new_snapshots():
        return [directory for directory in snapshot_directories(db) if directory not in before]

    wait_for(new_snapshots, "the new build's snapshot")
    [directory] = new_snapshots()
    wait_for(
        lambda: len(list(directory.glob(f"{READY_PREFIX}*"))) == workers,
        "the new build's workers at the gate",
    )


@pytest.mark.skipif(shutil.which("wrk") is None, reason="needs wrk (Debian: apt-get install wrk)")
@pytest.mark.parametrize(
    "load_during",
    [
        # the switch under load (the old workers' drain, the gate opening), the new build's
        # workers started unloaded and held at the gate until then
        "the switch",
        # the load through the whole restart: the new build's inspect and workers' start too
        pytest.param("the whole restart", marks=pytest.mark.slow),
    ],
)
def test_rebuild_while_serving_moves_the_server_to_the_new_build(
    tmp_path, seed_catalog, request, load_during
):
    """Two workers move to a new build while a keep-alive client asks again and again and wrk
    keeps 64 connections busy: never an old answer after a new one, and no error on any
    connection (the old workers drain them: loader/serve/drain.py)."""
    workers = 2
    if load_during == "the switch":
        # the module's two-worker server, fresh (the kill -9 test below ends it)
        db, url, process = request.getfixturevalue("two_workers")
        server = contextlib.nullcontext((url, process))
    else:
        db = tmp_path / "catalog.db"
        build_catalog(discover([SEEDS])[:1], db)
        server = served(db, workers=workers)
    # the next build (all the seeds: a copy of the seed catalog), made beforehand and moved in
    # as `build` moves its own: the load runs only while the server switches
    next_build = tmp_path / "next" / "catalog.db"
    next_build.parent.mkdir()
    shutil.copy(seed_catalog, next_build)
    new = sqlite3_count(next_build)
    load = load_module()
    with server as (url, process):
        old = paper_count(url)
        assert new != old
        before = snapshot_directories(db)
        assert len(before) == 1 and os.path.samefile(before[0] / "catalog.db", db)

        seen, stop = [], threading.Event()

        def ask_repeatedly():
            with httpx.Client(timeout=10) as client:
                while not stop.is_set():
                    try:
                        response = client.get(
                            f"{url}/catalog.json", params={"sql": COUNT_SQL, "_shape": "array"}
                        )
                    except httpx.TransportError:
                        seen.append("refused")  # a connection the restart broke
                    else:
                        ok = response.status_code == 200
                        seen.append(response.json()[0]["n"] if ok else response.status_code)
                    time.sleep(0.02)

        asker = threading.Thread(target=ask_repeatedly)
        try:
            if load_during == "the switch":
                os.replace(next_build, db)
                hold_the_switch(process, db, before, workers)
            with load.wrk_until_stopped(url, REBUILD_LOAD_PATHS, 64, threads=1) as wrk:
                asker.start()
                try:
                    # every connection busy, the old build answering (awaited, not slept:
                    # on a busy machine the first answer may take longer than any sleep)
                    wait_for(lambda: old in seen, "an answer from the old build under load")
                    if load_during == "the switch":
                        process.send_signal(signal.SIGCONT)  # the switch
                    else:
                        os.replace(next_build, db)  # the restart, then the switch
                    wait_for(lambda: new in seen, "an answer from the new build")
                    time.sleep(0.5)  # the new build answering under load
                finally:
                    stop.set()
                    asker.join()
        finally:
            process.send_signal(signal.SIGCONT)  # never left stopped, whatever failed

        answers = [a for a in seen if a != "refused"]
        print(
            f"\nrebuild while serving: {answers.count(old)} old answers, "
            f"{seen.count('refused')} refused during the restart, {answers.count(new)} new; "
            f"wrk: {wrk['requests']} requests, {load.socket_errors(wrk)} socket errors"
        )
        assert "refused" not in seen
        assert wrk["requests"] > 0 and wrk["non_2xx"] == 0
        # which kind of socket error, in full (pytest cuts a long dict short)
        errors = {k: wrk[k] for k in ("connect_errors", "read_errors", "write_errors", "timeouts")}
        assert load.socket_errors(wrk) == 0, errors
        assert set(answers) <= {old, new}, seen
        assert answers[0] == old and answers[-1] == new
        first_new = answers.index(new)
        assert all(a == new for a in answers[first_new:]), "an old answer after the new build"
        # the table counts come from the inspect file: it must describe the new build too
        tables = local_http.get(f"{url}/catalog.json", timeout=10).json()["tables"]
        assert {t["name"]: t["count"] for t in tables}["papers"] == new
        after = snapshot_directories(db)
        assert len(after) == 1 and after != before
        assert os.path.samefile(after[0] / "catalog.db", db)
        assert process.poll() is None
    if load_during != "the switch":  # its own server, stopped (SIGTERM) on leaving `served`
        assert_stopped_cleanly(db, url)


def assert_stopped_cleanly(db, url):
    """After a supervisor's SIGTERM stop (`served` sends it): no snapshot left, the port closed."""
    assert snapshot_directories(db) == []
    assert not port_is_open(url)


@pytest.fixture(scope="module")
def two_workers(tmp_path_factory):
    """`paper-catalog serve` with two workers on a build of the first seed file: yields (its
    catalog file, base URL, the process). A server start costs seconds of CPU: the rebuild test
    ("the switch") moves this one to a new build, then the kill -9 test ends it (in this
    file's order; run alone, each gets a fresh one)."""
    db = tmp_path_factory.mktemp("two-workers") / "catalog.db"
    build_catalog(discover([SEEDS])[:1], db)
    with served(db, workers=2) as (url, process):
        yield db, url, process


def test_server_stops_with_its_supervisor_even_on_kill_9(two_workers):
    db, url, process = two_workers
    assert process.poll() is None and port_is_open(url)
    assert len(server_processes(process)) == 1 and snapshot_directories(db)
    process.send_signal(signal.SIGKILL)  # the two workers' server is orphaned
    process.wait(10)
    deadline = time.monotonic() + 30
    while port_is_open(url) and time.monotonic() < deadline:
        time.sleep(POLL_SECONDS)
    assert not port_is_open(url)
    # once the orphaned server has exited nobody holds the snapshot: cleanup removes it
    deadline = time.monotonic() + 30
    while snapshot_directories(db) and time.monotonic() < deadline:
        remove_stale_snapshots(db)
        time.sleep(POLL_SECONDS)
    assert snapshot_directories(db) == []


def sqlite3_count(db):
    with contextlib.closing(sqlite3.connect(db)) as connection:
        return connection.execute(COUNT_SQL).fetchone()[0]


def load_module():
    spec = importlib.util.spec_from_file_location("bench_load", ROOT / "bench" / "load.py")
    module = importlib.util.module_from_spec(spec)
    spec.loader.exec_module(module)
    return module


@pytest.fixture(scope="module")
def seed_server(tmp_path_factory, seed_catalog):
    """`paper-catalog serve` (one worker) on a copy of the seed catalog in a file named big.db:
    yields (base URL, its catalog file, the process, its log). Each test leaves it serving the
    seed catalog (a later build of it, maybe)."""
    folder = tmp_path_factory.mktemp("served")
    db = folder / "big.db"
    shutil.copy(seed_catalog, db)
    log_path = folder / "server.log"
    with log_path.open("wb") as log, served(db, log=log) as (url, process):
        yield url, db, process, log_path
    # stopped (SIGTERM by `served`), after the rebuilds of the tests that used it
    assert_stopped_cleanly(db, url)


@pytest.mark.skipif(shutil.which("wrk") is None, reason="needs wrk (Debian: apt-get install wrk)")
def test_short_load_run_answers_everything(seed_server):
    """`make load` in miniature: a second of wrk, no non-2xx, no socket errors; and the status
    counting itself notices a page that fails."""
    load = load_module()
    url, db, *_ = seed_server
    kinds = load.pick_urls(db)
    assert all(len(paths) >= 3 for paths in kinds.values())
    paths = [path for kind in kinds.values() for path in kind]
    load.check_urls(url, kinds)
    figures, _ = load.run_wrk(url, paths, duration=1, connections=8, threads=1)
    broken, _ = load.run_wrk(url, ["/catalog/no_such_table"], 1, connections=1, threads=1)
    assert figures["requests"] > 0
    assert figures["non_2xx"] == 0 and load.socket_errors(figures) == 0
    assert figures["ok_2xx"] == figures["requests"]
    assert broken["requests"] > 0 and broken["non_2xx"] == broken["requests"]


def test_setting_text_keeps_zero_apart_from_off():
    # 0 == False in Python: max_csv_mb 0 (no cap) once went out as "off" and Datasette refused it
    assert [setting_text(v) for v in (0, False, True, 1000)] == ["0", "off", "on", "1000"]


def test_served_site_is_catalog_whatever_the_file(seed_server):
    url, db, *_ = seed_server
    page = local_http.get(f"{url}/catalog/papers", headers={"accept-encoding": "gzip"}, timeout=10)
    assert page.status_code == 200 and page.headers["content-encoding"] == "gzip"
    assert "papers" in page.text
    etag = page.headers["etag"]
    assert page.headers["cache-control"] == "no-cache"
    again = local_http.get(f"{url}/catalog/papers", headers={"if-none-match": etag}, timeout=10)
    assert again.status_code == 304 and again.content == b""
    assert paper_count(url) == sqlite3_count(db)
    assert local_http.get(f"{url}/big", timeout=10).status_code == 404
    settings = local_http.get(f"{url}/-/settings.json", timeout=10).json()
    assert {name: settings[name] for name in SETTINGS} == SETTINGS


def test_a_site_that_cannot_start_is_one_error_line_not_a_restart_loop(tmp_path):
    db = tmp_path / "catalog.db"
    build_catalog(discover([SEEDS])[:1], db)
    metadata = tmp_path / "metadata.yml"
    metadata.write_text("title: [unclosed\n")
    command = [sys.executable, "-c", "from loader.cli import cli; cli()", "serve"]
    command += ["--db", str(db), "--port", str(free_port()), "--metadata", str(metadata)]
    result = subprocess.run(
        command, check=False, cwd=ROOT, capture_output=True, text=True, timeout=120
    )
    assert result.returncode != 0
    assert "Error: cannot start the site: Metadata is not valid JSON or YAML" in result.stderr
    assert "Traceback" not in result.stderr
    assert snapshot_directories(db) == []


def test_a_file_that_is_no_catalog_is_one_error_line(tmp_path):
    db = tmp_path / "catalog.db"
    db.write_bytes(b"not an SQLite file\n" * 500)
    command = [sys.executable, "-c", "from loader.cli import cli; cli()", "serve"]
    command += ["--db", str(db), "--port", str(free_port())]
    result = subprocess.run(
        command, check=False, cwd=ROOT, capture_output=True, text=True, timeout=120
    )
    assert result.returncode != 0
    assert f"Error: cannot serve {db}: file is not a database" in result.stderr
    assert "Traceback" not in result.stderr


def test_a_new_build_that_is_no_catalog_leaves_the_previous_one_serving_the_next_revalidates(
    seed_server, seed_catalog, tmp_path
):
    """A build that is no catalog: the previous one keeps serving, one line in the log. The
    next good build (the seed catalog again, a new build of it) is served, and answers the old
    ETag with its own page."""
    url, db, process, log_path = seed_server
    papers = sqlite3_count(db)
    etag = local_http.get(f"{url}/catalog/papers", timeout=10).headers["etag"]
    damaged = tmp_path / "damaged.db"
    damaged.write_bytes(b"not an SQLite file\n" * 500)
    os.replace(damaged, db)
    deadline = time.monotonic() + STARTUP_SECONDS
    while b"still serving the previous one" not in log_path.read_bytes():
        assert time.monotonic() < deadline and process.poll() is None, log_path.read_text()
        time.sleep(POLL_SECONDS)
    assert paper_count(url) == papers
    assert process.poll() is None

    shutil.copy(seed_catalog, tmp_path / "next.db")
    os.replace(tmp_path / "next.db", db)  # as `build` moves its own

    def new_tag():
        return local_http.get(f"{url}/catalog/papers", timeout=10).headers["etag"] != etag

    wait_for(new_tag, "the next build")
    assert paper_count(url) == sqlite3_count(db) == papers
    # a new build answers the old tag with the new page
    fresh = local_http.get(f"{url}/catalog/papers", headers={"if-none-match": etag}, timeout=10)
    assert fresh.status_code == 200 and fresh.headers["etag"] != etag
    text = log_path.read_text()
    assert "(file is not a database); still serving the previous one" in text, text
    assert "Traceback" not in text


# -- the served app through its ASGI layers (ETag, response cache, gzip), in process -----------


@pytest_asyncio.fixture(loop_scope="session")
async def app_client(site_app):
    transport = httpx.ASGITransport(app=site_app)
    async with httpx.AsyncClient(transport=transport, base_url="http://site") as client:
        yield client


@pytest.mark.asyncio(loop_scope="session")
async def test_the_served_app_tags_caches_and_compresses_pages(app_client):
    page = await app_client.get("/catalog/papers", headers={"accept-encoding": "gzip"})
    assert page.status_code == 200 and page.headers["content-encoding"] == "gzip"
    assert "Skip to content" in page.text  # decoded by httpx: the site's own template
    etag = page.headers["etag"]
    assert "tests-" in etag and page.headers["cache-control"] == "no-cache"
    again = await app_client.get("/catalog/papers", headers={"if-none-match": etag})
    assert again.status_code == 304 and again.content == b""
    # the same page again, from the response cache: the same bytes
    first = await app_client.get("/catalog/papers.json?_size=3")
    second = await app_client.get("/catalog/papers.json?_size=3")
    assert first.content == second.content and first.json()["rows"]


@pytest.mark.asyncio(loop_scope="session")
async def test_the_served_app_carries_its_datasette(site_app, datasette):
    assert site_app.datasette is datasette
    assert (await datasette.client.get("/catalog/papers.json?_size=1")).status_code == 200


@pytest.mark.asyncio
async def test_catalog_is_served_as_catalog(datasette):
    response = await datasette.client.get("/catalog/papers.json?_shape=array&_size=1")
    assert response.status_code == 200
    assert len(response.json()) == 1
