"""Every place the site relies on Datasette's internals, in one module: each monkeypatch, copied
view and patched template, the upstream file it mirrors, and a check that upstream still is
what the copy or patch was written against.

The checks run when a worker starts: `paper-catalog serve` refuses to start when one fails
under the Datasette version they were written for (DATASETTE_VERSION, pinned in
pyproject.toml). Under any other version, and in any Datasette other than `paper-catalog
serve` whose checks fail, the patches stay off and a warning is logged: the site then serves
Datasette's own templates, views and code paths, slower and plainer but correct.

What is coupled (each entry of UPSTREAM names our code, Datasette's file and what is checked):

- monkeypatches of the served app (patch_served_datasette): Request.args kept per request,
  Datasette._table_permission_allows answers kept, refresh_schemas() once, a Database's schema
  look-ups kept, Database.execute wrapped (the permission check's name statement kept, a plain
  search counted from the index), the table view's render_cell hook called without pluggy's
  round trip when one plugin implements it, its query string quoted once for its links (a
  small copy of path_with_replaced_args), all checked by the SHA-256 of the upstream source;
- copied views: plugins/csv_stream.py (DataView.as_csv, with formula-safe cells),
  inspect_data (the `datasette inspect` command's inspect_(), run in the serving process),
  plugins/pages.py (RowView.data, for the paper and author pages), plugins/facets.py (the
  array and column facets' facet_results), plugins/private_paths.py
  (Datasette._connected_databases and _threads), checked the same way;
- patched templates (PATCHES): edits of Datasette's own templates, each text found exactly once
  in the upstream file, served only on the catalog's pages (install_template_patches), after a
  user's --template-dir, checked by applying every edit to the upstream file.
"""

import asyncio
import functools
import hashlib
import importlib
import inspect
import json
import logging
from collections.abc import Callable, Hashable
from dataclasses import dataclass
from pathlib import Path
from typing import TYPE_CHECKING, Any
from urllib.parse import parse_qsl, urlencode

import datasette
import numpy as np
import numpy.typing as npt
from datasette.database import Results
from datasette.utils.asgi import Request
from datasette.version import __version__ as INSTALLED_VERSION
from jinja2 import (
    BaseLoader,
    ChoiceLoader,
    Environment,
    FileSystemLoader,
    PrefixLoader,
    TemplateNotFound,
)

from loader.web import id_order
from loader.web.facet_counts import matched_rowids
from loader.web.index_only import FirstPage, first_page, index_only, keys_first
from loader.web.request_matches import keep_matches, kept_matches
from loader.web.time_limit import within_time_limit

if TYPE_CHECKING:  # datasette.app loads the installed plugins: never as a plugin loads
    from datasette.app import Datasette
    from datasette.database import Database

DATASETTE_VERSION = "0.65.5"
DATASETTE_TEMPLATES = Path(datasette.__file__).parent / "templates"
log = logging.getLogger("paper_catalog")


class CouplingMismatch(RuntimeError):
    """Datasette's code is no longer what a patch or copy was written against."""


@dataclass(frozen=True)
class Upstream:
    """One piece of Datasette's internals we depend on."""

    ours: str  # our code that depends on it
    upstream: str  # Datasette's file, relative to its package
    target: str  # "module:qualified.name" whose source is checked
    sha256: str  # the first 16 hex digits of the SHA-256 of that source, as written against


