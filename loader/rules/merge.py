"""The merge policy: which source entries are versions of one paper and what that paper shows.

Pure, no SQL: the build (loader/build/) stores the keys this module gives each entry, finds the
entries that share one, and asks `resolve` what the merged paper is.

Entries are versions of one paper when
- they have the same abstract up to whitespace and Unicode form and the same title, or no
  title (one paper id: this is how the builder streams them, one row per id), or
- they share an identifier (arXiv id without its version, DOI, OpenReview id), or
- their abstracts are equal up to case, punctuation and whitespace (100 letters and digits
  at least), or
- they have the same title up to case, accents, punctuation and spacing (two words at
  least), and share at least one author (by name key).
Where entries sharing an identifier or an abstract carry two different titles, only those
that share an author or a title are versions (see direct_matches): real sources give
unrelated papers one placeholder abstract ("Abstract Unavailable", NeurIPS 1987-2001) or the
abstract of the paper before them. Merges are transitive: if A and B are versions, and B and
C, all three are one paper.
"""

import functools
import hashlib
import itertools
import re
import string
import unicodedata
from collections.abc import Callable, Collection, Hashable, Iterable, Mapping, Sequence

from loader.records import LINK_KINDS, Entry, Links, Paper, Version
from loader.rules.names import without_accents

# keys that make two entries versions at once, and the title key that also needs an author
DIRECT, TITLE = 0, 1
PREPRINT_VENUES = {"arxiv", "corr"}
# OpenReview lists rejected and withdrawn submissions, and ICLR offered some rejected papers
# its workshop track: the version a venue accepted to its main track is shown first
NOT_ACCEPTED = re.compile(r"reject|withdraw", re.IGNORECASE)
WORKSHOP = re.compile(r"workshop", re.IGNORECASE)
ARXIV_PREFIX = re.compile(r"^(?:arxiv:|https?://arxiv\.org/(?:abs|pdf)/)", re.IGNORECASE)
ARXIV_VERSION = re.compile(r"v\d+$")
# below these, a title ("Withdrawn") or an abstract ("Part of", "withdrawn paper") is more
# often a placeholder many papers share than the paper's own: only exact abstracts merge then
TITLE_MIN_WORDS = 2
ABSTRACT_MIN_CHARACTERS = 100
NOT_LETTER_OR_DIGIT = re.compile(r"[\W_]+")
ASCII_NOT_LETTER_OR_DIGIT = bytes(c for c in range(128) if not chr(c).isalnum())
ASCII = bytes(range(128))
ASCII_LOWERCASE = bytes.maketrans(string.ascii_uppercase.encode(), string.ascii_lowercase.encode())
DOI_PREFIX = re.compile(r"^(?:doi:|https?://(?:dx\.)?doi\.org/)", re.IGNORECASE)
# (author id, position): position None for a profile owner the list does not show
AuthorLink = tuple[int, int | None]
# (DIRECT or TITLE, hash_key)
VersionKey = tuple[int, int]


def hash_key(kind: str, text: str) -> int:
    """An 8-byte hash as a signed SQLite integer: the builder stores keys, never the text."""
    digest = hashlib.blake2b(f"{kind}\0{text}".encode(), digest_size=8).digest()
    return int.from_bytes(digest, "big", signed=True)


def letters_and_digits(text: str) -> str:
    """Case, accents, punctuation and whitespace removed: 'Tramèr, F.' -> 'tramerf'."""
    data = text.encode("utf-8", "surrogatepass")
    if text.isascii():  # one bytes.translate lowercases and drops, where str passes go thrice
        return data.translate(ASCII_LOWERCASE, ASCII_NOT_LETTER_OR_DIGIT).decode()
    # a text is read character by character (NFKD only reorders combining marks, which are no
    # letters: tests/test_build_speed4.py), so the ASCII is read as above and each of the few
    # other characters (math: 'ε', 'ℓ') is replaced by its own reading, where NFKD and casefold
    # would go over all of it
    others = set(data.translate(None, ASCII).decode("utf-8", "surrogatepass"))
    readings = {character: character_letters(character) for character in others}
    if any(readings.get(c, c) != c for reading in readings.values() for c in reading):
        return letters_and_digits_of_all(text)  # a reading another replace would change
    text = data.translate(ASCII_LOWERCASE, ASCII_NOT_LETTER_OR_DIGIT).decode(
        "utf-8", "surrogatepass"
    )
    for character, reading in readings.items():
        if reading != character:
            text = text.replace(character, reading)
    return text


@functools.lru_cache(maxsize=4096)
def character_letters(character: str) -> str:
    return letters_and_digits_of_all(character)


