"""loader/web/export_names.py: a download's file name says what was searched, safely."""

import re

import pytest
from hypothesis import given
from hypothesis import strategies as st

from loader.web import search_request as search
from loader.web.export_names import MAX_NAME_CHARACTERS, attachment, export_file_name
from loader.web.search_exports import export_name

SAFE_NAME = re.compile(r"[a-z0-9]+(-[a-z0-9]+)*\.[a-z0-9]+")


def search_name(pairs, extension="csv"):
    return export_name(search.parse_search(pairs), extension)


def test_a_search_is_named_after_its_words_then_its_filters():
    assert search_name([("q", "diffusion"), ("year", "2023"), ("venue", "ICML")]) == (
        "papers-diffusion-icml-2023.csv"
    )
    assert search_name([("q", '"Large Language" models')], "bib") == (
        "papers-large-language-models.bib"
    )
    assert search_name([], "json") == "papers.json"
    assert search_name([("track", "Deep Learning · Theory"), ("status", "Oral")]) == (
        "papers-oral-deep-learning-theory.csv"
    )


def test_empty_values_authors_and_words_without_latin_letters_still_say_something():
    assert search_name([("venue", "")]) == "papers-no-venue.csv"
    assert search_name([("author", "1234")]) == "papers-author-1234.csv"
    assert search_name([("q", "扩散模型")]) == "papers-search.csv"
    assert search_name([("q", "Théorie des réseaux")]) == "papers-theorie-des-reseaux.csv"


def test_a_long_search_is_cut_after_a_whole_word():
    words = " ".join(f"word{n}" for n in range(40))
    name = search_name([("q", words)])
    assert len(name) - len(".csv") <= MAX_NAME_CHARACTERS
    assert name.startswith("papers-word0-word1-") and re.search(r"-word\d+\.csv$", name)
    assert export_file_name("papers", ["x" * 200], "csv") == "papers-" + "x" * 73 + ".csv"
    assert export_file_name("a" * 200, [], "csv") == "a" * MAX_NAME_CHARACTERS + ".csv"


def test_nothing_from_the_url_reaches_the_header_but_letters_digits_and_dashes():
    hostile = ['x"; filename="evil.exe', "../../etc/passwd", "a\r\nSet-Cookie: x=1", "\\ %00 ;"]
    name = export_file_name("papers", hostile, "csv")
    assert name == "papers-x-filename-evil-exe-etc-passwd-a-set-cookie-x-1-00.csv"
    assert attachment(name) == f'attachment; filename="{name}"'
    for bad in ('a".csv', "a/b.csv", "a\r\n.csv", "A.csv"):
        with pytest.raises(ValueError):
            attachment(bad)


@given(
    st.text(max_size=30),
    st.lists(st.one_of(st.text(max_size=40), st.integers(), st.none()), max_size=8),
    st.text(max_size=6),
)
def test_every_name_is_safe_and_bounded(stem, parts, extension):
    name = export_file_name(stem, parts, extension)
    assert SAFE_NAME.fullmatch(name), name
    assert len(name.rsplit(".", 1)[0]) <= MAX_NAME_CHARACTERS
    assert attachment(name).startswith("attachment; filename=")
