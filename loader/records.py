"""The two things a parser yields: an entry (one paper as one source gave it) or a problem."""

import operator
from dataclasses import dataclass, field, fields
from typing import Any, TypedDict


@dataclass
class Entry:
    path: str
    line: int
    abstract: str
    authors: list[str]
    truncated: bool
    track: str | None = None
    affiliations: list[str] = field(default_factory=list)
    title: str | None = None
    url: str | None = None
    # profile owner: an author of the paper even when the cut-short list hides them
    owner: str | None = None
    # where and when the paper appeared (JSON Lines keys, or sources.yml for text pages)
    venue: str | None = None
    year: int | None = None
    status: str | None = None
    # identifiers that mark two entries as versions of one paper (JSON Lines keys or the url)
    arxiv_id: str | None = None
    doi: str | None = None
    openreview_id: str | None = None

    def __reduce__(self) -> tuple[type["Entry"], tuple[Any, ...]]:
        # a parsing worker sends every entry to the build: sent as the constructor's arguments
        # it unpickles faster than a dataclass's default (its __dict__ sent and rebuilt)
        return Entry, ENTRY_FIELDS(self)


ENTRY_FIELDS = operator.attrgetter(*(f.name for f in fields(Entry)))


class EntryFields(TypedDict, total=False):
    """Fields of an Entry that a text format passes on as keyword arguments (its page's
    tracks are read from the page itself)."""

    title: str | None
    url: str | None
    owner: str | None
    venue: str | None
    year: int | None
    status: str | None
    arxiv_id: str | None
    doi: str | None
    openreview_id: str | None


@dataclass(frozen=True)
class Problem:
    path: str
    line: int
    message: str

    def __str__(self) -> str:
        return f"{self.path}:{self.line}: {self.message}"
