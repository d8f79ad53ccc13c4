"""arXiv's metadata snapshot (`arxiv-metadata-oai-snapshot.json`, the OAI records as JSON Lines):
`id`, `authors` "A, B and C", `authors_parsed` [[last, first, suffix], ...], `title`,
`abstract` (hard-wrapped, each line after a paragraph's first indented), `categories` ("cs.LG
stat.ML", the primary one first), `doi`,
`versions` [{"version": "v1", "created": "Mon, 2 Apr 2007 19:18:42 GMT"}, ...].

Every record is venue arXiv, year of its first version.
"""

import os
import re
from collections.abc import Collection, Iterable, Iterator

from loader.read.dumps import (
    RecordProblem,
    json_type,
    person_names,
    read_dump,
    required_abstract,
    text_value,
    unique,
)
from loader.read.jsonl import normalize_identifier
from loader.read.links import ARXIV_URL, DOI_URL, link_url
from loader.records import Entry, LeftOut, Problem

VENUE = "arXiv"
# "A, B and C", "A, B, and C"
AUTHOR_SEPARATOR = re.compile(r"\s*,\s*(?:and\s+)?|\s+and\s+")
# a paragraph of an abstract starts on an indented line; the other lines are wrapping
PARAGRAPH = re.compile(r"\n[ \t]+")
YEAR = re.compile(r"\b((?:19|20)\d\d)\b")
# the year and month an id was given: 0704.0001, 2101.00001, math/0601001, hep-th/9901001
ID_DATE = re.compile(r"^(?:[a-z.\-]+/)?(\d\d)(\d\d)")
FIRST_ARXIV_YEAR = 1991
# a category to keep as a build is asked for it: an archive (cs, hep-th, math) or an archive
# and subject class (cs.LG, cond-mat.mes-hall)
CATEGORY = re.compile(r"^[a-z][a-z\-]*(?:\.[a-z][a-z\-]*)?$", re.IGNORECASE)


def unwrap_abstract(text: str) -> str:
    """arXiv's hard wrapping and indentation undone: one line a paragraph."""
    return "\n".join(" ".join(part.split()) for part in PARAGRAPH.split(text.strip()))


def parsed_authors(value: object) -> list[str] | None:
    """[["Balázs", "C.", ""], ...] -> ["C. Balázs", ...]; None when not given."""
    if value is None:
        return None
    if not isinstance(value, list) or not all(
        isinstance(parts, list) and all(isinstance(p, str) for p in parts) for parts in value
    ):
        raise RecordProblem("authors_parsed must be a list of [last, first, suffix] lists")
    written = [
        " ".join(p.strip() for p in (*parts[1:2], *parts[:1], *parts[2:]) if p.strip())
        for parts in value
    ]
    return person_names("authors_parsed", written)


def first_version_year(record: dict[str, object], arxiv_id: str) -> int | None:
    """The year of the first version, else of the id (its first digits are year and month)."""
    versions = record.get("versions")
    if isinstance(versions, list) and versions and isinstance(versions[0], dict):
        created = versions[0].get("created")
        match = YEAR.search(created) if isinstance(created, str) else None
        if match:
            return int(match[1])
    match = ID_DATE.match(arxiv_id)
    if not match:
        return None
    year = 1900 + int(match[1])
    return year if year >= FIRST_ARXIV_YEAR else year + 100


def map_snapshot_record(name: str, line: int, record: dict[str, object]) -> tuple[str, Entry]:
    written_id = record.get("id")
    if not isinstance(written_id, str):
        raise RecordProblem(f'id must be a string such as "0704.0001", not {json_type(written_id)}')
    arxiv_id = normalize_identifier("arxiv_id", written_id)
    if arxiv_id is None:
        raise RecordProblem(f"id {written_id.strip()!r} is not an arXiv identifier")
    abstract = unwrap_abstract(required_abstract(record.get("abstract")))
    authors = parsed_authors(record.get("authors_parsed"))
    if authors is None:
        written = text_value("authors", record.get("authors")) or ""
        authors = person_names("authors", AUTHOR_SEPARATOR.split(written))
    title = text_value("title", record.get("title"))
    doi_text = text_value("doi", record.get("doi"))
    # a record may list several DOIs; the first is the paper's
    first_doi = doi_text.split()[0] if doi_text else None
    doi = normalize_identifier("doi", first_doi) if first_doi else None
    links = {"arxiv": ARXIV_URL.format(arxiv_id)}
    if first_doi and doi:
        links["doi"] = link_url("doi", first_doi) or DOI_URL.format(doi)  # as written
    # "cs.LG stat.ML": the primary category first
    categories = unique((text_value("categories", record.get("categories")) or "").split())
    return arxiv_id, Entry(
        path=name,
        line=line,
        abstract=abstract,
        authors=authors,
        truncated=False,
        title=" ".join(title.split()) if title else None,
        url=links["arxiv"],
        venue=VENUE,
        year=first_version_year(record, arxiv_id),
        arxiv_id=arxiv_id,
        doi=doi,
        categories=categories,
        links=links,
    )


def is_category(text: str) -> bool:
    return bool(CATEGORY.match(text))


def in_categories(categories: Iterable[str], kept: Collection[str]) -> bool:
    """Whether a record of these categories is in one of `kept`: the category itself, or its
    archive (cs keeps cs.LG and cs.CL); case aside, as people type them (cs.lg)."""
    for category in categories:
        folded = category.casefold()
        if folded in kept or folded.split(".")[0] in kept:
            return True
    return False


def keep_categories(
    items: Iterable[Entry | Problem], categories: Collection[str]
) -> Iterator[Entry | Problem | LeftOut]:
    """The entries in one of `categories` (see in_categories), a LeftOut for each of the
    others; problems pass."""
    kept = {category.casefold() for category in categories}
    for item in items:
        if isinstance(item, Entry) and not in_categories(item.categories, kept):
            yield LeftOut(item.line, item.record_key)
        else:
            yield item


def parse_arxiv_snapshot(name: str, path: str | os.PathLike[str]) -> Iterator[Entry | Problem]:
    """Yield an Entry or a Problem for every record of an arXiv metadata snapshot."""
    return read_dump(name, path, map_snapshot_record)
