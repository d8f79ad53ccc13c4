"""The inspect file `paper-catalog serve` writes of a build (loader/serve/inspection.py). That it
equals what `datasette inspect` writes: tests/test_serve.py."""

import shutil
import sqlite3

import pytest

from loader.serve.inspection import CannotInspect, inspect_data, write_inspect_file


def test_a_build_in_a_folder_of_any_name_is_counted(tmp_path, seed_catalog):
    """The file is opened as a URI (immutable=1): characters a URI reads as its own (`?`,
    `#`, `%`) in a folder's name are quoted, not taken for a query or a fragment."""
    db = tmp_path / "odd ?immutable=0 #% folder" / "catalog.db"
    db.parent.mkdir()
    shutil.copy(seed_catalog, db)
    with sqlite3.connect(db) as connection:
        tables = [
            name
            for (name,) in connection.execute("select name from sqlite_master where type='table'")
        ]
        expected = {
            name: connection.execute(f'select count(*) from "{name}"').fetchone()[0]
            for name in tables
        }
    [(name, data)] = inspect_data(db).items()
    assert name == "catalog" and data["file"] == str(db)
    assert {table: value["count"] for table, value in data["tables"].items()} == expected
    assert data["size"] == db.stat().st_size


@pytest.mark.parametrize(
    "content, reason",
    [
        (b"not a database\n" * 100, "file is not a database"),
        (None, "an SQLite file, but no catalog built by paper-catalog"),
    ],
    ids=["text", "another SQLite file"],
)
def test_a_file_that_is_no_catalog_is_refused_saying_why(tmp_path, content, reason):
    db = tmp_path / "catalog.db"
    if content is None:
        with sqlite3.connect(db) as connection:
            connection.execute("create table notes (text)")
        connection.close()
    else:
        db.write_bytes(content)
    inspect_file = tmp_path / "catalog.inspect.json"
    with pytest.raises(CannotInspect, match=reason):
        write_inspect_file(db, inspect_file)
    assert not inspect_file.exists()
