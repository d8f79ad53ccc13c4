"""XSS in real Chromium: a catalog built by the real loader from tests/fixtures/xss.jsonl (HTML
and JavaScript in titles, abstracts, math, author names, affiliation slugs, tracks and URLs) and
HOSTILE_RECORDS (payloads that set window.__xss), served by one `paper-catalog serve`, and every
page visited, with hostile search terms and URL parameters too. No dialog may open, no payload
may run, and no payload may become markup; the payloads show as text."""

import json
import re
import sqlite3
import urllib.parse
from contextlib import closing

import pytest

from loader.build.catalog import build_catalog

from .browser import requires_chromium, screenshot
from .conftest import FIXTURES
from .test_serve import served

pytestmark = [pytest.mark.browser, requires_chromium]

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

# INJECTED, a payload's mark (window.__xss), and with `strict` FIND_SCRIPT_HOOKS: one round
# trip to the page
EVERY_CHECK = f"""(strict) => {{
  const found = ({INJECTED})();
  if (typeof window.__xss !== 'undefined') found.push('window.__xss = ' + window.__xss);
  return strict ? found.concat(({FIND_SCRIPT_HOOKS})()) : found;
}}"""


def quoted(value):
    return urllib.parse.quote(value, safe="")


@pytest.fixture(scope="module")
def hostile_site(tmp_path_factory):
    """One catalog of both sets of payloads (one server to start, not two)."""
    folder = tmp_path_factory.mktemp("xss")
    source = folder / "hostile.jsonl"
    source.write_text(
        "".join(json.dumps(record) + "\n" for record in HOSTILE_RECORDS), encoding="utf-8"
    )
    db = folder / "catalog.db"
    summary = build_catalog([FIXTURES / "xss.jsonl", source], db)
    assert summary.papers == 2 + len(HOSTILE_RECORDS) and not summary.problems
    with served(db) as (url, _):
        yield url, db


# the site's pages that list the hostile data (each paper's and author's page besides)
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


def data_paths(db):
    """Every page of the hostile catalog's papers, authors, affiliations and tracks, and the
    site's pages that list them."""
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
    return list(dict.fromkeys(paths + HOSTILE_PAGES))


# each kind of URL parameter and path part a hostile value goes in
URL_KINDS = [
    "/catalog/search?q={value}",
    "/catalog/papers?_search={value}",
    "/catalog/papers?_sort={value}",
    "/catalog/papers?area={value}&_facet={value}",
    "/catalog/papers?{value}={value}",
    "/catalog/{value}",
    "/catalog/papers/{value}",
    "/catalog/papers_by_author?author_id={value}",
    "/catalog/coauthors?author_id={value}",
    "/catalog?sql={sql}&p={value}",
]


def payload_urls(share=1):
    """(payload, kind of URL, path): each hostile value of PAYLOADS in each of URL_KINDS, or one
    in `share` of the pairs, chosen so that every payload and every kind is among them."""
    return [
        (
            payload,
            kind,
            kind.format(value=quoted(payload), sql=quoted(f"select :p as p, {payload!r}")),
        )
        for number, payload in enumerate(PAYLOADS)
        for place, kind in enumerate(URL_KINDS)
        if (number + place) % share == 0
    ]


def test_the_sample_of_hostile_urls_has_every_payload_and_every_kind_of_url():
    every, sample = payload_urls(), payload_urls(3)
    assert len(every) == len(PAYLOADS) * len(URL_KINDS) and set(sample) < set(every)
    assert {payload for payload, _, _ in sample} == set(PAYLOADS)
    assert {kind for _, kind, _ in sample} == set(URL_KINDS)


# every page with hostile data in `make test`, and one in three of the hostile URLs (each payload
# and each kind of URL among them); every hostile URL in `make test-slow`
@pytest.mark.parametrize(
    "share", [3, pytest.param(1, marks=pytest.mark.slow)], ids=lambda n: f"1-in-{n}"
)
def test_no_payload_runs_on_any_page(hostile_site, page, share):
    url, db = hostile_site
    problems, visited = [], 0
    dialogs = page.dialogs
    # the detectors themselves: a page that does run a payload is caught both ways (its load
    # event waits for the alert of the image's onerror, which the page's handler dismisses)
    with page.expect_event("dialog"):
        page.set_content("<img src=x onerror=\"alert('xss-control')\">")
    assert dialogs == ["xss-control"] and page.evaluate(EVERY_CHECK, False)
    assert len(page.evaluate(EVERY_CHECK, True)) > len(page.evaluate(EVERY_CHECK, False))
    page.evaluate("window.__xss = 1")
    assert "window.__xss = 1" in page.evaluate(EVERY_CHECK, False)
    dialogs.clear()
    hostile_data = data_paths(db)
    paths = hostile_data + [path for _, _, path in payload_urls(share)]
    for path in paths:
        before = len(dialogs)
        page.goto(url + path, wait_until="load")
        visited += 1
        # a hostile value in the URL may show as the value of a form field: the stricter
        # check (any handler, any javascript: value) on the pages of the data
        injected = page.evaluate(EVERY_CHECK, path in hostile_data)
        if injected or len(dialogs) > before:
            problems.append((path, injected, dialogs[before:]))
        if path.startswith("/catalog/papers/") and visited < 20:
            screenshot(page, f"xss-paper-{visited}")
    assert visited == len(paths) > 50
    assert not problems, problems
    assert not dialogs


def test_the_payloads_are_shown_as_text(hostile_site, page):
    """The same strings must still be visible: escaped, not silently dropped."""
    url, db = hostile_site
    with closing(sqlite3.connect(db)) as connection:
        paper = connection.execute(
            "select id from papers where title like '<script>alert(%'"
        ).fetchone()
        author = connection.execute("select id from authors where name like '<script>%'").fetchone()
    page.goto(f"{url}/catalog/papers/{paper[0]}", wait_until="load")
    assert "<script>alert('xss-title')</script>" in page.inner_text("body")
    page.goto(f"{url}/catalog/authors/{author[0]}", wait_until="load")
    assert "<script>alert('xss-author')</script>" in page.inner_text("body")
    page.goto(f"{url}/catalog/search?q={quoted(PAYLOADS[0])}", wait_until="load")
    assert page.locator("textarea, input").count() >= 1


def test_hostile_paper_and_author_pages_show_the_markup_as_text(hostile_site, page):
    url, _ = hostile_site
    page.goto(url + "/catalog/search?q=hostile+abstract")
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
