"""The paper catalog's Datasette plugin, installed as `paper_catalog_site.plugins`.

Registered through the one `datasette` entry point of the paper-catalog distribution
(pyproject.toml): this package, so Datasette finds `templates/` and `static/` as the plugin's
own (static files under /-/static-plugins/paper-catalog/) and lists one plugin. Its hooks are
those of `hooks.py`, each implemented once and calling the concern modules beside it. Each
acts on the catalog only (loader/web/catalog_scope.py says which database that is, by what it
holds) and leaves any other database, or a Datasette without the catalog, as Datasette serves
it; docs/datasette.md says what the plugin changes and how.
"""

from .hooks import (
    asgi_wrapper,
    canned_queries,
    extra_css_urls,
    extra_js_urls,
    extra_template_vars,
    filters_from_request,
    handle_exception,
    prepare_connection,
    prepare_jinja2_environment,
    register_facet_classes,
    register_routes,
    render_cell,
    startup,
)

__all__ = [
    "asgi_wrapper",
    "canned_queries",
    "extra_css_urls",
    "extra_js_urls",
    "extra_template_vars",
    "filters_from_request",
    "handle_exception",
    "prepare_connection",
    "prepare_jinja2_environment",
    "register_facet_classes",
    "register_routes",
    "render_cell",
    "startup",
]
