"""loader/serve/site_files.py and what the site shows of Datasette's own: the home page's
per-database lines count and mark private tables as Datasette's index does, and
/-/plugins.json lists the installed distribution's hooks."""

import re

import pytest
import yaml
from datasette.app import Datasette

from loader.serve import site_files as site
from loader.serve.datasette_config import datasette_arguments
from loader.serve.settings import SETTINGS

from .conftest import ROOT, index_databases, served_app


def test_site_files_are_the_checkouts_in_a_checkout():
    assert site.METADATA == ROOT / "metadata.yml"
    # the editable install maps the package paper_catalog_site.plugins onto plugins/
    assert site.plugin_files() == ROOT / "plugins"
    assert (site.plugin_files() / "templates" / "search.html").is_file()
    assert (site.plugin_files() / "static" / "catalog.css").is_file()


@pytest.mark.asyncio
async def test_home_counts_the_databases_as_datasettes_index(seed_catalog):
    """The home page is ours (plugins/pages.py); its line a database says what stock
    Datasette's index counts."""
    metadata = yaml.safe_load(site.METADATA.read_text(encoding="utf-8"))
    stock = Datasette(
        immutables=[str(seed_catalog)], settings=SETTINGS, **datasette_arguments(metadata)
    )
    # both index pages count each table within 10 ms, and on a busy machine a count may run
    # out on one side only: counted once first without that limit, the counts are cached (an
    # immutable catalog) and both pages read the same ones
    ours_site = served_app(seed_catalog).datasette
    for instance in (ours_site, stock):
        await instance.get_database("catalog").table_counts(limit=60_000)
    ours = (await ours_site.client.get("/")).text
    theirs = index_databases((await stock.client.get("/.json")).json())["catalog"]
    line = (
        f"{theirs['table_rows_sum']:,} rows in {theirs['tables_count']} tables, "
        f"{theirs['hidden_table_rows_sum']:,} rows in {theirs['hidden_tables_count']} hidden tables"
    )
    assert f'<p class="count">{line}' in ours
    # our additions come first, after the description
    assert ours.index('class="search-box"') < ours.index('<section class="databases"')


@pytest.mark.asyncio
async def test_home_marks_a_private_table(seed_catalog):
    metadata = yaml.safe_load(site.METADATA.read_text(encoding="utf-8"))
    metadata["databases"]["catalog"].setdefault("tables", {}).setdefault("paper_sources", {})
    metadata["databases"]["catalog"]["tables"]["paper_sources"]["allow"] = {"id": "root"}
    private = Datasette(
        immutables=[str(seed_catalog)], settings=SETTINGS, **datasette_arguments(metadata)
    )
    cookie = {"ds_actor": private.sign({"a": {"id": "root"}}, "actor")}
    home = (await private.client.get("/", cookies=cookie)).text
    assert re.search(r">paper_sources</a> 🔒", home)
    anonymous = (await private.client.get("/")).text
    assert ">paper_sources</a>" not in anonymous
