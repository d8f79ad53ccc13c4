"""Security headers of the served app (loader/serve/security_headers.py) and its
Content-Security-Policy (loader/web/content_policy.py): on every page kind, on 304s and on answers
from the response cache (the HTTP protocol's own answers: tests/test_connections.py); every inline script a page writes allowed by its hash and nothing else;
and in real Chromium no page reports a policy violation while its scripts (the SQL editor, the
table menus, the search facets) still run."""

import re
import sqlite3
from contextlib import closing
from urllib.parse import quote

import httpx
import pytest
import pytest_asyncio

from loader.serve.response_cache import ResponseCache
from loader.serve.security_headers import SecurityHeaders
from loader.web import content_policy
from loader.web.content_policy import (
    UnhashableScript,
    inline_script_hashes,
    inline_scripts,
    script_hash,
)

from .browser import new_page, requires_chromium
from .conftest import DATASETTE_1, query_path, served_app

FIXED = {
    "x-frame-options": "DENY",
    "x-content-type-options": "nosniff",
    "referrer-policy": "no-referrer",
}
# an inline script as a page has it: the text between the tags of a <script> without src
PAGE_SCRIPT = re.compile(r"<script(?P<attributes>[^>]*)>(?P<text>.*?)</script>", re.DOTALL)


def page_kinds(catalog):
    """One URL of every kind of page and answer the site serves."""
    with closing(sqlite3.connect(catalog)) as connection:
        paper = connection.execute("select id from papers order by id limit 1").fetchone()[0]
        author = connection.execute("select id from authors order by paper_count desc").fetchone()
        link = connection.execute("select paper_id, author_id from paper_authors").fetchone()
    return {
        "home": "/",
        "home JSON": "/.json",
        "database": "/catalog",
        "table": "/catalog/papers",
        "table filtered": "/catalog/papers?_search=learning&_facet=venue",
        "table JSON": "/catalog/papers.json?_size=2",
        "table CSV": "/catalog/papers.csv?_size=2",
        "table CSV stream": "/catalog/papers.csv?_stream=on&_size=max&_dl=1",
        "paper": f"/catalog/papers/{paper}",
        "paper JSON": f"/catalog/papers/{paper}.json",
        "paper BibTeX": f"/catalog/papers/{paper}.bib",
        "author": f"/catalog/authors/{author[0]}",
        "link row": f"/catalog/paper_authors/{link[0]},{link[1]}",
        "search": "/search?q=learning",
        "search JSON": "/search.json?q=learning",
        "search CSV": "/search.csv?q=learning",
        "search facets": "/search/facets?q=learning",
        "SQL query": query_path() + "?sql=" + quote("select id, label from papers limit 3"),
        "SQL CSV": "/catalog.csv?sql=" + quote("select 1 as one"),
        "SQL query CSV": query_path(format="csv") + "?sql=" + quote("select 2 as two"),
        "canned query": "/catalog/search?q=learning",
        "canned CSV": "/catalog/search.csv?q=learning",
        "charts": "/-/charts",
        "author by name": "/-/author?name=" + quote("Huishuai Zhang"),
        "introspection": "/-/databases.json",
        "static file": "/-/static/app.css",
        "plugin static file": "/-/static-plugins/paper-catalog/search.js",
        "not found": "/catalog/no_such_table",
        "bad request": "/catalog/papers.json?_facet=%7B%22a%22%3A1%7D",
        "time limit": query_path()
        + "?sql="
        + quote(
            "with recursive c(x) as (select 1 union all select x + 1 from c) select count(*) from c"
        ),
        "refused method": "/catalog/papers",
        "too many of a parameter": "/catalog/papers?" + "&".join(["_facet=venue"] * 33),
        "URL too long": "/catalog/papers?title__contains=" + "a" * 9_000,
    }


@pytest_asyncio.fixture(loop_scope="session")
async def client(site_app):
    transport = httpx.ASGITransport(app=site_app)
    async with httpx.AsyncClient(transport=transport, base_url="http://site", timeout=60) as c:
        yield c


