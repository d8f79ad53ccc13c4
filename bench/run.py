"""The scale benchmark: synthetic corpora -> floor and loader builds -> Datasette over HTTP.

For each size: generate the corpus (once; kept under --work), build it with bench/floor.py and
with the real loader (`paper-catalog build`), each in its own process (time, peak RSS, bytes per
paper). On the largest catalog: serve it as `paper-catalog serve` does (immutable, inspect file,
loader/serve/supervisor.py SETTINGS, metadata.yml, plugins/) and time each page over HTTP against the same
SQL run raw in SQLite, a trivial `select 1` request, and `sqlite3 -csv` for CSV streaming.
Writes bench/results/latest.json and latest.md.

Example:

    python bench/run.py --sizes 20000 100000 1000000 --work /tmp/bench
"""

import argparse
import csv
import hashlib
import importlib
import io
import json
import math
import os
import platform
import shutil
import socket
import sqlite3
import subprocess
import sys
import time
from pathlib import Path

import httpx
import yaml

ROOT = Path(__file__).resolve().parent.parent
BENCH = ROOT / "bench"
REAL_SAMPLE = ROOT / "tests" / "fixtures" / "real" / "sample"
sys.path.insert(0, str(ROOT))

from rebuild import floor_and_build, rebuild_figures  # bench/rebuild.py

COMMON_TERM = ("learning", "learn")  # as typed, and as the porter stemmer indexes it
# /search's facets that a common term must still show at 1M (issue 13)
COLUMN_FACETS = ("venue", "year", "status", "area", "track")
CSV_ROWS = 0.1  # the CSV view: the area (or track) nearest a tenth of all papers
PAPER_PAGE_SQL = ("PAPER_SQL", "PAPER_AUTHORS_SQL", "PAPER_AFFILIATIONS_SQL", "PAPER_SOURCES_SQL")
TARGETS = {
    # issue 13: the build's wall time against the floor's, per size (the largest size: 2.0x)
    "build_ratio": {20_000: 3.0, 1_000_000: 2.0},
    # issue 26: a rebuild after one file of twenty changed, against the floor of all of them
    "rebuild_ratio": 1.5,
    # ... and the generated corpus's CPU an entry within 20% of the real sample's
    "cpu_per_entry_vs_real": 0.2,
    "peak_rss_mb": 500,
    "bytes_per_paper": 3770,
    "search_ratio": 3.0,
    "search_rare_ratio": 2.0,
    "search_common_ms": 2000,
    "search_filters_ratio": 1.5,
    "page_vs_select_1": 10.0,
    "csv_share": 1 / 3,
}


def label(size):
    return f"{size // 1_000_000}m" if size % 1_000_000 == 0 else f"{size // 1000}k"


def machine():
    cpu = next(
        (
            line.split(":", 1)[1].strip()
            for line in Path("/proc/cpuinfo").read_text().splitlines()
            if line.startswith("model name")
        ),
        platform.processor(),
    )
    memory = Path("/proc/meminfo").read_text().split("\n")[0].split()[1]
    import datasette

    return {
        "nproc": os.cpu_count(),
        "cpu": cpu,
        "ram_gb": round(int(memory) / 1024 / 1024, 1),
        "load_average": os.getloadavg(),
        "python": platform.python_version(),
        "sqlite": sqlite3.sqlite_version,
        "datasette": datasette.__version__,
    }


def tree_memory_kb(pid):
    """Proportional set size of a process and all its descendants: memory shared between
    the loader and its worker processes counts once."""
    total = 0
    try:
        rollup = Path(f"/proc/{pid}/smaps_rollup").read_text()
        total = int(
            next(line for line in rollup.splitlines() if line.startswith("Pss:")).split()[1]
        )
        for task in Path(f"/proc/{pid}/task").iterdir():
            for child in (task / "children").read_text().split():
                total += tree_memory_kb(int(child))
    except (OSError, StopIteration):
        pass
    return total


def measure(command, **options):
    """Run a command to completion: (seconds, peak memory in MB, CPU seconds). Memory: the
    kernel's peak RSS of the process, or if higher the peak of the process and its workers
    together (PSS sampled every 0.2 s). CPU: user + system, workers included."""
    start = time.perf_counter()
    process = subprocess.Popen(command, **options)
    peak = 0
    while True:
        pid, status, usage = os.wait4(process.pid, os.WNOHANG)
        if pid:
            break
        peak = max(peak, tree_memory_kb(process.pid))
        time.sleep(0.2)
    seconds = time.perf_counter() - start
    process.returncode = os.waitstatus_to_exitcode(status)
    if process.returncode != 0:
        raise SystemExit(f"failed: {' '.join(map(str, command))}")
    return seconds, max(peak, usage.ru_maxrss) / 1024, usage.ru_utime + usage.ru_stime


