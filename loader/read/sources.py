"""Find input files, detect each one's format and hand it to its parser."""

import dataclasses
import hashlib
import io
import os
import stat
import time
from collections.abc import Callable, Collection, Iterable, Iterator, Sequence
from dataclasses import dataclass
from pathlib import Path

from loader.read.arxiv_snapshot import keep_categories, parse_arxiv_snapshot
from loader.read.json_stream import broken_first_record, first_record
from loader.read.jsonl import parse_jsonl
from loader.read.lines import LISTING_MARKER, is_too_long, line_problem, read_lines
from loader.read.listing import parse_listing
from loader.read.openreview import parse_openreview
from loader.read.paperlists import parse_paperlists, venue_of_file
from loader.read.profile import find_owner, parse_profile
from loader.read.source_config import CONFIG_NAME, SourceSettings, load_source_config
from loader.records import Entry, LeftOut, Problem

Parser = Callable[[str, Sequence[str]], Iterator[Entry | Problem]]
PARSERS: dict[str, Parser] = {
    "listing": parse_listing,
    "profile": parse_profile,
    "jsonl": parse_jsonl,
}
# the public dumps: streamed from the file, never read into a list of lines
DumpParser = Callable[[str, str | os.PathLike[str]], Iterator[Entry | Problem]]
DUMP_PARSERS: dict[str, DumpParser] = {
    "paperlists": parse_paperlists,
    "arxiv": parse_arxiv_snapshot,
    "openreview": parse_openreview,
}
FORMATS = (*PARSERS, *DUMP_PARSERS)
# enough of a file to hold its first record, whatever the dump
DUMP_HEAD_CHARACTERS = 4 << 20
UNKNOWN_FORMAT = (
    "unknown format: expected a listing page (first line 论文检索), "
    "an author profile page (first line a name), JSON Lines, a Paper Copilot list, "
    "an arXiv metadata snapshot or OpenReview notes"
)


@dataclass
class Source:
    path: str
    format: str | None
    sha256: str


@dataclass(frozen=True)
class InputFile:
    """A file to read, with the venue, year and status sources.yml gives it. The first file
    of a build also carries the problems of the sources.yml files, so that check and build
    report them (and a strict build fails on them) like any other problem; they name
    sources.yml:LINE, and the build counts them against no input file (`sources.problems`)."""

    path: Path
    settings: SourceSettings | None = None
    config_problems: tuple[Problem, ...] = ()

    def __fspath__(self) -> str:
        return os.fspath(self.path)

    def __str__(self) -> str:
        return str(self.path)


def plan_inputs(paths: Sequence[str | os.PathLike[str]]) -> list[InputFile]:
    """The input files under the given files and folders, each with its sources.yml settings."""
    files = discover(paths)
    config = load_source_config(paths, files)
    return [
        InputFile(file, config.settings.get(str(file)), tuple(config.problems) if i == 0 else ())
        for i, file in enumerate(files)
    ]


def discover(paths: Iterable[str | os.PathLike[str]]) -> list[Path]:
    """Every non-hidden file under the given files and folders, sorted so that the build
    does not depend on the order paths were given in.

    Linked folders are followed but each real folder is read once, so a link back up the
    tree cannot loop. A folder that cannot be listed is returned as if it were a file: reading
    it then reports why, instead of its files vanishing without a word. sources.yml is
    configuration (source_config.py), never an input file.
    """
    found: dict[str, Path] = {}  # real path -> the path shown
    visited = set()

    def add(path: Path) -> None:
        # the same file reached twice (a path and a link to it) is one source
        real = os.path.realpath(path)
        if real not in found or str(path) < str(found[real]):
            found[real] = path

    for path in map(Path, paths):
        if not path.is_dir():
            if path.name != CONFIG_NAME:
                add(path)
            continue
        walk = os.walk(path, onerror=lambda error: add(Path(error.filename)), followlinks=True)
        for root, dirs, files in walk:
            real = os.path.realpath(root)
            if real in visited:
                dirs[:] = []
                continue
            visited.add(real)
            dirs[:] = [d for d in dirs if not d.startswith(".")]
            for name in files:
                if not name.startswith(".") and name != CONFIG_NAME:
                    add(Path(root, name))
    return sorted(found.values(), key=str)


