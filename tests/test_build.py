"""The catalog the real loader builds: golden facts from the seeds and merge rules."""

import json
import re
import sqlite3
import subprocess
import sys
import unicodedata

import pytest
import sqlite_utils
import yaml

from loader.build.catalog import (
    BuildFailed,
    CatalogCheckFailed,
    build_catalog,
    check_integrity,
)
from loader.build.full_text import check_full_text_index
from loader.build.prepare import prepare_source_eagerly
from loader.build.schema import FTS_PAGE_BYTES, PAGE_SIZE
from loader.read.sources import discover, public_paths

from . import merge_fixtures
from .conftest import ROOT, SEEDS

LLM_TRACK = "Deep Learning · Large Language Models"


def test_golden_facts_from_the_seed_files(query):
    assert query("select count(*) from papers") == [(90,)]
    assert query("select count(*) from tracks") == [(16,)]
    assert query("select count(*) from papers where authors_truncated = 1") == [(43,)]
    assert query("select count(*) from authors") == [(276,)]
    assert query(
        "select count(*) from paper_authors join authors on authors.id = author_id "
        "where name = 'Huishuai Zhang'"
    ) == [(50,)]
    assert query("select paper_count from affiliations where slug = 'pku'") == [(4,)]
    assert query("select count(*) from papers where track = ?", [LLM_TRACK]) == [(12,)]
    assert query("select paper_count from tracks where name = ?", [LLM_TRACK]) == [(12,)]


AUTHOR_TRACKS_FROM_PAPERS = (
    "select author_id, track_id, count(*) from paper_authors "
    "join papers on papers.id = paper_id where track_id is not null "
    "group by author_id, track_id order by 1, 2"
)


def test_author_tracks_count_each_authors_papers_per_track(query):
    assert query("select count(*) from author_tracks") != [(0,)]
    assert query(
        "select author_id, track_id, paper_count from author_tracks order by 1, 2"
    ) == query(AUTHOR_TRACKS_FROM_PAPERS)


def test_sources_and_provenance(query):
    names = ["000_f6d208fccd6a4015.txt", "003_5bcb16731c62432c.txt", "004_c2ae629adeebe2a0.txt"]
    public = public_paths([str(SEEDS / name) for name in names])  # no absolute path stored
    assert query("select path, format, papers, problems from sources order by id") == [
        (public[str(SEEDS / names[0])], "listing", 20, 0),
        (public[str(SEEDS / names[1])], "profile", 50, 0),
        (public[str(SEEDS / names[2])], "listing", 20, 0),
    ]
    # the NorMuon entry starts with its track line, line 3 of the first file
    assert query(
        "select source_id, line from paper_sources join papers on papers.id = paper_id "
        "where label like 'NorMuon%'"
    ) == [(1, 3)]


def test_owner_is_linked_with_unknown_position_when_list_hides_them(query):
    rows = query(
        "select position from paper_authors join authors on authors.id = author_id "
        "where name = 'Huishuai Zhang'"
    )
    assert len(rows) == 50
    assert (None,) in rows and (2,) in rows


def test_denormalized_columns(query):
    ((authors, affiliations, track, area, label),) = query(
        "select authors, affiliations, track, area, label from papers where label like 'NorMuon%'"
    )
    assert json.loads(authors)[0] == "Zichong Li"
    assert json.loads(affiliations) == []
    assert (track, area) == (LLM_TRACK, "Deep Learning")
    assert label == "NorMuon: Neuron-wise Normalized Muon"


def test_search_finds_markup_stripped_text(query):
    def search(terms):
        return query(
            "select papers.label from papers join papers_fts on papers.rowid = papers_fts.rowid "
            "where papers_fts match ?",
            [terms],
        )

    assert [r[0] for r in search("smooth maximum mean discrepancy")] == [
        "SMMD: Smooth Maximum Mean Discrepancy"
    ]
    assert len(search('"21.74"')) == 1
    assert len(search("polylogarithmically")) == 1  # was *polylogarithmically*
    assert len(search('"high-quality"')) >= 1  # was \emph{high-quality}


