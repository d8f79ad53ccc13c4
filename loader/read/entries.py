"""The state machine both text formats share: blocks -> [track] authors abstract entries.

A format gives `classify(line)`, the shape of one line on its own: ('track', text),
('authors', (names, truncated, affiliations)) or ('text', line). What a block *is* is decided
here, from its shape and its position: an abstract is a paragraph of prose right after an
authors line; an area-only track ("Reinforcement Learning") is a one-name line that starts an
entry, followed by an authors line and an abstract. Every line ends up in an Entry or in a
Problem naming its line, and one bad entry never takes a good neighbour with it.
"""

import os
from collections import deque
from collections.abc import Callable, Iterable, Iterator, Sequence
from typing import Any, Literal, Unpack, cast

from loader.read.lines import Block, could_be_track, line_problem, prose_problem, split_blocks
from loader.records import Entry, EntryFields, Problem
from loader.rules.areas import reads_as_area
from loader.rules.normalize import TRACK_SEPARATOR

# (names, truncated, affiliations or slugs) of an authors line
AuthorsLine = tuple[list[str], bool, list[str]]
# what a format's classify(line) says of one line on its own
LineShape = tuple[Literal["track", "text"], str] | tuple[Literal["authors"], AuthorsLine]
Classify = Callable[[str], LineShape]
BlockShape = LineShape | tuple[Literal["problem"], Problem]
Kind = Literal["track", "authors", "abstract", "other", "problem"]
# (kind, value, line number): the value is a track's or an abstract's text, an AuthorsLine, or
# the Problem of an 'other' or 'problem' item
Item = tuple[Kind, str | AuthorsLine | Problem, int]


def iter_items(path: str, lines: Iterable[str], classify: Classify) -> Iterator[Item]:
    """Number and classify every non-blank line; wrapped abstract lines are joined.

    Yields (kind, value, line_number) with kind 'track', 'authors', 'abstract' (a paragraph
    of prose), 'other' (a paragraph that is neither: value is the Problem) or 'problem' (an
    unreadable line). An unreadable line takes the paragraph it belongs to with it: the rest of
    a damaged paragraph is never loaded as if it were the whole abstract.
    """
    for block in split_blocks(lines):
        paragraph: list[Any] | None = None  # [text, line]
        damaged = False
        for offset, (kind, value) in enumerate(read_block(path, block, classify)):
            number = block.line + offset
            if kind == "problem":
                paragraph = None
                damaged = True
                yield kind, value, number
                continue
            if kind == "text":
                if paragraph:
                    paragraph[0] += "\n" + cast(str, value)
                elif not damaged:  # the rest of a damaged paragraph is covered by its problem
                    paragraph = [value, number]
                continue
            damaged = False
            if paragraph:
                yield read_paragraph(path, *paragraph)
                paragraph = None
            yield kind, value, number
        if paragraph:
            yield read_paragraph(path, *paragraph)


def read_block(path: str, block: Block, classify: Classify) -> list[BlockShape]:
    """(kind, value) for each line of a block. A line between two lines of prose is part of
    the paragraph whatever its own shape: a wrapped abstract line such as "sequentially
    trained to recognize a set of" is not an authors line."""
    shapes: list[BlockShape] = []
    for offset, line in enumerate(block.lines):
        # an ASCII line without NUL has no problem (line_problem's markers are not ASCII):
        # told without the call, as most lines are
        if line.isascii() and "\0" not in line:
            shapes.append(classify(line))
            continue
        problem = line_problem(path, block.line + offset, line)
        shapes.append(("problem", problem) if problem else classify(line))
    for index in range(1, len(shapes) - 1):
        sandwiched = shapes[index - 1][0] == shapes[index + 1][0] == "text"
        if sandwiched and shapes[index][0] != "problem":
            shapes[index] = ("text", block.lines[index])
    return shapes


def read_paragraph(path: str, text: str, number: int) -> Item:
    reason = prose_problem(text)
    if reason:
        return "other", Problem(str(path), number, reason), number
    return "abstract", text, number


