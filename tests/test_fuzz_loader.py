"""The loader under damaged input: random mutations of the real seed files (hypothesis).

Properties, through the real functions and through the CLI:
- nothing raises: every damaged input ends in entries, problems, a catalog or an `Error:`;
- every block of every input file is accounted for (`unaccounted_blocks` says exactly what that
  means), and the catalog holds exactly what the parsers returned (`catalog_differences`).

The run is bounded and repeatable (fixed example counts, derandomized: the hypothesis profile of
tests/conftest.py); `make test-deep` multiplies the counts with fresh examples.
"""

import gc
import json
import os
import re
import sqlite3
import unicodedata
from collections import Counter
from pathlib import Path

import pytest
from click.testing import CliRunner
from hypothesis import HealthCheck, given, settings
from hypothesis import strategies as st

from loader.build.catalog import BuildFailed, build_catalog
from loader.build.prepare import entry_paper_id
from loader.cli import cli
from loader.read import sources
from loader.read.lines import NAME_SEPARATOR, split_authors, tidy_name
from loader.read.sources import DUMP_PARSERS, check_sources, discover, public_paths, read_source
from loader.records import Entry, Problem

from .conftest import FIXTURES, SEEDS, scaled_examples


def fuzz_settings(examples=None):
    """The profile's examples, or `examples` scaled by the profile for a slower property."""
    count = {} if examples is None else {"max_examples": scaled_examples(examples)}
    return settings(
        **count, suppress_health_check=[HealthCheck.too_slow, HealthCheck.data_too_large]
    )


# ---------------------------------------------------------------------------------------------
# The accounting check

# reasons that reject a whole file with one problem at line 1
FILE_LEVEL = (
    "file is empty",
    "file is binary",
    "file is not UTF-8",
    "unknown format",
    "profile page must start",
    "cannot read",
    "not a regular file",
)
LINE_END = re.compile(r"\r\n|\r|\n")


def reference_lines(data):
    """The file's lines as the formats define them, independently of the loader: UTF-8 (a
    leading BOM dropped), cut at \\n, \\r\\n or \\r, surrounding whitespace removed."""
    text = data.decode("utf-8", "surrogateescape").removeprefix("\ufeff")
    return [line.strip() for line in LINE_END.split(text)]


def reference_blocks(lines):
    """Runs of non-blank lines, as ranges of 1-based line numbers."""
    blocks, start = [], None
    for number, line in enumerate([*lines, ""], start=1):
        if line and start is None:
            start = number
        elif not line and start is not None:
            blocks.append(range(start, number))
            start = None
    return blocks


def entry_span(entry, format, lines, nonblank):
    """The line numbers an entry was made of, checked against the file's text, or an error.

    JSON Lines: the record's line. Text formats: from the entry's line, the non-blank lines
    [track] authors, then the abstract's lines, consecutive (one paragraph)."""
    where = f"{entry.path}:{entry.line}"
    if not (1 <= entry.line <= len(lines)) or not lines[entry.line - 1]:
        return f"{where}: entry starts on a blank or missing line"
    if format == "jsonl":
        try:
            record = json.loads(lines[entry.line - 1])
        except (ValueError, RecursionError):
            return f"{where}: entry's line is not JSON"
        abstract = record.get("abstract", "") if isinstance(record, dict) else None
        # a titled record without an abstract is a paper whose abstract is ""
        if not isinstance(abstract, str) or abstract.strip() != entry.abstract:
            return f"{where}: entry's abstract is not its line's abstract"
        return [entry.line]
    index = nonblank.index(entry.line)
    span = []
    if entry.track is not None:
        if lines[entry.line - 1] != entry.track:
            return f"{where}: track {entry.track!r} is not the entry's first line"
        span.append(entry.line)
        index += 1
    if index >= len(nonblank):
        return f"{where}: no authors line in the file"
    # names as the format defines them: entities, mojibake, TeX accents (`Jo\~{a}o`) and quotes
    # decoded, Unicode composed, invisible characters dropped, spaces collapsed, a hyphen's
    # stray space taken off (tidy_name), read whole and name by name
    raw_line = lines[nonblank[index] - 1]
    authors_line = " ".join([tidy_name(raw_line), *map(tidy_name, NAME_SEPARATOR.split(raw_line))])
    if not all(name in authors_line for name in entry.authors):
        return f"{where}: authors {entry.authors} are not on line {nonblank[index]}"
    span.append(nonblank[index])
    abstract = entry.abstract.split("\n")
    run = nonblank[index + 1 : index + 1 + len(abstract)]
    if [lines[n - 1] for n in run] != abstract or run[-1] - run[0] != len(run) - 1:
        return f"{where}: abstract is not the paragraph after the authors line"
    return span + run


