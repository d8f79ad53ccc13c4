"""Abstracts as readable HTML (LaTeX math as MathML, emphasis, safe links) and search snippets
with highlighted matches; every other character escaped, the result sanitized with nh3."""

import functools
import json
import re
from urllib.parse import urlsplit

import nh3
from datasette import hookimpl
from datasette.utils import tilde_encode
from latex2mathml.converter import convert as latex_to_mathml
from markupsafe import Markup, escape

# the `search` canned query wraps each match in these private-use characters
MATCH_START = "\ue000"
MATCH_END = "\ue001"

DISPLAY_MATH = re.compile(r"(?<!\\)\$\$(?P<tex>[^$]{1,2000}?)(?<!\\)\$\$")
INLINE_MATH = re.compile(r"(?<!\\)\$(?!\s)(?P<tex>[^$\n]{1,400}?)(?<![\s\\])\$")
MACRO = re.compile(r"\\(?P<name>[a-zA-Z]+)\*?")
ESCAPED_CHARACTER = re.compile(r"\\(?P<char>[%&$#_{}])")
MARKDOWN_STRONG = re.compile(r"\*\*(?P<inner>\S(?:[^\n]*?\S)?)\*\*")
MARKDOWN_EMPHASIS = re.compile(r"(?<![\w*])\*(?P<inner>[^*\s](?:[^*\n]*?[^*\s])?)\*(?![\w*])")
MARKDOWN_CODE = re.compile(r"`(?P<inner>[^`\n]+)`")
MARKDOWN_LINK = re.compile(r"\[(?P<inner>[^\[\]\n]+)\]\((?P<url>[^()\s]+)\)")
BARE_URL = re.compile(r"https?://[^\s<>\"'{}|\\^`]*[^\s<>\"'{}|\\^`.,;:!?)\]]")
# where a piece of markup may begin: everything between two of these is plain text
SPECIAL = re.compile(r"[\\*`\[]|https?://")

EMPHASIS_MACROS = {"emph": "em", "textit": "em", "textsl": "em", "textbf": "strong"}
STYLE_MACROS = {"textsc": "smallcaps", "texttt": "tt", "underline": "underline"}
PLAIN_MACROS = {"textrm", "textnormal", "textup", "text", "mbox"}
SYMBOL_MACROS = {"ldots": "…", "dots": "…", "textendash": "–", "textemdash": "—", "LaTeX": "LaTeX"}
PAPER_ID = re.compile(r"[0-9a-f]{16}")
PAPER_ID_COLUMNS = ("id", "paper_id")
PAPER_LABEL_COLUMNS = ("label", "title")
AUTHOR_NAME_COLUMNS = ("name", "author", "author_name")
PAPER_LINK_COLUMNS = frozenset(PAPER_LABEL_COLUMNS + PAPER_ID_COLUMNS)
AUTHOR_LINK_COLUMNS = frozenset(AUTHOR_NAME_COLUMNS + ("author_id",))
LIST_COLUMNS = ("authors", "affiliations")
# long plain-text columns: clamped in the table like the abstract
PLAIN_TEXT_COLUMNS = ("abstract_text", "abstract_plain")
# latex2mathml copies \text{} arguments verbatim, so math goes in with \lt/\gt for angle brackets
MATH_TEXT = re.compile(r"(<mtext[^>]*>)(.*?)(</mtext>)", re.DOTALL)
ANGLE_MACRO = re.compile(r"\\([lg])t(?:&#x000A0;| )?")
MAX_ARGUMENT = 2000
MAX_DEPTH = 4

MATH_TAGS = {
    "math", "mrow", "mi", "mn", "mo", "ms", "mtext", "mspace", "msub", "msup", "msubsup",
    "mfrac", "msqrt", "mroot", "mover", "munder", "munderover", "mtable", "mtr", "mtd",
    "mstyle", "menclose", "mpadded", "mphantom", "none",
}  # fmt: skip
MATH_ATTRIBUTES = {
    "display", "mathvariant", "stretchy", "fence", "separator", "accent", "accentunder",
    "lspace", "rspace", "width", "height", "depth", "voffset", "displaystyle", "scriptlevel",
    "mathsize", "minsize", "maxsize", "movablelimits", "largeop", "form", "linethickness",
    "notation", "columnalign", "columnspacing", "rowspacing", "columnlines", "rowlines",
}  # fmt: skip
TEXT_TAGS = {"em", "strong", "code", "a", "span", "mark"}
ALLOWED_ATTRIBUTES = {
    **{tag: MATH_ATTRIBUTES for tag in MATH_TAGS},
    "math": MATH_ATTRIBUTES | {"xmlns"},
    "a": {"href"},
    "span": {"class", "title"},
    "code": {"class", "title"},
}
SAFE_SCHEMES = {"http", "https"}


