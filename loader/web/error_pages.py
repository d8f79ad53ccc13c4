"""Error pages: the site's own for its URLs, Datasette's own everywhere else.

A page of the site that fails (an unknown URL, a paper that is not there, a refused request)
answers with `site_error.html`: the site's header with its search box, a way home, the page's
language, and the error's status. A `.json` URL gets Datasette's error object, and any other
database's URL Datasette's own page, as a stock Datasette gives them.

Datasette has no public helper that renders its error page; its default `handle_exception`
plugin (`datasette.handle_exception`) does, so the site calls it for those (docs/datasette.md
lists this as a missing hook). It is imported when first called: importing it before Datasette
has loaded its plugins would make Datasette register it half-imported, without its hook.
"""

import logging
from collections.abc import Awaitable, Callable
from dataclasses import dataclass
from typing import TYPE_CHECKING, Any

from markupsafe import Markup

from loader.web.catalog_scope import in_catalog_scope

if TYPE_CHECKING:  # datasette.app loads the installed plugins: never as a plugin loads
    from datasette.app import Datasette
    from datasette.utils.asgi import Request

TEMPLATE = "site_error.html"
TITLES = {400: "Bad request", 403: "Forbidden", 404: "Page not found", 405: "Method not allowed"}
LOG = logging.getLogger(__name__)


@dataclass(frozen=True)
class ErrorParts:
    """What an error page says: its status, heading and message."""

    status: int
    title: str
    message: str | Markup


def error_parts(error: BaseException) -> ErrorParts:
    """The status, title and message of an exception, read as Datasette reads them: its
    request errors (Base400) and DatasetteError carry a status, anything else is a 500."""
    from datasette.utils.asgi import Base400
    from datasette.views.base import DatasetteError

    if isinstance(error, Base400):
        status = error.status
        message: str | Markup = str(error.args[0]) if error.args else ""
        title = None
    elif isinstance(error, DatasetteError):
        status = error.status
        message = Markup(error.message) if error.message_is_html else str(error.message)
        title = error.title
    else:
        status, message, title = 500, str(error), None
    return ErrorParts(status, title or TITLES.get(status, "Error"), message)


def wants_site_page(datasette: "Datasette", request: "Request") -> bool:
    """An HTML page of the site: a URL of the catalog's site that is not a `.json` one."""
    return not request.path.endswith(".json") and in_catalog_scope(datasette, request.path)


def site_error_page(
    datasette: "Datasette", request: "Request", error: BaseException
) -> Callable[[], Awaitable[Any]]:
    """The site's error page for `error`: a callable whose awaited result is the Response.
    A page that cannot be rendered (the catalog unreadable, say) falls back to Datasette's."""
    from datasette.utils.asgi import Request, Response

    parts = error_parts(error)
    if "csrftoken" not in request.scope:
        # a refusal of the site's ASGI wrappers comes before Datasette's CSRF layer has set
        # the token render_template reads; the page has no form that posts
        request = Request(dict(request.scope, csrftoken=lambda: ""), request.receive)

    async def page() -> Any:
        if parts.status >= 500:
            LOG.error("%s %s", request.method, request.path, exc_info=error)
        context = {
            "error": parts.message,
            "status": parts.status,
            "title": parts.title,
            "error_page": True,
        }
        try:
            html = await datasette.render_template(TEMPLATE, context, request=request)
        except Exception:
            LOG.exception("the site's error page failed; Datasette's own instead")
            return await datasette_error_page(datasette, request, error)()
        return Response.html(html, status=parts.status)

    return page


def datasette_error_page(
    datasette: "Datasette", request: "Request", error: BaseException
) -> Callable[[], Awaitable[Any]]:
    """What Datasette's default handle_exception answers for `error`: a callable whose
    awaited result is the Response (the page or JSON, with the error's status)."""
    from datasette import handle_exception as default_exceptions

    answer: Callable[[], Awaitable[Any]] = default_exceptions.handle_exception(
        datasette, request, error
    )
    return answer


def error_page(
    datasette: "Datasette", request: "Request", error: BaseException
) -> Callable[[], Awaitable[Any]]:
    """The error page a request gets: the site's for an HTML URL of the site, else
    Datasette's own (its JSON object for a `.json` URL)."""
    if wants_site_page(datasette, request):
        return site_error_page(datasette, request, error)
    return datasette_error_page(datasette, request, error)