UPSTREAM = (
    # monkeypatches of the served app (patch_served_datasette)
    Upstream(
        "remember_request_args",
        "utils/asgi.py",
        "datasette.utils.asgi:Request.args",
        "a71c1eb5756610da",
    ),
    Upstream(
        "remember_table_permissions",
        "app.py",
        "datasette.app:Datasette._table_permission_allows",
        "b165e240f8c461d4",
    ),
    Upstream(
        "refresh_schemas_once",
        "app.py",
        "datasette.app:Datasette.refresh_schemas",
        "1ed61152e4156174",
    ),
    # NAME_SQL: the statement permission_allowed() runs, kept by remember_schema_lookups
    Upstream(
        "remember_schema_lookups",
        "app.py",
        "datasette.app:Datasette.permission_allowed",
        "d727aef2f166917c",
    ),
    Upstream(
        "remember_schema_lookups",
        "database.py",
        "datasette.database:Database.table_exists",
        "1d78756a69e6b9db",
    ),
    Upstream(
        "remember_schema_lookups",
        "database.py",
        "datasette.database:Database.get_table_definition",
        "f607b63f290cf689",
    ),
    Upstream(
        "remember_schema_lookups",
        "database.py",
        "datasette.database:Database.get_view_definition",
        "d4fcb542175a7cf4",
    ),
    Upstream(
        "remember_schema_lookups",
        "database.py",
        "datasette.database:Database.fts_table",
        "eb5dded14ff85449",
    ),
    Upstream(
        "remember_schema_lookups",
        "database.py",
        "datasette.database:Database.table_columns",
        "11c1998c5927a394",
    ),
    Upstream(
        "remember_schema_lookups",
        "database.py",
        "datasette.database:Database.table_column_details",
        "3e50f576659e08fb",
    ),
    Upstream(
        "remember_schema_lookups",
        "database.py",
        "datasette.database:Database.primary_keys",
        "8f722709b37dcb3f",
    ),
    Upstream(
        "remember_schema_lookups",
        "database.py",
        "datasette.database:Database.foreign_keys_for_table",
        "e396d1883ced8060",
    ),
    Upstream(
        "remember_schema_lookups",
        "database.py",
        "datasette.database:Database.get_all_foreign_keys",
        "b15efa97ea40e95a",
    ),
    Upstream(
        "count_searches_from_the_index",
        "database.py",
        "datasette.database:Database.execute",
        "ca06bc52502e3eb7",
    ),
    # keys_first() rewrites the page of rows of a table search in key order (its statement)
    Upstream(
        "count_searches_from_the_index",
        "views/table.py",
        "datasette.views.table:TableView._data_traced",
        "c1c428a608b33c2b",
    ),
    # a count from the matches the request kept (request_matches.py) is answered as Results
    # (rows, truncated, description), as Database.execute answers
    Upstream(
        "count_searches_from_the_index",
        "database.py",
        "datasette.database:Results",
        "09a1dd004188df41",
    ),
    # index_only() rewrites the count statement of the table search clause (filters.py)
    Upstream(
        "count_searches_from_the_index",
        "filters.py",
        "datasette.filters:search_filters",
        "8cba30659aee01fb",
    ),
    # Datasette's last-resort error handler prints with rich, outside an except block on a 404
    Upstream(
        "print_no_rich_tracebacks",
        "handle_exception.py",
        "datasette.handle_exception:handle_exception",
        "45b9c60d62bbdee3",
    ),
    # call_render_cell_directly: the table page's cells ask `pm.hook.render_cell(...)`, by
    # keyword, of views/table.py's own `pm`, and take its non-None answers in order
    Upstream(
        "call_render_cell_directly",
        "views/table.py",
        "datasette.views.table:display_columns_and_rows",
        "8ff744583ce0f483",
    ),
    # reuse_query_pairs: the table page's sort links and its own address with arguments replaced
    Upstream(
        "reuse_query_pairs",
        "utils/__init__.py",
        "datasette.utils:path_with_replaced_args",
        "2f6370d1f4b22672",
    ),
    # install_template_patches: the Jinja loaders Datasette's constructor makes
    Upstream(
        "install_template_patches", "app.py", "datasette.app:Datasette.__init__", "258fbfd6966f63b9"
    ),
    # copied views
    Upstream(
        "plugins/csv_stream.py FastCsv.as_csv",
        "views/base.py",
        "datasette.views.base:DataView.as_csv",
        "3db4ba04175edf96",
    ),
    Upstream(
        "plugins/pages.py PageData.page_data",
        "views/row.py",
        "datasette.views.row:RowView.data",
        "52c9d86cc7e9d898",
    ),
    # the row's statement, as RowView.data makes it
    Upstream(
        "plugins/pages.py PageData.page_data",
        "views/table.py",
        "datasette.views.table:_sql_params_pks",
        "3ce2d8895dc64ad8",
    ),
    Upstream(
        "plugins/facets.py LinkFacet.facet_results",
        "facets.py",
        "datasette.facets:ArrayFacet.facet_results",
        "fb2619791a892315",
    ),
    Upstream(
        "plugins/facets.py PresentFacet.facet_results",
        "facets.py",
        "datasette.facets:ColumnFacet.facet_results",
        "00928d1c82a97035",
    ),
    Upstream(
        "plugins/private_paths.py public_databases",
        "app.py",
        "datasette.app:Datasette._connected_databases",
        "f89031d835030338",
    ),
    Upstream(
        "plugins/private_paths.py public_threads",
        "app.py",
        "datasette.app:Datasette._threads",
        "c58d482bccb0625b",
    ),
    Upstream(
        "inspect_data",
        "cli.py",
        "datasette.cli:inspect_",
        "f9b38fcf795e8d5c",
    ),
)

