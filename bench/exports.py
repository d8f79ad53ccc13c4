"""Exports at scale: the largest match sets downloaded whole from `paper-catalog serve`, against
the same rows read raw with the sqlite3 command line, in the same run.

The site is `paper-catalog serve --workers 1` on the catalog (the app, settings, caches and
gzip a deployment runs). For each case, raw first: `sqlite3 -csv` runs one statement giving the
same rows in the same order (the export's columns, authors and affiliations joined as the
export joins them), then curl downloads the export (no gzip: the bytes a reader saves). Both
write into `grep -c`, which counts the rows (CSV lines that start with an id, BibTeX entries,
JSON results), so both sides pay for a reader and each count is checked against the total.
The worker's CPU time (every thread) is read from /proc before and after, the sqlite3
process's from the kernel when it ends: on a machine shared with other work, CPU time is the
steadier measure, wall time the one a reader waits. While curl runs, the worker's memory is sampled every SAMPLE_SECONDS from /proc: its own
memory (RssAnon: Python's heap, SQLite's caches and sorter) and its resident size (VmRSS, which
also counts the catalog's pages the site's connections map, plugins/limits.py, file pages the
OS shares and can drop). The raw side's peak is the sqlite3 process's peak RSS. The catalog
file is read once before anything is timed, so both sides read from the OS cache.

Cases: every paper of the catalog (no words, the default newest-first order) as CSV, JSON and
BibTeX, a word in most papers ranked by relevance (CSV), and the papers table's CSV stream of
the same columns.

Writes the figures to --out (JSON) and beside it as Markdown; the site's log goes beside the
catalog (exports-serve.log).

Example:

    python bench/exports.py /tmp/bench/1m/catalog.db --out bench/results/exports.json
"""

import argparse
import json
import os
import platform
import shlex
import signal
import socket
import sqlite3
import subprocess
import sys
import threading
import time
from pathlib import Path

import httpx

ROOT = Path(__file__).resolve().parent.parent
sys.path.insert(0, str(ROOT))

from loader.records import LINK_KINDS
from loader.web import search_request as search
from loader.web.search_exports import CSV_COLUMNS

SAMPLE_SECONDS = 0.1
STARTUP_SECONDS = 600
COMMON_WORD = "learning"
# what each export's rows look like at the start of a line (the raw side writes CSV)
CSV_ROW = r"^[0-9a-f]{16},"
COUNTERS = {
    "csv": f"grep -cE '{CSV_ROW}'",
    "bib": "grep -c '^@'",
    # one line of JSON: each result an object whose "id" is a string (authors' ids are numbers)
    "json": "tr '{' '\\n' | grep -c '^\"id\": \"'",
}
AUTHORS_SQL = (
    "(select group_concat(name, '; ') from (select authors.name from paper_authors"
    " join authors on authors.id = paper_authors.author_id"
    " where paper_authors.paper_id = papers.id"
    " order by paper_authors.position is null, paper_authors.position, authors.id))"
)
AFFILIATIONS_SQL = (
    "(select group_concat(name, '; ') from (select affiliations.name from paper_affiliations"
    " join affiliations on affiliations.id = paper_affiliations.affiliation_id"
    " where paper_affiliations.paper_id = papers.id order by affiliations.name))"
)
COUNTRIES_SQL = (
    "(select group_concat(country, '; ') from (select distinct affiliations.country"
    " from paper_affiliations"
    " join affiliations on affiliations.id = paper_affiliations.affiliation_id"
    " where paper_affiliations.paper_id = papers.id and affiliations.country is not null))"
)
# the CSV's columns the papers table does not store as such: each a SQL expression
EXPORT_COLUMNS = {
    "authors": AUTHORS_SQL,
    "affiliations": AFFILIATIONS_SQL,
    "countries": COUNTRIES_SQL,
    **{f"link_{kind}": f"json_extract(papers.links, '$.{kind}')" for kind in LINK_KINDS},
}
# derived from the stored columns (`links`, the affiliations): the table's CSV has `links`
DERIVED_COLUMNS = {"countries", *(f"link_{kind}" for kind in LINK_KINDS)}


def free_port():
    with socket.socket() as sock:
        sock.bind(("127.0.0.1", 0))
        return sock.getsockname()[1]


def children(pid):
    found = []
    try:
        for task in Path(f"/proc/{pid}/task").iterdir():
            for child in (task / "children").read_text().split():
                found += [int(child), *children(int(child))]
    except OSError:
        pass
    return found


def worker_pid(server_pid):
    """The process that serves requests: the one running loader.serve.workers."""
    for pid in children(server_pid):
        try:
            command = Path(f"/proc/{pid}/cmdline").read_bytes().replace(b"\0", b" ")
        except OSError:
            continue
        if b"loader.serve.workers" in command:
            return pid
    raise RuntimeError("no worker process")


