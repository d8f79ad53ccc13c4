"""The second round of build fast paths give exactly what the readings they replace give.

Each is checked against the plain pattern it replaces over every line of the real fixtures and
seeds (test_build_speed.REAL_TEXTS) and over generated text with the characters it turns on."""

import re

from hypothesis import given, settings
from hypothesis import strategies as st

from loader import labels

from .test_build_speed import REAL_TEXTS

# the citation pattern before its leading `\s*` moved into drop_citations
CITATION_MARK_WITH_SPACE = re.compile(r"\s*(?:" + labels.CITATION_MARK.pattern + ")")


def test_drop_citations_equals_the_pattern_with_its_leading_space_on_real_text():
    assert [t for t in REAL_TEXTS if labels.CITATION_MARK.search(t)]
    differ = [
        t for t in REAL_TEXTS if labels.drop_citations(t) != CITATION_MARK_WITH_SPACE.sub("", t)
    ]
    assert differ == []


def test_split_sentences_equals_the_pattern_split_on_real_text():
    collapsed = [" ".join(t.split()) for t in REAL_TEXTS]
    assert sum(len(labels.SENTENCE_END.split(t)) > 1 for t in collapsed) > 100
    differ = [
        t
        for t in REAL_TEXTS + collapsed
        if labels.split_sentences(t) != labels.SENTENCE_END.split(t)
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
    assert labels.split_sentences(source) == labels.SENTENCE_END.split(source)