# the edits of Datasette's templates (install_template_patches serves them on the catalog's
# pages only)
PATCHES = {
    "base.html": [
        ("<html>", '<html lang="en">'),
        (
            '<body class="{% block body_class %}{% endblock %}">\n',
            (
                '<body class="{% block body_class %}{% endblock %}">\n'
                '<a class="skip-link" href="#main">Skip to content</a>\n'
                # a page's own skip links (the search page's to its filters)
                "{% block skip_links %}{% endblock %}"
            ),
        ),
        (
            "{% endblock %}</nav></header>",
            '{% endblock %}{% include "_header_search.html" ignore missing %}</nav></header>',
        ),
        ('<section class="content">', '<main id="main" class="content" tabindex="-1">'),
        ("{% endblock %}\n</section>", "{% endblock %}\n</main>"),
    ],
    "database.html": [
        ("<h3>Custom SQL query</h3>", '<h2 class="header3">Custom SQL query</h2>'),
    ],
    "_codemirror_foot.html": [
        # the editor's own input has no label (axe: label, critical): CodeMirror names it
        ("lineWrapping: true,", 'lineWrapping: true,\n          screenReaderLabel: "SQL query",'),
    ],
    "_facet_results.html": [
        # a box's values written in Python (plugins/result_rows.py), as the table's rows
        (
            """                {% for facet_value in facet_info.results %}
                    {% if not facet_value.selected %}
                        <li><a href="{{ facet_value.toggle_url }}">{{ (facet_value.label | string()) or "-" }}</a> {{ "{:,}".format(facet_value.count) }}</li>
                    {% else %}
                        <li>{{ facet_value.label or "-" }} &middot; {{ "{:,}".format(facet_value.count) }} <a href="{{ facet_value.toggle_url }}" class="cross">&#x2716;</a></li>
                    {% endif %}
                {% endfor %}
""",
            "                {{ facet_info.results|facet_values }}\n",
        ),
        # facets in one fixed order (Datasette sorts them by how many values each shows, so
        # blocks jump after a click), headed in words: "Authors", not "authors (array)"
        (
            "{% for facet_info in sorted_facet_results %}",
            "{% for facet_info in sorted_facet_results|in_facet_order %}",
        ),
        (
            (
                '<strong>{{ facet_info.name }}{% if facet_info.type != "column" %} '
                "({{ facet_info.type }}){% endif %}"
            ),
            "<strong>{{ facet_info.name|facet_title }}",
        ),
    ],
    "_table.html": [
        # the headers written in Python (plugins/result_rows.py), the same bytes: each of a
        # table page's ~12 headers was ~20 awaited Jinja steps and two calls into the context
        (
            """{% for column in display_columns %}
                    <th {% if column.description %}data-column-description="{{ column.description }}" {% endif %}class="col-{{ column.name|to_css_class }}" scope="col" data-column="{{ column.name }}" data-column-type="{{ column.type.lower() }}" data-column-not-null="{{ column.notnull }}" data-is-pk="{% if column.is_pk %}1{% else %}0{% endif %}">
                        {% if not column.sortable %}
                            {{ column.name }}
                        {% else %}
                            {% if column.name == sort %}
                                <a href="{{ fix_path(path_with_replaced_args(request, {'_sort_desc': column.name, '_sort': None, '_next': None})) }}" rel="nofollow">{{ column.name }}&nbsp;▼</a>
                            {% else %}
                                <a href="{{ fix_path(path_with_replaced_args(request, {'_sort': column.name, '_sort_desc': None, '_next': None})) }}" rel="nofollow">{{ column.name }}{% if column.name == sort_desc %}&nbsp;▲{% endif %}</a>
                            {% endif %}
                        {% endif %}
                    </th>
                {% endfor %}""",
            "{{ display_columns|table_headers }}",
        ),
        # the rows written in Python (plugins/result_rows.py): the same cells, without an
        # awaited Jinja loop step for each of a table page's 400
        (
            """        {% for row in display_rows %}
            <tr>
                {% for cell in row %}
                    <td class="col-{{ cell.column|to_css_class }} type-{{ cell.value_type }}">{{ cell.value }}</td>
                {% endfor %}
            </tr>
        {% endfor %}
""",
            "        {{ display_rows|table_rows }}\n",
        ),
    ],
    "table.html": [
        # the row count heads the page's content under its h1: an h3 there skips a level
        # (axe: heading-order); Datasette's header3 class keeps its look
        (
            "<h3>{% if filtered_table_rows_count or filtered_table_rows_count == 0 %}",
            '<h2 class="header3">{% if filtered_table_rows_count or filtered_table_rows_count == 0 %}',
        ),
        (
            "{% if human_description_en %}{{ human_description_en }}{% endif %}\n    </h3>",
            "{% if human_description_en %}{{ human_description_en }}{% endif %}\n    </h2>",
        ),
        (
            '<dl class="column-descriptions">',
            (
                '<details class="column-notes"><summary>Column notes</summary>\n'
                '<dl class="column-descriptions">'
            ),
        ),
        ("</dl>\n{% endif %}", "</dl>\n</details>\n{% endif %}"),
        (
            '<select name="_filter_column_{{ loop.index }}">',
            '<select name="_filter_column_{{ loop.index }}" aria-label="Filter column">',
        ),
        (
            '<select name="_filter_op_{{ loop.index }}">',
            '<select name="_filter_op_{{ loop.index }}" aria-label="Filter operation">',
        ),
        (
            'class="filter-value" value="{{ value }}">',
            'class="filter-value" value="{{ value }}" aria-label="Filter value">',
        ),
        (
            '<select name="_filter_column">',
            '<select name="_filter_column" aria-label="Filter column">',
        ),
        ('<select name="_filter_op">', '<select name="_filter_op" aria-label="Filter operation">'),
        # the filter form's lists written in Python (plugins/template_patches.py), the same
        # bytes: ~300 awaited Jinja steps a page
        (
            """{% for key, display, no_argument in filters.lookups() %}
                        <option value="{{ key }}{% if no_argument %}__1{% endif %}"{% if key == lookup %} selected{% endif %}>{{ display }}</option>
                    {% endfor %}""",
            "{{ filters.lookups()|lookup_options(lookup, 20) }}",
        ),
        (
            """{% for key, display, no_argument in filters.lookups() %}
                    <option value="{{ key }}{% if no_argument %}__1{% endif %}"{% if key == lookup %} selected{% endif %}>{{ display }}</option>
                {% endfor %}""",
            "{{ filters.lookups()|lookup_options(lookup, 16) }}",
        ),
        (
            """{% for column in filter_columns %}
                      <option>{{ column }}</option>
                {% endfor %}""",
            "{{ filter_columns|column_options }}",
        ),
        (
            """{% for column in display_columns %}
                        {% if column.sortable %}
                            <option value="{{ column.name }}"{% if column.name == sort or column.name == sort_desc %} selected{% endif %}>Sort by {{ column.name }}</option>
                        {% endif %}
                    {% endfor %}""",
            "{{ display_columns|sort_options(sort, sort_desc) }}",
        ),
        (
            """{% for key, value in form_hidden_args %}
            <input type="hidden" name="{{ key }}" value="{{ value }}">
        {% endfor %}""",
            "{{ form_hidden_args|hidden_inputs(8) }}",
        ),
        (
            """{% for key, value in url_csv_hidden_args %}
                    <input type="hidden" name="{{ key }}" value="{{ value }}">
                {% endfor %}""",
            "{{ url_csv_hidden_args|hidden_inputs(16) }}",
        ),
        (
            '<input type="text" name="_filter_value" class="filter-value">',
            '<input type="text" name="_filter_value" class="filter-value" aria-label="Filter value">',
        ),
        (
            '<select name="_sort" id="sort_by">',
            '<select name="_sort" id="sort_by" aria-label="Sort by">',
        ),
    ],
    "query.html": [
        # as table.html: the headings under the page's h1 are h2s, styled as Datasette's h3s
        (
            "<h3>Custom SQL query{% if display_rows %}",
            '<h2 class="header3">Custom SQL query{% if display_rows %}',
        ),
        ("    {% endif %}</h3>\n    {% if error %}", "    {% endif %}</h2>\n    {% if error %}"),
        ("<h3>Query parameters</h3>", '<h2 class="header3">Query parameters</h2>'),
        # the rows written in Python (plugins/result_rows.py): one call instead of an awaited
        # Jinja loop step for each of a search result's 600 cells
        (
            """    {% for row in display_rows %}
        <tr>
            {% for column, td in zip(columns, row) %}
                <td class="col-{{ column|to_css_class }}">{{ td }}</td>
            {% endfor %}
        </tr>
    {% endfor %}
""",
            "    {{ display_rows|result_rows(columns) }}\n",
        ),
    ],
    "index.html": [
        # the search box, links and area chart after the description (_catalog_home.html); the
        # per-database lines stay Datasette's
        (
            '{% block description_source_license %}{% include "_description_source_license.html" %}{% endblock %}',
            (
                '{% block description_source_license %}{% include "_description_source_license.html" %}'
                '{% include "_catalog_home.html" %}{% endblock %}'
            ),
        ),
    ],
}


