"""Each kind of page on URLs that never repeat: `paper-catalog serve` (2 workers) against stock
`datasette serve -i` (one process) on the same catalog, as a crawler or new visitors ask them.

Kinds: paper pages, author pages, table search (`/catalog/papers?_search=`), JSON search
(`/catalog/papers.json?_search=`) and our `/search?q=` against stock's table search for the
same words. Searches are words and word pairs taken from the papers' own titles, as a visitor
types them. Every kind has its own list of URLs, and both servers walk the same list from its
start, so each asks the same pages in the same order and no server sees a URL twice (wrk's
threads take turns through it: bench/load.lua with LOAD_ONCE); the warm-up asks a separate
list. Runs of ours and stock alternate (ours, stock, stock, ours, ...), each kind in turn, on
servers started once, so a ratio compares runs seconds apart on a shared machine. Reports
req/s, p99, errors and req/CPU-s of each server's process tree, the ratios ours/stock, the
CPU and the load average.

    .venv/bin/python bench/page_kinds.py --db catalog.db --duration 6 --rounds 2
"""

import argparse
import json
import os
import random
import re
import shutil
import sqlite3
import sys
import tempfile
import time
from contextlib import ExitStack, closing
from pathlib import Path

sys.path.insert(0, str(Path(__file__).resolve().parent))
import load  # bench/load.py: wrk and its Lua script, free ports
import throughput  # bench/throughput.py: starting both servers, their CPU

ROOT = Path(__file__).resolve().parent.parent
OUT = Path(__file__).resolve().parent / "out"
KINDS = ["paper page", "author page", "table search", "JSON search", "/search"]
# the goal: each kind at least this many times stock's req/s, p99 under P99_LIMIT_MS
GOAL_RATIO = 2.0
P99_LIMIT_MS = 1000
# both servers warmed on other URLs of the kind first, long enough for what a worker keeps
# (related papers' word counts and scores, rendered titles) to hold its common entries
WARM_URLS = 3000
WARM_SECONDS = 10
SEED = 17
TITLE_WORD = re.compile(r"[a-z]{4,}")
# words that say nothing as a search on their own
COMMON = {"with", "from", "that", "this", "their", "using", "via", "into", "over", "under"}


def search_terms(connection, limit, seed=SEED):
    """Distinct searches from titles: each a title's word or two neighbouring words."""
    rng = random.Random(seed)
    terms = set()
    titles = connection.execute("select coalesce(title, label) from papers order by id")
    for (title,) in titles:
        found = [w for w in TITLE_WORD.findall((title or "").lower()) if w not in COMMON]
        for i, word in enumerate(found):
            terms.add(word)
            if i + 1 < len(found):
                terms.add(f"{word} {found[i + 1]}")
        if len(terms) >= 4 * limit:
            break
    terms = sorted(terms)
    rng.shuffle(terms)
    return terms[:limit]


def kind_paths(db, limit, seed=SEED):
    """{kind: (path of a key for ours, for stock when it differs, the keys)}, the keys
    shuffled: every paper, every author, up to `limit` searches."""
    rng = random.Random(seed)
    with closing(sqlite3.connect(f"file:{db}?mode=ro", uri=True)) as connection:
        papers = [row[0] for row in connection.execute("select id from papers order by id")]
        authors = [row[0] for row in connection.execute("select id from authors order by id")]
        terms = search_terms(connection, limit, seed)
    for keys in (papers, authors):
        rng.shuffle(keys)
    q = load.quote
    table_search = lambda term: f"/catalog/papers?_search={q(term)}"
    kinds = {
        "paper page": (lambda key: f"/catalog/papers/{q(key)}", None, papers),
        "author page": (lambda key: f"/catalog/authors/{key}", None, authors),
        "table search": (table_search, None, terms),
        "JSON search": (lambda term: f"/catalog/papers.json?_search={q(term)}", None, terms),
        # ours: its /search page; stock: its table search for the same words
        "/search": (lambda term: f"/search?q={q(term)}", table_search, terms),
    }
    return kinds


