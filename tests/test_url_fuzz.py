"""Every URL parameter and path shape, with hostile values, on every table and every page kind
of the site: a client's mistake is a 4xx with a message, never a 5xx.

Deterministic and bounded: each (parameter, value) pair is requested once, on a table and a
format picked in turn, then a seeded sample of combinations; a few thousand requests in all.
Every parameter of every page kind (home, database, custom SQL, tables, rows, BibTeX, /search
and its exports, canned queries, charts, author look-up, `/-/` pages) is then asked through the
served app (ETag, cache, gzip, security headers) with one value of each hostile kind: a JSON
object, a JSON array, a huge number, a NUL, bytes no UTF-8 decoder accepts, a very long value.
`make test` sends every hostile value with a share of the parameters; the long set
(`-m slow`, `make test-slow`) asks every parameter of every page kind with every hostile value and a
larger sample of combinations.
"""

import random
from urllib.parse import quote

import httpx
import pytest
import pytest_asyncio

from loader.web.search_request import FILTERS

# bytes no UTF-8 decoder accepts, NUL, and a lone or broken percent escape, written into the
# URL as they are (quote() would escape them into harmless text)
RAW = ["%FF", "%00", "a%00b", "%C0%AF", "%ED%A0%80", "%", "%G1", "%E2%82"]
HOSTILE = [
    "",
    " ",
    "\x00",
    "a\x00b",
    "'",
    '"',
    "`",
    "[",
    "]",
    "{",
    "}",
    "(",
    ",",
    ",,,",
    "~",
    "~2F",
    "~ZZ",
    "*",
    "%",
    "_",
    "-",
    "-1",
    "0",
    "1.5",
    "1e999",
    "nan",
    "-9223372036854775809",
    "99999999999999999999999999",
    "rowid",
    "missing_column",
    "NEAR(",
    "\U0001f600",
    "\u202e",
    "\n\r\t",
    "<script>alert(1)</script>",
    "'; drop table papers; --",
    "1) union select sql from sqlite_master --",
    "../../etc/passwd",
    "x" * 5_000,
    "[" * 3_000,
    "{" * 3_000,
]
# the kinds of hostile value every parameter of every page kind is asked with
JSON_VALUES = [
    '{"a": 1}',
    '{"column": 1}',
    '{"column": "missing"}',
    '{"simple": ["x"]}',
    '{"column": "id", "simple": {}}',
    "{}",
    '{"table": {"a": []}, "column": null, "value": [1]}',
    "[]",
    "[1, 2]",
    '["a", {"b": 1}]',
    "[[[[[]]]]]",
    "null",
    "true",
    '"x"',
]
HUGE_NUMBERS = [
    "1e309",
    "-1e309",
    "9" * 400,
    "-" + "9" * 400,
    "18446744073709551616",
    "9223372036854775808",
    "-9223372036854775809",
    "0x7fffffffffffffff",
    "1_000",
    "\u0663",
    "Infinity",
    "-0",
    "1" + "0" * 5000,
]
# bytes no UTF-8 decoder accepts: overlong, surrogate, past U+10FFFF, cut short, stray
INVALID_UTF8 = ["%80", "%C3%28", "%F0%28%8C%BC", "%F8%88%80%80%80", "%FF%FE", "a%C0%80b"]
INVALID_UTF8 += ["%ED%BF%BF", "%F4%90%80%80", "%E2%82%28", "%C3"]
NULS = ["\x00" * 100, "x\x00", "\x00x", "%00%00"]
# as long as a URL may be (httpx's limit is 64 KiB; uvicorn refuses request heads past 16 KiB)
LONG_VALUES = [
    "x" * 60_000,
    "\u00e9" * 9_000,
    "{" * 15_000,
    "[" * 15_000,
    ",".join(["1"] * 10_000),
    "~" * 30_000,
    "%FF" * 3_000,
]
# one value of each kind, the short set of make test (the number has more digits than the
# 4,300 Python's int() reads from text)
SHORT_VALUES = ['{"a": 1}', '["a", {"b": 1}]', "9" * 5_000, "x\x00y", "%C3%28", "x" * 20_000]
# every hostile value there is: the long set
LONG_SET_VALUES = [*HOSTILE, *RAW, *JSON_VALUES, *HUGE_NUMBERS, *INVALID_UTF8, *NULS]
LONG_SET_VALUES += LONG_VALUES
# values written into the URL as they are (quote() would escape them into harmless text)
RAW_VALUES = {*RAW, *INVALID_UTF8, "%00%00", "%FF" * 3_000, "%C3%28"}
THROUGH = [
    '{"table": "missing", "column": "id", "value": "1"}',
    '{"table": "paper_authors", "column": "missing", "value": "1"}',
    '{"table": "paper_authors", "column": "author_id", "value": "1"}',
    '{"table": "papers", "column": "id", "value": "x"}',
    '{"table": "paper_authors"}',
    '{"column": "x"}',
    "[]",
    '"papers"',
    "{",
    "null",
    "1",
]
WHERE = [
    "1",
    "0",
    "missing = 1",
    "id = ",
    "1 = 1 --",
    "x\x00",
    "length(zeroblob(9e8)) > 0",
    "rowid > 0",
    "1) or (1",
    "exists (select file from pragma_database_list)",
]
NEXT = ["abc", "-1", "0", "1,2", "1,2,3", "~", "~~", "a,~ZZ", "99999999999999999999", ",", "1.5"]
SQL = [
    "select 1",
    "select * from missing",
    "select missing from papers",
    "select",
    "select 1; select 2",
    "select :p",
    "select 'x\x00'",
    "select * from papers_fts where papers_fts match '\"'",
    "with x as (select 1) delete from papers",
    "pragma table_info(papers)",
    "select * from pragma_table_info('missing')",
    "select zeroblob(-1)",
    "select 1/0, abs(-9223372036854775808)",
]
FLAGS = ["on", "off", "1", "0", "true", "yes", "max"]
SHAPES = ["objects", "array", "arrayfirst", "object", "arrays", "bad"]

