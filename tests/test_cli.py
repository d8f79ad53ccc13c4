"""The paper-catalog command through Click's CliRunner."""

import sqlite3

from click.testing import CliRunner

from loader.cli import cli

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
