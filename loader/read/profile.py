"""Author profile pages: owner name, then 'A, B et al. · slug1, slug2' / abstract entries."""

import os
import re
from collections.abc import Iterable, Iterator

from loader.read.entries import LineShape, assemble_entries
from loader.read.lines import Block, split_authors, split_blocks
from loader.records import Entry, Problem
from loader.rules.normalize import TRACK_SEPARATOR

SLUG = re.compile(r"^[a-z0-9][a-z0-9._\-]*$", re.IGNORECASE)


def classify_profile_line(line: str) -> LineShape:
    """('authors', (names, truncated, slugs)) | ('text', line)."""
    names_part, separator, slugs_part = line.rpartition(TRACK_SEPARATOR)
    if not separator:
        names_part, slugs_part = line, ""
    authors = split_authors(names_part)
    slugs = [slug.strip() for slug in slugs_part.split(",")] if slugs_part.strip() else []
    if authors is not None and all(SLUG.match(slug) for slug in slugs):
        names, truncated = authors
        if separator and not slugs:
            return "text", line
        return "authors", (names, truncated, slugs)
    return "text", line


def find_owner(lines: Iterable[str]) -> Block | None:
    """The profile owner: the first block's only line, if it is one person's name."""
    first = next(split_blocks(lines), None)
    if first is None or len(first.lines) != 1:
        return None
    parsed = split_authors(first.lines[0])
    if parsed is None or parsed[1] or len(parsed[0]) != 1:
        return None
    return first


def parse_profile(path: str | os.PathLike[str], lines: Iterable[str]) -> Iterator[Entry | Problem]:
    """Yield an Entry or a Problem for every entry of a profile page."""
    lines = list(lines)
    first = find_owner(lines)
    if first is None:
        yield Problem(str(path), 1, "profile page must start with the owner's name")
        return
    owner_line = split_authors(first.lines[0])
    assert owner_line is not None  # find_owner read it as one name
    owner = owner_line[0][0]
    lines[first.line - 1] = ""
    yield from assemble_entries(path, lines, classify_profile_line, owner=owner)