def unaccounted_blocks(path, data, format, items):
    """What in the file `data` is neither loaded nor reported; [] when everything is.

    Lines and blocks are `reference_lines` and `reference_blocks`. A line is accounted for when
    1. the file is rejected whole: no entries and one problem, at line 1, for a FILE_LEVEL reason;
    2. it is the header: a listing's first non-blank line 论文检索, a profile's owner line;
    3. it lies in an entry's span (`entry_span`, checked against the text);
    4. a problem names its block (JSON Lines, where every line is a record: names its line).
    A block is accounted for when all its lines are. Also returned: an entry whose span does
    not match the text, a line two entries claim, a problem inside an entry's span, and a
    problem that names another file or a blank or missing line.
    """
    lines = reference_lines(data)
    entries = [item for item in items if isinstance(item, Entry)]
    problems = [item for item in items if isinstance(item, Problem)]
    errors = [f"{item} names another file" for item in items if item.path != str(path)]
    if (
        not entries
        and len(problems) == 1
        and problems[0].line == 1
        and problems[0].message.startswith(FILE_LEVEL)
    ):
        return errors
    nonblank = [number for number, line in enumerate(lines, start=1) if line]
    blocks = reference_blocks(lines)
    covered = {}
    if nonblank and (
        (format == "listing" and lines[nonblank[0] - 1] == sources.LISTING_MARKER)
        or format == "profile"
    ):
        covered[nonblank[0]] = "header"
    for entry in entries:
        span = entry_span(entry, format, lines, nonblank)
        if isinstance(span, str):
            errors.append(span)
            continue
        for number in span:
            if number in covered:
                errors.append(f"{path}:{number}: in two entries (or an entry and the header)")
            covered[number] = entry
    block_of = {number: block for block in blocks for number in block}
    for problem in problems:
        if problem.line not in block_of:
            errors.append(f"{problem} names a blank or missing line")
            continue
        if isinstance(covered.get(problem.line), Entry):
            errors.append(f"{problem} names a line of a loaded entry")
        for number in [problem.line] if format == "jsonl" else block_of[problem.line]:
            covered.setdefault(number, problem)
    for block in blocks:
        missing = [number for number in block if number not in covered]
        if missing:
            errors.append(
                f"{path}:{block.start}: block of lines {block.start}-{block.stop - 1} is "
                f"neither loaded nor reported (lines {missing})"
            )
    return errors


def catalog_differences(db_path, parsed):
    """How the catalog differs from the parsers' output `parsed` ({path: items}): every
    entry is a paper_sources row (file, line, paper id, or the paper its version was merged
    into), every problem a load_problems row."""
    db = sqlite3.connect(db_path)
    try:
        loaded = Counter(
            db.execute(
                "select sources.path, line, paper_id from paper_sources "
                "join sources on sources.id = source_id"
            ).fetchall()
        )
        reported = Counter(db.execute("select file, line, message from load_problems").fetchall())
        merged_into = dict(db.execute("select alias, paper_id from paper_aliases").fetchall())
        paths = Counter(row[0] for row in db.execute("select path from sources"))
        checks = [
            db.execute("pragma integrity_check").fetchall(),
            db.execute("pragma foreign_key_check").fetchall(),
            db.execute(
                "select count(*) from paper_sources where paper_id not in (select id from papers)"
            ).fetchall(),
        ]
    finally:
        db.close()
    items = [item for path_items in parsed.values() for item in path_items]
    public = public_paths(list(parsed))  # stored without the builder's folders
    expected_loaded = Counter(
        (
            public[item.path],
            item.line,
            merged_into.get(entry_paper_id(item), entry_paper_id(item)),
        )
        for item in items
        if isinstance(item, Entry)
    )
    expected_reported = Counter(
        (public[item.path], item.line, item.message) for item in items if isinstance(item, Problem)
    )
    differences = []
    if loaded != expected_loaded:
        differences.append(
            f"paper_sources: missing {expected_loaded - loaded}, extra {loaded - expected_loaded}"
        )
    if reported != expected_reported:
        differences.append(
            f"load_problems: missing {expected_reported - reported}, "
            f"extra {reported - expected_reported}"
        )
    if paths != Counter(public.values()):
        differences.append(f"sources: {sorted(paths)} != {sorted(public.values())}")
    if checks != [[("ok",)], [], [(0,)]]:
        differences.append(f"integrity: {checks}")
    return differences


