"""The catalog's tables, indexes and storage settings: what the writer creates and fills.

No rows here, and no rules: the writer (writer.py) takes its statements from this module.
"""

from typing import Any

import sqlite_utils

FTS_TOKENIZER = "porter unicode61 remove_diacritics 2"
# label (the title, or the heading derived from the abstract), authors (names), plain abstract:
# /search weighs them 10:4:1
FTS_COLUMNS = ["label", "authors", "abstract_text"]
# authors are looked up by part of a name (`/catalog/authors?_search=levine`); no porter:
# names are not English words
AUTHOR_FTS_TOKENIZER = "unicode61 remove_diacritics 2"
# rows of abstracts leave much of a small page empty: each page of papers keeps about half a
# row free (rows are appended, a full page is never filled up later), so the larger the page
# the less that costs. Larger pages than this would save little more, while a full-text lookup
# inside a block costs more the larger the block (docs/benchmark.md)
PAGE_SIZE = 32768
# FTS5 writes its index in blocks of about `pgsz` bytes, one row of papers_fts_data each. At the
# default, several fit a page only while rows are appended: the final merge (optimize) gives
# its segment the lowest free id (ids are reused), and when segments with higher ids exist its
# rows go in before theirs, and page splits leave pages part empty. One block a page fills it
# in any order: the page less the page, cell and record headers and a margin for the bytes a
# block may pass pgsz by
FTS_PAGE_BYTES = PAGE_SIZE - 160
# full-text settings while streaming: no merging of segments as they come (the side index's
# optimize merges them all once) and more pending terms a segment than the default: fewer,
# larger segments. Dropped before publishing. ("crisis" merges stay on: without them indexing
# is cheaper, but the final optimize, in the build's serial tail, grows more than that)
FTS_BUILD_SETTINGS = (("automerge", 0), ("hashsize", 4 * 1024 * 1024))
# a build of less input than this holds its whole index (or most of it) in a term buffer of
# SMALL_BUILD_HASHSIZE: one segment, which the optimize then has next to nothing to merge. Its
# memory counts only in large builds, where the writer's maps set the peak: they keep 4 MB
SMALL_BUILD_BYTES = 256 * 1024 * 1024
SMALL_BUILD_HASHSIZE = 16 * 1024 * 1024


def fts_build_settings(input_bytes: int) -> tuple[tuple[str, int], ...]:
    """FTS_BUILD_SETTINGS for a build of `input_bytes` of input."""
    if input_bytes >= SMALL_BUILD_BYTES:
        return FTS_BUILD_SETTINGS
    return tuple(
        (key, SMALL_BUILD_HASHSIZE if key == "hashsize" else value)
        for key, value in FTS_BUILD_SETTINGS
    )


# the block size the catalog keeps
FTS_SETTINGS = (("pgsz", FTS_PAGE_BYTES),)

