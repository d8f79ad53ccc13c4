"""The one reading of an abstract's or a title's markup.

A source is parsed once (`parse`) into a tuple of segments: text, math, emphasis and links.
`plain_text` (what search indexes and labels are cut from) and `render_html` (the page) are two
walks over that same tuple, so the search text and the page cannot disagree.

The libraries do the reading: markdown-it-py for Markdown (`**strong**`, `*em*`, `__strong__`,
links, code), pylatexenc for LaTeX text (accents, quotes, dashes, escapes, text macros),
latex2mathml for math, nh3 as the sanitizer. Our own code only finds the math spans (a `$` is
as often money as math), applies the author's argument-less `\\newcommand`s, and says which
macros are structure (emphasis, links) rather than text.

Unknown macros (an author's `\\nameA{}` whose definition the source did not keep) read as their
name without the backslash, and their arguments as text: `\\nameA{}` -> `nameA`,
`\\revise{the weights}` -> `the weights`. The name is usually the method's name.
"""

import functools
import html
import re
import unicodedata
from collections.abc import Callable, Iterable, Iterator, Sequence
from typing import NamedTuple
from urllib.parse import urlsplit

import nh3
from markdown_it import MarkdownIt
from markupsafe import Markup, escape
from pylatexenc import latexwalker, macrospec
from pylatexenc.latex2text import (
    LatexNodes2Text,
    MacroTextSpec,
)
from pylatexenc.latex2text import (
    get_default_latex_context_db as text_macros,
)

# -- the structure -----------------------------------------------------------------------------


class Text(NamedTuple):
    text: str


class Math(NamedTuple):
    tex: str
    display: bool


class Styled(NamedTuple):
    """Emphasis and friends: style is em, strong, code, smallcaps or tt."""

    style: str
    children: tuple["Segment", ...]


class Link(NamedTuple):
    url: str  # an absolute http(s) URL, checked when parsed
    children: tuple["Segment", ...]  # empty: the URL is its own text


Segment = Text | Math | Styled | Link
# what a placeholder stands for while Markdown runs: a math span, or a LaTeX escape or quote
Piece = str | Math


# -- finding math and protecting LaTeX from Markdown --------------------------------------------

# Markdown must not read LaTeX: `\_`, `\*` and accents like Tram\`er are set aside as
# private-use placeholders while markdown-it runs, and so is each math span.
PLACEHOLDER_BASE = 0xE100
PLACEHOLDER_LIMIT = 0xF800 - PLACEHOLDER_BASE
PLACEHOLDER = re.compile("[\ue100-\uf7ff]")
# each branch starts with its first character outside the group: SRE then skips ahead to
# the next `$`, `\\`, `` ` `` or `'` instead of trying every branch at every character
MATH_OR_ESCAPE = re.compile(
    r"""
      \$(?P<display>\$)
    | \$(?P<inline>)
    | \\\[(?P<bracket>.{1,2000}?)\\\]
    | \\\((?P<paren>.{1,2000}?)\\\)
    | `(?P<open_quote>`(?=\S))
    | '(?P<close_quote>')
    | \\(?P<escape>[^A-Za-z0-9\s])
    """,
    re.VERBOSE | re.DOTALL,
)
MATH_OR_ESCAPE_STARTS = "$\\`'"  # the first characters of its branches
# what comes before an opening quote: the start of a word
OPENING_CONTEXT = frozenset(" \t\n([{/-\u2014")
# TeX's single quotes, `word' -> ‘word’: a backtick that starts a word (not a double one, not
# an accent inside a word: Cornell`a), up to the first ' that ends a word; an apostrophe inside
# (`don't') stays one. No dollar, backtick or blank line inside, so a pair never takes math
# or a Markdown code span with it
TEX_SINGLE_QUOTE = re.compile(r"(?<![`\\\w])`(?=[^\s`'$])((?:[^`'$\n]|'(?=\w)){1,200}?)'(?![\w'])")
# and the double ones, for names (an abstract's are set aside with its math: set_aside)
TEX_DOUBLE_QUOTE = re.compile(r"``(?=\S)([^`'$\n]{1,200}?)''")
DISPLAY_BODY = re.compile(r"((?:[^$\\]|\\.){1,2000}?)\$\$", re.DOTALL)
INLINE_BODY = re.compile(r"((?:[^$\\]|\\.){1,400}?)\$", re.DOTALL)
# a macro written with a doubled backslash inside math (`$\\alpha$`, `$\\hat{\\theta}$`: sources
# that escaped the backslash twice, as real Paper Copilot abstracts do) is the macro: TeX's line
# break `\\` is followed by a space, a bracket or the end in math, hardly ever by a letter
DOUBLED_MACRO = re.compile(r"(?<!\\)\\\\(?=[A-Za-z])")
# `$ \ell_p $` (spaces inside) is math when it reads as TeX; `from $5 to $10` is money
TEX_MARK = re.compile(r"[\\^_{}=<>|]")
SHORT_SYMBOL = re.compile(r"[A-Za-z0-9]{1,3}")

# author definitions: applied when they take no argument, dropped otherwise
DEFINITION = re.compile(
    r"""\$?\s*\\(?:(?:re|provide)?newcommand\*?|DeclareMathOperator\*?)\s*
        \{?\s*\\(?P<name>[A-Za-z]+)\s*\}?\s*(?P<arguments>\[\s*\d\s*\])?(?:\[[^\]]*\])?\s*(?=\{)
      | \$?\s*\\def\s*\\(?P<def_name>[A-Za-z]+)\s*(?P<def_arguments>(?:\#\d)*)\s*(?=\{)""",
    re.VERBOSE,
)
# every DEFINITION match holds one of these, each starting with a backslash
DEFINITION_WORDS = ("\\newcommand", "\\renewcommand", "\\providecommand", "\\def", "\\Declare")
MAX_DEFINITION = 500
MAX_EXPANSION = 20_000

# a source with none of these, no '--' or "''" and no URL (nor a placeholder character) is
# plain text: Markdown, LaTeX, HTML and entities all need one. Looked for one by one (holds_any)
MARKUP_CHARACTERS = "$\\*_`[<&~{}"
DOUBLED_MARKS = "-'"  # '--' and "''" (holds_doubled)
URL_STARTS = ("http://", "https://")
BARE_URL = re.compile(r"https?://[^\s<>\"'{}|\\^`]*[^\s<>\"'{}|\\^`.,;:!?)\]]")
SAFE_SCHEMES = {"http", "https"}

# -- LaTeX as pylatexenc reads it -----------------------------------------------------------------

