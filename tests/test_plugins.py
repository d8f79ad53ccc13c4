"""The plugin functions called directly: cells through loader.rules.markup (tests/test_markup.py
checks the markup rules), snippet highlight, blank-search guard, CSV link rewriting, chart
geometry."""

import importlib.metadata
import re
from types import SimpleNamespace

import pytest
from markupsafe import Markup

from loader.rules import markup
from loader.serve.datasette_config import datasette_arguments
from loader.web.catalog_scope import MARKED
from loader.web.datasette_api import jinja_environment

from . import local_http
from .conftest import DATASETTE_1, query_path, table_json
from .plugin_files import load_plugin

render_cells = load_plugin("render_cells")
search_guard = load_plugin("search_guard")
csv_links = load_plugin("csv_links")
charts = load_plugin("charts")
render_snippet = render_cells.render_snippet


# snippets ----------------------------------------------------------------------------------


def test_snippet_escapes_first_then_marks():
    html = render_snippet("a <b>bold</b> \ue000match\ue001 & \ue000<script>\ue001")
    assert html == Markup(
        "a &lt;b&gt;bold&lt;/b&gt; <mark>match</mark> &amp; <mark>&lt;script&gt;</mark>"
    )


def test_snippet_stray_sentinels_are_balanced_or_dropped():
    assert render_snippet("\ue001x \ue000open") == Markup("x <mark>open</mark>")
    assert render_snippet("\ue000a\ue000b\ue001") == Markup("<mark>ab</mark>")
    assert render_snippet(None) == ""


# render_cell hook --------------------------------------------------------------------------


class FakeUrls:
    def table(self, database, table):
        return f"/{database}/{table}"


class FakeDatabase:
    """A served catalog, as catalog_scope recognises one (its marker read)."""


class FakeDatasette:
    urls = FakeUrls()

    def __init__(self):
        catalog = FakeDatabase()
        MARKED[catalog] = True
        self.databases = {"catalog": catalog}

    def plugin_config(self, name):
        return None


def call_render_cell(row, column, table=None, database="catalog"):
    return render_cells.render_cell(
        row=row,
        value=row[column],
        column=column,
        table=table,
        database=database,
        datasette=FakeDatasette(),
    )


def test_render_cell_abstract_in_table_and_query():
    row = {"abstract": "<script>x</script> $a<b$"}
    for table in ("papers", None):
        html = call_render_cell(row, "abstract", table)
        assert html == Markup('<div class="abstract">{}</div>').format(
            markup.render_html(row["abstract"])
        )
        assert "<math" in html and "<script" not in html


# a NeurIPS 2018 title
MATH_TITLE = (
    r"Doubly Robust Bayesian Inference for Non-Stationary Streaming Data with $\beta$-Divergences"
)


def test_render_cell_titles_and_labels_render_math():
    for column in ("label", "title"):
        html = call_render_cell({column: MATH_TITLE}, column, "papers")
        assert html == markup.title_html(MATH_TITLE) and "<mi>β</mi>" in html and "$" not in html


def test_query_results_link_titles_with_math():
    row = {"id": "0123456789abcdef", "label": MATH_TITLE}
    html = call_render_cell(row, "label")
    assert html.startswith('<a href="/catalog/papers/0123456789abcdef">')
    assert "<math" in html and "<a" not in html[1:]


def test_page_filters_render_titles_and_abstracts():
    environment = SimpleNamespace(filters={})
    render_cells.prepare_jinja2_environment(environment)
    filters = environment.filters
    assert filters["render_title"](MATH_TITLE) == markup.title_html(MATH_TITLE)
    assert filters["title_text"](MATH_TITLE).endswith("with β-Divergences")
    assert filters["render_abstract"]("$x$") == markup.render_html("$x$")


def test_render_cell_plain_abstract_text_is_escaped():
    html = call_render_cell({"abstract_text": "<b>x</b>"}, "abstract_text", "papers")
    assert html == Markup('<div class="abstract-text">&lt;b&gt;x&lt;/b&gt;</div>')


