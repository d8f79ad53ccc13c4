"""Datasette's own pages of the catalog (tables, a row, SQL, a canned query, the database) in real
Chromium: axe-core finds no serious or critical violation, nor a heading out of order, with
their templates left Datasette's (templates/table.html ... add blocks; static/catalog-pages.js
labels what no block reaches). The site's header (skip link, search box), the folded column
notes and the facet boxes in words come through those blocks.
"""

import re

import pytest

from .browser import AXE, WIDTHS, requires_chromium, screenshot
from .test_accessibility import violations

pytestmark = [
    pytest.mark.browser,
    requires_chromium,
    pytest.mark.skipif(not AXE.exists(), reason="needs axe-core: npm install --prefix tests/js"),
]

PAGES = {
    "papers": "/catalog/papers",
    # a chosen value (its remove link) and a search
    "papers-filtered": "/catalog/papers?_search=learning&year=2018",
    # a filter row of the form: its column, operation and value controls
    "papers-filter-row": "/catalog/papers?year__gte=2018",
    "authors": "/catalog/authors?_search=zhang",
    # foreign keys shown as a label link beside the raw id
    "links": "/catalog/paper_authors",
    # a row of a table with no page of its own
    "row": "/catalog/tracks/1",
    "database": "/catalog",
    # ad-hoc SQL: the editor (CodeMirror's own input) and its Format button
    "sql": "/catalog?sql=select+id%2C+label+from+papers+limit+3",
    "canned": "/catalog/papers_by_author?author=Zhang",
}


# the table pages of PAGES
TABLES = {"papers", "papers-filtered", "papers-filter-row", "authors", "links"}


def first_rows(name, rows):
    """The page of PAGES, a table's with only its first `rows` rows (all of a page: None)."""
    path = PAGES[name]
    if rows is None or name not in TABLES:
        return path
    return f"{path}{'&' if '?' in path else '?'}_size={rows}"


# `make test`: the desktop's width, each table's first 10 rows (the rows of a table share their
# markup; axe-core's time grows with the page); `make test-slow`: both widths, a whole page of rows
@pytest.mark.parametrize(
    "width, rows",
    [
        pytest.param("desktop", 10, id="desktop-10-rows"),
        pytest.param("desktop", None, id="desktop", marks=pytest.mark.slow),
        pytest.param("phone", None, id="phone", marks=pytest.mark.slow),
    ],
)
def test_datasettes_pages_of_the_catalog_pass_axe(search_site, axe_page, width, rows):
    page = axe_page
    page.set_viewport_size({"width": WIDTHS[width], "height": 900})
    found = {}
    for name in PAGES:
        path = first_rows(name, rows)
        response = page.goto(search_site + path)
        assert response.status == 200, path
        problems = violations(page)
        if problems:
            found[name] = problems
        screenshot(page, f"axe-tables-{width}-{name}", full_page=False)
    assert found == {}


def test_the_page_script_runs_under_the_sites_policy(search_site, page):
    """The script comes from the site itself, so the Content-Security-Policy lets it run: the
    language, the filter labels and the editor's label are there (no bypass here)."""
    page.goto(search_site + "/catalog/papers?year__gte=2018")
    assert page.evaluate("document.documentElement.lang") == "en"
    for name in ("_filter_column_1", "_filter_op_1", "_filter_value_1", "_filter_column"):
        assert page.locator(f"[name={name}]").get_attribute("aria-label"), name
    # the row count heads the content under the h1: a level 2 heading to a screen reader
    heading = page.locator("section.content > h3").first
    assert heading.get_attribute("aria-level") == "2"
    assert re.search(r"[\d,]+ rows? where year", heading.inner_text())
    page.goto(search_site + "/catalog?sql=select+1")
    page.wait_for_function("document.querySelector('.CodeMirror textarea[aria-label]')")
    assert page.errors == []


def test_keyboard_users_skip_to_the_table(search_site, page):
    page.goto(search_site + "/catalog/papers")
    page.keyboard.press("Tab")
    assert page.evaluate("document.activeElement.textContent") == "Skip to content"
    page.keyboard.press("Enter")
    assert page.evaluate("document.activeElement.id") == "main"
    assert page.get_by_role("main").count() == 1


def test_column_notes_fold_and_facets_read_in_words(search_site, page):
    page.goto(search_site + "/catalog/papers")
    notes = page.locator("details.column-notes")
    assert notes.count() == 1 and not notes.evaluate("details => details.open")
    assert not page.locator("dl.column-descriptions").is_visible()
    notes.locator("summary").click()
    assert page.locator("dl.column-descriptions dt").first.is_visible()
    headings = page.locator(".facet-info-name strong").all_inner_texts()
    titles = [re.sub(r"\s*>?\d+$", "", heading) for heading in headings]
    assert titles[:2] == ["Venue", "Year"] and "Authors" in titles
    assert not any("(" in title for title in titles)
    # the header's search box leads to /search
    page.fill("#header-q", "graph")
    page.press("#header-q", "Enter")
    page.wait_for_load_state()
    assert page.url.startswith(search_site + "/search?q=graph")
