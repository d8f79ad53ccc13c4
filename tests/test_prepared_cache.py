"""The cache of prepared entries beside the catalog (loader/build/prepared_cache.py): a
rebuild reads again only the files that changed, and makes the catalog a build without the
cache makes; a damaged cache file is only a miss; the folder keeps only what the last build
used; --no-cache neither reads nor writes it; problems of cached files are reported again."""

import collections
import fcntl
import hashlib
import json
import os
import pickle
import shutil
import sqlite3
import stat
import subprocess
import sys
from contextlib import closing

import pytest
from click.testing import CliRunner

from loader.build import prepare
from loader.build.catalog import build_catalog
from loader.build.prepared_cache import (
    DIGEST_BYTES,
    END,
    ENTRY_SUFFIX,
    FRAME,
    ITEMS,
    MAGIC,
    SECRET_NAME,
    TEMPORARY_SUFFIX,
    cache_folder,
    decode_items,
    encode_items,
)
from loader.cli import cli
from loader.read.sources import plan_inputs

from .conftest import FIXTURES, ROOT, SEEDS

sys.path.insert(0, str(ROOT / "bench"))
from compare_catalogs import catalog_differences  # bench/ is no package

REAL = FIXTURES / "real" / "sample"
SNAPSHOT = FIXTURES / "dumps" / "arxiv" / "arxiv-metadata-oai-snapshot.json"
PAPER_CATALOG = os.path.join(os.path.dirname(sys.executable), "paper-catalog")


# of the real sample: listing and profile pages, JSON Lines, sources.yml, a page of problems
SAMPLE_FILES = [
    "sources.yml",
    "iclr2018_p01.txt",
    "iclr2018_p02.txt",
    "iclr2018_p03.txt",
    "iclr2018_withdrawn.txt",
    "neurips2018_p01.txt",
    "neurips2018_p02.txt",
    "profile_shixiang_gu.txt",
    "icml2014.jsonl",
    "uai2023.jsonl",
    "arxiv.jsonl",
]


@pytest.fixture
def inputs(tmp_path):
    """Part of the real sample and the seeds, in one folder."""
    folder = tmp_path / "in"
    folder.mkdir()
    for name in SAMPLE_FILES:
        shutil.copy(REAL / name, folder / name)
    for path in SEEDS.iterdir():
        shutil.copy(path, folder / f"seed_{path.name}")
    return folder


@pytest.fixture
def reads(monkeypatch):
    """The files this process reads and prepares (the real prepare_source, watched)."""
    read = []
    prepare_source = prepare.prepare_source

    def watched(file, *args, **kwargs):
        read.append(os.path.basename(file))
        return prepare_source(file, *args, **kwargs)

    monkeypatch.setattr(prepare, "prepare_source", watched)
    return read


def build(folder, db, workers=0, cache=True, **options):
    return build_catalog(
        plan_inputs([folder]), db, skip_invalid=True, workers=workers, cache=cache, **options
    )


def assert_same_catalog(one, other):
    assert catalog_differences(str(one), str(other)) == ([], [])


def cache_files(db):
    """The cache's entries (beside them: the folder's secret, SECRET_NAME)."""
    return sorted(p.name for p in cache_folder(db).glob(f"*{ENTRY_SUFFIX}"))


def edit(path):
    """Another abstract for the first entry of a listing page."""
    lines = path.read_text(encoding="utf-8").split("\n")
    abstract = max(range(len(lines)), key=lambda n: len(lines[n]))
    lines[abstract] = "We study caches of parsed entries. " + lines[abstract]
    path.write_text("\n".join(lines), encoding="utf-8")


def test_a_rebuild_reads_only_the_changed_file_and_builds_the_same_catalog(tmp_path, inputs, reads):
    db = tmp_path / "catalog.db"
    first = build(inputs, db)
    files = len(reads)
    assert len(cache_files(db)) == files == len(SAMPLE_FILES) - 1 + len(list(SEEDS.iterdir()))
    reads.clear()
    assert str(build(inputs, db)) == str(first)
    assert reads == []  # nothing changed: nothing read
    edit(inputs / "neurips2018_p02.txt")
    (inputs / "extra.jsonl").write_text(
        '{"abstract": "We add a paper to a built catalog, and only it is read.", '
        '"authors": ["Ada Lovelace"], "title": "An added file"}\n'
    )
    warm = build(inputs, db)
    assert sorted(reads) == ["extra.jsonl", "neurips2018_p02.txt"]
    cold = build(inputs, tmp_path / "cold.db", cache=False)
    assert str(warm) == str(cold)
    assert_same_catalog(tmp_path / "cold.db", db)
    assert not cache_folder(tmp_path / "cold.db").exists()


