"""Fresh virtualenvs for the install and publish tests, filled from a local wheelhouse.

Installs run offline from the wheelhouse (`--no-index --find-links`); what is missing there is
downloaded from the package index once and kept, so later runs are fast. `.ci/run` fills it
before the tests with `python -m tests.fresh_venv`. The wheelhouse is PAPER_CATALOG_WHEELHOUSE,
or ~/.cache/paper-catalog/wheelhouse.
"""

import contextlib
import os
import re
import signal
import socket
import sqlite3
import subprocess
import sys
import tempfile
import time
import tomllib
from pathlib import Path

import httpx
import yaml

from . import local_http

ROOT = Path(__file__).resolve().parent.parent
WHEELHOUSE = Path(
    os.environ.get("PAPER_CATALOG_WHEELHOUSE")
    or Path.home() / ".cache" / "paper-catalog" / "wheelhouse"
)
PIP_SECONDS = 300
STARTUP_SECONDS = 90
STOP_SECONDS = 20
REQUIREMENT = re.compile(r"^\s*([A-Za-z0-9][A-Za-z0-9._-]*)\s*(\[[^\]]*\])?\s*([^;]*)")


def project():
    return tomllib.loads((ROOT / "pyproject.toml").read_text(encoding="utf-8"))


def build_requirements():
    return project()["build-system"]["requires"]


def floor_pins():
    """`name==floor` for every declared dependency: its lowest version the project allows."""
    pins = []
    for requirement in project()["project"]["dependencies"]:
        name, _, specifiers = REQUIREMENT.match(requirement).groups()
        floor = re.search(r">=\s*([^,\s]+)", specifiers)
        if floor is None:
            raise ValueError(f"dependency {requirement!r} declares no floor")
        pins.append(f"{name}=={floor.group(1)}")
    return pins


def pip(*arguments, python=None):
    command = [sys.executable, "-m", "pip"]
    if python is not None:
        command += ["--python", str(python)]
    command += ["--disable-pip-version-check", *map(str, arguments)]
    return subprocess.run(command, capture_output=True, text=True, timeout=PIP_SECONDS, check=False)


def fill_wheelhouse(requirements):
    """Download requirements and their dependencies (and the build backend) as wheels."""
    WHEELHOUSE.mkdir(parents=True, exist_ok=True)
    for wanted in (list(requirements), build_requirements()):
        result = pip("download", "--quiet", "--only-binary", ":all:", "--dest", WHEELHOUSE, *wanted)
        if result.returncode:
            raise RuntimeError(f"pip download {wanted} failed:\n{result.stderr[-3000:]}")
    # a local project wheel downloaded with its dependencies must not shadow a newer build
    for wheel in WHEELHOUSE.glob("paper_catalog-*.whl"):
        wheel.unlink()


def create(directory):
    """A new virtualenv without pip (the outer pip installs into it with --python)."""
    subprocess.run(
        [sys.executable, "-m", "venv", "--without-pip", str(directory)], check=True, timeout=120
    )
    return Path(directory) / "bin" / "python"


def install(python, *requirements):
    """pip install requirements into the venv, offline from the wheelhouse when it has them."""
    arguments = ["install", "--quiet", "--find-links", WHEELHOUSE, *requirements]
    result = pip(*arguments[:2], "--no-index", *arguments[2:], python=python)
    if result.returncode:
        fill_wheelhouse(requirements)
        result = pip(*arguments[:2], "--no-index", *arguments[2:], python=python)
    if result.returncode:
        raise RuntimeError(f"pip install {requirements} failed:\n{result.stderr[-3000:]}")


def free_port():
    with socket.socket() as sock:
        sock.bind(("127.0.0.1", 0))
        return sock.getsockname()[1]


def clean_environment(venv_bin, **extra):
    """The environment of a user of the venv: its bin first, nothing from this checkout."""
    environment = {
        key: value
        for key, value in os.environ.items()
        if not key.startswith(("PYTHON", "VIRTUAL_ENV", "PYTEST"))
    }
    environment["PATH"] = f"{venv_bin}{os.pathsep}{environment.get('PATH', '')}"
    environment.update(extra)
    return environment