def test_indexes_cover_foreign_keys_and_facets(query):
    indexed = {
        (row[0], row[1])
        for row in query(
            "select m.name, ii.name from sqlite_master m, pragma_index_list(m.name) il, "
            "pragma_index_info(il.name) ii where m.type = 'table'"
        )
    }
    for table, column in [
        ("papers", "track_id"),
        ("papers", "area"),
        ("papers", "track"),
        ("paper_authors", "author_id"),
        ("paper_affiliations", "affiliation_id"),
        ("paper_sources", "source_id"),
    ]:
        assert (table, column) in indexed


def test_catalog_is_not_in_wal_mode(seed_catalog):
    connection = sqlite3.connect(seed_catalog)
    assert connection.execute("pragma journal_mode").fetchone() == ("delete",)
    assert connection.execute("pragma integrity_check").fetchone() == ("ok",)


ABSTRACT = "We propose **Fast** *Method* (FM), a way to do things $O(n)$ with 5\\% error."


def write(tmp_path, name, text):
    path = tmp_path / name
    path.write_text(text, encoding="utf-8")
    return path


def build(tmp_path, *files, **options):
    db = tmp_path / "out.db"
    summary = build_catalog(sorted(files, key=str), db, **options)
    return summary, sqlite3.connect(db)


def test_duplicate_across_formats_is_one_paper(tmp_path):
    listing = write(
        tmp_path,
        "a.txt",
        f"论文检索\n\nDeep Learning · Robustness\n\nAnn Lee, Bo Chen, Cara Diaz\n\n{ABSTRACT}\n",
    )
    profile = write(
        tmp_path,
        "b.txt",
        f"Cara Diaz\n\nann lee, Bo Chen et al. · pku\n\n  {ABSTRACT.replace(' ', '  ')}\n",
    )
    jsonl = write(
        tmp_path,
        "c.jsonl",
        json.dumps(
            {
                "abstract": ABSTRACT,
                "authors": ["Ann Lee"],
                "affiliations": ["mit"],
                "title": "Fast Method",
                "authors_truncated": True,
            }
        )
        + "\n",
    )
    summary, db = build(tmp_path, profile, jsonl, listing)
    assert summary.papers == 1 and summary.authors == 3
    row = db.execute(
        "select title, label, track, authors, affiliations, authors_truncated, source_count "
        "from papers"
    ).fetchone()
    assert row == (
        "Fast Method",
        "Fast Method",
        "Deep Learning · Robustness",
        '["Ann Lee", "Bo Chen", "Cara Diaz"]',
        '["mit", "pku"]',
        0,
        3,
    )
    assert db.execute("select count(*) from paper_sources").fetchone() == (3,)
    assert db.execute(
        "select name, position from authors join paper_authors on author_id = id order by position"
    ).fetchall() == [("Ann Lee", 1), ("Bo Chen", 2), ("Cara Diaz", 3)]


def test_nfd_and_case_variants_are_one_author_with_best_display(tmp_path):
    nfd = unicodedata.normalize("NFD", "Leif Döring")
    a = write(tmp_path, "a.txt", "论文检索\n\nleif döring\n\nFirst abstract here.\n")
    b = write(tmp_path, "b.txt", f"论文检索\n\n{nfd}, Bo Chen\n\nSecond abstract here.\n")
    _summary, db = build(tmp_path, a, b)
    assert db.execute("select name from authors order by id").fetchall() == [
        ("Leif Döring",),
        ("Bo Chen",),
    ]
    assert db.execute("select authors from papers order by authors").fetchall() == [
        ('["Leif Döring", "Bo Chen"]',),
        ('["Leif Döring"]',),
    ]


def test_same_inputs_in_any_order_give_identical_rows(tmp_path):
    files = discover([SEEDS])
    dumps = []
    for order in (files, list(reversed(files))):
        db = tmp_path / f"{len(dumps)}.db"
        build_catalog(order, db)
        connection = sqlite3.connect(db)
        dumps.append(
            [
                connection.execute(f"select * from {table} order by 1, 2").fetchall()
                for table in ("papers", "authors", "paper_authors", "tracks", "paper_sources")
            ]
        )
    assert dumps[0] == dumps[1]