EMPHASIS_MACROS = {
    "emph": "em", "textit": "em", "textsl": "em", "textbf": "strong", "textsc": "smallcaps",
    "texttt": "tt", "underline": "underline",
}  # fmt: skip
# `{\bf text}`: a declaration styles the rest of its group
DECLARATIONS = {
    "bf": "strong", "bfseries": "strong", "it": "em", "itshape": "em", "em": "em",
    "sl": "em", "sc": "smallcaps", "scshape": "smallcaps", "tt": "tt", "ttfamily": "tt",
}  # fmt: skip
# sizes and styles with no text of their own
SIZING_MACROS = (
    "big", "Big", "bigg", "Bigg", "bigl", "bigr", "Bigl", "Bigr", "biggl", "biggr", "Biggl",
    "Biggr", "bigm", "Bigm", "limits", "nolimits", "displaystyle", "textstyle", "scriptstyle",
    "cal", "rm", "boldmath", "small", "large", "Large", "normalsize", "footnotesize",
    "noindent", "newline", "par", "quad", "qquad", "centering", "hfill", "vfill", "xspace",
)  # fmt: skip
# macros pylatexenc does not know the arguments of
EXTRA_ARGUMENTS = {
    "href": "{{", "tfrac": "{{", "dfrac": "{{", "cfrac": "{{", "nicefrac": "{{",
    "Tilde": "{", "Hat": "{", "Bar": "{", "Vec": "{", "Dot": "{", "bm": "{", "mathds": "{",
    "mathbbm": "{", "mathscr": "{", "operatorname": "*{", "mathop": "{", "hspace": "*{", "vspace": "*{",
    "citep": "*[[{", "citet": "*[[{", "citealp": "*[[{", "eqref": "{", "footnote": "{",
    "textnormal": "{", "textup": "{", "mbox": "{", "scalebox": "{{", "boldsymbol": "{",
}  # fmt: skip
# for search: a letter in any math font is the letter, a fraction reads a/b
PLAIN_MACROS = (
    "mathcal", "mathbb", "mathbf", "mathrm", "mathsf", "mathit", "mathfrak", "mathscr",
    "mathtt", "boldsymbol", "bm", "mathds", "mathbbm", "operatorname", "text", "textrm",
    "textnormal", "textup", "mbox", "Tilde", "Hat", "Bar", "Vec", "Dot", "widetilde",
    "widehat", "overline", "texttt", "textsf",
)  # fmt: skip


def argument_texts(node: latexwalker.LatexMacroNode, l2tobj: LatexNodes2Text) -> list[str]:
    """pylatexenc passes itself to a replacement that has an argument named l2tobj."""
    arguments = node.nodeargd.argnlist if node.nodeargd else []
    return [l2tobj.nodelist_to_text([n]) for n in arguments if n is not None]


def joined_with(separator: str) -> Callable[[latexwalker.LatexMacroNode, LatexNodes2Text], str]:
    return lambda node, l2tobj: separator.join(argument_texts(node, l2tobj))


def last_argument(node: latexwalker.LatexMacroNode, l2tobj: LatexNodes2Text) -> str:
    texts = argument_texts(node, l2tobj)
    return texts[-1] if texts else ""


TEXT_REPLACEMENTS = {
    **{name: joined_with("") for name in PLAIN_MACROS},
    **{name: joined_with("/") for name in ("frac", "tfrac", "dfrac", "cfrac", "nicefrac")},
    "scalebox": last_argument, "operatorname": last_argument, "mathop": joined_with(""),
    **{name: "" for name in ("cite", "citep", "citet", "citealp", "ref", "eqref", "label")},
    **{name: "" for name in ("hspace", "vspace", "footnote", "left", "right", "middle")},
    **{name: "" for name in DECLARATIONS},
    **{name: "" for name in SIZING_MACROS},
    "land": "∧", "lor": "∨", "|": "‖", "LaTeX": "LaTeX", "TeX": "TeX",
    "url": joined_with(""), "textbackslash": "\\",
}  # fmt: skip


def walker_context() -> macrospec.LatexContextDb:
    context = latexwalker.get_default_latex_context_db()
    context.add_context_category(
        "paper-catalog",
        prepend=True,
        macros=[macrospec.MacroSpec(name, spec) for name, spec in EXTRA_ARGUMENTS.items()],
    )
    return context


def text_context() -> macrospec.LatexContextDb:
    context = text_macros()
    context.add_context_category(
        "paper-catalog",
        prepend=True,
        macros=[MacroTextSpec(name, simplify_repl=r) for name, r in TEXT_REPLACEMENTS.items()],
    )
    return context


class LatexToText(LatexNodes2Text):
    """pylatexenc's LaTeX -> text, where an unknown macro reads as its name."""

    def macro_node_to_text(self, node: latexwalker.LatexMacroNode) -> str:
        if self.latex_context.get_macro_spec(node.macroname) is not None:
            return super().macro_node_to_text(node)
        if WALKER_CONTEXT.get_macro_spec(node.macroname) is not None:
            return ""  # a declaration such as \bf or \small: no text of its own
        following = node.parsing_state.s[node.pos + node.len : node.pos + node.len + 200]
        if ARGUMENT_WITH_TEXT.match(following):
            return ""  # `\revise{the weights}`: the argument is the text
        return node.macroname + node.macro_post_space


class SpecialsTable:
    """LatexContextDb.test_for_specials from a table of the specials by first character,
    longest first: pylatexenc's method tries every specials string of every category at
    each character it reads (a third of a region's reading). The same spec: the longest
    match, of equal ones the first in category order (its loop's strict `>` keeps the first;
    the sort is stable). Valid while the context is not changed after it is made."""

    def __init__(self, context: macrospec.LatexContextDb) -> None:
        by_first: dict[str, list[tuple[str, macrospec.SpecialsSpec]]] = {}
        for category in context.category_list:
            for characters, spec in context.d[category]["specials"].items():
                if characters:  # an empty string is never longer than no match
                    by_first.setdefault(characters[0], []).append((characters, spec))
        self.by_first = {
            first: tuple(sorted(specs, key=lambda item: -len(item[0])))
            for first, specs in by_first.items()
        }

    def __call__(
        self, s: str, pos: int, parsing_state: object = None
    ) -> macrospec.SpecialsSpec | None:
        for characters, spec in self.by_first.get(s[pos : pos + 1], ()):
            if s.startswith(characters, pos):
                return spec
        return None


