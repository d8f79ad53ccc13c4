"""The readers of public dumps (Paper Copilot lists, the arXiv metadata snapshot, OpenReview
notes) on real samples (tests/fixtures/dumps/, see its SOURCE.md), hostile input through the
CLI, and memory on a large one-line array."""

import json
import sqlite3
import subprocess
import sys
import textwrap
from pathlib import Path

import pytest
from click.testing import CliRunner

from loader.cli import cli
from loader.read.arxiv_snapshot import unwrap_abstract
from loader.read.openreview import read_group_id, read_venue_text
from loader.read.paperlists import venue_of_file
from loader.read.sources import read_source
from loader.records import Entry, Problem

from .conftest import FIXTURES

DUMPS = FIXTURES / "dumps"
# file -> (format, entries, problems)
SAMPLES = {
    "paperlists/iclr2017.json": ("paperlists", 40, 1),
    "paperlists/nips2018.json": ("paperlists", 20, 1),
    "paperlists/corl2024.json": ("paperlists", 12, 0),
    "paperlists/cvpr2017.json": ("paperlists", 20, 0),
    "paperlists/automl2024.json": ("paperlists", 19, 0),
    "arxiv/arxiv-metadata-oai-snapshot.json": ("arxiv", 120, 0),
    "openreview/iclr2017-notes-v2.json": ("openreview", 12, 0),
    "openreview/iclr2017-notes-v1.jsonl": ("openreview", 12, 0),
    "openreview/nips2018-workshop-notes.json": ("openreview", 2, 0),
    "merge/arxiv-metadata-oai-snapshot.json": ("arxiv", 1, 0),
}


def read(path: Path) -> tuple[str | None, list[Entry], list[Problem]]:
    source, items = read_source(path)
    items = list(items)
    entries = [i for i in items if isinstance(i, Entry)]
    return source.format, entries, [i for i in items if isinstance(i, Problem)]


def by_title(entries: list[Entry], title: str) -> Entry:
    return next(e for e in entries if e.title == title)


@pytest.mark.parametrize("name", SAMPLES)
def test_each_sample_is_detected_and_read_whole(name):
    format, entries, problems = read(DUMPS / name)
    assert (format, len(entries), len(problems)) == SAMPLES[name]


def test_real_problems_name_the_record_line():
    problems = [p for name in SAMPLES for p in read(DUMPS / name)[2]]
    assert [(Path(p.path).name, p.line, p.message) for p in problems] == [
        ("iclr2017.json", 1562, "record has no title and no abstract"),
        ("nips2018.json", 712, "record has no authors"),
    ]


def test_paperlists_records():
    entries = read(DUMPS / "paperlists/iclr2017.json")[1]
    first = entries[0]
    assert (first.line, first.title) == (2, "Prototypical Networks for Few-shot Learning")
    assert (first.venue, first.year, first.status) == ("ICLR", 2017, "Reject")
    assert first.authors == ["Jake Snell", "Kevin Swersky", "Richard Zemel"]
    assert (first.openreview_id, first.track) == ("B1-Hhnslg", None)  # track "main" says nothing
    statuses = {e.status for e in entries}
    assert statuses == {"Poster", "Reject", "Workshop"}
    corl = read(DUMPS / "paperlists/corl2024.json")[1][0]
    assert (corl.venue, corl.year, corl.status) == ("CoRL", 2024, "Poster")
    assert corl.affiliations == ["University of Cambridge"]  # ";University of Cambridge;..;"
    cvpr = by_title(
        read(DUMPS / "paperlists/cvpr2017.json")[1],
        "3D Bounding Box Estimation Using Deep Learning and Geometry",
    )
    assert cvpr.arxiv_id == "1612.00496"  # "1612.00496v2" as Paper Copilot gives it
    assert cvpr.authors == ["Arsalan Mousavian", "Dragomir Anguelov", "John Flynn", "Jana Kosecka"]
    automl = read(DUMPS / "paperlists/automl2024.json")[1]
    assert {(e.venue, e.year) for e in automl} == {("AutoML", 2024)}
    nips = read(DUMPS / "paperlists/nips2018.json")[1]
    assert {(e.venue, e.year) for e in nips} == {("NeurIPS", 2018)}


