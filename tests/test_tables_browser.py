"""The catalog's tables in real Chromium through the served app, at a phone's and a desktop's
width: the papers table's first row on the first screen (its facets in a "Filters" control,
beside the rows on a desktop), every abstract inside its cell (the table and SQL results),
years newest first, no facet of "(none)" alone, and downloads of every row (CSV, BibTeX,
JSON) offered only for rows there are. The search catalog: the seeds plus 36 real conference
papers (tests/fixtures/search/SOURCE.md).
"""

import json
import re
import sqlite3

import pytest

from .browser import blank_page, requires_chromium, screenshot
from .test_accessibility import AXE, violations

pytestmark = [pytest.mark.browser, requires_chromium]

SCREENS = {"phone": (390, 844), "desktop": (1280, 900)}
# every abstract cell: its content wider than its box would run past the column
CELLS_PAST_THEIR_COLUMN = """() => [...document.querySelectorAll('td')]
    .filter(td => td.querySelector('.abstract, .abstract-text'))
    .map(td => td.scrollWidth - td.clientWidth)
    .filter(extra => extra > 0)"""
ABSTRACTS_SQL = "/catalog?sql=select+title%2C+abstract+from+papers+where+abstract+is+not+null"


def first_row_top(page):
    return page.evaluate(
        "document.querySelector('table.rows-and-columns tbody tr').getBoundingClientRect().top"
    )


@pytest.mark.skipif(not AXE.exists(), reason="needs axe-core: npm install --prefix tests/js")
@pytest.mark.parametrize("screen", SCREENS)
def test_the_papers_tables_rows_come_first_and_fit(search_site, axe_page, screen):
    width, height = SCREENS[screen]
    page = blank_page(axe_page, width, height)
    page.goto(search_site + "/catalog/papers")
    assert first_row_top(page) < height
    # docs/screenshots/papers-390.png and papers-1280.png
    screenshot(page, f"tables-papers-{screen}", full_page=False)
    filters = page.locator("details.filters")
    boxes = page.locator("#facets .facet-info")
    assert boxes.count() >= 2
    if screen == "phone":
        # a control before the rows, folded until asked for
        assert filters.locator("summary").is_visible() and not boxes.first.is_visible()
        filters.locator("summary").click()
        assert boxes.first.is_visible()
    else:
        # a column beside the rows, open
        assert boxes.first.is_visible()
        rows_box = page.locator(".table-rows").bounding_box()
        assert boxes.first.bounding_box()["x"] >= rows_box["x"] + rows_box["width"]
    assert page.evaluate(CELLS_PAST_THEIR_COLUMN) == []
    assert page.evaluate("document.documentElement.scrollWidth") <= width
    if screen == "phone":
        # with the Filters control open; at the desktop's width axe-core runs on this page in
        # tests/test_accessibility_tables.py
        assert violations(page) == []
    page.goto(search_site + ABSTRACTS_SQL)
    assert page.locator("td.col-abstract").count() > 0
    assert page.evaluate(CELLS_PAST_THEIR_COLUMN) == []


def box_values(page, column):
    return page.locator(f"#facets .facet-info[data-column={column}] li a").all_inner_texts()


def test_years_newest_first_and_no_facet_of_none_alone(search_site, page):
    # the catalog's years: 2017 has the most papers, 2018 is the newest
    page.goto(search_site + "/catalog/papers")
    assert box_values(page, "year") == ["2018", "2017"]
    page.goto(search_site + "/search?venue=ICLR")
    titles = page.locator(".search-facets h2").all_inner_texts()
    # no ICLR paper has a track or an area: those facets would list "(none)" alone
    assert "Status" in titles and "Track" not in titles and "Area" not in titles
    years = page.locator(".search-facets section.facet").filter(
        has=page.locator("h2", has_text="Year")
    )
    assert [text.split()[0] for text in years.locator("li").all_inner_texts()] == ["2018", "2017"]


# the visible links of the page's content to a download of its rows: {text: href}
DOWNLOAD_LINKS = """() => Object.fromEntries([...document.querySelectorAll('section.content a')]
    .filter(a => ['CSV', 'BibTeX', 'JSON', 'json'].includes(a.textContent) && a.checkVisibility())
    .map(a => [a.textContent, a.getAttribute('href')]))"""


def download_links(page):
    return page.evaluate(DOWNLOAD_LINKS)


def test_downloads_of_every_row_and_none_of_no_rows(search_site, search_catalog, page):
    page.goto(search_site + "/catalog/papers?venue=ICLR")
    with sqlite3.connect(search_catalog) as connection:
        iclr = connection.execute("select count(*) from papers where venue = 'ICLR'").fetchone()[0]
    assert page.locator("p.exports").inner_text().startswith(f"Download all {iclr} rows:")
    links = download_links(page)
    assert set(links) == {"CSV", "BibTeX", "JSON"}
    bibtex = page.request.get(search_site + links["BibTeX"])
    assert bibtex.ok and len(re.findall(r"^@\w+\{", bibtex.text(), re.MULTILINE)) == iclr
    assert 'filename="papers-iclr.bib"' in bibtex.headers["content-disposition"]
    iclr_papers = json.loads(page.request.get(search_site + links["JSON"]).text())
    assert iclr_papers["total"] == len(iclr_papers["results"]) == iclr
    assert {paper["venue"] for paper in iclr_papers["results"]} == {"ICLR"}
    # the whole table's JSON: every paper, not Datasette's page of 25
    page.goto(search_site + "/catalog/papers")
    every = json.loads(page.request.get(search_site + download_links(page)["JSON"]).text())
    with sqlite3.connect(search_catalog) as connection:
        papers = connection.execute("select count(*) from papers").fetchone()[0]
    assert every["total"] == len({paper["id"] for paper in every["results"]}) == papers > 25
    page.goto(search_site + "/catalog/papers?venue=NeurIPS&status=Spotlight")
    assert page.locator("p.exports").inner_text().startswith("Download the 1 row:")
    page.goto(search_site + "/catalog/papers?_search=zzzqqq")
    assert download_links(page) == {}
    page.goto(search_site + "/catalog/authors?_search=zzzqqq")
    assert download_links(page) == {}
    page.goto(search_site + "/search?venue=NeurIPS&status=Spotlight")
    assert page.locator("p.exports").inner_text().startswith("Download the 1 paper:")
