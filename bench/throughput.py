"""Served throughput: `paper-catalog serve` against stock Datasette on the same catalog.

Starts both on 127.0.0.1 (stock: `datasette serve -i catalog.db`, one process, no plugins,
suggested facets off), drives each with wrk over the same URLs, and reports req/s, p50/p99,
errors, requests per CPU-second of the server's whole process tree, and the ratio ours/stock:

- the mix: distinct URLs both serve, uniform over table search, paper pages, author pages,
  track filters and JSON search; run with our response cache and, to show the cost of
  building pages, without it;
- popular pages: home, the papers table and a top search, asked again and again.

Not part of `make test` (a tiny run is, in tests/test_throughput_smoke.py). Example:

    .venv/bin/python bench/throughput.py --db catalog.db --duration 15 --connections 16 64
"""

import argparse
import json
import os
import random
import re
import shutil
import signal
import sqlite3
import subprocess
import sys
import tempfile
from contextlib import closing, contextmanager
from pathlib import Path

sys.path.insert(0, str(Path(__file__).resolve().parent))
import load  # bench/load.py: wrk, its Lua script, free ports, waiting for a server

ROOT = Path(__file__).resolve().parent.parent
OUT = Path(__file__).resolve().parent / "out"
MIX_SIZE = 3000
SEED = 13
CLOCK_TICKS = os.sysconf("SC_CLK_TCK")


def words(connection, limit=200):
    """Frequent title words: search terms that match something, as visitors' searches do."""
    counts = {}
    for (title,) in connection.execute("select coalesce(title, label) from papers limit 20000"):
        for word in re.findall(r"[a-z]{5,}", (title or "").lower()):
            counts[word] = counts.get(word, 0) + 1
    return sorted(counts, key=counts.get, reverse=True)[:limit]


def mix_urls(db, size=MIX_SIZE, seed=SEED):
    """`size` distinct paths, a fifth of each kind, in a shuffled order."""
    random.seed(seed)
    with closing(sqlite3.connect(f"file:{db}?mode=ro", uri=True)) as connection:
        papers = [r[0] for r in connection.execute("select id from papers")]
        authors = [r[0] for r in connection.execute("select id from authors")]
        tracks = [
            r[0] for r in connection.execute("select distinct track from papers where track > ''")
        ]
        terms = words(connection)
    q = load.quote
    per_kind = size // 5
    kinds = {
        "table search": {f"/catalog/papers?_search={q(t)}" for t in terms},
        "paper page": set(),
        "author page": set(),
        "track filter": {f"/catalog/papers?track={q(t)}" for t in tracks},
        "JSON search": {f"/catalog/papers.json?_search={q(t)}" for t in terms},
    }
    # more distinct searches and filters than single terms give: pairs of terms, and pages
    pairs = [f"{a} {b}" for a in terms[:60] for b in terms[:60] if a < b]
    random.shuffle(pairs)
    for pair in pairs:
        if len(kinds["table search"]) >= per_kind and len(kinds["JSON search"]) >= per_kind:
            break
        kinds["table search"].add(f"/catalog/papers?_search={q(pair)}")
        kinds["JSON search"].add(f"/catalog/papers.json?_search={q(pair)}")
    for track in tracks:
        for term in terms[:40]:
            kinds["track filter"].add(f"/catalog/papers?track={q(track)}&_search={q(term)}")
    sample = random.sample(papers, min(per_kind, len(papers)))
    kinds["paper page"] = {f"/catalog/papers/{q(p)}" for p in sample}
    sample = random.sample(authors, min(per_kind, len(authors)))
    kinds["author page"] = {f"/catalog/authors/{a}" for a in sample}
    chosen = {}
    for kind, paths in kinds.items():
        paths = sorted(paths)
        random.shuffle(paths)
        chosen[kind] = paths[:per_kind]
    urls = [path for paths in chosen.values() for path in paths]
    random.shuffle(urls)
    return urls, {kind: len(paths) for kind, paths in chosen.items()}


POPULAR = ["/", "/catalog/papers", "/catalog/papers?_search=learning"]


def process_tree(root):
    """root and every process descended from it, from /proc."""
    children = {}
    for entry in Path("/proc").iterdir():
        if entry.name.isdigit():
            try:
                ppid = int((entry / "stat").read_text().rsplit(")", 1)[1].split()[1])
            except (OSError, IndexError, ValueError):
                continue
            children.setdefault(ppid, []).append(int(entry.name))
    tree, todo = [], [root]
    while todo:
        pid = todo.pop()
        tree.append(pid)
        todo += children.get(pid, [])
    return tree


def cpu_seconds(root):
    """User + system CPU of the tree's live processes (workers live through a run)."""
    total = 0
    for pid in process_tree(root):
        try:
            fields = Path(f"/proc/{pid}/stat").read_text().rsplit(")", 1)[1].split()
        except OSError:
            continue
        total += int(fields[11]) + int(fields[12])  # utime, stime
    return total / CLOCK_TICKS


@contextmanager
def running(command, url):
    with tempfile.TemporaryFile() as log:
        process = subprocess.Popen(command, cwd=ROOT, stdout=log, stderr=subprocess.STDOUT)
        try:
            load.wait_for(url, process, log)
            yield process
        finally:
            process.send_signal(signal.SIGTERM)
            process.wait(60)