def test_render_cell_leaves_other_databases_and_columns_alone():
    assert call_render_cell({"abstract": "x"}, "abstract", "papers", database="other") is None
    assert call_render_cell({"abstract": "x"}, "abstract", "authors") is None
    assert call_render_cell({"label": "x"}, "label", "authors") is None
    assert call_render_cell({"snippet": "\ue000x\ue001"}, "snippet", "papers") is None


def test_render_cell_snippet_in_query_results():
    html = call_render_cell({"snippet": "<i>\ue000x\ue001"}, "snippet")
    assert html == Markup("&lt;i&gt;<mark>x</mark>")


def test_render_cell_links_papers_and_authors_in_query_results():
    row = {
        "id": "0123456789abcdef",
        "label": "<b>Label</b><script>",
        "author_id": 7,
        "name": "Ann <i>",
    }
    assert call_render_cell(row, "id") == Markup(
        '<a href="/catalog/papers/0123456789abcdef">0123456789abcdef</a>'
    )
    assert call_render_cell(row, "label") == Markup(
        '<a href="/catalog/papers/0123456789abcdef"><strong>Label</strong>&lt;script&gt;</a>'
    )
    assert call_render_cell(row, "name") == Markup('<a href="/catalog/authors/7">Ann &lt;i&gt;</a>')
    assert call_render_cell({"id": 3, "label": "x"}, "label") is None
    assert call_render_cell({"id": "not-a-paper-id!", "label": "x"}, "label") is None


# blank _search guard -----------------------------------------------------------------------


@pytest.mark.parametrize(
    "query_string, expected",
    [
        (b"_search=", b""),
        (b"_search=+++&_sort=id", b"_sort=id"),
        (b"_search=%20%09&track=a+b", b"track=a+b"),
        (b"_search_title=&_search=x", b"_search=x"),
        (b"_search=%22%22&track=x", b"track=x"),
        (b"_search=%00", b""),
        (b"_search=%22a%0Ab%22", b"_search=%22a+b%22"),
        (b"_search=reasoning", None),
        (b"track=x", None),
    ],
)
def test_unsearchable_search_parameters_are_cleaned(query_string, expected):
    assert search_guard.cleaned_query_string(query_string) == expected


# CSV links ---------------------------------------------------------------------------------


def test_export_pairs_replace_page_parameters():
    pairs = csv_links.export_pairs("_size=10&track=a+b&_facet=area&_next=5&_sort=id", True)
    assert pairs == [
        ("track", "a b"),
        ("_sort", "id"),
        ("_size", "max"),
        ("_stream", "on"),
        ("_dl", "1"),
        ("_labels", "on"),
    ]


def test_stream_all_adds_size_and_stream():
    url = csv_links.stream_all("/catalog/papers_by_author.csv?author_id=3&_size=5&_dl=1")
    assert url == "/catalog/papers_by_author.csv?author_id=3&_size=max&_stream=on&_dl=1"


# charts ------------------------------------------------------------------------------------


def test_bar_chart_scales_to_the_largest_value_and_drops_zeros():
    chart = charts.bar_chart("c", "t", [("a", 10, "/a"), ("b", 5, None), ("z", 0, "/z")])
    assert [bar["label"] for bar in chart["bars"]] == ["a", "b"]
    assert chart["bars"][0]["width"] == charts.BAR_WIDTH
    assert chart["bars"][1]["width"] == charts.BAR_WIDTH / 2
    assert chart["bars"][1]["y"] == charts.ROW_HEIGHT
    assert chart["height"] == 2 * charts.ROW_HEIGHT


def test_bar_chart_shortens_long_labels_and_keeps_the_full_one():
    label = "Area · " + "x" * 100
    bar = charts.bar_chart("c", "t", [(label, 1, None)])["bars"][0]
    assert len(bar["label"]) == charts.LABEL_CHARS and bar["label"].endswith("…")
    assert bar["full_label"] == label


def test_bar_chart_of_nothing():
    chart = charts.bar_chart("c", "t", [])
    assert chart["bars"] == [] and chart["height"] == charts.ROW_HEIGHT


