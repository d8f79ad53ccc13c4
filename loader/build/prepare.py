"""Input files -> prepared entries, in order: each entry read and normalized by the pure rules
(plain text, label, paper id, author keys and spellings, track, affiliations, version keys),
so that the writer only writes. The CPU-heavy half of a build, run in worker processes when
the input is large."""

import collections
import concurrent.futures
import functools
import gc
import itertools
import multiprocessing
import os
import signal
import threading
from collections.abc import Callable, Collection, Generator, Iterable, Iterator, Sequence
from typing import Any, NamedTuple

from loader.build.id_set import IdSet
from loader.build.prepared_cache import (
    ITEMS,
    PIECE,
    CachedSource,
    CacheKey,
    PreparedCache,
    PreparedItem,
    Recorder,
    decode_items,
    decode_piece,
    encode_items,
    encode_piece,
)
from loader.lifetime import die_with_parent
from loader.read.author_ids import as_author_ids
from loader.read.dump_chunks import LinePieces, Piece, line_dump_format, read_piece
from loader.read.lines import MAX_CACHED_NAME_LENGTH, NAME_CACHE_SIZE
from loader.read.sources import InputFile, Source, display_path, read_source
from loader.records import (
    Affiliation,
    AuthorIds,
    AuthorName,
    Entry,
    LeftOut,
    PreparedEntry,
    Problem,
    Track,
)
from loader.rules.labels import derive_label, title_label
from loader.rules.markup import plain_text
from loader.rules.merge import TITLE, identifying_title, title_words, version_keys
from loader.rules.names import name_key, spelling
from loader.rules.normalize import (
    affiliation_name,
    affiliation_slug,
    paper_id,
    split_track,
    untold_abstract_paper_id,
)

# parsing and normalizing is pure, per file, and most of the CPU time: worker processes do it
# while this one writes SQLite. Below this much input starting them costs more than it saves.
PARALLEL_MIN_BYTES = 8_000_000
# where other files come from the cache, from this much input on a worker prepares the rest
# meanwhile: the writer is then busy with the cached entries
PARALLEL_BESIDE_CACHE_MIN_BYTES = 256_000
FILES_IN_FLIGHT = 2  # per worker: memory stays bounded whatever the corpus size
MAX_WORKERS = 2
# a dump written one record a line and larger than this is prepared in pieces of about this
# size (loader/read/dump_chunks.py): every worker takes part in one large file, and the
# build holds a few pieces, never the whole file's entries
PIECE_BYTES = 4 << 20
# tracks and affiliations are few and recur in most entries: each spelling is read once
# while among the last this many
SPELLING_CACHE_SIZE = 4096
# items of a file prepared in this process go to its cache file in frames of this many, so
# that a large file is never held whole
CACHE_CHUNK_ITEMS = 4096
# an input file: a path, or read.sources' InputFile (a path with its sources.yml settings)
InputPath = str | os.PathLike[str]


def prepare_entry(item: Entry | Problem | LeftOut) -> PreparedEntry | Problem | LeftOut:
    """An entry normalized for the writer (see PreparedEntry); the rest passes through."""
    if not isinstance(item, Entry):
        return item
    text = plain_text(item.abstract)
    keys = version_keys(item, text)
    authors, positions, ids = author_links(item)
    return PreparedEntry(
        entry_paper_id(item, authors),
        item.line,
        title_label(item.title) if item.title else derive_label(text),
        item.title,
        item.abstract,
        # None where the plain text is the abstract itself: a worker then sends the text once
        None if text == item.abstract else text,
        authors,
        positions,
        item.truncated,
        read_track(item.track) if item.track else None,
        read_affiliations(item.affiliations, item.affiliation_countries),
        item.url,
        item.venue,
        item.year,
        item.status,
        keys,
        next((key for kind, key in keys if kind == TITLE), None),
        tuple(item.keywords),
        tuple(item.categories),
        tuple(item.links.items()),
        item.tldr,
        item.citations,
        item.citations_source,
        item.rating,
        item.rating_count,
        ids,
    )


