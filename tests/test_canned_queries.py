"""Every canned query in metadata.yml: conventions, odd input through Datasette, golden facts
from the seeds, and query plans that stay index-only where a page runs them per request."""

import re
import sqlite3
from collections import Counter
from urllib.parse import urlencode

import pytest
import yaml
from datasette.utils import escape_fts

from loader.rules.names import name_key

from .conftest import ROOT

METADATA = yaml.safe_load((ROOT / "metadata.yml").read_text(encoding="utf-8"))
QUERIES = METADATA["databases"]["catalog"]["queries"]
LLM_TRACK = "Deep Learning · Large Language Models"
NORMUON = "c0c29010aab3dfd2"
MATCH_START, MATCH_END = "\ue000", "\ue001"
ODD_INPUTS = [
    "",
    " ",
    '"',
    '""',
    "-",
    "*",
    "AND",
    "OR NOT",
    "sock-puppet",
    '"unbalanced',
    'large "language',
    '"large language models"',
    "NEAR(a b)",
    "col:value",
    "^start",
    "'; drop table papers; --",
    '"a\nb"',
    "a\x00b",
    "<script>alert(1)</script>",
    "😀 Döring 等",
    "x" * 2000,
]
SAMPLES = {"q": "reasoning", "author_id": "Huishuai Zhang", "paper_id": NORMUON}
# the queries a page runs on every request: they must stay index-only at 1M papers
PER_REQUEST = ["search", "related_papers", "papers_by_author", "coauthors"]


def query_url(name, params, extension=""):
    return f"/catalog/{name}{extension}?{urlencode(params)}"


async def get_json(datasette, name, **params):
    response = await datasette.client.get(query_url(name, {**params, "_shape": "objects"}, ".json"))
    assert response.status_code == 200, response.text
    data = response.json()
    assert data["ok"], data
    return data["rows"]


@pytest.fixture
def connection(seed_catalog):
    """The seed catalog as Datasette opens it, with escape_fts and name_key registered."""
    connection = sqlite3.connect(f"file:{seed_catalog}?mode=ro", uri=True)
    connection.create_function("escape_fts", 1, escape_fts)
    connection.create_function("name_key", 1, name_key)  # as plugins/names.py does
    yield connection
    connection.close()


def named_parameters(sql):
    return set(re.findall(r"(?<![:\w]):(\w+)", sql))


def without_literals(sql):
    return re.sub(r"--[^\n]*", "", re.sub(r"'(?:[^']|'')*'", "''", sql))


def test_every_issue_query_exists():
    assert set(QUERIES) >= {
        "search",
        "papers_by_author",
        "coauthors",
        "prolific_authors",
        "affiliation_leaderboard",
        "affiliation_areas",
        "papers_per_track",
        "truncated_author_lists",
        "multi_source_papers",
        "related_papers",
        "load_problems",
    }


@pytest.mark.parametrize("name", sorted(QUERIES))
def test_query_follows_conventions(name):
    query = QUERIES[name]
    assert re.fullmatch(r"[a-z][a-z0-9_]*", name)
    assert query.get("title") and (query.get("description") or query.get("description_html"))
    assert set(query.get("params", [])) == named_parameters(query["sql"])
    assert not query.get("write")
    code = without_literals(query["sql"])
    assert code == code.lower(), "SQL keywords and names are lowercase"
    assert all(len(line) <= 160 for line in query["sql"].splitlines())


@pytest.mark.asyncio
@pytest.mark.parametrize("name", sorted(QUERIES))
@pytest.mark.parametrize("kind", ["none", "sample"])
async def test_query_answers_without_and_with_parameters(datasette, name, kind):
    params = {} if kind == "none" else {p: SAMPLES[p] for p in QUERIES[name].get("params", [])}
    html = await datasette.client.get(query_url(name, params))
    assert html.status_code == 200
    assert "message-error" not in html.text
    response = await datasette.client.get(query_url(name, params, ".json"))
    assert response.status_code == 200
    assert response.json()["ok"]


@pytest.mark.asyncio
@pytest.mark.parametrize("name", sorted(n for n in QUERIES if QUERIES[n].get("params")))
@pytest.mark.parametrize("value", ODD_INPUTS, ids=lambda value: repr(value)[:30])
async def test_query_survives_odd_input(datasette, name, value):
    params = {p: value for p in QUERIES[name]["params"]}
    html = await datasette.client.get(query_url(name, params))
    assert html.status_code == 200
    assert "message-error" not in html.text
    assert "<script>alert(1)" not in html.text
    response = await datasette.client.get(query_url(name, params, ".json"))
    assert response.status_code == 200
    assert response.json()["ok"]