def resolve(target: str) -> Callable:
    module_name, _, qualified = target.partition(":")
    found: Any = importlib.import_module(module_name)
    for part in qualified.split("."):
        found = getattr(found, part)
    if isinstance(found, property):
        found = found.fget
    # our own replacement (remember_request_args) names the upstream function it wraps
    return inspect.unwrap(found)


def source_digest(target: str) -> str:
    """The first 16 hex digits of the SHA-256 of an upstream function's source."""
    source = inspect.getsource(resolve(target))
    return hashlib.sha256(source.encode("utf-8")).hexdigest()[:16]


def patch_source(name: str, source: str) -> str:
    """Datasette's template `name` with our edits: each edited text must occur exactly once."""
    for old, new in PATCHES[name]:
        if source.count(old) != 1:
            raise CouplingMismatch(
                f"{name}: expected the text {old!r} exactly once in Datasette's template, "
                f"found it {source.count(old)} times"
            )
        source = source.replace(old, new)
    return source


def upstream_problems() -> list[str]:
    """What no longer matches the installed Datasette, one line each (empty: all matches)."""
    problems = []
    for entry in UPSTREAM:
        try:
            digest = source_digest(entry.target)
        except (AttributeError, ImportError, OSError, TypeError) as error:
            problems.append(f"{entry.ours}: datasette/{entry.upstream} {entry.target}: {error}")
            continue
        if digest != entry.sha256:
            problems.append(
                f"{entry.ours}: datasette/{entry.upstream} {entry.target} has changed "
                f"(source {digest}, written against {entry.sha256})"
            )
    for name in PATCHES:
        try:
            patch_source(name, (DATASETTE_TEMPLATES / name).read_text(encoding="utf-8"))
        except (CouplingMismatch, OSError) as error:
            problems.append(f"template patches: datasette/templates/{error}")
    return problems


