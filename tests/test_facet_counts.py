"""The papers table's facet boxes (loader/web/facet_counts.py, plugins/facets.py), counted for all
boxes of a kind in one query or in memory, against the counts Datasette's own facet queries
give: the same values, counts, order and links, on the seeds plus the real conference papers."""

import asyncio
import sqlite3
from urllib.parse import parse_qsl, urlsplit

import pytest
import pytest_asyncio

from loader.web import facet_counts

from .conftest import second_datasette
from .plugin_files import load_plugin

LINKS = load_plugin("facets").LINKS

COLUMNS = ["venue", "year", "status", "area", "track"]
LINKED = {
    "authors": "select authors.name, count(*) from paper_authors "
    "join authors on authors.id = paper_authors.author_id "
    "where paper_id in (select id from papers where {where}) group by author_id",
    "affiliations": "select affiliations.slug, count(*) from paper_affiliations "
    "join affiliations on affiliations.id = paper_affiliations.affiliation_id "
    "where paper_id in (select id from papers where {where}) group by affiliation_id",
}
# (query string, the same papers in SQL)
FILTERS = [
    ("", "1"),
    (
        "_search=learning",
        "rowid in (select rowid from papers_fts where papers_fts match 'learning')",
    ),
    (
        "_search=graph+network",
        "rowid in (select rowid from papers_fts where papers_fts match 'graph network')",
    ),
    ("year=2018", "year = 2018"),
    ("_search=zzzqqqnothing", "0"),
]


@pytest.fixture(scope="module")
def site(search_catalog, datasette):
    """A second Datasette on the search catalog; `datasette` has registered our plugins."""
    return second_datasette(search_catalog)


@pytest.fixture(scope="module")
def sql_site(search_catalog, datasette):
    """The same, its author and affiliation boxes always counted in SQL."""
    return second_datasette(search_catalog)


def count_in_sql(site):
    """Never read the link tables into memory for this site: its boxes come from SQL."""
    done = asyncio.get_running_loop().create_future()
    done.set_result(None)
    facet_counts._indexes.futures[site.get_database("catalog")] = done


@pytest_asyncio.fixture(params=["memory", "sql"])
async def counted_site(request, site, sql_site):
    """The search catalog's site, its link boxes counted from memory or from SQL."""
    if request.param == "memory":
        assert await facet_counts.loaded_indexes(site.get_database("catalog"), LINKS)
        return site
    count_in_sql(sql_site)
    return sql_site


def top(pairs, size, column=None):
    """Datasette's facet order: most papers first, then by value; years newest first."""
    if column == "year":
        return sorted(pairs, reverse=True)[:size]
    return sorted(pairs, key=lambda pair: (-pair[1], pair[0]))[:size]


@pytest.mark.asyncio
@pytest.mark.parametrize(("query", "where"), FILTERS)
async def test_every_box_counts_what_sql_counts(counted_site, search_catalog, query, where):
    site = counted_site
    response = await site.client.get(f"/catalog/papers.json?{query}")
    assert response.status_code == 200
    data = response.json()
    facets, size = data["facet_results"], site.setting("default_facet_size")
    with sqlite3.connect(search_catalog) as connection:
        for column in COLUMNS:
            expected = connection.execute(
                f"select {column}, count(*) from papers where ({where}) and {column} is not null "
                f"group by {column}"
            ).fetchall()
            if not expected:
                assert column not in facets, "a box without values is not shown"
                continue
            shown = [(item["value"], item["count"]) for item in facets[column]["results"]]
            assert shown == top(expected, size, column), column
            assert facets[column]["truncated"] == (len(expected) > size)
        for column, sql in LINKED.items():
            expected = connection.execute(sql.format(where=where)).fetchall()
            shown = [(item["value"], item["count"]) for item in facets[column]["results"]]
            assert shown == top(expected, size), column


@pytest.mark.asyncio
async def test_a_box_value_links_to_its_papers(site):
    data = (await site.client.get("/catalog/papers.json?_search=learning")).json()
    for column in ("year", "track", "authors"):
        item = data["facet_results"][column]["results"][0]
        link = urlsplit(item["toggle_url"])
        assert link.scheme == "http" and link.netloc == "localhost"
        assert ("_search", "learning") in parse_qsl(link.query)
        filtered = (await site.client.get(f"{link.path}?{link.query}")).json()
        assert filtered["filtered_table_rows_count"] == item["count"]


@pytest.mark.parametrize(
    "path",
    [
        "/catalog/papers",
        "/catalog/papers?_search=a+b&year=2018&year=2019",
        "/catalog/papers?_search=%C3%BCber&_facet=venue&blank=&_next=x%26y",
    ],
)
@pytest.mark.parametrize(
    ("name", "value"), [("year", 2018), ("track", "A · B & C"), ("authors__arraycontains", "Ü")]
)
def test_value_links_are_datasettes_added_arguments(path, name, value):
    from datasette.utils import path_with_added_args
    from datasette.utils.asgi import Request

    request = Request.fake(path)
    link = load_plugin("facets").value_links(request)
    assert link(name, value) == path_with_added_args(request, {name: value})


