"""The paper-catalog command through Click's CliRunner."""

import os
import sqlite3
from contextlib import closing

import pytest
from click.testing import CliRunner

from loader.build.atomic import TargetRefused
from loader.build.catalog import build_catalog
from loader.build.marker import is_paper_catalog
from loader.build.schema import SCHEMA_VERSION
from loader.cli import cli
from loader.read.sources import discover

from .conftest import SEEDS

ABSTRACT = "We propose a method and show that it works on many benchmarks."


def run(*args):
    return CliRunner().invoke(cli, [str(a) for a in args])


def test_build_seeds_prints_summary(tmp_path):
    db = tmp_path / "catalog.db"
    result = run("build", SEEDS, "--db", db)
    assert result.exit_code == 0, result.output
    assert result.output.strip() == (
        f"{db}: 90 papers, 276 authors, 16 tracks, 3 affiliations, 0 problems"
    )
    assert sqlite3.connect(db).execute("select count(*) from papers").fetchone() == (90,)


def test_check_reports_problems_and_exits_1(tmp_path):
    bad = tmp_path / "bad.txt"
    bad.write_text(f"论文检索\n\n{ABSTRACT}\n\nAnn Lee\n", encoding="utf-8")
    result = run("check", bad)
    assert result.exit_code == 1
    assert f"{bad}:3: abstract with no authors line before it" in result.output
    assert f"{bad}:5: authors line with no abstract after it" in result.output
    assert "Traceback" not in result.output
    assert not list(tmp_path.glob("*.db"))


def test_check_clean_seeds_exits_0():
    result = run("check", SEEDS)
    assert result.exit_code == 0
    assert result.output.strip() == "90 entries, 0 problems"


def test_failed_build_exits_nonzero_without_traceback(tmp_path):
    db = tmp_path / "catalog.db"
    assert run("build", SEEDS, "--db", db).exit_code == 0
    before = db.read_bytes()
    bad = tmp_path / "bad.bin"
    bad.write_bytes(b"\x00\x01\x02" * 100)
    result = run("build", SEEDS, bad, "--db", db)
    assert result.exit_code == 1
    assert f"{bad}:1: file is binary or not UTF-8 text" in result.output
    assert "left unchanged" in result.output and "Traceback" not in result.output
    assert db.read_bytes() == before


def test_a_catalog_failing_its_integrity_check_never_replaces_the_old_one(tmp_path, monkeypatch):
    import loader.build.catalog

    db = tmp_path / "catalog.db"
    assert run("build", SEEDS, "--db", db).exit_code == 0
    before = db.read_bytes()

    def damaged(db):  # a disk or SQLite fault, injected where the checks run
        raise loader.build.catalog.CatalogCheckFailed("integrity_check: row 3 missing from index")

    monkeypatch.setattr(loader.build.catalog, "check_integrity", damaged)
    result = run("build", SEEDS, "--db", db)
    assert result.exit_code == 1 and "Traceback" not in result.output
    assert "failed its integrity check (integrity_check: row 3 missing" in result.output
    assert "left unchanged" in result.output
    assert db.read_bytes() == before
    # no temporary left; the cache keeps the entries of the files both builds read
    assert sorted(p.name for p in tmp_path.iterdir()) == [".catalog.db.cache", "catalog.db"]


def test_skip_invalid_builds_the_rest(tmp_path):
    db = tmp_path / "catalog.db"
    empty = tmp_path / "empty.txt"
    empty.write_text("")
    result = run("build", SEEDS, empty, "--db", db, "--skip-invalid")
    assert result.exit_code == 0
    assert f"{empty}:1: file is empty" in result.output
    assert "90 papers" in result.output and "1 problems" in result.output


def test_missing_path_is_a_clear_error(tmp_path):
    result = run("build", tmp_path / "nope", "--db", tmp_path / "x.db")
    assert result.exit_code == 2 and "does not exist" in result.output


def test_empty_folder_is_a_clear_error(tmp_path):
    result = run("build", tmp_path, "--db", tmp_path / "x.db")
    assert result.exit_code == 1 and "no input files" in result.output


def test_format_option_forces_a_parser(tmp_path):
    listing = tmp_path / "no-marker.txt"
    listing.write_text(f"Ann Lee, Bo Chen\n\n{ABSTRACT}\n", encoding="utf-8")
    assert run("check", listing).exit_code == 1  # detected as a profile: owner, no abstract
    result = run("check", listing, "--format", "listing")
    assert result.exit_code == 0 and "1 entries" in result.output


def test_help_has_examples():
    for command in ("build", "check", "serve"):
        result = run(command, "--help")
        assert result.exit_code == 0 and "Example:" in result.output


