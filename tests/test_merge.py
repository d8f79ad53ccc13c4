"""Versions of one paper are one row: the merge policy (loader/rules/merge.py) alone, then the
catalogs built from the real fixtures of each rule (tests/fixtures/real/merge/)."""

import json
import re
import sqlite3
import unicodedata
from pathlib import Path

import pytest
from hypothesis import given
from hypothesis import strategies as st

from loader.build.catalog import build_catalog
from loader.records import Entry
from loader.rules import merge
from loader.rules.merge import (
    Version,
    VersionGroups,
    abstract_matches,
    arxiv_key,
    direct_matches,
    doi_key,
    identifying_title,
    resolve,
    shown_rank,
    title_matches,
    title_words,
    version_keys,
)
from loader.rules.normalize import paper_id, plain_text

from . import merge_fixtures
from .conftest import FIXTURES
from .merge_fixtures import records, site
from .real_text_shares import REAL_TEXT_SHARES
from .real_texts import REAL_TEXTS, plain_share

build_fixtures = merge_fixtures.build_fixtures


def record_id(record):
    """The paper id a JSON Lines record gets: its abstract's, with its title's words."""
    return paper_id(record["abstract"], identifying_title(record.get("title")))


# the policy alone


def test_identifiers_are_compared_without_version_prefix_or_case():
    assert arxiv_key("arXiv:1707.09627v4") == arxiv_key("1707.09627") == "1707.09627"
    assert arxiv_key("https://arxiv.org/abs/cs/0112017v1") == "cs/0112017"
    assert doi_key("https://doi.org/10.1145/3355089.3356552") == doi_key("10.1145/3355089.3356552")
    assert doi_key("doi:10.1145/ABC") == "10.1145/abc"


def test_titles_compare_without_case_accents_punctuation_or_spacing():
    assert title_words("Learning to Infer Graphics Programs from Hand-Drawn Images") == (
        title_words("learning to infer graphics programs from hand drawn images.")
    )
    assert title_words("Élan:  a Study") == "elan a study"


def keys(**fields):
    base = {"path": "x.jsonl", "line": 1, "abstract": "x", "authors": ["A"], "truncated": False}
    made = Entry(**{**base, **fields})
    return version_keys(made, plain_text(made.abstract))


ABSTRACT = "We study the scalability of biologically motivated learning rules " * 3


def test_version_keys_match_as_the_rules_say():
    preprint = keys(abstract=ABSTRACT, arxiv_id="1807.04587v2")
    assert set(preprint) & set(keys(abstract="Other. " * 30, arxiv_id="arXiv:1807.04587"))
    assert set(keys(abstract=ABSTRACT.upper().replace(" ", "  "))) & set(preprint)
    # a one-word title ("Withdrawn") is a placeholder: no key; a short abstract ("Part of")
    # links only the same text (respaced), not the same letters
    (short,) = keys(abstract="Part of", title="Withdrawn")
    assert keys(abstract=" Part  of ") == [short] and keys(abstract="part of.") != [short]
    titled = keys(abstract=ABSTRACT, title="Assessing the Scalability")
    assert len(titled) == 2 and set(titled) & set(
        keys(abstract="Other", title="assessing  the scalability")
    )


def test_one_title_joins_the_papers_that_share_an_author():
    papers = [("a", {1, 2}), ("b", {3}), ("c", {2, 4}), ("d", {4}), ("e", {5})]
    groups = VersionGroups()
    for first, second in title_matches(papers):
        groups.union(first, second)
    assert groups.groups() == [["a", "c", "d"]]  # b and e share no author with anyone


def test_one_abstract_under_two_titles_joins_only_by_author_or_title():
    # a, b: two titled papers by other authors with one abstract; c: b again, untitled; d: a
    # third title, an author of a's
    papers = [("a", 1, {10}), ("b", 2, {20}), ("c", None, {20, 21}), ("d", 3, {10})]
    assert sorted(direct_matches(papers)) == [("a", "d"), ("b", "c")]
    # one title, or none: all are versions, as before
    assert direct_matches([("a", 1, {1}), ("b", None, {2}), ("c", 1, {3})]) == [
        ("a", "b"),
        ("b", "c"),
    ]
    assert direct_matches([("a", 1, {1}), ("b", 2, {1})]) == [("a", "b")]  # renamed
    assert identifying_title("Withdrawn") is None  # one word tells no paper
    assert identifying_title("Song Learning in Birds") == "song learning in birds"


