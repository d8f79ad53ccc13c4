"""How /search reads a query, through the app `paper-catalog serve` runs: lower-case `or` and
`not` are words and say so, `venue:` / `year:` / `status:` / `track:` are the facets' filters
(the same papers, links, JSON and exports), a query with no word to search for is a 400.

The catalog: the real seeds plus 36 real ICLR 2017/2018 and NeurIPS 2017 papers with venue,
year and status (tests/fixtures/search/SOURCE.md).
"""

import csv
import io
import sqlite3
from urllib.parse import parse_qsl, urlsplit

import pytest

from .conftest import second_datasette
from .html_tags import parse

pytestmark = pytest.mark.asyncio(loop_scope="session")


@pytest.fixture(scope="session")
def site(search_catalog, datasette):
    return second_datasette(search_catalog)


@pytest.fixture
def sql(search_catalog):
    connection = sqlite3.connect(search_catalog)
    yield lambda text, params=(): connection.execute(text, params).fetchall()
    connection.close()


async def get_json(site, url, params=None):
    response = await site.client.get(url, params=params)
    assert response.status_code == 200, response.text[:500]
    return response.json()


async def ids(site, params):
    body = await get_json(site, "/search.json", dict(params, size=100))
    assert body["total"] <= 100
    return body["total"], {result["id"] for result in body["results"]}


@pytest.mark.parametrize(
    "typed,parameters",
    [
        ("venue:ICLR", {"venue": "ICLR"}),
        ("venue:iclr", {"venue": "ICLR"}),
        ("year:2017", {"year": "2017"}),
        ("status:Poster", {"status": "Poster"}),
        ("learning venue:NeurIPS", {"q": "learning", "venue": "NeurIPS"}),
        ("learning venue:ICLR YEAR:2018", {"q": "learning", "venue": "ICLR", "year": "2018"}),
    ],
)
async def test_a_filter_word_gives_exactly_the_papers_of_its_facet_filter(
    site, sql, typed, parameters
):
    total, found = await ids(site, {"q": typed})
    assert (total, found) == await ids(site, parameters)
    assert total > 0
    if typed == "venue:ICLR":
        assert found == {row[0] for row in sql("select id from papers where venue = 'ICLR'")}


async def test_filter_words_and_parameters_of_one_filter_are_ored(site, sql):
    total, _ = await ids(site, {"q": "venue:ICLR", "venue": "NeurIPS"})
    expected = sql("select count(*) from papers where venue in ('ICLR', 'NeurIPS')")[0][0]
    assert total == expected


async def test_filter_words_say_how_they_were_applied(site):
    body = await get_json(site, "/search.json", {"q": "venue:iclr year:2017 graph"})
    assert body["notes"] == [
        "venue:iclr is a filter: applied as venue ICLR.",
        "year:2017 is a filter: applied.",
    ]
    nowhere = await get_json(site, "/search.json", {"q": "venue:Nowhere"})
    assert nowhere["total"] == 0
    assert nowhere["notes"] == ["venue:Nowhere is a filter: applied; no paper has this venue."]
    assert (await get_json(site, "/search.json", {"q": "graph"}))["notes"] == []


async def test_lower_case_operators_are_words_and_the_page_says_so(site):
    body = await get_json(site, "/search.json", {"q": "learning or imitation"})
    assert body["notes"] == ["Searching for the word or: write OR for the operator."]
    html = (await site.client.get("/search", params={"q": "learning not imitation"})).text
    notes = html.split('<ul class="search-notes">', 1)[1].split("</ul>", 1)[0]
    assert "Searching for the word not: write NOT for the operator." in notes
    # under the search box, before the results
    assert html.index("search-notes") < html.index('id="results-heading"')
    both = await get_json(site, "/search.json", {"q": "learning or policy not imitation"})
    assert both["notes"] == [
        "Searching for the words or and not: write OR / NOT for the operators."
    ]
    assert "search-notes" not in (await site.client.get("/search?q=learning+OR+policy")).text


async def test_the_page_links_a_filter_word_as_its_facet_would(site):
    response = await site.client.get("/search", params={"q": "learning venue:ICLR"})
    html = response.text
    assert response.status_code == 200
    assert "venue:ICLR is a filter: applied." in html
    tags = parse(html).tags
    chip = next(a for tag, a in tags if a.get("aria-label") == "Remove filter Venue: ICLR")
    assert parse_qsl(urlsplit(chip["href"]).query) == [("q", "learning")]
    # the box keeps the query as typed, with no hidden venue beside it (q holds it)
    assert 'value="learning venue:ICLR"' in html
    search_box = html[html.index('<form class="search-box') :]
    assert 'type="hidden" name="venue"' not in search_box[: search_box.index("</form>")]
    # the next page and the exports carry the filter as a parameter
    exports = [a["href"] for tag, a in tags if "/search.csv" in a.get("href", "")]
    assert exports == ["/search.csv?q=learning&venue=ICLR"]


async def test_a_suggestion_keeps_the_filter_words_in_q_and_not_twice(site):
    html = (await site.client.get("/search", params={"q": "lerning venue:ICLR"})).text
    assert "Did you mean" in html
    first = next(a["href"] for tag, a in parse(html).tags if "learning" in a.get("href", ""))
    assert parse_qsl(urlsplit(first).query) == [("q", "learning venue:ICLR")]


async def test_exports_of_a_filter_word_hold_its_papers_and_are_named_after_it(site):
    params = {"q": "learning venue:ICLR year:2018"}
    total = (await get_json(site, "/search.json", params))["total"]
    response = await site.client.get("/search.csv", params=params)
    assert response.headers["content-disposition"] == (
        'attachment; filename="papers-learning-iclr-2018.csv"'
    )
    rows = list(csv.DictReader(io.StringIO(response.text)))
    assert len(rows) == total > 0
    assert {(row["venue"], row["year"]) for row in rows} == {("ICLR", "2018")}
    everything = await get_json(site, "/search.json", dict(params, _all="1"))
    assert everything["total"] == len(everything["results"]) == total


@pytest.mark.parametrize("q", ["\U0001f916", '"', '""', "-", "(", "'", "— ·"])
async def test_a_query_with_no_word_is_a_400_that_says_so(site, q):
    for path in ("/search", "/search.json", "/search.csv"):
        response = await site.client.get(path, params={"q": q})
        assert response.status_code == 400, (path, q)
        assert "holds no word to search for" in response.text, (path, response.text[:300])
    html = (await site.client.get("/search", params={"q": q})).text
    assert 'role="alert"' in html and 'id="search-q"' in html


async def test_an_empty_query_lists_every_paper(site, sql):
    for params in ({}, {"q": ""}, {"q": "   "}):
        body = await get_json(site, "/search.json", params)
        assert body["total"] == sql("select count(*) from papers")[0][0]
        assert body["notes"] == []


@pytest.mark.parametrize(
    "q,message",
    [("venue: ICLR", "venue: needs a value"), ("year:soon", "year must be a whole number")],
)
async def test_a_filter_word_that_cannot_apply_is_a_400(site, q, message):
    for path in ("/search", "/search.json"):
        response = await site.client.get(path, params={"q": q})
        assert response.status_code == 400 and message in response.text
