"""loader/web/index_only.py: which counts of a search are read from the full-text index alone, and
which pages of rows sort keys first (the served app's use of it: tests/test_datasette_coupling.py)."""

import re
import sqlite3

import pytest
from datasette.utils import escape_fts

from loader.web.index_only import index_only, keys_first


def test_only_a_plain_search_of_papers_is_read_from_the_index():
    search = "rowid in (select rowid from papers_fts where papers_fts match escape_fts(:search))"
    assert index_only(f"select count(*) from papers where {search} ") == (
        "select count(*) from papers_fts where papers_fts match escape_fts(:search)"
    )
    assert index_only(f"select rowid from papers where {search}") == (
        "select rowid from papers_fts where papers_fts match escape_fts(:search)"
    )
    for sql in (
        f"select count(*) from papers where year = :p0 and {search}",
        f"select count(*) from authors where {search}",
        f"select id from papers where {search}",
        f"select count(*) from papers where {search} or 1",
        (
            "select count(*) from papers where rowid in (select rowid from papers_fts where"
            ' "label" match :search_label)'
        ),
    ):
        assert index_only(sql) is None, sql


SEARCH = "rowid in (select rowid from papers_fts where papers_fts match escape_fts(:search))"


def test_only_a_first_page_of_a_plain_search_in_key_order_sorts_keys_first():
    page = f"select id, [label] from papers where {SEARCH} order by id limit 26"
    assert keys_first(page) == (
        f"select id, [label] from papers where rowid in (select rowid from papers where {SEARCH}"
        " order by id limit 26) order by id"
    )
    for sql in (
        f"select id from papers where {SEARCH} and (id > :p0) order by id limit 26",
        f"select id from papers where {SEARCH} order by year limit 26",
        f"select id from papers where {SEARCH} order by id limit 26 offset 26",
        f"select count(*) from papers where {SEARCH}",
        f"select id from papers where year = :p0 and {SEARCH} order by id limit 26",
        f"select id from authors where {SEARCH} order by id limit 26",
    ):
        assert keys_first(sql) is None, sql


@pytest.mark.parametrize("size", [1, 26, 101])
def test_keys_first_gives_the_same_rows_in_the_same_order(real_catalog, size):
    """On real papers, for each word of their titles: Datasette's statement and the rewrite."""
    connection = sqlite3.connect(f"file:{real_catalog}?mode=ro", uri=True)
    connection.create_function("escape_fts", 1, escape_fts)
    titles = " ".join(t for (t,) in connection.execute("select label from papers limit 300"))
    terms = sorted({w for w in re.findall(r"[a-z]{4,}", titles.lower())})[:120]
    page = f"select * from papers where {SEARCH} order by id limit {size}"
    rewritten = keys_first(page)
    assert rewritten is not None
    matched = 0
    for term in [*terms, "learning", "zzzqqqnothing"]:
        expected = connection.execute(page, {"search": term}).fetchall()
        assert connection.execute(rewritten, {"search": term}).fetchall() == expected, term
        matched += bool(expected)
    connection.close()
    assert matched > len(terms) / 2  # most terms match papers
