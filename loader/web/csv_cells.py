"""CSV cells a spreadsheet opens as text, never as a formula (OWASP's "CSV injection" advice).

A spreadsheet reads a cell starting with `=`, `+`, `-` or `@` as a formula, and some skip a
leading tab or carriage return and read the formula after it: `=HYPERLINK("http://x","y")` in
an abstract becomes a live link, `+cmd|' /C calc'!A0` a command. Such a cell is written with a
leading `'`, which spreadsheets show as text and do not display. A cell that is only a number
(`-3`, `+1.5`, `-1e5`) stays as it is: it is no formula, and a `'` would make it text.

Every CSV the site writes on the catalog (table CSV and its stream, canned and custom SQL
queries, rows, the /search export) passes its cells, headings included, through here.
"""

import re
from collections.abc import Iterable
from typing import Any

# what OWASP lists
FORMULA_STARTS = frozenset("=+-@\t\r")
# the search highlight characters, which every CSV of the catalog leaves out as it writes its
# lines (plugins/csv_stream.py): a cell is judged by what follows them
HIGHLIGHTS = "\ue000\ue001"
# a string starting with none of these is written as it is
CHECKED_STARTS = FORMULA_STARTS | frozenset(HIGHLIGHTS)
# a whole cell that a spreadsheet reads as a number, sign and exponent included
NUMBER = re.compile(r"[+-]?(?:\d+\.?\d*|\.\d+)(?:[eE][+-]?\d+)?", re.ASCII)
TEXT_MARK = "'"


def safe_text(text: str) -> str:
    """text, with a leading `'` when a spreadsheet would read it as a formula."""
    if text[:1] not in CHECKED_STARTS:
        return text
    shown = text.lstrip(HIGHLIGHTS)
    if shown[:1] in FORMULA_STARTS and not NUMBER.fullmatch(shown):
        return TEXT_MARK + text
    return text


def safe_cell(value: Any) -> Any:
    """A cell as it may go into a CSV: strings through safe_text, anything else as it is
    (numbers, None and the rest are written by the CSV writer without a formula sign)."""
    if isinstance(value, str):
        return safe_text(value)
    return value


def safe_row(row: Iterable[Any]) -> list[Any]:
    return [safe_cell(value) for value in row]
