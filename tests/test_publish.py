"""`paper-catalog publish`: the image runs from exactly what its build context holds.

No Docker engine runs here, so the test plays the Dockerfile itself: it copies what each COPY
copies from the context into a folder standing for the image's root, runs each `pip install`
into a fresh virtualenv (offline, from the wheelhouse), and starts the CMD as the image would,
on 127.0.0.1 and a free port instead of 0.0.0.0 and $PORT. Nothing of this checkout is on the
server's path, so a file the context lacks fails the test.
"""

import json
import shlex
import shutil
import sys
from pathlib import Path

import pytest
from click.testing import CliRunner

from loader.cli import cli
from loader.serve import publish
from loader.serve.publish import SERVED_NAME, deploy_command, serve_command, write_context

from . import fresh_venv
from .conftest import ROOT
from .project_wheel import shared_wheel

# the one RUN that is not an install: the image's unprivileged user (the test runs as itself)
USER_SETUP = "useradd "


def instructions(dockerfile):
    """(INSTRUCTION, arguments) for each line of the Dockerfile (no continuation lines)."""
    for line in dockerfile.read_text(encoding="utf-8").splitlines():
        if line.strip() and not line.startswith("#"):
            instruction, _, arguments = line.partition(" ")
            yield instruction, arguments


def in_image(root, path):
    """Where the image's absolute path lands in the folder standing for the image's root."""
    return root / path.lstrip("/")


def play(context, root, venv):
    """Do what the Dockerfile does, into root and venv; return (command, workdir, environment)."""
    environment, workdir, command = {}, root, None
    python = None
    for instruction, arguments in instructions(context / "Dockerfile"):
        if instruction == "FROM":
            version = f"{sys.version_info.major}.{sys.version_info.minor}"
            assert arguments == f"python:{version}-slim", "the image's Python is the tested one"
            python = fresh_venv.create(venv)
        elif instruction == "ENV":
            environment.update(part.split("=", 1) for part in shlex.split(arguments))
        elif instruction == "COPY":
            parts = [p for p in shlex.split(arguments) if not p.startswith("--")]
            *sources, target = parts
            for source in sources:
                assert (context / source).is_file(), f"COPY {source}: not in the context"
                destination = in_image(root, target)
                if target.endswith("/"):
                    destination.mkdir(parents=True, exist_ok=True)
                    destination = destination / source
                destination.parent.mkdir(parents=True, exist_ok=True)
                shutil.copyfile(context / source, destination)
        elif instruction == "RUN" and arguments.startswith("pip install "):
            words = shlex.split(arguments)[2:]
            words = [str(in_image(root, w)) if w.startswith("/") else w for w in words]
            fresh_venv.install(python, *words)
        elif instruction == "RUN":
            assert arguments.startswith(USER_SETUP), f"RUN {arguments}: not played here"
        elif instruction == "WORKDIR":
            workdir = in_image(root, arguments)
            workdir.mkdir(parents=True, exist_ok=True)
        elif instruction == "CMD":
            command = json.loads(arguments)
        else:
            assert instruction in ("USER", "EXPOSE"), f"{instruction}: not played here"
    return command, workdir, environment


@pytest.fixture(scope="module")
def wheel_built_once(tmp_path_factory):
    """publish's build_wheel answers with the wheel it built once for the run (the install
    test installs the same one): a wheel build costs seconds of CPU each time."""
    wheel = shared_wheel(tmp_path_factory)

    def build_wheel(source, directory):
        assert Path(source) == ROOT
        return Path(shutil.copy(wheel, directory))

    with pytest.MonkeyPatch.context() as patch:
        patch.setattr(publish, "build_wheel", build_wheel)
        yield


@pytest.fixture(scope="module")
def context(seed_catalog, tmp_path_factory, wheel_built_once):
    """The build context `paper-catalog publish` writes for the seed catalog."""
    return write_context(seed_catalog, tmp_path_factory.mktemp("publish") / "context").directory


