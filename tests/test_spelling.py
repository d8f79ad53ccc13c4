"""/search's "Did you mean" (loader/web/spelling.py) through the app `paper-catalog serve` runs,
on the real sample (tests/fixtures/real/sample): real typos get the word meant, whole words
ranked by edit distance then papers; typos in phrases and in words to leave out are suggested
whatever the rest finds; markup is never suggested."""

import csv
import re
import sqlite3

import pytest

from .conftest import FIXTURES, second_datasette

pytestmark = pytest.mark.asyncio(loop_scope="session")
TYPOS = FIXTURES / "typos" / "typos.tsv"
# the share of real typos whose first suggestion is the word meant (docs/search.md)
RIGHT_AT_LEAST = 0.9


@pytest.fixture(scope="session")
def site(real_catalog, datasette):
    return second_datasette(real_catalog)


@pytest.fixture(scope="module")
def catalog(real_catalog):
    connection = sqlite3.connect(real_catalog)
    yield connection
    connection.close()


def read_typos():
    with TYPOS.open(newline="") as handle:
        return [(row["typo"], row["meant"]) for row in csv.DictReader(handle, delimiter="\t")]


def markup_commands(catalog):
    """The names of the LaTeX commands the sample's abstracts write (`\\mathcal`, `\\emph`)."""
    names = set()
    for (abstract,) in catalog.execute("select abstract from papers"):
        names.update(name.lower() for name in re.findall(r"\\([A-Za-z]+)", abstract or ""))
    return names


async def suggestions(site, q):
    response = await site.client.get("/search.json", params={"q": q})
    assert response.status_code == 200, response.text[:300]
    return response.json()["suggestions"]


async def test_real_typos_get_the_word_meant_and_never_markup(site, catalog):
    typos = read_typos()
    assert len(typos) >= 30
    commands = markup_commands(catalog)
    assert {"mathcal", "emph", "frac", "textit"} <= commands, "the sample holds markup"
    right, wrong = 0, []
    for typo, meant in typos:
        found = await suggestions(site, typo)
        assert not set(found) & commands, (typo, found)
        if found[:1] == [meant]:
            right += 1
        else:
            wrong.append((typo, meant, found))
    assert right >= RIGHT_AT_LEAST * len(typos), wrong
    # the figure docs/search.md gives
    assert (right, len(typos)) == (50, 50), wrong


async def test_the_vocabulary_holds_whole_words_and_no_command_papers_only_write_as_markup(
    catalog,
):
    vocabulary = dict(catalog.execute("select term, papers from search_vocabulary"))
    assert {"transformer", "reinforcement", "learning", "networks"} <= set(vocabulary)
    assert "reinforc" not in vocabulary, "a porter stem is no word to offer"
    assert min(vocabulary.values()) >= 3
    prose = set()
    for row in catalog.execute("select label, authors, abstract_text from papers"):
        for text in row:
            prose.update(re.findall(r"[^\W_]+", (text or "").lower()))
    markup_only = markup_commands(catalog) - prose
    assert {"mathcal", "emph", "frac", "textit", "mathbb"} <= markup_only
    assert not markup_only & set(vocabulary)


async def test_typos_in_words_to_leave_out_and_in_phrases_are_suggested_whatever_the_rest_finds(
    site,
):
    body = (await site.client.get("/search.json", params={"q": "learning -nueral"})).json()
    assert body["total"] > 3
    assert body["suggestions"] == ["learning -neural"]
    found = await suggestions(site, 'policy OR "nueral netwroks"')
    assert found[0] == 'policy OR "neural networks"'
    html = (await site.client.get("/search", params={"q": "learning -nueral"})).text
    assert 'Did you mean <a href="/search?q=learning+-neural">learning -neural</a>' in html
    # a word the index finds papers for through its stem, but no paper writes as typed
    assert await suggestions(site, "againsts") == ["against"]


async def test_a_latex_command_typed_is_never_replaced(site):
    assert await suggestions(site, "\\textbf{graph}") == []
    assert await suggestions(site, "\\textbf{grpah}") == ["\\textbf{graph}"]
    assert await suggestions(site, "\\mathcal{nueral}") == ["\\mathcal{neural}"]


async def test_candidates_rank_by_the_whole_word_then_papers(site, catalog):
    # one swap from `transformer`, two edits from the stem's word `transform`
    assert (await suggestions(site, "trasnformer"))[0] == "transformer"
    # a typo in the second letter: candidates start with the first letter only
    assert (await suggestions(site, "discribe"))[0] == "describe"
    # two words one edit away: the one more papers write first
    papers = dict(catalog.execute("select term, papers from search_vocabulary"))
    found = await suggestions(site, "modle")
    assert found[0] == "model" and papers["model"] > papers.get("mode", 0)
