"""What the loader refuses to hold or to publish: lines over MAX_LINE_BYTES (reported, skipped
without ever being held, under a memory cap too) and the builder's folders in stored paths."""

import resource
import sqlite3
import subprocess
import sys
from pathlib import Path

import pytest
from click.testing import CliRunner

from loader.build.catalog import build_catalog
from loader.cli import cli
from loader.read import lines as text
from loader.read.sources import discover, public_paths, read_source
from loader.records import Problem

from .conftest import SEEDS

GIANT = 20_000_000  # a 20 MB line used 2.35 GB of memory before
MEMORY_CAP = 400 * 2**20  # address space; the build of a GIANT line needs far less now
SCRIPT = Path(sys.executable).with_name("paper-catalog")


def write_listing(path, abstract):
    """Three papers; the second one's abstract is `abstract`."""
    with open(path, "w", encoding="utf-8") as fp:
        fp.write("论文检索\n\nAnn Lee\n\nThe first abstract.\n\nBo Chen, Cy Dee\n\n")
        fp.write(abstract)
        fp.write("\n\nEd Fox\n\nThe third abstract.\n")
    return path


def parse(path):
    source, items = read_source(path)
    return source, [(i.line, i.message) if isinstance(i, Problem) else i.line for i in items]


def test_line_over_the_limit_is_reported_and_the_rest_of_the_file_loads(tmp_path):
    size = text.MAX_LINE_BYTES + 1
    path = write_listing(tmp_path / "giant.txt", "a" * size)
    source, items = parse(path)
    assert source.format == "listing" and len(source.sha256) == 64
    assert items == [
        3,
        (9, f"line too long ({size} bytes; a line may hold {text.MAX_LINE_BYTES})"),
        (7, "authors line with no abstract after it"),  # the paper it belonged to
        11,
    ]


def test_line_at_the_limit_loads(tmp_path):
    path = write_listing(tmp_path / "big.txt", "a" * text.MAX_LINE_BYTES)
    assert parse(path)[1] == [3, 7, 11]


@pytest.fixture
def small_limit(monkeypatch):
    monkeypatch.setattr(text, "MAX_LINE_BYTES", 100)
    monkeypatch.setattr(text, "SKIP_CHUNK", 7)  # a long line is skipped in many pieces


@pytest.mark.parametrize("end", ["\n", "\r\n", "\r"])
def test_limit_counts_bytes_whatever_the_line_end(tmp_path, small_limit, end):
    lines = ["论文检索", "", "Ann Lee", "", "a" * 100, "", "Bo Chen", "", "b" * 101]
    lines += ["", "Cy Dee", "", "雪" * 34, "", "Di Ng", "", "\udcff" * 101]  # 102 and 101 bytes
    path = tmp_path / "limit.txt"
    path.write_bytes(end.join(lines).encode("utf-8", "surrogateescape"))  # no end at the end
    problems = [item for item in parse(path)[1] if isinstance(item, tuple)]
    assert problems == [
        (9, "line too long (101 bytes; a line may hold 100)"),
        (7, "authors line with no abstract after it"),
        (13, "line too long (102 bytes; a line may hold 100)"),  # 34 characters
        (11, "authors line with no abstract after it"),
        (17, "line too long (101 bytes; a line may hold 100)"),  # not UTF-8, no line end
        (15, "authors line with no abstract after it"),
    ]
    assert parse(path)[1][0] == 3  # Ann Lee's paper, 100 bytes, loads


def test_json_lines_file_with_a_giant_first_record_loads_the_others(tmp_path, small_limit):
    path = tmp_path / "records.jsonl"
    path.write_text(
        '{"abstract": "' + "x" * 200 + '", "authors": ["Ann Lee"]}\n'
        '{"abstract": "A short one.", "authors": ["Bo Chen"]}\n',
        encoding="utf-8",
    )
    source, items = parse(path)
    assert source.format == "jsonl"
    assert items == [(1, "line too long (240 bytes; a line may hold 100)"), 2]


def test_file_whose_first_line_is_too_long_says_so(tmp_path, small_limit):
    path = tmp_path / "profile.txt"
    path.write_text("A" * 500 + "\n\nAnn Lee\n\nAn abstract.\n", encoding="utf-8")
    assert parse(path)[1] == [
        (
            1,
            (
                "unknown format: expected a listing page (first line 论文检索), an author "
                "profile page (first line a name), JSON Lines, a Paper Copilot list, an arXiv "
                "metadata snapshot or OpenReview notes; line 1: line too long "
                "(500 bytes; a line may hold 100)"
            ),
        )
    ]


def cap_memory():
    resource.setrlimit(resource.RLIMIT_AS, (MEMORY_CAP, MEMORY_CAP))


