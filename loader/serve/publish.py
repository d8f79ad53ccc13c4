"""Publishing: a Docker build context that runs the site exactly as `paper-catalog serve` does.

The image installs the project itself, a wheel built from this checkout (the loader, metadata.yml
and the plugins with their templates and static files), with every dependency pinned to the
version installed here, then starts `paper-catalog serve`, the same command as local serving.
It needs nothing outside the context: the wheel, the pins, the catalog and the Dockerfile.
The platform builds the image from the context (`gcloud run deploy --source`, `flyctl deploy`);
every replica is an identical read-only copy, so the platform can scale out behind its load
balancer.
"""

import os
import re
import shlex
import shutil
import subprocess
import sys
import tempfile
from dataclasses import dataclass
from pathlib import Path

from loader.serve.settings import SERVED_NAME
from loader.serve.site_files import CONTAINER, ROOT

PLATFORMS = ("cloudrun", "fly")
DISTRIBUTION = "paper-catalog"
CONSTRAINTS_FILE = "constraints.txt"
INSTALL_DIR = "/install"
APP_DIR = "/app"
APP_USER = "catalog"
# Cloud Run sets PORT itself; Fly sends traffic to fly.toml's internal_port
PORT = 8080
# what the wheel is built from: nothing else in a checkout belongs in it, and a stale build/
# folder would put removed files back into the wheel
SOURCE_IGNORE = shutil.ignore_patterns(
    ".*",
    "*.egg-info",
    "__pycache__",
    "*.db",
    "*.db-*",
    "*.inspect.json",
)
# ... and, at the checkout's top only (loader/build/ is a package), these folders
TOP_IGNORE = {"build", "dist", "bench", "docs", "tests", "test-artifacts"}


class PublishError(Exception):
    """Publishing cannot go on; the message says why."""


@dataclass
class Context:
    directory: Path
    wheel: Path
    dockerfile: Path


def serve_command() -> list[str]:
    """The image's start command: local serving's, on every interface and the platform's port."""
    return ["paper-catalog", "serve", "--db", SERVED_NAME, "--host", "0.0.0.0", "--port", "$PORT"]


def source_checkout() -> Path:
    """The checkout to build the wheel from; an installed paper-catalog cannot rebuild itself."""
    if ROOT != CONTAINER or not (CONTAINER / "pyproject.toml").is_file():
        raise PublishError(
            "publish builds the image from a source checkout of paper-catalog "
            "(pyproject.toml, loader/, plugins/, metadata.yml): run it there"
        )
    return CONTAINER


def copy_source(source: str | os.PathLike[str], target: str | os.PathLike[str]) -> Path:
    """The files of the checkout source that a build reads, copied to target (a new folder)."""
    top = Path(source).resolve()

    def ignored(folder: str, names: list[str]) -> set[str]:
        left_out = SOURCE_IGNORE(folder, names)
        if Path(folder).resolve() == top:
            left_out |= TOP_IGNORE.intersection(names)
        return left_out

    shutil.copytree(source, target, ignore=ignored)
    return Path(target)


def build_wheel(source: str | os.PathLike[str], directory: str | os.PathLike[str]) -> Path:
    """A wheel of the project built from a clean copy of source, written into directory."""
    with tempfile.TemporaryDirectory(prefix="paper-catalog-source-") as scratch:
        copy = copy_source(source, Path(scratch) / "source")
        command = [sys.executable, "-m", "pip", "wheel", "--quiet", "--no-deps"]
        run(command + ["--wheel-dir", str(directory), str(copy)], "building the wheel")
    wheels = sorted(Path(directory).glob("paper_catalog-*.whl"))
    if len(wheels) != 1:
        raise PublishError(f"expected one paper_catalog wheel in {directory}, found {len(wheels)}")
    return wheels[0]


def pinned_requirements() -> list[str]:
    """`name==version` of every distribution installed here but this project (pip freeze)."""
    frozen = run([sys.executable, "-m", "pip", "freeze", "--exclude-editable"], "pip freeze")
    pins = []
    for line in frozen.splitlines():
        name = re.split(r"[=<>!~ @\[;]", line.strip(), maxsplit=1)[0]
        if not name or line.startswith(("#", "-")) or " @ " in line:
            continue
        if re.sub(r"[-_.]+", "-", name).lower() == DISTRIBUTION:
            continue
        pins.append(line.strip())
    return pins


