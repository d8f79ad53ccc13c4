"""Datasette 0.65 answers an empty or blank `?_search=` with HTTP 400 (`escape_fts('')` is an
FTS5 syntax error): drop such parameters before the request reaches it, so the user gets rows."""

from urllib.parse import parse_qsl, urlencode

from datasette import hookimpl


def is_blank_search(key, value):
    return (key == "_search" or key.startswith("_search_")) and not value.strip()


def without_blank_search(query_string):
    """The query string minus blank _search/_search_<column> pairs, or None if none were there."""
    pairs = parse_qsl(query_string.decode("latin-1"), keep_blank_values=True)
    kept = [(key, value) for key, value in pairs if not is_blank_search(key, value)]
    if len(kept) == len(pairs):
        return None
    return urlencode(kept).encode("latin-1")


def guard_blank_search(app):
    async def guarded(scope, receive, send):
        if scope["type"] == "http" and b"_search" in scope.get("query_string", b""):
            cleaned = without_blank_search(scope["query_string"])
            if cleaned is not None:
                scope = dict(scope, query_string=cleaned)
        await app(scope, receive, send)

    return guarded


@hookimpl
def asgi_wrapper():
    return guard_blank_search
