"""Entries -> one SQLite catalog: schema, merge of duplicates, FTS, indexes, atomic replace."""

import glob
import json
import os
import tempfile
from dataclasses import dataclass, field
from pathlib import Path

import sqlite_utils

from .normalize import (
    affiliation_name,
    affiliation_slug,
    derive_label,
    display_name,
    display_rank,
    name_key,
    paper_id,
    plain_text,
    split_track,
)
from .records import Problem
from .sources import read_source

FTS_TOKENIZER = "porter unicode61 remove_diacritics 2"
BATCH_SIZE = 2000
TEMPORARY_SUFFIX = ".building"

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
            "abstract_text": str,
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
    "load_problems": ({"id": int, "file": str, "line": int, "message": str}, {"pk": "id"}),
}
FACET_INDEXES = [
    ("papers", ["area"]),
    ("papers", ["track"]),
    ("papers", ["authors_truncated"]),
    ("papers", ["source_count"]),
    ("authors", ["key"]),
    ("authors", ["paper_count"]),
    ("affiliations", ["slug"]),
    ("tracks", ["area"]),
]


class BuildFailed(Exception):
    """The inputs had problems and --skip-invalid was not given."""

    def __init__(self, problems):
        super().__init__(f"{len(problems)} problem(s) in the input")
        self.problems = problems


@dataclass
class PaperState:
    """What the merge of a duplicate needs to know, kept small so 1M papers fit in memory."""

    truncated: bool
    author_count: int
    has_track: bool
    has_title: bool
    source_count: int = 1


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


