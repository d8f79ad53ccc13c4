"""The edits of Datasette's own templates (loader/web/datasette_coupling.py PATCHES, served by
plugins/template_patches.py) instead of copies, on the catalog's pages only."""

import re

import pytest
from datasette.app import Datasette

from loader.web import datasette_coupling as coupling


def default_source(name):
    environment = Datasette([], memory=True).jinja_env
    return environment.loader.get_source(environment, "default:" + name)[0]


@pytest.mark.parametrize("name", sorted(coupling.PATCHES))
def test_every_edit_applies_to_this_datasettes_template(name):
    source = default_source(name)
    patched = coupling.patch_source(name, source)
    for old, new in coupling.PATCHES[name]:
        assert new in patched
    # only our edits differ: undoing them gives Datasette's template back
    undone = patched
    for old, new in reversed(coupling.PATCHES[name]):
        undone = undone.replace(new, old, 1)
    assert undone == source


def test_an_edit_that_no_longer_matches_fails_loudly():
    with pytest.raises(coupling.CouplingMismatch, match="exactly once"):
        coupling.patch_source("base.html", "<html lang='fr'>")


def test_every_coupling_matches_the_installed_datasette():
    assert coupling.upstream_problems() == []
    assert coupling.patches_enabled()


def test_a_changed_upstream_function_is_a_problem(monkeypatch):
    entry = coupling.UPSTREAM[0]
    changed = coupling.Upstream(entry.ours, entry.upstream, entry.target, "0" * 16)
    monkeypatch.setattr(coupling, "UPSTREAM", (changed,))
    [problem] = coupling.upstream_problems()
    assert entry.target in problem and "has changed" in problem


def test_another_datasette_version_turns_the_patches_off_with_a_warning(monkeypatch, caplog):
    monkeypatch.setattr(coupling, "coupling_state", lambda: (False, ("x has changed",)))
    monkeypatch.setattr(coupling, "patches_enabled", coupling.patches_enabled.__wrapped__)
    assert coupling.patches_enabled() is False
    assert "the site's patches were written for 0.65.5" in caplog.text
    coupling.require_upstream()  # serve starts, unpatched


def test_a_changed_pinned_datasette_refuses_to_serve(monkeypatch):
    monkeypatch.setattr(coupling, "coupling_state", lambda: (True, ("x has changed",)))
    with pytest.raises(coupling.CouplingMismatch, match="x has changed"):
        coupling.require_upstream()


class RichConsole:
    """rich's console as Datasette's handler meets it: print_exception() outside an except
    block raises (rich is not a test dependency; this is its documented behaviour)."""

    def print_exception(self, **options):
        raise ValueError("Value for 'trace' required if not called in except: block")


class RichModule:
    def get_console(self):
        return RichConsole()


@pytest.mark.asyncio(loop_scope="session")
async def test_an_unrouted_path_is_a_404_where_rich_is_installed(datasette, monkeypatch):
    import datasette.handle_exception as handler

    # the served app turned the handler's rich print off when it started
    assert handler.rich is None
    monkeypatch.setattr(handler, "rich", RichModule())
    with pytest.raises(ValueError):  # what Datasette alone does with rich
        await Datasette([], memory=True).client.get("/no/such/page/here")
    coupling.print_no_rich_tracebacks()
    response = await datasette.client.get("/no/such/page/here")
    assert response.status_code == 404


@pytest.mark.asyncio(loop_scope="session")
async def test_pages_have_a_language_a_main_landmark_and_a_skip_link(datasette):
    for path in ("/", "/catalog/papers", "/-/charts", "/search"):
        html = (await datasette.client.get(path)).text
        assert '<html lang="en">' in html, path
        assert '<main id="main"' in html and '<a class="skip-link" href="#main">' in html
    table = (await datasette.client.get("/catalog/papers")).text
    assert "<summary>Column notes</summary>" in table
    assert 'aria-label="Filter column"' in table


@pytest.mark.asyncio(loop_scope="session")
async def test_query_pages_write_their_rows_and_headings_in_order(datasette):
    html = (await datasette.client.get("/catalog?sql=select+id,+label+from+papers+limit+2")).text
    assert '<h2 class="header3">Custom SQL query' in html and "<h3>" not in html
    assert len(re.findall(r'<td class="col-id">', html)) == 2


@pytest.mark.asyncio(loop_scope="session")
async def test_facets_are_headed_in_words_in_a_fixed_order_with_names_not_slugs(datasette):
    for path in ("/catalog/papers", "/catalog/papers?area=Applications"):
        html = (await datasette.client.get(path)).text
        headings = re.findall(r'<p class="facet-info-name">\s*<strong>([^<\n]+)', html)
        assert headings == ["Area", "Track", "Authors", "Affiliations"], path
        assert "(array)" not in html
    html = (await datasette.client.get("/catalog/papers")).text
    assert 'affiliations__arraycontains=microsoft-research">Microsoft Research</a>' in html


# the filter form's loops written in Python: the bytes of Datasette's own loops

SORTABLE_COLUMNS = [
    {"name": "id", "sortable": True},
    {"name": "odd <col>", "sortable": True},
    {"name": "Link", "sortable": False},
    {"name": 'a"b', "sortable": True},
    {"name": "year", "sortable": True},
]
FORM_CONTEXTS = [
    {
        "lookup": "gt",
        "filter_columns": ["id", "odd <col>", 'a"b & c'],
        "display_columns": SORTABLE_COLUMNS,
        "sort": "year",
        "sort_desc": None,
        "form_hidden_args": [("_nocol", "abstract"), ("_x", '<"&>')],
        "url_csv_hidden_args": [("_size", "max"), ("q", "a&b")],
    },
    {  # no `lookup` at all: the new filter row's
        "filter_columns": [],
        "display_columns": SORTABLE_COLUMNS,
        "sort": None,
        "sort_desc": 'a"b',
        "form_hidden_args": [],
        "url_csv_hidden_args": [("_labels", "on")],
    },
    {
        "lookup": "isnull",
        "filter_columns": ["x"],
        "display_columns": [],
        "sort": "id",
        "sort_desc": "id",
        "form_hidden_args": [("_facet", "venue")],
        "url_csv_hidden_args": [],
    },
]


@pytest.mark.asyncio
@pytest.mark.parametrize("context", FORM_CONTEXTS)
async def test_form_loops_written_in_python_are_datasettes_bytes(datasette, context):
    from datasette.filters import Filters

    await datasette.invoke_startup()
    environment = datasette.jinja_env
    context = dict(context, filters=Filters([("year__gt", "2019")]))
    loops = [(old, new) for old, new in coupling.PATCHES["table.html"] if old.startswith("{% for")]
    assert len(loops) == 6
    for old, new in loops:
        stock = await environment.from_string(old).render_async(context)
        ours = await environment.from_string(new).render_async(context)
        assert ours == stock, old
