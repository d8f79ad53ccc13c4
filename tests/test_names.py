"""Author names: one key for the spellings of one name, the spelling shown, every spelling kept
(loader/rules/names.py), on the rules alone and on catalogs built from real records."""

import itertools
import unicodedata

import pytest

from loader.rules import normalize
from loader.rules.names import display_name, is_well_cased, name_key

from . import merge_fixtures

build_fixtures = merge_fixtures.build_fixtures


@pytest.mark.parametrize(
    "first, second",
    [
        ("Florian Tramèr", "Florian Tramer"),
        ("Pin-Yu Chen", "Pin Yu Chen"),
        ("Jie Zhang", "Jie ZHANG"),
        ("Leif Döring", unicodedata.normalize("NFD", "leif  döring")),
        ("Çağlar Gülçehre", "Caglar Gulcehre"),
        ("John C.S. Lui", "John C. S. Lui"),
        ("Pierluca D'Oro", "Pierluca D’Oro"),
        ("Jascha Sohl-Dickstein", "Jascha Sohl‐dickstein"),  # U+2010 hyphen
    ],
)
def test_spellings_of_one_name_share_a_key(first, second):
    assert name_key(first) == name_key(second)


@pytest.mark.parametrize(
    "first, second",
    [
        ("Pin-Yu Chen", "Chen Pin-Yu"),  # another order
        ("Blake A. Richards", "Blake Richards"),  # another initial
        ("A. Pronobis", "Andrzej Pronobis"),  # initials for a first name
        ("Josh Fromm", "Joshua Fromm"),
    ],
)
def test_other_orders_and_initials_are_other_names(first, second):
    assert name_key(first) != name_key(second)


def test_name_key_stays_importable_from_normalize():
    assert normalize.name_key is name_key  # plugins/facets.py imports it from there


@pytest.mark.parametrize(
    "name, well_cased",
    [
        ("Jie Zhang", True),
        ("Aäron van den Oord", True),
        ("Hung-yi Lee", True),
        ("John Smith III", True),
        ("Jie ZHANG", False),
        ("YI WU", False),
        ("koray kavukcuoglu", False),
    ],
)
def test_well_cased(name, well_cased):
    assert is_well_cased(name) is well_cased


@pytest.mark.parametrize(
    "counts, shown",
    [
        ({"Jie Zhang": 42, "Jie ZHANG": 3}, "Jie Zhang"),
        ({"Jie Zhang": 3, "Jie ZHANG": 42}, "Jie Zhang"),  # never SHOUTING when avoidable
        ({"koray kavukcuoglu": 9, "Koray Kavukcuoglu": 5}, "Koray Kavukcuoglu"),
        ({"Hung-yi Lee": 2, "Hung-Yi Lee": 1}, "Hung-yi Lee"),  # both fine: the most used
        ({"Florian Tramer": 2, "Florian Tramèr": 2}, "Florian Tramèr"),  # a tie: accents
        ({"JIE ZHANG": 5, "jie zhang": 4, "Jie ZHANG": 1}, "Jie ZHANG"),  # none well-cased
    ],
)
def test_display_name_prefers_the_most_used_well_cased_spelling(counts, shown):
    for order in itertools.permutations(counts):
        assert display_name({name: counts[name] for name in order}) == shown


# catalogs built from real records (tests/fixtures/real/merge/SOURCE.md)


def variants(db, key):
    return db.execute(
        "select authors.name, author_variants.name, author_variants.paper_count "
        "from authors join author_variants on author_variants.author_id = authors.id "
        "where key = ? order by 2",
        [key],
    ).fetchall()


def test_a_well_cased_spelling_is_shown_over_a_more_used_shouting_one(build_fixtures):
    db = build_fixtures("names_case.jsonl")
    assert variants(db, "yi wu") == [("Yi Wu", "YI WU", 3), ("Yi Wu", "Yi Wu", 2)]
    assert db.execute("select paper_count from authors where key = 'yi wu'").fetchone() == (5,)
    # the other authors were spelled one way only: their name is that spelling
    assert db.execute("select count(distinct author_id) from author_variants").fetchone() == (1,)
    # every paper lists the shown name, whichever spelling its source used
    authors = [row[0] for row in db.execute("select authors from papers")]
    assert all('"Yi Wu"' in names and "YI WU" not in names for names in authors)


def test_hyphens_are_spaces_and_the_most_used_spelling_is_shown(build_fixtures):
    db = build_fixtures("names_hyphens.jsonl")
    assert variants(db, name_key("David Alvarez-Melis")) == [
        ("David Alvarez-Melis", "David Alvarez Melis", 1),
        ("David Alvarez-Melis", "David Alvarez-Melis", 3),
    ]
    assert variants(db, name_key("Wen-Hao Chen")) == [
        ("Wen Hao Chen", "Wen Hao Chen", 1),  # a tie: the smaller string
        ("Wen Hao Chen", "Wen-Hao Chen", 1),
    ]


def test_accents_are_folded_and_a_tie_shows_the_accented_spelling(build_fixtures):
    db = build_fixtures("names_accents.jsonl")
    assert variants(db, "martin abadi") == [
        ("Martín Abadi", "Martin Abadi", 1),
        ("Martín Abadi", "Martín Abadi", 1),
    ]


def test_initials_are_not_merged(build_fixtures):
    db = build_fixtures("names_not_merged.jsonl")
    assert db.execute("select count(*) from papers").fetchone() == (1,)  # versions: merged
    assert db.execute(
        "select name from authors where key like 'blake%' order by name"
    ).fetchall() == [("Blake A. Richards",), ("Blake Richards",)]


@pytest.mark.asyncio
async def test_canned_query_finds_an_author_by_another_spelling(build_fixtures):
    db = build_fixtures("names_accents.jsonl")
    response = await merge_fixtures.site(db).client.get(
        "/catalog/papers_by_author.json?author_id=martin+ABADI&_shape=objects"
    )
    assert response.status_code == 200
    assert len(response.json()["rows"]) == 2
