"""Entries -> one SQLite catalog: schema, the writer that applies the merge policy (merge.py),
FTS, indexes, atomic replace."""

import array
import collections
import contextlib
import functools
import gc
import itertools
import json
from dataclasses import dataclass, field
from json.encoder import encode_basestring

import sqlite_utils

from loader.build import atomic
from loader.build.facet_table import add_facet_table
from loader.build.full_text import SHADOW_TABLES as FTS_SHADOW_TABLES
from loader.build.full_text import CatalogCheckFailed, SideIndex
from loader.build.id_set import IdSet
from loader.build.prepare import prepared_sources, worker_count
from loader.read.lines import MAX_CACHED_NAME_LENGTH, NAME_CACHE_SIZE
from loader.read.sources import public_paths
from loader.records import Problem
from loader.rules.merge import (
    DIRECT,
    TITLE,
    Version,
    VersionGroups,
    direct_matches,
    resolve,
    title_matches,
)
from loader.rules.names import display_name, name_key, spelling
from loader.rules.normalize import TRACK_SEPARATOR, affiliation_name, affiliation_slug, split_track

FTS_TOKENIZER = "porter unicode61 remove_diacritics 2"
# label (the title, or the heading derived from the abstract), authors (names), plain abstract:
# /search weighs them 10:4:1
FTS_COLUMNS = ["label", "authors", "abstract_text"]
AUTHOR_FTS_TOKENIZER = "unicode61 remove_diacritics 2"
BATCH_SIZE = 2000
# rows of 2-4 KB (abstracts) leave much of a 4 KB page empty: each page of papers keeps
# about half a row free (rows are appended, a full page is never filled up later), so the
# larger the page the less that costs: 16 KB pages left 192 bytes a paper at 1M papers, 32 KB
# half that (3,917 -> 3,822 bytes a paper at 100k). 64 KB pages would save 34 bytes a paper
# more (100k, with FTS_PAGE_BYTES below), but a full-text lookup inside a block costs twice as
# much again (a two-word phrase: 43, 146, 313 us at 4, 32, 64 KB blocks)
PAGE_SIZE = 32768
# FTS5 writes its index in blocks of about `pgsz` bytes, one row of papers_fts_data each. At the
# default 4,050, eight fit a page only while rows are appended: the final merge (optimize)
# gives its segment the lowest free id (ids are reused), and when segments with higher ids
# exist its rows go in before theirs, page splits leaving 7.6 blocks a page (68 bytes a paper
# at 1M). One block a page fills it in any order (877 -> 809 bytes a paper at 1M): 32 KB less
# the page, cell and record headers (under 40 bytes) and a margin for the bytes a block may
# pass pgsz by. Single words cost the same; a rare word with a common one ~0.2 ms more
FTS_PAGE_BYTES = PAGE_SIZE - 160
# SQLite's page cache while parsing workers stream rows: papers' primary-key index takes each
# new id at a random place (ids are hashes), 27 MB of it at 1M papers; past the cache each
# insert read and wrote back a page, and inserting 100k rows cost 2.1 CPU-s at the end of a 1M
# stream, 0.9 at its start (16.2 CPU-s in all; 11.5 with 48 MB). The workers' memory and the
# writer's maps set the 1M peak: the paper ids' IdSet (20 MB where a dict took 90) pays for it
STREAM_CACHE_KB = 65536
# after the stream, for index builds, sorts and copies; the OS file cache does the rest. A
# larger one only grew the sorters' memory (128 MB: +230 MB peak) and took longer
CACHE_KB = 16384
# full-text settings while streaming: no merging of segments as they come (the side index's
# optimize merges them all once) and 4 MB of pending terms a segment, not 1 MB: fewer, larger
# segments. Indexing 20,000 papers took 0.98 CPU-s, 0.72 so (16 MB: no faster, 12 MB more
# memory). Dropped before publishing. (No "crisis" merges either, before 1,000 segments, made
# indexing 0.4-0.8 CPU-s cheaper at 100k papers, but at 1M moved ~7 s into the serial tail:
# optimize 5.7 -> 12.5 s.)
FTS_BUILD_SETTINGS = (("automerge", 0), ("hashsize", 4 * 1024 * 1024))
# the block size the catalog keeps
FTS_SETTINGS = (("pgsz", FTS_PAGE_BYTES),)
# several threads sort the rows of an index (and a GROUP BY) when they pass the page cache:
# the build's 1M-paper index builds then use the core the serial tail leaves idle
SORTER_THREADS = 2

