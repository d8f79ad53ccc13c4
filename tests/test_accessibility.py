"""axe-core in real Chromium on the main pages, at desktop and phone widths.

axe-core comes from npm (tests/js/package.json; `make test` installs it) and is injected into
each page; no serious or critical violation (nor a heading out of order) may remain, and no page may scroll sideways on a
390 px phone.

Each page kind is checked once in `make test`: the site's own pages here, Datasette's pages of
the catalog (tables, a row, the database, SQL, a canned query) in tests/test_accessibility_tables.py,
the error pages in tests/test_error_pages.py. An axe-core run costs Chromium about a second a page.
"""

from urllib.parse import quote_plus

import pytest

from .browser import AXE, DESKTOP_AND_PHONE_IN_SLOW, WIDTHS, requires_chromium, screenshot

SERIOUS = {"serious", "critical"}
# moderate rules held too: headings in order (Datasette's table and SQL pages skip from h1 to h3)
ALSO_HELD = {"heading-order"}

pytestmark = [
    pytest.mark.browser,
    requires_chromium,
    pytest.mark.skipif(not AXE.exists(), reason="needs axe-core: npm install --prefix tests/js"),
]


def pages(search_catalog):
    import sqlite3

    with sqlite3.connect(search_catalog) as connection:
        paper = connection.execute(
            "select id from papers where abstract like '%$%' order by id limit 1"
        ).fetchone()[0]
        author = connection.execute("select id from authors order by paper_count desc").fetchone()[
            0
        ]
        merged = connection.execute(
            "select id from papers where source_count > 1 order by id limit 1"
        ).fetchone()[0]
        area = connection.execute(
            "select area from papers where area is not null group by area order by count(*) desc"
        ).fetchone()[0]
    return {
        "home": "/",
        "search": "/search?q=learning&venue=ICLR",
        "search-empty": "/search?q=lerning+imitaton",
        # the lines under the box saying how the query was read
        "search-notes": "/search?q=learning+or+policy+venue%3AICLR",
        "paper": f"/catalog/papers/{paper}",
        "author": f"/catalog/authors/{author}",
        # a Versions list and its folded sources
        "merged-paper": f"/catalog/papers/{merged}",
        "charts": "/-/charts",
        # Datasette's pages of the catalog: axe-core runs on them in
        # tests/test_accessibility_tables.py (its PAGES), their width is measured here
        "papers": "/catalog/papers",
        # a chosen facet value: its remove link (✖) in a line of text
        "papers-filtered": f"/catalog/papers?_search=learning&area={quote_plus(area)}",
        "author-search": "/catalog/authors?_search=zhang",
        # ad-hoc SQL: the editor (CodeMirror's own input) and its Format button
        "database": "/catalog",
        "sql": "/catalog?sql=select+id%2C+label+from+papers+limit+3",
        # foreign keys shown as a label link beside the raw id
        "links": "/catalog/paper_authors",
    }


# the pages of pages() that tests/test_accessibility_tables.py runs axe-core on (the same
# URLs, or the same kind: a table filtered by a facet value and a search)
AXE_ELSEWHERE = {"papers", "papers-filtered", "author-search", "database", "sql", "links"}


OPEN_FILTERS = "document.querySelectorAll('details.filters').forEach(d => d.open = true)"


# only the violations, and no CSS selector made for each node checked (about a tenth of a
# run's time); the selectors are made in a second run, for the report, once a violation is found
AXE_RUN = "async (selectors) => await axe.run(document, {resultTypes: ['violations'], selectors})"


def violations(page):
    """axe-core's serious and critical violations (and ALSO_HELD) of the page as loaded: axe is
    injected unless the page has it already (axe_page: in every document, tests/conftest.py)."""
    if not page.evaluate("typeof axe !== 'undefined'"):
        page.add_script_tag(path=str(AXE))

    def held(selectors):
        return [
            (v["id"], v["impact"], [node.get("target") for node in v["nodes"]][:3])
            for v in page.evaluate(AXE_RUN, selectors)["violations"]
            if v["impact"] in SERIOUS or v["id"] in ALSO_HELD
        ]

    return held(False) and held(True)


