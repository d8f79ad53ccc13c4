"""Raw file text -> numbered lines and blocks, plus the line shapes every format shares."""

import io
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
# the longest line read: real abstracts are under 10 KB. Parsing a line costs ~120 bytes of
# memory per byte (the author-line pattern), so this bounds a build's peak whatever the input
MAX_LINE_BYTES = 1 << 20
SKIP_CHUNK = 1 << 16
# what stands for a longer line in the list of lines, followed by its size in bytes: decoding
# never gives U+D800 (undecodable bytes become U+DC80..U+DCFF), and it is no blank line
TOO_LONG = "\ud800"
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


def read_lines(path, fp):
    """A binary file -> (lines, problem), read as UTF-8 (BOM tolerated); lines end at \\n,
    \\r\\n or \\r.

    Bytes that are not UTF-8 survive as lone surrogates so the parsers can report the exact
    lines; a file that is mostly binary is one problem. The file is streamed: a line longer
    than MAX_LINE_BYTES is never held, only counted, and stands in the list as a marker
    (see line_problem), so memory follows the lines kept, whatever one line's size.
    """
    head = fp.read(8192)
    if head.count(b"\0") > len(head) // 10:
        return [], Problem(str(path), 1, "file is binary or not UTF-8 text")
    fp.seek(0)
    # newline=None: universal newlines, so "\r\n" and a lone "\r" end a line like "\n"
    text = io.TextIOWrapper(fp, encoding="utf-8", errors="surrogateescape", newline=None)
    lines = []
    blank = True
    bad = 0
    # a line of more than MAX_LINE_BYTES characters has more than MAX_LINE_BYTES bytes
    while line := text.readline(MAX_LINE_BYTES + 1):
        if not line.endswith("\n") and len(line) > MAX_LINE_BYTES:
            line = too_long(measure(line) + skip_line(text))
        else:
            line = line.removesuffix("\n")
            if len(line) > MAX_LINE_BYTES // 4 and (size := measure(line)) > MAX_LINE_BYTES:
                line = too_long(size)  # fewer characters than the limit, more bytes
        if not lines:
            line = line.removeprefix("\ufeff")
        blank = blank and not line.strip()  # also a lone BOM, no-break spaces, form feeds
        bad += bool(UNDECODABLE.search(line))
        lines.append(line.rstrip())
    if blank:
        return [], Problem(str(path), 1, "file is empty")
    if bad and bad > len(lines) // 2:
        return [], Problem(str(path), 1, "file is not UTF-8 text (another encoding?)")
    return lines, None


def measure(text):
    """Bytes of a decoded piece of the file, undecodable bytes included."""
    return len(text.encode("utf-8", "surrogateescape"))


def skip_line(text):
    """Read the rest of the current line in chunks, keeping none of it; returns its bytes."""
    size = 0
    while piece := text.readline(SKIP_CHUNK):
        if piece.endswith("\n"):
            return size + measure(piece) - 1
        size += measure(piece)
    return size


def too_long(size):
    return f"{TOO_LONG}{size}"


def is_too_long(line):
    return line.startswith(TOO_LONG)


def line_problem(path, number, line):
    """A reason this single line cannot be loaded, or None."""
    if is_too_long(line):
        size = line.removeprefix(TOO_LONG)
        message = f"line too long ({size} bytes; a line may hold {MAX_LINE_BYTES})"
        return Problem(str(path), number, message)
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
