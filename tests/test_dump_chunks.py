"""Large dumps written one record a line, prepared in pieces (loader/read/dump_chunks.py,
loader/build/prepare.py): the pieces end at line ends and know their lines, the build of a
file read in pieces is the build of the file read whole, progress is told in bytes on a
terminal, and memory stays bounded as the file grows."""

import hashlib
import itertools
import os
import pty
import select
import subprocess
import sys
import textwrap

import pytest

from loader.build import prepare
from loader.build.catalog import build_catalog
from loader.read import dump_chunks
from loader.read.dump_chunks import LinePieces, line_dump_format
from loader.read.sources import plan_inputs

from .conftest import FIXTURES, ROOT

DUMPS = FIXTURES / "dumps"
PAPER_CATALOG = os.path.join(os.path.dirname(sys.executable), "paper-catalog")
SNAPSHOT = DUMPS / "arxiv" / "arxiv-metadata-oai-snapshot.json"
NOTES = DUMPS / "openreview" / "iclr2017-notes-v1.jsonl"
sys.path.insert(0, str(ROOT / "bench"))
from compare_catalogs import catalog_differences  # bench/ is no package
from snapshot_build import write_snapshot


@pytest.mark.parametrize("read_bytes", [7, 1000, 1 << 20])
@pytest.mark.parametrize("size", [1, 2000, 30_000, 10**9])
def test_pieces_end_at_line_ends_and_know_their_first_line(monkeypatch, read_bytes, size):
    monkeypatch.setattr(dump_chunks, "READ_BYTES", read_bytes)
    data = SNAPSHOT.read_bytes()
    pieces = LinePieces(SNAPSHOT, size)
    found = list(pieces)
    assert found[0].start == 0 and found[-1].end == len(data)
    assert all(a.end == b.start for a, b in itertools.pairwise(found))
    for piece in found:
        assert piece.line == data.count(b"\n", 0, piece.start) + 1
        assert data[piece.end - 1 : piece.end] == b"\n"
        assert piece.end - piece.start >= size or piece.end == len(data)
    assert pieces.sha256 == hashlib.sha256(data).hexdigest()
    if size in (1, 10**9):
        assert len(found) == (120 if size == 1 else 1)  # one a line; the file in one


def test_only_dumps_of_one_record_a_line_are_read_in_pieces():
    assert line_dump_format(SNAPSHOT) == "arxiv"
    assert line_dump_format(NOTES) == "openreview"
    assert line_dump_format(DUMPS / "openreview" / "iclr2017-notes-v2.json") is None  # {"notes"
    assert line_dump_format(DUMPS / "paperlists" / "iclr2017.json") is None  # one array
    assert line_dump_format(FIXTURES / "hostile.jsonl") is None  # our JSON Lines


@pytest.fixture
def dumps_with_repeats(tmp_path):
    """The arXiv sample with ten of its records again at the end (each a paper already: the
    later copy is skipped) and a broken line, and the OpenReview notes (a note twice, a
    decision note)."""
    folder = tmp_path / "in"
    folder.mkdir()
    lines = SNAPSHOT.read_text().splitlines(keepends=True)
    (folder / "arxiv.json").write_text("".join([*lines, "{broken\n", *lines[3:13]]))
    (folder / "notes.jsonl").write_bytes(NOTES.read_bytes())
    (folder / "sources.yml").write_text("- match: nothing-here.json\n  venue: X\n  year: 2020\n")
    return folder


