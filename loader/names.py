"""Author names: the key that says two spellings are one name, and which spelling to show.

Pure: no database, no state. The builder counts how often each spelling is used and asks
`display_name` for the one to show.
"""

import re
import unicodedata

# hyphens and dashes a name may be joined with: "Pin-Yu" and "Pin Yu" are one name
NAME_JOINERS = re.compile(r"[\u002d\u2010\u2011\u2012\u2013\u2014\u2212\u00ad_]")
# apostrophes: "D'Oro", "D’Oro" and "Dʼ Oro"
APOSTROPHES = str.maketrans({"\u2019": "'", "\u2018": "'", "\u02bc": "'", "`": "'", "´": "'"})
# "John C.S. Lui" and "John C. S. Lui": initials typed with or without a space
AFTER_PERIOD = re.compile(r"\.\s*")
ROMAN_NUMERAL = re.compile(r"^(?:I{1,3}|IV|V|VI{1,3}|IX|X)\.?$")


def name_key(name):
    """One key for the spellings of one name: case, Unicode form, diacritics, hyphens and
    the spacing of initials do not count ('Florian Tramèr' = 'florian tramer',
    'Pin-Yu Chen' = 'Pin Yu Chen'). Word order and initials do count: 'Chen Pin-Yu' and
    'P. Chen' are other keys, since they are often other people."""
    text = unicodedata.normalize("NFKD", name.translate(APOSTROPHES))
    text = "".join(c for c in text if not unicodedata.combining(c))
    text = NAME_JOINERS.sub(" ", text.casefold())
    text = AFTER_PERIOD.sub(". ", text)
    return " ".join(unicodedata.normalize("NFKC", text).split())


def spelling(name):
    """A name as stored and shown: composed Unicode, single spaces."""
    return " ".join(unicodedata.normalize("NFC", name).split())


def is_well_cased(name):
    """'Jie Zhang', 'Aäron van den Oord', 'Jascha Sohl-Dickstein' are; 'Jie ZHANG',
    'JIE ZHANG' and 'jie zhang' are not. A word of two or more letters all in capitals
    shouts (roman numerals aside); a name with no capital at all is all-lowercase."""
    if not any(c.isupper() for c in name):
        return False
    for word in NAME_JOINERS.sub(" ", name).split():
        letters = [c for c in word if c.isalpha()]
        shouts = len(letters) >= 2 and all(c.isupper() for c in letters)
        if shouts and not ROMAN_NUMERAL.match(word):
            return False
    return True


def display_rank(name, count=1):
    """Sort key, smallest first, for the spelling to show among one key's spellings: the most
    used well-cased spelling; with none, the most used one mixing cases. Ties go to the one
    with more accents kept ('Tramèr' over 'Tramer'), then to the smallest string, so the
    choice never depends on file order."""
    mixed = any(c.isupper() for c in name) and any(c.islower() for c in name)
    accents = sum(not c.isascii() for c in name)
    return (not is_well_cased(name), not mixed, -count, -accents, name)


def display_name(counts):
    """The spelling to show, from {spelling: times used}."""
    return min(counts, key=lambda name: display_rank(name, counts[name]))