def dockerfile_text(wheel_name: str) -> str:
    """The Dockerfile: every file it copies is in the context beside it."""
    version = f"{sys.version_info.major}.{sys.version_info.minor}"
    wheel = f"{INSTALL_DIR}/{wheel_name}"
    constraints = f"{INSTALL_DIR}/{CONSTRAINTS_FILE}"
    command = " ".join(part if part == "$PORT" else shlex.quote(part) for part in serve_command())
    start = ["sh", "-c", f"exec {command}"]
    quoted_start = ", ".join('"' + part.replace('"', '\\"') + '"' for part in start)
    return "\n".join(
        [
            "# paper-catalog: the catalog served read-only, started as `paper-catalog serve` starts",
            "# it locally. Built by `paper-catalog publish`; every COPY source is in this folder.",
            f"FROM python:{version}-slim",
            "ENV PYTHONUNBUFFERED=1 PIP_NO_CACHE_DIR=1 PIP_DISABLE_PIP_VERSION_CHECK=1",
            f"COPY {wheel_name} {CONSTRAINTS_FILE} {INSTALL_DIR}/",
            f"RUN pip install --constraint {constraints} {wheel}",
            f"RUN useradd --system --create-home --home-dir {APP_DIR} {APP_USER}",
            f"WORKDIR {APP_DIR}",
            f"COPY --chown={APP_USER} {SERVED_NAME} {APP_DIR}/{SERVED_NAME}",
            f"USER {APP_USER}",
            f"ENV PORT={PORT}",
            f"EXPOSE {PORT}",
            f"CMD [{quoted_start}]",
            "",
        ]
    )


def fly_config(name: str) -> str:
    return f'app = "{name}"\n\n[http_service]\n  internal_port = {PORT}\n  force_https = true\n'


def write_context(
    db: str | os.PathLike[str],
    directory: str | os.PathLike[str],
    platform: str = "cloudrun",
    name: str = DISTRIBUTION,
    source: str | os.PathLike[str] | None = None,
) -> Context:
    """Write the build context into directory: wheel, pins, catalog, Dockerfile (and fly.toml)."""
    directory = Path(directory)
    directory.mkdir(parents=True, exist_ok=True)
    wheel = build_wheel(source or source_checkout(), directory)
    pins = pinned_requirements()
    (directory / CONSTRAINTS_FILE).write_text("\n".join(pins) + "\n", encoding="utf-8")
    shutil.copyfile(db, directory / SERVED_NAME)
    dockerfile = directory / "Dockerfile"
    dockerfile.write_text(dockerfile_text(wheel.name), encoding="utf-8")
    if platform == "fly":
        (directory / "fly.toml").write_text(fly_config(name), encoding="utf-8")
    return Context(directory, wheel, dockerfile)


def deploy_command(
    context_dir: str | os.PathLike[str],
    platform: str,
    name: str,
    max_instances: int = 4,
    memory: str = "1Gi",
) -> list[str]:
    """The platform's own tool, building the image from the context's Dockerfile remotely."""
    if platform not in PLATFORMS:
        raise ValueError(f"unknown platform {platform!r}")
    if platform == "cloudrun":
        return [
            "gcloud",
            "run",
            "deploy",
            name,
            "--source",
            str(context_dir),
            "--allow-unauthenticated",
            "--memory",
            memory,
            "--max-instances",
            str(max_instances),
        ]
    # the Fly app must exist first: `flyctl apps create NAME`
    config = str(Path(context_dir) / "fly.toml")
    return ["flyctl", "deploy", str(context_dir), "--config", config, "--remote-only"]


def run(command: list[str], doing: str) -> str:
    result = subprocess.run(command, capture_output=True, text=True, check=False)
    if result.returncode:
        raise PublishError(f"{doing} failed ({shlex.join(command)}):\n{result.stderr.strip()}")
    return result.stdout