def generator_version():
    """The generator's code and the real sample it draws from: a corpus kept from another
    version of either is generated again."""
    digest = hashlib.sha256((BENCH / "generate.py").read_bytes())
    for path in sorted(REAL_SAMPLE.iterdir()):
        digest.update(path.read_bytes())
    return digest.hexdigest()[:16]


def ensure_corpus(size, folder):
    marker = folder / ".complete"
    made = f"{size} {generator_version()}"
    if not marker.exists() or marker.read_text() != made:
        if folder.exists():
            shutil.rmtree(folder)
        subprocess.run(
            [sys.executable, BENCH / "generate.py", "--papers", str(size), "--out", folder],
            check=True,
        )
        marker.write_text(made)
    for path in folder.iterdir():  # the OS file cache holds it for both builds alike
        path.read_bytes()


def build_figures(size, work):
    folder = work / f"corpus-{label(size)}"
    ensure_corpus(size, folder)
    catalog = work / label(size) / "catalog.db"
    floor_db = work / f"floor-{label(size)}.db"
    floor_s, floor_rss, floor_cpu = measure(
        [sys.executable, BENCH / "floor.py", folder, "--db", floor_db], stdout=subprocess.DEVNULL
    )
    build = [sys.executable, "-c", "from loader.cli import cli; cli()", "build", folder]
    # cold: every file read (the cache's rebuilds are measured by bench/rebuild.py)
    build_s, build_rss, build_cpu = measure(
        build + ["--db", catalog, "--no-cache"], stdout=subprocess.DEVNULL, cwd=ROOT
    )
    connection = sqlite3.connect(f"file:{catalog}?immutable=1", uri=True)
    papers = connection.execute("select count(*) from papers").fetchone()[0]
    authors = connection.execute("select count(*) from authors").fetchone()[0]
    connection.close()
    corpus_bytes = sum(p.stat().st_size for p in folder.iterdir())
    return {
        "size": size,
        "papers": papers,
        "authors": authors,
        "corpus_mb": round(corpus_bytes / 1e6, 1),
        "floor_s": round(floor_s, 1),
        "floor_rss_mb": round(floor_rss),
        "build_s": round(build_s, 1),
        "build_ratio": round(build_s / floor_s, 2),
        "build_rss_mb": round(build_rss),
        # on a shared machine wall time depends on who else runs; CPU time does not
        "floor_cpu_s": round(floor_cpu, 1),
        "build_cpu_s": round(build_cpu, 1),
        "cpu_ratio": round(build_cpu / floor_cpu, 2),
        "catalog_mb": round(catalog.stat().st_size / 1e6, 1),
        "bytes_per_paper": round(catalog.stat().st_size / papers),
        "catalog": str(catalog),
    }


def percentile(samples, fraction):
    ordered = sorted(samples)
    return ordered[max(0, math.ceil(fraction * len(ordered)) - 1)]


def timings(samples):
    return {
        "p50_ms": round(percentile(samples, 0.5) * 1000, 1),
        "p95_ms": round(percentile(samples, 0.95) * 1000, 1),
    }


def time_calls(*calls, count):
    """p50/p95 of each call, timed in turns (a, b, a, b, ...): on a shared machine a burst of
    noise then hits a page and its raw SQL alike."""
    for call in calls:
        call()  # warm the page cache and Datasette's caches
    samples = [[] for _ in calls]
    for _ in range(count):
        for call, taken in zip(calls, samples):
            start = time.perf_counter()
            call()
            taken.append(time.perf_counter() - start)
    return [timings(taken) for taken in samples]


def free_port():
    with socket.socket() as sock:
        sock.bind(("127.0.0.1", 0))
        return sock.getsockname()[1]


def serve_command(catalog, port):
    """`paper-catalog serve` on a given catalog and port: one worker, as the raw SQL it is
    measured against runs on one connection, and no response cache, or every repeat of a page
    would be a dictionary look-up."""
    command = [sys.executable, "-c", "from loader.cli import cli; cli()", "serve"]
    command += ["--db", str(catalog), "--metadata", str(ROOT / "metadata.yml")]
    command += ["--host", "127.0.0.1", "--port", str(port), "--workers", "1", "--cache-mb", "0"]
    return command


