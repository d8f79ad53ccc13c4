"""Input files -> prepared entries, in order: each entry read and normalized by the pure rules
(plain text, label, paper id, author keys and spellings, track, affiliations, version keys),
so that the writer only writes. The CPU-heavy half of a build, run in worker processes when
the input is large."""

import collections
import concurrent.futures
import functools
import gc
import multiprocessing
import os
import signal
import threading
from collections.abc import Generator, Iterable

from loader.lifetime import die_with_parent
from loader.read.lines import MAX_CACHED_NAME_LENGTH, NAME_CACHE_SIZE
from loader.read.sources import Source, read_source
from loader.records import Affiliation, AuthorName, Entry, PreparedEntry, Problem, Track
from loader.rules.labels import derive_label
from loader.rules.markup import plain_text
from loader.rules.merge import TITLE, identifying_title, version_keys
from loader.rules.names import name_key, spelling
from loader.rules.normalize import affiliation_name, affiliation_slug, paper_id, split_track

# parsing and normalizing is pure, per file, and most of the CPU time: worker processes do it
# while this one writes SQLite. Below this much input starting them costs more than it saves.
PARALLEL_MIN_BYTES = 8_000_000
FILES_IN_FLIGHT = 2  # per worker: memory stays bounded whatever the corpus size
MAX_WORKERS = 2
# tracks and affiliations are few and recur in most entries: each spelling is read once
# while among the last this many
SPELLING_CACHE_SIZE = 4096
# an input file: a path, or read.sources' InputFile (a path with its sources.yml settings)
InputPath = str | os.PathLike[str]


def prepare_entry(item: Entry | Problem) -> PreparedEntry | Problem:
    """An entry normalized for the writer (see PreparedEntry); problems pass through."""
    if isinstance(item, Problem):
        return item
    text = plain_text(item.abstract)
    keys = version_keys(item, text)
    authors, positions = author_links(item)
    return PreparedEntry(
        entry_paper_id(item),
        item.line,
        item.title or derive_label(text),
        item.title,
        item.abstract,
        # None where the plain text is the abstract itself: a worker then sends the text once
        None if text == item.abstract else text,
        authors,
        positions,
        item.truncated,
        read_track(item.track) if item.track else None,
        read_affiliations(item.affiliations),
        item.url,
        item.venue,
        item.year,
        item.status,
        keys,
        next((key for kind, key in keys if kind == TITLE), None),
    )


def entry_paper_id(entry: Entry) -> str:
    """An entry's paper id: its abstract's, with its title's words where it has a title."""
    return paper_id(entry.abstract, identifying_title(entry.title))


def author_links(entry: Entry) -> tuple[tuple[AuthorName, ...], tuple[int | None, ...]]:
    """(authors, their positions), one author a name key, in the order the source lists
    them; the profile owner last with no position when the cut-short list does not show
    them."""
    authors: list[AuthorName] = []
    positions: list[int | None] = []
    seen = set()
    for position, name in enumerate(entry.authors, start=1):
        # read_author_name, inlined: it runs for every name of every entry
        if len(name) > MAX_CACHED_NAME_LENGTH:
            author = name_key(name), spelling(name)
        else:
            author = read_recurring_author_name(name)
        if author[0] not in seen:
            seen.add(author[0])
            authors.append(author)
            positions.append(position)
    if entry.owner:
        author = read_author_name(entry.owner)
        if author[0] not in seen:
            authors.append(author)
            positions.append(None)
    return tuple(authors), tuple(positions)


def read_author_name(name: str) -> AuthorName:
    """(name key, spelling) of a name as an entry gives it."""
    if len(name) > MAX_CACHED_NAME_LENGTH:
        return name_key(name), spelling(name)
    return read_recurring_author_name(name)


# a name recurs in many entries: read once while among the last NAME_CACHE_SIZE (the one
# tuple is then also pickled once a file, when a worker sends the file's entries)
@functools.lru_cache(maxsize=NAME_CACHE_SIZE)
def read_recurring_author_name(name: str) -> AuthorName:
    return name_key(name), spelling(name)