def test_failed_build_leaves_previous_catalog_byte_for_byte(tmp_path):
    good = write(tmp_path, "good.txt", f"论文检索\n\nAnn Lee\n\n{ABSTRACT}\n")
    db = tmp_path / "catalog.db"
    build_catalog([good], db)
    before = db.read_bytes()
    bad = write(tmp_path, "bad.txt", "论文检索\n\nAnn Lee, Bo Chen\n")
    with pytest.raises(BuildFailed) as failure:
        build_catalog([bad, good], db)
    assert [str(p) for p in failure.value.problems] == [
        f"{bad}:3: authors line with no abstract after it"
    ]
    assert db.read_bytes() == before
    assert sorted(p.name for p in tmp_path.iterdir()) == ["bad.txt", "catalog.db", "good.txt"]


def test_skip_invalid_records_problems(tmp_path):
    good = write(tmp_path, "good.txt", f"论文检索\n\nAnn Lee\n\n{ABSTRACT}\n")
    bad = write(tmp_path, "bad.txt", "论文检索\n\nAbstract without authors. It is long.\n")
    summary, db = build(tmp_path, good, bad, skip_invalid=True)
    assert summary.papers == 1 and len(summary.problems) == 1
    assert db.execute("select file, line, message from load_problems").fetchall() == [
        ("bad.txt", 3, "abstract with no authors line before it")  # from the inputs' folder
    ]


def test_stale_temporary_files_are_removed(tmp_path):
    good = write(tmp_path, "good.txt", f"论文检索\n\nAnn Lee\n\n{ABSTRACT}\n")
    # a killed build also leaves its full-text side database (and, from older builds killed
    # during the integrity checks, WAL and shared-memory files)
    names = [
        ".catalog.db.0123456789abcdef.building",
        ".catalog.db.0123456789abcdef.building-fts",
        ".catalog.db.0123456789abcdef.building-wal",
        ".catalog.db.0123456789abcdef.building-shm",
    ]
    for name in names:
        (tmp_path / name).write_bytes(b"half a database")
    other = write(tmp_path, ".other.db.0123456789abcdef.building", "not ours")
    build_catalog([good], tmp_path / "catalog.db")
    assert sorted(p.name for p in tmp_path.iterdir()) == [other.name, "catalog.db", "good.txt"]


def test_author_tracks_follow_a_track_and_authors_merged_in_later(tmp_path):
    profile = write(tmp_path, "a.txt", f"Cara Diaz\n\nAnn Lee et al. · pku\n\n{ABSTRACT}\n")
    listing = write(
        tmp_path,
        "b.txt",
        f"论文检索\n\nDeep Learning · Robustness\n\nAnn Lee, Bo Chen, Cara Diaz\n\n{ABSTRACT}\n",
    )
    _, db = build(tmp_path, profile, listing)
    assert db.execute(
        "select authors.name, tracks.name, author_tracks.paper_count from author_tracks "
        "join authors on authors.id = author_id join tracks on tracks.id = track_id "
        "order by authors.name"
    ).fetchall() == [
        ("Ann Lee", "Deep Learning · Robustness", 1),
        ("Bo Chen", "Deep Learning · Robustness", 1),
        ("Cara Diaz", "Deep Learning · Robustness", 1),
    ]
    assert (
        db.execute(
            "select author_id, track_id, paper_count from author_tracks order by 1, 2"
        ).fetchall()
        == db.execute(AUTHOR_TRACKS_FROM_PAPERS).fetchall()
    )


# integrity checks: both run on every build (the full-text one on the side database, before
# the index is copied in), and both catch real damage


def seeds_copy(tmp_path, seed_catalog):
    path = tmp_path / "copy.db"
    path.write_bytes(seed_catalog.read_bytes())
    return path


def test_integrity_checks_pass_on_a_good_catalog(tmp_path, seed_catalog):
    path = seeds_copy(tmp_path, seed_catalog)
    db = sqlite_utils.Database(path)
    check_integrity(db)
    check_full_text_index(db.conn, "papers_fts")
    db.conn.rollback()  # as the side index commits only after its check
    db.close()
    assert sorted(p.name for p in tmp_path.iterdir()) == ["copy.db"]
    before, after = sqlite3.connect(seed_catalog), sqlite3.connect(path)
    assert list(after.iterdump()) == list(before.iterdump())  # the checks change no row


