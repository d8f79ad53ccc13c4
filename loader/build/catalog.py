"""Input files -> one SQLite catalog, replaced atomically: the build's stages in order.

Files are read and normalized (prepare.py, in worker processes for large inputs), the prepared
entries written (writer.py), versions merged, shared labels told apart and authors named
(consolidate.py), then the full-text index copied in and the catalog checked."""

import contextlib
import functools
import os
from collections.abc import Callable, Collection, Iterable
from pathlib import Path

import sqlite_utils

from loader.build import atomic
from loader.build.atomic import TargetRefused
from loader.build.collector import collector_paused
from loader.build.consolidate import (
    distinguish_labels,
    merge_versions,
    name_affiliations,
    name_authors,
    unlisted_authors,
)
from loader.build.full_text import SHADOW_TABLES as FTS_SHADOW_TABLES
from loader.build.full_text import CatalogCheckFailed, SideIndex
from loader.build.marker import is_older_catalog, is_paper_catalog
from loader.build.persons import IdentifiedAuthors, join_persons
from loader.build.prepare import (
    InputPath,
    Progress,
    files_to_read,
    input_bytes,
    plan_files,
    prepared_sources,
    worker_count,
)
from loader.build.prepared_cache import CacheRefused, PreparedCache, cache_folder
from loader.build.schema import MARKER_TABLE, PAGE_SIZE, fts_build_settings
from loader.build.vocabulary import SearchVocabulary
from loader.build.writer import CatalogWriter, Summary
from loader.read.sources import public_paths, source_date
from loader.records import LeftOut, Problem

# SQLite's page cache while parsing workers stream rows: papers' primary-key index takes each
# new id at a random place (ids are hashes), and past the cache each insert reads and writes
# back a page. The workers' memory and the writer's maps set the build's peak: the paper ids'
# IdSet, smaller than a dict, pays for this cache
STREAM_CACHE_KB = 65536
# after the stream, for index builds, sorts and copies; the OS file cache does the rest. A
# larger one only grew the sorters' memory and took longer
CACHE_KB = 16384
# several threads sort the rows of an index (and a GROUP BY) when they pass the page cache:
# the index builds then use the core the serial tail leaves idle
SORTER_THREADS = 2


class BuildFailed(Exception):
    """The inputs had problems and --skip-invalid was not given."""

    def __init__(self, problems: list[Problem]) -> None:
        super().__init__(f"{len(problems)} problem(s) in the input")
        self.problems = problems


def finish_database(db: sqlite_utils.Database, full_text: SideIndex) -> None:
    """The full-text index and the search vocabulary from their side database, statistics,
    SQLite's check and the index's own (CatalogWriter.finish made the indexes and the facet
    table)."""
    db.conn.commit()
    full_text.copy_into(db.conn)
    # per-term document counts: "related papers" picks a paper's rarest terms from it
    db.execute("create virtual table papers_fts_vocab using fts5vocab(papers_fts, 'row')")
    analyze(db)
    check_integrity(db)
    # checked in the side database while the lines above ran
    full_text.checked()


def analyze(db: sqlite_utils.Database) -> None:
    """ANALYZE every table the planner chooses indexes for: not the virtual tables and their
    shadow tables, which FTS5 reads by key alone (counting the large papers_fts_data would be
    a good part of ANALYZE's time)."""
    virtual = set(db.table_names(fts5=True))
    shadow = {f"{name}_{suffix}" for name in virtual for suffix in FTS_SHADOW_TABLES}
    for table in db.table_names():
        if table not in virtual and table not in shadow:
            db.execute(f"analyze [{table}]")


def check_integrity(db: sqlite_utils.Database) -> None:
    """SQLite's quick_check (the full-text index's own check runs on its side database).

    quick_check reads every page and b-tree (a disk or SQLite fault) without matching each
    index against its table: a fresh build writes both in one statement, and the full
    integrity_check costs several times as much."""
    messages = [row[0] for row in db.execute("pragma quick_check")]
    if messages != ["ok"]:
        raise CatalogCheckFailed(f"quick_check: {'; '.join(messages[:5])}")


