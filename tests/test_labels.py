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

from .real_text_shares import REAL_TEXT_SHARES
from .real_texts import REAL_TEXTS, plain_share
from .text_properties import TEXT_PROPERTY

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
    assert label_of(EXAMPLES["dash_apposition"]["abstract"]) == (
        "Byz-DASHA-PAGE: a new Byzantine-robust method with compression"
    )


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


# --- labels of untitled papers as a reader sees them (issue 22, item 4) ---------------------
# Every real abstract of the fixtures and seeds, read by the real readers: no label is a
# sentence fragment, the paper's own name is picked, shared labels are told apart by a build,
# in any input order.

import functools
import itertools
import sqlite3

from click.testing import CliRunner

from loader.cli import cli
from loader.read.sources import discover, read_source
from loader.records import Entry
from loader.rules.labels import distinguished_labels, readable_text

FIXTURES = Path(__file__).resolve().parent / "fixtures"
SEEDS = Path(__file__).resolve().parent.parent / "seeds"
# words a label never ends on (before its '…'): articles, prepositions, connectives,
# auxiliaries; written here, not taken from the module under test
ENDINGS = {
    "a", "an", "the", "of", "to", "for", "with", "via", "in", "on", "at", "by", "from", "into",
    "onto", "upon", "over", "under", "between", "among", "through", "across", "against",
    "about", "without", "within", "towards", "toward", "than", "as", "per", "like", "using",
    "and", "or", "but", "nor", "while", "whilst", "whereas", "although", "though", "because",
    "if", "when", "where", "which", "that", "who", "whom", "whose", "how", "what", "whether",
    "is", "are", "was", "were", "be", "been", "can", "could", "will", "would", "should", "may",
    "might", "must", "has", "have", "had", "its", "their", "our", "this", "these", "each",
    "every",
}  # fmt: skip
OPEN_MARKS = "([{“‘«\"'"
# what may stand right before the place in the abstract a label (or its part after 'Name: ')
# starts: a sentence or clause start, an article, 'that' after 'we show', a naming word, or a
# verb saying what the paper does ('we propose', 'we study', 'is presented')
CLAUSE_START_BEFORE = re.compile(
    r"(?:^|[.!?;:,(\[–—“\"'’-]|\b(?:a|an|the|that|how|whether|why|what|when|where|called|named|"
    r"dubbed|termed|coined|as|call|term|name|dub|refer to|our|here|herein|also|further|briefly|"
    r"time|first|novel|new)|\b(?:propos|introduc|devis|formulat|describ|creat|releas|contribut|"
    r"investigat|examin|explor|tackl|characteri[sz]|deriv|provid|prov|demonstrat|evaluat|"
    r"generali[sz]|analy[sz])(?:e|es|ed|ing)|\b(?:present|develop|design|offer|build|construct|"
    r"consider|address|revisit|discuss|review|report|establish|obtain|extend|show|focus)"
    r"(?:s|es|ed|ing|n)?(?:\s+on)?|\bstud(?:y|ies|ied|ying)|\bgiv(?:e|es|en|ing)|\bgave|\bbuilt)"
    r"\s*$",
    re.IGNORECASE,
)


@functools.cache
def real_papers():
    """(title or None, abstract) of every real entry in the fixtures and seeds, read by the
    real readers, and of the markup and label samples."""
    folders = [FIXTURES / "real", FIXTURES / "dumps", FIXTURES / "search", SEEDS]
    papers = {}
    for path in discover(folders):
        if path.suffix in (".py", ".md") or path.name == "sources.yml":
            continue
        for item in read_source(path)[1]:
            if isinstance(item, Entry) and item.abstract:  # without one, its title is its label
                papers.setdefault(item.abstract, item.title)
    for record in PAPERS + list(EXAMPLES.values()):
        papers.setdefault(record["abstract"], record["title"])
    return [(title, abstract) for abstract, title in papers.items()]


def real_labels():
    return [(title, label_of(abstract), abstract) for title, abstract in real_papers()]


def by_title(title):
    return next(abstract for t, abstract in real_papers() if t == title)


def ends_cleanly(label):
    body = label.removesuffix("…").rstrip()
    last = body.rsplit(" ", 1)[-1]
    return bool(body) and not (last.islower() and last in ENDINGS) and body[-1] not in OPEN_MARKS