WALKER_CONTEXT = walker_context()
# the walker asks its context at every character that is no macro, brace or dollar
WALKER_CONTEXT.test_for_specials = SpecialsTable(WALKER_CONTEXT)
# spaces as the source has them, also between two macros (pylatexenc's presets drop those)
SPACES = {
    "between-macro-and-chars": False,
    "between-latex-constructs": True,
    "after-comment": False,
    "in-equations": None,
}
TO_TEXT = LatexToText(latex_context=text_context(), math_mode="text", strict_latex_spaces=SPACES)
ARGUMENT_WITH_TEXT = re.compile(r"\s*\{\s*[^\s}]")
# pylatexenc would read these as a comment, an alignment tab and math
LATEX_TEXT_SPECIALS = re.compile(r"(?<!\\)([%&$#])")
LATEX_COMMAND = re.compile(r"\\[A-Za-z]+\*?|[{}]")  # all that is left when pylatexenc fails
# every branch a literal: SRE skips to the next of their first characters (as
# `[\\{}~]|--|''|`` it tried the three branches at every character)
LATEX_MARK = re.compile(r"\\|\{|\}|~|`|--|''")
LATEX_CHARACTERS = "\\{}~`"  # the same with DOUBLED_MARKS, looked for one by one (has_latex_mark)
MAX_CACHED_REGION = 200
NON_SPACE = re.compile(r"\S*")
LATEX_ESCAPE = re.compile(r"\\([%&$#_{}~])")
# a word whose only LaTeX is escaped specials ('76.59\\%.', 'R\\&D'): it reads as itself
# unescaped. Numbers make most of them unique, so the cache of readings would miss and leave
# each one to pylatexenc, the slowest reading
ESCAPED_WORD = re.compile(r"[A-Za-z0-9.,;:()]*(?:\\[%&$#_][A-Za-z0-9.,;:()]*)+")

# -- math as MathML ----------------------------------------------------------------------------

# macros latex2mathml does not know, rewritten to ones it does
MATH_ALIASES = {
    "nicefrac": "frac", "Tilde": "tilde", "Hat": "hat", "Bar": "bar", "Vec": "vec",
    "Dot": "dot", "textsc": "text", "textup": "text", "textnormal": "text", "sc": "rm",
    "mathds": "mathbb", "mathbbm": "mathbb", "bold": "mathbf", "textsf": "text",
    "cite": "text", "citep": "text", "citet": "text", "ref": "text", "eqref": "text",
    "textmd": "text", "dots": "ldots", "vspace": "phantom", "lparen": "(", "rparen": ")",
}  # fmt: skip
MATH_MACRO = re.compile(r"\\([A-Za-z]+)\b")
# latex2mathml copies \text{} arguments verbatim, so math goes in with \lt/\gt for angle brackets
MATH_TEXT = re.compile(r"(<mtext[^>]*>)(.*?)(</mtext>)", re.DOTALL)
ANGLE_MACRO = re.compile(r"\\([lg])t(?:&#x000A0;| )?")
# what latex2mathml leaves of a macro it does not know: `<mi>\foo</mi>`, shown as `foo`
LEFTOVER_MACRO = re.compile(r">([^<]*?)\\([A-Za-z]+)")

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
# A size from the source is clamped, in em: `\hspace{100000em}` must not make a page 1.76
# million pixels wide. Big operators and `\Bigg` delimiters stay under these.
SIZE_LIMITS_EM = {
    "width": 8, "height": 4, "depth": 4, "voffset": 2, "lspace": 2, "rspace": 2,
    "minsize": 4, "maxsize": 4, "mathsize": 3, "linethickness": 0.5, "columnspacing": 4,
    "rowspacing": 4,
}  # fmt: skip
EM_PER_UNIT = {
    "em": 1, "ex": 0.5, "mu": 1 / 18, "px": 1 / 16, "pt": 0.1, "pc": 1.2, "mm": 0.28,
    "cm": 2.8, "in": 7.2, "bp": 0.1, "dd": 0.1, "sp": 0.1 / 65536, "%": 0.01, "": 1,
}  # fmt: skip
NAMED_SIZES = {"small", "normal", "big", "thin", "medium", "thick", "auto", "fit", "infinity"}
LENGTH = re.compile(r"\s*([+-]?(?:\d+\.?\d*|\.\d+))\s*([a-z%]*)\s*")
SCRIPT_LEVELS = range(-1, 4)


def clamp_length(attribute: str, value: str) -> str | None:
    """A MathML length bounded by SIZE_LIMITS_EM; None (dropped) when it is not a length."""
    if value in NAMED_SIZES:
        return value
    lengths = []
    for part in value.split():  # columnspacing holds one length per column
        match = LENGTH.fullmatch(part)
        if not match or match.group(2) not in EM_PER_UNIT:
            return None
        ems = float(match.group(1)) * EM_PER_UNIT[match.group(2)]
        limit = SIZE_LIMITS_EM[attribute]
        lengths.append(f"{max(-limit, min(limit, ems)):.3g}em")
    return " ".join(lengths[:20]) or None


def filter_attribute(tag: str, attribute: str, value: str) -> str | None:
    """nh3's attribute filter: sizes clamped; everything else as the allow-list let it through."""
    if attribute in SIZE_LIMITS_EM:
        return clamp_length(attribute, value)
    if attribute == "scriptlevel":
        try:
            level = int(value)
        except ValueError:
            return None
        return str(max(SCRIPT_LEVELS.start, min(SCRIPT_LEVELS.stop - 1, level)))
    return value


# made once: nh3.clean() builds its sanitizer from these lists on every call, six times the
# cleaning itself on an abstract with markup (a table page renders a few such abstracts a request)
SANITIZER = nh3.Cleaner(
    tags=TEXT_TAGS | MATH_TAGS,
    attributes=ALLOWED_ATTRIBUTES,
    attribute_filter=filter_attribute,
    url_schemes=SAFE_SCHEMES,
    link_rel="nofollow noopener noreferrer",
    strip_comments=True,
)


def sanitize(fragment: str) -> str:
    """The last word on what reaches the page: only the tags the renderer itself writes."""
    return SANITIZER.clean(fragment)


# -- Markdown ----------------------------------------------------------------------------------


def markdown_reader() -> MarkdownIt:
    reader = MarkdownIt("commonmark", {"html": True})
    # backslashes belong to LaTeX; images have no place in an abstract
    reader.disable(["escape", "image"])
    return reader


MARKDOWN = markdown_reader()
HTML_TAG = re.compile(r"<\s*(/?)\s*([A-Za-z][A-Za-z0-9]*)[^>]*>", re.DOTALL)
HTML_STYLES = {"em": "em", "i": "em", "b": "strong", "strong": "strong", "code": "code", "tt": "tt"}
HTML_SPACES = {"br", "p", "div"}
MARKDOWN_STYLES = {"em_open": "em", "strong_open": "strong"}
# what the enabled inline rules (emphasis, code, links, autolinks, HTML, entities, line
# breaks) and markdown-it's normalizing start at: text with none is one text token, itself
MARKDOWN_MARKS = "*_`[]<&\n\r\0"
# an element open while Markdown is read: (kind, children), the kind ("md" or "html", its style
# or "link", the link's URL or the HTML tag's name)
FrameKind = tuple[str, str, str | None]
Frame = tuple[FrameKind, list[Segment]]

