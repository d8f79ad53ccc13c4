"""No absolute path in a public response.

Datasette's /-/databases shows each database file's absolute path (for `paper-catalog serve`,
the snapshot under .serving/ in the folder the catalog was built in), and /-/threads the source
file each running task is at (it strips only site-packages folders: a plugin's own folder shows).
Both pages are served here instead, HTML and JSON as Datasette serves them (plugin routes are
matched before Datasette's own), with the same data less the folders: read through Datasette's
private _connected_databases() and _threads() (loader/web/datasette_coupling.py checks them).
"""

import re

from loader.web.catalog_scope import serves_catalog

# the folders of an absolute path: "/srv/site/plugins/" of "running at /srv/site/plugins/x.py:40"
FOLDERS = re.compile(r"(?<![\w.~-])/(?:[^\s/:<>'\"]+/)+")


def public_databases(datasette):
    return [
        {key: value for key, value in database.items() if key != "path"}
        for database in datasette._connected_databases()
    ]


def public_threads(datasette):
    threads = datasette._threads()
    if "tasks" in threads:
        threads["tasks"] = [FOLDERS.sub("", task) for task in threads["tasks"]]
    return threads


def register_routes(datasette):
    if not serves_catalog(datasette):
        return None
    # Datasette's views import its plugins: not as this module loads
    from datasette.views.special import JsonDataView

    databases = JsonDataView.as_view(
        datasette, "databases.json", lambda: public_databases(datasette)
    )
    threads = JsonDataView.as_view(datasette, "threads.json", lambda: public_threads(datasette))
    return [
        (r"^/-/databases(\.(?P<format>json))?$", databases),
        (r"^/-/threads(\.(?P<format>json))?$", threads),
    ]
