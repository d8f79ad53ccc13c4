"""Raw file text -> numbered lines and blocks, plus the line shapes every format shares."""

import functools
import html
import io
import os
import re
import string
import unicodedata
from collections.abc import Iterable, Iterator
from dataclasses import dataclass
from typing import BinaryIO, TextIO

from loader.records import Problem
from loader.rules.markup import plain_text, typographic_quotes

LISTING_MARKER = "论文检索"
# (names, truncated): a list of authors, and whether it was cut short ("et al.")
Names = tuple[list[str], bool]
# "等" (Chinese "and others") and "et al." both mean the list was cut short. No pattern here
# may start with a repeated class like `\s*`: searched on a long line it backtracks
# quadratically, and one line of spaces would stall the build.
TRUNCATION_MARK = re.compile(r"(?:\bet\s+al\.?|等)\Z", re.IGNORECASE)
# "A, B, C & D" (ICLR 2017 listings join the last two names with an ampersand; never
# "D&#x27;Oro": entities are decoded after the split, and an entity has no spaces)
NAME_SEPARATOR = re.compile(r"[,，、]|\s&\s")
# the same where the text has no '&': a character class alone lets SRE skip to its characters
# instead of trying both branches at every character
COMMA = re.compile(r"[,，、]")
UNDECODABLE = re.compile(r"[\udc80-\udcff]")
APOSTROPHES = "'’ʼ‘"
HYPHENS = r"\-‐‑–"  # escaped: these go inside character classes (en dash: "Jo–Anne Ting")
# one word of a name, its nickname brackets and quotes already taken off: letters of any script
# with apostrophes and hyphens inside ("O'Neil-Ng", "d’Aspremont", "'t Hooft"), maybe after
# initials written without a space ("Alexandros G.Dimakis", "M.Naseer Subhani")
NAME_WORD = re.compile(
    rf"^(?:[^\W\d_]\.)*[{APOSTROPHES}]?[^\W\d_](?:[^\W\d_]|[{APOSTROPHES}{HYPHENS}])*$"
)
# a word ending in a dot is initials or a short form ("J.", "C.S.", "J.-P.", "Jr.", "Rif."),
# never a sentence's end
# (after a hyphenated given name: "Hui-H. Hsu"; a doubled dot is a typo: "C. A.. Micchelli")
INITIALS = re.compile(rf"^(?:[^\W\d_]+[{HYPHENS}])?(?:[^\W\d_]{{1,3}}\.{{1,2}}[{HYPHENS}]?)+$")
# before the last word, a given name may be shortened to any length ("Muhd. Amir Rahman",
# "Chris. Lehnert", "Laks Lakshmanan. V.S.") or run into the next one at a dot ("Lydia.Y
# Chen", "Joel.W. Burdick")
SHORT_FORM = re.compile(rf"^(?:[^\W\d_]+[{HYPHENS}])?(?:[^\W\d_]+\.{{1,2}}[{HYPHENS}]?)+[^\W\d_]*$")
# initials written with a space before their hyphen: "Anna M. -L. Berg", "J -P. Merlet"
DETACHED_HYPHEN = re.compile(rf"(?<=[^\W_]|\.)\s+([{HYPHENS}])(?=[^\W\d_])")
# TeX's grave accent without its backslash: "Jordi Cornell`a" is Cornellà
BARE_GRAVE = re.compile(r"(?<=[^\W\d_])`([aeiouAEIOU])")
# UTF-8 read as Windows-1252: "Hal DaumÃ© III", "JosÃ© Neira" (every such pair starts so)
MOJIBAKE_LEADS = ("Ã", "Â")
INITIALS_PARTS = re.compile(rf"[.{HYPHENS}]+")
# the most common shape of a name, "Wei Chen", "Adam A. Feng": capitalized ASCII words, at most
# one initial, at most five words. looks_like_name says yes to all of it
# (tests/test_build_speed3.py), looking at each word in turn
PLAIN_NAME = re.compile(r"[A-Z][a-z]+(?: [A-Z]\.)?(?: [A-Z][a-z]+){1,3}")
# TeX accents in scraped names ("Jo\~{a}o", "Tom\'a\v s"): after a letter-named accent TeX
# takes the next letter across the space ("\v S" is "\v{S}"), which the LaTeX reader needs braced
TEX_LETTER_ACCENT = re.compile(r"\\([uvHcdbkrt])\s+([^\W\d_])")
# what surrounds a nickname: "Tianhe (Kevin) Yu", "Huazhe(Harry) Xu", "Zhangyang “Atlas” Wang"
NICKNAME_MARKS = re.compile(r"[()\"“”«»]")
# a title or a footnote mark is not part of the name: "Prof. Dr. Paul Lukowicz", "Sahil Sharma*"
TITLES = ("Prof.", "Dr.", "Mr.", "Mrs.", "Ms.")
FOOTNOTE_MARKS = "*†‡"
# scraped names carry stray control characters and invisible format characters: zero-width
# spaces, soft hyphens, BOMs, direction marks and embeddings ("Nicholas Vining\u200f",
# "\u202aAna Costa\u202c"). The zero-width (non-)joiners stay: Persian and Indic names are
# written with them
INVISIBLE = re.compile(
    "[\x00-\x08\x0e-\x1b\x7f-\x84\x86-\x9f\u00ad\u0600-\u0605\u061c\u06dd\u070f\u0890"
    "\u0891\u08e2\u180e\u200b\u200e\u200f\u202a-\u202e\u2060-\u2064\u2066-\u206f\ufeff"
    "\ufff9-\ufffb\U000110bd\U000110cd\U00013430-\U0001343f\U0001bca0-\U0001bca3"
    "\U0001d173-\U0001d17a\U000e0001\U000e0020-\U000e007f]"
)
# the longest line read, far beyond any real abstract: loading a line takes many times its size
# in memory (most for a run of Markdown emphasis, "**a **a ..."), so this bounds a build's peak
# whatever the input
MAX_LINE_BYTES = 1 << 20
# a file up to this size is read at once (split_small_file), held twice for a moment, bytes
# and text; a larger one is streamed a line at a time. Listing pages are a megabyte or so
WHOLE_FILE_BYTES = 4 << 20
SKIP_CHUNK = 1 << 16
# what stands for a longer line in the list of lines, followed by its size in bytes: decoding
# never gives U+D800 (undecodable bytes become U+DC80..U+DCFF), and it is no blank line
TOO_LONG = "\ud800"
MAX_NAME_LENGTH = 80
# names repeat across entries: a short string is read once while it is among
# the last NAME_CACHE_SIZE read; a longer one (no name, or not one worth keeping) every time
NAME_CACHE_SIZE = 1 << 15
MAX_CACHED_NAME_LENGTH = 2 * MAX_NAME_LENGTH
MAX_NAME_WORDS = 7
ASCII_LETTERS_AND_DIGITS = frozenset(string.ascii_letters + string.digits)
MAX_LOWERCASE_NAME_WORDS = 3  # "leif döring", "N dinesh reddy": names written in lowercase
# English words that start or join a clause, never a word of a name written in lowercase
CLAUSE_WORDS = frozenset(
    (  # noqa: SIM905 - a list of words reads best as words
        "a about above after all also although among and are as at be been before being both "
        "but by can could each for from has have how however if in into is it its may more most "
        "not of on or our over such than that the their then there these they this those "
        "through to under up upon us using was we were what when where which while who whose "
        "why will with within without would"
    ).split()
)
# characters looks_like_name reads a word without: combining marks, and the spacing accents
# of PDF text (¨ ´ ¸: the modifier symbols beyond ASCII; ASCII's ` and ^ are no accents here)
NOT_IN_WORDS = frozenset(("Mn", "Mc", "Me", "Sk"))
# an abstract is prose: it ends a sentence, or is long enough to be one cut short
SENTENCE_END = (".", "!", "?", "。", "！", "？", "…")
CLOSING_MARKS = ")]}\"”’'*"
MIN_PROSE_WORDS = 8
MIN_PROSE_CHARACTERS = 60  # scripts written without spaces
MAX_TRACK_LENGTH = 200
# a keyword row scraped into the abstract's place: "diffusion,image generation,multimodal"
LIST_SEPARATOR = re.compile(r"[,;，；、]")
MIN_LIST_ITEMS = 3
MAX_LIST_ITEM_WORDS = 4


