"""CSV downloads: filtered, searched and faceted views and canned queries stream every row, agree
with the JSON API, quote commas, quotes and newlines, stay UTF-8; nothing can write."""

import csv
import hashlib
import html
import io
import json
import re
from urllib.parse import parse_qsl, urlencode

import pytest
import yaml
from hypothesis import given, settings
from hypothesis import strategies as st

from loader.build.catalog import build_catalog
from loader.read.sources import discover
from loader.serve.datasette_config import datasette_arguments
from loader.web.csv_cells import safe_row

from .conftest import DATASETTE_1, ROOT, query_path
from .plugin_files import load_plugin

LLM_TRACK = "Deep Learning · Large Language Models"
STREAM = {"_stream": "on", "_size": "max"}
README = ROOT / "README.md"


def parse_csv(response):
    assert response.status_code == 200, response.text[:500]
    assert "charset=utf-8" in response.headers["content-type"]
    text = response.content.decode("utf-8")
    rows = list(csv.reader(io.StringIO(text, newline="")))
    return rows[0], rows[1:]


def as_csv_cell(value):
    """How Python's csv module writes a JSON value; CSV drops the search highlight markers."""
    return "" if value is None else str(value).replace("\ue000", "").replace("\ue001", "")


async def csv_and_json(datasette, path, params):
    csv_response = await datasette.client.get(f"{path}.csv?{urlencode({**params, **STREAM})}")
    header, rows = parse_csv(csv_response)
    json_params = {**params, "_shape": "array", "_size": "max"}
    json_response = await datasette.client.get(f"{path}.json?{urlencode(json_params)}")
    assert json_response.status_code == 200
    expected = [[as_csv_cell(row[column]) for column in header] for row in json_response.json()]
    return header, rows, expected


@pytest.mark.asyncio
@pytest.mark.parametrize(
    "params, count",
    [
        ({"track": LLM_TRACK}, 12),
        ({"authors__arraycontains": "Huishuai Zhang"}, 50),
        ({"affiliations__arraycontains": "pku"}, 4),
        ({"_search": "reasoning"}, 19),
        ({"_search": '"large language models"', "area": "Deep Learning"}, None),
        ({"authors_truncated": "1"}, 43),
        ({}, 90),
    ],
    ids=["track", "author", "affiliation", "search", "phrase+area", "truncated", "all"],
)
async def test_filtered_view_round_trips_through_csv(datasette, params, count):
    header, rows, expected = await csv_and_json(datasette, "/catalog/papers", params)
    assert header[:2] == ["id", "label"] and "abstract" in header and "abstract_text" not in header
    assert rows == expected
    if count is not None:
        assert len(rows) == count
    assert len(rows) > 0


@pytest.mark.asyncio
@pytest.mark.parametrize("table, size", [("papers", 25), ("paper_authors", 50)])
async def test_stream_walks_every_page(datasette, query, table, size):
    """`_stream=on` alone pages through the table a page at a time: slower, but every row."""
    (total,) = query(f"select count(*) from {table}")[0]
    assert total > size
    _, paged = parse_csv(await datasette.client.get(f"/catalog/{table}.csv?_stream=on"))
    _, whole = parse_csv(await datasette.client.get(f"/catalog/{table}.csv?{urlencode(STREAM)}"))
    assert len(paged) == len(whole) == total
    assert sorted(paged) == sorted(whole)


@pytest.mark.asyncio
async def test_csv_with_labels_names_authors_and_papers(datasette, query):
    params = {"author_id": "100", "_labels": "on", **STREAM}
    header, rows = parse_csv(
        await datasette.client.get(f"/catalog/paper_authors.csv?{urlencode(params)}")
    )
    assert header == ["paper_id", "paper_id_label", "author_id", "author_id_label", "position"]
    assert len(rows) == 50
    assert {row[3] for row in rows} == {"Huishuai Zhang"}
    labels = dict(query("select id, label from papers"))
    assert all(labels[row[0]] == row[1] for row in rows)
    params = {"track": LLM_TRACK, "_labels": "on", **STREAM}
    header, rows = parse_csv(await datasette.client.get(f"/catalog/papers.csv?{urlencode(params)}"))
    position = header.index("track_id_label")
    assert {row[position] for row in rows} == {LLM_TRACK}


