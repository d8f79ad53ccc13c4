"""The fast path for texts without markup (loader.rules.markup.plain_html) gives exactly the HTML of
loader.rules.markup's full reading (read_html), on every real, seed and hostile title and abstract."""

import json
import sqlite3

import pytest

from loader.rules.markup import plain_html, read_html, render_html, title_html

from .conftest import FIXTURES

CRAFTED = [
    'Say "no" to it',
    "It's 3 > 2 and 2 < 3",
    "a\u00a0b",
    "line\nbreak\tand tab",
    "carriage\r\nreturn",
    "nul\x00byte",
    "bell\x07",
    "e\u0301 composed",
    "emoji \U0001f600 and \ufffd",
    "&amp; an entity",
    "<script>alert(1)</script>",
    "$x^2$ math",
    "",
    " ",
]


def texts(seed_catalog):
    with sqlite3.connect(seed_catalog) as connection:
        rows = connection.execute("select label, title, abstract from papers").fetchall()
    found = [text for row in rows for text in row if isinstance(text, str)]
    for path in [*FIXTURES.rglob("*.jsonl"), *FIXTURES.rglob("*.json")]:
        for line in path.read_text(encoding="utf-8", errors="replace").splitlines():
            try:
                record = json.loads(line)
            except ValueError:
                continue
            if isinstance(record, dict):
                found += [
                    record[k] for k in ("title", "abstract") if isinstance(record.get(k), str)
                ]
    # a lone surrogate never reaches a page: the loader stores UTF-8
    return [text for text in found + CRAFTED if is_utf8(text)]


def is_utf8(text):
    try:
        text.encode("utf-8")
    except UnicodeEncodeError:
        return False
    return True


def test_plain_texts_render_as_markup_renders_them(seed_catalog):
    checked = 0
    for text in texts(seed_catalog):
        html = plain_html(text)
        if html is not None:
            checked += 1
            assert html == read_html(text, title=True) == read_html(text, title=False), repr(text)
        assert title_html(text) == read_html(text, title=True), repr(text)
        assert render_html(text) == read_html(text, title=False), repr(text)
    assert checked > 100


@pytest.mark.parametrize("text", ["$x$", "a <b>", "a & b", "x\ry", "x\x00y", "*em*", "http://a.b"])
def test_texts_with_markup_or_odd_characters_take_the_full_reading(text):
    assert plain_html(text) is None
