"""The site as one ASGI app: Datasette on the immutable catalog with our metadata, plugins,
templates and settings, behind the HTTP wrappers a read-only catalog can afford.

Every worker process builds the same app from a `Site` (one build of the catalog, the site's
files, a shared signing secret), so the workers are identical read-only replicas. Outside in:
the build ETag (a matching If-None-Match costs nothing), the response cache (a repeated GET costs
a dictionary look-up), gzip, then Datasette.
"""

import hashlib
import json
import os
from dataclasses import asdict, dataclass
from pathlib import Path

from asgi_gzip import GZipMiddleware
from datasette.app import Datasette
from datasette.database import Database
from datasette.plugins import pm
from datasette.utils import parse_metadata
from datasette.utils.asgi import Request
from datasette.version import __version__ as datasette_version

from loader.serve.etag import BuildETag
from loader.serve.response_cache import ResponseCache
from loader.serve.settings import SETTINGS
from loader.web.index_only import index_only

DATABASE_NAME = "catalog"
# level 6 compresses HTML and JSON almost as well as 9 at a third of the CPU
GZIP_LEVEL = 6
GZIP_MINIMUM_BYTES = 500
DEFAULT_CACHE_BYTES = 32 * 1024 * 1024
ENVIRONMENT_VARIABLE = "PAPER_CATALOG_SITE"


@dataclass
class Site:
    """What a worker serves. `build_id` names the catalog build; `secret` signs cookies and must
    be the same in every worker, or a token made by one is refused by another."""

    db: str
    inspect_file: str | None
    metadata: str
    plugins_dir: str
    build_id: str
    secret: str
    cache_bytes: int = DEFAULT_CACHE_BYTES

    ENVIRONMENT_VARIABLE = ENVIRONMENT_VARIABLE

    def to_environment(self):
        return json.dumps(asdict(self))

    @classmethod
    def from_environment(cls):
        return cls(**json.loads(os.environ[ENVIRONMENT_VARIABLE]))


def site_files(metadata, plugins_dir):
    """Where metadata.yml, the plugin modules and the templates are: as `serve` was given them
    (by default loader/serve/site_files.py's, from a checkout or an installed wheel alike), with the
    templates beside the plugins."""
    plugins = Path(plugins_dir)
    templates = plugins / "templates"
    return Path(metadata), plugins, templates if templates.is_dir() else None


def site_fingerprint(site):
    """The build and the site's own files: a new deploy of the code changes every ETag too."""
    metadata, plugins, templates = site_files(site.metadata, site.plugins_dir)
    digest = hashlib.sha256(datasette_version.encode())
    files = [metadata, *sorted(plugins.rglob("*"))]
    if templates is not None and not templates.is_relative_to(plugins):
        files += sorted(templates.rglob("*"))
    for path in files:
        if path.is_file() and "__pycache__" not in path.parts:
            digest.update(str(path.relative_to(path.anchor)).encode())
            digest.update(path.read_bytes())
    return f"{site.build_id}-{digest.hexdigest()[:12]}"


def load_inspect_data(inspect_file):
    """Inspect data keyed by the served name, whatever the file was called when inspected."""
    if inspect_file is None:
        return None
    data = json.loads(Path(inspect_file).read_text())
    return {DATABASE_NAME: next(iter(data.values()))} if data else None


def create_datasette(site):
    metadata, plugins, templates = site_files(site.metadata, site.plugins_dir)
    datasette = Datasette(
        immutables=[site.db],
        inspect_data=load_inspect_data(site.inspect_file),
        metadata=parse_metadata(metadata.read_text()),
        plugins_dir=str(plugins),
        template_dir=str(templates) if templates else None,
        settings=SETTINGS,
        secret=site.secret,
    )
    name = next(n for n, db in datasette.databases.items() if db.path == site.db)
    if name != DATABASE_NAME:
        # URLs, metadata and plugins all say `catalog`, whatever the file is called
        datasette.remove_database(name)
        datasette.add_database(Database(datasette, site.db, is_mutable=False), DATABASE_NAME)
    return datasette


def refresh_schemas_once(datasette):
    """Datasette reads every database's schema version before every request (three SQL-thread
    hand-offs, ~0.5 ms) to notice a changed schema. The served build never changes (a new
    build starts new workers), so once its schema is read it stays read."""
    refresh = datasette.refresh_schemas
    refreshed = False

    async def refresh_once():
        nonlocal refreshed
        if not refreshed:
            await refresh()
            refreshed = True

    datasette.refresh_schemas = refresh_once


# what a Database answers about its schema with a str, bool or None: fixed for a served build
SCHEMA_LOOKUPS = ("table_exists", "get_table_definition", "get_view_definition", "fts_table")
# ... and with a list (of names, column tuples or foreign-key dicts): each caller gets its copy
SCHEMA_LIST_LOOKUPS = (
    "table_columns",
    "table_column_details",
    "primary_keys",
    "foreign_keys_for_table",
)
# the statement Datasette's permission_allowed() runs for each table permission check (two or
# three a page) to spell the table's name as SQLite does
NAME_SQL = (
    "select name from sqlite_master where type in ('table', 'view') and name = ? collate nocase"
)
MAX_REMEMBERED = 256


def copied(answer):
    """A list answer as a new list, its dicts new dicts (tuples and strings never change)."""
    return [dict(item) if isinstance(item, dict) else item for item in answer]


