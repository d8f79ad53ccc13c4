"""The site's Content-Security-Policy: scripts, styles, images, forms and frames only from the
site itself, and the inline scripts of the templates it serves, by their SHA-256.

The site's own pages load their scripts from files (plugins/static/); Datasette's templates
hold a few inline scripts (closing open menus, the SQL editor, a table page's facet switch).
Their hashes are read when a worker starts from the templates its Jinja environment serves
(Datasette's own, the site's edits of them, the plugins'), so the policy always allows exactly
the scripts those templates write and nothing an attacker could add to a page. A script whose
text depends on a page variable is hashed for each value that variable can take
(SCRIPT_VARIABLES); a variable not listed there stops the start, as a coupling check would.
Datasette 1.0's SQL editor writes the database's tables and columns into its script
(`table_columns`): hashed for each database as the started Datasette knows it, and for none.

Styles: Datasette writes inline `style=` attributes (a database's colour, a textarea's height)
and `<style>` blocks made of each page's column names, so inline styles stay allowed. CSS cannot
run script, and with every other source limited to the site itself it cannot load anything from
elsewhere either.
"""

import base64
import hashlib
import itertools
import re
from collections.abc import Iterable, Iterator, Mapping
from typing import TYPE_CHECKING

from jinja2 import Environment, StrictUndefined, TemplateNotFound, meta

from loader.web.datasette_api import INSTALLED_VERSION, is_datasette_1, jinja_environment

if TYPE_CHECKING:  # datasette.app loads the installed plugins: never as a plugin loads
    from datasette.app import Datasette

# a <script> element of a template and its text; its attributes may hold Jinja tags (with `>`)
INLINE_SCRIPT = re.compile(
    r"<script(?P<attributes>(?:\{%.*?%\}|\{\{.*?\}\}|[^>])*)>(?P<text>.*?)</script>", re.DOTALL
)
# src= after a space, a quote or a Jinja tag; not data-src=
SOURCE_ATTRIBUTE = re.compile(r"(?<![\w-])src\s*=", re.IGNORECASE)
# the values a page variable used inside an inline script can take; an empty tuple: the script
# is never written with a value (extra_body_script scripts, which no plugin of the site adds)
Values = Mapping[str, tuple[object, ...]]
SCRIPT_VARIABLES: Values = {
    # table.html: Datasette writes the allow_facet setting as a JavaScript boolean
    "datasette_allow_facet": ("true", "false"),
    # base.html: the scripts of plugins' extra_body_script hooks
    "body_script": (),
}
# Datasette 1.0's templates write each page's own data (its rows' columns, its JSON for the
# table and database scripts) into inline scripts: no policy fixed at start can hash those, so
# they are left out of it and the browser does not run them (the column menus and chooser of
# a stock 1.0 table page; the site's own pages need none of them). The debug pages' scripts
# (`urls`, `actions`, `permissions`) are the root actor's only.
PAGE_DATA_VARIABLES = frozenset(
    {
        "table_page_data",
        "database_page_data",
        "all_columns",
        "display_columns",
        "primary_keys",
        "set_column_type_ui",
        "urls",
        "actions",
        "permissions",
        "has_debug_permission",
    }
)
# what Datasette 1.0's SQL editor is given for a database's schema (its `_table_columns`):
# the same query of its internal database, so the same rows in the same order
CATALOG_COLUMNS_SQL = "select table_name, name from catalog_columns where database_name = ?"
# everything but scripts and styles: the site itself; images also from data: URLs (Datasette's
# stylesheets draw their icons with them)
FIXED_DIRECTIVES = (
    "default-src 'self'",
    "style-src 'self' 'unsafe-inline'",
    "img-src 'self' data:",
    "object-src 'none'",
    "base-uri 'none'",
    "form-action 'self'",
    "frame-ancestors 'none'",
)


class UnhashableScript(RuntimeError):
    """An inline script of a served template depends on a variable whose values are unknown."""