def memory_kb(pid):
    """(RssAnon, VmRSS) of a process, in kB."""
    fields = {}
    for line in Path(f"/proc/{pid}/status").read_text().splitlines():
        name, _, value = line.partition(":")
        if name in ("RssAnon", "VmRSS"):
            fields[name] = int(value.split()[0])
    return fields["RssAnon"], fields["VmRSS"]


class MemorySampler(threading.Thread):
    """The peak of a process's memory while it runs (sampled)."""

    def __init__(self, pid):
        super().__init__(daemon=True)
        self.pid = pid
        self.before = memory_kb(pid)
        self.peak = self.before
        self.done = threading.Event()

    def run(self):
        while not self.done.wait(SAMPLE_SECONDS):
            anon, rss = memory_kb(self.pid)
            self.peak = (max(self.peak[0], anon), max(self.peak[1], rss))

    def stop(self):
        self.done.set()
        self.join()
        anon, rss = memory_kb(self.pid)
        self.peak = (max(self.peak[0], anon), max(self.peak[1], rss))


def cpu_seconds(pid):
    """User and system CPU time a process has used, every thread counted."""
    fields = Path(f"/proc/{pid}/stat").read_text().rsplit(")", 1)[1].split()
    return (int(fields[11]) + int(fields[12])) / os.sysconf("SC_CLK_TCK")


def timed_pipeline(producer, counter):
    """Run `producer | counter`: (seconds, rows counted, producer's peak RSS in MB, producer's
    CPU seconds)."""
    start = time.perf_counter()
    source = subprocess.Popen(producer, stdout=subprocess.PIPE)
    count = subprocess.Popen(counter, shell=True, stdin=source.stdout, stdout=subprocess.PIPE)
    source.stdout.close()
    output = count.communicate()[0]
    _, status, usage = os.wait4(source.pid, 0)
    seconds = time.perf_counter() - start
    if os.waitstatus_to_exitcode(status) != 0:
        raise SystemExit(f"failed ({status}): {shlex.join(map(str, producer))}")
    cpu = usage.ru_utime + usage.ru_stime
    return seconds, int(output.strip() or 0), usage.ru_maxrss / 1024, cpu


def inline(sql, params):
    """The statement with its parameters written in (the sqlite3 command line binds none):
    numbers as they are, text quoted."""
    for name in sorted(params, key=len, reverse=True):
        value = params[name]
        literal = (
            str(value) if isinstance(value, int) else "'" + str(value).replace("'", "''") + "'"
        )
        sql = sql.replace(f":{name}", literal)
    return sql


def raw_search_sql(pairs):
    """The search export's rows in its order: the page's own ordering statement, joined to
    papers and sorted by the same keys."""
    request = search.parse_search(pairs)
    order_sql, params = search.page_sql(request, (), limit=-1)
    selected = ", ".join(EXPORT_COLUMNS.get(c, f"papers.{c}") for c in CSV_COLUMNS)
    keys = ", ".join(f"ordered.key_{n}" for n in range(len(search.sort_keys(request))))
    sql = (
        f"with ordered as ({order_sql}) select {selected} from ordered"
        f" join papers on papers.rowid = ordered.rowid order by {keys}"
    )
    return inline(sql, params)


def measure_case(name, url, counter, raw, site, worker):
    print(name, flush=True)
    raw_s, raw_rows, raw_mb, raw_cpu = timed_pipeline(
        ["sqlite3", "-csv", f"file:{site['catalog']}?immutable=1", raw], COUNTERS["csv"]
    )
    sampler = MemorySampler(worker)
    sampler.start()
    cpu_before = cpu_seconds(worker)
    served_s, served_rows, _, _ = timed_pipeline(
        ["curl", "-sS", "--fail", "-o", "-", site["url"] + url], counter
    )
    served_cpu = cpu_seconds(worker) - cpu_before
    sampler.stop()
    return {
        "case": name,
        "url": url,
        "rows": served_rows,
        "raw_rows": raw_rows,
        "complete": served_rows == raw_rows == site["expected"].get(name, raw_rows),
        "seconds": round(served_s, 1),
        "raw_seconds": round(raw_s, 1),
        "time_ratio": round(served_s / raw_s, 2),
        "worker_cpu_seconds": round(served_cpu, 1),
        "raw_cpu_seconds": round(raw_cpu, 1),
        "cpu_ratio": round(served_cpu / raw_cpu, 2),
        "worker_anon_mb_before": round(sampler.before[0] / 1024),
        "worker_anon_mb_peak": round(sampler.peak[0] / 1024),
        "worker_rss_mb_before": round(sampler.before[1] / 1024),
        "worker_rss_mb_peak": round(sampler.peak[1] / 1024),
        "raw_peak_mb": round(raw_mb),
    }