SCHEMA = {
    "sources": (
        {"id": int, "path": str, "format": str, "sha256": str, "papers": int, "problems": int},
        {"pk": "id"},
    ),
    "tracks": (
        {"id": int, "name": str, "area": str, "subarea": str, "paper_count": int},
        {"pk": "id"},
    ),
    "authors": ({"id": int, "name": str, "key": str, "paper_count": int}, {"pk": "id"}),
    "affiliations": (
        {"id": int, "slug": str, "name": str, "paper_count": int},
        {"pk": "id"},
    ),
    "papers": (
        {
            "id": str,
            "label": str,
            "title": str,
            "track": str,
            "area": str,
            "authors": str,
            "affiliations": str,
            "author_count": int,
            "authors_truncated": int,
            "source_count": int,
            "url": str,
            "venue": str,
            "year": int,
            "status": str,
            "track_id": int,
            "abstract": str,
            "abstract_plain": str,
        },
        {"pk": "id", "foreign_keys": [("track_id", "tracks", "id")], "not_null": {"abstract"}},
    ),
    "paper_authors": (
        {"paper_id": str, "author_id": int, "position": int},
        {
            "pk": ("paper_id", "author_id"),
            "foreign_keys": [("paper_id", "papers", "id"), ("author_id", "authors", "id")],
        },
    ),
    "paper_affiliations": (
        {"paper_id": str, "affiliation_id": int},
        {
            "pk": ("paper_id", "affiliation_id"),
            "foreign_keys": [
                ("paper_id", "papers", "id"),
                ("affiliation_id", "affiliations", "id"),
            ],
        },
    ),
    # each source entry with the venue, year and status it gave (an arXiv version stays seen)
    "paper_sources": (
        {
            "paper_id": str,
            "source_id": int,
            "line": int,
            "venue": str,
            "year": int,
            "status": str,
        },
        {
            "pk": ("paper_id", "source_id", "line"),
            "foreign_keys": [("paper_id", "papers", "id"), ("source_id", "sources", "id")],
        },
    ),
    # derived: how many of an author's papers are in each track, so an author page lists their
    # tracks without reading every one of their papers (2,181 for the most prolific at 1M)
    "author_tracks": (
        {"author_id": int, "track_id": int, "paper_count": int},
        {
            "pk": ("author_id", "track_id"),
            "foreign_keys": [("author_id", "authors", "id"), ("track_id", "tracks", "id")],
        },
    ),
    # every spelling of a name spelled more than one way, with the source entries using it
    "author_variants": (
        {"author_id": int, "name": str, "paper_count": int},
        {"pk": ("author_id", "name"), "foreign_keys": [("author_id", "authors", "id")]},
    ),
    # ids of merged versions: links made before a merge lead to the paper
    "paper_aliases": (
        {"alias": str, "paper_id": str},
        {"pk": "alias", "foreign_keys": [("paper_id", "papers", "id")]},
    ),
    "load_problems": ({"id": int, "file": str, "line": int, "message": str}, {"pk": "id"}),
}
# link tables are only ever read by key: without a rowid each row is stored once, in its key
WITHOUT_ROWID = {
    "paper_authors",
    "paper_affiliations",
    "paper_sources",
    "author_tracks",
    "author_variants",
    "paper_aliases",
}
# the plain text is stored only where it differs from the abstract (markup, spacing): about
# half the papers. Readers and the FTS index see the full plain text in abstract_text.
GENERATED_COLUMNS = [
    ("papers", "abstract_text", "text", "coalesce(abstract_plain, abstract)"),
]
# rows streamed while parsing, and last the merge keys (to a temporary table); the small
# tables are written once at the end
STREAMED = ("papers", "paper_authors", "paper_affiliations", "paper_sources", "version_keys")


def insert_statement(name, target=None):
    """An insert of a SCHEMA table's rows (all its columns, in order) into `target`."""
    columns = SCHEMA[name][0]
    return "insert into {} ({}) values ({})".format(
        target or name, ", ".join(columns), ", ".join("?" * len(columns))
    )


INSERTS = {name: insert_statement(name) for name in (*STREAMED[:-1], "authors", "author_variants")}
# where a papers row (INSERTS["papers"] order) holds what the full-text index reads
LABEL, AUTHORS, ABSTRACT, ABSTRACT_PLAIN = (
    list(SCHEMA["papers"][0]).index(column)
    for column in ("label", "authors", "abstract", "abstract_plain")
)
INSERTS["version_keys"] = (
    "insert into temp.version_keys (key, kind, paper_id, title) values (?, ?, ?, ?)"
)
# link tables are keyed by paper id, a hash: rows streamed into them land all over their
# b-trees, and past the page cache each insert read and wrote back a page (at 1M papers 22
# CPU-s of the stream and most of its 41 s of system time). They are streamed into
# temporary tables in arrival order instead, and copied over once, sorted (finish()).
STAGED = ("paper_authors", "paper_affiliations", "paper_sources")
STREAM_INSERTS = {
    **INSERTS,
    **{name: insert_statement(name, f"temp.staged_{name}") for name in STAGED},
}
# (table, columns, rows indexed). A filter on a value (`?venue=ICLR`, `where venue = ?`) implies
# it is not null, so SQLite uses an index of only the rows that have one: a catalog whose
# sources give no venue, year or status (listing pages, the synthetic benchmark) pays nothing
# for those indexes (78 of 3,880 bytes a paper at 1M). What such an index cannot serve is a
# sort on its column (`?_sort=year`): that first page sorts the table instead (0.5 s at 1M), so
# track and area, which nearly every paper has (5% without: 4 bytes a paper), keep full indexes.
FACET_INDEXES = [
    # id second: a filtered view pages (and streams CSV) in primary-key order from the index
    ("papers", ["area", "id"], None),
    ("papers", ["track", "id"], None),
    ("papers", ["venue", "id"], "venue is not null"),
    ("papers", ["year", "id"], "year is not null"),
    ("papers", ["status", "id"], "status is not null"),
    ("authors", ["key"], None),
    ("authors", ["paper_count"], None),
    ("affiliations", ["slug"], None),
    ("tracks", ["area"], None),
]


