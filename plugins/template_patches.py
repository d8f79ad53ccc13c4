"""Small, named edits to Datasette's own page templates, on the catalog's pages only: no copies.

The edits themselves (PATCHES) and the loader that serves them live with every other reliance
on Datasette's internals in loader/web/datasette_coupling.py, which checks at start-up that
each edited text occurs exactly once in Datasette's template. They are: a language and a main
landmark with a skip link (base.html); the search box in the header; column notes folded behind
one summary, labels on the filter controls and h2 headings in order under the h1 of table,
database and query pages; a label on the SQL editor (_codemirror_foot.html); a table page's
rows and headers, its filter form's options and hidden inputs (the filters below), a query's
rows and facet values written by filters (_table.html, table.html, query.html,
_facet_results.html); the search box, links and chart of the home page (index.html).

A page of another database, or of a Datasette without the catalog, gets Datasette's own
template; a template of the user's --template-dir wins over an edited one.
"""

from datasette import hookimpl
from markupsafe import Markup, escape

from loader.web.catalog_scope import (
    DEFAULT_DATABASE,
    catalog_name,
    is_catalog_page,
    row_template,
    serves_catalog,
)
from loader.web.datasette_coupling import PAGE_VARIABLE, install_template_patches, patches_enabled
from loader.web.search_request import FACET_TITLES

# our row pages, named for the default database name (templates/)
ROW_TABLES = ("papers", "authors")


def facet_title(name):
    return FACET_TITLES.get(name, name.replace("_", " ").capitalize())


def in_facet_order(facets):
    order = {name: index for index, name in enumerate(FACET_TITLES)}
    return sorted(facets, key=lambda facet: (order.get(facet["name"], len(order)), facet["name"]))


# The filter form's lists (table.html), written in Python with the whitespace of Datasette's
# loops, the same bytes: their ~60 options and hidden inputs were ~300 awaited Jinja steps a page.


def column_options(columns):
    """The new filter row's `<option>` for each column."""
    return Markup(
        "".join(
            f"\n                      <option>{escape(c)}</option>\n                "
            for c in columns
        )
    )


def lookup_options(lookups, lookup, indent):
    """Each filter operation's `<option>`, `lookup`'s selected (in the new filter row it is
    undefined, equal to no operation), in a loop indented by `indent` spaces."""
    outer = "\n" + " " * indent
    parts = []
    for key, display, no_argument in lookups:
        value = f"{escape(key)}__1" if no_argument else escape(key)
        selected = " selected" if key == lookup else ""
        parts.append(
            f'{outer}    <option value="{value}"{selected}>{escape(display)}</option>{outer}'
        )
    return Markup("".join(parts))


def sort_options(columns, sort, sort_desc):
    """The small screens' sort `<select>`: an `<option>` for each sortable column."""
    parts = []
    for column in columns:
        parts.append("\n                        ")
        if column["sortable"]:
            name = column["name"]
            selected = " selected" if name == sort or name == sort_desc else ""
            parts.append(
                f'\n                            <option value="{escape(name)}"{selected}>'
                f"Sort by {escape(name)}</option>\n                        "
            )
        parts.append("\n                    ")
    return Markup("".join(parts))


def hidden_inputs(pairs, indent):
    """A hidden `<input>` for each (name, value), in a loop indented by `indent` spaces."""
    outer = "\n" + " " * indent
    return Markup(
        "".join(
            f'{outer}    <input type="hidden" name="{escape(key)}" value="{escape(value)}">{outer}'
            for key, value in pairs
        )
    )


def row_aliases(datasette):
    """The row page names Datasette asks for, when the catalog has another name than ours."""
    if catalog_name(datasette) == DEFAULT_DATABASE:
        return {}
    return {
        row_template(datasette, table): f"row-{DEFAULT_DATABASE}-{table}.html"
        for table in ROW_TABLES
    }


@hookimpl
def prepare_jinja2_environment(env, datasette):
    env.filters["facet_title"] = facet_title
    env.filters["in_facet_order"] = in_facet_order
    env.filters["column_options"] = column_options
    env.filters["lookup_options"] = lookup_options
    env.filters["sort_options"] = sort_options
    env.filters["hidden_inputs"] = hidden_inputs
    if serves_catalog(datasette) and patches_enabled():
        install_template_patches(env, row_aliases(datasette))


@hookimpl
def extra_template_vars(database, request, datasette):
    # the edited templates choose their text by this (datasette_coupling.CHOOSER)
    return {PAGE_VARIABLE: is_catalog_page(datasette, database, request)}
