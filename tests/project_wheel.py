"""The wheel of this checkout, built once per test run by `paper-catalog publish`'s own
build_wheel (a clean copy of the sources, `pip wheel`: what `pip install .` builds and installs)
and shared by the install and publish tests, however many pytest-xdist workers run them. A
wheel build costs seconds of CPU: the build backend is installed into a fresh environment each
time."""

import fcntl
import os
import shutil
from pathlib import Path

import pytest

from loader.serve.publish import build_wheel

from .conftest import ROOT


def shared_wheel(tmp_path_factory: pytest.TempPathFactory) -> Path:
    """The wheel, built by the first pytest process that asks for it, read by the others (a lock
    makes them wait for the first build, as tests/real_size.py does for its catalog)."""
    root = tmp_path_factory.getbasetemp()
    if os.environ.get("PYTEST_XDIST_WORKER"):
        root = root.parent
    folder = root / "project-wheel"
    with open(root / "project-wheel.lock", "w") as lock:
        fcntl.flock(lock, fcntl.LOCK_EX)
        if not folder.exists():
            partial = root / "project-wheel.partial"
            shutil.rmtree(partial, ignore_errors=True)
            build_wheel(ROOT, partial)
            os.replace(partial, folder)
    [wheel] = folder.glob("paper_catalog-*.whl")
    return wheel
