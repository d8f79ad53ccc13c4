"""Prepared entries kept per input file beside the catalog, so that a rebuild reads and
prepares only the files that changed (the CPU-heavy half of a build; prepare.py).

The folder is `.<catalog name>.cache/` next to the catalog, never a cache shared between
catalogs. Each file in it holds what the prepare step gave for one input file, under a name
that is a digest of everything that result depends on: the file's path as shown and its
content (SHA-256), the sources.yml settings and problems it carries, the build's options
(--format, --arxiv-category) and a fingerprint of the code that prepares (the loader's
source files but the web and serve stages, the versions of the parsers it uses, Python's
version). Change any of them and the name changes, so a stale entry is never read; entries
no build of this catalog asked for are removed at the end of the stream.

A cache file is data, never code: JSON in frames, each with its length, after a header
holding the key, and last a keyed BLAKE2b digest of all of it under a secret only this
folder's builds know (its `entries.key`). A file is verified whole before a single entry is
taken from it, so a truncated, damaged or planted file (whatever its frames hold) is only a
miss: the input file is read again, never a traceback, half a file's entries or another
file's. The folder is made private to its user (0700) and used only while it and every file
in it are the user's own and writable by no one else; otherwise the build warns and reads
every file (a cold build), storing nothing. Files are written to a locked temporary and
renamed into place, so concurrent builds of one catalog only ever see whole files (and
never remove a temporary another build is still writing)."""

import contextlib
import fcntl
import functools
import hashlib
import hmac
import json
import os
import secrets
import stat
import struct
import sys
from collections.abc import Collection, Iterable, Iterator, Sequence
from pathlib import Path
from typing import IO, Any, NamedTuple

from loader.build.collector import collector_paused
from loader.read.sources import InputFile, display_path, open_regular
from loader.records import Affiliation, LeftOut, PreparedEntry, Problem, Track

MAGIC = b"paper-catalog prepared entries 3\n"
# (kind, payload bytes)
FRAME = struct.Struct("<BQ")
ITEMS = 1  # a file's prepared items, in order (encode_items)
PIECE = 2  # the items and record keys of a piece of a dump (encode_piece, prepare.read_pieces)
END = 3  # [format, SHA-256] of the file: last, so a file cut short is no hit
KINDS = (ITEMS, PIECE, END)
# after the END frame: the keyed digest of everything before it
DIGEST_BYTES = 32
ENTRY_SUFFIX = ".prepared"
TEMPORARY_SUFFIX = ".tmp"
# the folder's secret: 32 random bytes, readable by its user alone
SECRET_NAME = "entries.key"
SECRET_BYTES = 32
FOLDER_MODE = 0o700
# group or others may write: whoever can may plant a file (or swap the secret)
SHARED_WRITE = stat.S_IWGRP | stat.S_IWOTH
# what prepares entries: every stage of the loader but the site's (web/, serve/)
PREPARING_CODE = Path(__file__).resolve().parent.parent
NOT_PREPARING = ("web", "serve")
# the parsers the rules hand text to: a new version may read markup differently
PARSERS = ("pylatexenc", "latex2mathml", "markdown-it-py", "nh3", "pyyaml")
READ_BYTES = 1 << 20


def cache_folder(db_path: str | os.PathLike[str]) -> Path:
    """The cache of the catalog at db_path: a hidden folder beside it."""
    path = Path(db_path)
    return path.parent / f".{path.name}.cache"


@functools.cache
def code_fingerprint() -> bytes:
    """A digest of the code a prepared entry comes from."""
    import importlib.metadata  # only here: its import costs every build's start

    digest = hashlib.blake2b(digest_size=16)
    digest.update(sys.version.encode())
    digest.update(MAGIC)
    for name in PARSERS:
        try:
            version = importlib.metadata.version(name)
        except importlib.metadata.PackageNotFoundError:
            version = ""
        digest.update(f"\0{name}={version}".encode())
    for path in sorted(PREPARING_CODE.rglob("*.py")):
        relative = path.relative_to(PREPARING_CODE)
        if relative.parts[0] in NOT_PREPARING:
            continue
        digest.update(f"\0{relative}\0".encode())
        digest.update(path.read_bytes())
    return digest.digest()


def file_sha256(path: str | os.PathLike[str]) -> str | None:
    """The SHA-256 of a regular file's content; None for what the reader refuses or cannot
    read (it reports that itself, and such a file is never cached)."""
    try:
        file = open_regular(path)
        if file is None:
            return None
        with file:
            return hashlib.file_digest(file, "sha256").hexdigest()
    except OSError:
        return None


