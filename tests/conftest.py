import os
import sqlite3
from importlib.metadata import version
from pathlib import Path
from urllib.parse import urlencode

import httpx
import pytest
import pytest_asyncio
from hypothesis import settings

from loader.build.catalog import build_catalog
from loader.read.sources import discover, plan_inputs

ROOT = Path(__file__).resolve().parent.parent
SEEDS = ROOT / "seeds"
FIXTURES = Path(__file__).resolve().parent / "fixtures"

# Property tests: by default the same few hundred examples every run (derandomized, no example
# database), so a failure is repeatable and `make test` stays short; `make test-deep`
# (HYPOTHESIS_PROFILE=deep) tries thousands of fresh examples and keeps the failures it finds.
# No deadline: the machine is shared, and no test is about time.
DEFAULT_EXAMPLES = 100
settings.register_profile(
    "default", max_examples=DEFAULT_EXAMPLES, derandomize=True, database=None, deadline=None
)
settings.register_profile("deep", max_examples=5000, deadline=None)
settings.load_profile(os.environ.get("HYPOTHESIS_PROFILE", "default"))


# The files with browser tests, longest first: `make test`'s workers (--dist loadfile) take a
# test file at a time, and these together as one unit, so that one worker starts Chromium and
# the sites they visit (search_site, real_site, signals_site), not both. Checked against the
# `browser` marks as collected.
BROWSER_FILES = (
    "test_xss_browser.py",
    "test_accessibility.py",
    "test_pages_browser.py",
    "test_search_browser.py",
    "test_accessibility_tables.py",
    "test_security_headers.py",
    "test_browser.py",
    "test_tables_browser.py",
    "test_error_pages.py",
)
# The other test files that take longest, most of it waiting on real servers and subprocesses,
# longest first. `make test` starts the browser files' unit (the longest) and then these (in
# this order), so that no worker is left with one of them at the end while the other has
# nothing left to do. A file not named here runs after them; the order changes no result.
LONGEST_FILES = (
    "test_serve.py",
    "test_exports_real_size.py",
    "test_security.py",
    "test_crash_safety.py",
    "test_url_fuzz.py",
    "test_connections.py",
    "test_install.py",
    "test_markup.py",
    "test_fuzz_loader.py",
    "test_labels.py",
    "test_publish.py",
    "test_prepared_cache.py",
    "test_worker_memory.py",
    "test_bench_smoke.py",
)


# `make test-datasette-1` runs the served-app tests under Datasette 1.0 (an alpha, in its own
# virtualenv); a test of what only Datasette 0.65 has is skipped there, saying why. Keyed by
# "file::test" (every parameter of it) or by "file" (the whole file).
DATASETTE_1 = int(version("datasette").split(".", 1)[0]) >= 1
DATASETTE_065_ONLY: dict[str, str] = {
    "test_csv.py::test_table_csv_is_routed_to_the_fast_view": (
        "asks 0.65's private route table (_routes()) which view serves a CSV"
    ),
    "test_csv.py::test_fast_csv_odd_values": (
        "asks 0.65's private route table (_routes()) which view serves a CSV"
    ),
    "test_csv.py::test_fast_csv_stops_at_the_same_row_when_over_max_csv_mb": (
        "sets max_csv_mb to a fraction, which 1.0's typed settings refuse (an int)"
    ),
    "test_pages.py::test_paper_and_author_pages_are_what_datasettes_row_view_renders": (
        "compares the pages with what 0.65's RowView renders"
    ),
    "test_pages.py::test_paper_page_json_is_still_datasettes": (
        "reads 0.65's row JSON, rows as lists (1.0 gives objects)"
    ),
    "test_site.py::test_home_keeps_datasettes_database_lines": (
        "finds the database lines by 0.65's index.html markup"
    ),
    "test_security_headers.py::test_no_page_kind_reports_a_policy_violation_in_chromium": (
        "1.0 writes each page's own data into inline scripts, which no policy made at start can "
        "hash (loader/web/content_policy.py PAGE_DATA_VARIABLES); its editor is CodeMirror 6"
    ),
}


@pytest.hookimpl(optionalhook=True)  # xdist's hook: unknown under -p no:xdist
def pytest_xdist_make_scheduler(config, log):
    """--dist loadfile's scheduling, with BROWSER_FILES one unit (xdist's public hook; its
    own loadfile scheduler is this one's base, with a file its unit)."""
    if config.getvalue("dist") != "loadfile":
        return None
    from xdist.scheduler import LoadScopeScheduling

    class FilesAndBrowserFiles(LoadScopeScheduling):
        def _split_scope(self, nodeid: str) -> str:
            path = nodeid.split("::", 1)[0]
            return "browser tests" if Path(path).name in BROWSER_FILES else path

    return FilesAndBrowserFiles(config, log)


