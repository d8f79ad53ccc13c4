"""Pure normalization rules: tracks, affiliations, markup -> plain text, identity."""

import hashlib
import re
import unicodedata

# plain_text: markup -> plain text is markup.py's job (re-exported)
from loader.rules.markup import collapse_spaces, plain_text  # noqa: F401
from loader.rules.names import name_key  # noqa: F401 - re-exported: plugins/facets.py imports it from here

TRACK_SEPARATOR = "·"


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


def split_track(text: str) -> tuple[str, str, str | None]:
    """'Area · Subarea' -> (name, area, subarea); the subarea may contain commas."""
    text = collapse_whitespace(unicodedata.normalize("NFC", text))
    area, separator, subarea = text.partition(TRACK_SEPARATOR)
    area, subarea = area.strip(), subarea.strip()
    if not separator or not subarea:
        return area, area, None
    return f"{area} {TRACK_SEPARATOR} {subarea}", area, subarea


def affiliation_slug(text: str) -> str:
    return collapse_whitespace(unicodedata.normalize("NFKC", text)).casefold()


def affiliation_name(slug: str) -> str:
    """Derived display name: short slugs are acronyms (pku -> PKU), others title case."""
    words = re.split(r"[-_\s]+", slug)
    if len(words) == 1 and len(slug) <= 4:
        return slug.upper()
    return " ".join(word.capitalize() for word in words if word)
