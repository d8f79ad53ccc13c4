"""A new file beside its target, put in place atomically: which targets may be replaced, the
temporary file's name and lock, and fsync around the rename."""

import fcntl
import os
import re
import secrets
import stat
from collections.abc import Callable, Iterator
from contextlib import contextmanager
from pathlib import Path

TEMPORARY_SUFFIX = ".building"
# a temporary is ".<target name>.<16 hex digits>.building": the digits hold no dot, so the
# cleanup for catalog.db can never match a temporary of catalog.db.new (".catalog.db.new.<hex>")
RANDOM_HEX_DIGITS = 16
# the full-text index's side database (full_text.py), built beside the temporary
FULL_TEXT_SUFFIX = "-fts"
# the files beside the temporary a killed build may leave: SQLite's (a journal, WAL mode's)
# and the full-text side database
SIDE_FILES = ("-wal", "-shm", "-journal", FULL_TEXT_SUFFIX)
NEW_FILE_MODE = 0o644
KINDS = (
    (stat.S_ISLNK, "a symbolic link"),
    (stat.S_ISDIR, "a folder"),
    (stat.S_ISCHR, "a character device"),
    (stat.S_ISBLK, "a block device"),
    (stat.S_ISFIFO, "a named pipe"),
    (stat.S_ISSOCK, "a socket"),
)


class TargetRefused(Exception):
    """The target exists and is not a regular file: replacing it would destroy a device, a
    pipe or a folder, or swap a symbolic link for a file the link's users never see."""


# what else decides whether an existing regular file may be replaced (the build's: a catalog
# only, never an input); raises TargetRefused
TargetCheck = Callable[[Path], None]


class Temporary:
    """A new, locked, empty file beside `target`; `path` is where to write it."""

    def __init__(self, target: Path, check: TargetCheck | None = None) -> None:
        self.target = target
        self.check = check
        while True:
            self.path = target.parent / (
                f".{target.name}.{secrets.token_hex(RANDOM_HEX_DIGITS // 2)}{TEMPORARY_SUFFIX}"
            )
            self.descriptor = os.open(self.path, os.O_RDWR | os.O_CREAT | os.O_EXCL, 0o600)
            # the lock tells another build's cleanup that this file is alive
            fcntl.flock(self.descriptor, fcntl.LOCK_EX)
            # a cleanup may have removed it between its creation and the lock: start again
            if same_file(os.fstat(self.descriptor), self.path):
                return
            os.close(self.descriptor)

    def replace_target(self) -> None:
        """Give the new file the target's permissions (a new target: NEW_FILE_MODE), make its
        bytes durable, rename it over the target and make the rename durable."""
        mode = check_target(self.target, self.check)
        os.fchmod(self.descriptor, NEW_FILE_MODE if mode is None else stat.S_IMODE(mode))
        os.fsync(self.descriptor)
        os.replace(self.path, self.target)
        sync_folder(self.target.parent)

    def remove(self) -> None:
        """Remove what is left of the temporary (nothing after a replace), then unlock."""
        try:
            remove_files(str(self.path))
        finally:
            os.close(self.descriptor)


def same_file(status: os.stat_result, path: Path) -> bool:
    try:
        other = os.stat(path)
    except FileNotFoundError:
        return False
    return (status.st_dev, status.st_ino) == (other.st_dev, other.st_ino)


def check_target(target: Path, check: TargetCheck | None = None) -> int | None:
    """The target's mode, None if it does not exist; TargetRefused unless a regular file
    that `check` accepts. lstat, not stat: a link is judged itself, never the file it points
    to."""
    try:
        mode = os.lstat(target).st_mode
    except FileNotFoundError:
        return None
    for test, kind in KINDS:
        if test(mode):
            raise TargetRefused(f"it is {kind}, not a catalog file; give another --db")
    if check:
        check(target)
    return mode


def sync_folder(folder: Path) -> None:
    descriptor = os.open(folder, os.O_RDONLY | os.O_DIRECTORY)
    try:
        os.fsync(descriptor)
    finally:
        os.close(descriptor)


def remove_files(path: str) -> None:
    """The file and its SQLite side files, those that exist."""
    for name in (path, *(path + suffix for suffix in SIDE_FILES)):
        try:
            os.remove(name)
        except FileNotFoundError:
            pass


def temporary_name_pattern(target: Path) -> re.Pattern[str]:
    side_files = "|".join(map(re.escape, SIDE_FILES))
    return re.compile(
        rf"\.{re.escape(target.name)}\.[0-9a-f]{{{RANDOM_HEX_DIGITS}}}"
        rf"{re.escape(TEMPORARY_SUFFIX)}(?P<side>{side_files})?"
    )


def remove_stale_temporaries(target: Path) -> None:
    """A build killed midway leaves its temporary file (and, during the checks, its -wal and
    -shm files); the next build removes them. A temporary whose lock is held belongs to a
    build still running (into the same target) and is left alone."""
    pattern = temporary_name_pattern(target)
    stale = set()
    for entry in os.scandir(target.parent):
        if match := pattern.fullmatch(entry.name):
            stale.add(entry.path.removesuffix(match["side"] or ""))
    for path in sorted(stale):
        try:
            descriptor = os.open(path, os.O_RDONLY)
        except FileNotFoundError:  # side files whose temporary is gone
            remove_files(path)
            continue
        except OSError:  # e.g. another user's: not ours to judge
            continue
        try:
            fcntl.flock(descriptor, fcntl.LOCK_EX | fcntl.LOCK_NB)
            remove_files(path)
        except OSError:  # BlockingIOError: a running build holds it
            pass
        finally:
            os.close(descriptor)


@contextmanager
def building(
    target: str | os.PathLike[str], check: TargetCheck | None = None
) -> Iterator[Temporary]:
    """A Temporary for `target` (a Path); the target is refused before any work, and again
    before it is replaced, when it is not a regular file that `check` accepts. The temporary
    is removed on the way out, whatever happens."""
    target = Path(target)
    check_target(target, check)
    target.parent.mkdir(parents=True, exist_ok=True)
    remove_stale_temporaries(target)
    temporary = Temporary(target, check)
    try:
        yield temporary
    finally:
        temporary.remove()
