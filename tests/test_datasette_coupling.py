"""What the served app (loader/serve/app.py) keeps between requests through
loader/web/datasette_coupling.py: the schema, read once for a build that never changes, answers
to Datasette's schema look-ups, permissions and request arguments, and plain searches counted
from the full-text index; pages stay the same."""

import re

import pytest
import yaml
from datasette.app import Datasette
from datasette.tracer import capture_traces

from loader.serve.settings import SETTINGS
from loader.web.datasette_coupling import (
    MAX_REMEMBERED,
    RenderCellManager,
    call_render_cell_directly,
    count_searches_from_the_index,
    path_with_replaced_args,
    refresh_schemas_once,
    remember_request_args,
    remember_schema_lookups,
    remember_table_permissions,
    reuse_query_pairs,
)

from .conftest import ROOT

SCHEMA_SQL = (
    "collate nocase",
    "schema_version",
    "from sqlite_master where name = :n",
    "sqlite_master where type='table'",
)


def site(seed_catalog, remembering):
    datasette = Datasette(
        immutables=[str(seed_catalog)],
        metadata=yaml.safe_load((ROOT / "metadata.yml").read_text(encoding="utf-8")),
        settings=SETTINGS,
    )
    if remembering:
        refresh_schemas_once(datasette)
        remember_schema_lookups(datasette.get_database("catalog"))
    return datasette


def untimed(text):
    """A page's HTML or JSON without the time its queries took."""
    text = re.sub(r'"query_ms": [0-9.e-]+', '"query_ms"', text)
    return re.sub(r"took [0-9.]+ ?ms", "took", text)


async def traced_get(datasette, path):
    traces = []
    with capture_traces(traces):
        response = await datasette.client.get(path)
    assert response.status_code == 200
    return response, [" ".join(trace["sql"].split()) for trace in traces if "sql" in trace]


@pytest.mark.asyncio
# a row's JSON: Datasette's own RowView (the HTML paper and author pages read their row and
# lookups in one execute_fn, plugins/pages.py, which Datasette does not trace)
@pytest.mark.parametrize("path", ["/catalog/papers?_search=learning", "/catalog/authors/1.json"])
async def test_second_request_reads_no_schema_and_answers_the_same(datasette, seed_catalog, path):
    remembering = site(seed_catalog, remembering=True)
    await traced_get(remembering, path)
    response, statements = await traced_get(remembering, path)
    assert statements, "the page still runs its own queries"
    assert not [sql for sql in statements if any(part in sql for part in SCHEMA_SQL)]
    plain, plain_statements = await traced_get(site(seed_catalog, remembering=False), path)
    assert [sql for sql in plain_statements if any(part in sql for part in SCHEMA_SQL)]
    assert untimed(response.text) == untimed(plain.text)


@pytest.mark.asyncio
async def test_answers_for_names_from_urls_are_kept_only_up_to_a_bound(datasette, seed_catalog):
    remembering = site(seed_catalog, remembering=True)
    db = remembering.get_database("catalog")
    for number in range(MAX_REMEMBERED + 50):
        assert await db.table_exists(f"no_such_table_{number}") is False
    assert await db.table_exists("papers") is True
    answers = db.table_exists.answers
    assert len(answers) == MAX_REMEMBERED


def site_with_allow_blocks(seed_catalog):
    metadata = yaml.safe_load((ROOT / "metadata.yml").read_text(encoding="utf-8"))
    tables = metadata["databases"]["catalog"].setdefault("tables", {})
    tables.setdefault("sources", {})["allow"] = {"id": "root"}
    tables.setdefault("Authors", {})["allow"] = {"id": "editor"}
    return Datasette(immutables=[str(seed_catalog)], metadata=metadata, settings=SETTINGS)


@pytest.mark.asyncio
async def test_table_permission_answers_kept_are_datasettes_own(datasette, seed_catalog):
    """Each table's `allow` blocks, remembered, are what Datasette reads from the metadata,
    and a table only some actors may see stays hidden from the others."""
    plain = site_with_allow_blocks(seed_catalog)
    remembering = site_with_allow_blocks(seed_catalog)
    remember_table_permissions(remembering)
    names = await remembering.get_database("catalog").table_names()
    for name in [*names, "no_such_table", "SOURCES"]:
        for _ in range(2):
            assert remembering._table_permission_allows("catalog", name) == (
                plain._table_permission_allows("catalog", name)
            ), name
    assert remembering._table_permission_allows("catalog", "sources") == [{"id": "root"}]
    for actor, status in ((None, 403), ({"id": "root"}, 200)):
        cookies = {"ds_actor": remembering.sign({"a": actor}, "actor")} if actor else {}
        response = await remembering.client.get("/catalog/sources", cookies=cookies)
        assert response.status_code == status
    answers = remembering._table_permission_allows.answers
    for number in range(MAX_REMEMBERED + 50):
        remembering._table_permission_allows("catalog", f"no_such_table_{number}")
    assert len(answers) == MAX_REMEMBERED


