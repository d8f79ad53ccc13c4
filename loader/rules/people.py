"""Which names of one paper's versions are one person, and which of their spellings the paper
keeps.

Name keys (names.py) tell spellings of one name apart everywhere in the catalog, and keep
initials (`Blake A. Richards` is not `Blake Richards`): across papers those are often other
people. Across the versions of one paper they are not: an ICLR submission that lists `Blake A.
Richards` third and its NeurIPS version that lists `Blake Richards` third are one paper, which
would list both. So two versions' lists are read side by side: the names both give, in the
order both give them, hold the lists together, and the names between two of those (or before
the first, after the last) stand at one place. Two names at one place are one person when
- one is the other with middle initials added (`ann lee` / `ann b lee`; `jonathan q smith
  jones` / `jonathansmith jones`: the key runs a hyphenated surname's first part into the
  given names, so the given names' words are compared run together), or
- they are one edit apart (`brandon reagan` / `brandon reagen`, `ana b costa` / `anab costa`),
  each the one name at that place that the other list does not give, and a name both lists
  give in order is beside them: the names beside them match, or
- they have one surname, stand at the same place of their stretch (a one-name stretch with a
  matching name beside, or the same index of a longer one), and one's first given name is the
  other's initial or short form (`t li` / `thomas li`, `tom li` / `thomas li`, `josh` /
  `joshua`: the shorter one's letters in order in the longer one, the first letter the same),
  the other given names equal up to initials; or one's given names are the other's followed
  by surname particles a source dropped (`hado van hasselt` / `hado hasselt`).
  `robert` / `bob` and `alexei` / `alyosha` stay two: nicknames are no short forms.

The paper keeps the fuller name: more words (initials), then the one more entries of the
catalog use, then the longer key. Two names of one version's list are never one person, also
through other names (merges are transitive). Pure: name keys and counts in, ids out.
"""

import bisect
from collections.abc import Callable, Iterator, Sequence

from loader.records import Version

# versions with more lists than this are no one paper's versions but papers a source gave one
# placeholder abstract (README: what it does not do yet), and every two lists are compared
MAX_LISTS = 32


def edit_distance_at_most_one(first: str, second: str) -> bool:
    """Whether one insertion, deletion or substitution (or none) turns one into the other."""
    if abs(len(first) - len(second)) > 1:
        return False
    shorter, longer = sorted((first, second), key=len)
    start = 0
    while start < len(shorter) and shorter[start] == longer[start]:
        start += 1
    if len(shorter) == len(longer):
        return shorter[start + 1 :] == longer[start + 1 :]
    return shorter[start:] == longer[start + 1 :]


def full_words(given: Sequence[str]) -> str:
    """The given names' words of more than one letter, run together: a key runs the words
    of a given name (and of a hyphenated surname's first part) together, initials apart."""
    return "".join(word for word in given if len(word) > 1)


def initials_of(given: Sequence[str]) -> list[str]:
    return [word for word in given if len(word) == 1]


def in_order_within(shorter: Sequence[str] | str, longer: Sequence[str] | str) -> bool:
    """Every item of `shorter` in `longer`, in order (a subsequence)."""
    remaining = iter(longer)
    return all(item in remaining for item in shorter)


def initials_apart(first: str, second: str) -> bool:
    """One key is the other with middle initials added: the same surname (last word), the
    same given names' words run together, and one's initials the other's with more."""
    a, b = first.split(), second.split()
    if len(a) < 2 or len(b) < 2 or a[-1] != b[-1]:
        return False
    given_a, given_b = a[:-1], b[:-1]
    if full_words(given_a) != full_words(given_b):
        return False
    if not full_words(given_a) and given_a[0] != given_b[0]:  # initials only: the first stays
        return False
    shorter, longer = sorted((initials_of(given_a), initials_of(given_b)), key=len)
    return len(shorter) < len(longer) and in_order_within(shorter, longer)


