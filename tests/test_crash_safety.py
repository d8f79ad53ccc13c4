"""Crash safety: kill -9 a real `paper-catalog build` at random moments, and the environment
failing under the loader (unreadable inputs, link loops, a vanished file, an unwritable target,
a full disk). The previous catalog always survives intact and every failure is an `Error:`."""

import errno
import fcntl
import os
import random
import resource
import signal
import sqlite3
import stat
import subprocess
import sys
import time
from pathlib import Path

import pytest
from click.testing import CliRunner

from loader.build import atomic
from loader.build import catalog as build
from loader.build.catalog import BuildFailed, build_catalog
from loader.build.prepare import PARALLEL_MIN_BYTES
from loader.build.prepared_cache import cache_folder
from loader.cli import cli
from loader.read.sources import discover, read_source
from loader.records import Entry

from .conftest import ROOT, SEEDS

# kills a run: a few in `make test`, more in `make test-slow` (CRASH_KILLS=200 for a deeper one-off)
QUICK_KILLS = 3
SLOW_KILLS = int(os.environ.get("CRASH_KILLS", "20"))
# copies of the 90 seed entries, each copy with its own abstracts: 1 800 papers for the quick
# kill run, a build of a second or more (long enough for kills to land mid-build; fewer papers
# save little, a build's start costs as much); 3 600 papers for the many kills of
# `make test-slow`
COPIES = 20
BIG_COPIES = 40
# two copies for two builds that overlap: the first is held once its temporary is made, before
# it reads anything, so its size does not matter; 180 papers tell it from the seeds' 90
SMALL_COPIES = 2
TABLES = (
    "papers",
    "authors",
    "tracks",
    "affiliations",
    "sources",
    "paper_authors",
    "load_problems",
)
SCRIPT = Path(sys.executable).with_name("paper-catalog")


def paper_catalog(*args, **options):
    return subprocess.Popen(
        [str(SCRIPT), *map(str, args)],
        stdout=subprocess.DEVNULL,
        stderr=subprocess.PIPE,
        text=True,
        **options,
    )


def counts(db):
    connection = sqlite3.connect(db)
    try:
        assert connection.execute("pragma integrity_check").fetchall() == [("ok",)]
        return {t: connection.execute(f"select count(*) from {t}").fetchone()[0] for t in TABLES}
    finally:
        connection.close()


def temporaries(target):
    return set(target.parent.glob(f".{target.name}.*.building"))


def copies_of_the_seeds(folder, copies):
    """The seed entries `copies` times over as listing pages, every abstract made unique."""
    entries = [i for path in discover([SEEDS]) for i in read_source(path)[1]]
    assert all(isinstance(entry, Entry) for entry in entries)
    for copy in range(copies):
        lines = ["论文检索", ""]
        for number, entry in enumerate(entries):
            if entry.track:
                lines += [entry.track, ""]
            authors = ", ".join(entry.authors) + (" 等" if entry.truncated else "")
            lines += [authors, "", f"{entry.abstract} Variant {copy}.{number}.", ""]
        (folder / f"copy_{copy:03}.txt").write_text("\n".join(lines), encoding="utf-8")
    return folder


@pytest.fixture(scope="module")
def inputs(tmp_path_factory):
    return copies_of_the_seeds(tmp_path_factory.mktemp("copies"), COPIES)


@pytest.fixture(scope="module")
def small_inputs(tmp_path_factory):
    return copies_of_the_seeds(tmp_path_factory.mktemp("small"), SMALL_COPIES)


@pytest.fixture(scope="module")
def big_inputs(tmp_path_factory):
    return copies_of_the_seeds(tmp_path_factory.mktemp("big"), BIG_COPIES)


