"""A table page's rows written by the table_rows filter (plugins/result_rows.py, patched into
`_table.html`) are the cells Datasette's own row loop writes, escaping included."""

import re
from pathlib import Path

import datasette as datasette_package
import pytest
from markupsafe import Markup

from .plugin_files import load_plugin

result_rows = load_plugin("result_rows")
DATASETTE_TABLE = Path(datasette_package.__file__).parent / "templates" / "_table.html"

CELLS = [
    {"column": "id", "value": "abc", "value_type": "text"},
    {"column": "label", "value": Markup('<a href="/x">A &amp; B</a>'), "value_type": "text"},
    {"column": "odd column-name", "value": '<script>alert("x")</script>', "value_type": "text"},
    {"column": "_private", "value": 3, "value_type": "integer"},
    {"column": "year", "value": None, "value_type": "none"},
    {"column": "abstract", "value": "a < b & 'c'", "value_type": "text"},
]


def loop_only(template):
    """The row loop: the inside of the <tbody> of Datasette's template."""
    return template.split("<tbody>", 1)[1].split("</tbody>", 1)[0]


def spaced(html):
    return re.sub(r"\s+", " ", html).strip()


@pytest.mark.asyncio
async def test_rows_are_the_cells_datasettes_loop_writes(datasette):
    await datasette.invoke_startup()
    environment = datasette.jinja_env
    stock = environment.from_string(loop_only(DATASETTE_TABLE.read_text()))
    rows = [CELLS, list(reversed(CELLS))]
    expected = await stock.render_async(display_rows=rows)
    assert spaced(result_rows.render_table_rows(rows)) == spaced(expected)


@pytest.mark.asyncio
async def test_table_page_rows_come_from_the_filter(datasette):
    response = await datasette.client.get("/catalog/papers?_search=learning")
    assert response.status_code == 200
    tbody = response.text.split("<tbody>", 1)[1].split("</tbody>", 1)[0]
    assert tbody.count("<tr>") == 25
    assert tbody.count('<td class="col-label type-') == 25