def script_hash(text: str) -> str:
    """The CSP source expression of an inline script's exact text."""
    digest = hashlib.sha256(text.encode("utf-8")).digest()
    return f"'sha256-{base64.b64encode(digest).decode('ascii')}'"


def inline_scripts(source: str) -> Iterator[str]:
    """The text of each inline script of a template's source, Jinja markup still in it."""
    for match in INLINE_SCRIPT.finditer(source):
        if not SOURCE_ATTRIBUTE.search(match["attributes"]):
            yield match["text"]


def rendered_texts(name: str, text: str, values: Values = SCRIPT_VARIABLES) -> list[str]:
    """Every text the script `text` of template `name` can be rendered as, its variables
    taking the `values` given for them."""
    if "{{" not in text and "{%" not in text and "{#" not in text:
        return [text]
    # the defaults of Datasette's environment, keeping the text's last line end as a page does
    environment = Environment(
        autoescape=True, keep_trailing_newline=True, undefined=StrictUndefined
    )
    variables = sorted(meta.find_undeclared_variables(environment.parse(text)))
    if is_datasette_1() and PAGE_DATA_VARIABLES.intersection(variables):
        return []
    unknown = [variable for variable in variables if variable not in values]
    if unknown:
        raise UnhashableScript(
            f"{name}: an inline script depends on {', '.join(unknown)}, whose values the "
            "Content-Security-Policy cannot know (loader/web/content_policy.py SCRIPT_VARIABLES)"
        )
    template = environment.from_string(text)
    choices = [values[variable] for variable in variables]
    return [template.render(dict(zip(variables, values))) for values in itertools.product(*choices)]


def template_sources(environment: Environment) -> Iterator[tuple[str, str]]:
    """(name, source) of every template the environment serves, edited ones included."""
    loader = environment.loader
    if loader is None:
        return
    for name in loader.list_templates():
        try:
            source, _, _ = loader.get_source(environment, name)
        except TemplateNotFound:
            continue
        yield name, source


def inline_script_hashes(
    templates: Iterable[tuple[str, str]], values: Values = SCRIPT_VARIABLES
) -> list[str]:
    """The sorted, distinct hashes of every text any inline script of `templates` can take."""
    hashes: set[str] = set()
    for name, source in templates:
        for text in inline_scripts(source):
            rendered = rendered_texts(name, text, values)
            hashes.update(script_hash(script) for script in rendered)
    return sorted(hashes)


async def script_values(datasette: "Datasette") -> Values:
    """SCRIPT_VARIABLES, and under Datasette 1.0 what its templates add: each database's
    `table_columns` as its SQL editor is given them (and none: `{}`, where the actor may not
    run SQL), and its version."""
    if not is_datasette_1():
        return SCRIPT_VARIABLES
    await datasette.refresh_schemas()
    internal = datasette.get_internal_database()
    schemas: list[object] = [{}]
    for name, db in datasette.databases.items():
        columns: dict[str, list[str]] = {}
        for table, column in (await internal.execute(CATALOG_COLUMNS_SQL, [name])).rows:
            columns.setdefault(table, []).append(column)
        for view in await db.view_names():
            columns[view] = []
        schemas.append(columns)
    return {
        **SCRIPT_VARIABLES,
        "table_columns": tuple(schemas),
        # base.html writes the version for datasette-manager.js; an error page is rendered
        # without it (handle_exception's context), so empty
        "datasette_version": (INSTALLED_VERSION, ""),
    }


async def content_security_policy(datasette: "Datasette") -> str:
    """The policy of the served site, from the templates of its (started) Datasette."""
    environment = jinja_environment(datasette)
    hashes = inline_script_hashes(template_sources(environment), await script_values(datasette))
    scripts = " ".join(["script-src 'self'", *hashes])
    return "; ".join([FIXED_DIRECTIVES[0], scripts, *FIXED_DIRECTIVES[1:]])
