"""What marks a file as a catalog this loader built: the one row of its paper_catalog table
(schema.py). A build replaces only such a file (or a new path), never a file of someone
else's; the site knows its catalog by the same row.

Files are opened read-only through SQLite's URI (`mode=ro`): looking never writes a byte,
creates no journal and never raises, whatever the file holds."""

import os
import sqlite3
import stat
from pathlib import Path

from loader.build.schema import CATALOG_FORMAT, MARKER_TABLE

# the tables every catalog has held since the first: a file with them and no marker is a
# catalog built before the marker existed
OLDER_CATALOG_TABLES = frozenset({"papers", "paper_sources", "sources"})


def read_only(path: str | os.PathLike[str]) -> sqlite3.Connection:
    # as_uri escapes what a URI would read as its query or fragment (?, #, %)
    return sqlite3.connect(f"{Path(path).absolute().as_uri()}?mode=ro", uri=True)


def inspect(path: str | os.PathLike[str]) -> tuple[set[str], list[tuple[object, ...]]] | None:
    """The tables of the SQLite database at path and its marker table's rows (none without
    one); None when it is not a SQLite database or cannot be read."""
    try:
        # a regular file only: opening a named pipe would wait for a writer
        if not stat.S_ISREG(os.stat(path).st_mode):
            return None
        connection = read_only(path)
    except (sqlite3.Error, OSError, ValueError):
        return None
    try:
        rows = connection.execute("select name from sqlite_master where type = 'table'")
        tables = {name for (name,) in rows}
        marker = []
        if MARKER_TABLE in tables:
            marker = connection.execute(
                f"select format, schema_version from [{MARKER_TABLE}] limit 2"
            ).fetchall()
        return tables, marker
    except (sqlite3.Error, ValueError):
        return None
    finally:
        connection.close()


def is_paper_catalog(path: str | os.PathLike[str]) -> bool:
    """Whether path is a SQLite catalog paper-catalog built: its marker table holds exactly
    one row, the format's name and an integer schema version. False for anything else (a
    missing file, a text file, another database), never an exception."""
    found = inspect(path)
    if found is None:
        return False
    marker = found[1]
    return len(marker) == 1 and marker[0][0] == CATALOG_FORMAT and isinstance(marker[0][1], int)


def is_older_catalog(path: str | os.PathLike[str]) -> bool:
    """Whether path is a catalog built before the marker existed: the catalog's tables and
    no marker table."""
    found = inspect(path)
    return found is not None and MARKER_TABLE not in found[0] and OLDER_CATALOG_TABLES <= found[0]
