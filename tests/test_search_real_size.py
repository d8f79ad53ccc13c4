"""The /search query syntax and its spelling suggestions at real size, through the app
`paper-catalog serve` runs.

The catalog: more than 10,000 papers made of the real samples (tests/real_size.py), with two
real typos in fewer papers (`disribution` in 2, `classfication` in 3). What a query finds is
checked against the papers' own text, read here from the catalog file and matched with
regular expressions, apart from the index: a word's papers hold it (or a word it is the stem
of), an excluded word's papers are left out, a field's words are in that field.
"""

import re
import sqlite3
import time
import unicodedata

import pytest

from loader.web.search_syntax import MAX_WORDS

pytestmark = pytest.mark.asyncio(loop_scope="session")


@pytest.fixture
def client(real_size_client):
    return real_size_client


def fold(text):
    text = unicodedata.normalize("NFKD", text or "").casefold()
    return "".join(c for c in text if not unicodedata.combining(c))


@pytest.fixture(scope="module")
def texts(real_size_catalog):
    """id -> (title or label, authors, abstract) as the index reads them, folded."""
    with sqlite3.connect(real_size_catalog) as connection:
        rows = connection.execute("select id, label, authors, abstract_text from papers")
        return {row[0]: tuple(fold(text) for text in row[1:]) for row in rows}


def holding(texts, pattern, columns=(0, 1, 2)):
    """Ids of the papers whose columns hold the pattern, starting at the start of a word."""
    compiled = re.compile(r"(?<![^\W_])" + pattern)
    return {paper for paper, row in texts.items() if any(compiled.search(row[c]) for c in columns)}


@pytest.fixture(scope="module")
def word(real_size_catalog):
    """The ids of the papers whose index holds a word (one quoted word, no syntax)."""
    connection = sqlite3.connect(real_size_catalog)

    def ids(text):
        return {
            row[0]
            for row in connection.execute(
                "select papers.id from papers_fts join papers on papers.rowid = papers_fts.rowid"
                " where papers_fts match ?",
                [f'"{text}"'],
            )
        }

    yield ids
    connection.close()


async def search(client, q, **others):
    response = await client.get("/search.json", params={"q": q, **others})
    assert response.status_code == 200, (q, response.text[:300])
    return response.json()


async def found(client, q):
    """(total, the ids of the first 100 results) of a query."""
    body = await search(client, q, size="100")
    return body["total"], {result["id"] for result in body["results"]}


async def finds(client, q, expected):
    """The query finds exactly the expected papers: as many, and its first 100 among them."""
    total, page = await found(client, q)
    assert total == len(expected) and page <= expected, q
    return page


async def finds_between(client, q, fewest, most):
    """The query finds every paper of `fewest` (as many at least) and none outside `most`."""
    total, page = await found(client, q)
    assert len(fewest) <= total <= len(most) and page <= most, q
    return total


async def test_or_finds_the_papers_of_either_word(client, word):
    graph, diffusion = word("graph"), word("diffusion")
    await finds(client, "graph OR diffusion", graph | diffusion)
    assert len(graph | diffusion) > len(graph) > len(diffusion) > 0
    # OR binds closer than the space: policy AND (graph OR diffusion)
    await finds(client, "policy graph OR diffusion", word("policy") & (graph | diffusion))


async def test_lower_case_or_and_not_are_words(client, word):
    graph, neural = word("graph"), word("neural")
    await finds(client, "graph or neural", graph & word("or") & neural)
    await finds(client, "graph not neural", graph & word("not") & neural)


async def test_an_excluded_word_leaves_out_every_paper_that_holds_it(client, word, texts):
    expected = word("graph") - word("neural")
    for q in ("graph -neural", "graph NOT neural"):
        page = await finds(client, q, expected)
        assert page and not page & holding(texts, r"neural\b"), "no title, author or abstract"


async def test_an_excluded_author_leaves_out_their_papers(client, word, texts):
    by_levine = holding(texts, r"levine\b", columns=(1,))
    assert word("policy") & by_levine
    page = await finds(client, "policy -levine", word("policy") - word("levine"))
    assert page and not page & by_levine


async def test_only_excluded_words_is_a_400_that_says_why(client):
    for q in ("-graph", "NOT graph", "-graph -neural"):
        for path in ("/search", "/search.json", "/search.csv"):
            response = await client.get(path, params={"q": q})
            assert response.status_code == 400
            assert "not only words to leave out" in response.text


async def test_a_prefix_finds_the_words_it_starts(client, word, texts):
    # the prefix is stemmed as words are: diffus* is diffu*
    total = await finds_between(
        client, "diffus*", holding(texts, "diffus"), holding(texts, "diffu")
    )
    assert total >= len(word("diffusion"))
    assert (await found(client, "reinforc*"))[0] >= len(word("reinforcement"))
    response = await client.get("/search.json", params={"q": "d*"})
    assert response.status_code == 400 and "at least 2 letters" in response.text


