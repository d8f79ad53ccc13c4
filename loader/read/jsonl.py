"""JSON Lines: one object a line with abstract, authors and optional title, track,
affiliations, url, venue, year, status, identifiers (arxiv_id, doi, openreview_id), links
(an object kind -> URL), tldr, citations (with citations_source) and rating (with
rating_count)."""

import json
import math
import os
import re
from collections.abc import Iterable, Iterator
from typing import Literal, TypedDict
from urllib.parse import SplitResult, parse_qs, urlsplit

from loader.read.json_stream import invalid_value
from loader.read.lines import (
    NAME_SEPARATOR,
    Names,
    explicit_name,
    line_problem,
    strip_truncation,
)
from loader.read.links import identifier_links, link_url, ordered_links
from loader.records import LINK_KINDS, Entry, Problem

OPTIONAL_TEXT: tuple[Literal["title", "track", "url", "venue", "status"], ...] = (
    "title",
    "track",
    "url",
    "venue",
    "status",
)
IDENTIFIERS: tuple[Literal["arxiv_id", "doi", "openreview_id"], ...] = (
    "arxiv_id",
    "doi",
    "openreview_id",
)
# JSON escapes can spell what a UTF-8 line cannot hold: "\ud800" (SQLite refuses to store a
# lone surrogate) and "\u0000" (the text formats reject NUL too)
STORED_FIELDS = (
    "abstract",
    "authors",
    "affiliations",
    *OPTIONAL_TEXT,
    *IDENTIFIERS,
    "tldr",
    "citations_source",
)
UNSTORABLE = re.compile(r"[\ud800-\udfff\0]")
YEAR = re.compile(r"^[12][0-9]{3}$")
# new-style (2101.00001, version dropped) and old-style (math/0501001, hep-th/9901001v2) ids
ARXIV_ID = re.compile(r"^(?i:arxiv:)?(\d{4}\.\d{4,5}|[a-z][a-z.\-]*/\d{7})(?:v\d+)?$")
DOI = re.compile(r"^10\.\d{4,9}/\S+$")
OPENREVIEW_ID = re.compile(r"^[A-Za-z0-9_\-]+$")
DOI_HOSTS = ("doi.org", "dx.doi.org", "www.doi.org")


class TextFields(TypedDict, total=False):
    """A record's optional text, as Entry takes it."""

    title: str | None
    track: str | None
    url: str | None
    venue: str | None
    status: str | None


class Signals(TypedDict, total=False):
    """A record's links, summary, citation count and rating, as Entry takes them."""

    links: dict[str, str]
    tldr: str | None
    citations: int | None
    citations_source: str | None
    rating: float | None
    rating_count: int | None


class DatesAndIdentifiers(TypedDict, total=False):
    """A record's year and identifiers, as Entry takes them."""

    year: int | None
    arxiv_id: str | None
    doi: str | None
    openreview_id: str | None


def parse_names(value: object) -> Names | None:
    """A list of names, or one comma-separated string that may end in 'et al.' / '等'."""
    if isinstance(value, str):
        value, truncated = strip_truncation(value)
        value = NAME_SEPARATOR.split(value)
    else:
        truncated = False
    if not isinstance(value, list) or not all(isinstance(v, str) for v in value):
        return None
    # explicit names are kept even when they do not look like one, tidied as in the text
    # formats; a slot with no letter (".") is no name, skipped like an empty one
    names = [name for name in map(explicit_name, value) if name]
    return (names, truncated) if names else None


def parse_year(value: object) -> int | None:
    """2024 or "2024" -> 2024; anything else -> None."""
    if isinstance(value, str) and YEAR.match(value.strip()):
        return int(value)
    if isinstance(value, int) and not isinstance(value, bool) and YEAR.match(str(value)):
        return value
    return None


def normalize_identifier(key: str, value: str) -> str | None:
    """An identifier as the builder compares it, or None when it is not one of its kind."""
    value = value.strip()
    if key == "arxiv_id":
        match = ARXIV_ID.match(value)
        return match.group(1) if match else None
    if key == "doi":
        value = read_doi_url(value) or value
        return value.lower() if DOI.match(value) else None  # DOIs ignore case
    return value if OPENREVIEW_ID.match(value) else None


def identifiers_from_url(url: str) -> DatesAndIdentifiers:
    """{key: id} read from an arXiv, OpenReview or DOI link; {} for any other link."""
    parts = split_url(url)
    if parts is None:
        return {}
    host = parts.netloc.lower().removeprefix("www.")
    path = parts.path.strip("/")
    if host in ("arxiv.org", "export.arxiv.org"):
        kind, _, rest = path.partition("/")
        if kind in ("abs", "pdf"):
            arxiv_id = normalize_identifier("arxiv_id", rest.removesuffix(".pdf"))
            return {"arxiv_id": arxiv_id} if arxiv_id else {}
    if host == "openreview.net" and path in ("forum", "pdf"):
        forum = parse_qs(parts.query).get("id", [""])[0]
        return {"openreview_id": forum} if OPENREVIEW_ID.match(forum) else {}
    doi = read_doi_url(url)
    return {"doi": doi.lower()} if doi and DOI.match(doi) else {}


def split_url(url: str) -> SplitResult | None:
    try:
        return urlsplit(url.strip())
    except ValueError:  # "http://[::1": a url is optional, a broken one is no identifier
        return None


def read_doi_url(url: str) -> str | None:
    parts = split_url(url)
    if parts and parts.scheme in ("http", "https") and parts.netloc.lower() in DOI_HOSTS:
        return parts.path.lstrip("/")
    return None