def copied_foreign_keys(answer):
    """get_all_foreign_keys()'s {table: {"incoming": [dict], "outgoing": [dict]}}, new."""
    return {
        table: {way: copied(keys) for way, keys in ways.items()} for table, ways in answer.items()
    }


def remembering(look_up, key_of, copy=None):
    """look_up() with its answers kept by key_of(arguments), given out through copy(). Names
    come from URLs: past a few hundred answers, asking again costs less than the memory (None:
    not kept at all)."""
    answers = {}

    async def remembered(*args, **kwargs):
        key = key_of(args, kwargs)
        if key is not None and key in answers:
            return answers[key] if copy is None else copy(answers[key])
        answer = await look_up(*args, **kwargs)
        if key is not None and len(answers) < MAX_REMEMBERED:
            answers[key] = answer if copy is None else copy(answer)
        return answer

    remembered.answers = answers
    return remembered


def arguments_key(args, kwargs):
    return args, tuple(sorted(kwargs.items()))


def name_statement_key(args, kwargs):
    sql, params = (list(args) + [kwargs.get("params")])[:2]
    if sql == NAME_SQL and not set(kwargs) - {"params"} and isinstance(params, tuple | list):
        return tuple(params)
    return None


def remember_schema_lookups(db):
    """A table page asks SQLite whether `papers` is a view, a table, for its definition, its
    columns, keys and foreign keys and, for each permission check, for its name: ~18 SQL-thread
    hand-offs on every request with the same answers. The served file never changes, so each
    answer is kept (bool, str, None and the name statement's Results, only read, as they are;
    lists as copies)."""
    for name in SCHEMA_LOOKUPS:
        setattr(db, name, remembering(getattr(db, name), arguments_key))
    for name in SCHEMA_LIST_LOOKUPS:
        setattr(db, name, remembering(getattr(db, name), arguments_key, copied))
    # every paper and author page: PRAGMA foreign_key_list of each table
    db.get_all_foreign_keys = remembering(
        db.get_all_foreign_keys, arguments_key, copied_foreign_keys
    )
    db.execute = remembering(db.execute, name_statement_key)


def count_searches_from_the_index(db):
    """A plain search's count from papers_fts alone (loader/web/index_only.py)."""
    execute = db.execute

    async def executed(sql, *args, **kwargs):
        plain = isinstance(sql, str) and index_only(sql)
        return await execute(plain or sql, *args, **kwargs)

    db.execute = executed


def remember_request_args():
    """Datasette's Request.args parses the query string on every read: ~56 parses of the same
    string for one table page (~1 ms). The parsed arguments are kept on the request while its
    query string stays the same object (a wrapper that changes it makes a new scope anyway)."""
    parse = Request.args.fget
    if getattr(parse, "kept", False):
        return

    def args(request):
        query = request.scope.get("query_string")
        kept = request.__dict__.get("_paper_catalog_args")
        if kept is None or kept[0] is not query:
            kept = request.__dict__["_paper_catalog_args"] = (query, parse(request))
        return kept[1]

    args.kept = True
    args.parse = parse
    Request.args = property(args)


def remember_table_permissions(datasette):
    """Datasette's view-table check deep-copies the whole metadata to read one table's `allow`
    blocks, two or three times a page (~1 ms of a paper page's CPU). Our metadata is fixed for
    the worker's life (no plugin supplies metadata per request), so each table's answer is
    kept; a site with a get_metadata hook keeps Datasette's reading."""
    if pm.hook.get_metadata.get_hookimpls() or not hasattr(datasette, "_table_permission_allows"):
        return
    look_up = datasette._table_permission_allows
    answers = {}

    def remembered(database, table):
        key = (database, table)
        if key in answers:
            return list(answers[key])
        answer = look_up(database, table)
        if len(answers) < MAX_REMEMBERED:
            answers[key] = list(answer)
        return answer

    remembered.answers = answers
    datasette._table_permission_allows = remembered


def with_startup(app, datasette):
    """Run Datasette's startup hooks and open the catalog before the worker takes requests
    (Datasette would otherwise do it on the first request, which then waits for it)."""

    async def started(scope, receive, send):
        if scope["type"] != "lifespan":
            await app(scope, receive, send)
            return
        while True:
            message = await receive()
            if message["type"] == "lifespan.startup":
                try:
                    await datasette.invoke_startup()
                    await datasette.refresh_schemas()
                    await datasette.get_database(DATABASE_NAME).table_counts(limit=3_600_000)
                except Exception as error:  # noqa: BLE001 - the server reports and stops
                    await send({"type": "lifespan.startup.failed", "message": str(error)})
                    return
                await send({"type": "lifespan.startup.complete"})
            elif message["type"] == "lifespan.shutdown":
                await send({"type": "lifespan.shutdown.complete"})
                return

    return started


def create_app(site):
    datasette = create_datasette(site)
    # a worker's templates are the site's files as it started (a deploy starts new workers,
    # site_fingerprint): no stat() of each template file on every render
    datasette.jinja_env.auto_reload = False
    remember_request_args()
    refresh_schemas_once(datasette)
    remember_schema_lookups(datasette.get_database(DATABASE_NAME))
    count_searches_from_the_index(datasette.get_database(DATABASE_NAME))
    remember_table_permissions(datasette)
    app = GZipMiddleware(datasette.app(), minimum_size=GZIP_MINIMUM_BYTES, compresslevel=GZIP_LEVEL)
    if site.cache_bytes:
        app = ResponseCache(app, site.cache_bytes)
    app = BuildETag(app, site_fingerprint(site))
    return with_startup(app, datasette)