def ours(db, port, workers):
    """`paper-catalog serve` as deployed (its default response cache, which URLs that never
    repeat only fill)."""
    command = [sys.executable, "-c", "from loader.cli import cli; cli()", "serve"]
    command += ["--db", str(db), "--port", str(port), "--workers", str(workers)]
    return command + ["--metadata", str(ROOT / "metadata.yml")]


class Walk:
    """One server's place in a kind's list: the next run starts where the last one stopped."""

    def __init__(self, paths):
        self.paths = paths
        self.next = 0

    def run(self, url, process, duration, connections):
        before = throughput.cpu_seconds(process.pid)
        remaining = self.paths[self.next :]
        figures, _ = load.run_wrk(url, remaining, duration, connections, threads=2, once=True)
        cpu = throughput.cpu_seconds(process.pid) - before
        self.next += figures["paths_used"]
        return {
            "req_s": figures["requests_per_s"],
            "p50_ms": figures["p50_ms"],
            "p99_ms": figures["p99_ms"],
            "errors": figures["non_2xx"] + load.socket_errors(figures),
            "repeated": figures["repeated"],
            "requests": figures["requests"],
            "cpu_s": round(cpu, 1),
            "examples": figures["non_2xx_examples"],
        }


def combined(runs):
    """A server's runs of a kind as one: requests over seconds, the worst p99."""
    seconds = sum(r["requests"] / r["req_s"] for r in runs if r["req_s"])
    requests = sum(r["requests"] for r in runs)
    cpu = sum(r["cpu_s"] for r in runs)
    return {
        "req_s": round(requests / seconds, 1) if seconds else 0.0,
        "p99_ms": max(r["p99_ms"] for r in runs),
        "errors": sum(r["errors"] for r in runs),
        "repeated": sum(r["repeated"] for r in runs),
        "requests": requests,
        "req_per_cpu_s": round(requests / cpu, 1) if cpu else None,
        "runs": runs,
    }


def measure(db, kinds, paths_of, duration, rounds, connections, workers):
    """{kind: {server: combined figures}} on servers started once; paths_of: kind_paths()."""
    servers = {
        "ours": lambda port: ours(db, port, workers),
        "stock": lambda port: throughput.stock(db, port),
    }
    results = {}
    with ExitStack() as stack:
        started = {}
        for name, command in servers.items():
            port = load.free_port()
            url = f"http://127.0.0.1:{port}"
            started[name] = (url, stack.enter_context(throughput.running(command(port), url)))
        for kind in kinds:
            ours_path, stock_path, keys = paths_of[kind]
            warm, measured = keys[:WARM_URLS], keys[WARM_URLS:]
            paths = {"ours": ours_path, "stock": stock_path or ours_path}
            walks = {name: Walk([paths[name](key) for key in measured]) for name in servers}
            for name, (url, process) in started.items():
                load.run_wrk(
                    url, [paths[name](key) for key in warm], WARM_SECONDS, connections, 2, True
                )
            runs = {name: [] for name in servers}
            order = []
            for round_ in range(rounds):
                order += ["ours", "stock"] if round_ % 2 == 0 else ["stock", "ours"]
            for name in order:
                url, process = started[name]
                runs[name].append(walks[name].run(url, process, duration, connections))
            results[kind] = {name: combined(runs[name]) for name in servers}
            print(f"{kind}: {json.dumps({n: r['req_s'] for n, r in results[kind].items()})}")
    return results


def ratio(a, b):
    return round(a / b, 2) if a and b else None


def machine():
    model = "unknown CPU"
    for line in Path("/proc/cpuinfo").read_text().splitlines():
        if line.startswith("model name"):
            model = line.split(":", 1)[1].strip()
            break
    return f"{os.cpu_count()} CPUs, {model}"


