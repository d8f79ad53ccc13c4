"""The catalog's stylesheet, served by the site itself (no CDN) and linked from every page."""

from datasette import Response, hookimpl

from loader.serve.site_files import STATIC_DIR

STYLESHEET = STATIC_DIR / "catalog.css"
STYLESHEET_PATH = "/-/catalog.css"


async def serve_stylesheet():
    return Response(
        STYLESHEET.read_text(encoding="utf-8"),
        content_type="text/css; charset=utf-8",
        headers={"cache-control": "max-age=3600"},
    )


@hookimpl
def register_routes():
    return [(r"^/-/catalog\.css$", serve_stylesheet)]


@hookimpl
def extra_css_urls(datasette):
    return [datasette.urls.path(STYLESHEET_PATH)]
