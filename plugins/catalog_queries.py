"""The catalog's canned queries come with the plugin, so a catalog served by plain
`datasette catalog.db` (no `--metadata`) has the queries its pages run (the author page's
`papers_by_author`, the paper page's `related_papers`, ...), not a 500.

They are the queries of the metadata.yml shipped in this distribution (`paper_catalog_site`),
offered for the catalog only; a query the served metadata defines under the same name is that
metadata's, so a host can still change one.
"""

import functools
from importlib import resources
from typing import TYPE_CHECKING, Any

import yaml

from loader.web.catalog_scope import DEFAULT_DATABASE, is_catalog

if TYPE_CHECKING:
    from datasette.app import Datasette

PACKAGE = "paper_catalog_site"
METADATA_FILE = "metadata.yml"


@functools.cache
def shipped_queries() -> dict[str, dict[str, Any]]:
    """The canned queries of the catalog in the metadata.yml this distribution ships."""
    text = resources.files(PACKAGE).joinpath(METADATA_FILE).read_text(encoding="utf-8")
    metadata = yaml.safe_load(text) or {}
    database = (metadata.get("databases") or {}).get(DEFAULT_DATABASE) or {}
    return dict(database.get("queries") or {})


def served_query_names(datasette: "Datasette", database: str) -> set[str]:
    """The names of the queries the served metadata (or, in Datasette 1.0, configuration)
    already gives this database."""
    names: set[str] = set()
    config = getattr(datasette, "config", None) or {}
    for source in (datasette.metadata(), config):
        queries = ((source or {}).get("databases") or {}).get(database, {}).get("queries")
        names.update(queries or {})
    return names


def canned_queries(datasette: "Datasette", database: str) -> dict[str, dict[str, Any]] | None:
    """The catalog's queries that the served metadata does not define itself."""
    if not is_catalog(datasette, database):
        return None
    defined = served_query_names(datasette, database)
    return {name: query for name, query in shipped_queries().items() if name not in defined}