def assert_security_headers(response, what):
    for name, value in FIXED.items():
        assert response.headers.get_list(name) == [value], (what, name)
    policies = response.headers.get_list("content-security-policy")
    assert len(policies) == 1, what
    directives = dict((part.split(" ", 1) + [""])[:2] for part in policies[0].split("; ") if part)
    assert directives["default-src"] == "'self'", what
    assert directives["frame-ancestors"] == "'none'", what
    assert directives["object-src"] == "'none'", what
    scripts = directives["script-src"].split()
    assert scripts[0] == "'self'" and all(s.startswith("'sha256-") for s in scripts[1:]), what
    return policies[0]


@pytest.mark.asyncio(loop_scope="session")
async def test_every_page_kind_carries_the_headers(client, seed_catalog):
    for what, url in page_kinds(seed_catalog).items():
        if what == "refused method":
            response = await client.post(url, data={"x": "1"})
            assert response.status_code == 405
        else:
            response = await client.get(url)
        assert response.status_code < 500, (what, response.status_code)
        assert_security_headers(response, what)


@pytest.mark.asyncio(loop_scope="session")
async def test_revalidated_and_cached_answers_carry_the_headers(client, site_app, seed_catalog):
    cache = site_app.app.app.app.app  # SecurityHeaders -> AlwaysAnswer -> BuildETag -> cache
    assert isinstance(cache, ResponseCache)
    for what in ("home", "table", "paper", "search", "SQL query", "charts", "table JSON"):
        url = page_kinds(seed_catalog)[what]
        first = await client.get(url)
        assert first.status_code == 200, what
        assert_security_headers(first, what)
        # the same URL again: answered from the response cache, headers and all
        path, _, query = url.partition("?")
        kept = {(key[3], key[4]) for key in cache.entries}
        assert (path.encode(), query.encode()) in kept, what
        again = await client.get(url)
        assert again.content == first.content, what
        assert_security_headers(again, f"{what} from the cache")
        unchanged = await client.get(url, headers={"if-none-match": first.headers["etag"]})
        assert unchanged.status_code == 304 and unchanged.content == b"", what
        assert_security_headers(unchanged, f"{what} 304")


# Datasette 1.0's scripts holding a page's own data: left out of the policy, not run
# (loader/web/content_policy.py PAGE_DATA_VARIABLES)
PAGE_DATA_SCRIPT = re.compile(
    r"\s*window\._(datasetteTableData|datasetteDatabaseData|columnChooserData|setColumnTypeData) ="
)


@pytest.mark.asyncio(loop_scope="session")
async def test_every_inline_script_of_every_page_is_allowed_by_its_hash(client, seed_catalog):
    policy = (await client.get("/")).headers["content-security-policy"]
    allowed = set(re.search(r"script-src ([^;]*)", policy)[1].split())
    seen = set()
    for what, url in page_kinds(seed_catalog).items():
        response = await client.get(url)
        if not response.headers["content-type"].startswith("text/html"):
            continue
        for match in PAGE_SCRIPT.finditer(response.text):
            if "src=" in match["attributes"]:
                continue
            if DATASETTE_1 and PAGE_DATA_SCRIPT.match(match["text"]):
                continue
            digest = script_hash(match["text"])
            assert digest in allowed, (what, match["text"][:80])
            seen.add(digest)
    # the menus of every page, the SQL editor, a table's facet switch
    assert len(seen) >= 3


@pytest.mark.asyncio(loop_scope="session")
async def test_the_policy_allows_no_script_but_the_sites(client):
    policy = (await client.get("/")).headers["content-security-policy"]
    scripts = re.search(r"script-src ([^;]*)", policy)[1]
    for loophole in ("unsafe-inline", "unsafe-eval", "data:", "http", "*", "strict-dynamic"):
        assert loophole not in scripts
    # a script an attacker could put in a page is not among the hashes
    assert script_hash("alert(1)") not in scripts


@pytest.mark.asyncio(loop_scope="session")
async def test_a_stock_datasette_with_the_plugins_keeps_its_own_headers(datasette):
    """The headers belong to the app `paper-catalog serve` runs, not to the plugins."""
    response = await datasette.client.get("/catalog/papers")
    assert response.status_code == 200
    assert "content-security-policy" not in response.headers
    assert "x-frame-options" not in response.headers