# parameters whose values name columns: every column of the table is tried too
COLUMN_PARAMETERS = ["_sort", "_sort_desc", "_facet", "_facet_array", "_facet_date", "_col"]
COLUMN_PARAMETERS += ["_nocol", "_json", "_blob_column", "_search_{column}"]
PARAMETERS = {
    "_sort": [],
    "_sort_desc": [],
    "_where": WHERE,
    "_facet": [],
    "_facet_array": [],
    "_facet_date": [],
    "_facet_size": ["max", "-1", "0", "abc", "99999999999"],
    "_through": THROUGH,
    "_search": [],
    "_searchmode": ["raw", "escaped"],
    "_fts_table": ["papers_fts", "missing"],
    "_fts_pk": ["rowid", "missing"],
    "_col": [],
    "_nocol": [],
    "_size": ["max", "-1", "0", "1001", "abc", "1e9", "99999999999999999999"],
    "_next": NEXT,
    "_timelimit": ["abc", "-1", "0", "1e99", "99999999999999999999", "1.5"],
    "_shape": SHAPES,
    "_labels": FLAGS,
    "_json": [],
    "_json_infinity": FLAGS,
    "_nl": FLAGS,
    "_stream": FLAGS,
    "_dl": FLAGS,
    "_header": FLAGS,
    "_nofacet": FLAGS,
    "_nocount": FLAGS,
    "_nosuggest": FLAGS,
    "_show_hidden": FLAGS,
    "_extras": ["count", "facet_results", "missing"],
    "_ttl": ["-1", "abc", "99999999999999999999"],
    "_trace": FLAGS,
    "_context": FLAGS,
    "_blob_column": [],
    "_blob_hash": ["abc", ""],
}
FORMATS = ["", ".json", ".csv"]
DATABASE = "catalog"


def encoded(value):
    return value if value in RAW_VALUES else quote(value, safe="")


def query_string(pairs):
    return "&".join(f"{quote(key, safe='')}={encoded(value)}" for key, value in pairs)


