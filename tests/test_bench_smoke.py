"""The benchmarks still run end to end (in `make test-slow`: they are benchmarks, not checks of the
catalog): the scale benchmark at 2k and 10k papers, bench/throughput.py on the seed catalog for a
second or two a run. The generator and parallel parsing are checked in `make test`. Nothing here is
about time."""

import filecmp
import importlib.util
import json
import os
import shutil
import sqlite3
import subprocess
import sys

import pytest

from loader.build.catalog import build_catalog
from loader.build.schema import SCHEMA
from loader.read.sources import discover, read_source
from loader.records import Problem

from .conftest import ROOT

BENCH = ROOT / "bench"


def generate(papers, out, seed=7):
    subprocess.run(
        [
            sys.executable,
            BENCH / "generate.py",
            "--papers",
            str(papers),
            "--out",
            out,
            "--seed",
            str(seed),
        ],
        check=True,
        capture_output=True,
    )


# papers the generator writes here (seed 7): three files of both formats, enough for two parsing
# workers to take them out of order (1,000 papers: two files)
CORPUS_PAPERS = 1200


@pytest.fixture(scope="module")
def corpus(tmp_path_factory):
    folder = tmp_path_factory.mktemp("corpus")
    generate(CORPUS_PAPERS, folder)
    return folder


def test_generator_is_deterministic_and_in_the_seed_formats(corpus, tmp_path):
    generate(CORPUS_PAPERS, tmp_path)
    files = sorted(p.name for p in corpus.iterdir())
    assert files == sorted(p.name for p in tmp_path.iterdir())
    assert not filecmp.cmpfiles(corpus, tmp_path, files, shallow=False)[1]
    formats, entries = set(), 0
    for path in discover([corpus]):
        source, items = read_source(path)
        formats.add(source.format)
        for item in items:
            assert not isinstance(item, Problem), str(item)
            entries += 1
    assert formats == {"listing", "profile"}
    assert entries >= CORPUS_PAPERS  # some papers appear in two files


def test_parallel_parsing_builds_the_same_catalog(corpus, tmp_path):
    dumps = []
    for workers in (0, 2):
        db = tmp_path / f"{workers}.db"
        build_catalog(discover([corpus]), db, workers=workers)
        connection = sqlite3.connect(db)
        dumps.append(
            {
                table: connection.execute(f"select * from {table} order by 1, 2").fetchall()
                for table in SCHEMA
            }
        )
        connection.close()
    assert len(discover([corpus])) >= 3
    assert dumps[0]["papers"] and dumps[0]["paper_authors"]
    assert dumps[0] == dumps[1]


@pytest.mark.slow
@pytest.mark.parametrize("size", [2000, 10000])
def test_benchmark_runs_end_to_end(tmp_path, size):
    # the real sample and the rebuild in the long run only (the cache: test_prepared_cache);
    # the committed real sample stands in for the large one
    extra = ["--real", ROOT / "tests" / "fixtures" / "real" / "sample"]
    extra += ["--rebuild", str(size), "--rounds", "1"]
    result = subprocess.run(
        [
            sys.executable,
            BENCH / "run.py",
            "--sizes",
            str(size),
            "--requests",
            "2",
            "--work",
            tmp_path / "work",
            "--out",
            tmp_path / "results",
            *(extra if size > 2000 else []),
        ],
        capture_output=True,
        text=True,
        timeout=300,
        check=False,
    )
    assert result.returncode == 0, result.stderr[-2000:]
    results = json.loads((tmp_path / "results" / "latest.json").read_text())
    if size > 2000:
        corpora = results["real"]["corpora"]
        real, generated = corpora["real sample"], corpora[f"generated, {size:,} papers"]
        assert real["entries"] > 500 and generated["entries"] >= size
        assert real["build_cpu_ms_per_entry"] > 0 and results["real"]["vs_real"] > 0
        assert results["rebuild"]["same_as_cold"] and results["rebuild"]["build_s"] > 0
    (build,) = results["builds"]
    assert build["papers"] == size
    assert build["floor_s"] > 0 and build["build_s"] > 0 and build["bytes_per_paper"] > 0
    serve = results["serve"]
    assert {page["status"] for page in serve["pages"].values()} == {200}
    assert {"select 1", "papers page, default facets", "paper page"} <= set(serve["pages"])
    assert serve["csv"]["complete"]
    assert not serve["papers_page_timed_out"]
    assert "| target | met |" in (tmp_path / "results" / "latest.md").read_text()

    # the CSV writer comparison runs on the same catalog; it checks the two sizes agree
    out = tmp_path / "results" / "csv_writer.json"
    result = subprocess.run(
        [sys.executable, BENCH / "csv_writer.py", build["catalog"], "--runs", "1", "--out", out],
        capture_output=True,
        text=True,
        timeout=300,
        check=False,
    )
    assert result.returncode == 0, result.stderr[-2000:]
    figures = json.loads(out.read_text())
    assert figures["rows"] > 0 and figures["bytes"] > 0 and figures["speedup"] > 0


# bench/throughput.py in miniature: both servers on the seed catalog ------------------------------


def load_bench(name):
    spec = importlib.util.spec_from_file_location(name, ROOT / "bench" / f"{name}.py")
    module = importlib.util.module_from_spec(spec)
    spec.loader.exec_module(module)
    return module


def load_throughput():
    return load_bench("throughput")


def test_mix_has_every_kind_and_no_repeats(seed_catalog):
    throughput = load_throughput()
    urls, kinds = throughput.mix_urls(seed_catalog, size=200)
    assert len(urls) == len(set(urls)) == sum(kinds.values())
    assert all(kinds.values()), kinds
    assert throughput.cpu_seconds(os.getpid()) > 0


