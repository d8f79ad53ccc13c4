"""The site's own error pages (loader/web/error_pages.py, plugins/site_errors.py): every HTML URL
of the catalog's site that fails answers with its status on a page of the site (its language,
the header with the search box, a way home); `.json` URLs and other databases' URLs keep
Datasette's own errors. Through the served app, and in Chromium with axe-core."""

import re
import sqlite3

import pytest
from datasette.app import Datasette

from .browser import AXE, DESKTOP_AND_PHONE_IN_SLOW, WIDTHS, requires_chromium, screenshot
from .test_accessibility import violations

# (path, status): an unknown page, database, table, row and author; refused requests
SITE_ERRORS = [
    ("/no-such-page", 404),
    ("/catalog/no_such_table", 404),
    ("/catalog/papers/0123456789abcdef", 404),
    ("/catalog/authors/99999999", 404),
    ("/-/author?name=Nobody+Of+That+Name", 404),
    ("/-/author?name=", 400),
    ("/catalog/papers?_sort=no_such_column", 400),
    ("/catalog/papers?_timelimit=-1", 400),
]


def is_site_page(html):
    return (
        '<html lang="en">' in html
        and 'class="header-search"' in html
        and re.search(r'<a href="/">Go to the home page</a>', html) is not None
    )


@pytest.mark.asyncio(loop_scope="session")
@pytest.mark.parametrize("path, status", SITE_ERRORS)
async def test_the_sites_errors_are_its_own_pages(datasette, path, status):
    response = await datasette.client.get(path)
    assert response.status_code == status
    assert response.headers["content-type"].startswith("text/html")
    html = response.text
    assert is_site_page(html), html[:400]
    assert f"Error {status}" in html
    assert '<main id="main"' in html and "<h1" in html


@pytest.mark.asyncio(loop_scope="session")
async def test_the_search_page_refusal_keeps_a_search_box(datasette):
    # /search has its own box; on its error page the header's is the way to search again
    response = await datasette.client.get("/search?q=learning&_timelimit=-1")
    assert response.status_code == 400
    assert is_site_page(response.text)


@pytest.mark.asyncio(loop_scope="session")
async def test_json_urls_keep_datasettes_error_objects(datasette):
    response = await datasette.client.get("/catalog/no_such_table.json")
    assert response.status_code == 404
    assert response.headers["content-type"].startswith("application/json")
    # Datasette's own object, as each version writes it (1.0 lists `errors`)
    data = response.json()
    assert data["ok"] is False and data["status"] == 404
    assert "Table not found" in (data.get("error") or data["errors"][0])
    response = await datasette.client.get("/catalog/papers.json?_sort=no_such_column")
    assert response.status_code == 400 and response.json()["ok"] is False


@pytest.fixture(scope="module")
def other_database(tmp_path_factory):
    path = tmp_path_factory.mktemp("other") / "notes.db"
    with sqlite3.connect(path) as connection:
        connection.execute("create table notes (id integer primary key, text text)")
    return path


@pytest.mark.asyncio(loop_scope="session")
async def test_other_databases_keep_datasettes_error_pages(seed_catalog, other_database):
    ds = Datasette([str(other_database)], immutables=[str(seed_catalog)])
    for path in ("/notes/no_such_table", "/notes/notes/12345"):
        response = await ds.client.get(path)
        assert response.status_code == 404, path
        assert not is_site_page(response.text), path
        assert "header-search" not in response.text
    # the catalog's own URLs, beside it, are the site's
    response = await ds.client.get("/catalog/no_such_table")
    assert response.status_code == 404 and is_site_page(response.text)


@pytest.mark.asyncio(loop_scope="session")
async def test_a_server_error_is_a_500_on_the_sites_page(datasette):
    from datasette.utils.asgi import Request

    from plugins import site_errors

    request = Request.fake("/catalog/papers")
    error = RuntimeError("a fault of the server")
    response = await site_errors.handle_exception(datasette, request, error)()
    assert response.status == 500
    assert is_site_page(response.body) and "a fault of the server" in response.body
    # a .json URL, and a URL of no catalog, are left to Datasette
    assert (
        site_errors.handle_exception(datasette, Request.fake("/catalog/papers.json"), error) is None
    )


@pytest.mark.browser
@requires_chromium
@pytest.mark.skipif(not AXE.exists(), reason="needs axe-core: npm install --prefix tests/js")
# the phone width in `make test-slow`, as tests/test_accessibility.py does
@pytest.mark.parametrize("width", DESKTOP_AND_PHONE_IN_SLOW)
def test_error_pages_pass_axe_and_lead_home(search_site, browser, width):
    page = browser.new_page(viewport={"width": WIDTHS[width], "height": 900}, bypass_csp=True)
    found = {}
    for path, status in (("/no-such-page", 404), ("/catalog/papers?_sort=nope", 400)):
        response = page.goto(search_site + path)
        assert response.status == status, path
        assert page.evaluate("document.documentElement.lang") == "en"
        assert page.locator("form.header-search input[name=q]").is_visible()
        problems = violations(page)
        if problems:
            found[path] = problems
        assert page.evaluate("document.documentElement.scrollWidth") <= WIDTHS[width]
        screenshot(page, f"error-{width}-{status}", full_page=False)
    # the way home works, and the header's search box searches
    page.goto(search_site + "/no-such-page")
    page.get_by_role("link", name="Go to the home page").click()
    page.wait_for_load_state()
    assert page.url.rstrip("/") == search_site.rstrip("/")
    page.goto(search_site + "/no-such-page")
    page.fill("#header-q", "learning")
    page.press("#header-q", "Enter")
    page.wait_for_load_state()
    assert "/search?q=learning" in page.url
    page.close()
    assert found == {}
