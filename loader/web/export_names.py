"""The file name of a download: what was searched and filtered, as a short ASCII slug.

`/search.csv?q=diffusion&venue=ICML&year=2023` downloads as `papers-diffusion-icml-2023.csv`,
`/catalog/papers.csv?area=Applications&_dl=1` as `papers-applications.csv`. A name holds only
`a-z`, `0-9`, `-` and one `.` before the extension, so it is the same file name on every
system, needs no escaping inside `Content-Disposition: attachment; filename="..."`, and can
carry no path, quote or line break from the URL. Accents are dropped (`é` -> `e`); a word with
no Latin letter or digit (`扩散`) leaves nothing, and a search that leaves nothing at all is
`<stem>-search`. Pure: no Datasette, no I/O.
"""

import re
import unicodedata
from collections.abc import Iterable

# the name before its extension: long enough for a query and a few filters, short enough for
# every file system and a browser's download bar
MAX_NAME_CHARACTERS = 80
FALLBACK_WORD = "search"


def slug_words(text: object) -> list[str]:
    """The ASCII words of a value, lower case: `Théorie & Practice` -> [theorie, practice]."""
    decomposed = unicodedata.normalize("NFKD", str(text))
    ascii_text = decomposed.encode("ascii", "ignore").decode("ascii").lower()
    return re.findall(r"[a-z0-9]+", ascii_text)


def shortened(stem: str, words: list[str], limit: int) -> str:
    """The stem and words joined by `-`, cut after the last whole word that fits `limit`; a
    first word too long for the room left is cut to fit, so the name still says something."""
    name = stem[:limit].rstrip("-")
    for index, word in enumerate(words):
        room = limit - len(name) - 1
        if len(word) > room:
            if index == 0 and room > 0:
                name = f"{name}-{word[:room]}"
            break
        name = f"{name}-{word}"
    return name


def export_file_name(stem: str, parts: Iterable[object], extension: str) -> str:
    """`<stem>-<words of each part>.<extension>`, ASCII, at most MAX_NAME_CHARACTERS before the
    extension. `parts` are what was searched: query text, filter values. Parts given that
    leave no word name the file `<stem>-search`; no parts at all, `<stem>`."""
    stem_slug = "-".join(slug_words(stem)) or "export"
    given = list(parts)
    words = [word for part in given for word in slug_words(part)]
    if given and not words:
        words = [FALLBACK_WORD]
    extension = "".join(slug_words(extension)) or "txt"
    return f"{shortened(stem_slug, words, MAX_NAME_CHARACTERS)}.{extension}"


def attachment(file_name: str) -> str:
    """The Content-Disposition of a download named `file_name` (an export_file_name)."""
    if not re.fullmatch(r"[a-z0-9-]+\.[a-z0-9]+", file_name):
        raise ValueError(f"not an export file name: {file_name!r}")
    return f'attachment; filename="{file_name}"'