def entry_paper_id(entry: Entry, authors: Sequence[AuthorName] | None = None) -> str:
    """An entry's paper id: its abstract's, with its title's words where it has a title; with
    no abstract, its title's and first author's (`authors` as author_links gives them)."""
    if not entry.abstract:
        authors = author_links(entry)[0] if authors is None else authors
        return untold_abstract_paper_id(
            title_words(entry.title or ""), authors[0][0] if authors else ""
        )
    return paper_id(entry.abstract, identifying_title(entry.title))


def author_links(
    entry: Entry,
) -> tuple[tuple[AuthorName, ...], tuple[int | None, ...], tuple[AuthorIds, ...]]:
    """(authors, their positions, their ids), one author a name key (a name key and ids
    where the source gives ids: one name with two ids is two people), in the order the
    source lists them; the profile owner last with no position when the cut-short list does
    not show them. The ids are () when no author has one."""
    if entry.author_ids:
        return identified_author_links(entry)
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
    return tuple(authors), tuple(positions), ()


def identified_author_links(
    entry: Entry,
) -> tuple[tuple[AuthorName, ...], tuple[int | None, ...], tuple[AuthorIds, ...]]:
    """author_links of an entry whose source gives ids: a name repeated with the same ids
    (or none) is listed once, the same name with other ids is another person."""
    authors: list[AuthorName] = []
    positions: list[int | None] = []
    ids: list[AuthorIds] = []
    seen: dict[str, set[AuthorIds]] = {}  # name key -> the ids it came with
    for position, (name, given) in enumerate(
        zip(entry.authors, as_author_ids(entry.author_ids)), start=1
    ):
        author = read_author_name(name)
        before = seen.get(author[0])
        if before is not None and (not given or given in before or () in before):
            continue
        seen.setdefault(author[0], set()).add(given)
        authors.append(author)
        positions.append(position)
        ids.append(given)
    if entry.owner:
        author = read_author_name(entry.owner)
        if author[0] not in seen:
            authors.append(author)
            positions.append(None)
            ids.append(())
    return tuple(authors), tuple(positions), tuple(ids)


def read_author_name(name: str) -> AuthorName:
    """(name key, spelling) of a name as an entry gives it."""
    if len(name) > MAX_CACHED_NAME_LENGTH:
        return name_key(name), spelling(name)
    return read_recurring_author_name(name)


# a name recurs in many entries: read once while among the last NAME_CACHE_SIZE
@functools.lru_cache(maxsize=NAME_CACHE_SIZE)
def read_recurring_author_name(name: str) -> AuthorName:
    return name_key(name), spelling(name)


@functools.lru_cache(maxsize=SPELLING_CACHE_SIZE)
def read_track(text: str) -> Track | None:
    """A track as an entry gives it, split into name, area and subarea; None where no name
    is left (only spaces)."""
    name, area, subarea = split_track(text)
    return Track(name, area, subarea) if name else None


def read_affiliations(
    texts: Iterable[str], countries: Sequence[str | None] = ()
) -> tuple[Affiliation, ...]:
    """One affiliation a slug, in the order given, each with the first country `countries`
    (aligned with `texts`) gives it; those with an empty slug dropped."""
    slugs: dict[str, Affiliation] = {}
    if not any(countries):
        for text in texts:
            affiliation = read_affiliation(text)
            if affiliation:
                slugs.setdefault(affiliation.slug, affiliation)
        return tuple(slugs.values())
    for text, country in itertools.zip_longest(texts, countries):
        affiliation = read_affiliation(text) if text else None
        if affiliation is None:
            continue
        known = slugs.get(affiliation.slug)
        if known is None:
            slugs[affiliation.slug] = Affiliation(affiliation.slug, affiliation.name, country)
        elif country and not known.country:
            slugs[affiliation.slug] = Affiliation(known.slug, known.name, country)
    return tuple(slugs.values())


