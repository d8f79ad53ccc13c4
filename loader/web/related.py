"""Related papers for the paper page: the answer of the `related_papers` canned query
(metadata.yml), read the same way but without its per-request recursive SQL.

The canned query splits the title and abstract into words one letter at a time in a recursive
CTE and counts each word's papers with a capped full-text match, most of its time the same
counts again and again. Here Python splits the words, and each word's count is kept for the
life of the worker (the catalog it serves never changes).

The canned query then ranks the papers matching any of the ten words by bm25: most of a paper
page's time, scoring every paper that shares one of the words. FTS5's bm25 is a sum over the
query's phrases, each term depending on the phrase and the paper alone (its IDF counts the
phrase's papers, its frequency the phrase's occurrences in the paper, the length is the
paper's), added up in the phrases' order from 0.0, and a paper without the phrase adds 0.0.
So each word's bm25 terms, from a MATCH of that word alone, are kept like its count
(WordScores), and a page adds up its ten words' terms in the same order: the same doubles as
the canned query's bm25, then the same order (ties by rowid, as SQLite's sort keeps the
index's order) and SQLite's own round(). Reading a word's terms costs more than its share of
the OR query, so a worker that finds the OR query cheaper on its first pages (a catalog too
large for its budget) goes back to it for pages with a word not kept. Same words,
same weights, same scores, same order either way: the page shows what the canned query gives
an SQL user (tests/test_related.py).
"""

import functools
import heapq
import re
import sqlite3
import threading
import time
import weakref
from array import array
from collections import OrderedDict
from collections.abc import Iterable, Mapping
from typing import TYPE_CHECKING, Any

from datasette.database import QueryInterrupted

from loader.web.time_limit import within_time_limit

if TYPE_CHECKING:
    from datasette.database import Database

# as the canned query: the title twice, at most this many characters read, words of 3+ letters
MAX_BODY_CHARACTERS = 20_000
MIN_WORD_LENGTH = 3
# words in fewer papers say nothing shared; in more, nothing distinctive (the count stops here)
MIN_DOCUMENTS = 2
MAX_DOCUMENTS = 1000
WORDS_SEARCHED = 10
SHOWN = 20
# the counts kept per served database; cleared when full, so they stay small
MAX_COUNTS_KEPT = 200_000
# the words' bm25 terms kept per served database (each under MAX_DOCUMENTS papers, 16 bytes a
# paper), least recently used out first
SCORES_KEPT_BYTES = 32 * 1024 * 1024
# bytes a kept word costs besides its arrays: the key, the tuple, the dict slot
SCORES_ENTRY_OVERHEAD = 300
# Reading a word's terms costs more a paper than its share of the OR query does (about twice,
# more on a large catalog), so keeping them pays only where pages find enough of their words
# kept, which the catalog's vocabulary and size decide. Each worker measures both on its own
# pages, once: pages TRIAL_PAGES[0]..[1] add up terms (from the first page on they fill), pages
# [1]..[2] rank by the OR query; from then on the cheaper of the two (CPU time a page), and
# added-up terms whenever every word's are kept.
TRIAL_PAGES = (100, 250, 350)
# added-up terms get cheaper as more are kept, the OR query does not: it must win clearly
ADDING_MARGIN = 1.5

# a word: ASCII letters and digits, or any character beyond ASCII (the canned query's glob
# '[a-z0-9]' or unicode() > 127), ended by any other character within the characters read
WORD_CHARACTER = "a-z0-9\u0080-\U0010ffff"
WORD = re.compile(f"[{WORD_CHARACTER}]+(?=[^{WORD_CHARACTER}])")
# SQLite's lower() changes ASCII letters only
ASCII_LOWER = str.maketrans("ABCDEFGHIJKLMNOPQRSTUVWXYZ", "abcdefghijklmnopqrstuvwxyz")
# titles and abstracts only: a shared author name is not a shared topic
COLUMNS = "{label abstract_text}"

PAPER_SQL = "select rowid, title, abstract_text from papers where id = :id"
PAPERS_SQL = "select max(rowid) from papers"
DOCUMENTS_SQL = f"""
select count(*) from (
  select 1 from papers_fts where papers_fts match :expression limit {MAX_DOCUMENTS}
)
"""
# the canned query's ranking: the papers matching any of the words, best SHOWN + 1
RANKED_SQL = f"""
select rowid, bm25(papers_fts, 10.0, 4.0, 1.0) as score
from papers_fts
where papers_fts match :expression
order by score
limit {SHOWN + 1}
"""
# each paper matching the word alone, with its bm25 term (the function's value is minus the sum)
WORD_SCORES_SQL = """
select rowid, -bm25(papers_fts, 10.0, 4.0, 1.0)
from papers_fts
where papers_fts match :expression
"""