def sanitize(html):
    """The last word on what reaches the page: only the tags the renderer itself writes."""
    return Markup(
        nh3.clean(
            html,
            tags=TEXT_TAGS | MATH_TAGS,
            attributes=ALLOWED_ATTRIBUTES,
            url_schemes=SAFE_SCHEMES,
            link_rel="nofollow noopener noreferrer",
            strip_comments=True,
        )
    )


def safe_url(text):
    """An absolute http(s) URL without spaces or control characters, else None."""
    text = text.strip()
    if not text or any(c.isspace() or ord(c) < 32 or ord(c) == 127 for c in text):
        return None
    try:
        parts = urlsplit(text)
    except ValueError:
        return None
    if parts.scheme.lower() not in SAFE_SCHEMES or not parts.netloc:
        return None
    return text


def render_link(url, label):
    target = safe_url(url)
    if target is None:
        return escape(label if label is not None else url)
    return Markup('<a href="{}">{}</a>').format(target, label if label is not None else url)


def render_math(tex, display=False):
    """MathML from latex2mathml; TeX it cannot parse is shown as code, never as HTML."""
    delimiter = "$$" if display else "$"
    # \text{} passes its argument through unescaped: angle brackets become math operators first
    source = tex.replace("<", r"\lt ").replace(">", r"\gt ")
    try:
        mathml = latex_to_mathml(source, display="block" if display else "inline")
    except Exception:  # noqa: BLE001 - latex2mathml raises many kinds on malformed TeX
        return Markup('<code class="tex" title="TeX">{}</code>').format(delimiter + tex + delimiter)
    return sanitize(restore_angle_brackets(mathml))


def restore_angle_brackets(mathml):
    """Inside <mtext>, the \\lt and \\gt put in for < and > read as the characters again."""

    def restore(match):
        text = ANGLE_MACRO.sub(lambda m: "&lt;" if m.group(1) == "l" else "&gt;", match.group(2))
        return match.group(1) + text + match.group(3)

    return MATH_TEXT.sub(restore, mathml)


def find_argument(text, start):
    """The balanced {...} group at text[start], as (content, end), or None."""
    if start >= len(text) or text[start] != "{":
        return None
    depth = 0
    for index in range(start, min(len(text), start + MAX_ARGUMENT)):
        char = text[index]
        if char == "\\":
            continue
        if char == "{" and text[index - 1] != "\\":
            depth += 1
        elif char == "}" and text[index - 1] != "\\":
            depth -= 1
            if depth == 0:
                return text[start + 1 : index], index + 1
    return None


def render_macro(text, match, depth):
    """One \\macro (and its argument) at match: (Markup, end)."""
    name, end = match.group("name"), match.end()
    argument = find_argument(text, end)
    content, after = argument if argument else (None, end)
    if name == "href" and argument:
        second = find_argument(text, after)
        if second:
            return render_link(content, render_text(second[0], depth + 1)), second[1]
    if name == "url" and argument:
        return render_link(content, None), after
    if content is not None and content.strip():
        inner = render_text(content, depth + 1)
        if name in EMPHASIS_MACROS:
            tag = EMPHASIS_MACROS[name]
            return Markup(f"<{tag}>{{}}</{tag}>").format(inner), after
        if name in STYLE_MACROS:
            return Markup('<span class="{}">{}</span>').format(STYLE_MACROS[name], inner), after
        if name in PLAIN_MACROS:
            return inner, after
        # an unknown macro with text: keep the text, name the macro on hover
        return Markup('<span class="tex-macro" title="{}">{}</span>').format(
            "\\" + name, inner
        ), after
    if name in SYMBOL_MACROS:
        return escape(SYMBOL_MACROS[name]), after
    return Markup('<code class="tex-macro">{}</code>').format("\\" + name), after


def render_text(text, depth=0):
    """Text outside math: LaTeX text macros and Markdown emphasis, everything else escaped."""
    if depth > MAX_DEPTH:
        return escape(text)
    parts, position = [], 0
    while position < len(text):
        found = SPECIAL.search(text, position)
        if not found:
            break
        start = found.start()
        rendered = render_markup(text, start, depth)
        if rendered is None:
            parts.append(escape(text[position : start + 1]))
            position = start + 1
            continue
        markup, end = rendered
        parts.append(escape(text[position:start]))
        parts.append(markup)
        position = end
    parts.append(escape(text[position:]))
    return Markup("").join(parts)


