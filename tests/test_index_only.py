"""loader/web/index_only.py: which counts of a search are read from the full-text index alone (the
served app's use of it: tests/test_datasette_coupling.py)."""

from loader.web.index_only import index_only


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
