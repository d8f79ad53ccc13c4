"""axe-core in real Chromium on the main pages, at desktop and phone widths.

axe-core comes from npm (tests/js/package.json; `make test` installs it) and is injected into
each page; no serious or critical violation (nor a heading out of order) may remain, and no page may scroll sideways on a
390 px phone.
"""

from pathlib import Path
from urllib.parse import quote_plus

import pytest

from .browser import requires_chromium, screenshot

AXE = Path(__file__).resolve().parent / "js" / "node_modules" / "axe-core" / "axe.min.js"
WIDTHS = {"desktop": 1280, "phone": 390}
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
        "papers": "/catalog/papers",
        # a chosen facet value: its remove link (✖) in a line of text
        "papers-filtered": f"/catalog/papers?_search=learning&area={quote_plus(area)}",
        "paper": f"/catalog/papers/{paper}",
        "author": f"/catalog/authors/{author}",
        # a Versions list and its folded sources
        "merged-paper": f"/catalog/papers/{merged}",
        "author-search": "/catalog/authors?_search=zhang",
        "charts": "/-/charts",
        # ad-hoc SQL: the editor (CodeMirror's own input) and its Format button
        "database": "/catalog",
        "sql": "/catalog?sql=select+id%2C+label+from+papers+limit+3",
        # foreign keys shown as a label link beside the raw id
        "links": "/catalog/paper_authors",
    }


def violations(page):
    page.add_script_tag(path=str(AXE))
    result = page.evaluate("async () => await axe.run(document, {resultTypes: ['violations']})")
    return [
        (v["id"], v["impact"], [node["target"] for node in v["nodes"]][:3])
        for v in result["violations"]
        if v["impact"] in SERIOUS or v["id"] in ALSO_HELD
    ]


# the phone width in `make test-slow`: tests/test_pages_browser.py checks every page kind's
# width on a phone in `make test`
@pytest.mark.parametrize("width", ["desktop", pytest.param("phone", marks=pytest.mark.slow)])
def test_no_serious_violation_and_no_sideways_scroll(search_site, browser, search_catalog, width):
    # axe-core goes in as an inline script, which the site's Content-Security-Policy refuses
    page = browser.new_page(viewport={"width": WIDTHS[width], "height": 900}, bypass_csp=True)
    found, wide = {}, {}
    for name, path in pages(search_catalog).items():
        response = page.goto(search_site + path)
        assert response.status == 200, path
        # axe checks only what shows: on a phone, the facets folded under Filters too
        page.evaluate("document.querySelectorAll('details.filters').forEach(d => d.open = true)")
        problems = violations(page)
        if problems:
            found[name] = problems
        scroll = page.evaluate("document.documentElement.scrollWidth")
        if scroll > WIDTHS[width]:
            wide[name] = scroll
        screenshot(page, f"axe-{width}-{name}", full_page=False)
    page.close()
    assert found == {}
    if width == "phone":
        assert wide == {}


def test_a_paper_with_links_citations_and_countries_has_no_serious_violation(
    signals_site, browser, signals_catalog
):
    """The paper page's links line, citations, rating, TL;DR and countries, and /search's
    rating control, code and country facets (real Paper Copilot records), at both widths."""
    import sqlite3

    with sqlite3.connect(signals_catalog) as connection:
        paper = connection.execute(
            "select id from papers where has_code = 1 and citations is not null"
            " order by tldr is null, rating is null, citations desc limit 1"
        ).fetchone()[0]
    found, wide = {}, {}
    for width, pixels in WIDTHS.items():
        viewport = {"width": pixels, "height": 900}
        page = browser.new_page(viewport=viewport, bypass_csp=True)
        for name, path in {
            "paper-signals": f"/catalog/papers/{paper}",
            "search-signals": "/search?sort=citations&rating_min=5",
        }.items():
            response = page.goto(signals_site + path)
            assert response.status == 200, path
            assert page.locator(".paper-link").count() > 0
            page.evaluate(
                "document.querySelectorAll('details.filters').forEach(d => d.open = true)"
            )
            problems = violations(page)
            if problems:
                found[width, name] = problems
            scroll = page.evaluate("document.documentElement.scrollWidth")
            if scroll > pixels:
                wide[width, name] = scroll
            screenshot(page, f"axe-{width}-{name}", full_page=False)
        page.close()
    assert found == {} and wide == {}


@pytest.mark.parametrize("name", ["home", "search", "paper", "author"])
def test_keyboard_users_skip_to_the_content(search_site, browser, search_catalog, name):
    """The first Tab of each of the site's own pages (catalog_base.html) reaches the skip
    link, and it moves the focus to the main landmark."""
    page = browser.new_page(viewport={"width": 1280, "height": 900})
    page.goto(search_site + pages(search_catalog)[name])
    page.keyboard.press("Tab")
    assert page.evaluate("document.activeElement.textContent") == "Skip to content"
    page.keyboard.press("Enter")
    assert page.evaluate("document.activeElement.id") == "main"
    assert page.evaluate("document.activeElement.tagName") == "MAIN"
    assert page.evaluate("document.documentElement.lang") == "en"
    page.close()