SEARCHES = [
    "_search=learning",
    "_search=graph+network",
    "_search=%22deep+learning%22&_searchmode=raw",
    "_search=learn*&_searchmode=raw",
    "_search=zzzqqqnothing",
    "_search=learning&year=2018",
    "_search_label=learning",
    "",
]


@pytest.mark.asyncio
@pytest.mark.parametrize("query", SEARCHES)
async def test_a_plain_search_is_counted_from_the_index_alone(datasette, seed_catalog, query):
    """...and its page of rows sorts the matches' keys first, the same rows."""
    counting = site(seed_catalog, remembering=True)
    count_searches_from_the_index(counting.get_database("catalog"))
    response, statements = await traced_get(counting, f"/catalog/papers.json?{query}")
    plain, _ = await traced_get(
        site(seed_catalog, remembering=False), f"/catalog/papers.json?{query}"
    )
    count = response.json()["filtered_table_rows_count"]
    assert count == plain.json()["filtered_table_rows_count"]
    assert response.json()["rows"] == plain.json()["rows"]
    counts = [sql for sql in statements if sql.startswith("select count(*) from papers")]
    plain_search = query.startswith("_search=") and "&year" not in query
    assert [sql.startswith("select count(*) from papers_fts") for sql in counts] == (
        [True] if plain_search else [False] * len(counts)
    )
    keys_sorted_first = [sql for sql in statements if "rowid in (select rowid from papers " in sql]
    assert len(keys_sorted_first) == plain_search


@pytest.mark.asyncio
async def test_schema_lists_kept_are_datasettes_and_each_caller_gets_its_own(
    datasette, seed_catalog
):
    remembering = site(seed_catalog, remembering=True).get_database("catalog")
    plain = site(seed_catalog, remembering=False).get_database("catalog")
    for table in [*await plain.table_names(), "no_such_table"]:
        for name in ("table_columns", "table_column_details", "primary_keys", "fts_table"):
            for _ in range(2):
                assert await getattr(remembering, name)(table) == (
                    await getattr(plain, name)(table)
                ), (name, table)
        keys = await remembering.foreign_keys_for_table(table)
        assert keys == await plain.foreign_keys_for_table(table)
        for key in keys:
            key["column"] = "changed by a caller"
        keys.append({"column": "added by a caller"})
        assert await remembering.foreign_keys_for_table(table) == (
            await plain.foreign_keys_for_table(table)
        )
    assert await remembering.foreign_keys_for_table("papers"), "papers has a foreign key"
    every = await remembering.get_all_foreign_keys()
    assert every == await plain.get_all_foreign_keys()
    every["papers"]["incoming"].append({"other_table": "added by a caller"})
    assert await remembering.get_all_foreign_keys() == await plain.get_all_foreign_keys()


@pytest.mark.parametrize(
    "query", ["", "_search=a+b&year=2018&year=2019", "blank=&x=%26%3D&_facet=venue", "a=1&a="]
)
def test_request_arguments_kept_are_datasettes_reading(query):
    from datasette.utils.asgi import Request

    remember_request_args()
    request = Request.fake(f"/catalog/papers?{query}")
    plain = Request.args.fget.parse(request)
    for _ in range(2):
        args = request.args
        assert list(args) == list(plain)
        assert [args.getlist(key) for key in args] == [plain.getlist(key) for key in plain]
    request.scope["query_string"] = b"other=1"
    assert request.args.get("other") == "1"
    assert Request.fake("/catalog/papers?z=2").args.get("z") == "2"


# the table page's links and cells (reuse_query_pairs, call_render_cell_directly) -----------------

LINK_QUERIES = [
    "",
    "_search=a+b&_nocol=abstract_plain&_nocol=title",
    "_sort=year&_next=20&blank=&x=%26%3D&q=caf%C3%A9+%2B1",
    "a=1&a=2&_sort_desc=id",
]
LINK_ARGS = [
    {"_sort": "label", "_sort_desc": None, "_next": None},
    {"_sort_desc": "year", "_sort": None, "_next": None},
    {"_facet_size": "max"},
    [("_facet", "venue"), ("_facet", "a b&c")],
    {"a": None, "n": 3},
    {},
]