def brackets_closed(label):
    depth = 0
    for c in label:
        depth += {"(": 1, ")": -1}.get(c, 0)
        if depth < 0:
            return False
    return depth == 0 and label.count('"') % 2 == 0


def starts_at_a_clause(part, text):
    """Does the part of a label start in the abstract where a clause or phrase starts?"""
    body = part.removesuffix("…")[:40]
    if not body:
        return False
    lowered = text.lower()
    start = lowered.find(body.lower())
    while start >= 0:
        if CLAUSE_START_BEFORE.search(text[:start]):
            return True
        start = lowered.find(body.lower(), start + 1)
    return False


def label_parts(label):
    """The parts of a label that come from the abstract's words as a phrase: the whole label,
    or the description after a name; an expansion or another name after the colon is a name,
    not a phrase."""
    _, _, detail = label.partition(": ")
    if not detail:
        # a bare name ('DS2', of 'our method DS2 outperforms') is a name, not a phrase
        return [] if " " not in label and not label[:1].islower() else [label]
    # a description led by an article is a noun phrase wherever it stands ('leads to a
    # batched training scheme as we propose ... FastGCN')
    if not detail[:1].islower() or detail.split()[0] in ("a", "an", "the"):
        return []
    return [detail]


def test_no_real_label_ends_on_a_connective_or_an_open_bracket():
    labels = real_labels()
    assert len(labels) > 900
    bad = [label for _, label, _ in labels if not ends_cleanly(label)]
    assert bad == []
    assert [label for _, label, _ in labels if not brackets_closed(label)] == []


def test_no_real_label_starts_mid_clause():
    starts = []
    for _, label, abstract in real_labels():
        # an aside the labels leave out: 'the first, to the best of our knowledge, X'
        text = readable_text(plain_text(abstract)).replace(", to the best of our knowledge,", "")
        starts += [part for part in label_parts(label) if not starts_at_a_clause(part, text)]
    assert starts == []


def test_the_checks_find_the_fragments_old_labels_had():
    # real labels of the rule before this one (ICLR 2018, NeurIPS 2007 and arXiv abstracts)
    text = (
        "In this work, we evaluate the lifetimes of the doubly charmed baryons. We carefully "
        "calculate the non-spectator contributions at the quark level where the Cabibbo-"
        "suppressed diagrams are also included."
    )
    assert not starts_at_a_clause("At the quark level where the Cabibbo-suppressed", text)
    assert starts_at_a_clause("Lifetimes of the doubly charmed baryons", text)
    assert not ends_cleanly("Simplified proofs of two of these results and we answer the…")
    assert not ends_cleanly("Discussion of")
    assert not brackets_closed("Three representations (namely the algebra…")


@pytest.mark.parametrize(
    "title, label",
    [
        # 'a new Q&A architecture called QANet'
        (
            (
                "QANet: Combining Local Convolution with Global Self-Attention for Reading "
                "Comprehension"
            ),
            "QANet: a new Q&A architecture",
        ),
        # 'a new optimization algorithm called Entropy-SGD for training ...'
        (
            "Entropy-SGD: Biasing Gradient Descent Into Wide Valleys",
            "Entropy-SGD: a new optimization algorithm",
        ),
        # 'a human-assisted approach called ”Masking”'
        ("Masking: A New Perspective of Noisy Supervision", "Masking: a human-assisted approach"),
        # 'the Hybrid action space Multi-Agent Soft Actor Critic (Hybrid-MASAC) algorithm'
        (
            (
                "Multi-agent Reinforcement Learning with Hybrid Action Space for Free Gait "
                "Motion Planning of Hexapod Robots"
            ),
            "Hybrid-MASAC: Hybrid action space Multi-Agent Soft Actor Critic",
        ),
        # 'two algorithms from a Bayesian approach, named Greedy Search and Alternating Search'
        (
            "A Bayesian approach for bandit online optimization with switching cost",
            "Greedy Search and Alternating Search: two algorithms from a Bayesian approach",
        ),
        # 'which we call the Littlewood-Richardson polynomials' (arXiv)
        ("Littlewood-Richardson polynomials", "Littlewood-Richardson polynomials"),
        # 'We propose TapNets, neural networks augmented with task-adaptive projection ...'
        (
            "TapNet: Neural Network Augmented with Task-Adaptive Projection for Few-Shot Learning",
            "TapNets: neural networks augmented with task-adaptive projection for improved few-shot…",
        ),
        # 'we propose the marginal structured SVM (MSSVM)': not 'SVM'
        ("Marginal Structured SVM with Hidden Variables", "MSSVM: marginal structured SVM"),
    ],
)
def test_the_papers_own_name_on_real_abstracts(title, label):
    assert label_of(by_title(title)) == label


