"""CSV never carries the search highlight characters.

The canned `search` query marks matches in its snippet with U+E000/U+E001 so pages can show them
as <mark>; in a downloaded CSV they are only noise, so every text/csv body loses them on the way
out. A character split between two body messages is held back until the next one.
"""

from loader.web.catalog_scope import in_catalog_scope

HIGHLIGHTS = ("\ue000".encode(), "\ue001".encode())
# a body piece ending in the first bytes of a highlight character waits for the rest
PARTIAL = (HIGHLIGHTS[0][:1], HIGHLIGHTS[0][:2])


def strip_highlights(body):
    for marker in HIGHLIGHTS:
        body = body.replace(marker, b"")
    return body


def split_partial(body):
    for size in (2, 1):
        if body[-size:] == PARTIAL[size - 1]:
            return body[:-size], body[-size:]
    return body, b""


def clean_csv(app, datasette):
    async def wrapped(scope, receive, send):
        if scope["type"] != "http" or not in_catalog_scope(datasette, scope["path"]):
            await app(scope, receive, send)
            return
        is_csv, held = False, b""

        async def cleaning_send(message):
            nonlocal is_csv, held
            if message["type"] == "http.response.start":
                # Datasette serves CSV as text/plain unless _dl=1 asks for a download
                headers = dict(message.get("headers") or [])
                content_type = headers.get(b"content-type", b"")
                is_csv = content_type.startswith(b"text/csv") or (
                    scope["path"].endswith(".csv") and content_type.startswith(b"text/plain")
                )
            elif message["type"] == "http.response.body" and is_csv:
                body, held = split_partial(strip_highlights(held + message.get("body", b"")))
                if not message.get("more_body", False):
                    body, held = body + held, b""
                message = dict(message, body=body)
            await send(message)

        await app(scope, receive, cleaning_send)

    return wrapped


def asgi_wrapper(datasette):
    return lambda app: clean_csv(app, datasette)