# -- parsing -----------------------------------------------------------------------------------


def safe_url(text: str) -> str | None:
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


def find_group(text: str, start: int) -> tuple[str, int] | None:
    """The balanced {...} at text[start] as (content, end), or None."""
    depth = 0
    for index in range(start, min(len(text), start + MAX_DEFINITION)):
        char = text[index]
        if char == "{" and text[index - 1] != "\\":
            depth += 1
        elif char == "}" and text[index - 1] != "\\":
            depth -= 1
            if depth == 0:
                return text[start + 1 : index], index + 1
    return None


def apply_definitions(text: str) -> str:
    """`\\newcommand{\\R}{\\mathbb{R}}` and friends taken out; argument-less ones applied."""
    if not holds_definition_word(text):
        return text
    definitions: dict[str, str] = {}
    pieces: list[str] = []
    position = 0
    for match in DEFINITION.finditer(text):
        if match.start() < position:
            continue
        body = find_group(text, match.end())
        if body is None:
            continue
        name = match.group("name") or match.group("def_name")
        if not (match.group("arguments") or match.group("def_arguments")):
            definitions[name] = body[0]
        end = body[1]
        # `$\newcommand{\R}{\mathbb{R}}$`: the dollars go with the definition
        if match.group(0).startswith("$"):
            closing = re.match(r"\s*\$", text[end:])
            end += closing.end() if closing else 0
        pieces.append(text[position : match.start()])
        position = end
    pieces.append(text[position:])
    text = "".join(pieces)
    for _ in range(3):  # a definition may use another one
        expanded = text
        for name, definition in definitions.items():
            pattern = rf"\\{name}(?![A-Za-z])(?:\s*\{{\}})?"
            expanded = re.sub(pattern, constant(definition), expanded)
        if expanded == text or len(expanded) > MAX_EXPANSION + len(text):
            break
        text = expanded
    return text


def constant(text: str) -> Callable[[re.Match[str]], str]:
    """A replacement for re.sub that is `text` as it is (no backslash in it is read)."""
    return lambda _: text


def holds_definition_word(text: str) -> bool:
    """holds_any(text, DEFINITION_WORDS), each word looked for at each backslash (memchr): most
    abstracts hold none, the others a few, where five searches went over all of the text."""
    position = text.find("\\")
    while position >= 0:
        if text.startswith(DEFINITION_WORDS, position):
            return True
        position = text.find("\\", position + 1)
    return False


def reads_as_math(tex: str, tight: bool) -> bool:
    """Text between two dollars: math when tight (`$x$`) or when it reads as TeX."""
    if not tex.strip() or "\n\n" in tex:
        return False
    if tight:
        return True
    body = tex.strip()
    return bool(TEX_MARK.search(body) or SHORT_SYMBOL.fullmatch(body))


def math_piece(tex: str, display: bool) -> Math:
    """A math span's TeX, its doubled macro backslashes read as one (DOUBLED_MACRO)."""
    tex = tex.strip()
    if "\\\\" in tex:
        tex = DOUBLED_MACRO.sub(r"\\", tex)
    return Math(tex, display)


def set_aside(text: str) -> tuple[str, list[Piece]]:
    """Math spans, LaTeX escapes and quotes replaced by placeholders: (text, pieces)."""
    pieces: list[Piece] = []
    out: list[str] = []
    position = 0
    piece: Piece | None

    def placeholder(piece: Piece) -> str:
        pieces.append(piece)
        return chr(PLACEHOLDER_BASE + len(pieces) - 1)

    while len(pieces) < PLACEHOLDER_LIMIT:
        start = first_mark(text, position)
        match = MATH_OR_ESCAPE.search(text, start) if start < len(text) else None
        if not match:
            break
        kind, end, piece = match.lastgroup, match.end(), None
        if kind == "display":
            body = DISPLAY_BODY.match(text, end)
            if body and body.group(1).strip():
                piece, end = math_piece(body.group(1), True), body.end()
        elif kind == "inline":
            body = INLINE_BODY.match(text, end)
            if body:
                tex = body.group(1)
                tight = not tex[0].isspace() and not tex[-1].isspace()
                if reads_as_math(tex, tight):
                    piece, end = math_piece(tex, False), body.end()
        elif kind in ("bracket", "paren"):
            if match.group(kind).strip():
                piece = math_piece(match.group(kind), kind == "bracket")
        elif kind == "open_quote":
            piece = "“"
        elif kind == "close_quote":
            # '' opening a phrase (`for ''What If'' Reasoning`: a source's stand-in for ``)
            opens = match.start() == 0 or text[match.start() - 1] in OPENING_CONTEXT
            piece = "“" if opens and text[end : end + 1].isalnum() else "”"
        else:
            piece = match.group(0)
        if piece is None:  # a lone dollar: text
            out.append(text[position:end])
        else:
            out.append(text[position : match.start()] + placeholder(piece))
        position = end
    out.append(text[position:])
    return "".join(out), pieces


def first_mark(text: str, position: int) -> int:
    """Where the first of MATH_OR_ESCAPE_STARTS at or after `position` is (len(text): none):
    no match starts before it. Found by memchr, each search stopping at the nearest yet, where
    the pattern's scan looked at every character."""
    end = len(text)
    for mark in MATH_OR_ESCAPE_STARTS:
        found = text.find(mark, position, end)
        if found >= 0:
            end = found
    return end


def typographic_single_quotes(text: str) -> str:
    """TeX's `single quotes' as typographic ones: `word' -> ‘word’."""
    if "`" not in text:
        return text
    return TEX_SINGLE_QUOTE.sub(r"‘\1’", text)


def typographic_quotes(text: str) -> str:
    """TeX's quotes in a name or a short text: ``word'' -> “word”, `word' -> ‘word’."""
    if "`" not in text:
        return text
    return typographic_single_quotes(TEX_DOUBLE_QUOTE.sub(r"“\1”", text))


def restore(text: str, pieces: Sequence[Piece], as_source: bool = False) -> str:
    """Placeholders back to what they stood for: escapes and quotes always, math only as_source."""

    def back(match: re.Match[str]) -> str:
        piece = pieces[ord(match.group(0)) - PLACEHOLDER_BASE]
        if isinstance(piece, Math):
            if not as_source:
                return match.group(0)
            return f"$${piece.tex}$$" if piece.display else f"${piece.tex}$"
        return piece

    # nothing to put back (no pieces: no placeholders, parse replaced any the source had; or
    # only math, kept): no pass over the text
    if not any(as_source or not isinstance(piece, Math) for piece in pieces):
        return text
    return PLACEHOLDER.sub(back, text)


