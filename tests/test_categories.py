"""arXiv categories and authors' keywords from the real dump samples (tests/fixtures/dumps/, see
its SOURCE.md): stored, linked, faceted on the papers table; --arxiv-category and the
sources.yml key arxiv_categories through the CLI, with the records left out counted."""

import collections
import json
import shutil
import sqlite3
from pathlib import Path
from urllib.parse import parse_qsl, urlsplit

import pytest
from click.testing import CliRunner

from loader.cli import cli
from loader.read.arxiv_snapshot import in_categories

from .conftest import FIXTURES, second_datasette

DUMPS = FIXTURES / "dumps"
SNAPSHOTS = [
    DUMPS / "arxiv" / "arxiv-metadata-oai-snapshot.json",
    DUMPS / "merge" / "arxiv-metadata-oai-snapshot.json",
]


def snapshot_records() -> list[dict]:
    return [
        json.loads(line) for path in SNAPSHOTS for line in path.read_text().splitlines() if line
    ]


CORL_FIRST = json.loads((DUMPS / "paperlists" / "corl2024.json").read_text())[0]


def build(paths, db, *options):
    result = CliRunner().invoke(
        cli, ["build", *map(str, paths), "--db", str(db), "--skip-invalid", *options]
    )
    assert result.exit_code == 0, result.output
    return result


@pytest.fixture(scope="module")
def dumps_catalog(tmp_path_factory):
    db = tmp_path_factory.mktemp("dumps") / "catalog.db"
    build([DUMPS], db)
    return db


def test_every_category_of_the_snapshot_is_a_row_linked_in_arxiv_order(dumps_catalog):
    records = snapshot_records()
    with sqlite3.connect(dumps_catalog) as connection:
        names = {row[0] for row in connection.execute("select name from categories")}
        assert names == {c for r in records for c in r["categories"].split()}
        links = collections.defaultdict(list)
        for pid, name, position in connection.execute(
            "select paper_id, name, position from paper_categories "
            "join categories on categories.id = category_id order by paper_id, position"
        ):
            links[pid].append((position, name))
        for record in records:
            pid, shown = connection.execute(
                "select papers.id, papers.categories from papers join paper_sources "
                "on paper_sources.paper_id = papers.id join sources on sources.id = source_id "
                "where papers.url = ?",
                [f"https://arxiv.org/abs/{record['id']}"],
            ).fetchone() or (None, None)
            if pid is None:  # merged into a paper that shows another version's url
                continue
            expected = record["categories"].split()
            assert json.loads(shown)[: len(expected)] == expected, record["id"]
            assert [name for _, name in links[pid]] == json.loads(shown)
            assert [position for position, _ in links[pid]] == list(range(1, len(links[pid]) + 1))
        # paper_count counts papers: every link, one a paper and category
        counts = connection.execute(
            "select sum(paper_count), (select count(*) from paper_categories) from categories"
        ).fetchone()
        assert counts[0] == counts[1] > 120


def test_keywords_as_the_dumps_give_them_and_merged_across_versions(dumps_catalog):
    with sqlite3.connect(dumps_catalog) as connection:
        row = connection.execute(
            "select keywords, categories, source_count from papers where title = ?",
            ["Prototypical Networks for Few-shot Learning"],
        ).fetchone()
        corl = connection.execute(
            "select keywords from papers where title = ?", [CORL_FIRST["title"]]
        ).fetchone()
        without = connection.execute(
            "select count(*) from papers where keywords is null and venue = 'CVPR' and year = 2017"
        ).fetchone()[0]
    # Paper Copilot ("Deep learning;Transfer Learning"), OpenReview and the arXiv preprint: one
    # paper, the keywords once, the preprint's categories
    assert json.loads(row[0]) == ["Deep learning", "Transfer Learning"]
    assert json.loads(row[1]) == ["cs.LG", "stat.ML"]
    assert row[2] == 3
    assert json.loads(corl[0]) == CORL_FIRST["keywords"].split(";")
    assert without == 20  # CVPR 2017's list gives no keywords: null, not "[]"


@pytest.mark.asyncio
async def test_the_papers_table_has_a_category_facet_whose_values_filter(dumps_catalog):
    site = second_datasette(dumps_catalog)
    data = (await site.client.get("/catalog/papers.json")).json()
    box = data["facet_results"]["categories"]
    with sqlite3.connect(dumps_catalog) as connection:
        expected = connection.execute(
            "select name, paper_count from categories order by paper_count desc, name limit 10"
        ).fetchall()
    assert [(v["value"], v["count"]) for v in box["results"]][:10] == expected
    hep_th = next(v for v in box["results"] if v["value"] == "hep-th")
    link = urlsplit(hep_th["toggle_url"])
    assert ("categories__arraycontains", "hep-th") in parse_qsl(link.query)
    filtered = (await site.client.get(f"{link.path}?{link.query}")).json()
    assert filtered["filtered_table_rows_count"] == hep_th["count"] == 10
    # the filtered page's boxes are counted over its papers
    assert filtered["facet_results"]["categories"]["results"][0] == {
        **filtered["facet_results"]["categories"]["results"][0],
        "value": "hep-th",
        "count": 10,
    }
    html = (await site.client.get("/catalog/papers?categories__arraycontains=hep-th")).text
    assert '<a href="/catalog/papers?categories__arraycontains=hep-th">hep-th</a>' in html


