"""plugins/result_rows.py and the edits of query.html and _table.html
(loader/web/datasette_coupling.py): query pages show the same cells as Datasette's stock
query.html, rendered in one Python call, and a table page's rows written by the table_rows filter
are the cells Datasette's own row loop writes, escaping included."""

import re
from pathlib import Path

import datasette as datasette_package
import pytest
import yaml
from markupsafe import Markup

from .plugin_files import load_plugin

ROOT = Path(__file__).resolve().parent.parent


result_rows = load_plugin("result_rows")


def test_text_is_escaped_and_markup_kept():
    html = result_rows.render_result_rows(
        [["<script>x</script>", Markup("<mark>m</mark>"), 3, None]], ["a", "b", "c", "d"]
    )
    assert isinstance(html, Markup)
    assert html == (
        '<tr>\n<td class="col-a">&lt;script&gt;x&lt;/script&gt;</td>\n'
        '<td class="col-b"><mark>m</mark></td>\n<td class="col-c">3</td>\n'
        '<td class="col-d">None</td>\n</tr>'
    )


def test_odd_column_names_get_datasettes_css_classes():
    from datasette.utils import to_css_class

    columns = ['"><img src=x>', "two words", "_x"]
    html = result_rows.render_result_rows([["1", "2", "3"]], columns)
    for column in columns:
        assert f'class="col-{to_css_class(column)}"' in html
    assert "<img" not in html


def test_no_rows():
    assert result_rows.render_result_rows([], ["a"]) == ""


@pytest.fixture(scope="module")
def stock_datasette(datasette, seed_catalog, tmp_path_factory):
    """The same site with Datasette's own query.html: a user's --template-dir wins over our
    edits of it, so a copy of Datasette's own there is what stock Datasette renders."""
    import datasette as datasette_package
    from datasette.app import Datasette

    from loader.serve.settings import SETTINGS

    templates = tmp_path_factory.mktemp("stock-templates")
    own = Path(datasette_package.__file__).parent / "templates" / "query.html"
    (templates / "query.html").write_text(own.read_text(encoding="utf-8"), encoding="utf-8")
    metadata = yaml.safe_load((ROOT / "metadata.yml").read_text(encoding="utf-8"))
    return Datasette(
        immutables=[str(seed_catalog)],
        metadata=metadata,
        settings=SETTINGS,
        template_dir=str(templates),
    )


def without_our_edits(html):
    """The page as Datasette's query.html writes it: headings as h3 (ours are h2, in order)."""
    return re.sub(r'<h2 class="header3">(.*?)</h2>', r"<h3>\1</h3>", html, flags=re.DOTALL)


def table_body(html):
    body = html.split("<tbody>", 1)[1].split("</tbody>", 1)[0]
    return re.sub(r"\s+", " ", re.sub(r">\s+<", "><", body)).strip()


@pytest.mark.asyncio
@pytest.mark.parametrize(
    "path",
    [
        "/catalog/search?q=diffusion+models",
        "/catalog/search?q=%22language+model%22",
        "/catalog/coauthors?author_id=Huishuai+Zhang",
        "/catalog/papers_by_author?author_id=100",
        "/catalog/prolific_authors",
        "/catalog/papers_per_track",
        "/catalog?sql=select+id,+abstract,+authors+from+papers+order+by+id+limit+20",
        "/catalog?sql=select+'<b>'+as+%22odd+%3Cname%3E%22,+null,+1.5,+x'00ff'",
    ],
)
async def test_query_pages_show_the_same_cells_as_datasettes_template(
    datasette, stock_datasette, path
):
    ours = await datasette.client.get(path)
    stock = await stock_datasette.client.get(path)
    assert ours.status_code == stock.status_code == 200
    assert "<tbody>" in ours.text
    assert table_body(ours.text) == table_body(stock.text)
    # everything outside the rows is Datasette's page too, but for our edits
    assert without_our_edits(ours.text.split("<tbody>")[0]) == stock.text.split("<tbody>")[0]


@pytest.mark.asyncio
async def test_empty_result_still_says_zero_results(datasette):
    response = await datasette.client.get("/catalog/search?q=zzzzqqqq")
    assert response.status_code == 200
    assert '<p class="zero-results">0 results</p>' in response.text


# table pages: the table_rows filter patched into _table.html ------------------------------------

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


def header_loop(template):
    """The header loop of Datasette's template, `{% for %}` to `{% endfor %}`."""
    start = template.index("{% for column in display_columns %}")
    return template[start : template.index("{% endfor %}", start) + len("{% endfor %}")]


HEADERS = [
    # the link column of a table with one primary key: no description
    {"name": "id", "sortable": True, "is_pk": True, "type": "TEXT", "notnull": 0},
    {
        "name": "label",
        "sortable": True,
        "is_pk": False,
        "type": "text",
        "notnull": 1,
        "description": 'Title, "quoted" & <b>bold</b>',
    },
    {"name": "year", "sortable": True, "is_pk": False, "type": "INTEGER", "notnull": 0},
    {"name": "odd <col>", "sortable": False, "is_pk": False, "type": "", "notnull": 0},
    {"name": "Link", "sortable": False, "is_pk": False, "type": "", "notnull": 0},
    {"name": "x&y", "sortable": True, "is_pk": False, "type": "", "notnull": 0, "description": ""},
]