@pytest.mark.parametrize(
    "name, expected",
    [
        ("iclr2024.json", ("ICLR", 2024)),
        ("nips2018.json", ("NeurIPS", 2018)),
        ("corl2021.json", ("CoRL", 2021)),
        ("automl2022.json", ("AutoML", 2022)),
        ("3dv2025.json", ("3DV", 2025)),
        ("siggraphasia2024.json", ("SIGGRAPH Asia", 2024)),
        ("papers.json", None),
    ],
)
def test_paperlists_venue_from_file_name(name, expected):
    assert venue_of_file(f"some/folder/{name}") == expected


def test_arxiv_snapshot_records():
    entries = read(DUMPS / "arxiv/arxiv-metadata-oai-snapshot.json")[1]
    first = entries[0]
    assert (first.arxiv_id, first.venue, first.year, first.status) == (
        "0704.0001",
        "arXiv",
        2007,
        None,
    )
    assert first.doi == "10.1103/physrevd.76.013009"
    # from authors_parsed (the string is "C. Bal\'azs, E. L. Berger, ..."); arXiv's parse
    # "C. -P." of "C.-P. Yuan" loses its stray space before the hyphen, as any name does
    assert first.authors == ["C. Balázs", "E. L. Berger", "P. M. Nadolsky", "C.-P. Yuan"]
    assert first.title == (
        "Calculation of prompt diphoton production cross sections at Tevatron and LHC energies"
    )
    assert first.abstract.startswith("A fully differential calculation in perturbative quantum")
    assert "\n" not in first.abstract and "  " not in first.abstract
    assert first.url == "https://arxiv.org/abs/0704.0001"
    assert all(e.venue == "arXiv" and e.year == 2007 for e in entries)


def snapshot_line(**fields: object) -> str:
    record = {
        "id": "math/0601001",
        "authors": "Ann Lee, Bo Chen and Cy Dai",
        "title": "A title",
        "abstract": "  First paragraph wrapped\nover two lines.\n  Second paragraph.\n",
        "versions": [],
        **fields,
    }
    return json.dumps(record) + "\n"


def test_arxiv_old_style_ids_and_author_strings(tmp_path):
    path = tmp_path / "snapshot.json"
    path.write_text(snapshot_line(authors_parsed=None) + snapshot_line(), encoding="utf-8")
    _, entries, problems = read(path)
    assert problems == [] and len(entries) == 1  # the same id twice is one paper
    entry = entries[0]
    assert (entry.arxiv_id, entry.year) == ("math/0601001", 2006)  # no versions: the id's year
    assert entry.authors == ["Ann Lee", "Bo Chen", "Cy Dai"]
    assert entry.abstract == "First paragraph wrapped over two lines.\nSecond paragraph."


def test_arxiv_a_line_broken_after_a_hyphen_joins_with_no_space():
    """0704.0088 wraps "long-" / "term luminiscence": it read "long- term". 0704.0020's line
    ends in "+/-" before a number: a hyphen after no letter, the break stays a space."""
    entries = {e.arxiv_id: e for e in read(DUMPS / "arxiv/arxiv-metadata-oai-snapshot.json")[1]}
    assert "pulse produces long-term luminiscence" in entries["0704.0088"].abstract
    assert "f+(0)=0.727 +/- 0.007 +/- 0.005 +/- 0.007" in entries["0704.0020"].abstract


@pytest.mark.parametrize(
    "wrapped, unwrapped",
    [
        ("a high-\ndimensional space", "a high-dimensional space"),
        ("GPT-\n4 and BERT-\nbase", "GPT-4 and BERT-base"),
        ("bounds --\nand more", "bounds -- and more"),  # a dash
        ("bounds--\nand more", "bounds-- and more"),
        ("in 3-\nD", "in 3- D"),  # after a digit
        ("a -\nb", "a - b"),  # after a space
        ("ends in long-\n  Next paragraph.", "ends in long-\nNext paragraph."),
    ],
)
def test_arxiv_unwrap_hyphen_rule(wrapped, unwrapped):
    assert unwrap_abstract(wrapped) == unwrapped


