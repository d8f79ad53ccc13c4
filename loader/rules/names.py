"""Author names: the key that says two spellings are one name, and which spelling to show.

Pure: no database, no state. The builder counts how often each spelling is used and asks
`display_name` for the one to show.
"""

import itertools
import re
import unicodedata
from collections.abc import Iterable, Iterator, Mapping

# is_well_cased reads a name's words with its hyphens and dashes as spaces ("Sohl-Dickstein")
KEY_CHARACTERS = str.maketrans(
    {
        **dict.fromkeys("-\u2010\u2011\u2012\u2013\u2014\u2212\u00ad_", " "),
        **dict.fromkeys("\u2019\u2018\u02bc`\u00b4", "'"),
    }
)


def character_class(accepted: Iterable[object]) -> re.Pattern[str]:
    """A regex class, as ranges, of the BMP characters whose place in `accepted` (one value a
    character, from U+0000 on) is true."""
    ranges: list[str] = []
    start = end = -2
    for code in itertools.compress(itertools.count(), accepted):
        if code != end + 1:
            if start >= 0:
                ranges.append(f"\\u{start:04x}-\\u{end:04x}")
            start = code
        end = code
    if start >= 0:
        ranges.append(f"\\u{start:04x}-\\u{end:04x}")
    return re.compile(f"[{''.join(ranges)}]+")


# unicodedata's functions mapped over the BMP from C: a Python call a character cost a tenth
# of a second every import (every build, server and worker)
def plane() -> Iterator[str]:
    return map(chr, range(0x10000))


def in_categories(*categories: str) -> Iterator[bool]:
    return map(frozenset(categories).__contains__, map(unicodedata.category, plane()))


# the combining marks NFKD splits accents into (the BMP holds every one a name or title uses)
COMBINING_MARKS = character_class(map(unicodedata.combining, plane()))
# invisible format characters (direction marks U+200E/U+200F and U+202A-U+202E, zero-width
# spaces and joiners, soft hyphens, BOMs): scraped names carry them, and a key that kept them
# would make "\u202aAna Costa\u202c" another author than "Ana Costa"
FORMAT_CHARACTERS = character_class(in_categories("Cf"))
# what parts a name's words in a key: spaces, punctuation (hyphens, dots, quotes, apostrophes,
# brackets) and symbols; letters, digits and marks make the words
KEY_SEPARATORS = character_class(
    in_categories(
        *("Zs", "Zl", "Zp"),
        *("Pc", "Pd", "Ps", "Pe", "Pi", "Pf", "Po"),
        *("Sm", "Sc", "Sk", "So"),
        *("Cc", "Cf", "Cs", "Co", "Cn"),
    )
)
ASCII_KEY_SEPARATORS = re.compile(r"[^a-z0-9]+")
# an apostrophe or quote inside a word joins it ("O'Neil" = "O’Neil" = "ONeil"), as do the
# accents TeX and PDF text leave as quotes: "Nicol‘o Cesa-Bianchi" (Nicolò), "Dagmar
# Kainm"uller" (Kainmüller); around a word it parts words like a space ("Wei “Will” Zhang")
QUOTES = "'\"`´‘’‚‛“”„‟′″ʹʺʼˈ＇＂"
QUOTE_IN_WORD = re.compile(rf"(?<=[^\W_])[{QUOTES}]+(?=[^\W_])")
ASCII_QUOTE_IN_WORD = re.compile(r"(?<=[a-z0-9])['\"`]+(?=[a-z0-9])")
# a nickname between a name's words, in brackets ("Wenjie (Jack) Zhao", "Huazhe(Harry) Xu")
# or quotes ("Lin "Lily" Xu", "Anh “Totti” Nguyen", "Ann ``Bo'' Lee"): not part of the
# name's key, so the name with it and without it are one name (the spelling stays as written)
NICKNAME_QUOTES = "\"'`‘’“”„«»"
NICKNAME = re.compile(
    r"(?<=\S)\s*(?:\([^()]*\)|\[[^\[\]]*\]|（[^（）]*）)(?=\s)"
    rf"|(?<=\S)\s[{NICKNAME_QUOTES}]+[^\s{NICKNAME_QUOTES}]+(?:\s[^\s{NICKNAME_QUOTES}]+)?"
    rf"[{NICKNAME_QUOTES}]+(?=\s)"
)
NICKNAME_MARKS = frozenset("([（" + NICKNAME_QUOTES)
ROMAN_NUMERAL = re.compile(r"^(?:I{1,3}|IV|V|VI{1,3}|IX|X)\.?$")


