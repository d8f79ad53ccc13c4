"""Plugins live in plugins_dir, not a package: tests load a plugin file as Datasette does."""

import importlib.util
from pathlib import Path

PLUGINS = Path(__file__).resolve().parent.parent / "plugins"


def load_plugin(name):
    spec = importlib.util.spec_from_file_location(f"test_plugin_{name}", PLUGINS / f"{name}.py")
    module = importlib.util.module_from_spec(spec)
    spec.loader.exec_module(module)
    return module
