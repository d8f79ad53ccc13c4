"""The second round of build fast paths give exactly what the readings they replace give.

Each is checked against the plain pattern it replaces over every line of the real fixtures and
seeds (test_build_speed.REAL_TEXTS) and over generated text with the characters it turns on."""

import re
import unicodedata

from hypothesis import given, settings
from hypothesis import strategies as st

from loader.read import lines as text
from loader.rules import labels, markup, merge

from .test_build_speed import REAL_TEXTS

# the citation pattern before its leading `\s*` moved into drop_citations
CITATION_MARK_WITH_SPACE = re.compile(r"\s*(?:" + labels.CITATION_MARK.pattern + ")")
# the sentence end before its mark was matched instead of looked behind for
SENTENCE_END_LOOKING_BEHIND = re.compile(
    r"(?<=[.!?])(?<!\bet al\.)(?<!\be\.g\.)(?<!\bi\.e\.)(?<!\bvs\.)(?<!\bcf\.)"
    r"\s+(?=[A-Z(\"“])"
)


def test_drop_citations_equals_the_pattern_with_its_leading_space_on_real_text():
    assert [t for t in REAL_TEXTS if labels.CITATION_MARK.search(t)]
    differ = [
        t for t in REAL_TEXTS if labels.drop_citations(t) != CITATION_MARK_WITH_SPACE.sub("", t)
    ]
    assert differ == []


def test_split_sentences_equals_the_pattern_split_on_real_text():
    collapsed = [" ".join(t.split()) for t in REAL_TEXTS]
    assert sum(len(SENTENCE_END_LOOKING_BEHIND.split(t)) > 1 for t in collapsed) > 100
    differ = [
        t
        for t in REAL_TEXTS + collapsed
        if list(labels.split_sentences(t)) != SENTENCE_END_LOOKING_BEHIND.split(t)
    ]
    assert differ == []


CITATIONISH = st.text(
    alphabet=st.sampled_from(list("()[] \t\n\u00a0\u2003,-–12098ae tl.xA")), max_size=60
)
SENTENCEISH = st.text(
    alphabet=st.sampled_from(list('.!? \t\n\u00a0\u3000Aa("“etlgivsc')), max_size=60
)


@settings(max_examples=3000, deadline=None)
@given(CITATIONISH)
def test_drop_citations_equals_the_pattern_with_its_leading_space(source):
    assert labels.drop_citations(source) == CITATION_MARK_WITH_SPACE.sub("", source)


@settings(max_examples=3000, deadline=None)
@given(SENTENCEISH)
def test_split_sentences_equals_the_pattern_split(source):
    assert list(labels.split_sentences(source)) == SENTENCE_END_LOOKING_BEHIND.split(source)


CITATION_BEFORE = re.compile(r"\bet al\b|\b(?:19|20)\d\d\b|\[\d+\]")


def real_sentences():
    collapsed = (" ".join(labels.drop_citations(t).split()) for t in REAL_TEXTS)
    return sorted({s.strip() for t in collapsed for s in labels.split_sentences(t) if s.strip()})


SENTENCES = real_sentences()


def spans(pattern, text):
    return [m.span() for m in pattern.finditer(text)]


def assert_prefilters_hold(sentence):
    """Where a prefilter says no, the pattern it guards finds nothing."""
    if not labels.may_hold(sentence, labels.INTRO_WORDS, labels.INTRO_VERBS):
        assert labels.INTRO.search(sentence) is None
    if not labels.may_hold(sentence, labels.NAMING_WORDS):
        assert labels.NAMING.search(sentence) is None
    assert labels.names_in(sentence) == labels.NAME.findall(sentence)
    assert spans(labels.CITATION, sentence) == spans(CITATION_BEFORE, sentence)


def test_label_prefilters_on_real_sentences():
    assert len(SENTENCES) > 5000
    intro = labels.INTRO_WORDS, labels.INTRO_VERBS
    passed_over = [s for s in SENTENCES if not labels.may_hold(s, *intro)]
    assert len(passed_over) > 1000  # the prefilter does pass sentences over
    assert [s for s in SENTENCES if labels.INTRO.search(s)]
    assert [s for s in SENTENCES if labels.NAMING.search(s)]
    for sentence in SENTENCES:
        assert_prefilters_hold(sentence)


