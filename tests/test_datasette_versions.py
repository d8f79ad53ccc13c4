"""What differs between Datasette 0.65 and 1.0, asked the way each version answers it: the one
metadata.yml split into metadata and configuration (loader/serve/datasette_config.py), table
permissions (loader/web/permissions.py), canned queries and the Jinja environment
(loader/web/datasette_api.py), /-/databases and /-/threads (plugins/private_paths.py).

`make test` runs these under 0.65, `make test-datasette-1` under 1.0."""

import copy
import sqlite3

import pytest
import yaml

from loader.serve.datasette_config import (
    DATABASE_KEYS,
    INSTANCE_KEYS,
    TABLE_KEYS,
    datasette_arguments,
    split_metadata,
)
from loader.web.datasette_api import canned_queries, canned_query, jinja_environment
from loader.web.permissions import can_view, table_visibility

from .conftest import DATASETTE_1, ROOT

METADATA = yaml.safe_load((ROOT / "metadata.yml").read_text(encoding="utf-8"))
ROOT_ACTOR = {"id": "root"}


def merged(metadata, config):
    """metadata and config laid back into one tree, as 0.65 reads them."""
    tree = copy.deepcopy(metadata)
    tree.update({key: value for key, value in config.items() if key != "databases"})
    for name, database in (config.get("databases") or {}).items():
        target = tree.setdefault("databases", {}).setdefault(name, {})
        target.update({key: value for key, value in database.items() if key != "tables"})
        for table, table_config in (database.get("tables") or {}).items():
            target.setdefault("tables", {}).setdefault(table, {}).update(table_config)
    return tree


def test_datasette_065_reads_the_metadata_as_it_is():
    assert split_metadata(METADATA, "0.65.5") == (METADATA, None)
    assert datasette_arguments(METADATA, "0.65.5") == {"metadata": METADATA}


def test_datasette_1_reads_configuration_apart():
    metadata, config = split_metadata(METADATA, "1.0a41")
    catalog = config["databases"]["catalog"]
    assert catalog["queries"] == METADATA["databases"]["catalog"]["queries"]
    assert catalog["tables"]["papers"]["facets"][0] == {"present": "venue"}
    assert catalog["tables"]["papers"]["size"] == 25
    assert catalog["tables"]["papers_fts"] == {"hidden": True}
    assert catalog["tables"]["tracks"] == {"label_column": "name", "sort_desc": "paper_count"}
    # descriptions stay, configuration goes; a table of configuration only leaves no entry
    papers = metadata["databases"]["catalog"]["tables"]["papers"]
    assert papers["title"] == "Papers" and "columns" in papers and "facets" not in papers
    assert "papers_fts" not in metadata["databases"]["catalog"]["tables"]
    assert "queries" not in metadata["databases"]["catalog"]
    assert metadata["title"] == METADATA["title"]
    # nothing is lost, nothing is left behind, and metadata.yml's tree is not changed
    assert merged(metadata, config) == METADATA
    assert split_metadata(METADATA, "1.0a41") == (metadata, config)
    assert not set(metadata) & INSTANCE_KEYS
    for database in metadata["databases"].values():
        assert not set(database) & DATABASE_KEYS
        for table in database["tables"].values():
            assert not set(table) & TABLE_KEYS


def test_permission_keys_move_at_every_level():
    tree = {
        "title": "t",
        "allow": {"id": "a"},
        "plugins": {"paper-catalog": {"database": "papers"}},
        "databases": {
            "papers": {
                "description": "d",
                "allow_sql": {"id": "b"},
                "tables": {"papers": {"title": "P", "allow": {"id": "c"}}},
            }
        },
    }
    metadata, config = split_metadata(tree, "1.0")
    assert metadata == {
        "title": "t",
        "databases": {"papers": {"description": "d", "tables": {"papers": {"title": "P"}}}},
    }
    assert config == {
        "allow": {"id": "a"},
        "plugins": {"paper-catalog": {"database": "papers"}},
        "databases": {
            "papers": {"allow_sql": {"id": "b"}, "tables": {"papers": {"allow": {"id": "c"}}}}
        },
    }


