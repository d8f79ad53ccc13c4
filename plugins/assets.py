"""The catalog's stylesheet and script, served by the site itself (no CDN) and linked from its
pages; and the variable that tells our blocks of Datasette's templates a page is the catalog's.

Both are static/ files of this package, served by Datasette as a plugin's own static files
(/-/static-plugins/paper-catalog/...), and linked only from the catalog's pages: catalog.css
from all of them, catalog-pages.js from Datasette's own pages of the catalog (tables, rows, SQL,
canned queries, the database, its JSON and error pages), for what their templates have no block for (a language, labels
on the filter form and the SQL editor, headings in order; see the script).
"""

import re
from typing import TYPE_CHECKING, Any

from loader.web.catalog_scope import is_catalog_page

if TYPE_CHECKING:
    from datasette.app import Datasette
    from datasette.utils.asgi import Request

# the distribution's name: Datasette serves its plugins' static/ under it
DISTRIBUTION = "paper-catalog"
STYLESHEET = "catalog.css"
SCRIPT = "catalog-pages.js"
# Datasette's page templates and their documented per-database and per-table variants
# (table-<db>-<table>.html): the pages the script is for; and its JSON (/-/metadata) and
# error pages
DATASETTE_PAGES = re.compile(r"((table|row|query|database)(-.+)?|show_json|error)\.html")
# the variable our blocks of Datasette's templates (templates/table.html ...) act on
PAGE_VARIABLE = "paper_catalog_page"


def static_url(datasette: "Datasette", name: str) -> str:
    return datasette.urls.static_plugins(DISTRIBUTION, name)


def extra_css_urls(
    database: str | None, request: "Request | None", datasette: "Datasette"
) -> list[str] | None:
    if not is_catalog_page(datasette, database, request):
        return None
    return [static_url(datasette, STYLESHEET)]


def extra_js_urls(
    template: str | None, database: str | None, request: "Request | None", datasette: "Datasette"
) -> list[dict[str, Any]] | None:
    if not (
        is_catalog_page(datasette, database, request) and DATASETTE_PAGES.fullmatch(template or "")
    ):
        return None
    # a module: run once the page is parsed, before it is shown as loaded
    return [{"url": static_url(datasette, SCRIPT), "module": True}]


def extra_template_vars(
    database: str | None, request: "Request | None", datasette: "Datasette"
) -> dict[str, bool]:
    return {PAGE_VARIABLE: is_catalog_page(datasette, database, request)}