def letters_and_digits_of_all(text: str) -> str:
    """letters_and_digits read over the whole text at once."""
    # NFKD splits accents into combining marks, which are no letters. bytes.translate drops
    # the ASCII characters that are no letters or digits; of the rest (a few characters, all
    # their UTF-8 bytes >= 0x80) each one that is none is taken out with str.replace:
    # NOT_LETTER_OR_DIGIT over the whole text would have SRE look up every character's category
    text = unicodedata.normalize("NFKD", text.casefold())
    data = text.encode("utf-8", "surrogatepass").translate(None, ASCII_NOT_LETTER_OR_DIGIT)
    text = data.decode("utf-8", "surrogatepass")
    for character in set(data.translate(None, ASCII).decode("utf-8", "surrogatepass")):
        if not character.isalnum():  # for `re`, `\w` is str.isalnum() or '_' (ASCII)
            text = text.replace(character, "")
    return text


def title_words(title: str) -> str:
    """'Deep  Learning: A Survey.' and 'deep learning - a survey' -> 'deep learning a survey'."""
    return " ".join(NOT_LETTER_OR_DIGIT.split(without_accents(title.casefold()))).strip()


def arxiv_key(arxiv_id: str) -> str:
    """'arXiv:1706.03762v5' and '1706.03762' are one preprint."""
    return ARXIV_VERSION.sub("", ARXIV_PREFIX.sub("", arxiv_id.strip())).lower()


def doi_key(doi: str) -> str:
    return DOI_PREFIX.sub("", doi.strip()).lower()  # DOIs are case-insensitive


def version_keys(entry: Entry, text: str) -> list[VersionKey]:
    """(kind, key) pairs of one entry; `text` is its abstract as plain text. Entries sharing
    a DIRECT key are versions; entries sharing a TITLE key are when they share an author."""
    keys: list[VersionKey] = []
    normal: Callable[[str], str]
    for kind, value, normal in (
        ("arxiv", entry.arxiv_id, arxiv_key),
        ("doi", entry.doi, doi_key),
        ("openreview", entry.openreview_id, str.strip),
    ):
        if value and normal(value):
            keys.append((DIRECT, hash_key(kind, normal(value))))
    loose = letters_and_digits(text)
    if len(loose) >= ABSTRACT_MIN_CHARACTERS:
        keys.append((DIRECT, hash_key("abstract", loose)))
    elif loose:  # a short abstract links only where it is the same text: a titled entry's id
        # holds its title, so this is what joins it to an untitled copy (a listing's)
        keys.append((DIRECT, hash_key("short abstract", " ".join(text.split()))))
    words = identifying_title(entry.title)
    if words:
        keys.append((TITLE, hash_key("title", words)))
    return keys


def identifying_title(title: str | None) -> str | None:
    """The title's words when there are enough of them to tell a paper ("Withdrawn" is a
    placeholder many papers share), else None."""
    words = title_words(title) if title else ""  # most entries have none
    return words if len(words.split()) >= TITLE_MIN_WORDS else None


def direct_matches(
    papers: Sequence[tuple[str, Hashable | None, Collection[int]]],
) -> list[tuple[str, str]]:
    """Pairs among [(paper id, title key or None, author ids)] that share an identifier or
    an abstract and are versions. With one title among them (or none) all are; with two or
    more, only those sharing an author or a title: two titled papers by other authors given
    one abstract are two papers."""
    ids = [paper for paper, _, _ in papers]
    if len({title for _, title, _ in papers if title is not None}) < 2:
        return list(itertools.pairwise(ids))
    first_titled: dict[Hashable, str] = {}
    pairs = title_matches([(paper, authors) for paper, _, authors in papers])
    for paper, title, _ in papers:
        if title is not None:
            first = first_titled.setdefault(title, paper)
            if first != paper:
                pairs.append((first, paper))
    return pairs


def title_matches(papers: Iterable[tuple[str, Iterable[int]]]) -> list[tuple[str, str]]:
    """Pairs among [(paper id, author ids)] with one title that join every two papers sharing
    an author (each to the first paper with that author): linear in the authors, where
    comparing every two papers would be quadratic for a common title ("Book Review")."""
    first_with: dict[int, str] = {}
    pairs: list[tuple[str, str]] = []
    for paper, authors in papers:
        for author in sorted(authors):
            first = first_with.setdefault(author, paper)
            if first != paper:
                pairs.append((first, paper))
    return pairs


class VersionGroups:
    """Union-find over paper ids: transitive merges, whatever order the pairs come in."""

    def __init__(self) -> None:
        self.parent: dict[str, str] = {}

    def find(self, item: str) -> str:
        root = item
        while (parent := self.parent.get(root, root)) != root:
            root = parent
        while item != root:  # path compression: later finds are one step
            self.parent[item], item = root, self.parent.get(item, item)
        return root

    def union(self, first: str, second: str) -> None:
        for item in (first, second):
            self.parent.setdefault(item, item)
        first, second = self.find(first), self.find(second)
        if first != second:
            self.parent[max(first, second)] = min(first, second)

    def groups(self) -> list[list[str]]:
        """Every set of two or more ids, each sorted, in a stable order."""
        members: dict[str, list[str]] = {}
        for item in self.parent:
            members.setdefault(self.find(item), []).append(item)
        return sorted(sorted(group) for group in members.values() if len(group) > 1)