def test_one_abstract_under_two_titles_and_two_ids_of_one_kind_is_two_papers():
    # a, b: one author's two arXiv papers (two ids of one kind); c: a conference version of
    # a, retitled, with an OpenReview id only; d: b's title again with another arXiv id
    arxiv_a, arxiv_b, arxiv_d = (merge.ARXIV, 1), (merge.ARXIV, 2), (merge.ARXIV, 3)
    forum = (merge.OPENREVIEW, 4)
    papers = [
        ("a", 1, {10}, {arxiv_a}),
        ("b", 2, {10}, {arxiv_b}),
        ("c", 3, {10}, {forum}),
        ("d", 2, {10}, {arxiv_d}),
    ]
    groups = VersionGroups()
    for first, second in abstract_matches(papers):
        groups.union(first, second)
    # c joins the first group it fits (a's); b and d share their title: versions
    assert groups.groups() == [["a", "c"], ["b", "d"]]
    # one title, or the same ids: as direct_matches
    assert abstract_matches([("a", 1, {1}, {arxiv_a}), ("b", 1, {2}, {arxiv_b})]) == [("a", "b")]
    assert abstract_matches([("a", 1, {1}, {arxiv_a}), ("b", 2, {1}, {arxiv_a})]) == [("a", "b")]
    assert abstract_matches([("a", 1, {1}, {arxiv_a}), ("b", 2, {1}, {forum})]) == [("a", "b")]


def test_two_arxiv_papers_sharing_an_abstract_stay_two(tmp_path):
    # real: 0704.0026 and 0704.0112, parts II and III of one series, one abstract and author
    # (tests/fixtures/dumps/SOURCE.md)
    db = tmp_path / "catalog.db"
    build_catalog([FIXTURES / "dumps/arxiv/arxiv-metadata-oai-snapshot.json"], db)
    with sqlite3.connect(db) as connection:
        rows = connection.execute(
            "select title, source_count from papers where title like 'Placeholder Substructures%' "
            "order by title"
        ).fetchall()
    assert [(title.split(":")[0], count) for title, count in rows] == [
        ("Placeholder Substructures II", 1),
        ("Placeholder Substructures III", 1),
    ]


def test_version_groups_are_transitive_whatever_the_order():
    for pairs in ([("a", "b"), ("c", "d"), ("b", "c")], [("c", "d"), ("b", "c"), ("a", "b")]):
        groups = VersionGroups()
        for first, second in pairs:
            groups.union(first, second)
        groups.union("x", "y")
        assert groups.groups() == [["a", "b", "c", "d"], ["x", "y"]]


def test_shown_version_any_venue_over_arxiv_then_latest_year():
    preprint = Version("p1", title="T", venue="arXiv", year=2019, authors=((1, 1),))
    workshop = Version("p2", title="T", venue="ICLR", year=2017, authors=((1, 1),))
    conference = Version("p3", title=None, venue="ICML", year=2018, authors=((1, 1), (2, 2)))
    unknown = Version("p4", title="T", authors=((1, 1),))
    rejected = Version("p5", title="T", venue="ICLR", year=2018, status="Reject")
    invited = Version("p6", title="T", venue="ICLR", year=2018, status="Workshop")
    assert sorted([unknown, rejected, preprint, invited, workshop, conference], key=shown_rank) == [
        conference,
        invited,
        rejected,
        workshop,
        preprint,
        unknown,
    ]
    paper = resolve([preprint, conference, workshop])
    assert (paper.id, paper.aliases) == ("p3", ("p1", "p2"))
    assert (paper.venue, paper.year, paper.title) == ("ICML", 2018, "T")  # a real title
    assert paper.source_count == 3


def test_resolve_does_not_depend_on_order():
    versions = [
        Version("b", title="Beta", venue="ICLR", year=2018, url="u2", authors=((1, 1),)),
        Version("a", title="Alpha", venue="ICLR", year=2018, url="u1", authors=((2, 1),)),
        Version("a", title=None, venue="ICLR", year=2018, track="Area", truncated=True),
    ]
    assert resolve(versions) == resolve(list(reversed(versions)))
    assert resolve(versions).id == "a"


