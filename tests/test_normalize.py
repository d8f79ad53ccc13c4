import unicodedata

import pytest

from loader.normalize import (
    affiliation_name,
    derive_label,
    name_key,
    paper_id,
    plain_text,
    split_track,
)


def test_name_key_unites_case_whitespace_and_unicode_forms():
    composed = "Leif Döring"
    decomposed = unicodedata.normalize("NFD", composed)
    assert decomposed != composed
    assert name_key(composed) == name_key(decomposed) == name_key("leif  döring")


@pytest.mark.parametrize(
    "markup, plain",
    [
        ("**S**mooth **M**aximum **M**ean **D**iscrepancy", "Smooth Maximum Mean Discrepancy"),
        (r"\emph{high-quality} samples", "high-quality samples"),
        (r"achieving 21.74\% better", "achieving 21.74% better"),
        (r"accuracy $1/\varepsilon$ and top-$k$", "accuracy 1/ε and top-k"),
        (r"\textbf{\emph{nested}} macros", "nested macros"),
        ("*polylogarithmically* in", "polylogarithmically in"),
        ("see [the code](https://example.org/x) now", "see the code now"),
        ("costs $5 and more", "costs $5 and more"),
        ("settings---especially", "settings—especially"),
        (r"\url{https://x.org/a_b}", "https://x.org/a_b"),
    ],
)
def test_plain_text_removes_markup(markup, plain):
    assert plain_text(markup) == plain


def test_paper_id_ignores_whitespace_and_unicode_form():
    text = "Leif Döring studies   Q-learning.\n"
    assert paper_id(text) == paper_id(
        unicodedata.normalize("NFD", " Leif Döring studies Q-learning.")
    )
    assert paper_id(text) != paper_id("Another abstract.")
    assert len(paper_id(text)) == 16 and int(paper_id(text), 16) >= 0


def test_split_track_keeps_commas_in_subarea():
    name, area, subarea = split_track(
        "Social Aspects ·  Accountability, Transparency, and Interpretability"
    )
    assert area == "Social Aspects"
    assert subarea == "Accountability, Transparency, and Interpretability"
    assert name == "Social Aspects · Accountability, Transparency, and Interpretability"


def test_affiliation_names_are_derived_from_slugs():
    assert affiliation_name("pku") == "PKU"
    assert affiliation_name("microsoft-research") == "Microsoft Research"
    assert affiliation_name("stanford") == "Stanford"


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
    ],
)
def test_derive_label(text, label):
    assert derive_label(text) == label


def test_derive_label_cuts_long_first_sentence_at_a_word():
    text = "word " * 60 + "end."
    label = derive_label(text)
    assert label.endswith("…") and len(label) <= 91 and " wor…" not in label