WORDS = [
    "we", "We", "WE", "this", "This", "our", "Our", " propose", "proposed", " introduce",
    " called", " named", "dubbed", " term", " as", " the proposed", "et al", "1999", "2021",
    " [12]", "x", "X", "ı", "İ", "K", "ſ", " ", ".", "-", "NorMuon", "GANs", "3C", "a1B",
]  # fmt: skip
SENTENCE_PIECES = st.lists(st.sampled_from(WORDS), max_size=14).map("".join)


@settings(max_examples=3000, deadline=None)
@given(SENTENCE_PIECES)
def test_label_prefilters_on_generated_sentences(sentence):
    assert_prefilters_hold(sentence)


def test_too_many_words_only_for_what_read_name_refuses_on_real_text():
    heads = {
        part
        for source in REAL_TEXTS
        for part in text.NAME_SEPARATOR.split(source[: text.MAX_NAME_LENGTH * 4])[:3]
    }
    refused = [head for head in heads if text.too_many_words(head)]
    assert len(refused) > 1000
    assert [head for head in refused if text.read_name(head) is not None] == []
    lists = [s for s in REAL_TEXTS if len(s) < 2000]
    assert [s for s in lists if text.split_authors(s) != split_authors_reading_every_head(s)] == []


def split_authors_reading_every_head(source):
    original = text.too_many_words
    try:
        text.too_many_words = lambda _: False
        return text.split_authors(source)
    finally:
        text.too_many_words = original


NAME_PIECES_USED = [
    "Dr.", "Prof.", "Mr.", " ", "\u00a0", "\u2003", "\u200b", "\x06", "&amp;", "&#32;", "&nbsp;",
    "&amp", "*", "†", "(", ")", "“", "\u0301", "a", "B", "é", "ı", "1", "-", "'", ".", "\\",
    "\\'e", "et al.",
]  # fmt: skip
NAME_PIECES = st.lists(
    st.sampled_from(NAME_PIECES_USED),
    max_size=4,
).map("".join)
# words of those pieces, enough of them that some texts have too many for a name
NAME_WORDS_TEXT = st.lists(
    st.one_of(st.sampled_from(["Ann", "de", "Lee", "x2"]), NAME_PIECES), min_size=6, max_size=14
).map(" ".join)


@settings(max_examples=5000, deadline=None)
@given(NAME_WORDS_TEXT)
def test_too_many_words_only_for_what_read_name_refuses(source):
    if text.too_many_words(source):
        assert text.read_name(source) is None


# the pattern latex_words replaced: a whole word with a LaTeX mark, tried at every word
LATEX_WORD = re.compile(r"(?<!\S)\S*?(?:[\\{}~`]|--|'')\S*")


def test_latex_words_equal_the_whole_word_pattern_on_real_text():
    with_words = [t for t in REAL_TEXTS if LATEX_WORD.search(t)]
    assert len(with_words) > 100
    differ = [
        t
        for t in REAL_TEXTS
        if list(markup.latex_words(t)) != [w.span() for w in LATEX_WORD.finditer(t)]
    ]
    assert differ == []


LATEXY_WORDS = st.text(alphabet=st.sampled_from(list("ab\\{}~-'` \t\n\u00a0\u3000$x")), max_size=60)


@settings(max_examples=3000, deadline=None)
@given(LATEXY_WORDS)
def test_latex_words_equal_the_whole_word_pattern(source):
    assert list(markup.latex_words(source)) == [w.span() for w in LATEX_WORD.finditer(source)]


def read_escaped_word(part):
    return markup.split_text(markup.LATEX_ESCAPE.sub(r"\1", part), [])