# the one row of paper_catalog: what marks a file as a catalog this loader built (marker.py),
# so a build replaces only such a file, and the site knows its catalog by it. The version
# grows when a table or column changes meaning
MARKER_TABLE = "paper_catalog"
CATALOG_FORMAT = "paper-catalog"
SCHEMA_VERSION = 1
# name -> (columns, sqlite-utils create options)
SCHEMA: dict[str, tuple[dict[str, type], dict[str, Any]]] = {
    "sources": (
        {
            "id": int,
            "path": str,
            "format": str,
            "sha256": str,
            "papers": int,
            "problems": int,
            # the date of the dump's content ("2025-11" or "2025-11-03"): sources.yml's as_of,
            # else the file's modification date. A dump's records carry none
            "as_of": str,
        },
        {"pk": "id"},
    ),
    "tracks": (
        {"id": int, "name": str, "area": str, "subarea": str, "paper_count": int},
        {"pk": "id"},
    ),
    # ids: the person's ids as a JSON object {kind: [values]} (author_ids' rows), or null
    "authors": (
        {"id": int, "name": str, "key": str, "paper_count": int, "ids": str},
        {"pk": "id"},
    ),
    "affiliations": (
        {"id": int, "slug": str, "name": str, "paper_count": int, "country": str},
        {"pk": "id"},
    ),
    # arXiv's subject categories (cs.LG, math.CO): empty unless an arXiv snapshot was read
    "categories": ({"id": int, "name": str, "paper_count": int}, {"pk": "id"}),
    "papers": (
        {
            "id": str,
            "label": str,
            "title": str,
            "track": str,
            "area": str,
            "authors": str,
            "affiliations": str,
            # JSON lists, null when no source gave any (most do not)
            "keywords": str,
            "categories": str,
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
            "tldr": str,
            # JSON object kind -> URL (LINK_KINDS order), null when no version gives one
            "links": str,
            "has_code": int,
            # the highest count a version gives, the service that counted it and the date of
            # that version's source
            "citations": int,
            "citations_source": str,
            "citations_as_of": str,
            "rating": float,
            "rating_count": int,
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
    # position: the primary category first, as arXiv lists them
    "paper_categories": (
        {"paper_id": str, "category_id": int, "position": int},
        {
            "pk": ("paper_id", "category_id"),
            "foreign_keys": [("paper_id", "papers", "id"), ("category_id", "categories", "id")],
        },
    ),
    # each source entry with the venue, year and status it gave (an arXiv version stays seen);
    # its title and link only where the paper has several entries (the paper page's Versions):
    # a paper of one entry shows them itself
    "paper_sources": (
        {
            "paper_id": str,
            "source_id": int,
            "line": int,
            "venue": str,
            "year": int,
            "status": str,
            "title": str,
            "url": str,
            "citations": int,
            "rating": float,
            "rating_count": int,
        },
        {
            "pk": ("paper_id", "source_id", "line"),
            "foreign_keys": [("paper_id", "papers", "id"), ("source_id", "sources", "id")],
        },
    ),
    # every link of every version of a paper; one row a URL of a kind, the first entry giving
    # it (source_id, line)
    "paper_links": (
        {"paper_id": str, "kind": str, "url": str, "source_id": int, "line": int},
        {
            "pk": ("paper_id", "kind", "url"),
            "foreign_keys": [("paper_id", "papers", "id"), ("source_id", "sources", "id")],
        },
    ),
    # derived: how many of an author's papers are in each track, so an author page lists their
    # tracks without reading every one of their papers (thousands for the most prolific)
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
    # a person's ids (loader/read/author_ids.py): kind "openreview", "orcid" or "dblp"; an id
    # is one person's
    "author_ids": (
        {"author_id": int, "kind": str, "value": str},
        {"pk": ("kind", "value"), "foreign_keys": [("author_id", "authors", "id")]},
    ),
    # ids of merged versions: links made before a merge lead to the paper
    "paper_aliases": (
        {"alias": str, "paper_id": str},
        {"pk": "alias", "foreign_keys": [("paper_id", "papers", "id")]},
    ),
    "load_problems": ({"id": int, "file": str, "line": int, "message": str}, {"pk": "id"}),
    MARKER_TABLE: ({"format": str, "schema_version": int}, {"pk": "format"}),
}
# link tables are only ever read by key: without a rowid each row is stored once, in its key
WITHOUT_ROWID = {
    "paper_authors",
    "paper_affiliations",
    "paper_categories",
    "paper_sources",
    "paper_links",
    "author_tracks",
    "author_variants",
    "author_ids",
    "paper_aliases",
}
# the plain text is stored only where it differs from the abstract (markup, spacing): for
# many papers it does not. Readers and the FTS index see the full plain text in abstract_text.
GENERATED_COLUMNS = [
    ("papers", "abstract_text", "text", "coalesce(abstract_plain, abstract)"),
]
# rows streamed while parsing, and last the merge keys (to a temporary table); the small
# tables are written once at the end
STREAMED = (
    "papers",
    "paper_authors",
    "paper_affiliations",
    "paper_categories",
    "paper_sources",
    "paper_links",
    "version_keys",
)


def insert_statement(name: str, target: str | None = None) -> str:
    """An insert of a SCHEMA table's rows (all its columns, in order) into `target`."""
    columns = SCHEMA[name][0]
    return "insert into {} ({}) values ({})".format(
        target or name, ", ".join(columns), ", ".join("?" * len(columns))
    )


INSERTS = {
    name: insert_statement(name)
    for name in (
        *STREAMED[:-1],
        "authors",
        "author_variants",
        "author_ids",
        "categories",
        MARKER_TABLE,
    )
}
# where a papers row (INSERTS["papers"] order) holds what the full-text index reads
LABEL, AUTHORS, ABSTRACT, ABSTRACT_PLAIN = (
    list(SCHEMA["papers"][0]).index(column)
    for column in ("label", "authors", "abstract", "abstract_plain")
)
INSERTS["version_keys"] = (
    "insert into temp.version_keys (key, kind, paper_id, title) values (?, ?, ?, ?)"
)
# link tables are keyed by paper id, a hash: rows streamed into them land all over their
# b-trees, and past the page cache each insert reads and writes back a page. They are streamed
# into temporary tables in arrival order instead, and copied over once, sorted
STAGED = (
    "paper_authors",
    "paper_affiliations",
    "paper_categories",
    "paper_sources",
    "paper_links",
)
STREAM_INSERTS = {
    **INSERTS,
    **{name: insert_statement(name, f"temp.staged_{name}") for name in STAGED},
}
# (table, columns, rows indexed). A filter on a value (`?venue=ICLR`, `where venue = ?`) implies
# it is not null, so SQLite uses an index of only the rows that have one: a catalog whose
# sources give no venue, year or status (listing pages, the synthetic benchmark) pays nothing
# for those indexes. What such an index cannot serve is a sort on its column (`?_sort=year`):
# that first page sorts the table instead, so track and area, which nearly every paper has,
# keep full indexes.
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
    ("categories", ["name"], None),
    ("tracks", ["area"], None),
]
# indexes made before the stream, not after: their rows arrive in key order (papers are
# appended in rowid order; a track's, or the one value authors_truncated = 1, is a run of
# rowids; no paper has source_count > 1 before the merge), so keeping them costs a few cached
# pages, where building one after would scan the whole papers table, abstracts and all.
# The two partial ones hold only the rows the canned queries truncated_author_lists and
# multi_source_papers read (their `where` has the same term): a small share of the papers
STREAM_INDEXES = [
    ("papers", ["authors_truncated"], "authors_truncated = 1"),
    ("papers", ["source_count"], "source_count > 1"),
]
# foreign keys whose index is made the same way (index_foreign_keys makes the others)
STREAM_FOREIGN_KEYS = [("papers", "track_id")]
# the partial facet indexes of papers also exist from the start, while no row has a value for
# them: a column no source gives (listing pages without sources.yml, the synthetic benchmark)
# then costs no scan of the papers table after the stream. The first batch with a value drops
# its index, built after the stream like the others: rows arriving in a random order of id
# would land all over it (as they did in the link tables)
WHILE_EMPTY_INDEXES = [
    (table, columns, rows) for table, columns, rows in FACET_INDEXES if table == "papers" and rows
]
# foreign keys nothing looks rows up by: an index would only cost build time and space
UNINDEXED_FOREIGN_KEYS = {("author_tracks", "track_id")}


def create_tables(db: sqlite_utils.Database) -> None:
    for name, (columns, options) in SCHEMA.items():
        sql = db.create_table_sql(name, columns, **options).rstrip().rstrip(";")
        db.execute(sql + (" without rowid" if name in WITHOUT_ROWID else ""))
    for table, column, kind, expression in GENERATED_COLUMNS:
        db.execute(
            f"alter table {table} add column {column} {kind} "
            f"generated always as ({expression}) virtual"
        )


def create_facet_indexes(db: sqlite_utils.Database) -> None:
    for table, columns, rows in FACET_INDEXES:
        create_index(db, table, columns, rows)


def create_index(
    db: sqlite_utils.Database, table: str, columns: list[str], rows: str | None = None
) -> None:
    where = f" where {rows}" if rows else ""
    db.execute(
        f"create index if not exists {index_name(table, columns)} "
        f"on {table} ({', '.join(columns)}){where}"
    )


def index_name(table: str, columns: list[str]) -> str:
    # "track__id", not "track_id": that name is the foreign key's index
    return f"idx_{table}_{'__'.join(columns)}"


def index_foreign_keys(db: sqlite_utils.Database) -> None:
    """An index for every foreign key that does not lead its table's primary key
    (sqlite-utils' index_foreign_keys would repeat the link tables' keys)."""
    for name, (_columns, options) in SCHEMA.items():
        pk = options["pk"]
        leading = pk if isinstance(pk, str) else pk[0]
        for column, _table, _other in options.get("foreign_keys", []):
            if column != leading and (name, column) not in UNINDEXED_FOREIGN_KEYS:
                index_foreign_key(db, name, column)


def index_foreign_key(db: sqlite_utils.Database, table: str, column: str) -> None:
    db.table(table).create_index([column], if_not_exists=True)
