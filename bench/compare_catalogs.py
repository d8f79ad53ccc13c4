"""Two catalogs -> whether they hold the same schema and the same rows, table by table.

Every table is compared row for row in storage order: rowid tables with their rowids, WITHOUT
ROWID tables in key order, the full-text shadow tables (papers_fts_data ...) and sqlite_stat1
like any other. Virtual tables are skipped: what they answer is read from their shadow tables.
Exit status 0 when identical, 1 with a short report of the first difference found.

With --allow-added, what the second catalog adds is no difference: new tables, indexes and
views, and new columns of a table (its rows are then compared on the first catalog's columns;
sqlite_stat1 on the first catalog's tables, by table and index). What was added is listed with
its rows (a new column: its rows that are not null), so an added table can be seen to be empty.

Example:

    python bench/compare_catalogs.py before/catalog.db after/catalog.db
    python bench/compare_catalogs.py --allow-added main/catalog.db branch/catalog.db
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


def columns_of(connection: sqlite3.Connection, table: str) -> list[tuple]:
    """(name, type, not null, default, primary key place) of each column, hidden ones too."""
    rows = connection.execute(f"select * from pragma_table_xinfo('{table}')").fetchall()
    return [tuple(row[1:6]) for row in rows]


def table_rows(
    connection: sqlite3.Connection,
    table: str,
    columns: list[str] | None = None,
    tables: list[str] | None = None,
) -> sqlite3.Cursor:
    """The rows of a table in storage order; only `columns` when given. sqlite_stat1 with
    `tables`: its rows of those tables, by table and index (its rowids follow the order the
    tables were analyzed in, which a new table shifts)."""
    if table == "sqlite_stat1" and tables is not None:
        marks = ", ".join("?" * len(tables))
        return connection.execute(
            f"select tbl, idx, stat from sqlite_stat1 where tbl in ({marks}) order by tbl, idx",
            tables,
        )
    shown = ", ".join(f"[{column}]" for column in columns) if columns else "*"
    if has_rowid(connection, table):
        return connection.execute(f"select rowid, {shown} from [{table}] order by rowid")
    return connection.execute(f"select {shown} from [{table}]")  # key order


def shown(row: tuple | None) -> str:
    text = "(none)" if row is None else repr(row)
    return text if len(text) <= SHOWN_CHARACTERS else text[: SHOWN_CHARACTERS - 3] + "..."


def first_row_difference(
    before: sqlite3.Connection,
    after: sqlite3.Connection,
    table: str,
    columns: list[str] | None = None,
    tables: list[str] | None = None,
) -> str | None:
    """A report of the first row where the table differs, or None (only `columns`, and
    sqlite_stat1 only of `tables`, when given)."""
    rows = itertools.zip_longest(
        table_rows(before, table, columns, tables), table_rows(after, table, columns, tables)
    )
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


def only_added_columns(before: sqlite3.Connection, after: sqlite3.Connection, table: str) -> bool:
    """Every column of the table in `before` is in `after` as it was, in the same order."""
    old, new = columns_of(before, table), columns_of(after, table)
    return [column for column in new if column in old] == old


def added_rows(connection: sqlite3.Connection, table: str, column: str | None = None) -> int:
    where = f" where [{column}] is not null" if column else ""
    return connection.execute(f"select count(*) from [{table}]{where}").fetchone()[0]


def catalog_differences(
    before_path: str, after_path: str, allow_added: bool = False
) -> tuple[list[str], list[str]]:
    """(reports of what differs, notes of what was added): the schema entries, then each
    table's first differing row. Additions are differences unless `allow_added`."""
    before, after = connect(before_path), connect(after_path)
    try:
        old, new = schema(before), schema(after)
        reports, added = [], []
        columns: dict[str, list[str]] = {}
        for name in sorted(old.keys() | new.keys()):
            if old.get(name) == new.get(name):
                continue
            kind = (new.get(name) or old[name])[0]
            if allow_added and name not in old:
                rows = f" ({added_rows(after, name)} rows)" if name in stored_tables(new) else ""
                added.append(f"{kind} {name}{rows}")
            elif allow_added and kind == "table" and only_added_columns(before, after, name):
                columns[name] = [column[0] for column in columns_of(before, name)]
                for column, *_ in columns_of(after, name):
                    if column not in columns[name]:
                        count = added_rows(after, name, column)
                        added.append(f"column {name}.{column} ({count} rows not null)")
            else:
                reports.append(
                    f"schema: {name}\n  before: {shown(old.get(name))}\n"
                    f"  after:  {shown(new.get(name))}"
                )
        tables = stored_tables(old) if allow_added else None
        for table in stored_tables(old):
            if table in new:
                report = first_row_difference(before, after, table, columns.get(table), tables)
                if report:
                    reports.append(report)
        return reports, added
    finally:
        before.close()
        after.close()


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    parser.add_argument("before")
    parser.add_argument("after")
    parser.add_argument(
        "--allow-added",
        action="store_true",
        help="new tables, indexes and columns in AFTER are no difference (listed)",
    )
    arguments = parser.parse_args()
    reports, added = catalog_differences(arguments.before, arguments.after, arguments.allow_added)
    for note in added:
        print(f"added: {note}")
    if reports:
        print(f"{len(reports)} difference(s) between {arguments.before} and {arguments.after}:")
        print("\n".join(reports))
        sys.exit(1)
    print(f"identical: {arguments.before} and {arguments.after}")


if __name__ == "__main__":
    main()
