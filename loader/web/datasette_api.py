"""The few Datasette calls spelled differently in 0.65 and in 1.0, one function each, so the
rest of the site reads the same under both (pyproject.toml allows either).
"""

from typing import TYPE_CHECKING, Any

from datasette.version import __version__ as INSTALLED_VERSION

if TYPE_CHECKING:  # datasette.app loads the installed plugins: never as a plugin loads
    from datasette.app import Datasette
    from jinja2 import Environment


def is_datasette_1(version: str = INSTALLED_VERSION) -> bool:
    """Datasette 1.0 or one of its alphas (1.0a41): configuration apart from metadata,
    permissions as actions on resources."""
    return int(version.split(".", 1)[0]) >= 1


def jinja_environment(datasette: "Datasette") -> "Environment":
    """The Jinja environment Datasette renders every template with: 1.0's
    get_jinja_environment() (made as the instance is), 0.65's jinja_env attribute."""
    if is_datasette_1():
        return datasette.get_jinja_environment()
    return datasette.jinja_env


def query_config(query: Any) -> dict[str, Any]:
    """A 1.0 StoredQuery as 0.65 gives a canned query: its metadata.yml keys."""
    return {
        "name": query.name,
        "sql": query.sql,
        "params": list(query.parameters or []),
        "title": query.title,
        "description": query.description,
        "description_html": query.description_html,
        "hide_sql": query.hide_sql,
        "write": query.is_write,
    }


async def canned_query(
    datasette: "Datasette", database: str, name: str, actor: dict[str, Any] | None
) -> dict[str, Any] | None:
    """The canned (1.0: stored) query `name` of `database` with its metadata.yml keys (`sql`,
    `params`, `title`...), or None: 0.65's get_canned_query(), 1.0's get_query(). Neither
    checks that `actor` may see it; the page showing it does."""
    if is_datasette_1():
        query = await datasette.get_query(database, name)
        return None if query is None else query_config(query)
    found: dict[str, Any] | None = await datasette.get_canned_query(database, name, actor)
    return found


async def canned_queries(
    datasette: "Datasette", database: str, actor: dict[str, Any] | None
) -> dict[str, dict[str, Any]]:
    """Every canned query of `database` the actor may see, by name, as canned_query() gives
    each: 0.65's get_canned_queries(), 1.0's list_queries() page by page."""
    if not is_datasette_1():
        found: dict[str, dict[str, Any]] = await datasette.get_canned_queries(database, actor)
        return found
    queries: dict[str, dict[str, Any]] = {}
    cursor = None
    while True:
        page = await datasette.list_queries(database, actor=actor, limit=1000, cursor=cursor)
        queries.update((query.name, query_config(query)) for query in page.queries)
        if not page.has_more:
            return queries
        cursor = page.next


def query_path(database: str) -> str:
    """The path of a database's SQL query page, without a format: 0.65's `/<db>`, 1.0's
    `/<db>/-/query` (1.0 redirects `/<db>?sql=` there). `database` as the URL spells it."""
    return f"/{database}/-/query" if is_datasette_1() else f"/{database}"


# the `_extra`s that make a 1.0 JSON carry the keys 0.65 gives every table, row or query JSON;
# 1.0 refuses (400) an `_extra` that does not apply where it is asked
EXTRAS_065 = {
    "table": "columns,database,table,primary_keys,is_view,expandable_columns",
    "row": "columns,database,table,primary_keys",
    "query": "columns,database",
}


async def json_extras(
    datasette: "Datasette", database: str, table: str | None, row: bool = False
) -> list[tuple[str, str]]:
    """The parameters a JSON of `database` (its name), a `table` (or canned query) of it or
    one of its rows is asked for on top of its own, for the keys Datasette 0.65 gives it
    (`columns`, `database`, `table`, `primary_keys`, `is_view`): none on 0.65; on 1.0 the
    `_extra` for what the path names, a table or view before a stored query of the same name
    (as 1.0 routes them)."""
    if not is_datasette_1():
        return []
    kind = "query"
    if table is not None and row:
        kind = "row"
    elif table is not None:
        db = datasette.get_database(database)
        if await db.table_exists(table) or await db.view_exists(table):
            kind = "table"
    return [("_extra", EXTRAS_065[kind])]


def labels_asked(pairs: list[tuple[str, str]], columns: list[str]) -> list[str]:
    """The foreign key columns a table JSON asked with `pairs` labels for: `_label=` each,
    else every one for `_labels=on` (an unreadable `_labels` asks none, as Datasette reads it)."""
    chosen = [value for key, value in pairs if key == "_label"]
    if chosen:
        return chosen
    labels = [value for key, value in pairs if key == "_labels"]
    if labels and labels[0].lower() in ("on", "true", "1"):
        return columns
    return []


def as_065_json(data: dict[str, Any], pairs: list[tuple[str, str]]) -> dict[str, Any]:
    """A table JSON asked with `pairs` (json_extras() among them) with 0.65's
    `expanded_columns`, the columns whose cells came as `{"value", "label"}`: 1.0 has no such
    key and gives the foreign keys that may be labelled (`expandable_columns`) instead."""
    expandable = data.pop("expandable_columns", None)
    if expandable is not None:
        keys = [foreign_key["column"] for foreign_key, _ in expandable]
        asked = set(labels_asked(pairs, keys))
        data["expanded_columns"] = [
            column for column in keys if column in asked and column in data["columns"]
        ]
    return data


async def table_config(datasette: "Datasette", database: str, table: str) -> dict[str, Any]:
    """A table's configuration (`sort`, `sort_desc`, `facets`...): 0.65's table_metadata(),
    1.0's table_config()."""
    if is_datasette_1():
        config: dict[str, Any] = await datasette.table_config(database, table)
        return config
    metadata: dict[str, Any] = datasette.table_metadata(database, table)
    return metadata


async def index_tables(
    datasette: "Datasette", database: str, actor: dict[str, Any] | None
) -> list[str]:
    """The tables (views apart) of `database` that Datasette's index counts: 0.65's every
    table of the file (its index leaves out, one check each, those `actor` may not see: the
    home page checks the ones it links); 1.0's the ones `actor` may view, asked at once,
    which leave out SQLite's statistics and the full-text index's own tables."""
    names: list[str] = await datasette.get_database(database).table_names()
    if not is_datasette_1():
        return names
    page = await datasette.allowed_resources("view-table", actor, parent=database)
    allowed = {resource.child async for resource in page.all()}
    return [name for name in names if name in allowed]
