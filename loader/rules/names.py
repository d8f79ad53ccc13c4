"""Author names: the key that says two spellings are one name, and which spelling to show.

Pure: no database, no state. The builder counts how often each spelling is used and asks
`display_name` for the one to show.
"""

import re
import unicodedata
from collections.abc import Callable, Mapping

# in a key, the hyphens and dashes a name may be joined with become spaces ("Pin-Yu" and
# "Pin Yu" are one name) and apostrophes ("D’Oro", "Dʼ Oro") the ASCII one
KEY_CHARACTERS = str.maketrans(
    {
        **dict.fromkeys("-\u2010\u2011\u2012\u2013\u2014\u2212\u00ad_", " "),
        **dict.fromkeys("\u2019\u2018\u02bc`\u00b4", "'"),
    }
)
# "John C.S. Lui" and "John C. S. Lui": initials typed with or without a space
AFTER_PERIOD = re.compile(r"\.\s*")


def character_class(test: Callable[[str], object]) -> re.Pattern[str]:
    """A regex class of the BMP characters `test` accepts, as ranges."""
    ranges: list[str] = []
    start = None
    for code in range(0x10001):
        inside = code < 0x10000 and test(chr(code))
        if inside and start is None:
            start = code
        elif not inside and start is not None:
            ranges.append(f"\\u{start:04x}-\\u{code - 1:04x}")
            start = None
    return re.compile(f"[{''.join(ranges)}]+")


# the combining marks NFKD splits accents into (the BMP holds every one a name or title uses)
COMBINING_MARKS = character_class(unicodedata.combining)
ROMAN_NUMERAL = re.compile(r"^(?:I{1,3}|IV|V|VI{1,3}|IX|X)\.?$")


def without_accents(text: str) -> str:
    """NFKD with the combining marks dropped: 'Tramèr' -> 'Tramer'. ASCII text is as it is."""
    if text.isascii():
        return text
    return COMBINING_MARKS.sub("", unicodedata.normalize("NFKD", text))


def name_key(name: str) -> str:
    """One key for the spellings of one name: case, Unicode form, diacritics, hyphens and
    the spacing of initials do not count ('Florian Tramèr' = 'florian tramer',
    'Pin-Yu Chen' = 'Pin Yu Chen'). Word order and initials do count: 'Chen Pin-Yu' and
    'P. Chen' are other keys, since they are often other people."""
    if name.isascii():  # most names: the same rules, without the Unicode work
        text = name.casefold().replace("-", " ").replace("_", " ").replace("`", "'")
    else:  # joiners before NFKD ("´" would become a space) and after it (it makes "－" a "-")
        text = without_accents(name.translate(KEY_CHARACTERS).casefold())
        text = unicodedata.normalize("NFKC", text.translate(KEY_CHARACTERS))
    if "." in text:
        text = AFTER_PERIOD.sub(". ", text)
    return " ".join(text.split())


def spelling(name: str) -> str:
    """A name as stored and shown: composed Unicode, single spaces."""
    return " ".join(unicodedata.normalize("NFC", name).split())


def is_well_cased(name: str) -> bool:
    """'Jie Zhang', 'Aäron van den Oord', 'Jascha Sohl-Dickstein' are; 'Jie ZHANG',
    'JIE ZHANG' and 'jie zhang' are not. A word of two or more letters all in capitals
    shouts (roman numerals aside); a name with no capital at all is all-lowercase."""
    if not any(c.isupper() for c in name):
        return False
    for word in name.translate(KEY_CHARACTERS).split():
        letters = [c for c in word if c.isalpha()]
        shouts = len(letters) >= 2 and all(c.isupper() for c in letters)
        if shouts and not ROMAN_NUMERAL.match(word):
            return False
    return True


def display_rank(name: str, count: int = 1) -> tuple[bool, bool, int, int, str]:
    """Sort key, smallest first, for the spelling to show among one key's spellings: the most
    used well-cased spelling; with none, the most used one mixing cases. Ties go to the one
    with more accents kept ('Tramèr' over 'Tramer'), then to the smallest string, so the
    choice never depends on file order."""
    mixed = any(c.isupper() for c in name) and any(c.islower() for c in name)
    accents = sum(not c.isascii() for c in name)
    return (not is_well_cased(name), not mixed, -count, -accents, name)


def display_name(counts: Mapping[str, int]) -> str:
    """The spelling to show, from {spelling: times used}."""
    return min(counts, key=lambda name: display_rank(name, counts[name]))
