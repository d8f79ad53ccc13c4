"""Every JSON reader under hostile values: an integer past Python's 4,300-digit conversion
limit in any record of any reader, and every kind of JSON value in every field a reader
reads, end in entries or `FILE:LINE` problems, never a traceback."""

import json
import sys
from pathlib import Path

import pytest
from click.testing import CliRunner

from loader.cli import cli
from loader.read.dump_chunks import LinePieces, read_piece
from loader.read.sources import read_source
from loader.records import Entry, LeftOut, Problem

from .conftest import FIXTURES

DUMPS = FIXTURES / "dumps"
HUGE = "9" * 5000  # past sys.get_int_max_str_digits(): json raises ValueError, not a syntax error
HUGE_PROBLEM = f"invalid JSON: a number of more than {sys.get_int_max_str_digits()} digits"
# a placeholder json.dumps can write, swapped for a raw value (json.dumps cannot write HUGE)
SLOT = "__value__"


def first_record(path: Path) -> dict:
    text = path.read_text(encoding="utf-8")
    if text.lstrip().startswith("["):
        return json.loads(text)[0]
    if text.lstrip().startswith('{"notes"') or text.lstrip().startswith('{\n  "notes"'):
        return json.loads(text)["notes"][0]
    return json.loads(text.splitlines()[0])


# reader -> (a real record, how a file of records is written, the file's name)
JSONL_RECORD = {
    "title": "A title",
    "abstract": "An abstract.",
    "authors": ["Ann Lee", "Bo Chen"],
    "affiliations": ["mit"],
    "url": "https://arxiv.org/abs/2401.00001",
    "venue": "ICLR",
    "year": 2024,
    "status": "Poster",
    "doi": "10.1/x",
}
READERS = {
    "jsonl": (JSONL_RECORD, "lines", "records.jsonl"),
    "paperlists": (first_record(DUMPS / "paperlists/corl2024.json"), "array", "corl2024.json"),
    "arxiv": (
        first_record(DUMPS / "arxiv/arxiv-metadata-oai-snapshot.json"),
        "lines",
        "snapshot.json",
    ),
    "openreview v2": (
        first_record(DUMPS / "openreview/iclr2017-notes-v2.json"),
        "notes",
        "notes.json",
    ),
    "openreview v1": (
        first_record(DUMPS / "openreview/iclr2017-notes-v1.jsonl"),
        "lines",
        "notes.jsonl",
    ),
}
# every kind of JSON value, as JSON text
VALUES = [
    HUGE,
    "-" + HUGE,
    "9" * 4300,  # the largest integer Python reads
    "1e999",  # inf
    "-1e999",
    "NaN",  # Python's json reads these three
    "Infinity",
    "-Infinity",
    "0.5",
    "-0",
    "true",
    "false",
    "null",
    '""',
    '"\\u0000"',
    '"\\ud800"',
    '"  "',
    "[]",
    "{}",
    f"[{HUGE}]",
    "[1, null, {}]",
    '{"value": 1e999}',
    '{"value": [2024]}',
    "[" * 100_000 + "]" * 100_000,  # past the recursion limit
]


def dump_text(records: list[str], layout: str) -> str:
    """Records (JSON text each) as a file of the reader's layout."""
    if layout == "lines":
        return "\n".join(records) + "\n"
    body = ",\n".join(records)
    return f"[\n{body}\n]\n" if layout == "array" else f'{{"notes": [\n{body}\n]}}\n'


def with_value(record: dict, path: tuple[str, ...], value: str) -> str:
    """The record as JSON text, the field at `path` holding `value` (raw JSON text)."""
    copy = json.loads(json.dumps(record))
    target = copy
    for key in path[:-1]:
        target = target[key]
    target[path[-1]] = SLOT
    return json.dumps(copy).replace(json.dumps(SLOT), value)


