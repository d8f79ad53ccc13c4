"""What Paper Copilot records say beyond the paper itself, kept: links, Google Scholar citation
counts, review ratings, TL;DRs and normalised affiliations with their countries. Read from real
records (tests/fixtures/dumps/paperlists_fields/, see tests/fixtures/dumps/SOURCE.md) and
built into a catalog checked with SQL."""

import json
import sqlite3
from pathlib import Path

import pytest

from loader.build.catalog import build_catalog
from loader.read.paperlists import parse_paperlists, read_rating
from loader.read.sources import plan_inputs, read_source
from loader.records import LINK_KINDS, Entry

from .conftest import FIXTURES

FOLDER = FIXTURES / "dumps" / "paperlists_fields"


def entries(name: str) -> list[Entry]:
    path = FOLDER / name
    items = list(parse_paperlists(name, path))
    assert all(isinstance(item, Entry) for item in items)
    return [item for item in items if isinstance(item, Entry)]


def records(name: str) -> list[dict]:
    return json.loads((FOLDER / name).read_text(encoding="utf-8"))


def entry_titled(name: str, start: str) -> Entry:
    return next(e for e in entries(name) if e.title and e.title.startswith(start))


def test_links_are_the_urls_the_record_gives_in_display_order():
    counting = entry_titled("iclr2018.json", "Learning to Count Objects")
    assert counting.links == {
        "pdf": "https://openreview.net/pdf?id=B12Js_yRb",
        # the record's Markdown link: its target
        "code": "https://github.com/Cyanogenoid/vqa-counting",
        "openreview": "https://openreview.net/forum?id=B12Js_yRb",
    }
    for entry in entries("aaai2022.json") + entries("cvpr2018.json"):
        assert list(entry.links) == [kind for kind in LINK_KINDS if kind in entry.links]
        assert all(url.startswith(("https://", "http://")) for url in entry.links.values())


def test_bare_ids_and_scheme_less_links_made_absolute():
    aaai = entries("aaai2022.json")[0]
    # "doi": "10.1609/aaai.v36i1.19922"
    assert aaai.links["doi"].startswith("https://doi.org/10.1609/aaai.")
    cvpr = entry_titled("cvpr2018.json", "Actor and Observer")
    assert cvpr.links["code"] == "https://github.com/gsig/actor-observer"
    assert cvpr.links["arxiv"] == "https://arxiv.org/abs/1804.09627"  # "arXiv:1804.09627"
    assert cvpr.arxiv_id == "1804.09627"
    # a link that is no URL (a ssh-style "github.com:owner/repo") is left out, not guessed at
    alignment = entry_titled("acl2022.json", "Alignment-Augmented")
    assert "code" not in alignment.links
    for entry in entries("acl2022.json"):
        assert "github.com:" not in entry.links.get("code", "")


def test_citations_keep_their_source_and_minus_one_is_unknown():
    by_title = {record["title"]: record for record in records("iclr2018.json")}
    unknown = known = 0
    for entry in entries("iclr2018.json"):
        count = by_title[entry.title]["gs_citation"]
        if count == -1:
            assert entry.citations is None and entry.citations_source is None
            unknown += 1
        else:
            assert (entry.citations, entry.citations_source) == (count, "Google Scholar")
            known += 1
    assert unknown == 5 and known == 40


def test_rating_forms():
    # ICLR 2018: a mean as a number beside "4;6;6"
    counting = entry_titled("iclr2018.json", "Learning to Count Objects")
    assert counting.rating == pytest.approx(16 / 3) and counting.rating_count == 3
    # COLM 2025: [mean, std] beside "5;6;6;6"
    first = entries("colm2025.json")[0]
    assert (first.rating, first.rating_count) == (5.75, 4)
    # 3DV 2025: [0, 0] beside "": no ratings, not a mean of 0
    assert all(e.rating is None and e.rating_count is None for e in entries("3dv2025.json"))
    # ICLR 2018 "Think Visually": rating_avg 0 beside "": none either
    think = entry_titled("iclr2018.json", "THINK VISUALLY")
    assert think.rating is None
    # the string form of [mean, std], on the COLM record as it would be written so
    record = dict(records("colm2025.json")[0], rating_avg="[5.75, 0.4330127018922193]")
    assert read_rating(record) == (5.75, 4)
    assert read_rating(dict(record, rating_avg="2.75")) == (2.75, 4)


def test_tldr_kept():
    counting = entry_titled("iclr2018.json", "Learning to Count Objects")
    assert counting.tldr and counting.tldr.startswith("Enabling Visual Question Answering")
    assert sum(1 for e in entries("iclr2018.json") if e.tldr) == 39