def pytest_collection_modifyitems(items):
    rank = {name: place for place, name in enumerate(BROWSER_FILES + LONGEST_FILES)}
    items.sort(key=lambda item: rank.get(item.path.name, len(rank)))
    unlisted = {i.path.name for i in items if i.get_closest_marker("browser")} - set(BROWSER_FILES)
    if unlisted:
        raise pytest.UsageError(f"browser tests in files not in BROWSER_FILES: {sorted(unlisted)}")
    if DATASETTE_1:
        for item in items:
            test = f"{item.path.name}::{item.originalname}"
            reason = DATASETTE_065_ONLY.get(test) or DATASETTE_065_ONLY.get(item.path.name)
            if reason:
                item.add_marker(pytest.mark.skip(reason=f"Datasette 0.65 only: {reason}"))


async def table_json(datasette, path, params=None):
    """A table page's JSON with its row count and facets under Datasette 0.65's keys
    (`filtered_table_rows_count`, `facet_results` by name): 1.0 gives them only when asked
    (`_extra=`), as `count` and `facet_results["results"]`."""
    pairs = list((params or {}).items())
    if DATASETTE_1:
        pairs.append(("_extra", "count,facet_results"))
    # added to a query string the path may have (a facet's toggle URL)
    url = f"{path}{'&' if '?' in path else '?'}{urlencode(pairs)}" if pairs else path
    response = await datasette.client.get(url)
    assert response.status_code == 200, (path, response.text[:500])
    data = response.json()
    if DATASETTE_1:
        data["filtered_table_rows_count"] = data["count"]
        data["facet_results"] = data["facet_results"]["results"]
    return data


def index_databases(data):
    """Datasette's index JSON (`/.json`) as 0.65 gives it, the databases by name: 1.0 lists
    them under `databases`, each with the same keys."""
    return {db["name"]: db for db in data["databases"]} if DATASETTE_1 else data


def query_path(database="catalog", format=""):
    """The path of a database's SQL query page: /catalog.json?sql=... in Datasette 0.65,
    /catalog/-/query.json?sql=... in 1.0 (which redirects the old path there)."""
    suffix = f".{format}" if format else ""
    return f"/{database}/-/query{suffix}" if DATASETTE_1 else f"/{database}{suffix}"


