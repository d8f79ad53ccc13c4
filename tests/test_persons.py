"""People by their ids: the ids the readers take (loader/read/author_ids.py), the rule of who is
one person (loader/rules/persons.py), the build (loader/build/persons.py) and the author page,
on real Paper Copilot records (tests/fixtures/dumps/persons/SOURCE.md)."""

import csv
import io
import json
import re
import shutil
import sqlite3
from html import unescape

import pytest

from loader.build.catalog import build_catalog
from loader.read.author_ids import aligned_ids, id_value
from loader.read.paperlists import parse_paperlists
from loader.read.sources import read_source
from loader.rules.names import name_key
from loader.rules.persons import PersonIds, person_for_name

from .conftest import FIXTURES, served_app

PERSONS = FIXTURES / "dumps" / "persons"


# -- reading ids ------------------------------------------------------------------------------


@pytest.mark.parametrize(
    "kind, text, value",
    [
        ("openreview", "~Stanislaw_Szymanowicz1", "~Stanislaw_Szymanowicz1"),
        ("openreview", "xiaoxiao.guo@ibm.com", None),  # an address is no person's id
        ("openreview", "/37089406983", None),  # IEEE Xplore's numbers are not read
        ("openreview", "/j/jingyi-zhang/", None),  # nor ACL Anthology's name pages
        ("orcid", "0000-0003-1447-121X", "0000-0003-1447-121X"),
        ("orcid", "http://orcid.org/0000-0001-7468-5127", "0000-0001-7468-5127"),
        ("orcid", "1447-121X", None),
        ("dblp", "295/8991.html", "295/8991"),
        ("dblp", "https://dblp.uni-trier.de/pid/76/744-1", "76/744-1"),
        ("dblp", "h/FeiHuang", "h/FeiHuang"),
        ("dblp", "\ud800/1", None),
    ],
)
def test_real_id_shapes(kind, text, value):
    """The shapes of /tmp/pl's `authorids`, `orcid` and `dblp` (3DV 2025, ACL 2021, ICRA 2020,
    ICLR 2018, COLM 2024)."""
    assert id_value(kind, text) == value


def test_ids_stay_with_their_names_when_a_slot_is_skipped():
    # the second slot holds no name: its id goes with it, the third stays the third's
    ids = aligned_ids([0, 2], {"openreview": ["~Ann_Lee1", "~Nobody1", "~Bo_Chen2"]})
    assert ids == [{"openreview": "~Ann_Lee1"}, {"openreview": "~Bo_Chen2"}]
    # a list of another length than the names' is not read
    assert aligned_ids([0, 1], {"openreview": ["~Ann_Lee1"]}) == []


def test_paperlists_records_give_profile_ids_orcids_and_dblp_pids_and_no_addresses():
    items = list(parse_paperlists("colm2025.json", PERSONS / "colm2025.json"))
    entry = items[0]
    at = entry.authors.index("Yang Liu")
    assert entry.author_ids[at] == {
        "openreview": "~Yang_Liu36",
        "orcid": "0000-0001-7300-9215",
        "dblp": "51/3710-3",
    }
    assert len(entry.author_ids) == len(entry.authors)
    # ICLR 2018: `authorids` are e-mail addresses and blanks
    (older,) = parse_paperlists("iclr2018.json", PERSONS / "iclr2018.json")
    assert older.authors[1] == "Xiaoxiao Guo" and older.author_ids == []


def test_json_lines_author_ids():
    _, items = read_source(PERSONS / "people.jsonl")
    first, second = items
    assert first.author_ids[first.authors.index("Bill Y. Lin")] == {
        "openreview": "~Bill_Yuchen_Lin1"
    }
    assert second.author_ids == []


# -- the rule ---------------------------------------------------------------------------------


def test_spellings_that_share_an_id_are_one_person():
    persons = PersonIds()
    persons.add(1, (("openreview", "~Bill_Yuchen_Lin1"),))
    assert persons.find((("openreview", "~Bill_Yuchen_Lin1"),)) == (1, [])


def test_an_id_of_another_kind_joins_two_persons():
    persons = PersonIds()
    persons.add(1, (("openreview", "~Ann_Lee1"),))
    persons.add(2, (("orcid", "0000-0001-7300-9215"),))
    found = persons.find((("openreview", "~Ann_Lee1"), ("orcid", "0000-0001-7300-9215")))
    assert found == (1, [2])