def test_author_list_from_the_complete_longest_list_others_after():
    cut = Version("a", truncated=True, authors=((1, 1), (2, 2), (9, None)))
    full = Version("a", authors=((1, 1), (3, 2), (2, 3)))
    other = Version("b", authors=((1, 1), (4, 2)))
    paper = resolve([cut, full, other])
    assert paper.authors == ((1, 1), (3, 2), (2, 3), (4, 4), (9, None))
    assert paper.truncated is False


# catalogs built from the real fixtures


def paper_rows(db):
    return db.execute(
        "select id, title, venue, year, status, source_count from papers order by id"
    ).fetchall()


def test_same_title_and_a_shared_author_is_one_paper(build_fixtures):
    db = build_fixtures("versions_title.jsonl")
    iclr13, icml14 = (r for r in records("versions_title.jsonl") if "Affinity" in r["title"])
    ((row),) = db.execute(
        "select id, venue, year, status, source_count from papers where title like 'Affinity%'"
    ).fetchall()
    # the latest year is shown, and the id is its abstract's
    assert row == (record_id(icml14), "ICML", 2014, "Poster", 2)
    assert db.execute(
        "select alias, paper_id from paper_aliases where alias = ?", [record_id(iclr13)]
    ).fetchall() == [(record_id(iclr13), row[0])]
    # each entry keeps its own venue, year and status
    assert db.execute(
        "select venue, year, status from paper_sources where paper_id = ? order by year",
        [row[0]],
    ).fetchall() == [("ICLR", 2013, "Oral Workshop"), ("ICML", 2014, "Poster")]
    assert db.execute("select count(*) from papers").fetchone() == (2,)
    assert db.execute("select count(*) from paper_aliases").fetchone() == (2,)


def test_abstracts_equal_up_to_case_and_punctuation_are_one_paper(build_fixtures):
    db = build_fixtures("versions_abstract.jsonl")
    iclr, icml = records("versions_abstract.jsonl")
    assert record_id(iclr) != record_id(icml)
    assert iclr["title"] != icml["title"]
    ((pid, title, venue, year, status, count),) = paper_rows(db)
    assert count == 2 and year == 2018
    shown = icml if pid == record_id(icml) else iclr
    assert (title, venue, status) == (shown["title"], shown["venue"], shown["status"])
    # Maryam Fazel, Rong Ge, Sham M. Kakade, Mehran Mesbahi: the union, each person once
    # (the ICLR version's `Sham Kakade` is the ICML version's `Sham M. Kakade`)
    assert db.execute("select count(*) from paper_authors").fetchone() == (4,)


def test_a_shared_identifier_is_one_paper(build_fixtures):
    db = build_fixtures("versions_identifier.jsonl")
    iclr, listing = records("versions_identifier.jsonl")
    assert paper_rows(db) == [
        (record_id(iclr), iclr["title"], "ICLR", 2018, "Poster", 2)
    ]  # a venue over none, the real title over a derived label
    assert db.execute("select label from papers").fetchone() == (iclr["title"],)
    assert db.execute("select alias from paper_aliases").fetchall() == [(record_id(listing),)]


def test_merges_are_transitive(build_fixtures):
    db = build_fixtures("versions_title.jsonl", "versions_transitive.jsonl")
    rows = db.execute(
        "select venue, year, source_count from papers where title like 'Learning to Infer%'"
    ).fetchall()
    assert rows == [("NeurIPS", 2018, 3)]  # the arXiv preprint of 2017 is not shown
    assert db.execute(
        "select paper_sources.venue, paper_sources.year from paper_sources "
        "join papers on papers.id = paper_id where papers.title like 'Learning to Infer%' "
        "order by 2, 1"
    ).fetchall() == [("arXiv", 2017), ("ICLR", 2018), ("NeurIPS", 2018)]


