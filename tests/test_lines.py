"""loader/read/lines.py, the line and name readings every text format shares: each fast path
gives what the plain reading it replaces gives, on every line of real text (tests/real_texts.py)
and on generated text made of the characters the fast path turns on. (Names read from whole
files: tests/test_parsers.py.)"""

import io
import re
import unicodedata

from hypothesis import given
from hypothesis import strategies as st

from loader.read import lines as text

from .real_text_shares import REAL_TEXT_SHARES
from .real_texts import REAL_TEXTS, ROOT
from .text_properties import TEXT_PROPERTY

# names ----------------------------------------------------------------------------------------


def test_ascii_has_no_combining_marks():
    """looks_like_name skips the combining-mark filter for ASCII names."""
    assert not [c for c in map(chr, range(128)) if unicodedata.category(c).startswith("M")]


def name_parts():
    return [p for source in REAL_TEXTS for p in text.NAME_SEPARATOR.split(source)[:50]]


def check_clean_name(part):
    assert text.clean_name(part) == text.read_name(part), repr(part)


@REAL_TEXT_SHARES
def test_clean_name_reads_as_read_name_on_real_text(share):
    """Also from its cache: a cached reading is a fresh one."""
    text.read_recurring_name.cache_clear()
    parts = name_parts()[::share]
    plain = {p for p in parts if text.PLAIN_NAME.fullmatch(p.strip())}
    assert len(plain) > 500 // share
    for part in parts:
        check_clean_name(part)
    assert text.read_recurring_name.cache_info().hits > 0


@TEXT_PROPERTY
@given(
    st.lists(
        st.sampled_from(
            ["A", "Wei", "Chen", "B.", "Dr.", " ", "  ", "\t", "\x85", "\u3000", "\u200b", "\x1c"]
            + ["&amp;", "\\'e", "é", "e\u0301", "*", "-", ",", "Aaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaa"]
        ),
        max_size=10,
    ).map("".join)
)
def test_clean_name_reads_as_read_name(part):
    check_clean_name(part)


def test_a_long_plain_shaped_name_is_no_name():
    """PLAIN_NAME allows words of any length; a name does not (MAX_NAME_LENGTH)."""
    long_name = "Wei " + "C" + "h" * text.MAX_NAME_LENGTH
    assert text.PLAIN_NAME.fullmatch(long_name)
    assert text.clean_name(long_name) is None


def looks_like_name_word_by_word(name):
    original = text.PLAIN_NAME
    try:
        text.PLAIN_NAME = re.compile(r"(?!)")  # matches nothing: every name read word by word
        return text.looks_like_name(name)
    finally:
        text.PLAIN_NAME = original


def test_plain_names_are_names_on_real_text():
    parts = {p.strip() for source in REAL_TEXTS for p in text.NAME_SEPARATOR.split(source)}
    plain = [p for p in parts if text.PLAIN_NAME.fullmatch(p)]
    assert len(plain) > 500
    assert [p for p in plain if not looks_like_name_word_by_word(p)] == []
    assert [p for p in parts if text.looks_like_name(p) != looks_like_name_word_by_word(p)] == []


@TEXT_PROPERTY
@given(
    st.lists(
        st.sampled_from(
            ["A", "Z", "a", "z", "Ab", "Xu", "Chen", "B.", " ", "  ", ".", "-", "'", "é"]
        ),
        max_size=12,
    ).map("".join)
)
def test_plain_names_are_names(name):
    assert text.looks_like_name(name) == looks_like_name_word_by_word(name)


# how many words a name may have ----------------------------------------------------------------


def too_many_words_splitting_every_word(source):
    """too_many_words as it was: every word of the clause split off."""
    words = source.split()
    if len(words) <= text.MAX_NAME_WORDS or "\\" in source:
        return False
    allowed = text.MAX_NAME_WORDS + sum(source.count(title) for title in text.TITLES)
    for word in words:
        if word[0] in text.ASCII_LETTERS_AND_DIGITS and "&" not in word:
            allowed -= 1
            if allowed < 0:
                return True
    return False


def split_authors_reading_every_head(source):
    original = text.too_many_words
    try:
        text.too_many_words = lambda _: False
        return text.split_authors(source)
    finally:
        text.too_many_words = original