def test_a_deleted_files_entries_leave_the_catalog_and_the_cache(tmp_path, inputs, reads):
    db = tmp_path / "catalog.db"
    build(inputs, db)
    before = len(cache_files(db))
    (inputs / "iclr2018_p03.txt").unlink()
    (inputs / "uai2023.jsonl").unlink()
    reads.clear()
    build(inputs, db)
    assert reads == []
    assert len(cache_files(db)) == before - 2
    build(inputs, tmp_path / "cold.db", cache=False)
    assert_same_catalog(tmp_path / "cold.db", db)


def test_problems_of_cached_files_are_reported_again(tmp_path, inputs):
    runner = CliRunner()
    db = str(tmp_path / "catalog.db")
    command = ["build", str(inputs), "--db", db]
    cold = runner.invoke(cli, [*command, "--skip-invalid", "--no-cache"])
    first = runner.invoke(cli, [*command, "--skip-invalid"])
    warm = runner.invoke(cli, [*command, "--skip-invalid"])
    assert cold.exit_code == first.exit_code == warm.exit_code == 0
    problems = [line for line in cold.stderr.splitlines() if ".txt:" in line]
    assert problems  # the real sample has some, each FILE:LINE
    assert warm.stderr == first.stderr == cold.stderr
    assert warm.stdout == cold.stdout
    # a strict build fails on them as before, from the cache too
    strict = runner.invoke(cli, command)
    assert strict.exit_code == 1
    assert strict.stderr.splitlines()[:-1] == cold.stderr.splitlines()