def private_datasette(seed_catalog, where):
    """Datasette on the seed catalog with the site's metadata and `allow: {id: root}` at
    `where`: ("table", name) or ("database",)."""
    from datasette.app import Datasette

    metadata = copy.deepcopy(METADATA)
    catalog = metadata["databases"]["catalog"]
    if where[0] == "table":
        catalog["tables"].setdefault(where[1], {})["allow"] = ROOT_ACTOR
    else:
        catalog["allow"] = ROOT_ACTOR
    return Datasette(immutables=[str(seed_catalog)], **datasette_arguments(metadata))


@pytest.mark.asyncio(loop_scope="session")
async def test_a_private_table_is_seen_by_its_actor_only(seed_catalog):
    datasette = private_datasette(seed_catalog, ("table", "paper_sources"))
    await datasette.invoke_startup()
    assert await can_view(datasette, None, "catalog", "papers")
    assert not await can_view(datasette, None, "catalog", "paper_sources")
    assert await can_view(datasette, ROOT_ACTOR, "catalog", "paper_sources")
    assert await table_visibility(datasette, ROOT_ACTOR, "catalog", "paper_sources") == (
        True,
        True,
    )
    assert await table_visibility(datasette, None, "catalog", "paper_sources") == (False, False)
    assert await table_visibility(datasette, None, "catalog", "papers") == (True, False)
    # the permission the table's own page asks agrees
    assert (await datasette.client.get("/catalog/paper_sources.json")).status_code == 403


@pytest.mark.asyncio(loop_scope="session")
async def test_a_private_database_hides_its_tables(seed_catalog):
    datasette = private_datasette(seed_catalog, ("database",))
    await datasette.invoke_startup()
    assert not await can_view(datasette, None, "catalog", "papers")
    assert await can_view(datasette, ROOT_ACTOR, "catalog", "papers")


@pytest.mark.asyncio(loop_scope="session")
async def test_canned_queries_are_metadata_ymls(datasette):
    await datasette.invoke_startup()
    expected = METADATA["databases"]["catalog"]["queries"]
    assert set(await canned_queries(datasette, "catalog", None)) == set(expected)
    search = await canned_query(datasette, "catalog", "search", None)
    assert search is not None
    assert search["sql"].strip() == expected["search"]["sql"].strip()
    assert list(search["params"]) == expected["search"]["params"]
    assert search["title"] == expected["search"]["title"] and not search.get("write")
    assert await canned_query(datasette, "catalog", "missing", None) is None


@pytest.mark.asyncio(loop_scope="session")
async def test_the_jinja_environment_is_the_one_pages_render_with(datasette):
    await datasette.invoke_startup()
    environment = jinja_environment(datasette)
    assert environment.get_template("search.html")
    # the served app's templates are read once (loader/serve/app.py)
    assert environment.auto_reload is False
    template = environment.from_string("{{ 1 + 1 }}")
    assert await datasette.render_template(template) == "2"


def database_entries(data):
    """/-/databases.json's list: 0.65 answers the list, 1.0 {"databases": [...]}."""
    return data["databases"] if DATASETTE_1 else data


@pytest.mark.asyncio(loop_scope="session")
async def test_databases_json_names_no_path_of_the_catalog(seed_catalog, tmp_path):
    from datasette.app import Datasette

    other = tmp_path / "other.db"
    sqlite3.connect(other).close()
    datasette = Datasette([str(other)], immutables=[str(seed_catalog)])
    data = (await datasette.client.get("/-/databases.json")).json()
    entries = {entry["name"]: entry for entry in database_entries(data)}
    assert "path" not in entries["catalog"] and entries["catalog"]["is_mutable"] is False
    # another database is shown as Datasette shows it
    assert entries["other"]["path"] == str(other)
    assert "catalog" in (await datasette.client.get("/-/databases")).text


@pytest.mark.asyncio(loop_scope="session")
async def test_threads_show_no_folder(datasette):
    response = await datasette.client.get("/-/threads.json")
    if DATASETTE_1:
        # 1.0 shows its threads to the root actor only
        assert response.status_code == 403
        return
    assert response.status_code == 200
    assert all("/" not in task.split(" at ")[-1] for task in response.json().get("tasks", []))
