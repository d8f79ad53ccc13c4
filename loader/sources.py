"""Find input files, detect each one's format and hand it to its parser."""

import hashlib
import os
from dataclasses import dataclass
from pathlib import Path

from .parse_jsonl import parse_jsonl
from .parse_listing import parse_listing
from .parse_profile import find_owner, parse_profile
from .records import Problem
from .text import LISTING_MARKER, read_text

PARSERS = {"listing": parse_listing, "profile": parse_profile, "jsonl": parse_jsonl}
FORMATS = tuple(PARSERS)


@dataclass
class Source:
    path: str
    format: str | None
    sha256: str


def discover(paths):
    """Every non-hidden file under the given files and folders, sorted so that the build
    does not depend on the order paths were given in."""
    found = set()
    for path in paths:
        path = Path(path)
        if path.is_dir():
            for root, dirs, files in os.walk(path):
                dirs[:] = [d for d in dirs if not d.startswith(".")]
                found.update(Path(root, f) for f in files if not f.startswith("."))
        else:
            found.add(path)
    return sorted(found, key=str)


def detect_format(lines):
    first = next((line.strip() for line in lines if line.strip()), "")
    if first == LISTING_MARKER:
        return "listing"
    if first.startswith("{"):
        return "jsonl"
    if find_owner(lines) is not None:
        return "profile"
    return None


def read_source(path, forced_format=None):
    """Parse one file. Returns (Source, iterator of Entry | Problem)."""
    name = str(path)
    try:
        with open(path, "rb") as fp:
            digest = hashlib.file_digest(fp, "sha256").hexdigest()
        lines, problem = read_text(path)
    except OSError as error:
        return Source(name, None, ""), iter([Problem(name, 1, f"cannot read: {error.strerror}")])
    if problem:
        return Source(name, None, digest), iter([problem])
    format = forced_format or detect_format(lines)
    if format is None:
        message = (
            "unknown format: expected a listing page (first line 论文检索), "
            "an author profile page (first line a name) or JSON Lines"
        )
        return Source(name, None, digest), iter([Problem(name, 1, message)])
    return Source(name, format, digest), PARSERS[format](name, lines)