@functools.lru_cache(maxsize=SPELLING_CACHE_SIZE)
def read_affiliation(text: str) -> Affiliation | None:
    slug = affiliation_slug(text)
    return Affiliation(slug, affiliation_name(text)) if slug else None


PreparedSource = tuple[Source, Iterable[PreparedItem]]
# called with the bytes of input just read
Progress = Callable[[int], object]


def prepare_source(
    file: InputPath, forced_format: str | None = None, arxiv_categories: Collection[str] = ()
) -> PreparedSource:
    source, items = read_source(file, forced_format, arxiv_categories)
    return source, map(prepare_entry, items)


def prepare_source_eagerly(
    file: InputPath, forced_format: str | None, arxiv_categories: Collection[str] = ()
) -> tuple[Source, bytes]:
    """In a worker process: everything for one file, sent back in one piece, encoded here
    (the build stores these very bytes in its cache, prepared_cache.py, and decodes them)."""
    source, items = prepare_source(file, forced_format, arxiv_categories)
    return source, encode_items(items)


def prepare_piece(
    file: InputPath, format: str, piece: Piece, arxiv_categories: Collection[str]
) -> bytes:
    """In a worker process: the items of one piece of a file, and each one's record key (0
    for a problem), by which the build skips a record whose id an earlier piece gave;
    encoded, as prepare_source_eagerly's."""
    items: list[PreparedItem] = []
    keys: list[int] = []
    for item in read_piece(file, format, piece, arxiv_categories):
        keys.append(0 if isinstance(item, Problem) else item.record_key or 0)
        items.append(prepare_entry(item))
    return encode_piece(items, keys)


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


class Work(NamedTuple):
    """One task for the workers: a whole file, or a piece of one (`pieces` then)."""

    file: int  # its place among the files
    bytes: int  # of input it reads
    function: Callable[..., Any]
    arguments: tuple
    pieces: LinePieces | None = None


def plan_work(
    files: list[InputPath], forced_format: str | None, arxiv_categories: Collection[str]
) -> Iterator[Work]:
    """The tasks of the files, in order: a large dump written one record a line in pieces
    (found as the tasks are taken), any other file whole."""
    for index, file in enumerate(files):
        size = input_bytes([file])
        format = line_dump_format(file, forced_format) if size > PIECE_BYTES else None
        if format is None:
            yield Work(index, size, prepare_source_eagerly, (file, forced_format, arxiv_categories))
            continue
        pieces = LinePieces(file, PIECE_BYTES)
        for piece in pieces:
            arguments = (file, format, piece, arxiv_categories)
            yield Work(index, piece.end - piece.start, prepare_piece, arguments, pieces)


class WorkQueue:
    """Tasks handed to the workers in order, at most `limit` of them handed and not taken
    back: memory stays bounded whatever the corpus size."""

    def __init__(self, pool: concurrent.futures.Executor, work: Iterator[Work], limit: int) -> None:
        self.pool = pool
        self.work = work
        self.limit = limit
        self.in_flight: collections.deque[tuple[Work, concurrent.futures.Future[Any]]]
        self.in_flight = collections.deque()
        self.hand_out()

    def hand_out(self) -> None:
        while len(self.in_flight) < self.limit:
            work = next(self.work, None)
            if work is None:
                return
            self.in_flight.append((work, self.pool.submit(work.function, *work.arguments)))

    def take(self) -> tuple[Work, Any]:
        """The next task and its result."""
        work, future = self.in_flight.popleft()
        result = future.result()
        self.hand_out()
        return work, result

    def next_is_of(self, file: int) -> bool:
        return bool(self.in_flight) and self.in_flight[0][0].file == file