@pytest.mark.parametrize(
    "title, not_the_method",
    [
        # 'a nonparametric Bayesian version of the Wilcoxon signed-rank test using a Dirichlet
        # process (DP) based prior'
        ("A Bayesian Wilcoxon signed-rank test based on the Dirichlet process", "DP"),
        # 'a mathematical construction for the restricted Boltzmann machine (RBM)'
        ("An Infinite Restricted Boltzmann Machine", "RBM"),
        # 'a novel sequence-learning approach in which we use a pre-trained Recurrent Neural
        # Network (RNN)'
        ("Tuning Recurrent Neural Networks with Reinforcement Learning", "RNN"),
        # 'We present results on the MNIST, CIFAR-10, and ImageNet datasets'
        (
            "Assessing the Scalability of Biologically-Motivated Deep Learning Algorithms and Architectures",
            "CIFAR-10",
        ),
        # 'evaluations ... for six established RL algorithms (PPO, DDPG, A2C, SAC, TD3, DQN)'
        ("HPO-RL-Bench: A Zero-Cost Benchmark for HPO in Reinforcement Learning", "PPO"),
        # 'a popular optimization-based algorithm, Sparse Subspace Clustering (SSC)'
        (
            (
                "A Deterministic Analysis of Noisy Sparse Subspace Clustering for "
                "Dimensionality-reduced Data"
            ),
            "SSC",
        ),
        # "(also known as 'structural' parameters)"
        (
            "A Data-Driven State Aggregation Approach for Dynamic Discrete Choice Models",
            "structural",
        ),
        # 'neural networks named Alice and Bob'
        ("Learning to Protect Communications with Adversarial Neural Cryptography", "Alice"),
    ],
)
def test_a_name_the_paper_only_uses_is_not_its_label(title, not_the_method):
    assert not label_of(by_title(title)).startswith(not_the_method)


def test_a_bare_name_says_what_it_is_from_an_earlier_sentence():
    # seeds: 'we propose a novel text-to-text approach to proactive interaction, ...' and two
    # sentences on 'We train our model MMDuet2 on a dataset ...'
    abstract = next(a for _, a in real_papers() if "our model MMDuet2" in a)
    assert label_of(abstract).startswith(
        "MMDuet2: novel text-to-text approach to proactive interaction"
    )


def untitled(records):
    """JSON Lines of these real records without their titles: untitled papers, as listing
    pages give them."""
    lines = []
    for record in records:
        record = {key: value for key, value in record.items() if key != "title"}
        lines.append(json.dumps(record))
    return "\n".join(lines) + "\n"


def versions_records():
    path = FIXTURES / "real" / "merge" / "versions_title.jsonl"
    return [json.loads(line) for line in path.read_text("utf-8").splitlines()]


def build_labels(tmp_path, files):
    folder = tmp_path / "in"
    folder.mkdir(parents=True)
    for name, text in files.items():
        (folder / name).write_text(text, "utf-8")
    db = tmp_path / "catalog.db"
    result = CliRunner().invoke(cli, ["build", str(folder), "--db", str(db)])
    assert result.exit_code == 0, result.output
    with sqlite3.connect(db) as connection:
        return dict(connection.execute("select id, label from papers"))


def test_a_build_tells_shared_labels_apart(tmp_path):
    # two real papers in two versions each (ICLR 2018 and NeurIPS 2018; ICLR 2013 and ICML
    # 2014) whose abstracts differ: without titles nothing joins the versions, and each pair
    # opens with the same words
    records = versions_records()
    derived = [label_of(record["abstract"]) for record in records]
    assert derived[0] == derived[1] and derived[2] == derived[3]
    labels = build_labels(tmp_path, {"untitled.jsonl": untitled(records)})
    assert len(labels) == 4
    assert len(set(labels.values())) == 4
    for label in labels.values():
        assert label not in derived
        assert ends_cleanly(label) and brackets_closed(label)
    # the second part comes from the paper's own abstract, where the versions differ
    assert any(
        "like a trace of the set of primitive commands" in label for label in labels.values()
    )
    assert any("a specification (spec)" in label for label in labels.values())


