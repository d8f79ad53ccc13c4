"""Paper Copilot's paper lists (github.com/papercopilot/paperlists): one JSON array a venue and
year, `iclr/iclr2024.json`, each record with `title`, `author` "A;B;C" (or "A, B, C"), `aff`
"X;Y;Z", `status`, `track`, `primary_area`, `keywords` "K1;K2", `abstract` (not in every
venue's list: a titled record without one is a paper), `site` and, for some venues, `arxiv`
and `doi`.

Kept besides: the links `pdf`, `github` (code), `project`, `openreview`, `arxiv`, `doi` and
`oa` (the open-access page); `gs_citation`, Google Scholar's citation count (-1: unknown);
`rating_avg` (a mean, or "[mean, std]") and `rating` ("3;3;4;4", one a review); `tldr`; and the
normalised affiliations `aff_unique_norm` ("MIT;Google") with their countries. Those two are
unique lists; `aff_unique_index` ("0;1+0;1") and `aff_country_unique_index` say, one slot an
author ("+" between an author's several), which name and which country each author has: an
affiliation's country is read where the two agree slot for slot.

Venue and year come from the file name (`iclr2024.json` -> ICLR 2024, `nips2018.json` ->
NeurIPS 2018) unless a sources.yml entry gives them.
"""

import functools
import json
import math
import os
import re
from collections.abc import Iterable, Iterator

from loader.read.author_ids import aligned_ids, split_ids
from loader.read.dumps import (
    UNSTORABLE,
    abstract_value,
    keyword_list,
    person_slots,
    read_dump,
    require_title_or_abstract,
    text_value,
    unique,
    venue_name,
)
from loader.read.jsonl import DatesAndIdentifiers, identifiers_from_url, normalize_identifier
from loader.read.lines import clean_name
from loader.read.links import identifier_links, link_url, ordered_links
from loader.records import Entry, Problem

# "iclr2024.json", "3dv2025.json", "nips2018_workshop.json"
FILE_NAME = re.compile(r"^(?P<venue>[a-z0-9]+?)(?P<year>(?:19|20)\d\d)(?:[_\-.][^/]*)?\.json$")
SEPARATOR = ";"
# the track every record of most venues has: it tells nothing
MAIN_TRACK = "main"
# record field -> link kind
LINK_FIELDS = (
    ("pdf", "pdf"),
    ("github", "code"),
    ("project", "project"),
    ("openreview", "openreview"),
    ("arxiv", "arxiv"),
    ("doi", "doi"),
    ("oa", "oa"),
)
CITATIONS_SOURCE = "Google Scholar"
# between an author's several affiliations in the index fields ("0+1;2")
SLOT_SEPARATOR = "+"
INDEX_TEXT = re.compile(r"[0-9+;]*")
INDEX_SEPARATORS = re.compile(r"[;+]")
DIGITS = str.maketrans("", "", "0123456789")
# what Paper Copilot's normalisation writes where it found no name (329 places in the 246
# files of commit 33f9884e): no affiliation
PLACEHOLDER_NAMES = {
    "Unknown Institution",
    "Institution not specified",
    "University Affiliation Not Specified",
    "Unknown Affiliation",
    "Unknown University",
}


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
    # every slot kept, empty ones too: the id lists beside the names are aligned by slot
    return (value or "").split(SEPARATOR)


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


def link_value(value: object) -> str | None:
    """A link field's text: a string, or the first string of a list; anything else none (a
    link is optional: a broken one is no reason to lose the paper)."""
    if isinstance(value, list):
        value = next((item for item in value if isinstance(item, str) and item.strip()), None)
    if not isinstance(value, str) or UNSTORABLE.search(value):
        return None
    return value


def read_links(record: dict[str, object], identifiers: DatesAndIdentifiers) -> dict[str, str]:
    """The record's links as URLs, then those its identifiers stand for (the site's
    OpenReview forum) where the record gives none of that kind."""
    given = []
    for field, kind in LINK_FIELDS:
        value = record.get(field)
        if value:  # most records leave most link fields empty ("")
            text = link_value(value)
            if text:
                given.append((kind, link_url(kind, text)))
    implied = identifier_links(
        identifiers.get("arxiv_id"), identifiers.get("doi"), identifiers.get("openreview_id")
    )
    return ordered_links(given, implied.items())


