"""metadata.yml as Datasette serves it: descriptions, labels, hidden internals, the papers view
with its default facets and search box, and user search syntax on the table view."""

import re
import sqlite3
from urllib.parse import urlencode, urlsplit

import pytest
import yaml
from datasette.utils import escape_fts

from .conftest import DATASETTE_1, ROOT, table_json

METADATA = yaml.safe_load((ROOT / "metadata.yml").read_text(encoding="utf-8"))
TABLES = METADATA["databases"]["catalog"]["tables"]
LLM_TRACK = "Deep Learning · Large Language Models"
DESCRIPTIVE = {"title", "description", "description_html", "columns"}
CONFIGURATION = {"label_column", "fts_table", "fts_pk", "size", "sort", "sort_desc", "facets"}
CONFIGURATION |= {"hidden", "facet_size", "searchmode", "sortable_columns"}


def catalog_tables(seed_catalog):
    connection = sqlite3.connect(seed_catalog)
    names = [
        row[0]
        for row in connection.execute(
            "select name from sqlite_master where type = 'table' and name not like 'sqlite_%' "
            "and name not like 'papers_fts%' and name not like 'authors_fts%'"
        )
    ]
    # table_xinfo lists generated columns too; hidden = 1 marks virtual-table internals
    columns = {
        name: [row[1] for row in connection.execute(f"pragma table_xinfo([{name}])") if row[6] != 1]
        for name in names
    }
    connection.close()
    return columns


def test_top_level_describes_the_site():
    for key in ("title", "description_html", "license", "about"):
        assert METADATA.get(key), key
    assert METADATA["license_url"].startswith("https://")
    # no fixed data source: the home page says what the catalog holds (plugins/data_source.py)
    assert "source" not in METADATA and "source_url" not in METADATA


def test_every_table_and_column_is_described(seed_catalog):
    for table, columns in catalog_tables(seed_catalog).items():
        entry = TABLES.get(table)
        assert entry, f"{table} has no entry in metadata.yml"
        assert entry.get("description") or entry.get("description_html"), table
        described = set(entry.get("columns", {}))
        assert set(columns) <= described, (table, set(columns) - described)
        assert described <= set(columns), (table, described - set(columns))


def test_descriptive_keys_come_before_configuration_keys():
    """So the Datasette 1.0 split into metadata and configuration files is a cut."""
    for table, entry in TABLES.items():
        keys = list(entry)
        assert set(keys) <= DESCRIPTIVE | CONFIGURATION, (table, keys)
        kinds = ["d" if key in DESCRIPTIVE else "c" for key in keys]
        assert "".join(kinds) == "".join(sorted(kinds, reverse=True)), (table, keys)
    database_keys = list(METADATA["databases"]["catalog"])
    assert database_keys.index("queries") > database_keys.index("tables")


@pytest.mark.asyncio
async def test_internals_hidden_and_tables_listed(datasette):
    tables = {
        t["name"]: t["hidden"]
        for t in (await datasette.client.get("/catalog.json")).json()["tables"]
    }
    internals = {name for name in tables if name.startswith("papers_fts")}
    # Datasette 1.0 leaves an FTS table's own tables out of the list (counted as hidden)
    fts_tables = {"papers_fts", "papers_fts_vocab", "papers_fts_data", "papers_fts_idx"}
    assert ({"papers_fts"} if DATASETTE_1 else fts_tables) <= internals
    assert all(tables[name] for name in internals)
    visible = {name for name, hidden in tables.items() if not hidden}
    assert visible == {
        "papers", "authors", "tracks", "affiliations", "categories", "sources",
        "load_problems", "paper_authors", "paper_affiliations", "paper_categories",
        "paper_sources", "paper_links", "author_tracks", "author_variants", "author_ids",
        "paper_aliases",
    }  # fmt: skip


@pytest.mark.asyncio
@pytest.mark.parametrize("table", ["papers", "authors", "tracks", "paper_authors", "sources"])
async def test_table_page_shows_descriptions(datasette, table):
    page = (await datasette.client.get(f"/catalog/{table}")).text
    entry = TABLES[table]
    description = (entry.get("description") or entry.get("description_html")).split("\n")[0]
    assert description.split("<")[0].strip() in page
    assert '<dl class="column-descriptions">' in page
    for column in entry["columns"]:
        assert f"<dt>{column}</dt>" in page


@pytest.mark.asyncio
async def test_load_problems_page_is_the_canned_query(datasette):
    """The canned query of the same name takes the table's URL: same rows, file and line order."""
    page = (await datasette.client.get("/catalog/load_problems")).text
    assert METADATA["databases"]["catalog"]["queries"]["load_problems"]["title"] in page
    # Datasette 1.0 gives a query's columns when asked (0.65 always, the parameter unread)
    data = (await datasette.client.get("/catalog/load_problems.json?_extra=columns")).json()
    assert data["columns"] == ["id", "file", "line", "message"]