@REAL_TEXT_SHARES
def test_too_many_words_on_real_text(share):
    """It splits only the words it needs, says so only of what read_name refuses, and
    split_authors reads no head differently for asking it."""
    texts = REAL_TEXTS[::share]
    heads = {
        part
        for source in texts
        for part in text.NAME_SEPARATOR.split(source[: text.MAX_NAME_LENGTH * 4])[:3]
    }
    refused = [head for head in heads if text.too_many_words(head)]
    assert len(refused) > 1000 // share
    assert [head for head in refused if text.read_name(head) is not None] == []
    lists = [s for s in texts if len(s) < 2000]
    assert [s for s in lists if text.split_authors(s) != split_authors_reading_every_head(s)] == []

    clauses = [text.first_part(source[: text.MAX_NAME_LENGTH * 4])[0] for source in texts]
    assert sum(too_many_words_splitting_every_word(c) for c in clauses) > 500 // share
    for clause in clauses + texts:
        assert text.too_many_words(clause) == too_many_words_splitting_every_word(clause), clause


NAME_PIECES = st.lists(
    st.sampled_from(
        ["Dr.", "Prof.", "Mr.", " ", "\u00a0", "\u2003", "\u200b", "\x06", "&amp;", "&#32;"]
        + ["&nbsp;", "&amp", "*", "†", "(", ")", "“", "\u0301", "a", "B", "é", "ı", "1", "-", "'"]
        + [".", "\\", "\\'e", "et al."]
    ),
    max_size=4,
).map("".join)


@TEXT_PROPERTY
@given(
    # words of those pieces, enough of them that some texts have too many for a name
    st.lists(
        st.one_of(st.sampled_from(["Ann", "de", "Lee", "x2"]), NAME_PIECES), min_size=6, max_size=14
    ).map(" ".join)
)
def test_too_many_words_only_for_what_read_name_refuses(source):
    if text.too_many_words(source):
        assert text.read_name(source) is None


@TEXT_PROPERTY
@given(
    st.one_of(
        st.lists(
            st.sampled_from(
                ["a", "B", "1", " ", "  ", "(x", "&amp;", "Dr.", "Prof.", "\\", "é", "\t"]
            ),
            max_size=30,
        ).map("".join),
        # clauses of enough words for the count to matter, lasting words and titles among them
        st.lists(
            st.sampled_from(["Ab", "cd", "1x", "&amp;", "x&y", "(a", "é", "Dr.", "Prof.", "Mrs."]),
            min_size=6,
            max_size=12,
        ).map(" ".join),
    )
)
def test_too_many_words_splitting_only_what_it_needs(clause):
    assert text.too_many_words(clause) == too_many_words_splitting_every_word(clause)


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


@TEXT_PROPERTY
@given(
    st.lists(
        st.sampled_from([*text.TITLES, "M", "r", "s", ".", "D", "Prof", " ", "Mrs", "a"]),
        max_size=12,
    ).map("".join)
)
def test_titles_counted_from_each_dot(source):
    check_titles(source)
    assert text.too_many_words(source) == too_many_words_splitting_every_word(source)


# separators between names -----------------------------------------------------------------------


def check_separators(source):
    pattern = text.separator_in(source)
    assert pattern.split(source) == text.NAME_SEPARATOR.split(source), source
    assert pattern.split(source, maxsplit=1) == text.NAME_SEPARATOR.split(source, maxsplit=1)
    assert text.split_parts(source) == pattern.split(source), source
    head = pattern.split(source, maxsplit=1)
    assert text.first_part(source) == (head[0], len(head) > 1), source


@REAL_TEXT_SHARES
def test_names_split_as_by_the_separator_pattern_on_real_text(share):
    texts = REAL_TEXTS[::share]
    assert sum(text.separator_in(t) is text.COMMA for t in texts) > 1000 // share
    assert sum(text.separator_in(t) is text.NAME_SEPARATOR for t in texts) > 10 // share
    # (no fixture line holds a full-width comma: the generated text below does)
    assert sum("&" in source and "," in source for source in texts) > 5 // share
    windows = [source[: text.MAX_NAME_LENGTH * 4] for source in texts]
    assert sum(text.first_part(w)[1] for w in windows) > 500 // share
    for source in texts + windows:
        check_separators(source)


@TEXT_PROPERTY
@given(st.text(alphabet=st.sampled_from(list("ab ,，、&;.\t\n\u3000\u00a0")), max_size=30))
def test_names_split_as_by_the_separator_pattern(source):
    check_separators(source)


# truncated author lists ("et al.", "等") ---------------------------------------------------------


def test_a_and_l_match_only_their_capitals_ignoring_case():
    """is_truncated looks for 'al' with str.lower where TRUNCATION_MARK has IGNORECASE."""
    every_character = "".join(map(chr, range(0x110000)))
    for letter in "al":
        # a one-letter pattern matches single characters: findall tries each in turn
        matching = set(re.compile(letter, re.IGNORECASE).findall(every_character))
        assert matching == {letter, letter.upper()}