def venue_rank(venue: str | None) -> int:
    """A venue over a preprint server, a preprint server over no venue at all."""
    if not venue:
        return 0
    return 1 if venue.strip().casefold() in PREPRINT_VENUES else 2


def status_rank(status: str | None) -> int:
    """0 accepted (or unknown), 1 a workshop, 2 rejected or withdrawn."""
    if not status:
        return 0
    return 2 if NOT_ACCEPTED.search(status) else int(bool(WORKSHOP.search(status)))


def shown_rank(version: Version) -> tuple[int | bool | str, ...]:
    """Sort key, smallest first: the version a paper shows. Any venue over arXiv, then the
    latest year, then a main-track acceptance over a workshop over a rejected or withdrawn
    submission, then a real title over a placeholder ("Withdrawn") or none, then the complete
    and longer author list; on a tie, content alone decides (never input order)."""
    return (
        -venue_rank(version.venue),
        -(version.year or 0),
        status_rank(version.status),
        identifying_title(version.title) is None,
        version.truncated,
        -len(version.authors),
        version.paper_id,
        *(value or "" for value in (version.title, version.venue, version.status)),
        *(value or "" for value in (version.url, version.track)),
    )


def author_list(
    ranked: Sequence[Version], people: Mapping[int, int] | None = None
) -> tuple[AuthorLink, ...]:
    """Positions from the complete and longest list (the shown one on a tie); authors only
    other versions name follow it in their order; a profile owner no list shows keeps no
    position. `people` maps an author id to the one this paper shows for that person
    (loader/rules/people.py): one person is listed once."""
    best = min(ranked, key=lambda v: (v.truncated, -len([a for a in v.authors if a[1]])))
    people = people or {}
    links = {people.get(author, author): position for author, position in best.authors}
    last = max((p for p in links.values() if p), default=0)
    for version in ranked:
        for author, position in sorted(version.authors, key=lambda a: (a[1] is None, a[1] or 0)):
            author = people.get(author, author)
            if position and not links.get(author):
                last += 1
                links[author] = last
            links.setdefault(author, None)
    return tuple(links.items())


def merged_keywords(ranked: Sequence[Version]) -> tuple[str, ...]:
    """Every version's keywords, one of each (case aside) as first spelled."""
    keywords: dict[str, str] = {}
    for version in ranked:
        for keyword in version.keywords:
            keywords.setdefault(keyword.casefold(), keyword)
    return tuple(keywords.values())


def merged_links(ranked: Sequence[Version]) -> Links:
    """One link a kind, from the best-ranked version giving that kind, in LINK_KINDS order."""
    links: dict[str, str] = {}
    for version in ranked:
        for kind, url in version.links:
            links.setdefault(kind, url)
    return tuple((kind, links[kind]) for kind in LINK_KINDS if kind in links)


def most_cited(ranked: Sequence[Version]) -> Version | None:
    """The version giving the highest citation count (the better-ranked on a tie), or None."""
    counted = [version for version in ranked if version.citations is not None]
    return max(counted, key=lambda version: version.citations or 0, default=None)


def resolve(versions: Iterable[Version], people: Mapping[int, int] | None = None) -> Paper:
    """The paper the versions are: the shown version's id, venue, year and status; the
    title (a real one over a placeholder), url and track of the best-ranked version that has
    one; all authors (each person once: `people`, see author_list), affiliations, keywords
    (one of each, case aside), categories and links (one a kind), those of better-ranked
    versions first; the highest citation count with its source and date; the rating and
    TL;DR of the best-ranked version with one; the other ids as aliases."""
    ranked = sorted(versions, key=shown_rank)
    shown = ranked[0]

    def first(field):
        return next((getattr(v, field) for v in ranked if getattr(v, field)), None)

    ids = sorted({v.paper_id for v in ranked})
    cited = most_cited(ranked)
    rated = next((v for v in ranked if v.rating is not None), None)
    return Paper(
        id=shown.paper_id,
        aliases=tuple(i for i in ids if i != shown.paper_id),
        title=next((v.title for v in ranked if identifying_title(v.title)), first("title")),
        venue=shown.venue,
        year=shown.year,
        status=shown.status,
        url=first("url"),
        track=first("track"),
        truncated=all(v.truncated for v in ranked),
        authors=author_list(ranked, people),
        affiliations=tuple(sorted({a for v in ranked for a in v.affiliations})),
        source_count=len(ranked),
        keywords=merged_keywords(ranked),
        categories=tuple(dict.fromkeys(c for v in ranked for c in v.categories)),
        links=merged_links(ranked),
        tldr=first("tldr"),
        citations=cited.citations if cited else None,
        citations_source=cited.citations_source if cited else None,
        citations_as_of=cited.citations_as_of if cited else None,
        rating=rated.rating if rated else None,
        rating_count=rated.rating_count if rated else None,
    )