@pytest.mark.asyncio
async def test_home_and_database_pages(datasette):
    home = (await datasette.client.get("/")).text
    assert "open catalog of machine-learning research papers" in home
    assert "Apache-2.0" in home
    database = (await datasette.client.get("/catalog")).text
    if DATASETTE_1:
        # 1.0's database page lists its first five queries, the others behind a link
        listed = (await datasette.client.get("/catalog.json")).json()["queries_count"]
        assert listed == len(METADATA["databases"]["catalog"]["queries"])
    else:
        assert "Ranked search" in database and "Related papers" in database
    for link in re.findall(r'href="(/catalog/[a-z_]+)"', METADATA["description_html"]):
        assert (await datasette.client.get(link)).status_code == 200


@pytest.mark.asyncio
async def test_foreign_keys_show_labels(datasette, query):
    params = {"_labels": "on", "_shape": "array", "track": LLM_TRACK}
    rows = (await datasette.client.get(f"/catalog/papers.json?{urlencode(params)}")).json()
    assert {row["track_id"]["label"] for row in rows} == {LLM_TRACK}
    params = {"_labels": "on", "_shape": "array", "_size": "5"}
    rows = (await datasette.client.get(f"/catalog/paper_authors.json?{urlencode(params)}")).json()
    names = dict(query("select id, name from authors"))
    labels = dict(query("select id, label from papers"))
    for row in rows:
        assert row["author_id"]["label"] == names[row["author_id"]["value"]]
        assert row["paper_id"]["label"] == labels[row["paper_id"]["value"]]
    rows = (
        await datasette.client.get("/catalog/paper_sources.json?_labels=on&_shape=array")
    ).json()
    paths = dict(query("select id, path from sources"))
    assert {row["source_id"]["label"] for row in rows} == set(paths.values())
    rows = (
        await datasette.client.get("/catalog/paper_affiliations.json?_labels=on&_shape=array")
    ).json()
    assert {row["affiliation_id"]["label"] for row in rows} == {
        "PKU",
        "Microsoft Research",
        "Stanford",
    }


@pytest.mark.asyncio
async def test_papers_view_default_facets_and_page_size(datasette):
    data = await table_json(datasette, "/catalog/papers.json")
    assert data["filtered_table_rows_count"] == 90
    assert len(data["rows"]) == TABLES["papers"]["size"] == 25
    assert data["next"]
    facets = data["facet_results"]
    assert {"area", "track", "affiliations", "authors"} <= set(facets)

    def counts(name):
        return {item["value"]: item["count"] for item in facets[name]["results"]}

    assert counts("track")[LLM_TRACK] == 12
    assert len(counts("track")) == 16
    assert counts("area")["Deep Learning"] == 14
    assert counts("affiliations")["pku"] == 4
    assert counts("authors")["Huishuai Zhang"] == 50


@pytest.mark.asyncio
async def test_facet_toggle_filters(datasette):
    data = await table_json(datasette, "/catalog/papers.json")
    pku = next(i for i in data["facet_results"]["affiliations"]["results"] if i["value"] == "pku")
    toggle = urlsplit(pku["toggle_url"])
    filtered = await table_json(datasette, f"{toggle.path}?{toggle.query}")
    assert filtered["filtered_table_rows_count"] == 4


@pytest.mark.asyncio
async def test_small_tables_sorted_by_paper_count(datasette):
    for table in ("tracks", "affiliations"):
        rows = (await datasette.client.get(f"/catalog/{table}.json?_shape=array")).json()
        counts = [row["paper_count"] for row in rows]
        assert counts == sorted(counts, reverse=True)


@pytest.mark.asyncio
@pytest.mark.parametrize(
    "search",
    [
        "reasoning",
        "sock-puppet",
        '"unbalanced',
        'large "language',
        '"large language models"',
        "-",
        "*",
        "AND",
        "NOT reasoning",
        "reason*",
        "title:reasoning",
        "😀 等",
    ],
)
async def test_table_search_accepts_user_syntax(datasette, seed_catalog, search):
    """The search box on /catalog/papers: user text is escaped, never FTS syntax."""
    params = {"_search": search, "_shape": "objects", "_size": "max"}
    data = await table_json(datasette, "/catalog/papers.json", params)
    connection = sqlite3.connect(seed_catalog)
    (expected,) = connection.execute(
        "select count(*) from papers_fts where papers_fts match ?", [escape_fts(search)]
    ).fetchone()
    connection.close()
    assert data["filtered_table_rows_count"] == expected
    page = await datasette.client.get(f"/catalog/papers?{urlencode({'_search': search})}")
    assert page.status_code == 200


@pytest.mark.asyncio
async def test_table_search_and_facet_together(datasette):
    params = {"_search": "reasoning", "track": LLM_TRACK, "_shape": "objects"}
    data = await table_json(datasette, "/catalog/papers.json", params)
    assert data["filtered_table_rows_count"] == 6
    assert {row["track"] for row in data["rows"]} == {LLM_TRACK}
