"""Links, citations, ratings, TL;DRs and countries on the paper page, /search, its JSON and its
CSV (loader/web/paper_signals.py, plugins/pages.py, plugins/search_page.py).

The catalog: real Paper Copilot records (tests/fixtures/dumps/SOURCE.md) built by the real
loader; every value a page shows is checked against the same file's SQL. A catalog built
before the signals (their columns dropped from a copy) shows pages and searches as before.
"""

import csv
import io
import json
import shutil
import sqlite3
from html import escape

import pytest
import yaml

from loader.web import search_request as search
from loader.web.paper_signals import (
    LINK_LABELS,
    citation_origin,
    rating_text,
    shown_links,
    stored_links,
)

from .conftest import ROOT, second_datasette, served_app, table_json
from .html_tags import parse

asynchronous = pytest.mark.asyncio(loop_scope="session")

# what a catalog built before the signals lacks
SIGNAL_COLUMNS = {
    "papers": (
        "tldr",
        "links",
        "has_code",
        "citations",
        "citations_source",
        "citations_as_of",
        "rating",
        "rating_count",
    ),
    "affiliations": ("country",),
}


@pytest.fixture(scope="session")
def site(signals_catalog, datasette):
    """The served app's Datasette on the signals catalog (`datasette` registered our plugins)."""
    return second_datasette(signals_catalog)


@pytest.fixture(scope="session")
def sql(signals_catalog):
    connection = sqlite3.connect(signals_catalog)
    yield lambda text, params=(): connection.execute(text, params).fetchall()
    connection.close()


def is_paper_link(attributes):
    return attributes.get("class", "").split()[:1] == ["paper-link"]


async def get_json(site, url):
    response = await site.client.get(url)
    assert response.status_code == 200, response.text[:500]
    return response.json()


async def every_result(site, query):
    """Every match of a search, in its order (the JSON export)."""
    body = await get_json(site, f"/search.json?_all=1&{query}")
    assert len(body["results"]) == body["total"]
    return body["results"]


def test_links_keep_their_kinds_order_and_only_http_urls_are_shown():
    links = stored_links(
        json.dumps(
            {
                "code": "https://github.com/a/b",
                "project": "javascript:alert(1)",
                "pdf": "/relative.pdf",
                "site": "https://example.org",
                "oa": " https://x.org/a b",
                "doi": "https://doi.org/10.1/x",
                "arxiv": 1703,
            }
        )
    )
    assert list(links) == ["pdf", "code", "project", "doi", "oa", "site"]
    assert [(link.kind, link.url) for link in shown_links(links)] == [
        ("code", "https://github.com/a/b"),
        ("doi", "https://doi.org/10.1/x"),
    ]
    assert stored_links(None) == stored_links("[1]") == stored_links("{bad") == {}


def test_ratings_and_citation_origins_in_words():
    assert rating_text(6.25, 4) == "Rating 6.25 from 4 reviews"
    assert rating_text(20 / 3, 3) == "Rating 6.67 from 3 reviews"
    assert rating_text(10.0, 1) == "Rating 10 from 1 review"
    assert rating_text(None, 3) is None
    sources = [{"format": "arxiv", "citations": None}, {"format": "paperlists", "citations": 412}]
    assert (
        citation_origin("Google Scholar", "2025-11", sources, 412)
        == "Google Scholar, Paper Copilot list of 2025-11"
    )
    assert citation_origin("Google Scholar", "2025-11", [], 412) == "Google Scholar, as of 2025-11"
    assert citation_origin(None, None, [], 3) == ""


@asynchronous
async def test_the_paper_page_shows_links_citations_rating_tldr_and_countries(site, sql):
    paper_id, links, citations, source, as_of, rating, count, tldr = sql(
        "select id, links, citations, citations_source, citations_as_of, rating, rating_count,"
        " tldr from papers where links is not null and citations is not null"
        " and rating is not null and tldr is not null order by citations desc limit 1"
    )[0]
    html = (await site.client.get(f"/catalog/papers/{paper_id}")).text
    tags = parse(html).tags
    shown = [(a["class"].split()[1], a["href"]) for tag, a in tags if is_paper_link(a)]
    expected = [(f"link-{kind}", url) for kind, url in stored_links(links).items()]
    assert shown == expected and shown
    formats = {row[0] for row in sql("select format from sources")}
    assert formats == {"paperlists"}
    assert (
        f'{citations:,} citations <span class="citations-origin">({source}, Paper Copilot list'
        f" of {as_of})</span>" in html
    )
    assert rating_text(rating, count) in html and f"from {count} reviews" in html
    assert f"TL;DR</abbr>: {escape(tldr, quote=False)}</p>" in html
    for name, country in sql(
        "select affiliations.name, affiliations.country from paper_affiliations join affiliations"
        " on affiliations.id = affiliation_id where paper_id = ? and country is not null",
        [paper_id],
    ):
        assert f'>{escape(name, quote=False)}</a> <span class="country">(' in html
        assert f"{escape(country, quote=False)}</a>)</span>" in html