def test_one_name_with_two_ids_of_one_kind_is_two_people():
    persons = PersonIds()
    persons.add(1, (("openreview", "~Yang_Liu19"),))
    assert persons.find((("openreview", "~Yang_Liu60"),)) == (None, [])


def test_people_whose_ids_of_one_kind_disagree_are_never_one():
    """Real: COLM 2024 gives ~Yang_Liu19 the DBLP pid h/FeiHuang (its dblp list a slot off);
    Fei Huang's profile with that pid is not Yang Liu, and the pid is no one's after."""
    persons = PersonIds()
    persons.add(1, (("openreview", "~Yang_Liu19"), ("dblp", "h/FeiHuang")))
    assert persons.find((("openreview", "~Fei_Huang2"), ("dblp", "h/FeiHuang"))) == (None, [])
    persons.add(2, (("openreview", "~Fei_Huang2"), ("dblp", "h/FeiHuang")))
    assert ("dblp", "h/FeiHuang") in persons.disputed
    assert ("dblp", "h/FeiHuang") not in {(kind, value) for _, kind, value in persons.rows()}
    # two persons with two profiles are not joined by a pid they share
    persons.add(3, (("openreview", "~Ann_Lee1"),))
    persons.add(4, (("openreview", "~Ann_Lee2"), ("orcid", "0000-0002-1825-0097")))
    found = persons.find((("openreview", "~Ann_Lee1"), ("orcid", "0000-0002-1825-0097")))
    assert found == (3, [])


def test_the_strongest_id_decides_and_a_second_dblp_pid_is_the_same_person():
    """Real: ~Hannaneh_Hajishirzi1 comes with DBLP pids 241/9430 and 52/1296 (COLM 2024)."""
    persons = PersonIds()
    persons.add(1, (("openreview", "~Hannaneh_Hajishirzi1"), ("dblp", "241/9430")))
    ids = (("openreview", "~Hannaneh_Hajishirzi1"), ("dblp", "52/1296"))
    assert persons.find(ids) == (1, [])
    persons.add(1, ids)
    assert persons.held[1]["dblp"] == ["241/9430", "52/1296"]


@pytest.mark.parametrize(
    "coauthors, affiliations, expected",
    [
        ({"peng li"}, set(), 19),  # a co-author of ~Yang_Liu19's
        (set(), {7}, 36),  # ~Yang_Liu36's affiliation
        ({"peng li"}, {7}, None),  # both qualify: no one
        ({"ann lee"}, {9}, None),  # no one qualifies: the name stays a name
    ],
)
def test_a_name_without_ids_joins_the_one_person_it_shares_a_coauthor_or_affiliation_with(
    coauthors, affiliations, expected
):
    coauthors_of = {19: {"peng li", "zijun liu"}, 36: {"tianwei zhang"}, 60: set()}
    affiliations_of = {19: {1}, 36: {7}, 60: {8}}
    found = person_for_name(
        coauthors, affiliations, [19, 36, 60], coauthors_of.__getitem__, affiliations_of.__getitem__
    )
    assert found == expected


def test_nicknames_fold_in_name_keys():
    assert name_key("Wenjie (Jack) Zhao") == name_key("Wenjie Zhao")
    assert name_key('Lin "Lily" Xu') == name_key("Lin Xu")


# -- the build and the served app -------------------------------------------------------------


@pytest.fixture(scope="module")
def persons_catalog(tmp_path_factory):
    folder = tmp_path_factory.mktemp("persons")
    for path in PERSONS.iterdir():
        if path.suffix in (".json", ".jsonl"):
            shutil.copy(path, folder / path.name)
    db = folder / "catalog.db"
    build_catalog(sorted(p for p in folder.iterdir() if p.suffix != ".db"), db)
    return db


def authors_named(db, key):
    connection = sqlite3.connect(db)
    connection.row_factory = sqlite3.Row
    return [
        dict(row)
        for row in connection.execute(
            "select * from authors where key = ? order by paper_count desc, id", [key]
        )
    ]


