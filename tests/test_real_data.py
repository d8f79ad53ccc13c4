"""The real loader on real public paper metadata (tests/fixtures/real/, see its README.md).

The sample holds real ICLR/NeurIPS listing pages, author profile pages and ICML/UAI/arXiv
JSON Lines, written out the way scraped pages show them: every page entry is one paper with
no problem, real name shapes and area-only tracks are kept, venue and year come from
sources.yml and JSON Lines, versions merge, spellings merge.
"""

import json
import re
import sqlite3
from pathlib import Path

import pytest
from click.testing import CliRunner

from loader.build.catalog import build_catalog
from loader.cli import cli
from loader.read.sources import plan_inputs

from .conftest import FIXTURES

SAMPLE = FIXTURES / "real" / "sample"
# entries make_samples.py wrote into each text page (25 papers a listing page)
PAGE_ENTRIES = {
    **{f"iclr2018_p0{n}.txt": 25 for n in range(1, 5)},
    **{f"neurips2018_p0{n}.txt": 25 for n in range(1, 5)},
    "iclr2014_p01.txt": 25,
    "neurips2014_p01.txt": 25,
    "neurips2015_p01.txt": 25,
    "profile_sergey_levine.txt": 30,
    "profile_yoshua_bengio.txt": 30,
    "profile_shixiang_gu.txt": 10,
}


@pytest.fixture(scope="module")
def catalog(tmp_path_factory):
    """The real sample built with --skip-invalid, as a connection."""
    path = tmp_path_factory.mktemp("real") / "catalog.db"
    # as the CLI builds it: sources.yml gives the pages their venue and year
    build_catalog(plan_inputs([SAMPLE]), path, skip_invalid=True)
    connection = sqlite3.connect(path)
    yield connection
    connection.close()


def sources(catalog):
    """{file name: (papers, problems)} from the catalog's sources table."""
    rows = catalog.execute("select path, papers, problems from sources")
    return {Path(path).name: (papers, problems) for path, papers, problems in rows}


def paper_at(catalog, file_name, line):
    """The id of the paper an entry of the sample became."""
    rows = catalog.execute(
        "select ps.paper_id from paper_sources ps join sources s on s.id = ps.source_id "
        "where s.path like ? and ps.line = ?",
        ("%/" + file_name, line),
    ).fetchall()
    assert len(rows) == 1, f"{file_name}:{line} is not one paper"
    return rows[0][0]


def files_of(catalog, paper_id):
    rows = catalog.execute(
        "select s.path from paper_sources ps join sources s on s.id = ps.source_id "
        "where ps.paper_id = ?",
        (paper_id,),
    )
    return {Path(path).name for (path,) in rows}


def paper_with_abstract(catalog, start):
    rows = catalog.execute("select id from papers where abstract like ?", (start + "%",))
    ids = [row[0] for row in rows]
    assert len(ids) == 1, f"no single paper starts {start!r}"
    return ids[0]


def authors_of(catalog, paper_id):
    rows = catalog.execute(
        "select a.name from paper_authors pa join authors a on a.id = pa.author_id "
        "where pa.paper_id = ?",
        (paper_id,),
    )
    return {name for (name,) in rows}


def arxiv_line(arxiv_id):
    lines = (SAMPLE / "arxiv.jsonl").read_text(encoding="utf-8").splitlines()
    return next(n for n, line in enumerate(lines, 1) if json.loads(line)["arxiv_id"] == arxiv_id)


def test_every_json_lines_record_is_a_paper_or_a_problem(catalog):
    counted = sources(catalog)
    for path in SAMPLE.glob("*.jsonl"):
        records = len(path.read_text(encoding="utf-8").splitlines())
        papers, problems = counted[path.name]
        assert papers + problems == records, path.name


def test_a_titled_record_without_abstract_is_a_paper(catalog):
    """ICML 2019's "Data Poisoning Attacks in Multi-Party Learning" has no abstract in the
    source: a paper with its title and authors, no problem."""
    lines = (SAMPLE / "icml2019.jsonl").read_text(encoding="utf-8").splitlines()
    missing = [n for n, line in enumerate(lines, 1) if "abstract" not in json.loads(line)]
    assert missing == [34]
    problems = catalog.execute(
        "select line, message from load_problems where file like ?", ("%/icml2019.jsonl",)
    ).fetchall()
    assert problems == []
    row = catalog.execute(
        "select label, abstract, author_count from papers where id = ?",
        (paper_at(catalog, "icml2019.jsonl", 34),),
    ).fetchone()
    # its one list item holds the three names ("A, B, C"): a list's item is one name
    assert row == ("Data Poisoning Attacks in Multi-Party Learning", "", 1)


