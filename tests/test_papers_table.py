"""The papers table reads as a list of papers: labels, authors and affiliations are links."""

import re

import pytest

pytestmark = pytest.mark.asyncio(loop_scope="session")


async def test_labels_link_to_their_paper(datasette, query):
    html = (await datasette.client.get("/catalog/papers?_size=5")).text
    first_id = query("select id from papers order by id limit 1")[0][0]
    assert re.search(rf'<td class="col-label[^>]*><a href="/catalog/papers/{first_id}">', html)


async def test_authors_are_links_that_lead_to_their_page(datasette, query):
    html = (await datasette.client.get("/catalog/papers?_size=50")).text
    assert '<a href="/-/author?name=Huishuai+Zhang">Huishuai Zhang</a>' in html
    response = await datasette.client.get("/-/author?name=huishuai  ZHANG")
    author_id = query("select id from authors where name = 'Huishuai Zhang'")[0][0]
    assert response.status_code == 302
    assert response.headers["location"] == f"/catalog/authors/{author_id}"
    assert (await datasette.client.get("/-/author?name=Nobody+Here")).status_code == 404
    assert (await datasette.client.get("/-/author?name=")).status_code == 400


async def test_affiliations_show_names_linking_to_their_papers(datasette):
    html = (await datasette.client.get("/catalog/papers?affiliations__arraycontains=pku")).text
    assert '<a href="/catalog/papers?affiliations__arraycontains=pku">PKU</a>' in html