# indexes made before the stream, not after: their rows arrive in key order (papers are
# appended in rowid order; a track's, or the one value authors_truncated = 1, is a run of
# rowids; no paper has source_count > 1 before the merge), so keeping them costs a few cached
# pages, where building one after scanned the 3 GB papers table (~0.6 s each at 1M papers).
# The two partial ones hold only the rows the canned queries truncated_author_lists and
# multi_source_papers read (their `where` has the same term): 13% and 1% of the papers at 1M
STREAM_INDEXES = [
    ("papers", ["authors_truncated"], "authors_truncated = 1"),
    ("papers", ["source_count"], "source_count > 1"),
]
# foreign keys whose index is made the same way (index_foreign_keys makes the others)
STREAM_FOREIGN_KEYS = [("papers", "track_id")]
# the partial facet indexes of papers also exist from the start, while no row has a value for
# them: a column no source gives (listing pages without sources.yml, the synthetic benchmark)
# then costs no scan of the papers table after the stream (~0.6 s an index at 1M papers). The
# first batch with a value drops its index, built after the stream like the others: rows
# arriving in a random order of id would land all over it (as they did in the link tables)
WHILE_EMPTY_INDEXES = [
    (table, columns, rows) for table, columns, rows in FACET_INDEXES if table == "papers" and rows
]


def create_facet_indexes(db):
    for table, columns, rows in FACET_INDEXES:
        create_index(db, table, columns, rows)


def create_index(db, table, columns, rows=None):
    where = f" where {rows}" if rows else ""
    db.execute(
        f"create index if not exists {index_name(table, columns)} "
        f"on {table} ({', '.join(columns)}){where}"
    )


def index_name(table, columns):
    # "track__id", not "track_id": that name is the foreign key's index
    return f"idx_{table}_{'__'.join(columns)}"


def to_json(strings):
    """A list of strings as json.dumps(..., ensure_ascii=False) writes it: the C string
    encoder without an encoder object's Python layers around it (0.4 us a list, not 1.0)."""
    return "[" + ", ".join(map(encode_basestring, strings)) + "]"


class BuildFailed(Exception):
    """The inputs had problems and --skip-invalid was not given."""

    def __init__(self, problems):
        super().__init__(f"{len(problems)} problem(s) in the input")
        self.problems = problems


@dataclass
class Summary:
    papers: int = 0
    authors: int = 0
    tracks: int = 0
    affiliations: int = 0
    problems: list = field(default_factory=list)

    def __str__(self):
        return (
            f"{self.papers} papers, {self.authors} authors, {self.tracks} tracks, "
            f"{self.affiliations} affiliations, {len(self.problems)} problems"
        )


def create_tables(db):
    for name, (columns, options) in SCHEMA.items():
        sql = db.create_table_sql(name, columns, **options).rstrip().rstrip(";")
        db.execute(sql + (" without rowid" if name in WITHOUT_ROWID else ""))
    for table, column, kind, expression in GENERATED_COLUMNS:
        db.execute(
            f"alter table {table} add column {column} {kind} "
            f"generated always as ({expression}) virtual"
        )


def read_author_name(name):
    """(name key, spelling) of a name as an entry gives it."""
    if len(name) > MAX_CACHED_NAME_LENGTH:
        return name_key(name), spelling(name)
    return read_recurring_author_name(name)


# a name recurs in ~9 entries: read once while among the last NAME_CACHE_SIZE
@functools.lru_cache(maxsize=NAME_CACHE_SIZE)
def read_recurring_author_name(name):
    return name_key(name), spelling(name)


