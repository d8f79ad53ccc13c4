"""The records of a JSON dump, streamed: a JSON array (on one line or pretty-printed), the
OpenReview API's `{"notes": [...]}`, or one value a line (JSON Lines), each record with the
line it starts on.

Read in chunks with the standard library's `json.JSONDecoder.raw_decode`, so memory follows
the largest record, never the file: a 50 MB array on one line is read like a pretty-printed
one, and a multi-GB snapshot one line at a time. (A streaming parser such as ijson would also
bound memory, but tells no line numbers, which every problem needs.)

Broken JSON is a problem at the line of the record it breaks. In JSON Lines reading goes on at
the next line; in an array it stops there, since nothing after a broken element tells where
the next one starts.
"""

import codecs
import json
import re
import sys
from collections.abc import Iterator
from dataclasses import dataclass
from typing import BinaryIO

from loader.records import Problem

CHUNK_BYTES = 1 << 20
# a record longer than this is refused, not held: far beyond any real one (an OpenReview note
# with all its revisions is ~100 kB), and what bounds a build's memory whatever the input
MAX_RECORD_CHARACTERS = 16 << 20
WHITESPACE = re.compile(r"[ \t\n\r]*")
# the API's answer: {"notes": [...], "count": N}, in either order
WRAPPER = re.compile(r'\{\s*"(?:notes|count)"\s*:')
WRAPPER_KEY = "notes"
DECODER = json.JSONDecoder()


@dataclass(frozen=True)
class JsonRecord:
    """One record of a dump and the line its first character is on."""

    line: int
    value: object


class BrokenJson(Exception):
    """JSON that cannot be read, at `line` of the file."""

    def __init__(self, line: int, message: str) -> None:
        super().__init__(message)
        self.line = line
        self.message = message


def invalid_value(error: ValueError) -> str:
    """What a ValueError of the decoder that is not a syntax error says: the one the standard
    library raises is an integer past Python's conversion limit (CVE-2020-10735), whose own
    message names a Python setting instead of the input."""
    if "integer string conversion" in str(error):
        return f"invalid JSON: a number of more than {sys.get_int_max_str_digits()} digits"
    return f"invalid JSON: {error}"


class JsonStream:
    """A text buffer over a binary file that knows the line number of its read position."""

    def __init__(
        self, fp: BinaryIO, max_record: int = MAX_RECORD_CHARACTERS, line: int = 1
    ) -> None:
        self.fp = fp
        self.max_record = max_record
        # undecodable bytes become lone surrogates, which the readers report by field
        self.decoder = codecs.getincrementaldecoder("utf-8")(errors="surrogateescape")
        self.buffer = ""
        self.position = 0
        self.line = line  # of the read position: a piece of a file starts where it starts
        self.ended = False
        self.started = False

    def fill(self) -> bool:
        """Read one more chunk, dropping what was read; False at the end of the file."""
        if self.ended:
            return False
        data = self.fp.read(CHUNK_BYTES)
        text = self.decoder.decode(data, final=not data)
        if not self.started:
            text = text.removeprefix("\ufeff")
            self.started = True
        self.ended = not data
        self.buffer = self.buffer[self.position :] + text
        self.position = 0
        return bool(data)

    def advance(self, to: int) -> None:
        self.line += self.buffer.count("\n", self.position, to)
        self.position = to

    def peek(self) -> str:
        """The next character that is not whitespace ("" at the end of the file), not read."""
        while True:
            match = WHITESPACE.match(self.buffer, self.position)
            self.advance(match.end() if match else self.position)
            if self.position < len(self.buffer):
                return self.buffer[self.position]
            if not self.fill():
                return ""

    def take(self) -> None:
        """Read past the character peek() returned."""
        self.advance(self.position + 1)

    def decode(self) -> JsonRecord:
        """The JSON value at the read position (after peek(): raw_decode skips no whitespace).
        An error is told from a value cut by the chunk
        boundary by reading on: a real error stays where it is however much follows."""
        last = None
        while True:
            try:
                value, end = DECODER.raw_decode(self.buffer, self.position)
            except json.JSONDecodeError as error:
                found = (error.msg, error.pos - self.position)
                cut = error.msg.startswith("Unterminated string") or found != last
                if self.ended and (
                    cut
                    and error.pos >= len(self.buffer.rstrip())
                    or error.msg.startswith("Unterminated string")
                ):
                    raise BrokenJson(self.line, "the file ends inside this record (cut short?)")
                if self.ended or not cut:
                    line = self.line + self.buffer.count("\n", self.position, error.pos)
                    raise BrokenJson(self.line, f"invalid JSON at line {line}: {error.msg}")
                if len(self.buffer) - self.position > self.max_record:
                    message = f"record longer than {self.max_record} characters"
                    raise BrokenJson(self.line, message)
                last = found
                self.fill()
                continue
            except ValueError as error:
                raise BrokenJson(self.line, invalid_value(error))
            except RecursionError:
                raise BrokenJson(self.line, "invalid JSON: nested too deeply")
            record = JsonRecord(self.line, value)
            self.advance(end)
            return record

    def skip_line(self) -> None:
        """Read past the next line end (JSON Lines: a broken line costs only itself)."""
        while True:
            end = self.buffer.find("\n", self.position)
            if end >= 0:
                self.advance(end + 1)
                return
            self.position = len(self.buffer)
            if not self.fill():
                return

    def is_wrapper(self) -> bool:
        while len(self.buffer) - self.position < 64 and self.fill():
            pass
        return bool(WRAPPER.match(self.buffer, self.position))

    def array_items(self) -> Iterator[JsonRecord]:
        """The elements of the array starting at the read position."""
        self.take()
        if self.peek() == "]":
            self.take()
            return
        while True:
            if self.peek() == "":
                raise BrokenJson(self.line, "the JSON array is cut short (no closing ])")
            yield self.decode()
            after = self.peek()
            if after == "]":
                self.take()
                return
            if after != ",":
                message = "the JSON array is cut short (no closing ])"
                if after:
                    message = f"expected , or ] after the record, found {after!r}"
                raise BrokenJson(self.line, message)
            self.take()

    def wrapper_items(self) -> Iterator[JsonRecord]:
        """The notes of `{"notes": [...], "count": N}`; other keys are read and dropped."""
        self.take()
        while True:
            if self.peek() != '"':
                raise BrokenJson(self.line, 'expected a key such as "notes"')
            key = self.decode().value
            if self.peek() != ":":
                raise BrokenJson(self.line, "expected : after the key")
            self.take()
            if self.peek() == "[" and key == WRAPPER_KEY:
                yield from self.array_items()
            else:
                self.decode()
            after = self.peek()
            if after == "}":
                self.take()
                return
            if after != ",":
                raise BrokenJson(self.line, "the JSON object is cut short (no closing })")
            self.take()


