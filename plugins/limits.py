"""Per-connection SQLite limits for a public SQL endpoint.

Datasette's time limit is a progress handler, checked between virtual-machine instructions, so a
single instruction that builds a huge value (`randomblob(5e8)`, `zeroblob(9e8)`) or loops inside
one call (`printf('%.*c', 2e9, 'x')`, `instr()` of two long strings) runs to its end however long
that takes. The limits below bound the work any one instruction can do, so the time limit holds.
On the read-only catalog an authorizer refuses writes, ATTACH, extension loading and pragma
writes even if a query gets past Datasette's SELECT-only check.
"""

import re
import sqlite3
import threading
from collections.abc import Awaitable, Callable
from typing import TYPE_CHECKING, Any

from datasette.views.base import DatasetteError

from loader.web.catalog_scope import in_catalog_scope, is_catalog
from loader.web.error_pages import error_page
from loader.web.time_limit import open_virtual_tables

if TYPE_CHECKING:
    from datasette.app import Datasette
    from datasette.utils.asgi import Request

# the longest abstract is a few KB; an O(n*m) function like instr() on two values of this
# size takes a fraction of a second (docs/security-figures.md), which bounds how far a single
# instruction can overrun the time limit
MAX_VALUE_BYTES = 250_000
CONNECTION_LIMITS = {
    sqlite3.SQLITE_LIMIT_LENGTH: MAX_VALUE_BYTES,
    sqlite3.SQLITE_LIMIT_SQL_LENGTH: 100_000,
    sqlite3.SQLITE_LIMIT_COLUMN: 200,
    sqlite3.SQLITE_LIMIT_EXPR_DEPTH: 250,
    sqlite3.SQLITE_LIMIT_COMPOUND_SELECT: 100,
    sqlite3.SQLITE_LIMIT_LIKE_PATTERN_LENGTH: 1_000,
    sqlite3.SQLITE_LIMIT_VARIABLE_NUMBER: 1_000,
    sqlite3.SQLITE_LIMIT_WORKER_THREADS: 0,
}
# process-wide backstop: SQLite's own allocations stay under this whatever a query does
HARD_HEAP_LIMIT_BYTES = 512 * 1024 * 1024

# %[flags][width][.precision][size]conversion, as SQLite's printf() reads it
PRINTF_SPEC = re.compile(r"%([-+ 0#!,]*)(\*|\d+)?(?:\.(\*|\d+))?(?:ll|l)?(.)", re.DOTALL)

# pragmas Datasette and the plugins read; with a value they would be writes
READ_PRAGMAS = {
    "compile_options",
    "data_version",
    "database_list",
    "encoding",
    "foreign_key_list",
    "freelist_count",
    "function_list",
    "index_info",
    "index_list",
    "index_xinfo",
    "page_count",
    "page_size",
    "schema_version",
    "table_info",
    "table_xinfo",
}
# settings a connection may change, harmless on a query-only catalog: Datasette 1.0 opens a
# sqlite-utils Database on a connection (its label column look-up), which sets this one
CONNECTION_PRAGMAS = {"recursive_triggers"}
# pragmas whose argument is a table or index name, not a new value
INTROSPECTION_PRAGMAS = {
    "foreign_key_list",
    "index_info",
    "index_list",
    "index_xinfo",
    "table_info",
    "table_xinfo",
}
DENIED_FUNCTIONS = {"load_extension", "fts3_tokenizer", "readfile", "writefile", "edit"}
# what a connection tells about itself rather than the catalog: every client's SQL on this
# thread's connection (sqlite_stmt), the file's page layout (dbstat) and the database file's
# absolute path (pragma_database_list). Reading them is a READ of that table; Datasette's own
# bare `PRAGMA database_list` reads no table and still works.
PRIVATE_TABLES = {"sqlite_stmt", "dbstat", "pragma_database_list"}
READ_ACTIONS = {sqlite3.SQLITE_SELECT, sqlite3.SQLITE_READ, sqlite3.SQLITE_RECURSIVE}
# SQLite reports an UPDATE of the schema table while it loads the schema for a read; a real
# schema write needs `pragma writable_schema`, which is refused
SCHEMA_TABLES = {"sqlite_master", "sqlite_temp_master"}

# what SQLite says when a limit above or the authorizer refuses a query; Datasette's table
# view lets these through as 500s, but they are the client's fault, not the server's
REFUSALS = (
    "string or blob too big",
    "not authorized",
    # the authorizer's refusal of a READ (PRIVATE_TABLES)
    "is prohibited",
    "too large",
    "too many",
    "too complex",
    "user-defined function raised exception",
)

helpers = threading.local()


