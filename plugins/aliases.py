"""Links to a paper made before its versions were merged keep working: the row URL of a merged
version's id (`/catalog/papers/<alias>`, and its `.json`) redirects to the paper it is now.

An alias is never a paper id (its row was merged away): a row path that is an alias is
answered with 404 (the HTML page by plugins/pages.py, the `.json` by Datasette). So the alias
table is read only then, and the 404 is replaced by the redirect; a paper's own page costs
nothing more (it used to cost a look-up and a hand-off to an SQL thread on every paper page).
"""

import re
import sqlite3
from collections.abc import Callable
from typing import TYPE_CHECKING
from urllib.parse import quote

from loader.web.catalog_scope import catalog_name, serves_catalog

if TYPE_CHECKING:
    from datasette.app import Datasette

    from loader.web.asgi_types import ASGIApp, Message, Receive, Scope, Send

TABLE = "papers"
# paper ids are 16 hex digits (normalize.paper_id); anything else is no alias
ROW_PATH = re.compile(r"/(?P<alias>[0-9a-f]{16})(?P<format>\.json)?")
ALIAS_SQL = "select paper_id from paper_aliases where alias = :alias"
TABLE_SQL = "select 1 from sqlite_master where type = 'table' and name = 'paper_aliases'"


async def merged_into(datasette: "Datasette", alias: str) -> str | None:
    """The paper an alias now is, or None."""
    db = datasette.databases.get(catalog_name(datasette))
    if db is None:
        return None

    def look_up(connection: sqlite3.Connection) -> str | None:
        # both on one SQL thread: one hand-off for every paper page instead of two
        if not connection.execute(TABLE_SQL).fetchone():  # built before aliases existed
            return None
        found = connection.execute(ALIAS_SQL, {"alias": alias}).fetchone()
        return found[0] if found else None

    return await db.execute_fn(look_up)


def redirect_aliases(app: "ASGIApp", datasette: "Datasette") -> "ASGIApp":
    async def redirecting(scope: "Scope", receive: "Receive", send: "Send") -> None:
        match = None
        if scope["type"] == "http" and serves_catalog(datasette):
            prefix = datasette.urls.table(catalog_name(datasette), TABLE)
            path = scope.get("path", "")
            match = path.startswith(prefix) and ROW_PATH.fullmatch(path[len(prefix) :])
        if not match:
            await app(scope, receive, send)
            return
        redirected = False

        async def redirect_not_found(message: "Message") -> None:
            nonlocal redirected
            if redirected:
                return  # the 404's body: the redirect has its own
            if message["type"] == "http.response.start" and message["status"] == 404:
                paper = await merged_into(datasette, match["alias"])
                if paper:
                    redirected = True
                    await send_redirect(send, scope, f"{prefix}/{quote(paper)}", match)
                    return
            await send(message)

        await app(scope, receive, redirect_not_found)

    return redirecting


async def send_redirect(
    send: "Send", scope: "Scope", paper_path: str, match: "re.Match[str]"
) -> None:
    location = paper_path + (match["format"] or "")
    if scope.get("query_string"):
        location += "?" + scope["query_string"].decode("latin-1")
    await send(
        {
            "type": "http.response.start",
            "status": 302,
            "headers": [
                (b"location", location.encode("latin-1")),
                (b"content-type", b"text/plain; charset=utf-8"),
            ],
        }
    )
    await send({"type": "http.response.body", "body": b"Merged into another paper.\n"})


def asgi_wrapper(datasette: "Datasette") -> Callable[["ASGIApp"], "ASGIApp"]:
    return lambda app: redirect_aliases(app, datasette)
