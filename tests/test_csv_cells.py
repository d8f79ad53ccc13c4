"""Formula-safe CSV (loader/web/csv_cells.py): a cell a spreadsheet would read as a formula
(`=`, `+`, `-`, `@`, tab, carriage return; a whole number excepted) starts with `'` in every CSV
the site writes on the catalog (table CSV and its stream, rows, canned and custom SQL queries,
`_trace`, /search.csv), through the served app on a catalog built by the real loader from
tests/fixtures/formulas.jsonl; other databases keep Datasette's own CSV."""

import csv
import html
import io
import re
import sqlite3
from contextlib import closing
from urllib.parse import quote, urlencode

import httpx
import pytest
import pytest_asyncio
from hypothesis import given
from hypothesis import strategies as st

from loader.build.catalog import build_catalog
from loader.web.csv_cells import (
    FORMULA_STARTS,
    HIGHLIGHTS,
    NUMBER,
    safe_cell,
    safe_row,
    safe_text,
)

from .conftest import FIXTURES, served_app

STREAM = {"_stream": "on", "_size": "max"}
HYPERLINK = '=HYPERLINK("http://x","y")'


@pytest.mark.parametrize(
    "text, written",
    [
        (HYPERLINK, "'" + HYPERLINK),
        ("@SUM(A1)", "'@SUM(A1)"),
        ("+cmd|' /C calc'!A0", "'+cmd|' /C calc'!A0"),
        ("-2+3", "'-2+3"),
        ("\t=1+1", "'\t=1+1"),
        ("\r=1+1", "'\r=1+1"),
        ("=", "'="),
        ("-", "'-"),
        ("+", "'+"),
        ("-inf", "'-inf"),
        ("-3 ", "'-3 "),
        ("-\u0663", "'-\u0663"),  # an Arabic-Indic digit is no number to every spreadsheet
        ("\ue000=1+1\ue001", "'\ue000=1+1\ue001"),  # CSV drops the highlight characters
        ("-3", "-3"),
        ("+1.5", "+1.5"),
        ("-1e5", "-1e5"),
        ("-.5", "-.5"),
        ("+7.", "+7."),
        ("-2E-10", "-2E-10"),
        ("\ue000-3", "\ue000-3"),
        ("", ""),
        ("a = b", "a = b"),
        (" =1", " =1"),
        ("'=1", "'=1"),
        ("Ann Lee", "Ann Lee"),
    ],
)
def test_safe_text(text, written):
    assert safe_text(text) == written


def test_values_other_than_text_are_left_as_they_are():
    for value in (-3, -1.5, None, b"=x", 0):
        assert safe_cell(value) is value
    assert safe_row(["=x", -3, None, "y"]) == ["'=x", -3, None, "y"]


def opens_as_formula(cell):
    """What a spreadsheet would read as a formula: the cell as the CSV shows it."""
    shown = cell.lstrip(HIGHLIGHTS)
    return shown[:1] in FORMULA_STARTS and not NUMBER.fullmatch(shown)


@given(st.text(alphabet=st.sampled_from(list("=+-@\t\r'.e1 a\ue000\ue001")), max_size=8))
def test_no_text_opens_as_a_formula_and_only_a_quote_is_added(text):
    written = safe_text(text)
    assert not opens_as_formula(written)
    assert written in (text, "'" + text)


# -- every CSV of the served site ----------------------------------------------------------


@pytest.fixture(scope="module")
def formulas_catalog(tmp_path_factory):
    """Formulas in titles, abstracts, authors, venues, statuses, tracks, affiliations, URLs."""
    path = tmp_path_factory.mktemp("formulas") / "catalog.db"
    summary = build_catalog([FIXTURES / "formulas.jsonl"], path)
    assert summary.papers == 4 and not summary.problems
    return path


@pytest_asyncio.fixture(loop_scope="session")
async def client(formulas_catalog):
    app = served_app(formulas_catalog)
    transport = httpx.ASGITransport(app=app)
    async with httpx.AsyncClient(transport=transport, base_url="http://site", timeout=60) as c:
        yield c


def ids(catalog):
    with closing(sqlite3.connect(catalog)) as connection:
        paper = connection.execute("select id from papers where title = ?", [HYPERLINK]).fetchone()
        author = connection.execute("select id from authors where name = '-2+A1'").fetchone()
    return paper[0], author[0]