# -- the data: prepared items as JSON ----------------------------------------------------------
# an entry is its fields as a JSON array (a NamedTuple is written as one, the Track and
# Affiliations inside it too); a problem and a record left out are objects, told apart by
# their one key
PreparedItem = PreparedEntry | Problem | LeftOut


def plain_item(item: PreparedItem) -> object:
    if type(item) is PreparedEntry:
        return item
    if isinstance(item, Problem):
        return {"problem": [item.path, item.line, item.message]}
    return {"left_out": list(item)}


def encode_items(items: Iterable[PreparedItem]) -> bytes:
    """Prepared items as the bytes of one JSON array."""
    return json.dumps(
        [plain_item(item) for item in items], separators=(",", ":"), check_circular=False
    ).encode()


def encode_piece(items: Sequence[PreparedItem], keys: Iterable[int]) -> bytes:
    """The items of a piece of a dump and each one's record key (0 for a problem)."""
    return json.dumps(
        {"items": [plain_item(item) for item in items], "keys": list(keys)},
        separators=(",", ":"),
        check_circular=False,
    ).encode()


# where a PreparedEntry's fields that JSON gives back as arrays are in its array
AUTHORS, POSITIONS, TRACK, AFFILIATIONS, VERSION_KEYS, KEYWORDS, CATEGORIES, LINKS, AUTHOR_IDS = (
    PreparedEntry._fields.index(name)
    for name in (
        "authors",
        "positions",
        "track",
        "affiliations",
        "version_keys",
        "keywords",
        "categories",
        "links",
        "author_ids",
    )
)


def read_item(value: Any) -> PreparedItem:
    """An item from its JSON: an entry's arrays made the tuples (a Track, Affiliations) and
    the list it had, in place, then the array made the entry."""
    if type(value) is not list:
        if "problem" in value:
            return Problem(*value["problem"])
        return LeftOut(*value["left_out"])
    value[AUTHORS] = tuple(map(tuple, value[AUTHORS]))
    value[POSITIONS] = tuple(value[POSITIONS])
    if value[TRACK]:
        value[TRACK] = Track(*value[TRACK])
    value[AFFILIATIONS] = tuple([Affiliation(*fields) for fields in value[AFFILIATIONS]])
    value[VERSION_KEYS] = list(map(tuple, value[VERSION_KEYS]))
    value[KEYWORDS] = tuple(value[KEYWORDS])
    value[CATEGORIES] = tuple(value[CATEGORIES])
    if value[LINKS]:
        value[LINKS] = tuple(map(tuple, value[LINKS]))
    else:
        value[LINKS] = ()
    if value[AUTHOR_IDS]:
        value[AUTHOR_IDS] = tuple([tuple(map(tuple, ids)) for ids in value[AUTHOR_IDS]])
    else:
        value[AUTHOR_IDS] = ()
    return PreparedEntry._make(value)


def decode_items(payload: bytes) -> list[PreparedItem]:
    """The items encode_items wrote."""
    # a frame is thousands of tuples and none in a cycle
    with collector_paused():
        return [read_item(value) for value in json.loads(payload)]


def decode_piece(payload: bytes) -> tuple[list[PreparedItem], list[int]]:
    """The items and record keys encode_piece wrote."""
    # a frame is thousands of tuples and none in a cycle
    with collector_paused():
        piece = json.loads(payload)
        return [read_item(value) for value in piece["items"]], piece["keys"]


# -- the folder -----------------------------------------------------------------------------


class CacheRefused(Exception):
    """The folder is not private to this user: using it could take another user's data."""


def check_private(status: os.stat_result, what: str) -> None:
    if status.st_uid != os.geteuid():
        raise CacheRefused(f"{what} is owned by another user (uid {status.st_uid})")
    if status.st_mode & SHARED_WRITE:
        raise CacheRefused(f"{what} is writable by other users")


def private_folder(folder: Path) -> None:
    """The folder made (0700) or found private: the user's own folder, not a link, and it and
    every file in it writable by no one else; CacheRefused otherwise."""
    try:
        os.mkdir(folder, FOLDER_MODE)
    except FileExistsError:
        pass
    status = os.lstat(folder)
    if not stat.S_ISDIR(status.st_mode):
        raise CacheRefused(f"{folder} is not a folder")
    check_private(status, str(folder))
    if stat.S_IMODE(status.st_mode) != FOLDER_MODE:  # an older build's: readable by all
        os.chmod(folder, FOLDER_MODE)
    with os.scandir(folder) as entries:
        for entry in entries:
            check_private(entry.stat(follow_symlinks=False), f"{entry.path} in it")