@pytest.mark.asyncio
@pytest.mark.parametrize("query", ["", "_search=learning", "_search=learning&year=2018"])
async def test_every_box_of_a_page_comes_from_one_statement(counted_site, query):
    """One statement, or in memory the matches' rowids (one SQL-thread hand-off)."""
    from datasette.tracer import capture_traces

    traces = []
    with capture_traces(traces):
        response = await counted_site.client.get(f"/catalog/papers.json?{query}")
    assert response.status_code == 200
    assert {"year", "authors"} <= set(response.json()["facet_results"])
    facet_statements = [
        trace
        for trace in traces
        if " as facet, " in trace.get("sql", "")
        or trace.get("sql", "").startswith(
            ("select rowid from papers ", "select rowid from papers_fts ")
        )
    ]
    assert len(facet_statements) == 1


PAGES = [
    "",
    "_search=learning",
    "_search=graph+network",
    "_search=the",
    "year=2018",
    "_search=learning&year=2018&_facet_size=3",
    "_search=zzzqqqnothing",
    "authors__arraycontains=Huishuai+Zhang",
    "track__contains=a&_facet_size=max",
    "_search=learning&_facet_size=1",
    "_search=model&_facet_link=authors&_facet_link=affiliations",
]


@pytest.mark.asyncio
@pytest.mark.parametrize("query", PAGES)
@pytest.mark.parametrize("page", ["papers.json", "papers"])
async def test_boxes_counted_in_memory_are_the_sql_boxes(site, sql_site, query, page):
    """Values, labels, counts, order, truncation and links: the same from both countings."""
    assert await facet_counts.loaded_indexes(site.get_database("catalog"), LINKS)
    count_in_sql(sql_site)
    memory = await site.client.get(f"/catalog/{page}?{query}")
    sql = await sql_site.client.get(f"/catalog/{page}?{query}")
    assert memory.status_code == sql.status_code == 200
    if page.endswith(".json"):
        assert memory.json()["facet_results"] == sql.json()["facet_results"]
        assert untimed_json(memory.json()) == untimed_json(sql.json())
    else:
        assert untimed(memory.text) == untimed(sql.text)


def untimed_json(data):
    return {key: value for key, value in data.items() if key != "query_ms"}


def untimed(html):
    import re

    return re.sub(r"took [0-9.]+ ?ms", "took", html)


def test_counts_in_memory_break_ties_by_value_and_stop_at_the_limit(tmp_path):
    """Ties in count go in value order (the linked row's name), whatever their ids."""
    path = tmp_path / "links.db"
    with sqlite3.connect(path) as connection:
        connection.executescript(
            """
            create table papers (id text primary key, title text);
            create table authors (id integer primary key, name text, key text);
            create table paper_authors (paper_id text, author_id integer,
                primary key (paper_id, author_id)) without rowid;
            insert into papers values ('p1', 'a'), ('p2', 'b'), ('p3', 'c'), ('gone', 'd');
            insert into authors values (1, 'Zoe', 'zoe'), (2, 'Adam', 'adam'),
                (3, 'Mia', 'mia'), (4, 'Bea', 'bea');
            insert into paper_authors values ('p1', 1), ('p1', 2), ('p2', 1), ('p2', 3),
                ('p3', 4), ('p3', 2), ('p2', 99), ('nowhere', 3);
            """
        )
    with sqlite3.connect(path) as connection:
        index = facet_counts.read_link_index(connection, LINKS["authors"])
        rowids = [rowid for (rowid,) in connection.execute("select rowid from papers")]
        (third,) = connection.execute("select rowid from papers where id = 'p3'").fetchone()
        expected = connection.execute(
            "select author_id, count(*) from paper_authors join authors on authors.id = author_id"
            " where paper_id in (select id from papers) group by author_id"
            " order by count(*) desc, authors.name"
        ).fetchall()
    assert expected == [(2, 2), (1, 2), (4, 1), (3, 1)]
    assert facet_counts.count_links(index, rowids, 10) == expected
    assert facet_counts.count_links(index, rowids, 3) == expected[:3]
    assert facet_counts.count_links(index, [third], 10) == [(2, 1), (4, 1)]
    assert facet_counts.count_links(index, [], 10) == []


def test_a_catalog_without_link_tables_is_counted_in_sql(tmp_path):
    path = tmp_path / "other.db"
    with sqlite3.connect(path) as connection:
        connection.execute("create table papers (id text primary key)")
    assert facet_counts.read_indexes(path, LINKS) is None


@pytest.mark.parametrize(("query", "where"), FILTERS)
def test_column_counts_in_memory_are_the_facet_tables_of_sql(search_catalog, query, where):
    """Summed from each match's combination: what a group by over `papers` gives."""
    with sqlite3.connect(search_catalog) as connection:
        memory = facet_counts.read_combo_index(connection)
        rowids = [r for (r,) in connection.execute(f"select rowid from papers where {where}")]
        counted = facet_counts.count_columns(memory, rowids, [*COLUMNS, "title"], 4)
        assert set(counted) == set(COLUMNS), "title is not in the facet table: counted in SQL"
        for column in COLUMNS:
            order = f"{column} desc" if column == "year" else f"n desc, {column}"
            expected = connection.execute(
                f"select {column}, count(*) as n from papers where ({where}) and {column} is not"
                f" null group by {column} order by {order} limit 4"
            ).fetchall()
            assert counted[column] == expected, column


