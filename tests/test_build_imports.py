"""What a build imports: sqlite-utils without numpy and pandas (loader/build/__init__.py),
which the site needs and the build does not."""

import json
import subprocess
import sys
from pathlib import Path

ROOT = Path(__file__).resolve().parent.parent
SKIPPED = ("numpy", "pandas")

BUILD = """
import json, sys
from loader.cli import cli
try:
    cli(["build", sys.argv[1], "--db", sys.argv[2]])
except SystemExit as done:
    code = done.code
loaded = sorted(m for m in ("numpy", "pandas") if m in sys.modules)
import numpy  # still importable afterwards, as usual
print(json.dumps([code, loaded, numpy.__name__]))
"""

AFTER_NUMPY = """
import json, numpy, loader.build, sqlite_utils.db
print(json.dumps(sqlite_utils.db.np is numpy))
"""


def run(code: str, *args: object) -> object:
    result = subprocess.run(
        [sys.executable, "-c", code, *map(str, args)],
        check=False,
        capture_output=True,
        text=True,
        timeout=120,
        cwd=ROOT,
    )
    assert result.returncode == 0, result.stderr
    return json.loads(result.stdout.splitlines()[-1])


def test_a_build_loads_neither_numpy_nor_pandas(tmp_path):
    assert run(BUILD, ROOT / "seeds", tmp_path / "c.db") == [0, [], "numpy"]


def test_sqlite_utils_imported_after_numpy_keeps_its_numpy_types():
    assert run(AFTER_NUMPY) is True
