"""Worker memory: each worker's resident memory as `paper-catalog serve` answers large exports.

Serves a catalog, then runs rounds of the largest exports the site offers (every match of a
common term as CSV, BibTeX and JSON, and the streamed papers CSV), a few at a time, and prints
each worker's resident memory (VmRSS, and its anonymous and file-backed parts, from
/proc/PID/status) at the start and after each round. docs/serving.md#memory quotes it.

Example (a 1M catalog: a narrower stream, since the whole table is 3.7 GB of CSV):

    nice .venv/bin/python bench/worker_memory.py --db /tmp/bench/1m/catalog.db \\
        --term reasoning --stream-filter 'area=Theory&_nocol=abstract_plain' --rounds 2
"""

import argparse
import concurrent.futures
import os
import signal
import sqlite3
import subprocess
import sys
import tempfile
import time
import urllib.parse
from contextlib import contextmanager
from pathlib import Path

import httpx

sys.path.insert(0, str(Path(__file__).resolve().parent))
import load  # bench/load.py: free ports, waiting for a server

ROOT = Path(__file__).resolve().parent.parent
STARTUP_SECONDS = 300
EXPORT_TIMEOUT_SECONDS = 1800


@contextmanager
def serving(db, workers, cache_mb=None):
    """`paper-catalog serve` on db; yields (URL, the supervisor's process)."""
    port = load.free_port()
    command = [sys.executable, "-c", "from loader.cli import cli; cli()", "serve"]
    command += ["--db", str(db), "--port", str(port), "--workers", str(workers)]
    command += ["--metadata", str(ROOT / "metadata.yml")]
    if cache_mb is not None:
        command += ["--cache-mb", str(cache_mb)]
    url = f"http://127.0.0.1:{port}"
    with tempfile.TemporaryFile() as log:
        process = subprocess.Popen(command, cwd=ROOT, stdout=log, stderr=subprocess.STDOUT)
        try:
            load.wait_for(url, process, log, STARTUP_SECONDS)
            yield url, process
        finally:
            process.send_signal(signal.SIGTERM)
            process.wait(60)


def children(pid):
    try:
        text = Path(f"/proc/{pid}/task/{pid}/children").read_text()
    except FileNotFoundError:
        return []
    return [int(child) for child in text.split()]


def worker_pids(supervisor_pid):
    """The processes that answer requests: uvicorn's workers under the server process the
    supervisor started, or that server process itself when it runs one worker in-process."""
    servers = children(supervisor_pid)
    workers = [worker for server in servers for worker in children(server)]
    # multiprocessing's resource tracker may be a child too: workers are spawned
    workers = [pid for pid in workers if b"spawn_main" in command_line(pid)]
    return workers or servers


def command_line(pid):
    try:
        return Path(f"/proc/{pid}/cmdline").read_bytes()
    except FileNotFoundError:
        return b""


def resident_mb(pid):
    """VmRSS and its anonymous and file-backed parts, in MB."""
    fields = {}
    for line in Path(f"/proc/{pid}/status").read_text().splitlines():
        name, _, value = line.partition(":")
        if name in ("VmRSS", "RssAnon", "RssFile"):
            fields[name] = int(value.split()[0]) / 1024
    return fields


def export_paths(term, stream_filter=""):
    query = urllib.parse.urlencode({"q": term, "_all": "1"})
    stream = "/catalog/papers.csv?_stream=1&_size=max" + (
        f"&{stream_filter}" if stream_filter else ""
    )
    return [f"/search.csv?{query}", f"/search.bib?{query}", f"/search.json?{query}", stream]


def page_paths(db, papers):
    """Pages that fill each worker's caches: every area's filtered table (the facet counts' link
    tables), searches (rendered cells) and `papers` paper pages (related papers' word counts)."""
    with sqlite3.connect(f"file:{db}?mode=ro&immutable=1", uri=True) as connection:
        areas = [row[0] for row in connection.execute("select distinct area from papers")]
        ids = [row[0] for row in connection.execute("select id from papers limit ?", (papers,))]
    quote = urllib.parse.quote
    paths = [f"/catalog/papers?area={quote(area)}" for area in areas if area]
    paths += [f"/catalog/search?q={term}" for term in ("learning", "model", "graph", "robust")]
    paths += [f"/catalog/papers?_search={term}" for term in ("learning", "model", "graph")]
    return paths + [f"/catalog/papers/{quote(paper)}" for paper in ids]


def download(url):
    """Reads the whole answer, as a client saving it would; returns (status, bytes of the
    answer once decompressed)."""
    size = 0
    with httpx.stream("GET", url, timeout=EXPORT_TIMEOUT_SECONDS) as response:
        for chunk in response.iter_bytes():
            size += len(chunk)
    return response.status_code, size


def run_exports(url, paths, concurrency):
    """Every path once, `concurrency` at a time, each on its own connection (so they spread
    over the workers and over each worker's SQL threads); returns (path, status, bytes)."""
    with concurrent.futures.ThreadPoolExecutor(concurrency) as pool:
        results = pool.map(lambda path: (path, *download(url + path)), paths)
        return list(results)


def main():
    parser = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    parser.add_argument("--db", required=True)
    parser.add_argument("--workers", type=int, default=2)
    parser.add_argument("--rounds", type=int, default=3)
    parser.add_argument("--concurrency", type=int, default=3)
    parser.add_argument("--term", default="the", help="a search term that matches many papers")
    parser.add_argument("--stream-filter", default="", help="a filter for the streamed CSV")
    parser.add_argument("--cache-mb", type=int, default=None)
    parser.add_argument(
        "--pages", type=int, default=300, help="paper pages asked before the exports"
    )
    args = parser.parse_args()
    paths = export_paths(args.term, args.stream_filter)
    with serving(args.db, args.workers, args.cache_mb) as (url, supervisor):
        pids = worker_pids(supervisor.pid)
        answers = []
        print(f"catalog {args.db} ({os.path.getsize(args.db) / 1e6:.0f} MB), workers {pids}")
        print(
            "| after | "
            + " | ".join(f"worker {n + 1} RSS (anon + file) MB" for n in range(len(pids)))
            + " |"
        )
        print("|---|" + "---:|" * len(pids))

        def row(label):
            cells = []
            for pid in pids:
                mb = resident_mb(pid)
                cells.append(f"{mb['VmRSS']:.0f} ({mb['RssAnon']:.0f} + {mb['RssFile']:.0f})")
            print(f"| {label} | " + " | ".join(cells) + " |", flush=True)

        row("start")
        pages = page_paths(args.db, args.pages)
        began = time.monotonic()
        statuses = [status for _, status, _ in run_exports(url, pages, args.concurrency)]
        row(
            f"{len(pages)} pages ({statuses.count(200)} answered 200, {time.monotonic() - began:.0f} s)"
        )
        for number in range(1, args.rounds + 1):
            began = time.monotonic()
            results = run_exports(url, paths, args.concurrency)
            seconds = time.monotonic() - began
            total = sum(size for _, _, size in results) / 1e6
            row(f"round {number} ({len(paths)} exports, {total:.0f} MB in {seconds:.0f} s)")
            answers.append(results)
        # a step of an export past the time limit ends it early with a note: a shorter answer
        print("\nAnswers, round by round (status, MB once decompressed):")
        for number, path in enumerate(paths):
            cells = ", ".join(f"{r[number][1]} {r[number][2] / 1e6:.1f}" for r in answers)
            print(f"- `{path}`: {cells}")


if __name__ == "__main__":
    main()