def count_value(value: object) -> int | None:
    """A count: a non-negative integer (or its digits); -1, any other negative and anything
    else None (unknown)."""
    if isinstance(value, str) and value.strip().isdigit():
        return int(value)
    if isinstance(value, int) and not isinstance(value, bool) and value >= 0:
        return value
    return None


def number_value(value: object) -> float | None:
    """A finite number, or a string of one; else None."""
    if isinstance(value, str):
        try:
            value = float(value)
        except ValueError:
            return None
    if isinstance(value, (int, float)) and not isinstance(value, bool):
        try:
            number = float(value)
        except OverflowError:  # an integer past any float: no rating
            return None
        return number if math.isfinite(number) else None
    return None


def read_rating(record: dict[str, object]) -> tuple[float | None, int | None]:
    """(mean rating, number of ratings). `rating_avg` is a mean or [mean, std] (a list, or
    a string of one); `rating` lists the reviews' ratings ("3;3;4;4"). A mean of 0 with no
    rating above it is the list's "no ratings" (`[0, 0]` beside `rating` "" or "0")."""
    if "rating_avg" not in record and "rating" not in record:  # most venues give none
        return None, None
    ratings = [number_value(part) for part in split_field(string_or_none(record.get("rating")))]
    scores = [score for score in ratings if score is not None]
    mean_value = record.get("rating_avg")
    if isinstance(mean_value, str) and mean_value.strip().startswith("["):
        try:
            mean_value = json.loads(mean_value)
        except ValueError:
            mean_value = None
    if isinstance(mean_value, list):
        mean_value = mean_value[0] if mean_value else None
    mean = number_value(mean_value)
    if mean is None and scores:
        mean = sum(scores) / len(scores)
    if mean is None or (mean == 0 and not any(scores)):
        return None, None
    return mean, len(scores) or None


def string_or_none(value: object) -> str | None:
    return value if isinstance(value, str) else None


def optional_text(value: object) -> str | None:
    """A text the paper can do without: stripped, None where absent, blank, not a string or
    not storable."""
    if not isinstance(value, str) or UNSTORABLE.search(value):
        return None
    return value.strip() or None


def index_slots(value: object) -> list[list[int]] | None:
    """An index field ("0;1+2;0") as one list of indexes an author; None where it is not one
    (an empty slot is an author with none)."""
    if not isinstance(value, str) or not value.strip():
        return None
    if INDEX_TEXT.fullmatch(value):  # as the lists write them: digits, "+" and ";" alone
        return [
            [int(part) for part in slot.split(SLOT_SEPARATOR) if part]
            for slot in value.split(SEPARATOR)
        ]
    slots = []
    for slot in value.split(SEPARATOR):
        parts = [part.strip() for part in slot.split(SLOT_SEPARATOR) if part.strip()]
        if not all(part.isdigit() for part in parts):
            return None
        slots.append([int(part) for part in parts])
    return slots


def unique_names(value: object) -> list[str]:
    """A unique list field ("MIT;;Google"), each place kept (the indexes point at them)."""
    if not isinstance(value, str) or UNSTORABLE.search(value):
        return []
    names = [part.strip() for part in value.split(SEPARATOR)]
    return ["" if name in PLACEHOLDER_NAMES else name for name in names]


def read_affiliations(record: dict[str, object]) -> tuple[list[str], list[str | None]]:
    """(affiliations, their countries): the normalised names where the record gives them (a
    name it leaves empty: the author's own `aff` text at that place), else `aff` as written."""
    raw = string_or_none(record.get("aff"))
    names = unique_names(record.get("aff_unique_norm"))
    if not any(names):
        affiliations = unique(split_field(text_value("aff", raw)))
        return affiliations, [None] * len(affiliations)
    if "" in names:
        slots = index_slots(record.get("aff_unique_index")) or []
        raw_slots = [slot.split(SLOT_SEPARATOR) for slot in (raw or "").split(SEPARATOR)]
        for author, indexes in enumerate(slots):
            written = raw_slots[author] if author < len(raw_slots) else []
            for place, index in enumerate(indexes):
                if index < len(names) and not names[index] and len(written) == len(indexes):
                    names[index] = " ".join(written[place].split())
    countries = affiliation_countries(record, names)
    kept: dict[str, str | None] = {}
    for index, name in enumerate(names):
        if name and name not in kept:
            kept[name] = countries.get(index)
    return list(kept), list(kept.values())