def test_a_shared_short_label_keeps_its_name_ahead(tmp_path):
    # three real seed abstracts on language models, labelled alike as a catalog may label
    # them ('LLM'): each gets what its abstract is about
    abstracts = [a for t, a in real_papers() if t is None and "LLM" in a][:3]
    texts = [plain_text(a) for a in abstracts]
    papers = [(f"p{i}", "LLM", text) for i, text in enumerate(texts)]
    labels = distinguished_labels(papers + [("titled", "LLM", None)])
    assert sorted(labels) == ["p0", "p1", "p2"]  # a real title is never changed
    assert len(set(labels.values())) == 3
    for label in labels.values():
        assert label.startswith("LLM: ") and ends_cleanly(label)


def test_labels_of_a_build_do_not_depend_on_input_order(tmp_path):
    records = versions_records()
    reversed_files = {"b.jsonl": untitled(records[:2]), "a.jsonl": untitled(records[2:][::-1])}
    forward = build_labels(tmp_path / "forward", {"untitled.jsonl": untitled(records)})
    backward = build_labels(tmp_path / "backward", reversed_files)
    assert forward == backward


@TEXT_PROPERTY
@given(st.permutations(range(5)))
def test_distinguished_labels_do_not_depend_on_order(order):
    records = versions_records()
    papers = [(f"p{i}", "Shared", plain_text(r["abstract"])) for i, r in enumerate(records)]
    papers.append(("p4", "Shared", None))
    shuffled = [papers[i] for i in order]
    assert distinguished_labels(shuffled) == distinguished_labels(papers)


SENTENCE_PIECES = [
    "We propose",
    " a new method",
    " called FooNet",
    ", which",
    " of the",
    " and we show that",
    " (",
    ")",
    " for",
    " the",
    ". ",
    "In this paper, we study",
    " LLMs",
    " “",
    "”",
    " – ",
    " graph neural networks",
    " with",
    ",",
    " to",
    " DP",
    " based on",
    " Dirichlet process",
]


@TEXT_PROPERTY
@given(st.lists(st.sampled_from(SENTENCE_PIECES), max_size=24).map("".join))
def test_no_label_ends_on_a_connective(text):
    # an abstract of function words only (', which based on') cuts down to no label at all
    label = derive_label(text)
    if label:
        assert ends_cleanly(label), label
        assert brackets_closed(label), label


def test_a_shared_label_group_of_titles_only_is_left_alone():
    assert distinguished_labels([("a", "Preface", None), ("b", "Preface", None)]) == {}
    assert list(itertools.chain(distinguished_labels([("a", "Solo", "One sentence.")]))) == []


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


@TEXT_PROPERTY
@given(
    st.text(alphabet=st.sampled_from(list("()[] \t\n\u00a0\u2003,-–12098ae tl.xA")), max_size=60)
)
def test_citations_after_any_space_are_dropped_as_the_pattern_drops_them(source):
    check_citations(source)


@TEXT_PROPERTY
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


@TEXT_PROPERTY
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


@REAL_TEXT_SHARES
def test_split_sentences_equals_the_pattern_split_on_real_text(share):
    texts = REAL_TEXTS[::share]
    collapsed = [" ".join(t.split()) for t in texts]
    assert sum(len(SENTENCE_END_LOOKING_BEHIND.split(t)) > 1 for t in collapsed) > 100 // share
    differ = [
        t
        for t in texts + collapsed
        if list(labels.split_sentences(t)) != SENTENCE_END_LOOKING_BEHIND.split(t)
    ]
    assert differ == []


