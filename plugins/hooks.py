"""The site's one Datasette plugin: each hook implemented once, calling the concern modules.

Datasette lists a plugin a registered module, so the distribution registers one (the package,
whose `__init__` registers each hook and hands it to the function of the same name here) and
every concern module is reached from the tables below; `tests/test_plugin_hooks.py` fails when a concern module's hook function is in
none of them. A concern function has the name of the hook it serves and takes any of that
hook's arguments (as pluggy would hand them); it returns None when the request or database is
not the catalog's.
"""

import functools
import inspect
from collections.abc import Awaitable, Callable, Iterable
from typing import TYPE_CHECKING, Any

from datasette.utils import await_me_maybe

from . import (
    aliases,
    assets,
    author_by_name,
    catalog_queries,
    charts,
    client_errors,
    csv_links,
    csv_stream,
    data_source,
    facets,
    limits,
    names,
    pages,
    paper_bibtex,
    papers_columns,
    private_paths,
    read_only,
    render_cells,
    request_limits,
    response_cap,
    search_guard,
    search_page,
    site_errors,
    sql_queue,
    stream_buffer,
    table_exports,
)

if TYPE_CHECKING:
    from datasette.app import Datasette
    from datasette.utils.asgi import Request

ASGIApp = Callable[..., Awaitable[None]]
Concern = Callable[..., Any]

# Innermost first: each wraps the ones before it. The request limits wrap everything, so a
# refused URL costs no other layer anything; the aliases' redirects come before any page work.
ASGI_WRAPPERS: tuple[Concern, ...] = (
    stream_buffer.asgi_wrapper,
    sql_queue.asgi_wrapper,
    search_guard.asgi_wrapper,
    response_cap.asgi_wrapper,
    read_only.asgi_wrapper,
    papers_columns.asgi_wrapper,
    client_errors.asgi_wrapper,
    author_by_name.asgi_wrapper,
    aliases.asgi_wrapper,
    request_limits.asgi_wrapper,
)
ROUTES: tuple[Concern, ...] = (
    search_page.register_routes,
    private_paths.register_routes,
    paper_bibtex.register_routes,
    pages.register_routes,
    csv_stream.register_routes,
    charts.register_routes,
    author_by_name.register_routes,
    table_exports.register_routes,
)
TEMPLATE_VARIABLES: tuple[Concern, ...] = (
    assets.extra_template_vars,
    csv_links.extra_template_vars,
    data_source.extra_template_vars,
    facets.extra_template_vars,
    table_exports.extra_template_vars,
)
CSS_URLS: tuple[Concern, ...] = (assets.extra_css_urls,)
JS_URLS: tuple[Concern, ...] = (assets.extra_js_urls,)
# the first answer wins, as Datasette reads handle_exception
EXCEPTION_HANDLERS: tuple[Concern, ...] = (
    response_cap.handle_exception,
    limits.handle_exception,
    client_errors.handle_exception,
    site_errors.handle_exception,
)
CONNECTION_SETUP: tuple[Concern, ...] = (
    response_cap.prepare_connection,
    names.prepare_connection,
    limits.prepare_connection,
)
JINJA_SETUP: tuple[Concern, ...] = (
    render_cells.prepare_jinja2_environment,
    paper_bibtex.prepare_jinja2_environment,
    csv_links.prepare_jinja2_environment,
)
STARTUP: tuple[Concern, ...] = (papers_columns.startup, facets.startup, catalog_queries.startup)
FACET_CLASSES: tuple[Concern, ...] = (facets.register_facet_classes,)
REQUEST_FILTERS: tuple[Concern, ...] = (facets.filters_from_request,)
CANNED_QUERIES: tuple[Concern, ...] = (catalog_queries.canned_queries,)

# Datasette 0.65's hooks that 1.0 no longer has (1.0 stores queries: catalog_queries.startup)
ONLY_IN_065 = frozenset({"canned_queries"})
# every table above, by the hook it serves (the test of every concern reads it)
CONCERNS: dict[str, tuple[Concern, ...]] = {
    "asgi_wrapper": ASGI_WRAPPERS,
    "register_routes": ROUTES,
    "extra_template_vars": TEMPLATE_VARIABLES,
    "extra_css_urls": CSS_URLS,
    "extra_js_urls": JS_URLS,
    "handle_exception": EXCEPTION_HANDLERS,
    "prepare_connection": CONNECTION_SETUP,
    "prepare_jinja2_environment": JINJA_SETUP,
    "startup": STARTUP,
    "register_facet_classes": FACET_CLASSES,
    "filters_from_request": REQUEST_FILTERS,
    "canned_queries": CANNED_QUERIES,
    "render_cell": (render_cells.render_cell,),
}


