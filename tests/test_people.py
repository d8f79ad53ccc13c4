"""One person once: the names of one paper's versions that are one person (loader/rules/people.py),
on the rule alone and on catalogs built from real records (tests/fixtures/real/merge/SOURCE.md)."""

import json
import random
import shutil
import sqlite3

import pytest
from hypothesis import given
from hypothesis import strategies as st

from loader.build.catalog import build_catalog
from loader.records import Version
from loader.rules.names import name_key
from loader.rules.people import (
    edit_distance_at_most_one,
    initials_apart,
    one_person_ids,
    short_form_apart,
)

from . import merge_fixtures
from .conftest import FIXTURES

build_fixtures = merge_fixtures.build_fixtures


class Names:
    """Author ids for names, as the writer gives them: one id a name key."""

    def __init__(self) -> None:
        self.keys: list[str] = []
        self.uses: dict[int, int] = {}

    def id(self, name: str) -> int:
        key = name_key(name)
        if key not in self.keys:
            self.keys.append(key)
        return self.keys.index(key)

    def version(self, *names: str, truncated: bool = False) -> Version:
        ids = [self.id(name) for name in names]
        for author in ids:
            self.uses[author] = self.uses.get(author, 0) + 1
        return Version("0" * 16, truncated=truncated, authors=tuple(zip(ids, range(1, 99))))

    def people(self, *versions: Version) -> dict[str, str]:
        """{name key: the key the paper shows for them} of the names shown under another."""
        found = one_person_ids(versions, self.keys.__getitem__, self.uses.__getitem__)
        return {self.keys[a]: self.keys[b] for a, b in found.items()}


@pytest.mark.parametrize(
    "shorter, fuller",
    [("ann lee", "ann b lee"), ("ann lee", "ann b c lee"), ("ann c lee", "ann b c d lee")],
)
def test_added_middle_initials(shorter, fuller):
    assert initials_apart(shorter, fuller) and initials_apart(fuller, shorter)


@pytest.mark.parametrize(
    "shorter, fuller",
    [
        ("ann lee", "ann lee"),
        ("ann lee", "ann bo lee"),  # a name, not an initial
        ("ann lee", "a b lee"),  # another first word
        ("ann b lee", "ann c d lee"),  # an initial changed
        ("lee", "b lee"),  # no middle
    ],
)
def test_other_words_are_no_added_initials(shorter, fuller):
    assert not initials_apart(shorter, fuller)


def test_one_edit():
    assert edit_distance_at_most_one("brandon reagan", "brandon reagen")
    assert edit_distance_at_most_one("bernhard scholkopf", "bernhard schoelkopf")
    assert edit_distance_at_most_one("ana b costa", "anab costa")
    assert not edit_distance_at_most_one("wei han", "wei tang")
    assert not edit_distance_at_most_one("ab", "ba")


@given(st.text("abc ", max_size=6), st.text("abc ", max_size=6))
def test_one_edit_is_levenshtein_at_most_one(first, second):
    distance = list(range(len(second) + 1))
    for i, a in enumerate(first, 1):
        previous, distance[0] = distance[0], i
        for j, b in enumerate(second, 1):
            previous, distance[j] = (
                distance[j],
                min(distance[j] + 1, distance[j - 1] + 1, previous + (a != b)),
            )
    assert edit_distance_at_most_one(first, second) == (distance[-1] <= 1)


def test_real_versions_name_each_person_once():
    """The real lists of tests/fixtures/real/merge/people_once.jsonl."""
    names = Names()
    assert names.people(
        names.version("Sergey Bartunov", "Adam Santoro", "Blake A. Richards", "Geoffrey E. Hinton"),
        names.version("Sergey Bartunov", "Adam Santoro", "Blake Richards", "Luke Marris"),
    ) == {"blake richards": "blake a richards"}
    names = Names()  # two coauthors fewer: the places shift
    iclr = ("Richard Socher", "Milind Ganjoo", "Hamsa Sridhar", "Osbert Bastani")
    assert names.people(
        names.version(*iclr, "Christopher Manning", "Andrew Y. Ng"),
        names.version("Richard Socher", "Milind Ganjoo", "Christopher D. Manning", "Andrew Ng"),
    ) == {"christopher manning": "christopher d manning", "andrew ng": "andrew y ng"}
    names = Names()  # two coauthors swapped: they stand beside no one
    assert names.people(
        names.version("G Parascandolo", "Mateo Rojas Carulla", "Niki Kilbertus", "B Schoelkopf"),
        names.version("G Parascandolo", "Niki Kilbertus", "Mateo Rojas-Carulla", "B Schölkopf"),
    ) == {"b scholkopf": "b schoelkopf"}
    names = Names()  # one edit beside matching names; a nickname is another name
    assert names.people(
        names.version("Brandon Reagen", "Udit Gupta", "Robert Adolf", "Michael Mitzenmacher"),
        names.version("Brandon Reagan", "Udit Gupta", "Bob Adolf", "Michael Mitzenmacher"),
    ) == {"brandon reagen": "brandon reagan"}


