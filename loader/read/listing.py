"""Conference listing pages (first line 论文检索): [track] / authors / abstract entries."""

import functools
import os
from collections.abc import Iterable, Iterator

from loader.read.entries import LineShape, assemble_entries
from loader.read.lines import LISTING_MARKER, MAX_TRACK_LENGTH, split_authors
from loader.records import Entry, Problem
from loader.rules.normalize import TRACK_SEPARATOR


def classify_listing_line(line: str) -> LineShape:
    """('track', text) | ('authors', (names, truncated, [])) | ('text', line).

    An area-only track ("Reinforcement Learning") has the shape of a one-person authors line:
    its position tells them apart (entries.is_area_only_track).
    """
    if TRACK_SEPARATOR in line and len(line) <= MAX_TRACK_LENGTH and is_track(line):
        return "track", line
    authors = split_authors(line)
    if authors is not None:
        names, truncated = authors
        return "authors", (names, truncated, [])
    return "text", line


# the same few tracks head most entries of a page: each is read once, not as a names line
# every time, and the lines kept are short
@functools.lru_cache(maxsize=4096)
def is_track(line: str) -> bool:
    """An "Area · Subarea" line, not a names line that holds the separator."""
    area, _, subarea = line.partition(TRACK_SEPARATOR)
    return bool(area.strip() and subarea.strip()) and split_authors(line) is None


def parse_listing(path: str | os.PathLike[str], lines: Iterable[str]) -> Iterator[Entry | Problem]:
    """Yield an Entry or a Problem for every entry of a listing page."""
    yield from assemble_entries(path, skip_marker(lines), classify_listing_line, area_tracks=True)


def skip_marker(lines: Iterable[str]) -> list[str]:
    """Blank out the 论文检索 header so line numbers stay true."""
    lines = list(lines)
    for index, line in enumerate(lines):
        if line.strip():
            if line.strip() == LISTING_MARKER:
                lines[index] = ""
            break
    return lines
