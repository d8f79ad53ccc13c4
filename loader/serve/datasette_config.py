"""The site's one metadata.yml as each Datasette version reads it.

Datasette 0.65 reads descriptions and configuration (canned queries, facets, sort orders,
hidden tables, plugin settings, permissions) from one metadata file. Datasette 1.0 reads only
descriptions from metadata and the rest from its configuration (`datasette.yaml`, the `config=`
argument of `Datasette(...)`); 1.0a41 moves some keys over by itself as a courtesy
(`move_plugins_and_allow`, `move_table_config`) but not canned queries, which then 404. The
split is done here, key by key, from the keys 1.0 reads as configuration, so the site keeps one
metadata.yml (written with its configuration keys apart: STYLE.md) and depends on no upstream
courtesy.
"""

import copy
from typing import Any

from loader.web.datasette_api import INSTALLED_VERSION, is_datasette_1

Tree = dict[str, Any]

# the keys Datasette 1.0 reads from its configuration, at each level of the file
PERMISSION_KEYS = frozenset({"plugins", "permissions", "allow", "allow_sql"})
INSTANCE_KEYS = PERMISSION_KEYS | {"settings", "extra_css_urls", "extra_js_urls"}
DATABASE_KEYS = PERMISSION_KEYS | {"queries"}
TABLE_KEYS = PERMISSION_KEYS | {
    "hidden",
    "sort",
    "sort_desc",
    "size",
    "sortable_columns",
    "label_column",
    "facets",
    "fts_table",
    "fts_pk",
    "searchmode",
}


def take_keys(source: Tree, keys: frozenset[str]) -> Tree:
    """Remove `keys` from `source` and return them, in the file's order."""
    return {key: source.pop(key) for key in list(source) if key in keys}


def split_metadata(metadata: Tree, version: str = INSTALLED_VERSION) -> tuple[Tree, Tree | None]:
    """(metadata, config) for `Datasette(metadata=..., config=...)`: for Datasette 1.0 the
    configuration keys of every level (instance, database, table) moved to `config`, for 0.65
    the metadata unchanged and no `config` (0.65 takes no such argument). `metadata` itself is
    left as it was."""
    if not is_datasette_1(version):
        return metadata, None
    descriptive = copy.deepcopy(metadata)
    config = take_keys(descriptive, INSTANCE_KEYS)
    for name, database in (descriptive.get("databases") or {}).items():
        database_config = take_keys(database, DATABASE_KEYS)
        tables_config: Tree = {}
        tables = database.get("tables") or {}
        for table, table_metadata in list(tables.items()):
            table_config = take_keys(table_metadata, TABLE_KEYS)
            if table_config:
                tables_config[table] = table_config
            if not table_metadata:  # a table with configuration only (hidden: true)
                del tables[table]
        if tables_config:
            database_config["tables"] = tables_config
        if database_config:
            config.setdefault("databases", {})[name] = database_config
    return descriptive, config


def datasette_arguments(metadata: Tree, version: str = INSTALLED_VERSION) -> Tree:
    """`Datasette(**datasette_arguments(metadata), ...)`: split_metadata()'s two parts as the
    constructor's arguments (0.65 takes no `config=`)."""
    descriptive, config = split_metadata(metadata, version)
    return (
        {"metadata": descriptive} if config is None else {"metadata": descriptive, "config": config}
    )