def with_context(
    items: Iterable[Item],
) -> Iterator[tuple[Kind | None, Item, tuple[Item, ...]]]:
    """(previous kind, item, the next two items) for each item."""
    previous: Kind | None = None
    ahead: deque[Item] = deque()
    for item in items:
        ahead.append(item)
        if len(ahead) == 3:
            current = ahead.popleft()
            yield previous, current, tuple(ahead)
            previous = current[0]
    while ahead:
        current = ahead.popleft()
        yield previous, current, tuple(ahead)
        previous = current[0]


def is_one_name(value: AuthorsLine) -> bool:
    names, truncated, affiliations = value
    return len(names) == 1 and not truncated and not affiliations


def may_be_area(value: AuthorsLine, text: str) -> bool:
    """Whether a names-shaped line may be an area alone: one name ("Reinforcement Learning"),
    or a list that reads as an area's words ("Planning, Routing, and Scheduling")."""
    return is_one_name(value) or reads_as_area(text)


def find_areas(items: Iterable[Item], lines: Sequence[str]) -> set[str]:
    """Tracks the page itself shows: areas of "Area · Subarea" lines, and names-shaped lines
    that can only be tracks: after a complete entry, before an authors line and an abstract."""
    areas = set()
    for previous, (kind, value, number), ahead in with_context(items):
        if kind == "track":
            areas.add(cast(str, value).partition(TRACK_SEPARATOR)[0].strip())
        elif (
            kind == "authors"
            and previous not in ("authors", "track")
            and [kind for kind, _, _ in ahead] == ["authors", "abstract"]
            and may_be_area(cast(AuthorsLine, value), lines[number - 1].strip())
        ):
            areas.add(lines[number - 1].strip())
    return areas


def is_area_only_track(
    role: Kind | None,
    value: AuthorsLine,
    ahead: Sequence[Item],
    text: str,
    next_text: str | None,
    areas: set[str],
) -> bool:
    """Whether a names-shaped line that may be an area (may_be_area) is a track ("Reinforcement
    Learning", "Knowledge Representation & Reasoning") rather than the authors line of a paper.
    Never right after a track (two tracks in a row are not guessed apart). A track the page
    shows elsewhere is one wherever an authors line that is no such track follows it; any
    other such line only when an authors line and an abstract follow it and it does not stand
    where the abstract of a pending authors line should be ("Part of")."""
    if role == "track":
        return False
    kinds = [kind for kind, _, _ in ahead]
    if text in areas:
        return kinds[:1] == ["authors"] and next_text not in areas and may_be_area(value, text)
    return role != "authors" and kinds == ["authors", "abstract"] and may_be_area(value, text)


def is_long_track(
    role: Kind | None, ahead: Sequence[Item], text: str, lines: Sequence[str], number: int
) -> bool:
    """A one-line paragraph where no abstract is expected (not after an authors line),
    followed by an authors line and an abstract, is a track even when it is no name:
    "gaussian process neuron activation function stochastic transfer function learning", or
    an area that ends like a sentence ("probabilistic methods (Bayesian methods, ..., etc.)")."""
    alone = number == len(lines) or not lines[number].strip()
    return (
        role not in ("authors", "track")
        and alone
        and (could_be_track(text) or reads_as_area(text))
        and [kind for kind, _, _ in ahead] == ["authors", "abstract"]
    )


def describe_misplaced(text: str, value: AuthorsLine) -> str:
    """The problem with a names-shaped line where an abstract should be."""
    names = value[0]
    if any(name[:1].isupper() for name in names):
        return "a names line where the abstract should be"
    return prose_problem(text) or "a names line where the abstract should be"


