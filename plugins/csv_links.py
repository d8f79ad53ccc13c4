"""Every CSV link on table and query pages downloads all rows in one stream, as a file.

Datasette 0.65 links CSV with `_size=max` only, one page of rows. `_size=max&_stream=on&_dl=1`
goes on every link, replacing any `_size`/`_stream` the page itself was given: the catalog's
CSV view (plugins/csv_stream.py) streams every row in its largest pages and names the file.
"""

from collections.abc import Awaitable, Callable
from typing import TYPE_CHECKING, Any
from urllib.parse import parse_qsl, urlencode

from datasette.utils import path_with_format
from datasette.utils.asgi import Request

from loader.web.catalog_scope import is_catalog

if TYPE_CHECKING:
    from datasette.app import Datasette

# page-only parameters: they mean nothing to (or break) a full CSV export
PAGE_ONLY = {"_size", "_stream", "_dl", "_next", "_labels", "_facet", "_facet_array", "_facet_size"}
# _dl=1: the answer has Content-Disposition: attachment, so the link downloads
STREAM_ALL = [("_size", "max"), ("_stream", "on"), ("_dl", "1")]


def export_pairs(query_string: str, labels: bool) -> list[tuple[str, str]]:
    pairs = [
        (key, value)
        for key, value in parse_qsl(query_string, keep_blank_values=True)
        if key not in PAGE_ONLY
    ]
    return pairs + STREAM_ALL + ([("_labels", "on")] if labels else [])


def csv_url(datasette: "Datasette", request: Request, labels: bool) -> str:
    path = path_with_format(path=request.path, format="csv")
    separator = "&" if "?" in path else "?"
    query = urlencode(export_pairs(request.query_string, labels))
    return datasette.urls.path(f"{path}{separator}{query}")


def stream_all(url: str) -> str:
    """Any CSV URL of ours, with `_size=max&_stream=on` in place of what it had."""
    path, _, query = url.partition("?")
    pairs = [(k, v) for k, v in parse_qsl(query, keep_blank_values=True) if k not in PAGE_ONLY]
    return f"{path}?{urlencode(pairs + STREAM_ALL)}"


def prepare_jinja2_environment(env: Any) -> None:
    env.filters["stream_all"] = stream_all


def extra_template_vars(
    template: str | None,
    database: str | None,
    table: str | None,
    request: Request | None,
    datasette: "Datasette",
) -> Callable[[], Awaitable[dict[str, Any]]] | None:
    if (
        request is None
        or not (template or "").startswith(("table", "query"))
        or not is_catalog(datasette, database)
    ):
        return None

    async def export_links() -> dict[str, Any]:
        labels = False
        if table and (template or "").startswith("table"):
            foreign_keys = await datasette.get_database(database).foreign_keys_for_table(table)
            labels = bool(foreign_keys)
        url = csv_url(datasette, request, labels)
        return {
            "url_csv": url,
            "url_csv_path": url.split("?")[0],
            "url_csv_hidden_args": export_pairs(request.query_string, False),
        }

    return export_links