def check_replaceable(target: Path, inputs: Iterable[InputPath]) -> None:
    """TargetRefused unless the existing file at target is a catalog (marker.py) or empty, and
    none of the inputs: a build never destroys a file of any other kind."""
    status = os.stat(target)
    for file in inputs:
        with contextlib.suppress(OSError):  # an input gone away is read as a problem
            other = os.stat(file)
            if (other.st_dev, other.st_ino) == (status.st_dev, status.st_ino):
                raise TargetRefused("it is one of the input files; give another --db")
    # an empty file holds nothing to lose (a placeholder made by mktemp, or `touch`)
    if status.st_size and not (is_paper_catalog(target) or is_older_catalog(target)):
        raise TargetRefused(
            f"it exists and is not a catalog built by paper-catalog (no {MARKER_TABLE} "
            "table); give a new path, or remove the file first if it may go"
        )


def open_cache(
    folder: Path,
    forced_format: str | None,
    arxiv_categories: Collection[str],
    warn: Callable[[str], object] | None,
) -> PreparedCache | None:
    """The build's cache, or None (a cold build, storing nothing) when its folder cannot be
    used: another user's, writable by others, or not to be made."""
    prepared = PreparedCache(folder, forced_format, arxiv_categories)
    try:
        prepared.open()
    except (CacheRefused, OSError) as error:
        if warn:
            reason = error.strerror if isinstance(error, OSError) and error.strerror else error
            warn(f"the cache {folder} is not used ({reason}): every file is read")
        return None
    return prepared


def build_catalog(
    files: Iterable[InputPath],
    db_path: InputPath,
    skip_invalid: bool = False,
    forced_format: str | None = None,
    progress: Progress | None = None,
    workers: int | None = None,
    arxiv_categories: Collection[str] = (),
    cache: bool = False,
    warn: Callable[[str], object] | None = None,
) -> Summary:
    """Build a catalog from input files into db_path, replacing it atomically.

    Raises BuildFailed (leaving db_path untouched) when there are problems and
    skip_invalid is False, and TargetRefused, before any work, when db_path is not a regular
    file. `workers` parsing processes (default: one per CPU for large inputs, none for small
    ones) never change the result. `progress` is called with the bytes of input read as the
    build reads on. An arXiv snapshot keeps only the records of `arxiv_categories` (when
    given; its sources.yml entry's categories win), the others counted in the summary.
    With `cache`, each file's prepared entries are kept in a folder beside db_path
    (prepared_cache.py) and taken from there while the file, the options and the code are
    the same: the catalog is the one a build without it makes. A cache folder that is not
    private to this user is not used (`warn` hears why): the build reads every file.
    """
    files = list(files)
    with atomic.building(db_path, functools.partial(check_replaceable, inputs=files)) as temporary:
        prepared = (
            open_cache(cache_folder(db_path), forced_format, arxiv_categories, warn)
            if cache
            else None
        )
        summary = write_catalog(
            files,
            str(temporary.path),
            forced_format,
            progress,
            workers,
            arxiv_categories,
            prepared,
        )
        if summary.problems and not skip_invalid:
            raise BuildFailed(summary.problems)
        temporary.replace_target()
        return summary


def write_catalog(
    files: Iterable[InputPath],
    path: str,
    forced_format: str | None = None,
    progress: Progress | None = None,
    workers: int | None = None,
    arxiv_categories: Collection[str] = (),
    cache: PreparedCache | None = None,
) -> Summary:
    # no sqlite-utils plugins: the catalog's SQL needs none of the functions they may register
    # on a connection, and finding them reads every installed package's entry points (about
    # 25 ms of every build's CPU)
    db = sqlite_utils.Database(path, execute_plugins=False)
    db.execute(f"pragma page_size = {PAGE_SIZE}")
    # a temporary file no reader sees yet: durability would only cost time
    db.execute("pragma journal_mode = off")
    db.execute("pragma synchronous = off")
    db.execute(f"pragma cache_size = -{STREAM_CACHE_KB}")
    db.execute(f"pragma threads = {SORTER_THREADS}")
    files = list(files)
    full_text = SideIndex(
        path + atomic.FULL_TEXT_SUFFIX,
        "papers_fts",
        PAGE_SIZE,
        build_settings=fts_build_settings(input_bytes(files)),
        companions=[SearchVocabulary()],
    )
    try:
        summary = write_rows(
            db, files, forced_format, progress, workers, full_text, arxiv_categories, cache
        )
        store_public_paths(db)
        finish_database(db, full_text)
        db.execute("pragma journal_mode = delete")
    finally:
        full_text.close()
        db.close()
    return summary