def render_markup(text, start, depth):
    """The markup beginning at text[start] as (Markup, end), or None when it is plain text."""
    if text.startswith("\\", start):
        escaped = ESCAPED_CHARACTER.match(text, start)
        if escaped:
            return escape(escaped.group("char")), escaped.end()
        macro = MACRO.match(text, start)
        return render_macro(text, macro, depth) if macro else None
    for pattern, tag in ((MARKDOWN_STRONG, "strong"), (MARKDOWN_EMPHASIS, "em")):
        match = pattern.match(text, start)
        if match:
            inner = render_text(match.group("inner"), depth + 1)
            return Markup(f"<{tag}>{{}}</{tag}>").format(inner), match.end()
    match = MARKDOWN_CODE.match(text, start)
    if match:
        return Markup("<code>{}</code>").format(match.group("inner")), match.end()
    match = MARKDOWN_LINK.match(text, start)
    if match:
        label = render_text(match.group("inner"), depth + 1)
        return render_link(match.group("url"), label), match.end()
    match = BARE_URL.match(text, start)
    if match:
        return render_link(match.group(0), None), match.end()
    return None


def render_abstract(text):
    """A raw abstract as sanitized HTML: $...$ and $$...$$ as MathML, markup as emphasis."""
    if text is None:
        return Markup("")
    parts, position = [], 0
    while position < len(text):
        display = DISPLAY_MATH.search(text, position)
        inline = INLINE_MATH.search(text, position)
        candidates = [m for m in (display, inline) if m]
        if not candidates:
            break
        match = min(candidates, key=lambda m: (m.start(), m is not display))
        parts.append(render_text(text[position : match.start()]))
        parts.append(render_math(match.group("tex"), display=match is display))
        position = match.end()
    parts.append(render_text(text[position:]))
    return sanitize(str(Markup("").join(parts)))


def render_snippet(text):
    """Escape first, then turn the match sentinels into <mark>; stray sentinels are dropped."""
    if text is None:
        return Markup("")
    html = str(escape(text))
    pieces, open_mark = [], False
    for piece in re.split(f"([{MATCH_START}{MATCH_END}])", html):
        if piece == MATCH_START and not open_mark:
            pieces.append("<mark>")
            open_mark = True
        elif piece == MATCH_END and open_mark:
            pieces.append("</mark>")
            open_mark = False
        elif piece not in (MATCH_START, MATCH_END):
            pieces.append(piece)
    if open_mark:
        pieces.append("</mark>")
    return Markup("".join(pieces))


def row_value(row, column):
    try:
        return row[column]
    except (KeyError, IndexError):
        return None


def paper_id_of(row):
    for column in PAPER_ID_COLUMNS:
        value = row_value(row, column)
        if isinstance(value, str) and PAPER_ID.fullmatch(value):
            return value
    return None


def render_names(value):
    """A JSON list of names as "A, B, C"; anything else is left to Datasette."""
    try:
        names = json.loads(value)
    except ValueError:
        return None
    if not isinstance(names, list) or not all(isinstance(name, str) for name in names):
        return None
    if not names:
        # Datasette shows its raw value for an empty rendering: "[]"
        return Markup('<span class="empty-list"></span>')
    return escape(", ".join(names))


def link(url, text):
    return Markup(f'<a href="{escape(url)}">{escape(text)}</a>')


@functools.lru_cache(maxsize=64)
def table_url(datasette, database, table):
    # fixed for a running instance; building it costs more than the rest of a cell
    return datasette.urls.table(database, table)


def row_url(datasette, database, table, key):
    return f"{table_url(datasette, database, table)}/{tilde_encode(str(key))}"


def query_result_link(row, value, column, database, datasette):
    """In canned-query results, paper ids and labels link to the paper page, author names
    (next to an author_id) to the author page. Other columns return at once: this runs for
    every cell of a result (600 on a search page)."""
    if column in PAPER_LINK_COLUMNS:
        paper = paper_id_of(row)
        if paper and (column in PAPER_LABEL_COLUMNS or value == paper):
            return link(row_url(datasette, database, "papers", paper), value)
    if column in AUTHOR_LINK_COLUMNS:
        author = row_value(row, "author_id")
        if isinstance(author, int):
            return link(row_url(datasette, database, "authors", author), value)
    return None


@hookimpl
def prepare_jinja2_environment(env):
    env.filters["render_abstract"] = render_abstract
    env.filters["render_snippet"] = render_snippet


@hookimpl
def render_cell(row, value, column, table, database, datasette):
    if database != "catalog" or value is None:
        return None
    if column == "abstract" and table in ("papers", None) and isinstance(value, str):
        return Markup('<div class="abstract">{}</div>').format(render_abstract(value))
    if column in PLAIN_TEXT_COLUMNS and table == "papers" and isinstance(value, str):
        return Markup('<div class="abstract-text">{}</div>').format(value)
    if column in LIST_COLUMNS and table in ("papers", None) and isinstance(value, str):
        return render_names(value)
    if table is not None:
        return None
    if column == "snippet" and isinstance(value, str):
        return render_snippet(value)
    return query_result_link(row, value, column, database, datasette)