@dataclass
class Block:
    """Consecutive non-blank lines; `line` is the 1-based number of the first."""

    line: int
    lines: list[str]

    @property
    def text(self) -> str:
        return " ".join(self.lines)


def read_lines(path: str | os.PathLike[str], fp: BinaryIO) -> tuple[list[str], Problem | None]:
    """A binary file -> (lines, problem), read as UTF-8 (BOM tolerated); lines end at \\n,
    \\r\\n or \\r.

    Bytes that are not UTF-8 survive as lone surrogates so the parsers can report the exact
    lines; a file that is mostly binary is one problem. A line longer than MAX_LINE_BYTES stands
    in the list as a marker (see line_problem). A file larger than WHOLE_FILE_BYTES is
    streamed: such a line is never held, only counted, so memory follows the lines kept,
    whatever one line's size; a smaller file is read whole (split_small_file), the same lines.
    """
    head = fp.read(8192)
    if head.count(b"\0") > len(head) // 10:
        return [], Problem(str(path), 1, "file is binary or not UTF-8 text")
    fp.seek(0)
    whole = fp.read(WHOLE_FILE_BYTES + 1)
    if len(whole) <= WHOLE_FILE_BYTES:
        lines, blank, bad = split_small_file(whole)
    else:
        fp.seek(0)
        lines, blank, bad = stream_lines(fp)
    if blank:
        return [], Problem(str(path), 1, "file is empty")
    if bad and bad > len(lines) // 2:
        return [], Problem(str(path), 1, "file is not UTF-8 text (another encoding?)")
    return lines, None


