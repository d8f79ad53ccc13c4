"""The /search query syntax: what a reader types -> an FTS5 MATCH expression.

    "a phrase"    the words in this order
    a OR b        either (upper case; `or` is a word); binds closer than the space between
                  words: `graph neural OR spectral` is graph AND (neural OR spectral)
    -a, NOT a     no paper whose title, authors or abstract holds a (upper case NOT)
    AND           the same as a space
    pre*          words starting with pre (at least 2 letters before the *)
    title:a, author:a, abstract:a   a in that field only (a word, "a phrase" or pre*)
    venue:a, year:a, status:a, track:a   a filter, as the facets set it (not a word to find)

Every other character is part of a word, so no user text ever reaches FTS5 as its syntax:
each word and phrase is written as one FTS5 string in double quotes, and only this module
writes operators, column names, parentheses and stars. A query FTS5 could not answer sensibly
(only exclusions, a dangling operator, a one-letter prefix, too many words) is a QueryError,
which /search answers with 400 and its message, as is a query with no word to search for (an
emoji, a lone quote). How the query was read where a reader may have meant otherwise (a
lower-case `or` between words, a filter word) is said in Query.notes. Pure: no I/O, no SQLite.
"""

import re
import unicodedata
from dataclasses import dataclass

# a longer query is refused: each word reads its own list of papers in the index
MAX_WORDS = 64
MIN_PREFIX_LETTERS = 2
# the name a reader types -> the papers_fts column (loader/build/schema.py FTS_COLUMNS)
FIELDS = {"title": "label", "author": "authors", "abstract": "abstract_text"}
OPERATORS = ("OR", "NOT", "AND")
FIELD_PREFIX = re.compile(r"(title|author|abstract):", re.IGNORECASE)
# filter words: the facet a reader names -> the /search parameter it sets
FILTER_PREFIX = re.compile(r"(venue|year|status|track):", re.IGNORECASE)
# lower-case words between words that a reader may have meant as operators
LOWER_OPERATORS = ("or", "not")


class QueryError(ValueError):
    """A query that cannot be searched as typed; the message says why and what to write."""


@dataclass(frozen=True)
class Term:
    """A word or a "phrase" as typed, with the field it is limited to and its place in q."""

    text: str  # without quotes, field, dash or star
    start: int  # text's span in the query
    end: int
    field: str | None = None  # a key of FIELDS
    phrase: bool = False
    prefix: bool = False

    def fts(self) -> str:
        """This term as FTS5 syntax: always one quoted string, so its text is never syntax."""
        string = '"' + self.text.replace('"', '""') + '"'
        if self.prefix:
            string += "*"
        if self.field is not None:
            string = f"{FIELDS[self.field]} : {string}"
        return string


@dataclass(frozen=True)
class FilterWord:
    """`venue:ICLR` as typed: the filter it names, its value and its span in q."""

    name: str  # venue, year, status or track
    value: str
    start: int
    end: int


@dataclass(frozen=True)
class Query:
    """Papers that match every group (a group: any one of its terms) and no excluded term,
    and the filters the query names."""

    groups: tuple[tuple[Term, ...], ...] = ()
    excluded: tuple[Term, ...] = ()
    filters: tuple[FilterWord, ...] = ()
    # one line each on how a query was read where a reader may have meant otherwise
    notes: tuple[str, ...] = ()

    @property
    def expression(self) -> str | None:
        """The FTS5 MATCH expression, None when there is nothing to search for."""
        if not self.groups:
            return None
        alternatives = [
            "(" + " OR ".join(t.fts() for t in g) + ")" for g in self.groups if len(g) > 1
        ]
        # terms side by side, FTS5's implicit AND, which also ignores a string the tokenizer
        # finds no word in, where an explicit AND would match nothing
        single = " ".join(group[0].fts() for group in self.groups if len(group) == 1)
        positive = " AND ".join(alternatives + ([single] if single else []))
        if not self.excluded:
            return positive
        return f"({positive})" + "".join(f" NOT {term.fts()}" for term in self.excluded)

    @property
    def plain(self) -> bool:
        """Only words and phrases that must all match: no operator, field or prefix."""
        return not self.excluded and all(
            len(group) == 1 and group[0].field is None and not group[0].prefix
            for group in self.groups
        )

    def words_to_find(self) -> list[tuple[int, int]]:
        """Spans in q of the words that must or may match (not excluded, not prefixes)."""
        spans = []
        for group in self.groups:
            for term in group:
                if not term.prefix:
                    spans += [(term.start + a, term.start + b) for a, b in word_spans(term.text)]
        return sorted(spans)

    def words_to_check(self) -> list[tuple[int, int]]:
        """Spans in q of every word a spelling suggestion may replace: words to find, in
        phrases or not, and words to leave out (a typo there excludes nothing); not
        prefixes."""
        spans = self.words_to_find()
        for term in self.excluded:
            if not term.prefix:
                spans += [(term.start + a, term.start + b) for a, b in word_spans(term.text)]
        return sorted(spans)