@pytest.mark.parametrize(
    ("kills", "copies"),
    [
        pytest.param(QUICK_KILLS, COPIES, id=f"{QUICK_KILLS}-kills"),
        pytest.param(SLOW_KILLS, BIG_COPIES, id=f"{SLOW_KILLS}-kills", marks=pytest.mark.slow),
    ],
)
def test_kill_9_at_random_moments_never_damages_the_previous_catalog(
    tmp_path, request, kills, copies
):
    inputs = request.getfixturevalue("inputs" if copies == COPIES else "big_inputs")
    target = tmp_path / "catalog.db"
    build_catalog(discover([SEEDS]), target)
    previous, previous_counts = target.read_bytes(), counts(target)

    # one complete build of the inputs: what a finished build gives, and about how long it
    # runs once started (in this process, as the command builds: no second Python to start)
    reference = tmp_path / "reference" / "catalog.db"
    started = time.monotonic()
    result = run("build", inputs, "--db", reference)
    window = time.monotonic() - started
    assert result.exit_code == 0, result.output
    new_counts = counts(reference)
    assert new_counts["papers"] == copies * 90 and new_counts != previous_counts

    rng = random.Random(5)
    killed = finished = attempts = 0
    outcomes = []
    while killed < kills:
        attempts += 1
        assert attempts < 4 * kills, "the build kept finishing before it could be killed"
        stale = temporaries(target)
        process = paper_catalog("build", inputs, "--db", target)
        # wait for this build's own temporary file, so that every kill lands mid-build
        while not (temporaries(target) - stale) and process.poll() is None:
            time.sleep(0.002)
        time.sleep(rng.uniform(0, window))
        if process.poll() is None:
            process.send_signal(signal.SIGKILL)
            killed += 1
        else:
            finished += 1
            window *= 0.7  # the calibration build was slower than this machine is now
        process.wait()
        process.stderr.close()

        # the catalog is the previous one byte for byte, or a complete new one: never damaged
        if target.read_bytes() == previous:
            assert counts(target) == previous_counts
            outcomes.append("previous")
        else:
            assert counts(target) == new_counts
            previous, previous_counts = target.read_bytes(), new_counts
            outcomes.append("new")
        # the killed build's temporary may stay behind; the one before it is gone
        assert not (stale & temporaries(target))
        assert len(temporaries(target)) <= 1
    assert outcomes.count("previous") >= kills // 2  # most kills land before the replace

    # the next build (in this process: the cleanup is the command's, whoever runs it)
    result = run("build", SEEDS, "--db", target)
    assert result.exit_code == 0, result.output
    assert counts(target)["papers"] == 90
    assert sorted(p.name for p in tmp_path.iterdir()) == [
        ".catalog.db.cache",
        "catalog.db",
        "reference",
    ]
    # the killed builds' cache files, whole or not, are gone: the seeds' alone are left
    assert len(list(cache_folder(target).glob("*.prepared"))) == len(discover([SEEDS]))
    print(f"{killed} kills, {finished} builds finished first: {outcomes}")


def test_stale_temporaries_are_found_when_the_name_looks_like_a_pattern(tmp_path):
    """Before: for a target named cat[1].db the glob matched nothing and temporaries piled up."""
    folder = tmp_path / "run [1]"
    folder.mkdir()
    stale = folder / ".cat[1].db.0123456789abcdef.building"
    other = folder / ".cat1.db.0123456789abcdef.building"  # another target's: not ours to remove
    stale.write_bytes(b"half a database")
    other.write_bytes(b"half a database")
    build_catalog(discover([SEEDS]), folder / "cat[1].db")
    assert sorted(p.name for p in folder.iterdir()) == [other.name, "cat[1].db"]


# ---------------------------------------------------------------------------------------------
# The environment failing under the loader


def run(*args):
    return CliRunner().invoke(cli, [str(a) for a in args])


@pytest.fixture
def catalog(tmp_path):
    """A good previous catalog and its bytes."""
    db = tmp_path / "out" / "catalog.db"
    build_catalog(discover([SEEDS]), db)
    return db, db.read_bytes()


def assert_clean_error(result, *expected):
    assert result.exit_code == 1, result.output
    assert "Traceback" not in result.output and not isinstance(result.exception, KeyError)
    assert result.output.splitlines()[-1].startswith("Error: ")
    for text in expected:
        assert text in result.output


