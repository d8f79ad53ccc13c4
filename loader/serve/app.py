"""The site as one ASGI app: Datasette on the immutable catalog with our metadata, plugins,
templates and settings, behind the HTTP wrappers a read-only catalog can afford.

Every worker process builds the same app from a `Site` (one build of the catalog, the site's
files, a shared signing secret), so the workers are identical read-only replicas. Outside in:
the security headers (on every answer, 304s and cached ones included), the build ETag (a
matching If-None-Match costs nothing), the response cache (a repeated GET costs a dictionary
look-up), gzip, then Datasette.
"""

import atexit
import hashlib
import json
import shutil
import tempfile
from collections.abc import Awaitable, Callable, Sequence
from pathlib import Path
from typing import Any

from asgi_gzip import GZipMiddleware
from datasette.app import Datasette
from datasette.utils import parse_metadata
from datasette.version import __version__ as datasette_version

from loader.serve.always_answer import AlwaysAnswer
from loader.serve.datasette_config import datasette_arguments
from loader.serve.etag import BuildETag
from loader.serve.response_cache import ResponseCache
from loader.serve.security_headers import SecurityHeaders
from loader.serve.settings import SETTINGS
from loader.serve.site import DEFAULT_CACHE_BYTES, Site  # noqa: F401 - the callers' cache size
from loader.serve.site_files import plugin_files
from loader.web.asgi_types import ASGIApp, Receive, Scope, Send
from loader.web.catalog_scope import DEFAULT_DATABASE
from loader.web.datasette_api import jinja_environment

# the name the catalog is served as, whatever its file is called: the plugins' default
DATABASE_NAME = DEFAULT_DATABASE
# level 6 compresses HTML and JSON almost as well as 9, for much less CPU (docs/serving.md)
GZIP_LEVEL = 6
GZIP_MINIMUM_BYTES = 500


def site_fingerprint(site: Site) -> str:
    """The build and the site's own files (metadata, the installed plugin package): a new
    deploy of the code changes every ETag too."""
    digest = hashlib.sha256(datasette_version.encode())
    plugins = plugin_files()
    files = [Path(site.metadata), *sorted(plugins.rglob("*"))]
    for path in files:
        if path.is_file() and "__pycache__" not in path.parts:
            digest.update(str(path.relative_to(path.anchor)).encode())
            digest.update(path.read_bytes())
    return f"{site.build_id}-{digest.hexdigest()[:12]}"


def load_inspect_data(inspect_file: str | None) -> dict[str, dict[str, Any]] | None:
    """Inspect data keyed by the served name, whatever the file was called when inspected."""
    if inspect_file is None:
        return None
    data = json.loads(Path(inspect_file).read_text())
    return {DATABASE_NAME: next(iter(data.values()))} if data else None


def served_path(db: str) -> str:
    """A path to the catalog whose file is named as the catalog is served. Datasette names a
    database after its file, and URLs, metadata and plugins all say `catalog`: a snapshot of
    `paper-catalog serve` is already called so; any other file (a test's, a benchmark's) is
    given a link of that name in a private folder of its own, removed when the process ends."""
    if Path(db).stem == DATABASE_NAME:
        return db
    folder = Path(tempfile.mkdtemp(prefix="paper-catalog-"))
    atexit.register(shutil.rmtree, folder, ignore_errors=True)
    link = folder / f"{DATABASE_NAME}.db"
    link.symlink_to(Path(db).resolve())
    return str(link)


def create_datasette(site: Site) -> Datasette:
    """Datasette on the catalog, with the site's metadata and settings; its plugins, templates
    and static files are the installed paper-catalog's (its `datasette` entry points). The one
    metadata.yml is given as the installed Datasette reads it (datasette_config.py)."""
    datasette = Datasette(
        immutables=[served_path(site.db)],
        inspect_data=load_inspect_data(site.inspect_file),
        settings=SETTINGS,
        secret=site.secret,
        **datasette_arguments(parse_metadata(Path(site.metadata).read_text())),
    )
    # a worker's templates are the site's files as it started (a deploy starts new workers,
    # site_fingerprint): no stat() of each template file on every render
    jinja_environment(datasette).auto_reload = False
    return datasette


class StartedSite:
    """The served app: runs Datasette's startup hooks and opens the catalog before the worker
    takes requests (Datasette would otherwise do it on the first request, which then waits for
    it), then `prepare`, what the wrappers read from the started Datasette. Its Datasette is
    `datasette` (tests ask it directly)."""

    def __init__(
        self,
        app: ASGIApp,
        datasette: Datasette,
        prepare: Sequence[Callable[[], Awaitable[object]]] = (),
    ) -> None:
        self.app = app
        self.datasette = datasette
        self.prepare = prepare

    async def __call__(self, scope: Scope, receive: Receive, send: Send) -> None:
        if scope["type"] != "lifespan":
            await self.app(scope, receive, send)
            return
        while True:
            message = await receive()
            if message["type"] == "lifespan.startup":
                try:
                    await self.datasette.invoke_startup()
                    await self.datasette.refresh_schemas()
                    await self.datasette.get_database(DATABASE_NAME).table_counts(limit=3_600_000)
                    for step in self.prepare:
                        await step()
                except Exception as error:  # noqa: BLE001 - the server reports and stops
                    await send({"type": "lifespan.startup.failed", "message": str(error)})
                    return
                await send({"type": "lifespan.startup.complete"})
            elif message["type"] == "lifespan.shutdown":
                await send({"type": "lifespan.shutdown.complete"})
                return


def create_app(site: Site) -> StartedSite:
    """The ASGI app a worker serves. Its Datasette is `app.datasette` (tests ask it directly)."""
    datasette = create_datasette(site)
    app: ASGIApp = GZipMiddleware(
        datasette.app(),
        minimum_size=GZIP_MINIMUM_BYTES,
        compresslevel=GZIP_LEVEL,
    )
    if site.cache_bytes:
        app = ResponseCache(app, site.cache_bytes)
    app = BuildETag(app, site_fingerprint(site))
    # a request the layers inside leave unanswered gets a 500 of ours, with the headers
    headers = SecurityHeaders(AlwaysAnswer(app), datasette)
    return StartedSite(headers, datasette, prepare=[headers.prepare])
