"""Pure normalization rules: tracks, affiliations, markup -> plain text, identity."""

import hashlib
import re
import unicodedata
from collections.abc import Mapping

# plain_text: markup -> plain text is markup.py's job (re-exported)
from loader.rules.affiliation_words import WORDS as AFFILIATION_WORDS
from loader.rules.markup import collapse_spaces, plain_text  # noqa: F401
from loader.rules.names import name_key  # noqa: F401 - re-exported: plugins/facets.py imports it from here

TRACK_SEPARATOR = "·"
SLUG_SEPARATORS = re.compile(r"[-_\s]+")
# a one-word slug this short is read as an acronym (pku, ucla) unless real names write it
ACRONYM_LENGTH = 4


def collapse_whitespace(text: str) -> str:
    return collapse_spaces(text)  # most abstracts already are: returned as they are


def paper_id(abstract: str, title_words: str | None = None) -> str:
    """Stable id: the same abstract (up to whitespace and Unicode form) gives the same id; with
    a title (merge.identifying_title's words) the same abstract and title do, so that papers a
    source gives one placeholder abstract ("Abstract Unavailable") are not one row."""
    canonical = collapse_whitespace(unicodedata.normalize("NFC", abstract))
    if title_words:
        canonical = f"{canonical}\n{title_words}"
    return hashlib.sha256(canonical.encode("utf-8")).hexdigest()[:16]


def untold_abstract_paper_id(title_words: str, first_author: str) -> str:
    """Stable id of a paper its source gives no abstract: its title's words (merge.title_words)
    and its first author's name key, so that papers without abstracts are not one row and
    the same paper listed twice is."""
    canonical = f"\0no abstract\n{title_words}\n{first_author}"
    return hashlib.sha256(canonical.encode("utf-8")).hexdigest()[:16]


def split_track(text: str) -> tuple[str, str, str | None]:
    """'Area · Subarea' -> (name, area, subarea); the subarea may contain commas."""
    text = collapse_whitespace(unicodedata.normalize("NFC", text))
    area, separator, subarea = text.partition(TRACK_SEPARATOR)
    area, subarea = area.strip(), subarea.strip()
    if not separator or not subarea:
        return area, area, None
    return f"{area} {TRACK_SEPARATOR} {subarea}", area, subarea


def affiliation_slug(text: str) -> str:
    """The key that says two affiliations are one: case and spacing do not count."""
    return collapse_whitespace(unicodedata.normalize("NFKC", text)).casefold()


def affiliation_name(text: str) -> str:
    """An affiliation's name as shown. A source that writes names (Paper Copilot's `aff`:
    "MIT CSAIL", "University of California, Berkeley") is shown as it writes them; a slug,
    which has no capital letter ("university-of-california-berkeley", "pku", "far-ai"), gets
    its words' case back (slug_name)."""
    text = collapse_whitespace(unicodedata.normalize("NFC", text))
    if any(character.isupper() for character in text):
        return text
    return slug_name(text)


def slug_name(slug: str) -> str:
    """A slug's words as real names write them (AFFILIATION_WORDS, read from real names:
    `of`, `AI`, `ETH`, `DeepMind`), the others capitalized, the first word always; a slug of
    one short word unknown to real names is an acronym (`pku` -> `PKU`)."""
    words = [word for word in SLUG_SEPARATORS.split(slug) if word]
    if len(words) == 1 and len(words[0]) <= ACRONYM_LENGTH and words[0] not in AFFILIATION_WORDS:
        return words[0].upper()
    shown = [AFFILIATION_WORDS.get(word) or word.capitalize() for word in words]
    if shown and shown[0].islower():
        shown[0] = shown[0].capitalize()
    return " ".join(shown)


def shown_affiliation_name(counts: Mapping[str, int]) -> str:
    """Of the names one affiliation is written with ({name: entries using it}; one slug, so
    they differ in case or spacing alone), the most used, then the smallest string: never the
    first in file order."""
    return min(counts, key=lambda name: (-counts[name], name))
