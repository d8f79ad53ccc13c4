"""Pure normalization rules: tracks, affiliations, markup -> plain text, identity."""

import hashlib
import re
import unicodedata

# plain_text: markup -> plain text is markup.py's job (re-exported)
from .markup import collapse_spaces, plain_text  # noqa: F401
from .names import name_key  # noqa: F401 - re-exported: plugins/facets.py imports it from here

TRACK_SEPARATOR = "·"


def collapse_whitespace(text):
    return collapse_spaces(text)  # most abstracts already are: returned as they are


def paper_id(abstract):
    """Stable id: the same abstract (up to whitespace and Unicode form) gives the same id."""
    canonical = collapse_whitespace(unicodedata.normalize("NFC", abstract))
    return hashlib.sha256(canonical.encode("utf-8")).hexdigest()[:16]


def split_track(text):
    """'Area · Subarea' -> (name, area, subarea); the subarea may contain commas."""
    text = collapse_whitespace(unicodedata.normalize("NFC", text))
    area, separator, subarea = text.partition(TRACK_SEPARATOR)
    area, subarea = area.strip(), subarea.strip()
    if not separator or not subarea:
        return area, area, None
    return f"{area} {TRACK_SEPARATOR} {subarea}", area, subarea


def affiliation_slug(text):
    return collapse_whitespace(unicodedata.normalize("NFKC", text)).casefold()


def affiliation_name(slug):
    """Derived display name: short slugs are acronyms (pku -> PKU), others title case."""
    words = re.split(r"[-_\s]+", slug)
    if len(words) == 1 and len(slug) <= 4:
        return slug.upper()
    return " ".join(word.capitalize() for word in words if word)