@functools.cache
def coupling_state() -> tuple[bool, tuple[str, ...]]:
    """(whether this is the Datasette version the patches were written for, what fails)."""
    return INSTALLED_VERSION == DATASETTE_VERSION, tuple(upstream_problems())


def require_upstream() -> None:
    """For `paper-catalog serve`: raise CouplingMismatch when the pinned Datasette version no
    longer matches what the patches were written against; under another version, warn."""
    pinned, problems = coupling_state()
    if pinned and problems:
        raise CouplingMismatch(
            f"Datasette {INSTALLED_VERSION} differs from what the site's patches were written "
            "against (loader/web/datasette_coupling.py):\n  " + "\n  ".join(problems)
        )
    patches_enabled()


@functools.cache
def patches_enabled() -> bool:
    """Whether to patch: the pinned version and every check passes. Else warns, once."""
    pinned, problems = coupling_state()
    if pinned and not problems:
        return True
    if not pinned:
        log.warning(
            "paper-catalog: Datasette %s is installed, the site's patches were written for %s: "
            "they stay off (Datasette's own templates and code paths serve the catalog)",
            INSTALLED_VERSION,
            DATASETTE_VERSION,
        )
    else:
        log.warning(
            "paper-catalog: Datasette's code differs from what the site's patches were written "
            "against; they stay off:\n  %s",
            "\n  ".join(problems),
        )
    return False


# Templates ----------------------------------------------------------------------------------

# the prefix of a patched template's name ("paper-catalog-patched:base.html")
PATCHED_PREFIX = "paper-catalog-patched"
# the context variable that tells a page of the catalog from another database's
PAGE_VARIABLE = "paper_catalog_page"
# the template Datasette asks for: its patched or its own text, chosen as the page renders
CHOOSER = '{{% extends ("{prefix}:" if {variable} else "default:") ~ "{name}" %}}'


class PatchedSources(BaseLoader):
    """`paper-catalog-patched:NAME`: Datasette's own template NAME with our edits."""

    def __init__(self, defaults: BaseLoader):
        self.defaults = defaults

    def get_source(self, environment: Environment, template: str) -> tuple:
        if template not in PATCHES:
            raise TemplateNotFound(template)
        source, filename, uptodate = self.defaults.get_source(environment, template)
        return patch_source(template, source), filename, uptodate

    def list_templates(self) -> list[str]:
        return sorted(PATCHES)


class CatalogTemplates(BaseLoader):
    """Datasette's templates that we edit, as a choice made when a page renders: the edited
    text on the catalog's pages (PAGE_VARIABLE), Datasette's own on any other; and `aliases`,
    names Datasette asks for served from our own templates."""

    def __init__(self, own: BaseLoader, aliases: dict[str, str]):
        self.own = own
        self.aliases = aliases

    def get_source(self, environment: Environment, template: str) -> tuple:
        if template in self.aliases:
            return self.own.get_source(environment, self.aliases[template])
        if template not in PATCHES:
            raise TemplateNotFound(template)
        source = CHOOSER.format(prefix=PATCHED_PREFIX, variable=PAGE_VARIABLE, name=template)
        return source, None, lambda: True

    def list_templates(self) -> list[str]:
        return sorted(PATCHES) + sorted(self.aliases)


def install_template_patches(
    environment: Environment, aliases: dict[str, str] | None = None
) -> bool:
    """Put CatalogTemplates after the user's --template-dir and every plugin's templates and
    before Datasette's own, so a user's template always wins. Datasette's constructor makes
    ChoiceLoader([FileSystemLoader([template_dir, *plugin templates, default]),
    PrefixLoader({"default": ...})]); any other shape is left alone (False)."""
    loader = environment.loader
    if not (
        isinstance(loader, ChoiceLoader)
        and len(loader.loaders) == 2
        and isinstance(loader.loaders[0], FileSystemLoader)
        and isinstance(loader.loaders[1], PrefixLoader)
        and "default" in loader.loaders[1].mapping
    ):
        log.warning("paper-catalog: Datasette's template loaders are not as expected: no patches")
        return False
    searchpath = list(loader.loaders[0].searchpath)
    own = FileSystemLoader(searchpath[:-1])
    defaults = FileSystemLoader(searchpath[-1:])
    prefixes = dict(loader.loaders[1].mapping, **{PATCHED_PREFIX: PatchedSources(defaults)})
    environment.loader = ChoiceLoader(
        [
            own,
            CatalogTemplates(own, aliases or {}),
            defaults,
            PrefixLoader(prefixes, delimiter=loader.loaders[1].delimiter),
        ]
    )
    return True


# Monkeypatches of the served app -------------------------------------------------------------