def start_site(catalog, log):
    port = free_port()
    command = [sys.executable, "-c", "from loader.cli import cli; cli()", "serve"]
    command += ["--db", str(catalog), "--port", str(port), "--workers", "1", "--poll", "3600"]
    server = subprocess.Popen(command, cwd=ROOT, stdout=log, stderr=subprocess.STDOUT)
    url = f"http://127.0.0.1:{port}"
    deadline = time.monotonic() + STARTUP_SECONDS
    while time.monotonic() < deadline:
        if server.poll() is not None:
            raise SystemExit(f"the site stopped: see {log.name}")
        try:
            if httpx.get(url + "/-/versions.json", timeout=5).status_code == 200:
                return server, url
        except httpx.TransportError:
            pass
        time.sleep(0.5)
    raise SystemExit("the site did not start")


def warm(catalog):
    with open(catalog, "rb") as file:
        while file.read(1 << 24):
            pass


def run(catalog, out):
    catalog = Path(catalog).resolve()
    connection = sqlite3.connect(f"file:{catalog}?immutable=1", uri=True)
    papers = connection.execute("select count(*) from papers").fetchone()[0]
    common = connection.execute(
        "select count(*) from papers_fts where papers_fts match ?", [COMMON_WORD]
    ).fetchone()[0]
    connection.close()
    warm(catalog)
    log_path = catalog.with_name("exports-serve.log")
    with log_path.open("w") as log:
        server, url = start_site(catalog, log)
        try:
            worker = worker_pid(server.pid)
            site = {"catalog": catalog, "url": url, "expected": {}}
            every = raw_search_sql([])
            word = raw_search_sql([("q", COMMON_WORD)])
            # the search export's columns, as the table stores them (authors and affiliations
            # as JSON lists), chosen in the URL
            columns = [c for c in CSV_COLUMNS if c != "id" and c not in DERIVED_COLUMNS]
            table = f"select id, {', '.join(columns)} from papers order by id"
            table_url = "/catalog/papers.csv?_stream=on&_size=max&" + "&".join(
                f"_col={c}" for c in columns
            )
            site["expected"] = {
                "every paper, CSV": papers,
                "every paper, JSON": papers,
                "every paper, BibTeX": papers,
                f"`{COMMON_WORD}` ranked, CSV": common,
                "papers table CSV stream": papers,
            }
            cases = [
                ("every paper, CSV", "/search.csv", COUNTERS["csv"], every),
                ("every paper, JSON", "/search.json?_all=1", COUNTERS["json"], every),
                ("every paper, BibTeX", "/search.bib", COUNTERS["bib"], every),
                (
                    f"`{COMMON_WORD}` ranked, CSV",
                    f"/search.csv?q={COMMON_WORD}",
                    COUNTERS["csv"],
                    word,
                ),
                ("papers table CSV stream", table_url, COUNTERS["csv"], table),
            ]
            results = [measure_case(*case, site, worker) for case in cases]
        finally:
            server.send_signal(signal.SIGTERM)
            server.wait(60)
    figures = {
        "date": time.strftime("%Y-%m-%d %H:%M"),
        "machine": {
            "nproc": os.cpu_count(),
            "load_average": os.getloadavg(),
            "python": platform.python_version(),
            "sqlite": sqlite3.sqlite_version,
        },
        "catalog": str(catalog),
        "papers": papers,
        "cases": results,
    }
    Path(out).write_text(json.dumps(figures, indent=2) + "\n")
    Path(out).with_suffix(".md").write_text(markdown(figures) + "\n")
    print(markdown(figures))


def markdown(figures):
    lines = [
        (
            f"{figures['papers']:,} papers, {figures['date']}, load average "
            f"{figures['machine']['load_average'][0]:.1f}, SQLite {figures['machine']['sqlite']}."
        ),
        "",
        (
            "| export | rows | complete | s | raw s | time / raw | worker CPU s | raw CPU s "
            "| CPU / raw | worker own MB before / peak | worker RSS MB before / peak "
            "| raw peak MB |"
        ),
        "|---|---:|---|---:|---:|---:|---:|---:|---:|---:|---:|---:|",
    ]
    for c in figures["cases"]:
        lines.append(
            f"| {c['case']} (`{c['url']}`) | {c['rows']:,} | {'yes' if c['complete'] else 'NO'} "
            f"| {c['seconds']} | {c['raw_seconds']} | {c['time_ratio']}x "
            f"| {c['worker_cpu_seconds']} | {c['raw_cpu_seconds']} | {c['cpu_ratio']}x "
            f"| {c['worker_anon_mb_before']} / {c['worker_anon_mb_peak']} "
            f"| {c['worker_rss_mb_before']} / {c['worker_rss_mb_peak']} | {c['raw_peak_mb']} |"
        )
    return "\n".join(lines)


def main():
    parser = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    parser.add_argument("catalog", help="a catalog built by paper-catalog build")
    parser.add_argument("--out", default=str(ROOT / "bench" / "results" / "exports.json"))
    args = parser.parse_args()
    run(args.catalog, args.out)


if __name__ == "__main__":
    main()
