"""A large arXiv-snapshot-shaped file, built with `paper-catalog build`: wall time and peak memory.

The file is made from the real snapshot sample (tests/fixtures/dumps/arxiv/, the head of arXiv's
own snapshot): every record keeps a real record's fields and categories, with an id of its own
(new-style, in id order like the snapshot's), its first version dated by that id, a title
varied by two words of the sample's titles, an abstract that is a real abstract followed by two
sentences of other real abstracts (so no two records share one, and none merge), wrapped and
indented as arXiv writes them, and authors drawn with Zipf reuse from the sample's given and
family names. Same count, same bytes.

The build runs in its own process (under `nice`): its wall time, CPU time (workers included),
the kernel's peak RSS of its largest process (the build or a worker), and the peak of the build
and its workers together (PSS sampled every 0.2 s, as bench/run.py samples it).

Example:

    python bench/snapshot_build.py --records 1000000 --work /tmp/snapshot-bench
"""

import argparse
import datetime
import itertools
import json
import os
import random
import re
import sqlite3
import subprocess
import sys
import time
from collections.abc import Iterator
from pathlib import Path

ROOT = Path(__file__).resolve().parent.parent
SAMPLE = ROOT / "tests" / "fixtures" / "dumps" / "arxiv" / "arxiv-metadata-oai-snapshot.json"
SEED = 2007
# ids of one month run 00001, 00002, ...; this many a month before the next month's
RECORDS_A_MONTH = 5000
FIRST_MONTH = datetime.date(2007, 4, 1)
LINE_WIDTH = 80  # arXiv's abstracts are hard-wrapped near here
# Zipf reuse of authors: people in the population authors are drawn from, a record, and
# the exponent of their popularity
PEOPLE_PER_RECORD = 2
ZIPF_EXPONENT = 0.9
MIDDLE_INITIALS = [f"{letter}." for letter in "ABCDEFGHIJKLMNOPQRSTUVWXYZ"]
SENTENCE_END = re.compile(r"(?<=[.!?])\s+(?=[A-Z$\\(])")
PARAGRAPH = re.compile(r"\n[ \t]+")


def read_sample(path: Path = SAMPLE) -> list[dict]:
    with open(path, encoding="utf-8") as lines:
        return [json.loads(line) for line in lines if line.strip()]


def unwrapped(abstract: str) -> list[str]:
    """The paragraphs of an abstract as arXiv wraps it, each on one line."""
    return [" ".join(part.split()) for part in PARAGRAPH.split(abstract.strip())]


def wrapped(paragraphs: list[str]) -> str:
    """Paragraphs written as the snapshot writes abstracts: each line at most LINE_WIDTH, each
    paragraph's first line indented by two spaces, a line end after the last."""
    lines = []
    for paragraph in paragraphs:
        words = paragraph.split()
        line, width = [" ", words[0]], 2 + len(words[0])
        for word in words[1:]:
            if width + 1 + len(word) > LINE_WIDTH:
                lines.append(" ".join(line))
                line, width = [word], len(word)
            else:
                line.append(word)
                width += 1 + len(word)
        lines.append(" ".join(line))
    return "\n".join(lines) + "\n"