@asynchronous
async def test_spectral_normalization_as_paper_copilot_lists_it(site, sql):
    """A golden record: ICLR 2018's most cited paper with code in iclr2018.json, dated
    2025-06-02 by sources.yml."""
    paper_id = sql(
        "select id from papers where title = 'Spectral Normalization for Generative"
        " Adversarial Networks'"
    )[0][0]
    html = (await site.client.get(f"/catalog/papers/{paper_id}")).text
    line = html.split('<p class="paper-links">', 1)[1].split("</p>", 1)[0]
    assert [text for text in parse(line).text if text.strip(" ·")] == ["PDF", "Code", "OpenReview"]
    assert 'href="https://github.com/pfnet-research/sngan_projection"' in line
    assert (
        '5,867 citations <span class="citations-origin">(Google Scholar, Paper Copilot list of'
        " 2025-06-02)</span>"
    ) in html
    assert "Rating 7.33 from 3 reviews" in html
    table = (await site.client.get(f"/catalog/papers?id={paper_id}")).text
    cell = table.split('<td class="col-links', 1)[1].split("</td>", 1)[0]
    assert [text for text in parse(cell).text if text.strip(" ·>")][-3:] == [
        "PDF",
        "Code",
        "OpenReview",
    ]
    assert 'href="https://github.com/pfnet-research/sngan_projection"' in cell
    body = await get_json(site, "/search.json?sort=citations&has_code=1&venue=ICLR&size=1")
    assert body["results"][0]["id"] == paper_id
    assert body["results"][0]["citations_as_of"] == "2025-06-02"


@asynchronous
async def test_every_link_kind_a_source_gives_is_shown_in_order(site, sql):
    kinds = [row[0] for row in sql("select distinct kind from paper_links")]
    assert {"pdf", "code", "openreview"} <= set(kinds)
    for kind in kinds:
        paper_id, links = sql(
            "select id, links from papers where json_extract(links, ?) is not null limit 1",
            [f"$.{kind}"],
        )[0]
        html = (await site.client.get(f"/catalog/papers/{paper_id}")).text
        line = html.split('<p class="paper-links">', 1)[1].split("</p>", 1)[0]
        labels = [LINK_LABELS[kind] for kind in stored_links(links)]
        assert [text for text in parse(line).text if text.strip(" ·")] == labels


@asynchronous
async def test_a_paper_without_signals_shows_no_empty_lines(site, sql):
    paper_id = sql(
        "select id from papers where citations is null and rating is null and tldr is null"
        " and links is null limit 1"
    ) or sql("select id from papers where rating is null and tldr is null limit 1")
    html = (await site.client.get(f"/catalog/papers/{paper_id[0][0]}")).text
    assert "Rating " not in html and "TL;DR" not in html


@asynchronous
async def test_hostile_links_and_text_are_escaped_or_left_out(signals_catalog, tmp_path, datasette):
    path = tmp_path / "catalog.db"
    shutil.copy(signals_catalog, path)
    with sqlite3.connect(path) as connection:
        paper_id = connection.execute("select id from papers order by rowid limit 1").fetchone()[0]
        hostile = {
            "pdf": "javascript:alert(1)",
            "code": 'https://github.com/a"><script>alert(1)</script>',
            "project": "data:text/html,<script>alert(1)</script>",
        }
        connection.execute(
            "update papers set links = ?, tldr = ?, citations_source = ?, citations = ?"
            " where id = ?",
            [json.dumps(hostile), "<img src=x onerror=alert(1)>", "<b>GS</b>", 10**9, paper_id],
        )
    site = second_datasette(path)
    html = (await site.client.get(f"/catalog/papers/{paper_id}")).text
    assert "javascript:" not in html and "data:text/html" not in html
    assert "<script>alert" not in html and "<img src=x" not in html and "<b>GS" not in html
    hrefs = [a["href"] for tag, a in parse(html).tags if is_paper_link(a)]
    assert hrefs == ['https://github.com/a"><script>alert(1)</script>']
    table = (await site.client.get(f"/catalog/papers?id={paper_id}")).text
    assert 'href="javascript:' not in table and "<script>alert" not in table
    # the most cited: the first result
    results = (await site.client.get("/search?sort=citations")).text
    first = results.split('<p class="result-signals">', 1)[1].split("</p>", 1)[0]
    assert "1,000,000,000 citations" in first
    assert "javascript:" not in results and "<script>alert" not in results