@pytest.mark.asyncio
@pytest.mark.parametrize(
    "name, params",
    [
        ("search", {"q": "reasoning"}),
        ("papers_by_author", {"author_id": "Huishuai Zhang"}),
        ("coauthors", {"author_id": "Huishuai Zhang"}),
        ("papers_per_track", {}),
        ("truncated_author_lists", {}),
        ("related_papers", {"paper_id": "c0c29010aab3dfd2"}),
        ("search", {"q": '"'}),
    ],
)
async def test_canned_query_csv_matches_json(datasette, name, params):
    header, rows, expected = await csv_and_json(datasette, f"/catalog/{name}", params)
    assert rows == expected
    assert header[0] in ("id", "author_id", "area")


@pytest.mark.asyncio
async def test_search_csv_keeps_utf8_and_drops_match_markers(datasette):
    header, rows = parse_csv(
        await datasette.client.get("/catalog/search.csv?" + urlencode({"q": "reasoning", **STREAM}))
    )
    snippets = [row[header.index("snippet")] for row in rows]
    assert all("reason" in snippet.lower() for snippet in snippets)
    assert not any("\ue000" in s or "\ue001" in s or "<mark>" in s for s in snippets)
    assert any("·" in row[header.index("track")] for row in rows)


def documented_curl_url():
    lines = [line for line in README.read_text(encoding="utf-8").splitlines() if "curl " in line]
    assert len(lines) == 1, "the README documents exactly one curl one-liner"
    (url,) = re.findall(r"'(http://[^']+)'", lines[0])
    return url


@pytest.mark.asyncio
async def test_documented_curl_downloads_llm_papers_matching_reasoning(datasette, query):
    url = documented_curl_url()
    assert "_stream=on" in url and "_size=max" in url
    path = url.split("://", 1)[1].split("/", 1)[1]
    header, rows = parse_csv(await datasette.client.get("/" + path))
    expected = query(
        "select papers.id from papers join papers_fts on papers_fts.rowid = papers.rowid "
        "where papers.track = ? and papers_fts match 'reasoning'",
        [LLM_TRACK],
    )
    assert len(rows) == len(expected) == 6
    assert {row[0] for row in rows} == {row[0] for row in expected}
    assert {row[header.index("track")] for row in rows} == {LLM_TRACK}


NASTY = [
    {
        "title": 'Commas, "quotes" and\nnewlines: a CSV torture test',
        "abstract": "Line one, with a comma.\nLine two has \"double quotes\" and 'single'.\r\n"
        "Line three: tabs\there, a lone \r carriage return, Ünïcödé, 中文, emoji 😀, "
        "and =SUM(A1) that spreadsheet users fear.",
        "authors": ['Jane "JJ" Doe', "Zoë Ångström", "李 雷"],
        "track": "Social Aspects · Fairness, Accountability",
        "affiliations": ["o'reilly-labs", "ecole-polytechnique"],
    },
    {
        "abstract": "A plain second paper so the table has more than one row, about reasoning.",
        "authors": ["Solo Author"],
    },
]


@pytest.fixture(scope="module")
def nasty_datasette(tmp_path_factory):
    """A second catalog whose cells need every kind of CSV quoting, served like the seeds."""
    from datasette.app import Datasette

    from loader.serve.settings import SETTINGS

    folder = tmp_path_factory.mktemp("nasty")
    source = folder / "input" / "nasty.jsonl"
    source.parent.mkdir()
    source.write_text("\n".join(json.dumps(e, ensure_ascii=False) for e in NASTY) + "\n", "utf-8")
    path = folder / "catalog.db"
    build_catalog(discover([source.parent]), path)
    metadata = yaml.safe_load((ROOT / "metadata.yml").read_text(encoding="utf-8"))
    return Datasette(immutables=[str(path)], settings=SETTINGS, **datasette_arguments(metadata))


@pytest.mark.asyncio
async def test_csv_quotes_commas_quotes_and_newlines(nasty_datasette):
    header, rows, expected = await csv_and_json(nasty_datasette, "/catalog/papers", {})
    assert rows == expected and len(rows) == 2
    nasty = next(row for row in rows if row[header.index("title")])
    abstract = nasty[header.index("abstract")]
    assert abstract == NASTY[0]["abstract"]
    assert nasty[header.index("title")] == NASTY[0]["title"]
    assert json.loads(nasty[header.index("authors")]) == NASTY[0]["authors"]
    assert nasty[header.index("track")] == NASTY[0]["track"]


