"""The papers table shows each paper's text once, and no column that is empty everywhere.

`abstract_plain` (storage) and `abstract_text` (what search indexes) repeat the abstract; a
catalog built from pages without titles has `title` and `url` empty in every row, one built
without public dumps `keywords` and `categories`. The HTML
table and its CSV leave those columns out unless the URL chooses columns itself (`_col`,
`_nocol`), so `?_col=abstract_text` still reaches them, and the JSON API keeps every column.
The request is rewritten inside the server: the address the reader sees does not change.
"""

from urllib.parse import urlencode

from datasette import hookimpl

from loader.web.catalog_scope import catalog_database, catalog_name, serves_catalog

TABLE = "papers"
ALWAYS_HIDDEN = ("abstract_plain", "abstract_text")
# columns some catalogs never fill; checked once per server (the catalog is immutable)
MAYBE_EMPTY = (
    "title",
    "url",
    "venue",
    "year",
    "status",
    "track",
    "area",
    "track_id",
    "keywords",
    "categories",
)


class HiddenColumns:
    def __init__(self, datasette):
        self.datasette = datasette
        self.columns = None

    async def get(self):
        if self.columns is None:
            db = catalog_database(self.datasette)
            present = set(await db.table_columns("papers"))
            empty = []
            for column in MAYBE_EMPTY:
                if column in present:
                    sql = f"select exists(select 1 from papers where [{column}] is not null)"
                    if not (await db.execute(sql)).rows[0][0]:
                        empty.append(column)
            self.columns = [c for c in ALWAYS_HIDDEN if c in present] + empty
        return self.columns


def chooses_columns(query_string):
    """The URL chooses columns itself, or sorts by one (a sort column must stay shown)."""
    names = {part.split("=", 1)[0] for part in query_string.split("&") if part}
    return bool(names & {"_col", "_nocol", "_sort", "_sort_desc"})


def table_paths(datasette):
    """The papers table's HTML and CSV paths, or none when the catalog is not served."""
    if not serves_catalog(datasette):
        return ()
    table = datasette.urls.table(catalog_name(datasette), TABLE)
    return (table, datasette.urls.table(catalog_name(datasette), TABLE, format="csv"))


def hide_columns(app, datasette):
    hidden = HiddenColumns(datasette)

    async def wrapped(scope, receive, send):
        if (
            scope["type"] == "http"
            and scope["path"] in table_paths(datasette)
            and not chooses_columns(scope.get("query_string", b"").decode("latin-1"))
        ):
            extra = urlencode([("_nocol", column) for column in await hidden.get()])
            if extra:
                query = scope.get("query_string", b"")
                scope = dict(scope, query_string=(query + b"&" if query else b"") + extra.encode())
        await app(scope, receive, send)

    return wrapped


@hookimpl
def asgi_wrapper(datasette):
    return lambda app: hide_columns(app, datasette)
