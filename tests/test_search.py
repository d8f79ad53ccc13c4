"""/search, /search.json and its exports, through Datasette's own client.

The catalog: the real seeds (no venue or year) plus 36 real ICLR 2017/2018 and NeurIPS 2017
papers with venue, year and status (tests/fixtures/search/SOURCE.md). Every total and facet
count is checked against SQL run directly on the same file.
"""

import csv
import io
import json
import sqlite3

import pytest
import yaml
from datasette.database import QueryInterrupted

from loader.web import search_request as search
from loader.web import search_results as search_run

from .conftest import ROOT, second_datasette, served_app

pytestmark = pytest.mark.asyncio(loop_scope="session")


@pytest.fixture(scope="session")
def site(search_catalog, datasette):
    """A second Datasette on the search catalog; `datasette` has registered our plugins."""
    return second_datasette(search_catalog)


@pytest.fixture
def sql(search_catalog):
    connection = sqlite3.connect(search_catalog)
    yield lambda text, params=(): connection.execute(text, params).fetchall()
    connection.close()


async def get_json(site, url):
    response = await site.client.get(url)
    assert response.status_code == 200, response.text[:500]
    return response.json()


def matching(sql, term):
    return {
        row[0]
        for row in sql(
            "select papers.id from papers_fts join papers on papers.rowid = papers_fts.rowid"
            " where papers_fts match ?",
            [f'"{term}"'],
        )
    }


# --- the parameters -------------------------------------------------------------------------


# --- totals, filters, facets ----------------------------------------------------------------


async def test_total_and_results_match_sql(site, sql):
    body = await get_json(site, "/search.json?q=learning&size=100")
    expected = matching(sql, "learning")
    assert body["total"] == len(expected) > 20
    assert {result["id"] for result in body["results"]} == expected


async def test_no_query_lists_every_paper_newest_first(site, sql):
    body = await get_json(site, "/search.json?size=100")
    assert body["total"] == sql("select count(*) from papers")[0][0]
    years = [result["year"] for result in body["results"]]
    dated = [year for year in years if year is not None]
    assert dated == sorted(dated, reverse=True)
    assert years.index(None) == len(dated), "papers with no year sort last"
    assert all(result["snippet"] is None for result in body["results"])


async def test_values_of_one_filter_are_ored_and_filters_anded(site, sql):
    one = await get_json(site, "/search.json?venue=ICLR&year=2017&year=2018&size=100")
    expected = sql("select count(*) from papers where venue = 'ICLR' and year in (2017, 2018)")
    assert one["total"] == expected[0][0] > 0
    both = await get_json(site, "/search.json?venue=ICLR&venue=NeurIPS&size=100")
    assert (
        both["total"] == sql("select count(*) from papers where venue in ('ICLR','NeurIPS')")[0][0]
    )
    assert {result["venue"] for result in both["results"]} == {"ICLR", "NeurIPS"}


async def test_facet_counts_are_over_the_whole_match_set(site, sql):
    body = await get_json(site, "/search.json?q=learning&size=1")
    expected = {}
    for paper_id in matching(sql, "learning"):
        venue = sql("select venue from papers where id = ?", [paper_id])[0][0]
        expected[venue] = expected.get(venue, 0) + 1
    assert {item["value"]: item["count"] for item in body["facets"]["venue"]} == expected
    counts = [item["count"] for item in body["facets"]["venue"]]
    assert counts == sorted(counts, reverse=True)


async def test_a_facets_own_filter_is_left_out_of_its_counts(site):
    body = await get_json(site, "/search.json?venue=ICLR")
    venues = {item["value"]: item["count"] for item in body["facets"]["venue"]}
    assert venues["NeurIPS"] > 0 and venues["ICLR"] == body["total"]
    years = {item["value"] for item in body["facets"]["year"]}
    assert years == {2017, 2018}, "other facets are narrowed by the venue"


async def test_facet_values_keep_their_types_and_nulls(site):
    body = await get_json(site, "/search.json")
    assert all(isinstance(item["value"], int) for item in body["facets"]["year"] if item["value"])
    assert None in {item["value"] for item in body["facets"]["year"]}, "seed papers have no year"
    assert all(isinstance(item["value"], int) for item in body["facets"]["author"])
    assert len(body["facets"]["author"]) <= 20


async def test_a_value_that_exists_nowhere_is_listed_with_count_zero(site):
    body = await get_json(site, "/search.json?venue=Nowhere&year=1999")
    assert body["total"] == 0 and body["results"] == []
    assert {"value": "Nowhere", "label": "Nowhere", "count": 0} in body["facets"]["venue"]
    assert {"value": 1999, "label": "1999", "count": 0} in body["facets"]["year"]