def assemble_entries(
    path: str | os.PathLike[str],
    lines: Sequence[str],
    classify: Classify,
    area_tracks: bool = False,
    **fields: Unpack[EntryFields],
) -> Iterator[Entry | Problem]:
    """Yield an Entry or a Problem for every entry of a text page; `fields` go into each Entry.

    A names-shaped line right after an authors line, with no abstract after it, stands in
    the abstract's place (a keyword row, "Part of"): it is a problem, and the authors line
    before it is one too; the next entry is read afresh. With `area_tracks`, one-name lines
    may be tracks (is_area_only_track).
    """
    name = str(path)
    items = list(iter_items(name, lines, classify))
    areas = find_areas(items, lines) if area_tracks else set()
    assembler = EntryAssembler(name)
    role: Kind | None = None  # what the previous item turned out to be
    for _, (kind, value, number), ahead in with_context(items):
        if kind == "authors":
            text = lines[number - 1].strip()
            next_text = lines[ahead[0][2] - 1].strip() if ahead else None
            authors = cast(AuthorsLine, value)
            if area_tracks and is_area_only_track(role, authors, ahead, text, next_text, areas):
                kind, value = "track", text
            elif role == "authors" and (not ahead or ahead[0][0] != "abstract"):
                kind, value = "other", Problem(name, number, describe_misplaced(text, authors))
        elif kind in ("abstract", "other") and area_tracks:
            text = lines[number - 1].strip()
            if is_long_track(role, ahead, text, lines, number):
                kind, value = "track", text
        # the value is what the kind says (Item)
        if kind == "problem":
            yield from assembler.on_unreadable(cast(Problem, value))
        elif kind == "other":
            yield from assembler.on_other(cast(Problem, value))
        elif kind == "track":
            yield from assembler.on_track(cast(str, value), number)
        elif kind == "authors":
            yield from assembler.on_authors(cast(AuthorsLine, value), number)
        else:
            yield from assembler.on_abstract(cast(str, value), number, **fields)
        role = kind
    yield from assembler.finish()


class EntryAssembler:
    """[track] authors abstract, in that order.

    Every item ends up in an Entry or in a Problem, so no block is lost silently.
    """

    def __init__(self, path: str | os.PathLike[str]) -> None:
        self.path = str(path)
        self.track: tuple[str, int] | None = None  # (text, line)
        self.authors: tuple[AuthorsLine, int] | None = None  # (authors line, line)

    def problem(self, line: int, message: str) -> Problem:
        return Problem(self.path, line, message)

    def on_track(self, text: str, line: int) -> Iterator[Problem]:
        yield from self.flush_authors()
        if self.track:
            yield self.problem(self.track[1], "track line with no paper after it")
        self.track = (text, line)

    def on_authors(self, value: AuthorsLine, line: int) -> Iterator[Problem]:
        if self.authors:
            # the pending track may have been the orphaned authors' paper's: never guess
            yield from self.finish()
        self.authors = (value, line)

    def on_abstract(
        self, text: str, line: int, **fields: Unpack[EntryFields]
    ) -> Iterator[Entry | Problem]:
        if self.authors is None:
            if self.track:
                yield self.problem(self.track[1], "track line with no paper after it")
                self.track = None
            yield self.problem(line, "abstract with no authors line before it")
            return
        (names, truncated, affiliations), authors_line = self.authors
        yield Entry(
            path=self.path,
            line=authors_line if not self.track else self.track[1],
            abstract=text,
            authors=names,
            truncated=truncated,
            track=self.track[0] if self.track else None,
            affiliations=affiliations,
            **fields,
        )
        self.track = self.authors = None

    def on_unreadable(self, problem: Problem) -> Iterator[Problem]:
        """The unreadable line may have been the pending entry's authors or abstract:
        pair nothing across it."""
        yield problem
        yield from self.finish()

    def on_other(self, problem: Problem) -> Iterator[Problem]:
        """A paragraph that is neither authors, track nor prose (a keyword row where the
        abstract should be) ends the pending entry: it is never read as its abstract."""
        yield from self.finish()
        yield problem

    def flush_authors(self) -> Iterator[Problem]:
        if self.authors:
            yield self.problem(self.authors[1], "authors line with no abstract after it")
            self.authors = None

    def finish(self) -> Iterator[Problem]:
        yield from self.flush_authors()
        if self.track:
            yield self.problem(self.track[1], "track line with no paper after it")
            self.track = None
