"""The fourth round of build fast paths give exactly what the readings they replace give.

Each is checked against the pass it replaces over every line of the real fixtures and seeds
(test_build_speed.REAL_TEXTS) and over generated text with the characters it turns on."""

import html
import unicodedata

from hypothesis import given, settings
from hypothesis import strategies as st

from loader.read import lines as text
from loader.read.entries import read_block
from loader.read.lines import Block
from loader.rules import labels, markup, merge

from .test_build_speed import REAL_TEXTS
from .test_build_speed2 import CITATION_MARK_WITH_SPACE, WORDS
from .test_build_speed3 import letters_and_digits_by_pattern, may_hold_by_generators

NAME_PIECES = st.lists(
    st.sampled_from(
        ["A", "Wei", "Chen", "B.", "Dr.", " ", "  ", "\t", "\x85", "\u3000", "\u200b", "\x1c"]
        + ["&amp;", "\\'e", "é", "e\u0301", "*", "-", ",", "Aaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaa"]
    ),
    max_size=10,
).map("".join)


def check_clean_name(part):
    assert text.clean_name(part) == text.read_name(part), repr(part)


def test_plain_names_read_as_read_name_reads_them_on_real_text():
    parts = {p for source in REAL_TEXTS for p in text.NAME_SEPARATOR.split(source)[:50]}
    plain = [p for p in parts if text.PLAIN_NAME.fullmatch(p.strip())]
    assert len(plain) > 500
    for part in parts:
        check_clean_name(part)


@settings(max_examples=5000, deadline=None)
@given(NAME_PIECES)
def test_plain_names_read_as_read_name_reads_them(part):
    check_clean_name(part)


def test_a_long_plain_shaped_name_is_no_name():
    """PLAIN_NAME allows words of any length; a name does not (MAX_NAME_LENGTH)."""
    long_name = "Wei " + "C" + "h" * text.MAX_NAME_LENGTH
    assert text.PLAIN_NAME.fullmatch(long_name)
    assert text.clean_name(long_name) is None


def first_part_by_split(window):
    head = text.separator_in(window).split(window, maxsplit=1)
    return head[0], len(head) > 1


def test_first_part_equals_the_split_on_real_text():
    windows = [source[: text.MAX_NAME_LENGTH * 4] for source in REAL_TEXTS]
    assert sum(first_part_by_split(w)[1] for w in windows) > 500
    for window in windows:
        assert text.first_part(window) == first_part_by_split(window), window


@settings(max_examples=3000, deadline=None)
@given(st.text(alphabet=st.sampled_from(list("ab ,，、&;.")), max_size=30))
def test_first_part_equals_the_split(window):
    assert text.first_part(window) == first_part_by_split(window)


def shapes_checking_every_line(path, block, classify):
    """read_block as it was: line_problem asked about every line."""
    shapes = []
    for offset, line in enumerate(block.lines):
        problem = text.line_problem(path, block.line + offset, line)
        shapes.append(("problem", problem) if problem else classify(line))
    for index in range(1, len(shapes) - 1):
        sandwiched = shapes[index - 1][0] == shapes[index + 1][0] == "text"
        if sandwiched and shapes[index][0] != "problem":
            shapes[index] = ("text", block.lines[index])
    return shapes


def classify_by_length(line):
    return ("text", line) if len(line) > 3 else ("authors", line)


def check_block(lines):
    block = Block(7, lines)
    assert read_block("f.txt", block, classify_by_length) == shapes_checking_every_line(
        "f.txt", block, classify_by_length
    )


def test_read_block_finds_the_problems_line_problem_finds_on_real_text():
    lines = [line.strip() for line in REAL_TEXTS if line.strip()]
    for start in range(0, len(lines), 5):
        check_block(lines[start : start + 5])
    check_block(["ok", "a\0b", "\udcff", text.too_long(1 << 21), "plain"])


@settings(max_examples=3000, deadline=None)
@given(st.lists(st.text(alphabet=st.sampled_from(list("ab \0\udcff\ud800é")), min_size=1)))
def test_read_block_finds_the_problems_line_problem_finds(lines):
    check_block(lines)