@contextlib.contextmanager
def running(command, cwd, environment, url, log_path):
    """A server process (its own session, stopped with its children afterwards) answering url."""
    with open(log_path, "wb") as log:
        process = subprocess.Popen(
            command,
            cwd=cwd,
            env=environment,
            stdout=log,
            stderr=subprocess.STDOUT,
            start_new_session=True,
        )
    try:
        deadline = time.monotonic() + STARTUP_SECONDS
        while True:
            if process.poll() is not None:
                raise RuntimeError(f"server exited: {Path(log_path).read_text()[-3000:]}")
            try:
                if local_http.get(f"{url}/-/versions.json", timeout=5).status_code == 200:
                    break
            except httpx.TransportError:
                pass
            if time.monotonic() > deadline:
                raise RuntimeError(
                    f"no answer in {STARTUP_SECONDS} s: {Path(log_path).read_text()}"
                )
            time.sleep(0.2)
        yield process
    finally:
        stop(process)


def stop(process):
    with contextlib.suppress(ProcessLookupError):
        os.killpg(process.pid, signal.SIGTERM)
    try:
        process.wait(STOP_SECONDS)
    except subprocess.TimeoutExpired:
        with contextlib.suppress(ProcessLookupError):
            os.killpg(process.pid, signal.SIGKILL)
        process.wait(STOP_SECONDS)


def math_paper(db):
    """A paper whose abstract has inline math, from the catalog file db."""
    with contextlib.closing(sqlite3.connect(db)) as connection:
        row = connection.execute(
            "select id from papers where abstract like '%$%\\%$%' order by id limit 1"
        ).fetchone()
    assert row, f"{db} has no paper with math"
    return row[0]


def check_served_site(url, db):
    """The pages a visitor starts from answer 200 with the site's metadata, plugins, templates,
    static files and MathML: what an install missing any of them loses."""
    title = yaml.safe_load((ROOT / "metadata.yml").read_text(encoding="utf-8"))["title"]

    def get(path):
        response = local_http.get(url + path, timeout=30)
        assert response.status_code == 200, (path, response.status_code, response.text[:1000])
        return response.text

    home = get("/")
    assert f"<title>{title}" in home
    assert 'class="search-box"' in home and re.search(r"[\d,]+ rows in \d+ tables", home)
    assert "<table" in get("/catalog/papers")
    assert "<math" in get(f"/catalog/papers/{math_paper(db)}")
    assert "<svg" in get("/-/charts")
    assert "<mark>" in get("/catalog/search?q=diffusion")
    assert "{" in get("/-/static-plugins/paper-catalog/catalog.css")
    assert "fetch(" in get("/-/static-plugins/paper-catalog/search.js")
    plugins = local_http.get(url + "/-/plugins.json", timeout=30).json()
    ours = [plugin for plugin in plugins if plugin["name"] == "paper-catalog"]
    assert any(plugin["templates"] and plugin["static"] for plugin in ours)
    hooks = {hook for plugin in ours for hook in plugin["hooks"]}
    assert {"render_cell", "prepare_connection", "register_routes", "asgi_wrapper"} <= hooks


def prefetch():
    """Fill the wheelhouse with what the install and publish tests install."""
    from loader.serve.publish import pinned_requirements

    with tempfile.TemporaryDirectory() as scratch:
        constraints = Path(scratch) / "constraints.txt"
        constraints.write_text("\n".join(pinned_requirements()) + "\n", encoding="utf-8")
        fill_wheelhouse(["--constraint", constraints, str(ROOT)])
        fill_wheelhouse(floor_pins())
    print(f"wheelhouse {WHEELHOUSE}: {len(list(WHEELHOUSE.glob('*.whl')))} wheels")


if __name__ == "__main__":
    prefetch()