class SnapshotMaker:
    """Records made from the sample's: made in order (0, 1, ...), the same every time."""

    def __init__(self, count: int, sample: list[dict] | None = None, seed: int = SEED) -> None:
        self.count = count
        # one record of each abstract: the sample has two parts of a series sharing one
        self.sample = list({r["abstract"]: r for r in reversed(sample or read_sample())}.values())
        self.sample.reverse()
        self.sentences = sorted(
            {
                sentence
                for record in self.sample
                for paragraph in unwrapped(record["abstract"])
                for sentence in SENTENCE_END.split(paragraph)
                if len(sentence) > 40
            }
        )
        self.title_words = sorted(
            {word for record in self.sample for word in record["title"].split() if word.isalpha()}
        )
        self.given = sorted(
            {parts[1] for r in self.sample for parts in r["authors_parsed"] if parts[1]}
        )
        self.family = sorted({parts[0] for r in self.sample for parts in r["authors_parsed"]})
        # given x family x (no middle initial, A. ... Z.): ~2M people from the sample's names
        people = len(self.given) * len(self.family) * (1 + len(MIDDLE_INITIALS))
        self.population = min(people, max(100, count * PEOPLE_PER_RECORD))
        self.popularity = list(
            itertools.accumulate(
                1 / (rank**ZIPF_EXPONENT) for rank in range(1, self.population + 1)
            )
        )
        # one generator for the whole file: records are made in order, n = 0, 1, ...
        self.rng = random.Random(seed)

    def record(self, n: int) -> dict:
        base = self.sample[n % len(self.sample)]
        rng = self.rng
        turn = n // len(self.sample)
        words = len(self.title_words)
        first, second = self.title_words[turn % words], self.title_words[(turn // words) % words]
        sentences = len(self.sentences)
        added = [self.sentences[turn % sentences], self.sentences[turn // sentences % sentences]]
        paragraphs = unwrapped(base["abstract"])
        paragraphs[-1] = " ".join([paragraphs[-1], *added])
        month, number = divmod(n, RECORDS_A_MONTH)
        year, month_of_year = divmod(FIRST_MONTH.month - 1 + month, 12)
        created = datetime.datetime(
            FIRST_MONTH.year + year,
            month_of_year + 1,
            1 + rng.randrange(28),
            rng.randrange(24),
            rng.randrange(60),
            rng.randrange(60),
        )
        arxiv_id = f"{created:%y%m}.{number + 1:05d}"
        chosen = rng.choices(
            range(self.population), cum_weights=self.popularity, k=len(base["authors_parsed"])
        )
        authors = [self.person(rank) for rank in dict.fromkeys(chosen)]
        return {
            "id": arxiv_id,
            "submitter": f"{authors[0][1]} {authors[0][0]}",
            "authors": ", ".join(f"{first} {last}" for last, first in authors),
            "title": f"{first} {second}: {base['title']}",
            "comments": base["comments"],
            "journal-ref": base["journal-ref"],
            "doi": f"10.5555/bench.{arxiv_id}" if base["doi"] else None,
            "report-no": base["report-no"],
            "categories": base["categories"],
            "license": base["license"],
            "abstract": wrapped(paragraphs),
            "versions": [
                {"version": "v1", "created": created.strftime("%a, %-d %b %Y %H:%M:%S GMT")}
            ],
            "update_date": f"{created:%Y-%m-%d}",
            "authors_parsed": [[last, first, ""] for last, first in authors],
        }

    def person(self, rank: int) -> tuple[str, str]:
        """(family name, given names) of the person of a popularity rank: ranks scattered over
        the names (a prime stride), so the most popular do not all share one family name."""
        index = rank * 7_368_787 % self.population
        index, family = divmod(index, len(self.family))
        middle, given = divmod(index, len(self.given))
        names = self.given[given]
        if middle:
            names = f"{names} {MIDDLE_INITIALS[(middle - 1) % len(MIDDLE_INITIALS)]}"
        return self.family[family], names

    def records(self) -> Iterator[dict]:
        return map(self.record, range(self.count))


def write_snapshot(path: Path, count: int, seed: int = SEED) -> None:
    """`count` records, one a line, written to `path` (through a temporary file)."""
    maker = SnapshotMaker(count, seed=seed)
    partial = path.with_name(path.name + ".partial")
    with open(partial, "w", encoding="utf-8") as out:
        out.writelines(
            json.dumps(record, separators=(",", ":")) + "\n" for record in maker.records()
        )
    os.replace(partial, path)


def catalog_counts(db: Path) -> dict[str, int]:
    with sqlite3.connect(f"file:{db}?mode=ro", uri=True) as connection:
        return {
            table: connection.execute(f"select count(*) from [{table}]").fetchone()[0]
            for table in ("papers", "authors", "categories", "paper_categories")
        }


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    parser.add_argument("--records", type=int, default=1_000_000)
    parser.add_argument("--work", type=Path, default=Path("/tmp/snapshot-bench"))
    parser.add_argument("--seed", type=int, default=SEED)
    parser.add_argument("build_options", nargs="*", help="more options of paper-catalog build")
    arguments = parser.parse_args()
    sys.path.insert(0, str(ROOT / "bench"))
    from run import machine, tree_memory_kb  # bench/run.py, the scale benchmark's

    arguments.work.mkdir(parents=True, exist_ok=True)
    snapshot = arguments.work / f"arxiv-snapshot-{arguments.records}.json"
    if not snapshot.exists():
        start = time.perf_counter()
        write_snapshot(snapshot, arguments.records, arguments.seed)
        print(f"wrote {snapshot} in {time.perf_counter() - start:.0f} s", flush=True)
    db = arguments.work / f"arxiv-snapshot-{arguments.records}.db"
    command = [
        "nice",
        str(Path(sys.executable).with_name("paper-catalog")),
        "build",
        str(snapshot),
        "--db",
        str(db),
        *arguments.build_options,
    ]
    start = time.perf_counter()
    process = subprocess.Popen(command, stdout=subprocess.DEVNULL)
    tree_kb = 0
    while True:
        pid, status, usage = os.wait4(process.pid, os.WNOHANG)
        if pid:
            break
        tree_kb = max(tree_kb, tree_memory_kb(process.pid))
        time.sleep(0.2)
    seconds = time.perf_counter() - start
    if os.waitstatus_to_exitcode(status):
        raise SystemExit(f"failed: {' '.join(command)}")
    figures = {
        "records": arguments.records,
        "file_mb": round(snapshot.stat().st_size / 1e6, 1),
        "seconds": round(seconds, 1),
        "cpu_seconds": round(usage.ru_utime + usage.ru_stime, 1),
        # the kernel's peak RSS of the largest process (the build, or a worker it reaped)
        "peak_rss_mb": round(usage.ru_maxrss / 1024),
        # the build and its workers together, PSS sampled every 0.2 s (shared pages once)
        "peak_tree_pss_mb": round(tree_kb / 1024),
        "catalog_mb": round(db.stat().st_size / 1e6, 1),
        **catalog_counts(db),
        "machine": machine(),
    }
    print(json.dumps(figures, indent=2))


if __name__ == "__main__":
    main()