def parse_file(path, forced_format=None):
    source, items = read_source(path, forced_format)
    return source, list(items)


def assert_accounted(path, data, forced_format=None):
    source, items = parse_file(path, forced_format)
    errors = unaccounted_blocks(path, data, source.format, items)
    assert not errors, "\n".join(errors)
    return items


# ---------------------------------------------------------------------------------------------
# The accounting check can fail: lossy variants of the loader are caught


def seed_items():
    return {path: parse_file(path) for path in discover([SEEDS])}


def test_accounting_passes_on_the_seeds():
    for path, (source, items) in seed_items().items():
        assert unaccounted_blocks(path, path.read_bytes(), source.format, items) == []


@pytest.mark.parametrize("drop", ["first entry", "last entry", "a problem"])
def test_accounting_fails_when_an_item_is_dropped(tmp_path, drop):
    path = tmp_path / "listing.txt"
    seed = discover([SEEDS])[0].read_text(encoding="utf-8")
    path.write_text(seed + "\n\nAnn Lee, Bo Chen\n", encoding="utf-8")  # one problem at the end
    source, items = parse_file(path)
    assert unaccounted_blocks(path, path.read_bytes(), source.format, items) == []
    entries = [i for i in items if isinstance(i, Entry)]
    victim = {
        "first entry": entries[0],
        "last entry": entries[-1],
        "a problem": next(i for i in items if isinstance(i, Problem)),
    }[drop]
    lossy = [item for item in items if item is not victim]
    errors = unaccounted_blocks(path, path.read_bytes(), source.format, lossy)
    assert errors and all("neither loaded nor reported" in error for error in errors)
    assert f"{path}:{victim.line}:" in errors[0]


def test_accounting_fails_when_a_paragraph_is_cut_or_an_entry_misplaced(tmp_path):
    path = tmp_path / "listing.txt"
    path.write_text(
        "论文检索\n\nAnn Lee\n\nFirst half of the abstract,\nsecond half of it.\n\n"
        "Bo Chen\n\nAnother abstract.\n",
        encoding="utf-8",
    )
    source, items = parse_file(path)
    data = path.read_bytes()
    assert unaccounted_blocks(path, data, source.format, items) == []
    first, second = items
    cut = Entry(**{**vars(first), "abstract": "First half of the abstract,"})
    assert (
        "neither loaded nor reported (lines [6])"
        in unaccounted_blocks(path, data, source.format, [cut, second])[0]
    )
    moved = Entry(**{**vars(second), "line": 9})
    assert (
        "entry starts on a blank"
        in unaccounted_blocks(path, data, source.format, [first, moved])[0]
    )
    doubled = Entry(**{**vars(second), "authors": ["Ann Lee"]})
    assert "are not on line 8" in unaccounted_blocks(path, data, source.format, [first, doubled])[0]


def test_accounting_fails_when_a_lossy_parser_is_used(tmp_path, monkeypatch):
    """A listing parser that silently skips every fifth entry, run as the fuzz runs it."""
    real = sources.PARSERS["listing"]

    def lossy_listing(path, lines):
        entries = 0
        for item in real(path, lines):
            entries += isinstance(item, Entry)
            if not (isinstance(item, Entry) and entries % 5 == 0):
                yield item

    monkeypatch.setitem(sources.PARSERS, "listing", lossy_listing)
    path = tmp_path / "listing.txt"
    data = discover([SEEDS])[0].read_bytes()
    path.write_bytes(data)
    with pytest.raises(AssertionError, match="neither loaded nor reported"):
        assert_accounted(path, data)