class CatalogWriter:
    """Streams entries into a fresh database, one row per paper id (abstract hash); after the
    stream, merges the rows and entries the merge policy (merge.py) says are one paper.

    In memory: the paper ids seen (ints in a dict), author and track maps, and the entries
    that repeat a paper id until they are merged. The keys that find versions (8-byte
    hashes) go to a temporary table, so finding versions costs SQLite's sorter, not memory."""

    def __init__(self, db, full_text):
        self.db = db
        self.full_text = full_text
        # int(paper id, 16) of every paper row written
        self.paper_ids = IdSet()
        self.duplicates = {}  # paper id -> [Version] of the entries after its first
        self.author_keys = {}  # name key -> author id
        self.author_names = [None]  # author id -> first spelling seen (then the display name)
        self.author_entries = array.array("L", [0])  # author id -> entries naming them
        self.other_spellings = {}  # author id -> Counter of spellings other than the first
        self.tracks = {}  # name -> (id, area, subarea)
        self.track_names = {}  # track as an entry gives it -> name
        self.affiliations = {}  # slug -> id
        self.pending = {name: [] for name in (*SCHEMA, "version_keys")}
        self.problems = []
        self.papers_written = 0
        # each row's facet values (facet_table.COLUMNS) as a code, kept while streaming: the
        # facet table is then written from memory, not read back from the 2.3 GB papers table
        # at 1M papers (2.1 -> ~0.7 s). rowid - 1 -> code; 0 for a row the merge deleted
        self.row_facets = array.array("I")
        self.facet_codes = {}  # values -> code (1, 2, ...)
        self.aliases = 0
        create_tables(db)
        for table, columns, rows in STREAM_INDEXES:
            create_index(db, table, columns, rows)
        for table, column in STREAM_FOREIGN_KEYS:
            index_foreign_key(db, table, column)
        papers_columns = list(SCHEMA["papers"][0])
        # papers row position of the column -> the index kept while no row has a value there
        self.empty_indexes = {}
        for table, columns, rows in WHILE_EMPTY_INDEXES:
            create_index(db, table, columns, rows)
            self.empty_indexes[papers_columns.index(columns[0])] = index_name(table, columns)
        # title: the entry's TITLE key, so that merge.direct_matches can tell titles apart
        db.execute(
            "create temp table version_keys (key integer, kind integer, paper_id text, title integer)"
        )
        for name in STAGED:
            columns = ", ".join(SCHEMA[name][0])
            db.execute(f"create temp table staged_{name} ({columns})")
        db.execute(
            f"create temp table unindexed (rowid integer primary key, {', '.join(FTS_COLUMNS)})"
        )
        # the catalog's table, empty until the side index is copied into its shadow tables
        db["papers"].enable_fts(FTS_COLUMNS, tokenize=FTS_TOKENIZER)
        sql = db.execute("select sql from sqlite_master where name = 'papers_fts'").fetchone()[0]
        full_text.define(sql, FTS_SETTINGS, FTS_BUILD_SETTINGS)

    def add_source(self, source_id, source, papers, problems):
        self.pending["sources"].append(
            {
                "id": source_id,
                "path": source.path,
                "format": source.format,
                "sha256": source.sha256,
                "papers": papers,
                "problems": problems,
            }
        )

    def add_problem(self, problem):
        self.problems.append(problem)
        self.pending["load_problems"].append(
            {
                "id": len(self.problems),
                "file": problem.path,
                "line": problem.line,
                "message": problem.message,
            }
        )

    def author_id(self, key, written):
        """The author of a name key, counting the spelling once for the entry that uses it."""
        author_id = self.author_keys.get(key)
        if author_id is None:
            author_id = self.author_keys[key] = len(self.author_names)
            self.author_names.append(written)
            self.author_entries.append(0)
        elif written != self.author_names[author_id]:
            others = self.other_spellings.setdefault(author_id, collections.Counter())
            others[written] += 1
        self.author_entries[author_id] += 1
        return author_id

    def track_name(self, text):
        """split_track's name of a track as an entry gives it, read once per spelling."""
        if text not in self.track_names:
            self.track_names[text] = split_track(text)[0]
        return self.track_names[text]

    def track_id(self, name):
        """(id, name, area) of a track name as split_track gives it."""
        if name not in self.tracks:
            area, _, subarea = name.partition(f" {TRACK_SEPARATOR} ")
            self.tracks[name] = (len(self.tracks) + 1, area, subarea or None)
        return self.tracks[name][0], name, self.tracks[name][1]

    def affiliation_ids(self, slugs):
        ids = {}
        for slug in slugs:
            slug = affiliation_slug(slug)
            if slug:
                ids.setdefault(slug, self.affiliations.setdefault(slug, len(self.affiliations) + 1))
        return ids

    def author_links(self, entry):
        """(author_id, position) in the order the source lists them; the profile owner last
        with no position when the cut-short list does not show them."""
        links, seen = [], set()
        for position, name in enumerate(entry.authors, start=1):
            key, written = read_author_name(name)
            if key not in seen:
                seen.add(key)
                links.append((self.author_id(key, written), position))
        if entry.owner:
            key, written = read_author_name(entry.owner)
            if key not in seen:
                links.append((self.author_id(key, written), None))
        return links

    def add_entry(self, entry, source_id, pid, plain, label, keys):
        """One prepared entry (see prepare_entry) with its version keys: a new paper row, or
        one more entry of a paper id already written, kept for the merge after the stream."""
        self.pending["paper_sources"].append(
            (pid, source_id, entry.line, entry.venue, entry.year, entry.status)
        )
        title = next((key for kind, key in keys if kind == TITLE), None)
        self.pending["version_keys"].extend((key, kind, pid, title) for kind, key in keys)
        track = self.track_name(entry.track) if entry.track else None
        links = self.author_links(entry)
        affiliations = self.affiliation_ids(entry.affiliations)
        if not self.paper_ids.add(int(pid, 16)):
            self.duplicates.setdefault(pid, []).append(
                Version(
                    pid,
                    entry.title,
                    entry.venue,
                    entry.year,
                    entry.status,
                    entry.url,
                    track or None,
                    entry.truncated,
                    tuple(links),
                    tuple(affiliations.values()),
                )
            )
            return
        track_id, track, area = self.track_id(track) if track else (None,) * 3
        self.row_facets.append(self.facet_code(entry.venue, entry.year, entry.status, area, track))
        self.pending["papers"].append(
            (
                pid,
                label,
                entry.title,
                track,
                area,
                to_json([self.author_names[a] for a, _ in links]),
                to_json(sorted(affiliations)),
                len(links),
                int(entry.truncated),
                1,
                entry.url,
                entry.venue,
                entry.year,
                entry.status,
                track_id,
                entry.abstract,
                plain,
            )
        )
        self.pending["paper_authors"] += [(pid, a, position) for a, position in links]
        self.pending["paper_affiliations"] += [(pid, i) for i in affiliations.values()]
        if len(self.pending["papers"]) >= BATCH_SIZE:
            self.flush()

    def facet_code(self, *values):
        """The code of a row's facet values (venue, year, status, area, track)."""
        code = self.facet_codes.get(values)
        if code is None:
            code = self.facet_codes[values] = len(self.facet_codes) + 1
        return code

    def facet_rows(self):
        """(rowid, (venue, year, status, area, track)) of every paper, in rowid order."""
        values = [None, *self.facet_codes]  # code -> values
        for rowid, code in enumerate(self.row_facets, start=1):
            if code:
                yield rowid, values[code]

    def stored_version(self, pid):
        """The first entry of a paper id, as its row holds it."""
        execute = self.db.conn.execute
        title, venue, year, status, url, track, truncated = execute(
            "select title, venue, year, status, url, track, authors_truncated "
            "from papers where id = ?",
            [pid],
        ).fetchone()
        authors = execute(
            "select author_id, position from paper_authors where paper_id = ?", [pid]
        ).fetchall()
        affiliations = execute(
            "select affiliation_id from paper_affiliations where paper_id = ?", [pid]
        ).fetchall()
        return Version(
            pid,
            title,
            venue,
            year,
            status,
            url,
            track,
            bool(truncated),
            tuple(authors),
            tuple(row[0] for row in affiliations),
        )

    def paper_authors(self, pid):
        """Author ids of every entry with this paper id."""
        rows = self.db.execute("select author_id from paper_authors where paper_id = ?", [pid])
        return {row[0] for row in rows} | {
            author for version in self.duplicates.get(pid, ()) for author, _ in version.authors
        }

    def version_groups(self):
        """Sets of paper ids that are versions of one paper (merge.py's rules)."""
        groups = VersionGroups()
        # an entry's paper id holds its title's words (prepare.entry_paper_id): one title key
        # an id, or none. The keys two ids share are found first (one sort of the narrow
        # rows), and only theirs are read again with the ids and titles: sorting every row
        # with them took 3.0 s of the 1M build's serial end, the two passes 1.0 s
        shared = self.db.execute(
            "select kind, group_concat(paper_id || ' ' || ifnull(title, '')), "
            "count(distinct title) from "
            "(select distinct key, kind, paper_id, title from temp.version_keys "
            "where (key, kind) in (select key, kind from temp.version_keys "
            "group by key, kind having min(paper_id) != max(paper_id))) "
            "group by key, kind"
        ).fetchall()
        for kind, members, titles in shared:
            titled = dict(member.split(" ") for member in members.split(","))
            ids = sorted(titled)
            if kind == DIRECT and titles < 2:
                pairs = itertools.pairwise(ids)
            elif kind == DIRECT:  # two titles among them: rare, so authors are read per paper
                pairs = direct_matches(
                    [(pid, titled[pid] or None, self.paper_authors(pid)) for pid in ids]
                )
            else:
                pairs = title_matches([(pid, self.paper_authors(pid)) for pid in ids])
            for first, second in pairs:
                groups.union(first, second)
        return groups.groups()

    def merge_versions(self):
        """Each paper with more than one entry becomes the paper resolve() says; returns the
        ids whose author and affiliation lists changed."""
        groups = self.version_groups()
        grouped = {pid for group in groups for pid in group}
        groups += [[pid] for pid in sorted(self.duplicates) if pid not in grouped]
        changed = set()
        for group in groups:
            versions, stored = [], {}
            for pid in group:
                versions.append(stored.setdefault(pid, self.stored_version(pid)))
                versions.extend(self.duplicates.pop(pid, ()))
            paper = resolve(versions)
            if self.write_paper(paper, stored[paper.id]):
                changed.add(paper.id)
            self.aliases += len(paper.aliases)
        self.db.execute("drop table temp.version_keys")
        return changed

    def write_paper(self, paper, stored):
        """One merged paper over the row of its shown version (`stored`, as streamed); the
        other versions' rows go, their ids become aliases. Returns whether its author or
        affiliation links changed (most repeated entries add none)."""
        execute = self.db.conn.execute
        for alias in paper.aliases:
            self.unindex(alias)
            execute("update paper_sources set paper_id = ? where paper_id = ?", [paper.id, alias])
            execute("delete from paper_authors where paper_id = ?", [alias])
            execute("delete from paper_affiliations where paper_id = ?", [alias])
            (rowid,) = execute(
                "delete from papers where id = ? returning rowid", [alias]
            ).fetchone()
            self.row_facets[rowid - 1] = 0
            execute("insert into paper_aliases (alias, paper_id) values (?, ?)", [alias, paper.id])
        authors_changed = set(paper.authors) != set(stored.authors)
        if authors_changed:
            execute("delete from paper_authors where paper_id = ?", [paper.id])
            self.db.conn.executemany(
                INSERTS["paper_authors"], ((paper.id, a, p) for a, p in paper.authors)
            )
        affiliations_changed = set(paper.affiliations) != set(stored.affiliations)
        if affiliations_changed:
            execute("delete from paper_affiliations where paper_id = ?", [paper.id])
            self.db.conn.executemany(
                INSERTS["paper_affiliations"], ((paper.id, a) for a in paper.affiliations)
            )
        track_id, track, area = self.track_id(paper.track) if paper.track else (None,) * 3
        # every row the merge changes is indexed again (reindex), whichever columns change
        self.unindex(paper.id)
        updated = execute(
            "update papers set title = ?, label = coalesce(?, label), track = ?, area = ?, "
            "track_id = ?, url = ?, venue = ?, year = ?, status = ?, authors_truncated = ?, "
            "source_count = ? where id = ? returning rowid",
            [
                paper.title,
                paper.title,
                track,
                area,
                track_id,
                paper.url,
                paper.venue,
                paper.year,
                paper.status,
                int(paper.truncated),
                paper.source_count,
                paper.id,
            ],
        )
        (rowid,) = updated.fetchone()
        self.row_facets[rowid - 1] = self.facet_code(
            paper.venue, paper.year, paper.status, area, track
        )
        return bool(paper.aliases) or authors_changed or affiliations_changed

    def unindex(self, pid):
        """Before the merge first changes or deletes a paper's row: keep the text the stream
        indexed, for reindex() to take out of the full-text index."""
        self.db.conn.execute(
            f"insert or ignore into temp.unindexed (rowid, {', '.join(FTS_COLUMNS)}) "
            f"select rowid, {', '.join(FTS_COLUMNS)} from papers where id = ?",
            [pid],
        )

    def reindex(self):
        """The papers the merge changed, out of the full-text index with the text they were
        indexed with, and back in (those still there) with their text now: in rowid order, so
        FTS5 adds two segments. Changed one at a time in the order merged, each change out of
        order flushed FTS5's pending terms as a segment of its own (~0.7 ms a paper).

        Only rows whose text differs, or that the merge deleted: most merged papers are one
        entry seen twice (at 1M synthetic papers 11,480 rows, none with new text), and taking
        out and putting back the same text leaves the same index after the optimize, after
        tokenizing it twice on the way to it (the full-text thread's merge waits for that)."""
        columns = ", ".join(FTS_COLUMNS)
        changed = " or ".join(f"papers.{column} is not old.{column}" for column in FTS_COLUMNS)
        self.db.execute(
            "delete from temp.unindexed where rowid in (select old.rowid from temp.unindexed "
            f"as old join papers on papers.rowid = old.rowid where not ({changed}))"
        )
        for sql, send in (
            (f"select rowid, {columns} from temp.unindexed order by rowid", self.full_text.remove),
            (
                (
                    f"select rowid, {columns} from papers "
                    "where rowid in (select rowid from temp.unindexed) order by rowid"
                ),
                self.full_text.add,
            ),
        ):
            cursor = self.db.conn.execute(sql)
            while rows := cursor.fetchmany(BATCH_SIZE):
                send(FTS_COLUMNS, rows)
        self.db.conn.execute("drop table temp.unindexed")
        # merged and checked by the thread while this process counts papers and builds indexes
        self.full_text.complete()

    def spelling_counts(self, author_id, first):
        """{spelling: entries using it} of an author with more than one spelling."""
        others = self.other_spellings[author_id]
        return {first: self.author_entries[author_id] - sum(others.values()), **others}

    def name_authors(self):
        """Each author's display name from the spellings counted (names.py); returns the
        first spellings of the authors now shown under another one."""
        renamed = {}
        for author_id in self.other_spellings:
            first = self.author_names[author_id]
            self.author_names[author_id] = display_name(self.spelling_counts(author_id, first))
            if self.author_names[author_id] != first:
                renamed[author_id] = first
        return renamed

    def variant_rows(self, renamed):
        """(author id, spelling, entries using it) for every spelling of the authors whose
        name was spelled more than one way; the others' one spelling is their name."""
        for author_id in sorted(self.other_spellings):
            first = renamed.get(author_id, self.author_names[author_id])
            for name, count in sorted(self.spelling_counts(author_id, first).items()):
                yield author_id, name, count

    def refresh_lists(self, paper_ids):
        """Recompute the readable JSON columns from the link tables."""
        execute = self.db.conn.execute
        slugs = {i: slug for slug, i in self.affiliations.items()}
        for pid in paper_ids:
            rows = execute(
                "select author_id from paper_authors where paper_id = ? "
                "order by position is null, position, author_id",
                [pid],
            ).fetchall()
            affiliation_rows = execute(
                "select affiliation_id from paper_affiliations where paper_id = ?", [pid]
            ).fetchall()
            # the author names are indexed (external-content FTS): out with the old text first
            self.unindex(pid)
            execute(
                "update papers set authors = ?, author_count = ?, affiliations = ? where id = ?",
                [
                    to_json([self.author_names[r[0]] for r in rows]),
                    len(rows),
                    to_json(sorted(slugs[r[0]] for r in affiliation_rows)),
                    pid,
                ],
            )

    def papers_of_authors(self, author_ids):
        """Ids of the papers of these authors. One pass over paper_authors, whatever their
        number (its index by author is made later): in chunks of 500 ids, each chunk read it
        all again (1M papers, 1,161 renamed authors: 1.07 s in three chunks, 0.58 s in one)."""
        rows = self.db.conn.execute(
            "select paper_id from paper_authors where author_id in "
            "(select value from json_each(?))",
            [json.dumps(sorted(author_ids))],
        )
        return {row[0] for row in rows}

    def flush(self):
        # rowids run 1, 2, ... (no deletes while streaming): the index gets each row's text
        # from the row as written: label, authors and abstract_text, which is
        # coalesce(abstract_plain, abstract)
        self.full_text.add(
            FTS_COLUMNS,
            [
                (
                    rowid,
                    row[LABEL],
                    row[AUTHORS],
                    row[ABSTRACT] if row[ABSTRACT_PLAIN] is None else row[ABSTRACT_PLAIN],
                )
                for rowid, row in enumerate(self.pending["papers"], start=self.papers_written + 1)
            ],
        )
        self.papers_written += len(self.pending["papers"])
        for position, index in list(self.empty_indexes.items()):
            if any(row[position] is not None for row in self.pending["papers"]):
                self.db.execute(f"drop index {index}")
                del self.empty_indexes[position]
        for name in STREAMED:
            rows = self.pending[name]
            if rows:
                # plain executemany: sqlite-utils' insert_all re-inspects every row (dicts,
                # JSON detection), which costs more than SQLite's own insert at this size
                self.db.conn.executemany(STREAM_INSERTS[name], rows)
                rows.clear()

    def copy_staged(self):
        """The link tables' streamed rows into their tables, in key order: each insert then
        goes after the one before, in a page the cache holds."""
        for name in STAGED:
            pk = ", ".join(SCHEMA[name][1]["pk"])
            self.db.execute(f"insert into {name} select * from temp.staged_{name} order by {pk}")
            self.db.execute(f"drop table temp.staged_{name}")

    def finish(self):
        self.flush()
        self.copy_staged()
        merged = self.merge_versions()
        renamed = self.name_authors()
        for name in ("sources", "load_problems"):
            self.db[name].insert_all(self.pending[name], batch_size=BATCH_SIZE)
        self.db.conn.executemany(
            INSERTS["authors"],
            (
                (author_id, self.author_names[author_id], key, 0)
                for key, author_id in self.author_keys.items()
            ),
        )
        self.db.conn.executemany(INSERTS["author_variants"], self.variant_rows(renamed))
        self.db["tracks"].insert_all(
            (
                {"id": i, "name": name, "area": area, "subarea": subarea, "paper_count": 0}
                for name, (i, area, subarea) in self.tracks.items()
            ),
            batch_size=BATCH_SIZE,
        )
        self.db["affiliations"].insert_all(
            (
                {"id": i, "slug": slug, "name": affiliation_name(slug), "paper_count": 0}
                for slug, i in self.affiliations.items()
            ),
            batch_size=BATCH_SIZE,
        )
        # look an author up by part of a name (`/catalog/authors?_search=levine`); no porter:
        # names are not English words
        self.db["authors"].enable_fts(["name"], tokenize=AUTHOR_FTS_TOKENIZER)
        stale = merged | self.papers_of_authors(renamed) if renamed else merged
        self.refresh_lists(sorted(stale))
        self.reindex()
        # the rows are final: counting by author, affiliation and track then reads these
        # indexes in order where it would sort the link tables itself
        index_foreign_keys(self.db)
        self.count_papers()
        # after the counts (authors.paper_count is indexed), before author_tracks (it reads
        # the index on papers' track and id)
        create_facet_indexes(self.db)
        self.count_author_tracks()
        add_facet_table(self.db.conn, self.facet_rows())
        return Summary(
            len(self.paper_ids) - self.aliases,
            len(self.author_keys),
            len(self.tracks),
            len(self.affiliations),
            self.problems,
        )

    def count_papers(self):
        for table, link_table, column in (
            ("authors", "paper_authors", "author_id"),
            ("affiliations", "paper_affiliations", "affiliation_id"),
            ("tracks", "papers", "track_id"),
        ):
            self.db.execute(
                f"update {table} set paper_count = counts.n from "
                f"(select {column} as ref, count(*) as n from {link_table} group by {column}) "
                f"as counts where {table}.id = counts.ref"
            )

    def count_author_tracks(self):
        # papers drive the join (CROSS JOIN keeps that order): one range lookup in
        # paper_authors per paper. Left to itself the planner scanned paper_authors and looked
        # up each link's paper, row and all: 4x the lookups, 1.0 -> 0.5 CPU-s at 100k papers.
        # The papers come from the index on (track, id), which holds the two columns needed
        # (the table, abstracts and all, is 3 GB at 1M papers), each track's in id order like
        # paper_authors. A track's name stands for its id (track_id() gives both): each
        # paper's name becomes the id through a temporary table keyed by name
        self.db.execute(
            "create temp table track_names (name text primary key, id integer) without rowid"
        )
        self.db.execute("insert into temp.track_names (name, id) select name, id from tracks")
        # per paper, before the links are grouped: the sort then orders two integers a
        # link, not an integer and a name (1M: 4.7 -> 3.9 s)
        self.db.execute(
            "insert into author_tracks (author_id, track_id, paper_count) "
            "select paper_authors.author_id, track_names.id, count(*) "
            "from papers indexed by idx_papers_track__id "
            "cross join temp.track_names on track_names.name = papers.track "
            "cross join paper_authors on paper_authors.paper_id = papers.id "
            "where papers.track is not null "
            "group by paper_authors.author_id, track_names.id"
        )
        self.db.execute("drop table temp.track_names")