@TEXT_PROPERTY
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
    if not labels.may_hold(sentence, *labels.TOPIC_GROUPS):
        assert labels.TOPIC.search(sentence) is None
    assert labels.names_in(sentence) == labels.NAME.findall(sentence)
    for name in labels.NAME.finditer(sentence):
        # name_in looks for names from where the words that introduce them end: MAY_NAME
        # finds one from any start up to a name's
        assert labels.MAY_NAME.search(sentence, name.start()), sentence
    assert spans(labels.CITATION, sentence) == spans(CITATION_BEFORE, sentence)
    lower = labels.ascii_lower(sentence)
    for groups in (labels.INTRO_GROUPS, labels.NAMING_GROUPS, labels.TOPIC_GROUPS):
        assert labels.may_hold(sentence, *groups) == may_hold_by_generators(sentence, *groups)
        assert labels.lowered_may_hold(lower, groups) == may_hold_by_generators(sentence, *groups)


@REAL_TEXT_SHARES
def test_label_prefilters_on_real_sentences(share):
    sentences = real_sentences()[::share]
    assert len(sentences) > 5000 // share
    intro = labels.INTRO_WORDS, labels.INTRO_VERBS
    passed_over = [s for s in sentences if not labels.may_hold(s, *intro)]
    assert len(passed_over) > 1000 // share  # the prefilter does pass sentences over
    assert [s for s in sentences if labels.INTRO.search(s)]
    assert [s for s in sentences if labels.NAMING.search(s)]
    assert [s for s in sentences if labels.TOPIC.search(s)]
    for sentence in sentences + REAL_TEXTS[::share]:
        check_prefilters(sentence)


WORDS = [
    "we", "We", "WE", "this", "This", "our", "Our", " propose", "proposed", " introduce",
    " provide", " PROVE", " shown", " study", " characterise",
    " called", " named", "dubbed", " term", " as", " the proposed", "et al", "1999", "2021",
    " [12]", "x", "X", "ı", "İ", "K", "ſ", " ", ".", "-", "NorMuon", "GANs", "3C", "a1B",
]  # fmt: skip


@TEXT_PROPERTY
@given(st.lists(st.sampled_from(WORDS + ["ıntroduce", "WE PROPOSE", "Our "]), max_size=20))
def test_label_prefilters_on_generated_sentences(words):
    sentence = "".join(words)
    check_prefilters(sentence)
    for start in range(len(sentence) + 1):
        if not labels.MAY_NAME.search(sentence, start):
            assert labels.NAME.search(sentence, start) is None, (sentence, start)


def introduced_thing_searching_every_sentence(sentences):
    original = labels.may_hold
    try:
        labels.may_hold = lambda *_: True
        return labels.introduced_thing(sentences)
    finally:
        labels.may_hold = original


@REAL_TEXT_SHARES
def test_introduced_thing_with_the_prefilter_on_real_text(share):
    texts = [" ".join(labels.drop_citations(t).split()) for t in REAL_TEXTS[::share]]
    sentences = [[s.strip() for s in labels.split_sentences(t) if s.strip()] for t in texts]
    found = [s for s in sentences if labels.introduced_thing(s)]
    assert len(found) > 100 // share
    differ = [
        s
        for s in sentences
        if labels.introduced_thing(s) != introduced_thing_searching_every_sentence(s)
    ]
    assert differ == []


def readable_sentences(source):
    """The sentences of an abstract as derive_label reads them, all at once."""
    if "://" in source or "github.com" in source:
        source = labels.URL.sub("", source)
    source = markup.collapse_spaces(labels.drop_citations(source))
    return [s.strip() for s in labels.split_sentences(source) if s.strip()]


def derive_label_cutting_every_sentence(source):
    """derive_label as it was before it cut sentences as named_method read them."""
    sentences = readable_sentences(source)
    if not sentences:
        return ""
    first = labels.first_sentence(sentences)
    label = labels.named_method(sentences) or labels.introduced_thing(sentences) or first
    return labels.cut_at_word(label)


@REAL_TEXT_SHARES
def test_labels_from_sentences_read_one_at_a_time_on_real_text(share):
    texts = plain_share(share)
    named = sum(labels.named_method(labels.split_sentences(t)) is not None for t in texts)
    assert named > 100 // share
    differ = [t for t in texts if labels.derive_label(t) != derive_label_cutting_every_sentence(t)]
    assert differ == []


@TEXT_PROPERTY
@given(st.lists(st.sampled_from(WORDS), max_size=30).map("".join))
def test_labels_from_sentences_read_one_at_a_time(source):
    assert labels.derive_label(source) == derive_label_cutting_every_sentence(source)


