"""loader.rules.labels: a heading for a paper with no title, on real abstracts whose real title names
the method (tests/fixtures/real/markup/labels.jsonl, SOURCE.md there)."""

import json
import re
from pathlib import Path

import pytest
from hypothesis import given
from hypothesis import strategies as st

from loader.rules import labels, markup
from loader.rules.labels import LABEL_LENGTH, cut_at_word, derive_label
from loader.rules.markup import plain_text

from .real_texts import REAL_TEXTS, plain_texts

REAL = Path(__file__).resolve().parent / "fixtures" / "real" / "markup"
PAPERS = [json.loads(line) for line in (REAL / "labels.jsonl").read_text("utf-8").splitlines()]
EXAMPLES = {
    record["rule"]: record
    for record in map(json.loads, (REAL / "abstracts.jsonl").read_text("utf-8").splitlines())
}
BY_METHOD = {paper["method"]: paper for paper in PAPERS}


def label_of(abstract):
    return derive_label(plain_text(abstract))


def names_method(label, method):
    def fold(text):
        return re.sub(r"[^a-z0-9]", "", text.lower())

    return fold(label.split(":")[0]).startswith(fold(method))


def test_real_labels_name_the_method_of_the_real_title():
    # 44 papers of ICLR 2018, NeurIPS 2018 and ICML 2019 whose title starts 'Name: ...';
    # main's rule named 18 of them, this one 28 (many abstracts never say the name)
    named = [
        paper["method"]
        for paper in PAPERS
        if names_method(label_of(paper["abstract"]), paper["method"])
    ]
    assert len(PAPERS) >= 30
    assert len(named) >= 28, named


@pytest.mark.parametrize(
    "method, wrong",
    [
        ("GANITE", "GANs"),  # 'in the Generative Adversarial Nets (GANs) framework'
        ("MaskGAN", "GANs"),
        ("AmbientGAN", "GANs"),
        ("MGAN", "GANs"),
        ("LEAP", "SPL"),  # 'a Self-Paced Learning (SPL)-fused ... framework, which we call LEAP'
        ("FastGCN", "GCN"),  # 'The graph convolutional networks (GCN) recently proposed by'
    ],
)
def test_a_baseline_is_not_the_method(method, wrong):
    abstract = BY_METHOD[method]["abstract"]
    label = label_of(abstract)
    assert not label.startswith(wrong), label
    # MaskGAN's abstract never says its name
    assert names_method(label, method) == (method in abstract), label


def test_named_in_parentheses_after_its_expansion():
    assert label_of(BY_METHOD["GANITE"]["abstract"]) == (
        "GANITE: Generative Adversarial Nets for inference of Individualized Treatment Effects"
    )
    assert label_of(BY_METHOD["LEAP"]["abstract"]) == "LEAP: Learning Embeddings for Adaptive Pace"
    assert label_of(EXAMPLES["label_expansion"]["abstract"]) == (
        "RPT: Randomized Progressive Training algorithm"  # AISTATS 2024
    )


def test_quoted_name_with_its_short_form():
    # ICLR 2017: 'which we term ``Adaptive Radial-Angular Gradient Descent'' or {\it AdaRad}'
    label = label_of(EXAMPLES["it_group"]["abstract"])
    assert label == "AdaRad: Adaptive Radial-Angular Gradient Descent"


def test_dash_apposition():
    # AISTATS 2024: 'we propose a new Byzantine-robust method with compression – Byz-DASHA-PAGE –'
    assert label_of(EXAMPLES["dash_apposition"]["abstract"]) == "Byz-DASHA-PAGE"


def test_a_citation_is_never_the_expansion():
    # ICLR 2017 (Wav2Letter): main labelled it 'CTC: Graves et al., 2006'
    label = label_of(EXAMPLES["label_citation"]["abstract"])
    assert "et al" not in label and "2006" not in label
    assert label.startswith("Simple end-to-end model for speech recognition")
    # the shape
    label = derive_label("We build on EF21 (Richtárik et al, 2021), a method for compression.")
    assert "Richtárik" not in label and "2021" not in label


def test_plural_classes_and_compared_methods_are_not_the_method():
    # the shapes: 'LLMs: …', 'SGD: …' for an abstract introducing ASAP.SGD
    text = (
        "Large language models (LLMs) are widely used. We propose ASAP.SGD, an asynchronous "
        "variant that outperforms SGD and PGD on every benchmark."
    )
    assert (
        derive_label(text)
        == "ASAP.SGD: an asynchronous variant that outperforms SGD and PGD on every benchmark"
    )
    assert not derive_label(
        "Large language models (LLMs) can reason. We study LLMs in depth."
    ).startswith("LLMs")


def test_latex_preambles_never_reach_a_label():
    abstract = r"\newcommand{\ours}{NorMuon} \def\x{y} We propose \ours{}, an optimizer for LLMs."
    assert label_of(abstract) == "NorMuon: an optimizer for LLMs"


