"""JSON Lines: one object a line with abstract, authors and optional title/track/affiliations/url."""

import json
import re

from .records import Entry, Problem
from .text import NAME_SEPARATOR, line_problem, strip_truncation

OPTIONAL_TEXT = ("title", "track", "url")
# JSON escapes can spell what a UTF-8 line cannot hold: "\ud800" (SQLite refuses to store a
# lone surrogate) and "\u0000" (the text formats reject NUL too)
STORED_FIELDS = ("abstract", "authors", "affiliations", *OPTIONAL_TEXT)
UNSTORABLE = re.compile(r"[\ud800-\udfff\0]")


def parse_names(value):
    """A list of names, or one comma-separated string that may end in 'et al.' / '等'."""
    if isinstance(value, str):
        value, truncated = strip_truncation(value)
        value = NAME_SEPARATOR.split(value)
    else:
        truncated = False
    if not isinstance(value, list) or not all(isinstance(v, str) for v in value):
        return None
    names = [" ".join(v.split()) for v in value if v.strip()]
    return (names, truncated) if names else None


def parse_jsonl_line(path, number, line):
    try:
        record = json.loads(line)
    except ValueError as error:
        return Problem(path, number, f"invalid JSON: {error}")
    except RecursionError:
        return Problem(path, number, "invalid JSON: nested too deeply")
    if not isinstance(record, dict):
        return Problem(path, number, "a JSON Lines record must be an object")
    for key in STORED_FIELDS:
        value = record.get(key)
        for text in value if isinstance(value, list) else [value]:
            if isinstance(text, str) and UNSTORABLE.search(text):
                return Problem(path, number, f"{key} contains a NUL or a lone surrogate escape")
    abstract = record.get("abstract")
    if not isinstance(abstract, str) or not abstract.strip():
        return Problem(path, number, "record has no abstract")
    authors = parse_names(record.get("authors"))
    if authors is None:
        return Problem(path, number, "record has no authors (a list or a comma-separated string)")
    affiliations = record.get("affiliations") or []
    if isinstance(affiliations, str):
        affiliations = affiliations.split(",")
    if not isinstance(affiliations, list) or not all(isinstance(a, str) for a in affiliations):
        return Problem(path, number, "affiliations must be a list of slugs")
    fields = {}
    for key in OPTIONAL_TEXT:
        value = record.get(key)
        if value is not None and not isinstance(value, str):
            return Problem(path, number, f"{key} must be a string")
        fields[key] = value.strip() if value and value.strip() else None
    names, truncated = authors
    return Entry(
        path=path,
        line=number,
        abstract=abstract.strip(),
        authors=names,
        truncated=truncated or bool(record.get("authors_truncated")),
        affiliations=[a.strip() for a in affiliations if a.strip()],
        **fields,
    )


def parse_jsonl(path, lines):
    """Yield an Entry or a Problem for every non-blank line."""
    path = str(path)
    for number, line in enumerate(lines, start=1):
        if not line.strip():
            continue
        yield line_problem(path, number, line) or parse_jsonl_line(path, number, line)