@pytest.mark.parametrize("categories", [(), ("hep-th", "math")])
def test_a_dump_read_in_pieces_builds_the_catalog_it_builds_whole(
    tmp_path, monkeypatch, dumps_with_repeats, categories
):
    whole = build_catalog(
        plan_inputs([dumps_with_repeats]),
        tmp_path / "whole.db",
        skip_invalid=True,
        workers=0,
        arxiv_categories=categories,
    )
    monkeypatch.setattr(prepare, "PIECE_BYTES", 3000)
    told = []
    pieced = build_catalog(
        plan_inputs([dumps_with_repeats]),
        tmp_path / "pieces.db",
        skip_invalid=True,
        workers=2,
        progress=told.append,
        arxiv_categories=categories,
    )
    assert catalog_differences(str(tmp_path / "whole.db"), str(tmp_path / "pieces.db")) == (
        [],
        [],
    )
    assert str(pieced) == str(whole)
    assert pieced.left_out == whole.left_out > 0 if categories else pieced.left_out == 0
    # the sources.yml problem (a pattern matching no file) once, the broken line
    assert [p.message for p in pieced.problems] == [p.message for p in whole.problems]
    assert len(pieced.problems) == 2
    sizes = [path.stat().st_size for path in sorted(dumps_with_repeats.glob("*.json*"))]
    assert len(told) > 40 and sum(told) == sum(sizes)


# A build in a process of its own, peak memory measured at the end of its stream (every
# entry prepared and written, the workers gone): the largest peak RSS, in MB, of the build and
# its workers up to there. SQLite's page cache while streaming is given its size after the
# stream: a smaller build fills less of a larger cache, which would hide what is looked for
MEMORY_PROBE = textwrap.dedent(
    """
    import resource, sys
    from loader.build import catalog, writer
    from loader.read.sources import plan_inputs

    catalog.STREAM_CACHE_KB = catalog.CACHE_KB
    end_stream = writer.CatalogWriter.end_stream

    def measured(self):
        peak = max(resource.getrusage(who).ru_maxrss for who in (
            resource.RUSAGE_SELF, resource.RUSAGE_CHILDREN))
        print(peak // 1024)
        return end_stream(self)

    writer.CatalogWriter.end_stream = measured
    catalog.build_catalog(plan_inputs([sys.argv[1]]), sys.argv[2])
    """
)


def peak_build_mb(snapshot, db):
    probe = subprocess.run(
        [sys.executable, "-c", MEMORY_PROBE, str(snapshot), str(db)],
        capture_output=True,
        text=True,
        check=True,
        cwd=ROOT,
    )
    return int(probe.stdout)


@pytest.mark.slow
def test_a_large_snapshot_builds_in_bounded_memory(tmp_path):
    """Twice the records, about the same memory while they are prepared and written: no
    process holds the file's entries (each worker prepares a 4 MB piece at a time, the build
    writes a few pieces at a time). The authors and ids kept for 20,000 more entries are a
    few MB; a worker preparing the whole file held ~150 MB more."""
    peaks = {}
    for records in (20_000, 40_000):
        snapshot = tmp_path / f"snapshot-{records}.json"
        write_snapshot(snapshot, records)
        peaks[records] = peak_build_mb(snapshot, tmp_path / f"{records}.db")
    assert os.path.getsize(tmp_path / "snapshot-40000.json") > 60_000_000
    assert peaks[40_000] - peaks[20_000] < 40, peaks  # whole files in a worker: +150


def test_the_build_shows_progress_on_a_terminal_and_none_in_a_pipe(tmp_path):
    command = [PAPER_CATALOG, "build", str(SNAPSHOT), "--db"]
    piped = subprocess.run(
        [*command, str(tmp_path / "a.db")], capture_output=True, text=True, check=True
    )
    assert piped.stderr == ""
    leader, follower = pty.openpty()
    with subprocess.Popen(
        [*command, str(tmp_path / "b.db")], stdout=subprocess.PIPE, stderr=follower
    ) as process:
        os.close(follower)
        shown = b""
        while select.select([leader], [], [], 60)[0]:
            try:
                chunk = os.read(leader, 4096)
            except OSError:  # the build ended: the terminal is gone
                break
            if not chunk:
                break
            shown += chunk
        assert process.wait() == 0
    os.close(leader)
    assert b"Reading" in shown and b"100%" in shown