@pytest.fixture
def awkward_folder(tmp_path):
    """Inputs with every kind of entry a folder can have besides good files."""
    folder = tmp_path / "inputs"
    folder.mkdir()
    (folder / "good.txt").write_text(
        "论文检索\n\nAnn Lee\n\nA paper that loads.\n", encoding="utf-8"
    )
    (folder / "gone.txt").symlink_to(folder / "deleted.txt")  # a file that disappeared
    (folder / "loop_a").symlink_to(folder / "loop_b")  # a link loop between two files
    (folder / "loop_b").symlink_to(folder / "loop_a")
    (folder / "sub").mkdir()
    (folder / "sub" / "up").symlink_to(folder)  # a folder loop
    os.mkfifo(folder / "pipe")  # reading it would block forever
    (folder / "device").symlink_to("/dev/zero")  # reading it would never end
    linked = tmp_path / "elsewhere"
    linked.mkdir()
    (linked / "more.txt").write_text(
        "论文检索\n\nBo Chen\n\nA paper behind a linked folder.\n", encoding="utf-8"
    )
    (folder / "linked").symlink_to(linked)
    return folder


def test_awkward_folder_is_reported_entry_by_entry(awkward_folder, catalog):
    db, before = catalog
    folder = awkward_folder
    problems = [
        f"{folder / 'device'}:1: not a regular file (a folder, pipe or device)",
        f"{folder / 'gone.txt'}:1: cannot read: No such file or directory",
        f"{folder / 'loop_a'}:1: cannot read: Too many levels of symbolic links",
        f"{folder / 'loop_b'}:1: cannot read: Too many levels of symbolic links",
        f"{folder / 'pipe'}:1: not a regular file (a folder, pipe or device)",
    ]
    result = run("check", folder)
    assert result.exit_code == 1
    assert result.output.splitlines() == [*problems, "2 entries, 5 problems"]

    assert_clean_error(run("build", folder, "--db", db), *problems, "left unchanged")
    assert db.read_bytes() == before

    result = run("build", folder, "--db", db, "--skip-invalid")
    assert result.exit_code == 0, result.output
    assert counts(db)["papers"] == 2 and counts(db)["load_problems"] == 5


def test_folder_that_cannot_be_listed_is_a_problem_not_silence(tmp_path, monkeypatch):
    folder = tmp_path / "inputs"
    (folder / "locked").mkdir(parents=True)
    (folder / "good.txt").write_text("论文检索\n\nAnn Lee\n\nAn abstract.\n", encoding="utf-8")
    real_scandir, real_open = os.scandir, os.open
    locked = str(folder / "locked")

    # as root, chmod cannot deny anything: deny listing and opening this one folder
    def scandir(path="."):
        if os.fspath(path) == locked:
            raise PermissionError(errno.EACCES, "Permission denied", locked)
        return real_scandir(path)

    def open_(path, flags, *args, **kwargs):
        if os.fspath(path) == locked:
            raise PermissionError(errno.EACCES, "Permission denied", locked)
        return real_open(path, flags, *args, **kwargs)

    monkeypatch.setattr(os, "scandir", scandir)
    monkeypatch.setattr(os, "open", open_)
    assert discover([folder]) == [folder / "good.txt", folder / "locked"]
    result = run("check", folder)
    assert result.output.splitlines() == [
        f"{locked}:1: cannot read: Permission denied",
        "1 entries, 1 problems",
    ]


def test_file_disappearing_before_it_is_read(tmp_path, catalog):
    db, before = catalog
    files = discover([SEEDS])
    gone = tmp_path / "gone.txt"
    gone.write_text("论文检索\n\nAnn Lee\n\nAn abstract.\n", encoding="utf-8")
    files.append(gone)
    gone.unlink()
    with pytest.raises(BuildFailed) as failure:
        build_catalog(files, db)
    assert [str(p) for p in failure.value.problems] == [
        f"{gone}:1: cannot read: No such file or directory"
    ]
    assert db.read_bytes() == before
    assert build_catalog(files, db, skip_invalid=True).papers == 90


@pytest.mark.parametrize("blocker", ["parent is a file", "target is a folder"])
def test_target_that_cannot_be_written_is_an_error(tmp_path, blocker):
    if blocker == "parent is a file":  # no folder can be made for the target
        (tmp_path / "file").write_text("not a folder")
        db, expected = tmp_path / "file" / "catalog.db", "Not a directory"
    else:  # refused before any work: a folder is no catalog file
        (tmp_path / "catalog.db").mkdir()
        db, expected = tmp_path / "catalog.db", "it is a folder, not a catalog file"
    before = sorted(tmp_path.iterdir())
    assert_clean_error(run("build", SEEDS, "--db", db), f"Error: cannot write {db}: ", expected)
    assert sorted(tmp_path.iterdir()) == before  # and no temporary file left behind


