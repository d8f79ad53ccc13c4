"""Entries -> one SQLite catalog: schema, merge of duplicates, FTS, indexes, atomic replace."""

import json
import sqlite3
import threading
from contextlib import closing
from dataclasses import dataclass, field

import sqlite_utils

from . import atomic
from .normalize import (
    affiliation_name,
    affiliation_slug,
    display_name,
    display_rank,
    name_key,
    split_track,
)
from .prepare import prepared_sources, worker_count
from .records import Problem
from .sources import public_paths

FTS_TOKENIZER = "porter unicode61 remove_diacritics 2"
# label (the title, or the heading derived from the abstract), authors (names), plain abstract:
# /search weighs them 10:4:1
FTS_COLUMNS = ["label", "authors", "abstract_text"]
AUTHOR_FTS_TOKENIZER = "unicode61 remove_diacritics 2"
BATCH_SIZE = 2000
# rows of 2-4 KB (abstracts) leave much of a 4 KB page empty; 16 KB pages hold several
PAGE_SIZE = 16384
CACHE_KB = 32768  # SQLite's page cache while building; the OS file cache does the rest

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
    "paper_sources": (
        {"paper_id": str, "source_id": int, "line": int},
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
    "load_problems": ({"id": int, "file": str, "line": int, "message": str}, {"pk": "id"}),
}
# link tables are only ever read by key: without a rowid each row is stored once, in its key
WITHOUT_ROWID = {"paper_authors", "paper_affiliations", "paper_sources", "author_tracks"}
# the plain text is stored only where it differs from the abstract (markup, spacing): about
# half the papers. Readers and the FTS index see the full plain text in abstract_text.
GENERATED_COLUMNS = [
    ("papers", "abstract_text", "text", "coalesce(abstract_plain, abstract)"),
]
# rows streamed while parsing; the small tables are written once at the end
STREAMED = ("papers", "paper_authors", "paper_affiliations", "paper_sources")
INSERTS = {
    name: "insert into {} ({}) values ({})".format(
        name, ", ".join(SCHEMA[name][0]), ", ".join("?" * len(SCHEMA[name][0]))
    )
    for name in STREAMED + ("authors",)
}
FACET_INDEXES = [
    # id second: a filtered view pages (and streams CSV) in primary-key order from the index
    ("papers", ["area", "id"]),
    ("papers", ["track", "id"]),
    ("papers", ["authors_truncated"]),
    ("papers", ["source_count"]),
    ("authors", ["key"]),
    ("authors", ["paper_count"]),
    ("affiliations", ["slug"]),
    ("tracks", ["area"]),
]


class CatalogCheckFailed(Exception):
    """The new catalog failed an integrity check: a SQLite or disk fault, not bad input."""


class BuildFailed(Exception):
    """The inputs had problems and --skip-invalid was not given."""

    def __init__(self, problems):
        super().__init__(f"{len(problems)} problem(s) in the input")
        self.problems = problems


def pack_state(truncated, author_count, has_track, has_title):
    """What the merge of a duplicate needs to know about a paper, as one small int: a million
    papers cost a dict entry each and no objects."""
    return author_count << 3 | has_title << 2 | has_track << 1 | bool(truncated)


def unpack_state(state):
    return bool(state & 1), state >> 3, bool(state & 2), bool(state & 4)


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


