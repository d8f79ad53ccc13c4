"""No absolute path of the catalog in a public response.

Datasette's /-/databases shows each database file's absolute path (for `paper-catalog serve`,
the snapshot under .serving/ in the folder the catalog was built in). It is served here instead
(plugin routes are matched before Datasette's own), HTML and JSON as Datasette serves them,
with the same data less the catalog's path; another database's entry stays as Datasette shows
it. The data is Datasette's own, read through the private method its page reads (upstream has
no hook to leave paths out: docs/datasette.md):

- 0.65: `_connected_databases()`, every database to anyone;
- 1.0: `_connected_databases_for_actor()`, the databases the actor may see, under "databases".

0.65's /-/threads also shows the source file each running task is at (it strips only
site-packages folders: a plugin's own folder shows): served here too, less the folders. 1.0
shows /-/threads to the root actor only (`permissions-debug`), so it is left as it is there.
"""

import re
from collections.abc import Iterable
from typing import TYPE_CHECKING, Any

from loader.web.catalog_scope import catalog_name, serves_catalog
from loader.web.datasette_api import is_datasette_1

if TYPE_CHECKING:
    from datasette.app import Datasette
    from datasette.utils.asgi import Request

# the folders of an absolute path: "/srv/site/plugins/" of "running at /srv/site/plugins/x.py:40"
FOLDERS = re.compile(r"(?<![\w.~-])/(?:[^\s/:<>'\"]+/)+")


def without_catalog_path(
    datasette: "Datasette", databases: Iterable[dict[str, Any]]
) -> list[dict[str, Any]]:
    catalog = catalog_name(datasette)
    return [
        {key: value for key, value in database.items() if key != "path"}
        if database.get("name") == catalog
        else database
        for database in databases
    ]


def public_databases(datasette: "Datasette") -> list[dict[str, Any]]:
    """0.65's /-/databases data: a list of every database."""
    return without_catalog_path(datasette, datasette._connected_databases())


async def public_databases_for_actor(datasette: "Datasette", request: "Request") -> dict[str, Any]:
    """1.0's /-/databases data: the databases the actor may see."""
    databases = await datasette._connected_databases_for_actor(request.actor)
    return {"databases": without_catalog_path(datasette, databases)}


def public_threads(datasette: "Datasette") -> dict[str, Any]:
    threads = datasette._threads()
    if "tasks" in threads:
        threads["tasks"] = [FOLDERS.sub("", task) for task in threads["tasks"]]
    return threads


def register_routes(datasette: "Datasette") -> list[tuple[str, Any]] | None:
    if not serves_catalog(datasette):
        return None
    # Datasette's views import its plugins: not as this module loads
    from datasette.views.special import JsonDataView

    if is_datasette_1():
        databases = JsonDataView.as_view(
            datasette,
            "databases.json",
            lambda request: public_databases_for_actor(datasette, request),
            needs_request=True,
        )
        return [(r"^/-/databases(\.(?P<format>json))?$", databases)]
    databases = JsonDataView.as_view(
        datasette, "databases.json", lambda: public_databases(datasette)
    )
    threads = JsonDataView.as_view(datasette, "threads.json", lambda: public_threads(datasette))
    return [
        (r"^/-/databases(\.(?P<format>json))?$", databases),
        (r"^/-/threads(\.(?P<format>json))?$", threads),
    ]