@pytest.mark.asyncio
async def test_the_paper_page_shows_categories_and_keywords(dumps_catalog):
    site = second_datasette(dumps_catalog)
    with sqlite3.connect(dumps_catalog) as connection:
        (pid,) = connection.execute(
            "select id from papers where title = 'Prototypical Networks for Few-shot Learning'"
        ).fetchone()
    html = (await site.client.get(f"/catalog/papers/{pid}")).text
    assert 'class="category-link" href="/catalog/papers?categories__arraycontains=cs.LG"' in html
    assert "Keywords: Deep learning, Transfer Learning" in html


@pytest.mark.asyncio
async def test_a_catalog_without_categories_shows_no_category_box_or_columns(datasette):
    data = (await datasette.client.get("/catalog/papers.json")).json()
    assert "categories" not in data["facet_results"]
    assert {"authors", "affiliations"} <= set(data["facet_results"])
    html = (await datasette.client.get("/catalog/papers")).text
    assert "col-keywords" not in html and "col-categories" not in html


OTHER_SOURCES_SQL = (
    "select count(*) from paper_sources join sources on sources.id = source_id "
    "where sources.format != 'arxiv'"
)


def test_arxiv_category_keeps_only_those_records_and_counts_the_others(tmp_path, dumps_catalog):
    db = tmp_path / "c.db"
    result = build([DUMPS], db, "--arxiv-category", "cs", "--arxiv-category", "math.co")
    records = snapshot_records()
    kept = [r for r in records if in_categories(r["categories"].split(), {"cs", "math.co"})]
    assert 0 < len(kept) < len(records)
    left_out = len(records) - len(kept)
    assert "records left out by category\n" in result.output
    assert f", {left_out} records left out by category" in result.output
    with sqlite3.connect(db) as connection:
        arxiv_lines = connection.execute(
            "select count(*) from paper_sources join sources on sources.id = source_id "
            "where sources.format = 'arxiv'"
        ).fetchone()[0]
        categories = {
            name for (name,) in connection.execute("select name from categories where paper_count")
        }
        shown = connection.execute(
            "select categories from papers where categories is not null"
        ).fetchall()
        others = connection.execute(OTHER_SOURCES_SQL).fetchone()[0]
        problems = connection.execute("select count(*) from load_problems").fetchone()[0]
    with sqlite3.connect(dumps_catalog) as connection:
        all_others = (
            connection.execute(OTHER_SOURCES_SQL).fetchone()[0],
            connection.execute("select count(*) from load_problems").fetchone()[0],
        )
    assert arxiv_lines == len(kept)
    assert {"cs.LG", "math.CO", "cs.IT", "math.IT"} <= categories
    assert all(in_categories(json.loads(c), {"cs", "math.co"}) for (c,) in shown)
    assert (others, problems) == all_others  # the other dumps as they were


def test_a_sources_yml_entry_keeps_its_snapshot_s_categories(tmp_path):
    folder = tmp_path / "in"
    folder.mkdir()
    shutil.copy(SNAPSHOTS[0], folder / "snapshot.json")
    (folder / "sources.yml").write_text(
        "- match: snapshot.json\n  arxiv_categories: [hep-th, gr-qc]\n"
    )
    db = tmp_path / "c.db"
    # the file's own key wins over the option
    result = build([folder], db, "--arxiv-category", "cs")
    records = [json.loads(line) for line in SNAPSHOTS[0].read_text().splitlines()]
    kept = [r for r in records if {"hep-th", "gr-qc"} & set(r["categories"].split())]
    assert result.output.endswith(
        f", 0 problems, {len(records) - len(kept)} records left out by category\n"
    )
    with sqlite3.connect(db) as connection:
        rows = connection.execute("select venue, year, categories from papers").fetchall()
    assert len(rows) == len(kept) > 10
    # no venue or year in the entry: the snapshot's own
    assert {(venue, year) for venue, year, _ in rows} == {("arXiv", 2007)}
    assert all({"hep-th", "gr-qc"} & set(json.loads(c)) for _, _, c in rows)


def test_a_bad_arxiv_category_is_refused(tmp_path):
    result = CliRunner().invoke(cli, ["build", str(DUMPS), "--arxiv-category", "cs LG"])
    assert result.exit_code == 2
    assert "'cs LG' is not an arXiv category such as cs.LG or cs" in result.output
    folder = tmp_path / "in"
    folder.mkdir()
    shutil.copy(SNAPSHOTS[0], folder / "snapshot.json")
    (folder / "sources.yml").write_text(
        "- match: snapshot.json\n  arxiv_categories:\n    - cs.LG\n    - 'cs LG'\n"
    )
    result = CliRunner().invoke(cli, ["check", str(folder)])
    assert result.exit_code == 1
    assert (
        f"{Path('in') / 'sources.yml'}:4: arxiv_categories must list arXiv categories"
        in result.output.replace(str(tmp_path) + "/", "")
    )


def test_categories_match_by_archive_and_whatever_the_case():
    assert in_categories(["cs.LG", "stat.ML"], {"stat.ml"})
    assert in_categories(["cond-mat.mes-hall"], {"cond-mat"})
    assert not in_categories(["math.CO"], {"math.ag", "cs"})
    assert not in_categories([], {"cs"})
