"""loader/web/time_limit.py: which SQLite errors are the time limit's, on real errors of a real
catalog."""

import sqlite3

import pytest

from loader.web.time_limit import interrupted, open_virtual_tables

SEARCH = "select rowid from papers where rowid in (select rowid from papers_fts where papers_fts match 'learning')"


def error_interrupted_at(catalog, step, prepare=None):
    """What SQLite raises when a fresh connection's statement is interrupted at its `step`th
    progress call, or None when it ran to its end. `prepare(connection)` first, when given."""
    connection = sqlite3.connect(f"file:{catalog}?mode=ro", uri=True)
    if prepare:
        prepare(connection)
    calls = [0]

    def stop():
        calls[0] += 1
        return 1 if calls[0] >= step else 0

    connection.set_progress_handler(stop, 1)
    try:
        connection.execute(SEARCH).fetchall()
    except sqlite3.OperationalError as error:
        return error
    finally:
        connection.close()
    return None


def test_an_interrupt_while_fts5_opens_its_table_is_the_time_limits(seed_catalog):
    """An interrupt that comes while FTS5 opens papers_fts is reported as its constructor's
    failure: the time limit's once the limit has passed, not before (another cause)."""
    errors = {
        str(e): e for e in (error_interrupted_at(seed_catalog, k) for k in range(1, 400)) if e
    }
    constructor = errors["vtable constructor failed: papers_fts"]
    assert interrupted(constructor, elapsed_ms=1.5, ms=1)
    assert not interrupted(constructor, elapsed_ms=0.5, ms=1)
    assert interrupted(errors["interrupted"], elapsed_ms=0.1, ms=1)


def test_other_errors_are_not_the_time_limits(seed_catalog):
    connection = sqlite3.connect(f"file:{seed_catalog}?mode=ro", uri=True)
    with pytest.raises(sqlite3.OperationalError) as raised:
        connection.execute("select * from no_such_table")
    connection.close()
    assert not interrupted(raised.value, elapsed_ms=10_000, ms=1)


def test_a_connection_the_site_prepares_never_meets_a_half_opened_table(seed_catalog):
    """The site's connections open their virtual tables before any time limit
    (plugins/limits.py): an interrupt at any step of a search is then SQLite's 'interrupted'."""
    from paper_catalog_site.plugins.limits import prepare_connection

    from .conftest import served_app

    datasette = served_app(seed_catalog).datasette

    def prepared(connection):
        prepare_connection(connection, "catalog", datasette)

    errors = {str(e) for e in (error_interrupted_at(seed_catalog, k) for k in range(1, 400)) if e}
    assert "vtable constructor failed: papers_fts" in errors  # without: the race is there
    errors = {
        str(e)
        for e in (error_interrupted_at(seed_catalog, k, prepared) for k in range(1, 400))
        if e
    }
    assert errors == {"interrupted"}


def test_open_virtual_tables_opens_every_one(seed_catalog):
    connection = sqlite3.connect(f"file:{seed_catalog}?mode=ro", uri=True)
    open_virtual_tables(connection)  # raises if any cannot be opened
    names = {
        name
        for (name,) in connection.execute(
            "select name from sqlite_master where sql like 'create virtual table%'"
        )
    }
    connection.close()
    assert {"papers_fts", "authors_fts"} <= names
