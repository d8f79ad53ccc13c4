"""The floor: the least any loader must do with the same files, timed in the same run.

Read every file, split it into entries, insert papers, authors and paper_authors with
`executemany` in one transaction and build the same FTS5 index (same tokenizer, rebuild, then
optimize). No validation, no normalization, no duplicate merging, no secondary indexes.

Example:

    python bench/floor.py /tmp/bench/corpus-100k --db /tmp/bench/floor-100k.db
"""

import argparse
import os
import sqlite3
import time
from pathlib import Path

FTS_TOKENIZER = "porter unicode61 remove_diacritics 2"
LISTING_MARKER = "论文检索"
ABSTRACT_MIN_LENGTH = 300  # shorter lines are track or authors lines in the generated corpus
SCHEMA = """
create table papers (id integer primary key, track text, abstract text not null);
create table authors (id integer primary key, name text);
create table paper_authors (paper_id integer, author_id integer, position integer);
"""


def read_entries(path):
    """(track, names, abstract) for each entry; the profile owner counts as an author."""
    lines = [line for line in path.read_text(encoding="utf-8").split("\n") if line]
    listing = lines[0] == LISTING_MARKER
    owner = None if listing else lines[0]
    track = authors = None
    for line in lines[1:]:
        if len(line) >= ABSTRACT_MIN_LENGTH:
            names = authors.split(", ") if authors else []
            if owner:
                names.append(owner)
            yield track, names, line
            track = authors = None
        elif listing and " · " in line and authors is None:
            track = line
        else:
            authors = line.split(" · ")[0]


def build_floor(folder, db_path):
    if os.path.exists(db_path):
        os.remove(db_path)
    db = sqlite3.connect(db_path, isolation_level=None)
    db.execute("pragma journal_mode = off")
    db.execute("pragma synchronous = off")
    db.execute("pragma cache_size = -65536")
    db.executescript(SCHEMA)
    authors = {}
    papers = links = 0
    db.execute("begin")
    for path in sorted(p for p in Path(folder).iterdir() if not p.name.startswith(".")):
        paper_rows, link_rows = [], []
        for track, names, abstract in read_entries(path):
            papers += 1
            paper_rows.append((papers, track, abstract))
            for position, name in enumerate(names, start=1):
                author_id = authors.setdefault(name, len(authors) + 1)
                link_rows.append((papers, author_id, position))
        db.executemany("insert into papers values (?, ?, ?)", paper_rows)
        db.executemany("insert into paper_authors values (?, ?, ?)", link_rows)
        links += len(link_rows)
    db.executemany("insert into authors values (?, ?)", ((i, n) for n, i in authors.items()))
    db.execute(
        "create virtual table papers_fts using fts5(abstract, content='papers', "
        f"content_rowid='id', tokenize='{FTS_TOKENIZER}')"
    )
    db.execute("insert into papers_fts(papers_fts) values ('rebuild')")
    db.execute("insert into papers_fts(papers_fts) values ('optimize')")
    db.execute("commit")
    db.close()
    return papers, len(authors), links


def main():
    parser = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    parser.add_argument("folder")
    parser.add_argument("--db", required=True)
    args = parser.parse_args()
    start = time.perf_counter()
    papers, authors, links = build_floor(args.folder, args.db)
    seconds = time.perf_counter() - start
    print(f"{args.db}: {papers} papers, {authors} authors, {links} links in {seconds:.1f}s")


if __name__ == "__main__":
    main()
