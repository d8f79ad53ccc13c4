"""`pip install .` (not editable) into a fresh virtualenv, used from a folder outside the checkout
(the wheel `pip install .` builds, built once for the run: tests/project_wheel.py):
the installed paper-catalog builds a catalog of any name and serves it as `catalog` with the
site's metadata, plugins, templates and static files. Once with the versions installed here, and
once (`make test-slow`) with the lowest versions pyproject.toml declares (its floors), so a
wrong floor fails."""

import shutil
import subprocess
from pathlib import Path

import pytest

from loader.serve.publish import pinned_requirements

from . import fresh_venv
from .conftest import SEEDS
from .project_wheel import shared_wheel

COMMAND_SECONDS = 120
PINS = {"installed here": pinned_requirements, "floors": fresh_venv.floor_pins}


def run(command, cwd, environment, status=0):
    result = subprocess.run(
        command,
        cwd=cwd,
        env=environment,
        capture_output=True,
        text=True,
        timeout=COMMAND_SECONDS,
        check=False,
    )
    assert result.returncode == status, (command, result.stdout[-2000:], result.stderr[-2000:])
    return result.stdout + result.stderr


@pytest.fixture(scope="module")
def wheel(tmp_path_factory):
    return shared_wheel(tmp_path_factory)


@pytest.mark.parametrize(
    "versions",
    ["installed here", pytest.param("floors", marks=pytest.mark.slow)],
)
def test_installed_site_builds_and_serves_any_file_from_any_folder(
    versions, wheel, tmp_path, monkeypatch
):
    # pip compiles every module of every package it installs (half its time); the commands
    # below compile, once, only the ones they import
    monkeypatch.setenv("PIP_COMPILE", "0")  # --no-compile
    pins = PINS[versions]()
    constraints = tmp_path / "constraints.txt"
    constraints.write_text("\n".join(pins) + "\n", encoding="utf-8")
    python = fresh_venv.create(tmp_path / "venv")
    fresh_venv.install(python, "--constraint", constraints, wheel)

    elsewhere = tmp_path / "elsewhere"
    elsewhere.mkdir()
    environment = fresh_venv.clean_environment(python.parent)
    # the site's files come from the venv, not from this checkout or the copy it was built from
    report_files = (
        "from loader.serve import site_files; print(site_files.ROOT); "
        "print(site_files.plugin_files())"
    )
    where = run([python, "-c", report_files], elsewhere, environment).split()
    assert all(Path(path).is_relative_to(tmp_path / "venv") for path in where), where
    report = (
        "import importlib.metadata as m; print(m.version('datasette'), m.version('sqlite-utils'))"
    )
    versions_here = run([python, "-c", report], elsewhere, environment).split()
    wanted = dict(pin.split("==") for pin in pins)
    assert versions_here == [wanted["datasette"], wanted["sqlite-utils"]]

    shutil.copytree(SEEDS, elsewhere / "my seeds")
    paper_catalog = str(python.parent / "paper-catalog")
    run([paper_catalog, "build", "my seeds", "--db", "my.db"], elsewhere, environment)
    port = fresh_venv.free_port()
    serve = [paper_catalog, "serve", "--db", "my.db", "--port", str(port), "--workers", "1"]
    url = f"http://127.0.0.1:{port}"
    with fresh_venv.running(serve, elsewhere, environment, url, tmp_path / "serve.log"):
        fresh_venv.check_served_site(url, elsewhere / "my.db")

    # an installed copy cannot rebuild its own wheel: publish says where to run it
    publish = [paper_catalog, "publish", "--db", "my.db", "--dry-run"]
    refused = run(publish, elsewhere, environment, status=1)
    assert "Error: publish builds the image from a source checkout" in refused