@pytest.mark.asyncio
async def test_nasty_search_csv(nasty_datasette):
    header, rows, expected = await csv_and_json(nasty_datasette, "/catalog/search", {"q": "quotes"})
    assert rows == expected and len(rows) == 1
    assert '"double quotes"' in rows[0][header.index("snippet")]


# -- nothing writes -------------------------------------------------------------------------


def file_digest(path):
    return hashlib.sha256(path.read_bytes()).hexdigest()


WRITES = [
    "insert into papers (id, label, abstract) values ('x', 'x', 'x')",
    "update papers set label = 'pwned'",
    "delete from papers",
    "drop table papers",
    "create table pwned (id)",
    "pragma user_version = 7",
    "attach database ':memory:' as other",
    "with x as (select 1) delete from papers",
    "select 1; delete from papers",
]


@pytest.mark.asyncio
@pytest.mark.parametrize("sql", WRITES)
async def test_write_sql_is_refused(datasette, seed_catalog, query, sql):
    before = file_digest(seed_catalog)
    for format in ("", "json"):
        response = await datasette.client.get(
            f"{query_path(format=format)}?{urlencode({'sql': sql})}"
        )
        if DATASETTE_1 and not format and response.status_code == 200:
            # 1.0's SQL page shows what SQLite refused above its editor, answering 200
            assert 'class="message-error"' in response.text
        else:
            assert response.status_code in (400, 403), (format, response.status_code)
    # Datasette 0.65's own CSV answers a query its read-only connection refuses with an empty
    # 200; the catalog's CSV is the JSON's refusal
    response = await datasette.client.get(f"{query_path(format='csv')}?{urlencode({'sql': sql})}")
    assert response.status_code in (400, 403)
    response = await datasette.client.post(query_path(), data={"sql": sql})
    assert response.status_code >= 400
    assert query("select count(*) from papers")[0][0] == 90
    assert file_digest(seed_catalog) == before


@pytest.mark.asyncio
@pytest.mark.parametrize("name", ["search", "load_problems", "papers_by_author"])
async def test_post_to_canned_query_is_refused(datasette, seed_catalog, query, name):
    before = file_digest(seed_catalog)
    for body in ({"q": "x", "author_id": "1"}, {"sql": "delete from papers"}):
        response = await datasette.client.post(f"/catalog/{name}.csv", data=body)
        assert response.status_code == 405
        response = await datasette.client.post(f"/catalog/{name}", data=body)
        assert response.status_code >= 400
        response = await datasette.client.post(f"/catalog/{name}.json", json=body)
        assert response.status_code >= 400
    assert query("select count(*) from papers")[0][0] == 90
    assert file_digest(seed_catalog) == before


# -- plugins/csv_stream.py: the JSON's rows written fast, byte for byte as Datasette's CSV -----


csv_stream = load_plugin("csv_stream")


async def datasette_own_csv(datasette, url):
    """The response of Datasette's own router without the plugin's CSV routes."""
    import httpx
    from datasette.app import DatasetteRouter

    ours = {pattern for pattern, _ in csv_stream.csv_routes(datasette)}
    routes = [route for route in datasette._routes() if route[0].pattern not in ours]
    transport = httpx.ASGITransport(app=DatasetteRouter(datasette, routes))
    async with httpx.AsyncClient(transport=transport, base_url="http://localhost") as client:
        return await client.get(url)


# headers the catalog's CSV leaves out where Datasette's own has them: a download's file name
# says what it holds (plugins/csv_stream.py download_name); Datasette 1.0's table view gives every
# answer a Cache-Control (its default_cache_ttl) and a Referrer-Policy, which the served app
# replaces on every answer (loader/serve/etag.py, loader/serve/security_headers.py)
OWN_HEADERS = {"content-disposition"} | (
    {"cache-control", "referrer-policy"} if DATASETTE_1 else set()
)


def without_own_headers(headers):
    return {name: value for name, value in headers.items() if name not in OWN_HEADERS}


async def assert_same_as_datasette(datasette, url):
    own = await datasette_own_csv(datasette, url)
    response = await datasette.client.get(url)
    assert response.status_code == own.status_code
    assert without_own_headers(response.headers) == without_own_headers(own.headers)
    assert response.content == own.content, url
    return response.content