def test_catalog_check_fails_when_the_build_drops_an_entry(tmp_path, monkeypatch):
    from loader.build.writer import CatalogWriter

    files = discover([SEEDS])
    parsed = {str(path): parse_file(path)[1] for path in files}
    assert catalog_differences(build_seeds(tmp_path / "good.db"), parsed) == []
    real = CatalogWriter.add_entry

    def lossy_add_entry(self, entry, *args):
        if entry.line != 3:
            real(self, entry, *args)

    monkeypatch.setattr(CatalogWriter, "add_entry", lossy_add_entry)
    differences = catalog_differences(build_seeds(tmp_path / "lossy.db"), parsed)
    assert differences and differences[0].startswith("paper_sources: missing Counter({(")


def build_seeds(db):
    build_catalog(discover([SEEDS]), db)
    return db


# ---------------------------------------------------------------------------------------------
# Damage: mutations of the real seed files (and of a JSON Lines file made from them)


def seed_jsonl():
    records = []
    for path in discover([SEEDS]):
        for item in parse_file(path)[1]:
            record = {"abstract": item.abstract, "authors": item.authors}
            if item.track:
                record["track"] = item.track
            if item.affiliations:
                record["affiliations"] = item.affiliations
            records.append(record)
    lines = [json.dumps(r, ensure_ascii=bool(i % 2)) for i, r in enumerate(records[::6])]
    return ("\n".join(lines) + "\n").encode("utf-8")


REAL_PAGES = FIXTURES / "real" / "parse"
BASES = {path.name: path.read_bytes() for path in discover([SEEDS])}
BASES["extra.jsonl"] = seed_jsonl()
# real names, area-only tracks and broken rows (tests/fixtures/real/parse) damaged in turn
for name in (
    "names_nicknames.txt",
    "names_entities_apostrophes.txt",
    "tracks_area_only.txt",
    "missing_and_cut_abstracts.txt",
):
    BASES[name] = (REAL_PAGES / name).read_bytes()
STRAYS = ["·", " · ", ",", "，", ", ", " 等", "等", " et al.", "、", " et al. 等"]
INVALID_UTF8 = [
    b"\xff",
    b"\xfe",
    b"\x80",
    b"\xc3",
    b"\xe9",
    b"\xed\xa0\x80",  # an encoded surrogate
    b"\xc0\xaf",  # overlong
    b"\xf4\x90\x80\x80",  # beyond U+10FFFF
    b"\xe4\xb8",  # a cut-short CJK character
]
ODD_SPACES = ["\u2028", "\x85", "\x0b", "\x0c", "\x1c", "\u00a0", "\u3000", "\u200b", "\ufeff"]
HUGE_UNITS = [b" ", b"a", b"ab ", b"**a ", b", ", b"Ann Lee, ", "等 ".encode(), "· ".encode()]
HUGE_UNITS += [b"\\x{", b"$a ", b"[a](", b"We propose AB (Cd Ef) "]
HOSTILE_RECORDS = [
    b"[" * 50_000,
    b'{"abstract": "x \\ud800", "authors": ["Ann Lee"]}',
    b'{"abstract": "a NUL \\u0000 here", "authors": ["Ann Lee"]}',
    b'{"abstract": "ok", "authors": ["\\udfff"]}',
    b'{"abstract": "ok", "authors": "Ann Lee", "title": "\\ud83d"}',
    b'{"abstract": 1e999, "authors": []}',
    b'{"abstract": "ok", "authors": [1, 2]}',
    b'{"abstract": "ok", "authors": "et al."}',
    b'{"abstract": "ok", "authors": ["Ann"], "track": "\xc2\xb7", "affiliations": "  , "}',
    b'{"abstract": "ok", "authors": ["Ann"], "affiliations": [{"x": 1}]}',
    b'{"abstract": "ok", "authors": ["Ann"], "url": 7}',
    b'{"abstract": "ok", "authors": ["Ann"], "authors_truncated": "no"}',
    b"9" * 5000,
    b'"just a string"',
    b"{}",
    b"null",
]
URLS = [
    "https://arxiv.org/abs/2101.00001v2",
    "https://arxiv.org/pdf/",
    "https://openreview.net/forum?id=",
    "https://openreview.net/forum?id=B11bwYgfM&id=x",
    "https://doi.org/10.1145/3292500.3330701",
    "http://[::1",  # urlsplit raises on this one
]
json_values = st.recursive(
    st.none() | st.booleans() | st.integers() | st.floats() | st.text(max_size=20),
    lambda inner: st.lists(inner, max_size=4) | st.dictionaries(st.text(max_size=8), inner),
    max_leaves=12,
)
json_records = st.fixed_dictionaries(
    {},
    optional={
        "abstract": st.text(max_size=60) | json_values,
        "authors": st.lists(st.text(max_size=12), max_size=4) | st.text(max_size=30) | json_values,
        "title": st.text(max_size=20) | json_values,
        "track": st.text(max_size=20) | json_values,
        "affiliations": st.lists(st.text(max_size=8), max_size=3) | json_values,
        "url": st.sampled_from(URLS) | st.text(max_size=20) | json_values,
        "authors_truncated": json_values,
        "venue": st.text(max_size=8) | json_values,
        "year": st.sampled_from([2024, "2024", " 2024 ", "24", 1e3, True]) | json_values,
        "status": st.text(max_size=8) | json_values,
        "arxiv_id": st.sampled_from(["2101.00001v2", "arXiv:math/0501001", "x"]) | json_values,
        "doi": st.sampled_from(["10.1145/1.2", "https://doi.org/10.1000/X", "10/x"]) | json_values,
        "openreview_id": st.text(max_size=10) | json_values,
    },
)


