"""OpenReview notes as its API gives them: API v1 (`content.title` is the title) or v2
(`content.title.value`), in a JSON array, one note a line, or the API's answer
`{"notes": [...], "count": N}`; `content.keywords` are the authors' keywords.

Venue, year and status come from the note's `venue` ("ICLR 2024 oral", "Submitted to ICLR
2024", "Withdrawn Submission") and `venueid` ("ICLR.cc/2024/Conference/Withdrawn_Submission"),
else from its invitation or domain. Rejected and withdrawn submissions are kept, with the venue
and year they were submitted to. Replies (reviews, comments, decisions) are no papers and are
skipped.

Kept besides: the PDF (`content.pdf`, a path on openreview.net), the one-sentence summary
(`TL;DR`, `TLDR` or `one-sentence_summary`) and a code link (`code`, else the Markdown of
`community_implementations`), with the forum as the OpenReview link.
"""

import os
import re
from collections.abc import Iterator

from loader.read.dumps import (
    UNSTORABLE,
    RecordProblem,
    json_type,
    keyword_list,
    person_names,
    read_dump,
    required_abstract,
    text_value,
    venue_name,
)
from loader.read.jsonl import OPENREVIEW_ID
from loader.read.links import link_url, ordered_links
from loader.records import Entry, Problem

FORUM_URL = "https://openreview.net/forum?id={}"
SITE = "https://openreview.net"
# where notes of different venues and years put a one-sentence summary, and a code link
SUMMARY_KEYS = ("TL;DR", "TLDR", "one-sentence_summary")
CODE_KEYS = ("code", "community_implementations")
# "ICLR 2024 oral", "NeurIPS 2023 spotlight", "Submitted to ICLR 2024", "ICLR 2023 notable top 5%"
VENUE_TEXT = re.compile(
    r"^(?:(?P<submitted>submitted\s+to)\s+)?(?P<venue>.*?)\s*(?P<year>\b(?:19|20)\d\d\b)\s*(?P<rest>.*)$",
    re.IGNORECASE | re.DOTALL,
)
# "ICLR.cc/2024/Conference/Withdrawn_Submission", "ICLR.cc/2018/Conference/-/Blind_Submission"
GROUP_ID = re.compile(
    r"^(?P<venue>[^/.]+)[^/]*/(?P<year>(?:19|20)\d\d)/(?P<kind>[^/]+)(?:/(?P<rest>.*))?$"
)
# what the venue id or the venue text says of a decision, in the words the other dumps use
DECISIONS = (
    (re.compile(r"desk[ _]reject", re.IGNORECASE), "Desk Rejected"),
    (re.compile(r"withdraw", re.IGNORECASE), "Withdrawn"),
    (re.compile(r"rejected[ _]submission", re.IGNORECASE), "Reject"),
    (re.compile(r"(?:blind[ _])?submission$", re.IGNORECASE), "Submitted"),
)
WORKSHOP = "Workshop"
# a venue text's rest that names the track, not the decision: "ICLR 2023 Conference ..."
TRACK_WORDS = re.compile(r"^(?:conference|main track)\s*", re.IGNORECASE)


def content_value(content: dict[str, object], key: str) -> object:
    """content.key (API v1) or content.key.value (API v2)."""
    value = content.get(key)
    if isinstance(value, dict) and "value" in value:
        return value["value"]
    return value


def decision(text: str | None) -> str | None:
    for pattern, status in DECISIONS:
        if text and pattern.search(text):
            return status
    return None


def read_group_id(text: str | None) -> tuple[str | None, int | None, str | None]:
    """(venue, year, status) of a venue id or invitation: "ICLR.cc/2024/Conference/..." ."""
    match = GROUP_ID.match(text.split("/-/")[0] if text else "")
    if not match:
        return None, None, None
    status = decision(match["rest"]) or (WORKSHOP if match["kind"] == WORKSHOP else None)
    return venue_name(match["venue"]), int(match["year"]), status


