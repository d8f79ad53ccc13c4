"""Paper Copilot's paper lists (github.com/papercopilot/paperlists): one JSON array a venue and
year, `iclr/iclr2024.json`, each record with `title`, `author` "A;B;C" (or "A, B, C"), `aff`
"X;Y;Z", `status`, `track`, `primary_area`, `keywords` "K1;K2", `abstract` (not in every
venue's list: a titled record without one is a paper), `site` and, for some venues, `arxiv`
and `doi`.

Venue and year come from the file name (`iclr2024.json` -> ICLR 2024, `nips2018.json` ->
NeurIPS 2018) unless a sources.yml entry gives them.
"""

import os
import re
from collections.abc import Iterator

from loader.read.dumps import (
    abstract_value,
    keyword_list,
    person_names,
    read_dump,
    require_title_or_abstract,
    text_value,
    unique,
    venue_name,
)
from loader.read.jsonl import DatesAndIdentifiers, identifiers_from_url, normalize_identifier
from loader.read.lines import clean_name
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


def split_author_field(value: str | None) -> list[str]:
    """The `author` field's names: "A;B;C", or "A, B, C" where a list has no `;` (SIGGRAPH's,
    and some NeurIPS 2017 records) and every part is a name of two words or more (never
    "King, Jr." or "Zhang, Wei" cut in two)."""
    if value and SEPARATOR not in value and "," in value:
        parts = [part.strip() for part in value.split(",") if part.strip()]
        names = [clean_name(part) for part in parts]
        if len(parts) > 1 and all(name and len(name.split()) > 1 for name in names):
            return parts
    return split_field(value)


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


def map_paperlists_record(
    name: str, line: int, record: dict[str, object]
) -> tuple[str | None, Entry]:
    abstract = abstract_value(record.get("abstract"))
    title = text_value("title", record.get("title"))
    require_title_or_abstract(title, abstract)
    author = text_value("author", record.get("author"))
    authors = person_names("author", split_author_field(author))
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
        authors=authors,
        truncated=False,
        affiliations=affiliations,
        title=title,
        url=url,
        status=text_value("status", record.get("status")),
        track=text_value("primary_area", record.get("primary_area")) or track,
        keywords=keyword_list("keywords", record.get("keywords"), SEPARATOR),
        **read_identifiers(record, url),
    )


def parse_paperlists(name: str, path: str | os.PathLike[str]) -> Iterator[Entry | Problem]:
    """Yield an Entry or a Problem for every record of a Paper Copilot file."""
    return read_dump(name, path, map_paperlists_record)