def test_safe_url_schemes():
    assert markup.safe_url("https://a.example/x") == "https://a.example/x"
    for bad in ("javascript:alert(1)", "http://", "ftp://a/b", "https://a b", "/relative", ""):
        assert markup.safe_url(bad) is None, bad


def test_render_cell_authors_as_names():
    html = call_render_cell({"authors": '["Ann <b>", "Bo"]'}, "authors", None)
    assert html == Markup("Ann &lt;b&gt;, Bo")
    assert call_render_cell({"authors": "not json"}, "authors", "papers") is None
    assert call_render_cell({"authors": '{"a": 1}'}, "authors", None) is None
    assert call_render_cell({"affiliations": '["pku", "mit"]'}, "affiliations", None) == "pku, mit"
    assert "[]" not in call_render_cell({"affiliations": "[]"}, "affiliations", "papers")


# the plugins in any Datasette --------------------------------------------------------------

# what only the site's pages show: its patched templates, stylesheet, header search and links
SITE_MARKS = (
    "skip-link",
    "header-search",
    'id="main"',
    "paper-catalog",
    "/search",
    "/-/charts",
    "Column notes",
    # Datasette 1.0's own base.html names the page's language too
    *(() if DATASETTE_1 else ('lang="en"',)),
)
OTHER_PAGES = ("/", "/other", "/other/things", "/other/things/1", "/other/things.json")


def untimed(page):
    return re.sub(r'"query_ms": [0-9.e-]+', "", re.sub(r"[0-9.]+ ?ms", "", page))


@pytest.fixture(scope="session")
def other_db(tmp_path_factory):
    """A database that is not a catalog."""
    import sqlite3

    path = tmp_path_factory.mktemp("other") / "other.db"
    with sqlite3.connect(path) as connection:
        connection.execute("create table things (id integer primary key, name text, note text)")
        connection.executemany(
            "insert into things values (?, ?, ?)",
            [(1, "first", "<b>x</b> \ue000y\ue001"), (2, "second", None)],
        )
    return path


def test_the_plugins_are_registered_by_the_installed_distribution():
    from datasette.plugins import get_plugins

    ours = [p for p in get_plugins() if p.get("name") == "paper-catalog"]
    package = [p for p in ours if p["templates_path"]]
    assert len(package) == 1 and package[0]["static_path"], ours
    assert package[0]["templates_path"].endswith("templates")
    assert all(p["hooks"] for p in ours if p is not package[0])


@pytest.mark.asyncio(loop_scope="session")
async def test_a_datasette_without_the_catalog_is_served_as_stock(other_db):
    from datasette.app import Datasette

    stock = Datasette([str(other_db)])
    for path in (*OTHER_PAGES, "/other/things.csv", "/-/databases.json"):
        response = await stock.client.get(path)
        assert response.status_code == 200, path
        for mark in SITE_MARKS:
            assert mark not in response.text, (path, mark)
    for path in ("/search", "/-/charts", "/-/author?name=x"):
        assert (await stock.client.get(path)).status_code == 404, path
    # a write to a mutable database is Datasette's to answer, not refused as read-only
    assert (await stock.client.post("/other/things/-/insert")).status_code != 405


@pytest.mark.asyncio(loop_scope="session")
async def test_a_template_rendered_from_a_string_renders_beside_the_plugins(other_db, seed_catalog):
    """Datasette's render_template() takes a Template as well as a name; one made from a string
    has no name (found by Datasette's own test_hook_prepare_jinja2_environment)."""
    from datasette.app import Datasette
    from datasette.utils.asgi import Request

    request = Request.fake("/catalog/papers")
    request.scope["csrftoken"] = lambda: "token"  # as Datasette's CSRF middleware sets it
    for datasette in (Datasette([str(other_db)]), Datasette(immutables=[str(seed_catalog)])):
        await datasette.invoke_startup()
        template = jinja_environment(datasette).from_string("Hello {{ a }}", {"a": "there"})
        assert await datasette.render_template(template) == "Hello there"
        assert await datasette.render_template(template, request=request) == "Hello there"