def test_openreview_notes():
    v2 = read(DUMPS / "openreview/iclr2017-notes-v2.json")[1]
    v1 = read(DUMPS / "openreview/iclr2017-notes-v1.jsonl")[1]
    paperlists = {e.openreview_id: e for e in read(DUMPS / "paperlists/iclr2017.json")[1]}
    for note in v2 + v1:
        same = paperlists[note.openreview_id]
        assert (note.title, note.authors, note.abstract) == (
            same.title,
            same.authors,
            same.abstract,
        )
        assert (note.venue, note.year, note.status) == (same.venue, same.year, same.status)
    assert v2[0].url == "https://openreview.net/forum?id=B1-Hhnslg"
    workshop = read(DUMPS / "openreview/nips2018-workshop-notes.json")[1]
    assert next((e.title, e.venue, e.year, e.status) for e in workshop) == (
        "Targeted Dropout",
        "NeurIPS",
        2018,
        "Workshop",
    )
    assert workshop[0].authors[-1] == "Geoffrey E. Hinton"


@pytest.mark.parametrize(
    "venue, venue_id, expected",
    [
        ("ICLR 2024 oral", "ICLR.cc/2024/Conference", ("ICLR", 2024, "Oral")),
        ("ICLR 2024 poster", None, ("ICLR", 2024, "Poster")),
        ("NeurIPS 2023 spotlight", None, ("NeurIPS", 2023, "Spotlight")),
        ("ICLR 2023 notable top 5%", None, ("ICLR", 2023, "Notable top 5%")),
        ("Submitted to ICLR 2024", None, ("ICLR", 2024, "Submitted")),
        ("ICLR 2024 Conference Withdrawn Submission", None, ("ICLR", 2024, "Withdrawn")),
        (
            "Withdrawn Submission",
            "ICLR.cc/2024/Conference/Withdrawn_Submission",
            ("ICLR", 2024, "Withdrawn"),
        ),
        ("ICLR 2024 Conference Desk Rejected Submission", None, ("ICLR", 2024, "Desk Rejected")),
        (None, "NeurIPS.cc/2023/Conference/Rejected_Submission", ("NeurIPS", 2023, "Reject")),
    ],
)
def test_openreview_venue_year_status(venue, venue_id, expected):
    from_text, from_id = read_venue_text(venue), read_group_id(venue_id)
    found = tuple(a or b for a, b in zip(from_text, from_id))
    assert found == expected


def test_the_same_paper_from_three_dumps_is_one_paper_with_three_versions(tmp_path):
    db = tmp_path / "catalog.db"
    files = [
        DUMPS / "paperlists/iclr2017.json",
        DUMPS / "merge/arxiv-metadata-oai-snapshot.json",
        DUMPS / "openreview/iclr2017-notes-v2.json",
    ]
    result = CliRunner().invoke(cli, ["build", *map(str, files), "--db", str(db), "--skip-invalid"])
    assert result.exit_code == 0, result.output
    with sqlite3.connect(db) as connection:
        papers = connection.execute(
            "select id, venue, year, status, source_count from papers "
            "where title = 'Prototypical Networks for Few-shot Learning'"
        ).fetchall()
        assert [row[1:] for row in papers] == [("ICLR", 2017, "Reject", 3)]
        versions = connection.execute(
            "select venue, year, status from paper_sources where paper_id = ? order by venue",
            (papers[0][0],),
        ).fetchall()
        assert versions == [
            ("ICLR", 2017, "Reject"),
            ("ICLR", 2017, "Reject"),
            ("arXiv", 2017, None),
        ]
        # every ICLR 2017 note is a version of its Paper Copilot record: 40 papers, not 52
        count = connection.execute("select count(*) from papers where venue = 'ICLR'").fetchone()
        assert count == (40,)


def test_sources_yml_wins_over_the_file_name(tmp_path):
    record = json.loads((DUMPS / "paperlists/corl2024.json").read_text(encoding="utf-8"))[0]
    (tmp_path / "corl2024.json").write_text(json.dumps([record, record]), encoding="utf-8")
    (tmp_path / "sources.yml").write_text(
        '- match: "corl*.json"\n  venue: CoRL Workshop\n  year: 2025\n', encoding="utf-8"
    )
    result = CliRunner().invoke(cli, ["build", str(tmp_path), "--db", str(tmp_path / "c.db")])
    assert result.exit_code == 0, result.output
    with sqlite3.connect(tmp_path / "c.db") as connection:
        rows = connection.execute("select venue, year, status from papers").fetchall()
    assert rows == [("CoRL Workshop", 2025, "Poster")]  # and the duplicate id is one paper


