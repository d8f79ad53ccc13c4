"""The data-source line of the site's own pages: what this catalog was built from (its venues
with their years, and how many files), read from its own tables (loader/web/catalog_summary.py),
where a line in metadata.yml would say the same words whatever was loaded. The footer of
catalog_base.html shows it with the instance's licence and about links; the home page says it
under its search boxes instead.
"""

import weakref
from collections.abc import Awaitable, Callable
from typing import Any

from datasette.database import Database

from loader.web.catalog_scope import catalog_database, serves_catalog
from loader.web.catalog_summary import FILES_SQL, VENUE_YEARS_SQL, data_source

# the templates that extend catalog_base.html
OWN_PAGES = (
    "home.html",
    "paper.html",
    "author.html",
    "search.html",
    "charts.html",
    "site_error.html",
)
# per catalog database: a served catalog never changes, so its line is read once a worker
LINES: "weakref.WeakKeyDictionary[Database, str]" = weakref.WeakKeyDictionary()


async def source_line(db: Database) -> str:
    """The data-source line of the catalog `db`."""
    line = LINES.get(db)
    if line is None:
        rows = [tuple(row) for row in (await db.execute(VENUE_YEARS_SQL)).rows]
        files = (await db.execute(FILES_SQL)).first()[0]
        line = LINES[db] = data_source(rows, files)
    return line


async def instance_metadata(datasette: Any) -> dict:
    """The instance's metadata (title, description, licence, source, about) on Datasette 0.65
    (metadata()) and 1.0 (get_instance_metadata())."""
    get_instance_metadata = getattr(datasette, "get_instance_metadata", None)
    if get_instance_metadata is not None:
        return dict(await get_instance_metadata())
    return dict(datasette.metadata() or {})


def extra_template_vars(
    template: str | None, datasette: Any
) -> Callable[[], Awaitable[dict[str, Any]]] | None:
    if template not in OWN_PAGES or not serves_catalog(datasette):
        return None

    async def footer() -> dict[str, Any]:
        return {
            "site_metadata": await instance_metadata(datasette),
            "data_source": await source_line(catalog_database(datasette)),
        }

    return footer