def split_small_file(data: bytes) -> tuple[list[str], bool, int]:
    """stream_lines of a file of at most WHOLE_FILE_BYTES, in hand: decoded, its line ends made
    "\n" and split at once (C passes over the text, where the stream read it a line at a
    time). The same lines: the stream's decoder reads the same UTF-8 in pieces, and universal
    newlines turn "\r\n", then a lone "\r", into "\n"; what follows the last "\n" is a line
    when it is not empty (readline then gave it without "\n", or gave nothing). A line of
    more than MAX_LINE_BYTES bytes is the stream's marker with the same size (its bytes but
    the line end: a BOM that starts it counts, as the stream cuts the BOM after the marker)."""
    text = data.decode("utf-8", "surrogateescape")
    if "\r" in text:
        text = text.replace("\r\n", "\n").replace("\r", "\n")
    lines = text.split("\n")
    if not lines[-1]:
        lines.pop()
    # a line of more than MAX_LINE_BYTES bytes has more than a quarter of that in characters
    if max(map(len, lines), default=0) > MAX_LINE_BYTES // 4:
        for index, line in enumerate(lines):
            if len(line) > MAX_LINE_BYTES // 4 and (size := measure(line)) > MAX_LINE_BYTES:
                lines[index] = too_long(size)
    if lines:
        lines[0] = lines[0].removeprefix("\ufeff")
    blank = not any(map(str.strip, lines))
    bad = 0
    if not text.isascii():
        bad = sum(1 for line in lines if not line.isascii() and UNDECODABLE.search(line))
    return list(map(str.rstrip, lines)), blank, bad


