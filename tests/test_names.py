"""Author names: one key for the spellings of one name, the spelling shown, every spelling kept
(loader/rules/names.py), on the rules alone and on catalogs built from real records."""

import itertools
import unicodedata

import pytest
from hypothesis import given
from hypothesis import strategies as st

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
        # real spellings of one person (papercopilot/paperlists; each pair shares a coauthor)
        ("Geoffrey E Hinton", "Geoffrey E. Hinton"),  # ICLR 2018 / NeurIPS 2017
        ("Tieyan Liu", "Tie-yan Liu"),  # ICML 2018 / NeurIPS 2008: a hyphen written as nothing
        ("Xian-Sheng Hua", "Xiansheng Hua"),  # AAAI 2022 / ECCV 2020
        # a nickname in quotes or brackets folds to the name without it (an unquoted one,
        # "Anh Totti Nguyen", is a word of the name: only a shared id makes it the person)
        ("Anh “Totti” Nguyen", "Anh Nguyen"),  # WACV 2024
        ('Chiyu "Max" Jiang', "Chiyu Jiang"),  # ICCV 2019
        ("Junbo (Jake) Zhao", "Junbo Zhao"),  # tests/fixtures/real/pages
        ("Huazhe(Harry) Xu", "Huazhe Xu"),
        ("Nicol‘o Cesa-Bianchi", "Nicolò Cesa-Bianchi"),  # COLT 2016: TeX's \`o as a quote
        ('Dagmar Kainm"uller', "Dagmar Kainmüller"),  # CVPR 2019: TeX's \"u without \\
        ("Nicholas Vining\u200f", "Nicholas Vining"),  # SIGGRAPH 2015: a right-to-left mark
        ("Xiuming Zhang\u200e", "Xiuming Zhang"),  # SIGGRAPH 2021: a left-to-right mark
        ("Max Q. -H. Meng", "Max Q.-H Meng"),  # ICRA 2015 / 2014
        # the shapes
        ("Ana B. Costa", "Ana B Costa"),
        ("Wei “Will” Zhang", 'Wei "Will" Zhang'),
        ("Wenjie (Jack) Zhao", "Wenjie Zhao"),
        ('Lin "Lily" Xu', "Lin Xu"),
        ("\u202aAna Costa\u202c", "Ana Costa"),
        ("Chia-Wei Lin", "Chia Wei Lin"),
        ("Chia-Wei Lin", "Chiawei Lin"),
        ("Robert `Bob' Smith", "Robert ‘Bob’ Smith"),
        ("Ｌｉ Ｗｅｉ", "Li Wei"),  # full-width letters
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
        ("Ana B. Costa", "Anab Costa"),  # an initial stays a word of its own
        ("Yu Xiaoli", "Yuxiao Li"),  # the last word stays apart: other people
        ("Ana Costa", "Ana B. Costa"),
    ],
)
def test_other_orders_and_initials_are_other_names(first, second):
    assert name_key(first) != name_key(second)


def test_keys_read_as_words():
    """What the authors table's key column shows: the given names run together, initials and
    the last word apart."""
    assert name_key("Chia-Wei Lin") == "chiawei lin"
    assert name_key("Ana B. Costa") == "ana b costa"
    assert name_key("Florian Tramèr") == "florian tramer"
    assert name_key("Ludwig van der Maaten") == "ludwigvander maaten"


# properties of the key: a name is one of WORDS joined by spaces, hyphens or nothing
WORDS = st.sampled_from(["Ana", "Chia", "Wei", "Lin", "B.", "J", "Zoë", "O'Neil", "van", "Tramèr"])
JOINERS = st.sampled_from([" ", "-", "\u2010", "–"])
FORMAT_CHARACTERS = st.sampled_from(
    ["\u200b", "\u200e", "\u200f", "\u202a", "\u202c", "\u2066", "\ufeff", "\u00ad"]
)
NAMES = st.lists(st.tuples(JOINERS, WORDS), min_size=1, max_size=5).map(
    lambda parts: "".join(j + w for j, w in parts)[1:]
)


