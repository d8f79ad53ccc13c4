"""The installed plugin package's modules (paper_catalog_site.plugins), the very modules the
`datasette` entry points registered, for tests that call a hook or helper directly."""

import importlib

PACKAGE = "paper_catalog_site.plugins"


def load_plugin(name):
    return importlib.import_module(f"{PACKAGE}.{name}")