def test_escaped_words_read_as_pylatexenc_reads_them_on_real_text():
    regions = {
        part
        for source in REAL_TEXTS
        for is_latex, part in markup.latex_regions(source)
        if is_latex and markup.ESCAPED_WORD.fullmatch(part)
    }
    assert len(regions) > 20
    assert [p for p in regions if read_escaped_word(p) != markup.read_latex_region(p, [])] == []


ESCAPED_WORDS = st.lists(
    st.sampled_from([*"aZ09.,;:()", "\\%", "\\&", "\\$", "\\#", "\\_"]), min_size=1, max_size=12
).map("".join)


@settings(max_examples=3000, deadline=None)
@given(ESCAPED_WORDS)
def test_escaped_words_read_as_pylatexenc_reads_them(part):
    if markup.ESCAPED_WORD.fullmatch(part):
        assert read_escaped_word(part) == markup.read_latex_region(part, [])


def test_every_character_split_splits_at_but_the_space_is_unprintable():
    """collapse_spaces returns printable text without double, leading or trailing spaces
    as it is."""
    characters = map(chr, range(0x110000))
    assert [c for c in characters if c.isspace() and c != " " and c.isprintable()] == []


def test_collapse_spaces_equals_split_and_join_on_real_text():
    assert [t for t in REAL_TEXTS if markup.collapse_spaces(t) != " ".join(t.split())] == []


@settings(max_examples=3000, deadline=None)
@given(
    st.text(
        alphabet=st.sampled_from(list("ab \t\n\r\u00a0\u2003\u200b\u3000\x1c\x85")), max_size=30
    )
)
def test_collapse_spaces_equals_split_and_join(source):
    assert markup.collapse_spaces(source) == " ".join(source.split())


def letters_and_digits_by_pattern(source):
    """The reading letters_and_digits replaced: casefold, NFKD, one pattern."""
    normal = unicodedata.normalize("NFKD", source.casefold())
    return merge.NOT_LETTER_OR_DIGIT.sub("", normal)


def test_letters_and_digits_equal_the_pattern_on_real_text():
    assert [t for t in REAL_TEXTS if not t.isascii()]
    differ = [
        t for t in REAL_TEXTS if merge.letters_and_digits(t) != letters_and_digits_by_pattern(t)
    ]
    assert differ == []


def test_ascii_casefold_is_lower():
    ascii_text = "".join(map(chr, range(128)))
    assert ascii_text.casefold() == ascii_text.lower()


@settings(max_examples=3000, deadline=None)
@given(st.text(alphabet=st.sampled_from(list("aZ_9 -–’éÉ\u0301ﬁKßΣς\ud800\x00.")), max_size=30))
def test_letters_and_digits_equal_the_pattern(source):
    assert merge.letters_and_digits(source) == letters_and_digits_by_pattern(source)


def test_a_and_l_match_only_their_capitals_ignoring_case():
    """is_truncated looks for 'al' with str.lower where TRUNCATION_MARK has IGNORECASE."""
    for letter in "al":
        pattern = re.compile(letter, re.IGNORECASE)
        matching = {c for c in map(chr, range(0x110000)) if pattern.fullmatch(c)}
        assert matching == {letter, letter.upper()}


def test_is_truncated_equals_the_search_on_real_text():
    texts = REAL_TEXTS + [t.rstrip() for t in REAL_TEXTS]
    assert sum(bool(text.TRUNCATION_MARK.search(t)) for t in texts) > 20
    assert [t for t in texts if text.is_truncated(t) != bool(text.TRUNCATION_MARK.search(t))] == []


@settings(max_examples=3000, deadline=None)
@given(
    st.lists(
        st.sampled_from(["A", "b", " ", "\t", "et", "ET", "al", "AL", "Al", ".", "等", ","])
    ).map("".join)
)
def test_is_truncated_equals_the_search(source):
    assert text.is_truncated(source) == bool(text.TRUNCATION_MARK.search(source))


def test_undecodable_characters_are_not_ascii():
    """read_lines and line_problem search for them only in lines that are not ASCII."""
    assert not any(chr(c).isascii() for c in range(0xDC80, 0xDD00))
