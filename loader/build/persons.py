"""People by their ids in the build (the rule: loader/rules/persons.py).

While the entries stream, an author the source gives ids for is found by them (IdentifiedAuthors,
held by the writer): every spelling with one of a person's ids gets that person's author id,
and a name with ids of its own is a person apart from the name-keyed author of its name.
After the stream, join_persons() makes one person of two that an entry showed to be one, and
gives each name without ids to the one person of its name key that shares a co-author or an
affiliation with its paper (as many rows as that moves: a name-keyed author's papers stay
theirs otherwise). Nothing is parsed again: the pass reads paper_authors and
paper_affiliations back."""

import json
from collections import defaultdict
from collections.abc import Iterable
from dataclasses import dataclass, field, replace
from typing import TYPE_CHECKING

from loader.records import AuthorIds
from loader.rules.names import name_key
from loader.rules.persons import PersonIds, person_for_name

if TYPE_CHECKING:
    from loader.build.writer import CatalogWriter


class IdentifiedAuthors:
    """The persons the sources give ids for: author id -> ids, and the joins an entry showed."""

    def __init__(self) -> None:
        self.ids = PersonIds()
        self.keys: dict[int, str] = {}  # author id -> name key of the first spelling seen
        self.joins: list[tuple[int, int]] = []  # (kept, gone): one person
        # ids as an entry gives them -> their person: most persons recur with the same ids.
        # Emptied when a join or a disputed id may make the answer another
        self.known: dict[AuthorIds, int] = {}

    def find(self, ids: AuthorIds) -> int | None:
        """The author id of the person with these ids, or None for a new person (then add())."""
        if len(ids) == 1:  # most authors: one profile id, its holder's or no one's yet
            if ids[0] in self.ids.disputed:
                return None
            return self.ids.owner.get(ids[0])
        person = self.known.get(ids)
        if person is not None:
            return person
        disputed = len(self.ids.disputed)
        person, joined = self.ids.find(ids)
        if joined or len(self.ids.disputed) != disputed:
            self.known.clear()
        if person is None:
            return None
        for gone in joined:
            self.ids.join(person, gone)
            self.joins.append((person, gone))
        self.ids.add(person, ids)
        self.known[ids] = person
        return person

    def add(self, author_id: int, key: str, ids: AuthorIds) -> None:
        self.keys[author_id] = key
        self.ids.add(author_id, ids)
        if len(ids) > 1:
            self.known[ids] = author_id

    def rows(self) -> Iterable[tuple[int, str, str]]:
        """The author_ids rows: (author id, kind, value)."""
        return self.ids.rows()


@dataclass
class Joined:
    """What join_persons() changed: the papers whose author lists changed, the authors some
    paper lists under another id now, and how many links moved."""

    papers: set[str] = field(default_factory=set)
    replaced: set[int] = field(default_factory=set)
    names_joined: int = 0
    persons_joined: int = 0
    # (person, paper, the name's author id, "co-author" or "affiliation"): what joined whom,
    # for bench/persons_report.py
    evidence: list[tuple[int, str, int, str]] = field(default_factory=list)


def move_link(writer: "CatalogWriter", paper_id: str, gone: int, kept: int, joined: Joined) -> bool:
    """Paper `paper_id` lists `kept` where it listed `gone` (its stored row and its repeated
    entries); not where it lists both (two people of one paper)."""
    execute = writer.db.conn.execute
    both = execute(
        "select count(*) from paper_authors where paper_id = ? and author_id in (?, ?)",
        [paper_id, gone, kept],
    ).fetchone()[0]
    if both == 2:
        return False
    execute(
        "update paper_authors set author_id = ? where paper_id = ? and author_id = ?",
        [kept, paper_id, gone],
    )
    versions = writer.duplicates.get(paper_id)
    if versions:
        writer.duplicates[paper_id] = [
            replace(v, authors=tuple((kept if a == gone else a, p) for a, p in v.authors))
            for v in versions
        ]
    writer.move_entries(gone, kept, 1 + len(versions or ()))
    joined.papers.add(paper_id)
    joined.replaced.add(gone)
    return True


