"""CPU per request by kind of page: our site against stock Datasette, in process, no network.

The URLs of bench/page_kinds.py (each kind's own list; none asked twice), a kind at a time,
after a warm-up on other URLs of the kind, asked through each app's ASGI interface (our whole
served app, response cache off; stock: `Datasette(immutables=[catalog.db])`, suggested facets
off). Reports requests per CPU-second of the process (SQL threads included): on a shared
machine, steadier than wrk's req/s. Each server runs in its own process (plugins registered
for one Datasette stay registered in that process). `--profile DIR` writes a cProfile of each
server and kind (the event loop's thread: SQL threads show as the wait for them; the
figures then include the profiler's own cost).

    .venv/bin/python bench/per_kind.py --db catalog.db --requests 200
"""

import argparse
import asyncio
import cProfile
import json
import os
import re
import shutil
import subprocess
import sys
import tempfile
import time
from pathlib import Path

import httpx

ROOT = Path(__file__).resolve().parent.parent
sys.path.insert(0, str(ROOT))
sys.path.insert(0, str(ROOT / "bench"))

from loader.web import worker_reads  # this checkout's loader, as the site imports it

TRIVIAL = ("trivial page", "/-/versions.json")
# a warmed worker: the word counts and scores of related papers, rendered titles, kept
WARM_REQUESTS = 1000


async def started(app):
    """Our app opens the catalog on the ASGI lifespan startup; wait for it."""
    messages = asyncio.Queue()
    await messages.put({"type": "lifespan.startup"})
    ready = asyncio.Event()

    async def send(message):
        ready.set()

    task = asyncio.create_task(app({"type": "lifespan"}, messages.get, send))
    await ready.wait()
    return task


def create(server, db):
    if server == "stock":
        # without the installed paper-catalog plugins: Datasette's switch for its own tests
        sys._called_from_test = True
        from datasette.app import Datasette

        return Datasette(immutables=[str(db)], settings={"suggest_facets": False}).app()
    from loader.serve.app import Site, create_app

    # this checkout's site, as bench/throughput.py serves it; no response cache
    metadata = str(ROOT / "metadata.yml")
    return create_app(Site(str(db), None, metadata, "bench", "bench", cache_bytes=0))


def kind_urls(server, db, requests):
    """{kind: (warm-up paths, measured paths)} of bench/page_kinds.py for `server`."""
    import page_kinds  # bench/page_kinds.py: each kind's URLs

    urls = {}
    searches = WARM_REQUESTS + requests
    for kind, (ours_path, stock_path, keys) in page_kinds.kind_paths(db, searches).items():
        path = stock_path if server == "stock" and stock_path else ours_path
        warm, measured = keys[:WARM_REQUESTS], keys[WARM_REQUESTS : WARM_REQUESTS + requests]
        urls[kind] = ([path(key) for key in warm], [path(key) for key in measured])
    urls[TRIVIAL[0]] = ([TRIVIAL[1]], [TRIVIAL[1]] * requests)
    return urls


async def measure(server, db, requests, profile_dir=None):
    by_kind = kind_urls(server, db, requests)
    app = create(server, db)
    lifespan = await started(app) if server == "ours" else None
    figures = {}
    transport = httpx.ASGITransport(app=app)
    async with httpx.AsyncClient(transport=transport, base_url="http://bench") as client:
        await client.get("/catalog/papers")  # opens connections, loads templates
        await worker_reads.all_read()  # our facet counts and id ranks in memory, read once
        for kind, (warm, paths) in by_kind.items():
            for path in warm:
                await client.get(path, headers={"accept-encoding": "identity"})
            failed = 0
            profile = cProfile.Profile() if profile_dir else None
            if profile:
                profile.enable()
            cpu = time.process_time()
            for path in paths:
                response = await client.get(path, headers={"accept-encoding": "identity"})
                failed += response.status_code != 200
            cpu = time.process_time() - cpu
            if profile:
                profile.disable()
                name = re.sub(r"\W+", "-", f"{server} {kind}").strip("-")
                profile.dump_stats(Path(profile_dir) / f"{name}.prof")
            figures[kind] = {
                "req_per_cpu_s": round(len(paths) / cpu, 1),
                "ms_per_request": round(1000 * cpu / len(paths), 2),
                "failed": failed,
            }
    if lifespan is not None:
        lifespan.cancel()
    return figures


def main():
    parser = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    parser.add_argument("--db", default="catalog.db")
    parser.add_argument("--requests", type=int, default=200, help="per kind")
    parser.add_argument("--profile", metavar="DIR", help="write a cProfile of each run here")
    parser.add_argument("--server", choices=["ours", "stock"], help=argparse.SUPPRESS)
    args = parser.parse_args()
    if args.server:  # one side, in its own process
        figures = asyncio.run(measure(args.server, Path(args.db), args.requests, args.profile))
        print(json.dumps(figures))
        return
    with tempfile.TemporaryDirectory() as work:
        # stock Datasette names the database after its file: `catalog`, as our URLs say
        db = Path(work) / "catalog.db"
        try:
            os.link(Path(args.db).resolve(), db)
        except OSError:
            shutil.copy(args.db, db)
        results = {}
        for server in ("stock", "ours"):
            command = [sys.executable, __file__, "--db", str(db), "--server", server]
            if args.profile:
                Path(args.profile).mkdir(parents=True, exist_ok=True)
                command += ["--profile", str(Path(args.profile).resolve())]
            output = subprocess.run(
                command + ["--requests", str(args.requests)],
                capture_output=True,
                text=True,
                check=True,
            ).stdout
            results[server] = json.loads(output.strip().splitlines()[-1])
    print("| kind | ours ms/request | stock ms/request | ours/stock req/CPU-s |")
    print("|---|---|---|---|")
    for kind in results["ours"]:
        ours, stock = results["ours"][kind], results["stock"][kind]
        share = round(ours["req_per_cpu_s"] / stock["req_per_cpu_s"], 2)
        print(f"| {kind} | {ours['ms_per_request']} | {stock['ms_per_request']} | {share} |")
    if any(figures["failed"] for side in results.values() for figures in side.values()):
        sys.exit("some requests failed")


if __name__ == "__main__":
    main()