def split_text(text: str, pieces: Sequence[Piece]) -> list[Segment]:
    """Text with math placeholders and bare URLs -> Text, Math and Link segments."""
    segments: list[Segment] = []
    # without pieces there is no placeholder to split at (see restore), nor in ASCII text
    # (isascii reads a flag of the string): no pass of the pattern over most text
    parts = re.split("([\ue100-\uf7ff])", text) if pieces and not text.isascii() else [text]
    for part in parts:
        if not part:
            continue
        if PLACEHOLDER.fullmatch(part):
            piece = pieces[ord(part) - PLACEHOLDER_BASE]
            segments.append(piece if isinstance(piece, Math) else Text(piece))
            continue
        position = 0
        # a URL holds a ':', which most text lacks (memchr: no pass of the pattern)
        for url in BARE_URL.finditer(part) if ":" in part else ():
            segments.append(Text(part[position : url.start()]))
            segments.append(Link(url.group(0), ()))
            position = url.end()
        segments.append(Text(part[position:]))
    # Text("") made once, not once a segment (a NamedTuple's __new__ is Python code)
    return [segment for segment in segments if segment != EMPTY_TEXT]


EMPTY_TEXT = Text("")


def latex_segments(
    nodes: Iterable[latexwalker.LatexNode | None], pieces: Sequence[Piece]
) -> list[Segment]:
    """pylatexenc nodes -> segments: emphasis and links are structure, the rest text."""
    segments: list[Segment] = []
    run: list[latexwalker.LatexNode | None] = []

    def flush() -> None:
        if run:  # converted together: pylatexenc's spacing depends on the neighbours
            segments.extend(split_text(TO_TEXT.nodelist_to_text(run), pieces))
            run.clear()

    for node in nodes:
        structure = structure_of(node, pieces) if node is not None else None
        if structure is None:
            run.append(node)
        else:
            flush()
            segments.extend(structure)
    flush()
    return segments


def structure_of(node: latexwalker.LatexNode, pieces: Sequence[Piece]) -> list[Segment] | None:
    """The segments of an emphasis, link or styled group node; None for anything else."""
    if node.isNodeType(latexwalker.LatexMacroNode):
        name = node.macroname
        arguments = [n for n in (node.nodeargd.argnlist if node.nodeargd else []) if n]
        if name in EMPHASIS_MACROS and arguments:
            children = latex_segments(group_nodes(arguments[-1]), pieces)
            return [Styled(EMPHASIS_MACROS[name], tuple(children))]
        if name == "url" and arguments:
            target = macro_argument_source(arguments[0], pieces)
            url = safe_url(target)
            return [Link(url, ()) if url else Text(target)]
        if name == "href" and len(arguments) == 2:
            url = safe_url(macro_argument_source(arguments[0], pieces))
            label = tuple(latex_segments(group_nodes(arguments[1]), pieces))
            return [Link(url, label)] if url else list(label)
        return None
    if node.isNodeType(latexwalker.LatexGroupNode):
        inner = [n for n in node.nodelist if n is not None]
        first = next((n for n in inner if not is_blank(n)), None)
        if first is not None and first.isNodeType(latexwalker.LatexMacroNode):
            style = DECLARATIONS.get(first.macroname)
            if style:
                rest = inner[inner.index(first) + 1 :]
                return [Styled(style, tuple(latex_segments(rest, pieces)))]
        if any(structure_of(n, pieces) is not None for n in inner):
            return latex_segments(inner, pieces)
    return None


def macro_argument_source(node: latexwalker.LatexNode, pieces: Sequence[Piece]) -> str:
    """A verbatim argument (a URL) as the source wrote it, escapes undone."""
    verbatim = node.latex_verbatim()
    if node.isNodeType(latexwalker.LatexGroupNode):
        verbatim = verbatim[1:-1]
    return LATEX_ESCAPE.sub(r"\1", restore(verbatim, pieces, True))


def group_nodes(node: latexwalker.LatexNode) -> list[latexwalker.LatexNode | None]:
    if node.isNodeType(latexwalker.LatexGroupNode):
        return node.nodelist
    return [node]


def is_blank(node: latexwalker.LatexNode) -> bool:
    return node.isNodeType(latexwalker.LatexCharsNode) and not node.chars.strip()


def read_latex(text: str, pieces: Sequence[Piece]) -> list[Segment]:
    """LaTeX in a stretch of text (math already set aside) -> segments."""
    text = restore(text, pieces)
    segments: list[Segment] = []
    for is_latex, part in latex_regions(text):
        if not is_latex:
            segments.extend(split_text(part, pieces))
        elif ESCAPED_WORD.fullmatch(part):
            segments.extend(split_text(LATEX_ESCAPE.sub(r"\1", part), pieces))
        elif len(part) > MAX_CACHED_REGION or PLACEHOLDER.search(part):
            segments.extend(read_latex_region(part, pieces))
        else:  # short, no math in it: its reading depends on the words alone
            segments.extend(read_repeated_latex_region(part))
    return segments


def read_latex_region(part: str, pieces: Sequence[Piece]) -> list[Segment]:
    try:
        nodes = latex_nodes(LATEX_TEXT_SPECIALS.sub(r"\\\1", part))
        return latex_segments(nodes, pieces)
    except Exception:  # noqa: BLE001 - pylatexenc's errors vary (nesting too deep, ...)
        return split_text(LATEX_COMMAND.sub("", part), pieces)


@functools.lru_cache(maxsize=4096)  # regions are short (MAX_CACHED_REGION): a bounded memory
def read_repeated_latex_region(part: str) -> tuple[Segment, ...]:
    """A region without math placeholders, read once however often it appears (accents in
    names, `\\emph{...}` of common words)."""
    return tuple(read_latex_region(part, ()))


def latex_regions(text: str) -> list[tuple[bool, str]]:
    """(is_latex, part) runs: the words that hold LaTeX, with the rest of any group they open,
    apart from plain words. pylatexenc reads a character at a time: only these go to it.

    Only the words with a LaTeX mark are looked at one by one: a word without one has no
    brace, so it never opens or closes a group, and it is LaTeX only inside one."""
    if not has_latex_mark(text):
        return [(False, text)]  # most text
    regions: list[tuple[bool, str]] = []
    depth = position = 0

    def add(is_latex: bool, part: str) -> None:
        if regions and regions[-1][0] == is_latex:
            regions[-1] = (is_latex, regions[-1][1] + part)
        else:
            regions.append((is_latex, part))

    for start, end in latex_words(text):
        gap, word = text[position:start], text[start:end]
        if depth > 0:
            add(True, gap)
        elif gap:
            # `\emph {x}`: a space before an argument stays with its macro
            follows_macro = regions and regions[-1][0] and gap.isspace()
            add(bool(follows_macro and word[0] == "{"), gap)
        add(True, word)
        depth = max(0, depth + word.count("{") - word.count("}"))
        position = end
    if position < len(text):
        add(depth > 0, text[position:])
    return regions


