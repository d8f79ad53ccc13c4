"""Prepared entries -> the catalog's rows. The writer only writes what it is given: entries come
normalized (prepare.py), merged papers and author names come from the merge stage
(consolidate.py). It keeps the maps that give authors, tracks and affiliations their ids."""

import array
import collections
import itertools
import json
from collections.abc import Iterable, Iterator
from dataclasses import dataclass, field
from json.encoder import encode_basestring
from typing import Any, Protocol, TypedDict, cast

import sqlite_utils

from loader.build.facet_table import FacetValues, add_facet_table
from loader.build.full_text import SideIndex
from loader.build.id_set import IdSet
from loader.build.schema import (
    ABSTRACT,
    ABSTRACT_PLAIN,
    AUTHOR_FTS_TOKENIZER,
    AUTHORS,
    CATALOG_FORMAT,
    FTS_COLUMNS,
    FTS_SETTINGS,
    FTS_TOKENIZER,
    INSERTS,
    LABEL,
    MARKER_TABLE,
    SCHEMA,
    SCHEMA_VERSION,
    STAGED,
    STREAM_FOREIGN_KEYS,
    STREAM_INDEXES,
    STREAM_INSERTS,
    STREAMED,
    WHILE_EMPTY_INDEXES,
    create_facet_indexes,
    create_index,
    create_tables,
    index_foreign_key,
    index_foreign_keys,
    index_name,
)
from loader.records import (
    Affiliation,
    AuthorIds,
    AuthorName,
    Links,
    Paper,
    PreparedEntry,
    Problem,
    Track,
    Version,
)

BATCH_SIZE = 2000
# a row of a streamed table, its values in the order of the table's insert statement
Row = tuple[str | int | float | None, ...]


class SourceRow(TypedDict):
    """A row of `sources`: one input file."""

    id: int
    path: str
    format: str | None
    sha256: str
    papers: int
    problems: int
    as_of: str | None


class ProblemRow(TypedDict):
    """A row of `load_problems`."""

    id: int
    file: str
    line: int
    message: str


def to_json(strings: Iterable[str]) -> str:
    """A list of strings as json.dumps(..., ensure_ascii=False) writes it: the C string
    encoder without an encoder object's Python layers around it."""
    return "[" + ", ".join(map(encode_basestring, strings)) + "]"


def links_json(links: Links) -> str | None:
    """(kind, URL) pairs as a JSON object, as json.dumps(..., ensure_ascii=False) writes it;
    None for no links."""
    if not links:
        return None
    pairs = (f"{encode_basestring(kind)}: {encode_basestring(url)}" for kind, url in links)
    return "{" + ", ".join(pairs) + "}"


class Persons(Protocol):
    """The authors the sources give ids for (loader/build/persons.py IdentifiedAuthors, which
    applies the rule: the writer imports none)."""

    keys: dict[int, str]  # author id -> name key

    def find(self, ids: AuthorIds) -> int | None: ...

    def add(self, author_id: int, key: str, ids: AuthorIds) -> None: ...

    def rows(self) -> Iterable[tuple[int, str, str]]: ...


@dataclass
class Summary:
    papers: int = 0
    authors: int = 0
    tracks: int = 0
    affiliations: int = 0
    problems: list[Problem] = field(default_factory=list)
    categories: int = 0
    # records a category filter left out (catalog.py counts them)
    left_out: int = 0
    # authors the sources give ids for, and the names without ids that joined one of them
    # (catalog.py counts the joins: loader/build/persons.py)
    persons: int = 0
    names_joined: int = 0
    disputed_ids: int = 0  # ids given beside two people who disagree (rules/persons.py)
    # (person, paper, the name's author id, what they share) of each name joined
    joined_names: list[tuple[int, str, int, str]] = field(default_factory=list)

    def __str__(self) -> str:
        left_out = f", {self.left_out} records left out by category" if self.left_out else ""
        return (
            f"{self.papers} papers, {self.authors} authors, {self.tracks} tracks, "
            f"{self.affiliations} affiliations, {len(self.problems)} problems{left_out}"
        )


