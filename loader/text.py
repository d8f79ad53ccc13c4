"""Raw file text -> numbered lines and blocks, plus the line shapes every format shares."""

import re
import unicodedata
from dataclasses import dataclass

from .records import Problem

LISTING_MARKER = "论文检索"
# "等" (Chinese "and others") and "et al." both mean the list was cut short. No pattern here
# may start with a repeated class like `\s*`: searched on a long line it backtracks
# quadratically (a 40 000-character line of spaces took 30 s).
TRUNCATION_MARK = re.compile(r"(?:\bet\s+al\.?|等)\Z", re.IGNORECASE)
NAME_SEPARATOR = re.compile(r"[,，、]")
UNDECODABLE = re.compile(r"[\udc80-\udcff]")
# a name part: letters (any script), spaces, hyphens, apostrophes, initials' dots
NAME_PART = re.compile(r"^[^\W\d_](?:[^\W\d_]|[ '’.\-‐])*$")
# the first name of a list, up to its separator: only NAME_PART characters and spaces (anchored
# with match(), so a long line is read once)
NAME_LIST_START = re.compile(r"\s*[^\W\d_](?:[^\W\d_]|[\s'’.\-‐])*(?:[,，、]|\Z)")
MAX_NAME_LENGTH = 80
MAX_NAME_WORDS = 7


@dataclass
class Block:
    """Consecutive non-blank lines; `line` is the 1-based number of the first."""

    line: int
    lines: list[str]

    @property
    def text(self):
        return " ".join(self.lines)


def read_text(path):
    """Read a file as UTF-8 (BOM and CRLF tolerated). Returns (lines, problem)."""
    with open(path, "rb") as fp:
        return decode_lines(path, fp.read())


def decode_lines(path, data):
    """File bytes -> (lines, problem); lines end at \\n, \\r\\n or \\r.

    Bytes that are not UTF-8 survive as lone surrogates so the parsers can report the exact
    lines; a file that is mostly binary is one problem.
    """
    head = data[:8192]
    if head.count(b"\0") > len(head) // 10:
        return [], Problem(str(path), 1, "file is binary or not UTF-8 text")
    text = data.decode("utf-8", errors="surrogateescape")
    text = text.removeprefix("\ufeff")
    lines = text.replace("\r\n", "\n").replace("\r", "\n").split("\n")
    if not any(line.strip() for line in lines):  # also a lone BOM, no-break spaces, form feeds
        return [], Problem(str(path), 1, "file is empty")
    bad = sum(1 for line in lines if UNDECODABLE.search(line))
    if bad and bad > len(lines) // 2:
        return [], Problem(str(path), 1, "file is not UTF-8 text (another encoding?)")
    return [line.rstrip() for line in lines], None


def line_problem(path, number, line):
    """A reason this single line cannot be loaded, or None."""
    match = UNDECODABLE.search(line)
    if match:
        return Problem(str(path), number, f"invalid UTF-8 at column {match.start() + 1}")
    if "\0" in line:
        return Problem(str(path), number, "contains a NUL byte")
    return None


def split_blocks(lines):
    """Group lines into blocks separated by blank lines."""
    block = None
    for number, line in enumerate(lines, start=1):
        if line.strip():
            if block is None:
                block = Block(number, [])
            block.lines.append(line.strip())
        elif block is not None:
            yield block
            block = None
    if block is not None:
        yield block


def split_authors(text):
    """'A, B, C et al.' -> (['A', 'B', 'C'], truncated=True).

    Returns None when the text does not look like a list of person names.
    """
    text = unicodedata.normalize("NFC", text)  # decomposed accents are not word characters
    if not NAME_LIST_START.match(text):
        return None  # an abstract: rejected on its first words, not after a pass over it all
    text, truncated = strip_truncation(text)
    parts = NAME_SEPARATOR.split(text)
    names = [" ".join(part.split()) for part in parts]
    if not names or not all(looks_like_name(name) for name in names):
        return None
    return names, truncated


def strip_truncation(text):
    """'A, B et al.' -> ('A, B', True); marks may repeat ('A 等 et al.'), commas may precede."""
    truncated = False
    text = text.rstrip()
    while match := TRUNCATION_MARK.search(text):
        truncated = True
        text = strip_trailing_separators(text[: match.start()])
    return text, truncated


def strip_trailing_separators(text):
    end = len(text)
    while end and (text[end - 1].isspace() or text[end - 1] in ",，"):
        end -= 1
    return text[:end]


def looks_like_name(name):
    if not name or len(name) > MAX_NAME_LENGTH or not NAME_PART.match(name):
        return False
    words = name.split()
    if len(words) > MAX_NAME_WORDS:
        return False
    # a dot only ends an initial ("J.") or a suffix ("Jr."), never a sentence
    return all(not word.endswith(".") or len(word) <= 2 or word in ("Jr.", "Sr.") for word in words)