def print_no_rich_tracebacks() -> None:
    """Datasette's default handle_exception prints every error, 404s included, with rich when
    rich is importable; for a 404 of an unrouted path it is called outside an except block,
    where rich raises ValueError and the 404 becomes a failed request. The served site logs its
    errors itself, so the handler's rich print is turned off."""
    import datasette.handle_exception

    datasette.handle_exception.rich = None


def refresh_schemas_once(datasette: "Datasette") -> None:
    """Datasette reads every database's schema version before every request (three SQL-thread
    hand-offs) to notice a changed schema. The served build never changes (a new
    build starts new workers), so once its schema is read it stays read."""
    refresh = datasette.refresh_schemas
    refreshed = False

    async def refresh_once():
        nonlocal refreshed
        if not refreshed:
            await refresh()
            refreshed = True

    datasette.refresh_schemas = refresh_once


# what a Database answers about its schema with a str, bool or None: fixed for a served build
SCHEMA_LOOKUPS = ("table_exists", "get_table_definition", "get_view_definition", "fts_table")
# ... and with a list (of names, column tuples or foreign-key dicts): each caller gets its copy
SCHEMA_LIST_LOOKUPS = (
    "table_columns",
    "table_column_details",
    "primary_keys",
    "foreign_keys_for_table",
)
# the statement Datasette's permission_allowed() runs for each table permission check (two or
# three a page) to spell the table's name as SQLite does
NAME_SQL = (
    "select name from sqlite_master where type in ('table', 'view') and name = ? collate nocase"
)
MAX_REMEMBERED = 256


def copied(answer: list) -> list:
    """A list answer as a new list, its dicts new dicts (tuples and strings never change)."""
    return [dict(item) if isinstance(item, dict) else item for item in answer]


def copied_foreign_keys(answer: dict) -> dict:
    """get_all_foreign_keys()'s {table: {"incoming": [dict], "outgoing": [dict]}}, new."""
    return {
        table: {way: copied(keys) for way, keys in ways.items()} for table, ways in answer.items()
    }


def remembering(look_up: Callable, key_of: Callable, copy: Callable | None = None) -> Callable:
    """look_up() with its answers kept by key_of(arguments), given out through copy(). Names
    come from URLs: past a few hundred answers, asking again costs less than the memory (None:
    not kept at all)."""
    answers: dict[Hashable, Any] = {}

    async def remembered(*args, **kwargs):
        key = key_of(args, kwargs)
        if key is not None and key in answers:
            return answers[key] if copy is None else copy(answers[key])
        answer = await look_up(*args, **kwargs)
        if key is not None and len(answers) < MAX_REMEMBERED:
            answers[key] = answer if copy is None else copy(answer)
        return answer

    remembered.answers = answers  # type: ignore[attr-defined]
    return remembered


def arguments_key(args: tuple, kwargs: dict) -> Hashable:
    return args, tuple(sorted(kwargs.items()))


def name_statement_key(args: tuple, kwargs: dict) -> tuple | None:
    sql, params = (list(args) + [kwargs.get("params")])[:2]
    if sql == NAME_SQL and not set(kwargs) - {"params"} and isinstance(params, tuple | list):
        return tuple(params)
    return None


def remember_schema_lookups(db: "Database") -> None:
    """A table page asks SQLite whether `papers` is a view, a table, for its definition, its
    columns, keys and foreign keys and, for each permission check, for its name: ~18 SQL-thread
    hand-offs on every request with the same answers. The served file never changes, so each
    answer is kept (bool, str, None and the name statement's Results, only read, as they are;
    lists as copies)."""
    for name in SCHEMA_LOOKUPS:
        setattr(db, name, remembering(getattr(db, name), arguments_key))
    for name in SCHEMA_LIST_LOOKUPS:
        setattr(db, name, remembering(getattr(db, name), arguments_key, copied))
    # every paper and author page: PRAGMA foreign_key_list of each table
    db.get_all_foreign_keys = remembering(
        db.get_all_foreign_keys, arguments_key, copied_foreign_keys
    )
    db.execute = remembering(db.execute, name_statement_key)


def count_searches_from_the_index(db: "Database") -> None:
    """A plain search's count from papers_fts alone (loader/web/index_only.py), and its first
    page of rows from the matches' rowids in id order (loader/web/id_order.py), else with the
    matches' keys sorted before the wide rows are read (index_only.keys_first). The first page
    keeps the matches it read for the rest of the request (request_matches.py): the count is
    then their number."""
    execute = db.execute

    async def executed(sql, *args, **kwargs):
        page = first_page(sql) if isinstance(sql, str) else None
        if page is not None:
            return await execute_first_page(db, execute, page, sql, *args, **kwargs)
        plain = isinstance(sql, str) and index_only(sql)
        if plain and plain.startswith(COUNT_HEAD):
            # the first page, just before, read the matches: the count is their number
            params = args[0] if args else kwargs.get("params")
            matches = kept_matches(ROWIDS_HEAD + plain[len(COUNT_HEAD) :], params)
            if matches is not None:
                return Results([(len(matches),)], False, COUNT_DESCRIPTION)
        return await execute(plain or sql, *args, **kwargs)

    db.execute = executed