def test_a_person_with_two_spellings_and_one_id_is_one_author(persons_catalog):
    (person,) = authors_named(persons_catalog, "billyuchen lin")
    assert person["paper_count"] == 3
    assert json.loads(person["ids"])["openreview"] == ["~Bill_Yuchen_Lin1"]
    assert authors_named(persons_catalog, "bill y lin") == []
    spellings = sqlite3.connect(persons_catalog).execute(
        "select name, paper_count from author_variants where author_id = ? order by name",
        [person["id"]],
    )
    assert spellings.fetchall() == [("Bill Y. Lin", 1), ("Bill Yuchen Lin", 2)]


def test_one_name_with_three_profile_ids_is_three_authors(persons_catalog):
    people = authors_named(persons_catalog, "yang liu")
    profiles = [json.loads(person["ids"])["openreview"] for person in people]
    assert profiles == [["~Yang_Liu19"], ["~Yang_Liu60"], ["~Yang_Liu36"]]
    # the name without ids (people.jsonl) shares Peng Li with ~Yang_Liu19 alone: theirs
    assert [person["paper_count"] for person in people] == [4, 2, 1]
    rows = sqlite3.connect(persons_catalog).execute(
        "select kind, value from author_ids where author_id = ? order by kind", [people[2]["id"]]
    )
    assert rows.fetchall() == [
        ("dblp", "51/3710-3"),
        ("openreview", "~Yang_Liu36"),
        ("orcid", "0000-0001-7300-9215"),
    ]


def test_addresses_make_no_person(persons_catalog):
    (author,) = authors_named(persons_catalog, "xiaoxiao guo")
    assert author["ids"] is None


@pytest.mark.asyncio
async def test_the_author_page_links_the_ids_and_tells_namesakes_apart(persons_catalog):
    (person, *_) = authors_named(persons_catalog, "yang liu")
    datasette = served_app(persons_catalog).datasette
    response = await datasette.client.get(f"/catalog/authors/{person['id']}")
    assert response.status_code == 200
    html = response.text
    assert 'href="https://openreview.net/profile?id=~Yang_Liu19"' in html
    assert "Other people share this name" in html
    assert "this page is the Yang Liu of Tsinghua University" in html
    row = await datasette.client.get(f"/catalog/authors/{person['id']}.json?_shape=objects")
    assert json.loads(row.json()["rows"][0]["ids"]) == {"openreview": ["~Yang_Liu19"]}
    (other,) = [p for p in authors_named(persons_catalog, "yang liu") if "Yang_Liu36" in p["ids"]]
    html = (await datasette.client.get(f"/catalog/authors/{other['id']}")).text
    assert 'href="https://orcid.org/0000-0001-7300-9215"' in html
    assert 'href="https://dblp.org/pid/51/3710-3"' in html


@pytest.mark.asyncio
async def test_search_results_carry_the_persons_author_id(persons_catalog):
    (person, *_) = authors_named(persons_catalog, "yang liu")
    datasette = served_app(persons_catalog).datasette
    # the paper of people.jsonl whose Yang Liu has no id: ~Yang_Liu19's by the rule
    response = await datasette.client.get("/search.json?q=FormaRL")
    (paper,) = response.json()["results"]
    assert {"id": person["id"], "name": "Yang Liu"} in paper["authors"]


@pytest.mark.asyncio
async def test_a_persons_all_papers_links_leave_their_namesakes_papers_out(persons_catalog):
    (person, *_) = authors_named(persons_catalog, "yang liu")
    datasette = served_app(persons_catalog).datasette
    html = (await datasette.client.get(f"/catalog/authors/{person['id']}")).text
    (csv_url,) = re.findall(r'CSV of their papers: <a href="([^"]+)"', html)
    csv_rows = list(
        csv.DictReader(io.StringIO((await datasette.client.get(unescape(csv_url))).text))
    )
    assert len(csv_rows) == person["paper_count"] == 4
    table_url = unescape(csv_url).replace("papers.csv", "papers.json").replace("_stream=on", "")
    rows = (await datasette.client.get(table_url + "&_shape=objects")).json()["rows"]
    assert sorted(row["id"] for row in rows) == sorted(row["id"] for row in csv_rows)
    # the person of one name with no namesake keeps the name's filter (the authors facet's)
    (single,) = authors_named(persons_catalog, "billyuchen lin")
    html = (await datasette.client.get(f"/catalog/authors/{single['id']}")).text
    assert "authors__arraycontains=Bill+Yuchen+Lin" in html
