"""Abstracts and titles as readable HTML through loader/web/rendering.py (the one reading of their markup:
math as MathML, emphasis, safe links, sanitized), and search snippets with highlighted matches."""

import functools
import json
import re
from collections.abc import Awaitable, Callable, Mapping
from typing import TYPE_CHECKING, Any
from urllib.parse import urlencode

from datasette.utils import tilde_encode
from markupsafe import Markup, escape

from loader.web.catalog_scope import is_catalog
from loader.web.kept_renderings import KeptRenderings
from loader.web.paper_signals import shown_links, stored_links
from loader.web.rendering import affiliation_name, render_html, title_html, title_text

if TYPE_CHECKING:
    from datasette.app import Datasette

# the `search` canned query wraps each match in these private-use characters
MATCH_START = "\ue000"
MATCH_END = "\ue001"

PAPER_ID = re.compile(r"[0-9a-f]{16}")
PAPER_ID_COLUMNS = ("id", "paper_id")
PAPER_LABEL_COLUMNS = ("label", "title")
AUTHOR_NAME_COLUMNS = ("name", "author", "author_name")
PAPER_LINK_COLUMNS = frozenset(PAPER_LABEL_COLUMNS + PAPER_ID_COLUMNS)
AUTHOR_LINK_COLUMNS = frozenset(AUTHOR_NAME_COLUMNS + ("author_id",))
LIST_COLUMNS = ("authors", "affiliations", "categories", "keywords")
# long plain-text columns: clamped in the table like the abstract
PLAIN_TEXT_COLUMNS = ("abstract_text", "abstract_plain")
# per worker: rendered abstracts (enough for the papers a worker's usual pages show again: a
# smaller budget left the track pages of the benchmark mix missing many of theirs) and the
# author and affiliation links of table rows
ABSTRACTS_KEPT_BYTES = 24 * 1024 * 1024
LINKS_KEPT_BYTES = 8 * 1024 * 1024


def render_snippet(text: str | None) -> Markup:
    """Escape first, then turn the match sentinels into <mark>; stray sentinels are dropped."""
    if text is None:
        return Markup("")
    html = str(escape(text))
    pieces, open_mark = [], False
    for piece in re.split(f"([{MATCH_START}{MATCH_END}])", html):
        if piece == MATCH_START and not open_mark:
            pieces.append("<mark>")
            open_mark = True
        elif piece == MATCH_END and open_mark:
            pieces.append("</mark>")
            open_mark = False
        elif piece not in (MATCH_START, MATCH_END):
            pieces.append(piece)
    if open_mark:
        pieces.append("</mark>")
    return Markup("".join(pieces))


def row_value(row: Any, column: str) -> Any:
    try:
        return row[column]
    except (KeyError, IndexError):
        return None


def paper_id_of(row: Any) -> str | None:
    for column in PAPER_ID_COLUMNS:
        value = row_value(row, column)
        if isinstance(value, str) and PAPER_ID.fullmatch(value):
            return value
    return None


AFFILIATION_NAMES_SQL = (
    "select slug, name from affiliations where slug in (select value from json_each(:slugs))"
)

# Datasette shows its raw value ("[]") for an empty rendering
EMPTY_LIST = Markup('<span class="empty-list"></span>')


def json_names(value: str) -> list[str] | None:
    """A JSON list of strings, or None for anything else (left to Datasette)."""
    try:
        names = json.loads(value)
    except ValueError:
        return None
    if not isinstance(names, list) or not all(isinstance(name, str) for name in names):
        return None
    return names


def render_names(value: str) -> Markup | None:
    """A JSON list of names as "A, B, C"."""
    names = json_names(value)
    if names is None:
        return None
    return escape(", ".join(names)) if names else EMPTY_LIST


def linked_names(
    value: str,
    column: str,
    datasette: "Datasette",
    database: str,
    affiliation_names: Mapping[str, str] | None = None,
) -> Markup | None:
    """In the papers table, each author links to their page (by name: /-/author), each
    affiliation to its papers, shown by its name in the affiliations table (`affiliation_names`,
    slug -> name; else derived from the slug) rather than its slug, each category to its
    papers; keywords are text."""
    names = json_names(value)
    if not names:
        return names if names is None else EMPTY_LIST
    if column == "keywords":
        return escape(", ".join(names))
    if column == "authors":
        author_page = datasette.urls.path("/-/author")
        links = [link(f"{author_page}?{urlencode({'name': name})}", name) for name in names]
    else:
        papers = table_url(datasette, database, "papers")
        known = affiliation_names or {}
        shown = (
            (lambda slug: known.get(slug) or affiliation_name(slug))
            if column == "affiliations"
            else str
        )
        links = [
            link(f"{papers}?{urlencode({f'{column}__arraycontains': name})}", shown(name))
            for name in names
        ]
    return Markup(", ").join(links)


def link(url: str, text: Any) -> Markup:
    return Markup(f'<a href="{escape(url)}">{escape(text)}</a>')


@functools.lru_cache(maxsize=64)
def table_url(datasette: "Datasette", database: str, table: str) -> str:
    # fixed for a running instance; building it costs more than the rest of a cell
    return datasette.urls.table(database, table)


def row_url(datasette: "Datasette", database: str, table: str, key: Any) -> str:
    return f"{table_url(datasette, database, table)}/{tilde_encode(str(key))}"


