"""Where the site's files are: metadata.yml, and the installed plugin package with its templates
and static files.

In a checkout (and an editable install) metadata.yml is at the top of the repository; a wheel
carries it as the package `paper_catalog_site`, installed beside `loader` (pyproject.toml maps
the repository's top folder and `plugins/` onto it), so nothing depends on the folder a command
runs in. The plugins are the package `paper_catalog_site.plugins` in both: Datasette loads them
through the distribution's `datasette` entry points, never from a folder.
"""

import importlib.util
from pathlib import Path

SITE_PACKAGE = "paper_catalog_site"
PLUGIN_PACKAGE = "paper_catalog_site.plugins"
# the folder holding the `loader` package: a checkout's top folder, or site-packages
CONTAINER = Path(__file__).resolve().parents[2]


def find_site_root() -> Path:
    for root in (CONTAINER / SITE_PACKAGE, CONTAINER):
        if (root / "metadata.yml").is_file() and (root / "plugins").is_dir():
            return root
    raise FileNotFoundError(
        f"the site's metadata.yml and plugins/ are missing from {CONTAINER}; reinstall paper-catalog"
    )


def plugin_files() -> Path:
    """The folder of the installed plugin package (hook modules, templates/, static/)."""
    spec = importlib.util.find_spec(PLUGIN_PACKAGE)
    if spec is None or not spec.submodule_search_locations:
        raise FileNotFoundError(f"{PLUGIN_PACKAGE} is not installed; reinstall paper-catalog")
    return Path(next(iter(spec.submodule_search_locations)))


ROOT = find_site_root()
METADATA = ROOT / "metadata.yml"