def scaled_examples(count):
    """`count` examples in a default run, for a property slower than most (a build an
    example), and as many times more in another profile as that profile has more examples."""
    return max(1, count * settings.default.max_examples // DEFAULT_EXAMPLES)


@pytest.fixture(scope="session")
def seed_catalog(tmp_path_factory):
    """The catalog built by the real loader from the real seed files."""
    path = tmp_path_factory.mktemp("catalog") / "catalog.db"
    build_catalog(discover([SEEDS]), path)
    return path


@pytest.fixture(scope="session")
def search_catalog(tmp_path_factory):
    """The seeds plus 36 real conference papers with venue, year and status (fixtures/search)."""
    path = tmp_path_factory.mktemp("search") / "catalog.db"
    build_catalog(discover([SEEDS, FIXTURES / "search" / "conferences.jsonl"]), path)
    return path


@pytest.fixture(scope="session")
def real_catalog(tmp_path_factory):
    """Real public papers (tests/fixtures/real/sample: ICLR, ICML, NeurIPS, UAI and arXiv
    records, listing and profile pages) built as the CLI builds the folder; some are one paper
    from an arXiv and a conference version."""
    path = tmp_path_factory.mktemp("real-sample") / "catalog.db"
    build_catalog(plan_inputs([FIXTURES / "real" / "sample"]), path, skip_invalid=True)
    return path


@pytest.fixture(scope="session")
def signals_catalog(tmp_path_factory):
    """281 real Paper Copilot records of eight venues with links, citations, ratings, TL;DRs and
    countries, dated by their sources.yml (fixtures/dumps/SOURCE.md), built as the CLI builds
    the folder."""
    path = tmp_path_factory.mktemp("signals") / "catalog.db"
    folder = FIXTURES / "dumps" / "paperlists_fields"
    build_catalog(plan_inputs([folder]), path, skip_invalid=True)
    return path


@pytest.fixture
def query(seed_catalog):
    connection = sqlite3.connect(seed_catalog)

    def run(sql, params=()):
        return connection.execute(sql, params).fetchall()

    yield run
    connection.close()


def served_app(catalog, metadata=ROOT / "metadata.yml", cache_bytes=0):
    """The ASGI app `paper-catalog serve` runs (loader/serve/app.py: ETag, response cache, gzip,
    patches) on a catalog; its Datasette is `.datasette`. The plugins are the installed
    package's, registered by its `datasette` entry points when Datasette was imported."""
    from loader.serve.app import Site, create_app

    site = Site(
        db=str(catalog),
        inspect_file=None,
        metadata=str(metadata),
        build_id="tests",
        secret="tests",
        cache_bytes=cache_bytes,
    )
    return create_app(site)


@pytest.fixture(scope="session")
def site_app(seed_catalog):
    """The served app on the seed catalog, with its response cache."""
    from loader.serve.app import DEFAULT_CACHE_BYTES

    return served_app(seed_catalog, cache_bytes=DEFAULT_CACHE_BYTES)


@pytest.fixture(scope="session")
def datasette(site_app):
    """The Datasette of the served app, for `await datasette.client.get(...)` (no ETag,
    cache or gzip: those are tested through the app itself)."""
    return site_app.datasette


def second_datasette(catalog):
    """The served app's Datasette on another catalog."""
    return served_app(catalog).datasette


@pytest.fixture(scope="session")
def chromium_endpoint(tmp_path_factory):
    """Debian's headless Chromium, one for the session (a worker's): the DevTools URL the
    module's `browser` connects to. Stopped at the session's end."""
    from .browser import chromium_process

    with chromium_process(tmp_path_factory.mktemp("chromium")) as endpoint:
        yield endpoint


@pytest.fixture(scope="module")
def browser(chromium_endpoint):
    """The session's Chromium as a module's browser tests drive it: Playwright connected to it
    for the module only, since Playwright's sync API holds an event loop open while connected,
    and the asyncio tests after it would fail. Its contexts and pages go with the module."""
    from .browser import connected

    with connected(chromium_endpoint) as running:
        yield running


@pytest.fixture(scope="module")
def axe_page(browser):
    """A page axe-core can run in, for a module's accessibility checks: axe is in every
    document it loads, as a script run before the page's own (Chromium keeps it compiled: a
    third of a page's time when injected into each page); the site's Content-Security-Policy
    would refuse it, and is bypassed here."""
    from .browser import AXE

    page = browser.new_page(viewport={"width": 1280, "height": 900}, bypass_csp=True)
    page.add_init_script(path=str(AXE))
    yield page
    page.close()


@pytest.fixture(scope="module")
def shared_page(browser):
    """One page for a module's browser tests, recording its dialogs and page errors: a new page
    costs Chromium a renderer process, about a quarter of a second a test. Its context (HTTP
    cache, cookies) carries over from test to test, as a reader's browser does."""
    from .browser import new_page

    dialogs, errors = [], []
    page = new_page(browser, dialogs=dialogs, errors=errors)
    page.dialogs, page.errors = dialogs, errors
    yield page
    page.close()


@pytest.fixture
def page(shared_page):
    """The module's page for one test: a blank document at 1280 x 900, no dialog or error
    recorded yet (tests/browser.py: blank_page)."""
    from .browser import blank_page

    return blank_page(shared_page)


@pytest.fixture(scope="session")
def search_site(search_catalog, tmp_path_factory):
    """The search catalog served by a real Datasette, for the browser tests."""
    from .browser import datasette_server

    with datasette_server(search_catalog, tmp_path_factory.mktemp("search-logs")) as url:
        yield url


@pytest.fixture(scope="session")
def signals_site(signals_catalog, tmp_path_factory):
    """The signals catalog served by a real `paper-catalog serve`, for the browser tests."""
    from .browser import datasette_server

    with datasette_server(signals_catalog, tmp_path_factory.mktemp("signals-logs")) as url:
        yield url


@pytest.fixture(scope="session")
def real_site(real_catalog, tmp_path_factory):
    """The real sample served by a real `paper-catalog serve`, for the browser tests."""
    from .browser import datasette_server

    with datasette_server(real_catalog, tmp_path_factory.mktemp("real-logs")) as url:
        yield url


@pytest.fixture(scope="session")
def real_size_catalog(tmp_path_factory):
    """More than 10,000 papers: copies of the real samples under fixtures/ (tests/real_size.py),
    built once per run, however many pytest-xdist workers share it."""
    from .real_size import shared_real_size_catalog

    return shared_real_size_catalog(tmp_path_factory)


@pytest.fixture(scope="module")
def real_size_app(real_size_catalog):
    return served_app(real_size_catalog)


@pytest_asyncio.fixture(loop_scope="session")
async def real_size_client(real_size_app):
    """An HTTP client of the app `paper-catalog serve` runs, on the real-size catalog."""
    transport = httpx.ASGITransport(app=real_size_app)
    async with httpx.AsyncClient(transport=transport, base_url="http://site", timeout=120) as c:
        yield c
