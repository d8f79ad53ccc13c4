"""A catalog of more than 10,000 papers made of the real records under tests/fixtures/.

The committed real samples (real/, dumps/, search/: see their README and SOURCE files) hold
about 800 distinct papers, and an export's cost and its limits (SQLite's bound variables,
batches of 1,000, streaming) only show at thousands of matches. So each real record is written
again COPIES times, deterministically: the same real abstract, authors, venue, year, status,
track and affiliations, so a row's text costs what a real paper's does, and the full-text
index holds real words in their real frequencies.

What a copy changes, and why:
- its title gets ` (copy N)` and its abstract's last sentence ends in ` (copy N)`, inside its
  full stop: the merge policy (loader/rules/merge.py) makes entries with the same abstract and
  a shared author one paper, whatever their titles, so only a different abstract keeps the
  copies apart (distinct ids). A ` (copy N)` after the full stop would be a sentence of its own,
  the one sentence the copies of an untitled record do not share, and so their labels' second
  part: every copy N of every untitled record labelled "(copy N)", shared again (labels.py);
- its url and identifiers (arXiv id, DOI, OpenReview id) are left out: a shared identifier
  would make the copies one paper too;
- a profile page's owner is not written (JSON Lines has no owner): authors are the listed ones.

Copies make every word of the samples one that at least COPIES papers hold, where a real
catalog has typos found in one or two papers. So the two real abstracts with a typo in
SCARCE are copied fewer times: `disribution` is in 2 papers (fewer than the 3 that /search's
suggestions ask of a word), `classfication` in 3.

Built by the real loader (`build_catalog`) from JSON Lines written in a temporary folder,
removed once the catalog is built.
"""

import fcntl
import json
import os
import shutil
from collections.abc import Iterator
from pathlib import Path

import pytest

from loader.build.catalog import build_catalog
from loader.read.sources import plan_inputs, read_source
from loader.records import Entry
from loader.rules.merge import letters_and_digits

FIXTURES = Path(__file__).resolve().parent / "fixtures"
# the real samples; not the hand-made hostile inputs beside them
REAL_FOLDERS = (
    FIXTURES / "real" / "sample",
    FIXTURES / "real" / "origin",
    FIXTURES / "real" / "merge",
    FIXTURES / "real" / "parse",
    FIXTURES / "dumps" / "paperlists",
    FIXTURES / "dumps" / "arxiv",
    FIXTURES / "dumps" / "openreview",
    FIXTURES / "search",
)
# 14 copies of the ~800 distinct real abstracts: more than 10,000 papers, and more than
# 10,000 of them hold `the` (tests/test_exports_real_size.py checks both)
COPIES = 14
# a typo of a real abstract -> how many copies of that abstract are written
SCARCE = {"disribution": 2, "classfication": 3}


def real_entries() -> list[Entry]:
    """Every entry the loader reads from the real samples, one per distinct abstract (up to
    case, punctuation and spacing), in the order of the files and their lines."""
    entries: dict[str, Entry] = {}
    for input_file in plan_inputs(REAL_FOLDERS):
        for item in read_source(input_file)[1]:
            if isinstance(item, Entry):
                entries.setdefault(letters_and_digits(item.abstract), item)
    return list(entries.values())


def in_last_sentence(text: str, suffix: str) -> str:
    """text with suffix at the end of its last sentence, before its closing mark."""
    text = text.rstrip()
    if text[-1:] in (".", "!", "?"):
        return text[:-1] + suffix + text[-1]
    return text + suffix


def copy_record(entry: Entry, number: int) -> dict[str, object]:
    """The JSON Lines record of copy `number` of a real entry."""
    suffix = f" (copy {number})"
    return {
        "title": entry.title + suffix if entry.title else None,
        "authors": entry.authors,
        "authors_truncated": entry.truncated,
        "abstract": in_last_sentence(entry.abstract, suffix),
        "venue": entry.venue,
        "year": entry.year,
        "status": entry.status,
        "track": entry.track,
        "affiliations": entry.affiliations,
    }


def copies_of(entry: Entry) -> int:
    for typo, copies in SCARCE.items():
        if typo in entry.abstract:
            return copies
    return COPIES


def copy_lines(entries: list[Entry], number: int) -> Iterator[str]:
    for entry in entries:
        if number <= copies_of(entry):
            yield json.dumps(copy_record(entry, number), ensure_ascii=False) + "\n"


def write_inputs(folder: Path, copies: int = COPIES) -> list[Path]:
    """One JSON Lines file a copy, in `folder`."""
    entries = real_entries()
    folder.mkdir(parents=True, exist_ok=True)
    paths = []
    for number in range(1, copies + 1):
        path = folder / f"copy_{number:02d}.jsonl"
        with path.open("w", encoding="utf-8") as out:
            out.writelines(copy_lines(entries, number))
        paths.append(path)
    return paths


def build_real_size_catalog(folder: Path, copies: int = COPIES) -> Path:
    """The catalog of `copies` copies of the real samples, as folder/catalog.db."""
    inputs = write_inputs(folder / "inputs", copies)
    path = folder / "catalog.db"
    build_catalog(inputs, path)
    shutil.rmtree(folder / "inputs")
    return path


def shared_real_size_catalog(tmp_path_factory: pytest.TempPathFactory) -> Path:
    """The catalog, built by the first pytest process that asks for it and read by the others.

    Under pytest-xdist every worker has its own temporary folder inside one shared by the run:
    the catalog goes there, and a lock makes the others wait for the first build instead of
    building their own. The build replaces its file atomically, so a catalog that exists is
    whole."""
    root = tmp_path_factory.getbasetemp()
    if os.environ.get("PYTEST_XDIST_WORKER"):
        root = root.parent
    folder = root / "real-size"
    with open(root / "real-size.lock", "w") as lock:
        fcntl.flock(lock, fcntl.LOCK_EX)
        if not (folder / "catalog.db").exists():
            build_real_size_catalog(folder)
    return folder / "catalog.db"
