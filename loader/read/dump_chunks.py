"""A large dump written one record a line (the arXiv snapshot, OpenReview notes a line), read in
pieces: byte ranges that end at line ends, each read apart (by the build's worker processes),
so that a multi-GB file is prepared a few MB at a time by every worker at once.

One pass over the file (split_lines) finds the pieces, the line each starts on, and the file's
SHA-256. A piece is read like the whole file would be (read_piece): the same entries, problems
and settings, with the same lines. Duplicate ids are skipped within a piece; across pieces the
reader of the pieces skips them, by the entries' record_key, so the pieces together give what
the whole file gives.
"""

import hashlib
import io
import os
from collections.abc import Collection, Iterator
from dataclasses import dataclass, replace

from loader.read.arxiv_snapshot import map_snapshot_record
from loader.read.dumps import MapRecord, map_records
from loader.read.json_stream import JsonStream, first_record, json_lines
from loader.read.openreview import map_note
from loader.read.sources import (
    DUMP_HEAD_CHARACTERS,
    InputFile,
    Source,
    detect_dump,
    display_path,
    open_regular,
    with_read_settings,
)
from loader.records import Entry, LeftOut, Problem

# the dumps whose records can be one a line (Paper Copilot's files are one JSON array)
LINE_DUMPS: dict[str, MapRecord] = {"arxiv": map_snapshot_record, "openreview": map_note}
READ_BYTES = 1 << 20


@dataclass(frozen=True)
class Piece:
    start: int  # byte offset of its first line
    end: int  # byte offset past its last line end
    line: int  # the number of its first line


def line_dump_format(path: str | os.PathLike[str], forced_format: str | None = None) -> str | None:
    """The dump format of a file whose records are one a line (its first character `{`, not
    the API's `{"notes": [...]}`), else None: a JSON array, a page or a file that cannot be
    read is read whole."""
    try:
        fp = open_regular(path)
        if fp is None:
            return None
        with fp:
            head = fp.read(64).lstrip(b"\xef\xbb\xbf \t\r\n")
            if not head.startswith(b"{"):
                return None
            fp.seek(0)
            stream = JsonStream(fp, max_record=DUMP_HEAD_CHARACTERS)
            stream.peek()
            if stream.is_wrapper():
                return None
            fp.seek(0)
            dump = forced_format or detect_dump(first_record(fp, DUMP_HEAD_CHARACTERS))
    except OSError:
        return None
    return dump if dump in LINE_DUMPS else None


class LinePieces:
    """The pieces of a file, of about `size` bytes each, found in one pass that also hashes
    the file: `sha256` is the file's by the time the last piece is given."""

    def __init__(self, path: str | os.PathLike[str], size: int) -> None:
        self.path = path
        self.size = size
        self.sha256 = ""

    def __iter__(self) -> Iterator[Piece]:
        digest = hashlib.sha256()
        held: Piece | None = None  # the last piece found, given once the next one is
        start = position = 0
        line = 1  # of `start`
        lines = 0  # line ends from `start` to what was counted
        with open(self.path, "rb") as fp:
            while data := fp.read(READ_BYTES):
                digest.update(data)
                counted = 0  # where in `data` counting line ends stopped
                while position + len(data) - start >= self.size:
                    end = data.find(b"\n", max(counted, start + self.size - 1 - position))
                    if end < 0:
                        break
                    lines += data.count(b"\n", counted, end + 1)
                    if held:
                        yield held
                    held = Piece(start, position + end + 1, line)
                    start, line, lines, counted = position + end + 1, line + lines, 0, end + 1
                lines += data.count(b"\n", counted)
                position += len(data)
        self.sha256 = digest.hexdigest()
        if held:
            yield held
        if position > start:
            yield Piece(start, position, line)


def read_piece(
    path: str | os.PathLike[str],
    format: str,
    piece: Piece,
    arxiv_categories: Collection[str] = (),
) -> Iterator[Entry | Problem | LeftOut]:
    """What the file gives (read_source) for the lines of one piece, but the problems of the
    sources.yml files that the first file carries (InputFile.config_problems): the reader of
    the pieces gives them once."""
    name = display_path(path)
    if isinstance(path, InputFile):
        path = replace(path, config_problems=())
    try:
        with open(path, "rb") as fp:
            fp.seek(piece.start)
            data = fp.read(piece.end - piece.start)
    except OSError as error:
        problem = Problem(name, piece.line, f"cannot read: {error.strerror or error}")
        items: Iterator[Entry | Problem] = iter([problem])
    else:
        stream = JsonStream(io.BytesIO(data), line=piece.line)
        items = map_records(name, json_lines(name, stream), LINE_DUMPS[format])
    return with_read_settings(path, Source(name, format, ""), items, arxiv_categories)