def test_the_spelling_more_entries_use_is_kept_of_one_edit():
    names = Names()
    names.version("Bernhard Schölkopf")  # another paper
    assert names.people(
        names.version("G Parascandolo", "Bernhard Schoelkopf"),
        names.version("G Parascandolo", "Bernhard Schölkopf"),
    ) == {"bernhard schoelkopf": "bernhard scholkopf"}


def test_one_edit_needs_a_matching_name_beside_it():
    names = Names()  # alone: other people as likely as a typo
    assert names.people(names.version("Wei Han"), names.version("Wei Tan")) == {}
    names = Names()  # the names beside differ
    assert (
        names.people(
            names.version("Ann Lee", "Xi Chen", "Bo Wu"),
            names.version("Ann Lee", "Xu Chen", "Li Wu"),
        )
        == {}
    )
    names = Names()  # initials need no neighbour
    assert names.people(names.version("Ann Lee"), names.version("Ann B. Lee")) == {
        "ann lee": "ann b lee"
    }


@pytest.mark.parametrize(
    "first, second",
    [
        # real spellings of one person (Paper Copilot's lists: ICLR 2018 / ICML 2018, ICLR 2018
        # / NeurIPS 2018, ICLR 2017 / ICML 2017, ICLR 2017 / ICML 2013)
        ("Thomas L. Griffiths", "Tom Griffiths"),
        ("Joshua B. Tenenbaum", "Josh Tenenbaum"),
        ("Joshua Fromm", "Josh Fromm"),
        ("Hado van Hasselt", "Hado Hasselt"),
        ("Guy Van den Broeck", "Guy Broeck"),
        ("H.I. Christensen", "Henrik Christensen"),
    ],
)
def test_short_forms_initials_and_dropped_particles(first, second):
    assert short_form_apart(name_key(first), name_key(second))
    assert short_form_apart(name_key(second), name_key(first))


@pytest.mark.parametrize(
    "first, second",
    [
        ("Alyosha Efros", "Alexei Efros"),  # a nickname, not a short form
        ("Robert Adolf", "Bob Adolf"),
        ("Xi Chen", "Xiao Chen"),  # two letters: a name of its own
        ("Tom Li", "Tom Lin"),  # another surname
        ("Thomas B. Li", "Tom C. Li"),  # another middle initial
        ("Tom Li", "Tom Li"),
    ],
)
def test_other_given_names_are_no_short_forms(first, second):
    assert not short_form_apart(name_key(first), name_key(second))


def test_a_middle_initial_beside_a_hyphenated_surname():
    # real spellings of one person (Paper Copilot: ICLR 2017 and ICML 2013): the key runs the
    # surname's first part into the given name when there is no initial between
    first, second = name_key("Miguel A. Carreira-Perpinan"), name_key("Miguel Carreira-Perpinan")
    assert (first, second) == ("miguel a carreira perpinan", "miguelcarreira perpinan")
    assert initials_apart(first, second)
    names = Names()
    assert names.people(
        names.version("Ramin Raziperchikolaei", "Miguel A. Carreira-Perpinan"),
        names.version("Ramin Raziperchikolaei", "Miguel Carreira-Perpinan"),
    ) == {"miguelcarreira perpinan": "miguel a carreira perpinan"}


def test_a_short_form_counts_only_at_the_same_place():
    names = Names()  # at the same place of the stretch after the shared names
    assert names.people(
        names.version("Rachit Dubey", "Thomas L. Griffiths", "Alexei A. Efros"),
        names.version("Rachit Dubey", "Tom Griffiths", "Alexei Efros"),
    ) == {"tom griffiths": "thomas l griffiths", "alexei efros": "alexei a efros"}
    names = Names()  # two places apart: other people as likely
    assert (
        names.people(
            names.version("Rachit Dubey", "Tom Li", "Bo Wu", "Ann Ma"),
            names.version("Rachit Dubey", "Xu Chen", "Yan Zhao", "Thomas Li"),
        )
        == {}
    )


