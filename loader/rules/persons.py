"""Who is one person, across the catalog, where the sources give ids (an OpenReview profile,
an ORCID, a DBLP pid: loader.read.author_ids).

- All spellings that share an id (of any kind) are one person: `Wenjie Zhao` and `W. Zhao`
  with `~Wenjie_Zhao1` are one.
- One name with two ids of one kind is two people (`Yang Liu` `~Yang_Liu1` and `Yang Liu`
  `~Yang_Liu3`), and two people whose ids of one kind disagree are never made one, whatever
  else they share. The kinds are ranked (RANK): where a record's ids point to two people,
  its strongest id that someone holds decides, and its weaker ids become that person's too
  (a profile that lists a second DBLP pid is still one person). An id given beside two
  people who disagree is disputed: Paper Copilot's `orcid` and `dblp` lists are now and
  then a slot off their names (Andreas Geiger's ORCID beside Zeynep Akata), so such an id
  is no one's.
- A name without ids joins a person of the same name key only when exactly one such person
  shares a co-author or an affiliation with the paper that names it; else it stays the
  name-keyed author it is without ids.

Pure: ids, keys and sets in; person numbers out. The build (loader/build/persons.py) keeps
the state and writes the rows.
"""

from collections.abc import Callable, Collection, Iterable, Mapping

from loader.records import AuthorIds

# the kinds, strongest first: an OpenReview profile is the source's own account of who wrote
# the paper; ORCIDs and DBLP pids in the dumps are copied from those profiles, and their
# holders edit them (one real profile, ~Hannaneh_Hajishirzi1, comes with two DBLP pids)
RANK = {"openreview": 0, "orcid": 1, "dblp": 2}


def disagree(first: Mapping[str, Collection[str]], second: Mapping[str, Collection[str]]) -> bool:
    """Whether two persons' ids say they are two people: a kind both hold, with no value in
    common."""
    return any(
        kind in second and set(values).isdisjoint(second[kind]) for kind, values in first.items()
    )


class PersonIds:
    """The ids each person holds, and which person holds an id. Persons are numbers the
    caller gives (the build's author ids). An id is one person's; a person holds one id of a
    kind, or several of a weaker kind when a stronger one says they are one person."""

    def __init__(self) -> None:
        self.owner: dict[tuple[str, str], int] = {}  # (kind, value) -> person
        self.held: dict[int, dict[str, list[str]]] = {}  # person -> {kind: [values]}
        # ids given beside two people who disagree (a list shifted by a slot in the source):
        # no one's, never shown, never used to find anyone again
        self.disputed: set[tuple[str, str]] = set()

    def find(self, ids: AuthorIds) -> tuple[int | None, list[int]]:
        """(the person these ids are, or None for a new person; other persons the ids show
        to be that one too).

        The holder of the strongest id held is the person, unless it holds another id of a
        stronger kind the ids give (then it is someone else: `~Yang_Liu3` is not the holder
        of `~Yang_Liu1` whatever DBLP pid the two share). The holders of the other ids are
        the same person when no kind's ids disagree (disagree())."""
        if len(ids) == 1:  # most authors: one profile id, its holder's or no one's yet
            if ids[0] in self.disputed:
                return None, []
            return self.owner.get(ids[0]), []
        if self.disputed and not self.disputed.isdisjoint(ids):
            ids = tuple(pair for pair in ids if pair not in self.disputed)
        chosen = None
        stronger: set[str] = set()  # kinds of ids no one holds yet, stronger than the holder's
        # AuthorIds come strongest first (the order of RANK)
        for kind, value in ids:
            person = self.owner.get((kind, value))
            if person is None:
                stronger.add(kind)
            elif stronger.isdisjoint(self.held[person]):
                chosen = person
                break
        if chosen is None:
            self.dispute(ids, None, [])
            return None, []
        joined: list[int] = []
        held = {kind: list(values) for kind, values in self.held[chosen].items()}
        for pair in ids:
            person = self.owner.get(pair)
            if person is None or person == chosen or person in joined:
                continue
            if not disagree(self.held[person], held):
                joined.append(person)
                for kind, values in self.held[person].items():
                    held.setdefault(kind, []).extend(values)
        self.dispute(ids, chosen, joined)
        return chosen, joined

    def dispute(self, ids: AuthorIds, chosen: int | None, joined: list[int]) -> None:
        """The ids of `ids` that another person holds than the one they are: disputed."""
        owner = self.owner
        if all(owner.get(pair, chosen) == chosen for pair in ids):
            return
        for pair in ids:
            person = self.owner.get(pair)
            if person is not None and person != chosen and person not in joined:
                self.disputed.add(pair)

    def add(self, person: int, ids: AuthorIds) -> None:
        """Give `person` the ids no one holds yet (find() chose it for them)."""
        if len(ids) == 1 and person not in self.held:  # a new person of one id: most
            pair = ids[0]
            if pair not in self.owner and pair not in self.disputed:
                self.held[person] = {pair[0]: [pair[1]]}
                self.owner[pair] = person
                return
        held = self.held.setdefault(person, {})
        for kind, value in ids:
            if (kind, value) not in self.owner and (kind, value) not in self.disputed:
                held.setdefault(kind, []).append(value)
                self.owner[kind, value] = person

    def join(self, kept: int, gone: int) -> None:
        """`gone` is `kept` (find() said so): its ids go to `kept`."""
        ids = self.held.pop(gone, {})
        for kind, values in ids.items():
            for value in values:
                del self.owner[kind, value]
                self.held.setdefault(kept, {}).setdefault(kind, []).append(value)
                self.owner[kind, value] = kept

    def rows(self) -> Iterable[tuple[int, str, str]]:
        """(person, kind, value) of every id held, in person order."""
        for person in sorted(self.held):
            for kind, values in self.held[person].items():
                for value in values:
                    if (kind, value) not in self.disputed:
                        yield person, kind, value


def person_for_name(
    coauthors: Collection[str],
    affiliations: Collection[int],
    candidates: Iterable[int],
    coauthors_of: Callable[[int], Collection[str]],
    affiliations_of: Callable[[int], Collection[int]],
) -> int | None:
    """The one person (of `candidates`, the persons with ids who share a name key with a name
    that has none) that the name is: the only one sharing a co-author or an affiliation with
    the paper naming it (`coauthors`: the name keys of the paper's other authors; a person's
    co-authors are the keys of theirs on all their papers). None when no one, or more than
    one, does."""
    qualifying = [
        person
        for person in candidates
        if not set(coauthors).isdisjoint(coauthors_of(person))
        or not set(affiliations).isdisjoint(affiliations_of(person))
    ]
    return qualifying[0] if len(qualifying) == 1 else None
