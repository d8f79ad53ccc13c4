"""Downloads download, CSV carries no highlight characters, papers show each text once."""

import csv
import io
import re

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


def bibtex_titles(text):
    return sorted(re.findall(r"^  title = \{(.*)\},$", text, re.MULTILINE))


@pytest.mark.asyncio(loop_scope="session")
async def test_the_papers_tables_bibtex_is_searchs_for_the_same_papers(datasette):
    """The table's BibTeX of a filter holds the entries /search's BibTeX of the same filter holds
    (in the table's order); a stream refuses `_next` and a post, and a redirect of Datasette's
    (`_sort_by_desc`) stays a BibTeX URL."""
    table = await datasette.client.get("/catalog/papers.bib?area=Applications")
    search = await datasette.client.get("/search.bib?area=Applications")
    assert table.status_code == search.status_code == 200
    assert table.headers["content-disposition"] == 'attachment; filename="papers-applications.bib"'
    assert bibtex_titles(table.text) == bibtex_titles(search.text) != []
    assert (await datasette.client.get("/catalog/papers.bib?_next=1")).status_code == 400
    assert (await datasette.client.post("/catalog/papers.bib")).status_code == 405
    moved = await datasette.client.get("/catalog/papers.bib?_sort=year&_sort_by_desc=on")
    assert moved.status_code == 302
    assert moved.headers["location"].endswith("/catalog/papers.bib?_sort_desc=year")
