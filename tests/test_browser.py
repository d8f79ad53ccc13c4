"""The site in real Chromium against a real `paper-catalog serve`: search from the UI, click a facet,
open a paper, see its math as MathML. (Hostile markup in the data never run:
tests/test_xss_browser.py, on the one hostile catalog both sets of payloads make.)

Screenshots land in test-artifacts/ (the README's copies live in docs/screenshots/).
"""

import re
import sqlite3
from contextlib import closing
from urllib.parse import parse_qs, urlsplit

import pytest

from tests.browser import requires_chromium, screenshot

pytestmark = [pytest.mark.browser, requires_chromium]

# a word only the seed paper on diffusion solvers uses; its abstract has $1/\varepsilon$
MATH_PAPER_WORD = "polylogarithmically"


@pytest.fixture(scope="module")
def site(search_site):
    """The search catalog (the seeds and 36 real conference papers) served by a real
    `paper-catalog serve`: the server the other browser tests of a worker use too."""
    return search_site


@pytest.fixture
def query(search_catalog):
    with closing(sqlite3.connect(search_catalog)) as connection:
        yield lambda sql, params=(): connection.execute(sql, params).fetchall()


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
    counts = page.locator("section.content > h3").first
    total = int(re.search(r"([\d,]+) rows?", counts.inner_text())[1])
    # the view a reader scrolls to: row count, search, facets and the first rows
    screenshot(page, "papers", start=counts)
    facet = page.locator(".facet-results .facet-info[data-column=area] li a").first
    area = facet.inner_text()
    facet.click()
    page.wait_for_load_state()
    assert parse_qs(urlsplit(page.url).query)["area"] == [area]
    filtered = int(
        re.search(r"([\d,]+) rows?", page.locator("section.content > h3").first.inner_text())[1]
    )
    assert 0 < filtered < total
    areas = page.locator("table.rows-and-columns td.col-area").all_inner_texts()
    assert areas and set(areas) == {area}
    screenshot(page, "papers-facet", start=page.locator("section.content > h3").first)


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
