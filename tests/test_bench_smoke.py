"""The scale benchmark still runs end to end (at 10k papers); nothing here is about time."""

import filecmp
import json
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


@pytest.fixture(scope="module")
def corpus(tmp_path_factory):
    folder = tmp_path_factory.mktemp("corpus")
    generate(3000, folder)
    return folder


def test_generator_is_deterministic_and_in_the_seed_formats(corpus, tmp_path):
    generate(3000, tmp_path)
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
    assert entries >= 3000  # some papers appear in two files


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
    assert dumps[0]["papers"] and dumps[0]["paper_authors"]
    assert dumps[0] == dumps[1]


def test_benchmark_runs_end_to_end_at_10k(tmp_path):
    result = subprocess.run(
        [
            sys.executable,
            BENCH / "run.py",
            "--sizes",
            "10000",
            "--requests",
            "2",
            "--work",
            tmp_path / "work",
            "--out",
            tmp_path / "results",
        ],
        capture_output=True,
        text=True,
        timeout=300,
        check=False,
    )
    assert result.returncode == 0, result.stderr[-2000:]
    results = json.loads((tmp_path / "results" / "latest.json").read_text())
    (build,) = results["builds"]
    assert build["papers"] == 10000
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
