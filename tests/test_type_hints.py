"""Every public function and method of plugins/ and the typed parts of loader/ has its hints.

mypy checks the hints that are there; this says they are there. Public: a name without a leading
underscore, in a module and class whose names have none; a function nested in another is the
enclosing function's own business, and `self` and `cls` need no annotation.
"""

import ast
from pathlib import Path

import pytest

ROOT = Path(__file__).resolve().parent.parent
# the packages and modules typed so far: each one added here stays typed
TYPED = [
    "loader/cli.py",
    "loader/lifetime.py",
    "loader/records.py",
    "loader/read",
    "loader/rules",
    "loader/build",
    "loader/web",
    "loader/serve",
    "plugins",
]


def is_public(name: str) -> bool:
    return not name.startswith("_")


def is_public_module(path: Path) -> bool:
    """`__init__.py` is its package's public face; `_helpers.py` is private."""
    name = path.stem
    return is_public(name) or (name.startswith("__") and name.endswith("__"))


class MissingHints(ast.NodeVisitor):
    """file:line: what lacks a hint, for each public function and method of one module."""

    def __init__(self, shown: str) -> None:
        self.shown = shown
        self.missing: list[str] = []
        self.in_class = False

    def visit_ClassDef(self, node: ast.ClassDef) -> None:
        if not is_public(node.name):
            return
        in_class, self.in_class = self.in_class, True
        self.generic_visit(node)
        self.in_class = in_class

    def visit_FunctionDef(self, node: ast.FunctionDef | ast.AsyncFunctionDef) -> None:
        # no generic_visit: nested functions and classes are exempt
        if not is_public(node.name):
            return
        arguments = node.args
        positional = [*arguments.posonlyargs, *arguments.args]
        if self.in_class and positional and positional[0].arg in ("self", "cls"):
            positional = positional[1:]
        every = [*positional, *arguments.kwonlyargs, arguments.vararg, arguments.kwarg]
        unannotated = [a.arg for a in every if a is not None and a.annotation is None]
        where = f"{self.shown}:{node.lineno}: {node.name}"
        if unannotated:
            self.missing.append(f"{where}: no annotation on {', '.join(unannotated)}")
        if node.returns is None:
            self.missing.append(f"{where}: no return annotation")

    visit_AsyncFunctionDef = visit_FunctionDef


def missing_hints(source: str, shown: str) -> list[str]:
    checker = MissingHints(shown)
    checker.visit(ast.parse(source, filename=shown))
    return checker.missing


def typed_modules() -> list[Path]:
    modules = []
    for entry in TYPED:
        path = ROOT / entry
        modules += sorted(path.rglob("*.py")) if path.is_dir() else [path]
    return [module for module in modules if is_public_module(module)]


@pytest.mark.parametrize("entry", TYPED)
def test_typed_entry_exists(entry):
    # a renamed package would otherwise leave nothing checked, silently
    assert (ROOT / entry).exists()


def test_public_functions_have_type_hints():
    missing = []
    for module in typed_modules():
        shown = str(module.relative_to(ROOT))
        missing += missing_hints(module.read_text(encoding="utf-8"), shown)
    assert not missing, "public functions without type hints:\n" + "\n".join(missing)


def test_the_check_names_what_lacks_a_hint():
    source = """
def parse(path, lines: list[str]):
    def helper(x):  # nested: exempt
        return x
    return helper(path)


def _private(x):
    return x


async def fetch(db: str) -> None:
    pass


class Reader:
    def read(self, size) -> bytes:
        return b""

    def __init__(self, fp):  # a leading underscore: exempt
        self.fp = fp

    @classmethod
    def make(cls, *args, **kwargs: int) -> "Reader":
        return cls(None)


class _Hidden:
    def read(self, size):
        return size
"""
    assert missing_hints(source, "loader/example.py") == [
        "loader/example.py:2: parse: no annotation on path",
        "loader/example.py:2: parse: no return annotation",
        "loader/example.py:17: read: no annotation on size",
        "loader/example.py:24: make: no annotation on args",
    ]