def csv_routes(catalog):
    paper, author = ids(catalog)
    sql = (
        "select char(9) || '=1+1' as tab, char(13) || '@x' as cr, '-3' as minus_three, "
        "-3 as number, '+1.5' as plus, '-1e5' as exponent, '-2+3' as sum, "
        f"'{HYPERLINK.replace(chr(39), chr(39) * 2)}' as link, 1 as \"=heading\""
    )
    return {
        "table": "/catalog/papers.csv",
        "table stream": "/catalog/papers.csv?" + urlencode({**STREAM, "_dl": "1"}),
        "table stream in pages": "/catalog/papers.csv?_stream=on&_size=1",
        "table with labels": "/catalog/papers.csv?" + urlencode({**STREAM, "_labels": "on"}),
        "authors": "/catalog/authors.csv?" + urlencode(STREAM),
        "tracks": "/catalog/tracks.csv",
        "affiliations": "/catalog/affiliations.csv",
        "link table with labels": "/catalog/paper_authors.csv?_labels=on",
        "searched table": "/catalog/papers.csv?" + urlencode({**STREAM, "_search": "formula"}),
        "paper row": f"/catalog/papers/{paper}.csv",
        "author row": f"/catalog/authors/{author}.csv",
        "canned search": "/catalog/search.csv?q=formula",
        "canned by author": f"/catalog/papers_by_author.csv?author_id={author}&_dl=1",
        "canned coauthors": f"/catalog/coauthors.csv?author_id={author}",
        "canned leaderboard": "/catalog/affiliation_leaderboard.csv",
        "canned per track": "/catalog/papers_per_track.csv",
        "custom SQL": "/catalog.csv?sql=" + quote(sql),
        "custom SQL of the data": "/catalog.csv?sql=" + quote("select * from papers"),
        "custom SQL download": "/catalog.csv?_dl=1&sql=" + quote("select name from authors"),
        "search export": "/search.csv",
        "search export of a word": "/search.csv?q=formula",
    }


def cells_of(response):
    assert response.status_code == 200, response.text[:300]
    text = response.text
    if response.headers["content-type"].startswith("text/html"):  # _trace: CSV in a textarea
        text = html.unescape(re.search(r"<textarea[^>]*>(.*)</textarea>", text, re.DOTALL)[1])
    return list(csv.reader(io.StringIO(text, newline="")))


@pytest.mark.asyncio(loop_scope="session")
async def test_no_csv_cell_of_the_catalog_opens_as_a_formula(client, formulas_catalog):
    seen, formulas, unmarked = set(), {}, []
    for url in csv_routes(formulas_catalog).values():
        for variant in (url, url + ("&" if "?" in url else "?") + "_trace=1"):
            cells = [cell for row in cells_of(await client.get(variant)) for cell in row]
            found = [cell for cell in cells if opens_as_formula(cell)]
            if found:
                formulas[variant] = found
            # every route has a hostile cell to mark
            if not any(cell[:1] == "'" and cell[1:2] in FORMULA_STARTS for cell in cells):
                unmarked.append(variant)
            seen.update(cells)
    assert formulas == {}
    assert unmarked == []
    # each hostile value is in some CSV, marked; each number-only cell as it is
    for marked in ("'" + HYPERLINK, "'@SUM(A1) opens", "'+cmd|' /C calc'!A0", "'-2+A1"):
        assert any(cell.startswith(marked) for cell in seen), marked
    for kept in ("'=1+1", "'@poster", "'=Area · +Subarea", "'=evil", "'\t=1+1", "'\r@x"):
        assert kept in seen, kept
    for number in ("-3", "+1.5", "-1e5", "'=heading"):
        assert number in seen, number


@pytest.mark.asyncio(loop_scope="session")
async def test_the_csv_is_the_json_with_safe_cells(client):
    """Nothing but the leading quote differs from the rows the JSON API gives."""
    for path, params in [
        ("/catalog/papers", {"_nocol": "abstract_plain"}),
        ("/catalog/authors", {}),
        ("/catalog", {"sql": "select label, venue, track, abstract from papers order by id"}),
    ]:
        rows = cells_of(await client.get(f"{path}.csv?{urlencode({**params, **STREAM})}"))
        response = await client.get(f"{path}.json?{urlencode({**params, '_shape': 'array'})}")
        header, expected = rows[0], []
        for row in response.json():
            expected.append(["" if row[c] is None else str(safe_cell(row[c])) for c in header])
        assert rows[1:] == expected, path


@pytest.mark.asyncio(loop_scope="session")
async def test_a_database_csv_needs_a_query(client):
    response = await client.get("/catalog.csv")
    assert response.status_code == 400
    assert "needs a query" in response.text


@pytest.mark.asyncio(loop_scope="session")
async def test_other_databases_keep_datasettes_own_csv(formulas_catalog, datasette, tmp_path):
    """A Datasette serving the catalog and another database: only the catalog's CSV changes."""
    from datasette.app import Datasette

    from loader.serve.settings import SETTINGS

    other = tmp_path / "other.db"
    with closing(sqlite3.connect(other)) as connection:
        connection.execute("create table things (name text)")
        connection.execute("insert into things values (?)", [HYPERLINK])
        connection.commit()
    both = Datasette(immutables=[str(formulas_catalog), str(other)], settings=SETTINGS)
    sql = quote("select '=1+1' as formula")
    ours = cells_of(await both.client.get(f"/catalog.csv?sql={sql}"))
    theirs = cells_of(await both.client.get(f"/other.csv?sql={sql}"))
    assert ours == [["formula"], ["'=1+1"]]
    assert theirs == [["formula"], ["=1+1"]]
    assert cells_of(await both.client.get("/other/things.csv")) == [
        ["rowid", "name"],
        ["1", HYPERLINK],
    ]