async def test_empty_value_filters_papers_without_one(site, sql):
    body = await get_json(site, "/search.json?venue=&size=100")
    assert body["total"] == sql("select count(*) from papers where venue is null")[0][0] == 90


async def test_author_and_affiliation_filters(site, sql):
    author_id = sql("select id from authors where name = 'Huishuai Zhang'")[0][0]
    body = await get_json(site, f"/search.json?author={author_id}&affiliation=pku&size=100")
    expected = sql(
        "select count(*) from papers where id in (select paper_id from paper_authors"
        " where author_id = ?) and id in (select paper_id from paper_affiliations"
        " join affiliations on affiliations.id = affiliation_id where slug = 'pku')",
        [author_id],
    )[0][0]
    assert body["total"] == expected > 0
    assert {"slug": "pku", "name": "PKU", "country": None} in body["results"][0]["affiliations"]


async def test_author_names_are_searched(site, sql):
    body = await get_json(site, "/search.json?q=abbeel+imitation")
    assert body["total"] >= 1
    assert any(
        author["name"] == "Pieter Abbeel"
        for result in body["results"]
        for author in result["authors"]
    )


async def test_a_paper_whose_title_equals_the_query_comes_first(site):
    body = await get_json(site, "/search.json?q=third+person+imitation+learning!")
    assert body["results"][0]["title"] == "Third Person Imitation Learning"


# --- the facet table path against plain SQL ------------------------------------------------


def plain_filter(name, values, params):
    """A filter on `papers` written out here, apart from loader/web/search_request.py."""
    if name == "author":
        params.extend(values)
        marks = ", ".join("?" * len(values))
        return f"id in (select paper_id from paper_authors where author_id in ({marks}))"
    if name == "affiliation":
        params.extend(values)
        marks = ", ".join("?" * len(values))
        return (
            "id in (select paper_id from paper_affiliations join affiliations"
            f" on affiliations.id = affiliation_id where slug in ({marks}))"
        )
    given = [value for value in values if value is not None]
    params.extend(given)
    tests = [f"{name} in ({', '.join('?' * len(given))})"] if given else []
    return " or ".join(tests + ([f"{name} is null"] if None in values else []))


def plain_facets(sql, request):
    """The total and each column facet counted straight from `papers`, one statement each."""

    def where(leave_out=None):
        params, tests = [], []
        if request.expression:
            tests.append("rowid in (select rowid from papers_fts where papers_fts match ?)")
            params.append(request.expression)
        for name, values in request.filters.items():
            if name != leave_out:
                tests.append("(" + plain_filter(name, values, params) + ")")
        return (" where " + " and ".join(tests) if tests else ""), params

    clause, params = where()
    total = sql(f"select count(*) from papers{clause}", params)[0][0]
    facets = {}
    for name in search.COLUMN_FILTERS:
        clause, params = where(leave_out=name)
        # years newest first; every other facet most papers first
        order = f"count(*) desc, {name} is null, {name}"
        if name == "year":
            order = "year is null, year desc"
        rows = sql(
            f"select {name}, count(*) from papers{clause} group by {name}"
            f" order by {order} limit {search.FACET_LIMIT}",
            params,
        )
        listed = [tuple(row) for row in rows]
        for value in request.chosen(name):
            if value not in {row[0] for row in listed}:
                clause, params = where(leave_out=name)
                test = f"{name} is null" if value is None else f"{name} = ?"
                extra = [] if value is None else [value]
                count = sql(
                    f"select count(*) from papers{clause}{' and' if clause else ' where'} {test}",
                    params + extra,
                )[0][0]
                listed.append((value, count))
        # a facet listing no value but "(none)", none chosen, narrows nothing: left out
        if any(value is not None for value, _ in listed) or request.chosen(name):
            facets[name] = listed
    return total, facets


def facet_requests(sql):
    author = sql("select id from authors where name = 'Huishuai Zhang'")[0][0]
    track, area = sql("select track, area from papers group by track order by count(*) desc")[0]
    filters = [
        [],
        [("venue", "ICLR")],
        [("venue", "ICLR"), ("year", "2018")],
        [("venue", "NeurIPS"), ("venue", ""), ("status", "Poster")],
        [("track", track), ("area", area)],
        [("area", area), ("year", "1999")],
        [("author", str(author))],
        [("affiliation", "pku"), ("venue", "")],
        [("year", "2017"), ("year", "2018"), ("status", "Oral")],
    ]
    for q in ("", "learning", "imitation", "reinforcement learning", "zzzqqq"):
        for chosen in filters:
            yield [("q", q)] + chosen


