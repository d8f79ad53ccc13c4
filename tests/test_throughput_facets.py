"""The papers table's facet boxes, counted for all boxes of a kind in one query
(plugins/facets.py), against the counts Datasette's own facet queries give: the same values,
counts, order and links, on the seeds plus the real conference papers."""

import sqlite3
from urllib.parse import parse_qsl, urlsplit

import pytest

from .conftest import second_datasette
from .plugin_files import load_plugin

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


def top(pairs, size):
    """Datasette's facet order: most papers first, then by value."""
    return sorted(pairs, key=lambda pair: (-pair[1], pair[0]))[:size]


@pytest.mark.asyncio
@pytest.mark.parametrize(("query", "where"), FILTERS)
async def test_every_box_counts_what_sql_counts(site, search_catalog, query, where):
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
            assert shown == top(expected, size), column
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
    ["/catalog/papers?_search=a+b&year=2018", "/", "/catalog/papers?x=%2F..%2F", "/a/../b"],
)
def test_links_from_the_origin_are_datasettes_absolute_urls(datasette, path):
    from datasette.utils.asgi import Request

    facets = load_plugin("facets")
    request = Request.fake("/catalog/papers?_search=x")
    absolute = facets.absolute_urls(datasette, request)
    assert absolute(path) == datasette.absolute_url(request, path)
    assert absolute(datasette.urls.path(path)) == datasette.absolute_url(
        request, datasette.urls.path(path)
    )


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
def test_added_arguments_are_datasettes(path, name, value):
    from datasette.utils import path_with_added_args
    from datasette.utils.asgi import Request

    facets = load_plugin("facets")
    request = Request.fake(path)
    added = facets.added_arg_paths(request)
    assert added(name, value) == path_with_added_args(request, {name: value})


@pytest.mark.asyncio
@pytest.mark.parametrize("query", ["", "_search=learning", "_search=learning&year=2018"])
async def test_every_box_of_a_page_comes_from_one_statement(site, query):
    from datasette.tracer import capture_traces

    traces = []
    with capture_traces(traces):
        response = await site.client.get(f"/catalog/papers.json?{query}")
    assert response.status_code == 200
    assert {"year", "authors"} <= set(response.json()["facet_results"])
    facet_statements = [t for t in traces if " as facet, " in t.get("sql", "")]
    assert len(facet_statements) == 1
