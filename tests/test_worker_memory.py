"""A served worker's memory after the largest exports the site offers, on the catalog of more
than 10,000 real-size papers (tests/real_size.py): `bench/worker_memory.py` in miniature.

Large exports once left each worker at 240 MB on a 20k catalog, most of it the catalog file
itself: SQLite mapped it into memory (`mmap_size`), and a mapped page counts in the worker's
resident memory once for each of its connections that read it (plugins/limits.py).
"""

import importlib.util
import os

import pytest

from .conftest import ROOT
from .test_serve import served

# the per-worker ceiling docs/serving.md#memory gives for a 20k catalog after large exports
WORKER_BUDGET_MB = 200
TERM = "the"  # in more than 10,000 of the papers


def load_bench():
    path = ROOT / "bench" / "worker_memory.py"
    spec = importlib.util.spec_from_file_location("bench_worker_memory", path)
    module = importlib.util.module_from_spec(spec)
    spec.loader.exec_module(module)
    return module


def exports_and_memory(catalog, tmp_path, rounds, workers):
    """Each worker's resident memory before and after `rounds` of every large export."""
    bench = load_bench()
    db = tmp_path / "catalog.db"
    os.link(catalog, db)  # the shared catalog, served from this test's folder
    with served(db, workers=workers) as (url, process):
        pids = bench.worker_pids(process.pid)
        assert len(pids) == workers
        before = [bench.resident_mb(pid) for pid in pids]
        # the two that read the most rows: every match of a common word, the whole table
        paths = [path for path in bench.export_paths(TERM) if ".csv" in path]
        for _ in range(rounds):
            results = bench.run_exports(url, paths, concurrency=len(paths))
            assert all(status == 200 and size > 0 for _, status, size in results), results
        after = [bench.resident_mb(pid) for pid in pids]
    print(f"\nworker memory (MB) before {before}, after {after}")
    return before, after


def check(catalog, before, after):
    catalog_mb = catalog.stat().st_size / (1024 * 1024)
    for start, end in zip(before, after, strict=True):
        assert end["VmRSS"] < WORKER_BUDGET_MB, (start, end)
        # the catalog's pages are the operating system's page cache, not the worker's
        assert end["RssFile"] - start["RssFile"] < catalog_mb / 2, (start, end, catalog_mb)


def test_a_worker_stays_within_its_budget_after_large_exports(real_size_catalog, tmp_path):
    before, after = exports_and_memory(real_size_catalog, tmp_path, rounds=1, workers=1)
    check(real_size_catalog, before, after)


@pytest.mark.slow
def test_two_workers_stay_within_their_budget_after_rounds_of_exports(real_size_catalog, tmp_path):
    before, after = exports_and_memory(real_size_catalog, tmp_path, rounds=5, workers=2)
    check(real_size_catalog, before, after)