def test_target_folder_without_write_permission_is_an_error(catalog, monkeypatch):
    db, before = catalog
    real_open = os.open

    def open_(path, flags, *args, **kwargs):  # as root, chmod cannot deny anything
        if flags & os.O_CREAT and Path(path).parent == db.parent:
            raise PermissionError(errno.EACCES, "Permission denied", str(path))
        return real_open(path, flags, *args, **kwargs)

    monkeypatch.setattr(os, "open", open_)
    assert_clean_error(run("build", SEEDS, "--db", db), "Permission denied")
    assert db.read_bytes() == before


def limit_file_size():
    """In the child: writes past 256 kB fail with EFBIG, as on a full disk."""
    signal.signal(signal.SIGXFSZ, signal.SIG_IGN)
    resource.setrlimit(resource.RLIMIT_FSIZE, (256_000, 256_000))


def test_full_disk_is_an_error_and_leaves_the_previous_catalog(tmp_path, catalog, inputs):
    db, before = catalog
    process = paper_catalog("build", inputs, "--db", db, preexec_fn=limit_file_size)
    errors = process.communicate()[1]
    assert process.returncode == 1
    assert "Traceback" not in errors
    assert errors.strip().startswith(f"Error: cannot write {db}: ")
    assert "disk" in errors  # "disk I/O error" or "database or disk is full"
    assert db.read_bytes() == before
    assert sorted(p.name for p in db.parent.iterdir()) == ["catalog.db"]


# ---------------------------------------------------------------------------------------------
# Targets, temporaries and worker processes


@pytest.fixture(scope="module")
def parallel_inputs(tmp_path_factory):
    """A generated corpus large enough that a build parses it in worker processes."""
    folder = tmp_path_factory.mktemp("parallel")
    generate = [sys.executable, ROOT / "bench" / "generate.py", "--papers", "7500"]
    subprocess.run([*generate, "--out", folder], check=True, stdout=subprocess.DEVNULL)
    files = discover([folder])
    assert len(files) >= 2 and sum(f.stat().st_size for f in files) >= PARALLEL_MIN_BYTES
    return folder


def make_device(path):
    """A character device like /dev/null (major 1, minor 3), where mknod is allowed."""
    try:
        os.mknod(path, stat.S_IFCHR | 0o666, os.makedev(1, 3))
    except PermissionError:
        pytest.skip("no permission to make a device node here")


@pytest.mark.parametrize("kind", ["character device", "named pipe", "symbolic link", "folder"])
def test_target_that_is_no_regular_file_is_refused_before_any_work(tmp_path, monkeypatch, kind):
    """Before: `build --db /dev/null` replaced /dev/null with a regular file; a FIFO and a
    symbolic link (to a catalog) were replaced too, a folder refused only after the build."""
    catalog = tmp_path / "real.db"
    build_catalog(discover([SEEDS]), catalog)
    target = tmp_path / "target"
    if kind == "character device":
        make_device(target)
    elif kind == "named pipe":
        os.mkfifo(target)
    elif kind == "symbolic link":
        target.symlink_to(catalog)
    else:
        target.mkdir()
    before = sorted(tmp_path.iterdir()), os.lstat(target), catalog.read_bytes()

    def work(*args, **kwargs):
        raise AssertionError("the build started")

    monkeypatch.setattr(build, "write_catalog", work)
    result = run("build", SEEDS, "--db", target)
    assert_clean_error(result, f"Error: cannot write {target}: it is a {kind}", "not a catalog")
    assert (sorted(tmp_path.iterdir()), os.lstat(target), catalog.read_bytes()) == before


def test_real_dev_null_is_refused(monkeypatch):
    def work(*args, **kwargs):  # never reached; if it were, the build fails before the rename
        raise AssertionError("the build started")

    monkeypatch.setattr(build, "write_catalog", work)
    assert_clean_error(run("build", SEEDS, "--db", "/dev/null"), "a character device")
    assert stat.S_ISCHR(os.lstat("/dev/null").st_mode)


@pytest.mark.parametrize("mode", [0o444, 0o640, 0o600])
def test_target_keeps_its_permissions(catalog, mode):
    """A read-only catalog stays read-only after a rebuild (before: always 0644)."""
    db, _ = catalog
    db.chmod(mode)
    result = run("build", SEEDS, "--db", db)
    assert result.exit_code == 0, result.output
    assert stat.S_IMODE(db.stat().st_mode) == mode
    assert counts(db)["papers"] == 90