# `make test`: axe-core at the desktop's width on the site's own pages, and every page's width on
# a phone (a page axe-core ran on measured as loaded, the viewport narrowed: the layout follows
# it; the others loaded at the phone's width);
# `make test-slow`: axe-core at the phone's width on every page of pages() too
@pytest.mark.parametrize("width", DESKTOP_AND_PHONE_IN_SLOW)
def test_no_serious_violation_and_no_sideways_scroll(search_site, axe_page, search_catalog, width):
    page = axe_page
    found, wide = {}, {}
    for name, path in pages(search_catalog).items():
        axe_here = width == "phone" or name not in AXE_ELSEWHERE
        # a page axe-core does not run on here is loaded at the phone's width at once
        loaded_at = WIDTHS[width] if axe_here else WIDTHS["phone"]
        if page.viewport_size["width"] != loaded_at:
            page.set_viewport_size({"width": loaded_at, "height": 900})
        response = page.goto(search_site + path)
        assert response.status == 200, path
        if axe_here:
            # axe checks only what shows: on a phone, the facets folded under Filters too
            page.evaluate(OPEN_FILTERS)
            problems = violations(page)
            if problems:
                found[name] = problems
            screenshot(page, f"axe-{width}-{name}", full_page=False)
        if page.viewport_size["width"] != WIDTHS["phone"]:
            page.set_viewport_size({"width": WIDTHS["phone"], "height": 900})
        scroll = page.evaluate("document.documentElement.scrollWidth")
        if scroll > WIDTHS["phone"]:
            wide[name] = scroll
    assert found == {}
    assert wide == {}


# axe-core at the phone's width in `make test-slow`, as above; both widths measured in `make test`
@pytest.mark.parametrize("width", DESKTOP_AND_PHONE_IN_SLOW)
def test_a_paper_with_links_citations_and_countries_has_no_serious_violation(
    signals_site, axe_page, signals_catalog, width
):
    """The paper page's links line, citations, rating, TL;DR and countries, and /search's
    rating control, code and country facets (real Paper Copilot records): axe-core, and no
    sideways scroll at either width."""
    import sqlite3

    with sqlite3.connect(signals_catalog) as connection:
        paper = connection.execute(
            "select id from papers where has_code = 1 and citations is not null"
            " order by tldr is null, rating is null, citations desc limit 1"
        ).fetchone()[0]
    found, wide = {}, {}
    page = axe_page
    for name, path in {
        "paper-signals": f"/catalog/papers/{paper}",
        "search-signals": "/search?sort=citations&rating_min=5",
    }.items():
        page.set_viewport_size({"width": WIDTHS[width], "height": 900})
        response = page.goto(signals_site + path)
        assert response.status == 200, path
        assert page.locator(".paper-link").count() > 0
        page.evaluate(OPEN_FILTERS)
        problems = violations(page)
        if problems:
            found[width, name] = problems
        screenshot(page, f"axe-{width}-{name}", full_page=False)
        for other, pixels in WIDTHS.items():
            page.set_viewport_size({"width": pixels, "height": 900})
            scroll = page.evaluate("document.documentElement.scrollWidth")
            if scroll > pixels:
                wide[other, name] = scroll
    assert found == {} and wide == {}


@pytest.mark.parametrize("name", ["home", "search", "paper", "author"])
def test_keyboard_users_skip_to_the_content(search_site, page, search_catalog, name):
    """The first Tab of each of the site's own pages (catalog_base.html) reaches the skip
    link, and it moves the focus to the main landmark."""
    page.goto(search_site + pages(search_catalog)[name])
    page.keyboard.press("Tab")
    assert page.evaluate("document.activeElement.textContent") == "Skip to content"
    page.keyboard.press("Enter")
    assert page.evaluate("document.activeElement.id") == "main"
    assert page.evaluate("document.activeElement.tagName") == "MAIN"
    assert page.evaluate("document.documentElement.lang") == "en"
