"""The third round of build fast paths give exactly what the readings they replace give.

Each is checked against the pattern or pass it replaces over every line of the real fixtures
and seeds (test_build_speed.REAL_TEXTS) and over generated text with the characters it turns on."""

import re
import unicodedata

from hypothesis import given, settings
from hypothesis import strategies as st

from loader.read import lines as text
from loader.read import listing as parse_listing
from loader.rules import labels, markup, merge
from loader.rules.normalize import TRACK_SEPARATOR

from .test_build_speed import REAL_TEXTS, protected_texts
from .test_build_speed2 import WORDS

# the character-class searches holds_any replaced (and LATEX_MARK as it was before its branches
# were each made a literal)
MARKDOWN_MARK = re.compile(r"[*_`\[\]<&\n\r\0]")
LATEX_MARK = re.compile(r"[\\{}~]|--|''|`")


def check_marks(source):
    assert markup.has_markdown_mark(source) == bool(MARKDOWN_MARK.search(source)), source
    assert markup.has_latex_mark(source) == bool(LATEX_MARK.search(source)), source


def check_latex_mark_spans(source):
    spans = [m.span() for m in markup.LATEX_MARK.finditer(source)]
    assert spans == [m.span() for m in LATEX_MARK.finditer(source)], source


def test_marks_found_by_substring_tests_equal_the_patterns_on_real_text():
    assert sum(markup.has_markdown_mark(t) for t in REAL_TEXTS) > 100
    for source in REAL_TEXTS:
        check_marks(source)
        check_latex_mark_spans(source)
    for source, _ in protected_texts():  # with placeholders: not ASCII
        check_marks(source)


@settings(max_examples=3000, deadline=None)
@given(st.text(alphabet=st.sampled_from(list("ab *_`[]<>&\n\r\0\\{}~-'$\ue100é")), max_size=40))
def test_marks_found_by_substring_tests_equal_the_patterns(source):
    check_marks(source)
    check_latex_mark_spans(source)


def restore_every_time(text, pieces, as_source=False):
    """restore() without its shortcut: a pass over the text whatever the pieces."""

    def back(match):
        piece = pieces[ord(match.group(0)) - markup.PLACEHOLDER_BASE]
        if isinstance(piece, markup.Math):
            if not as_source:
                return match.group(0)
            return f"$${piece.tex}$$" if piece.display else f"${piece.tex}$"
        return piece

    return markup.PLACEHOLDER.sub(back, text)


def test_restore_and_split_text_shortcuts_on_real_text():
    """Without pieces a text has no placeholder (split_text does not split it), and restore
    gives what its full pass gives, also with only math pieces (kept as placeholders)."""
    protected = list(protected_texts())
    assert sum(1 for _, pieces in protected if not pieces) > 100
    only_math = [(t, p) for t, p in protected if p and all(isinstance(x, markup.Math) for x in p)]
    assert len(only_math) > 20
    for protected_text, pieces in protected:
        for as_source in (False, True):
            assert markup.restore(protected_text, pieces, as_source) == restore_every_time(
                protected_text, pieces, as_source
            )
        assert pieces or not markup.PLACEHOLDER.search(protected_text)


def test_word_characters_are_alphanumerics_or_underscore():
    """letters_and_digits drops what str.isalnum() refuses where it dropped `[\\W_]`."""
    word = re.compile(r"\w")
    differ = [
        c for c in map(chr, range(0x110000)) if bool(word.fullmatch(c)) != (c.isalnum() or c == "_")
    ]
    assert differ == []


def letters_and_digits_by_pattern(source):
    return merge.NOT_LETTER_OR_DIGIT.sub("", unicodedata.normalize("NFKD", source.casefold()))


@settings(max_examples=3000, deadline=None)
@given(
    st.text(
        alphabet=st.sampled_from(list("aZ_9 .,–’“ε∞ℓαé\u0301½℡Ⅸ％İ\ud800\U0001d400")), max_size=30
    )
)
def test_letters_and_digits_drop_what_the_pattern_drops(source):
    assert merge.letters_and_digits(source) == letters_and_digits_by_pattern(source)


def may_hold_by_generators(sentence, *word_groups):
    if not sentence.isascii():
        return True
    lower = sentence.lower()
    return all(any(word in lower for word in words) for words in word_groups)


def test_may_hold_equals_the_generator_reading_on_real_text():
    groups = [(labels.INTRO_WORDS, labels.INTRO_VERBS), (labels.NAMING_WORDS,)]
    for source in REAL_TEXTS:
        for group in groups:
            assert labels.may_hold(source, *group) == may_hold_by_generators(source, *group)


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