class CatalogWriter:
    """Streams entries into a fresh database; only ids, names and a small int per paper stay
    in memory. Duplicates are resolved in memory as they come and written after the stream;
    each batch of papers is added to the full-text index as it is written."""

    def __init__(self, db):
        self.db = db
        # int(paper id, 16) -> pack_state(...): an int key is half the size of the hex string
        self.papers = {}
        self.source_counts = {}  # paper id -> sources, only for papers seen more than once
        self.author_keys = {}  # normalized key -> author id
        self.author_names = [None]  # author id -> display name
        self.renamed_authors = set()
        self.tracks = {}  # name -> (id, area, subarea)
        self.affiliations = {}  # slug -> id
        self.pending = {name: [] for name in SCHEMA}
        self.merges = []
        self.problems = []
        self.papers_written = 0
        create_tables(db)
        db["papers"].enable_fts(FTS_COLUMNS, tokenize=FTS_TOKENIZER)

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

    def author_id(self, name):
        key = name_key(name)
        display = display_name(name)
        author_id = self.author_keys.get(key)
        if author_id is None:
            author_id = self.author_keys[key] = len(self.author_names)
            self.author_names.append(display)
        elif display != (best := self.author_names[author_id]) and display_rank(
            display
        ) < display_rank(best):
            self.author_names[author_id] = display
            self.renamed_authors.add(author_id)
        return author_id

    def track_id(self, text):
        name, area, subarea = split_track(text)
        if not name:
            return None, None, None
        if name not in self.tracks:
            self.tracks[name] = (len(self.tracks) + 1, area, subarea)
        return self.tracks[name][0], name, area

    def affiliation_ids(self, slugs):
        ids = {}
        for slug in slugs:
            slug = affiliation_slug(slug)
            if slug:
                ids.setdefault(slug, self.affiliations.setdefault(slug, len(self.affiliations) + 1))
        return ids

    def author_links(self, pid, entry):
        """(paper_id, author_id, position) in the order the source lists them; the profile
        owner last with no position when the cut-short list does not show them."""
        links, seen = [], set()
        for position, name in enumerate(entry.authors, start=1):
            author_id = self.author_id(name)
            if author_id not in seen:
                seen.add(author_id)
                links.append((pid, author_id, position))
        if entry.owner:
            owner_id = self.author_id(entry.owner)
            if owner_id not in seen:
                links.append((pid, owner_id, None))
        return links

    def add_entry(self, entry, source_id, pid, text, label):
        """One prepared entry (see prepare_entry): a new paper, or a duplicate to merge."""
        self.pending["paper_sources"].append((pid, source_id, entry.line))
        if int(pid, 16) in self.papers:
            self.merge_entry(pid, entry)
            return
        track_id, track, area = self.track_id(entry.track) if entry.track else (None,) * 3
        affiliations = self.affiliation_ids(entry.affiliations)
        links = self.author_links(pid, entry)
        self.papers[int(pid, 16)] = pack_state(
            entry.truncated, len(links), track_id is not None, entry.title is not None
        )
        self.pending["papers"].append(
            (
                pid,
                label,
                entry.title,
                track,
                area,
                self.names_json(links),
                json.dumps(sorted(affiliations), ensure_ascii=False),
                len(links),
                int(entry.truncated),
                1,
                entry.url,
                track_id,
                entry.abstract,
                None if text == entry.abstract else text,
            )
        )
        self.pending["paper_authors"].extend(links)
        self.pending["paper_affiliations"].extend((pid, i) for i in affiliations.values())
        if len(self.pending["papers"]) >= BATCH_SIZE:
            self.flush()

    def names_json(self, links):
        return json.dumps([self.author_names[link[1]] for link in links], ensure_ascii=False)

    def merge_entry(self, pid, entry):
        """The same paper from another source: keep every source, unite affiliations, prefer
        a track over none and the complete author list over a cut-short one.

        Ids are given out now, in stream order; the rows are written after the stream
        (write_merge), in the same order, so a duplicate never forces a small batch."""
        truncated, author_count, has_track, has_title = unpack_state(self.papers[int(pid, 16)])
        source_count = self.source_counts[pid] = self.source_counts.get(pid, 1) + 1
        updates = {"source_count": source_count}
        if entry.track and not has_track:
            track_id, updates["track"], updates["area"] = self.track_id(entry.track)
            updates["track_id"] = track_id
            has_track = track_id is not None
        if entry.title and not has_title:
            updates["title"] = updates["label"] = entry.title
            has_title = True
        links = self.author_links(pid, entry)
        better = (truncated, len(links)) > (entry.truncated, author_count)
        if better:
            truncated, author_count = entry.truncated, len(links)
            updates["authors_truncated"] = int(entry.truncated)
        self.papers[int(pid, 16)] = pack_state(truncated, author_count, has_track, has_title)
        affiliations = list(self.affiliation_ids(entry.affiliations).values())
        self.merges.append((pid, entry.url, better, links, affiliations, updates))

    def write_merge(self, pid, url, better, links, affiliations, updates):
        execute = self.db.conn.execute
        if url:
            execute("update papers set url = coalesce(url, ?) where id = ?", [url, pid])
        if better:
            execute("delete from paper_authors where paper_id = ? and position is not null", [pid])
        for _, author_id, position in links:
            verb = "insert or replace" if better and position else "insert or ignore"
            execute(
                f"{verb} into paper_authors (paper_id, author_id, position) values (?, ?, ?)",
                [pid, author_id, position],
            )
        for affiliation_id in affiliations:
            execute("insert or ignore into paper_affiliations values (?, ?)", [pid, affiliation_id])
        assignments = ", ".join(f"{column} = ?" for column in updates)
        if "title" in updates:  # external-content FTS: take out the old text, index the new
            self.index_paper(pid, "'delete', ")
        execute(f"update papers set {assignments} where id = ?", [*updates.values(), pid])
        if "title" in updates:
            self.index_paper(pid)

    def index_paper(self, pid, command=""):
        columns = ", ".join(FTS_COLUMNS)
        target = "papers_fts, rowid" if command else "rowid"
        self.db.conn.execute(
            f"insert into papers_fts ({target}, {columns}) "
            f"select {command}rowid, {columns} from papers where id = ?",
            [pid],
        )

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
            self.index_paper(pid, "'delete', ")
            execute(
                "update papers set authors = ?, author_count = ?, affiliations = ? where id = ?",
                [
                    json.dumps([self.author_names[r[0]] for r in rows], ensure_ascii=False),
                    len(rows),
                    json.dumps(sorted(slugs[r[0]] for r in affiliation_rows), ensure_ascii=False),
                    pid,
                ],
            )
            self.index_paper(pid)

    def papers_of_renamed_authors(self):
        renamed = sorted(self.renamed_authors)
        papers = set()
        for start in range(0, len(renamed), 500):  # stay under SQLite's variable limit
            chunk = renamed[start : start + 500]
            placeholders = ",".join("?" * len(chunk))
            papers.update(
                row[0]
                for row in self.db.execute(
                    f"select paper_id from paper_authors where author_id in ({placeholders})",
                    chunk,
                )
            )
        return papers

    def flush(self):
        indexed = self.papers_written
        self.papers_written += len(self.pending["papers"])
        for name in STREAMED:
            rows = self.pending[name]
            if rows:
                # plain executemany: sqlite-utils' insert_all re-inspects every row (dicts,
                # JSON detection), which costs more than SQLite's own insert at this size
                self.db.conn.executemany(INSERTS[name], rows)
                rows.clear()
        # indexed batch by batch: this process would otherwise wait for the parsing workers,
        # and the index is then ready when the stream ends (rowids run 1, 2, ...: no deletes)
        self.db.conn.execute(
            f"insert into papers_fts (rowid, {', '.join(FTS_COLUMNS)}) "
            f"select rowid, {', '.join(FTS_COLUMNS)} from papers where rowid > ?",
            [indexed],
        )

    def finish(self):
        self.flush()
        for name in ("sources", "load_problems"):
            self.db[name].insert_all(self.pending[name], batch_size=BATCH_SIZE)
        self.db.conn.executemany(
            INSERTS["authors"],
            (
                (author_id, self.author_names[author_id], key, 0)
                for key, author_id in self.author_keys.items()
            ),
        )
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
        for merge in self.merges:
            self.write_merge(*merge)
        stale = {merge[0] for merge in self.merges}
        if self.renamed_authors:
            stale |= self.papers_of_renamed_authors()
        self.refresh_lists(sorted(stale))
        self.count_papers()
        self.count_author_tracks()
        return Summary(
            len(self.papers),
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
        # papers drive the join: one range lookup in paper_authors per paper with a track
        self.db.execute(
            "insert into author_tracks (author_id, track_id, paper_count) "
            "select paper_authors.author_id, papers.track_id, count(*) "
            "from papers join paper_authors on paper_authors.paper_id = papers.id "
            "where papers.track_id is not null "
            "group by paper_authors.author_id, papers.track_id"
        )


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
                db[name].create_index([column], if_not_exists=True)


def finish_database(db, path):
    """Indexes, the merged full-text index, statistics and integrity checks."""
    index_foreign_keys(db)
    for table, columns in FACET_INDEXES:
        # "track__id", not "track_id": that name is the foreign key's index
        name = f"idx_{table}_{'__'.join(columns)}"
        db[table].create_index(columns, index_name=name, if_not_exists=True)
    db["papers"].optimize()
    # per-term document counts: "related papers" picks a paper's rarest terms from it
    db.execute("create virtual table papers_fts_vocab using fts5vocab(papers_fts, 'row')")
    db.analyze()
    check_integrity(db, path)


def check_integrity(db, path):
    """SQLite's integrity_check and FTS5's integrity-check (index against content), side by
    side: the first on a read-only connection in a thread (SQLite releases the GIL), so a
    second core takes it while this connection runs the second."""
    db.conn.commit()  # the reader must see every row
    # the FTS check runs as an INSERT: in rollback-journal mode it may need the exclusive lock
    # while the reader holds its shared one (at 1M papers: "database is locked"). In WAL mode
    # a writer and a reader never wait for each other.
    side_by_side = db.execute("pragma journal_mode = wal").fetchone()[0] == "wal"
    results = []

    def run_sqlite_check():
        try:
            with closing(sqlite3.connect(f"file:{path}?mode=ro", uri=True)) as reader:
                results.append(reader.execute("pragma integrity_check").fetchall())
        except sqlite3.Error as error:
            results.append([(f"integrity_check could not run: {error}",)])

    # where WAL is refused (a file system without shared memory), one after the other
    thread = threading.Thread(target=run_sqlite_check)
    if side_by_side:
        thread.start()
    else:
        run_sqlite_check()
    try:
        db.execute("insert into papers_fts(papers_fts, rank) values ('integrity-check', 1)")
    except sqlite3.DatabaseError as error:
        raise CatalogCheckFailed(f"full-text index integrity-check: {error}") from error
    finally:
        if side_by_side:
            thread.join()
        db.conn.rollback()  # end the check's implicit transaction, keeping nothing it wrote
    messages = [row[0] for row in results[0]]
    if messages != ["ok"]:
        raise CatalogCheckFailed(f"integrity_check: {'; '.join(messages[:5])}")


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
    db.execute(f"pragma cache_size = -{CACHE_KB}")
    try:
        summary = write_rows(db, files, forced_format, progress, workers)
        store_public_paths(db)
        finish_database(db, path)
        db.execute("pragma journal_mode = delete")
    finally:
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


def write_rows(db, files, forced_format, progress, workers):
    writer = CatalogWriter(db)
    # sorted: the same inputs in any order give the same ids and rows
    files = sorted(files, key=str)
    sources = prepared_sources(files, forced_format, worker_count(files, workers))
    with db.atomic():
        for source_id, (file, (source, items)) in enumerate(zip(files, sources), start=1):
            entries = problems = 0
            for item in items:
                if isinstance(item, Problem):
                    writer.add_problem(item)
                    problems += 1
                else:
                    entry, pid, text, label = item
                    writer.add_entry(entry, source_id, pid, text, label)
                    entries += 1
            writer.add_source(source_id, source, entries, problems)
            if progress:
                progress(file)
        # returning drops the writer: its id and name maps are freed for indexes and FTS
        return writer.finish()