def csv_view_serves(datasette, path):
    """The first route Datasette matches for path is the plugin's CSV view."""
    pattern = next(regex.pattern for regex, _ in datasette._routes() if regex.match(path))
    return pattern in {pattern for pattern, _ in csv_stream.csv_routes(datasette)}


def test_every_csv_of_the_catalog_is_routed_to_our_view(datasette):
    for path in ("/catalog.csv", "/catalog/papers.csv", "/catalog/search.csv", "/catalog/a/b.csv"):
        assert csv_view_serves(datasette, path), path
    for path in ("/catalog/papers.json", "/catalog/papers", "/catalog.json"):
        assert not csv_view_serves(datasette, path), path


def table_csv(table, params):
    """A table CSV URL that chooses its columns, so plugins/papers_columns.py leaves it as it is
    and Datasette's own view answers the same URL (its own tests: tests/test_exports.py)."""
    params = dict(params)
    if table == "papers" and not {"_col", "_nocol"} & set(params):
        params["_nocol"] = "abstract_plain"
    return f"/catalog/{table}.csv?{urlencode(params, doseq=True)}"


@pytest.mark.asyncio
@pytest.mark.parametrize(
    "table, params",
    [
        ("papers", {"track": LLM_TRACK, **STREAM}),
        ("papers", {"area": "Deep Learning", **STREAM}),
        ("papers", {"authors__arraycontains": "Huishuai Zhang", **STREAM}),
        ("papers", {"affiliations__arraycontains": "pku", **STREAM}),
        ("papers", {"_search": "reasoning", **STREAM}),
        ("papers", {"_search": '"large language models"', "area": "Deep Learning", **STREAM}),
        ("papers", {"_search_label": "reasoning", **STREAM}),
        ("papers", {"_where": "author_count > 5", **STREAM}),
        ("papers", {"author_count__gte": "3", "_sort_desc": "author_count", **STREAM}),
        ("papers", {"_sort": "title", **STREAM}),
        ("papers", {"_col": ["title", "area"], **STREAM}),
        ("papers", {"_nocol": "abstract", "_header": "off", **STREAM}),
        ("papers", {"track": LLM_TRACK, "_labels": "on", **STREAM}),
        ("papers", {"_label": "track_id", **STREAM}),
        ("papers", {"track": LLM_TRACK, "_dl": "1", **STREAM}),
        ("papers", {"area": "No Such Area", **STREAM}),
        ("papers", {"area": "No Such Area", "_header": "off", **STREAM}),
        ("papers", {"_stream": "on"}),
        ("papers", {"_stream": "on", "_size": "7"}),
        ("papers", {"_size": "max"}),
        ("papers", {"_size": "5"}),
        ("papers", {}),
        ("paper_authors", {"author_id": "100", "_labels": "on", **STREAM}),
        ("paper_authors", {"_stream": "on", "_labels": "on", "_size": "40"}),
        ("authors", STREAM),
        ("tracks", {"_labels": "on", **STREAM}),
    ],
)
async def test_fast_csv_is_datasettes_csv(datasette, table, params):
    body = await assert_same_as_datasette(datasette, table_csv(table, params))
    assert body.endswith(b"\r\n") or body == b""


@pytest.mark.asyncio
@pytest.mark.parametrize(
    "url",
    [
        "/catalog/coauthors.csv?author_id=100&_stream=on&_size=max",  # a canned query
        "/catalog/papers.csv?track=x&_stream=on&_size=max&_trace=1&_nocol=abstract_plain",
    ],
)
async def test_canned_queries_and_trace_keep_datasettes_csv(datasette, url):
    response = await datasette.client.get(url)
    assert response.status_code == 200
    if "_trace" not in url:
        await assert_same_as_datasette(datasette, url)


