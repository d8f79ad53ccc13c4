"""The words of the papers' search text that at least MIN_PAPERS papers hold, with how many:
the words /search's spelling suggestions may offer (loader/web/spelling.py).

Whole words, not the index's porter stems: a suggestion is ranked by its edit distance to the
whole word typed (`trasnformer` is one swap from `transformer`, farther from the stem
`transform`), and a stem is no word to offer. The words come from the same plain text the
index holds (label, authors, abstract_text: markup already read by loader/rules/markup.py),
so a LaTeX command or markup token (`textbf`, `mathbf`, `frac`) is in it only where papers
write it as a word.

They are counted by a second FTS5 index over the same rows with the same tokenizer but no
stemmer, contentless, without column sizes or positions (`detail=none`: only which papers hold
a word). The full-text index's thread builds it in its side database (full_text.py), fed the
rows and removals the catalog's index is fed, so the tokenizing runs beside the stream rather
than on the build's serial end; once the last rows are in, the thread counts it into a small
table and drops it, and the table is copied into the catalog with the index. A request reads
a few rows of that table instead of counting a term's papers (fts5vocab reads a term's whole
list of papers each time it is asked). A word in fewer papers (a typo in one abstract, a rare
name) is never suggested.
"""

import sqlite3
from collections.abc import Sequence

from loader.build.full_text import Setting

TABLE = "search_vocabulary"
MIN_PAPERS = 3
# the catalog's tokenizer without `porter`: words as papers write them, case and accents folded
TOKENIZER = "unicode61 remove_diacritics 2"
# the unstemmed index, in the side database only
WORDS = "vocabulary_words"


class SearchVocabulary:
    """search_vocabulary(term, papers), built beside the full-text index (full_text.Companion):
    each word (not only digits) of the indexed text that at least MIN_PAPERS papers hold."""

    name = WORDS

    def create(
        self, connection: sqlite3.Connection, columns: Sequence[str], settings: Sequence[Setting]
    ) -> None:
        """The words index, with the catalog index's build `settings`."""
        connection.execute(
            f"create virtual table {WORDS} using fts5({', '.join(columns)}, content='',"
            f" detail=none, columnsize=0, tokenize='{TOKENIZER}')"
        )
        # few large segments, never merged (fts5vocab reads them all once); at FTS5's
        # defaults (1 MB, automerge) indexing the words cost a third more
        connection.executemany(f"insert into {WORDS} ({WORDS}, rank) values (?, ?)", settings)

    def finish(self, connection: sqlite3.Connection) -> None:
        """The counts, from the words index, which then goes."""
        connection.execute(
            f"create virtual table temp.{WORDS}_counts using fts5vocab(main, {WORDS}, 'row')"
        )
        create_table(connection, "main")
        # fts5vocab gives the terms in order: appended to the primary key, never split
        connection.execute(
            f"insert into main.{TABLE} (term, papers) select term, doc from temp.{WORDS}_counts"
            " where doc >= ? and term glob '*[^0-9]*'",
            [MIN_PAPERS],
        )
        connection.execute(f"drop table temp.{WORDS}_counts")
        connection.execute(f"drop table {WORDS}")

    def copy_into(self, connection: sqlite3.Connection, schema: str) -> None:
        """The counted table from the attached side database `schema` into the catalog."""
        create_table(connection, "main")
        connection.execute(f"insert into main.{TABLE} select * from {schema}.{TABLE}")


def create_table(connection: sqlite3.Connection, schema: str) -> None:
    connection.execute(
        f"create table {schema}.{TABLE} (term text primary key, papers integer not null)"
        " without rowid"
    )
