"""How many papers of a catalog list one person twice: two names of its author list that look
like spellings of one person (`Ann Lee` / `Ann B. Lee`, `Jiaqi Zhang` / `Jiaqi Zhnag`).

    python bench/people_twice.py CATALOG [CATALOG ...]        # counts
    python bench/people_twice.py --show CATALOG                 # and every pair, to judge

A pair looks like one person when its name keys (loader/rules/names.py) have the same last
word and first words that agree (equal, or one the other's initial or short form), or are one
edit apart.
That is looser than the build's rule (loader/rules/people.py), so the count also shows what the
rule leaves: papers merged from several versions (source_count > 1) are counted apart from
single-version papers, whose list came from one source (two people of one paper may share a
surname and an initial: `Xi Chen` / `Xu Chen` are counted, and are often two people).
"""

import argparse
import itertools
import sqlite3
import sys
from pathlib import Path

ROOT = Path(__file__).resolve().parent.parent
sys.path.insert(0, str(ROOT))

from loader.rules.people import edit_distance_at_most_one


def first_words_agree(first: str, second: str) -> bool:
    """Equal, or one the other's initial or short form (its letters in order in the other,
    the first letter the same: `tom` / `thomas`, `hado` / `hadovan`)."""
    if first == second:
        return True
    short, long = sorted((first, second), key=len)
    remaining = iter(long[1:])
    return short[0] == long[0] and all(letter in remaining for letter in short[1:])


def look_alike(first: str, second: str) -> bool:
    """Two name keys that may be one person's spellings."""
    a, b = first.split(), second.split()
    if len(a) > 1 and len(b) > 1 and a[-1] == b[-1] and first_words_agree(a[0], b[0]):
        return True
    return edit_distance_at_most_one(first, second)


def pairs_of(connection: sqlite3.Connection) -> list[tuple[str, int, str, str]]:
    """(paper id, source count, name, name) of every look-alike pair in a paper's list."""
    rows = connection.execute(
        "select paper_id, source_count, authors.key, authors.name from paper_authors "
        "join authors on authors.id = author_id join papers on papers.id = paper_id "
        "order by paper_id, position is null, position"
    )
    found = []
    for (paper, sources), group in itertools.groupby(rows, key=lambda row: row[:2]):
        listed = [(key, name) for _, _, key, name in group]
        for i, (key_a, name_a) in enumerate(listed):
            for key_b, name_b in listed[i + 1 :]:
                if look_alike(key_a, key_b):
                    found.append((paper, sources, name_a, name_b))
    return found


def report(path: str, show: bool) -> None:
    connection = sqlite3.connect(f"file:{path}?mode=ro", uri=True)
    papers, merged = connection.execute(
        "select count(*), count(*) filter (where source_count > 1) from papers"
    ).fetchone()
    found = pairs_of(connection)
    in_merged = {pid for pid, sources, _, _ in found if sources > 1}
    in_single = {pid for pid, sources, _, _ in found if sources == 1}
    print(
        f"{path}: {papers} papers, {merged} merged from several versions; look-alike names in "
        f"{len(in_merged)} merged papers, {len(in_single)} single-version papers"
    )
    if show:
        for pid, sources, first, second in found:
            print(f"  {pid} {'merged' if sources > 1 else 'single'}: {first} / {second}")


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    parser.add_argument("catalogs", nargs="+")
    parser.add_argument("--show", action="store_true", help="print every pair")
    args = parser.parse_args()
    for path in args.catalogs:
        report(path, args.show)


if __name__ == "__main__":
    main()
