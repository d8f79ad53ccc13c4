"""The paper catalog's Datasette plugin, installed as `paper_catalog_site.plugins`.

Registered through the one `datasette` entry point of the paper-catalog distribution
(pyproject.toml): this package, so Datasette finds `templates/` and `static/` as the plugin's
own (static files under /-/static-plugins/paper-catalog/) and lists one plugin. Each hook is
implemented once in `hooks.py`, which calls the concern modules beside it, and acts on the
catalog only (loader/web/catalog_scope.py says which database that is, by what it holds): any
other database, or a Datasette without the catalog, is served as stock Datasette serves it.
docs/datasette.md says what the plugin changes and how.

The hooks below only hand over to `hooks.py`, imported when first called: Datasette may
register this package while it is still being imported (importing a concern module first loads
Datasette's plugins), and then finds every hook already defined.
"""

from types import ModuleType
from typing import Any

from datasette import hookimpl


def implementation() -> ModuleType:
    from . import hooks

    return hooks


@hookimpl
def asgi_wrapper(datasette: Any) -> Any:
    return implementation().asgi_wrapper(datasette)


@hookimpl
def register_routes(datasette: Any) -> Any:
    return implementation().register_routes(datasette)


@hookimpl
def extra_template_vars(
    template: Any, database: Any, table: Any, request: Any, datasette: Any
) -> Any:
    return implementation().extra_template_vars(template, database, table, request, datasette)


@hookimpl
def extra_css_urls(template: Any, database: Any, request: Any, datasette: Any) -> Any:
    return implementation().extra_css_urls(template, database, request, datasette)


@hookimpl
def extra_js_urls(template: Any, database: Any, request: Any, datasette: Any) -> Any:
    return implementation().extra_js_urls(template, database, request, datasette)


@hookimpl
def handle_exception(datasette: Any, request: Any, exception: Any) -> Any:
    return implementation().handle_exception(datasette, request, exception)


@hookimpl
def prepare_connection(conn: Any, database: Any, datasette: Any) -> None:
    implementation().prepare_connection(conn, database, datasette)


@hookimpl
def prepare_jinja2_environment(env: Any, datasette: Any) -> None:
    implementation().prepare_jinja2_environment(env, datasette)


@hookimpl
def startup(datasette: Any) -> Any:
    return implementation().startup(datasette)


@hookimpl
def register_facet_classes() -> Any:
    return implementation().register_facet_classes()


@hookimpl
def filters_from_request(request: Any, database: Any, table: Any, datasette: Any) -> Any:
    return implementation().filters_from_request(request, database, table, datasette)


@hookimpl
def canned_queries(datasette: Any, database: Any) -> Any:
    return implementation().canned_queries(datasette, database)


@hookimpl
def render_cell(
    row: Any, value: Any, column: Any, table: Any, database: Any, datasette: Any
) -> Any:
    return implementation().render_cell(row, value, column, table, database, datasette)