def latex_words(text: str) -> Iterator[tuple[int, int]]:
    """(start, end) of each whole word (between whitespace) with a LaTeX mark in it. The
    search skips from mark to mark and the word is read around each, where one pattern for
    the whole word would be tried at every word."""
    position = 0
    for mark in LATEX_MARK.finditer(text):
        start = mark.start()
        if start < position:
            continue  # another mark of the word just read
        while start > position and not text[start - 1].isspace():
            start -= 1
        rest = NON_SPACE.match(text, mark.end())
        assert rest is not None  # `\S*` matches anywhere
        position = rest.end()
        yield start, position


def latex_nodes(text: str) -> list[latexwalker.LatexNode | None]:
    walker = latexwalker.LatexWalker(text, latex_context=WALKER_CONTEXT, tolerant_parsing=True)
    return walker.get_latex_nodes()[0]


def read_markdown(text: str, pieces: Sequence[Piece]) -> list[Segment]:
    """Markdown inline markup -> segments, each text run read as LaTeX."""
    if not has_markdown_mark(text):
        return read_latex(text, pieces)  # what markdown-it would give: one text token
    if reads_as_lines(text):
        return line_segments(text, pieces)
    simple = simple_markdown_segments(text, pieces)
    if simple is not None:
        return simple
    tokens = MARKDOWN.parseInline(text)[0].children or []
    root: list[Segment] = []
    # (kind, children); the root's kind is never closed or finished (depth 0)
    stack: list[Frame] = [(("root", "", None), root)]

    def add(segments: Iterable[Segment]) -> None:
        stack[-1][1].extend(segments)

    def close(kind: FrameKind) -> None:
        for depth in range(len(stack) - 1, 0, -1):
            if stack[depth][0] == kind:
                while len(stack) > depth:
                    finish(stack.pop())
                return

    def finish(frame: Frame) -> None:
        kind, children = frame
        style, url = kind[1], kind[2]
        if style == "link":
            add([Link(url, tuple(children))] if url else children)
        else:
            add([Styled(style, tuple(children))] if children else [])

    for token in tokens:
        if token.type == "text":
            add(read_latex(token.content, pieces))
        elif token.type in ("softbreak", "hardbreak"):
            add([Text(" ")])
        elif token.type == "code_inline":
            add(code_segments(token.markup, token.content, pieces))
        elif token.type in MARKDOWN_STYLES:
            stack.append((("md", MARKDOWN_STYLES[token.type], None), []))
        elif token.type == "link_open":
            # markdown-it's attributes may be numbers; a link's href is text
            url = safe_url(restore(str(token.attrGet("href") or ""), pieces, True))
            stack.append((("md", "link", url), []))
        elif token.type in ("em_close", "strong_close", "link_close"):
            for depth in range(len(stack) - 1, 0, -1):
                if stack[depth][0][0] == "md":
                    while len(stack) > depth:
                        finish(stack.pop())
                    break
        elif token.type == "html_inline":
            read_html_tag(token.content, pieces, stack, add, close)
        else:
            add(read_latex(restore(token.content, pieces, True), pieces))
    while len(stack) > 1:
        finish(stack.pop())
    return root


def simple_markdown_segments(text: str, pieces: Sequence[Piece]) -> list[Segment] | None:
    """read_markdown's segments for the commonest Markdown (`*word*`, `**S**tate`, `` `code` ``),
    without markdown-it (the slow part of plain_text for the abstracts with Markdown marks),
    or None for any other text. tests/test_build_speed4.py checks the two readings agree.

    Taken here only: the marks are `*` and backticks alone, in pairs one after the other, each
    pair a run of one or two `*` or one backtick; an emphasis opens after a space or at the
    start and before an ASCII letter or digit, and closes after one, before a space, an ASCII
    letter or digit, `.`, `,`, `;` or `:`, or at the end (CommonMark's flanking rules then make
    them the pair, whatever the rule of 3); code holds no space at its ends."""
    if holds_any(text, NOT_SIMPLE_MARKDOWN):
        return None
    runs = mark_runs(text)
    if len(runs) % 2:
        return None
    segments: list[Segment] = []
    position = 0
    styled: list[Segment]
    for (open_start, open_end), (close_start, close_end) in zip(runs[::2], runs[1::2]):
        mark, inside = text[open_start:open_end], text[open_end:close_start]
        if text[close_start:close_end] != mark or not inside:
            return None
        if mark == "`":
            if inside[0] == " " or inside[-1] == " ":
                return None
            styled = code_segments(mark, inside, pieces)
        else:
            before = text[open_start - 1] if open_start else " "
            after = text[close_end] if close_end < len(text) else " "
            opens = mark in ("*", "**") and before == " " and is_ascii_alnum(inside[0])
            closes = is_ascii_alnum(inside[-1]) and (
                after in SIMPLE_AFTER_EMPHASIS or is_ascii_alnum(after)
            )
            if not (opens and closes):
                return None
            children = read_latex(inside, pieces)
            style = "strong" if mark == "**" else "em"
            styled = [Styled(style, tuple(children))] if children else []
        segments.extend(read_latex(text[position:open_start], pieces))
        segments.extend(styled)
        position = close_end
    segments.extend(read_latex(text[position:], pieces))
    return segments


def reads_as_lines(text: str) -> bool:
    """Whether markdown-it reads `text` as text runs between line breaks and nothing else: its
    marks are line breaks, underscores inside words, ampersands that start no entity and
    brackets that make no link (wrapped lines, `T_1`, `R&D`, `[12]`: most abstracts that
    reach Markdown). tests/test_markup.py checks both readings agree on real and generated text.

    Why each one is plain: an underscore run between two word characters (an ASCII letter or
    digit, or a placeholder: no space and no Unicode P or S) is both left- and right-flanking,
    and `_` then neither opens nor closes; the entity rule reads only what MARKDOWN_ENTITY
    matches; without '](' no link label is followed by '(', and a reference link needs
    references, which parseInline never has."""
    if holds_any(text, LINE_MARKDOWN_MARKS) or "](" in text:
        return False
    if "&" in text and MARKDOWN_ENTITY.search(text):
        return False
    start = text.find("_")
    while start >= 0:
        end = start + 1
        while text.startswith("_", end):
            end += 1
        if not (start and end < len(text)):
            return False
        if not (is_word_character(text[start - 1]) and is_word_character(text[end])):
            return False
        start = text.find("_", end)
    return True


def is_word_character(character: str) -> bool:
    return is_ascii_alnum(character) or "\ue100" <= character <= "\uf7ff"


