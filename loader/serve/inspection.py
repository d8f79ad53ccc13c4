"""The inspect file of a build: what `datasette inspect` writes, computed in the supervisor.

Datasette serves an immutable database faster with an inspect file: the file's hash and size
and every table's row count, read once instead of at every start. `datasette inspect` itself
would cost a second Python that imports Datasette for each build served; the same JSON is a
hash, a size and one count per table. tests/test_serve.py checks it equals the command's output.
"""

import hashlib
import json
import sqlite3
from pathlib import Path
from typing import Any
from urllib.parse import quote

from loader.build.marker import is_paper_catalog

# Datasette's own block size (datasette/inspect.py HASH_BLOCK_SIZE)
HASH_BLOCK_SIZE = 1024 * 1024


class CannotInspect(Exception):
    """A build Datasette cannot open (not an SQLite file, damaged): never served."""


def file_hash(path: Path) -> str:
    digest = hashlib.sha256()
    with path.open("rb") as file:
        while block := file.read(HASH_BLOCK_SIZE):
            digest.update(block)
    return digest.hexdigest()


def table_counts(path: Path) -> dict[str, int | None]:
    """Rows of every table, read as Datasette reads an immutable file (immutable=1); a table
    that cannot be counted (a virtual table without its module) counts None, as Datasette's."""
    uri = f"file:{quote(str(path))}?immutable=1"
    connection = sqlite3.connect(uri, uri=True)
    try:
        names = [
            row[0]
            for row in connection.execute("select name from sqlite_master where type='table'")
        ]
        counts: dict[str, int | None] = {}
        for name in names:
            quoted = name.replace('"', '""')
            try:
                counts[name] = connection.execute(f'select count(*) from "{quoted}"').fetchone()[0]
            except sqlite3.DatabaseError:
                counts[name] = None
        return counts
    finally:
        connection.close()


def inspect_data(db: Path) -> dict[str, dict[str, Any]]:
    """`datasette inspect db`'s JSON, under the name Datasette gives the file (its stem).
    Raises CannotInspect when db is no SQLite file, saying why in SQLite's words."""
    try:
        counts = table_counts(db)
    except sqlite3.DatabaseError as error:
        raise CannotInspect(str(error)) from None
    return {
        db.stem: {
            "hash": file_hash(db),
            "size": db.stat().st_size,
            "file": str(db),
            "tables": {table: {"count": count} for table, count in counts.items()},
        }
    }


def write_inspect_file(db: Path, inspect_file: Path) -> None:
    """The inspect file of db, for a paper catalog only. Raises CannotInspect, saying why."""
    data = inspect_data(db)
    if not is_paper_catalog(db):
        raise CannotInspect(
            "an SQLite file, but no catalog built by paper-catalog (build it with `paper-catalog build`)"
        )
    inspect_file.write_text(json.dumps(data, indent=2))