def field_paths(record: dict) -> list[tuple[str, ...]]:
    """Every key of the record, and of the objects inside it (an OpenReview note's content
    and its {"value": ...} wrappers)."""
    paths = []
    for key, value in record.items():
        paths.append((key,))
        if isinstance(value, dict):
            paths += [(key, *inner) for inner in field_paths(value)]
    return paths


def read_all(path: Path) -> list:
    return list(read_source(path)[1])


@pytest.mark.parametrize("reader", READERS)
def test_an_oversized_integer_is_a_problem_at_its_record_line(reader, tmp_path):
    """On the first record (what format detection reads) and on a later one."""
    record, layout, name = READERS[reader]
    good = json.dumps(record)
    for place in (0, 2):
        records = [good, good.replace(json.dumps(record[next(iter(record))]), '"other"', 1)]
        records.insert(place, with_value(record, (next(iter(record)),), HUGE))
        path = tmp_path / str(place) / name
        path.parent.mkdir()
        path.write_text(dump_text(records, layout), encoding="utf-8")
        problems = [item for item in read_all(path) if isinstance(item, Problem)]
        lines = [line.rstrip(",") for line in dump_text(records, layout).splitlines()]
        line = lines.index(records[place]) + 1
        shown = [(p.path, p.line, p.message.split("; the rest")[0]) for p in problems]
        if place == 0 and layout != "lines":
            # the first record tells a dump's format: unknown, and why, with the record's line
            (path_shown, number, message), *_ = shown
            assert (path_shown, number) == (str(path), 1)
            assert message.endswith(f"; line {line}: {HUGE_PROBLEM}"), message
        else:
            assert (str(path), line, HUGE_PROBLEM) in shown, shown


def test_an_oversized_integer_through_the_cli_in_every_reader(tmp_path):
    for reader, (record, layout, name) in READERS.items():
        folder = tmp_path / reader.replace(" ", "-")
        folder.mkdir()
        key = next(iter(record))
        records = [json.dumps(record), with_value(record, (key,), HUGE)]
        (folder / name).write_text(dump_text(records, layout), encoding="utf-8")
    result = CliRunner().invoke(cli, ["check", str(tmp_path)])
    assert result.exit_code == 1, result.output
    assert result.exception is None or isinstance(result.exception, SystemExit)
    assert "Traceback" not in result.output
    huge = [line for line in result.output.splitlines() if HUGE_PROBLEM in line]
    assert len(huge) == len(READERS), result.output
    for line in huge:
        path, number, _ = line.split(":", 2)
        assert Path(path).is_file() and int(number) >= 2


def test_an_oversized_integer_in_a_piece_of_a_large_dump(tmp_path):
    """A dump of one record a line past PIECE_BYTES is read in pieces by the workers."""
    record, _, _ = READERS["arxiv"]
    path = tmp_path / "snapshot.json"
    lines = [json.dumps(record), json.dumps(record), with_value(record, ("id",), HUGE)]
    path.write_text(dump_text(lines, "lines"), encoding="utf-8")
    items = [item for piece in LinePieces(path, 64) for item in read_piece(path, "arxiv", piece)]
    assert Problem(str(path), 3, HUGE_PROBLEM) in items


@pytest.mark.parametrize("reader", READERS)
def test_every_json_value_in_every_field_is_an_entry_or_a_problem(reader, tmp_path):
    record, layout, name = READERS[reader]
    for number, path in enumerate(field_paths(record)):
        folder = tmp_path / str(number)
        folder.mkdir()
        records = [with_value(record, path, value) for value in VALUES]
        for index, text in enumerate(records):
            file = folder / f"{index}-{name}"
            # one record a file: in an array a broken record ends the file's reading
            file.write_text(dump_text([text], layout), encoding="utf-8")
            items = read_all(file)
            assert items, (path, VALUES[index][:40])
            for item in items:
                assert isinstance(item, Entry | Problem | LeftOut), (path, item)
                if isinstance(item, Problem):
                    assert item.path == str(file) and item.line >= 1
