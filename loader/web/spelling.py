"""/search's "Did you mean": each word of a query that fewer than MIN_PAPERS papers write as
typed (it is not in search_vocabulary), replaced by a close word that at least MIN_PAPERS
papers write. The index's stemmer may still find papers for such a word (`againsts` finds
those of `against`): the suggestion is offered beside them.

Pure (statements and rules; loader/web/search_results.py runs them). Two steps a misspelt word:

1. candidates: the words of search_vocabulary (loader/build/vocabulary.py: whole words of the
   papers' markup-free search text, each in at least MIN_PAPERS papers) that start with the
   word's first letter, or with its first two swapped (`rpobability`), as long as the word
   give or take max_edits letters;
2. ranked by their Damerau-Levenshtein distance to the whole word (an insertion, deletion,
   substitution or swap of neighbours is one edit: `trasnformer` is one from
   `transformer`), at most max_edits, then by how many papers hold them.

Which words are checked (words_to_check): every word to find, in a phrase or not, and every
word to leave out (`-nueral` excludes nothing), but not prefixes, and not a LaTeX command typed
as one (`\\textbf`): markup is never replaced. Suggestions replace words in the query as
typed, so phrases, fields, operators, hyphens and the rest of the query stay as they were
(`self-supervsed -graph` -> `self-supervised -graph`).
"""

import bisect
import unicodedata
from collections.abc import Mapping, Sequence
from typing import Any

from loader.build.vocabulary import TABLE as VOCABULARY

SUGGESTIONS = 3
# misspelt words of one query replaced, and words looked up (a range of the vocabulary and a
# walk over it each: a pasted list of 64 rare words costs no more than this many)
MAX_MISSPELT = 3
MAX_LOOKED_UP = 8
# shorter words are never replaced (`of`, `rl`)
MIN_WORD = 3
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


def is_markup(q: str, span: Span) -> bool:
    """The word is typed as a LaTeX command (`\\textbf`): markup, never replaced."""
    return span[0] > 0 and q[span[0] - 1] == "\\"


def known_sql(word: str) -> tuple[str, Params]:
    """Whether at least MIN_PAPERS papers write the word as typed (one look-up by key)."""
    return f"select count(*) from {VOCABULARY} where term = :word", {"word": word}


def starts(word: str) -> list[str]:
    """What a candidate may start with for this word: its first letter (a typo anywhere
    after it: `discribe`, `wether`), or its first two letters swapped (`rpobability`)."""
    return list(dict.fromkeys([word[:1], word[1::-1]]))


def candidates_sql(word: str) -> tuple[str, Params]:
    """The vocabulary's words that could be this word misspelt, with their papers: a range
    or two of the table's primary key, as long as the word give or take max_edits letters."""
    params: Params = {
        "shortest": max(1, len(word) - max_edits(word)),
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


def next_row(
    word: str, candidate: str, rows: Sequence[list[int]], cap: int | None = None
) -> list[int]:
    """Row len(rows) of the edit-distance table of `candidate` (rows) against `word`
    (columns), from the rows before it: row[k] is the distance from candidate[:len(rows)] to
    word[:k]. Insertions, deletions, substitutions and swaps of neighbours (`modle` ->
    `model`: 1) each count one. With a cap, distances past it are cap + 1 and only the cells
    within cap of the diagonal are computed (the others are past it: each row or column
    apart is an edit)."""
    i = len(rows)
    a = candidate[i - 1]
    previous = rows[-1]
    far = len(word) + len(candidate) + 1 if cap is None else cap + 1
    low, high = (1, len(word)) if cap is None else (max(1, i - cap), min(len(word), i + cap))
    current = [far] * (len(word) + 1)
    current[0] = min(i, far)
    for j in range(low, high + 1):
        b = word[j - 1]
        cost = min(previous[j] + 1, current[j - 1] + 1, previous[j - 1] + (a != b), far)
        if i > 1 and j > 1 and a == word[j - 2] and candidate[i - 2] == b:
            cost = min(cost, rows[-2][j - 2] + 1)
        current[j] = cost
    return current


def edit_distance(word: str, other: str) -> int:
    """Insertions, deletions, substitutions and swaps of neighbours, each one edit."""
    rows = [list(range(len(word) + 1))]
    for _ in other:
        rows.append(next_row(word, other, rows))
    return rows[-1][-1]


def common_length(first: str, second: str) -> int:
    length = 0
    for a, b in zip(first, second):
        if a != b:
            break
        length += 1
    return length


def best_words(word: str, rows: Sequence[tuple[str, int]]) -> list[str]:
    """The SUGGESTIONS best candidates (rows of (word, papers) in the order of their words)
    other than the word itself: fewest edits to the whole word, at most max_edits, then most
    papers.

    The candidates are walked in order as the paths of a trie: the table's rows of the letters
    a candidate shares with the one before are kept, and once a row's smallest distance
    passes max_edits no candidate that starts with those letters can come closer (the
    smallest distance of a row never falls in the rows below), so they are all skipped at
    once."""
    bound = max_edits(word)
    terms = [term for term, _ in rows]
    table = [list(range(len(word) + 1))]
    smallest = [0]  # each row's smallest distance
    before = ""
    scored = []
    index = 0
    while index < len(rows):
        term, papers = rows[index]
        kept = min(common_length(before, term), len(table) - 1) + 1
        del table[kept:], smallest[kept:]
        before = term
        while len(table) <= len(term) and smallest[-1] <= bound:
            table.append(next_row(word, term, table, bound))
            smallest.append(min(table[-1]))
        if smallest[-1] > bound:
            # no candidate starting with these letters comes within bound
            index = bisect.bisect_left(terms, term[: len(table) - 1] + "\U0010ffff", index)
            continue
        distance = table[-1][len(word)]
        if distance <= bound and term != word:
            scored.append((distance, -papers, term))
        index += 1
    return [term for _, _, term in sorted(scored)[:SUGGESTIONS]]


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