def read_dates_and_identifiers(
    record: dict[str, object],
) -> tuple[DatesAndIdentifiers, None] | tuple[None, str]:
    """(fields, problem message): venue, year, status and identifiers of one record."""
    fields: DatesAndIdentifiers = {}
    if "year" in record and record["year"] is not None:
        fields["year"] = parse_year(record["year"])
        if fields["year"] is None:
            return None, "year must be a year such as 2024"
    url = record.get("url")
    if isinstance(url, str):
        fields.update(identifiers_from_url(url))
    for key in IDENTIFIERS:  # an explicit key wins over the url
        value = record.get(key)
        if value is None:
            continue
        if not isinstance(value, str):
            return None, f"{key} must be a string"
        identifier = normalize_identifier(key, value)
        if identifier is None:
            return None, f"{key} {value.strip()!r} is not a valid identifier"
        fields[key] = identifier
    return fields, None


def read_links(value: object) -> dict[str, str] | str:
    """`links` -> {kind: URL} in LINK_KINDS order, or a problem message."""
    if value is None:
        return {}
    kinds = ", ".join(LINK_KINDS)
    if not isinstance(value, dict):
        return f"links must be an object of {kinds} -> URL"
    found = []
    for kind, text in value.items():
        if kind not in LINK_KINDS:
            return f"links: unknown kind {kind!r} (expected {kinds})"
        if text is None:
            continue
        if not isinstance(text, str) or UNSTORABLE.search(text):
            return f"links: {kind} must be a URL"
        url = link_url(kind, text)
        if text.strip() and url is None:
            return f"links: {kind} {text.strip()!r} is not a URL"
        found.append((kind, url))
    return ordered_links(found)


def is_count(value: object) -> bool:
    return isinstance(value, int) and not isinstance(value, bool) and value >= 0


def read_signals(record: dict[str, object]) -> Signals | str:
    """links, tldr, citations (citations_source) and rating (rating_count) of one record,
    or a problem message."""
    links = read_links(record.get("links"))
    if isinstance(links, str):
        return links
    texts: dict[str, str | None] = {}
    for key in ("tldr", "citations_source"):
        value = record.get(key)
        if value is not None and not isinstance(value, str):
            return f"{key} must be a string"
        texts[key] = value.strip() or None if value else None
    counts: dict[str, int | None] = {}
    for key in ("citations", "rating_count"):
        value = record.get(key)
        if value is not None and not is_count(value):
            return f"{key} must be a whole number, 0 or more"
        counts[key] = value if isinstance(value, int) else None
    rating = record.get("rating")
    if rating is not None and (
        isinstance(rating, bool)
        or not isinstance(rating, (int, float))
        or not math.isfinite(rating)
    ):
        return "rating must be a number"
    return Signals(
        links=links,
        tldr=texts["tldr"],
        citations=counts["citations"],
        citations_source=texts["citations_source"],
        rating=float(rating) if rating is not None else None,
        rating_count=counts["rating_count"],
    )


def parse_jsonl_line(path: str, number: int, line: str) -> Entry | Problem:
    try:
        record = json.loads(line)
    except json.JSONDecodeError as error:
        return Problem(path, number, f"invalid JSON: {error}")
    except ValueError as error:
        return Problem(path, number, invalid_value(error))
    except RecursionError:
        return Problem(path, number, "invalid JSON: nested too deeply")
    if not isinstance(record, dict):
        return Problem(path, number, "a JSON Lines record must be an object")
    for key in STORED_FIELDS:
        value = record.get(key)
        for text in value if isinstance(value, list) else [value]:
            if isinstance(text, str) and UNSTORABLE.search(text):
                return Problem(path, number, f"{key} contains a NUL or a lone surrogate escape")
    abstract = record.get("abstract")
    if not isinstance(abstract, str) or not abstract.strip():
        return Problem(path, number, "record has no abstract")
    authors = parse_names(record.get("authors"))
    if authors is None:
        return Problem(path, number, "record has no authors (a list or a comma-separated string)")
    affiliations = record.get("affiliations") or []
    if isinstance(affiliations, str):
        affiliations = affiliations.split(",")
    if not isinstance(affiliations, list) or not all(isinstance(a, str) for a in affiliations):
        return Problem(path, number, "affiliations must be a list of slugs")
    fields: TextFields = {}
    for key in OPTIONAL_TEXT:
        value = record.get(key)
        if value is not None and not isinstance(value, str):
            return Problem(path, number, f"{key} must be a string")
        fields[key] = value.strip() if value and value.strip() else None
    more, message = read_dates_and_identifiers(record)
    if message:
        return Problem(path, number, message)
    assert more is not None  # read without a problem
    signals = read_signals(record)
    if isinstance(signals, str):
        return Problem(path, number, signals)
    implied = identifier_links(
        more.get("arxiv_id"), more.get("doi"), more.get("openreview_id")
    ).items()
    signals["links"] = ordered_links(signals["links"].items(), implied)
    names, truncated = authors
    return Entry(
        path=path,
        line=number,
        abstract=abstract.strip(),
        authors=names,
        truncated=truncated or bool(record.get("authors_truncated")),
        affiliations=[a.strip() for a in affiliations if a.strip()],
        **fields,
        **more,
        **signals,
    )


def parse_jsonl(path: str | os.PathLike[str], lines: Iterable[str]) -> Iterator[Entry | Problem]:
    """Yield an Entry or a Problem for every non-blank line."""
    name = str(path)
    for number, line in enumerate(lines, start=1):
        if not line.strip():
            continue
        yield line_problem(name, number, line) or parse_jsonl_line(name, number, line)
