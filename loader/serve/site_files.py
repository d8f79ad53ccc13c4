"""Where the site's files are: metadata.yml, the plugin modules, their templates and static files.

In a checkout (and an editable install) they are `metadata.yml` and `plugins/` at the top of the
repository. A wheel carries the same two as the package `paper_catalog_site`, installed beside
`loader` (pyproject.toml maps the repository's top folder and `plugins/` onto it), so both
layouts are `<root>/metadata.yml` and `<root>/plugins/`, and nothing depends on the folder a
command runs in.
"""

from pathlib import Path

SITE_PACKAGE = "paper_catalog_site"
# the folder holding the `loader` package: a checkout's top folder, or site-packages
CONTAINER = Path(__file__).resolve().parents[2]


def find_site_root():
    for root in (CONTAINER / SITE_PACKAGE, CONTAINER):
        if (root / "metadata.yml").is_file() and (root / "plugins").is_dir():
            return root
    raise FileNotFoundError(
        f"the site's metadata.yml and plugins/ are missing from {CONTAINER}; reinstall paper-catalog"
    )


ROOT = find_site_root()
METADATA = ROOT / "metadata.yml"
PLUGINS_DIR = ROOT / "plugins"
TEMPLATES_DIR = PLUGINS_DIR / "templates"
STATIC_DIR = PLUGINS_DIR / "static"
