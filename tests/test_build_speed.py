"""The build's fast paths give exactly what the slow paths they skip give, on real text.

Each fast path is checked against the straightforward reading it replaces, over every line of
the real fixtures (tests/fixtures/real/), the seeds and tests/fixtures/, and over generated
text with the characters the fast path turns on."""

import html
import json
import re
import unicodedata
from pathlib import Path

from hypothesis import given, settings
from hypothesis import strategies as st

from loader.read import lines as text
from loader.rules import markup

ROOT = Path(__file__).resolve().parent.parent
TEXT_SUFFIXES = {".txt", ".jsonl", ".json", ".md"}


def strings_in(value):
    if isinstance(value, str):
        yield value
    elif isinstance(value, dict):
        for item in value.values():
            yield from strings_in(item)
    elif isinstance(value, list):
        for item in value:
            yield from strings_in(item)


def real_texts():
    """Every line of every fixture and seed file, and every string of the JSON ones."""
    texts = set()
    folders = [ROOT / "tests" / "fixtures", ROOT / "seeds"]
    for path in sorted(p for folder in folders for p in folder.rglob("*") if p.is_file()):
        if path.suffix not in TEXT_SUFFIXES:
            continue
        for line in path.read_text(encoding="utf-8", errors="replace").splitlines():
            texts.add(line)
            if path.suffix in (".jsonl", ".json"):
                try:
                    texts.update(strings_in(json.loads(line)))
                except ValueError:
                    pass
    return sorted(texts)


REAL_TEXTS = real_texts()


def latex_regions_word_by_word(source):
    """The reading latex_regions replaced: every word looked at in turn."""
    if not markup.LATEX_MARK.search(source):
        return [(False, source)]
    regions, depth = [], 0
    tokens = re.split(r"(\s+)", source)
    for index, token in enumerate(tokens):
        following = tokens[index + 1] if index + 1 < len(tokens) else ""
        if token.isspace() or not token:
            is_latex = depth > 0 or (bool(regions) and regions[-1][0] and following[:1] == "{")
        else:
            is_latex = depth > 0 or bool(markup.LATEX_MARK.search(token))
            depth = max(0, depth + token.count("{") - token.count("}"))
        if regions and regions[-1][0] == is_latex:
            regions[-1][1] += token
        else:
            regions.append([is_latex, token])
    return regions


def nonempty(regions):
    return [(bool(is_latex), part) for is_latex, part in regions if part]


def test_the_fixtures_hold_latex():
    with_latex = [t for t in REAL_TEXTS if markup.LATEX_MARK.search(t)]
    assert len(REAL_TEXTS) > 1000 and len(with_latex) > 100


def test_latex_regions_equal_word_by_word_on_real_text():
    differ = [
        source
        for source in REAL_TEXTS
        if nonempty(markup.latex_regions(source)) != nonempty(latex_regions_word_by_word(source))
        or "".join(part for _, part in markup.latex_regions(source)) != source
    ]
    assert differ == []


LATEXY = st.text(alphabet=st.sampled_from(list("ab\\{}~-'` \t\n\u00a0\u3000$x")), max_size=60)


@settings(max_examples=3000, deadline=None)
@given(LATEXY)
def test_latex_regions_equal_word_by_word_on_generated_text(source):
    assert nonempty(markup.latex_regions(source)) == nonempty(latex_regions_word_by_word(source))


def test_ascii_has_no_combining_marks():
    """looks_like_name skips the combining-mark filter for ASCII names."""
    assert not [c for c in map(chr, range(128)) if unicodedata.category(c).startswith("M")]


def test_cached_clean_name_equals_a_fresh_reading():
    text.read_recurring_name.cache_clear()
    parts = [p for source in REAL_TEXTS for p in text.NAME_SEPARATOR.split(source)[:50]]
    assert [p for p in parts if text.clean_name(p) != text.read_name(p)] == []
    assert text.read_recurring_name.cache_info().hits > 0


def protected_texts():
    """The texts markdown-it reads in parse(): math, escapes and quotes set aside."""
    for source in REAL_TEXTS:
        normal = unicodedata.normalize("NFC", source)
        normal = markup.apply_definitions(markup.PLACEHOLDER.sub("\ufffd", html.unescape(normal)))
        yield markup.set_aside(normal)


