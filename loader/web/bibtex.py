"""Papers as BibTeX entries, as DBLP, OpenReview and Semantic Scholar offer them.

`@inproceedings` with a `booktitle` for a paper from a venue, `@misc` for an arXiv preprint or a
paper with no venue. Keys are the first author's family name, the year and the first title word
(`levine2020offline`), made unique within one export by a letter suffix.
"""

import hashlib
import re
import unicodedata
from collections.abc import Mapping, Sequence
from typing import Any
from urllib.parse import quote

from loader.build.id_set import IdSet
from loader.rules.markup import title_text

PREPRINT_VENUES = {"arxiv", "corr"}
# words a key never starts with: "A Survey of ..." -> survey
KEY_STOPWORDS = {"a", "an", "the", "on", "of", "in", "for", "to", "and", "is", "are", "towards"}
DERIVED_NOTE = "title derived from the abstract"
# TeX's special characters as the text commands that print them. Braces too: BibTeX counts
# the brace of `\{` as one, so a lone one would end the field early or never; these stay
# balanced whatever the text
TEX_SPECIALS = str.maketrans(
    {
        "\\": r"\textbackslash{}",
        "{": r"\textbraceleft{}",
        "}": r"\textbraceright{}",
        "$": r"\$",
        "&": r"\&",
        "%": r"\%",
        "#": r"\#",
        "_": r"\_",
        "~": r"\textasciitilde{}",
        "^": r"\textasciicircum{}",
    }
)
CONTROL_CHARACTERS = re.compile(r"[\x00-\x08\x0e-\x1b\x7f-\x9f]")
# what a URL holds as it is (RFC 3986's reserved and unreserved characters, and % of an
# escape); anything else is percent-encoded, a backslash, brace or caret among them
URL_SAFE = "-._~:/?#[]@!$&'()*+,;=%"


def ascii_letters(text: str | None) -> str:
    text = unicodedata.normalize("NFKD", text or "")
    return re.sub(
        r"[^a-z0-9]", "", "".join(c for c in text if not unicodedata.combining(c)).lower()
    )


def family_name(name: str) -> str:
    """The last word of a name (`Sergey Levine` -> levine); initials and suffixes skipped."""
    words = [word for word in re.split(r"\s+", name.strip()) if word]
    for word in reversed(words):
        letters = ascii_letters(word)
        if len(letters) > 1 and letters not in {"jr", "sr", "ii", "iii", "iv"}:
            return letters
    return ascii_letters(words[-1]) if words else ""


def first_title_word(title: str | None) -> str:
    for word in re.findall(r"[^\W_]+", title or ""):
        letters = ascii_letters(word)
        if letters and letters not in KEY_STOPWORDS:
            return letters
    return ""


def entry_key(authors: Sequence[str], year: int | None, title: str | None) -> str:
    return (
        (family_name(authors[0]) if authors else "anonymous")
        + (str(year) if year else "")
        + first_title_word(title)
    ) or "paper"


def key_digest(key: str) -> int:
    return int.from_bytes(hashlib.blake2b(key.encode(), digest_size=8).digest(), "big")


class KeyMaker:
    """Unique keys within one export: a second `levine2020offline` becomes ...offlinea.

    The keys given out are kept as 64-bit digests (IdSet), not strings: an export of a million
    papers keeps a million keys. Two keys with one digest (about one chance in 10^7 over a
    million keys) only give the second a suffix it did not need: keys stay unique. A key given
    out again remembers its next suffix, so its thousandth copy tries one suffix, not a
    thousand."""

    def __init__(self) -> None:
        self.seen = IdSet()
        self.next_suffix: dict[int, int] = {}  # digests of keys given out more than once

    def unique(self, key: str) -> str:
        digest = key_digest(key)
        if self.seen.add(digest):
            return key
        index = self.next_suffix.get(digest, 0)
        while True:
            candidate = key + suffix(index)
            index += 1
            if self.seen.add(key_digest(candidate)):
                self.next_suffix[digest] = index
                return candidate


def suffix(index: int) -> str:
    letters = ""
    index += 1
    while index:
        index, remainder = divmod(index - 1, 26)
        letters = chr(ord("a") + remainder) + letters
    return letters


def field_text(text: str | None) -> str:
    """Any text as a field value LaTeX typesets as that very text: every TeX special
    escaped, so no command the text spells (`\\input`, `\\write18`, `^^5c`) is ever run and
    braces stay balanced; spaces collapsed, control characters dropped."""
    text = " ".join(CONTROL_CHARACTERS.sub("", text or "").split())
    return text.translate(TEX_SPECIALS)


def url_text(url: str) -> str:
    """A link as a field value: what a URL may not hold (backslash, braces, spaces, `^`)
    percent-encoded, as a browser sends it, and `%`, `&`, `#` escaped as BibTeX has them."""
    url = quote(CONTROL_CHARACTERS.sub("", url).strip(), safe=URL_SAFE)
    return re.sub(r"([%&#])", r"\\\1", url)


def is_preprint(venue: str | None) -> bool:
    return not venue or venue.strip().lower() in PREPRINT_VENUES


def format_entry(paper: Mapping[str, Any], key_maker: KeyMaker | None = None) -> str:
    """One paper as BibTeX. `paper` has label, title, authors (names), truncated, venue, year, url.

    The title is its plain text, as a page's <title> shows it (`Schr\\"odinger` ->
    Schrödinger, `$\\alpha$` -> α), then escaped as every field is: the entry is data a
    reader's LaTeX prints, never TeX code from a scraped page."""
    # a label (no title) is read from the plain text already: its `$` is a dollar
    title = title_text(paper["title"]) if paper.get("title") else paper.get("label") or ""
    authors = list(paper.get("authors") or [])
    key = entry_key(authors, paper.get("year"), title)
    if key_maker is not None:
        key = key_maker.unique(key)
    venue = paper.get("venue")
    kind = "misc" if is_preprint(venue) else "inproceedings"
    fields = [("title", field_text(title))]
    if authors:
        names = authors + (["others"] if paper.get("truncated") else [])
        fields.append(("author", field_text(" and ".join(names))))
    if kind == "inproceedings":
        fields.append(("booktitle", field_text(venue)))
    elif venue:
        fields.append(("howpublished", field_text(venue)))
    if paper.get("year"):
        fields.append(("year", field_text(str(paper["year"]))))
    if paper.get("url"):
        fields.append(("url", url_text(paper["url"])))
    if not paper.get("title"):
        fields.append(("note", DERIVED_NOTE))
    body = ",\n".join(f"  {name} = {{{text}}}" for name, text in fields)
    return f"@{kind}{{{key},\n{body}\n}}\n"