def position(draw, data):
    return draw(st.integers(0, len(data)))


def insert(data, at, piece):
    return data[:at] + piece + data[at:]


def line_starts(data):
    return [0] + [m.end() for m in re.finditer(rb"\n", data)]


def truncate(draw, data):
    return data[: position(draw, data)]


def flip_byte(draw, data):
    if not data:
        return data
    at = draw(st.integers(0, len(data) - 1))
    return data[:at] + bytes([data[at] ^ draw(st.integers(1, 255))]) + data[at + 1 :]


def delete_blank_line(draw, data):
    blanks = [m.start() for m in re.finditer(rb"\n(?=\r?\n)", data)]
    if not blanks:
        return data
    at = draw(st.sampled_from(blanks))
    return data[:at] + data[at + 1 :]


def duplicate_blank_line(draw, data):
    blanks = [m.start() for m in re.finditer(rb"\n(?=\r?\n)", data)] or [0]
    return insert(data, draw(st.sampled_from(blanks)), b"\n" * draw(st.integers(1, 3)))


def delete_newline(draw, data):
    """Joins two lines: a paragraph wraps differently, an entry loses its separation."""
    ends = [m.start() for m in re.finditer(rb"\n", data)]
    if not ends:
        return data
    at = draw(st.sampled_from(ends))
    return data[:at] + draw(st.sampled_from([b"", b" "])) + data[at + 1 :]


def edit_line(draw, data):
    lines = data.split(b"\n")
    index = draw(st.integers(0, len(lines) - 1))
    action = draw(st.sampled_from(["delete", "duplicate", "swap"]))
    if action == "delete":
        del lines[index]
    elif action == "duplicate":
        lines.insert(index, lines[index])
    else:
        other = draw(st.integers(0, len(lines) - 1))
        lines[index], lines[other] = lines[other], lines[index]
    return b"\n".join(lines)


def stray_character(draw, data):
    piece = draw(st.sampled_from(STRAYS)).encode("utf-8")
    starts = line_starts(data)
    where = draw(st.sampled_from(["line end", "line start", "anywhere"]))
    if where == "anywhere":
        return insert(data, position(draw, data), piece)
    index = draw(st.integers(0, len(starts) - 1))
    if where == "line start":
        return insert(data, starts[index], piece)
    end = data.find(b"\n", starts[index])
    return insert(data, len(data) if end < 0 else end, piece)


def invalid_utf8(draw, data):
    return insert(data, position(draw, data), draw(st.sampled_from(INVALID_UTF8)))


def nul_bytes(draw, data):
    count = draw(st.sampled_from([1, 1, 2, 5000]))
    return insert(data, position(draw, data), b"\0" * count)