def ours(db, port, cache_mb):
    command = [sys.executable, "-c", "from loader.cli import cli; cli()", "serve"]
    command += ["--db", str(db), "--port", str(port)]
    command += ["--metadata", str(ROOT / "metadata.yml")]
    return command + ["--cache-mb", str(cache_mb)]


# Datasette loads every installed plugin, paper-catalog's too, unless it runs under its own test
# suite: stock Datasette is Datasette with that switch on
STOCK_DATASETTE = "import sys; sys._called_from_test = True; from datasette.cli import cli; cli()"


def stock(db, port):
    command = [sys.executable, "-c", STOCK_DATASETTE, "serve", "-i", str(db), "--port", str(port)]
    return command + ["--setting", "suggest_facets", "off"]


def drive(url, process, paths, duration, connections):
    before = cpu_seconds(process.pid)
    figures, _ = load.run_wrk(url, paths, duration, connections, threads=2)
    cpu = cpu_seconds(process.pid) - before
    errors = figures["non_2xx"] + load.socket_errors(figures)
    return {
        "req_s": figures["requests_per_s"],
        "p50_ms": figures["p50_ms"],
        "p99_ms": figures["p99_ms"],
        "errors": errors,
        "requests": figures["requests"],
        "cpu_s": round(cpu, 1),
        "req_per_cpu_s": round(figures["requests"] / cpu, 1) if cpu else None,
        "examples": figures["non_2xx_examples"],
    }


def measure(db, duration, connection_counts, urls, cache_mb):
    """Each run on a freshly started server, so no run finds pages an earlier one cached."""
    results = {}
    servers = {"stock": stock, "ours": lambda d, p: ours(d, p, cache_mb)}
    runs = [("mix", urls, c) for c in connection_counts] + [("popular", POPULAR, 16)]
    for name, command in servers.items():
        for run, paths, connections in runs:
            port = load.free_port()
            url = f"http://127.0.0.1:{port}"
            with running(command(db, port), url) as process:
                if run == "mix":  # a sample, not all: answering every URL would fill the cache
                    load.check_urls(url, {"sample": paths[:: max(1, len(paths) // 10)]})
                results[(name, run, connections)] = drive(
                    url, process, paths, duration, connections
                )
    return results


def ratio(a, b):
    return round(a / b, 2) if a and b else None


def report(db, results, cache_mb, kinds):
    mix = ", ".join(f"{count} {kind}" for kind, count in kinds.items())
    lines = [
        (
            f"Catalog: {db.name} ({papers(db)} papers); {os.cpu_count()} CPUs; our cache"
            f" {cache_mb} MB per worker; mix: {sum(kinds.values())} URLs ({mix})."
        ),
        "",
        "| run | conns | server | req/s | p50 ms | p99 ms | errors | req/CPU-s |",
        "|---|---|---|---|---|---|---|---|",
    ]
    for (name, run, connections), r in results.items():
        lines.append(
            f"| {run} | {connections} | {name} | {r['req_s']} | {r['p50_ms']:.0f} |"
            f" {r['p99_ms']:.0f} | {r['errors']} | {r['req_per_cpu_s']} |"
        )
    lines += ["", "| run | conns | ours/stock req/s | ours/stock req/CPU-s |", "|---|---|---|---|"]
    for (name, run, connections), r in results.items():
        if name == "ours":
            s = results[("stock", run, connections)]
            lines.append(
                f"| {run} | {connections} | {ratio(r['req_s'], s['req_s'])} |"
                f" {ratio(r['req_per_cpu_s'], s['req_per_cpu_s'])} |"
            )
    return "\n".join(lines) + "\n"


def papers(db):
    with closing(sqlite3.connect(f"file:{db}?mode=ro", uri=True)) as connection:
        return connection.execute("select count(*) from papers").fetchone()[0]


def linked_as_catalog(source, folder):
    """source linked (copied across file systems) into folder as catalog.db: both servers
    read one file, named so that stock Datasette also calls it `catalog`."""
    db = folder / "catalog.db"
    try:
        os.link(source, db)
    except OSError:
        shutil.copy(source, db)
    return db


def main():
    parser = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    parser.add_argument("--db", default="catalog.db")
    parser.add_argument("--duration", type=int, default=15, help="seconds per run")
    parser.add_argument("--connections", type=int, nargs="+", default=[16, 64])
    parser.add_argument("--cache-mb", type=int, default=32, help="ours; 0 measures no cache")
    parser.add_argument("--mix-size", type=int, default=MIX_SIZE)
    parser.add_argument("--out", default=str(OUT))
    args = parser.parse_args()
    source = Path(args.db).resolve()
    with tempfile.TemporaryDirectory() as work:
        db = linked_as_catalog(source, Path(work))
        urls, kinds = mix_urls(db, args.mix_size)
        results = measure(db, args.duration, args.connections, urls, args.cache_mb)
    text = report(source, results, args.cache_mb, kinds)
    print(text)
    out = Path(args.out)
    out.mkdir(parents=True, exist_ok=True)
    name = f"throughput-{source.stem}-cache{args.cache_mb}"
    (out / f"{name}.md").write_text(text)
    rows = [{"server": n, "run": r, "connections": c, **v} for (n, r, c), v in results.items()]
    (out / f"{name}.json").write_text(json.dumps(rows, indent=2) + "\n")
    if any(row["errors"] for row in rows if row["server"] == "ours"):
        sys.exit(1)


if __name__ == "__main__":
    main()