@functools.cache
def related_rows_sql(count: int) -> str:
    """The rows of `count` ranked papers (place, rowid, bm25 sum), rounded by SQLite's round()
    as the canned query rounds its scores."""
    values = ", ".join(["(?, ?, ?)"] * count)
    return f"""
with ranked(place, paper, total) as (values {values})
select papers.id, papers.label, papers.track, papers.authors, round(ranked.total, 3) as score
from ranked
join papers on papers.rowid = ranked.paper
order by ranked.place
"""


_counts: "weakref.WeakKeyDictionary[Database, dict[str, int]]" = weakref.WeakKeyDictionary()


class WordScores:
    """Each word's papers with their bm25 term, kept within max_bytes, least recently used out
    first (a catalog's whole vocabulary would not fit: its common words come back most). The
    SQL threads of a database share it: a lock keeps the order and the size together."""

    def __init__(self, max_bytes: int = SCORES_KEPT_BYTES) -> None:
        self.max_bytes = max_bytes
        self.lock = threading.Lock()
        # word -> (rowids, terms, bytes)
        self.entries: OrderedDict[str, tuple[array, array, int]] = OrderedDict()
        self.size = 0
        # ranking pages by adding up terms, until the trial finds the OR query cheaper
        self.adding = True
        self.decided = False
        self.pages = 0
        # (seconds, pages) of each way during the trial
        self.spent = {True: [0.0, 0], False: [0.0, 0]}

    def adds_up(self, words: list[str]) -> bool:
        """Whether this page ranks by adding up its words' terms (reading those not kept)
        rather than by the OR query."""
        with self.lock:
            self.pages += 1
            if TRIAL_PAGES[1] < self.pages <= TRIAL_PAGES[2]:
                return False
            return self.adding or all(word in self.entries for word in words)

    def record(self, added_up: bool, seconds: float) -> None:
        """What ranking the page cost (CPU seconds): counted during the trial, which ends in
        the cheaper way."""
        with self.lock:
            if TRIAL_PAGES[0] < self.pages <= TRIAL_PAGES[2]:
                spent = self.spent[added_up]
                spent[0] += seconds
                spent[1] += 1
            if self.pages >= TRIAL_PAGES[2] and not self.decided:
                # (SQL threads run pages side by side: the count may pass the end in between)
                (adding, added), (querying, queried) = self.spent[True], self.spent[False]
                self.adding = (
                    not (added and queried) or adding / added <= ADDING_MARGIN * querying / queried
                )
                self.decided = True

    def of(self, connection: sqlite3.Connection, word: str) -> tuple[array, array]:
        """(rowids, bm25 terms) of the papers whose title or abstract has `word`."""
        with self.lock:
            found = self.entries.get(word)
            if found is not None:
                self.entries.move_to_end(word)
                return found[0], found[1]
        cursor = connection.cursor()
        cursor.row_factory = None  # plain tuples: a word may be in hundreds of papers
        expression = f"{COLUMNS} : {phrase(word)}"
        rows = cursor.execute(WORD_SCORES_SQL, {"expression": expression}).fetchall()
        rowids = array("q", [rowid for rowid, _ in rows])
        terms = array("d", [term for _, term in rows])
        cost = SCORES_ENTRY_OVERHEAD + len(word) + 16 * len(rowids)
        if cost <= self.max_bytes // 16:
            with self.lock:
                old = self.entries.pop(word, None)
                if old is not None:  # read meanwhile by another thread
                    self.size -= old[2]
                self.entries[word] = (rowids, terms, cost)
                self.size += cost
                while self.size > self.max_bytes:
                    _, (_, _, dropped) = self.entries.popitem(last=False)
                    self.size -= dropped
        return rowids, terms


_scores: "weakref.WeakKeyDictionary[Database, WordScores]" = weakref.WeakKeyDictionary()


def word_uses(title: str | None, abstract: str) -> dict[str, int]:
    """How often the paper uses each word, its title counted twice."""
    body = (f"{title} {title} " if title is not None else "") + abstract
    body = (body.translate(ASCII_LOWER) + " ")[:MAX_BODY_CHARACTERS]
    uses: dict[str, int] = {}
    for word in WORD.findall(body):
        if len(word) >= MIN_WORD_LENGTH:
            uses[word] = uses.get(word, 0) + 1
    return uses


def rarity(documents: int, papers: int) -> float:
    """ln(papers / documents) in steps, as the canned query weighs it without math functions."""
    for share, weight in ((1000, 7.0), (300, 5.8), (100, 4.6), (30, 3.5), (10, 2.3)):
        if documents * share < papers:
            return weight
    return 0.5


