"""Which database is the catalog, and which requests and pages are its own.

Every plugin hook asks here before it acts, so in a Datasette that also serves other databases
their pages stay Datasette's own, and in a Datasette without the catalog the hooks do nothing.
A database is the catalog because of what it holds, never its name alone: the build writes a
marker table (MARKER_TABLE, one row naming the format and its schema version). The plugin
configuration (metadata.yml or `datasette -s`) may name the database to use:

    plugins:
      paper-catalog:
        database: papers

and a named database is the catalog only when it holds the marker too. Without configuration,
the catalog is the first served database that holds it; `paper-catalog serve` serves its build
as `catalog`.
"""

import sqlite3
import weakref
from typing import TYPE_CHECKING

from datasette.database import Database
from datasette.utils.asgi import NotFound, Request

if TYPE_CHECKING:  # datasette.app loads the installed plugins: never as a plugin loads
    from datasette.app import Datasette

PLUGIN = "paper-catalog"
DEFAULT_DATABASE = "catalog"
# written by the build (loader/build/schema.py): the web stack never imports the build
MARKER_TABLE = "paper_catalog"
MARKER_FORMAT = "paper-catalog"
NO_CATALOG = ""
# per Datasette instance and the databases it serves: a hook runs many times a page
NAMES: "weakref.WeakKeyDictionary[Datasette, tuple[tuple[str, ...], str]]" = (
    weakref.WeakKeyDictionary()
)
# per database file: whether it holds the marker (an immutable build never changes)
MARKED: "weakref.WeakKeyDictionary[Database, bool]" = weakref.WeakKeyDictionary()


def holds_marker(db: Database) -> bool:
    """Whether a served database is a paper catalog: its marker table names our format. Read
    with a connection of its own (hooks are not async) and kept per Database object."""
    marked = MARKED.get(db)
    if marked is None:
        marked = MARKED[db] = read_marker(db)
    return marked


def read_marker(db: Database) -> bool:
    if db.is_memory or not db.path:
        return False
    try:
        connection = sqlite3.connect(f"file:{db.path}?mode=ro", uri=True)
    except sqlite3.Error:
        return False
    try:
        row = connection.execute(f"select format from [{MARKER_TABLE}] limit 1").fetchone()
    except sqlite3.Error:
        return False
    finally:
        connection.close()
    return row is not None and row[0] == MARKER_FORMAT


def catalog_name(datasette: "Datasette") -> str:
    """The name of the catalog database in this Datasette, NO_CATALOG ("") when it serves
    none."""
    served = tuple(datasette.databases)
    known = NAMES.get(datasette)
    if known is not None and known[0] == served:
        return known[1]
    config = datasette.plugin_config(PLUGIN) or {}
    wanted = config.get("database")
    candidates = [str(wanted)] if wanted else list(served)
    name = next(
        (
            candidate
            for candidate in candidates
            if candidate in datasette.databases and holds_marker(datasette.databases[candidate])
        ),
        NO_CATALOG,
    )
    NAMES[datasette] = (served, name)
    return name


def serves_catalog(datasette: "Datasette") -> bool:
    return catalog_name(datasette) != NO_CATALOG


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
