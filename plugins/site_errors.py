"""Every error of the site's own URLs on the site's own error page.

A URL of the catalog's site that fails, whatever failed (an unknown path, a table or paper that
is not there, a 403, an error of the server), answers with the site's page: its language, its
header with the search box, a way home (loader/web/error_pages.py). Registered after the
concerns that turn a particular error into a refusal of their own, which wins; a `.json` URL,
and every URL of another database, keeps Datasette's own error.
"""

from collections.abc import Awaitable, Callable
from typing import TYPE_CHECKING, Any

from loader.web.error_pages import site_error_page, wants_site_page

if TYPE_CHECKING:
    from datasette.app import Datasette
    from datasette.utils.asgi import Request


def handle_exception(
    datasette: "Datasette", request: "Request | None", exception: BaseException
) -> Callable[[], Awaitable[Any]] | None:
    if request is None or not wants_site_page(datasette, request):
        return None
    return site_error_page(datasette, request, exception)
