"""What an author page says of the person: their ids as links to the sites that gave them, and
the other people of the same name, each told apart by an affiliation and a co-author
(loader/rules/persons.py says who is one person)."""

import sqlite3
from collections.abc import Callable
from typing import Any
from urllib.parse import quote

# kind -> (label, the person's page on that site)
ID_SITES = {
    "openreview": ("OpenReview", "https://openreview.net/profile?id={}"),
    "orcid": ("ORCID", "https://orcid.org/{}"),
    "dblp": ("DBLP", "https://dblp.org/pid/{}"),
}
ID_ORDER = tuple(ID_SITES)
# at most this many others of one name are listed (Yang Liu: dozens)
NAMESAKES_SHOWN = 8

PERSON_IDS_SQL = "select kind, value from author_ids where author_id = :id"
NAMESAKES_SQL = """
select id, name, paper_count from authors
where key = :key and id != :id
order by paper_count desc, id
limit :limit
"""
# the affiliation most of a person's papers give
TOP_AFFILIATION_SQL = """
select affiliations.name from paper_authors
join paper_affiliations on paper_affiliations.paper_id = paper_authors.paper_id
join affiliations on affiliations.id = paper_affiliations.affiliation_id
where paper_authors.author_id = :id
group by affiliations.id
order by count(*) desc, affiliations.name
limit 1
"""
# the co-author of most of a person's papers
TOP_COAUTHOR_SQL = """
select authors.name from paper_authors as own
join paper_authors as other on other.paper_id = own.paper_id and other.author_id != own.author_id
join authors on authors.id = other.author_id
where own.author_id = :id
group by other.author_id
order by count(*) desc, authors.name
limit 1
"""

Rows = Callable[[str, dict[str, Any]], list[dict[str, Any]]]


def id_links(rows: list[dict[str, Any]]) -> list[dict[str, str]]:
    """[{kind, label, value, url}] of a person's ids, in ID_ORDER."""
    links = []
    for row in sorted(rows, key=lambda row: (ID_ORDER.index(row["kind"]), row["value"])):
        label, url = ID_SITES[row["kind"]]
        links.append(
            {
                "kind": row["kind"],
                "label": label,
                "value": row["value"],
                "url": url.format(quote(row["value"], safe="~/-._")),
            }
        )
    return links


def told_apart(rows: Rows, author_id: int) -> dict[str, str | None]:
    """{affiliation, coauthor}: what tells a person apart from another of their name."""
    affiliation = rows(TOP_AFFILIATION_SQL, {"id": author_id})
    coauthor = rows(TOP_COAUTHOR_SQL, {"id": author_id})
    return {
        "affiliation": affiliation[0]["name"] if affiliation else None,
        "coauthor": coauthor[0]["name"] if coauthor else None,
    }


def person_context(connection: sqlite3.Connection, author: dict[str, Any], rows: Rows) -> dict:
    """{author_ids, namesakes, author_told_apart} of an author page (`rows`: the page's
    reader, within its time limit)."""
    if not has_table(connection, "author_ids"):  # a catalog built before people had ids
        return {"author_ids": [], "namesakes": [], "author_told_apart": {}}
    namesakes = rows(
        NAMESAKES_SQL, {"key": author["key"], "id": author["id"], "limit": NAMESAKES_SHOWN}
    )
    for namesake in namesakes:
        namesake.update(told_apart(rows, namesake["id"]))
    return {
        "author_ids": id_links(rows(PERSON_IDS_SQL, {"id": author["id"]})),
        "namesakes": namesakes,
        "author_told_apart": told_apart(rows, author["id"]) if namesakes else {},
    }


def has_table(connection: sqlite3.Connection, name: str) -> bool:
    row = connection.execute(
        "select 1 from sqlite_master where type = 'table' and name = ?", [name]
    ).fetchone()
    return row is not None