def detect_format(lines: Sequence[str]) -> str | None:
    # a line too long to read is reported by the parser; the format is told by the next one
    first = next((line.strip() for line in lines if line.strip() and not is_too_long(line)), "")
    if first == LISTING_MARKER:
        return "listing"
    if first.startswith("{"):
        return "jsonl"
    if find_owner(lines) is not None:
        return "profile"
    return None


def detect_dump(record: object) -> str | None:
    """Which public dump a file is, told by its first record's keys; None for any other JSON
    (our own JSON Lines among them)."""
    if not isinstance(record, dict):
        return None
    if isinstance(record.get("content"), dict):
        return "openreview"
    if "authors_parsed" in record or ("versions" in record and "id" in record):
        return "arxiv"
    if "author" in record and "authors" not in record and ("site" in record or "aff" in record):
        return "paperlists"
    return None


def source_date(path: str | os.PathLike[str]) -> str | None:
    """The date of a file's content: its sources.yml `as_of` ("2025-11", "2025-11-03"), else
    its modification date (YYYY-MM-DD, UTC); None for a file that cannot be read (reading it
    reports why). A dump's records carry no date of their own."""
    settings = path.settings if isinstance(path, InputFile) else None
    if settings and settings.as_of:
        return settings.as_of
    try:
        modified = os.stat(path).st_mtime
    except OSError:
        return None
    return time.strftime("%Y-%m-%d", time.gmtime(modified))


def display_path(path: str | os.PathLike[str]) -> str:
    """The path as text SQLite and a terminal can hold: undecodable bytes of a file name
    are shown as \\xNN escapes."""
    return str(path).encode("utf-8", "surrogateescape").decode("utf-8", "backslashreplace")


def public_paths(names: Sequence[str]) -> dict[str, str]:
    """{display path: the path the catalog stores} for the input files' display paths. No
    absolute path is stored, so a published catalog never shows the builder's folders:

    - a relative path stays as given (it was typed from the folder the build ran in);
    - an absolute path inside the current folder becomes relative to it;
    - the other absolute paths become relative to the deepest folder they all share (one
      folder given: paths inside it; one file: its name), or are their file names alone when
      they share only the root folder.
    """
    here = os.path.join(os.getcwd(), "")
    outside = [n for n in names if os.path.isabs(n) and not n.startswith(here)]
    common = os.path.commonpath([os.path.dirname(n) for n in outside]) if outside else ""
    public = {}
    for name in names:
        if not os.path.isabs(name):
            public[name] = name
        elif name.startswith(here):
            public[name] = name.removeprefix(here)
        elif common == os.path.dirname(common):  # only "/" in common
            public[name] = os.path.basename(name)
        else:
            public[name] = os.path.relpath(name, common)
    return public


def open_regular(path: str | os.PathLike[str]) -> io.BufferedReader | None:
    """The file, open for reading; None for pipes, devices and folders: they are refused, never
    read (a pipe would block the build forever and /dev/zero would fill the memory)."""
    descriptor = os.open(path, os.O_RDONLY | os.O_NONBLOCK)
    if not stat.S_ISREG(os.fstat(descriptor).st_mode):
        os.close(descriptor)
        return None
    return os.fdopen(descriptor, "rb")


def read_source(
    path: str | os.PathLike[str],
    forced_format: str | None = None,
    arxiv_categories: Collection[str] = (),
) -> tuple[Source, Iterator[Entry | Problem | LeftOut]]:
    """Parse one file (a path or an InputFile). Returns (Source, iterator of Entry | Problem |
    LeftOut): see with_read_settings."""
    source, items = parse_source(path, forced_format)
    return source, with_read_settings(path, source, items, arxiv_categories)


def with_read_settings(
    path: str | os.PathLike[str],
    source: Source,
    items: Iterable[Entry | Problem],
    arxiv_categories: Collection[str] = (),
) -> Iterator[Entry | Problem | LeftOut]:
    """A file's items with the venue, year and status of its sources.yml entry (or of a
    Paper Copilot file's name), the sources.yml problems an InputFile carries first; an arXiv
    snapshot's records outside the categories its sources.yml entry names, else outside
    `arxiv_categories` (if any), as LeftOut."""
    settings = path.settings if isinstance(path, InputFile) else None
    if source.format == "paperlists" and not (settings and (settings.venue or settings.year)):
        # a sources.yml entry giving only the dump's date (as_of) keeps the name's venue
        named = settings_of_file_name(source.path)
        if settings is None:
            settings = named
        elif named:
            settings = dataclasses.replace(settings, venue=named.venue, year=named.year)
    if isinstance(path, InputFile) or settings:
        problems = path.config_problems if isinstance(path, InputFile) else ()
        items = with_settings(items, settings, problems)
    kept = (settings and settings.arxiv_categories) or arxiv_categories
    if source.format == "arxiv" and kept:
        return keep_categories(items, kept)
    return iter(items)