# foreign keys nothing looks rows up by: an index would only cost build time and space
UNINDEXED_FOREIGN_KEYS = {("author_tracks", "track_id")}


def index_foreign_keys(db):
    """An index for every foreign key that does not lead its table's primary key
    (sqlite-utils' index_foreign_keys would repeat the link tables' keys)."""
    for name, (_columns, options) in SCHEMA.items():
        pk = options["pk"]
        leading = pk if isinstance(pk, str) else pk[0]
        for column, _table, _other in options.get("foreign_keys", []):
            if column != leading and (name, column) not in UNINDEXED_FOREIGN_KEYS:
                index_foreign_key(db, name, column)


def index_foreign_key(db, table, column):
    db[table].create_index([column], if_not_exists=True)


def finish_database(db, full_text):
    """The full-text index from its side database, statistics, SQLite's check and the
    index's own (CatalogWriter.finish made the indexes and the facet table)."""
    db.conn.commit()
    full_text.copy_into(db.conn)
    # per-term document counts: "related papers" picks a paper's rarest terms from it
    db.execute("create virtual table papers_fts_vocab using fts5vocab(papers_fts, 'row')")
    analyze(db)
    check_integrity(db)
    # checked in the side database while the lines above ran
    full_text.checked()


def analyze(db):
    """ANALYZE every table the planner chooses indexes for: not the virtual tables and their
    shadow tables, which FTS5 reads by key alone (counting the 800 MB of papers_fts_data was
    0.7 s of ANALYZE's 1.9 at 1M papers)."""
    virtual = set(db.table_names(fts5=True))
    shadow = {f"{name}_{suffix}" for name in virtual for suffix in FTS_SHADOW_TABLES}
    for table in db.table_names():
        if table not in virtual and table not in shadow:
            db.execute(f"analyze [{table}]")


