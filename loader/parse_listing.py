"""Conference listing pages (first line 论文检索): [track] / authors / abstract entries."""

from .entries import assemble_entries
from .normalize import TRACK_SEPARATOR
from .text import LISTING_MARKER, MAX_TRACK_LENGTH, split_authors


def classify_listing_line(line):
    """('track', text) | ('authors', (names, truncated, [])) | ('text', line).

    An area-only track ("Reinforcement Learning") has the shape of a one-person authors line:
    its position tells them apart (entries.is_area_only_track).
    """
    if TRACK_SEPARATOR in line and len(line) <= MAX_TRACK_LENGTH:
        area, _, subarea = line.partition(TRACK_SEPARATOR)
        if area.strip() and subarea.strip() and split_authors(line) is None:
            return "track", line
    authors = split_authors(line)
    if authors is not None:
        names, truncated = authors
        return "authors", (names, truncated, [])
    return "text", line


def parse_listing(path, lines):
    """Yield an Entry or a Problem for every entry of a listing page."""
    yield from assemble_entries(path, skip_marker(lines), classify_listing_line, area_tracks=True)


def skip_marker(lines):
    """Blank out the 论文检索 header so line numbers stay true."""
    lines = list(lines)
    for index, line in enumerate(lines):
        if line.strip():
            if line.strip() == LISTING_MARKER:
                lines[index] = ""
            break
    return lines