def stream_lines(fp: BinaryIO) -> tuple[list[str], bool, int]:
    """(lines, whether all are blank, how many hold undecodable bytes) of a file read a line
    at a time."""
    # newline=None: universal newlines, so "\r\n" and a lone "\r" end a line like "\n"
    text = io.TextIOWrapper(fp, encoding="utf-8", errors="surrogateescape", newline=None)
    try:
        lines: list[str] = []
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
            bad += not line.isascii() and bool(UNDECODABLE.search(line))  # isascii: no scan
            lines.append(line.rstrip())
    finally:
        text.detach()  # the file stays the caller's to close (a dropped wrapper closes it)
    return lines, blank, bad


def measure(text: str) -> int:
    """Bytes of a decoded piece of the file, undecodable bytes included."""
    return len(text.encode("utf-8", "surrogateescape"))


def skip_line(text: TextIO) -> int:
    """Read the rest of the current line in chunks, keeping none of it; returns its bytes."""
    size = 0
    while piece := text.readline(SKIP_CHUNK):
        if piece.endswith("\n"):
            return size + measure(piece) - 1
        size += measure(piece)
    return size


def too_long(size: int) -> str:
    return f"{TOO_LONG}{size}"


def is_too_long(line: str) -> bool:
    return line.startswith(TOO_LONG)


def line_problem(path: str | os.PathLike[str], number: int, line: str) -> Problem | None:
    """A reason this single line cannot be loaded, or None."""
    if is_too_long(line):
        size = line.removeprefix(TOO_LONG)
        message = f"line too long ({size} bytes; a line may hold {MAX_LINE_BYTES})"
        return Problem(str(path), number, message)
    match = not line.isascii() and UNDECODABLE.search(line)
    if match:
        return Problem(str(path), number, f"invalid UTF-8 at column {match.start() + 1}")
    if "\0" in line:
        return Problem(str(path), number, "contains a NUL byte")
    return None


def split_blocks(lines: Iterable[str]) -> Iterator[Block]:
    """Group lines into blocks separated by blank lines."""
    block = None
    for number, line in enumerate(lines, start=1):
        line = line.strip()
        if line:
            if block is None:
                block = Block(number, [])
            block.lines.append(line)
        elif block is not None:
            yield block
            block = None
    if block is not None:
        yield block


def split_authors(text: str) -> Names | None:
    """'A, B, C et al.' -> (['A', 'B', 'C'], truncated=True).

    Returns None when the text does not look like a list of person names. HTML entities are
    decoded (`D&#x27;Oro` -> `D'Oro`); an empty name between two commas is skipped (scraped
    lists keep the slot of a name they could not read), and so is a trailing one after full
    names ("…, Ram Vasudevan,"), never after a clause ("In this paper,": a sentence cut short,
    not a list).
    """
    # the first name is checked before the line is split, so an abstract is rejected on its
    # first words instead of after a pass over all of it
    window = text[: MAX_NAME_LENGTH * 4]
    first, separated = first_part(window)
    if not separated and len(text) > MAX_NAME_LENGTH * 4:
        return None
    if (
        (too_many_words(first) or clean_name(first) is None)
        and not is_truncated(first.rstrip())
        and not (separated and lowercase_long_name(first))
    ):
        return None
    text, truncated = strip_truncation(text)
    parts = split_parts(text)
    # "…, B. Jones, ." : a scraper's empty last slot, left with the list's full stop
    trailing_slot = len(parts) > 1 and parts[-1].strip() in ("", ".")
    if trailing_slot:
        parts.pop()
        if not parts[-1].strip():
            return None
    names: list[str] = []
    lowercase_long = False
    for index, part in enumerate(parts):
        if not part.strip() and names and parts[index - 1].strip():
            continue
        name = clean_name(part)
        if name is None and len(parts) > 1:
            name = lowercase_long_name(part)
            lowercase_long = lowercase_long or name is not None
        if name is None and len(parts) > 1 and part.rstrip().endswith("."):
            # "…, Renjie Liao, Roger Grosse." ends the list with a full stop, and a name in
            # the middle may have one ("…, Paolo Dario., Marco Quirini"); a line alone with
            # one is a sentence ("optimization of Residual Networks.")
            name = clean_name(part.rstrip().removesuffix("."))
            if name and not name.split()[-1][:1].isupper():
                return None  # "However, we study it." is a sentence
        if name is None:
            return None
        names.append(name)
    if trailing_slot and not all(map(is_full_name, names)):
        return None
    if lowercase_long and any(name != name.lower() for name in names):
        return None  # such a name is read only in a list written all in lowercase
    return names, truncated