@given(NAMES | st.text(max_size=20))
def test_name_key_is_idempotent(name):
    assert name_key(name_key(name)) == name_key(name)


@given(NAMES, st.lists(st.tuples(st.integers(0, 40), FORMAT_CHARACTERS), max_size=4))
def test_invisible_format_characters_never_count(name, inserted):
    marked = name
    for position, character in inserted:
        marked = marked[:position] + character + marked[position:]
    assert name_key(marked) == name_key(name)


@given(
    st.lists(
        st.sampled_from(["Chia", "Wei", "Pin", "Yu", "Xian", "Sheng"]), min_size=1, max_size=3
    ),
    st.sampled_from(["Lin", "Chen", "Hua"]),
    JOINERS | st.just(""),
)
def test_given_names_joined_by_a_hyphen_a_space_or_nothing_are_one_name(given_names, last, joiner):
    assert name_key(joiner.join(given_names) + " " + last) == name_key(
        " ".join(given_names) + " " + last
    )


@given(
    NAMES,
    st.sampled_from(["Bob", "Will", "Max"]),
    st.sampled_from(["“{}”", '"{}"', "‘{}’", "`{}'", "``{}''", "({})"]),
)
def test_a_nickname_in_brackets_or_quotes_folds_to_the_name_without_it(name, nickname, quotes):
    first, _, rest = name.partition(" ")
    plain = f"{first} {rest}"
    assert name_key(f"{first} {quotes.format(nickname)} {rest}") == name_key(plain)


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
        ({"Michael R Lyu": 1, "Michael R. Lyu": 1}, "Michael R. Lyu"),  # a tie: the dots
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


@pytest.mark.asyncio
async def test_canned_query_finds_an_author_by_another_spelling(build_fixtures):
    db = build_fixtures("names_accents.jsonl")
    response = await merge_fixtures.site(db).client.get(
        "/catalog/papers_by_author.json?author_id=martin+ABADI&_shape=objects"
    )
    assert response.status_code == 200
    assert len(response.json()["rows"]) == 2


def test_one_person_spelled_with_and_without_punctuation_is_one_author(build_fixtures):
    """Real records (tests/fixtures/real/merge/SOURCE.md): each pair of spellings is one
    author row, whose page lists both papers."""
    db = build_fixtures("names_punctuation.jsonl")
    for spelling in (
        "Geoffrey E. Hinton",
        "Tie-yan Liu",
        "Nicolò Cesa-Bianchi",
        "Dagmar Kainmüller",
    ):
        rows = db.execute(
            "select paper_count from authors where key = ?", [name_key(spelling)]
        ).fetchall()
        assert rows == [(2,)], spelling
    # a quoted nickname folds to the name without it ("Anh Nguyen": 21 of 54 real nickname
    # spellings have that form, 6 the nickname as a word): the one written as a plain word
    # stays another name unless an id joins them (docs/names.md, "People by their ids")
    for spelling in ("Anh “Totti” Nguyen", 'Chiyu "Max" Jiang'):
        rows = db.execute(
            "select paper_count from authors where key = ?", [name_key(spelling)]
        ).fetchall()
        assert rows == [(1,)], spelling


@pytest.mark.asyncio
async def test_author_page_by_a_name_wrapped_in_direction_marks(build_fixtures):
    """A name copied with invisible direction marks (U+202A ... U+202C) finds its page; before,
    the marks stayed in the key and the page answered 404."""
    db = build_fixtures("names_punctuation.jsonl")
    client = merge_fixtures.site(db).client
    for name in ("\u202aChiyu Max Jiang\u202c", "Nicol‘o Cesa-Bianchi\u200f", "Tieyan Liu"):
        response = await client.get("/-/author", params={"name": name})
        assert response.status_code == 302, name
