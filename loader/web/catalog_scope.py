"""Which database is the catalog, and which requests and pages are its own.

Every plugin hook asks here before it acts, so in a Datasette that also serves other databases
their pages stay Datasette's own, and in a Datasette without the catalog the hooks do nothing.
The database's name comes from the plugin configuration (metadata.yml or `datasette -s`):

    plugins:
      paper-catalog:
        database: catalog

and is `catalog` when none is given, the name `paper-catalog serve` gives the build it serves.
"""

import weakref
from typing import TYPE_CHECKING

from datasette.database import Database
from datasette.utils import to_css_class
from datasette.utils.asgi import NotFound, Request

if TYPE_CHECKING:  # datasette.app loads the installed plugins: never as a plugin loads
    from datasette.app import Datasette

PLUGIN = "paper-catalog"
DEFAULT_DATABASE = "catalog"
# per Datasette instance: its configuration is read once (a hook runs many times a page)
NAMES: "weakref.WeakKeyDictionary[Datasette, str]" = weakref.WeakKeyDictionary()


def catalog_name(datasette: "Datasette") -> str:
    """The name of the catalog database in this Datasette (whether or not it serves one)."""
    name = NAMES.get(datasette)
    if name is None:
        config = datasette.plugin_config(PLUGIN) or {}
        name = NAMES[datasette] = str(config.get("database") or DEFAULT_DATABASE)
    return name


def serves_catalog(datasette: "Datasette") -> bool:
    return catalog_name(datasette) in datasette.databases


def catalog_database(datasette: "Datasette") -> Database:
    """The catalog database; a 404 for a Datasette that does not serve it."""
    db = datasette.databases.get(catalog_name(datasette))
    if db is None:
        raise NotFound("This Datasette serves no paper catalog")
    return db


def is_catalog(datasette: "Datasette", database: str | None) -> bool:
    """`database` (a database's name) is the catalog, and the catalog is served."""
    return (
        database is not None and database == catalog_name(datasette) and serves_catalog(datasette)
    )


def is_catalog_page(
    datasette: "Datasette", database: str | None, request: "Request | None" = None
) -> bool:
    """A page of the site: the catalog's, or one of no database (the home page, /search,
    /-/ pages) of a Datasette that serves the catalog. Never another database's page (nor its
    error page, which names no database: `request` tells)."""
    if not serves_catalog(datasette) or database not in (None, catalog_name(datasette)):
        return False
    return database is not None or request is None or in_catalog_scope(datasette, request.path)


def row_template(datasette: "Datasette", table: str) -> str:
    """The name Datasette asks for first for a row page of a catalog table."""
    return f"row-{to_css_class(catalog_name(datasette))}-{to_css_class(table)}.html"


def in_catalog_scope(datasette: "Datasette", path: str) -> bool:
    """A request path of the site, as is_catalog_page() says of pages: the catalog's pages and
    those of no database, when the catalog is served; never a path of another database."""
    if not serves_catalog(datasette):
        return False
    base_url = datasette.setting("base_url")
    if base_url != "/" and path.startswith(base_url):
        path = "/" + path[len(base_url) :]
    # a database's pages are /<route>, /<route>.<format> and /<route>/...
    route = path[1:].split("/", 1)[0].split(".", 1)[0]
    if not route or route == "-":
        return True
    name = catalog_name(datasette)
    return not any(
        db.route == route for db_name, db in datasette.databases.items() if db_name != name
    )
