"""Conference listing pages (first line 论文检索): [track] / authors / abstract entries."""

from .normalize import TRACK_SEPARATOR
from .records import Entry, Problem
from .text import LISTING_MARKER, line_problem, split_authors, split_blocks

MAX_TRACK_LENGTH = 200


def classify_listing_line(line):
    """('track', text) | ('authors', (names, truncated)) | ('abstract', text)."""
    if TRACK_SEPARATOR in line and len(line) <= MAX_TRACK_LENGTH:
        area, _, subarea = line.partition(TRACK_SEPARATOR)
        if area.strip() and subarea.strip() and split_authors(line) is None:
            return "track", line
    authors = split_authors(line)
    if authors is not None:
        return "authors", authors
    return "abstract", line


def iter_items(path, lines, classify):
    """Number and classify every non-blank line; wrapped abstract lines are joined.

    Yields (kind, value, line_number); an unreadable line comes out as ('problem', Problem, n)
    and takes the abstract it belongs to with it: the rest of a damaged paragraph is never
    loaded as if it were the whole abstract.
    """
    for block in split_blocks(lines):
        abstract = None
        damaged = False
        for offset, line in enumerate(block.lines):
            number = block.line + offset
            problem = line_problem(path, number, line)
            if problem:
                abstract = None
                damaged = True
                yield "problem", problem, number
                continue
            kind, value = classify(line)
            if kind == "abstract":
                if abstract:
                    abstract = ("abstract", abstract[1] + "\n" + value, abstract[2])
                elif not damaged:  # the rest of a damaged paragraph is covered by its problem
                    abstract = ("abstract", value, number)
                continue
            damaged = False
            if abstract:
                yield abstract
                abstract = None
            yield kind, value, number
        if abstract:
            yield abstract


class EntryAssembler:
    """The state machine both text formats share: [track] authors abstract, in that order.

    Every item ends up in an Entry or in a Problem, so no block is lost silently.
    """

    def __init__(self, path):
        self.path = str(path)
        self.track = None  # (text, line)
        self.authors = None  # ((names, truncated, extra), line)

    def problem(self, line, message):
        return Problem(self.path, line, message)

    def on_track(self, text, line):
        yield from self.flush_authors()
        if self.track:
            yield self.problem(self.track[1], "track line with no paper after it")
        self.track = (text, line)

    def on_authors(self, value, line):
        if self.authors:
            # the pending track may have been the orphaned authors' paper's: never guess
            yield from self.finish()
        self.authors = (value, line)

    def on_abstract(self, text, line, **fields):
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

    def on_unreadable(self, problem):
        """The unreadable line may have been the pending entry's authors or abstract:
        pair nothing across it."""
        yield problem
        yield from self.finish()

    def flush_authors(self):
        if self.authors:
            yield self.problem(self.authors[1], "authors line with no abstract after it")
            self.authors = None

    def finish(self):
        yield from self.flush_authors()
        if self.track:
            yield self.problem(self.track[1], "track line with no paper after it")
            self.track = None


def parse_listing(path, lines):
    """Yield an Entry or a Problem for every entry of a listing page."""
    assembler = EntryAssembler(path)
    for kind, value, number in iter_items(path, skip_marker(lines), classify_listing_line):
        if kind == "problem":
            yield from assembler.on_unreadable(value)
        elif kind == "track":
            yield from assembler.on_track(value, number)
        elif kind == "authors":
            names, truncated = value
            yield from assembler.on_authors((names, truncated, []), number)
        else:
            yield from assembler.on_abstract(value, number)
    yield from assembler.finish()


def skip_marker(lines):
    """Blank out the 论文检索 header so line numbers stay true."""
    lines = list(lines)
    for index, line in enumerate(lines):
        if line.strip():
            if line.strip() == LISTING_MARKER:
                lines[index] = ""
            break
    return lines