async def test_title_limits_a_term_to_titles(client, word, texts):
    in_titles = await finds_between(
        client,
        "title:diffusion",
        holding(texts, r"diffusion\b", columns=(0,)),
        holding(texts, "diffus", columns=(0,)),
    )
    assert 0 < in_titles < len(word("diffusion")), "papers with it in the abstract only"


async def test_author_limits_a_term_to_author_names(client, word, texts):
    by_levine = holding(texts, "levin", columns=(1,))
    await finds_between(client, "author:levine", holding(texts, r"levine\b", (1,)), by_levine)
    assert len(by_levine) < len(word("levine") | word("policy"))
    assert (await found(client, "author:levine policy"))[0] == len(by_levine & word("policy"))


async def test_abstract_limits_a_term_or_phrase_to_abstracts(client, word, texts):
    in_abstracts = (await found(client, "abstract:levine"))[0]
    assert in_abstracts == len(holding(texts, "levin", columns=(2,))) < len(word("levine"))
    await finds_between(
        client,
        'abstract:"graph neural"',
        holding(texts, r"graph\W+neural\b", columns=(2,)),
        holding(texts, r"graph\w*\W+neural", columns=(2,)),
    )


async def test_a_phrase_finds_its_words_in_order(client, word, texts):
    total = await finds_between(
        client,
        '"graph neural"',
        holding(texts, r"graph\W+neural\b"),
        holding(texts, r"graph\w*\W+neural"),
    )
    assert 0 < total < len(word("graph") & word("neural"))


async def test_other_characters_are_parts_of_words(client, word):
    # a colon of no field, parentheses, a caret: FTS5 syntax elsewhere, separators here
    policy_gradient = (await found(client, '"policy gradient"'))[0]
    assert policy_gradient and (await found(client, "policy:gradient"))[0] == policy_gradient
    graph = len(word("graph"))
    for q in ("(graph)", "^graph", "{graph}", "graph+"):
        assert (await found(client, q))[0] == graph, q


async def test_a_query_of_more_than_64_words_is_a_400_at_once(client, texts):
    abstract = next(row[2] for row in texts.values() if len(row[2]) > 2_000)
    q = abstract[:2_000]
    started = time.perf_counter()
    response = await client.get("/search", params={"q": q})
    assert response.status_code == 400
    assert f"at most {MAX_WORDS} words" in response.text
    assert time.perf_counter() - started < 1
    fits = " ".join(re.findall(r"[^\W_]+", abstract)[:MAX_WORDS])
    assert (await client.get("/search.json", params={"q": fits})).status_code == 200


async def test_a_long_query_of_few_words_answers_quickly(client):
    # 2,000 characters in 40 words no paper holds: each looked up for suggestions
    q = " ".join(f"zq{number:02d}" + "x" * 46 for number in range(40))
    assert len(q) > 2_000
    started = time.perf_counter()
    body = await search(client, q)
    assert body["total"] == 0 and body["suggestions"] == []
    assert time.perf_counter() - started < 2


# --- suggestions -------------------------------------------------------------------------------


async def test_a_word_of_fewer_than_3_papers_gets_a_suggestion(client):
    body = await search(client, "disribution")
    assert body["total"] == 2
    assert body["suggestions"][0] == "distribution"
    html = (await client.get("/search", params={"q": "disribution"})).text
    assert 'Did you mean <a href="/search?q=distribution">distribution</a>' in html


async def test_words_of_fewer_than_3_papers_are_never_suggested(client):
    # closer to the typo in 2 papers than to `distribution`
    body = await search(client, "disribtion")
    assert body["total"] == 0
    assert body["suggestions"][0] == "distribution"
    assert not any("disribution" in suggestion for suggestion in body["suggestions"])


async def test_a_word_of_3_papers_is_a_word(client):
    body = await search(client, "classfication")
    assert body["total"] == 3 and body["suggestions"] == []


async def test_suggestions_rank_by_edits_then_papers(client):
    assert (await search(client, "optimzation"))["suggestions"][0] == "optimization"
    assert (await search(client, "levien"))["suggestions"][0] == "levine"
    assert (await search(client, "trasnformer"))["suggestions"][0] == "transformer"
    first, second = (await search(client, "Difusion modle"))["suggestions"][:2]
    assert first == "Diffusion model", "the case typed, every misspelt word replaced"
    assert second.endswith(" model"), "then the first word's next match"


async def test_suggestions_keep_the_query_as_typed(client):
    body = await search(client, "self-supervsed learning")
    assert body["suggestions"][0] == "self-supervised learning"
    body = await search(client, 'title:"difusion model" -graph')
    assert body["suggestions"][0] == 'title:"diffusion model" -graph'
    html = (await client.get("/search", params={"q": "self-supervsed learning"})).text
    assert (
        'Did you mean <a href="/search?q=self-supervised+learning">self-supervised learning</a>'
        in html
    )


async def test_the_page_shows_search_tips(client):
    html = (await client.get("/search")).text
    assert '<details class="search-tips">' in html and "<summary>Search tips</summary>" in html
    for example in ("graph OR spectral", "graph -neural", "diffus*", "title:diffusion"):
        assert example in html
