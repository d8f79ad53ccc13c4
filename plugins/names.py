"""SQL function `name_key(text)`: the loader's name key (loader/web/rendering.py), so a canned query
finds an author by any spelling of the name ('pin yu chen', 'Florian Tramer')."""

from loader.web.catalog_scope import is_catalog
from loader.web.rendering import name_key


def sql_name_key(text):
    return name_key(text) if isinstance(text, str) else None


def prepare_connection(conn, database, datasette):
    if not is_catalog(datasette, database):
        return
    conn.create_function("name_key", 1, sql_name_key, deterministic=True)