@pytest.mark.parametrize("paper", PAPERS + list(EXAMPLES.values()), ids=lambda p: p["title"][:30])
def test_real_labels_are_cut_at_a_word_and_hold_no_citation_or_latex(paper):
    text = plain_text(paper["abstract"])
    label = derive_label(text)
    assert 0 < len(label) <= LABEL_LENGTH + 1
    assert "\\" not in label and "et al" not in label
    body = label.split(": ", 1)[-1]
    if label.endswith("…"):
        body = body[:-1]
        following = text[text.find(body) + len(body)] if body in text else " "
        assert not (body[-1:].isalnum() and following.isalnum()), label


@pytest.mark.parametrize(
    "text, label",
    [
        (
            (
                "In this work, we bridge this gap by proposing NorMuon (Neuron-wise Normalized "
                "Muon), an optimizer that combines things."
            ),
            "NorMuon: Neuron-wise Normalized Muon",
        ),
        (
            (
                "We propose a new method, which is called Denoising Masked AutoEncoders (DMAE), "
                "for learning."
            ),
            "DMAE: Denoising Masked AutoEncoders",
        ),
        (
            "This paper introduces xRAG, an innovative context compression method. It works.",
            "xRAG: an innovative context compression method",
        ),
        ("Adam is widely adopted. It converges.", "Adam is widely adopted"),
        (
            # a first sentence that cites is passed over
            "Recently, Arjevani et al. established a bound. We study momentum.",
            "We study momentum",
        ),
    ],
)
def test_derive_label(text, label):
    assert derive_label(text) == label


def test_cut_at_word_never_cuts_inside_a_word():
    assert cut_at_word("word " * 60 + "end.") == ("word " * 18).strip() + "…"
    assert cut_at_word("a" * 100) == "a" * LABEL_LENGTH + "…"  # one word longer than a label
    assert cut_at_word("short, ") == "short"
    label = cut_at_word("x" * 85 + " abcdefghij more")
    assert label == "x" * 85 + "…"


# fast paths: each gives what the plain reading it replaces gives, on every line of real text
# (tests/real_texts.py) and on generated text made of the characters the fast path turns on ------

# the citation pattern before its leading `\s*` moved into drop_citations
CITATION_MARK_WITH_SPACE = re.compile(r"\s*(?:" + labels.CITATION_MARK.pattern + ")")
# the sentence end before its mark was matched instead of looked behind for
SENTENCE_END_LOOKING_BEHIND = re.compile(
    r"(?<=[.!?])(?<!\bet al\.)(?<!\be\.g\.)(?<!\bi\.e\.)(?<!\bvs\.)(?<!\bcf\.)"
    r"\s+(?=[A-Z(\"“])"
)
# the citation search before it was prefiltered
CITATION_BEFORE = re.compile(r"\bet al\b|\b(?:19|20)\d\d\b|\[\d+\]")


def check_citations(source):
    """drop_citations is the pattern with its leading space, and the prefilters in front of it
    (four needles, then parentheses) let every citation through."""
    assert labels.drop_citations(source) == CITATION_MARK_WITH_SPACE.sub("", source), source
    if labels.CITATION_MARK.search(source):
        assert markup.holds_any(source, labels.CITATION_NEEDS), source
        assert labels.may_cite(source), source


def test_citations_dropped_as_the_pattern_drops_them_on_real_text():
    assert [t for t in REAL_TEXTS if labels.CITATION_MARK.search(t)]
    cited = [s for s in REAL_TEXTS if labels.CITATION_MARK.search(s) and "[" not in s]
    assert len(cited) > 20
    assert sum(not labels.may_cite(s) and "(" in s for s in REAL_TEXTS) > 500
    for source in REAL_TEXTS:
        check_citations(source)


@given(
    st.text(alphabet=st.sampled_from(list("()[] \t\n\u00a0\u2003,-–12098ae tl.xA")), max_size=60)
)
def test_citations_after_any_space_are_dropped_as_the_pattern_drops_them(source):
    check_citations(source)


@given(
    st.lists(
        st.sampled_from(
            ["(", ")", "[", "]", " ", "a", "Smith", " et al", ", ", "19", "20", "2019", "1987a"]
            + ["3", "10", "0", "9", "-", "–", "x20", "201"]
        ),
        max_size=14,
    ).map("".join)
)
def test_citations_prefiltered_by_four_needles(source):
    """Every CITATION_MARK holds 'et al', '19', '20' or '[' (CITATION_NEEDS)."""
    check_citations(source)


@given(
    st.lists(
        st.sampled_from(
            ["(", ")", "((", "))", " ", "a", "Smith", " et al", ", ", "19", "20", "2019", "1987a"]
            + ["3", "0", "-", "x20", "201", ")(", "[", "]", "[1]", "é"]
        ),
        max_size=16,
    ).map("".join)
)
def test_citations_prefiltered_by_their_parentheses(source):
    check_citations(source)