def affiliation_countries(record: dict[str, object], names: list[str]) -> dict[int, str]:
    """Affiliation index -> country, read where the country index has the affiliation
    index's slots (the same number of authors, and of affiliations each); where it skips the
    authors with no affiliation, from the others. An affiliation given two countries (the
    fields do not agree) has none."""
    index_text = record.get("aff_unique_index")
    country_text = record.get("aff_country_unique_index")
    if not index_text or not country_text:
        return {}
    country_names = unique_names(record.get("aff_country_unique"))
    if not any(country_names):
        return {}
    if isinstance(index_text, str) and isinstance(country_text, str):
        pairs = aligned_pairs(index_text, country_text)
        if pairs is not None:
            return countries_of(country_names, pairs)
    slots = index_slots(index_text)
    country_slots = index_slots(country_text)
    if not slots or not country_slots:
        return {}

    def shape(slots: list[list[int]]) -> list[int]:
        return [len(slot) for slot in slots]

    if shape(slots) != shape(country_slots):
        slots = [slot for slot in slots if any(i < len(names) and names[i] for i in slot)]
        if shape(slots) != shape(country_slots):
            return {}
    return countries_of(
        country_names,
        (
            pair
            for indexes, country_indexes in zip(slots, country_slots)
            for pair in zip(indexes, country_indexes)
        ),
    )


# the index fields of most records are a few shapes ("0;0;0", "0;1;1"): each read once while
# among the last this many
@functools.lru_cache(maxsize=4096)
def aligned_pairs(index_text: str, country_text: str) -> tuple[tuple[int, int], ...] | None:
    """(affiliation index, country index) of every place of two index fields with the same
    slots (most records), else None."""
    if not (
        INDEX_TEXT.fullmatch(index_text)
        and INDEX_TEXT.fullmatch(country_text)
        and index_text.translate(DIGITS) == country_text.translate(DIGITS)
    ):
        return None
    pairs = zip(INDEX_SEPARATORS.split(index_text), INDEX_SEPARATORS.split(country_text))
    return tuple((int(index), int(country)) for index, country in pairs if index and country)


def countries_of(names: list[str], pairs: Iterable[tuple[int, int]]) -> dict[int, str]:
    """Affiliation index -> country name of (affiliation index, country index) pairs; an
    affiliation given two countries has none."""
    countries: dict[int, str] = {}
    conflicting = set()
    for index, country_index in pairs:
        country = names[country_index] if country_index < len(names) else ""
        if country and countries.setdefault(index, country) != country:
            conflicting.add(index)
    return {index: country for index, country in countries.items() if index not in conflicting}


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
    abstract = abstract_value(record.get("abstract"))
    title = text_value("title", record.get("title"))
    require_title_or_abstract(title, abstract)
    author = text_value("author", record.get("author"))
    written = split_author_field(author)
    slots = person_slots("author", written)
    affiliations, countries = read_affiliations(record)
    track = text_value("track", record.get("track"))
    if track and track.lower() == MAIN_TRACK:
        track = None
    url = text_value("site", record.get("site"))
    # the id is what tells duplicates apart; a number there is no reason to lose the paper
    paper_id = record.get("id")
    key = paper_id.strip() if isinstance(paper_id, str) else None
    identifiers = read_identifiers(record, url)
    rating, rating_count = read_rating(record)
    citations = count_value(record.get("gs_citation"))
    return key or url, Entry(
        path=name,
        line=line,
        abstract=abstract,
        authors=[written for _, written in slots],
        author_ids=paperlists_author_ids(record, slots, len(written)),
        truncated=False,
        affiliations=affiliations,
        title=title,
        url=url,
        status=text_value("status", record.get("status")),
        track=text_value("primary_area", record.get("primary_area")) or track,
        keywords=keyword_list("keywords", record.get("keywords"), SEPARATOR),
        links=read_links(record, identifiers),
        affiliation_countries=countries,
        tldr=optional_text(record.get("tldr")),
        citations=citations,
        citations_source=CITATIONS_SOURCE if citations is not None else None,
        rating=rating,
        rating_count=rating_count,
        **identifiers,
    )


def parse_paperlists(name: str, path: str | os.PathLike[str]) -> Iterator[Entry | Problem]:
    """Yield an Entry or a Problem for every record of a Paper Copilot file."""
    return read_dump(name, path, map_paperlists_record)