def store_public_paths(db: sqlite_utils.Database) -> None:
    """The catalog is published: its file names are stored without the builder's folders
    (sources.public_paths). Problems printed on the terminal keep the paths as given."""
    names = [
        row[0]
        for row in db.execute("select path from sources union select file from load_problems")
    ]
    renamed = [(name, public) for name, public in public_paths(names).items() if public != name]
    with db.atomic():
        db.execute("create temp table public_paths (path text primary key, public text)")
        db.conn.executemany("insert into public_paths values (?, ?)", renamed)
        for table, column in (("sources", "path"), ("load_problems", "file")):
            db.execute(
                f"update {table} set {column} = public_paths.public from public_paths "
                f"where {table}.{column} = public_paths.path"
            )
        db.execute("drop table public_paths")


def write_rows(
    db: sqlite_utils.Database,
    files: Iterable[InputPath],
    forced_format: str | None,
    progress: Progress | None,
    workers: int | None,
    full_text: SideIndex,
    arxiv_categories: Collection[str] = (),
    cache: PreparedCache | None = None,
) -> Summary:
    """Read, normalize (prepare), write, merge, finish: each stage once, in that order."""
    identified = IdentifiedAuthors()  # persons by their ids (persons.py)
    writer = CatalogWriter(db, full_text, identified)
    # sorted: the same inputs in any order give the same ids and rows
    files = sorted(files, key=str)
    planned = plan_files(files, cache)
    unread = files_to_read(planned)
    # only the files the cache does not hold are parsed, by workers when they are large
    cached = len(unread) < len(planned)
    workers = worker_count(unread, workers, forced_format, cached) if unread else 0
    sources = prepared_sources(
        files, forced_format, workers, arxiv_categories, progress, cache, planned
    )
    left_out = 0
    # paused unless this process parses (no workers, files the cache does not hold)
    # With workers parsing, or every entry from the cache, this process only writes rows and
    # decodes JSON (no cycles): what it drops goes by reference count, and the collector's
    # passes would be over the writer's growing maps, again and again
    with db.atomic(), collector_paused(workers > 0 or not unread, collect_after=True):
        # closed as soon as the last file is read: the parsing workers exit then, before
        # the merge and finish() grow this process (left to the garbage collector, they
        # would live on through it)
        with contextlib.closing(sources):
            for source_id, (source, items) in enumerate(sources, start=1):
                writer.date_source(source_id, source_date(files[source_id - 1]))
                entries = problems = 0
                for item in items:
                    if isinstance(item, Problem):
                        writer.add_problem(item)
                        # a sources.yml problem comes with the first file but is not its own
                        problems += item.path == source.path
                    elif isinstance(item, LeftOut):
                        left_out += 1
                    else:
                        writer.add_entry(item, source_id)
                        entries += 1
                writer.add_source(
                    source_id, source.path, source.format, source.sha256, entries, problems
                )
        if cache:
            # bounded: what no file of this build used goes
            cache.prune()
        db.execute(f"pragma cache_size = -{CACHE_KB}")
        writer.end_stream()
        joined = join_persons(writer, identified)
        merged, replaced = merge_versions(writer)
        merged |= joined.papers
        unlisted = unlisted_authors(writer, replaced | joined.replaced)
        distinguish_labels(writer)
        renamed = name_authors(writer)
        name_affiliations(writer)
        # returning drops the writer: its id and name maps are freed for indexes and FTS
        summary = writer.finish(merged, renamed, unlisted)
        summary.left_out = left_out
        summary.names_joined = joined.names_joined
        summary.joined_names = joined.evidence
        summary.disputed_ids = len(identified.ids.disputed)
        return summary