@pytest.mark.parametrize("query", LINK_QUERIES)
def test_links_with_replaced_arguments_are_datasettes(query):
    from datasette.utils import path_with_replaced_args as datasettes
    from datasette.utils.asgi import Request

    request = Request.fake(f"/catalog/papers?{query}")
    for _ in range(2):  # the second time from the pairs kept on the request
        for args in LINK_ARGS:
            assert path_with_replaced_args(request, args) == datasettes(request, args)
            assert path_with_replaced_args(request, args, "/p") == datasettes(request, args, "/p")
    request.scope["query_string"] = b"other=1&_sort=x"
    assert path_with_replaced_args(request, {"_sort": "y"}) == "/catalog/papers?other=1&_sort=y"


CELLS = [
    {"row": {"id": "0123456789abcdef", "label": "A $x$"}, "column": "label", "table": "papers"},
    {"row": {"id": "0123456789abcdef", "year": 2020}, "column": "year", "table": "papers"},
    {"row": {"authors": '["Ann", "Bo"]'}, "column": "authors", "table": "papers"},
    {"row": {"snippet": "\ue000x\ue001"}, "column": "snippet", "table": None},
]


@pytest.mark.asyncio
async def test_render_cell_called_directly_answers_as_pluggy(datasette):
    from datasette.plugins import pm

    await datasette.invoke_startup()
    hooks = RenderCellManager(pm).hook
    assert hooks.render_cell is not pm.hook.render_cell, "one implementation: called directly"
    for cell in CELLS:
        arguments = dict(cell, value=cell["row"][cell["column"]], database="catalog")
        answers = hooks.render_cell(datasette=datasette, **arguments)
        assert answers == pm.hook.render_cell(datasette=datasette, **arguments)
    assert hooks.table_actions is pm.hook.table_actions


def test_render_cell_goes_through_pluggy_when_another_plugin_renders_cells():
    from datasette import hookimpl
    from datasette.plugins import pm

    class Other:
        @hookimpl
        def render_cell(self, value):
            return f"other {value}"

    hooks = RenderCellManager(pm).hook
    pm.register(Other(), name="other_cells")
    try:
        assert hooks.render_cell is pm.hook.render_cell
    finally:
        pm.unregister(name="other_cells")
    assert hooks.render_cell is not pm.hook.render_cell


@pytest.mark.asyncio
@pytest.mark.parametrize(
    "path",
    [
        "/catalog/papers?_search=learning",
        "/catalog/papers?_sort_desc=year&_facet=venue",
        "/catalog/papers?_search=graph&_sort=label&_next=5",
        "/catalog/authors?_search=smith",
        "/catalog/paper_authors?_labels=on",
    ],
)
async def test_table_pages_are_the_same_through_datasettes_own_calls(datasette, path, monkeypatch):
    import datasette.plugins as datasette_plugins
    import datasette.utils as datasette_utils
    import datasette.views.table as table_view

    reuse_query_pairs()
    call_render_cell_directly()
    assert isinstance(table_view.pm, RenderCellManager)
    ours = await datasette.client.get(path)
    monkeypatch.setattr(table_view, "pm", datasette_plugins.pm)
    monkeypatch.setattr(
        table_view, "path_with_replaced_args", datasette_utils.path_with_replaced_args
    )
    plain = await datasette.client.get(path)
    assert ours.status_code == plain.status_code == 200
    assert untimed(ours.text) == untimed(plain.text)


@pytest.mark.asyncio
@pytest.mark.parametrize("query", SEARCHES)
async def test_a_plain_searchs_first_page_comes_by_rank_once_the_ranks_are_read(
    datasette, seed_catalog, query
):
    """The same rows as Datasette's own statement, read by rowid from the ranks in id order."""
    from loader.web import worker_reads

    ranked = site(seed_catalog, remembering=True)
    count_searches_from_the_index(ranked.get_database("catalog"))
    await ranked.client.get("/catalog/papers.json?_search=learning")  # starts reading them
    await worker_reads.all_read()
    for size in ("", "&_size=3"):
        response, statements = await traced_get(ranked, f"/catalog/papers.json?{query}{size}")
        plain, _ = await traced_get(
            site(seed_catalog, remembering=False), f"/catalog/papers.json?{query}{size}"
        )
        assert response.json()["rows"] == plain.json()["rows"]
        assert response.json()["next"] == plain.json()["next"]
        by_rank = [sql for sql in statements if "json_each(:paper_catalog_page_rowids)" in sql]
        plain_search = query.startswith("_search=") and "&year" not in query
        assert len(by_rank) == plain_search, statements