PLAIN_NAME_PIECES = st.lists(
    st.sampled_from(["A", "Z", "a", "z", "Ab", "Xu", "Chen", "B.", " ", "  ", ".", "-", "'", "é"]),
    max_size=12,
).map("".join)


@settings(max_examples=5000, deadline=None)
@given(PLAIN_NAME_PIECES)
def test_plain_names_are_names(name):
    assert text.looks_like_name(name) == looks_like_name_word_by_word(name)


def introduced_thing_searching_every_sentence(sentences):
    original = labels.may_hold
    try:
        labels.may_hold = lambda *_: True
        return labels.introduced_thing(sentences)
    finally:
        labels.may_hold = original


def test_introduced_thing_with_the_prefilter_on_real_text():
    texts = [" ".join(labels.drop_citations(t).split()) for t in REAL_TEXTS]
    sentences = [[s.strip() for s in labels.split_sentences(t) if s.strip()] for t in texts]
    found = [s for s in sentences if labels.introduced_thing(s)]
    assert len(found) > 100
    differ = [
        s
        for s in sentences
        if labels.introduced_thing(s) != introduced_thing_searching_every_sentence(s)
    ]
    assert differ == []


def test_cached_track_lines_read_as_fresh_ones_on_real_text():
    parse_listing.is_track.cache_clear()
    lines = [t.strip() for t in REAL_TEXTS if TRACK_SEPARATOR in t and len(t) <= 200]
    assert sum(parse_listing.is_track(line) for line in lines) > 20
    for line in lines + lines:  # the second time from the cache
        assert parse_listing.is_track(line) == parse_listing.is_track.__wrapped__(line), line
    assert parse_listing.is_track.cache_info().hits >= len(lines)


def derive_label_cutting_every_sentence(source):
    """derive_label as it was before it cut sentences as named_method read them."""
    if "://" in source or "github.com" in source:
        source = labels.URL.sub("", source)
    source = markup.collapse_spaces(labels.drop_citations(source))
    sentences = [s.strip() for s in labels.split_sentences(source) if s.strip()]
    if not sentences:
        return ""
    first = labels.first_sentence(sentences)
    label = labels.named_method(sentences) or labels.introduced_thing(sentences) or first
    return labels.cut_at_word(label)


def test_labels_from_sentences_read_one_at_a_time_on_real_text():
    texts = [markup.plain_text(t) for t in REAL_TEXTS]
    assert sum(labels.named_method(labels.split_sentences(t)) is not None for t in texts) > 100
    differ = [t for t in texts if labels.derive_label(t) != derive_label_cutting_every_sentence(t)]
    assert differ == []


@settings(max_examples=3000, deadline=None)
@given(st.lists(st.sampled_from(WORDS), max_size=30).map("".join))
def test_labels_from_sentences_read_one_at_a_time(source):
    assert labels.derive_label(source) == derive_label_cutting_every_sentence(source)


def check_separator(source):
    pattern = text.separator_in(source)
    assert pattern.split(source) == text.NAME_SEPARATOR.split(source), source
    assert pattern.split(source, maxsplit=1) == text.NAME_SEPARATOR.split(source, maxsplit=1)


def test_names_split_as_by_the_separator_pattern_on_real_text():
    assert sum(text.separator_in(t) is text.COMMA for t in REAL_TEXTS) > 1000
    assert sum(text.separator_in(t) is text.NAME_SEPARATOR for t in REAL_TEXTS) > 10
    for source in REAL_TEXTS:
        check_separator(source)


@settings(max_examples=3000, deadline=None)
@given(st.text(alphabet=st.sampled_from(list("ab ,，、&\t\n\u3000\u00a0")), max_size=30))
def test_names_split_as_by_the_separator_pattern(source):
    check_separator(source)


def test_collapse_spaces_asked_again_about_a_text_on_real_text():
    """The text last found collapsed is told by identity: asked in any order, every answer is
    split and join's."""
    texts = REAL_TEXTS + [t + "  x" for t in REAL_TEXTS[:200]]
    for source in texts + texts[::-1]:
        for _ in range(2):
            assert markup.collapse_spaces(source) == " ".join(source.split())
    collapsed = " ".join(REAL_TEXTS[-1].split())
    assert markup.collapse_spaces(collapsed) is collapsed
    assert markup.LAST_COLLAPSED[0] is collapsed
