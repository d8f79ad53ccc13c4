import unicodedata

from loader.rules import markup
from loader.rules.normalize import (
    affiliation_name,
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


def test_plain_text_is_the_one_reading_of_markup():
    # the loader indexes what loader/rules/markup.py reads; tests/test_markup.py checks its rules
    assert plain_text is markup.plain_text
    assert plain_text(r"**S**mooth \emph{x} $1/\varepsilon$ 21.74\%") == "Smooth x 1/ε 21.74%"


def test_paper_id_ignores_whitespace_and_unicode_form():
    text = "Leif Döring studies   Q-learning.\n"
    assert paper_id(text) == paper_id(
        unicodedata.normalize("NFD", " Leif Döring studies Q-learning.")
    )
    assert paper_id(text) != paper_id("Another abstract.")
    assert len(paper_id(text)) == 16 and int(paper_id(text), 16) >= 0
    # with a title, the abstract and the title make the id
    assert paper_id(text, "q learning at scale") != paper_id(text)
    assert paper_id(text, "q learning at scale") != paper_id(text, "q learning")
    assert paper_id(text, None) == paper_id(text)


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
