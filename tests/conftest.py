import sqlite3
from pathlib import Path

import pytest

from loader.build.catalog import build_catalog
from loader.read.sources import discover

ROOT = Path(__file__).resolve().parent.parent
SEEDS = ROOT / "seeds"
FIXTURES = Path(__file__).resolve().parent / "fixtures"


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


@pytest.fixture
def query(seed_catalog):
    connection = sqlite3.connect(seed_catalog)

    def run(sql, params=()):
        return connection.execute(sql, params).fetchall()

    yield run
    connection.close()


@pytest.fixture(scope="session")
def datasette(seed_catalog):
    """One Datasette for the whole run, configured as `paper-catalog serve` configures it.

    Plugins loaded from plugins_dir stay registered for the whole process, so there is one.
    """
    import yaml
    from datasette.app import Datasette

    from loader.serve.settings import SETTINGS

    metadata = yaml.safe_load((ROOT / "metadata.yml").read_text(encoding="utf-8"))
    return Datasette(
        immutables=[str(seed_catalog)],
        metadata=metadata,
        plugins_dir=str(ROOT / "plugins"),
        template_dir=str(ROOT / "plugins" / "templates"),
        settings=SETTINGS,
    )


def second_datasette(catalog):
    """Another Datasette configured like `datasette` on another catalog: the plugins registered
    by `datasette` serve it too (ask for that fixture alongside)."""
    import yaml
    from datasette.app import Datasette

    from loader.serve.settings import SETTINGS

    metadata = yaml.safe_load((ROOT / "metadata.yml").read_text(encoding="utf-8"))
    return Datasette(
        immutables=[str(catalog)],
        metadata=metadata,
        template_dir=str(ROOT / "plugins" / "templates"),
        settings=SETTINGS,
    )


@pytest.fixture(scope="module")
def browser():
    """A headless Chromium (Debian's) for a module's browser tests. Not one for the session:
    Playwright's sync API holds an event loop open, and the asyncio tests after it would fail."""
    from .browser import chromium

    with chromium() as running:
        yield running


@pytest.fixture(scope="session")
def search_site(search_catalog, tmp_path_factory):
    """The search catalog served by a real Datasette, for the browser tests."""
    from .browser import datasette_server

    with datasette_server(search_catalog, tmp_path_factory.mktemp("search-logs")) as url:
        yield url
