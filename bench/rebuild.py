"""Build figures beside the scale benchmark's: the real sample against its floor, the
generated corpus's CPU a paper against the real sample's, and a rebuild after one file of a
corpus changed (the cache of prepared entries, loader/build/prepared_cache.py) against the
floor of the whole corpus. Each pair is timed in turns, several rounds, so that a burst of
noise on a shared machine hits both; the figures are the rounds' medians.

bench/run.py calls these (`--real FOLDER`, `--rebuild SIZE`); alone:

    python bench/rebuild.py --corpus /tmp/bench/corpus-20k --work /tmp/bench/rebuild
"""

import argparse
import json
import shutil
import sqlite3
import statistics
import subprocess
import sys
from pathlib import Path

ROOT = Path(__file__).resolve().parent.parent
BENCH = ROOT / "bench"
ROUNDS = 3
EDITED = "We measure a rebuild after one file changed. "


def floor_command(folder, db):
    return [sys.executable, BENCH / "floor.py", folder, "--db", db]


def build_command(folder, db, *options):
    command = [sys.executable, "-c", "from loader.cli import cli; cli()", "build", folder]
    return [*command, "--db", db, "--skip-invalid", *options]


def timed(command):
    from run import measure  # bench/run.py: wall time, peak memory, CPU of a command

    seconds, _rss, cpu = measure(
        command, stdout=subprocess.DEVNULL, stderr=subprocess.DEVNULL, cwd=ROOT
    )
    return seconds, cpu


def entries_read(catalog):
    """Entries the build read (a paper merged from two entries counts twice), and papers."""
    connection = sqlite3.connect(f"file:{catalog}?immutable=1", uri=True)
    try:
        entries = connection.execute("select sum(papers) from sources").fetchone()[0]
        papers = connection.execute("select count(*) from papers").fetchone()[0]
    finally:
        connection.close()
    return entries, papers


def medians(rounds):
    return {key: round(statistics.median(r[key] for r in rounds), 2) for key in rounds[0]}


def floor_and_build(folder, work, rounds=ROUNDS):
    """The floor and a cold build (--no-cache) of one folder, in turns: medians of wall and
    CPU seconds, and the build's CPU milliseconds an entry read."""
    work = Path(work)
    work.mkdir(parents=True, exist_ok=True)
    catalog, floor_db = work / "catalog.db", work / "floor.db"
    measured = []
    for _ in range(rounds):
        floor_s, floor_cpu = timed(floor_command(folder, floor_db))
        build_s, build_cpu = timed(build_command(folder, catalog, "--no-cache"))
        measured.append(
            {
                "floor_s": floor_s,
                "floor_cpu_s": floor_cpu,
                "build_s": build_s,
                "build_cpu_s": build_cpu,
            }
        )
    figures = medians(measured)
    entries, papers = entries_read(catalog)
    figures.update(
        folder=str(folder),
        entries=entries,
        papers=papers,
        corpus_mb=round(sum(p.stat().st_size for p in Path(folder).iterdir()) / 1e6, 1),
        ratio=round(figures["build_s"] / figures["floor_s"], 2),
        cpu_ratio=round(figures["build_cpu_s"] / figures["floor_cpu_s"], 2),
        build_cpu_ms_per_entry=round(1000 * figures["build_cpu_s"] / entries, 3),
    )
    return figures


def edit_one_file(folder, round_number):
    """A new beginning for the first abstract of the middle page: one file of the corpus
    changed, the others as they were."""
    pages = sorted(p for p in Path(folder).iterdir() if p.suffix == ".txt")
    page = pages[len(pages) // 2]
    lines = page.read_text(encoding="utf-8").split("\n")
    abstract = next(n for n, line in enumerate(lines) if n and len(line) > 300)
    lines[abstract] = f"{EDITED}({round_number}) {lines[abstract]}"
    page.write_text("\n".join(lines), encoding="utf-8")
    return page.name, len(pages)


def rebuild_figures(corpus, work, rounds=ROUNDS):
    """A copy of the corpus built with the cache (the first build stores it), then, each
    round, one file changed and the catalog rebuilt, timed in turns with the floor of the
    whole copy; at the end the rebuilt catalog against a cold build, row for row."""
    from compare_catalogs import catalog_differences

    work = Path(work)
    if work.exists():
        shutil.rmtree(work)
    folder = work / "corpus"
    shutil.copytree(corpus, folder)
    catalog, floor_db = work / "catalog.db", work / "floor.db"
    first_s, first_cpu = timed(build_command(folder, catalog))
    measured = []
    for number in range(rounds):
        changed, files = edit_one_file(folder, number)
        floor_s, floor_cpu = timed(floor_command(folder, floor_db))
        build_s, build_cpu = timed(build_command(folder, catalog))
        measured.append(
            {
                "floor_s": floor_s,
                "floor_cpu_s": floor_cpu,
                "build_s": build_s,
                "build_cpu_s": build_cpu,
            }
        )
    cold = work / "cold.db"
    timed(build_command(folder, cold, "--no-cache"))
    differences = catalog_differences(str(cold), str(catalog))
    figures = medians(measured)
    cache = work / ".catalog.db.cache"
    figures.update(
        corpus=str(corpus),
        files=files,
        changed=changed,
        first_build_s=round(first_s, 2),
        first_build_cpu_s=round(first_cpu, 2),
        cache_mb=round(sum(p.stat().st_size for p in cache.iterdir()) / 1e6, 1),
        ratio=round(figures["build_s"] / figures["floor_s"], 2),
        cpu_ratio=round(figures["build_cpu_s"] / figures["floor_cpu_s"], 2),
        same_as_cold=differences == ([], []),
    )
    return figures


def main():
    parser = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    parser.add_argument("--corpus", required=True, help="a corpus folder (bench/generate.py)")
    parser.add_argument("--work", required=True, help="the copy and its catalogs go here")
    parser.add_argument("--rounds", type=int, default=ROUNDS)
    args = parser.parse_args()
    sys.path.insert(0, str(BENCH))
    print(json.dumps(rebuild_figures(args.corpus, args.work, args.rounds), indent=2))


if __name__ == "__main__":
    main()
