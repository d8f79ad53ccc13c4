"""How long /search's spelling suggestions take, and what they are, on a catalog.

Runs the suggestion step of a /search request (loader/web/search_results.py find_suggestions,
on a plain connection, as the page runs it on Datasette's SQL thread) for typed misspellings,
and prints each query's median time over --runs and its suggestions. `--vocabulary FILE`
reads search_vocabulary from another database (attached), for a catalog built before the
table existed.

    python bench/suggestions.py --db catalog.db [--runs 20] [--vocabulary vocabulary.db]
"""

import argparse
import sqlite3
import statistics
import sys
import time
from pathlib import Path

ROOT = Path(__file__).resolve().parent.parent
sys.path.insert(0, str(ROOT))

from loader.web import search_request as search
from loader.web import search_results as search_run

QUERIES = (
    "difusion",
    "trasnformer",
    "optimzation",
    "self-supervsed learning",
    "grpah nueral",
    "lanugage modle",
    "imitaton lerning",
    "levien offline",
    "disribtion",
    "thermodinamic",
    'title:"difusion modle" -graph',
)


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.split("\n")[0])
    parser.add_argument("--db", required=True)
    parser.add_argument("--runs", type=int, default=20)
    parser.add_argument("--vocabulary")
    options = parser.parse_args()
    connection = sqlite3.connect(f"file:{options.db}?mode=ro", uri=True)
    if options.vocabulary:
        connection.execute("attach database ? as vocabulary", [options.vocabulary])
    times = []
    for q in QUERIES:
        request = search.parse_search([("q", q)])
        runs = []
        for _ in range(options.runs):
            started = time.perf_counter()
            found = search_run.find_suggestions(connection, request)
            runs.append((time.perf_counter() - started) * 1000)
        median = statistics.median(runs)
        times.append(median)
        print(f"{q!r:32} {median:7.1f} ms  {found}")
    print(f"median of the medians: {statistics.median(times):.1f} ms, slowest {max(times):.1f} ms")


if __name__ == "__main__":
    main()
