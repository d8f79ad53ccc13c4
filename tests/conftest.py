import sqlite3
from pathlib import Path

import pytest

from loader.build import build_catalog
from loader.sources import discover

ROOT = Path(__file__).resolve().parent.parent
SEEDS = ROOT / "seeds"
FIXTURES = Path(__file__).resolve().parent / "fixtures"


@pytest.fixture(scope="session")
def seed_catalog(tmp_path_factory):
    """The catalog built by the real loader from the real seed files."""
    path = tmp_path_factory.mktemp("catalog") / "catalog.db"
    build_catalog(discover([SEEDS]), path)
    return path


@pytest.fixture
def query(seed_catalog):
    connection = sqlite3.connect(seed_catalog)

    def run(sql, params=()):
        return connection.execute(sql, params).fetchall()

    yield run
    connection.close()
