"""Paper Copilot's paper lists (github.com/papercopilot/paperlists): one JSON array a venue and
year, `iclr/iclr2024.json`, each record with `title`, `author` "A;B;C", `aff` "X;Y;Z",
`status`, `track`, `primary_area`, `keywords` "K1;K2", `abstract`, `site` and, for some
venues, `arxiv` and `doi`.

Venue and year come from the file name (`iclr2024.json` -> ICLR 2024, `nips2018.json` ->
NeurIPS 2018) unless a sources.yml entry gives them.
"""

import os
import re
from collections.abc import Iterator

from loader.read.author_ids import aligned_ids, split_ids
from loader.read.dumps import (
    keyword_list,
    person_slots,
    read_dump,
    required_abstract,
    text_value,
    unique,
    venue_name,
)
from loader.read.jsonl import DatesAndIdentifiers, identifiers_from_url, normalize_identifier
from loader.records import Entry, Problem

# "iclr2024.json", "3dv2025.json", "nips2018_workshop.json"
FILE_NAME = re.compile(r"^(?P<venue>[a-z0-9]+?)(?P<year>(?:19|20)\d\d)(?:[_\-.][^/]*)?\.json$")
SEPARATOR = ";"
# the track every record of most venues has: it tells nothing
MAIN_TRACK = "main"


def venue_of_file(name: str) -> tuple[str, int] | None:
    """(venue, year) read from a Paper Copilot file name, or None."""
    match = FILE_NAME.match(os.path.basename(name).lower())
    if not match:
        return None
    return venue_name(match["venue"]), int(match["year"])


def split_field(value: str | None) -> list[str]:
    return [part.strip() for part in (value or "").split(SEPARATOR) if part.strip()]


def read_identifiers(record: dict[str, object], url: str | None) -> DatesAndIdentifiers:
    """The site's OpenReview id (or arXiv, DOI), then the record's own `arxiv` and `doi`; a
    value that is no identifier of its kind is left out, not a problem: the paper stays."""
    found = identifiers_from_url(url) if url else DatesAndIdentifiers()
    for key, field in (("arxiv_id", "arxiv"), ("doi", "doi")):
        value = text_value(field, record.get(field))
        identifier = normalize_identifier(key, value) if value else None
        if identifier:
            found[key] = identifier  # type: ignore[literal-required]
    return found


def has_ids(value: object) -> bool:
    """Whether a ";"-joined list of ids holds one that is not blank."""
    return isinstance(value, str) and bool(value.strip("; "))


def paperlists_author_ids(
    record: dict[str, object], slots: list[tuple[int, str]], width: int
) -> list[dict[str, str]]:
    """The authors' ids: `authorids` ("~Name1;~Name2", OpenReview profile ids; e-mails and
    other sites' ids are left out, loader.read.author_ids), `orcid` and `dblp`, each one slot
    a name of `author`, blanks where none."""
    given = record.get("authorids")
    if not (isinstance(given, str) and "~" in given) and not any(
        has_ids(record.get(field)) for field in ("orcid", "dblp")
    ):
        return []  # most records: none, or other sites' ids (IEEE, ACL) and addresses
    lists = {
        kind: split_ids(record.get(field), width)
        for kind, field in (("openreview", "authorids"), ("orcid", "orcid"), ("dblp", "dblp"))
    }
    return aligned_ids([slot for slot, _ in slots], lists)


def map_paperlists_record(
    name: str, line: int, record: dict[str, object]
) -> tuple[str | None, Entry]:
    abstract = required_abstract(record.get("abstract"))
    author = text_value("author", record.get("author"))
    slots = person_slots("author", (author or "").split(SEPARATOR))
    affiliations = unique(split_field(text_value("aff", record.get("aff"))))
    track = text_value("track", record.get("track"))
    if track and track.lower() == MAIN_TRACK:
        track = None
    url = text_value("site", record.get("site"))
    # the id is what tells duplicates apart; a number there is no reason to lose the paper
    paper_id = record.get("id")
    key = paper_id.strip() if isinstance(paper_id, str) else None
    return key or url, Entry(
        path=name,
        line=line,
        abstract=abstract,
        authors=[written for _, written in slots],
        author_ids=paperlists_author_ids(record, slots, (author or "").count(SEPARATOR) + 1),
        truncated=False,
        affiliations=affiliations,
        title=text_value("title", record.get("title")),
        url=url,
        status=text_value("status", record.get("status")),
        track=text_value("primary_area", record.get("primary_area")) or track,
        keywords=keyword_list("keywords", record.get("keywords"), SEPARATOR),
        **read_identifiers(record, url),
    )


def parse_paperlists(name: str, path: str | os.PathLike[str]) -> Iterator[Entry | Problem]:
    """Yield an Entry or a Problem for every record of a Paper Copilot file."""
    return read_dump(name, path, map_paperlists_record)
