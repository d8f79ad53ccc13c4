"""plugins/template_patches.py edits Datasette's own templates instead of copying them."""

import pytest
from datasette.app import Datasette

from .plugin_files import load_plugin

patches = load_plugin("template_patches")


def default_source(name):
    environment = Datasette([], memory=True).jinja_env
    return environment.loader.get_source(environment, "default:" + name)[0]


@pytest.mark.parametrize("name", sorted(patches.PATCHES))
def test_every_edit_applies_to_this_datasettes_template(name):
    source = default_source(name)
    patched = patches.patch_source(name, source)
    for old, new in patches.PATCHES[name]:
        assert new in patched
    # only our edits differ: undoing them gives Datasette's template back
    undone = patched
    for old, new in reversed(patches.PATCHES[name]):
        undone = undone.replace(new, old, 1)
    assert undone == source


def test_an_edit_that_no_longer_matches_fails_loudly():
    with pytest.raises(patches.TemplatePatchFailed, match="exactly once"):
        patches.patch_source("base.html", "<html lang='fr'>")


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
async def test_facets_are_headed_in_words_in_a_fixed_order_with_names_not_slugs(datasette):
    import re

    for path in ("/catalog/papers", "/catalog/papers?area=Applications"):
        html = (await datasette.client.get(path)).text
        headings = re.findall(r'<p class="facet-info-name">\s*<strong>([^<\n]+)', html)
        assert headings == ["Area", "Track", "Authors", "Affiliations"], path
        assert "(array)" not in html
    html = (await datasette.client.get("/catalog/papers")).text
    assert 'affiliations__arraycontains=microsoft-research">Microsoft Research</a>' in html