def check_integrity(db):
    """SQLite's quick_check (the full-text index's own check runs on its side database).

    quick_check reads every page and b-tree (a disk or SQLite fault) without matching each
    index against its table: a fresh build writes both in one statement, and the full
    integrity_check cost 10x as much (2.7 of ~50 CPU-seconds at 100,000 papers)."""
    messages = [row[0] for row in db.execute("pragma quick_check")]
    if messages != ["ok"]:
        raise CatalogCheckFailed(f"quick_check: {'; '.join(messages[:5])}")


def build_catalog(
    files, db_path, skip_invalid=False, forced_format=None, progress=None, workers=None
):
    """Build a catalog from input files into db_path, replacing it atomically.

    Raises BuildFailed (leaving db_path untouched) when there are problems and
    skip_invalid is False, and TargetRefused, before any work, when db_path is not a regular
    file. `workers` parsing processes (default: one per CPU for large inputs, none for small
    ones) never change the result.
    """
    with atomic.building(db_path) as temporary:
        summary = write_catalog(files, str(temporary.path), forced_format, progress, workers)
        if summary.problems and not skip_invalid:
            raise BuildFailed(summary.problems)
        temporary.replace_target()
        return summary


def write_catalog(files, path, forced_format=None, progress=None, workers=None):
    db = sqlite_utils.Database(path)
    db.execute(f"pragma page_size = {PAGE_SIZE}")
    # a temporary file no reader sees yet: durability would only cost time
    db.execute("pragma journal_mode = off")
    db.execute("pragma synchronous = off")
    db.execute(f"pragma cache_size = -{STREAM_CACHE_KB}")
    db.execute(f"pragma threads = {SORTER_THREADS}")
    full_text = SideIndex(path + atomic.FULL_TEXT_SUFFIX, "papers_fts", PAGE_SIZE)
    try:
        summary = write_rows(db, files, forced_format, progress, workers, full_text)
        store_public_paths(db)
        finish_database(db, full_text)
        db.execute("pragma journal_mode = delete")
    finally:
        full_text.close()
        db.close()
    return summary