class CatalogWriter:
    """Streams entries into a fresh database; only ids and names stay in memory."""

    def __init__(self, db):
        self.db = db
        self.papers = {}
        self.authors = {}  # key -> [id, display name]
        self.renamed_authors = set()
        self.tracks = {}  # name -> (id, area, subarea)
        self.affiliations = {}  # slug -> id
        self.pending = {name: [] for name in SCHEMA}
        self.problems = []
        for name, (columns, options) in SCHEMA.items():
            db[name].create(columns, **options)

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
        name = display_name(name)
        author = self.authors.get(key)
        if author is None:
            author = self.authors[key] = [len(self.authors) + 1, name]
        elif display_rank(name) < display_rank(author[1]):
            author[1] = name
            self.renamed_authors.add(author[0])
        return author[0]

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
        """Link rows in the order the source lists them; the profile owner last with no
        position when the cut-short list does not show them."""
        links, seen = [], set()
        for position, name in enumerate(entry.authors, start=1):
            author_id = self.author_id(name)
            if author_id not in seen:
                seen.add(author_id)
                links.append({"paper_id": pid, "author_id": author_id, "position": position})
        if entry.owner:
            owner_id = self.author_id(entry.owner)
            if owner_id not in seen:
                links.append({"paper_id": pid, "author_id": owner_id, "position": None})
        return links

    def add_entry(self, entry, source_id):
        pid = paper_id(entry.abstract)
        self.pending["paper_sources"].append(
            {"paper_id": pid, "source_id": source_id, "line": entry.line}
        )
        if pid in self.papers:
            self.merge_entry(pid, entry)
            return
        track_id, track, area = self.track_id(entry.track) if entry.track else (None,) * 3
        affiliations = self.affiliation_ids(entry.affiliations)
        links = self.author_links(pid, entry)
        text = plain_text(entry.abstract)
        self.papers[pid] = PaperState(
            entry.truncated, len(links), track_id is not None, entry.title is not None
        )
        self.pending["papers"].append(
            {
                "id": pid,
                "label": entry.title or derive_label(text),
                "title": entry.title,
                "track": track,
                "area": area,
                "authors": self.names_json(links),
                "affiliations": json.dumps(sorted(affiliations), ensure_ascii=False),
                "author_count": len(links),
                "authors_truncated": int(entry.truncated),
                "source_count": 1,
                "url": entry.url,
                "track_id": track_id,
                "abstract": entry.abstract,
                "abstract_text": text,
            }
        )
        self.pending["paper_authors"].extend(links)
        self.pending["paper_affiliations"].extend(
            {"paper_id": pid, "affiliation_id": i} for i in affiliations.values()
        )
        if len(self.pending["papers"]) >= BATCH_SIZE:
            self.flush()

    def names_json(self, links):
        by_id = {author_id: name for author_id, name in self.authors.values()}
        return json.dumps([by_id[link["author_id"]] for link in links], ensure_ascii=False)

    def merge_entry(self, pid, entry):
        """The same paper from another source: keep every source, unite affiliations, prefer
        a track over none and the complete author list over a cut-short one."""
        self.flush()
        state = self.papers[pid]
        state.source_count += 1
        updates = {"source_count": state.source_count}
        if entry.track and not state.has_track:
            track_id, updates["track"], updates["area"] = self.track_id(entry.track)
            updates["track_id"] = track_id
            state.has_track = track_id is not None
        if entry.title and not state.has_title:
            updates["title"] = updates["label"] = entry.title
            state.has_title = True
        if entry.url:
            self.db.execute(
                "update papers set url = coalesce(url, ?) where id = ?", [entry.url, pid]
            )
        links = self.author_links(pid, entry)
        better = (state.truncated, len(links)) > (entry.truncated, state.author_count)
        if better:
            self.db.execute(
                "delete from paper_authors where paper_id = ? and position is not null", [pid]
            )
            state.truncated, state.author_count = entry.truncated, len(links)
            updates["authors_truncated"] = int(entry.truncated)
        for link in links:
            verb = "insert or replace" if better and link["position"] else "insert or ignore"
            self.db.execute(
                f"{verb} into paper_authors (paper_id, author_id, position) values (?, ?, ?)",
                [pid, link["author_id"], link["position"]],
            )
        for affiliation_id in self.affiliation_ids(entry.affiliations).values():
            self.db.execute(
                "insert or ignore into paper_affiliations values (?, ?)", [pid, affiliation_id]
            )
        self.db["papers"].update(pid, updates)
        self.refresh_lists([pid])

    def refresh_lists(self, paper_ids):
        """Recompute the readable JSON columns from the link tables."""
        names = {author_id: name for author_id, name in self.authors.values()}
        slugs = {i: slug for slug, i in self.affiliations.items()}
        for pid in paper_ids:
            rows = self.db.execute(
                "select author_id from paper_authors where paper_id = ? "
                "order by position is null, position, author_id",
                [pid],
            ).fetchall()
            affiliation_rows = self.db.execute(
                "select affiliation_id from paper_affiliations where paper_id = ?", [pid]
            ).fetchall()
            self.db["papers"].update(
                pid,
                {
                    "authors": json.dumps([names[r[0]] for r in rows], ensure_ascii=False),
                    "author_count": len(rows),
                    "affiliations": json.dumps(
                        sorted(slugs[r[0]] for r in affiliation_rows), ensure_ascii=False
                    ),
                },
            )

    def flush(self):
        for name, rows in self.pending.items():
            if rows and name not in ("sources", "load_problems"):
                self.db[name].insert_all(rows, batch_size=BATCH_SIZE)
                rows.clear()

    def finish(self):
        self.flush()
        for name in ("sources", "load_problems"):
            self.db[name].insert_all(self.pending[name], batch_size=BATCH_SIZE)
        self.db["authors"].insert_all(
            (
                {"id": author_id, "name": name, "key": key, "paper_count": 0}
                for key, (author_id, name) in self.authors.items()
            ),
            batch_size=BATCH_SIZE,
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
        if self.renamed_authors:
            placeholders = ",".join("?" * len(self.renamed_authors))
            affected = self.db.execute(
                f"select distinct paper_id from paper_authors where author_id in ({placeholders})",
                sorted(self.renamed_authors),
            ).fetchall()
            self.refresh_lists([row[0] for row in affected])
        self.count_papers()
        return Summary(
            len(self.papers),
            len(self.authors),
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


def finish_database(db):
    """Indexes, full-text search, statistics and integrity checks on the loaded rows."""
    db.index_foreign_keys()
    for table, columns in FACET_INDEXES:
        db[table].create_index(columns, if_not_exists=True)
    db["papers"].enable_fts(["title", "abstract_text"], tokenize=FTS_TOKENIZER)
    db["papers"].optimize()
    # per-term document counts: "related papers" picks a paper's rarest terms from it
    db.execute("create virtual table papers_fts_vocab using fts5vocab(papers_fts, 'row')")
    db.analyze()
    result = db.execute("pragma integrity_check").fetchone()[0]
    if result != "ok":
        raise RuntimeError(f"integrity check failed: {result}")
    db.execute("insert into papers_fts(papers_fts, rank) values ('integrity-check', 1)")


def remove_stale_temporaries(target):
    """A build killed midway leaves its temporary file; the next build removes it."""
    for path in glob.glob(str(target.parent / f".{target.name}.*{TEMPORARY_SUFFIX}")):
        try:
            os.remove(path)
        except OSError:
            pass


def build_catalog(files, db_path, skip_invalid=False, forced_format=None, progress=None):
    """Build a catalog from input files into db_path, replacing it atomically.

    Raises BuildFailed (leaving db_path untouched) when there are problems and
    skip_invalid is False.
    """
    target = Path(db_path)
    target.parent.mkdir(parents=True, exist_ok=True)
    remove_stale_temporaries(target)
    descriptor, temporary = tempfile.mkstemp(
        prefix=f".{target.name}.", suffix=TEMPORARY_SUFFIX, dir=target.parent
    )
    os.close(descriptor)
    try:
        summary = write_catalog(files, temporary, forced_format, progress)
        if summary.problems and not skip_invalid:
            raise BuildFailed(summary.problems)
        os.chmod(temporary, 0o644)
        os.replace(temporary, target)
        return summary
    finally:
        if os.path.exists(temporary):
            os.remove(temporary)


def write_catalog(files, path, forced_format=None, progress=None):
    db = sqlite_utils.Database(path)
    # a temporary file no reader sees yet: durability would only cost time
    db.execute("pragma journal_mode = off")
    db.execute("pragma synchronous = off")
    db.execute("pragma cache_size = -65536")
    writer = CatalogWriter(db)
    with db.atomic():
        # sorted: the same inputs in any order give the same ids and rows
        for source_id, file in enumerate(sorted(files, key=str), start=1):
            source, items = read_source(file, forced_format)
            entries = problems = 0
            for item in items:
                if isinstance(item, Problem):
                    writer.add_problem(item)
                    problems += 1
                else:
                    writer.add_entry(item, source_id)
                    entries += 1
            writer.add_source(source_id, source, entries, problems)
            if progress:
                progress(file)
        summary = writer.finish()
    finish_database(db)
    db.execute("pragma journal_mode = delete")
    db.close()
    return summary


def check_sources(files, forced_format=None):
    """Parse everything and return (entry count, problems) without writing anything."""
    entries, problems = 0, []
    for file in files:
        for item in read_source(file, forced_format)[1]:
            if isinstance(item, Problem):
                problems.append(item)
            else:
                entries += 1
    return entries, problems
