"""Titles' LaTeX on real records (tests/fixtures/dumps/latex_titles/, see dumps/SOURCE.md, and the
arXiv sample): read into plain text for the search index and the labels, rendered on pages;
and math whose source doubles its backslashes read as the macros it names."""

import json
import re
import sqlite3

import pytest

from loader.build.catalog import build_catalog

from .conftest import FIXTURES, served_app

LATEX_TITLES = FIXTURES / "dumps" / "latex_titles"
ARXIV = FIXTURES / "dumps" / "arxiv" / "arxiv-metadata-oai-snapshot.json"
# no real title of our sources holds \textit{} (dumps/SOURCE.md): this one record is ours, in the
# shape of a real JSON Lines record
TEXTIT = {
    "title": r"An \textit{in vivo} Study of \emph{Sparse} Coding",
    "authors": ["Ann Lee", "Bo Chen"],
    "abstract": "We study sparse coding of natural images in the visual cortex of cats.",
    "venue": "ICML",
    "year": 2020,
}


@pytest.fixture(scope="module")
def catalog(tmp_path_factory):
    folder = tmp_path_factory.mktemp("latex-titles")
    ours = folder / "textit.jsonl"
    ours.write_text(json.dumps(TEXTIT) + "\n", encoding="utf-8")
    db = folder / "catalog.db"
    build_catalog([*sorted(LATEX_TITLES.glob("*.json")), ARXIV, ours], db)
    return db


@pytest.fixture(scope="module")
def client(catalog):
    return served_app(catalog).datasette.client


def labels(catalog):
    with sqlite3.connect(catalog) as connection:
        return dict(connection.execute("select title, label from papers where title is not null"))


def paper_id(catalog, title_start):
    with sqlite3.connect(catalog) as connection:
        (found,) = connection.execute(
            "select id from papers where title like ? || '%'", [title_start]
        ).fetchone()
    return found


def test_labels_are_titles_read_as_plain_text(catalog):
    found = labels(catalog)

    def by_start(start):
        (label,) = [label for title, label in found.items() if title.startswith(start)]
        return label

    assert by_start(r"$\mathcal{X}$-Armed Bandi") == (
        "X-Armed Bandits: Optimizing Quantiles, CVaR and Other Risks"
    )
    assert by_start("``Factual'' or ``Emotion").startswith("“Factual” or “Emotional”: Stylized")
    assert by_start("Relational Gating for ''W") == "Relational Gating for “What If” Reasoning"
    assert by_start("$h$-DBSCAN: A simple fas").startswith("h-DBSCAN: A simple")
    assert by_start(r"Ordered $\mathcal{V}$-inf").startswith("Ordered V-information Growth")
    assert by_start(r"$q\texttt{POTS}$").startswith("qPOTS: Efficient Batch")
    assert by_start("Placeholder Substructures III").endswith(
        "A Bit-String-Driven “Recipe Theory” for Infinite-Dimensional Zero-Divisor Spaces"
    )
    assert by_start(r"From dyadic $\Lambda_{\al") == "From dyadic Λ_α to Λ_α"
    assert by_start(r"An \textit{in vivo} Study") == "An in vivo Study of Sparse Coding"
    marks = re.compile(r"[\\$`{}]|''")
    assert [label for label in found.values() if marks.search(label)] == []


@pytest.mark.asyncio
@pytest.mark.parametrize("word", ["textit", "emph", "mathcal", "Lambda"])
async def test_markup_words_find_no_paper(client, word):
    response = await client.get(f"/search.json?q={word}")
    assert response.status_code == 200
    assert response.json()["total"] == 0


@pytest.mark.asyncio
async def test_the_words_of_a_title_with_markup_find_it(client, catalog):
    body = (await client.get("/search.json?q=vivo+sparse")).json()
    assert [result["label"] for result in body["results"]] == ["An in vivo Study of Sparse Coding"]
    body = (await client.get('/search.json?q="recipe+theory"')).json()
    assert [result["id"] for result in body["results"]] == [
        paper_id(catalog, "Placeholder Substructures III")
    ]


@pytest.mark.asyncio
async def test_pages_render_the_titles_markup(client, catalog):
    bandits = paper_id(catalog, r"$\mathcal{X}$")
    page = (await client.get(f"/catalog/papers/{bandits}")).text
    heading = re.search(r'<h1 class="page-heading">(.*?)</h1>', page, re.DOTALL).group(1)
    assert heading.startswith("<math") and "𝒳" in heading and "mathcal" not in heading
    assert "<title>X-Armed Bandits: Optimizing Quantiles" in page
    textit = paper_id(catalog, r"An \textit")
    page = (await client.get(f"/catalog/papers/{textit}")).text
    assert '<h1 class="page-heading">An <em>in vivo</em> Study of <em>Sparse</em> Coding</h1>' in (
        page
    )
    # search results
    page = (await client.get("/search?q=bandits+quantiles")).text
    title = re.search(r'<h3 class="result-title">(.*?)</h3>', page, re.DOTALL).group(1)
    assert "<math" in title and "mathcal" not in title
    # an author page's list, and the papers table's label cells
    author = (await client.get("/catalog/authors.json?name=Léonard+Torossian&_shape=array")).json()
    page = (await client.get(f"/catalog/authors/{author[0]['id']}")).text
    item = re.search(rf'<a href="[^"]*/papers/{bandits}">(.*?)</a>', page, re.DOTALL).group(1)
    assert item.startswith("<math") and "Armed Bandits" in item
    page = (await client.get("/catalog/papers?_search=vivo")).text
    assert "An <em>in vivo</em> Study" in page


def test_doubled_backslashes_in_math_read_as_macros(catalog):
    with sqlite3.connect(catalog) as connection:
        texts = dict(
            connection.execute(
                "select title, abstract_text from papers where title in (?, ?, ?)",
                [
                    "Surrogate regret bounds for generalized classification performance metrics",
                    "OrbitGrasp: SE(3)-Equivariant Grasp Learning",
                    (
                        "Ordered $\\mathcal{V}$-information Growth: A Fresh Perspective on "
                        "Shared Information"
                    ),
                ],
            )
        )
    assert len(texts) == 3
    joined = " ".join(texts.values())
    # the source's `$F_\\beta$`, `$\\hat{\\theta}$`, `$\\mathrm{SE}(3)$`, `$\\hat I_{...}$`
    assert "F_β" in joined and "θ̂" in joined and "SE(3)" in joined and "Î_" in joined
    assert not re.search(r"\b(beta|theta|hat|mathrm|rightarrow)\b", joined)


@pytest.mark.asyncio
async def test_doubled_backslashes_render_as_math(client, catalog):
    surrogate = paper_id(catalog, "Surrogate regret bounds")
    page = (await client.get(f"/catalog/papers/{surrogate}")).text
    assert "<mi>β</mi>" in page and "<mi>θ</mi>" in page
    assert not re.search(r"<mi>[a-z]</mi><mi>[a-z]</mi><mi>[a-z]</mi><mi>[a-z]</mi>", page)