# the second half of the last leaf of the full-text index, zeroed: a page SQLite still reads
DAMAGE_FULL_TEXT_INDEX = (
    "update papers_fts_data set block = substr(block, 1, length(block) / 2) "
    "|| zeroblob(length(block) - length(block) / 2) "
    "where id = (select max(id) from papers_fts_data)"
)


def test_integrity_checks_catch_a_damaged_full_text_index(tmp_path, seed_catalog):
    path = seeds_copy(tmp_path, seed_catalog)
    connection = sqlite3.connect(path)
    with connection:
        connection.execute(DAMAGE_FULL_TEXT_INDEX)
    with pytest.raises(CatalogCheckFailed, match="full-text index"):
        check_full_text_index(connection, "papers_fts")


def test_integrity_checks_catch_a_damaged_index_page(tmp_path, seed_catalog):
    path = seeds_copy(tmp_path, seed_catalog)
    connection = sqlite3.connect(path)
    root = connection.execute(
        "select rootpage from sqlite_master where name = 'idx_authors_key'"
    ).fetchone()[0]
    page_size = connection.execute("pragma page_size").fetchone()[0]
    connection.close()
    with open(path, "r+b") as file:  # the index's page now claims to be a table's
        file.seek((root - 1) * page_size)
        file.write(b"\x05")
    db = sqlite_utils.Database(path)
    with pytest.raises(CatalogCheckFailed, match=f"(?s)quick_check: .*page {root}"):
        check_integrity(db)


def full_text_entries(connection):
    """Every (term, paper, column, offset) the full-text index holds, with its size figures."""
    connection.execute(
        "create virtual table temp.entries using fts5vocab(main, papers_fts, instance)"
    )
    return (
        connection.execute("select * from temp.entries order by 1, 2, 3, 4").fetchall(),
        connection.execute("select * from papers_fts_docsize order by id").fetchall(),
        connection.execute("select block from papers_fts_data where id = 1").fetchall(),
    )


def assert_index_is_its_content_and_a_rebuild(connection):
    """FTS5's full check against the rows passes, and a rebuild from them changes nothing."""
    connection.execute("insert into papers_fts(papers_fts, rank) values ('integrity-check', 1)")
    built = full_text_entries(connection)
    connection.execute("insert into papers_fts(papers_fts) values ('rebuild')")
    connection.execute("drop table temp.entries")
    assert full_text_entries(connection) == built
    assert built[0]


@pytest.mark.parametrize("inputs", ["merge fixtures", "generated"])
def test_the_merge_leaves_the_full_text_index_as_a_rebuild_writes_it(tmp_path, inputs):
    """The build checks only the index's structure: that its entries match the rows rests on
    the stream and CatalogWriter.reindex (merged, deleted and renamed papers), checked here
    against FTS5's own check against the content and against a rebuild from the rows."""
    if inputs == "generated":
        folder = tmp_path / "in"
        generate = [sys.executable, ROOT / "bench" / "generate.py", "--papers", "500"]
        subprocess.run([*generate, "--out", folder], check=True, stdout=subprocess.DEVNULL)
        files = discover([folder])
    else:
        files = sorted(merge_fixtures.MERGE_FIXTURES.glob("*.jsonl"))
    path = tmp_path / "catalog.db"
    build_catalog(files, path)
    connection = sqlite3.connect(path, isolation_level=None)
    # the index was changed after the stream: versions merged (their aliases deleted), authors
    # shown under another spelling than their first (their papers' author lists rewritten)
    if inputs == "generated":
        merged = "select count(*) from papers where source_count > 1"
        renamed = (
            "select count(*) from author_variants join authors on authors.id = author_id "
            "where author_variants.name != authors.name"
        )
        assert connection.execute(merged).fetchone()[0] > 0
        assert connection.execute(renamed).fetchone()[0] > 0
    else:
        assert connection.execute("select count(*) from paper_aliases").fetchone()[0] > 0
    assert_index_is_its_content_and_a_rebuild(connection)


# venue, year and status (the real records of tests/fixtures/real/merge/)

build_fixtures = merge_fixtures.build_fixtures


