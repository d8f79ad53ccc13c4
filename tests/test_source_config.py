"""sources.yml: venue, year and status of text pages, through discovery, the parsers and the CLI."""

import json
import re

import pytest
from click.testing import CliRunner

from loader.cli import cli
from loader.read.sources import discover, plan_inputs, read_source
from loader.records import Entry, Problem

PAGE = "论文检索\n\nAnn Lee, Bo Chen\n\nWe study a problem and propose a method that works well.\n"
CONFIG = """\
# venue and year of the listing pages
- match: "iclr2024_*.txt"
  venue: ICLR
  year: 2024
- match: "**/neurips*.txt"
  venue: NeurIPS
  year: "2023"
  status: poster
"""


def write(folder, files):
    for name, text in files.items():
        path = folder / name
        path.parent.mkdir(parents=True, exist_ok=True)
        path.write_text(text, encoding="utf-8")
    return folder


def read(paths):
    """{file name: [(venue, year, status)]} and the problems, as read for a build."""
    entries, problems = {}, []
    for file in plan_inputs(paths):
        for item in read_source(file)[1]:
            if isinstance(item, Entry):
                entries.setdefault(file.path.name, []).append((item.venue, item.year, item.status))
            else:
                problems.append(item)
    return entries, problems


def test_settings_apply_to_the_folder_and_below(tmp_path):
    write(
        tmp_path,
        {
            "sources.yml": CONFIG,
            "iclr2024_a.txt": PAGE,
            "sub/neurips_b.txt": PAGE,
            "other.txt": PAGE,
        },
    )
    entries, problems = read([tmp_path])
    assert not problems
    assert entries == {
        "iclr2024_a.txt": [("ICLR", 2024, None)],
        "neurips_b.txt": [("NeurIPS", 2023, "poster")],
        "other.txt": [(None, None, None)],  # no pattern: no venue, and no problem
    }


def test_sources_yml_is_never_an_input_file(tmp_path):
    write(tmp_path, {"sources.yml": CONFIG, "iclr2024_a.txt": PAGE, "neurips.txt": PAGE})
    assert [path.name for path in discover([tmp_path])] == ["iclr2024_a.txt", "neurips.txt"]
    assert discover([tmp_path / "sources.yml"]) == []


def test_a_single_file_given_gets_its_folders_settings(tmp_path):
    write(tmp_path, {"sources.yml": CONFIG, "iclr2024_a.txt": PAGE, "neurips.txt": PAGE})
    entries, problems = read([tmp_path / "iclr2024_a.txt"])
    assert entries == {"iclr2024_a.txt": [("ICLR", 2024, None)]} and not problems


def test_json_lines_keys_win_field_by_field(tmp_path):
    record = {"abstract": "An abstract of a paper.", "authors": ["Ann Lee"], "year": 2025}
    config = '- match: "*.jsonl"\n  venue: ICLR\n  year: 2024\n  status: poster\n'
    write(tmp_path, {"sources.yml": config, "a.jsonl": json.dumps(record) + "\n"})
    entries, _ = read([tmp_path])
    assert entries == {"a.jsonl": [("ICLR", 2025, "poster")]}


def test_pattern_matching_no_file_names_its_line(tmp_path):
    config = CONFIG + '- match: "icml*.txt"\n  venue: ICML\n  year: 2022\n'
    write(tmp_path, {"sources.yml": config, "iclr2024_a.txt": PAGE, "sub/neurips.txt": PAGE})
    _, problems = read([tmp_path])
    assert [str(p) for p in problems] == [
        f"{tmp_path / 'sources.yml'}:9: 'icml*.txt' matches no file"
    ]


def test_two_patterns_giving_a_file_different_values(tmp_path):
    config = CONFIG + '- match: "iclr*.txt"\n  venue: ICLR\n  year: 2023\n'
    write(tmp_path, {"sources.yml": config, "iclr2024_a.txt": PAGE, "neurips.txt": PAGE})
    entries, problems = read([tmp_path])
    assert entries["iclr2024_a.txt"] == [(None, None, None)]  # never one of the two guessed
    assert [(p.line, p.message) for p in problems] == [
        (
            9,
            f"{tmp_path / 'iclr2024_a.txt'}: ICLR 2023 here, but ICLR 2024 at {tmp_path / 'sources.yml'}:2",
        )
    ]


def test_a_subfolders_sources_yml_conflicting_with_its_parents(tmp_path):
    write(
        tmp_path,
        {
            "sources.yml": '- match: "sub/*.txt"\n  venue: ICLR\n  year: 2024\n',
            "sub/sources.yml": '- match: "*.txt"\n  venue: ICML\n  year: 2024\n',
            "sub/a.txt": PAGE,
        },
    )
    _, problems = read([tmp_path])
    assert [(p.path, p.line) for p in problems] == [(str(tmp_path / "sub" / "sources.yml"), 1)]


