"""Load test: wrk against `paper-catalog serve` on 127.0.0.1, rotating over search, facet, paper
and author pages. Fails (exit 1) on any non-2xx response or socket error; writes the figures to
bench/out/load.json and load.md.

Example:

    .venv/bin/python bench/load.py --db catalog.db --duration 30 --connections 64
"""

import argparse
import json
import os
import shutil
import signal
import socket
import sqlite3
import subprocess
import sys
import tempfile
import time
import urllib.error
import urllib.parse
import urllib.request
from contextlib import closing, contextmanager
from pathlib import Path

ROOT = Path(__file__).resolve().parent.parent
LUA_SCRIPT = Path(__file__).resolve().parent / "load.lua"
OUT = Path(__file__).resolve().parent / "out"
WRK = "wrk"
STARTUP_SECONDS = 120
SEARCH_TERMS = ["learning", "language model", "reasoning", "graph", "diffusion", "robust"]
URLS_PER_KIND = 12


def free_port():
    with socket.socket() as sock:
        sock.bind(("127.0.0.1", 0))
        return sock.getsockname()[1]


def quote(value):
    return urllib.parse.quote(str(value), safe="")


def pick_urls(db, per_kind=URLS_PER_KIND):
    """Paths of each kind, spread over the catalog (ids taken at even steps, not the first n)."""
    with closing(sqlite3.connect(f"file:{db}?mode=ro", uri=True)) as connection:

        def spread(sql):
            rows = [row[0] for row in connection.execute(sql)]
            step = max(1, len(rows) // per_kind)
            return rows[::step][:per_kind]

        papers = spread("select id from papers order by id")
        authors = spread("select id from authors order by paper_count desc, id")
        areas = spread("select distinct area from papers where area is not null order by area")
        tracks = spread("select distinct track from papers where track is not null order by track")
    kinds = {
        "search": [f"/catalog/search?q={quote(term)}" for term in SEARCH_TERMS]
        + [f"/catalog/papers?_search={quote(term)}" for term in SEARCH_TERMS[:3]],
        "facet": ["/catalog/papers"]
        + [f"/catalog/papers?area={quote(area)}" for area in areas]
        + [f"/catalog/papers?track={quote(track)}" for track in tracks[:4]],
        "paper": [f"/catalog/papers/{quote(paper)}" for paper in papers],
        "author": [f"/catalog/authors/{author}" for author in authors],
    }
    return kinds


@contextmanager
def serving(db, port):
    command = [sys.executable, "-c", "from loader.cli import cli; cli()", "serve"]
    command += ["--db", str(db), "--port", str(port)]
    command += ["--metadata", str(ROOT / "metadata.yml")]
    url = f"http://127.0.0.1:{port}"
    with tempfile.TemporaryFile() as log:
        process = subprocess.Popen(command, cwd=ROOT, stdout=log, stderr=subprocess.STDOUT)
        try:
            yield wait_for(url, process, log)
        finally:
            process.send_signal(signal.SIGTERM)
            process.wait(30)


def wait_for(url, process, log, seconds=STARTUP_SECONDS):
    """url once the server started by process answers; its log's tail if it never does."""
    deadline = time.monotonic() + seconds
    while True:
        if process.poll() is not None or time.monotonic() > deadline:
            log.seek(0)
            raise SystemExit(f"server did not start:\n{log.read().decode()[-2000:]}")
        try:
            with urllib.request.urlopen(f"{url}/-/versions.json", timeout=5):
                break
        except (urllib.error.URLError, ConnectionError, TimeoutError):
            time.sleep(0.2)
    return url


def check_urls(url, kinds):
    """Every path answers 200 once before the run: a broken URL is a bug, not load."""
    broken = []
    for paths in kinds.values():
        for path in paths:
            try:
                with urllib.request.urlopen(url + path, timeout=30) as response:
                    status = response.status
            except urllib.error.HTTPError as error:
                status = error.code
            if status != 200:
                broken.append(f"{status} {path}")
    if broken:
        raise SystemExit("URLs that do not answer 200:\n" + "\n".join(broken))


def wrk_command(url, duration, connections, threads):
    command = [WRK, "-t", str(threads), "-c", str(connections), "-d", f"{duration}s"]
    return command + ["--timeout", "30s", "--latency", "-s", str(LUA_SCRIPT), url]


def url_listing(paths):
    """The file of paths load.lua reads ($LOAD_URLS); the caller removes it."""
    with tempfile.NamedTemporaryFile("w", suffix=".txt", delete=False) as listing:
        listing.write("\n".join(paths) + "\n")
    return listing.name


def wrk_figures(stdout):
    line = next(line for line in stdout.splitlines() if line.startswith("LOAD_RESULT "))
    figures = json.loads(line.removeprefix("LOAD_RESULT "))
    figures["requests_per_s"] = round(figures["requests"] / figures["duration_s"], 1)
    return figures


def run_wrk(url, paths, duration, connections, threads, once=False):
    """wrk over paths, in rotation; once=True asks each path at most once (load.lua), the
    figures then saying how many paths the run took (`paths_used`) and any asked again."""
    listing = url_listing(paths)
    try:
        result = subprocess.run(
            wrk_command(url, duration, connections, threads),
            env={
                **os.environ,
                "LOAD_URLS": listing,
                "LOAD_ONCE": "1" if once else "0",
                "LOAD_THREADS": str(threads),
            },
            capture_output=True,
            text=True,
            check=True,
        )
    finally:
        os.unlink(listing)
    return wrk_figures(result.stdout), result.stdout


@contextmanager
def wrk_until_stopped(url, paths, connections, threads):
    """wrk running in the background until the block ends (then stopped as Ctrl-C stops it,
    which still prints its figures); yields a dict that holds the figures afterwards."""
    listing = url_listing(paths)
    figures = {}
    process = subprocess.Popen(
        wrk_command(url, 3600, connections, threads),
        env={**os.environ, "LOAD_URLS": listing},
        stdout=subprocess.PIPE,
        text=True,
    )
    try:
        yield figures
    finally:
        process.send_signal(signal.SIGINT)
        stdout, _ = process.communicate(timeout=60)
        os.unlink(listing)
    figures.update(wrk_figures(stdout))


def socket_errors(figures):
    return sum(figures[k] for k in ("connect_errors", "read_errors", "write_errors", "timeouts"))


def markdown(figures, settings):
    return (
        "| connections | duration | requests | req/s | non-2xx | socket errors | p50 | p90 | p99 |"
        " max |\n|---|---|---|---|---|---|---|---|---|---|\n"
        f"| {settings['connections']} | {figures['duration_s']:.1f} s | {figures['requests']} |"
        f" {figures['requests_per_s']} | {figures['non_2xx']} | {socket_errors(figures)} |"
        f" {figures['p50_ms']:.1f} ms | {figures['p90_ms']:.1f} ms | {figures['p99_ms']:.1f} ms |"
        f" {figures['max_ms']:.0f} ms |\n\nURLs rotated: {settings['urls']} ({settings['kinds']}),"
        f" catalog: {settings['papers']} papers, machine: {os.cpu_count()} CPUs.\n"
    )


def load_test(db, duration=30, connections=64, threads=2, out=OUT):
    if shutil.which(WRK) is None:
        raise SystemExit("wrk is not installed (Debian: apt-get install wrk)")
    db = Path(db).resolve()
    kinds = pick_urls(db)
    paths = [path for kind in kinds.values() for path in kind]
    with serving(db, free_port()) as url:
        check_urls(url, kinds)
        figures, raw = run_wrk(url, paths, duration, connections, threads)
    with closing(sqlite3.connect(f"file:{db}?mode=ro", uri=True)) as connection:
        papers = connection.execute("select count(*) from papers").fetchone()[0]
    settings = {
        "connections": connections,
        "threads": threads,
        "urls": len(paths),
        "kinds": ", ".join(f"{len(v)} {k}" for k, v in kinds.items()),
        "papers": papers,
    }
    if out:
        out = Path(out)
        out.mkdir(parents=True, exist_ok=True)
        (out / "load.json").write_text(json.dumps({**figures, **settings}, indent=2) + "\n")
        (out / "load.md").write_text(markdown(figures, settings))
        (out / "load-wrk.txt").write_text(raw)
    return figures, settings


def main():
    parser = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    parser.add_argument("--db", default="catalog.db")
    parser.add_argument("--duration", type=int, default=30, help="seconds")
    parser.add_argument("--connections", type=int, default=64)
    parser.add_argument("--threads", type=int, default=2)
    parser.add_argument("--out", default=str(OUT))
    args = parser.parse_args()
    figures, settings = load_test(args.db, args.duration, args.connections, args.threads, args.out)
    print(markdown(figures, settings))
    if figures["non_2xx"] or socket_errors(figures):
        print(f"FAILED: non-2xx examples: {figures['non_2xx_examples']}", file=sys.stderr)
        sys.exit(1)


if __name__ == "__main__":
    main()
