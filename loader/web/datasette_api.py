"""The few Datasette calls spelled differently in 0.65 and in 1.0, one function each, so the
rest of the site reads the same under both (pyproject.toml allows either).
"""

from typing import TYPE_CHECKING

from datasette.version import __version__ as INSTALLED_VERSION

if TYPE_CHECKING:  # datasette.app loads the installed plugins: never as a plugin loads
    from datasette.app import Datasette
    from jinja2 import Environment


def is_datasette_1(version: str = INSTALLED_VERSION) -> bool:
    """Datasette 1.0 or one of its alphas (1.0a41): configuration apart from metadata,
    permissions as actions on resources."""
    return int(version.split(".", 1)[0]) >= 1


def jinja_environment(datasette: "Datasette") -> "Environment":
    """The Jinja environment Datasette renders every template with: 1.0's
    get_jinja_environment() (made as the instance is), 0.65's jinja_env attribute."""
    if is_datasette_1():
        return datasette.get_jinja_environment()
    return datasette.jinja_env