def test_every_problem_names_a_line_of_its_file(catalog):
    problems = catalog.execute("select file, line from load_problems").fetchall()
    assert problems
    for file, line in problems:
        path = SAMPLE / Path(file).name
        assert path.exists(), file
        assert 1 <= line <= len(path.read_text(encoding="utf-8").splitlines()), (file, line)


def test_default_build_refuses_the_real_pages_and_names_file_and_line(tmp_path):
    db = tmp_path / "catalog.db"
    result = CliRunner().invoke(cli, ["build", str(SAMPLE), "--db", str(db)])
    assert result.exit_code == 1
    *problems, error = result.stderr.strip().splitlines()
    assert problems
    for problem in problems:
        assert re.match(rf"{re.escape(str(SAMPLE))}/[^:/]+:\d+: \S", problem), problem
    assert error.startswith(f"Error: {len(problems)} problem(s)")
    assert not db.exists()


@pytest.mark.parametrize("arxiv_id", ["1502.01176", "1402.2092", "1406.2721"])
def test_arxiv_and_conference_versions_with_the_same_abstract_are_one_paper(catalog, arxiv_id):
    paper = paper_at(catalog, "arxiv.jsonl", arxiv_line(arxiv_id))
    assert files_of(catalog, paper) - {"arxiv.jsonl"}


def test_real_pages_load_without_problems(catalog):
    counted = sources(catalog)
    assert {name: counted[name][1] for name in PAGE_ENTRIES} == dict.fromkeys(PAGE_ENTRIES, 0)


def test_every_page_entry_is_one_paper(catalog):
    counted = sources(catalog)
    assert {name: counted[name][0] for name in PAGE_ENTRIES} == PAGE_ENTRIES


def test_sources_yml_is_not_an_input(catalog):
    assert "sources.yml" not in sources(catalog)


def test_names_with_parentheses_are_authors(catalog):
    paper = paper_with_abstract(catalog, "We introduce an efficient way to increase the accuracy")
    assert {"Chun-Fu (Richard) Chen", "Gwo Giun (Chris) Lee"} <= authors_of(catalog, paper)


def test_names_with_initials_without_spaces_are_authors(catalog):
    paper = paper_with_abstract(catalog, "Existing approaches to neural machine translation")
    assert "Victor O.K. Li" in authors_of(catalog, paper)


def test_names_with_titles_keep_their_paper(catalog):
    paper = paper_with_abstract(catalog, "Machine learning and in particular deep learning")
    assert any("Lukowicz" in name for name in authors_of(catalog, paper))


def test_an_area_only_track_is_kept(catalog):
    paper = paper_with_abstract(catalog, "State-action value functions (i.e., Q-values)")
    assert catalog.execute("select track from papers where id = ?", (paper,)).fetchone() == (
        "Reinforcement learning",
    )
    assert "Reinforcement learning" not in authors_of(catalog, paper)


def test_listing_pages_get_venue_and_year_from_sources_yml(catalog):
    paper = paper_with_abstract(catalog, "State-action value functions (i.e., Q-values)")
    row = catalog.execute("select venue, year from papers where id = ?", (paper,)).fetchone()
    assert row == ("ICLR", 2018)


def test_json_lines_venue_year_and_status_are_kept(catalog):
    paper = paper_at(catalog, "icml2019.jsonl", 1)
    row = catalog.execute("select venue, year, status from papers where id = ?", (paper,))
    assert row.fetchone() == ("ICML", 2019, "Oral")


@pytest.mark.parametrize("arxiv_id", ["1312.4564", "1409.1320", "1506.02344"])
def test_same_title_and_a_shared_author_is_one_paper(catalog, arxiv_id):
    paper = paper_at(catalog, "arxiv.jsonl", arxiv_line(arxiv_id))
    assert files_of(catalog, paper) - {"arxiv.jsonl"}


@pytest.mark.parametrize(
    ("arxiv_id", "conference"),
    [("1410.6776", "neurips2014_p01.txt"), ("1505.06292", "icml2015.jsonl")],
)
def test_abstracts_equal_up_to_punctuation_are_one_paper(catalog, arxiv_id, conference):
    paper = paper_at(catalog, "arxiv.jsonl", arxiv_line(arxiv_id))
    assert files_of(catalog, paper) == {"arxiv.jsonl", conference}


def test_accented_and_plain_spellings_are_one_well_cased_author(catalog):
    rows = catalog.execute(
        "select name from authors where name in ('Gabor Bartok', 'gábor bartók')"
    ).fetchall()
    assert rows == [("Gabor Bartok",)]


def test_search_text_decodes_html_entities(catalog):
    paper = paper_at(catalog, "arxiv.jsonl", arxiv_line("1409.1320"))
    text = catalog.execute("select abstract_text from papers where id = ?", (paper,)).fetchone()
    assert "Yu & Joachims" in text[0]