# words of a surname a source may drop ("Hado Hasselt" for "Hado van Hasselt")
SURNAME_PARTICLES = frozenset(
    {"van", "von", "der", "den", "de", "da", "di", "del", "della", "du", "dos", "das", "le", "la"}
)


def only_particles(text: str) -> bool:
    """`text` is surname particles run together ("van", "vanden", "vonder")."""
    if not text:
        return True
    return any(
        text.startswith(particle) and only_particles(text[len(particle) :])
        for particle in SURNAME_PARTICLES
    )


def short_form_of(shorter: str, longer: str) -> bool:
    """A given name's initial or short form: the same first letter, the shorter one's letters
    in order in the longer (`t`, `tom`, `thom` of `thomas`; `josh` of `joshua`), an initial or
    three letters at least."""
    # two letters say too little: `xi` / `xiao`, `yu` / `yuan` are names of their own
    return (
        len(shorter) < len(longer)
        and len(shorter) != 2
        and shorter[0] == longer[0]
        and in_order_within(shorter[1:], longer[1:])
    )


def short_form_apart(first: str, second: str) -> bool:
    """One surname; one's first given name the other's initial or short form and their other
    given names equal up to initials (`tom griffiths` / `thomas l griffiths`), or one's given
    names the other's with surname particles after them (`hado hasselt` / `hado van
    hasselt`)."""
    a, b = first.split(), second.split()
    if first == second or len(a) < 2 or len(b) < 2 or a[-1] != b[-1]:
        return False
    given_a, given_b = a[:-1], b[:-1]
    shorter, longer = sorted((given_a[0], given_b[0]), key=len)
    if short_form_of(shorter, longer) and full_words(given_a[1:]) == full_words(given_b[1:]):
        initials = sorted((initials_of(given_a[1:]), initials_of(given_b[1:])), key=len)
        return in_order_within(*initials)
    shorter, longer = sorted((full_words(given_a), full_words(given_b)), key=len)
    return (
        bool(shorter)
        and longer.startswith(shorter)
        and len(longer) > len(shorter)
        and only_particles(longer[len(shorter) :])
    )


def shared_in_order(first: Sequence[int], second: Sequence[int]) -> list[int]:
    """The longest run of names both lists give in the same order (each list names a person
    once): the longest increasing sequence of their places in `second`, in `first`'s order."""
    where = {author: index for index, author in enumerate(second)}
    places = [(where[author], author) for author in first if author in where]
    tails: list[int] = []  # tails[k]: the smallest place ending a run of k + 1
    ends: list[int] = []  # index into places of that run's end
    before = [-1] * len(places)
    for index, (place, _) in enumerate(places):
        k = bisect.bisect_left(tails, place)
        if k:
            before[index] = ends[k - 1]
        if k == len(tails):
            tails.append(place)
            ends.append(index)
        else:
            tails[k], ends[k] = place, index
    run: list[int] = []
    index = ends[-1] if ends else -1
    while index >= 0:
        run.append(places[index][1])
        index = before[index]
    return run[::-1]


def stretches(
    first: Sequence[int], second: Sequence[int]
) -> Iterator[tuple[list[int], list[int], bool]]:
    """The stretches of two lists between the names they give in the same order (and before
    the first, after the last): (first's names there, second's, whether such a name is beside
    the stretch). Names both lists give elsewhere (two authors swapped) are left out of them:
    they are known, and stand beside no one."""
    shared = shared_in_order(first, second)
    in_first, in_second = set(first), set(second)
    i = j = 0
    for author in [*shared, None]:
        end_i = first.index(author, i) if author is not None else len(first)
        end_j = second.index(author, j) if author is not None else len(second)
        ours = [a for a in first[i:end_i] if a not in in_second]
        theirs = [a for a in second[j:end_j] if a not in in_first]
        if ours and theirs:
            yield ours, theirs, author is not None or (i > 0 and j > 0)
        i, j = end_i + 1, end_j + 1


