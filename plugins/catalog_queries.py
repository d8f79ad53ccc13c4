"""The catalog's canned queries come with the plugin, so a catalog served by plain
`datasette catalog.db` (no `--metadata`) has the queries its pages run (the author page's
`papers_by_author`, the paper page's `related_papers`, ...), not a 500.

They are the queries of the metadata.yml shipped in this distribution (`paper_catalog_site`),
offered for the catalog only; a query the served metadata (or configuration) defines under the
same name is that one's, so a host can still change one. Datasette 0.65 asks the
`canned_queries` hook; 1.0 keeps stored queries, which the plugin adds as Datasette starts.
"""

import functools
from collections.abc import Awaitable, Callable
from pathlib import Path
from typing import TYPE_CHECKING, Any

import yaml

from loader.web.catalog_scope import DEFAULT_DATABASE, catalog_name, is_catalog
from loader.web.datasette_api import is_datasette_1

if TYPE_CHECKING:
    from datasette.app import Datasette

# beside this package: the top of a checkout, or the package paper_catalog_site when installed
METADATA_FILE = Path(__file__).resolve().parent.parent / "metadata.yml"


@functools.cache
def shipped_queries() -> dict[str, dict[str, Any]]:
    """The canned queries of the catalog in the metadata.yml this distribution ships."""
    text = METADATA_FILE.read_text(encoding="utf-8")
    metadata = yaml.safe_load(text) or {}
    database = (metadata.get("databases") or {}).get(DEFAULT_DATABASE) or {}
    return dict(database.get("queries") or {})


def served_query_names(datasette: "Datasette", database: str) -> set[str]:
    """The names of the queries the served metadata (Datasette 0.65's) gives this database."""
    return set(datasette.metadata("queries", database=database, fallback=False) or {})


def canned_queries(datasette: "Datasette", database: str) -> dict[str, dict[str, Any]] | None:
    """The catalog's queries that the served metadata does not define itself."""
    if not is_catalog(datasette, database):
        return None
    defined = served_query_names(datasette, database)
    return {name: query for name, query in shipped_queries().items() if name not in defined}


def startup(datasette: "Datasette") -> Callable[[], Awaitable[None]] | None:
    """Datasette 1.0: the shipped queries the configuration does not define, stored for the
    catalog as the plugin's."""
    if not is_datasette_1():
        return None

    async def store_queries() -> None:
        database = catalog_name(datasette)
        if not database:
            return
        for name, query in shipped_queries().items():
            if await datasette.get_query(database, name) is not None:
                continue
            await datasette.add_query(
                database,
                name,
                query["sql"],
                title=query.get("title"),
                description=query.get("description"),
                description_html=query.get("description_html"),
                hide_sql=bool(query.get("hide_sql")),
                parameters=query.get("params"),
                source="plugin",
                replace=False,
            )

    return store_queries