async def test_column_facets_and_total_equal_plain_sql(search_catalog, sql):
    """Seeds and real conference papers: every total and the venue, year, status, area and
    track facets from one pass over the facet table equal GROUP BYs over `papers`."""
    connection = sqlite3.connect(search_catalog)
    checked = 0
    for pairs in facet_requests(sql):
        request = search.parse_search(pairs)
        total, facets = search_run.count_column_facets(connection, request)
        expected_total, expected = plain_facets(sql, request)
        assert total == expected_total == search_run.count_total(connection, request), pairs
        assert set(facets) == set(expected), pairs
        for name, rows in expected.items():
            assert [(item["value"], item["count"]) for item in facets[name]] == rows, (name, pairs)
        checked += bool(total)
    assert checked > 20


async def test_years_newest_first_and_no_facet_of_none_alone(site):
    """The real conference papers: 2017 has the most, 2018 is the newest; none of ICLR's has a
    track or an area, so those facets would list "(none)" alone."""
    data = await get_json(site, "/search.json?venue=ICLR")
    assert [item["value"] for item in data["facets"]["year"]] == [2018, 2017]
    assert "status" in data["facets"]
    assert "track" not in data["facets"] and "area" not in data["facets"]
    # a chosen "(none)" stays listed, so it can be taken back
    data = await get_json(site, "/search.json?venue=ICLR&track=")
    assert [item["value"] for item in data["facets"]["track"]] == [None]


async def test_the_seeds_facets_equal_plain_sql(seed_catalog, query):
    connection = sqlite3.connect(seed_catalog)
    for q in ("", "learning", "optimization"):
        request = search.parse_search([("q", q), ("area", "Deep Learning")])
        total, facets = search_run.count_column_facets(connection, request)
        expected_total, expected = plain_facets(query, request)
        assert total == expected_total > 0
        assert {n: [(i["value"], i["count"]) for i in items] for n, items in facets.items()} == {
            n: rows for n, rows in expected.items()
        }


async def test_a_facet_pass_past_its_time_limit_still_gives_the_exact_total(
    search_catalog, monkeypatch
):
    def too_slow(conn, request, combos=None):
        raise QueryInterrupted(None, "", {})

    connection = sqlite3.connect(search_catalog)
    request = search.parse_search([("q", "learning"), ("venue", "ICLR")])
    expected = search_run.answer_search(connection, request)
    monkeypatch.setattr(search_run, "count_column_facets", too_slow)
    answer = search_run.answer_search(connection, request)
    assert answer.total == expected.total > 0
    assert [r["id"] for r in answer.results] == [r["id"] for r in expected.results]
    assert answer.timed_out == list(search.COLUMN_FILTERS)
    assert set(answer.facets) == {"venue", "author"}, "a chosen facet stays, with no counts"
    assert answer.facets["venue"] == [] and answer.facets["author"] == expected.facets["author"]


# --- author and affiliation facets past the limit -------------------------------------------


@pytest.fixture(scope="session")
def deferring_site(search_catalog, tmp_path_factory):
    """The search catalog with the author and affiliation facets left for a second request
    past 5 matches."""
    metadata = yaml.safe_load((ROOT / "metadata.yml").read_text(encoding="utf-8"))
    metadata.setdefault("plugins", {})["paper-catalog-search"] = {"link_facets_up_to": 5}
    path = tmp_path_factory.mktemp("deferring") / "metadata.yml"
    path.write_text(yaml.safe_dump(metadata), encoding="utf-8")
    return served_app(search_catalog, metadata=path).datasette


async def test_a_large_match_set_leaves_author_facets_for_a_second_request(site, deferring_site):
    full = await get_json(site, "/search.json?q=learning")
    assert {"author", "affiliation"} <= set(full["facets"]) and "facets_deferred" not in full
    deferred = await get_json(deferring_site, "/search.json?q=learning")
    assert deferred["total"] == full["total"] > 5
    assert deferred["facets_deferred"] == ["affiliation", "author"]
    assert "author" not in deferred["facets"] and "affiliation" not in deferred["facets"]
    assert {k: v for k, v in full["facets"].items() if k not in ("author", "affiliation")} == (
        deferred["facets"]
    )
    asked = await get_json(deferring_site, "/search.json?q=learning&_facets=all")
    assert asked["facets"] == full["facets"] and "facets_deferred" not in asked
    few = await get_json(deferring_site, "/search.json?q=imitation+abbeel")
    assert few["total"] <= 5 and "author" in few["facets"]