HOSTILE = {
    # a download cut short inside the third record
    "cut.json": '[\n  {"title": "A", "author": "Ann Lee", "abstract": "Text one.", "site": "x"},\n'
    '  {"title": "B", "author": "Bo Chen", "abstract": "Text two."},\n  {"title": "C", "auth',
    "shapes.json": '[{"author": "Ann Lee", "abstract": "Text one.", "aff": ""},\n'
    ' 42,\n {"author": ["Bo Chen"], "abstract": "Text two.", "aff": ""},\n'
    ' {"author": "Cy Dai", "abstract": "  ", "aff": ""},\n'
    ' {"author": "Di Fox", "abstract": "Text five.", "title": 5, "aff": ""}]',
    "snapshot.json": snapshot_line(id="0704.0001")
    + '{"id": "0704.0002", "authors_parsed": [["Lee"]], "abstract": "x\n'
    + snapshot_line(id=7)
    + snapshot_line(id="0704.0004", abstract=None, title=" ")
    + snapshot_line(id="0704.0005", authors_parsed="Lee, Ann"),
    "notes.json": '{"notes": [{"id": "abc", "content": {"title": {"value": "T"}, "authors": {"value": ["A B"]}, '
    '"abstract": {"value": "Text."}}}, {"id": "abd", "content": "none"}, '
    '{"id": "abe", "content": {"authors": {"value": "A B"}, "abstract": {"value": "Text."}}}',
}


def test_hostile_dumps_are_file_line_problems_through_the_cli(tmp_path):
    for name, text in HOSTILE.items():
        (tmp_path / name).write_text(text, encoding="utf-8")
    result = CliRunner().invoke(cli, ["check", str(tmp_path)])
    assert result.exit_code == 1
    assert not isinstance(result.exception, Exception) or isinstance(result.exception, SystemExit)
    assert "Traceback" not in result.output
    shown = {line.removeprefix(str(tmp_path) + "/") for line in result.output.splitlines()}
    assert shown == {
        "cut.json:4: the file ends inside this record (cut short?); the rest of the file is not read",
        "shapes.json:2: a record must be a JSON object, not a number",
        "shapes.json:3: author must be a string, not an array",
        "shapes.json:4: record has no title and no abstract",
        "shapes.json:5: title must be a string, not a number",
        "snapshot.json:2: invalid JSON at line 2: Invalid control character at",
        'snapshot.json:3: id must be a string such as "0704.0001", not a number',
        "snapshot.json:4: record has no title and no abstract",
        "snapshot.json:5: authors_parsed must be a list of [last, first, suffix] lists",
        "notes.json:1: a note's content must be an object, not a string",
        "notes.json:1: authors must be a list of names, not a string",
        "notes.json:1: the JSON array is cut short (no closing ]); the rest of the file is not read",
        "5 entries, 12 problems",
    }


MEMORY_PROBE = textwrap.dedent(
    """
    import json, resource, sys
    from loader.read.sources import read_source

    path = sys.argv[1]
    record = {"title": "T", "author": "Ann Lee;Bo Chen", "aff": "X;Y", "status": "Poster",
              "abstract": "We study a problem. " * 120, "site": ""}
    with open(path, "w") as out:  # one line, ~50 MB
        out.write("[")
        for n in range(20_000):
            out.write(("," if n else "") + json.dumps({**record, "id": str(n)}))
        out.write("]")
    before = resource.getrusage(resource.RUSAGE_SELF).ru_maxrss
    source, items = read_source(path)
    count = sum(1 for _ in items)
    peak = resource.getrusage(resource.RUSAGE_SELF).ru_maxrss
    print(source.format, count, before // 1024, peak // 1024)
    """
)


def test_a_large_one_line_array_is_read_in_bounded_memory(tmp_path):
    path = tmp_path / "iclr2024.json"
    probe = subprocess.run(
        [sys.executable, "-c", MEMORY_PROBE, str(path)], capture_output=True, text=True, check=True
    )
    format, count, before_mb, peak_mb = probe.stdout.split()
    assert path.stat().st_size > 45_000_000
    assert (format, int(count)) == ("paperlists", 20_000)
    # json.load of this file alone takes ~150 MB more; the stream holds a 1 MB chunk and a record
    assert int(peak_mb) - int(before_mb) < 40, probe.stdout