def lowercase_long_name(text: str) -> str | None:
    """A name of MAX_LOWERCASE_NAME_WORDS + 1 words written in lowercase ("alfred o hero
    iii", "maria jose garcia lopez"), as lists written all in lowercase give them, or None.
    looks_like_name refuses it (it is as often a clause of prose): no word of it may be one
    that starts or joins a clause ("on the other hand")."""
    # told before tidying: the first clause of many an abstract is tried here
    if len(text.split(None, MAX_LOWERCASE_NAME_WORDS + 1)) != MAX_LOWERCASE_NAME_WORDS + 1:
        return None
    if not text.islower():
        return None
    name = tidy_name(text)
    words = name.split()
    if len(words) != MAX_LOWERCASE_NAME_WORDS + 1 or name != name.lower():
        return None
    if any(word in CLAUSE_WORDS or not NAME_WORD.match(word) for word in words):
        return None
    return name


def is_full_name(name: str) -> bool:
    """Two words or more, the first and the last capitalized: "Ana Costa", "K. L. M. Perera"."""
    words = name.split()
    return len(words) > 1 and words[0][:1].isupper() and words[-1][:1].isupper()


def first_part(text: str) -> tuple[str, bool]:
    """(the first of separator_in(text).split(text), whether there was a separator). Without
    '&' the first comma is found with three str.find (memchr), where COMMA.split tries its
    class at every character (every abstract is tried as names)."""
    if "&" in text:
        head = NAME_SEPARATOR.split(text, maxsplit=1)
        return head[0], len(head) > 1
    end = len(text)
    for comma in ",，、":
        found = text.find(comma, 0, end)
        if found >= 0:
            end = found
    return text[:end], end < len(text)


def split_parts(text: str) -> list[str]:
    """separator_in(text).split(text); a line with ASCII commas only split by str.split, which
    is quicker than a pattern."""
    if "&" not in text and "，" not in text and "、" not in text:
        return text.split(",")
    return separator_in(text).split(text)


def separator_in(text: str) -> re.Pattern[str]:
    """The pattern that splits `text` as NAME_SEPARATOR does."""
    return NAME_SEPARATOR if "&" in text else COMMA


def clean_name(text: str) -> str | None:
    """One person's name as it will be stored, or None when `text` is not a name.

    Entities decoded, Unicode composed (NFC), control and zero-width characters dropped
    ("Anna Levit, \\x06 Daniel Crawford"), spaces collapsed; a leading title and footnote
    marks taken off. Nicknames in brackets or quotes and dotted initials stay as given.
    """
    name = text.strip()
    if len(name) <= MAX_NAME_LENGTH and PLAIN_NAME.fullmatch(name):
        # read_name gives exactly this (no entity, backslash, invisible or non-ASCII character,
        # title or footnote mark; single spaces), and most names have this shape
        return name
    if len(text) > MAX_CACHED_NAME_LENGTH:
        return read_name(text)
    return read_recurring_name(text)


def too_many_words(text: str) -> bool:
    """True only when read_name(text) is None for having more than MAX_NAME_WORDS words, told
    without reading it: the first clause of every abstract is tried as a name.

    A word starting with an ASCII letter or digit, with no entity in it, stays at least one
    word whatever read_name does to the text (entities, NFC, invisible characters, footnote
    marks, nickname marks), unless it is a title; without backslashes no LaTeX is read."""
    if "\\" in text:
        return False
    allowed = MAX_NAME_WORDS + count_titles(text)
    # the first allowed + 1 words most often tell: the clause is split no further than that
    words = text.split(None, allowed + 1)
    if len(words) <= MAX_NAME_WORDS:
        return False  # a name's few words: no need to look
    if len(words) > allowed + 1:  # the last is the rest of the clause
        if all(map(is_lasting_word, words[: allowed + 1])):
            return True
        words = text.split()
    return sum(map(is_lasting_word, words)) > allowed


