"""The site acts on a database because of what it holds (the build's marker table), never its
name alone (loader/web/catalog_scope.py), and a catalog under plain `datasette` needs no
metadata of ours (plugins/catalog_queries.py)."""

import json
import re
import shutil
import sqlite3
import subprocess
import sys

import pytest
from datasette.app import Datasette

from loader.web.catalog_scope import MARKER_TABLE, catalog_name, serves_catalog

SITE_PATHS = ("/search", "/-/charts", "/-/author?name=x")


@pytest.fixture(scope="module")
def not_a_catalog(tmp_path_factory):
    """A database called catalog.db that holds something else (as Datasette's own
    fixtures.db served under that name)."""
    path = tmp_path_factory.mktemp("impostor") / "catalog.db"
    with sqlite3.connect(path) as connection:
        connection.execute("create table papers (id text primary key, title text)")
        connection.execute("create table facet_combos (id integer primary key)")
        connection.execute("insert into papers values ('a', 'Not a paper catalog')")
    return path


@pytest.fixture(scope="module")
def renamed_catalog(seed_catalog, tmp_path_factory):
    path = tmp_path_factory.mktemp("renamed") / "papers2024.db"
    shutil.copy(seed_catalog, path)
    return path


def test_the_build_marks_its_catalog(seed_catalog):
    with sqlite3.connect(seed_catalog) as connection:
        [(format,)] = connection.execute(f"select format from {MARKER_TABLE}").fetchall()
    assert format == "paper-catalog"


@pytest.mark.asyncio(loop_scope="session")
async def test_a_database_named_catalog_that_is_not_one_is_stock(not_a_catalog):
    ds = Datasette([str(not_a_catalog)])
    assert not serves_catalog(ds)
    for path in SITE_PATHS:
        assert (await ds.client.get(path)).status_code == 404, path
    home = await ds.client.get("/")
    assert home.status_code == 200 and "header-search" not in home.text
    table = await ds.client.get("/catalog/papers")
    assert table.status_code == 200 and "Not a paper catalog" in table.text
    databases = (await ds.client.get("/-/databases.json")).json()
    assert databases[0]["path"] == str(not_a_catalog)


@pytest.mark.asyncio(loop_scope="session")
async def test_a_catalog_under_any_name_and_no_metadata_is_served_whole(renamed_catalog):
    ds = Datasette(immutables=[str(renamed_catalog)])
    assert catalog_name(ds) == "papers2024"
    search = await ds.client.get("/search.json?q=learning")
    assert search.status_code == 200 and search.json()["total"] > 0
    paper = (await ds.client.get("/papers2024/papers.json?_shape=array&_size=1")).json()[0]
    assert (await ds.client.get(f"/papers2024/papers/{paper['id']}")).status_code == 200
    author = (await ds.client.get("/papers2024/authors.json?_shape=array&_size=1")).json()[0]
    page = await ds.client.get(f"/papers2024/authors/{author['id']}")
    assert page.status_code == 200, page.text[:500]
    # the queries the pages link to come with the plugin
    query = await ds.client.get(f"/papers2024/papers_by_author.json?author_id={author['id']}")
    assert query.status_code == 200 and query.json()["rows"]


@pytest.mark.asyncio(loop_scope="session")
async def test_a_configured_name_counts_only_when_it_holds_a_catalog(
    not_a_catalog, renamed_catalog
):
    config = {"plugins": {"paper-catalog": {"database": "catalog"}}}
    ds = Datasette([str(not_a_catalog)], immutables=[str(renamed_catalog)], metadata=config)
    assert not serves_catalog(ds)
    assert (await ds.client.get("/search")).status_code == 404


@pytest.mark.asyncio(loop_scope="session")
async def test_other_databases_keep_their_paths_beside_the_catalog(not_a_catalog, renamed_catalog):
    ds = Datasette([str(not_a_catalog)], immutables=[str(renamed_catalog)])
    assert catalog_name(ds) == "papers2024"
    databases = {db["name"]: db for db in (await ds.client.get("/-/databases.json")).json()}
    assert databases["catalog"]["path"] == str(not_a_catalog)


STOCK_PAGES = """
import asyncio, json, sys
sys._called_from_test = True  # Datasette then loads no installed plugin: stock
from datasette.app import Datasette
datasette = Datasette([sys.argv[1]])
async def pages():
    return {path: [(r := await datasette.client.get(path)).status_code, r.text]
            for path in json.loads(sys.argv[2])}
print(json.dumps(asyncio.run(pages())))
"""
IMPOSTOR_PAGES = [
    "/",
    "/.json",
    "/catalog",
    "/catalog/papers",
    "/catalog/papers?_facet=title",
    "/catalog/papers.json?_facet=title",
    "/catalog/papers.csv",
    "/catalog/papers/a",
    "/catalog/papers/a.json",
    "/catalog?sql=select+*+from+papers",
    "/catalog.csv?sql=select+*+from+papers",
    "/catalog/facet_combos",
    "/catalog/nothing",
    "/-/databases.json",
]


def untimed(text: str) -> str:
    return re.sub(r'"query_ms": [0-9.e-]+|[0-9.]+ ?ms', "", text)


@pytest.fixture(scope="module")
def stock_pages(not_a_catalog):
    """IMPOSTOR_PAGES as stock Datasette answers them, in a process that loads no plugin."""
    command = [sys.executable, "-c", STOCK_PAGES, str(not_a_catalog), json.dumps(IMPOSTOR_PAGES)]
    return json.loads(subprocess.run(command, capture_output=True, text=True, check=True).stdout)


@pytest.mark.asyncio(loop_scope="session")
async def test_a_database_named_catalog_that_is_not_one_is_byte_for_byte_stock(
    not_a_catalog, stock_pages
):
    """The same pages of stock Datasette and of a Datasette with the plugin: every page, the
    facet boxes and the error pages included."""
    stock = stock_pages
    ds = Datasette([str(not_a_catalog)])
    for path in IMPOSTOR_PAGES:
        response = await ds.client.get(path)
        status, text = stock[path]
        assert response.status_code == status, path
        assert untimed(response.text) == untimed(text), path
