"""The ASGI wrappers in front of Datasette: the build ETag and the response cache, driven with
real ASGI messages around a small app that counts how often it is really asked."""

import asyncio

import pytest

from loader.serve.etag import BuildETag, matches
from loader.serve.response_cache import ResponseCache


class Pages:
    """An ASGI app: answers `path` with what `pages` says, counting calls per path."""

    def __init__(self, pages):
        self.pages = pages
        self.calls = {}

    async def __call__(self, scope, receive, send):
        path = scope["path"]
        self.calls[path] = self.calls.get(path, 0) + 1
        status, headers, chunks = self.pages.get(path, (404, [], [b"not found"]))
        await send({"type": "http.response.start", "status": status, "headers": list(headers)})
        for i, chunk in enumerate(chunks):
            more = i < len(chunks) - 1
            await send({"type": "http.response.body", "body": chunk, "more_body": more})


def ask(app, path, query=b"", headers=(), method="GET"):
    return asyncio.run(ask_async(app, path, query, headers, method))


async def ask_async(app, path, query=b"", headers=(), method="GET"):
    scope = {
        "type": "http",
        "method": method,
        "scheme": "http",
        "path": path,
        "raw_path": path.encode(),
        "root_path": "",
        "query_string": query,
        "headers": [(b"host", b"example.org"), *headers],
    }
    sent = []

    async def receive():
        return {"type": "http.request", "body": b"", "more_body": False}

    async def send(message):
        sent.append(message)

    await app(scope, receive, send)
    start = sent[0]
    body = b"".join(m.get("body", b"") for m in sent[1:])
    return start["status"], dict(start["headers"]), body


HTML = [(b"content-type", b"text/html"), (b"cache-control", b"max-age=5")]


@pytest.fixture
def pages():
    return Pages(
        {
            "/page": (200, HTML, [b"<p>hello</p>"]),
            "/big": (200, HTML, [b"x" * 5000]),
            "/error": (500, HTML, [b"broken"]),
            "/stream": (200, [(b"content-type", b"text/csv")], [b"a\n", b"b\n"]),
            "/cookie": (200, [*HTML, (b"set-cookie", b"ds_csrftoken=1")], [b"form"]),
            "/static": (200, [(b"cache-control", b"max-age=3600, immutable")], [b"css"]),
        }
    )


def test_etag_tags_answers_and_revalidates_without_asking_the_app(pages):
    app = BuildETag(pages, "build1-site")
    status, headers, body = ask(app, "/page")
    assert status == 200 and body == b"<p>hello</p>"
    etag = headers[b"etag"]
    assert etag == b'W/"build1-site"'
    assert headers[b"cache-control"] == b"no-cache"
    status, headers, body = ask(app, "/page", headers=[(b"if-none-match", etag)])
    assert (status, body) == (304, b"") and headers[b"etag"] == etag
    assert pages.calls["/page"] == 1
    # an old build's tag, or none, gets the page itself
    assert ask(app, "/page", headers=[(b"if-none-match", b'W/"build0-site"')])[0] == 200
    assert ask(app, "/page", headers=[(b"if-none-match", b'"a", "build1-site"')])[0] == 304
    assert pages.calls["/page"] == 2


def test_etag_leaves_errors_cookies_visitors_and_static_files_alone(pages):
    app = BuildETag(pages, "b")
    assert b"etag" not in ask(app, "/error")[1]
    assert b"etag" not in ask(app, "/cookie")[1]
    _, headers, _ = ask(app, "/static")
    assert headers[b"cache-control"] == b"max-age=3600, immutable" and headers[b"etag"]
    signed_in = [(b"cookie", b"ds_actor=abc"), (b"if-none-match", b"*")]
    status, headers, _ = ask(app, "/page", headers=signed_in)
    assert status == 200 and b"etag" not in headers
    assert ask(app, "/page", method="POST", headers=[(b"if-none-match", b"*")])[0] == 200


def test_if_none_match_uses_weak_comparison_and_star():
    assert matches(b"*", b'W/"x"')
    assert matches(b'"x"', b'W/"x"') and matches(b' W/"y" , W/"x"', b'W/"x"')
    assert not matches(b'"xy"', b'W/"x"') and not matches(b"", b'W/"x"')


