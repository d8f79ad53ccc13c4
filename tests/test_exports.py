"""Downloads download, CSV carries no highlight characters, papers show each text once."""

import csv
import io

import pytest


@pytest.mark.asyncio(loop_scope="session")
async def test_csv_links_download_every_row(datasette):
    html = (await datasette.client.get("/catalog/papers?area=Applications")).text
    link = html.split('href="/catalog/papers.csv?', 1)[1].split('"', 1)[0]
    assert "_dl=1" in link and "_stream=on" in link
    response = await datasette.client.get("/catalog/papers.csv?" + link.replace("&amp;", "&"))
    assert (
        response.headers["content-disposition"] == 'attachment; filename="papers-applications.csv"'
    )


@pytest.mark.asyncio(loop_scope="session")
async def test_papers_csv_holds_the_abstract_once(datasette):
    text = (await datasette.client.get("/catalog/papers.csv?_size=max")).text
    header = next(csv.reader(io.StringIO(text)))
    assert "abstract" in header
    assert "abstract_plain" not in header and "abstract_text" not in header
    assert "title" not in header, "no seed gives a title: the column is empty everywhere"
    chosen = (await datasette.client.get("/catalog/papers.csv?_col=abstract_text")).text
    assert next(csv.reader(io.StringIO(chosen))) == ["id", "abstract_text"]
    row = (await datasette.client.get("/catalog/papers.json?_size=1&_shape=array")).json()[0]
    assert {"abstract_plain", "abstract_text", "title"} <= set(row), "JSON keeps every column"


@pytest.mark.asyncio(loop_scope="session")
async def test_search_csv_has_no_highlight_characters(datasette):
    for extra in ("", "&_stream=on", "&_trace=1", "&_dl=1&_labels=on"):
        text = (await datasette.client.get("/catalog/search.csv?q=privacy" + extra)).text
        assert "privacy" in text
        assert "\ue000" not in text and "\ue001" not in text
    page = (await datasette.client.get("/catalog/search.json?q=privacy&_shape=array")).json()
    assert any("\ue000" in row["snippet"] for row in page), "JSON keeps the markers"


@pytest.mark.asyncio(loop_scope="session")
async def test_an_author_is_found_by_part_of_a_name(datasette):
    found = (
        await datasette.client.get("/catalog/authors.json?_search=huishuai&_shape=array")
    ).json()
    assert [author["name"] for author in found] == ["Huishuai Zhang"]
    zhangs = (await datasette.client.get("/catalog/authors.json?_search=zhang&_shape=array")).json()
    assert len(zhangs) > 1 and all("zhang" in author["name"].lower() for author in zhangs)


@pytest.mark.asyncio(loop_scope="session")
async def test_a_paper_page_shows_and_downloads_its_bibtex(datasette, query):
    paper_id = query(
        "select paper_id from paper_authors join authors on authors.id = author_id"
        " where authors.name = 'Huishuai Zhang' and position = 1 order by paper_id limit 1"
    )[0][0]
    page = (await datasette.client.get(f"/catalog/papers/{paper_id}")).text
    download = await datasette.client.get(f"/catalog/papers/{paper_id}.bib")
    assert download.headers["content-disposition"] == f'attachment; filename="{paper_id}.bib"'
    entry = download.text
    assert entry.startswith("@misc{zhang"), "the seeds give no venue"
    assert "author = {Huishuai Zhang" in entry
    assert "note = {title derived from the abstract}" in entry
    assert f'href="/catalog/papers/{paper_id}.bib" download' in page
    assert "author = {Huishuai Zhang" in page
    missing = await datasette.client.get("/catalog/papers/0123456789abcdef.bib")
    assert missing.status_code == 404
