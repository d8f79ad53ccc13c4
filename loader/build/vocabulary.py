"""The full-text index's terms that at least MIN_PAPERS papers hold, with how many: the words
/search's spelling suggestions may offer (loader/web/spelling.py).

fts5vocab (papers_fts_vocab) counts a term's papers by reading its whole list of papers, each
time it is asked: a range of terms that holds `the` or `model` reads hundreds of thousands of
entries at 1M papers. Counted once here, when the catalog is built, a request reads a few rows
of a small table instead. A term in fewer papers (a typo in one abstract, a rare name) is never
suggested.
"""

import sqlite3

TABLE = "search_vocabulary"
MIN_PAPERS = 3


def write_search_vocabulary(connection: sqlite3.Connection) -> None:
    """search_vocabulary(term, papers) from the catalog's papers_fts_vocab (terms are the
    index's porter stems: `diffus` for diffusion, diffuse, diffusing)."""
    with connection:
        connection.execute(
            f"create table {TABLE} (term text primary key, papers integer not null) without rowid"
        )
        # fts5vocab gives the terms in order: appended to the primary key, never split
        connection.execute(
            f"insert into {TABLE} (term, papers)"
            " select term, doc from papers_fts_vocab where doc >= ?",
            [MIN_PAPERS],
        )