def test_venue_year_status_are_indexed_columns(build_fixtures):
    db = build_fixtures("names_case.jsonl")
    assert db.execute(
        "select venue, year, status, count(*) from papers group by 1, 2, 3 order by 2, 1"
    ).fetchall() == [
        ("NeurIPS", 2016, "Oral", 1),
        ("NeurIPS", 2017, "Poster", 1),
        ("ICLR", 2018, "Workshop", 1),
        ("ICML", 2018, "Oral", 1),
        ("NeurIPS", 2018, "Poster", 1),
    ]
    indexed = {
        row[0]
        for row in db.execute(
            "select ii.name from pragma_index_list('papers') il, pragma_index_info(il.name) ii "
            "where ii.seqno = 0"
        )
    }
    assert {"venue", "year", "status"} <= indexed
    plan = db.execute("explain query plan select id from papers where year = 2018").fetchall()
    assert "USING COVERING INDEX idx_papers_year__id" in plan[0][3]


@pytest.mark.asyncio
async def test_author_page_lists_papers_newest_first(build_fixtures):
    db = build_fixtures("names_case.jsonl")
    (author_id,) = db.execute("select id from authors where key = 'yi wu'").fetchone()
    expected = [
        row[0]
        for row in db.execute(
            "select papers.id from papers join paper_authors on paper_id = papers.id "
            "where author_id = ? order by year desc, papers.id",
            [author_id],
        )
    ]
    html = (await merge_fixtures.site(db).client.get(f"/catalog/authors/{author_id}")).text
    shown = re.findall(r'<a href="/catalog/papers/([0-9a-f]{16})">', html)
    assert shown == expected and len(shown) == 5


@pytest.mark.asyncio
async def test_venue_and_year_facets_only_with_values(build_fixtures, datasette):
    seeds = (await datasette.client.get("/catalog/papers.json")).json()["facet_results"]
    assert "area" in seeds and not {"venue", "year", "status"} & set(seeds)
    db = build_fixtures("names_case.jsonl")
    facets = (await merge_fixtures.site(db).client.get("/catalog/papers.json")).json()[
        "facet_results"
    ]
    # years newest first, as /search lists them
    assert [(v["value"], v["count"]) for v in facets["year"]["results"]] == [
        (2018, 3),
        (2017, 1),
        (2016, 1),
    ]
    assert facets["venue"]["type"] == "column" and facets["venue"]["results"][0] == {
        **facets["venue"]["results"][0],
        "value": "NeurIPS",
        "count": 3,
    }


def test_parsing_workers_are_gone_before_the_writer_finishes(tmp_path, monkeypatch):
    """After the stream (the merge, the writer's finish(): counts, indexes) is where a build
    peaks in memory: the parsing worker processes must have exited by then, not linger until
    garbage collection."""
    import multiprocessing

    from loader.build.writer import CatalogWriter

    alive = []
    end_stream = CatalogWriter.end_stream

    def end_stream_and_look(writer):
        alive.append(len(multiprocessing.active_children()))
        return end_stream(writer)

    monkeypatch.setattr(CatalogWriter, "end_stream", end_stream_and_look)
    summary = build_catalog(sorted(SEEDS.iterdir()), tmp_path / "c.db", workers=2)
    assert summary.papers == 90
    assert alive == [0]


def prepare_in_a_collecting_worker(file, forced_format, arxiv_categories=()):
    """prepare_source_eagerly, failing the build if the worker's cyclic collector is off."""
    import gc

    if not gc.isenabled():
        raise AssertionError("a parsing worker without its cyclic garbage collector")
    return prepare_source_eagerly(file, forced_format, arxiv_categories)


def test_the_writer_pauses_the_cyclic_collector_while_workers_parse(tmp_path, monkeypatch):
    """With workers parsing, the writer's collector is off through the stream (its passes
    over the growing maps cost CPU, and the writer makes no cycles) and on again after; the
    workers, forked meanwhile, collect (parsing makes cycles)."""
    import gc

    from loader.build import prepare
    from loader.build.writer import CatalogWriter

    seen = []
    add_entry = CatalogWriter.add_entry

    def add_and_look(writer, *args):
        seen.append(gc.isenabled())
        return add_entry(writer, *args)

    monkeypatch.setattr(CatalogWriter, "add_entry", add_and_look)
    monkeypatch.setattr(prepare, "prepare_source_eagerly", prepare_in_a_collecting_worker)
    assert gc.isenabled()
    assert build_catalog(sorted(SEEDS.iterdir()), tmp_path / "a.db", workers=2).papers == 90
    assert set(seen) == {False}
    assert gc.isenabled()
    seen.clear()
    build_catalog(sorted(SEEDS.iterdir()), tmp_path / "b.db", workers=0)  # parsing here: on
    assert set(seen) == {True}