def test_two_names_of_one_list_are_never_one_person():
    names = Names()
    assert (
        names.people(
            names.version("Ann Lee", "Bo Chen", "Ann B. Lee"),
            names.version("Ann B. Lee", "Bo Chen", "Ann Lee"),
        )
        == {}
    )
    names = Names()  # nor through a third name
    found = names.people(
        names.version("Ann Lee", "Ann B. Lee"), names.version("Ann C. Lee", "Ann B. C. Lee")
    )
    assert found == {"ann lee": "ann c lee", "ann b lee": "ann b c lee"}


# names with variants of one another: initials added, one edit, other people
POOL = [
    "Ann Lee", "Ann B. Lee", "Ann C. Lee", "Ann B. C. Lee", "Ann Lea", "Anne Lee",
    "Bo Chen", "Bo Chan", "Bo K. Chen", "Xi Chen", "Xu Chen", "Xiao Chen", "Wei Han", "Wei Tan",
    "Tom Li", "Thomas Li", "T. Li", "Thomas B. Li", "Tim Li", "Jon Smith-Jones",
    "Jonathan Q. Smith-Jones", "Jonathan Smith-Jones", "Hado van Hasselt", "Hado Hasselt",
]  # fmt: skip
lists = st.lists(st.lists(st.sampled_from(POOL), max_size=6, unique=True), min_size=1, max_size=5)


def people_of(lists_of_names, seed=0):
    names = Names()
    for name in POOL:
        names.id(name)
    versions = [names.version(*listed) for listed in lists_of_names]
    random.Random(seed).shuffle(versions)
    found = one_person_ids(versions, names.keys.__getitem__, names.uses.__getitem__)
    return names, versions, found


@given(lists)
def test_never_merges_two_names_of_one_version(lists_of_names):
    _, versions, found = people_of(lists_of_names)
    for version in versions:
        shown = [found.get(author, author) for author, _ in version.authors]
        assert len(set(shown)) == len(shown)


@given(lists)
def test_applying_the_rule_to_its_result_changes_nothing(lists_of_names):
    names, versions, found = people_of(lists_of_names)
    assert not set(found.values()) & set(found)  # a shown id stands for itself
    again = [
        Version(v.paper_id, authors=tuple((found.get(a, a), p) for a, p in v.authors))
        for v in versions
    ]
    assert one_person_ids(again, names.keys.__getitem__, names.uses.__getitem__) == {}


@given(lists, st.integers(0, 100))
def test_the_order_of_the_versions_does_not_count(lists_of_names, seed):
    assert people_of(lists_of_names)[2] == people_of(lists_of_names, seed)[2]


@given(lists)
def test_the_fuller_name_is_kept(lists_of_names):
    names, _, found = people_of(lists_of_names)
    for author, shown in found.items():
        assert len(names.keys[shown].split()) >= len(names.keys[author].split())


def paper_authors(db, title_start):
    (authors,) = db.execute(
        "select authors from papers where title like ?", [title_start + "%"]
    ).fetchone()
    return json.loads(authors)


def test_a_real_paper_lists_each_person_once(build_fixtures):
    """Real versions of five papers (ICLR and NeurIPS or ICML), each naming a person two ways."""
    db = build_fixtures("people_once.jsonl")
    assert db.execute("select count(*), sum(source_count) from papers").fetchone() == (5, 10)
    assert paper_authors(db, "Assessing the") == [
        "Sergey Bartunov", "Adam Santoro", "Blake A. Richards", "Luke Marris",
        "Geoffrey E. Hinton", "Timothy Lillicrap",
    ]  # fmt: skip
    assert paper_authors(db, "Zero-Shot") == [
        "Richard Socher", "Milind Ganjoo", "Hamsa Sridhar", "Osbert Bastani",
        "Christopher D. Manning", "Andrew Y. Ng",
    ]  # fmt: skip
    assert paper_authors(db, "Transformation Autoregressive")[-2:] == [
        "Eric P. Xing",
        "Jeff Schneider",
    ]
    # one entry each: the longer key is kept
    assert paper_authors(db, "Learning Independent")[-1] == "Bernhard Schoelkopf"
    weightless = paper_authors(db, "Weightless")
    assert weightless[0] == "Brandon Reagan" and "Brandon Reagen" not in weightless
    assert {"Robert Adolf", "Bob Adolf"} <= set(weightless)  # a nickname: not this rule's
    # a spelling no paper lists any more is no author; its paper's link table agrees
    names = {row[0] for row in db.execute("select name from authors")}
    assert not names & {"Blake Richards", "Christopher Manning", "Andrew Ng", "Eric Xing"}
    assert db.execute(
        "select count(*) from authors where paper_count = 0 or id not in "
        "(select author_id from paper_authors)"
    ).fetchone() == (0,)
    assert db.execute(
        "select count(*) from papers where author_count != json_array_length(authors)"
    ).fetchone() == (0,)