@pytest.mark.asyncio
@pytest.mark.parametrize(
    "url, status, reason",
    [
        ("/catalog/papers.csv?_stream=on&_next=abc", 400, "_next not allowed"),
        ("/catalog/no_such_table.csv?_stream=on", 404, "not found"),
        ("/no_such_database/papers.csv?_stream=on", 404, "not found"),
        ("/catalog/papers.csv?_sort=nonexistent", 400, "Cannot sort table by nonexistent"),
        ("/catalog/papers.csv?_col=nonexistent", 400, "nonexistent"),
        ("/catalog/papers.csv?_where=nonsense(", 400, "one SQL expression"),
        ("/catalog/papers.csv?_where=1)%20union%20select", 400, "one SQL expression"),
        ("/catalog/papers.csv?_where=1)%20or%20(1&_stream=on", 400, "one SQL expression"),
        ("/catalog/papers.csv?_where=1%20--&_stream=on", 400, "one SQL expression"),
        ("/catalog/papers.csv?_where=no_such_column&_stream=on", 400, "no such column"),
        ("/catalog/papers.csv?_size=abc", 400, "_size must be a positive integer"),
    ],
)
async def test_csv_refuses_what_datasette_refuses(datasette, url, status, reason):
    """The same status as Datasette's own CSV, as Datasette's error page, with the reason; a
    `_where` Datasette's own CSV accepted (`1) or (1`: a stream of page 1 forever) or never
    ran (a stream's first page starts once its response has) is refused too."""
    if "_where" not in url:
        own = await datasette_own_csv(datasette, url)
        assert own.status_code == status
    response = await datasette.client.get(url)
    assert response.status_code == status
    assert reason.lower() in response.text.lower()
    assert "content-disposition" not in response.headers


@pytest.mark.asyncio
@pytest.mark.parametrize(
    "sql, reason",
    [
        ("select 1 from nonexistent", "no such table: nonexistent"),
        ("select nonsense(", "incomplete input"),
        ("select * from papers where no_such_column = 1", "no such column: no_such_column"),
    ],
)
async def test_the_csv_of_a_failed_query_is_a_400_with_the_reason(datasette, sql, reason):
    """As its HTML and JSON: Datasette's own CSV was a 200 with an empty body. The catalog's
    CSV answers at /catalog.csv in both versions, and at 1.0's query page too."""
    paths = [query_path(), query_path(format="json"), "/catalog.csv", query_path(format="csv")]
    for path in dict.fromkeys(paths):
        for extra in ({}, {"_dl": "1"}, STREAM):
            query = urlencode({"sql": sql, **extra})
            response = await datasette.client.get(f"{path}?{query}")
            if DATASETTE_1 and path == query_path():
                # 1.0's SQL page shows what SQLite refused above its editor, answering 200
                assert 'class="message-error"' in response.text
            else:
                assert response.status_code == 400, (path, extra)
            assert reason in html.unescape(response.text), (path, response.text[:300])
            assert "content-disposition" not in response.headers


@pytest.mark.asyncio
async def test_fast_csv_of_every_paper_equals_the_json_rows(datasette):
    _header, rows, expected = await csv_and_json(datasette, "/catalog/papers", {})
    assert len(rows) == 90 and rows == expected


@pytest.mark.asyncio
async def test_fast_csv_nasty_cells(datasette, nasty_datasette):
    for params in ({}, {"_search": "quotes"}, {"_labels": "on"}):
        await assert_same_as_datasette(nasty_datasette, table_csv("papers", {**params, **STREAM}))


@pytest.fixture(scope="module")
def odd_datasette(datasette, tmp_path_factory):
    """Blobs, floats, a one-column table with empty strings: the cells the encoder leaves to
    csv.writer or Datasette's blob URLs. Blobs that are not UTF-8: Datasette's JSON, which the
    CSV is written from, gives one that is as its text (test_a_utf8_blob_is_its_text). Needs
    `datasette` first: it registers the plugins."""
    import sqlite3

    from datasette.app import Datasette

    from loader.serve.settings import SETTINGS

    path = tmp_path_factory.mktemp("odd") / "catalog.db"
    connection = sqlite3.connect(path)
    connection.executescript(
        """
        create table files (id integer primary key, name text, data blob, score real);
        create table notes (note text);
        create table kinds (id text primary key, value);
        create table paper_catalog (format text primary key, schema_version integer);
        insert into paper_catalog values ('paper-catalog', 1);
        """
    )
    connection.executemany(
        "insert into files values (?, ?, ?, ?)",
        [
            (1, "a, b", b"\xff\x00binary", 0.1),
            (2, " leading space", None, 1e300),
            (3, 'q"uote', b"\x80", -0.0),
            (4, "", b"\xfe" * 100, 3.0),
            (5, "infinite", None, float("inf")),
        ],
    )
    connection.executemany("insert into notes values (?)", [("",), (None,), ("x",), (" ",)])
    connection.executemany(
        "insert into kinds values (?, ?)",
        [("int", 2**62), ("float", 2.5), ("text", "tab\there"), ("blob", b"\xff"), ("null", None)],
    )
    connection.commit()
    connection.close()
    return Datasette(immutables=[str(path)], settings=SETTINGS)


