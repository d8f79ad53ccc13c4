"""SQL function `name_key(text)`: the loader's name key (loader/web/rendering.py), so a canned query
finds an author by any spelling of the name ('pin yu chen', 'Florian Tramer')."""

import sqlite3
from typing import TYPE_CHECKING, Any

from loader.web.catalog_scope import is_catalog
from loader.web.rendering import name_key

if TYPE_CHECKING:
    from datasette.app import Datasette


def sql_name_key(text: Any) -> str | None:
    return name_key(text) if isinstance(text, str) else None


def prepare_connection(conn: sqlite3.Connection, database: str, datasette: "Datasette") -> None:
    if not is_catalog(datasette, database):
        return
    conn.create_function("name_key", 1, sql_name_key, deterministic=True)