class Raw:
    """The same SQL, straight into SQLite (with the SQL functions Datasette adds)."""

    def __init__(self, catalog):
        from datasette.utils import escape_fts

        from loader.rules.names import name_key

        self.connection = sqlite3.connect(f"file:{catalog}?immutable=1", uri=True)
        self.connection.create_function("escape_fts", 1, escape_fts)
        self.connection.create_function("name_key", 1, name_key)  # as plugins/names.py does

    def run(self, *statements):
        def call():
            for sql, params in statements:
                self.connection.execute(sql, params).fetchall()

        return call

    def one(self, sql, params=()):
        return self.connection.execute(sql, params).fetchone()


def pick_terms(raw):
    """A rare term (in a handful of papers) and a very common one."""
    rows = raw.connection.execute(
        "select term, doc from papers_fts_vocab where term >= 'm' and term < 'n' limit 20000"
    ).fetchall()
    rare = min(
        (row for row in rows if row[1] >= 3 and row[0].isalpha()), key=lambda row: (row[1], row[0])
    )
    common = raw.one("select doc from papers_fts_vocab where term = ?", [COMMON_TERM[1]])
    return {"rare": (rare[0], rare[1]), "common": (COMMON_TERM[0], common[0] if common else 0)}


def load_plugin(name):
    """A module of the installed plugin package, as the `datasette` entry points load it."""
    return importlib.import_module(f"paper_catalog_site.plugins.{name}")


def page_statements(kind, key, queries):
    """The SQL a paper or author page runs (plugins/pages.py and the canned queries it uses)."""
    pages = load_plugin("pages")
    if kind == "paper":
        statements = [(getattr(pages, name), {"id": key}) for name in PAPER_PAGE_SQL]
        canned = {"related_papers": {"paper_id": key}}
    else:
        statements = [
            (pages.AUTHOR_SQL, {"id": key}),
            (pages.AUTHOR_COAUTHORS_SQL, {"id": key, "limit": pages.COAUTHORS_SHOWN}),
            (pages.AUTHOR_TRACKS_SQL, {"id": key}),
        ]
        limit = pages.AUTHOR_PAPERS_SHOWN
        canned = {"papers_by_author": {"author_id": str(key), "limit": limit}}
    for name, params in canned.items():
        if name in queries:
            sql = queries[name]["sql"]
            statements.append((pages.limited(sql) if "limit" in params else sql, params))
    return statements


def search_statements(raw, pairs):
    """What /search runs for these parameters, as one raw SQLite call: the same sequence
    (loader/web/search_results.py: exact titles, facets and total, the page, its details and snippets,
    the author and affiliation facets unless the match set is too large for them)."""
    from loader.web import search_request as search
    from loader.web import search_results as search_run

    request = search.parse_search(pairs)
    up_to = load_plugin("search_page").LINK_FACETS_UP_TO

    def call():
        search_run.answer_search(raw.connection, request, link_facets_up_to=up_to)

    return call


def search_facets_shown(client, terms, filters):
    """Per /search case: the facets /search.json gave, and those it timed out on or left for a
    second request (issue 13: a common term's five column facets, with its exact total)."""
    shown = {}
    for kind, (term, _documents) in terms.items():
        for filtered in (False, True):
            body = client.get(
                "/search.json", params=[("q", term)] + (filters if filtered else [])
            ).json()
            shown[f"{kind}{', two filters' if filtered else ''}"] = {
                "total": body.get("total"),
                "facets": sorted(body.get("facets", {})),
                "timed_out": body.get("facets_timed_out", []),
                "deferred": body.get("facets_deferred", []),
            }
    return shown


def search_verdicts(pages, shown):
    """Issue 13's /search targets at 1M: a rare term within 2x its raw SQL; a common term with
    its total and the five column facets within 2 s; two filters within 1.5x the unfiltered
    page."""
    checks = []
    for name, page in pages.items():
        if not name.startswith("/search"):
            continue
        if " rare term " in name:
            ratio = TARGETS["search_rare_ratio"]
            checks.append((f"{name}: p95 within {ratio}x raw", page["ratio_p95"] <= ratio))
        if " common term " in name and "two filters" not in name:
            limit = TARGETS["search_common_ms"]
            checks.append((f"{name}: p95 under {limit:,} ms", page["datasette"]["p95_ms"] < limit))
        if name.endswith(", two filters"):
            unfiltered = pages[name.removesuffix(", two filters")]["datasette"]["p95_ms"]
            ratio = TARGETS["search_filters_ratio"]
            met = page["datasette"]["p95_ms"] <= ratio * unfiltered
            checks.append((f"{name}: p95 within {ratio}x the unfiltered page", met))
    for case, facets in shown.items():
        shown_all = set(COLUMN_FACETS) <= set(facets["facets"])
        complete = shown_all and not set(COLUMN_FACETS) & set(facets["timed_out"])
        checks.append((f"/search.json {case}: total and the five column facets", complete))
    return checks