async def test_the_deferred_facets_page_and_fragment(site, deferring_site):
    full = (await get_json(site, "/search.json?q=learning"))["facets"]
    html = (await deferring_site.client.get("/search?q=learning&page=2")).text
    assert 'data-url="/search/facets?q=learning"' in html
    assert 'href="/search?q=learning&amp;page=2&amp;_facets=all"' in html
    script_url = "/-/static-plugins/paper-catalog/search.js"
    assert f'<script src="{script_url}" defer></script>' in html
    assert "<h2>Author</h2>" not in html
    counted = (await deferring_site.client.get("/search?q=learning&_facets=all")).text
    fragment = await deferring_site.client.get("/search/facets?q=learning")
    assert fragment.status_code == 200 and "<html" not in fragment.text
    for text in (counted, fragment.text):
        assert "<h2>Author</h2>" in text and "<h2>Affiliation</h2>" in text
        top = full["author"][0]
        assert f'<a href="/search?q=learning&amp;author={top["value"]}">' in text
        assert f'<span class="count">{top["count"]:,}</span>' in text
    assert "<h2>Venue</h2>" not in fragment.text, "the fragment holds only what was left out"
    script = await deferring_site.client.get(script_url)
    assert script.headers["content-type"].startswith(("text/javascript", "application/javascript"))
    assert "data-url" in script.text or "dataset.url" in script.text
    bad = await deferring_site.client.get("/search/facets?year=soon")
    assert bad.status_code == 400 and "year" in bad.text


# --- pages and sorts ------------------------------------------------------------------------