def move_links(writer: "CatalogWriter", moves: list[tuple[int, str, int]], joined: Joined) -> None:
    """Each (person, paper, author) of `moves`: the paper lists the person where it listed
    the author (a name without ids), in its stored row and its repeated entries."""
    writer.db.conn.executemany(
        "update paper_authors set author_id = ? where paper_id = ? and author_id = ?", moves
    )
    for kept, paper_id, gone in moves:
        versions = writer.duplicates.get(paper_id)
        if versions:
            writer.duplicates[paper_id] = [
                replace(v, authors=tuple((kept if a == gone else a, p) for a, p in v.authors))
                for v in versions
            ]
        # the paper's list of names needs writing again only where the person is shown
        # another way (a person renamed later has all their papers' lists written again)
        if writer.author_names[gone] != writer.author_names[kept]:
            joined.papers.add(paper_id)
        writer.move_entries(gone, kept, 1 + len(versions or ()))
        joined.replaced.add(gone)
    joined.names_joined += len(moves)


def papers_of(writer: "CatalogWriter", authors: Iterable[int]) -> dict[int, list[str]]:
    """author id -> ids of the papers listing them."""
    found: dict[int, list[str]] = defaultdict(list)
    rows = writer.db.conn.execute(
        "select author_id, paper_id from paper_authors where author_id in "
        "(select value from json_each(?)) order by author_id, paper_id",
        [json.dumps(sorted(set(authors)))],
    )
    for author, paper in rows:
        found[author].append(paper)
    return found


def join_persons(writer: "CatalogWriter", identified: IdentifiedAuthors) -> Joined:
    """After the stream, before the merge stage: the persons an entry showed to be one are
    one, and names without ids join the one person the rule gives them (rules/persons.py).
    `identified`: the writer's persons."""
    joined = Joined()
    for kept, gone in identified.joins:
        for paper in papers_of(writer, [gone]).get(gone, []):
            move_link(writer, paper, gone, kept, joined)
        identified.keys.pop(gone, None)
        joined.persons_joined += 1
    # persons by every name key they are spelled with
    by_key: dict[str, list[int]] = defaultdict(list)
    for person, key in identified.keys.items():
        keys = {key} | {name_key(s) for s in writer.other_spellings.get(person, ())}
        for one in keys:
            by_key[one].append(person)
    named = {author: by_key[key] for key, author in writer.author_keys.items() if key in by_key}
    if not named:
        return joined
    persons = {person for candidates in named.values() for person in candidates}
    papers = papers_of(writer, [*named, *persons])
    listed = lists_of(writer, {paper for ids in papers.values() for paper in ids})
    coauthor_keys: dict[int, set[str]] = {}
    affiliations_of: dict[int, set[int]] = {}
    for person in persons:
        coauthor_keys[person] = set()
        affiliations_of[person] = set()
        for paper in papers.get(person, ()):
            authors, affiliations = listed[paper]
            coauthor_keys[person].update(k for a, k in authors if a != person)
            affiliations_of[person].update(affiliations)
    present = {(paper, a) for paper, (authors, _) in listed.items() for a, _ in authors}
    moves: list[tuple[int, str, int]] = []  # (person, paper, name's author id)
    for author, candidates in sorted(named.items()):
        own_key = writer.key_of(author)
        for paper in papers.get(author, ()):
            authors, affiliations = listed[paper]
            others = {k for a, k in authors if a != author and k != own_key}
            found = person_for_name(
                others,
                affiliations,
                candidates,
                lambda p: coauthor_keys[p],
                lambda p: affiliations_of[p],
            )
            # not where the paper lists the person too: two people of one list
            if found is not None and (paper, found) not in present:
                present.add((paper, found))
                moves.append((found, paper, author))
                shared = (
                    "co-author" if not others.isdisjoint(coauthor_keys[found]) else "affiliation"
                )
                joined.evidence.append((found, paper, author, shared))
    move_links(writer, moves, joined)
    return joined


def lists_of(
    writer: "CatalogWriter", papers: set[str]
) -> dict[str, tuple[list[tuple[int, str]], set[int]]]:
    """paper id -> ([(author id, name key)], {affiliation id}) as the stream wrote them."""
    listed: dict[str, tuple[list[tuple[int, str]], set[int]]] = {
        paper: ([], set()) for paper in papers
    }
    ids = json.dumps(sorted(papers))
    keys = writer.author_key_of()
    for paper, author in writer.db.conn.execute(
        "select paper_id, author_id from paper_authors where paper_id in "
        "(select value from json_each(?))",
        [ids],
    ):
        key = keys.get(author)
        listed[paper][0].append((author, writer.key_of(author) if key is None else key))
    for paper, affiliation in writer.db.conn.execute(
        "select paper_id, affiliation_id from paper_affiliations where paper_id in "
        "(select value from json_each(?))",
        [ids],
    ):
        listed[paper][1].add(affiliation)
    return listed
