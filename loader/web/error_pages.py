"""A refusal of the site's, answered as Datasette's own error page.

Datasette has no public helper that renders an error page; its default `handle_exception`
plugin (`datasette.handle_exception`) does, so the site calls it (docs/datasette.md lists this
as a missing hook). It is imported when first called: importing it before Datasette has loaded
its plugins would make Datasette register it half-imported, without its hook.
"""

from collections.abc import Awaitable, Callable
from typing import TYPE_CHECKING, Any

if TYPE_CHECKING:  # datasette.app loads the installed plugins: never as a plugin loads
    from datasette.app import Datasette
    from datasette.utils.asgi import Request


def default_error_page(
    datasette: "Datasette", request: "Request", error: BaseException
) -> Callable[[], Awaitable[Any]]:
    """What Datasette's default handle_exception answers for `error`: a callable whose
    awaited result is the Response (the page or JSON, with the error's status)."""
    from datasette import handle_exception as default_exceptions

    answer: Callable[[], Awaitable[Any]] = default_exceptions.handle_exception(
        datasette, request, error
    )
    return answer
