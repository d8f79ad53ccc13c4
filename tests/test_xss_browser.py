"""XSS in real Chromium: a catalog built by the real loader from tests/fixtures/xss.jsonl (HTML
and JavaScript in titles, abstracts, math, author names, affiliation slugs, tracks and URLs),
served by `paper-catalog serve`, and every page visited, with hostile search terms and URL
parameters too. No dialog may open, no payload may run, and no payload may become markup."""

import sqlite3
import urllib.parse
from contextlib import closing

import pytest

from loader.build.catalog import build_catalog

from .browser import new_page, requires_chromium, screenshot
from .conftest import FIXTURES
from .test_serve import served

pytestmark = [pytest.mark.browser, requires_chromium]

# every payload in the fixture says "xss"; none may survive as a script, handler or link
PAYLOADS = [
    "<script>alert('xss-param')</script>",
    "\"><img src=x onerror=alert('xss-param-img')>",
    "'><svg onload=alert('xss-param-svg')>",
    "javascript:alert('xss-param-js')",
    '" onmouseover="alert(\'xss-param-attr\')" x="',
    "</title></textarea><script>alert('xss-param-breakout')</script>",
]
# markup a payload would have to become: nothing in our pages or Datasette's uses these
INJECTED = """() => {
  const found = [];
  for (const script of document.querySelectorAll('script')) {
    if (script.textContent.includes('xss')) found.push('script: ' + script.textContent.slice(0, 80));
  }
  for (const element of document.querySelectorAll('*')) {
    for (const attribute of element.attributes) {
      const value = attribute.value.toLowerCase().replace(/\\s/g, '');
      if (attribute.name.startsWith('on') && value.includes('xss'))
        found.push(element.tagName + ' ' + attribute.name + '=' + attribute.value.slice(0, 80));
      if (['href', 'src', 'action', 'formaction', 'srcdoc', 'data'].includes(attribute.name)
          && (value.startsWith('javascript:') || value.startsWith('vbscript:')
              || value.startsWith('data:text/html')))
        found.push(element.tagName + ' ' + attribute.name + '=' + attribute.value.slice(0, 80));
    }
  }
  for (const frame of document.querySelectorAll('iframe, object, embed')) found.push(frame.outerHTML.slice(0, 80));
  if (window.__pwned) found.push('window.__pwned set');
  return found;
}"""


def quoted(value):
    return urllib.parse.quote(value, safe="")


@pytest.fixture(scope="module")
def hostile_site(tmp_path_factory):
    db = tmp_path_factory.mktemp("xss") / "catalog.db"
    summary = build_catalog([FIXTURES / "xss.jsonl"], db)
    assert summary.papers == 2 and not summary.problems
    with served(db) as (url, _):
        yield url, db


def site_paths(db):
    with closing(sqlite3.connect(db)) as connection:
        papers = [r[0] for r in connection.execute("select id from papers")]
        authors = [r[0] for r in connection.execute("select id from authors")]
        slugs = [r[0] for r in connection.execute("select slug from affiliations")]
        tracks = [r[0] for r in connection.execute("select name from tracks")]
    paths = ["/", "/catalog", "/catalog/papers", "/catalog/authors", "/catalog/affiliations"]
    paths += ["/catalog/tracks", "/catalog/paper_authors", "/catalog/search?q=reasoning"]
    paths += [f"/catalog/papers/{quoted(p)}" for p in papers]
    paths += [f"/catalog/authors/{a}" for a in authors]
    paths += [f"/catalog/papers?affiliations__arraycontains={quoted(s)}" for s in slugs]
    paths += [f"/catalog/papers?track={quoted(t)}" for t in tracks]
    paths += ["/catalog/papers?_facet_array=authors&_facet_array=affiliations&_facet=track"]
    for payload in PAYLOADS:
        value = quoted(payload)
        paths += [
            f"/catalog/search?q={value}",
            f"/catalog/papers?_search={value}",
            f"/catalog/papers?_sort={value}",
            f"/catalog/papers?area={value}&_facet={value}",
            f"/catalog/papers?{value}={value}",
            f"/catalog/{value}",
            f"/catalog/papers/{value}",
            f"/catalog/papers_by_author?author_id={value}",
            f"/catalog/coauthors?author_id={value}",
            f"/catalog?sql={quoted('select :p as p, ' + repr(payload))}&p={value}",
        ]
    return paths


def test_no_payload_runs_on_any_page(hostile_site, browser):
    url, db = hostile_site
    problems, visited = [], 0
    dialogs, errors = [], []
    page = new_page(browser, dialogs=dialogs, errors=errors)
    # the detectors themselves: a page that does run a payload is caught both ways
    page.set_content("<img src=x onerror=\"alert('xss-control')\">")
    page.wait_for_timeout(200)
    assert dialogs == ["xss-control"] and page.evaluate(INJECTED)
    dialogs.clear()
    for path in site_paths(db):
        before = len(dialogs)
        page.goto(url + path, wait_until="load")
        visited += 1
        injected = page.evaluate(INJECTED)
        if injected or len(dialogs) > before:
            problems.append((path, injected, dialogs[before:]))
        if path.startswith("/catalog/papers/") and visited < 20:
            screenshot(page, f"xss-paper-{visited}")
    page.close()
    assert visited > 50
    assert not problems, problems
    assert not dialogs


def test_the_payloads_are_shown_as_text(hostile_site, browser):
    """The same strings must still be visible: escaped, not silently dropped."""
    url, db = hostile_site
    with closing(sqlite3.connect(db)) as connection:
        paper = connection.execute("select id from papers where title like '<script>%'").fetchone()
        author = connection.execute("select id from authors where name like '<script>%'").fetchone()
    page = new_page(browser)
    page.goto(f"{url}/catalog/papers/{paper[0]}", wait_until="load")
    assert "<script>alert('xss-title')</script>" in page.inner_text("body")
    page.goto(f"{url}/catalog/authors/{author[0]}", wait_until="load")
    assert "<script>alert('xss-author')</script>" in page.inner_text("body")
    page.goto(f"{url}/catalog/search?q={quoted(PAYLOADS[0])}", wait_until="load")
    assert page.locator("textarea, input").count() >= 1
    page.close()
