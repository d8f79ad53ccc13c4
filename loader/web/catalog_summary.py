"""What a catalog holds, in words, from its own tables: the home page's data-source line says
which venues and years were built, and from how many files, whatever the input was."""

import itertools
from collections.abc import Iterable

# papers per venue and year: facet_combos holds each combination of the five facets once, so
# this reads a few hundred rows whatever the catalog's size
VENUE_YEARS_SQL = (
    "select venue, year, sum(paper_count) as papers from facet_combos group by venue, year"
)
FILES_SQL = "select count(*) from sources"
# venues named before "and N more": a catalog of every conference would make a page of them
SHOWN_VENUES = 12


def year_ranges(years: Iterable[int]) -> str:
    """2013, 2014, 2017 -> '2013–2014, 2017'."""
    ranges = []
    ordered = sorted(set(years))
    for _, run in itertools.groupby(enumerate(ordered), key=lambda pair: pair[1] - pair[0]):
        first, *rest = [year for _, year in run]
        ranges.append(f"{first}–{rest[-1]}" if rest else str(first))
    return ", ".join(ranges)


def venue_years(rows: Iterable[tuple[str | None, int | None, int]]) -> list[tuple[str, int]]:
    """(venue with its years, papers) from (venue, year, papers) rows, most papers first, then
    by name: ('ICLR 2013–2014, 2017', 900), ('arXiv 2007', 12). Papers with no venue are not
    among them."""
    years: dict[str, list[int]] = {}
    papers: dict[str, int] = {}
    for venue, year, count in rows:
        if venue is None:
            continue
        years.setdefault(venue, [])
        if year is not None:
            years[venue].append(year)
        papers[venue] = papers.get(venue, 0) + count
    described = [
        (f"{venue} {year_ranges(years[venue])}" if years[venue] else venue, count)
        for venue, count in papers.items()
    ]
    return sorted(described, key=lambda item: (-item[1], item[0]))


def data_source(rows: Iterable[tuple[str | None, int | None, int]], files: int) -> str:
    """'1,234 papers read from 3 files: ICLR 2017–2018 (900), NeurIPS 2018 (300) and 34 with
    no venue'; '90 papers read from 3 files, none with a venue'."""
    rows = list(rows)
    total = sum(count for _, _, count in rows)
    without = sum(count for venue, _, count in rows if venue is None)
    venues = venue_years(rows)
    text = f"{total:,} {'paper' if total == 1 else 'papers'} read from {files:,} "
    text += "file" if files == 1 else "files"
    if not venues:
        return f"{text}, none with a venue" if total else text
    parts = [f"{name} ({count:,})" for name, count in venues[:SHOWN_VENUES]]
    if len(venues) > SHOWN_VENUES:
        parts.append(f"{len(venues) - SHOWN_VENUES} more venues")
    if without:
        parts.append(f"{without:,} with no venue")
    return (
        f"{text}: {', '.join(parts[:-1])} and {parts[-1]}"
        if len(parts) > 1
        else f"{text}: {parts[0]}"
    )