def test_a_real_paper_lists_a_person_once_under_a_short_form(build_fixtures):
    """Real versions of four papers (tests/fixtures/real/merge/people_short_forms.jsonl): a
    given name's short form (Tom / Thomas L., Josh / Joshua), a surname's particle dropped
    (Hado Hasselt); a nickname (Alyosha / Alexei) is another name."""
    db = build_fixtures("people_short_forms.jsonl")
    assert db.execute("select count(*), sum(source_count) from papers").fetchone() == (4, 8)
    assert paper_authors(db, "Investigating Human Priors") == [
        "Rachit Dubey", "Pulkit Agrawal", "Deepak Pathak", "Thomas L. Griffiths",
        "Alexei A. Efros",
    ]  # fmt: skip
    assert paper_authors(db, "Heterogeneous Bitwidth") == [
        "Joshua Fromm", "Shwetak Patel", "Matthai Philipose",
    ]  # fmt: skip
    predictron = paper_authors(db, "The Predictron")
    assert len(predictron) == 11 and predictron[1] == "Hado van Hasselt"
    cycada = paper_authors(db, "CyCADA")
    assert {"Alyosha Efros", "Alexei Efros"} <= set(cycada) and len(cycada) == 9
    assert db.execute(
        "select count(*) from papers where author_count != json_array_length(authors)"
    ).fetchone() == (0,)
    names = {row[0] for row in db.execute("select name from authors")}
    assert not names & {"Tom Griffiths", "Josh Fromm", "Hado Hasselt"}


def test_initials_stay_apart_across_papers(tmp_path):
    """`Sham M. Kakade` and `Sham Kakade` are one person in the versions of one paper (ICLR
    2018 / ICML 2018), and stay two authors across papers (an ICML 2015 paper)."""
    for source in (
        FIXTURES / "real" / "merge" / "versions_abstract.jsonl",
        FIXTURES / "real" / "sample" / "icml2015.jsonl",
    ):
        shutil.copy(source, tmp_path)
    build_catalog(sorted(tmp_path.iterdir()), tmp_path / "catalog.db")
    db = sqlite3.connect(tmp_path / "catalog.db")
    assert paper_authors(db, "Global Convergence") == [
        "Maryam Fazel", "Rong Ge", "Sham M. Kakade", "Mehran Mesbahi",
    ]  # fmt: skip
    assert db.execute(
        "select name, paper_count from authors where key like 'sham%kakade' order by name"
    ).fetchall() == [("Sham Kakade", 1), ("Sham M. Kakade", 1)]


@pytest.mark.asyncio
async def test_the_bibtex_of_a_real_merged_paper_names_each_person_once(build_fixtures):
    db = build_fixtures("people_once.jsonl")
    (paper_id,) = db.execute("select id from papers where title like 'Assessing%'").fetchone()
    entry = (await merge_fixtures.site(db).client.get(f"/catalog/papers/{paper_id}.bib")).text
    assert "Blake A. Richards" in entry
    assert "Blake Richards" not in entry
    assert entry.count("Richards") == 1


def test_a_placeholder_abstracts_many_lists_are_left_as_they_are():
    """Untitled entries a source gave one placeholder abstract are one paper with many author
    lists: not one paper's versions, and comparing every two would cost their square."""
    names = Names()
    many = [names.version(f"Person {i * 11:03d}", "Ann Lee") for i in range(40)]  # 2 edits apart
    assert names.people(*many, names.version("Person 011", "Ann B. Lee")) == {}
    assert names.people(*many[:5], names.version("Person 011", "Ann B. Lee")) == {
        "ann lee": "ann b lee"
    }
