"""A paper's links, citations and rating as pages say them, and whether a catalog has them.

The loader keeps what the dumps say of a paper beyond its text (issue 34): links by kind
(`papers.links`, a JSON object), a citation count with its source and date, a mean review
rating with its number of ratings, a TL;DR, and a country for each affiliation. A catalog built
before them has none of these columns: pages and /search ask `catalog_has_signals()` first and
leave them out.
"""

import json
import sqlite3
import weakref
from collections.abc import Iterable, Mapping
from typing import TYPE_CHECKING, Any, NamedTuple

from loader.web.versions import FORMAT_NAMES, http_link

if TYPE_CHECKING:
    from datasette.database import Database

# link kinds in the order pages show them, with their words
LINK_LABELS = {
    "pdf": "PDF",
    "code": "Code",
    "project": "Project",
    "openreview": "OpenReview",
    "arxiv": "arXiv",
    "doi": "DOI",
    "oa": "Open access",
}
# (table, column) a catalog with signals has: the newest of them all
SIGNAL_COLUMNS = (("papers", "links"), ("papers", "citations"), ("affiliations", "country"))


class ShownLink(NamedTuple):
    kind: str
    label: str
    url: str


def stored_links(text: str | None) -> dict[str, str]:
    """papers.links (a JSON object kind -> URL, or null) as a dict in LINK_LABELS order, kinds
    of no known word after them; a value that is not such an object is no links."""
    try:
        found = json.loads(text) if text else {}
    except (ValueError, RecursionError):
        return {}
    if not isinstance(found, dict):
        return {}
    links = {kind: url for kind, url in found.items() if isinstance(url, str) and url}
    order = {kind: place for place, kind in enumerate(LINK_LABELS)}
    return dict(sorted(links.items(), key=lambda item: order.get(item[0], len(order))))


def shown_links(links: Mapping[str, str]) -> list[ShownLink]:
    """The links a page shows: those of a known kind whose URL is absolute http(s), the URL as
    the source gives it (never a `javascript:` or relative one)."""
    shown = []
    for kind, label in LINK_LABELS.items():
        url = http_link(links.get(kind))
        if url:
            shown.append(ShownLink(kind, label, url))
    return shown


def citation_origin(
    source: str | None, as_of: str | None, sources: Iterable[Mapping[str, Any]], count: int
) -> str:
    """Where a count comes from in words: "Google Scholar, Paper Copilot list of 2025-11".
    `sources`: the paper's source entries (with `format` and, where the catalog has them,
    `citations`): the file that gave this count names the list."""
    lists = [
        FORMAT_NAMES.get(entry["format"], entry["format"])
        for entry in sources
        if entry.get("citations") == count and entry.get("format")
    ]
    parts = [source] if source else []
    if lists:
        parts.append(f"{lists[0]} of {as_of}" if as_of else lists[0])
    elif as_of:
        parts.append(f"as of {as_of}")
    return ", ".join(parts)


def rating_text(rating: float | None, count: int | None) -> str | None:
    """ "Rating 6.25 from 4 reviews"; None without a rating."""
    if rating is None:
        return None
    text = f"Rating {rating:.2f}".rstrip("0").rstrip(".")
    if count:
        text += f" from {count} review{'' if count == 1 else 's'}"
    return text


# Database -> whether it has the signal columns (a served catalog never changes)
_has_signals: "weakref.WeakKeyDictionary[Database, bool]" = weakref.WeakKeyDictionary()
# Database -> the facets of /search some paper has a value of
_signal_facets: "weakref.WeakKeyDictionary[Database, tuple[str, ...]]" = weakref.WeakKeyDictionary()
# a facet of /search -> whether some paper has a value of it: stops at the first, and reads the
# narrow tables (paper_links, affiliations), never the papers' wide rows
FILLED_SQL = {
    "has_code": "select exists(select 1 from paper_links where kind = 'code')",
    "country": "select exists(select 1 from affiliations where country is not null)",
}


async def catalog_has_signals(db: "Database") -> bool:
    """Whether the catalog `db` has every column of SIGNAL_COLUMNS, read once."""
    found = _has_signals.get(db)
    if found is None:
        found = True
        for table, column in SIGNAL_COLUMNS:
            found = found and column in await db.table_columns(table)
        _has_signals[db] = found
    return found


async def catalog_signal_facets(db: "Database") -> tuple[str, ...]:
    """The facets of FILLED_SQL some paper of the catalog `db` has a value of, read once (no
    time limit: a fact of the file, not of a request); none without the signal columns."""
    found = _signal_facets.get(db)
    if found is None:
        found = ()
        if await catalog_has_signals(db):

            def read(connection: sqlite3.Connection) -> tuple[str, ...]:
                return tuple(
                    name
                    for name, sql in FILLED_SQL.items()
                    if connection.execute(sql).fetchone()[0]
                )

            found = await db.execute_fn(read)
        _signal_facets[db] = found
    return found
