"""The words of the papers' search text that at least MIN_PAPERS papers hold, with how many:
the words /search's spelling suggestions may offer (loader/web/spelling.py).

Whole words, not the index's porter stems: a suggestion is ranked by its edit distance to the
whole word typed (`trasnformer` is one swap from `transformer`, farther from the stem
`transform`), and a stem is no word to offer. The words come from the same plain text the
index holds (label, authors, abstract_text: markup already read by loader/rules/markup.py),
so a LaTeX command or markup token (`textbf`, `mathbf`, `frac`) is in it only where papers
write it as a word.

They are counted once, when the catalog is built, by a second FTS5 index over the same text
with the same tokenizer but no stemmer, contentless, without column sizes or positions
(`detail=none`: only which papers hold a word), in SQLite's temporary storage and dropped
once read: a request reads a few rows of a small table instead of counting a term's papers (fts5vocab
reads a term's whole list of papers each time it is asked). A word in fewer papers (a typo in
one abstract, a rare name) is never suggested.
"""

import sqlite3

from loader.build.schema import FTS_COLUMNS

TABLE = "search_vocabulary"
MIN_PAPERS = 3
# the catalog's tokenizer without `porter`: words as papers write them, case and accents folded
TOKENIZER = "unicode61 remove_diacritics 2"


def write_search_vocabulary(connection: sqlite3.Connection) -> None:
    """search_vocabulary(term, papers): each word (not only digits) of the papers' search
    text that at least MIN_PAPERS papers hold."""
    columns = ", ".join(FTS_COLUMNS)
    with connection:
        connection.execute(
            f"create virtual table temp.vocabulary_words using fts5({columns}, content='',"
            f" detail=none, columnsize=0, tokenize='{TOKENIZER}')"
        )
        connection.execute(
            f"insert into temp.vocabulary_words (rowid, {columns})"
            f" select rowid, {columns} from papers"
        )
        connection.execute(
            "create virtual table temp.vocabulary_counts using fts5vocab(vocabulary_words, 'row')"
        )
        connection.execute(
            f"create table {TABLE} (term text primary key, papers integer not null) without rowid"
        )
        # fts5vocab gives the terms in order: appended to the primary key, never split
        connection.execute(
            f"insert into {TABLE} (term, papers) select term, doc from temp.vocabulary_counts"
            " where doc >= ? and term glob '*[^0-9]*'",
            [MIN_PAPERS],
        )
        connection.execute("drop table temp.vocabulary_counts")
        connection.execute("drop table temp.vocabulary_words")