def without_accents(text: str) -> str:
    """NFKD with the combining marks dropped: 'Tramèr' -> 'Tramer'. ASCII text is as it is."""
    if text.isascii():
        return text
    return COMBINING_MARKS.sub("", unicodedata.normalize("NFKD", text))


def name_key(name: str) -> str:
    """One key for the spellings of one name.

    Case, Unicode form, diacritics, invisible format characters, punctuation, a nickname in
    brackets or quotes between the words and the spacing of the given names do not count:
    'Florian Tramèr' = 'florian tramer', 'Ana B. Costa' = 'Ana B Costa', 'Wei “Will” Zhang'
    = 'Wei (Will) Zhang' = 'Wei Zhang', and a hyphen written as a space or
    as nothing is one name ('Chia-Wei Lin' = 'Chia Wei Lin' = 'Chiawei Lin': the words before
    the last are joined). Word order and initials do count: 'Chen Pin-Yu', 'P. Chen' and
    'Ana Costa' / 'Ana B. Costa' are other keys, since they are often other people; an
    initial stays a word of its own, so 'Ana B. Costa' is not 'Anab Costa'."""
    if not NICKNAME_MARKS.isdisjoint(name):
        name = NICKNAME.sub("", name)
    if name.isascii():  # most names: the same rules, without the Unicode work
        text = name.lower()
        if "'" in text or '"' in text or "`" in text:
            text = ASCII_QUOTE_IN_WORD.sub("", text)
        words = ASCII_KEY_SEPARATORS.split(text)
    else:  # NFKC last: it makes full-width letters and punctuation ("Ｌｉ", "－") plain
        text = without_accents(FORMAT_CHARACTERS.sub("", name).casefold())
        text = QUOTE_IN_WORD.sub("", unicodedata.normalize("NFKC", text))
        words = KEY_SEPARATORS.split(text)
    return joined_words([word for word in words if word])


def joined_words(words: list[str]) -> str:
    """The words of a key: the given names' words run together ('chia', 'wei' -> 'chiawei')
    except initials, then the last word: 'chiawei lin', 'ana b costa'."""
    if len(words) < 2:
        return "".join(words)
    given: list[str] = []
    for word in words[:-1]:
        if given and len(word) > 1 and len(given[-1]) > 1:
            given[-1] += word
        else:
            given.append(word)
    return " ".join([*given, words[-1]])


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


def display_rank(name: str, count: int = 1) -> tuple[bool, bool, int, int, int, str]:
    """Sort key, smallest first, for the spelling to show among one key's spellings: the most
    used well-cased spelling; with none, the most used one mixing cases. Ties go to the one
    with more accents kept ('Tramèr' over 'Tramer'), then more dots after initials ('Michael
    R. Lyu' over 'Michael R Lyu'), then to the smallest string, so the choice never depends on
    file order."""
    mixed = any(c.isupper() for c in name) and any(c.islower() for c in name)
    accents = sum(not c.isascii() for c in name)
    return (not is_well_cased(name), not mixed, -count, -accents, -name.count("."), name)


def display_name(counts: Mapping[str, int]) -> str:
    """The spelling to show, from {spelling: times used}."""
    return min(counts, key=lambda name: display_rank(name, counts[name]))