def store_public_paths(db):
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


@contextlib.contextmanager
def cyclic_collector_paused(paused):
    """Python's cyclic garbage collector off while `paused`, on again after (and a collection).

    With workers parsing, this process only writes rows, and what it drops goes by reference
    count (a 100k build left 15 objects in cycles, parsing in-process ~2 an entry). The
    collector's passes were over the writer's growing maps: 13 CPU-s of the 1M build, 86 full
    collections."""
    if not paused or not gc.isenabled():
        yield
        return
    gc.disable()
    try:
        yield
    finally:
        gc.enable()
        gc.collect()


def write_rows(db, files, forced_format, progress, workers, full_text):
    writer = CatalogWriter(db, full_text)
    # sorted: the same inputs in any order give the same ids and rows
    files = sorted(files, key=str)
    workers = worker_count(files, workers)
    sources = prepared_sources(files, forced_format, workers)
    with db.atomic(), cyclic_collector_paused(workers > 0):
        # closed as soon as the last file is read: the parsing workers exit then, before
        # finish() grows this process (left to the garbage collector, they lived on through
        # it: ~90 MB more at the 1M build's peak)
        with contextlib.closing(sources):
            for source_id, (file, (source, items)) in enumerate(zip(files, sources), start=1):
                entries = problems = 0
                for item in items:
                    if isinstance(item, Problem):
                        writer.add_problem(item)
                        problems += 1
                    else:
                        entry, pid, plain, label, keys = item
                        writer.add_entry(entry, source_id, pid, plain, label, keys)
                        entries += 1
                writer.add_source(source_id, source, entries, problems)
                if progress:
                    progress(file)
        db.execute(f"pragma cache_size = -{CACHE_KB}")
        # returning drops the writer: its id and name maps are freed for indexes and FTS
        return writer.finish()
