"""loader/serve/site_files.py and what the site shows of Datasette's own: the home page's per-database lines
and private-table marks are Datasette's, and /-/plugins.json lists only real hooks."""

import re

import pytest
import yaml
from datasette import hookspecs
from datasette.app import Datasette

from loader.serve import site_files as site
from loader.serve.settings import SETTINGS

from .conftest import ROOT


def test_site_files_are_the_checkouts_in_a_checkout():
    assert site.METADATA == ROOT / "metadata.yml"
    assert site.PLUGINS_DIR == ROOT / "plugins"
    assert (site.TEMPLATES_DIR / "index.html").is_file()
    assert (site.STATIC_DIR / "catalog.css").is_file()


def databases_part(html):
    """From the first database heading to the end of the page's content."""
    start = html.index('<h2 style="padding-left: 10px')
    # Datasette's content ends at </section>; ours is a <main> landmark (template_patches.py)
    end = min(i for i in (html.find("</section>", start), html.find("</main>", start)) if i > 0)
    return html[start:end]


@pytest.mark.asyncio
async def test_home_keeps_datasettes_database_lines(datasette, seed_catalog):
    ours = (await datasette.client.get("/")).text
    metadata = yaml.safe_load(site.METADATA.read_text(encoding="utf-8"))
    stock = Datasette(immutables=[str(seed_catalog)], metadata=metadata, settings=SETTINGS)
    theirs = (await stock.client.get("/")).text
    assert databases_part(ours) == databases_part(theirs)
    assert re.search(r"[\d,]+ rows in \d+ tables, [\d,]+ rows in \d+ hidden tables", ours)
    # our additions are still there, after the description
    assert ours.index('class="search-box"') < ours.index('<h2 style="padding-left: 10px')


@pytest.mark.asyncio
async def test_home_marks_a_private_table(seed_catalog):
    metadata = yaml.safe_load(site.METADATA.read_text(encoding="utf-8"))
    metadata["databases"]["catalog"].setdefault("tables", {}).setdefault("paper_sources", {})
    metadata["databases"]["catalog"]["tables"]["paper_sources"]["allow"] = {"id": "root"}
    private = Datasette(
        immutables=[str(seed_catalog)],
        metadata=metadata,
        template_dir=str(site.TEMPLATES_DIR),
        settings=SETTINGS,
    )
    cookie = {"ds_actor": private.sign({"a": {"id": "root"}}, "actor")}
    home = (await private.client.get("/", cookies=cookie)).text
    assert re.search(r">paper_sources</a> 🔒", home)
    anonymous = (await private.client.get("/")).text
    assert ">paper_sources</a>" not in anonymous


@pytest.mark.asyncio
async def test_plugins_json_lists_only_datasette_hooks(datasette):
    specs = {name for name in dir(hookspecs) if not name.startswith("_")}
    plugins = (await datasette.client.get("/-/plugins.json")).json()
    ours = [p for p in plugins if p["name"].endswith(".py")]
    assert ours, plugins
    for plugin in ours:
        assert plugin["hooks"] and set(plugin["hooks"]) <= specs, plugin