def read_json_records(name: str, fp: BinaryIO) -> Iterator[JsonRecord | Problem]:
    """Every record of a dump, in order, or a Problem at FILE:LINE for what cannot be read."""
    stream = JsonStream(fp)
    first = stream.peek()
    if first == "":
        yield Problem(name, 1, "file is empty")
        return
    try:
        if first == "[" or (first == "{" and stream.is_wrapper()):
            yield from stream.array_items() if first == "[" else stream.wrapper_items()
            if stream.peek():
                yield Problem(name, stream.line, "text after the end of the JSON value")
            return
    except BrokenJson as broken:
        yield Problem(name, broken.line, f"{broken.message}; the rest of the file is not read")
        return
    yield from json_lines(name, stream)


def json_lines(name: str, stream: JsonStream) -> Iterator[JsonRecord | Problem]:
    """The records of one value a line (after the first, whatever the first was)."""
    while stream.peek():
        try:
            yield stream.decode()
        except BrokenJson as broken:
            yield Problem(name, broken.line, broken.message)
            stream.skip_line()


def first_record(fp: BinaryIO, limit: int = 4 * CHUNK_BYTES) -> object:
    """The first record of a dump (to tell its format), or None when there is none to read
    within `limit` characters."""
    stream = JsonStream(fp, max_record=limit)
    first = stream.peek()
    try:
        if first == "[" or (first == "{" and stream.is_wrapper()):
            items = stream.array_items() if first == "[" else stream.wrapper_items()
            return next(iter(items), JsonRecord(1, None)).value
        if first == "{":
            return stream.decode().value
    except BrokenJson:
        return None
    return None


def broken_first_record(fp: BinaryIO, limit: int = 4 * CHUNK_BYTES) -> BrokenJson | None:
    """Why the first record of a JSON array or of the API's `{"notes": [...]}` cannot be
    read (a dump's format is told by its first record); None for any other file."""
    stream = JsonStream(fp, max_record=limit)
    first = stream.peek()
    try:
        if first == "[" or (first == "{" and stream.is_wrapper()):
            next(iter(stream.array_items() if first == "[" else stream.wrapper_items()), None)
    except BrokenJson as broken:
        return broken
    return None