def test_script_hashes_come_from_the_templates_and_their_variables():
    templates = [
        ("a.html", '<script src="x.js"></script><script>\nlet a = 1;\n</script>'),
        ("b.html", "<script{% if m %} type=module{% endif %}>{{ body_script.script }}</script>"),
        ("c.html", "<script>F = {{ datasette_allow_facet }};</script>"),
        ("d.html", '<script {% if x %}async {% endif %}src="{{ u }}"></script>'),
    ]
    assert list(inline_scripts(templates[0][1])) == ["\nlet a = 1;\n"]
    hashes = inline_script_hashes(templates)
    expected = {script_hash("\nlet a = 1;\n"), script_hash("F = true;"), script_hash("F = false;")}
    assert set(hashes) == expected


def test_a_script_of_unknown_values_stops_the_start():
    with pytest.raises(UnhashableScript, match="e.html.*user_name"):
        inline_script_hashes([("e.html", "<script>hello({{ user_name }})</script>")])


@pytest.mark.asyncio(loop_scope="session")
async def test_a_served_app_computes_its_policy_once_at_start(seed_catalog):
    app = served_app(seed_catalog)
    headers = app.app
    assert isinstance(headers, SecurityHeaders) and headers.headers is None
    messages = iter([{"type": "lifespan.startup"}, {"type": "lifespan.shutdown"}])
    sent = []

    async def receive():
        return next(messages)

    async def send(message):
        sent.append(message["type"])

    await app({"type": "lifespan"}, receive, send)
    assert sent == ["lifespan.startup.complete", "lifespan.shutdown.complete"]
    policy = dict(headers.headers)[b"content-security-policy"].decode()
    assert policy == await content_policy.content_security_policy(app.datasette)


# -- in real Chromium ------------------------------------------------------------------------

# the HTML page kinds
BROWSER_PAGE_KINDS = [
    "home",
    "database",
    "table",
    "table filtered",
    "paper",
    "author",
    "link row",
    "search",
    "SQL query",
    "canned query",
    "charts",
    "author by name",
    "not found",
    "time limit",
]
REPORT_VIOLATIONS = """() => {
    window.__violations = [];
    document.addEventListener('securitypolicyviolation', (event) => {
        window.__violations.push(event.violatedDirective + ' ' + (event.blockedURI || 'inline')
            + ' ' + (event.sourceFile || '') + ':' + event.lineNumber);
    });
}"""


@pytest.fixture(scope="module")
def browser_pages(search_catalog):
    return page_kinds(search_catalog)


@pytest.mark.browser
@requires_chromium
def test_no_page_kind_reports_a_policy_violation_in_chromium(search_site, browser, browser_pages):
    found = {}
    errors = []
    page = new_page(browser, errors=errors)
    page.add_init_script(f"({REPORT_VIOLATIONS})()")
    console = []
    page.on("console", lambda message: console.append(message.text))
    for what in BROWSER_PAGE_KINDS:
        url = browser_pages[what]
        page.goto(search_site + url)
        page.wait_for_load_state("load")
        violations = page.evaluate("window.__violations || []")
        refused = [text for text in console if "Content Security Policy" in text]
        if violations or refused:
            found[what] = violations + refused
        console.clear()
        if what in ("SQL query", "database"):
            # Datasette's editor: CodeMirror replaced the textarea, its inline script ran
            page.wait_for_selector(".CodeMirror", timeout=5000)
        if what == "table":
            # table.js (a file) and its facet switch (an inline script) ran: column menus
            page.wait_for_selector("th svg.dropdown-menu-icon", timeout=5000)
            if page.evaluate("window.DATASETTE_ALLOW_FACET") is not True:
                found.setdefault(what, []).append("the facet switch did not run")
    page.close()
    assert found == {}
    assert errors == []


@pytest.mark.browser
@requires_chromium
def test_another_site_cannot_frame_a_page(search_site, browser):
    page = new_page(browser)
    # set_content waits for the load event, which waits for the frame
    page.set_content(f'<iframe src="{search_site}/search?q=learning"></iframe>')
    frame = page.frames[-1]
    # the framed page was refused: Chromium shows its own error page in the frame
    assert frame.url.startswith("chrome-error://")
    assert "Skip to content" not in frame.content()
    page.close()