def check_quoted_name(sentence):
    for start in range(len(sentence) + 1):
        if labels.QUOTED_NAME.match(sentence, start):
            assert markup.holds_any(sentence, labels.QUOTES), sentence


@REAL_TEXT_SHARES
def test_quoted_names_hold_a_quote_mark_on_real_text(share):
    quoted = [s for s in REAL_TEXTS[::share] if labels.QUOTED_NAME.search(s)]
    assert len(quoted) > 20 // share
    for source in quoted + REAL_TEXTS[:2000:share]:
        check_quoted_name(source[:300])


@TEXT_PROPERTY
@given(st.text(alphabet=st.sampled_from(list("aA “”\"'‘’«»")), max_size=20))
def test_quoted_names_hold_a_quote_mark(sentence):
    check_quoted_name(sentence)


def named_method_naming_every_sentence(sentences):
    """named_method as it was before it read a sentence's names only when a later sentence
    may name the method (every sentence's names went into seen_before as it was read)."""
    seen_before = set()
    introducing = None
    for sentence in sentences:
        intro = first_intro_ignoring_case(labels.INTRO, sentence)
        namings = list(labels.NAMING.finditer(sentence))
        found = (intro or namings) and labels.name_in(sentence, intro, namings, seen_before)
        if found:
            return labels.described(*found, sentence, introducing)
        if intro and introducing is None:
            introducing = sentence, intro.end()
        seen_before.update(w.lower() for w in labels.NAME.findall(sentence))
    return None


def derive_label_reading_every_sentence_twice(source):
    """derive_label as it was before named_method read names lazily and handed its INTRO
    matches to introduced_thing (which found them again), without the prefilters."""
    sentences = readable_sentences(source)
    if not sentences:
        return ""
    label = (
        named_method_naming_every_sentence(sentences)
        or introduced_thing_searching_every_sentence(sentences)
        or labels.first_sentence(sentences)
    )
    return labels.cut_at_word(label) or labels.cut_at_word(labels.first_sentence(sentences))


@REAL_TEXT_SHARES
def test_labels_with_intros_handed_on_and_names_read_lazily_on_real_text(share):
    texts = plain_share(share)
    # both fast paths are taken: abstracts naming no method (introduced_thing reads the
    # intros named_method found), and names of earlier sentences read for a later one
    unnamed = [t for t in texts if labels.named_method(labels.split_sentences(t)) is None]
    assert (
        sum(labels.introduced_thing(list(labels.split_sentences(t))) is not None for t in unnamed)
        > 100 // share
    )
    differ = [
        t for t in texts if labels.derive_label(t) != derive_label_reading_every_sentence_twice(t)
    ]
    assert differ == []


NAMING_WORDS = WORDS + [
    " that we call ", " our method ", "Our model, ", " GANs ", " (", ")", ", ", " which ",
    " Jiffy", " a new", " present", " study", "Mamba", " MB-TAIL", "is presented", " of ",
]  # fmt: skip


@TEXT_PROPERTY
@given(st.lists(st.sampled_from(NAMING_WORDS), max_size=40).map("".join))
def test_labels_with_intros_handed_on_and_names_read_lazily(source):
    assert labels.derive_label(source) == derive_label_reading_every_sentence_twice(source)


def phrase_break_over_every_character(text, limit):
    """phrase_break as it was: the spaces found by a loop over the window's characters."""
    window = text[: limit + 1]
    spaces = [i for i, c in enumerate(window) if c == " "]
    if not spaces:
        return limit
    for i in reversed(spaces):
        if i < limit * labels.PHRASE_CUT_SHARE:
            break
        following = window[i + 1 :].split(" ", 1)[0]
        previous = window[:i].rsplit(" ", 1)[-1]
        if previous.endswith(("ing", "ed")) or labels.is_dangling(previous):
            continue
        if window[i - 1] == "," or labels.is_dangling(following) or following[:1] == "(":
            return i
    return spaces[-1]


def without_stray_closers_over_every_character(text):
    """without_stray_closers as it was: a loop over every character."""
    expected, kept = [], []
    for c in text:
        if c in labels.CLOSING:
            expected.append(labels.CLOSING[c])
        elif c in labels.CLOSERS:
            if not expected or expected[-1] != c:
                continue
            expected.pop()
        kept.append(c)
    return "".join(kept)


