"""A merged paper's versions, as its page lists them: one line a version (venue, year, status,
its own title where it differs from the paper's, its link), each with the source entries it
was read from (file and line) to fold under it.

Entries that say the same thing (the same paper in two profile pages, a conference list read
twice) are one version with several entries: a reader asks where a paper appeared, not how
often the scrapers saw it. The list shows only the versions that add something (`listed`): a
venue, a year, a link or a title no other version gives with more (`ICLR 2018` beside `ICLR
2018 Reject` adds nothing either). A profile page's entry with no venue or year, or a
listing's `arXiv` with no year beside `arXiv 2017`, says nothing the others do not; its
entries stay in the provenance fold, under its name there.
"""

from collections.abc import Iterable, Mapping
from dataclasses import dataclass, field
from typing import Any

from loader.rules import markup
from loader.rules.merge import title_words

# what each input format is, for a version no venue or year tells apart (loader/read/sources.py)
FORMAT_NAMES = {
    "listing": "listing page",
    "profile": "author profile page",
    "jsonl": "JSON Lines file",
    "paperlists": "Paper Copilot list",
    "arxiv": "arXiv metadata snapshot",
    "openreview": "OpenReview notes",
}


@dataclass(frozen=True)
class Entry:
    """Where a version was read: a line of an input file."""

    path: str
    line: int
    format: str


@dataclass
class Version:
    name: str  # "ICML 2015", "arXiv", "author profile page (no venue or year)"
    status: str | None
    title: str | None  # only where it differs from the paper's
    url: str | None  # http(s) only
    entries: list[Entry] = field(default_factory=list)
    venue: str | None = None
    year: int | None = None
    listed: bool = True  # it adds a venue, a year, a link or a title to the others

    def facts(self) -> tuple[tuple[str, Any], ...]:
        """What it tells a reader of where the paper appeared: its venue, year, status, link
        and title, those it gives."""
        given = (
            ("venue", self.venue),
            ("year", self.year),
            ("status", self.status),
            ("url", self.url),
            ("title", self.title),
        )
        return tuple((name, value) for name, value in given if value)


def covers(fuller: Version, other: Version) -> bool:
    """`fuller` says all `other` says and more: every fact of `other` is one of its facts."""
    facts, others = fuller.facts(), other.facts()
    return len(facts) > len(others) and set(others) <= set(facts)


def mark_listed(versions: list[Version]) -> None:
    """A version is listed unless it tells nothing, or another version tells all it does
    and more. `covers` is transitive and strict, so every unlisted version with facts is
    covered by a listed one."""
    for version in versions:
        version.listed = bool(version.facts()) and not any(
            covers(other, version) for other in versions
        )


def http_link(url: str | None) -> str | None:
    """Only absolute http(s) links from the sources become links: anything else could run
    script (the rule that links in abstracts follow)."""
    return markup.safe_url(url) if url else None


def version_name(venue: str | None, year: int | None, format: str | None) -> str:
    if venue or year:
        return " ".join(str(part) for part in (venue, year) if part)
    kind = FORMAT_NAMES.get(format or "", format or "source")
    return f"{kind} (no venue or year)"


def own_title(title: str | None, paper_title: str | None) -> str | None:
    """A version's title where it is not the paper's up to case, accents, punctuation and
    spacing (the merge policy's comparison of titles)."""
    if not title or not title.strip():
        return None
    if paper_title and title_words(title) == title_words(paper_title):
        return None
    return title


def paper_versions(rows: Iterable[Mapping[str, Any]], paper_title: str | None) -> list[Version]:
    """The versions of a paper from its paper_sources rows (with `path` and `format` of their
    source), oldest first; entries that give the same venue, year, status, title and link
    are one version. Each says whether the list shows it (`listed`, mark_listed)."""
    versions: dict[tuple, Version] = {}
    for row in rows:
        name = version_name(row["venue"], row["year"], row["format"])
        title = own_title(row["title"], paper_title)
        url = http_link(row["url"])
        key = (row["year"] is None, row["year"] or 0, name, row["status"] or "", title, url)
        version = versions.setdefault(
            key, Version(name, row["status"], title, url, venue=row["venue"], year=row["year"])
        )
        version.entries.append(Entry(row["path"], row["line"], row["format"]))
    ordered = [
        versions[key]
        for key in sorted(versions, key=lambda key: tuple("" if v is None else v for v in key))
    ]
    mark_listed(ordered)
    return ordered