def shown_title(row: Any, value: str) -> Markup:
    """A label cell shows its row's title where the row has one: the label is the title as
    plain text (the build's), the title keeps its markup (math, emphasis) to render."""
    title = row_value(row, "title")
    return title_html(title if isinstance(title, str) and title else value)


def query_result_link(
    row: Any, value: Any, column: str, database: str, datasette: "Datasette"
) -> Markup | None:
    """In canned-query results, paper ids and labels link to the paper page, author names
    (next to an author_id) to the author page. Other columns return at once: this runs for
    every cell of a result (600 on a search page)."""
    if column in PAPER_LINK_COLUMNS:
        paper = paper_id_of(row)
        if paper and column in PAPER_LABEL_COLUMNS and isinstance(value, str):
            return link(row_url(datasette, database, "papers", paper), shown_title(row, value))
        if paper and value == paper:
            return link(row_url(datasette, database, "papers", paper), value)
    if column in AUTHOR_LINK_COLUMNS:
        author = row_value(row, "author_id")
        if isinstance(author, int):
            return link(row_url(datasette, database, "authors", author), value)
    return None


def author_link(row: Any, name: str, datasette: "Datasette", database: str) -> Markup | None:
    """In the authors table (the home page's author lookup lists its search), a name links to
    the author's page as the id beside it does: readers click the name."""
    author = row_value(row, "id")
    if not isinstance(author, int):
        return None
    return link(row_url(datasette, database, "authors", author), name)


def prepare_jinja2_environment(env: Any) -> None:
    env.filters["render_abstract"] = render_html
    env.filters["render_title"] = title_html
    env.filters["title_text"] = title_text
    env.filters["render_snippet"] = render_snippet


def abstract_cell(value: str) -> Markup:
    return Markup('<div class="abstract">{}</div>').format(render_html(value))


# a row's cells are the same on every page that lists it (loader/web/kept_renderings.py)
kept_abstract_cell = KeptRenderings(abstract_cell, ABSTRACTS_KEPT_BYTES)
kept_linked_names = KeptRenderings(linked_names, LINKS_KEPT_BYTES)


def affiliation_cell(
    value: str, datasette: "Datasette", database: str
) -> str | None | Callable[[], Awaitable[str | None]]:
    """A papers row's affiliations under the names the build gave them (a source's own, or
    derived from a slug), read from the affiliations table: kept like the other lists, so the
    query runs the first time a worker shows the cell."""
    key = (value, "affiliations", datasette, database)
    found = kept_linked_names.kept(*key)
    if found is not None:
        return found
    slugs = json_names(value)
    if not slugs:  # no name to read: not a list, or an empty one
        return kept_linked_names(*key)

    async def render() -> str | None:
        rows = await datasette.get_database(database).execute(
            AFFILIATION_NAMES_SQL, {"slugs": json.dumps(slugs)}
        )
        names = {row["slug"]: row["name"] for row in rows}
        rendering = linked_names(value, "affiliations", datasette, database, names)
        return kept_linked_names.keep(key, rendering)

    return render


def links_cell(value: str) -> Markup | None:
    """A papers row's links as the paper page shows them ("PDF · Code"); the JSON as Datasette
    shows it when none is an http(s) link of a known kind."""
    shown = shown_links(stored_links(value))
    if not shown:
        return None
    return Markup(" · ").join(
        Markup('<a href="{}" rel="nofollow noopener noreferrer">{}</a>').format(
            item.url, item.label
        )
        for item in shown
    )


# every column a cell of which is rendered here: any other cell returns at once (a table page
# asks for each of its ~1,000 cells)
RENDERED_COLUMNS = frozenset(
    ("abstract", "snippet", "links")
    + PLAIN_TEXT_COLUMNS
    + LIST_COLUMNS
    + tuple(PAPER_LINK_COLUMNS)
    + tuple(AUTHOR_LINK_COLUMNS)
)


def render_cell(
    row: Any, value: Any, column: str, table: str | None, database: str, datasette: "Datasette"
) -> Any:
    if value is None or column not in RENDERED_COLUMNS or not is_catalog(datasette, database):
        return None
    if column == "abstract" and table in ("papers", None) and isinstance(value, str):
        return kept_abstract_cell(value)
    if column in PAPER_LABEL_COLUMNS and table == "papers" and isinstance(value, str):
        paper = row_value(row, "id")
        if column == "label" and isinstance(paper, str):
            return link(row_url(datasette, database, "papers", paper), shown_title(row, value))
        return title_html(value)
    if column in PLAIN_TEXT_COLUMNS and table == "papers" and isinstance(value, str):
        return Markup('<div class="abstract-text">{}</div>').format(value)
    if column == "affiliations" and table == "papers" and isinstance(value, str):
        return affiliation_cell(value, datasette, database)
    if column == "links" and table == "papers" and isinstance(value, str):
        return links_cell(value)
    if column in LIST_COLUMNS and table == "papers" and isinstance(value, str):
        return kept_linked_names(value, column, datasette, database)
    if column in LIST_COLUMNS and table is None and isinstance(value, str):
        return render_names(value)
    if column == "name" and table == "authors" and isinstance(value, str):
        return author_link(row, value, datasette, database)
    if table is not None:
        return None
    if column == "snippet" and isinstance(value, str):
        return render_snippet(value)
    return query_result_link(row, value, column, database, datasette)
