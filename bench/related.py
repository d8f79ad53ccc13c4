"""How often "related papers" are on topic, judged by the authors' own keywords.

A labeled sample of our own: ICLR 2017 and 2018 papers (papercopilot/paperlists, see
tests/fixtures/search/SOURCE.md) carry author keywords. A related paper counts as on topic when
it shares a keyword with the paper, keywords given to more than MAX_KEYWORD_SHARE of all papers
("deep learning") left out as too broad to tell. Runs the canned `related_papers` query of
metadata.yml and a baseline (bench/related_baseline.sql, the query before the change) on the
same catalog and sample, and prints both shares.

    python bench/related.py JSONL KEYWORDS.json [--sample 100] [--top 10]
"""

import argparse
import json
import random
import sqlite3
import sys
import tempfile
from collections import Counter
from pathlib import Path

import yaml

ROOT = Path(__file__).resolve().parent.parent
sys.path.insert(0, str(ROOT))

from loader.build.catalog import build_catalog
from loader.read.sources import discover

MAX_KEYWORD_SHARE = 0.05


def related_sql():
    metadata = yaml.safe_load((ROOT / "metadata.yml").read_text(encoding="utf-8"))
    return metadata["databases"]["catalog"]["queries"]["related_papers"]["sql"]


def on_topic_share(connection, sql, sample, keywords_of, top):
    hits = total = 0
    for paper_id, title in sample:
        related = connection.execute(sql, {"paper_id": paper_id}).fetchall()[:top]
        for row in related:
            total += 1
            other = connection.execute("select title from papers where id = ?", [row[0]])
            hits += bool(keywords_of[title] & keywords_of.get(other.fetchone()[0], set()))
    return hits / total if total else 0.0, total


def main():
    parser = argparse.ArgumentParser(description=__doc__)
    parser.add_argument("jsonl")
    parser.add_argument("keywords")
    parser.add_argument("--sample", type=int, default=100)
    parser.add_argument("--top", type=int, default=10)
    args = parser.parse_args()
    raw = json.loads(Path(args.keywords).read_text(encoding="utf-8"))
    counts = Counter(word for words in raw.values() for word in set(words))
    broad = {word for word, n in counts.items() if n > MAX_KEYWORD_SHARE * len(raw)}
    keywords_of = {title: set(words) - broad for title, words in raw.items()}
    with tempfile.TemporaryDirectory() as folder:
        catalog = Path(folder) / "catalog.db"
        build_catalog(discover([Path(args.jsonl)]), catalog)
        connection = sqlite3.connect(catalog)
        titled = [
            (paper_id, title)
            for paper_id, title in connection.execute("select id, title from papers order by id")
            if keywords_of.get(title)
        ]
        sample = random.Random(7).sample(titled, min(args.sample, len(titled)))
        queries = {
            "baseline": (ROOT / "bench" / "related_baseline.sql").read_text(encoding="utf-8"),
            "current": related_sql(),
        }
        print(
            f"{len(sample)} papers, top {args.top} related each; broad keywords left out: "
            f"{', '.join(sorted(broad))}"
        )
        for name, sql in queries.items():
            share, total = on_topic_share(connection, sql, sample, keywords_of, args.top)
            print(f"{name}: {share:.1%} of {total} related papers share a keyword")
        # chance: the same count of papers drawn at random
        chance = random.Random(8)
        pairs = [(a, chance.choice(titled)[1]) for _, a in sample for _ in range(args.top)]
        random_share = sum(bool(keywords_of[a] & keywords_of[b]) for a, b in pairs) / len(pairs)
        print(f"random papers: {random_share:.1%}")


if __name__ == "__main__":
    main()