def read_secret(folder: Path) -> bytes:
    """The folder's secret, made on its first use: the key of every file's digest."""
    path = folder / SECRET_NAME
    try:
        descriptor = os.open(path, os.O_RDONLY | os.O_NOFOLLOW)
    except FileNotFoundError:
        # written whole to a temporary, then linked into place: a build that loses the race
        # to another reads the winner's
        temporary = folder / f".{secrets.token_hex(8)}{TEMPORARY_SUFFIX}"
        descriptor = os.open(temporary, os.O_WRONLY | os.O_CREAT | os.O_EXCL, 0o600)
        try:
            os.write(descriptor, secrets.token_bytes(SECRET_BYTES))
            os.fsync(descriptor)
        finally:
            os.close(descriptor)
        try:
            os.link(temporary, path)
        except FileExistsError:
            pass
        finally:
            os.remove(temporary)
        descriptor = os.open(path, os.O_RDONLY | os.O_NOFOLLOW)
    try:
        status = os.fstat(descriptor)
        check_private(status, str(path))
        if status.st_mode & (stat.S_IRGRP | stat.S_IROTH):
            raise CacheRefused(f"{path} is readable by other users")
        secret = os.read(descriptor, SECRET_BYTES + 1)
    finally:
        os.close(descriptor)
    if len(secret) != SECRET_BYTES:
        raise CacheRefused(f"{path} is not a key of this cache")
    return secret


# -- the cache --------------------------------------------------------------------------------


class CacheKey(NamedTuple):
    name: str  # the cache file's name: a digest of everything below and the options
    sha256: str  # of the input file's content when the key was made


class CachedSource:
    """A verified cache file, open: the source's format and SHA-256, and its frames, read
    again one at a time (a large dump's cache is never held whole)."""

    def __init__(
        self, file: IO[bytes], format: str | None, sha256: str, frames: list[tuple[int, int, int]]
    ) -> None:
        self.file = file
        self.format = format
        self.sha256 = sha256
        self.frames = frames  # (kind, offset, size) of each ITEMS or PIECE frame
        self.pieces = any(kind == PIECE for kind, _, _ in frames)

    def payloads(self) -> Iterator[bytes]:
        """Each frame's payload, in order; the file is closed after the last. The file was
        renamed into place whole and is never written again: these are the bytes verified."""
        try:
            for _, offset, size in self.frames:
                yield os.pread(self.file.fileno(), size, offset)
        finally:
            self.file.close()


class PreparedCache:
    """The prepared entries of one catalog's input files, in `folder`, for one set of build
    options. Call `open` first: a folder it refuses is not used at all."""

    def __init__(
        self,
        folder: str | os.PathLike[str],
        forced_format: str | None = None,
        arxiv_categories: Collection[str] = (),
    ) -> None:
        self.folder = Path(folder)
        self.options = repr((forced_format, sorted(arxiv_categories))).encode()
        self.used: set[str] = set()
        self.hits = 0
        self.stored = 0
        self.secret = b""

    def open(self) -> None:
        """Check the folder and read its secret; CacheRefused (or OSError) when it cannot be
        used. A folder not there yet is made by the first file stored (a build that fails
        before leaves nothing)."""
        if os.path.lexists(self.folder):
            self.make_ready()

    def make_ready(self) -> None:
        private_folder(self.folder)
        self.secret = read_secret(self.folder)

    def digest(self) -> hashlib.blake2b:
        return hashlib.blake2b(key=self.secret, digest_size=DIGEST_BYTES)

    def key(self, file: str | os.PathLike[str]) -> CacheKey | None:
        """The key of a file's prepared entries as it is now; None when it cannot be read."""
        sha256 = file_sha256(file)
        if sha256 is None:
            return None
        digest = hashlib.blake2b(code_fingerprint(), digest_size=20)
        settings = (file.settings, file.config_problems) if isinstance(file, InputFile) else None
        for part in (display_path(file).encode(), sha256.encode(), self.options):
            digest.update(b"\0" + part)
        digest.update(b"\0" + repr(settings).encode())
        name = digest.hexdigest() + ENTRY_SUFFIX
        self.used.add(name)
        return CacheKey(name, sha256)

    def holds(self, key: CacheKey | None) -> bool:
        return key is not None and (self.folder / key.name).is_file()

    def load(self, key: CacheKey) -> CachedSource | None:
        """The cached source of a key, verified whole; None when missing, cut short, damaged
        or not this folder's own in any way."""
        if not self.secret:
            return None
        try:
            descriptor = os.open(self.folder / key.name, os.O_RDONLY | os.O_NOFOLLOW)
        except OSError:
            return None
        # open until its items are taken (CachedSource.payloads closes it)
        file = os.fdopen(descriptor, "rb")
        try:
            status = os.fstat(descriptor)
            check_private(status, key.name)
            cached = (
                read_verified(file, key, self.digest()) if stat.S_ISREG(status.st_mode) else None
            )
        except (OSError, ValueError, KeyError, TypeError, struct.error, CacheRefused):
            cached = None
        if cached is None:
            file.close()
            return None
        self.hits += 1
        return cached

    def recorder(self, key: CacheKey) -> "Recorder":
        return Recorder(self, key)

    def prune(self) -> None:
        """Remove the entries no file of this build used, and temporaries no running build
        is writing (a killed build's)."""
        try:
            entries = list(os.scandir(self.folder))
        except OSError:
            return
        for entry in entries:
            if entry.name.endswith(ENTRY_SUFFIX) and entry.name not in self.used:
                with contextlib.suppress(OSError):
                    os.remove(entry.path)
            elif entry.name.endswith(TEMPORARY_SUFFIX):
                remove_if_unlocked(entry.path)