def test_new_target_is_readable_by_all(tmp_path):
    build_catalog(discover([SEEDS]), tmp_path / "catalog.db")
    assert stat.S_IMODE((tmp_path / "catalog.db").stat().st_mode) == 0o644


def test_new_file_and_its_folder_are_synced_around_the_rename(catalog, monkeypatch):
    db, _ = catalog
    events = []
    real_fsync, real_replace = os.fsync, os.replace

    def fsync(descriptor):
        status = os.fstat(descriptor)
        events.append(("fsync", stat.S_IFMT(status.st_mode), status.st_ino))
        real_fsync(descriptor)

    def replace(source, target):
        events.append(("replace", Path(source).parent, Path(target)))
        real_replace(source, target)

    monkeypatch.setattr(os, "fsync", fsync)
    monkeypatch.setattr(os, "replace", replace)
    build_catalog(discover([SEEDS]), db)
    assert events == [
        ("fsync", stat.S_IFREG, db.stat().st_ino),  # the new file, which is now the catalog
        ("replace", db.parent, db),
        ("fsync", stat.S_IFDIR, db.parent.stat().st_ino),
    ]


def test_cleanup_never_matches_another_targets_temporary(tmp_path):
    names = [
        ".catalog.db.0123456789abcdef.building",
        ".catalog.db.0123456789abcdef.building-wal",
        ".catalog.db.new.0123456789abcdef.building",  # catalog.db.new's
        ".catalog.db.0123456789abcdef.building.0123456789abcdef.building",  # ...building's
        ".catalog.db.0123456789abcdeg.building",  # no name this version makes
        ".catalog.db.x1y2.building",
    ]
    pattern = atomic.temporary_name_pattern(Path("catalog.db"))
    assert [name for name in names if pattern.fullmatch(name)] == names[:2]


def test_cleanup_leaves_the_temporary_of_a_running_build(tmp_path):
    """Before: the cleanup removed every matching name, a running build's file too."""
    target = tmp_path / "catalog.db"
    with atomic.building(target) as running:
        running.path.write_bytes(b"half a database")
        atomic.remove_stale_temporaries(target)  # another build into the same target
        assert running.path.read_bytes() == b"half a database"
    stale = tmp_path / ".catalog.db.0123456789abcdef.building"
    stale.write_bytes(b"left by a killed build")
    with open(stale) as held:
        fcntl.flock(held, fcntl.LOCK_EX)
        atomic.remove_stale_temporaries(target)
        assert stale.exists()  # its build still runs
    atomic.remove_stale_temporaries(target)
    assert sorted(tmp_path.iterdir()) == []


def locked(path):
    """True while a process holds the lock on path (a build its temporary)."""
    try:
        descriptor = os.open(path, os.O_RDONLY)
    except FileNotFoundError:
        return False
    try:
        fcntl.flock(descriptor, fcntl.LOCK_SH | fcntl.LOCK_NB)
    except BlockingIOError:
        return True
    finally:
        os.close(descriptor)
    return False


@pytest.mark.parametrize("second", ["catalog.db", "catalog.db.new"])
def test_concurrent_builds_leave_each_other_alone(tmp_path, small_inputs, second):
    """Before: `--db catalog.db` removed the temporary of a running `--db catalog.db.new`,
    which then died with a thread traceback blaming a "disk I/O error". The first build is held
    (SIGSTOP) once its temporary is made and locked, while the second build runs whole: the
    second's cleanup always meets the first's temporary."""
    first = tmp_path / "catalog.db.new"
    other = tmp_path / second
    for _attempt in range(3):
        # cold every time (the cache's own concurrency: tests/test_prepared_cache.py)
        running = paper_catalog("build", small_inputs, "--db", first, "--no-cache")
        while not any(map(locked, temporaries(first))) and running.poll() is None:
            time.sleep(0.002)
        running.send_signal(signal.SIGSTOP)
        try:
            if running.poll() is not None:
                continue  # it finished before it could be held
            theirs = temporaries(first)
            # another catalog's build cleans up as it starts, whatever it then reads: the seeds
            starting = paper_catalog("build", SEEDS, "--db", other, "--no-cache")
            assert (starting.wait(120), starting.stderr.read()) == (0, "")
            starting.stderr.close()
            assert temporaries(first) == theirs, "the second build touched the first's file"
            assert counts(other)["papers"] == 90
        finally:
            running.send_signal(signal.SIGCONT)
        assert (running.wait(120), running.stderr.read()) == (0, "")
        running.stderr.close()
        # the last to replace it wins: the first build, held until the second had finished
        assert counts(first)["papers"] == SMALL_COPIES * 90
        break
    else:
        pytest.fail("the first build kept finishing before it could be held")
    assert sorted(p.name for p in tmp_path.iterdir()) == sorted({first.name, other.name})