def search_filters(raw):
    """Two filters a reader would pick: the most common area, and the most common venue (or
    track, where the corpus has no venues)."""
    filters = []
    for column in ("area", "venue", "track"):
        top = raw.one(
            f"select {column} from papers where {column} is not null group by {column} "
            "order by count(*) desc limit 1"
        )
        if top and len(filters) < 2:
            filters.append((column, top[0]))
    return filters


def facet_statements(metadata):
    """The SQL behind the default papers page: the page of rows and each default facet."""
    statements = [("select * from papers order by id limit 26", [])]
    for facet in metadata["databases"]["catalog"]["tables"]["papers"].get("facets", []):
        # a "present" facet is a column facet shown only with values (plugins/facets.py)
        column = facet if isinstance(facet, str) else facet.get("present")
        if column:
            statements.append(
                (
                    (
                        f"select {column} as value, count(*) as count from papers "
                        f"where {column} is not null group by {column} "
                        "order by count desc, value limit 31"
                    ),
                    [],
                )
            )
        else:
            ((_kind, column),) = facet.items()
            value = "slug" if column == "affiliations" else "name"  # plugins/facets.py LINKS
            statements.append(
                (
                    (
                        f"select {value}, paper_count from {column} where paper_count > 0 "
                        f"order by paper_count desc, {value} limit 31"
                    ),
                    [],
                )
            )
    return statements


def csv_view(raw, papers):
    """(column, value, rows): the area or track whose paper count is nearest a tenth."""
    candidates = []
    for column in ("area", "track"):
        candidates += [
            (abs(n - papers * CSV_ROWS), column, value, n)
            for value, n in raw.connection.execute(
                f"select {column}, count(*) from papers where {column} is not null "
                f"group by {column}"
            )
        ]
    _distance, column, value, rows = min(candidates)
    return column, value, rows


def stream_csv(client, url):
    """(seconds, rows, bytes) for one full CSV download, rows counted after the clock stops."""
    start = time.perf_counter()
    body = bytearray()
    with client.stream("GET", url) as response:
        response.raise_for_status()
        for chunk in response.iter_bytes():
            body += chunk
    seconds = time.perf_counter() - start
    rows = sum(1 for _ in csv.reader(io.StringIO(body.decode("utf-8")))) - 1
    return seconds, rows, len(body)


def sqlite_csv(catalog, sql):
    start = time.perf_counter()
    result = subprocess.run(
        ["sqlite3", "-csv", "-header", f"file:{catalog}?immutable=1", sql],
        capture_output=True,
        check=True,
    )
    seconds = time.perf_counter() - start
    rows = sum(1 for _ in csv.reader(io.StringIO(result.stdout.decode("utf-8")))) - 1
    return seconds, rows, len(result.stdout)