DAMAGES = {
    "half": lambda data: data[: len(data) // 2],
    "last byte": lambda data: data[:-1],
    "empty": lambda data: b"",
    "header": lambda data: data[:20] + bytes([data[20] ^ 1]) + data[21:],
    "frame": lambda data: data[:-300] + bytes([data[-300] ^ 0x40]) + data[-299:],
    "trailing": lambda data: data + b"more",
    "random": lambda data: os.urandom(len(data)),
}


def test_a_damaged_cache_file_is_read_again_never_a_traceback(tmp_path, inputs, reads):
    db = tmp_path / "catalog.db"
    build(inputs, db)
    folder = cache_folder(db)
    largest = sorted(folder.iterdir(), key=lambda p: p.stat().st_size)[-len(DAMAGES) :]
    for path, damage in zip(largest, DAMAGES.values()):
        path.write_bytes(damage(path.read_bytes()))
    reads.clear()
    build(inputs, db)
    assert len(reads) == len(DAMAGES)  # those files alone, read again and stored again
    reads.clear()
    build(inputs, db)
    assert reads == []
    build(inputs, tmp_path / "cold.db", cache=False)
    assert_same_catalog(tmp_path / "cold.db", db)


def test_no_cache_neither_reads_nor_writes_the_cache(tmp_path, inputs, reads):
    db = tmp_path / "catalog.db"
    result = CliRunner().invoke(
        cli, ["build", str(inputs), "--db", str(db), "--skip-invalid", "--no-cache"]
    )
    assert result.exit_code == 0
    assert not cache_folder(db).exists()
    build(inputs, db)
    stored = cache_files(db)
    reads.clear()
    CliRunner().invoke(cli, ["build", str(inputs), "--db", str(db), "--skip-invalid", "--no-cache"])
    assert len(reads) == len(stored)  # every file read
    assert cache_files(db) == stored  # and the cache left as it was


def test_other_settings_and_options_are_other_keys(tmp_path, inputs, reads):
    """sources.yml settings, --arxiv-category and --format are part of a file's key."""
    db = tmp_path / "catalog.db"
    build(inputs, db)
    config = inputs / "sources.yml"
    config.write_text(config.read_text().replace("year: 2018", "year: 2019", 1))
    reads.clear()
    build(inputs, db)
    assert reads and all(name.endswith(".txt") for name in reads)
    build(inputs, tmp_path / "cold.db", cache=False)
    assert_same_catalog(tmp_path / "cold.db", db)
    reads.clear()
    build(inputs, db, arxiv_categories=["cs.LG"])
    assert len(reads) == len(cache_files(db))


def test_a_dump_read_in_pieces_by_workers_is_cached_and_replayed(tmp_path, monkeypatch):
    """The pieces workers prepare are stored as they come and replayed with the same
    skipping of repeated records; a damaged piece makes the file a miss."""
    folder = tmp_path / "in"
    folder.mkdir()
    lines = SNAPSHOT.read_text().splitlines(keepends=True)
    (folder / "arxiv.json").write_text("".join([*lines, "{broken\n", *lines[3:13]]))
    for path in SEEDS.glob("*.txt"):
        shutil.copy(path, folder / path.name)
    monkeypatch.setattr(prepare, "PIECE_BYTES", 3000)
    db = tmp_path / "catalog.db"
    cold = build(folder, tmp_path / "cold.db", workers=2, cache=False)
    assert str(build(folder, db, workers=2)) == str(cold)
    told = []
    warm = build(folder, db, workers=2, progress=told.append)
    assert str(warm) == str(cold)
    assert sum(told) == sum(p.stat().st_size for p in folder.iterdir())
    assert_same_catalog(tmp_path / "cold.db", db)
    for path in cache_folder(db).glob(f"*{ENTRY_SUFFIX}"):
        data = path.read_bytes()
        path.write_bytes(data[:200] + bytes([data[200] ^ 1]) + data[201:])
    build(folder, db, workers=2)
    assert_same_catalog(tmp_path / "cold.db", db)


def test_a_killed_builds_temporary_goes_and_a_running_builds_stays(tmp_path, inputs):
    db = tmp_path / "catalog.db"
    build(inputs, db)
    folder = cache_folder(db)
    stale = folder / f".stale{TEMPORARY_SUFFIX}"
    stale.write_bytes(b"left by a killed build")
    alive = folder / f".alive{TEMPORARY_SUFFIX}"
    with open(alive, "wb") as writing:
        fcntl.flock(writing, fcntl.LOCK_EX)
        (folder / f"{'0' * 40}{ENTRY_SUFFIX}").write_bytes(b"an entry of an older build")
        build(inputs, db)
        assert alive.exists() and not stale.exists()
        assert not (folder / f"{'0' * 40}{ENTRY_SUFFIX}").exists()


def test_concurrent_builds_of_one_catalog_keep_the_cache_whole(tmp_path, inputs):
    db = tmp_path / "catalog.db"
    command = [PAPER_CATALOG, "build", str(inputs), "--db", str(db), "--skip-invalid"]
    edit(inputs / "iclr2018_p01.txt")
    builds = [subprocess.Popen(command, stdout=subprocess.PIPE) for _ in range(2)]
    outputs = [process.communicate()[0] for process in builds]
    assert [process.returncode for process in builds] == [0, 0]
    assert len(set(outputs)) == 1
    assert not [p for p in cache_folder(db).iterdir() if p.name.endswith(TEMPORARY_SUFFIX)]
    build(inputs, tmp_path / "cold.db", cache=False)
    assert_same_catalog(tmp_path / "cold.db", db)
    build(inputs, db)  # from the cache alone
    assert_same_catalog(tmp_path / "cold.db", db)


# ---------------------------------------------------------------------------------------------
# A cache that cannot be turned against its user


def read_frames(data, name):
    """(kind, payload) of each frame of a cache file, its END frame last."""
    offset = len(MAGIC) + len(name) + 1
    frames = []
    while True:
        kind, size = FRAME.unpack_from(data, offset)
        offset += FRAME.size
        frames.append((kind, data[offset : offset + size]))
        offset += size
        if kind == END:
            return frames


def written_file(name, frames, key):
    """A cache file of these frames, its digest made with `key`."""
    data = MAGIC + name.encode() + b"\n"
    data += b"".join(FRAME.pack(kind, len(payload)) + payload for kind, payload in frames)
    return data + hashlib.blake2b(data, key=key, digest_size=DIGEST_BYTES).digest()


class Planted:
    """Unpickled, this would make a folder: the test of whether a build ever unpickles."""

    def __init__(self, path):
        self.path = path

    def __reduce__(self):
        return os.mkdir, (str(self.path),)


def test_a_planted_cache_file_never_changes_the_catalog(tmp_path, inputs, reads):
    """Before: a planted file with valid frames changed the catalog, and a pickle in it ran
    code during the build (it was unpickled before its hash was checked)."""
    db = tmp_path / "catalog.db"
    build(inputs, db)
    cold = tmp_path / "cold.db"
    build(inputs, cold, cache=False)
    planted = tmp_path / "ran"
    entries = sorted(cache_folder(db).glob(f"*{ENTRY_SUFFIX}"), key=lambda p: p.stat().st_size)
    edited, pickled = entries[-2:]
    frames = read_frames(edited.read_bytes(), edited.name)
    kind, payload = frames[0]
    items = json.loads(payload)
    items[0][3] = "A title the planted file gave"  # the title of the first entry
    frames[0] = (kind, json.dumps(items).encode())
    # the frames of a file this user's build could have written, its digest under any key
    # but the folder's secret (which only this user can read)
    edited.write_bytes(written_file(edited.name, frames, key=b"guessed" * 4))
    frames = read_frames(pickled.read_bytes(), pickled.name)
    payload = pickle.dumps([Planted(planted)])
    pickled.write_bytes(written_file(pickled.name, [(ITEMS, payload), frames[-1]], b"k" * 32))
    reads.clear()
    build(inputs, db)
    assert len(reads) == 2  # the two planted files' inputs, read again
    assert not planted.exists()
    assert_same_catalog(cold, db)
    # both read again and stored again, whole: the next build reads nothing
    reads.clear()
    build(inputs, db)
    assert reads == []
    assert_same_catalog(cold, db)
    # the control: the same edit under the folder's secret (only its user can read it) is
    # taken, so the digest is what kept the planted file out
    secret = (cache_folder(db) / SECRET_NAME).read_bytes()
    frames = read_frames(edited.read_bytes(), edited.name)
    frames[0] = (kind, json.dumps(items).encode())
    edited.write_bytes(written_file(edited.name, frames, key=secret))
    build(inputs, db)
    with closing(sqlite3.connect(db)) as connection, connection:
        assert connection.execute(
            "select count(*) from papers where title = 'A title the planted file gave'"
        ).fetchone() == (1,)


def test_the_cache_folder_and_its_files_are_private(tmp_path, inputs):
    db = tmp_path / "catalog.db"
    build(inputs, db)
    folder = cache_folder(db)
    assert stat.S_IMODE(folder.stat().st_mode) == 0o700
    modes = {stat.S_IMODE(p.stat().st_mode) for p in folder.iterdir()}
    assert modes == {0o600}
    assert (folder / SECRET_NAME).stat().st_size == 32
    folder.chmod(0o755)  # an older build's folder, readable by all: made private
    build(inputs, db)
    assert stat.S_IMODE(folder.stat().st_mode) == 0o700


def shared_folder(folder):
    folder.chmod(0o777)


def shared_file(folder):
    next(folder.glob(f"*{ENTRY_SUFFIX}")).chmod(0o666)


def other_owner(folder):
    if os.geteuid() != 0:
        pytest.skip("only root can give a folder to another user")
    os.chown(folder, 54321, -1)


def linked_folder(folder):
    moved = folder.with_name("elsewhere")
    folder.rename(moved)
    folder.symlink_to(moved)


@pytest.mark.parametrize(
    ("make", "reason"),
    [
        (shared_folder, "is writable by other users"),
        (shared_file, "in it is writable by other users"),
        (other_owner, "is owned by another user (uid 54321)"),
        (linked_folder, "is not a folder"),
    ],
)
def test_a_cache_folder_others_can_write_is_not_used(tmp_path, inputs, reads, make, reason):
    """Before: a --db in a folder others can write to (the system's temporary folder) let
    any local user plant cache files. Now the build warns, reads every file and stores
    nothing."""
    db = tmp_path / "catalog.db"
    build(inputs, db)
    folder = cache_folder(db)
    make(folder)
    before = {p.name: p.read_bytes() for p in folder.iterdir()}
    reads.clear()
    result = CliRunner().invoke(cli, ["build", str(inputs), "--db", str(db), "--skip-invalid"])
    assert result.exit_code == 0, result.output
    (warning,) = [line for line in result.stderr.splitlines() if line.startswith("Warning:")]
    assert warning.startswith(f"Warning: the cache {folder} is not used (")
    assert reason in warning and warning.endswith("): every file is read")
    assert len(reads) == len(before) - 1  # every input file (the secret aside)
    assert {p.name: p.read_bytes() for p in folder.iterdir()} == before
    build(inputs, tmp_path / "cold.db", cache=False)
    assert_same_catalog(tmp_path / "cold.db", db)


def test_prepared_items_of_every_reader_cross_the_json_whole():
    """What the workers send and the cache stores reads back as the very items, of every
    reader (pages, JSON Lines, the three dumps) and of problems and records left out."""
    files = [*SEEDS.glob("*.txt"), *REAL.iterdir(), *FIXTURES.glob("dumps/*/*.json*")]
    kinds = collections.Counter()
    for file in files:
        # cs.LG: the arXiv snapshot's other records are left out
        items = list(prepare.prepare_source(file, arxiv_categories=["cs.LG"])[1])
        copy = decode_items(encode_items(items))
        assert copy == items, file
        assert [type(item) for item in copy] == [type(item) for item in items]
        kinds.update(type(item).__name__ for item in items)
    assert set(kinds) == {"PreparedEntry", "Problem", "LeftOut"} and kinds.total() > 800
