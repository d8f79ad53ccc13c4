"""Every line of real text this repository holds, for the equivalence tests of the build's fast
paths: each fast path must give what the plain reading it replaces gives on all of them.

The lines come from tests/fixtures/ (the real samples of tests/fixtures/real/ among them) and
seeds/; from JSON and JSON Lines files, every string value too."""

import functools
import json
from pathlib import Path

from loader.rules import markup

ROOT = Path(__file__).resolve().parent.parent
TEXT_SUFFIXES = {".txt", ".jsonl", ".json", ".md"}


def strings_in(value):
    if isinstance(value, str):
        yield value
    elif isinstance(value, dict):
        for item in value.values():
            yield from strings_in(item)
    elif isinstance(value, list):
        for item in value:
            yield from strings_in(item)


def real_texts():
    """Every line of every fixture and seed file, and every string of the JSON ones."""
    texts = set()
    folders = [ROOT / "tests" / "fixtures", ROOT / "seeds"]
    for path in sorted(p for folder in folders for p in folder.rglob("*") if p.is_file()):
        if path.suffix not in TEXT_SUFFIXES:
            continue
        for line in path.read_text(encoding="utf-8", errors="replace").splitlines():
            texts.add(line)
            if path.suffix in (".jsonl", ".json"):
                try:
                    texts.update(strings_in(json.loads(line)))
                except ValueError:
                    pass
    return sorted(texts)


REAL_TEXTS = real_texts()


@functools.cache
def plain_texts():
    """The plain text (loader.rules.markup.plain_text) of every real text, read once."""
    return [markup.plain_text(source) for source in REAL_TEXTS]


@functools.cache
def plain_share(share):
    """plain_texts()[::share], reading only the texts it keeps (once a process)."""
    if share == 1:
        return plain_texts()
    return [markup.plain_text(source) for source in REAL_TEXTS[::share]]
