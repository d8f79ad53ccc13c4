"""The fifth round of build fast paths give exactly what the readings they replace give.

Each is checked against the pattern or pass it replaces over every line of the real fixtures
and seeds (test_build_speed.REAL_TEXTS) and over generated text with the characters it turns
on."""

import re

from hypothesis import given, settings
from hypothesis import strategies as st

from loader.read import lines as text
from loader.rules import labels, markup

from .test_build_speed import REAL_TEXTS
from .test_build_speed2 import CITATION_MARK_WITH_SPACE
from .test_build_speed4 import too_many_words_splitting_every_word

# the pattern simple_markdown_segments found its marks with
MARK_RUN = re.compile(r"\*+|`+")


def test_mark_runs_equal_the_pattern_on_real_text():
    assert sum(len(MARK_RUN.findall(source)) > 1 for source in REAL_TEXTS) > 20
    for source in REAL_TEXTS:
        assert markup.mark_runs(source) == [m.span() for m in MARK_RUN.finditer(source)], source


@settings(max_examples=5000, deadline=None)
@given(st.text(alphabet=st.sampled_from(list("*`a ")), max_size=20))
def test_mark_runs_equal_the_pattern(source):
    assert markup.mark_runs(source) == [m.span() for m in MARK_RUN.finditer(source)]


def check_may_cite(source):
    if labels.CITATION_MARK.search(source):
        assert labels.may_cite(source), source
    assert labels.drop_citations(source) == CITATION_MARK_WITH_SPACE.sub("", source), source


def test_citations_prefiltered_by_their_parentheses_on_real_text():
    cited = [s for s in REAL_TEXTS if labels.CITATION_MARK.search(s) and "[" not in s]
    assert len(cited) > 20
    assert sum(not labels.may_cite(s) and "(" in s for s in REAL_TEXTS) > 500
    for source in REAL_TEXTS:
        check_may_cite(source)


CITATION_IN_PARENTHESES = st.lists(
    st.sampled_from(
        ["(", ")", "((", "))", " ", "a", "Smith", " et al", ", ", "19", "20", "2019", "1987a"]
        + ["3", "0", "-", "x20", "201", ")(", "[", "]", "[1]", "é"]
    ),
    max_size=16,
).map("".join)


@settings(max_examples=10000, deadline=None)
@given(CITATION_IN_PARENTHESES)
def test_citations_prefiltered_by_their_parentheses(source):
    check_may_cite(source)


def check_doubled(source):
    doubled = "--" in source or "''" in source
    assert markup.holds_doubled(source, markup.DOUBLED_MARKS) == doubled, source
    url = "http://" in source or "https://" in source
    assert markup.has_markup(source) == bool(markup_one_needle_at_a_time(source) or url), source


def markup_one_needle_at_a_time(source):
    """has_markup as it was, but for URLs: every needle over the whole text."""
    marks = [*markup.MARKUP_CHARACTERS, "--", "''"]
    return any(mark in source for mark in marks) or bool(markup.PLACEHOLDER.search(source))


def test_doubled_marks_found_as_the_needles_find_them_on_real_text():
    assert sum("--" in s for s in REAL_TEXTS) > 50 and sum("''" in s for s in REAL_TEXTS) > 20
    assert sum("-" in s and not markup.has_markup(s) for s in REAL_TEXTS) > 500
    for source in REAL_TEXTS:
        check_doubled(source)


@settings(max_examples=5000, deadline=None)
@given(st.lists(st.sampled_from([*"-'a :/ ", "http://", "https:/"]), max_size=20).map("".join))
def test_doubled_marks_found_as_the_needles_find_them(source):
    check_doubled(source)


def split_text_as_it_was(text, pieces):
    """split_text with every text split at placeholders and searched for URLs."""
    segments = []
    for part in re.split("([\ue100-\uf7ff])", text) if pieces else [text]:
        if not part:
            continue
        if markup.PLACEHOLDER.fullmatch(part):
            piece = pieces[ord(part) - markup.PLACEHOLDER_BASE]
            segments.append(piece if isinstance(piece, markup.Math) else markup.Text(piece))
            continue
        position = 0
        for url in markup.BARE_URL.finditer(part):
            segments.append(markup.Text(part[position : url.start()]))
            segments.append(markup.Link(url.group(0), ()))
            position = url.end()
        segments.append(markup.Text(part[position:]))
    return [segment for segment in segments if segment != markup.Text("")]


def check_split_text(source):
    protected, pieces = markup.set_aside(source)
    for reading in (markup.restore(protected, pieces), protected, source):
        assert markup.split_text(reading, pieces) == split_text_as_it_was(reading, pieces), source


def test_split_text_skipping_ascii_and_colonless_text_on_real_text():
    assert sum(markup.set_aside(s)[1] != [] and s.isascii() for s in REAL_TEXTS) > 100
    assert sum("http" in s for s in REAL_TEXTS) > 20
    for source in REAL_TEXTS:
        check_split_text(source)


@settings(max_examples=5000, deadline=None)
@given(
    st.lists(
        st.sampled_from([*"a :/.$\\`'", "$x$", "\\$", "``a''", "http://a.b", "https://x", "é"]),
        max_size=16,
    ).map("".join)
)
def test_split_text_skipping_ascii_and_colonless_text(source):
    check_split_text(source)


def set_aside_searching_from_each_end(text):
    """set_aside with the pattern searched from where the last match ended."""
    original = markup.first_mark
    try:
        markup.first_mark = lambda text, position: position
        return markup.set_aside(text)
    finally:
        markup.first_mark = original


