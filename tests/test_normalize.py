import unicodedata

import pytest

from loader.rules import markup
from loader.rules.normalize import (
    affiliation_name,
    name_key,
    paper_id,
    plain_text,
    shown_affiliation_name,
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


@pytest.mark.parametrize(
    "slug, name",
    [
        # the slugs of the real profile pages (tests/fixtures/real/sample) and what they stand
        # for in Paper Copilot's names; the seeds' slugs above
        ("university-of-california-berkeley", "University of California Berkeley"),
        ("massachusetts-institute-of-technology", "Massachusetts Institute of Technology"),
        (
            "max-planck-institute-for-intelligent-systems",
            "Max Planck Institute for Intelligent Systems",
        ),
        ("university-of-cambridge", "University of Cambridge"),
        ("deepmind", "DeepMind"),
        ("openai", "OpenAI"),
        ("uber", "Uber"),  # a short word real names write capitalized: no acronym
        ("google", "Google"),
        ("independent-researcher", "Independent Researcher"),
        # the issue's
        ("far-ai", "Far AI"),
        ("far_ai", "Far AI"),
        ("eth-zurich", "ETH Zurich"),
        ("the-university-of-tokyo", "The University of Tokyo"),  # a first word is capitalized
        ("mit csail", "MIT CSAIL"),  # no capital: a slug, whatever separates its words
    ],
)
def test_a_slug_gets_the_case_real_names_give_its_words(slug, name):
    assert affiliation_name(slug) == name


@pytest.mark.parametrize(
    "written",
    [
        # Paper Copilot's `aff` names (tests/fixtures/dumps/paperlists)
        "MIT CSAIL",
        "University of California, Berkeley",
        "Technion - Israel Institute of Technology",
        "Baidu Autonomous Driving Business Unit†",
        "Universit ´e de Montr ´eal",  # as the source wrote it, PDF accents and all
    ],
)
def test_a_name_a_source_writes_is_shown_as_written(written):
    assert affiliation_name(written) == written
    assert affiliation_name(f"  {written.replace(' ', '   ')} ") == written


def test_an_affiliation_written_two_ways_shows_the_most_used_name():
    assert shown_affiliation_name({"MIT CSAIL": 1, "Mit Csail": 3}) == "Mit Csail"
    assert shown_affiliation_name({"MIT CSAIL": 2, "Mit Csail": 2}) == "MIT CSAIL"  # the smaller