@pytest.mark.parametrize("name", PER_REQUEST)
def test_per_request_query_never_scans_a_table(connection, name):
    sql = QUERIES[name]["sql"]
    params = {p: SAMPLES[p] for p in QUERIES[name]["params"]}
    plan = [row[3] for row in connection.execute(f"explain query plan {sql}", params)]
    for step in plan:
        if step.startswith("SCAN "):
            scanned = step.split()[1]
            # CTE rows (the parsed input, the words of one abstract) are small by construction
            assert scanned not in ("papers", "authors", "paper_authors", "tracks"), plan
            if scanned == "papers_fts_vocab":
                pytest.fail(f"full vocabulary scan: {plan}")


def test_search_looks_up_snippets_by_rowid(connection):
    """The snippet pass must fetch the top rows by rowid, not walk every match again."""
    plan = [
        row[3]
        for row in connection.execute(
            f"explain query plan {QUERIES['search']['sql']}", {"q": "model"}
        )
    ]
    fts_steps = [step for step in plan if step.startswith("SCAN papers_fts VIRTUAL TABLE")]
    assert len(fts_steps) == 2
    assert any(":=" in step for step in fts_steps), plan


@pytest.mark.asyncio
async def test_search_ranks_and_marks_matches(datasette, query):
    rows = await get_json(datasette, "search", q="reasoning")
    expected = query("select count(*) from papers_fts where papers_fts match 'reasoning'")[0][0]
    assert len(rows) == expected == 19
    scores = [row["score"] for row in rows]
    assert scores == sorted(scores, reverse=True)
    for row in rows:
        snippet = row["snippet"]
        assert snippet.count(MATCH_START) == snippet.count(MATCH_END) >= 1
        marked = re.findall(f"{MATCH_START}(.*?){MATCH_END}", snippet)
        assert all(word.lower().startswith("reason") for word in marked), marked


@pytest.mark.asyncio
async def test_search_emits_sentinels_not_html(datasette):
    rows = await get_json(datasette, "search", q="reasoning")
    assert all("<mark>" not in row["snippet"] for row in rows)
    page = await datasette.client.get(query_url("search", {"q": "reasoning"}))
    assert MATCH_START not in page.text
    assert "<mark>" in page.text


@pytest.mark.asyncio
async def test_search_weighs_titles(datasette):
    rows = await get_json(datasette, "search", q="normuon")
    assert rows[0]["id"] == NORMUON


@pytest.mark.asyncio
async def test_search_phrase_and_user_syntax(datasette, query):
    phrase = await get_json(datasette, "search", q='"large language models"')
    words = await get_json(datasette, "search", q="large language models")
    assert 0 < len(phrase) <= len(words)
    hyphen = await get_json(datasette, "search", q="sock-puppet")
    assert hyphen == []
    # operators are words, not syntax: "AND" alone matches papers containing "and"
    and_rows = await get_json(datasette, "search", q="AND")
    assert len(and_rows) == min(
        100, query("select count(*) from papers_fts where papers_fts match '\"and\"'")[0][0]
    )
    for blank in ["", " ", '"', '""']:
        assert await get_json(datasette, "search", q=blank) == []


@pytest.mark.asyncio
async def test_search_agrees_with_table_search(datasette):
    ranked = await get_json(datasette, "search", q="diffusion")
    response = await datasette.client.get(
        "/catalog/papers.json?_search=diffusion&_shape=array&_size=max"
    )
    assert {row["id"] for row in ranked} == {row["id"] for row in response.json()}


@pytest.mark.asyncio
@pytest.mark.parametrize("author", ["Huishuai Zhang", "huishuai zhang", "  HUISHUAI ZHANG ", "100"])
async def test_papers_by_author_by_name_or_id(datasette, query, author):
    author_id = query("select id from authors where name = 'Huishuai Zhang'")[0][0]
    author = author.replace("100", str(author_id))
    rows = await get_json(datasette, "papers_by_author", author_id=author)
    assert len(rows) == 50
    assert len({row["id"] for row in rows}) == 50


@pytest.mark.asyncio
@pytest.mark.parametrize("author", ["", "nobody", "100abc", "1.5", "-1", "%"])
async def test_papers_by_author_unknown(datasette, author):
    assert await get_json(datasette, "papers_by_author", author_id=author) == []


@pytest.mark.asyncio
async def test_coauthors_count_shared_papers(datasette, query):
    (author_id,) = query("select id from authors where name = 'Huishuai Zhang'")[0]
    rows = await get_json(datasette, "coauthors", author_id=str(author_id))
    expected = Counter()
    for paper_id, other in query(
        "select own.paper_id, other.author_id from paper_authors as own "
        "join paper_authors as other on other.paper_id = own.paper_id "
        "where own.author_id = ? and other.author_id != ?",
        [author_id, author_id],
    ):
        expected[other] += 1
    assert {row["author_id"]: row["shared_papers"] for row in rows} == dict(expected)
    assert author_id not in {row["author_id"] for row in rows}
    counts = [row["shared_papers"] for row in rows]
    assert counts == sorted(counts, reverse=True)
    assert rows[0]["name"] == "Da Yu"


