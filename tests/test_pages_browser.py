"""The site on a phone and by keyboard, in real Chromium, on real papers (the real sample served
by `paper-catalog serve`): no page kind scrolls sideways at 390 or 1280 px; /search's Filters
control comes before the results, opens the facets without script and is reached by a skip
link; a merged paper lists its versions; an author's papers are headed by year; an author
lookup ranks namesakes by paper count; the site's own pages (home, search, paper, author) at
both widths. Screenshots go to test-artifacts/ (docs/screenshots/ has copies)."""

import sqlite3

import pytest

from .browser import WIDTHS, blank_page, requires_chromium, screenshot

pytestmark = [pytest.mark.browser, requires_chromium]


@pytest.fixture(scope="module")
def real_rows(real_catalog):
    """The real sample's papers and authors the tests open."""
    with sqlite3.connect(real_catalog) as connection:

        def one(sql):
            return connection.execute(sql).fetchone()[0]

        return {
            # ICML 2015, with its arXiv version of 2013
            "merged": one(
                "select id from papers where source_count = 2 and id in (select paper_id "
                "from paper_sources where venue = 'arXiv' and year = 2013)"
            ),
            "long_track": one("select id from papers order by length(track) desc limit 1"),
            # Marc'Aurelio Ranzato: papers of 2017, 2018 and 2019
            "author": one("select id from authors where key = 'marcaurelio ranzato'"),
        }


def page_kinds(rows):
    """One page of each kind the site has (the canned queries the issue found wide too)."""
    return {
        "home": "/",
        "search": "/search?q=learning&venue=ICML",
        "search-empty": "/search?q=lerning+imitaton",
        "papers": "/catalog/papers?_search=learning",
        "links": "/catalog/paper_sources",
        "merged-paper": f"/catalog/papers/{rows['merged']}",
        "long-track-paper": f"/catalog/papers/{rows['long_track']}",
        "author": f"/catalog/authors/{rows['author']}",
        "author-search": "/catalog/authors?_search=zhang",
        "charts": "/-/charts",
        "database": "/catalog",
        "sql": "/catalog?sql=select+*+from+paper_sources+limit+5",
        "papers_per_track": "/catalog/papers_per_track",
        "related_papers": f"/catalog/related_papers?paper_id={rows['merged']}",
        "prolific_authors": "/catalog/prolific_authors",
        "affiliation_leaderboard": "/catalog/affiliation_leaderboard",
        "metadata": "/-/metadata",
    }


# the site's own pages (our views on catalog_base.html) among page_kinds(): screenshot name ->
# page kind
OURS = {"home": "home", "search": "search", "paper": "merged-paper", "author": "author"}
FIRST_SCREEN = ("header .crumbs", "input[type=search]", "main h1")


@pytest.fixture(scope="module")
def visits(real_site, shared_page, real_rows):
    """Every page kind loaded once and measured at both widths (the layout follows the
    viewport; each page loads at the width the last one ended at): its status and width, and
    on our own pages the boxes of FIRST_SCREEN and the footer's text, with a screenshot at each
    width. {(page kind, width): what was seen}."""
    page = blank_page(shared_page, WIDTHS["phone"])
    screenshot_names = {kind: name for name, kind in OURS.items()}
    widths = [WIDTHS["phone"], WIDTHS["desktop"]]
    seen = {}
    for name, path in page_kinds(real_rows).items():
        response = page.goto(real_site + path)
        for width in widths:
            if page.viewport_size["width"] != width:
                page.set_viewport_size({"width": width, "height": 900})
            found = {
                "status": response.status,
                "scroll": page.evaluate("document.documentElement.scrollWidth"),
            }
            if name in screenshot_names:
                found["boxes"] = {
                    locator: page.locator(locator).first.bounding_box() for locator in FIRST_SCREEN
                }
                found["footer"] = page.locator("footer").inner_text()
                screenshot(page, f"{screenshot_names[name]}-{width}", full_page=False)
            seen[name, width] = found
        widths.reverse()
    return seen


def test_no_page_kind_scrolls_sideways(visits, real_rows):
    assert {kind for kind, _ in visits} == set(page_kinds(real_rows))
    assert {key: found["status"] for key, found in visits.items() if found["status"] != 200} == {}
    wide = {key: found["scroll"] for key, found in visits.items() if found["scroll"] > key[1]}
    assert wide == {}


def test_our_pages_at_both_widths(visits):
    """Home, search, paper and author pages (our views on catalog_base.html): the header's
    crumbs, a search box (the header's; /search's own) and the page's heading on the first
    screen, the footer's data source at the end, at a desktop's and a phone's width."""
    for kind in OURS.values():
        for width in WIDTHS.values():
            found = visits[kind, width]
            for locator, box in found["boxes"].items():
                assert box and box["y"] + box["height"] < 900, (kind, width, locator)
            assert "Data license" in found["footer"], (kind, width)


def facets_visible(page):
    return page.locator("#facets .facet").first.is_visible()