def test_a_build_failing_after_the_stream_stops_the_index_thread_and_leaves_no_file(
    tmp_path, monkeypatch
):
    """The side index's thread has indexed every batch when the writer fails: the thread
    stops, its side database goes with the temporary, the old catalog stays."""
    import threading

    from loader.build import writer as build_writer

    target = tmp_path / "out" / "catalog.db"
    build_catalog(sorted(SEEDS.iterdir()), target)
    before = target.read_bytes()
    monkeypatch.setattr(build_writer, "BATCH_SIZE", 7)  # several batches from the 90 seed papers
    side_files = []

    def fail(writer):
        writer.full_text.wait()
        side_files.extend(p.name for p in target.parent.iterdir() if p.name.endswith("-fts"))
        raise sqlite3.OperationalError("disk I/O error")

    monkeypatch.setattr(build_writer.CatalogWriter, "count_papers", fail)
    with pytest.raises(sqlite3.OperationalError):
        build_catalog(sorted(SEEDS.iterdir()), target)
    assert len(side_files) == 1  # the thread was writing its side database
    assert [p.name for p in target.parent.iterdir()] == ["catalog.db"]
    assert target.read_bytes() == before
    assert not [t for t in threading.enumerate() if t.name.startswith("full-text")]


def test_a_full_text_index_failing_its_check_in_the_thread_fails_the_build(tmp_path, monkeypatch):
    from loader.build import full_text

    target = tmp_path / "catalog.db"
    build_catalog(sorted(SEEDS.iterdir()), target)
    before = target.read_bytes()
    check = full_text.check_full_text_index

    def damage_then_check(connection, name):  # a disk fault in the side database
        connection.execute(DAMAGE_FULL_TEXT_INDEX)
        check(connection, name)

    monkeypatch.setattr(full_text, "check_full_text_index", damage_then_check)
    with pytest.raises(CatalogCheckFailed, match="full-text index integrity-check"):
        build_catalog(sorted(SEEDS.iterdir()), target)
    assert target.read_bytes() == before
    assert [p.name for p in tmp_path.iterdir()] == ["catalog.db"]


def test_the_side_index_is_the_index_a_rebuild_writes_in_small_batches(tmp_path, monkeypatch):
    """Batches of 7 papers (13 for the seeds' 90), the merge's changes taken out and put back
    in chunks: the copied index holds what FTS5's rebuild from the rows holds."""
    from loader.build import writer as build_writer

    monkeypatch.setattr(build_writer, "BATCH_SIZE", 7)
    path = tmp_path / "catalog.db"
    build_catalog(sorted(merge_fixtures.MERGE_FIXTURES.glob("*.jsonl")), path)
    connection = sqlite3.connect(path, isolation_level=None)
    assert connection.execute("select count(*) from paper_aliases").fetchone()[0] > 0
    assert_index_is_its_content_and_a_rebuild(connection)
    # the build settings went with the merge; the block size stays
    assert connection.execute("select k, v from papers_fts_config order by k").fetchall() == [
        ("pgsz", FTS_PAGE_BYTES),
        ("version", 4),
    ]


# size: one full-text block a page, partial facet indexes, no free pages


def test_full_text_blocks_fill_a_page_and_phrases_still_match(query):
    assert query("select v from papers_fts_config where k = 'pgsz'") == [(FTS_PAGE_BYTES,)]
    # a 32 KB page holds one block whole: no overflow page per block
    assert query("select max(length(block)) from papers_fts_data")[0][0] <= PAGE_SIZE - 40

    def ranked(expression):
        return [
            row[0]
            for row in query(
                "select papers.label from papers_fts join papers on papers.rowid = papers_fts.rowid "
                "where papers_fts match ? order by bm25(papers_fts, 10.0, 4.0, 1.0)",
                [expression],
            )
        ]

    assert ranked('"smooth maximum mean discrepancy"') == ["SMMD: Smooth Maximum Mean Discrepancy"]
    assert ranked('"discrepancy mean maximum smooth"') == []
    assert "SMMD: Smooth Maximum Mean Discrepancy" in ranked("discrep*")