def test_affiliations_are_the_normalised_names_with_their_countries():
    aaai = records("aaai2022.json")
    for entry, record in zip(entries("aaai2022.json"), aaai):
        names = [n for n in record.get("aff_unique_norm", "").split(";") if n]
        assert entry.affiliations == names
        assert len(entry.affiliation_countries) == len(entry.affiliations)
    # the countries where the two index fields agree slot for slot
    colm = entries("colm2025.json")[0]
    assert dict(zip(colm.affiliations, colm.affiliation_countries)) == {
        "University of Massachusetts Amherst": "United States",
        "University of Maryland": "United States",
    }


def test_countries_where_the_country_index_skips_authors_with_no_affiliation():
    # 3DV 2025: "Stanford University;;ETH Zurich;Swiss Federal Institute of Technology",
    # index 0;1;2;1;3;0, countries "United States;;Switzerland" index 0;2;2;0 (no slot for
    # the two authors whose affiliation is empty)
    stanford = entries("3dv2025.json")[1]
    assert dict(zip(stanford.affiliations, stanford.affiliation_countries)) == {
        "Stanford University": "United States",
        "ETH Zurich": "Switzerland",
        "Swiss Federal Institute of Technology": "Switzerland",
    }
    # the country index leaves out an author with a name and no country: unknown, not shifted
    oxford = entries("3dv2025.json")[0]
    assert oxford.affiliations[:3] == ["University of Oxford", "Google", "Independent Researcher"]
    assert set(oxford.affiliation_countries) == {None}


def test_placeholder_names_are_no_affiliation():
    # ICML 2019: "University Affiliation Not Specified;" for "Department of Statistics"...
    entry = entries("icml2019.json")[30]
    assert "University Affiliation Not Specified" not in entry.affiliations


@pytest.fixture(scope="module")
def catalog(tmp_path_factory) -> sqlite3.Connection:
    path = tmp_path_factory.mktemp("fields") / "catalog.db"
    build_catalog(plan_inputs([FOLDER]), path)
    connection = sqlite3.connect(path)
    yield connection
    connection.close()


def test_sources_dated_by_sources_yml(catalog):
    dates = {
        Path(path).name: as_of for path, as_of in catalog.execute("select path, as_of from sources")
    }
    assert dates["iclr2018.json"] == "2025-06-02"
    assert dates["colm2025.json"] == "2025-08"


def test_built_links_citations_and_ratings(catalog):
    links, has_code, citations, source, as_of, rating, count = catalog.execute(
        "select links, has_code, citations, citations_source, citations_as_of, rating, "
        "rating_count from papers where title like 'Learning to Count Objects%'"
    ).fetchone()
    assert json.loads(links)["code"] == "https://github.com/Cyanogenoid/vqa-counting"
    assert list(json.loads(links)) == ["pdf", "code", "openreview"]
    assert (has_code, source, as_of, count) == (1, "Google Scholar", "2025-06-02", 3)
    assert citations == 260 and rating == pytest.approx(16 / 3)
    # every link of every paper, one row each
    (rows,) = catalog.execute("select count(*) from paper_links").fetchone()
    (total,) = catalog.execute(
        "select sum((select count(*) from json_each(links))) from papers"
    ).fetchone()
    assert rows == total
    assert catalog.execute(
        "select count(*) from papers where has_code != (json_extract(links, '$.code') is not null)"
    ).fetchone() == (0,)
    # unknown counts stay unknown, with no source or date
    assert catalog.execute(
        "select count(*) from papers where citations is null and "
        "(citations_source is not null or citations_as_of is not null)"
    ).fetchone() == (0,)
    assert catalog.execute(
        "select count(*), count(citations), count(rating) from paper_sources"
    ).fetchone() == (281, 221, 72)


def test_built_affiliations_have_countries(catalog):
    countries = dict(catalog.execute("select name, country from affiliations"))
    assert countries["Stanford University"] == "United States"
    assert countries["ETH Zurich"] == "Switzerland"
    assert "University Affiliation Not Specified" not in countries
    # names as normalised, never rebuilt from a slug
    assert not [name for name in countries if name.split()[:1] * 2 == name.split()[:2]]