def test_each_version_keeps_its_own_title_and_link(build_fixtures):
    db = build_fixtures("versions_abstract.jsonl", "titles_not_merged.jsonl")
    iclr, icml = records("versions_abstract.jsonl")
    # the two titles differ ("for Linearized ..." and "for the Linear ..."): each entry's own
    assert db.execute(
        "select venue, title, url from paper_sources where paper_id in "
        "(select id from papers where source_count = 2) order by venue"
    ).fetchall() == [
        ("ICLR", iclr["title"], iclr["url"]),
        ("ICML", icml["title"], icml["url"]),
    ]
    # a paper of one entry shows its title and link itself: its row keeps none
    assert db.execute(
        "select count(*) from paper_sources where (title is not null or url is not null) "
        "and paper_id in (select id from papers where source_count = 1)"
    ).fetchone() == (0,)


def test_the_same_title_without_a_shared_author_stays_apart(build_fixtures):
    db = build_fixtures("titles_not_merged.jsonl")
    assert db.execute("select year from papers order by year").fetchall() == [(2019,), (2021,)]
    assert db.execute("select count(*) from paper_aliases").fetchone() == (0,)


def test_papers_a_source_gives_one_abstract_stay_apart(build_fixtures):
    db = build_fixtures("abstracts_shared.jsonl")
    rows = db.execute("select title, authors, source_count from papers order by title").fetchall()
    by_title = {title: (json.loads(authors), count) for title, authors, count in rows}
    # 12 records: each placeholder ("Abstract Unavailable", "Discussion of", "Part of") and
    # the abstract the scraper repeated are their own paper, with their own authors
    assert len(rows) == 11
    assert by_title["Song Learning in Birds"] == (["M. Konishi"], 1)
    assert by_title["A Self-Learning Neural Network"] == (["Allan Hartstein", "R. H. Koch"], 1)
    hippocampal = next(t for t in by_title if t.startswith("Hippocampal Model"))
    assert by_title[hippocampal] == (["David J. Foster", "Richard G. M. Morris", "Peter Dayan"], 1)
    # the withdrawn copy ("Withdrawn", same abstract and authors) is still a version
    improving = next(t for t in by_title if t.startswith("Improving Conditional"))
    assert by_title[improving] == (["Yi-Lin Tuan", "Hung-yi Lee"], 2)
    assert "Withdrawn" not in by_title


ALL = (
    "abstracts_shared.jsonl",
    "versions_title.jsonl",
    "versions_transitive.jsonl",
    "versions_abstract.jsonl",
    "versions_identifier.jsonl",
    "titles_not_merged.jsonl",
    "names_case.jsonl",
    "names_hyphens.jsonl",
    "names_accents.jsonl",
    "people_once.jsonl",
    "people_short_forms.jsonl",
)
# author and track ids are numbered in stream order (files sorted by path, entries in file
# order): shuffled entries renumber them, so rows are compared by name key and track name
TABLES = {
    "papers": (
        "select papers.*, tracks.name from papers left join tracks on tracks.id = track_id "
        "order by papers.id"
    ),
    "authors": "select name, key, paper_count from authors order by key",
    "author_variants": (
        "select key, author_variants.name, author_variants.paper_count from author_variants "
        "join authors on authors.id = author_id order by 1, 2"
    ),
    "paper_authors": (
        "select paper_id, key, position from paper_authors "
        "join authors on authors.id = author_id order by 1, 2"
    ),
    "paper_aliases": "select * from paper_aliases order by 1",
    # lines move when entries are shuffled; the file and what each entry gave do not
    "paper_sources": (
        "select paper_id, path, venue, year, status, title, url from paper_sources "
        "join sources on sources.id = source_id order by 1, 2, 3, 4, 5, 6, 7"
    ),
}


def dump(db):
    rows = {name: db.execute(sql).fetchall() for name, sql in TABLES.items()}
    track_id = 14  # papers.track_id: compared through the track's name
    rows["papers"] = [row[:track_id] + row[track_id + 1 :] for row in rows["papers"]]
    # each build reads its own copy of the files: the same names in another folder
    rows["paper_sources"] = [(p, Path(f).name, *rest) for p, f, *rest in rows["paper_sources"]]
    return rows


def test_shuffled_files_and_entries_give_identical_rows(build_fixtures):
    first = dump(build_fixtures(*ALL))
    # one is abstracts_shared.jsonl's withdrawn copy, five people_once.jsonl's, four
    # people_short_forms.jsonl's
    assert len(first["paper_aliases"]) == 15
    for seed in (1, 2):
        assert dump(build_fixtures(*ALL, seed=seed)) == first