def load_average():
    return " ".join(Path("/proc/loadavg").read_text().split()[:3])


def report(db, results, settings):
    lines = [
        (
            f"Catalog: {db.name} ({throughput.papers(db)} papers); {settings['machine']};"
            f" load average {settings['load_before']} before, {settings['load_after']} after;"
            f" {settings['started']}; ours: {settings['workers']} workers; stock: one process;"
            f" {settings['connections']} connections, {settings['rounds']} runs of"
            f" {settings['duration']} s a server and kind, alternating, after a warm-up."
        ),
        "",
        (
            "| kind | ours req/s | stock req/s | ours/stock req/s | ours p99 ms | stock p99 ms"
            " | ours/stock req/CPU-s | errors (ours, stock) | goal |"
        ),
        "|---|---|---|---|---|---|---|---|---|",
    ]
    for kind, servers in results.items():
        o, s = servers["ours"], servers["stock"]
        share = ratio(o["req_s"], s["req_s"])
        met = (
            share is not None
            and share >= GOAL_RATIO
            and o["p99_ms"] < P99_LIMIT_MS
            and not o["errors"]
            and not o["repeated"]
        )
        lines.append(
            f"| {kind} | {o['req_s']} | {s['req_s']} | **{share}** | {o['p99_ms']:.0f} |"
            f" {s['p99_ms']:.0f} | {ratio(o['req_per_cpu_s'], s['req_per_cpu_s'])} |"
            f" {o['errors']}, {s['errors']} | {'met' if met else 'not met'} |"
        )
    repeated = {k: v["ours"]["repeated"] + v["stock"]["repeated"] for k, v in results.items()}
    if any(repeated.values()):
        lines += ["", f"URL lists too short, some URLs asked twice: {repeated}"]
    return "\n".join(lines) + "\n"


def main():
    parser = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    parser.add_argument("--db", default="catalog.db")
    # two runs of 6 s: the 17,060 authors of the 20k catalog last ours 14 s past the warm-up
    parser.add_argument("--duration", type=int, default=6, help="seconds a run")
    parser.add_argument("--rounds", type=int, default=2, help="runs a server and kind")
    parser.add_argument("--connections", type=int, default=64)
    parser.add_argument("--workers", type=int, default=2, help="ours")
    parser.add_argument("--kinds", nargs="+", choices=KINDS, default=KINDS)
    parser.add_argument("--searches", type=int, default=30_000, help="distinct searches")
    parser.add_argument("--out", default=str(OUT))
    args = parser.parse_args()
    if shutil.which(load.WRK) is None:
        raise SystemExit("wrk is not installed (Debian: apt-get install wrk)")
    source = Path(args.db).resolve()
    settings = {
        "machine": machine(),
        "load_before": load_average(),
        "started": time.strftime("%Y-%m-%d %H:%M"),
        "workers": args.workers,
        "connections": args.connections,
        "rounds": args.rounds,
        "duration": args.duration,
    }
    with tempfile.TemporaryDirectory() as work:
        db = throughput.linked_as_catalog(source, Path(work))
        paths_of = kind_paths(db, args.searches)
        results = measure(
            db, args.kinds, paths_of, args.duration, args.rounds, args.connections, args.workers
        )
    settings["load_after"] = load_average()
    text = report(source, results, settings)
    print(text)
    out = Path(args.out)
    out.mkdir(parents=True, exist_ok=True)
    # /tmp/bench/20k/catalog.db: page-kinds-20k; /tmp/bench/real.db: page-kinds-real
    name = f"page-kinds-{source.parent.name if source.stem == 'catalog' else source.stem}"
    (out / f"{name}.md").write_text(text)
    (out / f"{name}.json").write_text(
        json.dumps({"settings": settings, "results": results}, indent=2) + "\n"
    )
    if any(r["ours"]["errors"] or r["ours"]["repeated"] for r in results.values()):
        sys.exit(1)


if __name__ == "__main__":
    main()