@asynchronous
async def test_search_results_carry_the_signals_in_html_json_and_csv(site, sql):
    rows = {
        row[0]: row[1:]
        for row in sql(
            "select id, links, citations, citations_source, citations_as_of, rating,"
            " rating_count, tldr from papers"
        )
    }
    results = await every_result(site, "sort=citations")
    assert len(results) == len(rows)
    for result in results:
        links, citations, source, as_of, rating, count, tldr = rows[result["id"]]
        assert result["links"] == stored_links(links)
        assert (result["citations"], result["citations_source"], result["citations_as_of"]) == (
            citations,
            source,
            as_of,
        )
        assert (result["rating"], result["rating_count"], result["tldr"]) == (rating, count, tldr)
    page = (await site.client.get("/search?sort=citations")).text
    first = results[0]
    line = page.split('<p class="result-signals">', 1)[1].split("</p>", 1)[0]
    assert f"{first['citations']:,} citations" in line
    for link in shown_links(first["links"]):
        assert f'href="{escape(link.url)}"' in line and f">{link.label}</a>" in line
    exported = list(
        csv.DictReader(io.StringIO((await site.client.get("/search.csv?sort=citations")).text))
    )
    assert [row["id"] for row in exported] == [result["id"] for result in results]
    for row, result in zip(exported, results):
        for kind in LINK_LABELS:
            assert row[f"link_{kind}"] == result["links"].get(kind, "")
        assert row["citations"] == ("" if result["citations"] is None else str(result["citations"]))
        assert row["citations_as_of"] == (result["citations_as_of"] or "")
        assert row["rating"] == ("" if result["rating"] is None else str(result["rating"]))
        countries = {a["country"] for a in result["affiliations"] if a["country"]}
        assert set(filter(None, row["countries"].split("; "))) == countries


@asynchronous
async def test_sort_by_citations_is_most_cited_first(site, sql):
    expected = [
        row[0]
        for row in sql("select id from papers order by citations is null, citations desc, rowid")
    ]
    assert [result["id"] for result in await every_result(site, "sort=citations")] == expected
    # the pages of the HTML and JSON walk the same order
    walked = []
    for page in (1, 2, 3):
        body = await get_json(site, f"/search.json?sort=citations&size=40&page={page}")
        walked += [result["id"] for result in body["results"]]
    assert walked == expected[: len(walked)]
    word = "learning"
    matching = {
        row[0]
        for row in sql(
            "select papers.id from papers_fts join papers on papers.rowid = papers_fts.rowid"
            " where papers_fts match ?",
            [word],
        )
    }
    in_order = [paper for paper in expected if paper in matching]
    found = await every_result(site, f"q={word}&sort=citations")
    assert [result["id"] for result in found] == in_order
    html = (await site.client.get(f"/search?q={word}")).text
    assert f'href="/search?q={word}&amp;sort=citations">citations</a>' in html


@asynchronous
async def test_the_rating_filter_keeps_papers_rated_at_least_the_bound(site, sql):
    bound = sql(
        "select rating from papers where rating is not null order by rating"
        " limit 1 offset (select count(rating) / 2 from papers)"
    )[0][0]
    expected = sql("select count(*) from papers where rating >= ?", [bound])[0][0]
    body = await get_json(site, f"/search.json?rating_min={bound}&size=100")
    assert body["total"] == expected > 0
    assert all(result["rating"] >= bound for result in body["results"])
    html = (await site.client.get(f"/search?rating_min={bound}")).text
    assert f'name="rating_min" min="0" step="any" inputmode="decimal" value="{bound}"' in html
    assert f"Rating at least: {bound:g}" in html
    refused = await site.client.get("/search.json?rating_min=high")
    assert refused.status_code == 400 and "rating_min must be a number" in refused.text