@settings(max_examples=3000, deadline=None)
@given(st.lists(st.sampled_from(WORDS + ["ıntroduce", "WE PROPOSE", "Our "]), max_size=20))
def test_one_lowered_sentence_serves_both_prefilters(words):
    sentence = "".join(words)
    lower = labels.ascii_lower(sentence)
    for groups in (labels.INTRO_GROUPS, labels.NAMING_GROUPS):
        assert labels.lowered_may_hold(lower, groups) == may_hold_by_generators(sentence, *groups)


def test_one_lowered_sentence_serves_both_prefilters_on_real_text():
    for sentence in REAL_TEXTS:
        lower = labels.ascii_lower(sentence)
        for groups in (labels.INTRO_GROUPS, labels.NAMING_GROUPS):
            assert labels.lowered_may_hold(lower, groups) == may_hold_by_generators(
                sentence, *groups
            )


def test_no_combining_mark_of_a_reading_is_a_letter():
    """letters_and_digits reads each character alone: NFKD reorders only combining marks (a
    nonzero combining class), and it drops every one of those."""
    for code in range(0x110000):
        reading = unicodedata.normalize("NFKD", chr(code).casefold())
        assert not any(unicodedata.combining(c) and c.isalnum() for c in reading), hex(code)


def test_letters_and_digits_read_character_by_character_on_real_text():
    texts = [markup.plain_text(t) for t in REAL_TEXTS]
    assert sum(not t.isascii() for t in texts) > 500
    for source in texts:
        assert merge.letters_and_digits(source) == letters_and_digits_by_pattern(source), source


@settings(max_examples=5000, deadline=None)
@given(
    st.text(
        alphabet=st.sampled_from(
            list("aA_9 .,–’“ε∞ℓαé\u0301\u0345½℡Ⅸ％İ\ud800ᴬΑ\U0001d6a8\U0001d400ﬃß")
        ),
        max_size=30,
    )
)
def test_letters_and_digits_read_character_by_character(source):
    """With readings that hold another character read ('𝚨' -> 'Α' -> 'α'): the whole pass."""
    assert merge.letters_and_digits(source) == letters_and_digits_by_pattern(source)


def test_printable_told_by_translate_on_real_text():
    for source in REAL_TEXTS:
        assert markup.is_printable(source) == source.isprintable(), source


@settings(max_examples=3000, deadline=None)
@given(st.text(alphabet=st.sampled_from(list("a \t\n\x00\x1f\x7f~\x85é\u200b")), max_size=20))
def test_printable_told_by_translate(source):
    assert markup.is_printable(source) == source.isprintable()


def test_parts_equal_the_split_on_real_text():
    # (no fixture line holds a full-width comma: the generated text below does)
    assert sum("&" in source and "," in source for source in REAL_TEXTS) > 5
    for source in REAL_TEXTS:
        assert text.split_parts(source) == text.separator_in(source).split(source), source


@settings(max_examples=3000, deadline=None)
@given(st.text(alphabet=st.sampled_from(list("ab ,，、&;")), max_size=30))
def test_parts_equal_the_split(source):
    assert text.split_parts(source) == text.separator_in(source).split(source)


def parse_with_markdown_it(source):
    """parse() with every Markdown text read by markdown-it."""
    original = markup.simple_markdown_segments
    try:
        markup.simple_markdown_segments = lambda text, pieces: None
        return markup.parse.__wrapped__(source)
    finally:
        markup.simple_markdown_segments = original


def takes_simple_markdown(source):
    """Whether parse(source) reads its Markdown with simple_markdown_segments."""
    source = markup.PLACEHOLDER.sub("\ufffd", html.unescape(unicodedata.normalize("NFC", source)))
    protected, pieces = markup.set_aside(markup.apply_definitions(source))
    return markup.has_markdown_mark(protected) and (
        markup.simple_markdown_segments(protected, pieces) is not None
    )