def count_titles(text: str) -> int:
    """sum(text.count(title) for title in TITLES), from each '.' (memchr): every title ends
    with the only '.' it holds, and no two end alike, so each '.' ends at most one. Five
    searches over an abstract's first clause were most of too_many_words."""
    count, dot = 0, text.find(".")
    while dot >= 0:
        count += text.endswith(TITLES, 0, dot + 1)
        dot = text.find(".", dot + 1)
    return count


def is_lasting_word(word: str) -> bool:
    """A word read_name keeps a word (see too_many_words)."""
    return word[0] in ASCII_LETTERS_AND_DIGITS and "&" not in word


def read_name(text: str) -> str | None:
    name = tidy_name(text)
    return name if looks_like_name(name) else None


def tidy_name(text: str) -> str:
    """A name as it is stored, whether or not it looks like one: entities, mojibake and TeX
    (accents, quotes) read, Unicode composed, invisible characters dropped, spaces collapsed,
    a hyphen's stray space, a leading title and footnote marks taken off."""
    name = html.unescape(text)
    if not name.isascii():
        name = repair_mojibake(name)
    if "\\" in name:
        name = plain_text(TEX_LETTER_ACCENT.sub(r"\\\1{\2}", name))
    elif "`" in name:
        name = typographic_quotes(BARE_GRAVE.sub("\\1\u0300", name))
    name = unicodedata.normalize("NFC", name)
    if not (name.isascii() and name.isprintable()):  # TeX's \- reads as a soft hyphen
        name = INVISIBLE.sub("", name)
    name = " ".join(name.split()).strip(FOOTNOTE_MARKS + " ")
    if "-" in name or "–" in name or "‐" in name or "‑" in name:
        name = DETACHED_HYPHEN.sub(r"\1", name)
    words = name.split()
    while len(words) > 1 and words[0] in TITLES:
        words.pop(0)
    name = " ".join(words)
    return name


def repair_mojibake(text: str) -> str:
    """UTF-8 that was read as Windows-1252 (or Latin-1), read again: "JosÃ© Neira" -> "José
    Neira". Text that does not come back as UTF-8 is left as it is (a real "Ã" or "Â")."""
    if not any(lead in text for lead in MOJIBAKE_LEADS):
        return text
    for encoding in ("cp1252", "latin-1"):
        try:
            return text.encode(encoding).decode("utf-8")
        except UnicodeError:
            continue
    return text


def explicit_name(text: str) -> str | None:
    """A name a structured source gives as one (an item of a JSON list, a part of a dump's
    "A;B;C"), as it is stored: tidied like the names of text pages, and kept even when it
    does not look like a name (the source says it is one). None when it holds no letter
    (".", "*"): no name, skipped like an empty slot."""
    name = clean_name(text) or tidy_name(text)
    return name if any(c.isalpha() for c in name) else None


read_recurring_name = functools.lru_cache(maxsize=NAME_CACHE_SIZE)(read_name)


def is_truncated(text: str) -> bool:
    return truncation_mark(text) is not None


def truncation_mark(text: str) -> re.Match[str] | None:
    """TRUNCATION_MARK.search(text), tried only where a match can start: at a final '等', or
    at the 'et' before the spaces before a final 'al' or 'al.' (under IGNORECASE 'a' and 'l'
    match their capitals and nothing else; no space matches 'et'). The search from the start
    tried the pattern at every character of a line."""
    if text.endswith("等"):
        return TRUNCATION_MARK.search(text, len(text) - 1)
    ending = text[-3:].lower()
    if not ending.endswith(("al", "al.")):
        return None
    before_al = text[: len(text) - (3 if text.endswith(".") else 2)]
    return TRUNCATION_MARK.search(text, max(0, len(before_al.rstrip()) - 2))


