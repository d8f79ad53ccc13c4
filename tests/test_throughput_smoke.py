"""bench/throughput.py in miniature: both servers on the seed catalog for two seconds a run."""

import importlib.util
import os
import shutil

import pytest

from .conftest import ROOT


def load_throughput():
    spec = importlib.util.spec_from_file_location("throughput", ROOT / "bench" / "throughput.py")
    module = importlib.util.module_from_spec(spec)
    spec.loader.exec_module(module)
    return module


def test_mix_has_every_kind_and_no_repeats(seed_catalog):
    throughput = load_throughput()
    urls, kinds = throughput.mix_urls(seed_catalog, size=200)
    assert len(urls) == len(set(urls)) == sum(kinds.values())
    assert all(kinds.values()), kinds
    assert throughput.cpu_seconds(os.getpid()) > 0


@pytest.mark.skipif(shutil.which("wrk") is None, reason="needs wrk (Debian: apt-get install wrk)")
def test_tiny_run_of_both_servers(tmp_path, seed_catalog):
    throughput = load_throughput()
    db = tmp_path / "catalog.db"
    shutil.copy(seed_catalog, db)
    urls, kinds = throughput.mix_urls(db, size=50)
    results = throughput.measure(db, 2, [4], urls, cache_mb=1)
    assert set(results) == {
        (server, run, connections)
        for server in ("stock", "ours")
        for run, connections in (("mix", 4), ("popular", 16))
    }
    assert all(r["errors"] == 0 for r in results.values()), results
    # on a busy machine stock Datasette may finish nothing in two seconds; ours must
    assert all(r["requests"] > 0 for (server, _, _), r in results.items() if server == "ours")
    text = throughput.report(db, results, 1, kinds)
    assert "| mix | 4 |" in text and "ours/stock" in text