@pytest.mark.asyncio
async def test_prolific_authors(datasette):
    rows = await get_json(datasette, "prolific_authors")
    assert rows[0]["name"] == "Huishuai Zhang" and rows[0]["paper_count"] == 50
    counts = [row["paper_count"] for row in rows]
    assert counts == sorted(counts, reverse=True)
    assert len(rows) == 100


@pytest.mark.asyncio
async def test_affiliation_leaderboard_and_areas(datasette):
    leaders = await get_json(datasette, "affiliation_leaderboard")
    assert (leaders[0]["slug"], leaders[0]["paper_count"], leaders[0]["rank"]) == ("pku", 4, 1)
    assert len(leaders) == 3
    areas = await get_json(datasette, "affiliation_areas")
    per_affiliation = Counter()
    for row in areas:
        per_affiliation[row["affiliation"]] += row["papers"]
    assert per_affiliation == {row["name"]: row["paper_count"] for row in leaders}


@pytest.mark.asyncio
async def test_papers_per_track(datasette, query):
    rows = await get_json(datasette, "papers_per_track")
    assert len(rows) == 16 + 1
    by_track = {row["track"]: row for row in rows}
    assert by_track[LLM_TRACK]["papers"] == 12
    assert (
        by_track[LLM_TRACK]["area_papers"]
        == query("select count(*) from papers where area = 'Deep Learning'")[0][0]
    )
    assert sum(row["papers"] for row in rows) == 90
    untracked = rows[-1]
    assert (
        untracked["track"] is None
        and untracked["papers"] == query("select count(*) from papers where track is null")[0][0]
    )


@pytest.mark.asyncio
async def test_truncated_author_lists(datasette, query):
    rows = await get_json(datasette, "truncated_author_lists")
    assert len(rows) == 43
    ids = {row["id"] for row in rows}
    assert ids == {r[0] for r in query("select id from papers where authors_truncated = 1")}


@pytest.mark.asyncio
async def test_multi_source_papers_and_load_problems_on_seeds(datasette):
    # the seeds list no paper twice and load cleanly
    assert await get_json(datasette, "multi_source_papers") == []
    assert await get_json(datasette, "load_problems") == []


def test_multi_source_papers_and_problems_on_duplicated_input(tmp_path):
    from loader.build.catalog import build_catalog
    from loader.read.sources import discover

    seed = min((ROOT / "seeds").glob("*.txt"))
    for name in ("a", "b"):
        folder = tmp_path / name
        folder.mkdir()
        (folder / seed.name).write_bytes(seed.read_bytes())
    broken = tmp_path / "c" / "broken.jsonl"
    broken.parent.mkdir()
    broken.write_text('{"abstract": "no authors here"}\nnot json\n', encoding="utf-8")
    path = tmp_path / "catalog.db"
    summary = build_catalog(
        discover([tmp_path / "a", tmp_path / "b", tmp_path / "c"]), path, skip_invalid=True
    )
    connection = sqlite3.connect(path)
    rows = connection.execute(QUERIES["multi_source_papers"]["sql"]).fetchall()
    assert len(rows) == summary.papers > 0
    assert all(row[2] == 2 and row[3].count(":") == 2 and "; " in row[3] for row in rows)
    problems = connection.execute(QUERIES["load_problems"]["sql"]).fetchall()
    assert len(problems) == len(summary.problems) >= 1
    assert all(row[1].endswith("broken.jsonl") and row[2] >= 1 for row in problems)


@pytest.mark.asyncio
async def test_related_papers(datasette, query):
    rows = await get_json(datasette, "related_papers", paper_id=NORMUON)
    assert 1 <= len(rows) <= 20
    assert NORMUON not in {row["id"] for row in rows}
    scores = [row["score"] for row in rows]
    assert scores == sorted(scores, reverse=True)
    # an optimizer paper: its nearest neighbour is another optimizer paper
    assert any(
        "optimizer"
        in query("select abstract_text from papers where id = ?", [row["id"]])[0][0].lower()
        for row in rows[:3]
    )


@pytest.mark.asyncio
async def test_related_papers_for_every_paper(datasette, query):
    """No paper breaks it (odd characters, math, short abstracts), and none relates to itself."""
    for (paper_id,) in query("select id from papers"):
        rows = await get_json(datasette, "related_papers", paper_id=paper_id)
        assert paper_id not in {row["id"] for row in rows}
        assert len(rows) <= 20