def line_segments(text: str, pieces: Sequence[Piece]) -> list[Segment]:
    """read_markdown's segments for a text reads_as_lines: each line read as LaTeX, a space
    between two. markdown-it's newline rule drops the spaces (not tabs) that end a line and
    the spaces and tabs that start the next one; the last line keeps its end, the first its
    start."""
    lines = text.split("\n")
    last = len(lines) - 1
    segments: list[Segment] = []
    for index, line in enumerate(lines):
        if index:
            segments.append(SPACE)
            line = line.lstrip(" \t")
        if index < last:
            line = line.rstrip(" ")
        segments.extend(read_latex(line, pieces))
    return segments


SPACE = Text(" ")


def code_segments(mark: str, inside: str, pieces: Sequence[Piece]) -> list[Segment]:
    """A Markdown code span: code, unless it holds math. Backticks around math are no code
    (a stray TeX quote paired with a later backtick): the marks stay text and the math and
    prose between them are read as everywhere else."""
    if pieces and any(
        isinstance(pieces[ord(p) - PLACEHOLDER_BASE], Math) for p in placeholders(inside)
    ):
        return [Text(mark), *read_latex(inside, pieces), Text(mark)]
    return [Styled("code", (Text(restore(inside, pieces, True)),))]


def placeholders(text: str) -> list[str]:
    return PLACEHOLDER.findall(text) if not text.isascii() else []


def mark_runs(text: str) -> list[tuple[int, int]]:
    """(start, end) of each run of `*` or of backticks, in order, as `\\*+|`+` finds them: by
    str.find (memchr), where the pattern tried its two branches at every character."""
    runs = []
    for mark in "*`":
        start = text.find(mark)
        while start >= 0:
            end = start + 1
            while text.startswith(mark, end):
                end += 1
            runs.append((start, end))
            start = text.find(mark, end)
    runs.sort()
    return runs


def is_ascii_alnum(character: str) -> bool:
    return character.isascii() and character.isalnum()


# the Markdown marks simple_markdown_segments leaves to markdown-it (all but `*` and backticks)
NOT_SIMPLE_MARKDOWN = tuple(mark for mark in MARKDOWN_MARKS if mark not in "*`")
SIMPLE_AFTER_EMPHASIS = " .,;:"
# the Markdown marks reads_as_lines leaves to markdown-it: all but "\n_&[]"
LINE_MARKDOWN_MARKS = tuple(mark for mark in MARKDOWN_MARKS if mark not in "\n_&[]")
# what markdown-it's entity rule reads (its DIGITAL_RE and NAMED_RE): an '&' that starts none
# of these is a character
MARKDOWN_ENTITY = re.compile(
    r"&#(?:x[a-f0-9]{1,6}|[0-9]{1,7});|&[a-z][a-z0-9]{1,31};", re.IGNORECASE
)


def read_html_tag(
    tag: str,
    pieces: Sequence[Piece],
    stack: list[Frame],
    add: Callable[[Iterable[Segment]], None],
    close: Callable[[FrameKind], None],
) -> None:
    """`<em>`, `<b>`... in a source style their text; `<br>` is a space; any other tag is text."""
    match = HTML_TAG.fullmatch(tag)
    name = match.group(2).lower() if match else None
    if match is not None and name in HTML_STYLES:
        if match.group(1):
            close(("html", HTML_STYLES[name], name))
        else:
            stack.append((("html", HTML_STYLES[name], name), []))
    elif name in HTML_SPACES:
        add([Text(" ")])
    else:
        add([Text(restore(tag, pieces, True))])


def holds_any(text: str, needles: Iterable[str]) -> bool:
    """Whether any of `needles` is in `text`. A substring test is a memchr for one character,
    where SRE tries a character class at every character. A loop, not any(): the generator
    costs as much as the tests."""
    for needle in needles:
        if needle in text:
            return True
    return False


def holds_doubled(text: str, characters: str) -> bool:
    """Whether any of `characters` comes twice in a row in `text` ('--', "''"): each of its
    occurrences found by memchr, where a two-character needle is searched for at nearly every
    character (most abstracts hold a '-', few two in a row)."""
    for character in characters:
        position = text.find(character)
        while position >= 0:
            if text.startswith(character, position + 1):
                return True
            position = text.find(character, position + 2)
    return False


def has_markup(text: str) -> bool:
    if holds_any(text, MARKUP_CHARACTERS) or holds_doubled(text, DOUBLED_MARKS):
        return True
    if ":" in text and holds_any(text, URL_STARTS):  # most abstracts hold no ':'
        return True
    return not text.isascii() and bool(PLACEHOLDER.search(text))


def has_latex_mark(text: str) -> bool:
    """Whether LATEX_MARK finds anything in `text`."""
    return holds_any(text, LATEX_CHARACTERS) or holds_doubled(text, DOUBLED_MARKS)


def has_markdown_mark(text: str) -> bool:
    """Without a MARKDOWN_MARKS character markdown-it gives one text token, the text itself."""
    return holds_any(text, MARKDOWN_MARKS)


@functools.lru_cache(maxsize=2048)
def parse(source: str) -> tuple[Segment, ...]:
    """A source (abstract or title) -> tuple of Text, Math, Styled and Link segments."""
    text = unicodedata.normalize("NFC", source)
    if not has_markup(text):
        return (Text(text),)  # many abstracts: nothing to read
    text = html.unescape(text)
    if not text.isascii():  # ASCII holds no placeholder character
        text = PLACEHOLDER.sub("\ufffd", text)
    text = typographic_single_quotes(apply_definitions(text))
    protected, pieces = set_aside(text)
    return tuple(merge_text(read_markdown(protected, pieces)))


def merge_text(segments: Iterable[Segment]) -> list[Segment]:
    merged: list[Segment] = []
    for segment in segments:
        if isinstance(segment, Text) and merged and isinstance(merged[-1], Text):
            merged[-1] = Text(merged[-1].text + segment.text)
        else:
            merged.append(segment)
    return merged


# -- the two readings ----------------------------------------------------------------------------


# `$k$`, `$\\epsilon$`: the same math recurs across papers (a span is at most 2,000 characters)
@functools.lru_cache(maxsize=1024)
def math_text(tex: str) -> str:
    """Math as searchable text: `\\mathcal{O}(n)` -> `O(n)`, `\\frac{1}{\\epsilon}` -> `1/ε`."""
    if not LATEX_MARK.search(tex):
        return tex  # `$k$`, `$x^2$`: most math reads as it is written
    tex = LATEX_TEXT_SPECIALS.sub(r"\\\1", tex.replace("\\$", "$"))
    try:
        return TO_TEXT.nodelist_to_text(latex_nodes(tex)).replace("\\", "")
    except Exception:  # noqa: BLE001 - as in read_latex
        return LATEX_COMMAND.sub("", tex)


def segments_text(segments: Iterable[Segment]) -> str:
    parts = []
    for segment in segments:
        if isinstance(segment, Text):
            parts.append(segment.text)
        elif isinstance(segment, Math):
            parts.append(math_text(segment.tex))
        elif isinstance(segment, Link) and not segment.children:
            parts.append(segment.url)
        else:
            parts.append(segments_text(segment.children))
    return "".join(parts)