def test_split_sentences_equals_the_pattern_split_on_real_text():
    collapsed = [" ".join(t.split()) for t in REAL_TEXTS]
    assert sum(len(SENTENCE_END_LOOKING_BEHIND.split(t)) > 1 for t in collapsed) > 100
    differ = [
        t
        for t in REAL_TEXTS + collapsed
        if list(labels.split_sentences(t)) != SENTENCE_END_LOOKING_BEHIND.split(t)
    ]
    assert differ == []


@given(st.text(alphabet=st.sampled_from(list('.!? \t\n\u00a0\u3000Aa("“etlgivsc')), max_size=60))
def test_split_sentences_equals_the_pattern_split(source):
    assert list(labels.split_sentences(source)) == SENTENCE_END_LOOKING_BEHIND.split(source)


def real_sentences():
    collapsed = (" ".join(labels.drop_citations(t).split()) for t in REAL_TEXTS)
    return sorted({s.strip() for t in collapsed for s in labels.split_sentences(t) if s.strip()})


def spans(pattern, text):
    return [m.span() for m in pattern.finditer(text)]


def may_hold_by_generators(sentence, *word_groups):
    """may_hold as it was: a generator over each group's words."""
    if not sentence.isascii():
        return True
    lower = sentence.lower()
    return all(any(word in lower for word in words) for words in word_groups)


def check_prefilters(sentence):
    """Where a prefilter says no, the pattern it guards finds nothing; the prefilters say what
    their plain readings say."""
    if not labels.may_hold(sentence, labels.INTRO_WORDS, labels.INTRO_VERBS):
        assert labels.INTRO.search(sentence) is None
    if not labels.may_hold(sentence, labels.NAMING_WORDS):
        assert labels.NAMING.search(sentence) is None
    assert labels.names_in(sentence) == labels.NAME.findall(sentence)
    assert spans(labels.CITATION, sentence) == spans(CITATION_BEFORE, sentence)
    lower = labels.ascii_lower(sentence)
    for groups in (labels.INTRO_GROUPS, labels.NAMING_GROUPS):
        assert labels.may_hold(sentence, *groups) == may_hold_by_generators(sentence, *groups)
        assert labels.lowered_may_hold(lower, groups) == may_hold_by_generators(sentence, *groups)


def test_label_prefilters_on_real_sentences():
    sentences = real_sentences()
    assert len(sentences) > 5000
    intro = labels.INTRO_WORDS, labels.INTRO_VERBS
    passed_over = [s for s in sentences if not labels.may_hold(s, *intro)]
    assert len(passed_over) > 1000  # the prefilter does pass sentences over
    assert [s for s in sentences if labels.INTRO.search(s)]
    assert [s for s in sentences if labels.NAMING.search(s)]
    for sentence in sentences + REAL_TEXTS:
        check_prefilters(sentence)


WORDS = [
    "we", "We", "WE", "this", "This", "our", "Our", " propose", "proposed", " introduce",
    " called", " named", "dubbed", " term", " as", " the proposed", "et al", "1999", "2021",
    " [12]", "x", "X", "ı", "İ", "K", "ſ", " ", ".", "-", "NorMuon", "GANs", "3C", "a1B",
]  # fmt: skip


@given(st.lists(st.sampled_from(WORDS + ["ıntroduce", "WE PROPOSE", "Our "]), max_size=20))
def test_label_prefilters_on_generated_sentences(words):
    check_prefilters("".join(words))


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


def derive_label_cutting_every_sentence(source):
    """derive_label as it was before it cut sentences as named_method read them."""
    if "://" in source or "github.com" in source:
        source = labels.URL.sub("", source)
    source = markup.collapse_spaces(labels.drop_citations(source))
    sentences = [s.strip() for s in labels.split_sentences(source) if s.strip()]
    if not sentences:
        return ""
    first = next((s for s in sentences if not labels.CITATION.search(s)), sentences[0])
    label = labels.named_method(sentences) or labels.introduced_thing(sentences) or first
    return labels.cut_at_word(label)


def test_labels_from_sentences_read_one_at_a_time_on_real_text():
    texts = plain_texts()
    assert sum(labels.named_method(labels.split_sentences(t)) is not None for t in texts) > 100
    differ = [t for t in texts if labels.derive_label(t) != derive_label_cutting_every_sentence(t)]
    assert differ == []


@given(st.lists(st.sampled_from(WORDS), max_size=30).map("".join))
def test_labels_from_sentences_read_one_at_a_time(source):
    assert labels.derive_label(source) == derive_label_cutting_every_sentence(source)


def check_quoted_name(sentence):
    for start in range(len(sentence) + 1):
        if labels.QUOTED_NAME.match(sentence, start):
            assert markup.holds_any(sentence, labels.QUOTES), sentence


def test_quoted_names_hold_a_quote_mark_on_real_text():
    quoted = [s for s in REAL_TEXTS if labels.QUOTED_NAME.search(s)]
    assert len(quoted) > 20
    for source in quoted + REAL_TEXTS[:2000]:
        check_quoted_name(source[:300])


@given(st.text(alphabet=st.sampled_from(list("aA “”\"'‘’«»")), max_size=20))
def test_quoted_names_hold_a_quote_mark(sentence):
    check_quoted_name(sentence)