@functools.lru_cache(maxsize=SPELLING_CACHE_SIZE)
def read_track(text: str) -> Track | None:
    """A track as an entry gives it, split into name, area and subarea; None where no name
    is left (only spaces)."""
    name, area, subarea = split_track(text)
    return Track(name, area, subarea) if name else None


def read_affiliations(texts: Iterable[str]) -> tuple[Affiliation, ...]:
    """One affiliation a slug, in the order given; those with an empty slug dropped."""
    slugs: dict[str, Affiliation] = {}
    for text in texts:
        affiliation = read_affiliation(text)
        if affiliation:
            slugs.setdefault(affiliation.slug, affiliation)
    return tuple(slugs.values())


@functools.lru_cache(maxsize=SPELLING_CACHE_SIZE)
def read_affiliation(text: str) -> Affiliation | None:
    slug = affiliation_slug(text)
    return Affiliation(slug, affiliation_name(slug)) if slug else None


PreparedSource = tuple[Source, Iterable[PreparedEntry | Problem]]


def prepare_source(file: InputPath, forced_format: str | None = None) -> PreparedSource:
    source, items = read_source(file, forced_format)
    return source, map(prepare_entry, items)


def prepare_source_eagerly(file: InputPath, forced_format: str | None) -> PreparedSource:
    """In a worker process: everything for one file, sent back in one piece."""
    source, items = prepare_source(file, forced_format)
    return source, list(items)


def start_worker(build_pid: int, method: str) -> None:
    stop_with_build(build_pid, method)
    # forked from a build that may have paused its cyclic collector (catalog.py): parsing
    # leaves objects in cycles (markup trees)
    gc.enable()


def stop_with_build(build_pid: int, method: str) -> None:
    """In each worker, first: die with the build, so kill -9 of the build leaves no worker
    parsing on. With "forkserver" the forkserver is the parent, and it exits with the build."""
    die_with_parent(signal.SIGKILL)  # a worker holds nothing that needs a clean exit
    # the build may have died before that call: then no signal would ever come
    if method == "fork":
        alive = os.getppid() == build_pid  # reparented as soon as the build dies
    else:  # the build holds the other end of this pipe; siblings never do
        parent = multiprocessing.parent_process()
        alive = parent is not None and parent.is_alive()
    if not alive:
        os._exit(1)


def input_bytes(files: Iterable[InputPath]) -> int:
    total = 0
    for file in files:
        try:
            total += os.path.getsize(file)
        except OSError:
            pass  # read_source reports it
    return total


def prepared_sources(
    files: list[InputPath], forced_format: str | None, workers: int
) -> Generator[PreparedSource, None, None]:
    """(source, prepared items) for each file, in the order given, parsed by `workers`
    processes (none: in this one). Order and results do not depend on the worker count."""
    if not workers:
        for file in files:
            yield prepare_source(file, forced_format)
        return
    # fork starts workers at once and re-imports nothing (a caller's script without a
    # __main__ guard would run again), but is only safe while no other thread runs
    method = "fork" if threading.active_count() == 1 else "forkserver"
    context = multiprocessing.get_context(method)
    with concurrent.futures.ProcessPoolExecutor(
        workers,
        mp_context=context,
        initializer=start_worker,
        initargs=(os.getpid(), method),
    ) as pool:
        remaining = iter(files)
        in_flight: collections.deque[concurrent.futures.Future[PreparedSource]]
        in_flight = collections.deque()
        for file in remaining:
            in_flight.append(pool.submit(prepare_source_eagerly, file, forced_format))
            if len(in_flight) >= workers * FILES_IN_FLIGHT:
                break
        while in_flight:
            result = in_flight.popleft().result()
            following = next(remaining, None)
            if following is not None:
                in_flight.append(pool.submit(prepare_source_eagerly, following, forced_format))
            yield result


def worker_count(files: list[InputPath], workers: int | None) -> int:
    if workers is not None:
        return workers
    if len(files) < 2 or input_bytes(files) < PARALLEL_MIN_BYTES:
        return 0
    # one worker per CPU, at most two (each costs memory, and the build has a memory goal).
    # Writing takes this process much less CPU than parsing takes: with one worker per
    # *other* CPU, a 2-CPU build would wait on its only worker with a core half idle
    return max(1, min(MAX_WORKERS, os.cpu_count() or 1))
