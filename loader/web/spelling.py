"""/search's "Did you mean": a search that finds fewer than MIN_PAPERS papers, with each word
that fewer papers hold replaced by a word that at least MIN_PAPERS papers hold.

Pure (statements and rules; loader/web/search_results.py runs them). The index holds porter
stems (`diffus`), not words, so a suggestion takes three steps:

1. candidates: stems of search_vocabulary (loader/build/vocabulary.py: the index's terms in at
   least MIN_PAPERS papers) that start as the word does (its first two letters, or those two
   swapped, or its first and third: `nueral` finds `neural`), each scored by the edits that
   make it the start of the word (a stem is a word cut short: `imit` for `imitaton`);
2. the best CANDIDATE_STEMS of them, fewest edits then most papers, become words: the stem
   with the rest of the typed word (`diffus` + `ion`), kept when some paper writes it, and for
   the best HIGHLIGHTED_STEMS the words papers write, read from the index's highlight()
   (`imit` -> imitation, imitate; the way to a word when the typo is in its ending);
3. those words are ranked by their edit distance to the typed word, then by their stem's
   papers, and each offered one is checked to be in at least MIN_PAPERS papers itself.

Suggestions replace words in the query as typed, so phrases, fields, operators, hyphens and
the rest of the query stay as they were (`self-supervsed -graph` -> `self-supervised -graph`).
"""

import bisect
import re
import unicodedata
from collections.abc import Iterable, Mapping, Sequence
from typing import Any

from loader.build.vocabulary import MIN_PAPERS
from loader.build.vocabulary import TABLE as VOCABULARY

HIGHLIGHT_START = "\ue000"
HIGHLIGHT_END = "\ue001"
SUGGESTIONS = 3
CANDIDATE_STEMS = 8
# the best candidates whose words are read from highlighted papers, and how many papers each
HIGHLIGHTED_STEMS = 3
SURFACE_ROWS = 4
# papers of a stem searched for the word it makes with the rest of the typed word
LITERAL_ROWS = 50
# misspelt words of one query looked for: each costs a few statements
MAX_MISSPELT = 3
# shorter words are never replaced (`of`, `rl`)
MIN_WORD = 3
# letters a stem may leave off the end of its word without a cost (`ation`, `ing`)
FREE_SUFFIX = 4
Params = dict[str, Any]
# a word's span in the query: (start, end)
Span = tuple[int, int]


def fold(word: str) -> str:
    """A word as the index compares it: lower case, accents removed."""
    if word.isascii():
        return word.lower()
    decomposed = unicodedata.normalize("NFKD", word).casefold()
    return "".join(c for c in decomposed if not unicodedata.combining(c))


