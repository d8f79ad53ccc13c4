"""Datasette's own test suite, run twice in one fresh virtualenv: once as stock Datasette, once
with paper-catalog's plugins registered. The tests that fail only with the plugins are what our
plugins change in a Datasette that is not ours; docs/datasette.md lists and explains them.

Not a benchmark and never part of `make test`: it needs Datasette's test suite, which its wheel
does not ship. Give it a folder holding Datasette's `tests/` (the 0.65.x branch's conftest,
fixtures and plugins, with the 0.65.5 sdist's test files over them) and `docs/` (its conftest
reads them):

    python bench/peer_check.py --suite /path/to/suite --work /tmp/peer

Datasette skips entry-point plugins while its tests run (sys._called_from_test), so the
registration is a small pytest plugin that registers paper-catalog's `datasette` entry points
itself, exactly the modules `pip install` registers in any Datasette.
"""

import argparse
import subprocess
import sys
from pathlib import Path
from xml.etree import ElementTree

ROOT = Path(__file__).resolve().parent.parent
DATASETTE = "datasette==0.65.5"
TEST_REQUIREMENTS = [
    "pytest>=5.2.2",
    "pytest-xdist>=2.2.1",
    "pytest-asyncio>=0.17,<0.24",
    "beautifulsoup4>=4.8.1",
    "black==24.4.2",
    "blacken-docs==1.12.1",
    "pytest-timeout>=1.4.2",
    "trustme>=0.7",
    "cogapp>=3.3.0",
]
REGISTER = '''"""pytest plugin: paper-catalog's datasette entry points, registered as pip would."""
import importlib.metadata

from datasette.plugins import pm

for entry_point in importlib.metadata.entry_points(group="datasette"):
    ours = entry_point.dist is not None and entry_point.dist.name == "paper-catalog"
    # importing datasette.plugins before Datasette's conftest may have registered them already
    if ours and pm.get_plugin(entry_point.name) is None:
        pm.register(entry_point.load(), name=entry_point.name)
'''


def create_venv(work: Path) -> Path:
    venv = work / "venv"
    if not (venv / "bin" / "python").exists():
        subprocess.run([sys.executable, "-m", "venv", str(venv)], check=True)
    python = venv / "bin" / "python"
    pip = [str(python), "-m", "pip", "install", "--quiet"]
    subprocess.run([*pip, DATASETTE, *TEST_REQUIREMENTS], check=True)
    subprocess.run([*pip, "--force-reinstall", "--no-deps", str(ROOT)], check=True)
    subprocess.run([*pip, str(ROOT)], check=True)
    return python


def run_suite(python: Path, suite: Path, work: Path, name: str, plugins: bool) -> Path:
    report = work / f"{name}.xml"
    command = [str(python), "-m", "pytest", "-q", "-n", "2", "-p", "no:cacheprovider"]
    command += ["--timeout", "120", f"--junitxml={report}", "tests"]
    if plugins:
        (work / "register_paper_catalog.py").write_text(REGISTER, encoding="utf-8")
        command[3:3] = ["-p", "register_paper_catalog"]
    environment = {"PATH": f"{python.parent}:/usr/bin:/bin", "PYTHONPATH": str(work)}
    subprocess.run(command, cwd=suite, env=environment, check=False)
    return report


def failures(report: Path) -> dict[str, str]:
    """test id -> the first line of its failure or error, from a JUnit XML report."""
    failed = {}
    for case in ElementTree.parse(report).iter("testcase"):
        for outcome in ("failure", "error"):
            element = case.find(outcome)
            if element is not None:
                message = (element.get("message") or "").splitlines()
                failed[f"{case.get('classname')}::{case.get('name')}"] = (
                    message[0] if message else ""
                )
    return failed


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--suite", type=Path, required=True)
    parser.add_argument("--work", type=Path, default=Path("/tmp/peer"))
    arguments = parser.parse_args()
    arguments.work.mkdir(parents=True, exist_ok=True)
    python = create_venv(arguments.work)
    stock = failures(run_suite(python, arguments.suite, arguments.work, "stock", plugins=False))
    ours = failures(run_suite(python, arguments.suite, arguments.work, "with-plugins", True))
    print(f"stock Datasette: {len(stock)} failing; with paper-catalog's plugins: {len(ours)}")
    for test in sorted(set(ours) - set(stock)):
        print(f"  only with the plugins: {test}: {ours[test][:160]}")
    for test in sorted(set(stock) - set(ours)):
        print(f"  only without them: {test}")


if __name__ == "__main__":
    main()