class People:
    """Author ids as groups of one person, each group shown under its fullest id. `apart`
    holds each version's ids: a group never takes two ids of one version."""

    def __init__(self, apart: list[frozenset[int]], rank: Callable[[int], tuple]) -> None:
        self.apart = apart
        self.rank = rank
        self.shown: dict[int, int] = {}  # author id -> the group's shown id (absent: itself)
        self.members: dict[int, set[int]] = {}  # shown id -> the group

    def find(self, author: int) -> int:
        return self.shown.get(author, author)

    def join(self, first: int, second: int) -> bool:
        """One person, unless a version lists someone of each group."""
        first, second = self.find(first), self.find(second)
        if first == second:
            return False
        one = self.members.get(first, {first})
        other = self.members.get(second, {second})
        if any(ids & one and ids & other for ids in self.apart):
            return False
        group = one | other
        kept = min(group, key=self.rank)
        self.members.pop(first, None)
        self.members.pop(second, None)
        self.members[kept] = group
        for author in group:
            if author != kept:
                self.shown[author] = kept
        self.shown.pop(kept, None)
        return True


def surname_and_words(key: str) -> tuple[str, str]:
    words = key.split() or [""]
    return words[-1], full_words(words[:-1])


def one_person_pairs(
    lists: Sequence[Sequence[int]], key_of: Callable[[int], str]
) -> list[tuple[int, int]]:
    """Pairs of ids that two lists give at one place (in one stretch between the names they
    share) and the rule makes one person."""
    pairs: list[tuple[int, int]] = []
    for i, first in enumerate(lists):
        for second in lists[i + 1 :]:
            for ours, theirs, beside in stretches(first, second):
                if len(ours) == 1 and len(theirs) == 1 and beside:
                    our_key, their_key = key_of(ours[0]), key_of(theirs[0])
                    if (
                        edit_distance_at_most_one(our_key, their_key)
                        or initials_apart(our_key, their_key)
                        or short_form_apart(our_key, their_key)
                    ):
                        pairs.append((ours[0], theirs[0]))
                    continue
                # a stretch may be long (a collaboration's hundreds of names): only names
                # with the same surname and given names' words can differ by initials
                by_words: dict[tuple[str, str], list[int]] = {}
                for author in theirs:
                    by_words.setdefault(surname_and_words(key_of(author)), []).append(author)
                for place, author in enumerate(ours):
                    key = key_of(author)
                    for candidate in by_words.get(surname_and_words(key), ()):
                        if initials_apart(key, key_of(candidate)):
                            pairs.append((author, candidate))
                    # a short form only at the same place of the stretch
                    if place < len(theirs) and short_form_apart(key, key_of(theirs[place])):
                        pairs.append((author, theirs[place]))
    return pairs


def one_person_ids(
    versions: Sequence[Version], key_of: Callable[[int], str], uses_of: Callable[[int], int]
) -> dict[int, int]:
    """{author id: the id the paper shows for that person} for every id of the versions'
    lists shown under another one; empty when all versions name the same people.

    `key_of` gives an author id's name key, `uses_of` how many entries of the catalog name
    them. Applied until nothing changes (a merge can make the names beside another match), so
    applying it to its own result changes nothing."""

    def rank(author: int) -> tuple[int, int, int, str]:
        key = key_of(author)
        return (-len(key.split()), -uses_of(author), -len(key), key)

    people = People([frozenset(a for a, _ in v.authors) for v in versions], rank)
    changed = True
    while changed:
        lists = {
            tuple(people.find(a) for _, a in sorted((p, a) for a, p in v.authors if p))
            for v in versions
        }
        if not 2 <= len(lists) <= MAX_LISTS:
            break
        pairs = one_person_pairs(sorted(lists), key_of)
        changed = False
        for first, second in sorted(pairs, key=lambda pair: sorted(map(key_of, pair))):
            changed |= people.join(first, second)
    return dict(people.shown)