@pytest.mark.asyncio(loop_scope="session")
async def test_another_databases_pages_are_the_same_beside_the_catalog(other_db, seed_catalog):
    from datasette.app import Datasette

    alone = Datasette([str(other_db)])
    beside = Datasette([str(other_db)], immutables=[str(seed_catalog)])
    # its pages, its facet boxes (Datasette's, not the catalog's) and its error pages (which
    # name no database)
    for path in (
        *OTHER_PAGES[1:],
        "/other/things?_facet=name",
        "/other/nothing",
        "/other/things/3",
    ):
        ours = (await beside.client.get(path)).text
        theirs = (await alone.client.get(path)).text
        assert untimed(ours) == untimed(theirs), path
    # the catalog's own pages are the site's
    table = (await beside.client.get("/catalog/papers")).text
    assert "skip-link" in table and "header-search" in table


def test_stock_datasette_serve_of_another_database(other_db, tmp_path):
    """A real `datasette serve other.db` where paper-catalog is installed."""
    import subprocess
    import sys

    from .browser import free_port, wait_until_up

    port = free_port()
    log_path = tmp_path / "datasette.log"
    command = [sys.executable, "-m", "datasette", "serve", str(other_db), "--port", str(port)]
    with open(log_path, "w") as log:
        process = subprocess.Popen(command, stdout=log, stderr=subprocess.STDOUT)
    url = f"http://127.0.0.1:{port}"
    try:
        wait_until_up(url, process, log_path)
        plugins = local_http.get(url + "/-/plugins.json", timeout=10).json()
        assert any(plugin["name"] == "paper-catalog" for plugin in plugins)
        for path in OTHER_PAGES:
            response = local_http.get(url + path, timeout=10)
            assert response.status_code == 200, path
            for mark in SITE_MARKS:
                assert mark not in response.text, (path, mark)
    finally:
        process.terminate()
        process.wait(timeout=10)
    assert "Traceback" not in log_path.read_text()


@pytest.mark.asyncio(loop_scope="session")
async def test_a_users_template_dir_wins_over_the_patched_templates(seed_catalog, tmp_path):
    from datasette.app import Datasette

    base = (
        "<!DOCTYPE html><html><body>users own base{% block content %}{% endblock %}</body></html>"
    )
    (tmp_path / "base.html").write_text(base)
    # the site's own pages (home, /search) extend catalog_base.html
    (tmp_path / "catalog_base.html").write_text(base)
    (tmp_path / "_table.html").write_text("users own rows")
    ds = Datasette(immutables=[str(seed_catalog)], template_dir=str(tmp_path))
    for path in ("/", "/catalog", "/catalog/papers", "/search"):
        html = (await ds.client.get(path)).text
        assert "users own base" in html and "skip-link" not in html, path
    assert "users own rows" in (await ds.client.get("/catalog/papers")).text


@pytest.mark.asyncio(loop_scope="session")
async def test_the_catalog_may_have_another_name(seed_catalog, tmp_path):
    import shutil

    from datasette.app import Datasette

    path = tmp_path / "papers2024.db"
    shutil.copy(seed_catalog, path)
    metadata = {"plugins": {"paper-catalog": {"database": "papers2024"}}}
    ds = Datasette(immutables=[str(path)], **datasette_arguments(metadata))
    table = (await ds.client.get("/papers2024/papers")).text
    assert "skip-link" in table and "header-search" in table
    paper = (await ds.client.get("/papers2024/papers.json?_shape=array&_size=1")).json()[0]
    page = await ds.client.get(f"/papers2024/papers/{paper['id']}")
    assert page.status_code == 200 and "paper-page" in page.text
    assert (await ds.client.get("/search.json?q=learning")).json()["total"] > 0


@pytest.mark.parametrize(
    "first", ["datasette.app", "datasette.views.table", "paper_catalog_site.plugins.csv_stream"]
)
def test_the_plugins_load_whatever_is_imported_first(first):
    """Datasette loads installed plugins while its own modules import: no plugin module may
    import Datasette's views or app as it loads."""
    import subprocess
    import sys

    check = (
        f"import {first}; from datasette.plugins import get_plugins; "
        "print(sum(p['name'] == 'paper-catalog' for p in get_plugins()))"
    )
    result = subprocess.run(
        [sys.executable, "-c", check], capture_output=True, text=True, check=False, timeout=60
    )
    assert result.returncode == 0, result.stderr[-2000:]
    entry_points = importlib.metadata.entry_points(group="datasette")
    ours = [entry for entry in entry_points if entry.value.startswith("paper_catalog_site.")]
    assert int(result.stdout) == len(ours)