@pytest.mark.asyncio
async def test_an_alias_redirects_to_its_paper(build_fixtures):
    db = build_fixtures("versions_identifier.jsonl")
    ((alias, pid),) = db.execute("select alias, paper_id from paper_aliases").fetchall()
    client = site(db).client
    response = await client.get(f"/catalog/papers/{alias}")
    assert response.status_code == 302
    assert response.headers["location"] == f"/catalog/papers/{pid}"
    response = await client.get(f"/catalog/papers/{alias}.json?_shape=objects")
    assert response.status_code == 302
    assert response.headers["location"] == f"/catalog/papers/{pid}.json?_shape=objects"
    assert (await client.get(f"/catalog/papers/{pid}")).status_code == 200
    assert (await client.get("/catalog/papers/0123456789abcdef")).status_code == 404


@pytest.mark.asyncio
async def test_a_versions_own_title_shows_where_it_differs(build_fixtures):
    db = build_fixtures("versions_abstract.jsonl")
    iclr, icml = records("versions_abstract.jsonl")
    ((pid, title),) = db.execute("select id, title from papers").fetchall()
    other = iclr if title == icml["title"] else icml
    page = (await site(db).client.get(f"/catalog/papers/{pid}")).text
    versions = re.search(r'<ul class="version-list">(.*?)</ul>', page, re.DOTALL).group(1)
    lines = re.findall(r"<li>(.*?)</li>", versions, re.DOTALL)
    # both of 2018, in venue order; the one whose title is not the paper's says its own
    assert [re.search(r">([^<]+)</a>", line).group(1) for line in lines] == [
        "ICLR 2018",
        "ICML 2018",
    ]
    ((own,),) = [re.findall(r"<q>(.*?)</q>", line) for line in lines if "<q>" in line]
    assert own == other["title"]
    assert f'href="{other["url"]}"' in next(line for line in lines if "<q>" in line)


# fast path: letters_and_digits gives what the pattern it replaces gives, on every line of real
# text (tests/real_texts.py), their plain text, and generated text ----------------------------


def letters_and_digits_by_pattern(source):
    """The reading letters_and_digits replaced: casefold, NFKD, one pattern."""
    normal = unicodedata.normalize("NFKD", source.casefold())
    return merge.NOT_LETTER_OR_DIGIT.sub("", normal)


@REAL_TEXT_SHARES
def test_letters_and_digits_equal_the_pattern_on_real_text(share):
    """Every real text and the plain reading of a share of them (tests/real_text_shares.py)."""
    plain = plain_share(share)
    assert sum(not t.isascii() for t in plain) > 500 // share
    for source in REAL_TEXTS + plain:
        assert merge.letters_and_digits(source) == letters_and_digits_by_pattern(source), source


@given(
    st.text(
        alphabet=st.sampled_from(
            list("aAZ_9 -.,–’“ε∞ℓαéÉ\u0301\u0345½℡Ⅸ％İ\ud800\x00ᴬΑ\U0001d6a8\U0001d400ﬁﬃßKΣς")
        ),
        max_size=30,
    )
)
def test_letters_and_digits_equal_the_pattern(source):
    """With readings that hold another character read ('𝚨' -> 'Α' -> 'α'): the whole pass."""
    assert merge.letters_and_digits(source) == letters_and_digits_by_pattern(source)


def test_ascii_casefold_is_lower():
    ascii_text = "".join(map(chr, range(128)))
    assert ascii_text.casefold() == ascii_text.lower()


def test_word_characters_are_alphanumerics_or_underscore():
    """letters_and_digits drops what str.isalnum() refuses where it dropped `[\\W_]`."""
    word = re.compile(r"\w")
    differ = [
        c for c in map(chr, range(0x110000)) if bool(word.fullmatch(c)) != (c.isalnum() or c == "_")
    ]
    assert differ == []


def test_no_combining_mark_of_a_reading_is_a_letter():
    """letters_and_digits reads each character alone: NFKD reorders only combining marks (a
    nonzero combining class), and it drops every one of those."""
    for code in range(0x110000):
        reading = unicodedata.normalize("NFKD", chr(code).casefold())
        assert not any(unicodedata.combining(c) and c.isalnum() for c in reading), hex(code)