@pytest.mark.slow
@pytest.mark.skipif(shutil.which("wrk") is None, reason="needs wrk (Debian: apt-get install wrk)")
@pytest.mark.parametrize(
    "mix_connections, seconds",
    [
        pytest.param([], 1, id="popular"),
        pytest.param([4], 2, id="mix-and-popular"),
    ],
)
def test_tiny_run_of_both_servers(tmp_path, seed_catalog, monkeypatch, mix_connections, seconds):
    """Each run starts its own servers: the popular pages, then the URL mix too."""
    throughput = load_throughput()
    db = tmp_path / "catalog.db"
    shutil.copy(seed_catalog, db)
    urls, kinds = throughput.mix_urls(db, size=50)
    results = throughput.measure(db, seconds, mix_connections, urls, cache_mb=1)
    runs = [("mix", connections) for connections in mix_connections] + [("popular", 16)]
    assert set(results) == {
        (server, run, connections) for server in ("stock", "ours") for run, connections in runs
    }
    assert all(r["errors"] == 0 for r in results.values()), results
    # on a busy machine stock Datasette may finish nothing in a second or two; ours must
    assert all(r["requests"] > 0 for (server, _, _), r in results.items() if server == "ours")
    text = throughput.report(db, results, 1, kinds)
    assert "| popular | 16 |" in text and "ours/stock" in text
    assert ("| mix | 4 |" in text) == bool(mix_connections)


@pytest.mark.slow
def test_the_exports_benchmark_runs_end_to_end(real_size_catalog, tmp_path):
    """bench/exports.py on the 11,452 papers of tests/real_size.py: every case complete."""
    out = tmp_path / "exports.json"
    catalog = tmp_path / "catalog.db"
    shutil.copyfile(real_size_catalog, catalog)  # the site's snapshots go beside it
    subprocess.run(
        [sys.executable, BENCH / "exports.py", catalog, "--out", out],
        check=True,
        capture_output=True,
        cwd=ROOT,
    )
    figures = json.loads(out.read_text())
    assert [case["complete"] for case in figures["cases"]] == [True] * 5
    assert {case["rows"] for case in figures["cases"] if "every paper" in case["case"]} == {
        figures["papers"]
    }
    assert out.with_suffix(".md").read_text().count("| yes |") == 5


# bench/page_kinds.py: each kind on URLs that never repeat --------------------------------------


def load_page_kinds():
    spec = importlib.util.spec_from_file_location("page_kinds", ROOT / "bench" / "page_kinds.py")
    module = importlib.util.module_from_spec(spec)
    spec.loader.exec_module(module)
    return module


def test_every_kind_has_its_own_urls_none_twice(seed_catalog):
    page_kinds = load_page_kinds()
    kinds = page_kinds.kind_paths(seed_catalog, limit=500)
    assert list(kinds) == page_kinds.KINDS
    for kind, (ours_path, stock_path, keys) in kinds.items():
        paths = [ours_path(key) for key in keys]
        assert paths and len(set(paths)) == len(paths), kind
    ours_path, stock_path, keys = kinds["/search"]
    # stock's side of /search is its table search for the same words
    assert stock_path(keys[0]) == kinds["table search"][0](keys[0])
    assert ours_path(keys[0]).startswith("/search?q=")


def test_runs_of_a_kind_combine_into_requests_over_seconds():
    page_kinds = load_page_kinds()
    runs = [
        {"req_s": 100.0, "requests": 500, "p99_ms": 80, "errors": 0, "repeated": 0, "cpu_s": 4},
        {"req_s": 50.0, "requests": 500, "p99_ms": 120, "errors": 1, "repeated": 0, "cpu_s": 6},
    ]
    combined = page_kinds.combined(runs)
    assert combined["req_s"] == round(1000 / 15, 1)  # 5 s and 10 s
    assert combined["p99_ms"] == 120 and combined["errors"] == 1
    assert combined["req_per_cpu_s"] == 100.0


@pytest.mark.slow
@pytest.mark.skipif(shutil.which("wrk") is None, reason="needs wrk (Debian: apt-get install wrk)")
def test_tiny_run_of_two_kinds_on_both_servers(tmp_path, seed_catalog, monkeypatch):
    page_kinds = load_page_kinds()
    monkeypatch.setattr(page_kinds, "WARM_URLS", 5)
    monkeypatch.setattr(page_kinds, "WARM_SECONDS", 1)
    db = tmp_path / "catalog.db"
    shutil.copy(seed_catalog, db)
    paths_of = page_kinds.kind_paths(db, limit=2000)
    kinds = ["author page", "/search"]
    results = page_kinds.measure(db, kinds, paths_of, 1, 2, connections=4, workers=1)
    assert set(results) == set(kinds)
    for servers in results.values():
        assert servers["ours"]["errors"] == servers["stock"]["errors"] == 0
        assert servers["ours"]["requests"] > 0
    settings = {
        "machine": page_kinds.machine(),
        "load_before": page_kinds.load_average(),
        "load_after": page_kinds.load_average(),
        "started": "now",
        "workers": 1,
        "connections": 4,
        "rounds": 2,
        "duration": 1,
    }
    text = page_kinds.report(db, results, settings)
    assert "| author page |" in text and "| /search |" in text


def test_every_person_the_generator_draws_reads_as_a_name():
    """A profile page's first line is its owner: a drawn name that reads as no person's (a
    source's 'Takehisa Nishida & Kazuo' as a given part) made a 1M corpus's file unreadable."""
    from loader.read.lines import looks_like_name

    generate = load_bench("generate")
    corpus = generate.Corpus(1000)
    people = [corpus.author_name(rank) for rank in range(50_000)]
    assert [name for name in people if not looks_like_name(name)] == []
    assert all(looks_like_name(f"{given} {corpus.family[0]}") for given in corpus.given)