@pytest.mark.parametrize("first_rows", [1000, 5])
def test_empty_columns_are_those_without_a_value_in_any_row(seed_catalog, monkeypatch, first_rows):
    """plugins/papers_columns.py: the first rows, then one pass for the columns they leave
    unsure (5 first rows: some columns are found only by the pass)."""
    import sqlite3

    papers_columns = load_plugin("papers_columns")
    monkeypatch.setattr(papers_columns, "FIRST_ROWS", first_rows)
    connection = sqlite3.connect(seed_catalog)
    columns = [row[1] for row in connection.execute("pragma table_info(papers)")]
    expected = [
        column
        for column in columns
        if not connection.execute(
            f"select exists(select 1 from papers where [{column}] is not null)"
        ).fetchone()[0]
    ]
    assert papers_columns.empty_columns(connection, columns) == expected
    assert expected and set(expected) < set(columns)


# Datasette's own pages of the catalog: its templates with blocks of ours (templates/table.html,
# query.html, database.html, row.html, _facet_results.html), never an edit of its text


@pytest.mark.asyncio(loop_scope="session")
@pytest.mark.parametrize(
    "path",
    [
        "/catalog",
        "/catalog/papers",
        "/catalog/paper_authors",
        "/catalog/tracks/1",
        query_path() + "?sql=select+1",
        "/catalog/papers_by_author?author=Zhang",
    ],
)
async def test_datasettes_pages_of_the_catalog_have_the_sites_header(datasette, path):
    response = await datasette.client.get(path)
    assert response.status_code == 200
    html = response.text
    # Datasette's base.html writes the element (1.0: with its class "hd"), our block its content
    header = re.search(r"<header(?: class=\"hd\")?>(.*?)</header>", html, re.DOTALL).group(1)
    assert header.startswith('<nav><a class="skip-link" href="#main">')
    assert 'class="header-search"' in header and 'action="/search"' in header
    # what no block reaches is labelled by the page's script, from the site itself
    assert '<script type="module" src="/-/static-plugins/paper-catalog/catalog-pages.js">' in html
    assert (
        await datasette.client.get("/-/static-plugins/paper-catalog/catalog-pages.js")
    ).status_code == 200


@pytest.mark.asyncio(loop_scope="session")
async def test_the_papers_column_notes_are_folded_once(datasette):
    html = (await datasette.client.get("/catalog/papers")).text
    notes = re.findall(r'<dl class="column-descriptions">.*?</dl>', html, re.DOTALL)
    assert len(notes) == 1
    assert '<details class="column-notes"><summary>Column notes</summary>\n' + notes[0] in html
    assert "<dt>label</dt><dd>" in notes[0]


@pytest.mark.asyncio(loop_scope="session")
async def test_facets_are_headed_in_words_in_a_fixed_order_with_names_not_slugs(datasette):
    # Datasette orders boxes by how many values each shows: Authors (>30) would come first
    for path in ("/catalog/papers", "/catalog/papers?area=Applications"):
        html = (await datasette.client.get(path)).text
        headings = re.findall(r'<p class="facet-info-name"><strong>([^<]+?) <span', html)
        assert headings == ["Area", "Track", "Authors", "Affiliations"], path
        assert "(array)" not in html
    html = (await datasette.client.get("/catalog/papers")).text
    assert 'affiliations__arraycontains=microsoft-research">Microsoft Research</a>' in html
    # a chosen value: its remove link, and marked for screen readers
    html = (await datasette.client.get("/catalog/papers?area=Applications")).text
    assert re.search(
        r'<li aria-current="true">Applications &middot; \d+ <a href="[^"]+" class="cross"', html
    )
    # the JSON keeps the facets' own names and types
    data = await table_json(datasette, "/catalog/papers.json")
    assert data["facet_results"]["authors"]["type"] == "array"