class CatalogWriter:
    """Streams prepared entries into a fresh database, one row per paper id (abstract hash);
    the entries that repeat a paper id are kept as versions for the merge stage, which then
    gives back each merged paper (write_paper) and the authors' names.

    In memory: the paper ids seen, author, track and affiliation maps, and the repeated
    entries until they are merged. The keys that find versions (8-byte hashes) go to a
    temporary table, so finding versions costs SQLite's sorter, not memory."""

    def __init__(
        self, db: sqlite_utils.Database, full_text: SideIndex, identified: Persons
    ) -> None:
        self.db = db
        self.full_text = full_text
        # int(paper id, 16) of every paper row written
        self.paper_ids = IdSet()
        self.duplicates: dict[str, list[Version]] = {}  # paper id -> its entries after the first
        self.author_keys: dict[str, int] = {}  # name key -> author id (of no ids)
        # the authors the sources give ids for: persons, apart from the name-keyed ones
        self.identified = identified
        self.keys_by_id: dict[int, str] | None = None  # author_key_of()
        # author id -> first spelling seen (then the display name)
        self.author_names: list[str] = [""]
        self.author_entries = array.array("L", [0])  # author id -> entries naming them
        # author id -> Counter of spellings other than the first
        self.other_spellings: dict[int, collections.Counter[str]] = {}
        self.tracks: dict[str, tuple[int, str, str | None]] = {}  # name -> (id, area, subarea)
        # tracks only repeated entries gave: a merged paper may show one
        self.repeated_tracks: dict[str, Track] = {}
        self.affiliations: dict[str, int] = {}  # slug -> id
        self.affiliation_names: list[str] = [""]  # affiliation id -> first name seen (then shown)
        self.affiliation_entries = array.array("L", [0])  # affiliation id -> entries giving it
        # affiliation id -> Counter of names other than the first (a slug written two ways)
        self.other_affiliation_names: dict[int, collections.Counter[str]] = {}
        # affiliation id -> the first country an entry gives it (None: none yet)
        self.affiliation_countries: list[str | None] = [None]
        # source id -> its as_of (known before its entries come: a paper's citations carry it)
        self.source_dates: dict[int, str | None] = {}
        self.categories: dict[str, int] = {}  # name -> id
        self.category_names: list[str] = [""]  # category id -> name
        # rows of the STREAMED tables not yet written (flush); the small tables' at the end
        self.pending: dict[str, list[Row]] = {name: [] for name in STREAMED}
        self.source_rows: list[SourceRow] = []
        self.problem_rows: list[ProblemRow] = []
        self.problems: list[Problem] = []
        self.papers_written = 0
        # each row's facet values (facet_table.COLUMNS) as a code, kept while streaming: the
        # facet table is then written from memory, not read back from the wide papers table.
        # rowid - 1 -> code; 0 for a row the merge deleted
        self.row_facets = array.array("I")
        self.facet_codes: dict[FacetValues, int] = {}  # values -> code (1, 2, ...)
        # rowid - 1 -> hash() of the row's label (0 for a row the merge deleted): the merge
        # stage finds the labels several papers share from these, not from the wide table
        self.label_keys = array.array("q")
        self.aliases = 0
        create_tables(db)
        for table, columns, rows in STREAM_INDEXES:
            create_index(db, table, columns, rows)
        for table, column in STREAM_FOREIGN_KEYS:
            index_foreign_key(db, table, column)
        papers_columns = list(SCHEMA["papers"][0])
        # papers row position of the column -> the index kept while no row has a value there
        self.empty_indexes: dict[int, str] = {}
        for table, columns, rows in WHILE_EMPTY_INDEXES:
            create_index(db, table, columns, rows)
            self.empty_indexes[papers_columns.index(columns[0])] = index_name(table, columns)
        # title: the entry's TITLE key, so that the merge stage can tell titles apart
        db.execute(
            "create temp table version_keys (key integer, kind integer, paper_id text, title integer)"
        )
        for name in STAGED:
            db.execute(f"create temp table staged_{name} ({', '.join(SCHEMA[name][0])})")
        db.execute(
            f"create temp table unindexed (rowid integer primary key, {', '.join(FTS_COLUMNS)})"
        )
        # the catalog's table, empty until the side index is copied into its shadow tables
        db.table("papers").enable_fts(FTS_COLUMNS, tokenize=FTS_TOKENIZER)
        sql = db.execute("select sql from sqlite_master where name = 'papers_fts'").fetchone()[0]
        full_text.define(sql, FTS_COLUMNS, FTS_SETTINGS)

    def date_source(self, source_id: int, as_of: str | None) -> None:
        """The date of a source's content, before its entries are added."""
        self.source_dates[source_id] = as_of

    def add_source(
        self, source_id: int, path: str, format: str | None, sha256: str, papers: int, problems: int
    ) -> None:
        self.source_rows.append(
            {
                "id": source_id,
                "path": path,
                "format": format,
                "sha256": sha256,
                "papers": papers,
                "problems": problems,
                "as_of": self.source_dates.get(source_id),
            }
        )

    def add_problem(self, problem: Problem) -> None:
        self.problems.append(problem)
        self.problem_rows.append(
            {
                "id": len(self.problems),
                "file": problem.path,
                "line": problem.line,
                "message": problem.message,
            }
        )

    def author_id(self, author: AuthorName) -> int:
        """The author of a name key, counting the spelling once for the entry that uses it."""
        key, written = author
        author_id = self.author_keys.get(key)
        if author_id is None:
            author_id = self.author_keys[key] = self.new_author(written)
        return self.counted(author_id, written)

    def person_id(self, author: AuthorName, ids: AuthorIds) -> int:
        """The author of these ids (a person, persons.py), counting the spelling once for the
        entry that uses it; a name without ids is author_id()'s."""
        if not ids:
            return self.author_id(author)
        key, written = author
        author_id = self.identified.find(ids)
        if author_id is None:
            author_id = self.new_author(written)
            self.identified.add(author_id, key, ids)
        return self.counted(author_id, written)

    def new_author(self, written: str) -> int:
        """A new author's id, its first spelling `written`."""
        self.author_names.append(written)
        self.author_entries.append(0)
        return len(self.author_names) - 1

    def counted(self, author_id: int, written: str) -> int:
        """The author, counted once more for an entry, with the spelling it used there."""
        if written != self.author_names[author_id]:
            others = self.other_spellings.setdefault(author_id, collections.Counter())
            others[written] += 1
        self.author_entries[author_id] += 1
        return author_id

    def key_of(self, author_id: int) -> str:
        """The name key an author was first found by (a person's: its first spelling's)."""
        key = self.identified.keys.get(author_id)
        if key is None:
            key = self.author_key_of().get(author_id, "")
        return key

    def author_key_of(self) -> dict[int, str]:
        """author id -> name key of the name-keyed authors (made once, after the stream)."""
        if self.keys_by_id is None:
            self.keys_by_id = {i: key for key, i in self.author_keys.items()}
        return self.keys_by_id

    def move_entries(self, gone: int, kept: int, entries: int) -> None:
        """`entries` entries naming `gone` name `kept` now (persons.join_persons): counted
        for `kept`, under `gone`'s spelling."""
        self.author_entries[gone] -= entries
        self.author_entries[kept] += entries
        spelled = self.author_names[gone]
        if spelled != self.author_names[kept]:
            others = self.other_spellings.setdefault(kept, collections.Counter())
            others[spelled] += entries
        gone_others = self.other_spellings.get(gone)
        if gone_others:  # the moved entries' spellings are not known: take from the most used
            first = self.author_entries[gone] - sum(gone_others.values())
            while first < 0 and gone_others:
                name, count = gone_others.most_common(1)[0]
                taken = min(count, -first)
                gone_others[name] -= taken
                first += taken
                if not gone_others[name]:
                    del gone_others[name]

    def track_row(self, track: Track) -> tuple[int, str, str]:
        """(id, name, area) of a track."""
        known = self.tracks.get(track.name)
        if known is None:
            known = self.tracks[track.name] = (len(self.tracks) + 1, track.area, track.subarea)
        return known[0], track.name, known[1]

    def affiliation_id(self, affiliation: Affiliation) -> int:
        """The affiliation of a slug, counting the name once for the entry that gives it."""
        affiliation_id = self.affiliations.get(affiliation.slug)
        if affiliation_id is None:
            affiliation_id = self.affiliations[affiliation.slug] = len(self.affiliation_names)
            self.affiliation_names.append(affiliation.name)
            self.affiliation_entries.append(0)
            self.affiliation_countries.append(affiliation.country)
        else:
            if affiliation.name != self.affiliation_names[affiliation_id]:
                others = self.other_affiliation_names.setdefault(
                    affiliation_id, collections.Counter()
                )
                others[affiliation.name] += 1
            if affiliation.country and not self.affiliation_countries[affiliation_id]:
                self.affiliation_countries[affiliation_id] = affiliation.country
        self.affiliation_entries[affiliation_id] += 1
        return affiliation_id

    def category_id(self, name: str) -> int:
        category_id = self.categories.get(name)
        if category_id is None:
            category_id = self.categories[name] = len(self.category_names)
            self.category_names.append(name)
        return category_id

    def add_entry(self, entry: PreparedEntry, source_id: int) -> None:
        """One prepared entry: a new paper row, or one more entry of a paper id already
        written, kept for the merge after the stream."""
        pid = entry.paper_id
        self.pending["paper_sources"].append(
            (
                pid,
                source_id,
                entry.line,
                entry.venue,
                entry.year,
                entry.status,
                None,
                None,
                entry.citations,
                entry.rating,
                entry.rating_count,
            )
        )
        if entry.links:
            self.pending["paper_links"] += [
                (pid, kind, url, source_id, entry.line) for kind, url in entry.links
            ]
        self.pending["version_keys"].extend(
            (key, kind, pid, entry.title_key) for kind, key in entry.version_keys
        )
        if entry.author_ids:
            links = [
                (self.person_id(a, ids), p)
                for a, p, ids in zip(entry.authors, entry.positions, entry.author_ids)
            ]
        else:
            links = [(self.author_id(a), p) for a, p in zip(entry.authors, entry.positions)]
        affiliations = {a.slug: self.affiliation_id(a) for a in entry.affiliations}
        categories = [self.category_id(name) for name in entry.categories]
        track = entry.track
        if not self.paper_ids.add(int(pid, 16)):
            if track:
                self.repeated_tracks.setdefault(track.name, track)
            self.duplicates.setdefault(pid, []).append(
                Version(
                    pid,
                    entry.title,
                    entry.venue,
                    entry.year,
                    entry.status,
                    entry.url,
                    track.name if track else None,
                    entry.truncated,
                    tuple(links),
                    tuple(affiliations.values()),
                    entry.keywords,
                    tuple(categories),
                    source_id,
                    entry.line,
                    entry.links,
                    entry.tldr,
                    entry.citations,
                    entry.citations_source,
                    self.source_dates.get(source_id) if entry.citations is not None else None,
                    entry.rating,
                    entry.rating_count,
                )
            )
            return
        track_id, name, area = self.track_row(track) if track else (None, None, None)
        self.row_facets.append(self.facet_code((entry.venue, entry.year, entry.status, area, name)))
        self.label_keys.append(hash(entry.label))
        self.pending["papers"].append(
            (
                pid,
                entry.label,
                entry.title,
                name,
                area,
                to_json([self.author_names[a] for a, _ in links]),
                to_json(sorted(affiliations)),
                to_json(entry.keywords) if entry.keywords else None,
                to_json(entry.categories) if entry.categories else None,
                len(links),
                int(entry.truncated),
                1,
                entry.url,
                entry.venue,
                entry.year,
                entry.status,
                track_id,
                entry.abstract,
                entry.plain,
                entry.tldr,
                links_json(entry.links),
                int(any(kind == "code" for kind, _ in entry.links)),
                entry.citations,
                entry.citations_source,
                self.source_dates.get(source_id) if entry.citations is not None else None,
                entry.rating,
                entry.rating_count,
            )
        )
        self.pending["paper_authors"] += [(pid, a, position) for a, position in links]
        self.pending["paper_affiliations"] += [(pid, i) for i in affiliations.values()]
        if categories:
            self.pending["paper_categories"] += [
                (pid, category, position) for position, category in enumerate(categories, 1)
            ]
        if len(self.pending["papers"]) >= BATCH_SIZE:
            self.flush()

    def facet_code(self, values: FacetValues) -> int:
        """The code of a row's facet values (venue, year, status, area, track)."""
        code = self.facet_codes.get(values)
        if code is None:
            code = self.facet_codes[values] = len(self.facet_codes) + 1
        return code

    def facet_rows(self) -> Iterator[tuple[int, FacetValues]]:
        """(rowid, (venue, year, status, area, track)) of every paper, in rowid order."""
        values = list(self.facet_codes)  # code - 1 -> values
        for rowid, code in enumerate(self.row_facets, start=1):
            if code:
                yield rowid, values[code - 1]

    def flush(self) -> None:
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

    def end_stream(self) -> None:
        """After the last entry: every row written, the link tables' rows copied from their
        staging tables in key order (each insert then goes after the one before, in a page
        the cache holds). The merge stage reads the rows from here on."""
        self.flush()
        for name in STAGED:
            pk = ", ".join(SCHEMA[name][1]["pk"])
            # entries of one paper id may give one link twice: the first entry's row stays
            ignore, first = (
                ("or ignore", ", source_id, line") if name == "paper_links" else ("", "")
            )
            self.db.execute(
                f"insert {ignore} into {name} select * from temp.staged_{name} order by {pk}{first}"
            )
            self.db.execute(f"drop table temp.staged_{name}")

    def write_paper(self, paper: Paper, stored: Version) -> bool:
        """One merged paper over the row of its shown version (`stored`, as streamed); the
        other versions' rows go, their ids become aliases. Returns whether its author or
        affiliation links changed (most repeated entries add none)."""
        execute = self.db.conn.execute
        # the abstract of a version that has one, for a shown version that has none (a
        # venue's list without abstracts over the preprint's): the first in id order
        abstract: tuple[str, str | None] | None = None
        for alias in paper.aliases:
            self.unindex(alias)
            execute("update paper_sources set paper_id = ? where paper_id = ?", [paper.id, alias])
            # a link both versions give keeps the shown version's row
            execute(
                "update or ignore paper_links set paper_id = ? where paper_id = ?",
                [paper.id, alias],
            )
            execute("delete from paper_links where paper_id = ?", [alias])
            execute("delete from paper_authors where paper_id = ?", [alias])
            execute("delete from paper_affiliations where paper_id = ?", [alias])
            execute("delete from paper_categories where paper_id = ?", [alias])
            rowid, *text = execute(
                "delete from papers where id = ? returning rowid, abstract, abstract_plain",
                [alias],
            ).fetchone()
            if abstract is None and text[0]:
                abstract = (text[0], text[1])
            self.row_facets[rowid - 1] = self.label_keys[rowid - 1] = 0
            execute("insert into paper_aliases (alias, paper_id) values (?, ?)", [alias, paper.id])
        self.aliases += len(paper.aliases)
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
        if paper.categories != stored.categories:
            execute("delete from paper_categories where paper_id = ?", [paper.id])
            self.db.conn.executemany(
                INSERTS["paper_categories"],
                ((paper.id, c, position) for position, c in enumerate(paper.categories, 1)),
            )
        categories = [self.category_names[c] for c in paper.categories]
        track_id, track, area = self.merged_track(paper.track)
        # every row the merge changes is indexed again (reindex), whichever columns change
        self.unindex(paper.id)
        updated = execute(
            "update papers set title = ?, label = coalesce(?, label), track = ?, area = ?, "
            "track_id = ?, url = ?, venue = ?, year = ?, status = ?, authors_truncated = ?, "
            "source_count = ?, keywords = ?, categories = ?, tldr = ?, links = ?, has_code = ?, "
            "citations = ?, citations_source = ?, citations_as_of = ?, rating = ?, "
            "rating_count = ?, "
            "abstract = case when abstract = '' and ? then ? else abstract end, "
            "abstract_plain = case when abstract = '' and ? then ? else abstract_plain end "
            "where id = ? returning rowid",
            [
                paper.title,
                paper.label,
                track,
                area,
                track_id,
                paper.url,
                paper.venue,
                paper.year,
                paper.status,
                int(paper.truncated),
                paper.source_count,
                to_json(paper.keywords) if paper.keywords else None,
                to_json(categories) if categories else None,
                paper.tldr,
                links_json(paper.links),
                int(any(kind == "code" for kind, _ in paper.links)),
                paper.citations,
                paper.citations_source,
                paper.citations_as_of,
                paper.rating,
                paper.rating_count,
                abstract is not None,
                abstract[0] if abstract else None,
                abstract is not None,
                abstract[1] if abstract else None,
                paper.id,
            ],
        )
        (rowid,) = updated.fetchone()
        self.row_facets[rowid - 1] = self.facet_code(
            (paper.venue, paper.year, paper.status, area, track)
        )
        if paper.label:
            self.label_keys[rowid - 1] = hash(paper.label)
        return bool(paper.aliases) or authors_changed or affiliations_changed

    def write_versions(self, paper_id: str, versions: Iterable[Version]) -> None:
        """The title and link of each entry of a paper of several, on its paper_sources row
        (the paper page lists them as its versions)."""
        self.db.conn.executemany(
            "update paper_sources set title = ?, url = ? "
            "where paper_id = ? and source_id = ? and line = ?",
            (
                (version.title, version.url, paper_id, version.source_id, version.line)
                for version in versions
                if version.title or version.url
            ),
        )

    def rows_sharing_labels(self) -> list[int]:
        """Rowids of the papers whose label's hash another paper's label has (equal labels,
        and the rare unequal ones whose hashes are equal)."""
        keys = sorted(self.label_keys)
        shared = {key for key, following in itertools.pairwise(keys) if key == following and key}
        if not shared:
            return []
        return [rowid for rowid, key in enumerate(self.label_keys, start=1) if key in shared]

    def write_labels(self, labels: dict[str, str]) -> None:
        """New labels for these paper ids (the merge stage tells papers apart by them)."""
        for pid, label in sorted(labels.items()):
            self.unindex(pid)
            (rowid,) = self.db.conn.execute(
                "update papers set label = ? where id = ? returning rowid", [label, pid]
            ).fetchone()
            self.label_keys[rowid - 1] = hash(label)

    def merged_track(self, name: str | None) -> tuple[int | None, str | None, str | None]:
        """(id, name, area) of a merged paper's track, a name some version of it gave."""
        if not name:
            return None, None, None
        known = self.tracks.get(name)
        if known is None:
            return self.track_row(self.repeated_tracks[name])
        return known[0], name, known[1]

    def unindex(self, pid: str) -> None:
        """Before the merge first changes or deletes a paper's row: keep the text the stream
        indexed, for reindex() to take out of the full-text index."""
        self.db.conn.execute(
            f"insert or ignore into temp.unindexed (rowid, {', '.join(FTS_COLUMNS)}) "
            f"select rowid, {', '.join(FTS_COLUMNS)} from papers where id = ?",
            [pid],
        )

    def reindex(self) -> None:
        """The papers the merge changed, out of the full-text index with the text they were
        indexed with, and back in (those still there) with their text now: in rowid order, so
        FTS5 adds two segments. Changed one at a time in the order merged, each change out of
        order would flush FTS5's pending terms as a segment of its own.

        Only rows whose text differs, or that the merge deleted: most merged papers are one
        entry seen twice, with no new text, and taking out and putting back the same text
        leaves the same index after the optimize, after tokenizing it twice on the way to it
        (the full-text thread's merge waits for that)."""
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

    def spelling_counts(self, author_id: int, first: str) -> dict[str, int]:
        """{spelling: entries using it} of an author with more than one spelling, `first`
        the one seen first."""
        others = self.other_spellings[author_id]
        return {first: self.author_entries[author_id] - sum(others.values()), **others}

    def affiliation_name_counts(self, affiliation_id: int) -> dict[str, int]:
        """{name: entries giving it} of an affiliation written more than one way."""
        others = self.other_affiliation_names[affiliation_id]
        first = self.affiliation_names[affiliation_id]
        return {first: self.affiliation_entries[affiliation_id] - sum(others.values()), **others}

    def name_affiliation(self, affiliation_id: int, name: str) -> None:
        """Show an affiliation under `name` (the merge stage picks it among its names)."""
        self.affiliation_names[affiliation_id] = name

    def name_author(self, author_id: int, name: str) -> None:
        """Show an author under `name` (the merge stage picks it among their spellings)."""
        self.author_names[author_id] = name

    def variant_rows(self, renamed: dict[int, str]) -> Iterator[tuple[int, str, int]]:
        """(author id, spelling, entries using it) for every spelling of the authors whose
        name was spelled more than one way; the others' one spelling is their name."""
        for author_id in sorted(self.other_spellings):
            first = renamed.get(author_id, self.author_names[author_id])
            for name, count in sorted(self.spelling_counts(author_id, first).items()):
                yield author_id, name, count

    def refresh_lists(self, paper_ids: Iterable[str]) -> None:
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

    def papers_of_authors(self, author_ids: Iterable[int]) -> set[str]:
        """Ids of the papers of these authors. One pass over paper_authors, whatever their
        number (its index by author is made later): in chunks of ids, each chunk would read
        it all again."""
        rows = self.db.conn.execute(
            "select paper_id from paper_authors where author_id in "
            "(select value from json_each(?))",
            [json.dumps(sorted(author_ids))],
        )
        return {row[0] for row in rows}

    def finish(
        self, merged: set[str], renamed: dict[int, str], unlisted: set[int] | None = None
    ) -> Summary:
        """The small tables, lists and counts, once the merge stage has written the merged
        papers (`merged`: the ids whose lists changed) and renamed authors (`renamed`: author
        id -> the first spelling they no longer show). `unlisted`: authors no paper lists any
        more (every paper of theirs lists them under another spelling), left out."""
        unlisted = unlisted or set()
        self.db.execute("drop table temp.version_keys")
        # cast: sqlite-utils asks for dict[str, Any], which a TypedDict is not (a TypedDict
        # may not take any key); the rows are plain dicts
        for name, rows in (("sources", self.source_rows), ("load_problems", self.problem_rows)):
            records = cast(list[dict[str, Any]], rows)
            self.db.table(name).insert_all(records, batch_size=BATCH_SIZE)
        id_rows = list(self.identified.rows())
        ids: dict[int, dict[str, list[str]]] = {}
        for author_id, kind, value in id_rows:
            ids.setdefault(author_id, {}).setdefault(kind, []).append(value)
        self.db.conn.executemany(
            INSERTS["authors"],
            (
                (
                    author_id,
                    self.author_names[author_id],
                    key,
                    0,
                    json.dumps(ids[author_id], ensure_ascii=False) if author_id in ids else None,
                )
                for key, author_id in itertools.chain(
                    self.author_keys.items(),
                    ((key, i) for i, key in self.identified.keys.items()),
                )
                if author_id not in unlisted
            ),
        )
        self.db.conn.executemany(INSERTS["author_ids"], id_rows)
        self.db.conn.executemany(
            INSERTS["author_variants"],
            (row for row in self.variant_rows(renamed) if row[0] not in unlisted),
        )
        self.db.table("tracks").insert_all(
            (
                {"id": i, "name": name, "area": area, "subarea": subarea, "paper_count": 0}
                for name, (i, area, subarea) in self.tracks.items()
            ),
            batch_size=BATCH_SIZE,
        )
        self.db.table("affiliations").insert_all(
            (
                {
                    "id": i,
                    "slug": slug,
                    "name": self.affiliation_names[i],
                    "paper_count": 0,
                    "country": self.affiliation_countries[i],
                }
                for slug, i in self.affiliations.items()
            ),
            batch_size=BATCH_SIZE,
        )
        self.db.conn.executemany(
            INSERTS["categories"],
            ((i, name, 0) for name, i in self.categories.items()),
        )
        self.db.execute(INSERTS[MARKER_TABLE], (CATALOG_FORMAT, SCHEMA_VERSION))
        self.db.table("authors").enable_fts(["name"], tokenize=AUTHOR_FTS_TOKENIZER)
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
            len(self.author_keys) + len(self.identified.keys) - len(unlisted),
            len(self.tracks),
            len(self.affiliations),
            self.problems,
            len(self.categories),
            persons=len(self.identified.keys),
        )

    def count_papers(self) -> None:
        for table, link_table, column in (
            ("authors", "paper_authors", "author_id"),
            ("affiliations", "paper_affiliations", "affiliation_id"),
            ("categories", "paper_categories", "category_id"),
            ("tracks", "papers", "track_id"),
        ):
            self.db.execute(
                f"update {table} set paper_count = counts.n from "
                f"(select {column} as ref, count(*) as n from {link_table} group by {column}) "
                f"as counts where {table}.id = counts.ref"
            )

    def count_author_tracks(self) -> None:
        # papers drive the join (CROSS JOIN keeps that order): one range lookup in
        # paper_authors per paper. Left to itself the planner scanned paper_authors and looked
        # up each link's paper, row and all: several times the lookups. The papers come from
        # the index on (track, id), which holds the two columns needed (the table holds the
        # abstracts), each track's in id order like paper_authors. A track's name stands for
        # its id (track_row() gives both): each paper's name becomes the id through a
        # temporary table keyed by name
        self.db.execute(
            "create temp table track_names (name text primary key, id integer) without rowid"
        )
        self.db.execute("insert into temp.track_names (name, id) select name, id from tracks")
        # per paper, before the links are grouped: the sort then orders two integers a
        # link, not an integer and a name
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
