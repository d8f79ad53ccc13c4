"""The /search query syntax (loader/web/search_syntax.py), run against a real FTS5 table with
the catalog's tokenizer and columns: any text is either a valid MATCH or a QueryError, and
what a query finds is what the syntax says."""

import sqlite3

import pytest
from hypothesis import given
from hypothesis import strategies as st

from loader.build.schema import FTS_COLUMNS, FTS_TOKENIZER
from loader.web.search_syntax import MAX_WORDS, QueryError, parse_query

# words porter leaves as they are, so a word's papers are those that hold it as written
WORDS = ("graph", "tree", "cat", "dog", "sun", "bird")
FIELDS = {"title": 0, "author": 1, "abstract": 2}


def documents():
    """Every combination of a few words in three columns: each query has papers to find and
    papers to leave out."""
    rows = []
    for number in range(300):
        columns = []
        for column in range(3):
            chosen = [
                word
                for index, word in enumerate(WORDS)
                if (number * 7 + column * 13 + index * 5) % 11 < 4
            ]
            columns.append(" ".join(chosen if number % 2 else reversed(chosen)))
        rows.append(columns)
    return rows


DOCUMENTS = documents()


@pytest.fixture(scope="module")
def index():
    connection = sqlite3.connect(":memory:")
    columns = ", ".join(FTS_COLUMNS)
    connection.execute(
        f"create virtual table papers_fts using fts5({columns}, tokenize='{FTS_TOKENIZER}')"
    )
    connection.executemany(
        f"insert into papers_fts (rowid, {columns}) values (?, ?, ?, ?)",
        [(rowid, *row) for rowid, row in enumerate(DOCUMENTS, 1)],
    )
    yield connection
    connection.close()


def found(index, q):
    expression = parse_query(q).expression
    if expression is None:
        return set(range(1, len(DOCUMENTS) + 1))
    return {
        row[0]
        for row in index.execute(
            "select rowid from papers_fts where papers_fts match ?", [expression]
        )
    }


# --- any text is a valid MATCH or a QueryError ------------------------------------------------

SYNTAX_PIECES = st.sampled_from(
    ['"', "-", "*", ":", "OR", "NOT", "AND", "or", "not", "title:", "author:", "abstract:",
     "Title:", "(", ")", "^", "+", "{", "}", "NEAR", "'", "\\", "é", "e\u0301", "—", "\ue000",
     "😀", "\u200b", "ǅ", "ab*", "a*", "𝔘", "0", " ", "  ", "\t", "label:", "rank", "x",
     "venue:", "Year:", "track:", "area:"]
)  # fmt: skip
QUERY_TEXT = st.one_of(
    st.text(max_size=60),
    st.lists(st.one_of(SYNTAX_PIECES, st.text(max_size=4)), max_size=14).map("".join),
)


@given(QUERY_TEXT)
def test_any_text_is_a_valid_match_or_a_query_error(index, q):
    try:
        query = parse_query(q)
    except QueryError as error:
        assert str(error)
        return
    if query.expression is not None:
        index.execute(
            "select count(*) from papers_fts where papers_fts match ?", [query.expression]
        )


# --- what a query finds -----------------------------------------------------------------------


@st.composite
def terms(draw):
    """(text as typed, the papers it finds): a word, a prefix, a phrase, a field's word."""
    kind = draw(st.sampled_from(["word", "prefix", "phrase", "field"]))
    word = draw(st.sampled_from(WORDS))
    if kind == "word":
        return word, {
            i for i, row in enumerate(DOCUMENTS, 1) if any(word in c.split() for c in row)
        }
    if kind == "prefix":
        start = word[: draw(st.integers(2, len(word)))]
        return start + "*", {
            i
            for i, row in enumerate(DOCUMENTS, 1)
            if any(w.startswith(start) for c in row for w in c.split())
        }
    if kind == "phrase":
        second = draw(st.sampled_from(WORDS))
        return f'"{word} {second}"', {
            i
            for i, row in enumerate(DOCUMENTS, 1)
            if any(f" {word} {second} " in f" {c} " for c in row)
        }
    field = draw(st.sampled_from(sorted(FIELDS)))
    return f"{field}:{word}", {
        i for i, row in enumerate(DOCUMENTS, 1) if word in row[FIELDS[field]].split()
    }


@st.composite
def queries(draw):
    """A query of OR groups and exclusions, and the papers the syntax says it finds."""
    everything = set(range(1, len(DOCUMENTS) + 1))
    expected = set(everything)
    parts = []
    for _ in range(draw(st.integers(1, 3))):
        group = draw(st.lists(terms(), min_size=1, max_size=3))
        parts.append(" OR ".join(text for text, _ in group))
        expected &= set().union(*(papers for _, papers in group))
    for _ in range(draw(st.integers(0, 2))):
        text, papers = draw(terms())
        parts.append(draw(st.sampled_from(["-", "NOT "])) + text)
        expected -= papers
    order = draw(st.permutations(range(len(parts))))
    # exclusions may come first; groups keep their words together
    return " ".join(parts[i] for i in order), expected