# the parameter that carries a page's rowids, beside the search's own
PAGE_ROWIDS = "paper_catalog_page_rowids"
# index_only's count of a plain search, and the statement of its matches' rowids
COUNT_HEAD = "select count(*) from papers_fts "
ROWIDS_HEAD = "select rowid from papers_fts "
# what cursor.description gives for Datasette's count statement: its one column, named
COUNT_DESCRIPTION = (("count(*)", None, None, None, None, None, None),)


async def execute_first_page(
    db: "Database", execute: Callable, page: FirstPage, sql: str, *args: Any, **kwargs: Any
) -> Any:
    """Datasette's `execute(sql, params, ...)` of a plain search's first page: its rows found by
    their rank in id order where the worker has read the ranks, within the statement's time
    limit, then read by rowid, in id order."""
    ranks = id_order.ranks_of(db)
    params = args[0] if args else kwargs.get("params")
    if ranks is None or not isinstance(params, dict):
        return await execute(keys_first(sql), *args, **kwargs)
    matches = f"select rowid from papers where {page.where}"
    ids_sql = index_only(matches) or matches
    limit = db.ds.setting("sql_time_limit_ms")
    custom = kwargs.get("custom_time_limit")
    limit = custom if custom and custom < limit else limit

    def read_matches(conn: Any) -> npt.NDArray[np.int64]:
        with within_time_limit(conn, limit, ids_sql, params):
            return matched_rowids(conn, ids_sql, params)

    found = kept_matches(ids_sql, params)
    if found is None:
        found = await db.execute_fn(read_matches)
        keep_matches(ids_sql, params, found)
    rowids = id_order.first_by_id(ranks, found, page.size)
    if rowids is None:
        return await execute(keys_first(sql), *args, **kwargs)
    by_rank = (
        f"select {page.columns} from papers"
        f" where rowid in (select value from json_each(:{PAGE_ROWIDS})) order by id"
    )
    arguments = ({**params, PAGE_ROWIDS: json.dumps(rowids)}, *args[1:])
    if not args:
        kwargs = {**kwargs, "params": arguments[0]}
        arguments = ()
    return await execute(by_rank, *arguments, **kwargs)


def remember_request_args() -> None:
    """Datasette's Request.args parses the query string on every read: dozens of parses of the
    same string for one table page. The parsed arguments are kept on the request while its
    query string stays the same object (a wrapper that changes it makes a new scope anyway)."""
    parse = Request.args.fget
    if getattr(parse, "kept", False):
        return

    def args(request):
        query = request.scope.get("query_string")
        kept = request.__dict__.get("_paper_catalog_args")
        if kept is None or kept[0] is not query:
            kept = request.__dict__["_paper_catalog_args"] = (query, parse(request))
        return kept[1]

    args.kept = True  # type: ignore[attr-defined]
    args.parse = parse  # type: ignore[attr-defined]
    args.__wrapped__ = parse  # type: ignore[attr-defined]
    Request.args = property(args)


def quoted_pairs(request: Request) -> list[tuple[str, str]]:
    """The request's query string as (name, "name=value" quoted as urlencode quotes it), parsed
    and quoted once a request (while its query string stays the same object, as
    remember_request_args keeps its arguments)."""
    query = request.scope.get("query_string")
    kept = request.__dict__.get("_paper_catalog_quoted_pairs")
    if kept is None or kept[0] is not query:
        pairs = [(key, urlencode([(key, value)])) for key, value in parse_qsl(request.query_string)]
        kept = request.__dict__["_paper_catalog_quoted_pairs"] = (query, pairs)
    return kept[1]


def path_with_replaced_args(request: Request, args: Any, path: str | None = None) -> str:
    """A copy of datasette.utils.path_with_replaced_args (the request's path with `args` set in
    its query string, None removing one) reading the request's pairs from quoted_pairs():
    urlencode quotes each pair by itself and joins them with "&", so the address is the same."""
    path = path or request.path
    if isinstance(args, dict):
        args = args.items()
    replaced = {pair[0] for pair in args}
    kept = [quoted for key, quoted in quoted_pairs(request) if key not in replaced]
    added = [urlencode([pair]) for pair in args if pair[1] is not None]
    query = "&".join(kept + added)
    return path + (f"?{query}" if query else "")


def reuse_query_pairs() -> None:
    """A table page builds a dozen addresses from its own query string (each column's sort link
    in _table.html, its suggested facets), and Datasette parses the string and quotes each of
    its pairs again for each one, nine `_nocol` pairs of them on the papers table. The table
    view (module and templates) gets path_with_replaced_args above instead."""
    import datasette.views.table as table_view

    table_view.path_with_replaced_args = path_with_replaced_args


