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


DATASETTE_FACETS = Path(datasette_package.__file__).parent / "templates" / "_facet_results.html"
VALUES = [
    {"value": 2018, "label": 2018, "count": 1234, "toggle_url": "/p?year=2018", "selected": False},
    {"value": 0, "label": 0, "count": 1, "toggle_url": "/p?a=1&b=<2>", "selected": True},
    {"value": "x", "label": None, "count": 5, "toggle_url": "/p?x", "selected": False},
    {"value": "", "label": "", "count": 2, "toggle_url": "/p?e=", "selected": False},
    {
        "value": "m",
        "label": Markup("<em>M</em>"),
        "count": 3,
        "toggle_url": "/m",
        "selected": False,
    },
    {"value": "s", "label": '<b>"S"</b>', "count": 9, "toggle_url": '/s"', "selected": True},
    {"value": "t", "label": "A · B & C", "count": 10**6, "toggle_url": "/t", "selected": False},
]


@pytest.mark.asyncio
async def test_facet_values_are_the_items_datasettes_loop_writes(datasette):
    await datasette.invoke_startup()
    source = DATASETTE_FACETS.read_text()
    start = source.index("{% for facet_value in facet_info.results %}")
    end = source.index("{% endfor %}", start) + len("{% endfor %}")
    stock = datasette.jinja_env.from_string(source[start:end])
    expected = await stock.render_async(facet_info={"results": VALUES})
    assert spaced(result_rows.render_facet_values(VALUES)) == spaced(expected)
