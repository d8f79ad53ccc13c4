"""The catalog's stylesheet, served by the site itself (no CDN) and linked from its pages.

It is static/catalog.css of this package, served by Datasette as a plugin's own static file
(/-/static-plugins/paper-catalog/catalog.css), and linked only from the catalog's pages.
"""

from datasette import hookimpl

from loader.web.catalog_scope import is_catalog_page

# the distribution's name: Datasette serves its plugins' static/ under it
DISTRIBUTION = "paper-catalog"
STYLESHEET = "catalog.css"


def static_url(datasette, name):
    return datasette.urls.static_plugins(DISTRIBUTION, name)


@hookimpl
def extra_css_urls(database, request, datasette):
    if not is_catalog_page(datasette, database, request):
        return None
    return [static_url(datasette, STYLESHEET)]