@pytest.mark.asyncio
@pytest.mark.parametrize("table", ["files", "notes", "kinds"])
@pytest.mark.parametrize("params", [STREAM, {**STREAM, "_header": "off"}, {"_size": "2"}])
async def test_fast_csv_odd_values(odd_datasette, table, params):
    assert csv_view_serves(odd_datasette, f"/catalog/{table}.csv")
    await assert_same_as_datasette(odd_datasette, table_csv(table, params))


@pytest.mark.asyncio
async def test_fast_csv_stops_at_the_same_row_when_over_max_csv_mb(datasette, seed_catalog):
    from datasette.app import Datasette

    from loader.serve.settings import SETTINGS

    metadata = yaml.safe_load((ROOT / "metadata.yml").read_text(encoding="utf-8"))
    for limit in (0.00001, 0.05, 0.1):
        limited = Datasette(
            immutables=[str(seed_catalog)],
            settings={**SETTINGS, "max_csv_mb": limit},
            **datasette_arguments(metadata),
        )
        body = await assert_same_as_datasette(limited, table_csv("papers", STREAM))
        assert body.decode("utf-8").endswith(f"CSV contains more than {limit * 1024 * 1024} bytes")


CELLS = st.one_of(
    st.none(),
    st.integers(),
    st.floats(),
    st.booleans(),
    st.binary(max_size=5),
    st.text(alphabet=st.sampled_from(list(" ,\"\r\n\t'ab\u00e9\ue000\U0001f600")), max_size=8),
    st.text(max_size=8),
)


@given(st.lists(CELLS, max_size=6))
@settings(max_examples=500)
def test_row_encoder_writes_what_csv_writer_writes(row):
    buffer = io.StringIO()
    csv.writer(buffer).writerow(safe_row(row))
    assert csv_stream.RowEncoder().line(row) == buffer.getvalue()


@pytest.mark.asyncio
async def test_a_utf8_blob_is_its_text(odd_datasette):
    """The one difference with Datasette's own CSV: the rows come from its JSON, which gives a
    blob that is valid UTF-8 as its text; any other blob is its URL, as in Datasette's CSV."""
    sql = "select cast('text' as blob) as utf8, x'ff00' as binary"
    rows = list(
        csv.reader(
            io.StringIO(
                (await odd_datasette.client.get(f"/catalog.csv?{urlencode({'sql': sql})}")).text
            )
        )
    )
    assert rows[0] == ["utf8", "binary"]
    assert rows[1][0] == "text"
    assert rows[1][1].startswith("http://localhost/catalog.blob?sql=")
    assert "_blob_column=binary" in rows[1][1] and "_nocount" not in rows[1][1]
    # Datasette's own CSV of the query page (1.0 redirects /catalog.csv to its own) links the
    # blob as the catalog's CSV at the same path
    url = f"{query_path(format='csv')}?{urlencode({'sql': sql})}"
    own = (await datasette_own_csv(odd_datasette, url)).text
    ours = (await odd_datasette.client.get(url)).text
    assert list(csv.reader(io.StringIO(own)))[1][1] == list(csv.reader(io.StringIO(ours)))[1][1]


@pytest.mark.asyncio
async def test_a_csv_datasette_redirects_keeps_its_own_parameters(datasette):
    """Datasette redirects `_sort_by_desc` and its filter form's fields; the CSV goes where the
    JSON would, a CSV stream still, with nothing the view asks of the JSON."""
    response = await datasette.client.get(
        "/catalog/papers.csv?_sort_by_desc=on&_sort=year&_stream=on&_dl=1&_where=1"
    )
    assert response.status_code == 302
    location = response.headers["location"]
    path, _, query = location.partition("?")
    assert path == "/catalog/papers.csv"
    pairs = parse_qsl(query)
    assert ("_sort_desc", "year") in pairs and ("_where", "1") in pairs
    assert ("_stream", "on") in pairs and ("_dl", "1") in pairs
    assert not {"_nofacet", "_nocount", "_json_infinity", "_sort_by_desc"} & dict(pairs).keys()
    followed = await datasette.client.get(location)
    assert followed.status_code == 200
    assert followed.headers["content-disposition"].startswith("attachment")