class Planned(NamedTuple):
    """An input file, its key in the build's cache (None: not cached) and whether the cache
    holds its prepared entries."""

    file: InputPath
    key: CacheKey | None = None
    held: bool = False


def plan_files(files: Iterable[InputPath], cache: PreparedCache | None) -> list[Planned]:
    if cache is None:
        return [Planned(file) for file in files]
    planned = []
    for file in files:
        key = cache.key(file)
        planned.append(Planned(file, key, cache.holds(key)))
    return planned


def files_to_read(planned: Iterable[Planned]) -> list[InputPath]:
    """The files whose entries the cache does not hold."""
    return [plan.file for plan in planned if not plan.held]


def read_whole(
    items: Iterable[PreparedItem], size: int, progress: Progress | None
) -> Iterator[PreparedItem]:
    yield from items
    if progress:
        progress(size)


def recorder_of(cache: PreparedCache | None, key: CacheKey | None) -> Recorder | None:
    """A cache file to write, opened once the items start to pass (a generator never started
    runs no cleanup)."""
    return cache.recorder(key) if cache and key else None


def recorded(
    source: Source,
    items: Iterable[PreparedItem],
    cache: PreparedCache | None,
    key: CacheKey | None,
) -> Iterator[PreparedItem]:
    """A file prepared in this process, its items stored in the cache in chunks as they
    pass; stored only when the file was read to its end."""
    recorder = recorder_of(cache, key)
    if recorder is None:
        yield from items
        return
    chunk: list[PreparedItem] = []
    complete = False
    try:
        for item in items:
            chunk.append(item)
            if len(chunk) >= CACHE_CHUNK_ITEMS:
                recorder.add_items(chunk)
                chunk = []
            yield item
        if chunk:
            recorder.add_items(chunk)
        recorder.commit(source.format, source.sha256)
        complete = True
    finally:
        if not complete:
            recorder.discard()


def deduplicated(
    file: InputPath, path: str, results: Iterable[tuple[list[PreparedItem], Sequence[int]]]
) -> Iterator[PreparedItem]:
    """The items of a file read in pieces, as read_source gives the whole file: the
    sources.yml problems an InputFile carries first, a record whose id came before skipped,
    and a file with no record at all a problem."""
    if isinstance(file, InputFile):
        yield from file.config_problems
    seen = IdSet()  # record keys: compact, a snapshot has millions
    empty = True
    for items, keys in results:
        for item, key in zip(items, keys):
            if key and not seen.add(key):
                continue
            empty = False
            yield item
    if empty:
        yield Problem(path, 1, "no papers in the file")


def read_pieces(
    queue: WorkQueue,
    source: Source,
    pieces: LinePieces,
    first: Work,
    result: bytes,
    progress: Progress | None,
    cache: PreparedCache | None = None,
    key: CacheKey | None = None,
) -> Iterator[PreparedItem]:
    """The items of a file read in pieces by the workers (deduplicated), stored in the cache
    piece by piece. Sets the source's SHA-256 at the end (the pieces are found in the pass
    that hashes the file)."""
    recorder = recorder_of(cache, key)

    def results() -> Iterator[tuple[list[PreparedItem], Sequence[int]]]:
        work, piece = first, result
        while True:
            if recorder:
                recorder.add(PIECE, piece)
            yield decode_piece(piece)
            if progress:
                progress(work.bytes)
            if not queue.next_is_of(first.file):
                return
            work, piece = queue.take()

    try:
        yield from deduplicated(first.arguments[0], source.path, results())
    except BaseException:  # a worker died, or the build stopped reading: nothing stored
        if recorder:
            recorder.discard()
        raise
    source.sha256 = pieces.sha256
    if recorder:
        recorder.commit(source.format, source.sha256)