async def test_pages_are_stable_and_disjoint(site):
    everything = await get_json(site, "/search.json?q=learning&size=100")
    first = await get_json(site, "/search.json?q=learning&size=7")
    second = await get_json(site, "/search.json?q=learning&size=7&page=2")
    ids = [result["id"] for result in everything["results"]]
    assert [r["id"] for r in first["results"] + second["results"]] == ids[:14]
    beyond = await get_json(site, "/search.json?q=learning&size=7&page=9999")
    assert beyond["page"] == -(-everything["total"] // 7)
    assert [r["id"] for r in beyond["results"]] == ids[(beyond["page"] - 1) * 7 :][:7]


async def test_oldest_first_puts_papers_without_a_year_last(site):
    body = await get_json(site, "/search.json?sort=oldest&size=100")
    years = [result["year"] for result in body["results"]]
    dated = [year for year in years if year is not None]
    assert dated == sorted(dated) and years[: len(dated)] == dated


async def test_more_matches_than_can_be_ranked_come_newest_first_and_say_so(site, sql, monkeypatch):
    ranked = await get_json(site, "/search.json?q=learning&size=100")
    newest = await get_json(site, "/search.json?q=learning&size=100&sort=newest")
    assert "unranked" not in ranked and ranked["results"] != newest["results"]
    monkeypatch.setattr(search, "RANKED_MATCHES_MAX", ranked["total"] - 1)
    for url in (
        "/search.json?q=learning&size=100",
        "/search.json?q=learning&size=100&sort=relevance",
    ):
        body = await get_json(site, url)
        assert body["unranked"] is True
        assert body["results"] == newest["results"] and body["total"] == ranked["total"]
        assert {result["id"] for result in body["results"]} == matching(sql, "learning")
    # asked for in another order, or few enough matches: as asked
    assert "unranked" not in await get_json(site, "/search.json?q=learning&sort=oldest")
    assert "unranked" not in await get_json(site, "/search.json?q=imitation")
    html = (await site.client.get("/search?q=learning")).text
    assert "Too many papers match to rank them by relevance: newest first." in html
    assert '<strong aria-current="true">newest</strong>' in html
    assert "Too many papers match" not in (await site.client.get("/search?q=imitation")).text


@pytest.mark.parametrize(
    "url,message",
    [
        ("/search.json?page=abc", "page"),
        ("/search.json?size=ten", "size"),
        ("/search.json?sort=best", "sort"),
        ("/search?sort=best", "sort"),
        ("/search.csv?year=soon", "year"),
    ],
)
async def test_client_mistakes_are_400_with_a_message(site, url, message):
    response = await site.client.get(url)
    assert response.status_code == 400
    assert message in response.text


@pytest.mark.parametrize(
    "q", ["a:b", "NEAR(a b)", "^a", "{label}:x", "\x00", "é" * 300, "x\ny", "graph '"]
)
async def test_hostile_queries_answer_200(site, q):
    for path in ("/search", "/search.json", "/search.csv", "/search.bib"):
        response = await site.client.get(path, params={"q": q})
        assert response.status_code == 200, (path, q, response.text[:300])


@pytest.mark.parametrize(
    "q,message",
    [("AND", "AND needs a word"), ("OR NOT", "OR needs a word"), ("*", "prefix"), ("-a", "only")],
)
async def test_queries_the_syntax_cannot_search_are_400_everywhere(site, q, message):
    for path in ("/search", "/search.json", "/search.csv", "/search.bib", "/search/facets"):
        response = await site.client.get(path, params={"q": q})
        assert response.status_code == 400, (path, q)
        assert message in response.text, (path, q, response.text[:300])


# --- exports --------------------------------------------------------------------------------


async def test_every_export_holds_every_match(site):
    total = (await get_json(site, "/search.json?q=learning"))["total"]
    csv_response = await site.client.get("/search.csv?q=learning")
    rows = list(csv.DictReader(io.StringIO(csv_response.text)))
    assert len(rows) == total
    assert list(rows[0]) == [
        "id", "title", "label", "authors", "venue", "year", "status", "track",
        "affiliations", "url", "countries", "link_pdf", "link_code", "link_project",
        "link_openreview", "link_arxiv", "link_doi", "link_oa", "citations",
        "citations_source", "citations_as_of", "rating", "rating_count", "tldr", "abstract",
    ]  # fmt: skip
    assert "\ue000" not in csv_response.text and "\ue001" not in csv_response.text
    bib = (await site.client.get("/search.bib?q=learning")).text
    assert bib.count("\n@") + bib.startswith("@") == total
    everything = json.loads((await site.client.get("/search.json?q=learning&_all=1")).text)
    assert everything["total"] == len(everything["results"]) == total
    ordered = (await get_json(site, "/search.json?q=learning&size=100"))["results"]
    assert [row["id"] for row in rows] == [result["id"] for result in ordered]


async def test_exports_download_named_after_the_search(site):
    for extension, query in (("csv", ""), ("bib", ""), ("json", "&_all=1")):
        url = f"/search.{extension}?q=imitation&year=2018&venue=ICLR{query}"
        response = await site.client.get(url)
        assert response.status_code == 200
        assert response.headers["content-disposition"] == (
            f'attachment; filename="papers-imitation-iclr-2018.{extension}"'
        )
    page = (await site.client.get("/search?q=learning")).text
    assert 'href="/search.csv?q=learning" download' in page


async def test_csv_authors_are_names(site):
    text = (await site.client.get("/search.csv?q=imitation+abbeel")).text
    row = next(csv.DictReader(io.StringIO(text)))
    assert "Pieter Abbeel" in row["authors"].split("; ")
    assert row["venue"] in ("ICLR", "NeurIPS") and row["year"] in ("2017", "2018")


# --- the page -------------------------------------------------------------------------------


async def test_the_page_links_results_authors_and_facets(site):
    response = await site.client.get("/search?q=imitation&venue=ICLR")
    html = response.text
    assert response.status_code == 200
    assert "<title>imitation – Search papers</title>" in html
    assert 'href="/catalog/papers/' in html and 'href="/catalog/authors/' in html
    assert "<mark>" in html
    assert 'aria-label="Remove filter Venue: ICLR"' in html
    assert "Custom SQL" not in html


async def test_zero_results_say_so_and_offer_no_download(site):
    html = (await site.client.get("/search?q=zzzzqqq")).text
    assert "No papers match" in html
    assert "Download all" not in html and "/search.csv" not in html
    some = (await site.client.get("/search?q=learning")).text
    assert "Download all" in some and "/search.csv" in some


# --- BibTeX ---------------------------------------------------------------------------------


async def test_zero_results_suggest_words_the_catalog_uses(site):
    html = (await site.client.get("/search?q=polciy+gradeint")).text
    assert 'Did you mean <a href="/search?q=policy+gradient">policy gradient</a>' in html


async def test_a_paper_page_shows_its_venue_and_each_versions_own(site, sql):
    paper_id, venue, year = sql(
        "select id, venue, year from papers where venue = 'ICLR' and status is not null limit 1"
    )[0]
    html = (await site.client.get(f"/catalog/papers/{paper_id}")).text
    assert (
        f'<a href="/search?venue={venue}">{venue}</a> <a href="/search?year={year}">{year}</a>'
        in html
    )
    assert f"; {venue} {year}" in html, "the version's own venue and year in Found in"
