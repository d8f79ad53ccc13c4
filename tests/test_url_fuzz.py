"""Every Datasette URL parameter and path shape, with hostile values, on every table: a client's
mistake is a 4xx with a message, never a 5xx.

Deterministic and bounded: each (parameter, value) pair is requested once, on a table and a
format picked in turn, then a seeded sample of combinations. `make test` sends every hostile value
with a share of the parameters (about a thousand requests), `make test-slow` every pair and ten
times as many combinations (a few thousand).
"""

import random
from urllib.parse import quote

import pytest

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
    return value if value in RAW else quote(value, safe="")


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
    for the next parameter, so that every hostile value is still sent."""
    names = sorted(tables)
    turn = 0
    requests = []
    for index, (parameter, values) in enumerate(PARAMETERS.items()):
        for value in [*values, *[*HOSTILE, *RAW][index % share :: share]]:
            table = names[turn % len(names)]
            suffix = FORMATS[turn % len(FORMATS)]
            turn += 1
            requests.append((f"/{DATABASE}/{table}{suffix}", [(parameter, value)]))
    for table in names:
        columns = tables[table]["columns"]
        for index, parameter in enumerate(COLUMN_PARAMETERS):
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


def sql_requests():
    requests = []
    for index, sql in enumerate([*SQL, *HOSTILE, *RAW]):
        suffix = ["", ".json", ".csv"][index % 3]
        requests.append((f"/{DATABASE}{suffix}", [("sql", sql)]))
        requests.append((f"/{DATABASE}{suffix}", [("sql", "select :p as p"), ("p", sql)]))
    return requests


async def canned_requests(datasette):
    queries = await datasette.get_canned_queries(DATABASE, None)
    requests = []
    for index, (name, query) in enumerate(sorted(queries.items())):
        params = query.get("params") or []
        for offset, value in enumerate([*HOSTILE, *RAW, "1"]):
            suffix = FORMATS[(index + offset) % len(FORMATS)]
            pairs = [(param, value) for param in params] or [("_shape", value)]
            requests.append((f"/{DATABASE}/{name}{suffix}", pairs))
        requests.append((f"/{DATABASE}/{name}.json", [("_size", "max"), ("_shape", "objects")]))
    return requests


def path_requests(tables):
    """Tables, rows, compound keys, missing names and broken encodings in the path itself."""
    keys = ["", " ", "'", "-1", "0", "1.5", "1e999", "-9223372036854775809", "9" * 30, "x" * 5000]
    keys += [*RAW, "~2C", "a,b", "a,b,c", "1,", ",1", "~", "~~", "~ZZ", "~2F~2F", "\U0001f600"]
    paths = ["/", "/.json", f"/{DATABASE}", f"/{DATABASE}.json", "/missing", "/missing/papers"]
    paths += [f"/{DATABASE}/missing", f"/{DATABASE}/missing.json", f"/{DATABASE}/missing/1"]
    paths += [f"/{DATABASE}.db", f"/{DATABASE}/papers.missing", f"/{DATABASE}/papers/x.missing"]
    paths += [f"/{DATABASE}/%FF", f"/{DATABASE}/%00", "/%FF", "/%00", f"/{DATABASE}/~ZZ"]
    for table in sorted(tables):
        paths += [f"/{DATABASE}/{table}{suffix}" for suffix in FORMATS]
        paths.append(f"/{DATABASE}/{quote(table.replace('_', '~5F'), safe='~')}")
        for index, key in enumerate(keys):
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
    failures = []
    for path, pairs in requests:
        url = f"{path}?{query_string(pairs)}" if pairs else path
        response = await datasette.client.get(url)
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


# `make test` sends each hostile value with a third of the parameters and a sixth of the filter
# operations; `make test-slow` with every parameter and half of the operations


@pytest.mark.asyncio
@pytest.mark.parametrize(
    "share", [3, pytest.param(1, marks=pytest.mark.slow)], ids=lambda n: f"1-in-{n}"
)
async def test_every_parameter_with_hostile_values_is_never_a_5xx(datasette, share):
    tables = await catalog_tables(datasette)
    failures = await fetch_all(datasette, parameter_requests(tables, share))
    assert not failures, report(failures)


@pytest.mark.asyncio
@pytest.mark.parametrize(
    "share", [6, pytest.param(2, marks=pytest.mark.slow)], ids=lambda n: f"1-in-{n}"
)
async def test_every_filter_operation_with_hostile_values_is_never_a_5xx(datasette, share):
    tables = await catalog_tables(datasette)
    operations = [*filter_operations(), "missing_op"]
    failures = await fetch_all(datasette, filter_requests(tables, operations, share))
    assert not failures, report(failures)


@pytest.mark.asyncio
async def test_sql_and_canned_queries_with_hostile_values_are_never_a_5xx(datasette):
    requests = sql_requests() + await canned_requests(datasette)
    failures = await fetch_all(datasette, requests)
    assert not failures, report(failures)


@pytest.mark.asyncio
async def test_hostile_paths_are_never_a_5xx(datasette):
    tables = await catalog_tables(datasette)
    failures = await fetch_all(datasette, path_requests(tables))
    assert not failures, report(failures)


@pytest.mark.asyncio
@pytest.mark.parametrize("count", [300, pytest.param(3000, marks=pytest.mark.slow)])
async def test_combinations_of_hostile_parameters_are_never_a_5xx(datasette, count):
    tables = await catalog_tables(datasette)
    requests = combination_requests(tables, filter_operations(), count)
    failures = await fetch_all(datasette, requests)
    assert not failures, report(failures)