def settings_of_file_name(name: str) -> SourceSettings | None:
    """A Paper Copilot file's venue and year, from its name (iclr2024.json -> ICLR 2024)."""
    venue_year = venue_of_file(name)
    return SourceSettings(*venue_year) if venue_year else None


def with_settings(
    items: Iterable[Entry | Problem],
    settings: SourceSettings | None,
    config_problems: Iterable[Problem],
) -> Iterator[Entry | Problem]:
    """sources.yml's venue, year and status for every entry that does not give its own (a
    JSON Lines key wins, field by field)."""
    yield from config_problems
    for item in items:
        if settings and isinstance(item, Entry):
            item.venue = item.venue or settings.venue
            item.year = item.year or settings.year
            item.status = item.status or settings.status
        yield item


def parse_source(
    path: str | os.PathLike[str], forced_format: str | None = None
) -> tuple[Source, Iterator[Entry | Problem]]:
    name = display_path(path)
    try:
        fp = open_regular(path)
        if fp is None:
            message = "not a regular file (a folder, pipe or device)"
            return Source(name, None, ""), iter([Problem(name, 1, message)])
        with fp:
            digest = hashlib.file_digest(fp, "sha256").hexdigest()
            fp.seek(0)
            dump = forced_format if forced_format in DUMP_PARSERS else None
            if forced_format is None:
                dump = detect_dump(first_record(fp, DUMP_HEAD_CHARACTERS))
                fp.seek(0)
                broken = None if dump else broken_first_record(fp, DUMP_HEAD_CHARACTERS)
                if broken:
                    message = f"{UNKNOWN_FORMAT}; line {broken.line}: {broken.message}"
                    return Source(name, None, digest), iter([Problem(name, 1, message)])
            if dump:
                items = report_if_no_records(name, DUMP_PARSERS[dump](name, path))
                return Source(name, dump, digest), items
            fp.seek(0)
            lines, problem = read_lines(name, fp)
    except OSError as error:
        reason = error.strerror or str(error)
        return Source(name, None, ""), iter([Problem(name, 1, f"cannot read: {reason}")])
    if problem:
        return Source(name, None, digest), iter([problem])
    format = forced_format or detect_format(lines)
    if format is None:
        message = UNKNOWN_FORMAT
        too_long = next((n for n, line in enumerate(lines, start=1) if is_too_long(line)), None)
        too_long_problem = too_long and line_problem(name, too_long, lines[too_long - 1])
        if too_long_problem:
            message += f"; line {too_long}: {too_long_problem.message}"
        return Source(name, None, digest), iter([Problem(name, 1, message)])
    return Source(name, format, digest), report_if_empty(name, lines, PARSERS[format](name, lines))


def report_if_empty(
    name: str, lines: Sequence[str], items: Iterable[Entry | Problem]
) -> Iterator[Entry | Problem]:
    """A page with a header and nothing after it (a download cut short) is a problem, not
    a source that silently adds no papers."""
    empty = True
    for item in items:
        empty = False
        yield item
    if empty:
        header = next((n for n, line in enumerate(lines, start=1) if line.strip()), 1)
        yield Problem(name, header, "no papers after the header")


def report_if_no_records(name: str, items: Iterable[Entry | Problem]) -> Iterator[Entry | Problem]:
    """A dump with no record at all (`[]`) is a problem, like a page with only its header."""
    empty = True
    for item in items:
        empty = False
        yield item
    if empty:
        yield Problem(name, 1, "no papers in the file")


def check_sources(
    files: Iterable[str | os.PathLike[str]], forced_format: str | None = None
) -> tuple[int, list[Problem]]:
    """Parse everything and return (entry count, problems) without writing anything (records
    a sources.yml leaves out are no entries)."""
    entries, problems = 0, []
    for file in files:
        for item in read_source(file, forced_format)[1]:
            if isinstance(item, Problem):
                problems.append(item)
            elif isinstance(item, Entry):
                entries += 1
    return entries, problems
