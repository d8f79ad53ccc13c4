"""Related papers on the paper page (loader/web/related.py) against the `related_papers` canned
query of metadata.yml, which an SQL user runs: the same papers, scores and order."""

import json
import sqlite3

import pytest
import yaml

from loader.build.catalog import build_catalog
from loader.read.sources import discover, plan_inputs
from loader.web import related
from loader.web.related import WordScores, related_papers, related_within, word_uses

from .conftest import FIXTURES, ROOT, SEEDS
from .real_text_shares import REAL_TEXT_SHARES

CANNED_SQL = yaml.safe_load((ROOT / "metadata.yml").read_text(encoding="utf-8"))["databases"][
    "catalog"
]["queries"]["related_papers"]["sql"]


def connect(path):
    connection = sqlite3.connect(path)
    connection.row_factory = sqlite3.Row
    return connection


@pytest.fixture(scope="module")
def real_catalog(tmp_path_factory):
    """The real sample (tests/fixtures/real) with the seeds and the real conference papers."""
    path = tmp_path_factory.mktemp("related") / "catalog.db"
    inputs = [FIXTURES / "real" / "sample", SEEDS, FIXTURES / "search" / "conferences.jsonl"]
    build_catalog(plan_inputs(inputs), path, skip_invalid=True)
    return path


def canned(connection, paper_id):
    return [dict(row) for row in connection.execute(CANNED_SQL, {"paper_id": paper_id})]


# the canned query's answer of a paper of a module's catalog, asked once: several tests compare
# the page's answers with it, each made another way
CANNED_ANSWERS: dict[tuple[str, str], list[dict]] = {}


def assert_same_as_canned(path, scores=None, share=1):
    """Every paper's related papers as the canned query gives them, with the word counts and
    (unless told) the words' scores kept from paper to paper, as a worker keeps them; every
    `share`-th paper."""
    connection = connect(path)
    kept = {}
    scores = scores or WordScores()
    compared = 0
    ids = connection.execute("select id from papers order by id").fetchall()[::share]
    for (paper_id,) in ids:
        key = (str(path), paper_id)
        if key not in CANNED_ANSWERS:
            CANNED_ANSWERS[key] = canned(connection, paper_id)
        expected = CANNED_ANSWERS[key]
        assert related_papers(connection, paper_id, kept, scores) == expected, paper_id
        compared += bool(expected)
    return compared


def test_the_page_shows_the_canned_querys_papers_for_every_seed_paper(seed_catalog):
    assert assert_same_as_canned(seed_catalog) >= 80


@REAL_TEXT_SHARES
def test_the_page_shows_the_canned_querys_papers_for_every_real_paper(real_catalog, share):
    assert assert_same_as_canned(real_catalog, share=share) >= 100 // share


@REAL_TEXT_SHARES
def test_scores_kept_in_a_small_budget_give_the_canned_answer(real_catalog, share):
    """Words dropped from the kept scores (least recently used first) are read again."""
    scores = WordScores(max_bytes=64 * 1024)
    assert assert_same_as_canned(real_catalog, scores, share) >= 100 // share
    assert scores.max_bytes // 2 < scores.size <= scores.max_bytes  # filled: words dropped


@pytest.mark.slow  # every real paper three times over
def test_pages_are_the_canned_querys_through_the_trial_and_either_way_after(
    real_catalog, monkeypatch
):
    """A worker adds up terms, then ranks by the OR query, then keeps the cheaper way: every
    page is the canned query's answer whichever way it was ranked."""
    monkeypatch.setattr(related, "TRIAL_PAGES", (5, 20, 40))
    scores = WordScores()
    assert assert_same_as_canned(real_catalog, scores) >= 100
    assert all(pages > 0 for _, pages in scores.spent.values())
    for adding in (True, False):
        scores.adding = adding
        assert assert_same_as_canned(real_catalog, scores) >= 100


def test_papers_with_equal_scores_are_ranked_as_the_canned_query_ranks_them(tmp_path):
    """30 papers share one rare word with the paper, once each, in abstracts of as many words
    and titles of one word: equal bm25 scores, more than the 20 shown; the order among them is
    the canned query's (the full-text index's order)."""
    filler = ["alpha", "bravo", "charlie", "delta", "echo", "foxtrot", "golf", "hotel"]
    records = [
        {
            "title": "Quokkas",
            "abstract": "We count quokka colonies on islands near shores.",
            "authors": ["Ada Source"],
        }
    ]
    for i in range(30):
        words = " ".join(f"{word}{i:02d}" for word in filler[:6])
        records.append(
            {
                "title": f"Study{i:02d}",
                "abstract": f"A quokka and {words}.",
                "authors": [f"Writer{i:02d} Person"],
            }
        )
    jsonl = tmp_path / "ties.jsonl"
    jsonl.write_text("".join(json.dumps(record) + "\n" for record in records))
    path = tmp_path / "catalog.db"
    build_catalog(discover([jsonl]), path, skip_invalid=True)
    connection = connect(path)
    (source,) = connection.execute("select id from papers where title = 'Quokkas'").fetchone()
    expected = canned(connection, source)
    assert len(expected) == 20
    assert len({row["score"] for row in expected}) == 1  # all tied
    assert related_papers(connection, source, {}, WordScores()) == expected


def test_kept_counts_give_the_same_answer_as_fresh_ones(seed_catalog):
    connection = connect(seed_catalog)
    ids = [row[0] for row in connection.execute("select id from papers order by id")]
    kept = {}
    first = [related_papers(connection, paper_id, kept) for paper_id in ids]
    assert kept
    assert [related_papers(connection, paper_id, kept) for paper_id in ids] == first
    assert [related_papers(connection, paper_id, {}) for paper_id in ids] == first


def test_words_are_read_as_the_canned_query_reads_them():
    uses = word_uses("Über GANs", "GANs: für 3D-Bilder, e.g. NeRF-like. ab")
    # the title twice; ASCII lowered, other letters kept as they are; 3+ characters
    assert uses == {"Über": 2, "gans": 3, "für": 1, "bilder": 1, "nerf": 1, "like": 1}
    # a word cut off by the 20,000-character limit is not a word
    assert word_uses(None, "a" * 19_990 + " word" + "x" * 100) == {"a" * 19_990: 1}


@pytest.mark.parametrize("abstract", ["", "To be or not to be, it is so.", "zz qq"])
def test_a_paper_without_a_distinctive_word_has_no_related_papers(tmp_path, abstract):
    jsonl = tmp_path / "one.jsonl"
    records = [
        {"title": "On", "abstract": abstract, "authors": ["Ada Few"], "track": "T"},
        {"title": "Be", "abstract": "Unrelated words here.", "authors": ["Bo Few"]},
    ]
    jsonl.write_text("".join(json.dumps(record) + "\n" for record in records))
    path = tmp_path / "catalog.db"
    build_catalog(discover([jsonl]), path, skip_invalid=True)
    connection = connect(path)
    for (paper_id,) in connection.execute("select id from papers").fetchall():
        assert related_papers(connection, paper_id, {}) == canned(connection, paper_id) == []


def test_an_unknown_paper_has_no_related_papers(seed_catalog):
    assert related_papers(connect(seed_catalog), "no-such-paper", {}) == []


def test_past_the_time_limit_there_is_no_answer_and_the_connection_still_works(seed_catalog):
    connection = connect(seed_catalog)
    (paper_id,) = connection.execute("select id from papers order by id limit 1").fetchone()
    assert related_within(connection, paper_id, 0, {}) is None
    assert related_within(connection, paper_id, 1000, {}) == canned(connection, paper_id)