def strip_truncation(text: str) -> tuple[str, bool]:
    """'A, B et al.' -> ('A, B', True); marks may repeat ('A 等 et al.'), commas may precede."""
    truncated = False
    text = text.rstrip()
    while match := truncation_mark(text):
        truncated = True
        text = strip_trailing_separators(text[: match.start()])
    return text, truncated


def strip_trailing_separators(text: str) -> str:
    end = len(text)
    while end and (text[end - 1].isspace() or text[end - 1] in ",，"):
        end -= 1
    return text[:end]


def looks_like_name(name: str) -> bool:
    """Whether a cleaned-up string is one person's name."""
    if not name or len(name) > MAX_NAME_LENGTH:
        return False
    if PLAIN_NAME.fullmatch(name):
        return True  # what the rest says of it, told quicker (most names read are new ones)
    if name.count("(") != name.count(")") or name.count("(") > 1:
        return False
    # combining marks are not word characters for `re` ("Martı́nez" keeps U+0301 after NFC),
    # nor are the spacing accents PDF text leaves beside their letter ("Rainer Ku¨mmerle",
    # "Narc´is Palomeras"); ASCII has neither
    if name.isascii():
        letters = name
    else:
        letters = "".join(
            c for c in name if c.isascii() or unicodedata.category(c) not in NOT_IN_WORDS
        )
    words = NICKNAME_MARKS.sub(" ", letters).split()
    if not words or len(words) > MAX_NAME_WORDS:
        return False
    last = len(words) - 1
    if not all(
        NAME_WORD.match(word) or is_initials(word) or (index < last and is_short_form(word))
        for index, word in enumerate(words)
    ):
        return False
    # particles are lowercase ("Ludwig van der Maaten"), a wrapped line of prose mostly is
    lowercase = sum(1 for word in words if word.lstrip(APOSTROPHES)[:1].islower())
    return len(words) <= MAX_LOWERCASE_NAME_WORDS or lowercase <= len(words) - lowercase


def is_short_form(word: str) -> bool:
    """A given name shortened or run into the next at a dot ("Muhd.", "Lydia.Y", "Joel.W."):
    each part after a dot starts with a capital, and so does the word unless it is one letter
    (never "e.g", "jiahao.liang")."""
    if not SHORT_FORM.match(word):
        return False
    parts = [part for part in INITIALS_PARTS.split(word) if part]
    return all(len(part) == 1 or part[:1].isupper() for part in parts[:1]) and all(
        part[:1].isupper() for part in parts[1:]
    )


def is_initials(word: str) -> bool:
    """ "J.", "C.S.", "J.-P.", "Jr.", "Rif.", and "c." of a name spelled in lowercase; never
    "it."."""
    return bool(INITIALS.match(word)) and all(
        len(part) == 1 or part[:1].isupper() for part in INITIALS_PARTS.split(word) if part
    )


def ends_sentence(text: str) -> bool:
    return text.strip().rstrip(CLOSING_MARKS).endswith(SENTENCE_END)


def could_be_track(text: str) -> bool:
    """A line that may be a track where a track's place is: short, one line, no sentence."""
    return len(text) <= MAX_TRACK_LENGTH and "\n" not in text and not ends_sentence(text)


def prose_problem(text: str) -> str | None:
    """Why a paragraph cannot be an abstract, or None when it reads as prose."""
    text = text.strip()
    if not ends_sentence(text):
        items = LIST_SEPARATOR.split(text)
        if len(items) >= MIN_LIST_ITEMS and all(
            0 < len(item.split()) <= MAX_LIST_ITEM_WORDS for item in items
        ):
            return "a list of short phrases (keywords?), not an abstract"
        if len(text.split()) < MIN_PROSE_WORDS and len(text) < MIN_PROSE_CHARACTERS:
            return "too short for an abstract and not an authors line"
    return None