def test_merged_versions_keep_every_link_and_the_highest_count(tmp_path: Path):
    record = next(r for r in records("iclr2018.json") if r["id"] == "B12Js_yRb")
    other = {
        "title": record["title"],
        "authors": record["author"].split(";"),
        "abstract": "Another version's abstract, which the title and authors tie to the record.",
        "links": {"code": "https://example.org/code", "pdf": "https://example.org/paper.pdf"},
        "citations": 1000,
        "citations_source": "Semantic Scholar",
        "rating": 9.0,
    }
    (tmp_path / "iclr2018.json").write_text(json.dumps([record]), encoding="utf-8")
    (tmp_path / "other.jsonl").write_text(json.dumps(other) + "\n", encoding="utf-8")
    db = tmp_path / "catalog.db"
    build_catalog(plan_inputs([tmp_path]), db)
    connection = sqlite3.connect(db)
    row = connection.execute(
        "select links, has_code, citations, citations_source, source_count from papers"
    ).fetchall()
    assert len(row) == 1
    links, has_code, citations, source, versions = row[0]
    assert versions == 2 and has_code == 1
    # the highest count, with the source that gave it
    assert (citations, source) == (1000, "Semantic Scholar")
    # each kind from the version shown first (the ICLR record: a venue over none)
    assert json.loads(links) == {
        "pdf": "https://openreview.net/pdf?id=B12Js_yRb",
        "code": "https://github.com/Cyanogenoid/vqa-counting",
        "openreview": "https://openreview.net/forum?id=B12Js_yRb",
    }
    # and every version's link in paper_links
    assert connection.execute(
        "select kind, count(*) from paper_links group by kind order by kind"
    ).fetchall() == [("code", 2), ("openreview", 1), ("pdf", 2)]
    connection.close()


def test_as_of_must_be_a_date(tmp_path: Path):
    (tmp_path / "iclr2018.json").write_text(json.dumps(records("iclr2018.json")[:1]))
    (tmp_path / "sources.yml").write_text('- match: "iclr2018.json"\n  as_of: last week\n')
    problems = plan_inputs([tmp_path])[0].config_problems
    assert [str(p).split(": ", 1)[1] for p in problems] == [
        "as_of 'last week' is not a date such as 2025-11 or 2025-11-03"
    ]


def test_openreview_notes_keep_pdf_and_tldr():
    # real API v1 notes (tests/fixtures/dumps/SOURCE.md): `pdf` is a path on openreview.net
    path = FIXTURES / "dumps" / "openreview" / "nips2018-workshop-notes.json"
    dropout, pruning = [e for e in read_source(path)[1] if isinstance(e, Entry)]
    assert dropout.links == {
        "pdf": "https://openreview.net/pdf/1e9b22c08d7651c60362b60af660c1f92d304b7c.pdf",
        "openreview": "https://openreview.net/forum?id=HkghWScuoQ",
    }
    assert dropout.tldr is None
    assert pruning.tldr and pruning.tldr.startswith("In network pruning, fine-tuning")


def test_arxiv_records_link_their_abstract_page_and_doi():
    path = FIXTURES / "dumps" / "arxiv" / "arxiv-metadata-oai-snapshot.json"
    first, second = [e for e in read_source(path)[1] if isinstance(e, Entry)][:2]
    assert first.links == {
        "arxiv": "https://arxiv.org/abs/0704.0001",
        "doi": "https://doi.org/10.1103/PhysRevD.76.013009",  # as written, case kept
    }
    assert second.links == {"arxiv": "https://arxiv.org/abs/0704.0002"}


def test_json_lines_links_and_signals_checked(tmp_path: Path):
    path = tmp_path / "papers.jsonl"
    base = {"abstract": "An abstract.", "authors": ["Ann Lee"]}
    lines = [
        dict(base, links={"code": "github.com/ann/fast"}, arxiv_id="2101.00001", tldr=" Fast. "),
        dict(base, links={"slides": "https://example.org/s.pdf"}),
        dict(base, links={"pdf": "not a link"}),
        dict(base, citations=-1),
        dict(base, rating="high"),
    ]
    path.write_text("".join(json.dumps(line) + "\n" for line in lines), encoding="utf-8")
    items = list(read_source(path)[1])
    assert isinstance(items[0], Entry)
    assert items[0].links == {
        "code": "https://github.com/ann/fast",
        "arxiv": "https://arxiv.org/abs/2101.00001",
    }
    assert items[0].tldr == "Fast."
    assert [str(item).split(f"{path}:", 1)[1] for item in items[1:]] == [
        "2: links: unknown kind 'slides' (expected pdf, code, project, openreview, arxiv, doi, oa)",
        "3: links: pdf 'not a link' is not a URL",
        "4: citations must be a whole number, 0 or more",
        "5: rating must be a number",
    ]
