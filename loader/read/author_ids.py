"""Authors' ids as the dumps give them, read into Entry.author_ids (aligned with the names).

Three kinds name a person: an OpenReview profile id (`~Yang_Liu3`), an ORCID
(`0000-0002-1825-0097`) and a DBLP pid (`123/4567`). A value that is not one of its kind is
left out, never a problem: the paper and the name stay. Left out on purpose:
- an e-mail address in OpenReview's `authorids` (older venues: ICLR 2013-2018, CoRL,
  AISTATS): an address is a mailbox, which people change and share, not a person's id;
- IEEE Xplore author numbers (`/37089406983`, ICRA and IROS in Paper Copilot's `authorids`):
  Xplore gives one person several numbers, and "one name, two ids" would split them;
- ACL Anthology person pages (`/j/jingyi-zhang/`): the page's name is the name itself for
  everyone not disambiguated by hand, so it tells no two people apart.
"""

import re
from collections.abc import Mapping, Sequence

from loader.records import AuthorIds

# the kinds in the order an author's ids are kept (AuthorIds) and shown
KINDS = ("openreview", "orcid", "dblp")
OPENREVIEW_PROFILE = re.compile(r"^~[^\s~;,/@]+$")
ORCID = re.compile(r"^(?:https?://(?:www\.)?orcid\.org/)?(\d{4}-\d{4}-\d{4}-\d{3}[\dX])/?$")
# "99/2825", "295/8991.html", "https://dblp.uni-trier.de/pid/76/744-1", "h/JohnDoe"
DBLP_PID = re.compile(
    r"^(?:https?://dblp(?:\.uni-trier)?\.(?:org|de)/pid/)?"
    r"([0-9a-z]{1,4}/[0-9A-Za-z][0-9A-Za-z_\-]*?)(?:\.html)?/?$"
)


def id_value(kind: str, text: str) -> str | None:
    """A person's id of this kind as the catalog keeps it, or None when `text` is no such id."""
    text = text.strip()
    if not text.isprintable():  # a NUL or a lone surrogate: no id, and SQLite refuses it
        return None
    if kind == "openreview":
        return text if text[:1] == "~" and OPENREVIEW_PROFILE.match(text) else None
    if kind == "orcid":
        match = ORCID.match(text.upper() if text[-1:] in "xX" else text)
        return match[1] if match else None
    if kind == "dblp":
        match = DBLP_PID.match(text)
        return match[1] if match else None
    return None


def ids_of(given: Mapping[str, object]) -> dict[str, str]:
    """The ids of one author from {kind: text}: the kinds known, the values that are ids."""
    ids = {}
    for kind in KINDS:
        text = given.get(kind)
        if isinstance(text, str) and text.strip():
            value = id_value(kind, text)
            if value:
                ids[kind] = value
    return ids


def aligned_ids(
    slots: Sequence[int], lists: Mapping[str, Sequence[object] | None]
) -> list[dict[str, str]]:
    """Each kept name's ids, from lists of one id a slot ({kind: [id or blank, ...]}), `slots`
    the kept names' places in the source's list. A list of another length than the names'
    is not read: its ids would go to the wrong people. [] when no name has an id."""
    width = max(slots, default=-1) + 1
    usable = {
        kind: values
        for kind, values in lists.items()
        if values is not None and len(values) >= width and kind in KINDS
    }
    if not usable:
        return []
    found: list[dict[str, str]] = [{} for _ in slots]
    anything = False
    for kind, values in usable.items():
        for index, slot in enumerate(slots):
            text = values[slot]
            # most slots of ORCID and DBLP lists are blank
            if isinstance(text, str) and text and not text.isspace():
                value = id_value(kind, text)
                if value:
                    found[index][kind] = value
                    anything = True
    return found if anything else []


def split_ids(value: object, names: int) -> list[str] | None:
    """A ";"-joined list of ids (Paper Copilot), blanks kept; None unless it has one slot a
    name of the source's list (`names` slots)."""
    if not isinstance(value, str) or not value.strip():
        return None
    parts = value.split(";")
    return parts if len(parts) == names else None


def as_author_ids(ids: Sequence[Mapping[str, str]]) -> tuple[AuthorIds, ...]:
    """Entry.author_ids as PreparedEntry keeps them: () when no author has an id."""
    if not any(ids):
        return ()
    return tuple(tuple((kind, one[kind]) for kind in KINDS if kind in one) for one in ids)