class RenderCellHooks:
    """Datasette's hook relay (`pm.hook`), but for render_cell with exactly one
    implementation that pluggy would only hand its arguments (no wrapper, no argument with a
    default): that one is called directly, its answer in a list as pluggy gives it."""

    def __init__(self, hooks: Any):
        self.hooks = hooks
        self.sole: Any = None  # the implementation `direct` calls
        self.direct: Any = None

    def __getattr__(self, name: str) -> Any:
        return getattr(self.hooks, name)

    @property
    def render_cell(self) -> Callable:
        caller = self.hooks.render_cell
        # looked at on every cell: a plugin registered later (a test's) is called through pluggy
        impls = caller.get_hookimpls()
        if len(impls) != 1 or impls[0].hookwrapper or impls[0].wrapper or impls[0].kwargnames:
            return caller
        if impls[0] is not self.sole:
            self.sole, self.direct = impls[0], sole_answer(impls[0])
        return self.direct


def sole_answer(impl: Any) -> Callable:
    """A hook call (keyword arguments in, list of non-None answers out) made of one plain
    implementation: pluggy's _multicall for that case, without its loop and checks."""
    function, names = impl.function, tuple(impl.argnames)

    def call(**arguments: Any) -> list:
        answer = function(*[arguments[name] for name in names])
        return [] if answer is None else [answer]

    return call


class RenderCellManager:
    """Datasette's plugin manager as views/table.py sees it: its `hook` a RenderCellHooks."""

    def __init__(self, manager: Any):
        self.manager = manager
        self.hook = RenderCellHooks(manager.hook)

    def __getattr__(self, name: str) -> Any:
        return getattr(self.manager, name)


def call_render_cell_directly() -> None:
    """A table page asks the render_cell hook for each of its ~250 cells (display_columns_and_rows),
    and pluggy's round trip (argument checks, its call loop, a list) costs about what our
    renderer's answer does. The table view's `pm` becomes a RenderCellManager: the same hooks,
    render_cell's one implementation called directly (plugins/render_cells.py on the served
    site; with any other set of implementations, pluggy as before)."""
    import datasette.views.table as table_view

    if not isinstance(table_view.pm, RenderCellManager):
        table_view.pm = RenderCellManager(table_view.pm)


def remember_table_permissions(datasette: "Datasette") -> None:
    """Datasette's view-table check deep-copies the whole metadata to read one table's `allow`
    blocks, two or three times a page, a noticeable part of a paper page's CPU. Our metadata is fixed for
    the worker's life (no plugin supplies metadata per request), so each table's answer is
    kept; a site with a get_metadata hook keeps Datasette's reading."""
    # datasette.plugins loads the installed plugins, ours too: not as this module loads
    from datasette.plugins import pm

    if pm.hook.get_metadata.get_hookimpls() or not hasattr(datasette, "_table_permission_allows"):
        return
    look_up = datasette._table_permission_allows
    answers: dict[tuple[str, str], list] = {}

    def remembered(database, table):
        key = (database, table)
        if key in answers:
            return list(answers[key])
        answer = look_up(database, table)
        if len(answers) < MAX_REMEMBERED:
            answers[key] = list(answer)
        return answer

    remembered.answers = answers  # type: ignore[attr-defined]
    datasette._table_permission_allows = remembered


# The served app ----------------------------------------------------------------------------


def patch_served_datasette(datasette: "Datasette", catalog: "Database") -> None:
    """The monkeypatches of `paper-catalog serve`'s Datasette: its one immutable catalog's
    schema, permissions and query strings read once, its table cells rendered without pluggy's
    round trip. Only when patches_enabled()."""
    remember_request_args()
    refresh_schemas_once(datasette)
    remember_schema_lookups(catalog)
    count_searches_from_the_index(catalog)
    remember_table_permissions(datasette)
    reuse_query_pairs()
    call_render_cell_directly()
    print_no_rich_tracebacks()


# The inspect file -----------------------------------------------------------------------------


async def inspected(datasette: "Datasette") -> dict[str, dict[str, Any]]:
    """datasette/cli.py inspect_() on a Datasette we made (it makes its own, and so cannot close
    the connections it opens)."""
    data = {}
    for name, database in datasette.databases.items():
        if name == "_internal":
            continue
        counts = await database.table_counts(limit=3600 * 1000)
        data[name] = {
            "hash": database.hash,
            "size": database.size,
            "file": database.path,
            "tables": {table: {"count": count} for table, count in counts.items()},
        }
    return data


def inspect_data(path: Path) -> dict[str, dict[str, Any]]:
    """What `datasette inspect PATH` writes (each database's hash, size, file and table counts),
    computed in this process, which has imported Datasette already: the command would import it
    again, most of a second of CPU on every start and rebuild of the site. No SQL thread is
    started, and the file's connections are closed before it returns. Call it where no event
    loop runs (it runs one)."""
    from datasette.app import Datasette

    datasette = Datasette([], immutables=[str(path)], settings={"num_sql_threads": 0})
    try:
        return asyncio.run(inspected(datasette))
    finally:
        for database in datasette.databases.values():
            database.close()
