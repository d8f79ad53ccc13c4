"""Whether an actor may see a table, asked the way the installed Datasette answers it.

Datasette 0.65 asks its `permission_allowed` hooks about a cascade of (action, resource) pairs,
the table's, then its database's, then the instance's, the first definite answer winning
(`ensure_permissions`). Datasette 1.0 asks `datasette.allowed()` about the action `view-table`
on a `TableResource`; its `permission_resources_sql` hooks and the configuration's `allow`
blocks at every level (instance, database, table) give the answer. A page of ours that shows a
table's rows asks here, so it shows what Datasette's own page of the table would.
"""

from typing import TYPE_CHECKING, Any

from datasette.utils.asgi import Forbidden

from loader.web.datasette_api import is_datasette_1

if TYPE_CHECKING:  # datasette.app loads the installed plugins: never as a plugin loads
    from datasette.app import Datasette

Actor = dict[str, Any] | None


async def can_view(
    datasette: "Datasette", actor: Actor, database: str | None = None, table: str | None = None
) -> bool:
    """Whether `actor` (None: anyone) may see `table` of `database`, or the database (no
    table), or the instance (neither)."""
    if is_datasette_1():
        from datasette.resources import DatabaseResource, TableResource  # 1.0 only

        if table is not None and database is not None:
            action, resource = "view-table", TableResource(database, table)
        elif database is not None:
            action, resource = "view-database", DatabaseResource(database)
        else:
            action, resource = "view-instance", None
        return bool(await datasette.allowed(action=action, resource=resource, actor=actor))
    checks: list[Any] = []
    if table is not None and database is not None:
        checks.append(("view-table", (database, table)))
    if database is not None:
        checks.append(("view-database", database))
    checks.append("view-instance")
    try:
        await datasette.ensure_permissions(actor, checks)
    except Forbidden:
        return False
    return True


async def ensure_view(
    datasette: "Datasette", actor: Actor, database: str | None = None, table: str | None = None
) -> None:
    """Forbidden (a 403) unless `actor` may see what can_view() says."""
    if not await can_view(datasette, actor, database, table):
        raise Forbidden("You may not see this page")


async def table_visibility(
    datasette: "Datasette", actor: Actor, database: str, table: str
) -> tuple[bool, bool]:
    """(visible, private) as Datasette's pages show a table: whether `actor` may see it, and
    whether it is hidden from anyone else (its page then shows a lock)."""
    if not await can_view(datasette, actor, database, table):
        return False, False
    return True, not await can_view(datasette, None, database, table)