def serve_figures(catalog, requests):
    catalog = Path(catalog)
    metadata = yaml.safe_load((ROOT / "metadata.yml").read_text(encoding="utf-8"))
    queries = metadata["databases"]["catalog"].get("queries", {})
    inspect_file = catalog.with_name("catalog.db.inspect.json")
    inspect_s, _rss, _cpu = measure(
        [sys.executable, "-m", "datasette", "inspect", catalog, "--inspect-file", inspect_file]
    )
    raw = Raw(catalog)
    papers = raw.one("select count(*) from papers")[0]
    terms = pick_terms(raw)
    author_top = raw.one("select id from authors order by paper_count desc limit 1")[0]
    author_typical = raw.one(
        "select id from authors where paper_count = "
        "(select paper_count from authors order by paper_count desc "
        "limit 1 offset (select count(*) / 2 from authors)) limit 1"
    )[0]
    paper = raw.one("select id from papers where rowid = (select max(rowid) / 2 from papers)")[0]
    port = free_port()
    server_log = catalog.with_name("serve.log").open("w")  # why a server went away
    server = subprocess.Popen(
        serve_command(catalog, port),
        stdout=server_log,
        stderr=subprocess.STDOUT,
        cwd=ROOT,
    )
    figures = {"papers": papers, "inspect_s": round(inspect_s, 1), "terms": terms, "pages": {}}
    try:
        client = httpx.Client(base_url=f"http://127.0.0.1:{port}", timeout=120)
        for _ in range(600):
            try:
                if client.get("/-/versions.json").status_code == 200:
                    break
            except httpx.TransportError:
                time.sleep(0.1)
        statuses = {}

        def page(path, params=None):
            def call():
                response = client.get(path, params=params)
                statuses[path] = response.status_code
                return response

            return call

        cases = [("select 1", page("/catalog", {"sql": "select 1"}), raw.run(("select 1", [])))]
        search = queries.get("search", {}).get("sql")
        for kind, (term, documents) in terms.items():
            if search:
                for suffix, shape in (("", {}), (".json", {"_shape": "array"})):
                    cases.append(
                        (
                            (
                                f"search{suffix or ' (HTML)'}, {kind} term `{term}` "
                                f"({documents} papers)"
                            ),
                            page(f"/catalog/search{suffix}", {"q": term, **shape}),
                            raw.run((search, {"q": term})),
                        )
                    )
        filters = search_filters(raw)
        for kind, (term, documents) in terms.items():
            for filtered in (False, True):
                pairs = [("q", term)] + (filters if filtered else [])
                for suffix in ("", ".json"):
                    name = (
                        f"/search{suffix or ' (HTML)'}, {kind} term `{term}` ({documents} "
                        f"papers){', two filters' if filtered else ''}"
                    )
                    cases.append(
                        (
                            name,
                            page(f"/search{suffix}", pairs),
                            search_statements(raw, pairs),
                        )
                    )
        figures["search_facets"] = search_facets_shown(client, terms, filters)
        cases.append(
            (
                "papers page, default facets",
                page("/catalog/papers"),
                raw.run(*facet_statements(metadata)),
            )
        )
        for name, author in (("typical", author_typical), ("most prolific", author_top)):
            cases.append(
                (
                    f"author page ({name})",
                    page(f"/catalog/authors/{author}"),
                    raw.run(*page_statements("author", author, queries)),
                )
            )
        cases.append(
            (
                "paper page",
                page(f"/catalog/papers/{paper}"),
                raw.run(*page_statements("paper", paper, queries)),
            )
        )
        related = queries.get("related_papers", {}).get("sql")
        if related:
            cases.append(
                (
                    "related papers",
                    page("/catalog/related_papers", {"paper_id": paper}),
                    raw.run((related, {"paper_id": paper})),
                )
            )
        for name, http_call, raw_call in cases:
            print(name, flush=True)
            count = max(3, requests // 4) if "common" in name else requests
            served, direct = time_calls(http_call, raw_call, count=count)
            path = list(statuses)[-1]
            figures["pages"][name] = {
                "datasette": served,
                "raw": direct,
                "status": statuses[path],
                "ratio_p95": round(served["p95_ms"] / max(direct["p95_ms"], 0.1), 1),
            }
        html = client.get("/catalog/papers").text
        figures["papers_page_timed_out"] = "timed out" in html
        # the baseline: `select 1` timed on its own, back to back (a request right after a
        # heavy page is slower, which would flatter every ratio to it)
        baseline = figures["pages"]["select 1"]["datasette"]["p95_ms"]
        for name, result in figures["pages"].items():
            result["vs_select_1_p95"] = round(result["datasette"]["p95_ms"] / baseline, 1)
        figures["csv"] = csv_figures(client, raw, catalog, papers)
        # abstract_text is coalesce(abstract_plain, abstract): abstract_plain adds nothing to
        # an export but a second copy of half the plain texts
        figures["csv_without_abstract_plain"] = csv_figures(
            client, raw, catalog, papers, without=("abstract_plain",)
        )
    finally:
        server.terminate()
        server.wait()
        server_log.close()
    return figures


def csv_figures(client, raw, catalog, papers, without=()):
    """CSV of the view through Datasette against `sqlite3 -csv` of the same columns and rows;
    `without`: columns left out of both (`_nocol=`)."""
    column, value, rows = csv_view(raw, papers)
    columns = [r[1] for r in raw.connection.execute("pragma table_xinfo(papers)")]
    columns = [name for name in columns if name not in without]
    quoted = value.replace("'", "''")
    sql = f"select {', '.join(columns)} from papers where {column} = '{quoted}' order by id"
    params = [(column, value), *(("_nocol", name) for name in without)]
    url = httpx.URL("/catalog/papers.csv", params=params + [("_stream", "on"), ("_size", "max")])
    # each twice, the second timed: both read pages the first left in the OS cache
    stream_csv(client, str(url))
    served_s, served_rows, served_bytes = stream_csv(client, str(url))
    sqlite_csv(catalog, sql)
    direct_s, direct_rows, direct_bytes = sqlite_csv(catalog, sql)
    return {
        "view": f"{column} = {value}",
        "without": list(without),
        "rows_expected": rows,
        "datasette": {
            "seconds": round(served_s, 2),
            "rows": served_rows,
            "mb": round(served_bytes / 1e6, 1),
            "rows_per_s": round(served_rows / served_s),
        },
        "sqlite3_csv": {
            "seconds": round(direct_s, 2),
            "rows": direct_rows,
            "mb": round(direct_bytes / 1e6, 1),
            "rows_per_s": round(direct_rows / direct_s),
        },
        "share": round((served_rows / served_s) / (direct_rows / direct_s), 2),
        "complete": served_rows == rows,
    }


def verdicts(results):
    checks = []
    largest = max(results["builds"], key=lambda b: b["size"])
    for build in results["builds"]:
        ratio = TARGETS["build_ratio"].get(build["size"])
        if ratio:
            met = build["build_ratio"] <= ratio
            checks.append((f"build of {build['size']:,} papers within {ratio}x the floor", met))
    rebuild = results.get("rebuild")
    if rebuild:
        limit = TARGETS["rebuild_ratio"]
        checks.append(
            (
                f"rebuild after 1 of {rebuild['files']} files changed within {limit}x the floor",
                rebuild["ratio"] <= limit,
            )
        )
        checks.append(("rebuilt catalog row for row the cold build's", rebuild["same_as_cold"]))
    real = results.get("real")
    if real and "vs_real" in real:
        within = TARGETS["cpu_per_entry_vs_real"]
        checks.append(
            (
                f"generated corpus's build CPU an entry within {within:.0%} of the real sample's",
                abs(real["vs_real"] - 1) <= within,
            )
        )
    peak = max(b["build_rss_mb"] for b in results["builds"])
    checks.append((f"peak RSS under {TARGETS['peak_rss_mb']} MB", peak < TARGETS["peak_rss_mb"]))
    limit = TARGETS["bytes_per_paper"]
    met = largest["bytes_per_paper"] <= limit
    checks.append((f"catalog at most {limit:,} bytes/paper at {largest['size']:,}", met))
    serve = results.get("serve")
    if serve:
        pages = serve["pages"]
        checks.append(("no default facet times out", not serve["papers_page_timed_out"]))
        for name, page in pages.items():
            if name.startswith("search"):
                # a rare term takes ~0.1 ms raw: there the fixed cost of any request decides
                extra = page["datasette"]["p95_ms"] - page["raw"]["p95_ms"]
                fixed = pages["select 1"]["datasette"]["p95_ms"]
                met = page["ratio_p95"] <= 3.0 or extra <= fixed
                checks.append((f"{name}: p95 within 3x raw (or raw + `select 1`)", met))
            if name.startswith(("author page", "paper page")):
                checks.append((f"{name}: p95 under 10x select 1", page["vs_select_1_p95"] < 10))
        checks += search_verdicts(pages, serve.get("search_facets", {}))
        csv_result = serve["csv"]
        checks.append(("CSV at least 1/3 of sqlite3 -csv", csv_result["share"] >= 1 / 3))
        checks.append(("CSV complete", csv_result["complete"]))
        checks.append(("every page answered 200", all(p["status"] == 200 for p in pages.values())))
    return [{"target": name, "met": bool(met)} for name, met in checks]


def markdown(results):
    m = results["machine"]
    builds_from = results.get("builds_from")
    lines = [
        (
            f"Machine: {m['nproc']} CPUs ({m['cpu']}), {m['ram_gb']} GB RAM, load average "
            f"{m['load_average'][0]:.1f} at start and {m.get('load_average_end', [0])[0]:.1f} "
            f"at the end (1 min); Python {m['python']}, "
            f"SQLite {m['sqlite']}, Datasette {m['datasette']}. {results['date']}."
        ),
        "",
        *(
            [f"Build figures from the run of {builds_from} (this run: `--serve-only`).", ""]
            if builds_from
            else []
        ),
        (
            "| papers | corpus MB | floor s | build s | ratio | CPU s floor / build | CPU ratio "
            "| floor MB | build MB | catalog MB | bytes/paper | authors |"
        ),
        "|---:|---:|---:|---:|---:|---:|---:|---:|---:|---:|---:|---:|",
    ]
    for b in results["builds"]:
        lines.append(
            f"| {b['papers']:,} | {b['corpus_mb']} | {b['floor_s']} | {b['build_s']} "
            f"| {b['build_ratio']}x | {b['floor_cpu_s']} / {b['build_cpu_s']} "
            f"| {b['cpu_ratio']}x | {b['floor_rss_mb']} | {b['build_rss_mb']} "
            f"| {b['catalog_mb']} | {b['bytes_per_paper']:,} | {b['authors']:,} |"
        )
    lines += real_lines(results.get("real"), results.get("rebuild"))
    serve = results.get("serve")
    if serve:
        lines += [
            "",
            (
                f"Through Datasette over HTTP on the {serve['papers']:,}-paper catalog "
                f"(inspect took {serve['inspect_s']} s). Each page and its raw SQL are timed "
                "in turns, so a burst of noise hits both:"
            ),
            "",
            (
                "| request | status | Datasette p50 ms | p95 ms | raw SQLite p50 ms | p95 ms "
                "| p95 ratio to raw | p95 / `select 1` |"
            ),
            "|---|---:|---:|---:|---:|---:|---:|---:|",
        ]
        for name, p in serve["pages"].items():
            lines.append(
                f"| {name} | {p['status']} | {p['datasette']['p50_ms']} "
                f"| {p['datasette']['p95_ms']} | {p['raw']['p50_ms']} | {p['raw']['p95_ms']} "
                f"| {p['ratio_p95']}x | {p['vs_select_1_p95']}x |"
            )
        for key in ("csv", "csv_without_abstract_plain"):
            if key in serve:
                lines += ["", csv_line(serve[key])]
    lines += ["", "| target | met |", "|---|---|"]
    lines += [f"| {v['target']} | {'yes' if v['met'] else 'NO'} |" for v in results["verdicts"]]
    return "\n".join(lines) + "\n"


def real_lines(real, rebuild):
    """The real sample's and the rebuild's tables (bench/rebuild.py)."""
    lines = []
    if real:
        lines += [
            "",
            (
                "Cold builds (`--no-cache`) and the floor timed in turns, medians of "
                f"{real['rounds']} rounds; CPU includes the parsing workers:"
            ),
            "",
            (
                "| corpus | entries | MB | floor s | build s | ratio | CPU s floor / build "
                "| CPU ratio | build CPU ms an entry |"
            ),
            "|---|---:|---:|---:|---:|---:|---:|---:|---:|",
        ]
        for name, f in real["corpora"].items():
            lines.append(
                f"| {name} | {f['entries']:,} | {f['corpus_mb']} | {f['floor_s']} "
                f"| {f['build_s']} | {f['ratio']}x | {f['floor_cpu_s']} / {f['build_cpu_s']} "
                f"| {f['cpu_ratio']}x | {f['build_cpu_ms_per_entry']} |"
            )
        if "vs_real" in real:
            lines += [
                "",
                f"Build CPU an entry, generated corpus / real sample: {real['vs_real']}x.",
            ]
    if rebuild:
        lines += [
            "",
            f"Rebuild of a copy of `{rebuild['corpus']}` ({rebuild['files']} files) after one "
            f"file changed (`{rebuild['changed']}`, a new one each round), with the cache "
            f"({rebuild['cache_mb']} MB), and the floor of the whole copy, timed in turns "
            f"(medians of {rebuild['rounds']} rounds). The first build, which stores the "
            f"cache: {rebuild['first_build_s']} s ({rebuild['first_build_cpu_s']} CPU-s). "
            "The rebuilt catalog is "
            + ("row for row" if rebuild["same_as_cold"] else "NOT")
            + " the one a cold build makes.",
            "",
            "| floor s | rebuild s | ratio | CPU s floor / rebuild | CPU ratio |",
            "|---:|---:|---:|---:|---:|",
            (
                f"| {rebuild['floor_s']} | {rebuild['build_s']} | {rebuild['ratio']}x "
                f"| {rebuild['floor_cpu_s']} / {rebuild['build_cpu_s']} | {rebuild['cpu_ratio']}x |"
            ),
        ]
    return lines


def csv_line(c):
    without = c.get("without")
    columns = f", all columns but `{'`, `'.join(without)}`" if without else ", all columns"
    return (
        f"CSV of `{c['view']}` ({c['rows_expected']:,} rows{columns}): Datasette "
        f"{c['datasette']['rows']:,} rows, {c['datasette']['mb']} MB in "
        f"{c['datasette']['seconds']} s ({c['datasette']['rows_per_s']:,} rows/s); "
        f"`sqlite3 -csv` {c['sqlite3_csv']['rows']:,} rows in {c['sqlite3_csv']['seconds']} s "
        f"({c['sqlite3_csv']['rows_per_s']:,} rows/s): {c['share']} of sqlite3"
        f"{'' if c['complete'] else ' (INCOMPLETE: cut short)'}."
    )


def add_real_and_rebuild(results, args, work):
    """The real sample against the smallest generated corpus (both cold, each in turns with
    its floor), then the rebuild case."""
    if args.real:
        smallest = min(args.sizes)
        corpus = work / f"corpus-{label(smallest)}"
        ensure_corpus(smallest, corpus)
        corpora = {
            f"generated, {smallest:,} papers": floor_and_build(
                corpus, work / f"cold-{label(smallest)}", args.rounds
            ),
            "real sample": floor_and_build(args.real, work / "cold-real", args.rounds),
        }
        generated, real = corpora.values()
        results["real"] = {
            "rounds": args.rounds,
            "corpora": corpora,
            "vs_real": round(
                generated["build_cpu_ms_per_entry"] / real["build_cpu_ms_per_entry"], 2
            ),
        }
        print(json.dumps(results["real"]), flush=True)
    if args.rebuild:
        corpus = work / f"corpus-{label(args.rebuild)}"
        ensure_corpus(args.rebuild, corpus)
        figures = rebuild_figures(corpus, work / f"rebuild-{label(args.rebuild)}", args.rounds)
        results["rebuild"] = {**figures, "rounds": args.rounds}
        print(json.dumps(results["rebuild"]), flush=True)


def main():
    parser = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    parser.add_argument("--sizes", type=int, nargs="+", default=[20_000, 100_000, 1_000_000])
    parser.add_argument("--work", default="/tmp/bench", help="corpora and catalogs go here")
    parser.add_argument("--out", default=str(BENCH / "results"))
    parser.add_argument("--requests", type=int, default=40, help="timed requests per page")
    parser.add_argument("--no-serve", action="store_true", help="builds only")
    parser.add_argument(
        "--serve-only",
        action="store_true",
        help="no corpora or builds: time the site on the largest size's existing catalog, "
        "keeping the build figures of the last latest.json in --out",
    )
    parser.add_argument(
        "--keep-builds",
        action="store_true",
        help="keep the last latest.json's build figures for the sizes this run does not build "
        "(`make bench` builds 1M in a step of its own)",
    )
    parser.add_argument(
        "--real",
        help="a folder of real pages (tests/fixtures/real/make_samples.py --large): its cold "
        "build and floor in turns, and the CPU an entry of the smallest corpus against it",
    )
    parser.add_argument(
        "--rebuild",
        type=int,
        metavar="SIZE",
        help="time a rebuild of this size's corpus after one file changed (the cache)",
    )
    parser.add_argument("--rounds", type=int, default=3, help="rounds of --real and --rebuild")
    args = parser.parse_args()
    work, out = Path(args.work), Path(args.out)
    work.mkdir(parents=True, exist_ok=True)
    out.mkdir(parents=True, exist_ok=True)
    results = {"date": time.strftime("%Y-%m-%d %H:%M"), "machine": machine(), "builds": []}
    if args.serve_only:
        catalog = work / label(max(args.sizes)) / "catalog.db"
        previous = out / "latest.json"
        if not catalog.exists() or not previous.exists():
            raise SystemExit(f"--serve-only needs {catalog} and {previous} from an earlier run")
        earlier = json.loads(previous.read_text())
        results["builds"] = earlier["builds"]
        results["builds_from"] = earlier.get("builds_from", earlier["date"])
    else:
        for size in sorted(args.sizes):
            results["builds"].append(build_figures(size, work))
            print(json.dumps(results["builds"][-1]), flush=True)
        catalog = results["builds"][-1]["catalog"]
        if args.keep_builds and (out / "latest.json").exists():
            built = set(args.sizes)
            earlier = json.loads((out / "latest.json").read_text())["builds"]
            kept = [b for b in earlier if b["size"] not in built]
            results["builds"] = sorted(kept + results["builds"], key=lambda b: b["size"])
    if args.real or args.rebuild:
        add_real_and_rebuild(results, args, work)
    if not args.no_serve:
        results["serve"] = serve_figures(catalog, args.requests)
    results["machine"]["load_average_end"] = os.getloadavg()
    results["verdicts"] = verdicts(results)
    (out / "latest.json").write_text(json.dumps(results, indent=2, ensure_ascii=False) + "\n")
    (out / "latest.md").write_text(markdown(results), encoding="utf-8")
    print(markdown(results))


if __name__ == "__main__":
    main()
