"""People by their ids, measured on real records: builds a catalog of every Paper Copilot list
that has `authorids` and prints how many persons the ids make, the names split into several
persons, the names without ids that joined a person, nickname folds, and the suspects for false
merges (persons whose spellings share no word) with a sample to check by hand.

    python bench/persons_report.py [--lists /tmp/pl] [--db /tmp/persons.db] [--sample 20]

docs/names.md ("People by their ids") gives the figures this printed.
"""

import argparse
import collections
import glob
import json
import random
import sqlite3
import sys
import time
from pathlib import Path

ROOT = Path(__file__).resolve().parent.parent
sys.path.insert(0, str(ROOT))

from loader.build.catalog import build_catalog
from loader.rules.names import NICKNAME, name_key


def lists_with_ids(folder: Path) -> list[str]:
    """The lists of `folder` (venue/venueYEAR.json) with a record whose `authorids` is not
    blank."""
    found = []
    for path in sorted(glob.glob(str(folder / "*" / "*.json"))):
        try:
            records = json.loads(Path(path).read_text(encoding="utf-8"))
        except (ValueError, UnicodeDecodeError):
            continue
        if isinstance(records, list) and any(
            isinstance(r, dict)
            and isinstance(r.get("authorids"), str)
            and r["authorids"].strip(";")
            for r in records
        ):
            found.append(path)
    return found


def report(db: Path, sample: int) -> None:
    connection = sqlite3.connect(db)
    one = lambda sql: connection.execute(sql).fetchone()[0]
    persons = one("select count(*) from authors where ids is not null")
    names = one("select count(*) from authors where ids is null")
    print(f"authors: {persons + names:,} ({persons:,} persons with ids, {names:,} names without)")
    for kind, count in connection.execute(
        "select kind, count(*) from author_ids group by kind order by kind"
    ):
        print(f"  ids kept: {kind} {count:,}")
    split = connection.execute(
        "select key, count(*) from authors where ids is not null group by key "
        "having count(*) > 1 order by count(*) desc, key"
    ).fetchall()
    print(
        f"names split into several persons: {len(split):,} names, "
        f"{sum(n for _, n in split):,} persons; most: "
        + ", ".join(f"{key} {n}" for key, n in split[:5])
    )
    # spellings of one person whose keys share no word: the suspects for a false merge
    spellings = collections.defaultdict(list)
    for author, name in connection.execute(
        "select author_variants.author_id, author_variants.name from author_variants "
        "join authors on authors.id = author_variants.author_id where authors.ids is not null"
    ):
        spellings[author].append(name)
    keyed = {a: {name_key(n) for n in names} for a, names in spellings.items()}
    several = {a: keys for a, keys in keyed.items() if len(keys) > 1}
    suspects = {
        a: keys
        for a, keys in several.items()
        if not set.intersection(*(set(k.split()) for k in keys))
    }
    print(
        f"persons spelled with several name keys: {len(several):,}; sharing no word: {len(suspects):,}"
    )
    for author in random.Random(0).sample(sorted(suspects), min(sample, len(suspects))):
        print("  suspect:", author, sorted(spellings[author]))
    folds = sum(
        1
        for names in spellings.values()
        if any(NICKNAME.search(n) for n in names) and any(not NICKNAME.search(n) for n in names)
    )
    all_folds = collections.Counter()
    for author, name in connection.execute("select author_id, name from author_variants"):
        all_folds[author] += 1 if NICKNAME.search(name) else 0
    folded = sum(1 for author, n in all_folds.items() if n and author in all_folds)
    print(
        f"nickname folds (a spelling with a nickname and one without, one author): {folded:,} "
        f"({folds:,} of them persons with ids)"
    )


def joined_sample(db: Path, joined: list[tuple[int, str, int, str]], sample: int) -> None:
    """What the names without ids joined on, and a sample to judge by hand: the person (ids,
    a paper of theirs with ids) and the paper whose name joined them."""
    connection = sqlite3.connect(db)
    kinds = collections.Counter(evidence for *_, evidence in joined)
    print("names joined by: " + ", ".join(f"{kind} {n:,}" for kind, n in kinds.most_common()))
    for person, paper, _, evidence in random.Random(1).sample(joined, min(sample, len(joined))):
        name, ids = connection.execute(
            "select name, ids from authors where id = ?", [person]
        ).fetchone()
        label, venue, year, affiliations, authors = connection.execute(
            "select label, venue, year, affiliations, authors from papers "
            "where id = coalesce((select paper_id from paper_aliases where alias = ?), ?)",
            [paper, paper],
        ).fetchone()
        print(f"  joined ({evidence}): {name} {ids} <- {venue} {year} {label[:60]!r}")
        print(f"      its authors {authors[:150]} affiliations {affiliations[:100]}")


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    parser.add_argument("--lists", type=Path, default=Path("/tmp/pl"))
    parser.add_argument("--db", type=Path, default=Path("/tmp/persons-report.db"))
    parser.add_argument("--sample", type=int, default=20)
    parser.add_argument("--no-build", action="store_true", help="report on --db as it is")
    args = parser.parse_args()
    if not args.no_build:
        files = lists_with_ids(args.lists)
        started = time.perf_counter()
        summary = build_catalog(files, args.db, skip_invalid=True)
        print(
            f"{len(files)} lists with authorids: {summary} ({time.perf_counter() - started:.0f} s)"
        )
        print(
            f"persons: {summary.persons:,}; names without ids joined to a person: "
            f"{summary.names_joined:,}; ids disputed (beside two people): {summary.disputed_ids:,}"
        )
        joined_sample(args.db, summary.joined_names, args.sample)
    report(args.db, args.sample)


if __name__ == "__main__":
    main()