def strip_truncation_searching_every_line(source):
    """strip_truncation as it was: the pattern searched for from the start."""
    truncated, source = False, source.rstrip()
    while match := text.TRUNCATION_MARK.search(source):
        truncated = True
        source = text.strip_trailing_separators(source[: match.start()])
    return source, truncated


def check_truncation(source):
    assert text.is_truncated(source) == bool(text.TRUNCATION_MARK.search(source)), source
    found, expected = text.truncation_mark(source), text.TRUNCATION_MARK.search(source)
    assert (found and found.span()) == (expected and expected.span()), source
    assert text.strip_truncation(source) == strip_truncation_searching_every_line(source), source


@REAL_TEXT_SHARES
def test_truncation_marks_found_at_the_end_on_real_text(share):
    texts = REAL_TEXTS[::share] + [t.rstrip() for t in REAL_TEXTS[::share]]
    assert sum(bool(text.TRUNCATION_MARK.search(t)) for t in texts) > 20 // share
    for source in texts:
        check_truncation(source)


@TEXT_PROPERTY
@given(
    st.lists(
        st.sampled_from(
            ["A", "b", " ", "\t", "\u3000", "\x1c", "et", "ET", "eT", "al", "AL", "Al", "aL", "."]
            + ["..", "等", ",", "x", "t", "e", "é", "İ", "ſ"]
        ),
        max_size=12,
    ).map("".join)
)
def test_truncation_marks_found_at_the_end(source):
    check_truncation(source)


# lines ------------------------------------------------------------------------------------------


def test_undecodable_characters_are_not_ascii():
    """read_lines and line_problem search for them only in lines that are not ASCII."""
    assert not any(chr(c).isascii() for c in range(0xDC80, 0xDD00))


def check_small_file_split(data):
    """A file in hand is split into the lines the stream reads, with the same blank and bad
    counts."""
    assert text.split_small_file(data) == text.stream_lines(io.BytesIO(data))


def test_small_files_split_as_streamed_on_real_files():
    """Every fixture and seed file, and each as written with "\\r\\n" and "\\r", with a BOM."""
    folders = [ROOT / "tests" / "fixtures", ROOT / "seeds"]
    files = [p for folder in folders for p in sorted(folder.rglob("*")) if p.is_file()]
    assert len(files) > 20
    for path in files:
        data = path.read_bytes()
        for variant in (data, data.replace(b"\n", b"\r\n"), data.replace(b"\n", b"\r")):
            check_small_file_split(variant)
            check_small_file_split(b"\xef\xbb\xbf" + variant)


@TEXT_PROPERTY
@given(
    st.lists(
        st.sampled_from(
            [b"a", b" ", b"\t", b"\n", b"\r", b"\r\n", b"\n\r", b"\xef\xbb\xbf", b"\xff", b"\xc3"]
            + [b"\xc3\xa9", b"\xe2\x80\xa8", b"\x0b", b"\x0c", b"\x1c", b"\x85", b"\xc2\x85", b"\0"]
            + [b"\xe3\x80\x80", b"\xe8\xae\xba", b"Ab, Cd"]
        ),
        max_size=20,
    ).map(b"".join)
)
def test_small_files_split_as_streamed(data):
    check_small_file_split(data)


@TEXT_PROPERTY
@given(
    st.lists(
        st.sampled_from(
            [b"a", b" ", b"\n", b"\r", b"\r\n", b"\xef\xbb\xbf", b"\xff", b"\xc3\xa9", b"\0"]
            + [b"abcdefgh", b"\xe8\xae\xba\xe6\x96\x87", b"\xf0\x9f\x98\x80"]
        ),
        max_size=24,
    ).map(b"".join)
)
def test_small_files_with_long_lines_split_as_streamed(data):
    """Lines over a limit of 12 bytes are the stream's markers with the same sizes."""
    original = text.MAX_LINE_BYTES
    text.MAX_LINE_BYTES = 12
    try:
        check_small_file_split(data)
    finally:
        text.MAX_LINE_BYTES = original


def test_a_file_over_the_limit_is_streamed(monkeypatch):
    """A file larger than WHOLE_FILE_BYTES is streamed; the same lines either way."""
    monkeypatch.setattr(text, "WHOLE_FILE_BYTES", 10)
    monkeypatch.setattr(text, "MAX_LINE_BYTES", 10)
    lines, problem = text.read_lines("f.txt", io.BytesIO(b"short\n" + b"x" * 11 + b"\nend\n"))
    assert problem is None
    assert lines[0] == "short" and text.is_too_long(lines[1]) and lines[2] == "end"
    lines, problem = text.read_lines("f.txt", io.BytesIO(b"short\nx\r\nend"))
    assert (lines, problem) == (["short", "x", "end"], None)
