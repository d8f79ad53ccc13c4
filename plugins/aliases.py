"""Links to a paper made before its versions were merged keep working: the row URL of a merged
version's id (`/catalog/papers/<alias>`, and its `.json`) redirects to the paper it is now.

An alias is never a paper id (its row was merged away), so only row paths of an id that is
not a paper ever reach the table; a paper's own row page costs one indexed lookup more.
"""

import re
from urllib.parse import quote

from datasette import hookimpl

DATABASE = "catalog"
TABLE = "papers"
# paper ids are 16 hex digits (normalize.paper_id); anything else is no alias
ROW_PATH = re.compile(r"/(?P<alias>[0-9a-f]{16})(?P<format>\.json)?")
ALIAS_SQL = "select paper_id from paper_aliases where alias = :alias"
TABLE_SQL = "select 1 from sqlite_master where type = 'table' and name = 'paper_aliases'"


async def merged_into(datasette, alias):
    """The paper an alias now is, or None."""
    try:
        db = datasette.get_database(DATABASE)
    except KeyError:
        return None

    def look_up(connection):
        # both on one SQL thread: one hand-off for every paper page instead of two
        if not connection.execute(TABLE_SQL).fetchone():  # built before aliases existed
            return None
        found = connection.execute(ALIAS_SQL, {"alias": alias}).fetchone()
        return found[0] if found else None

    return await db.execute_fn(look_up)


def redirect_aliases(app, datasette):
    async def redirecting(scope, receive, send):
        if scope["type"] == "http":
            prefix = datasette.urls.table(DATABASE, TABLE)
            path = scope.get("path", "")
            match = path.startswith(prefix) and ROW_PATH.fullmatch(path[len(prefix) :])
            paper = match and await merged_into(datasette, match["alias"])
            if paper:
                location = f"{prefix}/{quote(paper)}{match['format'] or ''}"
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
                return
        await app(scope, receive, send)

    return redirecting


@hookimpl
def asgi_wrapper(datasette):
    return lambda app: redirect_aliases(app, datasette)