def apply_limits(conn: sqlite3.Connection) -> None:
    for limit, value in CONNECTION_LIMITS.items():
        conn.setlimit(limit, value)


def plain_printf(format_string: Any, *args: Any) -> Any:
    """SQLite's own printf(), from a private in-memory connection of this thread."""
    connection = getattr(helpers, "connection", None)
    if connection is None:
        connection = helpers.connection = sqlite3.connect(":memory:", check_same_thread=False)
        apply_limits(connection)
    placeholders = ", ".join("?" * (len(args) + 1))
    return connection.execute(f"select printf({placeholders})", (format_string, *args)).fetchone()[
        0
    ]


def size_argument(value: Any) -> int:
    if isinstance(value, bool) or not isinstance(value, (int, float)):
        raise TypeError("printf() width and precision must be numbers")
    return int(value)


def bounded_printf(format_string: Any, *args: Any) -> Any:
    """printf() that refuses a width or precision above MAX_VALUE_BYTES.

    `%.*c` with a precision of 2e9 spins for seconds inside one instruction even when the
    result is refused for its length; no legitimate output is longer than the length limit.
    """
    if not isinstance(format_string, str):
        return plain_printf(format_string, *args)
    position = 0
    for spec in PRINTF_SPEC.finditer(format_string):
        _, width, precision, conversion = spec.groups()
        if conversion == "%":
            continue
        for size in (width, precision):
            if size == "*":
                if position >= len(args):
                    break
                size = size_argument(args[position])
                position += 1
            if size is not None and abs(int(size)) > MAX_VALUE_BYTES:
                raise ValueError(f"printf() width or precision above {MAX_VALUE_BYTES}")
        position += 1
    return plain_printf(format_string, *args)


def read_only_authorizer(
    action: int, name: str | None, detail: str | None, database: str | None, trigger: str | None
) -> int:
    if action == sqlite3.SQLITE_READ and (name or "").lower() in PRIVATE_TABLES:
        return sqlite3.SQLITE_DENY
    if action in READ_ACTIONS:
        return sqlite3.SQLITE_OK
    if action == sqlite3.SQLITE_UPDATE and name in SCHEMA_TABLES:
        return sqlite3.SQLITE_OK
    if action == sqlite3.SQLITE_FUNCTION:
        denied = (detail or "").lower() in DENIED_FUNCTIONS
        return sqlite3.SQLITE_DENY if denied else sqlite3.SQLITE_OK
    if action == sqlite3.SQLITE_PRAGMA:
        pragma = (name or "").lower()
        if pragma in READ_PRAGMAS and (detail is None or pragma in INTROSPECTION_PRAGMAS):
            return sqlite3.SQLITE_OK
        if pragma in CONNECTION_PRAGMAS:
            return sqlite3.SQLITE_OK
    return sqlite3.SQLITE_DENY


def is_read_only_file(datasette: "Datasette", database: str) -> bool:
    db = datasette.databases.get(database)
    return db is not None and not db.is_mutable and not db.is_memory


# no memory-mapped reads: a mapped page counts in the worker's resident memory once per
# connection that touched it, so one export of the whole catalog left each SQL thread's
# connection holding the whole file; read through SQLite's own page cache (bounded, per
# connection) it costs the same CPU (docs/serving.md#memory)
MMAP_BYTES = 0


def prepare_connection(conn: sqlite3.Connection, database: str, datasette: "Datasette") -> None:
    if not is_catalog(datasette, database):
        return
    # before the time limit can meet a table half-opened
    open_virtual_tables(conn)
    apply_limits(conn)
    conn.execute(f"pragma hard_heap_limit = {HARD_HEAP_LIMIT_BYTES}")
    for name in ("printf", "format"):
        conn.create_function(name, -1, bounded_printf, deterministic=True)
    if is_read_only_file(datasette, database):
        # before the authorizer, which refuses pragma writes
        conn.execute(f"pragma mmap_size = {MMAP_BYTES}")
        conn.execute("pragma query_only = 1")
        conn.set_authorizer(read_only_authorizer)


def handle_exception(
    datasette: "Datasette", request: "Request | None", exception: BaseException
) -> Callable[[], Awaitable[Any]] | None:
    if not isinstance(exception, sqlite3.DatabaseError):
        return None
    if request is None or not in_catalog_scope(datasette, request.path):
        return None
    message = str(exception)
    if not any(refusal in message for refusal in REFUSALS):
        return None
    refused = DatasetteError(f"Query refused: {message}", title="Query refused", status=400)
    # the site's error page for its HTML URLs, Datasette's own for .json (loader/web/error_pages.py)
    return error_page(datasette, request, refused)
