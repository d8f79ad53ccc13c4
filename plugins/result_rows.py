"""The rows of a query page (canned queries, SQL) and of a table page as one piece of HTML,
written in Python.

Datasette renders its templates with Jinja's async mode, where every loop step is an awaited
generator: the stock `query.html` spent a large part of a search page's time awaiting the loop
over the 600 cells of 100 results (docs/benchmark.md). `templates/query.html` is Datasette's own, with its row loop replaced by this filter;
the markup is the same (`<td class="col-...">`), and every cell is escaped unless it is already
Markup (what render_cell hooks return). A table page's `_table.html` rows (25 papers x 16
columns) and its facet values (up to 7 x 30) get the same treatment through
plugins/template_patches.py.
"""

from datasette import hookimpl
from datasette.utils import to_css_class
from markupsafe import Markup, escape, soft_str


def render_result_rows(display_rows, columns):
    cells = [f'<td class="col-{escape(to_css_class(column))}">' for column in columns]
    lines = []
    for row in display_rows:
        lines.append("<tr>")
        lines.extend(f"{cell}{escape(value)}</td>" for cell, value in zip(cells, row))
        lines.append("</tr>")
    return Markup("\n".join(lines))


def render_table_rows(display_rows):
    """Datasette's `_table.html` row loop: each cell a dict of column, value and value type."""
    classes = {}
    lines = []
    for row in display_rows:
        lines.append("<tr>")
        for cell in row:
            column, value_type = cell["column"], cell["value_type"]
            if (column, value_type) not in classes:
                classes[column, value_type] = (
                    f'<td class="col-{escape(to_css_class(column))} type-{escape(value_type)}">'
                )
            lines.append(f"{classes[column, value_type]}{escape(cell['value'])}</td>")
        lines.append("</tr>")
    return Markup("\n".join(lines))


def render_facet_values(values):
    """Datasette's `_facet_results.html` value loop: a link to add each value, or the chosen
    value with a link to remove it."""
    lines = []
    for value in values:
        count = f"{value['count']:,}"
        url = escape(value["toggle_url"])
        if not value["selected"]:
            label = escape(soft_str(value["label"]) or "-")
            lines.append(f'<li><a href="{url}">{label}</a> {count}</li>')
        else:
            label = escape(value["label"] or "-")
            lines.append(
                f'<li>{label} &middot; {count} <a href="{url}" class="cross">&#x2716;</a></li>'
            )
    return Markup("\n".join(lines))


@hookimpl
def prepare_jinja2_environment(env):
    env.filters["result_rows"] = render_result_rows
    env.filters["table_rows"] = render_table_rows
    env.filters["facet_values"] = render_facet_values