@pytest.mark.parametrize(
    "config, line, message",
    [
        ("- match: [unclosed\n", 2, "not valid YAML"),
        ("match: '*.txt'\nvenue: ICLR\n", 1, "must be a list"),
        ("- '*.txt'\n", 1, "each entry must be a mapping"),
        ("- match: '*.txt'\n  venue: ICLR\n  yaer: 2024\n", 3, "unknown key 'yaer'"),
        ("- match: '*.txt'\n", 1, "entry has no venue, year or status"),
        ("- venue: ICLR\n  year: 2024\n", 1, "entry has no match"),
        ("- match: '*.txt'\n  venue: ICLR\n  year: soon\n", 1, "year 'soon' is not a year"),
        ("- match: '*.txt'\n  venue: [ICLR]\n  year: 2024\n", 2, "venue must be a single value"),
        ("- match: '../*.txt'\n  venue: ICLR\n  year: 2024\n", 1, "must stay inside this folder"),
        (b"- match: '\xff'\n", 1, "cannot read sources.yml"),
    ],
)
def test_malformed_sources_yml_is_a_problem_not_a_traceback(tmp_path, config, line, message):
    (tmp_path / "sources.yml").write_bytes(config if isinstance(config, bytes) else config.encode())
    write(tmp_path, {"a.txt": PAGE})
    entries, problems = read([tmp_path])
    assert entries == {"a.txt": [(None, None, None)]}
    assert len(problems) == 1 and isinstance(problems[0], Problem)
    assert (problems[0].path, problems[0].line) == (str(tmp_path / "sources.yml"), line)
    assert message in problems[0].message


def test_check_and_build_report_sources_yml_problems(tmp_path):
    config = CONFIG + '- match: "icml*.txt"\n  venue: ICML\n  year: 2022\n'
    write(tmp_path / "in", {"sources.yml": config, "iclr2024_a.txt": PAGE})
    runner = CliRunner()
    result = runner.invoke(cli, ["check", str(tmp_path / "in")])
    assert result.exit_code == 1
    assert (
        f"{tmp_path / 'in' / 'sources.yml'}:5: '**/neurips*.txt' matches no file" in result.output
    )
    db = tmp_path / "catalog.db"
    result = runner.invoke(cli, ["build", str(tmp_path / "in"), "--db", str(db)])
    assert result.exit_code == 1 and not db.exists()
    result = runner.invoke(cli, ["build", str(tmp_path / "in"), "--db", str(db), "--skip-invalid"])
    assert result.exit_code == 0 and "2 problems" in result.output


def test_settings_reach_entries_parsed_in_worker_processes(tmp_path):
    """An InputFile carries its settings into the build's parsing processes."""
    from loader.build.prepare import prepared_sources

    write(tmp_path, {"sources.yml": CONFIG, "iclr2024_a.txt": PAGE, "sub/neurips_b.txt": PAGE})
    read = [
        (item.venue, item.year)
        for _, items in prepared_sources(plan_inputs([tmp_path]), None, workers=2)
        for item in items
    ]
    assert read == [("ICLR", 2024), ("NeurIPS", 2023)]


def test_problems_name_sources_yml_as_the_folder_was_given(tmp_path, monkeypatch):
    folder = tmp_path / "pages"
    folder.mkdir()
    (folder / "sources.yml").write_text('- match: "*.txt"\n  venue: ICLR\n  year: [\n')
    (folder / "a.jsonl").write_text(
        '{"abstract": "We study it in depth here.", "authors": ["A B"]}\n'
    )
    monkeypatch.chdir(tmp_path)
    result = CliRunner().invoke(cli, ["check", "pages"])
    assert result.exit_code == 1
    assert re.search(r"^pages/sources.yml:\d+: not valid YAML", result.output, re.MULTILINE)
    assert str(tmp_path) not in result.output


def test_an_entry_without_a_year_gives_its_venue(tmp_path):
    """`venue: arXiv` alone: pages that mix years keep their venue (year and venue are each
    optional), and the conflict message names what each entry gives."""
    config = '- match: "arxiv_*.txt"\n  venue: arXiv\n- match: "*_2023.txt"\n  year: 2023\n'
    write(tmp_path, {"sources.yml": config, "arxiv_a.txt": PAGE, "b_2023.txt": PAGE})
    entries, problems = read([tmp_path])
    assert not problems
    assert entries == {"arxiv_a.txt": [("arXiv", None, None)], "b_2023.txt": [(None, 2023, None)]}
    write(tmp_path, {"arxiv_2023.txt": PAGE})
    entries, problems = read([tmp_path])
    assert entries["arxiv_2023.txt"] == [(None, None, None)]
    assert [p.message for p in problems] == [
        f"{tmp_path / 'arxiv_2023.txt'}: 2023 here, but arXiv at {tmp_path / 'sources.yml'}:1"
    ]


def test_sources_yml_problems_are_counted_against_no_input_file(tmp_path):
    """The problem names sources.yml:LINE in the catalog too, and the first input file (which
    carries it into the build) keeps its own count: 0."""
    import sqlite3

    config = '- match: "*.txt"\n  venue: ICLR\n- match: "icml*.txt"\n  venue: ICML\n'
    write(tmp_path / "in", {"sources.yml": config, "a.txt": PAGE, "b.txt": PAGE})
    db = tmp_path / "catalog.db"
    result = CliRunner().invoke(
        cli, ["build", str(tmp_path / "in"), "--db", str(db), "--skip-invalid"]
    )
    assert result.exit_code == 0, result.output
    connection = sqlite3.connect(db)
    assert connection.execute(
        "select path, papers, problems from sources order by id"
    ).fetchall() == [
        ("a.txt", 1, 0),
        ("b.txt", 1, 0),
    ]
    assert connection.execute("select file, line, message from load_problems").fetchall() == [
        ("sources.yml", 3, "'icml*.txt' matches no file")
    ]
