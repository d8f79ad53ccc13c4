"""What the readers of public dumps share (paperlists.py, arxiv_snapshot.py, openreview.py):
the loop over a file's records, their fields' types, one paper a duplicated id, venue names.

A reader maps one JSON object to an Entry (with the key that identifies it in its dump) or
raises RecordProblem (no title and no abstract, no authors, a field of the wrong type); a
record that is no paper (an OpenReview review) maps to None.
"""

import hashlib
import os
import re
from collections.abc import Callable, Iterable, Iterator

from loader.read.json_stream import JsonRecord, read_json_records
from loader.read.jsonl import NO_TITLE_NO_ABSTRACT
from loader.read.lines import explicit_name
from loader.records import Entry, Problem

# what SQLite cannot store (a lone surrogate: an undecodable byte or a "\ud800" escape) or the
# text formats refuse (NUL)
UNSTORABLE = re.compile(r"[\ud800-\udfff\0]")
# names as the venues write them, for venue letters read from a file name or a group id;
# any other is written in capitals (iclr -> ICLR)
VENUE_NAMES = {
    "nips": "NeurIPS",
    "neurips": "NeurIPS",
    "corl": "CoRL",
    "automl": "AutoML",
    "siggraphasia": "SIGGRAPH Asia",
    "acmmm": "ACM MM",
    "ai4x": "AI4X",
}
JSON_TYPES = {dict: "an object", list: "an array", str: "a string", bool: "a boolean"}

MapRecord = Callable[[str, int, dict[str, object]], tuple[str | None, Entry | None]]


class RecordProblem(Exception):
    """A record that cannot be a paper, and why."""

    def __init__(self, message: str) -> None:
        super().__init__(message)
        self.message = message


def json_type(value: object) -> str:
    if value is None:
        return "null"
    return JSON_TYPES.get(type(value), "a number")


def read_dump(
    name: str, path: str | os.PathLike[str], map_record: MapRecord
) -> Iterator[Entry | Problem]:
    """Every record of the dump at `path` as an Entry or a Problem, a record whose id came
    before skipped: duplicates inside one dump are one paper (the first)."""
    try:
        with open(path, "rb") as fp:
            yield from map_records(name, read_json_records(name, fp), map_record)
    except OSError as error:  # the file went away or broke after its format was told
        yield Problem(name, 1, f"cannot read: {error.strerror or error}")


def record_key(key: str) -> int:
    """A record's id in its dump as a 64-bit number: an int where the id's text would cost
    several times as much (a 2.7M-paper snapshot keeps one a record)."""
    digest = hashlib.blake2b(key.encode("utf-8", "surrogatepass"), digest_size=8).digest()
    return int.from_bytes(digest, "big")


def map_records(
    name: str, records: Iterable[JsonRecord | Problem], map_record: MapRecord
) -> Iterator[Entry | Problem]:
    """Entries (each with its record_key) and problems of a dump's records; a record whose
    id came before is skipped."""
    seen: set[int] = set()
    for item in records:
        if isinstance(item, Problem):
            yield item
            continue
        result = map_json_record(name, item, map_record)
        if isinstance(result, tuple):
            key, entry = result
            if key is not None:
                entry.record_key = record_key(key)
                if entry.record_key in seen:
                    continue
                seen.add(entry.record_key)
            yield entry
        elif result is not None:
            yield result


def map_json_record(
    name: str, item: JsonRecord, map_record: MapRecord
) -> tuple[str | None, Entry] | Problem | None:
    if not isinstance(item.value, dict):
        message = f"a record must be a JSON object, not {json_type(item.value)}"
        return Problem(name, item.line, message)
    try:
        key, entry = map_record(name, item.line, item.value)
    except RecordProblem as problem:
        return Problem(name, item.line, problem.message)
    return (key, entry) if entry is not None else None


def text_value(key: str, value: object) -> str | None:
    """A string field, stripped; None when absent, null or blank."""
    if value is None:
        return None
    if not isinstance(value, str):
        raise RecordProblem(f"{key} must be a string, not {json_type(value)}")
    if UNSTORABLE.search(value):
        raise RecordProblem(f"{key} contains invalid UTF-8, a NUL or a lone surrogate escape")
    return value.strip() or None


def abstract_value(value: object) -> str:
    """The abstract, or "" where the record gives none: a title and authors are a paper
    (DBLP and several venues' lists give no abstracts)."""
    return text_value("abstract", value) or ""


def require_title_or_abstract(title: str | None, abstract: str) -> None:
    """A record with neither a title nor an abstract cannot be told from any other."""
    if not title and not abstract:
        raise RecordProblem(NO_TITLE_NO_ABSTRACT)


def person_names(key: str, written: Iterable[object]) -> list[str]:
    """Names in order, empty slots and slots with no letter skipped; kept even when they do
    not look like a name (the dump says they are), tidied as the text formats' names are."""
    return [name for _, name in person_slots(key, written)]


def person_slots(key: str, written: Iterable[object]) -> list[tuple[int, str]]:
    """(slot, name) of person_names' names: the slot tells which id of a list given beside
    the names (loader.read.author_ids) is the name's."""
    names = []
    for slot, value in enumerate(written):
        text = text_value(key, value)
        name = explicit_name(text) if text else None
        if name:
            names.append((slot, name))
    if not names:
        raise RecordProblem("record has no authors")
    return names


def unique(values: Iterable[str]) -> list[str]:
    return list(dict.fromkeys(values))


def keyword_list(key: str, value: object, separator: str) -> list[str]:
    """Keywords as a dump gives them: a list of strings, or one string of them joined by
    `separator`; each with its spacing tidied, one of each (case aside), in the given order."""
    if value is None:
        return []
    if isinstance(value, str):
        value = value.split(separator)
    if not isinstance(value, list):
        raise RecordProblem(f"{key} must be a list of strings, not {json_type(value)}")
    keywords: dict[str, str] = {}
    for item in value:
        text = text_value(key, item)
        if text:
            text = " ".join(text.split())
            keywords.setdefault(text.casefold(), text)
    return list(keywords.values())


def venue_name(letters: str) -> str:
    """iclr -> ICLR, nips -> NeurIPS, corl -> CoRL: a venue's letters as the venue writes them."""
    return VENUE_NAMES.get(letters.lower(), letters.upper())