@asynchronous
async def test_code_and_country_facets_count_as_sql_does(site, sql):
    every_country = None
    for query, where in [
        ("", ""),
        ("rating_min=6", " where papers.rating >= 6"),
        ("venue=ICLR", " where papers.venue = 'ICLR'"),
    ]:
        body = await get_json(site, f"/search.json?{query}")
        has_code = {
            value: count
            for value, count in sql(
                f"select has_code, count(*) from papers{where} group by has_code"
            )
        }
        facets = body["facets"]
        if has_code.get(1):
            assert {item["value"]: item["count"] for item in facets["has_code"]} == has_code
            labels = {item["value"]: item["label"] for item in facets["has_code"]}
            assert labels[1] == "Has code"
        countries = sql(
            "select affiliations.country, count(distinct papers.id) as n from papers"
            " join paper_affiliations on paper_affiliations.paper_id = papers.id"
            " join affiliations on affiliations.id = paper_affiliations.affiliation_id"
            f"{where}{' and' if where else ' where'} affiliations.country is not null"
            " group by affiliations.country order by n desc, affiliations.country"
            f" limit {search.FACET_LIMIT}"
        )
        shown = [(item["value"], item["count"]) for item in facets.get("country", [])]
        assert shown == countries
        every_country = every_country or countries
    country, _ = every_country[0]
    chosen = await get_json(site, f"/search.json?country={country}&has_code=1")
    expected = sql(
        "select count(distinct papers.id) from papers"
        " join paper_affiliations on paper_affiliations.paper_id = papers.id"
        " join affiliations on affiliations.id = paper_affiliations.affiliation_id"
        " where affiliations.country = ? and papers.has_code = 1",
        [country],
    )[0][0]
    assert chosen["total"] == expected


@asynchronous
async def test_code_and_country_facets_wait_with_the_others_past_the_limit(
    signals_catalog, tmp_path, site
):
    metadata = yaml.safe_load((ROOT / "metadata.yml").read_text(encoding="utf-8"))
    metadata.setdefault("plugins", {})["paper-catalog-search"] = {"link_facets_up_to": 5}
    path = tmp_path / "metadata.yml"
    path.write_text(yaml.safe_dump(metadata), encoding="utf-8")
    deferring = served_app(signals_catalog, metadata=path).datasette
    body = await get_json(deferring, "/search.json?q=learning")
    assert body["facets_deferred"] == ["has_code", "country", "affiliation", "author"]
    html = (await deferring.client.get("/search?q=learning")).text
    assert "Count by code, country, affiliation and author</a>" in html
    fragment = (await deferring.client.get("/search/facets?q=learning")).text
    assert "<h2>Code</h2>" in fragment and "<h2>Country</h2>" in fragment
    full = await get_json(site, "/search.json?q=learning")
    assert {"has_code", "country"} <= set(full["facets"])


@asynchronous
async def test_the_papers_table_facets_code_and_sorts_by_citations(site, sql):
    body = await get_json(site, "/catalog/papers.json?_sort_desc=citations&_size=5&_shape=objects")
    top = [row[0] for row in sql("select id from papers order by citations desc, id desc limit 5")]
    assert [row["id"] for row in body["rows"]] == top
    facets = (await table_json(site, "/catalog/papers.json"))["facet_results"]
    assert "has_code" in facets


@pytest.fixture(scope="session")
def catalog_without_signals(signals_catalog, tmp_path_factory):
    """The signals catalog as a build before them: their columns dropped."""
    path = tmp_path_factory.mktemp("no-signals") / "catalog.db"
    shutil.copy(signals_catalog, path)
    with sqlite3.connect(path) as connection:
        for table, columns in SIGNAL_COLUMNS.items():
            indexed = connection.execute(
                "select name from sqlite_master where type = 'index' and tbl_name = ?"
                " and sql is not null",
                [table],
            ).fetchall()
            for (name,) in indexed:
                used = {row[2] for row in connection.execute(f"pragma index_info('{name}')")}
                if used & set(columns):
                    connection.execute(f"drop index [{name}]")
            for column in columns:
                connection.execute(f"alter table {table} drop column {column}")
    return path


@asynchronous
async def test_a_catalog_without_signals_searches_and_shows_pages_as_before(
    catalog_without_signals, datasette
):
    site = second_datasette(catalog_without_signals)
    with sqlite3.connect(catalog_without_signals) as connection:
        paper_id = connection.execute("select id from papers limit 1").fetchone()[0]
    page = await site.client.get(f"/catalog/papers/{paper_id}")
    assert page.status_code == 200 and "paper-links" not in page.text
    body = await get_json(site, "/search.json?q=learning")
    assert body["total"] > 0 and not {"has_code", "country"} & set(body["facets"])
    assert body["results"][0]["citations"] is None and body["results"][0]["links"] == {}
    html = (await site.client.get("/search?q=learning")).text
    assert "sort=citations" not in html and "rating-min" not in html
    for query in ("sort=citations", "rating_min=5", "has_code=1", "country=China"):
        refused = await site.client.get(f"/search.json?{query}")
        assert refused.status_code == 400 and "this catalog has no citations" in refused.text
    facets = (await table_json(site, "/catalog/papers.json"))["facet_results"]
    assert "venue" in facets and "has_code" not in facets