def check_set_aside(source):
    assert markup.set_aside(source) == set_aside_searching_from_each_end(source), source
    for match in markup.MATH_OR_ESCAPE.finditer(source):
        assert source[match.start()] in markup.MATH_OR_ESCAPE_STARTS, source


def test_set_aside_skipping_to_the_first_mark_on_real_text():
    assert sum(len(markup.set_aside(s)[1]) > 1 for s in REAL_TEXTS) > 100
    for source in REAL_TEXTS:
        check_set_aside(source)


@settings(max_examples=10000, deadline=None)
@given(
    st.lists(
        st.sampled_from([*"a $\\`'()[]{}\n.", "$$", "``", "''", "\\(", "\\)", "\\[", "\\]", "é"]),
        max_size=20,
    ).map("".join)
)
def test_set_aside_skipping_to_the_first_mark(source):
    check_set_aside(source)


def check_quoted_name(sentence):
    for start in range(len(sentence) + 1):
        if labels.QUOTED_NAME.match(sentence, start):
            assert markup.holds_any(sentence, labels.QUOTES), sentence


def test_quoted_names_hold_a_quote_mark_on_real_text():
    quoted = [s for s in REAL_TEXTS if labels.QUOTED_NAME.search(s)]
    assert len(quoted) > 20
    for source in quoted + REAL_TEXTS[:2000]:
        check_quoted_name(source[:300])


@settings(max_examples=3000, deadline=None)
@given(st.text(alphabet=st.sampled_from(list("aA “”\"'‘’«»")), max_size=20))
def test_quoted_names_hold_a_quote_mark(sentence):
    check_quoted_name(sentence)


def strip_truncation_searching_every_line(source):
    """strip_truncation as it was: the pattern searched for from the start."""
    truncated, source = False, source.rstrip()
    while match := text.TRUNCATION_MARK.search(source):
        truncated = True
        source = text.strip_trailing_separators(source[: match.start()])
    return source, truncated


def check_truncation(source):
    found, expected = text.truncation_mark(source), text.TRUNCATION_MARK.search(source)
    assert (found and found.span()) == (expected and expected.span()), source
    assert text.strip_truncation(source) == strip_truncation_searching_every_line(source), source


def test_truncation_marks_found_at_the_end_on_real_text():
    texts = REAL_TEXTS + [t.rstrip() for t in REAL_TEXTS]
    assert sum(bool(text.TRUNCATION_MARK.search(t)) for t in texts) > 20
    for source in texts:
        check_truncation(source)


@settings(max_examples=5000, deadline=None)
@given(
    st.lists(
        st.sampled_from(
            ["A", "b", " ", "\t", "\u3000", "\x1c", "et", "ET", "eT", "al", "AL", "aL", "."]
            + ["..", "等", ",", "x", "t", "e", "é", "İ", "ſ"]
        ),
        max_size=12,
    ).map("".join)
)
def test_truncation_marks_found_at_the_end(source):
    check_truncation(source)


def test_each_dot_ends_at_most_one_title():
    """What count_titles counts on: one '.' a title, at its end, and no title ends another."""
    for title in text.TITLES:
        assert title.count(".") == 1 and title.endswith(".")
        assert [t for t in text.TITLES if t.endswith(title)] == [title]


def check_titles(source):
    assert text.count_titles(source) == sum(source.count(t) for t in text.TITLES), source


def test_titles_counted_from_each_dot_on_real_text():
    assert sum(text.count_titles(s) > 0 for s in REAL_TEXTS) > 5
    for source in REAL_TEXTS:
        check_titles(source)


@settings(max_examples=5000, deadline=None)
@given(
    st.lists(
        st.sampled_from([*text.TITLES, "M", "r", "s", ".", "D", "Prof", " ", "Mrs", "a"]),
        max_size=12,
    ).map("".join)
)
def test_titles_counted_from_each_dot(source):
    check_titles(source)
    assert text.too_many_words(source) == too_many_words_splitting_every_word(source)


@settings(max_examples=5000, deadline=None)
@given(
    st.lists(
        st.sampled_from(["Ab", "cd", "1x", "&amp;", "x&y", "(a", "é", "Dr.", "Prof.", "Mrs."]),
        min_size=6,
        max_size=12,
    ).map(" ".join)
)
def test_too_many_words_with_the_lasting_test_inlined(clause):
    assert text.too_many_words(clause) == too_many_words_splitting_every_word(clause)


def check_definition_words(source):
    found = markup.holds_definition_word(source)
    assert found == markup.holds_any(source, markup.DEFINITION_WORDS), source
    if markup.DEFINITION.search(source):
        assert found, source


def test_definition_words_found_at_each_backslash_on_real_text():
    assert sum("\\" in s for s in REAL_TEXTS) > 100
    assert any(markup.holds_definition_word(s) for s in REAL_TEXTS)
    for source in REAL_TEXTS:
        check_definition_words(source)


@settings(max_examples=5000, deadline=None)
@given(
    st.lists(
        st.sampled_from(
            [*markup.DEFINITION_WORDS, "\\", "\\\\", "new", "command", "def", "a", "{", "}"]
            + ["\\R", "$", " ", "re", "*"]
        ),
        max_size=10,
    ).map("".join)
)
def test_definition_words_found_at_each_backslash(source):
    check_definition_words(source)