def huge_line(draw, data):
    unit = draw(st.sampled_from(HUGE_UNITS))
    piece = unit * (draw(st.integers(1_000, 200_000)) // len(unit))
    if draw(st.booleans()):  # a line of its own
        piece = b"\n" + piece + b"\n"
    return insert(data, position(draw, data), piece)


def line_ends(draw, data):
    """Mixed line ends: every k-th \\n becomes \\r\\n, \\r or \\n\\r."""
    style = draw(st.sampled_from([b"\r\n", b"\r", b"\n\r"]))
    step = draw(st.integers(1, 7))
    parts = data.split(b"\n")
    joined = bytearray(parts[0])
    for index, part in enumerate(parts[1:]):
        joined += (style if index % step == 0 else b"\n") + part
    return bytes(joined)


def byte_order_mark(draw, data):
    mark = draw(st.sampled_from([b"\xef\xbb\xbf", b"\xef\xbb\xbf\xef\xbb\xbf", b"\xff\xfe"]))
    at = draw(st.sampled_from([0, 0, draw(st.sampled_from(line_starts(data)))]))
    return insert(data, at, mark)


def odd_space(draw, data):
    piece = draw(st.sampled_from(ODD_SPACES)).encode("utf-8")
    return insert(data, position(draw, data), piece * draw(st.integers(1, 3)))


def decompose(draw, data):
    """NFD on a stretch of text (accents become combining characters)."""
    text = data.decode("utf-8", "surrogateescape")
    start = draw(st.integers(0, len(text)))
    end = start + draw(st.integers(0, 5000))
    decomposed = unicodedata.normalize("NFD", text[start:end])
    return (text[:start] + decomposed + text[end:]).encode("utf-8", "surrogateescape")


def hostile_json_line(draw, data):
    if draw(st.booleans()):
        line = draw(st.sampled_from(HOSTILE_RECORDS))
    else:
        record = draw(json_records)
        line = json.dumps(record, ensure_ascii=draw(st.booleans())).encode("utf-8", "surrogatepass")
    return insert(data, draw(st.sampled_from(line_starts(data))), line + b"\n")


MUTATIONS = [
    truncate,
    flip_byte,
    delete_blank_line,
    duplicate_blank_line,
    delete_newline,
    edit_line,
    stray_character,
    invalid_utf8,
    nul_bytes,
    huge_line,
    line_ends,
    byte_order_mark,
    odd_space,
    decompose,
    hostile_json_line,
]


@st.composite
def damaged(draw, names=tuple(BASES)):
    """(file name, bytes): a base file with one to six mutations."""
    name = draw(st.sampled_from(names))
    data = BASES[name]
    for mutation in draw(st.lists(st.sampled_from(MUTATIONS), min_size=1, max_size=6)):
        data = mutation(draw, data)
    return name, data


@st.composite
def damaged_folders(draw):
    """One to four damaged files with distinct names, the rest of the seeds intact or absent."""
    names = draw(st.lists(st.sampled_from(tuple(BASES)), min_size=1, max_size=4, unique=True))
    return {name: draw(damaged(names=(name,)))[1] for name in names}


@pytest.fixture(scope="module", autouse=True)
def frozen_heap():
    """The objects this process holds before the module, out of the cyclic garbage collector's
    reach while it runs (gc.freeze): a build ends in a full collection
    (loader/build/collector.py collector_paused), and over all a test process holds by
    then (Datasette, hypothesis, the files run before) each took a tenth of a second or more:
    after two other files, 16 s of collections in this module, 3 s frozen. What the tests here
    leave is still collected."""
    gc.collect()
    gc.freeze()
    yield
    gc.unfreeze()


@pytest.fixture(scope="module")
def workdir(tmp_path_factory):
    return tmp_path_factory.mktemp("fuzz")


def write_folder(directory, files):
    directory.mkdir(exist_ok=True)
    for old in directory.iterdir():
        old.unlink()
    for name, data in files.items():
        (directory / name).write_bytes(data)
    return sorted(directory / name for name in files)


# ---------------------------------------------------------------------------------------------
# The properties


@fuzz_settings()
@given(case=damaged(), forced=st.sampled_from([None, None, None, "listing", "profile", "jsonl"]))
def test_parsers_account_for_every_block_of_a_damaged_file(workdir, case, forced):
    name, data = case
    path = workdir / name
    path.write_bytes(data)
    items = assert_accounted(path, data, forced)
    entries, problems = check_sources([path], forced)
    assert (entries, problems) == (
        sum(isinstance(i, Entry) for i in items),
        [i for i in items if isinstance(i, Problem)],
    )


@pytest.fixture(scope="module")
def previous_catalog(tmp_path_factory):
    """Bytes of a good catalog, to check that a failed build leaves it as it was."""
    return build_seeds(tmp_path_factory.mktemp("previous") / "catalog.db").read_bytes()


@fuzz_settings(examples=20)
@given(folder=damaged_folders())
def test_build_of_a_damaged_folder_loads_or_reports_every_block(workdir, previous_catalog, folder):
    files = write_folder(workdir / "inputs", folder)
    parsed = {str(path): assert_accounted(path, path.read_bytes()) for path in files}
    db = workdir / "skip.db"
    summary = build_catalog(files, db, skip_invalid=True)
    assert catalog_differences(db, parsed) == []
    assert summary.problems == [i for items in parsed.values() for i in items if type(i) is Problem]

    strict = workdir / "strict.db"
    strict.write_bytes(previous_catalog)
    try:
        build_catalog(files, strict)
    except BuildFailed as failure:
        assert failure.problems == summary.problems
        assert strict.read_bytes() == previous_catalog
    else:
        assert not summary.problems and catalog_differences(strict, parsed) == []
    assert not list(workdir.glob(".*.building"))


@fuzz_settings(examples=25)
@given(folder=damaged_folders())
def test_cli_on_a_damaged_folder_reports_without_traceback(workdir, previous_catalog, folder):
    files = write_folder(workdir / "cli", folder)
    folder_path = str(workdir / "cli")
    parsed = [item for path in files for item in parse_file(path)[1]]
    problems = [str(item) for item in parsed if isinstance(item, Problem)]
    entries = len(parsed) - len(problems)
    runner = CliRunner()

    result = runner.invoke(cli, ["check", folder_path])
    assert result.exit_code == (1 if problems else 0), result.output
    assert result.output.splitlines() == [*problems, f"{entries} entries, {len(problems)} problems"]

    db = workdir / "cli.db"
    db.write_bytes(previous_catalog)
    result = runner.invoke(cli, ["build", folder_path, "--db", str(db)])
    assert not isinstance(result.exception, Exception) or isinstance(result.exception, SystemExit)
    assert "Traceback" not in result.output
    if problems:
        assert result.exit_code == 1 and result.output.splitlines()[:-1] == problems
        assert result.output.splitlines()[-1].startswith("Error: ")
        assert "was left unchanged" in result.output and db.read_bytes() == previous_catalog
    else:
        assert result.exit_code == 0, result.output

    result = runner.invoke(cli, ["build", folder_path, "--db", str(db), "--skip-invalid"])
    assert result.exit_code == 0, result.output
    assert f"{len(problems)} problems" in result.output.splitlines()[-1]


# ---------------------------------------------------------------------------------------------
# What the fuzzer found, pinned with nasty fixtures


def test_unreadable_line_inside_an_abstract_drops_the_whole_paragraph(tmp_path):
    """Before: the readable half of the paragraph was loaded as the paper's whole abstract."""
    path = FIXTURES / "unreadable_line_in_abstract.txt"
    items = assert_accounted(path, path.read_bytes())
    assert [(i.line, i.message) for i in items if isinstance(i, Problem)] == [
        (6, "invalid UTF-8 at column 9"),
        (3, "authors line with no abstract after it"),
        (11, "invalid UTF-8 at column 1"),
        (9, "authors line with no abstract after it"),
    ]
    assert [(e.line, e.abstract) for e in items if isinstance(e, Entry)] == [
        (14, "A third paper whose abstract is intact.")
    ]


def test_unreadable_line_between_authors_and_abstract_pairs_nothing_across_it(tmp_path):
    """Before: the authors before the unreadable line were given the next paper's abstract."""
    path = tmp_path / "gap.txt"
    path.write_bytes(
        "论文检索\n\nAnn Lee\n\n".encode() + b"\xff\n\nAn abstract of another paper.\n"
    )
    items = assert_accounted(path, path.read_bytes())
    assert [str(i).split(": ", 1)[1] for i in items] == [
        "invalid UTF-8 at column 1",
        "authors line with no abstract after it",
        "abstract with no authors line before it",
    ]


@pytest.mark.parametrize(
    "line",
    [
        "Ann" + " " * 1_000_000 + "Lee",  # 40 000 spaces took 30 s before; this took hours
        "Ann" + ", " * 500_000 + "Lee",
        "We study" + " " * 1_000_000 + "et al. things.",
    ],
)
def test_huge_line_is_parsed_in_linear_time(tmp_path, line):
    path = tmp_path / "huge.txt"
    path.write_text(f"论文检索\n\nBo Chen\n\nAbstract here.\n\n{line}\n", encoding="utf-8")
    items = assert_accounted(path, path.read_bytes())
    assert isinstance(items[0], Entry)


def test_json_that_sqlite_cannot_store_is_a_problem_not_a_crash(tmp_path):
    """Before: a lone surrogate escape crashed the build with UnicodeEncodeError and deep
    nesting crashed check and build with RecursionError."""
    path = tmp_path / "hostile.jsonl"
    path.write_bytes((FIXTURES / "hostile.jsonl").read_bytes() + b"[" * 100_000 + b"\n")
    items = assert_accounted(path, path.read_bytes())
    assert [(i.line, i.message) for i in items if isinstance(i, Problem)] == [
        (1, "abstract contains a NUL or a lone surrogate escape"),
        (2, "authors contains a NUL or a lone surrogate escape"),
        (3, "title contains a NUL or a lone surrogate escape"),
        (4, "abstract contains a NUL or a lone surrogate escape"),
        (6, "invalid JSON: nested too deeply"),
    ]
    summary = build_catalog([path], tmp_path / "catalog.db", skip_invalid=True)
    assert summary.papers == 1 and len(summary.problems) == 5


@pytest.mark.parametrize(
    "text, line", [("论文检索\n", 1), ("\n\n论文检索\n\n\n", 3), ("Ann Lee\n", 1)]
)
def test_page_with_only_its_header_is_a_problem(tmp_path, text, line):
    """Before: a listing cut short after its header loaded as a source with no papers."""
    path = tmp_path / "header.txt"
    path.write_text(text, encoding="utf-8")
    assert [(p.line, p.message) for p in parse_file(path)[1]] == [
        (line, "no papers after the header")
    ]


def test_undecodable_file_name_is_shown_escaped_and_stored(tmp_path):
    """Before: a file name that is not UTF-8 crashed the build (SQLite cannot store it)."""
    name = os.fsdecode(b"caf\xe9.txt")
    (tmp_path / name).write_text("论文检索\n\nAnn Lee\n\nAn abstract.\n", encoding="utf-8")
    db = tmp_path / "catalog.db"
    result = CliRunner().invoke(cli, ["build", str(tmp_path), "--db", str(db)])
    assert result.exit_code == 0, result.output
    stored = sqlite3.connect(db).execute("select path from sources").fetchall()
    assert stored == [("caf\\xe9.txt",)]  # one file outside the current folder: its name


@pytest.mark.parametrize(
    "line, expected",
    [
        # a trailing empty slot after full names is skipped (a real shape: "…; Ram Vasudevan;"
        # in papercopilot/paperlists rss2019.json); after a clause it is a sentence cut short
        ("Ann Lee, Bo Chen,", (["Ann Lee", "Bo Chen"], False)),
        ("In this paper,", None),
        ("The first half of a wrapped abstract,", None),
        ("Ann Lee, Bo Chen, 等", (["Ann Lee", "Bo Chen"], True)),
        ("Ann Lee 等 et al.  ", (["Ann Lee"], True)),
        ("Ann Lee,Bo Chen、Cara Diaz", (["Ann Lee", "Bo Chen", "Cara Diaz"], False)),
    ],
)
def test_split_authors_edges_of_the_linear_rewrite(line, expected):
    assert split_authors(line) == expected


def test_fixtures_load_or_report_every_block():
    pages = [p for p in Path(FIXTURES).rglob("*") if p.suffix in (".txt", ".jsonl")]
    # the public dumps (also a .jsonl snapshot head) are accounted record by record in
    # tests/test_read_dumps.py; this check knows the blocks of pages and our JSON Lines
    pages = [p for p in pages if parse_file(p)[0].format not in DUMP_PARSERS]
    assert REAL_PAGES / "names_nicknames.txt" in pages
    for path in sorted(pages):
        assert_accounted(path, path.read_bytes())