def test_simple_markdown_reads_as_markdown_it_on_real_text():
    simple = [t for t in REAL_TEXTS if takes_simple_markdown(t)]
    assert len(simple) > 20
    for source in REAL_TEXTS:
        assert markup.parse.__wrapped__(source) == parse_with_markdown_it(source), source


MARKDOWN_PIECES = st.lists(
    st.sampled_from(
        ["a", "Bc", "1", " ", " ", "*", "**", "***", "`", "``", ".", ",", ";", ":", "(", ")"]
        + ["$k$", "-", "é", "_", "\xa0", "!", "\t", "\\emph{x}", "'", '"', "\ue100", "&amp;"]
    ),
    max_size=16,
).map("".join)


@settings(max_examples=10000, deadline=None)
@given(MARKDOWN_PIECES)
def test_simple_markdown_reads_as_markdown_it(source):
    assert markup.parse.__wrapped__(source) == parse_with_markdown_it(source)


def test_simple_markdown_is_taken_where_it_is_meant_to_be():
    """The generated texts above reach it: the shapes it takes and some it refuses."""
    for source in ["with **S**tate-of-the-art.", "a *b c*, `code` and *d*e", "*a*"]:
        assert takes_simple_markdown(source), source
    for source in ["a*b*", "*a *", "***a***", "` a `", "*a*!", "*a* _b_", "*é*", "*a"]:
        assert not takes_simple_markdown(source), source


# emphasis and code shaped as abstracts write them, and bent out of the simple shapes
EMPHASIZED_WORDS = st.lists(
    st.tuples(
        st.sampled_from([" ", " ", "", "(", "\xa0", "a", "\t"]),
        st.sampled_from(["*", "**", "`", "***", ""]),
        st.sampled_from(["a", "Bc", "1", "x-y", "$k$", "\\emph{x}", "é", "e.g.", " a", "a b "]),
        st.sampled_from(["*", "**", "`", "***", ""]),
        st.sampled_from(["", ".", ",", ";", ":", "!", ")", "tate", "-x", "é", "*", "`"]),
    ).map("".join),
    min_size=1,
    max_size=5,
).map("".join)


@settings(max_examples=10000, deadline=None)
@given(EMPHASIZED_WORDS)
def test_simple_markdown_of_emphasized_words_reads_as_markdown_it(source):
    assert markup.parse.__wrapped__(source) == parse_with_markdown_it(source)


CITATION_PIECES = st.lists(
    st.sampled_from(
        ["(", ")", "[", "]", " ", "a", "Smith", " et al", ", ", "19", "20", "2019", "1987a"]
        + ["3", "10", "0", "9", "-", "–", "x20", "201"]
    ),
    max_size=14,
).map("".join)


@settings(max_examples=5000, deadline=None)
@given(CITATION_PIECES)
def test_citations_prefiltered_by_four_needles(source):
    """Every CITATION_MARK holds 'et al', '19', '20' or '[' (CITATION_NEEDS)."""
    assert labels.drop_citations(source) == CITATION_MARK_WITH_SPACE.sub("", source)
    if labels.CITATION_MARK.search(source):
        assert markup.holds_any(source, labels.CITATION_NEEDS)


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


def test_too_many_words_splitting_only_what_it_needs_on_real_text():
    clauses = [text.first_part(source[: text.MAX_NAME_LENGTH * 4])[0] for source in REAL_TEXTS]
    assert sum(too_many_words_splitting_every_word(c) for c in clauses) > 500
    for clause in clauses + REAL_TEXTS:
        assert text.too_many_words(clause) == too_many_words_splitting_every_word(clause), clause


@settings(max_examples=5000, deadline=None)
@given(
    st.lists(
        st.sampled_from(["a", "B", "1", " ", "  ", "(x", "&amp;", "Dr.", "Prof.", "\\", "é", "\t"]),
        max_size=30,
    ).map("".join)
)
def test_too_many_words_splitting_only_what_it_needs(clause):
    assert text.too_many_words(clause) == too_many_words_splitting_every_word(clause)