def assert_refused(result, db, reason):
    assert result.exit_code == 1, result.output
    assert result.exception is None or isinstance(result.exception, SystemExit)
    assert "Traceback" not in result.output
    assert result.output.startswith(f"Error: cannot write {db}: {reason}"), result.output


def test_build_refuses_a_db_that_is_no_catalog_and_leaves_it_as_it_was(tmp_path):
    """Before: `--db notes.txt` replaced the text file with a catalog."""
    notes = tmp_path / "notes.txt"
    notes.write_text("my notes\n", encoding="utf-8")
    other = tmp_path / "other.db"
    with closing(sqlite3.connect(other)) as connection, connection:
        connection.execute("create table papers (id text)")  # a catalog's table, not all of them
    for db in (notes, other):
        before = db.read_bytes()
        result = run("build", SEEDS, "--db", db)
        assert_refused(result, db, "it exists and is not a catalog built by paper-catalog")
        assert db.read_bytes() == before
    assert sorted(p.name for p in tmp_path.iterdir()) == ["notes.txt", "other.db"]


def test_build_refuses_a_db_that_is_one_of_its_inputs(tmp_path):
    """Before: `--db` naming an input file replaced the input; a hard link is the same file."""
    source = tmp_path / "listing.txt"
    source.write_bytes(next(SEEDS.glob("*.txt")).read_bytes())
    link = tmp_path / "link.db"
    os.link(source, link)
    before = source.read_bytes()
    for args, db in (((source,), source), ((tmp_path,), link), ((SEEDS, source), link)):
        assert_refused(run("build", *args, "--db", db), db, "it is one of the input files")
        assert source.read_bytes() == before
    # a catalog given as an input is refused too: the build would read it as a problem
    catalog = tmp_path / "catalog.db"
    assert run("build", SEEDS, "--db", catalog).exit_code == 0
    built = catalog.read_bytes()
    result = run("build", SEEDS, catalog, "--db", catalog, "--skip-invalid")
    assert_refused(result, catalog, "it is one of the input files")
    assert catalog.read_bytes() == built


def test_build_replaces_a_catalog_an_older_catalog_or_an_empty_file(tmp_path):
    catalog = tmp_path / "catalog.db"
    assert run("build", SEEDS, "--db", catalog).exit_code == 0
    with closing(sqlite3.connect(catalog)) as connection, connection:
        assert connection.execute("select * from paper_catalog").fetchall() == [
            ("paper-catalog", SCHEMA_VERSION)
        ]
    assert is_paper_catalog(catalog)
    # a catalog built before the marker: papers, paper_sources and sources, no paper_catalog
    older = tmp_path / "older.db"
    older.write_bytes(catalog.read_bytes())
    with closing(sqlite3.connect(older)) as connection, connection:
        connection.execute("drop table paper_catalog")
    assert not is_paper_catalog(older)
    empty = tmp_path / "empty.db"  # a placeholder (mktemp, touch): nothing to lose
    empty.touch()
    for db in (catalog, older, empty):
        result = run("build", SEEDS, "--db", db)
        assert result.exit_code == 0, result.output
        assert is_paper_catalog(db)


def test_build_checks_the_db_again_before_replacing_it(tmp_path):
    """A catalog swapped for another file while the build runs is not replaced either."""
    db = tmp_path / "catalog.db"
    assert run("build", SEEDS, "--db", db).exit_code == 0
    swapped = []

    def swap(read):
        if not swapped:
            db.unlink()
            db.write_text("written while the build ran\n", encoding="utf-8")
            swapped.append(read)

    with pytest.raises(TargetRefused, match="not a catalog built by paper-catalog"):
        build_catalog(discover([SEEDS]), db, progress=swap)
    assert swapped and db.read_text(encoding="utf-8") == "written while the build ran\n"
    assert not list(tmp_path.glob(".catalog.db.*.building*"))


@pytest.mark.parametrize(
    "content", [b"", b"not a database\n" * 100, b"SQLite format 3\x00" + b"\xff" * 200]
)
def test_is_paper_catalog_is_false_for_any_other_file(tmp_path, content):
    path = tmp_path / "file?name#with%signs.db"
    path.write_bytes(content)
    assert not is_paper_catalog(path)
    assert path.read_bytes() == content
    assert not is_paper_catalog(tmp_path / "missing.db")
    assert not is_paper_catalog(tmp_path)
    fifo = tmp_path / "pipe"
    os.mkfifo(fifo)
    assert not is_paper_catalog(fifo)  # never waits on a writer
    assert sorted(p.name for p in tmp_path.iterdir()) == ["file?name#with%signs.db", "pipe"]
