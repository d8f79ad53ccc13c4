"""The records the stages pass on: a parser yields an entry (one paper as one source gave it)
or a problem; the prepare step turns an entry into a prepared entry (normalized: what the
writer stores); the writer keeps repeated entries as versions, and the merge policy resolves
versions into the paper they are."""

from dataclasses import dataclass, field
from typing import NamedTuple, TypedDict

# the kinds of link an entry may carry, in the order a page shows them: the paper's PDF, its
# code, its project page, its OpenReview forum, arXiv abstract page, DOI, open-access page
LINK_KINDS = ("pdf", "code", "project", "openreview", "arxiv", "doi", "oa")
# (kind, URL) pairs in LINK_KINDS order
Links = tuple[tuple[str, str], ...]


@dataclass
class Entry:
    path: str
    line: int
    abstract: str
    authors: list[str]
    truncated: bool
    track: str | None = None
    affiliations: list[str] = field(default_factory=list)
    title: str | None = None
    url: str | None = None
    # profile owner: an author of the paper even when the cut-short list hides them
    owner: str | None = None
    # where and when the paper appeared (JSON Lines keys, or sources.yml for text pages)
    venue: str | None = None
    year: int | None = None
    status: str | None = None
    # identifiers that mark two entries as versions of one paper (JSON Lines keys or the url)
    arxiv_id: str | None = None
    doi: str | None = None
    openreview_id: str | None = None
    # arXiv's subject categories (cs.LG, math.CO), the primary one first
    categories: list[str] = field(default_factory=list)
    # the authors' own keywords (Paper Copilot, OpenReview)
    keywords: list[str] = field(default_factory=list)
    # links a source gives, kind -> absolute URL, in LINK_KINDS order
    links: dict[str, str] = field(default_factory=dict)
    # aligned with `affiliations`: each one's country where the source gives it
    affiliation_countries: list[str | None] = field(default_factory=list)
    tldr: str | None = None
    # a citation count with the service that counted it ("Google Scholar"); None: unknown
    citations: int | None = None
    citations_source: str | None = None
    # the mean review rating and how many ratings it is the mean of
    rating: float | None = None
    rating_count: int | None = None
    # a dump record's id as a 64-bit digest (loader.read.dumps): a later record with the
    # same one is the same paper, skipped, also where the dump is read in pieces
    record_key: int | None = None


class EntryFields(TypedDict, total=False):
    """Fields of an Entry that a text format passes on as keyword arguments (its page's
    tracks are read from the page itself)."""

    title: str | None
    url: str | None
    owner: str | None
    venue: str | None
    year: int | None
    status: str | None
    arxiv_id: str | None
    doi: str | None
    openreview_id: str | None


@dataclass(frozen=True)
class Problem:
    path: str
    line: int
    message: str

    def __str__(self) -> str:
        return f"{self.path}:{self.line}: {self.message}"


class LeftOut(NamedTuple):
    """A record the build was asked to leave out (an arXiv record in none of the categories
    kept): counted, neither a paper nor a problem."""

    line: int
    record_key: int | None = None  # as its Entry's: a later copy is left out with it


# (name key, spelling): the key says which author it is, the spelling is how this entry wrote it
AuthorName = tuple[str, str]


class Track(NamedTuple):
    """A track as the catalog stores it: 'Area · Subarea', its area, its subarea (or None)."""

    name: str
    area: str
    subarea: str | None


class Affiliation(NamedTuple):
    slug: str
    name: str  # shown where a page lists the affiliation
    country: str | None = None  # as the source names it ("United States")


class PreparedEntry(NamedTuple):
    """One entry normalized: everything the writer stores of it, computed by the pure rules
    (in a parsing worker when the input is large), so that the writer only writes."""

    paper_id: str
    line: int
    label: str  # the title, or the heading derived from the abstract
    title: str | None
    abstract: str
    plain: str | None  # the abstract as plain text; None where that is the abstract itself
    # one author a name key, in the order the source lists them, and each one's position
    # (two flat tuples: the names' tuples are shared, so an entry adds two objects, not one
    # an author); the profile owner last with no position when the cut-short list does not
    # show them
    authors: tuple[AuthorName, ...]
    positions: tuple[int | None, ...]
    truncated: bool
    track: Track | None
    affiliations: tuple[Affiliation, ...]  # one a slug, in the order the entry gives them
    url: str | None
    venue: str | None
    year: int | None
    status: str | None
    version_keys: list[tuple[int, int]]  # (kind, key): see loader.rules.merge
    title_key: int | None  # the TITLE key among them, which tells titles apart
    keywords: tuple[str, ...]
    categories: tuple[str, ...]  # arXiv's, the primary one first
    links: Links = ()
    tldr: str | None = None
    citations: int | None = None
    citations_source: str | None = None
    rating: float | None = None
    rating_count: int | None = None


@dataclass(frozen=True, slots=True)  # slots: the writer holds one per repeated entry
class Version:
    """One source entry as the merge policy sees it. `authors` are (author id, position)
    pairs, position None for a profile owner the list does not show; `track` is a track name."""

    paper_id: str
    title: str | None = None
    venue: str | None = None
    year: int | None = None
    status: str | None = None
    url: str | None = None
    track: str | None = None
    truncated: bool = False
    authors: tuple[tuple[int, int | None], ...] = ()
    affiliations: tuple[int, ...] = ()
    keywords: tuple[str, ...] = ()
    categories: tuple[int, ...] = ()  # category ids, the primary one first
    # its row of paper_sources: the merge stage writes a merged paper's versions' titles and
    # links there (None where no row is known, as in the policy's own tests)
    source_id: int | None = None
    line: int | None = None
    links: Links = ()
    tldr: str | None = None
    citations: int | None = None
    citations_source: str | None = None
    citations_as_of: str | None = None  # the date of the source that counted them
    rating: float | None = None
    rating_count: int | None = None


@dataclass(frozen=True)
class Paper:
    """What a paper shows once its versions are merged."""

    id: str
    aliases: tuple[str, ...]  # the merged versions' own ids
    title: str | None
    venue: str | None
    year: int | None
    status: str | None
    url: str | None
    track: str | None
    truncated: bool
    authors: tuple[tuple[int, int | None], ...]  # (author id, position)
    affiliations: tuple[int, ...]
    source_count: int
    keywords: tuple[str, ...] = ()
    categories: tuple[int, ...] = ()  # category ids, in the order of the versions shown first
    links: Links = ()
    tldr: str | None = None
    citations: int | None = None
    citations_source: str | None = None
    citations_as_of: str | None = None
    rating: float | None = None
    rating_count: int | None = None