def markdown_tokens(source):
    return [(t.type, t.content) for t in markup.MARKDOWN.parseInline(source)[0].children or []]


def test_text_without_markdown_marks_is_one_text_token_on_real_text():
    unread = [
        source
        for source, _ in protected_texts()
        if not markup.has_markdown_mark(source)
        and markdown_tokens(source) != ([("text", source)] if source else [])
    ]
    assert unread == []


MARKDOWNISH = st.text(
    alphabet=st.sampled_from(list("ab *_`[]()<>&#;!\\$~-'\"\t\n\r\0\u00a0:/.h\ue100")), max_size=40
)


@settings(max_examples=3000, deadline=None)
@given(MARKDOWNISH)
def test_text_without_markdown_marks_is_one_text_token(source):
    if not markup.has_markdown_mark(source):
        assert markdown_tokens(source) == ([("text", source)] if source else [])


def test_cached_latex_readings_equal_fresh_ones_on_real_text():
    """read_repeated_latex_region and math_text are pure: a cached reading is a fresh one."""
    regions = {
        part
        for source, _ in protected_texts()
        for is_latex, part in markup.latex_regions(source)
        if is_latex and not markup.PLACEHOLDER.search(part)
    }
    assert len(regions) > 50
    for part in regions:
        assert markup.read_repeated_latex_region(part) == tuple(markup.read_latex_region(part, ()))
    maths = {p.tex for _, pieces in protected_texts() for p in pieces if isinstance(p, markup.Math)}
    assert len(maths) > 50
    for tex in maths:
        assert markup.math_text(tex) == markup.math_text.__wrapped__(tex)


def test_parse_of_real_text_is_unchanged_by_the_fast_paths():
    """parse() and the plain text with every fast path against the same through markdown-it
    and pylatexenc for every source, caches off."""

    def read(source):
        segments = markup.parse.__wrapped__(source)
        return segments, markup.segments_text(segments)

    fast = {source: read(source) for source in REAL_TEXTS}
    slow = {}
    original = markup.has_markdown_mark, markup.read_repeated_latex_region, markup.math_text
    try:
        markup.has_markdown_mark = lambda _: True
        markup.read_repeated_latex_region = lambda part: markup.read_latex_region(part, ())
        markup.math_text = markup.math_text.__wrapped__
        slow = {source: read(source) for source in REAL_TEXTS}
    finally:
        markup.has_markdown_mark, markup.read_repeated_latex_region, markup.math_text = original
    assert [s for s in REAL_TEXTS if fast[s] != slow[s]] == []


# the patterns markup.py had before its branches were rewritten to start with a literal
MATH_OR_ESCAPE_BRANCHES_GROUPED = re.compile(
    r"""
      (?P<display>\$\$)
    | (?P<inline>\$)
    | \\\[(?P<bracket>.{1,2000}?)\\\]
    | \\\((?P<paren>.{1,2000}?)\\\)
    | (?P<open_quote>``(?=\S))
    | (?P<close_quote>'')
    | (?P<escape>\\[^A-Za-z0-9\s])
    """,
    re.VERBOSE | re.DOTALL,
)
MARKUP_MARK_ONE_PATTERN = re.compile(r"[$\\*_`\[<&~{}\ue100-\uf7ff]|--|''|https?://")


def matches(pattern, source):
    found, position = [], 0
    while match := pattern.search(source, position):
        # set_aside reads the span, the branch and the math of \[...\] and \(...\)
        found.append((match.span(), match.lastgroup, match["bracket"], match["paren"]))
        position = max(match.end(), position + 1)
    return found


def check_markup_patterns(source):
    assert matches(markup.MATH_OR_ESCAPE, source) == matches(
        MATH_OR_ESCAPE_BRANCHES_GROUPED, source
    ), source
    assert markup.has_markup(source) == bool(MARKUP_MARK_ONE_PATTERN.search(source)), source


def test_markup_patterns_find_what_they_found_before_on_real_text():
    for source in REAL_TEXTS:
        check_markup_patterns(source)


@settings(max_examples=3000, deadline=None)
@given(st.text(alphabet=st.sampled_from(list("$$\\[]()`' a1\n-htps:/\ue100")), max_size=40))
def test_markup_patterns_find_what_they_found_before(source):
    check_markup_patterns(source)
