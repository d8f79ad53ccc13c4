"""/search in real Chromium, as a researcher uses it: search, narrow by two facets, open a
result, page 2, an author, export; at desktop and phone widths. Screenshots go to
test-artifacts/ (the README's come from here)."""

import re

import pytest
import yaml

from .browser import (
    DESKTOP_AND_PHONE_IN_SLOW,
    ROOT,
    WIDTHS,
    datasette_server,
    requires_chromium,
    screenshot,
)

pytestmark = [pytest.mark.browser, requires_chromium]


def total(page):
    return int(
        re.match(r"([\d,]+) papers?", page.locator(".result-count").inner_text())[1].replace(
            ",", ""
        )
    )


def choose(page, facet, value):
    """Click a facet value; on a phone, open the Filters control first (the facets are folded
    in it, before the results)."""
    control = page.locator("details.filters > summary")
    if control.is_visible():
        control.click()
    page.locator(".facet", has_text=facet).get_by_role("link", name=value).click()
    page.wait_for_load_state()


# the phone's width in `make test-slow`: in `make test` /search on a phone is checked by
# tests/test_pages_browser.py (its Filters control, two filters by keyboard, every page's width)
@pytest.mark.parametrize("width", DESKTOP_AND_PHONE_IN_SLOW)
def test_search_narrow_open_and_come_back(search_site, page, width):
    page.set_viewport_size({"width": WIDTHS[width], "height": 900})
    page.goto(search_site + "/")
    page.fill("#home-search", "learning")
    page.press("#home-search", "Enter")
    page.wait_for_load_state()
    everything = total(page)
    assert everything > 20
    screenshot(page, f"search-{width}", full_page=False)

    # narrow by a venue, then by a year: each click keeps the other filter
    choose(page, "Venue", "ICLR")
    by_venue = total(page)
    assert 0 < by_venue < everything
    choose(page, "Year", "2018")
    narrowed = total(page)
    assert 0 < narrowed <= by_venue
    assert "venue=ICLR" in page.url and "year=2018" in page.url
    assert page.locator(".chip").count() == 2
    screenshot(page, f"search-filtered-{width}")

    # open the first result: its paper page, then back
    first = page.locator("li.result h3 a").first
    label = first.inner_text()
    first.click()
    page.wait_for_load_state()
    assert "/catalog/papers/" in page.url
    assert page.locator("h1").inner_text().strip() == label.strip()
    page.go_back()
    page.wait_for_load_state()

    # remove one filter with its chip
    page.locator(".chip", has_text="Year").click()
    page.wait_for_load_state()
    assert total(page) == by_venue
    assert page.errors == []


def test_page_two_and_an_author(search_site, page):
    page.goto(search_site + "/search?q=learning&size=5")
    first_page = page.locator("li.result h3 a").all_inner_texts()
    page.locator("nav.pages").get_by_role("link", name="Page 2").click()
    page.wait_for_load_state()
    assert "page=2" in page.url
    second_page = page.locator("li.result h3 a").all_inner_texts()
    assert len(second_page) == 5 and not set(first_page) & set(second_page)
    author = page.locator("p.result-authors a").first
    name = author.inner_text()
    author.click()
    page.wait_for_load_state()
    assert "/catalog/authors/" in page.url and name in page.locator("h1").inner_text()


def test_exports_download_a_file(search_site, page):
    # Playwright's pages accept downloads unless told otherwise
    page.goto(search_site + "/search?q=imitation&venue=ICLR")
    for label, extension in (("CSV", "csv"), ("BibTeX", "bib")):
        with page.expect_download() as download:
            page.locator(".exports").get_by_role("link", name=label).click()
        assert download.value.suggested_filename == f"papers-imitation-iclr.{extension}"


def test_a_misspelling_offers_the_right_word(search_site, page):
    page.goto(search_site + "/search?q=gradeint")
    page.get_by_role("link", name="gradient", exact=True).click()
    page.wait_for_load_state()
    assert total(page) > 0
    screenshot(page, "search-suggestion")


@pytest.mark.parametrize("width", DESKTOP_AND_PHONE_IN_SLOW)
def test_the_page_says_how_it_read_the_query(search_site, page, width):
    page.set_viewport_size({"width": WIDTHS[width], "height": 900})
    box = page.locator("#search-q")
    for q, note in (
        ("learning or imitation", "Searching for the word or: write OR for the operator."),
        ("learning not imitation", "Searching for the word not: write NOT for the operator."),
        ("learning venue:ICLR", "venue:ICLR is a filter: applied."),
    ):
        page.goto(search_site + "/search")
        page.fill("#search-q", q)
        page.press("#search-q", "Enter")
        page.wait_for_load_state()
        shown = page.locator(".search-notes li")
        assert shown.all_inner_texts() == [note]
        # one line under the box, on the first screen, before the results, never wider
        under, heading = shown.bounding_box(), page.locator("#results-heading").bounding_box()
        field = box.bounding_box()
        assert field["y"] + field["height"] <= under["y"] < heading["y"] < 900
        assert under["height"] < 2.5 * float(
            shown.evaluate("element => getComputedStyle(element).lineHeight").rstrip("px")
        ), "a note of one line (two at most on a phone)"
        assert page.evaluate("document.documentElement.scrollWidth") <= WIDTHS[width]
        assert box.input_value() == q
    screenshot(page, f"search-notes-{width}", full_page=False)
    # the filter word gave exactly the venue filter's papers
    by_word = total(page)
    page.goto(search_site + "/search?q=learning&venue=ICLR")
    assert total(page) == by_word > 0
    # a query with no word to search for says so, on our page
    page.goto(search_site + "/search?q=%F0%9F%A4%96")
    assert "holds no word to search for" in page.get_by_role("alert").inner_text()
    assert page.errors == []


@pytest.fixture(scope="module")
def deferring_site(search_catalog, tmp_path_factory):
    """The search catalog served with the author and affiliation facets left for a second
    request past 5 matches, as a 1M catalog leaves them past 10,000."""
    folder = tmp_path_factory.mktemp("deferring")
    metadata = yaml.safe_load((ROOT / "metadata.yml").read_text(encoding="utf-8"))
    metadata.setdefault("plugins", {})["paper-catalog-search"] = {"link_facets_up_to": 5}
    path = folder / "metadata.yml"
    path.write_text(yaml.safe_dump(metadata, allow_unicode=True), encoding="utf-8")
    with datasette_server(search_catalog, folder, metadata=path) as url:
        yield url


def author_facet(page):
    return page.locator(".facet", has=page.get_by_role("heading", name="Author", exact=True))


def test_author_facets_of_a_large_match_set_load_by_themselves(deferring_site, page):
    page.goto(deferring_site + "/search?q=learning")
    everything = total(page)
    assert everything > 5
    author = author_facet(page).get_by_role("link").first
    author.wait_for()
    assert page.locator(".deferred-facets a", has_text="Count by").count() == 0
    author.click()
    page.wait_for_load_state()
    assert "author=" in page.url and 0 < total(page) < everything
    assert page.errors == []


def test_without_script_a_link_counts_the_author_facets(deferring_site, browser):
    context = browser.new_context(java_script_enabled=False)
    page = context.new_page()
    page.goto(deferring_site + "/search?q=learning")
    assert author_facet(page).count() == 0
    page.get_by_role("link", name="Count by affiliation and author").click()
    page.wait_for_load_state()
    assert "_facets=all" in page.url
    author_facet(page).get_by_role("link").first.click()
    page.wait_for_load_state()
    assert "author=" in page.url and total(page) > 0
    context.close()