def test_facet_indexes_hold_only_rows_with_a_value(query):
    sql = dict(query("select name, sql from sqlite_master where type = 'index'"))
    assert sql["idx_papers_venue__id"].endswith("where venue is not null")
    assert sql["idx_papers_authors_truncated"].endswith("where authors_truncated = 1")
    # a filter on a value implies it is not null: the partial index serves it
    plan = query("explain query plan select id from papers where venue = ? order by id", ["X"])
    assert "idx_papers_venue__id" in plan[0][3] and len(plan) == 1
    canned = yaml.safe_load((ROOT / "metadata.yml").read_text(encoding="utf-8"))["databases"][
        "catalog"
    ]
    for name, index in [
        ("truncated_author_lists", "idx_papers_authors_truncated"),
        ("multi_source_papers", "idx_papers_source_count"),
    ]:
        plan = query("explain query plan " + canned["queries"][name]["sql"])
        assert any(index in row[3] for row in plan), plan


def test_a_built_catalog_has_no_free_pages(seed_catalog, tmp_path):
    """No step after the stream frees pages in the catalog (the full-text index is merged in
    its side database, staged rows are temporary tables), so the file needs no vacuum, and
    no auto_vacuum pointer map, which cost every page the build wrote (copying the 800 MB
    full-text index in: 1.5 s with it, 0.4 without)."""
    merged = build(tmp_path, *sorted(merge_fixtures.MERGE_FIXTURES.glob("*.jsonl")))[1]
    assert merged.execute("select count(*) from paper_aliases").fetchone()[0] > 0
    for connection in (sqlite3.connect(seed_catalog), merged):
        assert connection.execute("pragma freelist_count").fetchone() == (0,)
        assert connection.execute("pragma auto_vacuum").fetchone() == (0,)


def test_a_prepared_entry_crosses_to_the_build_with_every_field():
    """Parsing workers send prepared entries, normalized, to the writer, encoded as the cache
    stores them (JSON): every field survives, of the very type it had."""
    from loader.build.prepare import prepare_entry
    from loader.build.prepared_cache import decode_items, encode_items
    from loader.records import Entry, PreparedEntry

    entry = Entry(
        "a.jsonl",
        7,
        "We study $x^2$ ü.",
        ["Ann Lee", "ann  lee", "Bo Li"],
        True,
        track="Deep Learning ·  Vision",
        affiliations=["MIT", " mit", "pku"],
        title="A T",
        url="u",
        owner="Cy Do",
        venue="ICLR",
        year=2020,
        status="Poster",
        doi="10.1/x",
    )
    prepared = prepare_entry(entry)
    assert isinstance(prepared, PreparedEntry)
    assert prepared.authors == (("ann lee", "Ann Lee"), ("bo li", "Bo Li"), ("cy do", "Cy Do"))
    assert prepared.positions == (1, 3, None)
    assert prepared.track == ("Deep Learning · Vision", "Deep Learning", "Vision")
    assert [a.slug for a in prepared.affiliations] == ["mit", "pku"]
    assert prepared.title_key is not None and len(prepared.version_keys) == 3
    (copy,) = decode_items(encode_items([prepared]))
    assert copy == prepared and type(copy.track) is type(prepared.track)
    assert [type(value) for value in copy] == [type(value) for value in prepared]
    assert type(copy.affiliations[0]) is type(prepared.affiliations[0])


def test_the_writer_imports_no_rules_and_no_readers():
    """The writer only writes: normalizing (rules) and reading happen before it, and nothing
    it imports, directly or not, reaches back to them."""
    code = (
        "import sys, loader.build.writer; "
        "print(sorted(m for m in sys.modules if m.startswith(('loader.rules', 'loader.read'))))"
    )
    imported = subprocess.run(
        [sys.executable, "-c", code], capture_output=True, text=True, check=True, cwd=ROOT
    )
    assert imported.stdout.strip() == "[]"