@pytest.mark.parametrize("script", [True, False], ids=["script", "no-script"])
def test_a_phone_opens_the_filters_before_the_results(real_site, browser, script):
    context = browser.new_context(
        viewport={"width": 390, "height": 900}, java_script_enabled=script
    )
    page = context.new_page()
    page.goto(real_site + "/search?q=learning&venue=ICML")
    control = page.locator("details.filters > summary")
    results = page.locator("#results-heading")
    assert control.is_visible()
    assert control.inner_text().split() == ["Filters", "Venue:", "ICML"]
    # the control is on the first screen, above the results; the facets are folded in it
    assert control.bounding_box()["y"] + control.bounding_box()["height"] < 900
    assert control.bounding_box()["y"] < results.bounding_box()["y"]
    assert not facets_visible(page)
    control.click()
    assert facets_visible(page)
    if script:
        screenshot(page, "search-phone-filters", full_page=False)
    page.locator(".facet", has_text="Year").get_by_role("link", name="2015").click()
    page.wait_for_load_state()
    assert "venue=ICML" in page.url and "year=2015" in page.url
    assert page.locator("details.filters > summary").inner_text().split() == (
        ["Filters", "Venue:", "ICML", "·", "Year:", "2015"]
    )
    context.close()


def test_a_desktop_shows_the_facets_beside_the_results(real_site, page):
    page.goto(real_site + "/search?q=learning")
    assert not page.locator("details.filters > summary").is_visible()
    assert facets_visible(page)
    facets = page.locator("#facets").bounding_box()
    results = page.locator("section.search-results").bounding_box()
    assert facets["x"] > results["x"] + results["width"]
    assert abs(facets["y"] - results["y"]) < 50


@pytest.mark.parametrize("width", WIDTHS)
def test_two_filters_by_keyboard_in_a_few_tabs(real_site, page, width):
    page.set_viewport_size({"width": WIDTHS[width], "height": 900})
    page.goto(real_site + "/search?q=learning")
    presses = 0

    def tab_to(link_text):
        nonlocal presses
        for _ in range(60):
            page.keyboard.press("Tab")
            presses += 1
            if page.evaluate("document.activeElement.textContent.trim()") == link_text:
                return
        raise AssertionError(f"no {link_text!r} within 60 Tab presses")

    for value in ("ICML", "2015"):
        tab_to("Skip to filters")
        page.keyboard.press("Enter")  # opens the folded filters on a phone
        tab_to(value)
        with page.expect_navigation():
            page.keyboard.press("Enter")
    assert "venue=ICML" in page.url and "year=2015" in page.url
    assert presses < 40, presses


def test_a_merged_real_paper_lists_its_versions(real_site, page, real_rows):
    page.goto(real_site + f"/catalog/papers/{real_rows['merged']}")
    versions = page.locator("section.versions-section")
    links = versions.locator("a.version-link")
    assert links.all_inner_texts() == ["arXiv 2013", "ICML 2015"]
    assert [links.nth(i).get_attribute("href") for i in range(2)] == [
        "https://arxiv.org/abs/1312.4564",
        "https://proceedings.mlr.press/v37/zhaob15.html",
    ]
    # where each was read: folded until asked for
    where = versions.locator("details.provenance li").first
    assert not where.is_visible()
    screenshot(page, "paper-versions-desktop", start=page.locator("h1"), height=900)
    page.set_viewport_size({"width": WIDTHS["phone"], "height": 900})
    assert versions.is_visible() and not where.is_visible()
    screenshot(page, "paper-versions-phone", start=versions, height=900)
    versions.locator("details.provenance > summary").click()
    assert "arxiv.jsonl" in where.inner_text()


def test_an_authors_papers_are_headed_by_year(real_site, page, real_rows):
    page.goto(real_site + f"/catalog/authors/{real_rows['author']}")
    headings = page.locator("h3.year-heading").all_inner_texts()
    assert [" ".join(heading.split()) for heading in headings] == [
        "2019 · 1 paper at ICML",
        "2018 · 2 papers at ICLR",
        "2017 · 3 papers at ICLR",
    ]
    screenshot(page, "author-desktop", full_page=False)
    page.set_viewport_size({"width": WIDTHS["phone"], "height": 900})
    screenshot(page, "author-phone", full_page=False)
    page.locator("nav.author-years").get_by_role("link", name="2017").click()
    assert page.url.endswith("#year-2017")
    assert page.locator("#year-2017").is_visible()


def test_the_author_lookup_ranks_namesakes_by_paper_count(real_site, page):
    page.set_viewport_size({"width": 390, "height": 900})
    page.goto(real_site + "/")
    page.fill("#home-author", "zhang")
    page.press("#home-author", "Enter")
    page.wait_for_load_state()
    counts = [int(text) for text in page.locator("td.col-paper_count").all_inner_texts()]
    assert len(counts) > 2 and counts == sorted(counts, reverse=True) and counts[0] > counts[-1]
    # the table searched without an order the URL chooses: ranked too
    page.goto(real_site + "/catalog/authors?_search=zhang")
    assert [int(t) for t in page.locator("td.col-paper_count").all_inner_texts()] == counts
