"""The facet table: each paper's venue, year, status, area and track as one small number.

/search counts those five facets over its whole match set. Read from `papers`, every match is a
visit to a wide row (the abstract and all), once per facet, which a common term cannot afford.
Papers share few combinations of the five values, so `facet_combos` lists each combination once
with its paper count, and `paper_facets` gives each paper (by `papers.rowid`, the full-text
index's row) its combination, a few bytes a paper. One pass over the matches, grouped by
combination, then gives all five facets at once, and a filter on those columns reads the narrow
table instead of `papers` (figures: docs/benchmark.md, "Figures behind the code").
"""

import sqlite3
from collections.abc import Iterable, Iterator

COLUMNS = ("venue", "year", "status", "area", "track")
# a paper's values of COLUMNS, in that order
FacetValues = tuple[str | None, int | None, str | None, str | None, str | None]


def add_facet_table(
    connection: sqlite3.Connection, rows: Iterable[tuple[int, FacetValues]] | None = None
) -> None:
    """Create and fill facet_combos and paper_facets from `rows`, (rowid, (*COLUMNS)) of every
    paper in rowid order as the finished `papers` table holds them (by default read from it:
    the build gives them from memory)."""
    connection.execute(
        "create table facet_combos (id integer primary key, venue text, year integer,"
        " status text, area text, track text, paper_count integer not null)"
    )
    connection.execute(
        "create table paper_facets (paper integer primary key,"
        " combo integer not null references facet_combos(id))"
    )
    if rows is None:
        papers = connection.execute(
            f"select rowid, {', '.join(COLUMNS)} from papers order by rowid"
        )
        rows = ((rowid, tuple(values)) for rowid, *values in papers)
    combos: dict[FacetValues, int] = {}
    counts: list[int] = []

    def paper_rows() -> Iterator[tuple[int, int]]:
        # one pass in rowid order, numbering combinations as they come: same catalog, same codes
        for rowid, key in rows:
            combo = combos.get(key)
            if combo is None:
                combo = combos[key] = len(combos) + 1
                counts.append(0)
            counts[combo - 1] += 1
            yield rowid, combo

    connection.executemany("insert into paper_facets (paper, combo) values (?, ?)", paper_rows())
    connection.executemany(
        "insert into facet_combos (id, venue, year, status, area, track, paper_count)"
        " values (?, ?, ?, ?, ?, ?, ?)",
        [(combo, *key, counts[combo - 1]) for key, combo in combos.items()],
    )