def read_verified(file: IO[bytes], key: CacheKey, digest: hashlib.blake2b) -> CachedSource | None:
    """The frames of a cache file, up to an END frame that names the content the key was made
    from, and the keyed digest of all of it after that: only then is any payload decoded."""
    header = MAGIC + key.name.encode() + b"\n"
    if file.read(len(header)) != header:
        return None
    digest.update(header)
    frames: list[tuple[int, int, int]] = []
    offset = len(header)
    while True:
        head = file.read(FRAME.size)
        if len(head) < FRAME.size or FRAME.unpack(head)[0] not in KINDS:
            return None  # cut short before its END frame, or damaged
        digest.update(head)
        kind, size = FRAME.unpack(head)
        offset += FRAME.size
        checked = 0
        last = b""
        while checked < size:  # in parts: a length damaged into terabytes allocates nothing
            last = file.read(min(READ_BYTES, size - checked))
            if not last:
                return None
            digest.update(last)
            checked += len(last)
        if kind == END:
            if size > READ_BYTES or not hmac.compare_digest(
                file.read(DIGEST_BYTES + 1), digest.digest()
            ):
                return None
            format, sha256 = json.loads(last)
            if sha256 != key.sha256 or not isinstance(format, str | None):
                return None
            return CachedSource(file, format, sha256, frames)
        frames.append((kind, offset, size))
        offset += size


def remove_if_unlocked(path: str) -> None:
    try:
        descriptor = os.open(path, os.O_RDONLY)
    except OSError:
        return
    try:
        fcntl.flock(descriptor, fcntl.LOCK_EX | fcntl.LOCK_NB)
        os.remove(path)
    except OSError:  # BlockingIOError: a running build is writing it
        pass
    finally:
        os.close(descriptor)


class Recorder:
    """One cache file being written: frames go to a locked temporary that `commit` renames
    into place. Writing never fails a build: after an error the file is dropped."""

    def __init__(self, cache: PreparedCache, key: CacheKey) -> None:
        self.cache = cache
        self.key = key
        self.file: IO[bytes] | None = None
        self.path = cache.folder / f".{secrets.token_hex(8)}{TEMPORARY_SUFFIX}"
        try:
            if not cache.secret:
                cache.make_ready()
            self.digest = cache.digest()
            descriptor = os.open(self.path, os.O_WRONLY | os.O_CREAT | os.O_EXCL, 0o600)
            # the lock tells another build's prune that this file is alive
            fcntl.flock(descriptor, fcntl.LOCK_EX)
            self.file = os.fdopen(descriptor, "wb")
            self.write(MAGIC + key.name.encode() + b"\n")
        except (OSError, CacheRefused):
            self.discard()

    def write(self, data: bytes) -> None:
        assert self.file is not None  # the callers check
        self.file.write(data)
        self.digest.update(data)

    def add(self, kind: int, payload: bytes) -> None:
        if self.file is None:
            return
        try:
            self.write(FRAME.pack(kind, len(payload)))
            self.write(payload)
        except OSError:
            self.discard()

    def add_items(self, items: list[Any]) -> None:
        self.add(ITEMS, encode_items(items))

    def commit(self, format: str | None, sha256: str) -> None:
        """The file in place, when it was read as its key says (a file changed while the
        build read it is not cached)."""
        if self.file is None:
            return
        if sha256 != self.key.sha256:
            self.discard()
            return
        self.add(END, json.dumps([format, sha256]).encode())
        if self.file is None:
            return
        try:
            self.file.write(self.digest.digest())
            self.file.flush()
            # renamed while locked: no prune removes it between
            os.replace(self.path, self.cache.folder / self.key.name)
            self.file.close()
            self.file = None
            self.cache.stored += 1
        except OSError:
            self.discard()

    def discard(self) -> None:
        if self.file is not None:
            with contextlib.suppress(OSError):
                self.file.close()
            self.file = None
        with contextlib.suppress(OSError):
            os.remove(self.path)
