"""The shape of loader/: stages import downwards only, no module cycles, and building never loads
the web stack. The contracts live in pyproject.toml ([tool.importlinter]); these tests run them,
and show they catch the imports they exist to forbid."""

import ast
import json
import shutil
import subprocess
import sys
from pathlib import Path

import grimp
import pytest

ROOT = Path(__file__).resolve().parent.parent
WEB_STACK = ("datasette", "uvicorn", "starlette", "jinja2", "asgi_gzip", "httpx")
LINT_IMPORTS = [
    sys.executable,
    "-c",
    "import sys; from importlinter.cli import lint_imports_command; sys.exit(lint_imports_command())",
]


def lint_imports(project: Path) -> subprocess.CompletedProcess:
    """import-linter on a project folder: its pyproject.toml's contracts over its `loader`."""
    return subprocess.run(
        LINT_IMPORTS,
        check=False,
        cwd=project,
        env={"PYTHONPATH": str(project), "PATH": "/usr/bin:/bin"},
        capture_output=True,
        text=True,
        timeout=120,
    )


def test_contracts_are_kept():
    result = lint_imports(ROOT)
    assert result.returncode == 0, result.stdout + result.stderr
    assert "0 broken" in result.stdout


@pytest.mark.parametrize(
    "module, statement",
    [
        # a rule reaching for the writer
        ("loader/rules/names.py", "from loader.build import catalog"),
        # a build module loading the web stack, inside a function as much as at the top
        ("loader/build/prepare.py", "def late():\n    import datasette.app\n"),
        # reading climbing back to the build
        ("loader/read/lines.py", "import loader.build.prepare"),
    ],
)
def test_contracts_fail_on_an_upward_import(tmp_path, module, statement):
    project = tmp_path / "project"
    project.mkdir()
    shutil.copy(ROOT / "pyproject.toml", project)
    shutil.copytree(
        ROOT / "loader", project / "loader", ignore=shutil.ignore_patterns("__pycache__")
    )
    path = project / module
    path.write_text(path.read_text(encoding="utf-8") + "\n" + statement + "\n", encoding="utf-8")
    result = lint_imports(project)
    assert result.returncode != 0
    assert "BROKEN" in result.stdout


def module_cycles(graph: grimp.ImportGraph) -> list[list[str]]:
    """Every cycle a depth-first walk of loader's module imports meets (in-function ones too)."""
    modules = sorted(m for m in graph.modules if m.startswith("loader"))
    imports = {
        m: sorted(i for i in graph.find_modules_directly_imported_by(m) if i.startswith("loader."))
        for m in modules
    }
    state: dict[str, str] = {}
    cycles: list[list[str]] = []

    def walk(module: str, path: list[str]) -> None:
        state[module] = "open"
        path.append(module)
        for imported in imports.get(module, []):
            if state.get(imported) == "open":
                cycles.append(path[path.index(imported) :] + [imported])
            elif imported not in state:
                walk(imported, path)
        path.pop()
        state[module] = "done"

    for module in modules:
        if module not in state:
            walk(module, [])
    return cycles


def test_no_module_imports_itself_in_a_cycle():
    # a package importing its own modules (loader.build -> loader.build.catalog) is not a
    # cycle between modules; grimp lists package __init__s as modules too
    graph = grimp.build_graph("loader")
    assert module_cycles(graph) == []


def test_the_cycle_check_sees_imports_inside_functions():
    graph = grimp.build_graph("loader")
    graph.add_import(importer="loader.rules.names", imported="loader.rules.merge")
    assert module_cycles(graph)


BUILD_AND_CHECK = """
import json, sys
from click.testing import CliRunner
from loader.cli import cli
runner = CliRunner()
built = runner.invoke(cli, ["build", sys.argv[1], "--db", sys.argv[2]])
checked = runner.invoke(cli, ["check", sys.argv[1]])
loaded = sorted({m.split(".")[0] for m in sys.modules} & set(sys.argv[3].split(",")))
print(json.dumps([built.exit_code, checked.exit_code, loaded]))
"""


def test_build_and_check_load_nothing_of_the_web_stack(tmp_path):
    result = subprocess.run(
        [
            sys.executable,
            "-c",
            BUILD_AND_CHECK,
            str(ROOT / "seeds"),
            str(tmp_path / "c.db"),
            ",".join(WEB_STACK),
        ],
        check=False,
        capture_output=True,
        text=True,
        timeout=120,
    )
    assert result.returncode == 0, result.stderr
    built, checked, loaded = json.loads(result.stdout.splitlines()[-1])
    assert (built, checked) == (0, 0)
    assert loaded == []


def loader_imports(path: Path) -> list[tuple[int, str]]:
    """(line, module) of every import of a loader module in a file, in functions too."""
    found = []
    for node in ast.walk(ast.parse(path.read_text(encoding="utf-8"))):
        if isinstance(node, ast.Import):
            found += [(node.lineno, alias.name) for alias in node.names]
        elif isinstance(node, ast.ImportFrom) and node.level == 0 and node.module:
            found.append((node.lineno, node.module))
    return [(line, name) for line, name in found if name.split(".")[0] == "loader"]


def test_plugins_import_only_the_web_stage_of_loader():
    outside = [
        f"plugins/{path.name}:{line} imports {name}"
        for path in sorted((ROOT / "plugins").glob("*.py"))
        for line, name in loader_imports(path)
        if not (name == "loader.web" or name.startswith("loader.web."))
    ]
    assert outside == []