def test_a_paper_without_a_combination_is_counted_in_sql(search_catalog, tmp_path):
    with sqlite3.connect(search_catalog) as connection:
        memory = facet_counts.read_combo_index(connection)
        (last,) = connection.execute("select max(rowid) from papers").fetchone()
    missing = facet_counts.ComboIndex(memory.of_paper[:-1], memory.values)
    assert facet_counts.count_columns(missing, [1, last], COLUMNS, 4) == {}
    memory.of_paper[1] = 0
    assert facet_counts.count_columns(memory, [1, last], COLUMNS, 4) == {}


def test_values_sort_as_sqlite_sorts_them():
    values = [2019, "2018", 2018.5, "Ü", "Z", "a", "é", 3, b"\x00", "", -1]
    with sqlite3.connect(":memory:") as connection:
        connection.execute("create table t (v)")
        connection.executemany("insert into t values (?)", [(value,) for value in values])
        expected = [value for (value,) in connection.execute("select v from t order by v")]
    assert sorted(values, key=facet_counts.sqlite_order) == expected


@pytest.mark.parametrize(("query", "where"), FILTERS)
def test_matched_rowids_are_the_statements_rows(search_catalog, query, where):
    """One joined string from SQLite read as the rowids a row at a time gives, none too."""
    with sqlite3.connect(search_catalog) as connection:
        ids_sql = f"select rowid from papers where {where}"
        rows = sorted(rowid for (rowid,) in connection.execute(ids_sql))
        matched = facet_counts.matched_rowids(connection, ids_sql)
        assert sorted(matched.tolist()) == rows
        linked = facet_counts.read_link_index(connection, LINKS["authors"])
        assert facet_counts.count_links(linked, matched, 5) == facet_counts.count_links(
            linked, rows, 5
        )


@pytest.mark.parametrize("bound", [50, 100_000])  # a count a value, then by sorting
def test_counted_values_are_a_counter(bound):
    import random
    from collections import Counter

    import numpy as np

    values = [random.Random(bound).randrange(50) for _ in range(400)]
    keys, counts = facet_counts.counted_values(np.array(values, dtype=np.int32), bound)
    assert dict(zip(keys.tolist(), counts.tolist(), strict=True)) == Counter(values)


def test_matched_rowids_pass_the_sites_cap_on_a_value_and_leave_it(search_catalog):
    """Every match in one string, longer than the site's cap on a value (plugins/limits.py,
    250 KB; 100 bytes here), which stays as it was for what runs next."""
    with sqlite3.connect(search_catalog) as connection:
        rows = sorted(r for (r,) in connection.execute("select rowid from papers"))
        assert len(",".join(map(str, rows))) > 100
        connection.setlimit(sqlite3.SQLITE_LIMIT_LENGTH, 100)
        ids_sql = "select rowid from papers_fts where papers_fts match 'the OR a OR of'"
        matched = facet_counts.matched_rowids(connection, ids_sql)
        assert len(",".join(map(str, matched.tolist()))) > 100
        assert connection.getlimit(sqlite3.SQLITE_LIMIT_LENGTH) == 100
        with pytest.raises(sqlite3.DataError):
            connection.execute(
                "with recursive n(i) as (select 1 union all select i + 1 from n where i < 200)"
                " select group_concat(i) from n"
            ).fetchone()


@pytest.mark.parametrize(
    "pairs",
    [
        [("q", "learning")],
        [("q", "graph neural")],
        [("q", "model"), ("venue", "ICLR")],
        [("q", "model"), ("venue", "ICLR"), ("year", "2019"), ("status", "")],
        [("q", "zzzqqqnothing")],
        [("q", "learning"), ("author", "1")],  # a link filter: SQL counts
        [],
    ],
)
def test_search_column_facets_from_memory_are_the_sql_ones(real_catalog, pairs):
    """/search's five column facets and total (loader/web/search_results.py) from the facet
    table in memory, on real papers, with and without column filters, are the statement's."""
    from loader.web import search_request, search_results

    request = search_request.parse_search(pairs)
    with sqlite3.connect(f"file:{real_catalog}?mode=ro", uri=True) as connection:
        combos = facet_counts.read_combo_index(connection)
        in_sql = search_results.count_column_facets(connection, request)
        in_memory = search_results.count_column_facets(connection, request, combos)
        rows = search_results.combo_counts_in_memory(connection, request, combos)
    assert in_memory == in_sql
    link_filter = any(name in ("author", "affiliation") for name, _ in pairs)
    assert (rows is None) == (link_filter or not pairs)
    if pairs == [("q", "learning")]:
        assert in_sql[0] > 100  # a common word of the sample