def test_giant_line_under_a_memory_cap_is_a_problem_not_a_memory_error(tmp_path):
    """Before: MemoryError traceback from text.py (and 2.35 GB without a cap)."""
    path = tmp_path / "giant.txt"
    with open(path, "w", encoding="utf-8") as fp:
        fp.write("论文检索\n\nAnn Lee\n\nThe first abstract.\n\nBo Chen, Cy Dee\n\n")
        fp.writelines("word " * 200_000 for _ in range(GIANT // 1_000_000))
        fp.write("\n\nEd Fox\n\nThe third abstract.\n")
    db = tmp_path / "catalog.db"
    command = [SCRIPT, "build", path, "--db", db, "--skip-invalid"]
    result = subprocess.run(
        command, check=False, capture_output=True, text=True, preexec_fn=cap_memory
    )
    assert result.returncode == 0, result.stderr
    assert result.stderr.splitlines() == [
        f"{path}:9: line too long ({GIANT} bytes; a line may hold {text.MAX_LINE_BYTES})",
        f"{path}:7: authors line with no abstract after it",
    ]
    connection = sqlite3.connect(db)
    assert connection.execute("select count(*) from papers").fetchone() == (2,)
    assert connection.execute("select count(*) from load_problems").fetchone() == (2,)
    connection.close()


# ---------------------------------------------------------------------------------------------
# No builder's folder in a published catalog


@pytest.mark.parametrize(
    "names, public",
    [
        (["seeds/a.txt", "../data/b.txt"], ["seeds/a.txt", "../data/b.txt"]),  # as given
        (["/home/ann/build/seeds/a.txt"], ["seeds/a.txt"]),  # inside the current folder
        (["/home/ann/data/a.txt"], ["a.txt"]),  # one file
        (
            ["/home/ann/data/iclr/a.txt", "/home/ann/data/iclr/2024/b.txt"],
            ["a.txt", "2024/b.txt"],  # one folder
        ),
        (["/home/ann/a.txt", "/home/ann/data/b.txt"], ["a.txt", "data/b.txt"]),
        (["/home/ann/a.txt", "/srv/data/b.txt"], ["a.txt", "b.txt"]),  # only / in common
        (["/home/ann/build2/a.txt"], ["a.txt"]),  # beside the current folder, not in it
    ],
)
def test_public_paths(monkeypatch, names, public):
    monkeypatch.setattr("os.getcwd", lambda: "/home/ann/build")
    assert public_paths(names) == dict(zip(names, public))


def stored_paths(db):
    connection = sqlite3.connect(db)
    try:
        return [
            row[0]
            for row in connection.execute(
                "select path from sources union all select file from load_problems"
            )
        ]
    finally:
        connection.close()


def test_catalog_stores_no_absolute_path(tmp_path, monkeypatch):
    inputs = tmp_path / "home" / "ann" / "inputs"
    inputs.mkdir(parents=True)
    for seed in discover([SEEDS]):
        (inputs / seed.name).write_bytes(seed.read_bytes())
    (inputs / "more").mkdir()
    bad = inputs / "more" / "bad.txt"
    bad.write_text("论文检索\n\nAn abstract with no authors line.\n", encoding="utf-8")
    db = tmp_path / "catalog.db"
    elsewhere = tmp_path / "elsewhere"
    elsewhere.mkdir()
    monkeypatch.chdir(elsewhere)  # the inputs are outside the current folder
    result = CliRunner().invoke(cli, ["build", str(inputs), "--db", str(db), "--skip-invalid"])
    assert result.exit_code == 0, result.output
    # the terminal shows the paths as given, the catalog the paths inside the input folder
    assert f"{bad}:3: abstract with no authors line before it" in result.output
    names = ["000_f6d208fccd6a4015.txt", "003_5bcb16731c62432c.txt", "004_c2ae629adeebe2a0.txt"]
    assert stored_paths(db) == [*names, "more/bad.txt", "more/bad.txt"]

    monkeypatch.chdir(tmp_path)  # now inside: relative to the current folder
    build_catalog(discover([inputs]), db, skip_invalid=True)
    assert stored_paths(db) == [
        f"home/ann/inputs/{name}" for name in [*names, *["more/bad.txt"] * 2]
    ]

    build_catalog(discover([Path("home/ann/inputs/more")]), db, skip_invalid=True)
    assert stored_paths(db) == ["home/ann/inputs/more/bad.txt"] * 2  # relative: as given


def test_sources_yml_problems_are_stored_without_folders_too(tmp_path, monkeypatch):
    inputs = tmp_path / "home" / "ann" / "inputs"
    (inputs / "2024").mkdir(parents=True)
    page = "论文检索\n\nAnn Lee\n\nWe study a problem and propose a method that works well.\n"
    (inputs / "2024" / "iclr.txt").write_text(page, encoding="utf-8")
    config = '- match: "neurips*.txt"\n  venue: NeurIPS\n  year: 2023\n'
    (inputs / "2024" / "sources.yml").write_text(config, encoding="utf-8")
    db = tmp_path / "catalog.db"
    (tmp_path / "elsewhere").mkdir()
    monkeypatch.chdir(tmp_path / "elsewhere")
    result = CliRunner().invoke(cli, ["build", str(inputs), "--db", str(db), "--skip-invalid"])
    assert result.exit_code == 0, result.output
    assert f"{inputs / '2024' / 'sources.yml'}:1: " in result.output  # as given on the terminal
    assert stored_paths(db) == ["iclr.txt", "sources.yml"]  # the folder they share: 2024
