"""Two catalogs -> whether they hold the same schema and the same rows, table by table.

Every table is compared row for row in storage order: rowid tables with their rowids, WITHOUT
ROWID tables in key order, the full-text shadow tables (papers_fts_data ...) and sqlite_stat1
like any other. Virtual tables are skipped: what they answer is read from their shadow tables.
Exit status 0 when identical, 1 with a short report of the first difference found.

Example:

    python bench/compare_catalogs.py before/catalog.db after/catalog.db
"""

import argparse
import itertools
import sqlite3
import sys

SHOWN_CHARACTERS = 160


def connect(path: str) -> sqlite3.Connection:
    return sqlite3.connect(f"file:{path}?mode=ro", uri=True)


def schema(connection: sqlite3.Connection) -> dict[str, tuple[str, str, str | None]]:
    """{name: (type, table, sql)} of every table, index, view and trigger."""
    rows = connection.execute("select type, name, tbl_name, sql from sqlite_master")
    return {name: (kind, table, sql) for kind, name, table, sql in rows}


def stored_tables(entries: dict[str, tuple[str, str, str | None]]) -> list[str]:
    """Tables that hold rows of their own: not virtual ones."""
    return sorted(
        name
        for name, (kind, _table, sql) in entries.items()
        if kind == "table" and not (sql or "").upper().startswith("CREATE VIRTUAL TABLE")
    )


def has_rowid(connection: sqlite3.Connection, table: str) -> bool:
    try:
        connection.execute(f"select rowid from [{table}] limit 0")
    except sqlite3.OperationalError:
        return False
    return True


def table_rows(connection: sqlite3.Connection, table: str) -> sqlite3.Cursor:
    if has_rowid(connection, table):
        return connection.execute(f"select rowid, * from [{table}] order by rowid")
    return connection.execute(f"select * from [{table}]")  # key order


def shown(row: tuple | None) -> str:
    text = "(none)" if row is None else repr(row)
    return text if len(text) <= SHOWN_CHARACTERS else text[: SHOWN_CHARACTERS - 3] + "..."


def first_row_difference(
    before: sqlite3.Connection, after: sqlite3.Connection, table: str
) -> str | None:
    """A report of the first row where the table differs, or None."""
    rows = itertools.zip_longest(table_rows(before, table), table_rows(after, table))
    for position, (old, new) in enumerate(rows, start=1):
        if old != new:
            counts = [
                c.execute(f"select count(*) from [{table}]").fetchone()[0] for c in (before, after)
            ]
            return (
                f"{table}: row {position} differs ({counts[0]} rows before, {counts[1]} after)\n"
                f"  before: {shown(old)}\n  after:  {shown(new)}"
            )
    return None


def catalog_differences(before_path: str, after_path: str) -> list[str]:
    """Reports of what differs: the schema entries, then each table's first differing row."""
    before, after = connect(before_path), connect(after_path)
    try:
        old, new = schema(before), schema(after)
        reports = [
            f"schema: {name}\n  before: {shown(old.get(name))}\n  after:  {shown(new.get(name))}"
            for name in sorted(old.keys() | new.keys())
            if old.get(name) != new.get(name)
        ]
        for table in stored_tables(old):
            if table in new:
                report = first_row_difference(before, after, table)
                if report:
                    reports.append(report)
        return reports
    finally:
        before.close()
        after.close()


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    parser.add_argument("before")
    parser.add_argument("after")
    arguments = parser.parse_args()
    reports = catalog_differences(arguments.before, arguments.after)
    if reports:
        print(f"{len(reports)} difference(s) between {arguments.before} and {arguments.after}:")
        print("\n".join(reports))
        sys.exit(1)
    print(f"identical: {arguments.before} and {arguments.after}")


if __name__ == "__main__":
    main()