async def catalog_tables(datasette):
    """Every table, hidden ones included, with its columns and primary keys."""
    db = datasette.get_database(DATABASE)
    tables = {}
    for name in await db.table_names():
        tables[name] = {
            "columns": await db.table_columns(name),
            "pks": await db.primary_keys(name),
        }
    return tables


def parameter_requests(tables, share=1):
    """Every parameter with every value it is fuzzed with, on a table and format in turn; with a
    share of n, each parameter gets its own values and every nth hostile one, a different nth
    for the next parameter, so that every hostile value is still sent, and each table gets
    every (n/3)th column parameter, the others on the next tables (each still on several)."""
    names = sorted(tables)
    turn = 0
    requests = []
    for index, (parameter, values) in enumerate(PARAMETERS.items()):
        for value in [*values, *[*HOSTILE, *RAW][index % share :: share]]:
            table = names[turn % len(names)]
            suffix = FORMATS[turn % len(FORMATS)]
            turn += 1
            requests.append((f"/{DATABASE}/{table}{suffix}", [(parameter, value)]))
    step = max(1, min(share // 3, len(COLUMN_PARAMETERS)))
    for number, table in enumerate(names):
        columns = tables[table]["columns"]
        for index, parameter in enumerate(COLUMN_PARAMETERS):
            if (index + number) % step:
                continue
            # every column of every table in turn, at least twice over the parameters
            for column in {columns[index % len(columns)], columns[-1 - index % len(columns)]}:
                suffix = FORMATS[index % len(FORMATS)]
                pair = (parameter.format(column=column), column)
                requests.append((f"/{DATABASE}/{table}{suffix}", [pair]))
    return requests


def filter_requests(tables, operations, share=2):
    """`column__op=value` for every filter operation, on the tables, their columns (a missing
    one and rowid included) and the formats in turn: every value with a share of the
    operations, every operation with a share of the values."""
    names = sorted(tables)
    requests = []
    turn = 0
    values = [*HOSTILE, *RAW]
    for index, operation in enumerate(operations):
        for value in values[index % share :: share]:
            table = names[turn % len(names)]
            columns = [*tables[table]["columns"], "missing_column", "rowid"]
            column = columns[turn % len(columns)]
            suffix = FORMATS[turn % len(FORMATS)]
            turn += 1
            requests.append((f"/{DATABASE}/{table}{suffix}", [(f"{column}__{operation}", value)]))
    return requests


def sql_requests(share=1):
    """Each statement as the SQL, and each hostile value as the SQL and as a parameter of it;
    with a share of 2, each hostile value one way, the next value the other."""
    requests = []
    for index, sql in enumerate([*SQL, *HOSTILE, *RAW]):
        suffix = ["", ".json", ".csv"][index % 3]
        hostile = index >= len(SQL)
        if share == 1 or not hostile or index % 2:
            requests.append((f"/{DATABASE}{suffix}", [("sql", sql)]))
        if share == 1 or (hostile and not index % 2):
            requests.append((f"/{DATABASE}{suffix}", [("sql", "select :p as p"), ("p", sql)]))
    return requests


async def canned_requests(datasette, share=1):
    """Every canned query with a share of the hostile values, a different share for the next
    query, so that every value is still sent."""
    queries = await datasette.get_canned_queries(DATABASE, None)
    requests = []
    for index, (name, query) in enumerate(sorted(queries.items())):
        params = query.get("params") or []
        for offset, value in enumerate([*HOSTILE, *RAW, "1"][index % share :: share]):
            suffix = FORMATS[(index + offset) % len(FORMATS)]
            pairs = [(param, value) for param in params] or [("_shape", value)]
            requests.append((f"/{DATABASE}/{name}{suffix}", pairs))
        requests.append((f"/{DATABASE}/{name}.json", [("_size", "max"), ("_shape", "objects")]))
    return requests


def path_requests(tables, share=1):
    """Tables, rows, compound keys, missing names and broken encodings in the path itself;
    with a share of n, each table's rows are asked with every nth key, a different nth for the
    next table, so that every key is still asked, and each table in one format, the next
    table in the next."""
    keys = ["", " ", "'", "-1", "0", "1.5", "1e999", "-9223372036854775809", "9" * 30, "x" * 5000]
    keys += [*RAW, "~2C", "a,b", "a,b,c", "1,", ",1", "~", "~~", "~ZZ", "~2F~2F", "\U0001f600"]
    paths = ["/", "/.json", f"/{DATABASE}", f"/{DATABASE}.json", f"/{DATABASE}.csv", "/missing"]
    paths += ["/missing/papers"]
    paths += [f"/{DATABASE}/missing", f"/{DATABASE}/missing.json", f"/{DATABASE}/missing/1"]
    paths += [f"/{DATABASE}.db", f"/{DATABASE}/papers.missing", f"/{DATABASE}/papers/x.missing"]
    paths += [f"/{DATABASE}/%FF", f"/{DATABASE}/%00", "/%FF", "/%00", f"/{DATABASE}/~ZZ"]
    for number, table in enumerate(sorted(tables)):
        formats = FORMATS if share == 1 else [FORMATS[number % len(FORMATS)]]
        paths += [f"/{DATABASE}/{table}{suffix}" for suffix in formats]
        paths.append(f"/{DATABASE}/{quote(table.replace('_', '~5F'), safe='~')}")
        for index, key in enumerate(keys):
            if (index + number) % share:
                continue
            suffix = (
                FORMATS[index % len(FORMATS)] if FORMATS[index % len(FORMATS)] != ".csv" else ""
            )
            paths.append(f"/{DATABASE}/{table}/{encoded(key)}{suffix}")
        paths.append(f"/{DATABASE}/{table}/1.blob?_blob_column=missing")
    return [(path, []) for path in paths]


def combination_requests(tables, operations, count, seed=20261203):
    """A seeded sample of two to four parameters at once."""
    chooser = random.Random(seed)
    names = sorted(tables)
    values = [*HOSTILE, *RAW]
    requests = []
    for _ in range(count):
        table = chooser.choice(names)
        columns = tables[table]["columns"]
        pairs = []
        for _ in range(chooser.randint(2, 4)):
            parameter = chooser.choice([*PARAMETERS, "filter"])
            if parameter == "filter":
                parameter = f"{chooser.choice(columns)}__{chooser.choice(operations)}"
            pool = PARAMETERS.get(parameter) or []
            pool = [*pool, *columns, *values] if parameter in PARAMETERS else values
            pairs.append((parameter, chooser.choice(pool)))
        requests.append((f"/{DATABASE}/{table}{chooser.choice(FORMATS)}", pairs))
    return requests


async def fetch_all(datasette, requests):
    return await fetch_each(datasette.client.get, requests)


async def fetch_each(get, requests):
    """Ask every request with get(url); the 5xx answers, as (status, url, text)."""
    failures = []
    for path, pairs in requests:
        url = f"{path}?{query_string(pairs)}" if pairs else path
        response = await get(url)
        if response.status_code >= 500:
            failures.append((response.status_code, url[:160], response.text[:200]))
        elif response.status_code >= 400:
            # a message for a person, not an empty page or a traceback
            assert response.text.strip(), url
            assert "Traceback (most recent call last)" not in response.text, url
    return failures


def filter_operations():
    from datasette.filters import Filters

    return [f.key for f in Filters._filters]


def report(failures):
    return f"{len(failures)} answered 5xx:\n" + "\n".join(map(str, failures))


# `make test` sends each hostile value with a twelfth of the parameters and of the filter
# operations, as custom SQL or as its parameter, each canned query with half of the values, each table's rows with a twelfth of
# the keys (the table itself in one format) and 150 combinations; `make test-slow` with every
# parameter and query, half of the operations, every key and 3,000 combinations


def shares(sample, whole=1):
    """A sampled run in `make test` (every `sample`th), the whole one in `make test-slow`."""
    return pytest.mark.parametrize(
        "share", [sample, pytest.param(whole, marks=pytest.mark.slow)], ids=lambda n: f"1-in-{n}"
    )


@pytest.mark.asyncio
@shares(12)
async def test_every_parameter_with_hostile_values_is_never_a_5xx(datasette, share):
    tables = await catalog_tables(datasette)
    failures = await fetch_all(datasette, parameter_requests(tables, share))
    assert not failures, report(failures)


@pytest.mark.asyncio
@shares(12, whole=2)
async def test_every_filter_operation_with_hostile_values_is_never_a_5xx(datasette, share):
    tables = await catalog_tables(datasette)
    operations = [*filter_operations(), "missing_op"]
    failures = await fetch_all(datasette, filter_requests(tables, operations, share))
    assert not failures, report(failures)


@pytest.mark.asyncio
@shares(2)
async def test_sql_and_canned_queries_with_hostile_values_are_never_a_5xx(datasette, share):
    requests = sql_requests(share) + await canned_requests(datasette, share)
    failures = await fetch_all(datasette, requests)
    assert not failures, report(failures)


@pytest.mark.asyncio
@shares(12)
async def test_hostile_paths_are_never_a_5xx(datasette, share):
    tables = await catalog_tables(datasette)
    failures = await fetch_all(datasette, path_requests(tables, share))
    assert not failures, report(failures)


@pytest.mark.asyncio
@pytest.mark.parametrize("count", [150, pytest.param(3000, marks=pytest.mark.slow)])
async def test_combinations_of_hostile_parameters_are_never_a_5xx(datasette, count):
    tables = await catalog_tables(datasette)
    requests = combination_requests(tables, filter_operations(), count)
    failures = await fetch_all(datasette, requests)
    assert not failures, report(failures)


# -- every parameter of every page kind, through the served app -------------------------------

# what any Datasette page reads: the JSON shape and options, labels, tracing, time limits
DATASETTE_PAGE = ["_shape", "_json", "_json_infinity", "_nl", "_extras", "_labels", "_trace"]
DATASETTE_PAGE += ["_context", "_ttl", "_timelimit", "_size"]
# what a query page (custom SQL, canned) reads besides
QUERY_PAGE = [*DATASETTE_PAGE, "_stream", "_dl", "_header", "_hide_sql", "_show_sql", "_next"]
# what a row page reads besides
ROW_PAGE = [*DATASETTE_PAGE, "_stream", "_dl", "_header", "_col", "_nocol", "_sort"]
SEARCH_PAGE = ["q", *FILTERS, "sort", "page", "size", "_facets", "_all"]
SEARCH_PATHS = ["/search", "/search.json", "/search.csv", "/search.bib", "/search/facets"]
INTROSPECTION = ["/-/databases", "/-/databases.json", "/-/threads.json", "/-/versions.json"]
INTROSPECTION += ["/-/plugins.json", "/-/settings.json", "/-/metadata.json", "/-/actor.json"]


def table_page_parameters(columns):
    """Every table parameter, a filter of each shape and a search of a column."""
    filters = [columns[0], f"{columns[-1]}__gt", f"{columns[0]}__in"]
    filters += [f"{columns[-1]}__arraycontains", f"_search_{columns[0]}"]
    return [*PARAMETERS, *filters]


async def page_kinds(datasette, each_table=False):
    """Each page kind: (its URLs, the pairs every request of it carries, its parameters). The
    tables are one kind whose URLs take turns, or with `each_table` a kind each."""
    tables = await catalog_tables(datasette)
    db = datasette.get_database(DATABASE)
    paper = (await db.execute("select id from papers order by id limit 1")).first()[0]
    author = (await db.execute("select id from authors order by id limit 1")).first()[0]
    link = (await db.execute("select paper_id, author_id from paper_authors limit 1")).first()
    name = (await db.execute("select name from authors order by id limit 1")).first()[0]
    rows = [f"/{DATABASE}/papers/{paper}", f"/{DATABASE}/authors/{author}"]
    rows.append(f"/{DATABASE}/paper_authors/{link[0]},{link[1]}")
    kinds = {
        "home": (["/", "/.json"], [], DATASETTE_PAGE),
        "database": ([f"/{DATABASE}{suffix}" for suffix in FORMATS], [], ["sql", *QUERY_PAGE]),
        "custom SQL": (
            [f"/{DATABASE}{suffix}" for suffix in FORMATS],
            [("sql", "select :p as p, label from papers limit 2")],
            ["p", *QUERY_PAGE],
        ),
        "row": ([row + suffix for row in rows for suffix in FORMATS], [], ROW_PAGE),
        "paper BibTeX": ([f"/{DATABASE}/papers/{paper}.bib"], [], DATASETTE_PAGE),
        "search": (SEARCH_PATHS, [], SEARCH_PAGE),
        "charts": (["/-/charts"], [], DATASETTE_PAGE),
        "author by name": (["/-/author"], [], ["name", *DATASETTE_PAGE]),
        "author by name, found": (["/-/author"], [("name", name)], DATASETTE_PAGE),
        "introspection": (INTROSPECTION, [], DATASETTE_PAGE),
    }
    if each_table:
        for table in ("papers", "papers_fts", "authors", "paper_authors", "tracks"):
            paths = [f"/{DATABASE}/{table}{suffix}" for suffix in FORMATS]
            kinds[f"table {table}"] = (paths, [], table_page_parameters(tables[table]["columns"]))
    else:
        # the plain tables, the full-text one and a link table; rowid is a column of each
        paths = [
            f"/{DATABASE}/{table}{suffix}"
            for table in ("papers", "papers_fts", "authors", "paper_authors")
            for suffix in FORMATS
        ]
        kinds["table"] = (paths, [], table_page_parameters(["rowid"]))
    queries = await datasette.get_canned_queries(DATABASE, None)
    canned = [f"/{DATABASE}/{name}{suffix}" for name in sorted(queries) for suffix in FORMATS]
    kinds["canned query"] = (canned, [], QUERY_PAGE)
    for name, query in sorted(queries.items()):
        if query.get("params"):
            paths = [f"/{DATABASE}/{name}{suffix}" for suffix in FORMATS]
            kinds[f"canned {name}"] = (paths, [], query["params"])
    return kinds


def page_requests(kinds, values, share=1):
    """Every parameter of every page kind with every value, on the kind's URLs in turn; with a
    share of n, each parameter with every nth value, a different nth for the next parameter,
    so that each kind still meets every value (a kind of fewer than n parameters, every
    parameter with every value)."""
    requests = []
    for paths, pairs, parameters in kinds.values():
        turn = 0
        step = share if len(parameters) >= share else 1
        for index, parameter in enumerate(parameters):
            for value in values[index % step :: step]:
                requests.append((paths[turn % len(paths)], [*pairs, (parameter, value)]))
                turn += 1
    return requests


def page_combination_requests(kinds, values, count, seed=20261206):
    """A seeded sample of two to four hostile parameters at once on each page kind."""
    chooser = random.Random(seed)
    requests = []
    for paths, pairs, parameters in kinds.values():
        for _ in range(count):
            chosen = [
                (chooser.choice(parameters), chooser.choice(values))
                for _ in range(chooser.randint(2, 4))
            ]
            requests.append((chooser.choice(paths), [*pairs, *chosen]))
    return requests


@pytest_asyncio.fixture(loop_scope="session")
async def site_client(site_app):
    """The served app, as `paper-catalog serve` runs it."""
    transport = httpx.ASGITransport(app=site_app)
    async with httpx.AsyncClient(transport=transport, base_url="http://site", timeout=120) as c:
        yield c


@pytest.mark.asyncio(loop_scope="session")
@shares(len(SHORT_VALUES))
async def test_every_parameter_of_every_page_kind_with_each_kind_of_hostile_value(
    site_client, datasette, share
):
    """`make test`: each parameter with one kind of value, a different one for the next
    parameter, each page kind with every kind."""
    kinds = await page_kinds(datasette)
    requests = page_requests(kinds, SHORT_VALUES, share)
    failures = await fetch_each(site_client.get, requests)
    assert not failures, report(failures)


@pytest.mark.asyncio(loop_scope="session")
async def test_the_500s_that_were_are_4xx(site_client):
    for url in [
        "/catalog.csv",
        "/catalog/papers.json?_facet=%7B%22a%22%3A1%7D",
        "/catalog/authors.json?_facet=%7B%22a%22%3A1%7D",
        "/catalog/papers_fts.json?_facet_array=%7B%22a%22%3A1%7D",
        "/catalog/papers.json?_facet_date=%7B%22simple%22%3A1%7D",
        "/catalog/tracks?_facet=%7B%22column%22%3A%5B%22a%22%5D%7D",
        "/catalog/papers?_ttl=" + "9" * 5_000,
        "/catalog/papers?_facet_size=" + "9" * 5_000,
        "/catalog/authors?paper_count__gt=" + "9" * 5_000,
        "/catalog?sql=select+1&_ttl=" + "9" * 5_000,
    ]:
        response = await site_client.get(url)
        assert 400 <= response.status_code < 500, (url, response.status_code)


@pytest.mark.slow
@pytest.mark.asyncio(loop_scope="session")
async def test_long_set_every_parameter_of_every_page_kind_with_every_hostile_value(
    site_client, datasette
):
    kinds = await page_kinds(datasette, each_table=True)
    requests = page_requests(kinds, LONG_SET_VALUES)
    # several long values at once would pass the longest URL a client sends
    short_values = [value for value in LONG_SET_VALUES if len(value) <= 5_000]
    requests += page_combination_requests(kinds, short_values, 100)
    failures = await fetch_each(site_client.get, requests)
    assert not failures, report(failures)


# every way a `_facet...` parameter can be named or valued wrongly: Datasette reads the facet
# type from the name, and without metadata facets a name that is neither `_facet` nor
# `_facet_<type>` (`_facets`) failed as a 500 on every table but papers
HOSTILE_FACETS = [
    ("_facets", "x"),
    ("_facetx", "id"),
    ("_facet-", "id"),
    ("_facet_", "id"),
    ("_facet_nope", "id"),
    ("_facet_size", "abc"),
    ("_facet_size", "-1"),
    ("_facet_size", ""),
    ("_facet_size", "1e9"),
    ("_facet_size", "9" * 5_000),
    ("_facet", "nonexistent"),
    ("_facet", ""),
    ("_facet", "{}"),
    ("_facet", '{"column": "nonexistent"}'),
    ("_facet", '{"column": 1}'),
    ("_facet", "rowid"),
    ("_facet_array", "nonexistent"),
    ("_facet_array", "rowid"),
    ("_facet_array", "{"),
    ("_facet_date", "nonexistent"),
    ("_facet_date", "rowid"),
    ("_facet_date", '{"simple": "rowid"}'),
]


@pytest.mark.asyncio(loop_scope="session")
@shares(4)
async def test_facet_parameters_on_every_table_are_never_a_5xx(site_client, datasette, share):
    """Every table, hidden ones (full-text shadow tables, link tables) included, with every
    hostile parameter, through the served app: as a page, JSON or CSV in turn (each table meets
    each format with a third of the parameters, and each parameter meets each format). In
    `make test` each table with a quarter of the parameters, each parameter on a quarter of the
    tables."""
    tables = await catalog_tables(datasette)
    extensions = ("", ".json", ".csv")
    requests = [
        (f"/{DATABASE}/{quote(table, safe='')}{extensions[(t + p) % 3]}", [pair])
        for t, table in enumerate(tables)
        for p, pair in enumerate(HOSTILE_FACETS)
        if (t + p) % share == 0
    ]
    failures = await fetch_each(site_client.get, requests)
    assert not failures, report(failures)
    response = await site_client.get(f"/{DATABASE}/tracks.json?_facets=x")
    assert response.status_code == 400
    assert "_facets is not a facet parameter" in response.json()["error"]
