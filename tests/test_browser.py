"""The site in real Chromium against a real `datasette serve`: search from the UI, click a facet,
open a paper, see its math as MathML, and hostile markup in the data never run.

Screenshots land in test-artifacts/ (the README's copies live in docs/screenshots/).
"""

import json
import re
from urllib.parse import parse_qs, urlsplit

import pytest

from loader.build.catalog import build_catalog
from tests.browser import (
    datasette_server,
    new_page,
    requires_chromium,
    screenshot,
)

pytestmark = [pytest.mark.browser, requires_chromium]

# a word only the seed paper on diffusion solvers uses; its abstract has $1/\varepsilon$
MATH_PAPER_WORD = "polylogarithmically"

HOSTILE_RECORDS = [
    {
        "title": '<script>window.__xss=1</script>Hostile <img src=x onerror="window.__xss=2">',
        "abstract": (
            "A hostile abstract <script>window.__xss=3</script> with "
            '<img src=x onerror="window.__xss=4;alert(4)"> and math '
            r"$\text{<script>window.__xss=5</script>}$ and $x<y$, "
            r"\url{javascript:window.__xss=6} and [click](javascript:alert(7)) and "
            '<svg onload="window.__xss=8"></svg> and \\emph{<b onmouseover=alert(9)>x</b>}.'
        ),
        "authors": [
            "Mallory <script>window.__xss=10</script>",
            'Eve <img src=x onerror="window.__xss=11;alert(11)">',
        ],
        "track": "Security · <script>window.__xss=12</script>",
        "affiliations": ["<img src=x onerror=alert(13)>"],
        "url": "javascript:alert(14)",
    },
    {
        "title": "A benign neighbour of the hostile abstract",
        "abstract": "A benign abstract about hostile inputs and script injection, with $a^2$.",
        "authors": ["Mallory <script>window.__xss=10</script>", "Trent"],
        "track": "Security · Benign",
    },
]

# every element attribute that could run script, and every script URL, in the live DOM
FIND_SCRIPT_HOOKS = """() => {
    const found = [];
    for (const element of document.querySelectorAll('*')) {
        for (const attribute of element.attributes) {
            const value = attribute.value.trim().toLowerCase();
            if (attribute.name.startsWith('on') || value.startsWith('javascript:')) {
                found.push(element.tagName + ' ' + attribute.name + '=' + attribute.value);
            }
        }
    }
    return found;
}"""


@pytest.fixture(scope="module")
def site(seed_catalog, tmp_path_factory):
    """The seed catalog served by a real Datasette."""
    with datasette_server(seed_catalog, tmp_path_factory.mktemp("site-logs")) as url:
        yield url


@pytest.fixture(scope="module")
def hostile_site(tmp_path_factory):
    """A catalog built by the real loader from JSON Lines full of HTML and script."""
    folder = tmp_path_factory.mktemp("hostile")
    source = folder / "hostile.jsonl"
    source.write_text(
        "".join(json.dumps(record) + "\n" for record in HOSTILE_RECORDS), encoding="utf-8"
    )
    db_path = folder / "catalog.db"
    build_catalog([source], db_path)
    with datasette_server(db_path, folder) as url:
        yield url


@pytest.fixture
def page(browser):
    dialogs, errors = [], []
    page = new_page(browser, dialogs=dialogs, errors=errors)
    page.dialogs, page.errors = dialogs, errors
    yield page
    page.close()


def row_count(page):
    return page.locator("table.rows-and-columns tbody tr").count()


def test_search_from_the_home_page(site, page):
    page.goto(site + "/")
    screenshot(page, "home")
    page.fill("#home-search", "diffusion models")
    page.press("#home-search", "Enter")
    page.wait_for_load_state()
    url = urlsplit(page.url)
    assert url.path == "/search"
    assert parse_qs(url.query)["q"] == ["diffusion models"]
    assert page.locator("li.result").count() > 0
    marks = page.locator("p.snippet mark")
    assert marks.count() > 0
    assert marks.first.inner_text().lower() in ("diffusion", "models", "model")
    assert "\ue000" not in page.content()
    assert page.dialogs == [] and page.errors == []


def test_click_a_facet(site, page):
    page.goto(site + "/catalog/papers")
    counts = page.locator("h2.header3").first
    total = int(re.search(r"([\d,]+) rows?", counts.inner_text())[1])
    # the view a reader scrolls to: row count, search, facets and the first rows
    screenshot(page, "papers", start=counts)
    facet = page.locator(".facet-results .facet-info[data-column=area] li a").first
    area = facet.inner_text()
    facet.click()
    page.wait_for_load_state()
    assert parse_qs(urlsplit(page.url).query)["area"] == [area]
    filtered = int(re.search(r"([\d,]+) rows?", page.locator("h2.header3").first.inner_text())[1])
    assert 0 < filtered < total
    areas = page.locator("table.rows-and-columns td.col-area").all_inner_texts()
    assert areas and set(areas) == {area}
    screenshot(page, "papers-facet", start=page.locator("h2.header3").first)


def test_blank_search_shows_rows(site, page):
    for blank in ("", "%20%20"):
        response = page.goto(f"{site}/catalog/papers?_search={blank}")
        assert response.status == 200
        assert row_count(page) > 0
    page.fill("#_search", "   ")
    page.click(".filters input[type=submit]")
    page.wait_for_load_state()
    assert row_count(page) > 0
    assert "Error" not in page.title()