def is_word_character(character: str) -> bool:
    """What FTS5's unicode61 tokenizer keeps in a word: letters, digits, private-use and
    unassigned code points; everything else separates words. (SQLite's Unicode tables are
    older than Python's, so a few rare characters differ; a string FTS5 finds no word in is
    ignored by the implicit AND, see Query.expression.)"""
    category = unicodedata.category(character)
    return category[0] in "LN" or category in ("Co", "Cn")


def word_spans(text: str) -> list[tuple[int, int]]:
    """(start, end) of each word of text, as the index's tokenizer splits it."""
    spans = []
    start = None
    for index, character in enumerate(text):
        if is_word_character(character):
            if start is None:
                start = index
        elif start is not None:
            spans.append((start, index))
            start = None
    if start is not None:
        spans.append((start, len(text)))
    return spans


@dataclass(frozen=True)
class Lexeme:
    """An operator (`operator` set), a filter word or a term, excluded when typed with a
    leading dash."""

    operator: str | None = None
    term: Term | None = None
    dash: bool = False
    filter: FilterWord | None = None


def lexemes(q: str) -> list[Lexeme]:
    """q split into operators and terms; whitespace separates them, and a quote starts or
    ends a phrase (an unclosed one runs to the end). Control characters are spaces: SQLite
    would end the expression's string at a NUL."""
    q = "".join(" " if unicodedata.category(c) == "Cc" else c for c in q)
    found: list[Lexeme] = []
    position, length = 0, len(q)
    while position < length:
        if q[position].isspace():
            position += 1
            continue
        dash = q[position] == "-" and position + 1 < length and not q[position + 1].isspace()
        if dash:
            position += 1
        filtered = FILTER_PREFIX.match(q, position)
        if filtered:
            named_filter = filter_word(q, filtered, dash)
            found.append(Lexeme(filter=named_filter))
            position = named_filter.end
            continue
        field = None
        named = FIELD_PREFIX.match(q, position)
        if named:
            field = named.group(1).lower()
            position = named.end()
            if position == length or q[position].isspace():
                raise QueryError(
                    f'{named.group(0)} needs a word or a "phrase" right after it, as in '
                    f"{field}:diffusion."
                )
        if q[position] == '"':
            close = q.find('"', position + 1)
            end = length if close == -1 else close
            text_start, position = position + 1, min(end + 1, length)
            prefix = False
            while position < length and q[position] == "*":
                prefix, position = True, position + 1
            term = Term(q[text_start:end], text_start, end, field, phrase=True, prefix=prefix)
            found.append(Lexeme(term=term, dash=dash))
            continue
        end = position
        while end < length and not q[end].isspace() and q[end] != '"':
            end += 1
        word = q[position:end]
        text_end = position + len(word.rstrip("*"))
        if word in OPERATORS and not dash and field is None:
            found.append(Lexeme(operator=word))
        else:
            term = Term(q[position:text_end], position, text_end, field, prefix=text_end < end)
            found.append(Lexeme(term=term, dash=dash))
        position = end
    return found


def filter_word(q: str, named: re.Match[str], dash: bool) -> FilterWord:
    """`venue:ICLR` or `track:"Datasets and Benchmarks"` at named's place in q."""
    name, position, length = named.group(1).lower(), named.end(), len(q)
    if dash:
        raise QueryError(
            f"{named.group(0)} is a filter: it keeps papers, it cannot leave them out"
            f" (write {name}:value without the dash)."
        )
    if position < length and q[position] == '"':
        close = q.find('"', position + 1)
        end = length if close == -1 else close
        value, stop = q[position + 1 : end], min(end + 1, length)
    else:
        stop = position
        while stop < length and not q[stop].isspace() and q[stop] != '"':
            stop += 1
        value = q[position:stop]
    if not value.strip():
        raise QueryError(
            f"{named.group(0)} needs a value right after it, as in {name}:"
            + {"venue": "ICLR", "year": "2023", "status": "Oral", "track": "Main"}[name]
            + "."
        )
    return FilterWord(name, value.strip(), named.start(), stop)