def indexed_rows(connection, column):
    """The rows idx_papers_<column>__id holds, read from the index alone."""
    return connection.execute(
        f"select id from papers indexed by idx_papers_{column}__id "
        f"where {column} is not null order by id"
    ).fetchall()


def jsonl_records(count, values_at=None):
    """`count` JSON Lines records with distinct abstracts; values_at={line: {...}} adds keys."""
    values_at = values_at or {}
    lines = []
    for number in range(1, count + 1):
        record = {
            "abstract": f"We study problem number {number} of a long series in some depth.",
            "authors": [f"Author {number % 97}", "Second Person"],
            "title": f"Paper {number}",
            **values_at.get(number, {}),
        }
        lines.append(json.dumps(record))
    return "\n".join(lines) + "\n"


@pytest.mark.parametrize(
    "values_at, venues",
    [
        # no source gives a venue, year or status: the indexes made before the stream stay
        ({}, 0),
        # the first value comes in the stream's second batch: that index is dropped there and
        # built after the stream
        ({2300: {"venue": "ICLR", "year": 2024}}, 1),
        ({1: {"status": "Poster"}, 2999: {"venue": "NeurIPS"}}, 1),
    ],
)
def test_partial_facet_indexes_hold_every_row_with_a_value(tmp_path, values_at, venues):
    file = write(tmp_path, "many.jsonl", jsonl_records(3000, values_at))
    _, connection = build(tmp_path, file)
    assert connection.execute("pragma integrity_check").fetchone() == ("ok",)
    for column in ("venue", "year", "status"):
        table_rows = connection.execute(
            f"select id from papers where {column} is not null order by id"
        ).fetchall()
        assert indexed_rows(connection, column) == table_rows
    assert len(indexed_rows(connection, "venue")) == venues


def test_a_value_only_a_merged_version_gives_is_in_the_kept_index(tmp_path):
    """A repeated entry is not a row of the stream (the merge writes it): its venue reaches
    the venue index, still the one made before the stream, by the merge's update."""
    records = jsonl_records(5)
    first = json.loads(records.splitlines()[0])
    later = write(tmp_path, "later.jsonl", json.dumps({**first, "venue": "ICML"}) + "\n")
    _, connection = build(tmp_path, write(tmp_path, "all.jsonl", records), later)
    assert connection.execute("pragma integrity_check").fetchone() == ("ok",)
    assert connection.execute("select count(*) from papers").fetchone() == (5,)
    assert len(indexed_rows(connection, "venue")) == 1
    assert connection.execute("select venue from papers where venue is not null").fetchall() == [
        ("ICML",)
    ]


def test_statistics_cover_every_table_but_the_full_text_shadow_tables(query):
    """ANALYZE's statistics for every index the planner may choose; none for the tables FTS5
    reads by key alone (build.analyze skips them)."""
    analyzed = {row[0] for row in query("select distinct tbl from sqlite_stat1")}
    indexed = {
        row[0]
        for row in query(
            "select tbl_name from sqlite_master where type = 'index' and tbl_name not like '%_fts_%'"
        )
    }
    # ANALYZE writes nothing for an empty table (the seeds merge no versions)
    indexed = {table for table in indexed if query(f"select count(*) from [{table}]") != [(0,)]}
    assert indexed <= analyzed
    assert {"papers", "paper_authors", "authors"} <= indexed
    assert not [table for table in analyzed if "_fts" in table]


def test_a_small_builds_index_is_held_in_one_larger_term_buffer():
    """Under SMALL_BUILD_BYTES of input the term buffer holds a small catalog's whole index
    (one segment: the optimize merges next to nothing); at a large build's size it keeps the
    4 MB that keeps the build's peak memory within its budget."""
    from loader.build.schema import (
        FTS_BUILD_SETTINGS,
        SMALL_BUILD_BYTES,
        SMALL_BUILD_HASHSIZE,
        fts_build_settings,
    )

    assert dict(fts_build_settings(16 * 1024 * 1024))["hashsize"] == SMALL_BUILD_HASHSIZE
    assert fts_build_settings(SMALL_BUILD_BYTES) == FTS_BUILD_SETTINGS
    assert dict(fts_build_settings(0))["automerge"] == 0
