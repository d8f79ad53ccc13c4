"""The /search rules that need no catalog: parameters, spelling distance, BibTeX."""

import pytest
from hypothesis import given
from hypothesis import strategies as st

from loader.web.bibtex import KeyMaker, entry_key, field_text, format_entry
from loader.web.search_request import SearchError, parse_search
from loader.web.spelling import SUGGESTIONS, best_words, edit_distance, max_edits


def test_parameters_are_checked_and_clamped():
    request = parse_search([("q", "a\x00b\nc"), ("page", "0"), ("size", "1000"), ("x", "y")])
    assert (request.q, request.page, request.size) == ("a b c", 1, 100)
    assert parse_search([("size", "-3")]).size == 1
    assert parse_search([]).sort == "newest"
    assert parse_search([("q", "x"), ("sort", "relevance")]).sort == "relevance"
    assert parse_search([("sort", "relevance")]).sort == "newest"
    assert parse_search([("q", "")]).expression is None
    # venue:/year: in q are the parameters' filters, one more value of each
    words = parse_search([("q", "graph venue:ICLR year:2018"), ("venue", "NeurIPS")])
    assert words.filters == {"venue": ("NeurIPS", "ICLR"), "year": (2018,)}
    assert (words.expression, words.words_q) == ('"graph"', "graph")
    assert parse_search([("year", "2018"), ("year", "2018"), ("venue", "")]).filters == {
        "venue": (None,),
        "year": (2018,),
    }
    for bad in (
        [("page", "two")],
        [("size", "1e3")],
        [("sort", "best")],
        [("year", "soon")],
        [("q", "year:soon")],
        [("q", '"')],
    ):
        with pytest.raises(SearchError):
            parse_search(bad)


def test_bibtex_entries():
    keys = KeyMaker()
    paper = {
        "title": "Offline RL: {A} 100% & more",
        "label": "x",
        "authors": ["Sergey Levine", "Aviral Kumar"],
        "truncated": True,
        "venue": "ICLR",
        "year": 2020,
        "url": "https://openreview.net/forum?id=1",
    }
    first = format_entry(paper, keys)
    assert first.startswith("@inproceedings{levine2020offline,")
    assert "author = {Sergey Levine and Aviral Kumar and others}" in first
    assert "booktitle = {ICLR}" in first and r"100\% \& more" in first
    assert format_entry(paper, keys).startswith("@inproceedings{levine2020offlinea,")
    preprint = format_entry(dict(paper, venue="arXiv", title=None, label="A Study"), keys)
    assert preprint.startswith("@misc{levine2020study,")
    assert "note = {title derived from the abstract}" in preprint
    assert entry_key(["Tramèr Florian Jr."], None, "The Art") == "florianart"
    assert field_text("a { b") == r"a \textbraceleft{} b"


def test_edit_distance_counts_swaps_as_one():
    assert edit_distance("modle", "model") == 1
    assert edit_distance("trasnformer", "transformer") == 1
    assert edit_distance("difusion", "diffusion") == 1
    assert edit_distance("", "abc") == 3
    # fewest edits to the whole word first, then the word of more papers
    papers = {"mode": 210, "model": 5670, "modules": 224, "xyz": 9}
    assert best_words("modle", sorted(papers.items())) == ["model", "mode"]
    # the whole word decides: `transform` shares more of its start but is two edits away
    rows = sorted({"transform": 900, "transformer": 300, "transformers": 200}.items())
    assert best_words("trasnformer", rows) == ["transformer", "transformers"]


@given(
    st.text(alphabet="abcd", min_size=3, max_size=10),
    st.lists(st.text(alphabet="abcd", min_size=1, max_size=12), unique=True, max_size=80),
)
def test_the_walk_over_words_finds_what_a_full_table_for_each_finds(word, words):
    """best_words skips words by their first letters and computes only the cells near the
    diagonal: it must find what the whole edit distance of every word finds."""
    rows = [(term, len(term) * 7 % 5 + 3) for term in sorted(words)]
    scored = sorted(
        (edit_distance(word, term), -papers, term)
        for term, papers in rows
        if term != word and edit_distance(word, term) <= max_edits(word)
    )
    assert best_words(word, rows) == [term for _, _, term in scored[:SUGGESTIONS]]


def test_bibtex_keys_stay_unique_over_many_copies_of_one_key():
    keys = KeyMaker()
    made = [keys.unique("levine2020offline") for _ in range(3000)]
    assert len(set(made)) == 3000
    assert made[:2] == ["levine2020offline", "levine2020offlinea"]
    assert made[26:28] == ["levine2020offlinez", "levine2020offlineaa"]
    taken = keys.unique("levine2020offlinea")
    assert taken not in made and taken.startswith("levine2020offlinea")