def read_venue_text(text: str | None) -> tuple[str | None, int | None, str | None]:
    """(venue, year, status) of a venue text: "ICLR 2024 oral" -> ("ICLR", 2024, "Oral")."""
    if not text:
        return None, None, None
    match = VENUE_TEXT.match(text)
    if not match:
        return None, None, decision(text)
    rest = TRACK_WORDS.sub("", match["rest"].strip())
    status: str | None
    if match["submitted"]:
        status = "Submitted"
    else:
        status = decision(rest) or (rest[:1].upper() + rest[1:] if rest else None)
    venue = match["venue"].strip()
    return (venue_name(venue) if venue.isalpha() else venue) or None, int(match["year"]), status


def venue_year_status(
    note: dict[str, object], content: dict[str, object]
) -> tuple[str | None, int | None, str | None]:
    """The venue text first, then the venue id, then where the note was submitted; each fills
    what the ones before left empty. A decision the venue id spells out (Rejected_Submission)
    wins over the venue text, which says only "Submitted to ..." for a rejected paper."""
    venue_text = text_value("venue", content_value(content, "venue"))
    venue_id = text_value("venueid", content_value(content, "venueid"))
    invitations = note.get("invitations")
    invitation = note.get("invitation") or (
        invitations[0] if isinstance(invitations, list) and invitations else None
    )
    places = [
        read_venue_text(venue_text),
        read_group_id(venue_id),
        read_group_id(text_value("domain", note.get("domain"))),
        read_group_id(invitation if isinstance(invitation, str) else None),
    ]
    venue = next((p[0] for p in places if p[0]), None)
    year = next((p[1] for p in places if p[1]), None)
    status = decision(venue_id) or next((p[2] for p in places if p[2]), None)
    return venue, year, status


def note_id(note: dict[str, object]) -> str:
    """The paper's OpenReview id: its forum, which is the submission note's own id."""
    for key in ("forum", "id"):
        value = note.get(key)
        if value is None:
            continue
        if not isinstance(value, str) or not OPENREVIEW_ID.match(value):
            raise RecordProblem(f"{key} must be an OpenReview id, not {json_type(value)}")
        return value
    raise RecordProblem("note has no id")


def optional_text(content: dict[str, object], key: str) -> str | None:
    """A text the paper can do without: None where absent, blank or not a string."""
    value = content_value(content, key)
    if not isinstance(value, str) or UNSTORABLE.search(value):
        return None
    return value.strip() or None


def note_links(content: dict[str, object], paper_id: str) -> dict[str, str]:
    pdf = optional_text(content, "pdf")
    code = (
        link_url("code", text, SITE) for key in CODE_KEYS if (text := optional_text(content, key))
    )
    return ordered_links(
        [
            ("pdf", link_url("pdf", pdf, SITE) if pdf else None),
            ("code", next((url for url in code if url), None)),
            ("openreview", FORUM_URL.format(paper_id)),
        ]
    )


def map_note(name: str, line: int, note: dict[str, object]) -> tuple[str, Entry | None]:
    content = note.get("content")
    if not isinstance(content, dict):
        raise RecordProblem(f"a note's content must be an object, not {json_type(content)}")
    paper_id = note_id(note)
    if note.get("replyto") or paper_id != note.get("id", paper_id):
        return paper_id, None  # a review, comment or decision on the paper
    abstract = required_abstract(content_value(content, "abstract"))
    authors = content_value(content, "authors")
    if not isinstance(authors, list):
        raise RecordProblem(f"authors must be a list of names, not {json_type(authors)}")
    venue, year, status = venue_year_status(note, content)
    return paper_id, Entry(
        path=name,
        line=line,
        abstract=abstract,
        authors=person_names("authors", authors),
        truncated=False,
        title=text_value("title", content_value(content, "title")),
        url=FORUM_URL.format(paper_id),
        venue=venue,
        year=year,
        status=status,
        openreview_id=paper_id,
        keywords=keyword_list("keywords", content_value(content, "keywords"), ","),
        links=note_links(content, paper_id),
        tldr=next(filter(None, (optional_text(content, key) for key in SUMMARY_KEYS)), None),
    )


def parse_openreview(name: str, path: str | os.PathLike[str]) -> Iterator[Entry | Problem]:
    """Yield an Entry or a Problem for every submission note of an OpenReview export."""
    return read_dump(name, path, map_note)
