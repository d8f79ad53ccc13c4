"""Building catalogs from the real merge fixtures (tests/fixtures/real/merge/, see SOURCE.md)."""

import json
import random
import shutil
import sqlite3

import pytest

from loader.build.catalog import build_catalog

from .conftest import FIXTURES

MERGE_FIXTURES = FIXTURES / "real" / "merge"


def records(name):
    """The fixture's JSON Lines records."""
    lines = (MERGE_FIXTURES / name).read_text(encoding="utf-8").split("\n")
    return [json.loads(line) for line in lines if line.strip()]


@pytest.fixture
def build_fixtures(tmp_path):
    """build(names, shuffle_seed=None, db_name) -> connection: a catalog from the named
    fixtures, copied into one folder; with a seed, each file's lines are shuffled."""

    def build(*names, seed=None, db_name="catalog.db"):
        folder = tmp_path / f"input-{seed}-{len(list(tmp_path.iterdir()))}"
        folder.mkdir()
        files = []
        for name in names:
            target = folder / name
            if seed is None:
                shutil.copy(MERGE_FIXTURES / name, target)
            else:
                lines = (MERGE_FIXTURES / name).read_text(encoding="utf-8").split("\n")
                random.Random(seed).shuffle(lines)
                target.write_text("\n".join(lines) + "\n", encoding="utf-8")
            files.append(target)
        if seed is not None:
            random.Random(seed).shuffle(files)
        db = folder / db_name
        build_catalog(files, db)
        return sqlite3.connect(db)

    return build


def site(connection):
    """The served app's Datasette over a built catalog (tests/conftest.py served_app)."""
    from .conftest import served_app

    return served_app(connection.execute("pragma database_list").fetchone()[2]).datasette