def cached_items(
    file: InputPath, cached: CachedSource, progress: Progress | None
) -> Iterator[PreparedItem]:
    """A file's items as the cache holds them, as they were first prepared."""
    payloads = cached.payloads()
    if cached.pieces:
        yield from deduplicated(file, display_path(file), map(decode_piece, payloads))
    else:
        for payload in payloads:
            yield from decode_items(payload)
    if progress:
        progress(input_bytes([file]))


def prepared_here(
    plan: Planned,
    cache: PreparedCache | None,
    forced_format: str | None,
    arxiv_categories: Collection[str],
    progress: Progress | None,
) -> PreparedSource:
    """A file's source and items in this process: from the cache when it holds them
    (verified whole first), else read and prepared here, and stored."""
    cached = cache.load(plan.key) if cache and plan.key and plan.held else None
    if cached is not None:
        source = Source(display_path(plan.file), cached.format, cached.sha256)
        return source, cached_items(plan.file, cached, progress)
    source, items = prepare_source(plan.file, forced_format, arxiv_categories)
    items = recorded(source, items, cache, plan.key)
    return source, read_whole(items, input_bytes([plan.file]), progress)


def prepared_sources(
    files: list[InputPath],
    forced_format: str | None,
    workers: int,
    arxiv_categories: Collection[str] = (),
    progress: Progress | None = None,
    cache: PreparedCache | None = None,
    planned: list[Planned] | None = None,
) -> Generator[PreparedSource, None, None]:
    """(source, prepared items) for each file, in the order given, parsed by `workers`
    processes (none: in this one). Order and results do not depend on the worker count, nor
    on the cache: the files it holds (`planned`, by plan_files) are taken from it, the others
    read and stored in it. A file's source is complete once its items have all been taken
    (the SHA-256 of a file read in pieces is found with them); `progress` hears of each file
    and piece read."""
    if planned is None:
        planned = plan_files(files, cache)
    unread = files_to_read(planned)
    if not workers or not unread:
        for plan in planned:
            yield prepared_here(plan, cache, forced_format, arxiv_categories, progress)
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
        queue = WorkQueue(
            pool, plan_work(unread, forced_format, arxiv_categories), workers * FILES_IN_FLIGHT
        )
        for plan in planned:
            if plan.held:
                yield prepared_here(plan, cache, forced_format, arxiv_categories, progress)
                continue
            work, result = queue.take()
            if work.pieces is None:
                source, payload = result
                recorder = recorder_of(cache, plan.key)
                if recorder:
                    recorder.add(ITEMS, payload)
                    recorder.commit(source.format, source.sha256)
                yield source, read_whole(decode_items(payload), work.bytes, progress)
            else:
                source = Source(display_path(plan.file), work.arguments[1], "")
                pieces = read_pieces(
                    queue, source, work.pieces, work, result, progress, cache, plan.key
                )
                yield source, pieces


def worker_count(
    files: list[InputPath],
    workers: int | None,
    forced_format: str | None = None,
    cached: bool = False,
) -> int:
    """How many processes prepare `files` (0: this one), when the caller does not say;
    `cached`: the build takes other files from the cache."""
    if workers is not None:
        return workers
    size = input_bytes(files)
    if cached and size >= PARALLEL_BESIDE_CACHE_MIN_BYTES and os.cpu_count() != 1:
        # a rebuild: this process writes the cached files' entries while a worker prepares
        # the changed ones
        return 1 if size < PARALLEL_MIN_BYTES else max(1, min(MAX_WORKERS, os.cpu_count() or 1))
    if size < PARALLEL_MIN_BYTES:
        return 0
    # one file is read in this process, streamed, unless it is a large dump read in pieces
    if len(files) < 2 and not line_dump_format(files[0], forced_format):
        return 0
    # one worker per CPU, at most two (each costs memory, and the build has a memory goal).
    # Writing takes this process much less CPU than parsing takes: with one worker per
    # *other* CPU, a 2-CPU build would wait on its only worker with a core half idle
    return max(1, min(MAX_WORKERS, os.cpu_count() or 1))