def distinctive_words(
    uses: Mapping[str, int], documents: Mapping[str, int], papers: int
) -> list[str]:
    """The WORDS_SEARCHED words that say most about the paper: uses x rarity, among words in
    MIN_DOCUMENTS..MAX_DOCUMENTS-1 papers; a word is left out when a shorter word it starts
    with is in exactly as many papers (the same stem: "network", "networks")."""
    # only words in as many papers can be the same stem: each word is checked against those
    # alone, not against every word of the paper
    in_as_many: dict[int, list[str]] = {}
    for word in uses:
        in_as_many.setdefault(documents[word], []).append(word)
    weighed = []
    for word, count in uses.items():
        found = documents[word]
        if not MIN_DOCUMENTS <= found < MAX_DOCUMENTS:
            continue
        if any(len(other) < len(word) and word.startswith(other) for other in in_as_many[found]):
            continue
        weighed.append((-count * rarity(found, papers), found, word))
    return [word for _, _, word in sorted(weighed)[:WORDS_SEARCHED]]


def phrase(word: str) -> str:
    # a word holds no double quote (not a word character), so quoting makes it one phrase
    return f'"{word}"'


def document_counts(
    connection: sqlite3.Connection, words: Iterable[str], kept: dict[str, int]
) -> dict[str, int]:
    """Papers whose title or abstract has each word, capped at MAX_DOCUMENTS."""
    for word in words:
        if word not in kept:
            if len(kept) >= MAX_COUNTS_KEPT:
                kept.clear()
            expression = f"{COLUMNS} : {phrase(word)}"
            kept[word] = connection.execute(DOCUMENTS_SQL, {"expression": expression}).fetchone()[0]
    return {word: kept[word] for word in words}


def ranked(
    connection: sqlite3.Connection, words: list[str], scores: WordScores
) -> list[tuple[int, float]]:
    """The SHOWN + 1 best (rowid, bm25 sum) of the papers with any of `words`, as the canned
    query's `order by score limit 21` gives them: sums added in the words' order, ties by
    rowid."""
    totals: dict[int, float] = {}
    for word in words:
        rowids, terms = scores.of(connection, word)
        get = totals.get
        for rowid, term in zip(rowids, terms):
            totals[rowid] = get(rowid, 0.0) + term
    if len(totals) > SHOWN + 1:
        least = heapq.nlargest(SHOWN + 1, totals.values())[-1]
        totals = {rowid: total for rowid, total in totals.items() if total >= least}
    best = sorted(totals.items(), key=lambda item: (-item[1], item[0]))
    return best[: SHOWN + 1]


def related_papers(
    connection: sqlite3.Connection,
    paper_id: str,
    kept: dict[str, int],
    scores: WordScores | None = None,
) -> list[dict[str, Any]]:
    """Rows (id, label, track, authors, score) of the papers most like paper_id, best first;
    [] for an unknown paper or one without a distinctive word. `kept`: the word counts kept,
    `scores`: the words' bm25 terms kept (None: none kept beyond this call)."""
    found = connection.execute(PAPER_SQL, {"id": paper_id}).fetchone()
    if found is None:
        return []
    own, title, abstract = found
    uses = word_uses(title, abstract)
    documents = document_counts(connection, uses, kept)
    (papers,) = connection.execute(PAPERS_SQL).fetchone()
    words = distinctive_words(uses, documents, papers)
    if not words:
        return []
    scores = scores or WordScores()
    adding = scores.adds_up(words)
    started = time.thread_time()
    if adding:
        best = ranked(connection, words, scores)
    else:
        expression = f"{COLUMNS} : ({' OR '.join(phrase(word) for word in words)})"
        rows = connection.execute(RANKED_SQL, {"expression": expression})
        best = [(rowid, -score) for rowid, score in rows]
    scores.record(adding, time.thread_time() - started)
    others = [(rowid, total) for rowid, total in best if rowid != own][:SHOWN]
    if not others:
        return []
    parameters = [
        value for place, (rowid, total) in enumerate(others) for value in (place, rowid, total)
    ]
    cursor = connection.execute(related_rows_sql(len(others)), parameters)
    names = [column[0] for column in cursor.description]
    return [dict(zip(names, row)) for row in cursor]


def kept_counts(db: "Database") -> dict[str, int]:
    """The word counts kept for one served database (a Datasette Database): its file never
    changes while it is served, and a test's fresh Datasette starts with none."""
    return _counts.setdefault(db, {})


def kept_scores(db: "Database") -> WordScores:
    """The words' bm25 terms kept for one served database, as kept_counts()."""
    return _scores.setdefault(db, WordScores())


def related_within(
    connection: sqlite3.Connection,
    paper_id: str,
    time_limit_ms: int | None,
    kept: dict[str, int],
    scores: WordScores | None = None,
) -> list[dict[str, Any]] | None:
    """related_papers() with all its statements together within time_limit_ms; None when they
    ran out of time (a page is still worth showing without them)."""
    try:
        with within_time_limit(connection, time_limit_ms):
            return related_papers(connection, paper_id, kept, scores)
    except QueryInterrupted:
        return None