@functools.cache
def parameters(concern: Concern) -> tuple[str, ...]:
    return tuple(inspect.signature(concern).parameters)


def answers(concerns: Iterable[Concern], **arguments: Any) -> list[Any]:
    """Each concern's answer to the arguments it takes, None answers left out (as pluggy)."""
    found = []
    for concern in concerns:
        answer = concern(**{name: arguments[name] for name in parameters(concern)})
        if answer is not None:
            found.append(answer)
    return found


async def joined_lists(found: list[Any]) -> list[Any]:
    joined: list[Any] = []
    for answer in found:
        joined.extend(await await_me_maybe(answer) or [])
    return joined


def asgi_wrapper(datasette: "Datasette") -> Callable[[ASGIApp], ASGIApp]:
    wrappers = answers(ASGI_WRAPPERS, datasette=datasette)

    def wrap(app: ASGIApp) -> ASGIApp:
        for wrapper in wrappers:
            app = wrapper(app)
        return app

    return wrap


def register_routes(datasette: "Datasette") -> list[Any]:
    return [route for routes in answers(ROUTES, datasette=datasette) for route in routes]


def extra_template_vars(
    template: str | None,
    database: str | None,
    table: str | None,
    request: "Request | None",
    datasette: "Datasette",
) -> Callable[[], Awaitable[dict[str, Any]]] | None:
    found = answers(
        TEMPLATE_VARIABLES,
        template=template,
        database=database,
        table=table,
        request=request,
        datasette=datasette,
    )
    if not found:
        return None

    async def merged() -> dict[str, Any]:
        variables: dict[str, Any] = {}
        for answer in found:
            variables.update(await await_me_maybe(answer) or {})
        return variables

    return merged


def page_urls(
    concerns: tuple[Concern, ...],
    template: str | None,
    database: str | None,
    request: "Request | None",
    datasette: "Datasette",
) -> Callable[[], Awaitable[list[Any]]] | None:
    """The stylesheets or scripts the concerns add to a page, as one list."""
    found = answers(
        concerns, template=template, database=database, request=request, datasette=datasette
    )
    return functools.partial(joined_lists, found) if found else None


def extra_css_urls(
    template: str | None, database: str | None, request: "Request | None", datasette: "Datasette"
) -> Callable[[], Awaitable[list[Any]]] | None:
    return page_urls(CSS_URLS, template, database, request, datasette)


def extra_js_urls(
    template: str | None, database: str | None, request: "Request | None", datasette: "Datasette"
) -> Callable[[], Awaitable[list[Any]]] | None:
    return page_urls(JS_URLS, template, database, request, datasette)


def handle_exception(
    datasette: "Datasette", request: "Request", exception: BaseException
) -> Callable[[], Awaitable[Any]] | None:
    found = answers(EXCEPTION_HANDLERS, datasette=datasette, request=request, exception=exception)
    if not found:
        return None

    async def first_response() -> Any:
        for answer in found:
            response = await await_me_maybe(answer)
            if response is not None:
                return response
        return None

    return first_response


def prepare_connection(conn: Any, database: str, datasette: "Datasette") -> None:
    answers(CONNECTION_SETUP, conn=conn, database=database, datasette=datasette)


def prepare_jinja2_environment(env: Any, datasette: "Datasette") -> None:
    answers(JINJA_SETUP, env=env, datasette=datasette)


def startup(datasette: "Datasette") -> Callable[[], Awaitable[None]]:
    async def start() -> None:
        for answer in answers(STARTUP, datasette=datasette):
            await await_me_maybe(answer)

    return start


def register_facet_classes() -> list[Any]:
    return [facet for classes in answers(FACET_CLASSES) for facet in classes]


def filters_from_request(
    request: "Request", database: str, table: str, datasette: "Datasette"
) -> Any:
    found = answers(
        REQUEST_FILTERS, request=request, database=database, table=table, datasette=datasette
    )
    return found[0] if found else None


def canned_queries(datasette: "Datasette", database: str) -> dict[str, Any] | None:
    found = answers(CANNED_QUERIES, datasette=datasette, database=database)
    return {name: query for queries in found for name, query in queries.items()} or None


def render_cell(
    row: Any, value: Any, column: str, table: str | None, database: str, datasette: "Datasette"
) -> Any:
    # every cell of every page: the one concern called directly
    return render_cells.render_cell(row, value, column, table, database, datasette)