def test_cache_answers_a_repeated_get_from_memory_keyed_on_the_whole_url(pages):
    app = ResponseCache(pages, max_bytes=100_000)
    first = ask(app, "/page", b"q=1")
    assert ask(app, "/page", b"q=1") == first
    assert pages.calls["/page"] == 1
    ask(app, "/page", b"q=2")
    ask(app, "/page", b"q=1", headers=[(b"accept-encoding", b"gzip")])
    ask(app, "/page", b"q=1", method="HEAD")
    assert pages.calls["/page"] == 4


def test_cache_never_keeps_errors_streams_cookies_or_personal_pages(pages):
    app = ResponseCache(pages, max_bytes=100_000)
    for path in ("/error", "/stream", "/cookie"):
        first = ask(app, path)
        assert ask(app, path) == first
        assert pages.calls[path] == 2, path
    assert ask(app, "/stream")[2] == b"a\nb\n"
    for _ in range(2):
        ask(app, "/page", headers=[(b"authorization", b"Bearer x")])
    assert pages.calls["/page"] == 2
    assert app.size == 0


def test_cache_stays_within_its_bytes_dropping_the_least_recently_used(pages):
    app = ResponseCache(pages, max_bytes=20_000, max_entry_bytes=10_000)
    for i in range(10):
        ask(app, "/big", str(i).encode())
        assert app.size <= 20_000
    assert 0 < len(app.entries) < 10
    calls = pages.calls["/big"]
    ask(app, "/big", b"9")  # the newest is still there
    assert pages.calls["/big"] == calls
    ask(app, "/big", b"0")  # the oldest went first
    assert pages.calls["/big"] == calls + 1
    small = ResponseCache(pages, max_bytes=20_000, max_entry_bytes=1_000)
    ask(small, "/big")
    assert small.size == 0 and not small.entries


def test_cache_counts_long_urls_in_its_bytes(pages):
    app = ResponseCache(pages, max_bytes=100_000)
    for i in range(20):
        ask(app, "/page", str(i).encode() + b"x" * 10_000)
        assert app.size <= 100_000
    assert len(app.entries) < 10


def test_cache_builds_a_page_asked_by_many_at_once_only_once():
    class Slow(Pages):
        async def __call__(self, scope, receive, send):
            await self.release.wait()
            await super().__call__(scope, receive, send)

    slow = Slow({"/page": (200, HTML, [b"<p>hello</p>"]), "/error": (500, HTML, [b"no"])})
    app = ResponseCache(slow, max_bytes=100_000)

    async def many(path):
        slow.release = asyncio.Event()
        tasks = [asyncio.create_task(ask_async(app, path)) for _ in range(5)]
        await asyncio.sleep(0.05)
        slow.release.set()
        return await asyncio.gather(*tasks)

    answers = asyncio.run(many("/page"))
    assert {a[2] for a in answers} == {b"<p>hello</p>"}
    assert slow.calls["/page"] == 1
    answers = asyncio.run(many("/error"))
    assert {a[0] for a in answers} == {500}
    assert slow.calls["/error"] == 5  # an error is not shared: each asks again


def test_cache_never_keeps_a_page_cut_short_by_a_time_limit(pages):
    """A view that left out its facets says so through http_scope.mark_incomplete, from a copy
    of the scope as Datasette's router makes one; the next visitor gets a fresh try."""
    from loader.web.request_scope import mark_incomplete

    async def facets_timed_out(scope, receive, send):
        routed = dict(scope, url_route={"kwargs": {}})
        if routed["path"] == "/slow":
            mark_incomplete(routed, "facets")
        await pages(routed, receive, send)

    pages.pages["/slow"] = (200, HTML, [b"<p>no facets</p>"])
    app = ResponseCache(facets_timed_out, max_bytes=100_000)
    for _ in range(2):
        assert ask(app, "/slow")[2] == b"<p>no facets</p>"
        ask(app, "/page")
    assert pages.calls == {"/slow": 2, "/page": 1}
    mark_incomplete({}, "facets")  # no cache in front: nothing to tell