@pytest.mark.asyncio
@pytest.mark.parametrize(
    "query, sort, sort_desc",
    [
        ("_search=a+b&_nocol=title", "id", None),
        ("_sort_desc=year&_next=5", None, "year"),
        ("_sort=x%26y&z=%3Cq%3E", "x&y", None),
        ("", None, None),
    ],
)
async def test_headers_are_the_bytes_datasettes_loop_writes(datasette, query, sort, sort_desc):
    from datasette.utils import path_with_replaced_args
    from datasette.utils.asgi import Request

    await datasette.invoke_startup()
    environment = datasette.jinja_env
    context = {
        "display_columns": HEADERS,
        "request": Request.fake(f"/catalog/papers?{query}"),
        "sort": sort,
        "sort_desc": sort_desc,
        "fix_path": datasette.urls.path,
        "path_with_replaced_args": path_with_replaced_args,
    }
    stock = environment.from_string(header_loop(DATASETTE_TABLE.read_text()))
    ours = environment.from_string("{{ display_columns|table_headers }}")
    assert await ours.render_async(context) == await stock.render_async(context)


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


# the lists of the paper and author pages: each filter against the loop our templates had -------

# each filter's loop as the templates wrote it (main's row-catalog-papers.html and
# row-catalog-authors.html before the filters), with the arguments its filter is given
PAGE_LOOPS = {
    "related_items": (
        """{% for related in related_papers %}
        <li><a href="{{ urls.row(database, 'papers', related.id) }}">{{ related.label|render_title }}</a>{% if related.track %} <span class="count">({{ related.track }})</span>{% endif %}</li>
      {% endfor %}""",
        "related_papers",
        "papers",
    ),
    "source_items": (
        """{% for source in paper_sources %}
      <li><code>{{ source.path }}</code> line {{ source.line }} <span class="count">({{ source.format }}{% if source.venue or source.year %}; {{ source.venue or "" }} {{ source.year or "" }}{% if source.status %} {{ source.status }}{% endif %}{% endif %})</span></li>
    {% endfor %}""",
        "paper_sources",
        None,
    ),
    "year_paper_items": (
        """{% for paper in group.papers %}
      <li><a href="{{ urls.row(database, 'papers', paper.id) }}">{{ paper.label|render_title }}</a>{% if paper.venue %} <span class="count">{{ paper.venue }}</span>{% endif %}{% if paper.track %} <span class="count">({{ paper.track }})</span>{% endif %}</li>
    {% endfor %}""",
        "group.papers",
        "papers",
    ),
    "coauthor_items": (
        """{% for coauthor in coauthors %}
        <li><a href="{{ urls.row(database, "authors", coauthor.author_id) }}">{{ coauthor.name }}</a> <span class="count">{{ coauthor.shared_papers }} shared paper{% if coauthor.shared_papers != 1 %}s{% endif %}</span></li>
      {% endfor %}""",
        "coauthors",
        "authors",
    ),
    "track_items": (
        """{% for track in author_tracks %}
        <li><a href="{{ urls.table(database, 'papers') }}?{{ {'track': track.name}|urlencode }}">{{ track.name }}</a> <span class="count">{{ track.papers }} paper{% if track.papers != 1 %}s{% endif %}</span></li>
      {% endfor %}""",
        "author_tracks",
        "papers",
    ),
}
PAPERS = [
    {
        "id": "0123456789abcdef",
        "label": "On $x^2$ & <b>bold</b> *claims*",
        "venue": "ICLR",
        "year": 2024,
        "track": "Theory · Learning <&>",
    },
    {"id": "fedcba9876543210", "label": "Plain title", "venue": None, "year": None, "track": None},
    {
        "id": "00000000000000aa",
        "label": "Quotes \"x\" 'y'",
        "venue": "A<b>",
        "year": 2019,
        "track": "",
    },
]
SOURCES = [
    {
        "path": "data/<odd> & name.md",
        "line": 12,
        "format": "markdown",
        "venue": "ICML",
        "year": 2020,
        "status": "oral",
    },
    {"path": "a.jsonl", "line": 1, "format": "jsonl", "venue": None, "year": 2021, "status": None},
    {"path": "b.jsonl", "line": 3, "format": "jsonl", "venue": "X", "year": None, "status": "s"},
    {"path": "c.jsonl", "line": 4, "format": "jsonl", "venue": None, "year": None, "status": "s"},
]
COAUTHORS = [
    {"author_id": 7, "name": "Ada <Lovelace> & Co", "shared_papers": 1},
    {"author_id": 12, "name": "Émile O'Brien", "shared_papers": 23},
]
TRACKS = [
    {"name": "Deep Learning · Theory & <Practice>", "papers": 1},
    {"name": "plain", "papers": 4},
]


@pytest.mark.asyncio
@pytest.mark.parametrize("name", list(PAGE_LOOPS))
async def test_page_lists_are_the_items_the_templates_loop_wrote(datasette, name):
    await datasette.invoke_startup()
    loop, argument, table = PAGE_LOOPS[name]
    context = {
        "urls": datasette.urls,
        "database": "catalog",
        "related_papers": PAPERS,
        "group": {"papers": PAPERS},
        "paper_sources": SOURCES,
        "coauthors": COAUTHORS,
        "author_tracks": TRACKS,
    }
    expected = await datasette.jinja_env.from_string(loop).render_async(**context)
    call = f"{argument}|{name}" + (f"(urls.table(database, '{table}'))" if table else "")
    ours = await datasette.jinja_env.from_string("{{ " + call + " }}").render_async(**context)
    assert "<li>" in ours
    assert spaced(ours) == spaced(expected)
