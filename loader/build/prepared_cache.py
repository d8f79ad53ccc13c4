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

A cache file is pickled data in frames, each with its length and CRC-32, after a header
holding the key: it is verified whole before a single entry is taken from it, so a
truncated or damaged file is only a miss (the input file is read again), never a traceback
or half a file's entries. Pickle loads code only from a file this build's user can write,
in a folder of their catalog: it is their own data, like the catalog. Files are written to
a locked temporary and renamed into place, so concurrent builds of one catalog only ever
see whole files (and never remove a temporary another build is still writing)."""

import contextlib
import fcntl
import functools
import gc
import hashlib
import os
import pickle
import secrets
import struct
import sys
import zlib
from collections.abc import Collection, Iterator
from pathlib import Path
from typing import IO, Any, NamedTuple

from loader.read.sources import InputFile, display_path, open_regular

MAGIC = b"paper-catalog prepared entries 1\n"
# (kind, payload bytes, CRC-32 of the payload)
FRAME = struct.Struct("<BQI")
ITEMS = 1  # a pickled list of a file's prepared items, in order
PIECE = 2  # a pickled (items, record keys) of a piece of a dump (prepare.read_pieces)
END = 3  # a pickled (format, SHA-256) of the file: last, so a file cut short is no hit
KINDS = (ITEMS, PIECE, END)
ENTRY_SUFFIX = ".prepared"
TEMPORARY_SUFFIX = ".tmp"
PROTOCOL = pickle.HIGHEST_PROTOCOL
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
    digest.update(str(PROTOCOL).encode())
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
        """Each frame's pickled payload, in order; the file is closed after the last."""
        try:
            for _, offset, size in self.frames:
                yield os.pread(self.file.fileno(), size, offset)
        finally:
            self.file.close()


class PreparedCache:
    """The prepared entries of one catalog's input files, in `folder`, for one set of build
    options."""

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
        """The cached source of a key, verified whole; None when missing, cut short or
        damaged in any way."""
        try:
            # open until its items are taken (CachedSource.payloads closes it)
            file = open(self.folder / key.name, "rb")  # noqa: SIM115
        except OSError:
            return None
        try:
            cached = read_verified(file, key)
        except (OSError, ValueError, EOFError, pickle.UnpicklingError, struct.error):
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


def read_verified(file: IO[bytes], key: CacheKey) -> CachedSource | None:
    """Every frame of a cache file checked against its CRC-32, up to an END frame that
    closes the file and names the content the key was made from."""
    header = MAGIC + key.name.encode() + b"\n"
    if file.read(len(header)) != header:
        return None
    frames: list[tuple[int, int, int]] = []
    offset = len(header)
    while True:
        head = file.read(FRAME.size)
        if len(head) < FRAME.size or FRAME.unpack(head)[0] not in KINDS:
            return None  # cut short before its END frame, or damaged
        kind, size, crc = FRAME.unpack(head)
        offset += FRAME.size
        running = checked = 0
        last = b""
        while checked < size:  # in parts: a length damaged into terabytes allocates nothing
            last = file.read(min(READ_BYTES, size - checked))
            if not last:
                return None
            running = zlib.crc32(last, running)
            checked += len(last)
        if running != crc:
            return None
        if kind == END:
            if size > READ_BYTES or file.read(1):
                return None
            format, sha256 = pickle.loads(last)
            if sha256 != key.sha256:
                return None
            return CachedSource(file, format, sha256, frames)
        frames.append((kind, offset, size))
        offset += size


def loaded(payload: bytes) -> Any:
    """Unpickled with the cyclic garbage collector paused: a frame is thousands of tuples
    and none in a cycle, and the collections their allocation would start visit all the
    build's objects."""
    if not gc.isenabled():
        return pickle.loads(payload)
    gc.disable()
    try:
        return pickle.loads(payload)
    finally:
        gc.enable()


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
            cache.folder.mkdir(parents=True, exist_ok=True)
            descriptor = os.open(self.path, os.O_WRONLY | os.O_CREAT | os.O_EXCL, 0o600)
            # the lock tells another build's prune that this file is alive
            fcntl.flock(descriptor, fcntl.LOCK_EX)
            self.file = os.fdopen(descriptor, "wb")
            self.file.write(MAGIC + key.name.encode() + b"\n")
        except OSError:
            self.discard()

    def add(self, kind: int, payload: bytes) -> None:
        if self.file is None:
            return
        try:
            self.file.write(FRAME.pack(kind, len(payload), zlib.crc32(payload)))
            self.file.write(payload)
        except OSError:
            self.discard()

    def add_items(self, items: list[Any]) -> None:
        self.add(ITEMS, pickle.dumps(items, PROTOCOL))

    def commit(self, format: str | None, sha256: str) -> None:
        """The file in place, when it was read as its key says (a file changed while the
        build read it is not cached)."""
        if self.file is None:
            return
        if sha256 != self.key.sha256:
            self.discard()
            return
        self.add(END, pickle.dumps((format, sha256), PROTOCOL))
        if self.file is None:
            return
        try:
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