@given(queries())
def test_a_query_finds_what_the_syntax_says(index, case):
    q, expected = case
    assert found(index, q) == expected, parse_query(q).expression


def test_operators_and_words(index):
    graph, tree = found(index, "graph"), found(index, "tree")
    assert found(index, "graph OR tree") == graph | tree
    assert found(index, "graph -tree") == found(index, "graph NOT tree") == graph - tree
    assert found(index, "graph AND tree") == found(index, "graph tree") == graph & tree
    # lower case: words, which no document holds
    assert found(index, "graph or tree") == found(index, "graph not tree") == set()
    assert found(index, "-OR graph") == graph
    assert found(index, "TITLE:graph") == found(index, "title:graph")
    # a star inside quotes is a character (no word), after them a prefix of the last word
    assert found(index, '"graph tre*"') == found(index, '"graph tre"') == set()
    assert found(index, '"graph tre"*') == found(index, '"graph tree"')
    # other characters are parts of words: here, separators
    assert found(index, "graph:tree") == found(index, '"graph tree"')
    assert found(index, "(graph)") == graph


def test_the_parts_of_a_query():
    query = parse_query('title:"graph tree" OR dog* -cat sun')
    assert [[(t.field, t.text, t.phrase, t.prefix) for t in g] for g in query.groups] == [
        [("title", "graph tree", True, False), (None, "dog", False, True)],
        [(None, "sun", False, False)],
    ]
    assert [t.text for t in query.excluded] == ["cat"]
    assert query.expression == '((label : "graph tree" OR "dog"*) AND "sun") NOT "cat"'
    assert not query.plain and parse_query('graph "tree dog"').plain
    # the words a suggestion may replace: not excluded ones, not prefixes
    q = "self-supervsed -graph diff* abstract:modle"
    assert [q[a:b] for a, b in parse_query(q).words_to_find()] == ["self", "supervsed", "modle"]


@pytest.mark.parametrize(
    "q,message",
    [
        ("-graph", "not only words to leave out"),
        ("NOT graph -tree", "not only words to leave out"),
        ("graph OR", "OR needs a word on each side"),
        ("OR graph", "OR needs a word on each side"),
        ("graph OR OR tree", "OR needs a word on each side"),
        ("graph NOT", "NOT needs a word after it"),
        ("graph OR -tree", "OR joins words to find"),
        ("NOT graph OR tree", "OR joins words to find"),
        ("AND graph", "AND needs a word on each side"),
        ("g*", "at least 2 letters before the *"),
        ('"graph t"*', "at least 2 letters before the *"),
        ("title: graph", "title: needs a word"),
        (" ".join(["graph"] * (MAX_WORDS + 1)), f"at most {MAX_WORDS} words"),
        ('"' + " ".join(["graph"] * (MAX_WORDS + 1)) + '"', f"at most {MAX_WORDS} words"),
    ],
)
def test_queries_that_cannot_be_searched_say_why(q, message):
    with pytest.raises(QueryError, match=message.replace("*", r"\*")):
        parse_query(q)


def test_an_empty_query_searches_everything_and_one_with_no_word_is_refused():
    assert parse_query("").expression is None and parse_query("   ").expression is None
    for q in ('"', '""', "-", "—", "- —", "title:—", ":", "\U0001f916", "(", "'"):
        with pytest.raises(QueryError, match="holds no word to search for"):
            parse_query(q)
    assert parse_query(" ".join(["graph"] * MAX_WORDS)).expression is not None


def test_lower_case_operators_between_words_get_a_note():
    assert parse_query("graph or spectral").notes == (
        "Searching for the word or: write OR for the operator.",
    )
    assert parse_query("graph not neural or tree").notes == (
        "Searching for the words or and not: write OR / NOT for the operators.",
    )
    # not between words, in a phrase, or the operators themselves: nothing to say
    for q in ("or graph", "graph not", '"graph or tree"', "graph OR tree", "graph NOT tree"):
        assert parse_query(q).notes == (), q


def test_filter_words_are_filters_not_words():
    query = parse_query('graph venue:ICLR YEAR:2018 track:"Datasets and Benchmarks" status:Oral')
    assert query.expression == '"graph"'
    assert [(f.name, f.value) for f in query.filters] == [
        ("venue", "ICLR"),
        ("year", "2018"),
        ("track", "Datasets and Benchmarks"),
        ("status", "Oral"),
    ]
    alone = parse_query("venue:ICLR")
    assert alone.expression is None and alone.filters[0].value == "ICLR"
    for q, message in (("venue: ICLR", "needs a value"), ("graph -venue:ICLR", "is a filter")):
        with pytest.raises(QueryError, match=message):
            parse_query(q)
    # other words with a colon are words, as before (area: is not a filter word)
    assert parse_query("area:vision").expression == '"area:vision"'


def test_words_to_check_include_phrases_and_excluded_words():
    q = 'graph -nueral "reinforcment learning" diff* title:modle'
    spans = parse_query(q).words_to_check()
    assert [q[a:b] for a, b in spans] == ["graph", "nueral", "reinforcment", "learning", "modle"]