def max_edits(word: str) -> int:
    """How far a suggestion may be from the word typed: 1 for `teh`, 2 from 6 letters on."""
    return max(1, min(2, len(word) // 3))


def worth_checking(word: str) -> bool:
    return len(word) >= MIN_WORD and not word.isdigit()


def papers_holding_sql(word: str) -> tuple[str, Params]:
    """How many papers hold the word, counted up to MIN_PAPERS (a short read for any word)."""
    return (
        "select count(*) from (select 1 from papers_fts where papers_fts match :word limit :enough)"
    ), {"word": '"' + word.replace('"', "") + '"', "enough": MIN_PAPERS}


def starts(word: str) -> list[str]:
    """The two letters a stem may start with for this word: its own first two, those two
    swapped, and its first and third (a letter typed twice or in the wrong place)."""
    found = [word[:2], word[1::-1]]
    if len(word) > 2:
        found.append(word[0] + word[2])
    return list(dict.fromkeys(found))


def candidates_sql(word: str) -> tuple[str, Params]:
    """The vocabulary's stems that could be this word cut short, with their papers."""
    params: Params = {
        # a shorter stem leaves more than FREE_SUFFIX letters off, each an edit
        "shortest": max(MIN_WORD, len(word) - FREE_SUFFIX - max_edits(word)),
        "longest": len(word) + max_edits(word),
    }
    ranges = []
    for index, start in enumerate(starts(word)):
        params[f"low_{index}"] = start
        params[f"high_{index}"] = start[:-1] + chr(ord(start[-1]) + 1)
        ranges.append(f"(term >= :low_{index} and term < :high_{index})")
    return (
        f"select term, papers from {VOCABULARY} where ({' or '.join(ranges)})"
        " and length(term) between :shortest and :longest order by term"
    ), params


def next_row(word: str, stem: str, rows: Sequence[list[int]], cap: int | None = None) -> list[int]:
    """Row len(rows) of the edit-distance table of `stem` (rows) against `word` (columns),
    from the rows before it: row[k] is the distance from stem[:len(rows)] to word[:k].
    Insertions, deletions, substitutions and swaps of neighbours (`modle` -> `model`: 1) each
    count one. With a cap, distances past it are cap + 1 and only the cells within cap of
    the diagonal are computed (the others are past it: each row or column apart is an
    edit)."""
    i = len(rows)
    a = stem[i - 1]
    previous = rows[-1]
    far = len(word) + len(stem) + 1 if cap is None else cap + 1
    low, high = (1, len(word)) if cap is None else (max(1, i - cap), min(len(word), i + cap))
    current = [far] * (len(word) + 1)
    current[0] = min(i, far)
    for j in range(low, high + 1):
        b = word[j - 1]
        cost = min(previous[j] + 1, current[j - 1] + 1, previous[j - 1] + (a != b), far)
        if i > 1 and j > 1 and a == word[j - 2] and stem[i - 2] == b:
            cost = min(cost, rows[-2][j - 2] + 1)
        current[j] = cost
    return current


def edit_distance(word: str, other: str) -> int:
    """Insertions, deletions, substitutions and swaps of neighbours, each one edit."""
    rows = [list(range(len(word) + 1))]
    for _ in other:
        rows.append(next_row(word, other, rows))
    return rows[-1][-1]


def stem_score(word: str, last_row: Sequence[int]) -> tuple[int, int]:
    """(edits, cut): the fewest edits that make the stem word[:cut] (the last row of their
    table gives them for every cut), plus one a letter the stem leaves off beyond FREE_SUFFIX
    (`the` is far from `thermodinamic`); the longest such start of the word."""
    costs = [
        distance + max(0, len(word) - cut - FREE_SUFFIX) for cut, distance in enumerate(last_row)
    ]
    fewest = min(costs)
    return fewest, max(cut for cut, cost in enumerate(costs) if cost == fewest)


def common_length(first: str, second: str) -> int:
    length = 0
    for a, b in zip(first, second):
        if a != b:
            break
        length += 1
    return length


def best_stems(word: str, rows: Sequence[tuple[str, int]]) -> list[tuple[str, int, str]]:
    """(stem, papers, the stem with the rest of the word) of the CANDIDATE_STEMS best
    candidates (rows in the order of their stems): fewest edits, then most papers. The stem
    with the rest of the word is the word most likely meant when the typo is in the stem
    (`diffus` + `ion` for `difusion`).

    The stems are walked in order as the paths of a trie: the table's rows of the letters a
    stem shares with the one before are kept, and once a row's smallest distance passes
    max_edits no stem that starts with those letters can come closer (the smallest distance
    of a row never falls in the rows below), so they are all skipped at once."""
    bound = max_edits(word)
    stems = [stem for stem, _ in rows]
    table = [list(range(len(word) + 1))]
    smallest = [0]  # each row's smallest distance
    before = ""
    scored = []
    index = 0
    while index < len(rows):
        stem, papers = rows[index]
        kept = min(common_length(before, stem), len(table) - 1) + 1
        del table[kept:], smallest[kept:]
        before = stem
        while len(table) <= len(stem) and smallest[-1] <= bound:
            table.append(next_row(word, stem, table, bound))
            smallest.append(min(table[-1]))
        if smallest[-1] > bound:
            # no stem starting with these letters comes within bound
            index = bisect.bisect_left(stems, stem[: len(table) - 1] + "\U0010ffff", index)
            continue
        score, cut = stem_score(word, table[-1])
        if score <= bound:
            scored.append((score, -papers, stem, stem + word[cut:]))
        index += 1
    best = sorted(scored)[:CANDIDATE_STEMS]
    return [(stem, -papers, completed) for _, papers, stem, completed in best]


def surface_words_sql(stem: str, prefix: bool) -> tuple[str, Params]:
    """A few papers' highlighted uses of the stem: the words as written (`diffusion`).

    The stem as a word (`"model"`) reads one term; FTS5 stems it again, which changes some
    stems (`diffus` -> `diffu`) and finds nothing: then as a prefix (`"diffus"*`)."""
    marks = ", ".join(
        f"highlight(papers_fts, {column}, char(57344), char(57345))" for column in range(3)
    )
    return (
        f"select {marks} from papers_fts where papers_fts match :stem limit :rows",
        {"stem": f'"{stem}"' + ("*" if prefix else ""), "rows": SURFACE_ROWS},
    )


def literal_uses_sql(word: str) -> tuple[str, Params]:
    """The texts of a few papers whose index holds the word and whose text holds its letters
    (LIKE: any case, inside other words too; holds_word() checks the word itself)."""
    return (
        "select papers.label, papers.authors, papers.abstract_text from papers"
        " where papers.rowid in (select rowid from papers_fts where papers_fts match :word"
        " limit :rows) and (papers.label like :letters or papers.authors like :letters"
        " or papers.abstract_text like :letters) limit :found"
    ), {
        "word": f'"{word}"',
        "rows": LITERAL_ROWS,
        "letters": f"%{word}%",
        "found": MIN_PAPERS,
    }


def holds_word(texts: Iterable[str | None], word: str) -> bool:
    """Some text holds the word as a whole word, as the index folds it."""
    pattern = re.compile(r"(?<![^\W_])" + re.escape(word) + r"(?![^\W_])")
    return any(pattern.search(fold(text or "")) for text in texts)


def marked_words(texts: Iterable[str | None]) -> list[str]:
    """The highlighted words of highlight() outputs, folded, in order."""
    words = []
    for text in texts:
        for piece in (text or "").split(HIGHLIGHT_START)[1:]:
            word = fold(piece.split(HIGHLIGHT_END, 1)[0])
            if re.fullmatch(r"[^\W_]+", word):
                words.append(word)
    return words


def ranked_words(word: str, surfaces: Mapping[str, int]) -> list[str]:
    """Words (word -> its stem's papers) close enough to the one typed, best first: fewest
    edits, then most papers."""
    close = [
        (edit_distance(word, surface), -papers, surface)
        for surface, papers in surfaces.items()
        if surface != word and edit_distance(word, surface) <= max_edits(word)
    ]
    return [surface for _, _, surface in sorted(close)]


def spelled_like(typed: str, word: str) -> str:
    """The suggested word in the case the reader typed (`Difusion` -> `Diffusion`)."""
    if typed.isupper() and len(typed) > 1:
        return word.upper()
    if typed[:1].isupper():
        return word[:1].upper() + word[1:]
    return word


def replaced(q: str, spans: Sequence[Span], replacements: Mapping[str, str]) -> str:
    """q with each word of `spans` whose folded form has a replacement replaced."""
    text = q
    for start, end in sorted(spans, reverse=True):
        typed = q[start:end]
        replacement = replacements.get(fold(typed))
        if replacement is not None:
            text = text[:start] + spelled_like(typed, replacement) + text[end:]
    return text


def suggested_queries(
    q: str, spans: Sequence[Span], replacements: Mapping[str, Sequence[str]]
) -> list[str]:
    """Every misspelt word replaced by its best match; then the first one's next matches."""
    if not replacements:
        return []
    best = {word: found[0] for word, found in replacements.items()}
    queries = [replaced(q, spans, best)]
    first = next(fold(q[s:e]) for s, e in spans if fold(q[s:e]) in replacements)
    for other in replacements[first][1:]:
        queries.append(replaced(q, spans, {**best, first: other}))
    return list(dict.fromkeys(queries))[:SUGGESTIONS]