def plain_text(source: str | None) -> str:
    """What search indexes: the words a reader sees, with no markup left.

    `Tram\\`er` -> `Tramèr`, ``` ``a'' --- b ``` -> `“a” — b`, `$\\mathcal{O}(n)$` -> `O(n)`.
    """
    if source is None:
        return ""
    return collapse_spaces(segments_text(parse(source)))


def collapse_spaces(text: str) -> str:
    """`" ".join(text.split())`: the text itself when it is that already, as most abstracts
    are, told without splitting it (every character `split` splits at but the space is
    unprintable)."""
    source, collapsed = LAST_COLLAPSED
    if text is collapsed or text is source:
        return collapsed  # collapsing a collapsed text gives it back
    source = text
    if not is_printable(text):
        text = " ".join(text.split())
    elif "  " in text or text[:1] == " " or text[-1:] == " ":
        # a printable text's only whitespace is the space (every other is a separator or a
        # control): its runs halved until none is left, where split and join made a string a word
        while "  " in text:
            text = text.replace("  ", " ")
        text = text.strip(" ")
    LAST_COLLAPSED[:] = source, text
    return text


def is_printable(text: str) -> bool:
    """str.isprintable(): for ASCII, no control character, told by one bytes.translate, where
    isprintable looks up every character's category."""
    if text.isascii():
        return not text.encode().translate(None, PRINTABLE_ASCII)
    return text.isprintable()


PRINTABLE_ASCII = bytes(range(0x20, 0x7F))

# the last text collapsed and what it gave: a build asks about one abstract three times in a row
# (plain_text, paper_id, derive_label: the abstract, itself again where it has no markup, and
# the plain text), and each look goes over all of it. Held here, neither object can be another
# text with its id; a str never changes
LAST_COLLAPSED: list[str] = ["", ""]


def render_mathml(math: Math, inline_only: bool = False) -> str:
    """MathML from latex2mathml; TeX it cannot parse is shown as code, never as HTML."""
    display = math.display and not inline_only
    tex = MATH_MACRO.sub(lambda m: "\\" + MATH_ALIASES.get(m.group(1), m.group(1)), math.tex)
    # \text{} passes its argument through unescaped: angle brackets become math operators first
    tex = tex.replace("<", r"\lt ").replace(">", r"\gt ")
    # imported on first use: pages need it, a build (search text only) does not start it
    from latex2mathml.converter import convert as latex_to_mathml

    try:
        mathml = latex_to_mathml(tex, display="block" if display else "inline")
    except Exception:  # noqa: BLE001 - latex2mathml raises many kinds on malformed TeX
        delimiter = "$$" if math.display else "$"
        source = delimiter + math.tex + delimiter
        return str(Markup('<code class="tex" title="TeX">{}</code>').format(source))
    mathml = MATH_TEXT.sub(restore_angle_brackets, mathml)
    return LEFTOVER_MACRO.sub(r">\1\2", mathml)


# formulas up to this long are rendered once a worker: short inline math repeats from abstract to
# abstract ($n$, $\mathcal{O}(n)$: half of the formulas of 5,000 real abstracts were repeats)
MAX_CACHED_MATH = 80


@functools.lru_cache(maxsize=4096)  # short formulas (MAX_CACHED_MATH): a bounded memory
def repeated_mathml(math: Math, inline_only: bool) -> str:
    return render_mathml(math, inline_only)


def mathml(math: Math, inline_only: bool = False) -> str:
    """render_mathml(), kept for a short formula."""
    if len(math.tex) <= MAX_CACHED_MATH:
        return repeated_mathml(math, inline_only)
    return render_mathml(math, inline_only)


def restore_angle_brackets(match: re.Match[str]) -> str:
    """Inside <mtext>, the \\lt and \\gt put in for < and > read as the characters again."""
    text = ANGLE_MACRO.sub(lambda m: "&lt;" if m.group(1) == "l" else "&gt;", match.group(2))
    return match.group(1) + text + match.group(3)


STYLE_HTML = {
    "em": ("<em>", "</em>"),
    "strong": ("<strong>", "</strong>"),
    "code": ("<code>", "</code>"),
    "tt": ('<span class="tt">', "</span>"),
    "smallcaps": ('<span class="smallcaps">', "</span>"),
    "underline": ('<span class="underline">', "</span>"),
}


def segments_html(segments: Iterable[Segment], title: bool) -> str:
    parts = []
    for segment in segments:
        if isinstance(segment, Text):
            parts.append(str(escape(segment.text)))
        elif isinstance(segment, Math):
            parts.append(mathml(segment, inline_only=title))
        elif isinstance(segment, Link):
            label = segments_html(segment.children, title) or str(escape(segment.url))
            if title:  # a title is itself a link in lists: no link inside a link
                parts.append(label)
            else:
                parts.append(str(Markup('<a href="{}">').format(segment.url)) + label + "</a>")
        else:
            opening, closing = STYLE_HTML[segment.style]
            parts.append(opening + segments_html(segment.children, title) + closing)
    return "".join(parts)


def render_html(source: str | None) -> Markup:
    """Sanitized HTML for a page: math as MathML, emphasis, http(s) links."""
    if source is None:
        return Markup("")
    html = plain_html(source)
    return read_html(source, title=False) if html is None else html


def title_html(text: str | None) -> Markup:
    """A title or label for a heading, list or link: math inline, no links of its own."""
    if text is None:
        return Markup("")
    html = plain_html(text)
    return read_html(text, title=True) if html is None else html


def plain_html(text: str) -> Markup | None:
    """What read_html() gives a text without any markup, without its parse and nh3 pass (most
    of a table page's Python time): the text as nh3 writes it back, `>` and no-break spaces as entities. None when the text has markup or characters
    the HTML parser would change (controls, carriage returns). tests/test_throughput_markup.py
    checks both give the same HTML."""
    text = unicodedata.normalize("NFC", text)
    if has_markup(text):
        return None
    if not text.replace("\n", "").replace("\t", "").replace("\xa0", "").isprintable():
        return None
    return Markup(text.replace(">", "&gt;").replace("\xa0", "&nbsp;"))


# only texts with markup come here (most titles and many abstracts take plain_html), and an
# abstract's MathML can be long: the number kept per worker is bounded
@functools.lru_cache(maxsize=1024)
def read_html(source: str, title: bool) -> Markup:
    """The full reading: segments (parse) as HTML, then nh3."""
    return Markup(sanitize(segments_html(parse(source), title=title)))


def title_text(text: str | None) -> str:
    """A title as text (the page's <title>, a chart label)."""
    return plain_text(text)