def test_the_context_holds_what_the_dockerfile_copies(context):
    assert sorted(p.name for p in context.iterdir()) == sorted(
        ["Dockerfile", "constraints.txt", SERVED_NAME, next(context.glob("*.whl")).name]
    )
    # each file beside the Dockerfile is what one of its COPY instructions copies
    copies = [
        shlex.split(arguments)
        for instruction, arguments in instructions(context / "Dockerfile")
        if instruction == "COPY"
    ]
    for path in context.iterdir():
        if path.name != "Dockerfile":
            assert any(path.name in words for words in copies), path.name


@pytest.mark.slow  # the dry run and the Dockerfile checks stay in `make test`
def test_the_image_starts_and_serves_the_site_from_its_context(context, tmp_path):
    assert sorted(p.name for p in context.iterdir()) == sorted(
        ["Dockerfile", "constraints.txt", SERVED_NAME, next(context.glob("*.whl")).name]
    )
    root = tmp_path / "image"
    command, workdir, environment = play(context, root, tmp_path / "venv")
    assert command[:2] == ["sh", "-c"]
    start = command[2]
    assert shlex.split(start) == ["exec", *serve_command()]
    # the same start, on loopback: a test must not listen on every interface
    command = [*command[:2], start.replace("--host 0.0.0.0", "--host 127.0.0.1")]
    port = fresh_venv.free_port()
    # the platform sets PORT, replacing the image's default
    environment = fresh_venv.clean_environment(
        tmp_path / "venv" / "bin", **{**environment, "PORT": str(port)}
    )
    url = f"http://127.0.0.1:{port}"
    with fresh_venv.running(command, workdir, environment, url, tmp_path / "serve.log"):
        fresh_venv.check_served_site(url, workdir / SERVED_NAME)


def test_constraints_pin_the_tested_versions(context):
    pins = (context / "constraints.txt").read_text(encoding="utf-8").split()
    names = {pin.split("==")[0].lower() for pin in pins}
    assert {"datasette", "sqlite-utils", "click"} <= names
    assert all("==" in pin for pin in pins)
    assert not any(name.replace("_", "-") == "paper-catalog" for name in names)


def test_deploy_commands_build_from_the_context(tmp_path):
    cloudrun = deploy_command(tmp_path, "cloudrun", "papers", max_instances=7)
    assert cloudrun[:4] == ["gcloud", "run", "deploy", "papers"]
    assert cloudrun[cloudrun.index("--source") + 1] == str(tmp_path)
    assert cloudrun[cloudrun.index("--max-instances") + 1] == "7"
    fly = deploy_command(tmp_path, "fly", "papers")
    assert fly[:3] == ["flyctl", "deploy", str(tmp_path)]
    with pytest.raises(ValueError):
        deploy_command(tmp_path, "heroku", "papers")


def test_publish_dry_run_prints_the_deploy_and_the_dockerfile(
    seed_catalog, tmp_path, wheel_built_once
):
    context = tmp_path / "fly-context"
    result = CliRunner().invoke(
        cli,
        ["publish", "--db", str(seed_catalog), "--platform", "fly", "--name", "papers"]
        + ["--context", str(context), "--dry-run"],
    )
    assert result.exit_code == 0, result.output
    first, dockerfile = result.output.split("\n", 1)
    assert shlex.split(first)[:3] == ["flyctl", "deploy", str(context)]
    assert dockerfile == (context / "Dockerfile").read_text(encoding="utf-8")
    assert 'app = "papers"' in (context / "fly.toml").read_text(encoding="utf-8")


def test_publish_without_the_platform_tool_says_so(seed_catalog, tmp_path, monkeypatch):
    monkeypatch.setenv("PATH", str(tmp_path))
    result = CliRunner().invoke(cli, ["publish", "--db", str(seed_catalog)])
    assert result.exit_code == 1
    assert "needs gcloud" in result.output
