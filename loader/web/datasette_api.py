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