def check_prefix(term: Term) -> None:
    spans = word_spans(term.text)
    if not spans or spans[-1][1] - spans[-1][0] < MIN_PREFIX_LETTERS:
        shown = (f'"{term.text}"' if term.phrase else term.text) + "*"
        raise QueryError(
            f"A prefix search needs at least {MIN_PREFIX_LETTERS} letters before the *"
            f" (not {shown[:40]!r}): diffus* finds diffusion, diffuse, ..."
        )


def parse_query(q: str) -> Query:
    """The query as typed -> Query; QueryError (a ValueError) says what cannot be searched."""
    groups: list[list[Term]] = []
    excluded: list[Term] = []
    items = lexemes(q)
    words = sum(len(word_spans(item.term.text)) for item in items if item.term is not None)
    if words > MAX_WORDS:
        raise QueryError(
            f"A search may hold at most {MAX_WORDS} words (a phrase counts each of its words);"
            f" this one holds {words}."
        )
    joined = False  # the term before was followed by OR
    for index, item in enumerate(items):
        if item.operator is not None:
            check_operator(items, index)
            joined = item.operator == "OR"
            continue
        term = item.term
        if term is None:
            continue
        if term.prefix:
            check_prefix(term)
        if excludes(items, index):
            excluded.append(term)
        elif joined:
            groups[-1].append(term)
        else:
            groups.append([term])
        joined = False
    kept = tuple(tuple(t for t in group if word_spans(t.text)) for group in groups)
    query = Query(
        tuple(group for group in kept if group),
        tuple(term for term in excluded if word_spans(term.text)),
        tuple(item.filter for item in items if item.filter is not None),
    )
    if query.excluded and not query.groups:
        raise QueryError(
            "A search needs a word to find, not only words to leave out (-word, NOT word):"
            " add one, as in graph -neural."
        )
    if q.strip() and not query.groups and not query.filters:
        raise QueryError(
            f"{q.strip()[:40]!r} holds no word to search for: search with letters or digits"
            ' (a word, or a "phrase"), or leave the box empty to list every paper.'
        )
    return Query(query.groups, query.excluded, query.filters, read_notes(items))


def read_notes(items: list[Lexeme]) -> tuple[str, ...]:
    """A line for lower-case operators read as words (filter words get theirs once their
    values are looked up: loader/web/search_results.py)."""
    notes = []
    lower = [
        word
        for word in LOWER_OPERATORS
        if any(
            item.term is not None
            and item.term.text == word
            and not (item.term.phrase or item.term.prefix or item.term.field or item.dash)
            and term_at(items, index - 1) is not None
            and term_at(items, index + 1) is not None
            for index, item in enumerate(items)
        )
    ]
    if lower:
        many = len(lower) > 1
        notes.append(
            f"Searching for the word{'s' if many else ''} {' and '.join(lower)}: write"
            f" {' / '.join(word.upper() for word in lower)} for the operator{'s' if many else ''}."
        )
    return tuple(notes)


def term_at(items: list[Lexeme], index: int) -> Term | None:
    return items[index].term if 0 <= index < len(items) else None


def excludes(items: list[Lexeme], index: int) -> bool:
    """The term at index is typed with a dash or follows NOT."""
    return items[index].dash or (index > 0 and items[index - 1].operator == "NOT")


def check_operator(items: list[Lexeme], index: int) -> None:
    """An operator needs a word after it; OR and AND a word before it too; OR joins only
    words to find."""
    operator = items[index].operator
    if operator == "NOT":
        if term_at(items, index + 1) is None:
            raise QueryError("NOT needs a word after it (write not to search for the word).")
        return
    if term_at(items, index - 1) is None or term_at(items, index + 1) is None:
        raise QueryError(
            f"{operator} needs a word on each side (write {str(operator).lower()} to search"
            " for the word)."
        )
    if operator == "OR" and (excludes(items, index - 1) or excludes(items, index + 1)):
        raise QueryError("OR joins words to find, not words to leave out: write a OR b -c.")