def check_cut_helpers(text):
    assert labels.without_stray_closers(text) == without_stray_closers_over_every_character(text)
    for limit in (labels.LABEL_LENGTH, 10, 3, 1):
        assert labels.phrase_break(text, limit) == phrase_break_over_every_character(text, limit)


@REAL_TEXT_SHARES
def test_cut_helpers_equal_their_loops_over_every_character_on_real_text(share):
    texts = plain_share(share) + REAL_TEXTS[-len(REAL_TEXTS) % share :: share]
    assert sum(labels.without_stray_closers(t) != t for t in texts) > 10 // share  # strays
    for text in texts:
        check_cut_helpers(text[: labels.LABEL_LENGTH * 2])
        check_cut_helpers(labels.derive_label(text))


CUT_PIECES = [
    " ", "a", "Word", ",", " of", " the", " running", " used", " (", ")", "[", "]", "{", "}",
    "“", "”", "«", "»", '"', "'", " and", "e", "ing", "ed",
]  # fmt: skip


@TEXT_PROPERTY
@given(st.lists(st.sampled_from(CUT_PIECES), max_size=60).map("".join))
def test_cut_helpers_equal_their_loops_over_every_character(text):
    check_cut_helpers(text)


def first_intro_ignoring_case(pattern, sentence):
    """first_intro as it was: the IGNORECASE pattern searched in the sentence itself."""
    match = pattern.search(sentence)
    while match is not None:
        if match.start() == 0 or labels.opens_main_clause(sentence, match):
            return match
        match = pattern.search(sentence, match.start() + 1)
    return None


def span(match):
    return match and match.span()


def check_lowercase_search(sentence):
    """The patterns searched in an ASCII sentence's lowercase find the spans IGNORECASE finds
    in the sentence."""
    for pattern in (labels.INTRO, labels.TOPIC):
        slow = first_intro_ignoring_case(pattern, sentence)
        assert span(labels.first_intro(pattern, sentence)) == span(slow), sentence
        lower = labels.ascii_lower(sentence)
        assert span(labels.first_intro(pattern, sentence, lower)) == span(slow), sentence
    naming, searched = labels.in_lowercase(labels.NAMING, sentence)
    assert spans(naming, searched) == spans(labels.NAMING, sentence), sentence


def test_lowercase_patterns_spell_every_letter_in_lowercase():
    for pattern in labels.LOWERCASE:
        assert pattern.flags & re.IGNORECASE
        letters = re.sub(r"\\[A-Za-z]", "", pattern.pattern)  # not the escapes (\\b, \\S)
        assert letters == letters.lower()


def test_authors_by_first_letter_are_the_authors():
    """The same branches in the same order, the lookbehinds taken out and the word boundary
    put back in front."""
    branches = re.sub(r"\(\?<!\\w\w\)", "", labels.AUTHORS_BY_FIRST_LETTER)
    assert "\\b" + branches == labels.AUTHORS
    for pattern in (labels.INTRO, labels.TOPIC):
        rest = pattern.pattern.removeprefix(labels.AUTHORS)
        assert labels.LOWERCASE[pattern].pattern == labels.AUTHORS_BY_FIRST_LETTER + rest


@TEXT_PROPERTY
@given(st.text(alphabet="wetohisur _-1é'", max_size=30))
def test_authors_by_first_letter_match_where_authors_match(text):
    slow, fast = re.compile(labels.AUTHORS), re.compile(labels.AUTHORS_BY_FIRST_LETTER)
    assert [m.span() for m in slow.finditer(text)] == [m.span() for m in fast.finditer(text)]


@REAL_TEXT_SHARES
def test_lowercase_search_on_real_sentences(share):
    sentences = real_sentences()[::share]
    found = [s for s in sentences if labels.first_intro(labels.INTRO, s)]
    assert len(found) > 1000 // share
    assert sum(not s.isascii() for s in found) > 10 // share  # both searches are taken
    for sentence in sentences:
        check_lowercase_search(sentence)


@TEXT_PROPERTY
@given(
    st.lists(
        st.sampled_from(WORDS + NAMING_WORDS + ["ıntroduce", "WE PROPOSE", "Our ", "WeLL", "K"]),
        max_size=30,
    ).map("".join)
)
def test_lowercase_search(sentence):
    check_lowercase_search(sentence)