def test_open_a_paper_and_see_its_math(site, page):
    page.goto(site + "/")
    page.fill("#home-search", MATH_PAPER_WORD)
    page.press("#home-search", "Enter")
    page.wait_for_load_state()
    page.locator("li.result h3 a").first.click()
    page.wait_for_load_state()
    assert re.fullmatch(r"/catalog/papers/[0-9a-f]{16}", urlsplit(page.url).path)
    math = page.locator(".abstract math").first
    box = math.bounding_box()
    assert box and box["width"] > 5 and box["height"] > 5
    # Chromium lays MathML out itself: its display is "math" (or "inline math"), and the
    # fraction parts are not plain inline text
    display = math.evaluate("element => getComputedStyle(element).display")
    assert "math" in display
    assert math.evaluate("element => element.namespaceURI") == "http://www.w3.org/1998/Math/MathML"
    assert "$" not in page.locator(".abstract").inner_text()
    assert page.locator(".authors-section ol.author-list li a").count() > 0
    screenshot(page, "paper")
    assert page.dialogs == [] and page.errors == []


def test_from_a_paper_to_its_author(site, page):
    page.goto(site + "/catalog/search?q=" + MATH_PAPER_WORD)
    page.locator("td.col-label a").first.click()
    page.wait_for_load_state()
    first_author = page.locator(".authors-section ol.author-list li a").first
    name = first_author.inner_text()
    first_author.click()
    page.wait_for_load_state()
    assert re.fullmatch(r"/catalog/authors/\d+", urlsplit(page.url).path)
    assert page.locator("h1").inner_text() == name
    assert page.locator(".author-papers li a").count() >= 1
    screenshot(page, "author")


def test_busy_author_page(site, page, query):
    author_id = query(
        "select author_id from paper_authors join papers on papers.id = paper_id "
        "where track_id is not null group by author_id order by count(*) desc, author_id limit 1"
    )[0][0]
    page.goto(f"{site}/catalog/authors/{author_id}")
    assert page.locator(".coauthors li").count() > 0
    assert page.locator(".tracks li").count() > 0
    screenshot(page, "author-busy")


def test_charts_render_as_svg(site, page, query):
    tracks = query("select count(*) from tracks where paper_count > 0")[0][0]
    page.goto(site + "/-/charts")
    assert page.locator("#chart-tracks svg rect.bar").count() == tracks
    box = page.locator("#chart-areas svg").bounding_box()
    assert box["width"] > 300 and box["height"] > 50
    widths = [
        float(rect.get_attribute("width"))
        for rect in page.locator("#chart-tracks svg rect.bar").all()
    ]
    assert widths == sorted(widths, reverse=True)
    screenshot(page, "charts")


HOSTILE_PAGES = [
    "/",
    "/catalog/papers",
    "/catalog/papers?_facet=track&_facet_array=authors",
    "/catalog/papers?_search=hostile",
    "/catalog/search?q=hostile",
    "/catalog/search?q=%3Cscript%3Ewindow.__xss%3D99%3C%2Fscript%3E",
    "/catalog/authors",
    "/catalog/affiliations",
    "/catalog/tracks",
    "/catalog/papers_by_author?author_id=1",
    "/catalog/coauthors?author_id=1",
    "/-/charts",
]


@pytest.mark.parametrize("path", HOSTILE_PAGES)
def test_hostile_data_never_runs_script(hostile_site, page, path):
    page.goto(hostile_site + path)
    page.wait_for_load_state("load")
    assert page.evaluate("typeof window.__xss") == "undefined"
    assert page.evaluate(FIND_SCRIPT_HOOKS) == []
    assert page.dialogs == []


def test_hostile_paper_and_author_pages_show_the_markup_as_text(hostile_site, page):
    page.goto(hostile_site + "/catalog/search?q=hostile+abstract")
    page.locator("td.col-label a", has_text=re.compile("^<script>")).click()
    page.wait_for_load_state()
    heading = page.locator("h1").inner_text()
    assert "<script>window.__xss=1</script>" in heading
    abstract = page.locator(".abstract").inner_text()
    assert "<script>window.__xss=3</script>" in abstract
    assert "<img src=x" in abstract
    assert "<script>window.__xss=5</script>" in page.locator(".abstract math").first.text_content()
    assert page.locator(".abstract math").count() >= 1
    assert page.locator(".abstract a").count() == 0
    assert page.locator(".paper-meta a[href^='javascript']").count() == 0
    screenshot(page, "hostile-paper")
    author = page.locator(".authors-section ol.author-list li a").first
    assert "<script>" in author.inner_text()
    author.click()
    page.wait_for_load_state()
    assert "<script>window.__xss=10</script>" in page.locator("h1").inner_text()
    for href in page.locator("a").evaluate_all("links => links.map(link => link.href)"):
        assert not href.lower().startswith("javascript:")
    screenshot(page, "hostile-author")
    assert page.evaluate("typeof window.__xss") == "undefined"
    assert page.evaluate(FIND_SCRIPT_HOOKS) == []
    assert page.dialogs == [] and page.errors == []