def descendants(pid):
    """Live processes under pid (zombies are dead: only their exit status is left)."""
    found = []
    for task in Path(f"/proc/{pid}/task").glob("*"):
        try:
            children = (task / "children").read_text().split()
        except OSError:
            continue
        for child in map(int, children):
            found += [child, *descendants(child)]
    return found


def alive(pid):
    try:
        state = Path(f"/proc/{pid}/stat").read_text().rpartition(")")[2].split()[0]
    except OSError:
        return False
    return state != "Z"


# a build with another thread running starts its workers from a forkserver
FORKSERVER_BUILD = (
    "import sys, threading, time; from pathlib import Path; "
    "from loader.build.catalog import build_catalog; from loader.read.sources import discover; "
    "threading.Thread(target=time.sleep, args=(600,), daemon=True).start(); "
    "build_catalog(discover([Path(sys.argv[1])]), sys.argv[2])"
)


@pytest.mark.parametrize("start", ["fork", "forkserver"])
def test_workers_die_with_the_build(tmp_path, parallel_inputs, start):
    """Before: kill -9 of a build with 8 MB or more of input left its worker parsing on."""
    db = tmp_path / "catalog.db"
    if start == "fork":
        process = paper_catalog("build", parallel_inputs, "--db", db)
    else:
        command = [sys.executable, "-c", FORKSERVER_BUILD, parallel_inputs, db]
        process = subprocess.Popen(command, stdout=subprocess.DEVNULL, stderr=subprocess.PIPE)
    deadline = time.monotonic() + 60
    workers = []
    while not workers and process.poll() is None and time.monotonic() < deadline:
        # forked by the build, or by its forkserver (which the build started)
        generation = 1 if start == "fork" else 2
        workers = [p for p in descendants(process.pid) if depth(p, process.pid) == generation]
        time.sleep(0.01)
    assert workers, "no worker process started"
    started = descendants(process.pid)  # with a forkserver: it and the resource tracker too
    process.send_signal(signal.SIGKILL)
    process.wait()
    process.stderr.close()
    deadline = time.monotonic() + 10
    while any(map(alive, started)) and time.monotonic() < deadline:
        time.sleep(0.05)
    assert not any(map(alive, started))


def test_worker_killed_under_the_build_is_an_error(tmp_path, parallel_inputs, catalog):
    """Before: a BrokenProcessPool traceback (e.g. a worker killed by the OOM killer)."""
    db, before = catalog
    process = paper_catalog("build", parallel_inputs, "--db", db)
    workers = []
    while not workers and process.poll() is None:
        workers = descendants(process.pid)
        time.sleep(0.01)
    assert workers, "no worker process started"
    os.kill(workers[0], signal.SIGKILL)
    errors = process.communicate()[1]
    assert process.returncode == 1
    assert errors.startswith("Error: a parsing worker process died"), errors
    assert db.read_bytes() == before
    # the cache may keep the files prepared before the kill, whole: no temporary is left
    assert {p.name for p in db.parent.iterdir()} <= {"catalog.db", ".catalog.db.cache"}
    cache = cache_folder(db)
    assert not [p for p in cache.glob(".*")] if cache.exists() else True


def depth(pid, ancestor):
    """1 for a child of ancestor, 2 for a grandchild..."""
    generations = 0
    while pid not in (ancestor, 0, 1):
        try:
            pid = int(Path(f"/proc/{pid}/stat").read_text().rpartition(")")[2].split()[1])
        except OSError:
            return None
        generations += 1
    return generations if pid == ancestor else None
