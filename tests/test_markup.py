"""loader.rules.markup: the one reading of an abstract's markup, for search (plain_text) and pages
(render_html, title_html). Each rule is checked on a real abstract from
tests/fixtures/real/markup/ (see SOURCE.md there); hostile input keeps its synthetic tests. Every
fast path of the reading gives what the plain reading it replaces gives, on every line of real
text (tests/real_texts.py) and on generated text."""

import functools
import html
import json
import re
import sqlite3
import unicodedata
from pathlib import Path

import pytest
from hypothesis import given
from hypothesis import strategies as st
from markupsafe import Markup

from loader.rules import markup
from loader.rules.markup import (
    plain_html,
    plain_text,
    read_html,
    render_html,
    title_html,
    title_text,
)

from .conftest import FIXTURES
from .html_tags import parse
from .real_text_shares import REAL_TEXT_SHARES
from .real_texts import REAL_TEXTS
from .text_properties import TEXT_PROPERTY

REAL = Path(__file__).resolve().parent / "fixtures" / "real" / "markup"
EXAMPLES = {
    record["rule"]: record
    for record in map(json.loads, (REAL / "abstracts.jsonl").read_text("utf-8").splitlines())
}
RAW_TEX = re.compile(r"\\[A-Za-z]")
# abstracts whose dollars are no math: a stray one, a price ("a cost of as low as $100")
MONEY = ("stray_dollar", "tex_single_quotes_and_money")


def real(rule):
    return EXAMPLES[rule]["abstract"]


def assert_safe(fragment):
    """Only the renderer's own tags; no event handlers, no script URLs."""
    allowed = markup.TEXT_TAGS | markup.MATH_TAGS
    for tag, attributes in parse(fragment).tags:
        assert tag in allowed, (tag, fragment)
        for name, value in attributes.items():
            assert not name.startswith("on"), (name, fragment)
            assert name in markup.ALLOWED_ATTRIBUTES.get(tag, set()) | {"rel"}, (tag, name)
            if name == "href":
                assert value.startswith(("http://", "https://")), (value, fragment)


def words_outside_math(fragment):
    without_math = re.sub(r"<math.*?</math>", " ", str(fragment), flags=re.DOTALL)
    return " ".join(html.unescape(re.sub(r"<[^>]+>", "", without_math)).split())


def plain_words_outside_math(source):
    segments = [markup.Text(" ") if isinstance(s, markup.Math) else s for s in markup.parse(source)]
    return " ".join(markup.segments_text(segments).split())


# one reading: the page and the search text say the same words ---------------------------------


@pytest.mark.parametrize("rule", sorted(EXAMPLES))
def test_page_and_search_text_read_the_same_words(rule):
    source = real(rule)
    assert words_outside_math(render_html(source)) == plain_words_outside_math(source)


@pytest.mark.parametrize("rule", sorted(EXAMPLES))
def test_real_abstracts_leave_no_tex_in_search_text_or_page(rule):
    source = real(rule)
    assert "\\" not in plain_text(source)
    fragment = render_html(source)
    assert not RAW_TEX.search(fragment), fragment
    has_math = any(isinstance(segment, markup.Math) for segment in markup.parse(source))
    assert ("<math" in fragment) == has_math == ("$" in source and rule not in MONEY)
    assert_safe(fragment)


# LaTeX in text --------------------------------------------------------------------------------


def test_accents_compose():
    source = real("accent")  # NeurIPS 2010: R\'enyi entropy
    assert "R\\'enyi" in source
    assert "Rényi entropy" in plain_text(source)
    assert "Rényi entropy" in render_html(source)


def test_latex_quotes_are_characters():
    source = real("latex_quotes")  # ICLR 2017: ``label leaking''
    assert "“label leaking” effect" in plain_text(source)
    assert "“label leaking” effect" in render_html(source)


def test_tex_single_quotes_are_typographic_around_math():
    """NeurIPS 2013 (Javanmard, Montanari): `active' ... ($\\ell_1$-regularized ...) ... the so
    called `irrepresentability' condition. Before, the first backtick and the next made a code
    span over the prose between them, its math shown raw."""
    source = real("tex_single_quotes_around_math")
    assert "`active'" in source and "$\\ell_1$" in source
    text = plain_text(source)
    for quoted in (
        "‘active’",
        "‘irrepresentability’",
        "‘Gauss-Lasso’",
        "‘generalized irrepresentability condition’",
    ):
        assert quoted in text
    assert "`" not in text
    fragment = render_html(source)
    assert "<code>" not in fragment and "$" not in fragment
    assert "‘active’" in fragment and fragment.count("<math") == source.count("$") // 2


def test_tex_single_quotes_beside_money():
    """IROS 2019: `anywhere deployable' ... as low as $100 ... `anywhere' deployment."""
    source = real("tex_single_quotes_and_money")
    text = plain_text(source)
    assert "an ‘anywhere deployable’ product" in text and "‘anywhere’ deployment" in text
    assert "as low as $100." in text
    assert "<code>" not in render_html(source) and "‘anywhere’" in render_html(source)


@pytest.mark.parametrize(
    "rule, shown",
    [
        ("tex_double_quotes_title", "“Factual” or “Emotional”: Stylized Image Captioning"),
        ("tex_single_quotes_in_title", "Illuminance of Faces ‘in the Wild’"),
    ],
)
def test_tex_quotes_in_real_titles(rule, shown):
    """ECCV 2018, CVPR 2018 titles."""
    title = EXAMPLES[rule]["title"]
    assert shown in title_text(title) and shown in title_html(title)


@pytest.mark.parametrize(
    "source, text",
    [
        ("a `chicken-and-egg' problem", "a ‘chicken-and-egg’ problem"),  # AAAI 2022
        ("`don't' stop", "‘don't’ stop"),  # an apostrophe inside stays one
        ("isn't it, the ``best''", "isn't it, the “best”"),
        ("Tram\\`er and Cornell`a", "Tramèr and Cornell`a"),  # accents are no quotes
        ("use `code` here", "use code here"),  # Markdown code stays code
    ],
)
def test_tex_quote_shapes(source, text):
    assert plain_text(source) == text


def test_two_closing_quotes_opening_a_phrase_open_it():
    # IJCAI 2021 (tests/fixtures/dumps/latex_titles/ijcai2021.json): '' for `` as well
    title = "Relational Gating for ''What If'' Reasoning"
    assert plain_text(title) == "Relational Gating for “What If” Reasoning"
    assert plain_text("the ``best'' and ''worst''") == "the “best” and “worst”"
    assert plain_text("don''t") == "don”t"  # inside a word: a closing quote as before


LATEX_TITLES = FIXTURES / "dumps" / "latex_titles"


def latex_titles_abstract(name):
    """The abstract of the file's last record (the one with doubled backslashes)."""
    return json.loads((LATEX_TITLES / name).read_text("utf-8"))[-1]["abstract"]


def test_doubled_backslashes_in_real_math_read_as_one():
    """ACML 2015 doubles every backslash of its math (`$\\\\hat{\\\\theta}$`), AISTATS 2025
    some: the macros are read, not the words 'hat' and 'theta'."""
    acml = latex_titles_abstract("acml2015.json")
    assert "$F_\\\\beta$" in acml and "$\\\\hat{\\\\theta}$" in acml
    text = plain_text(acml)
    assert "F_β" in text and "θ̂" in text and not re.search(r"\b(beta|theta|hat)\b", text)
    html = render_html(acml)
    assert "<mi>β</mi>" in html and "<mi>θ</mi>" in html and "\\" not in html
    aistats = plain_text(latex_titles_abstract("aistats2025.json"))
    assert "Î_V(X → Y)" in aistats and "rightarrow" not in aistats
    corl = plain_text(latex_titles_abstract("corl2024.json"))
    assert "SE(3)" in corl and "mathrm" not in corl


@pytest.mark.parametrize(
    "source, tex",
    [
        ("$\\\\alpha$", "\\alpha"),
        ("$a \\\\ b$", "a \\\\ b"),  # TeX's line break before a space stays one
        ("$\\\\\\alpha$", "\\\\\\alpha"),  # a line break, then a macro
        ("$\\hat I_{\\\\mathcal{V}}$", "\\hat I_{\\mathcal{V}}"),
    ],
)
def test_doubled_macro_backslashes_shapes(source, tex):
    assert markup.parse(source) == (markup.Math(tex, False),)


def test_backticks_around_math_are_no_code_span():
    """A stray TeX quote pairing with a later backtick (no closing ' between): the marks stay
    text, the math inside is math, never a code span showing raw TeX."""
    source = "the `true $\\ell_1$ norm and `x' values"
    assert not any(isinstance(s, markup.Styled) and s.style == "code" for s in markup.parse(source))
    fragment = render_html(source)
    assert "<code>" not in fragment and "<math" in fragment and "$" not in fragment
    assert render_html("use `code` here") == Markup("use <code>code</code> here")


QUOTE_PIECES = st.sampled_from(["`", "``", "'", "''", " ", "a", "Bo", "$x$", "$", ".", "\n"])


@TEXT_PROPERTY
@given(st.lists(QUOTE_PIECES, max_size=16).map("".join))
def test_no_code_span_ever_holds_math(source):
    for segment in markup.parse(source):
        if isinstance(segment, markup.Styled) and segment.style == "code":
            assert not any(isinstance(child, markup.Math) for child in segment.children)
            assert "$x$" not in markup.segments_text(segment.children)


def test_tilde_is_a_space_and_citations_are_dropped():
    source = real("tilde_citep")  # ICLR 2017: linear CCA~\citep{BachJordan05a} to
    text = plain_text(source)
    assert "linear CCA to nonlinear" in text
    assert "citep" not in text and "BachJordan" not in text and "~" not in text
    assert "citep" not in render_html(source)


def test_emphasis_macros():
    assert "<em>all</em> actions" in render_html(real("emph"))  # AISTATS 2024: \emph{all}
    assert "feature vectors of all actions" in plain_text(real("emph"))
    assert "<em>Harmonic-NAS</em>, a framework" in render_html(real("textit"))
    assert "<em>AdaRad</em>" in render_html(real("it_group"))  # ICLR 2017: {\it AdaRad}
    assert "“Adaptive Radial-Angular Gradient Descent” or AdaRad" in plain_text(real("it_group"))


def test_declaration_outside_a_group_leaves_no_name():
    source = real("bf_declaration")  # ICML 2016: y = f( \bf x^T \bf β^* )
    assert "\\bf x^T" in source
    assert "y = f( x^T β^* )" in plain_text(source)
    assert "bf" not in plain_text(source).split()


def test_url_macro_is_a_link_and_its_text():
    source = real("url")  # AISTATS 2024: \url{https://github.com/GNET}
    assert "available at https://github.com/GNET." in plain_text(source)
    links = [attributes for tag, attributes in parse(render_html(source)).tags if tag == "a"]
    assert links == [{"href": "https://github.com/GNET", "rel": "nofollow noopener noreferrer"}]


def test_markdown_strong():
    source = real("markdown_strong")  # ICML 2016: **expected** delays
    assert "on <strong>expected</strong> delays" in render_html(source)
    assert "only (mildly) on expected delays" in plain_text(source)


def test_markdown_and_html_emphasis_and_entities():
    # no abstract of the mirrored conferences uses these; the shapes the issue reports
    source = "__Strong__ and *em*, <em>tagged</em> &mdash; [code](https://a.example/x)"
    assert plain_text(source) == "Strong and em, tagged — code"
    assert render_html(source) == Markup(
        "<strong>Strong</strong> and <em>em</em>, <em>tagged</em> — "
        '<a href="https://a.example/x" rel="nofollow noopener noreferrer">code</a>'
    )


def test_escaped_characters_and_dashes():
    text = plain_text(r"achieving 21.74\% better, 5% of \$3 --- and 1--2")
    assert text == "achieving 21.74% better, 5% of $3 — and 1–2"


def test_author_definitions_are_applied_or_dropped():
    # the shape (no mirrored abstract has one): a preamble at the start of an abstract
    source = (
        r"\newcommand{\R}{\mathbb{R}} \newcommand{\ours}{\textsc{Ours}}"
        r"\newcommand{\norm}[1]{\lVert #1 \rVert} We use \ours{} in $\R^d$ with $\norm{x}$."
    )
    assert plain_text(source) == "We use Ours in R^d with x."
    fragment = render_html(source)
    assert "newcommand" not in fragment and "<mi>ℝ</mi>" in fragment
    assert '<span class="smallcaps">Ours</span>' in fragment
    assert "newcommand" not in plain_text(r"$\newcommand{\E}{\mathbb{E}}$ The mean $\E[x]$.")
    assert plain_text(r"$\newcommand{\E}{\mathbb{E}}$ The mean $\E[x]$.") == "The mean E[x]."
    assert plain_text(r"\def\ours{Ours} \ours is \ours{} and \ours.") == "Ours is Ours and Ours."


def test_unknown_macros_read_as_their_name_or_their_argument():
    source = r"We introduce \nameA{} (\fullname{}) \revise{the weights} \foo."
    assert plain_text(source) == "We introduce nameA (fullname) the weights foo."
    assert render_html(source) == Markup("We introduce nameA (fullname) the weights foo.")
    assert "<mi>dm</mi>" in render_html(r"$\dm_i$")


# math ------------------------------------------------------------------------------------------


def test_spaced_dollars_are_math():
    source = real("spaced_math")  # ICLR 2018: unit $ \ell^{2} $ row length
    assert "unit ℓ^2 row length" in plain_text(source)
    assert "unit <math" in render_html(source)


@pytest.mark.parametrize(
    "text", ["it costs $5 and more", "two $ signs $ with spaces", "from $5 to $10 a day"]
)
def test_money_stays_text(text):
    assert "<math" not in render_html(text)
    assert plain_text(text) == text


def test_stray_dollar_stays_text():
    source = real("stray_dollar")  # ICLR 2018: mAP of 54.4%$that is
    assert "54.4%$that" in plain_text(source)
    assert "<math" not in render_html(source)


@pytest.mark.parametrize(
    "rule, searchable, absent",
    [
        ("mathcal", "O(min (κ^3ϵ^-3", "mathcal"),  # AISTATS 2024: $\mathcal{O}(\min ...)$
        ("frac", "by a log(1/ϵ) factor", "frac"),  # AISTATS 2024: $\log(\frac{1}{\epsilon})$
        ("widetilde", "we require O(ε^-3) complexity", "widetilde"),
        ("textrm", "2^O(k^2 log k) poly(mn) time", "textrm"),  # ICML 2019: \textrm{poly}
        ("text_in_math", "require Ω(poly(1/ε)) neurons", "text"),
        ("nicefrac", "running time of O(n^2/ϵ^2)", "nicefrac"),
        ("Tilde", "regret scaling as O(Ψ d √(T))", "Tilde"),
    ],
)
def test_math_reads_as_searchable_text(rule, searchable, absent):
    text = plain_text(real(rule))
    assert searchable in text
    assert absent not in text


@pytest.mark.parametrize(
    "rule, element",
    [
        ("nicefrac", "<mfrac>"),
        ("Tilde", "<mover>"),
        ("textrm", "<mtext>poly</mtext>"),
        ("text_in_math", "<mtext>poly</mtext>"),
        ("widetilde", "<mover>"),
    ],
)
def test_text_and_accent_macros_inside_math_render(rule, element):
    assert element in render_html(real(rule))


def test_text_styles_inside_math_render():
    fragment = render_html(r"$\textit{a}$ $\bf x$ $\textsc{b}$ $\textbf{c}$")
    assert not RAW_TEX.search(fragment)
    assert 'mathvariant="italic">a<' in fragment and 'mathvariant="bold">x<' in fragment


def test_searching_textrm_finds_nothing():
    sources = [real(rule) for rule in EXAMPLES]
    assert any("textrm" in source for source in sources)
    assert not any("textrm" in plain_text(source) for source in sources)


def test_inline_and_display_math_become_mathml():
    fragment = render_html(r"accuracy $1/\varepsilon$ in $\mathbb{R}^d$; $$\sum_{i=1}^N x_i$$")
    assert fragment.count("<math") == 3
    assert 'display="inline"' in fragment and 'display="block"' in fragment
    assert "<msup>" in fragment and "ℝ" in fragment
    assert_safe(fragment)


def test_less_than_inside_math_is_an_operator_not_a_tag():
    fragment = render_html(r"for $0<\alpha<1$ we")
    assert fragment.count("<mo>&lt;</mo>") == 2
    assert_safe(fragment)


@pytest.mark.parametrize("tex", [r"\left( x", "a^{", r"\frac{1}{", r"\begin{matrix} a", "x_"])
def test_math_latex2mathml_cannot_parse_is_shown_as_code(tex):
    fragment = render_html(f"see ${tex}$ here")
    assert "<math" not in fragment
    assert fragment == Markup('see <code class="tex" title="TeX">{}</code> here').format(f"${tex}$")


# sizes ------------------------------------------------------------------------------------------


@pytest.mark.parametrize(
    "tex",
    [
        r"\hspace{100000em}",
        r"\kern100000em",
        r"\mspace{1000000mu}",
        r"\rule{100000em}{100000em}",
        r"\hspace{-100000em}",
        r"\hspace{1e9pt}",
    ],
)
def test_math_sizes_are_clamped(tex):
    fragment = render_html(f"a ${tex}$ b")
    for _, attributes in parse(fragment).tags:
        for name in ("width", "height", "depth", "lspace", "rspace", "minsize", "maxsize"):
            if name in attributes:
                value = re.fullmatch(r"(-?[\d.]+)em", attributes[name])
                assert value and abs(float(value.group(1))) <= 8, (name, attributes[name])


def test_ordinary_sizes_are_kept():
    fragment = render_html(r"$\big( x \Big) \quad y \, z$")
    assert 'minsize="1.2em"' in fragment and 'width="1em"' in fragment


@pytest.mark.parametrize(
    "attribute, value, expected",
    [
        ("width", "100000em", "8em"),
        ("width", "-3em", "-3em"),
        ("height", "50ex", "4em"),
        ("maxsize", "1.623em", "1.62em"),
        ("lspace", "0.278em", "0.278em"),
        ("width", "18mu", "1em"),
        ("mathsize", "300%", "3em"),
        ("width", "calc(100vw)", None),
        ("width", "thick", "thick"),
        ("scriptlevel", "-100", "-1"),
        ("scriptlevel", "x", None),
        ("mathvariant", "bold", "bold"),
    ],
)
def test_size_filter(attribute, value, expected):
    assert markup.filter_attribute("mspace", attribute, value) == expected


# titles -----------------------------------------------------------------------------------------


def test_titles_render_math_inline_and_read_as_text():
    # NeurIPS 2018 title
    title = (
        "Doubly Robust Bayesian Inference for Non-Stationary Streaming Data with "
        r"$\beta$-Divergences"
    )
    fragment = title_html(title)
    assert "with <math" in fragment and "<mi>β</mi>" in fragment and "$" not in fragment
    assert title_text(title).endswith("with β-Divergences")


def test_titles_have_no_links_and_no_block_math():
    fragment = title_html(r"See https://a.example/x and [this](https://b.example) $$x$$")
    assert "<a" not in fragment and 'display="block"' not in fragment
    assert "https://a.example/x" in fragment


# hostile input -----------------------------------------------------------------------------------


def test_script_in_text_stays_text():
    fragment = render_html("before <script>alert(1)</script> after")
    assert "<script" not in fragment
    assert "<script>alert(1)</script>" in "".join(parse(fragment).text)


def test_event_handler_markup_is_escaped():
    fragment = render_html('<img src=x onerror="alert(1)"> and <a href="javascript:x">y</a>')
    assert "<img" not in fragment and "<a " not in fragment
    assert_safe(fragment)


def test_script_inside_math_text_stays_inert():
    fragment = render_html(r"$\text{<script>alert(1)</script>}$ and $\mbox{<b>x</b>}$")
    assert "<script" not in fragment and "<b>" not in fragment
    assert "<mtext>&lt;script&gt;alert(1)&lt;/script&gt;</mtext>" in fragment
    assert_safe(fragment)


def test_math_links_and_styles_are_removed():
    fragment = render_html(r"$\href{javascript:alert(1)}{x} \style{color:red}{y} \class{a}{z}$")
    assert "javascript" not in fragment and "style=" not in fragment and "class=" not in fragment
    assert_safe(fragment)


@pytest.mark.parametrize(
    "text",
    [
        r"\url{javascript:alert(1)}",
        r"\url{JaVaScRiPt:alert(1)}",
        r"\url{ javascript:alert(1)}",
        r"\url{data:text/html,<script>alert(1)</script>}",
        r"\href{javascript:alert(1)}{click me}",
        "[click me](javascript:alert(1))",
        "[relative](/x/y)",
        r"\url{//evil.example/x}",
    ],
)
def test_unsafe_urls_never_become_links(text):
    fragment = render_html(text)
    assert "<a" not in fragment and "<script" not in fragment
    assert_safe(fragment)


def test_bare_urls_become_links_without_trailing_punctuation():
    fragment = render_html("Code: https://github.com/gaosh/ToMoE. Also (https://a.example/b).")
    hrefs = [attributes["href"] for tag, attributes in parse(fragment).tags if tag == "a"]
    assert hrefs == ["https://github.com/gaosh/ToMoE", "https://a.example/b"]


def test_unclosed_and_deeply_nested_macros():
    assert "never closed" in render_html(r"\emph{never closed and \textbf{also")
    fragment = render_html(r"\emph{" * 300 + "x" + "}" * 300)
    assert "x" in fragment
    assert_safe(fragment)
    assert plain_text(r"\emph{" * 300 + "x" + "}" * 300) == "x"


def test_plain_abstract_is_only_escaped():
    text = 'Plain text with "quotes", ampersands & <angle> brackets.'
    assert render_html(text) == Markup(
        'Plain text with "quotes", ampersands &amp; &lt;angle&gt; brackets.'
    )
    assert plain_text(text) == text


def test_every_seed_abstract_renders_safely(query):
    abstracts = [row[0] for row in query("select abstract from papers")]
    assert len(abstracts) > 50
    math_papers = 0
    for abstract in abstracts:
        fragment = render_html(abstract)
        assert_safe(fragment)
        assert not RAW_TEX.search(fragment) and "\\" not in plain_text(abstract)
        math_papers += "<math" in fragment
    assert math_papers >= 5


def test_none_and_markup_type():
    assert isinstance(render_html("x"), Markup)
    assert render_html(None) == "" and plain_text(None) == "" and title_html(None) == ""


MARKUP_PIECES = st.sampled_from(
    [
        "$", "$$", "\\", "{", "}", "*", "**", "__", "`", "``", "''", "[", "]", "(", ")", "<", ">",
        "&", "&mdash;", '"', "'", "<script>", "</script>", "<em>", "</em>", "javascript:",
        "https://", "\\url{", "\\href{", "\\emph{", "\\text{", "\\frac{", "\\newcommand{\\a}{",
        "\\def\\b{", "\\hspace{", "9999em", "^", "_", "%", "~", "onerror=", "<img src=x ",
        "<math>", "<mi>", " ", "\n", "x", "α", "\ue000", "\ue100",
    ]
)  # fmt: skip


@TEXT_PROPERTY
@given(st.lists(MARKUP_PIECES | st.text(max_size=5), max_size=40).map("".join))
def test_any_input_renders_to_allowed_markup_and_plain_text(text):
    fragment = render_html(text)
    assert_safe(fragment)
    assert "<script" not in fragment.lower()
    assert isinstance(plain_text(text), str)
    assert_safe(title_html(text))


# fast paths: each gives what the plain reading it replaces gives, on every line of real text
# (tests/real_texts.py) and on generated text made of the characters the fast path turns on ------


def latex_regions_word_by_word(source):
    """The reading latex_regions replaced: every word looked at in turn."""
    if not markup.LATEX_MARK.search(source):
        return [(False, source)]
    regions, depth = [], 0
    tokens = re.split(r"(\s+)", source)
    for index, token in enumerate(tokens):
        following = tokens[index + 1] if index + 1 < len(tokens) else ""
        if token.isspace() or not token:
            is_latex = depth > 0 or (bool(regions) and regions[-1][0] and following[:1] == "{")
        else:
            is_latex = depth > 0 or bool(markup.LATEX_MARK.search(token))
            depth = max(0, depth + token.count("{") - token.count("}"))
        if regions and regions[-1][0] == is_latex:
            regions[-1][1] += token
        else:
            regions.append([is_latex, token])
    return regions


def nonempty(regions):
    return [(bool(is_latex), part) for is_latex, part in regions if part]


# the pattern latex_words replaced: a whole word with a LaTeX mark, tried at every word
LATEX_WORD = re.compile(r"(?<!\S)\S*?(?:[\\{}~`]|--|'')\S*")


def check_latex_regions_and_words(source):
    assert nonempty(markup.latex_regions(source)) == nonempty(latex_regions_word_by_word(source))
    assert "".join(part for _, part in markup.latex_regions(source)) == source
    assert list(markup.latex_words(source)) == [w.span() for w in LATEX_WORD.finditer(source)]


@REAL_TEXT_SHARES
def test_latex_regions_and_words_equal_the_word_by_word_readings_on_real_text(share):
    texts = REAL_TEXTS[::share]
    assert len(texts) > 1000 // share
    assert len([t for t in texts if markup.LATEX_MARK.search(t)]) > 100 // share
    assert len([t for t in texts if LATEX_WORD.search(t)]) > 100 // share
    for source in texts:
        check_latex_regions_and_words(source)


@TEXT_PROPERTY
@given(st.text(alphabet=st.sampled_from(list("ab\\{}~-'` \t\n\u00a0\u3000$x")), max_size=60))
def test_latex_regions_and_words_equal_the_word_by_word_readings(source):
    check_latex_regions_and_words(source)


@functools.cache
def protected_texts():
    """The texts markdown-it reads in parse(): math, escapes and quotes set aside."""
    protected = []
    for source in REAL_TEXTS:
        normal = unicodedata.normalize("NFC", source)
        normal = markup.apply_definitions(markup.PLACEHOLDER.sub("\ufffd", html.unescape(normal)))
        protected.append(markup.set_aside(normal))
    return protected


def markdown_tokens(source):
    return [(t.type, t.content) for t in markup.MARKDOWN.parseInline(source)[0].children or []]


def check_text_without_markdown_marks(source):
    if not markup.has_markdown_mark(source):
        assert markdown_tokens(source) == ([("text", source)] if source else []), source


@REAL_TEXT_SHARES
def test_text_without_markdown_marks_is_one_text_token_on_real_text(share):
    for source, _ in protected_texts()[::share]:
        check_text_without_markdown_marks(source)


@TEXT_PROPERTY
@given(
    st.text(
        alphabet=st.sampled_from(list("ab *_`[]()<>&#;!\\$~-'\"\t\n\r\0\u00a0:/.h\ue100")),
        max_size=40,
    )
)
def test_text_without_markdown_marks_is_one_text_token(source):
    check_text_without_markdown_marks(source)


@REAL_TEXT_SHARES
def test_cached_latex_readings_equal_fresh_ones_on_real_text(share):
    """read_repeated_latex_region and math_text are pure: a cached reading is a fresh one
    (on a share of the real texts)."""
    texts = protected_texts()[::share]
    regions = {
        part
        for source, _ in texts
        for is_latex, part in markup.latex_regions(source)
        if is_latex and not markup.PLACEHOLDER.search(part)
    }
    assert len(regions) > 50 // share
    for part in regions:
        assert markup.read_repeated_latex_region(part) == tuple(markup.read_latex_region(part, ()))
    maths = {p.tex for _, pieces in texts for p in pieces if isinstance(p, markup.Math)}
    assert len(maths) > 50 // share
    for tex in maths:
        assert markup.math_text(tex) == markup.math_text.__wrapped__(tex)


def parse_without_fast_paths(source):
    """parse() with every Markdown text read by markdown-it and no cached reading."""
    original = (
        markup.has_markdown_mark,
        markup.reads_as_lines,
        markup.simple_markdown_segments,
        markup.read_repeated_latex_region,
        markup.math_text,
    )
    specials_table = markup.WALKER_CONTEXT.test_for_specials
    try:
        markup.has_markdown_mark = lambda _: True
        markup.reads_as_lines = lambda _: False
        markup.simple_markdown_segments = lambda text, pieces: None
        markup.read_repeated_latex_region = lambda part: markup.read_latex_region(part, ())
        markup.math_text = markup.math_text.__wrapped__
        del markup.WALKER_CONTEXT.test_for_specials  # pylatexenc's own method again
        return markup.parse.__wrapped__(source)
    finally:
        (
            markup.has_markdown_mark,
            markup.reads_as_lines,
            markup.simple_markdown_segments,
            markup.read_repeated_latex_region,
            markup.math_text,
        ) = original
        markup.WALKER_CONTEXT.test_for_specials = specials_table


def takes_simple_markdown(source):
    """Whether parse(source) reads its Markdown with simple_markdown_segments."""
    source = markup.PLACEHOLDER.sub("\ufffd", html.unescape(unicodedata.normalize("NFC", source)))
    protected, pieces = markup.set_aside(markup.apply_definitions(source))
    return markup.has_markdown_mark(protected) and (
        markup.simple_markdown_segments(protected, pieces) is not None
    )


@REAL_TEXT_SHARES
def test_parse_of_real_text_is_unchanged_by_the_fast_paths(share):
    """parse() and its plain text against the same read through markdown-it and pylatexenc for
    every source (a share of them), caches off."""
    sources = REAL_TEXTS[::share]
    assert len([t for t in sources if takes_simple_markdown(t)]) > 20 // share
    differ = []
    for source in sources:
        fast = markup.parse.__wrapped__(source)
        slow = parse_without_fast_paths(source)
        if (fast, markup.segments_text(fast)) != (slow, markup.segments_text(slow)):
            differ.append(source)
    assert differ == []


MARKDOWN_PIECES = st.lists(
    st.sampled_from(
        ["a", "Bc", "1", " ", " ", "*", "**", "***", "`", "``", ".", ",", ";", ":", "(", ")"]
        + ["$k$", "-", "é", "_", "\xa0", "!", "\t", "\\emph{x}", "'", '"', "\ue100", "&amp;"]
    ),
    max_size=16,
).map("".join)
# emphasis and code shaped as abstracts write them, and bent out of the simple shapes
EMPHASIZED_WORDS = st.lists(
    st.tuples(
        st.sampled_from([" ", " ", "", "(", "\xa0", "a", "\t"]),
        st.sampled_from(["*", "**", "`", "***", ""]),
        st.sampled_from(["a", "Bc", "1", "x-y", "$k$", "\\emph{x}", "é", "e.g.", " a", "a b "]),
        st.sampled_from(["*", "**", "`", "***", ""]),
        st.sampled_from(["", ".", ",", ";", ":", "!", ")", "tate", "-x", "é", "*", "`"]),
    ).map("".join),
    min_size=1,
    max_size=5,
).map("".join)


@TEXT_PROPERTY
@given(MARKDOWN_PIECES)
def test_simple_markdown_reads_as_markdown_it(source):
    assert markup.parse.__wrapped__(source) == parse_without_fast_paths(source)


@TEXT_PROPERTY
@given(EMPHASIZED_WORDS)
def test_simple_markdown_of_emphasized_words_reads_as_markdown_it(source):
    assert markup.parse.__wrapped__(source) == parse_without_fast_paths(source)


# wrapped lines, underscores, ampersands and brackets as abstracts hold them, and bent into
# emphasis, entities and links
LINE_PIECES = st.lists(
    st.sampled_from(
        ["a", "Bc", "1", " ", "  ", "\t", "\n", "\n ", " \n", "_", "__", "&", "&amp;", "&#1;"]
        + ["&x;", "[", "]", "](", "[1]", "(", ")", "\ue100", "$k$", "\\emph{x}", "é", "-", "--"]
        + [".", "!", "*", "\\_", "{", "}", "~", "http://a.b/c"]
    ),
    max_size=16,
).map("".join)


@TEXT_PROPERTY
@given(LINE_PIECES)
def test_lines_read_as_markdown_it(source):
    assert markup.parse.__wrapped__(source) == parse_without_fast_paths(source)


def takes_lines(source):
    """Whether parse(source) reads its Markdown with line_segments."""
    source = markup.PLACEHOLDER.sub("\ufffd", html.unescape(unicodedata.normalize("NFC", source)))
    protected, _ = markup.set_aside(markup.apply_definitions(source))
    return markup.has_markdown_mark(protected) and markup.reads_as_lines(protected)


def test_lines_are_taken_where_they_are_meant_to_be():
    for source in ["a\nb", "a  \n\t b", "T_1 and $x$_1", "R&D [12]", "a [b] (c)", "[1]\n[2]"]:
        assert takes_lines(source), source
    for source in ["_a_", "a _b", "b_", "[a](http://b.c)", "&copy; a", "*a*\nb", "a\rb", "<b>"]:
        assert not takes_lines(source), source


@REAL_TEXT_SHARES
def test_specials_table_finds_what_pylatexenc_finds(share):
    """SpecialsTable against LatexContextDb.test_for_specials at every character of the real
    texts (a share of them), and at every mark of the specials themselves."""
    context = markup.WALKER_CONTEXT
    table = markup.SpecialsTable(context)
    specials = [c for category in context.category_list for c in context.d[category]["specials"]]
    texts = REAL_TEXTS[::share] + ["".join(specials), " ".join(specials), "---!``''?`~&-"]
    for text in texts:
        for position in range(len(text)):
            found = table(text, position)
            assert found is type(context).test_for_specials(context, text, position)


def test_simple_markdown_is_taken_where_it_is_meant_to_be():
    """The generated texts above reach it: the shapes it takes and some it refuses."""
    for source in ["with **S**tate-of-the-art.", "a *b c*, `code` and *d*e", "*a*"]:
        assert takes_simple_markdown(source), source
    for source in ["a*b*", "*a *", "***a***", "` a `", "*a*!", "*a* _b_", "*é*", "*a"]:
        assert not takes_simple_markdown(source), source


# the patterns markup.py had before its branches were rewritten to start with a literal
MATH_OR_ESCAPE_BRANCHES_GROUPED = re.compile(
    r"""
      (?P<display>\$\$)
    | (?P<inline>\$)
    | \\\[(?P<bracket>.{1,2000}?)\\\]
    | \\\((?P<paren>.{1,2000}?)\\\)
    | (?P<open_quote>``(?=\S))
    | (?P<close_quote>'')
    | (?P<escape>\\[^A-Za-z0-9\s])
    """,
    re.VERBOSE | re.DOTALL,
)
MARKUP_MARK_ONE_PATTERN = re.compile(r"[$\\*_`\[<&~{}\ue100-\uf7ff]|--|''|https?://")
# the character-class searches holds_any replaced (and LATEX_MARK as it was before its branches
# were each made a literal)
MARKDOWN_MARK = re.compile(r"[*_`\[\]<&\n\r\0]")
LATEX_MARK = re.compile(r"[\\{}~]|--|''|`")


def matches(pattern, source):
    found, position = [], 0
    while match := pattern.search(source, position):
        # set_aside reads the span, the branch and the math of \[...\] and \(...\)
        found.append((match.span(), match.lastgroup, match["bracket"], match["paren"]))
        position = max(match.end(), position + 1)
    return found


def markup_one_needle_at_a_time(source):
    """has_markup as it was, but for URLs: every needle over the whole text."""
    marks = [*markup.MARKUP_CHARACTERS, "--", "''"]
    return any(mark in source for mark in marks) or bool(markup.PLACEHOLDER.search(source))


def check_marks(source):
    assert matches(markup.MATH_OR_ESCAPE, source) == matches(
        MATH_OR_ESCAPE_BRANCHES_GROUPED, source
    ), source
    assert markup.has_markup(source) == bool(MARKUP_MARK_ONE_PATTERN.search(source)), source
    assert markup.has_markdown_mark(source) == bool(MARKDOWN_MARK.search(source)), source
    assert markup.has_latex_mark(source) == bool(LATEX_MARK.search(source)), source
    spans = [m.span() for m in markup.LATEX_MARK.finditer(source)]
    assert spans == [m.span() for m in LATEX_MARK.finditer(source)], source
    doubled = "--" in source or "''" in source
    assert markup.holds_doubled(source, markup.DOUBLED_MARKS) == doubled, source
    url = "http://" in source or "https://" in source
    assert markup.has_markup(source) == bool(markup_one_needle_at_a_time(source) or url), source


@REAL_TEXT_SHARES
def test_marks_are_found_as_the_patterns_found_them_on_real_text(share):
    texts = REAL_TEXTS[::share]
    assert sum(markup.has_markdown_mark(t) for t in texts) > 100 // share
    assert (
        sum("--" in s for s in texts) > 50 // share and sum("''" in s for s in texts) > 20 // share
    )
    assert sum("-" in s and not markup.has_markup(s) for s in texts) > 500 // share
    for source in texts:
        check_marks(source)
    for source, _ in protected_texts()[::share]:  # with placeholders: not ASCII
        check_marks(source)


@TEXT_PROPERTY
@given(st.text(alphabet=st.sampled_from(list("$$\\[]()`' a1\n-htps:/\ue100")), max_size=40))
def test_math_and_escape_marks_are_found_as_the_patterns_found_them(source):
    check_marks(source)


@TEXT_PROPERTY
@given(st.text(alphabet=st.sampled_from(list("ab *_`[]<>&\n\r\0\\{}~-'$\ue100é")), max_size=40))
def test_markdown_and_latex_marks_are_found_as_the_patterns_found_them(source):
    check_marks(source)


@TEXT_PROPERTY
@given(st.lists(st.sampled_from([*"-'a :/ ", "http://", "https:/"]), max_size=20).map("".join))
def test_doubled_marks_and_urls_are_found_as_the_needles_found_them(source):
    check_marks(source)


def read_escaped_word(part):
    return markup.split_text(markup.LATEX_ESCAPE.sub(r"\1", part), [])


def test_escaped_words_read_as_pylatexenc_reads_them_on_real_text():
    regions = {
        part
        for source in REAL_TEXTS
        for is_latex, part in markup.latex_regions(source)
        if is_latex and markup.ESCAPED_WORD.fullmatch(part)
    }
    assert len(regions) > 20
    assert [p for p in regions if read_escaped_word(p) != markup.read_latex_region(p, [])] == []


@TEXT_PROPERTY
@given(
    st.lists(
        st.sampled_from([*"aZ09.,;:()", "\\%", "\\&", "\\$", "\\#", "\\_"]), min_size=1, max_size=12
    ).map("".join)
)
def test_escaped_words_read_as_pylatexenc_reads_them(part):
    if markup.ESCAPED_WORD.fullmatch(part):
        assert read_escaped_word(part) == markup.read_latex_region(part, [])


def test_every_character_split_splits_at_but_the_space_is_unprintable():
    """collapse_spaces returns printable text without double, leading or trailing spaces
    as it is."""
    characters = map(chr, range(0x110000))
    assert [c for c in characters if c.isspace() and c != " " and c.isprintable()] == []


def test_collapse_spaces_equals_split_and_join_on_real_text():
    """Also asked again about a text, in any order: the text last found collapsed is told by
    identity, and every answer is split and join's."""
    texts = REAL_TEXTS + [t + "  x" for t in REAL_TEXTS[:200]]
    for source in texts + texts[::-1]:
        for _ in range(2):
            assert markup.collapse_spaces(source) == " ".join(source.split())
    collapsed = " ".join(REAL_TEXTS[-1].split())
    assert markup.collapse_spaces(collapsed) is collapsed
    assert markup.LAST_COLLAPSED[1] is collapsed
    source = "  a   b    c  "
    made = markup.collapse_spaces(source)  # a text made collapsed is remembered, and its source
    assert made == "a b c" and markup.collapse_spaces(made) is made
    assert markup.collapse_spaces(source) is made


@TEXT_PROPERTY
@given(
    st.text(
        alphabet=st.sampled_from(list("ab \t\n\r\u00a0\u2003\u200b\u3000\x1c\x85")), max_size=30
    )
)
def test_collapse_spaces_equals_split_and_join(source):
    assert markup.collapse_spaces(source) == " ".join(source.split())


def restore_every_time(text, pieces, as_source=False):
    """restore() without its shortcut: a pass over the text whatever the pieces."""

    def back(match):
        piece = pieces[ord(match.group(0)) - markup.PLACEHOLDER_BASE]
        if isinstance(piece, markup.Math):
            if not as_source:
                return match.group(0)
            return f"$${piece.tex}$$" if piece.display else f"${piece.tex}$"
        return piece

    return markup.PLACEHOLDER.sub(back, text)


def test_restore_and_split_text_shortcuts_on_real_text():
    """Without pieces a text has no placeholder (split_text does not split it), and restore
    gives what its full pass gives, also with only math pieces (kept as placeholders)."""
    protected = protected_texts()
    assert sum(1 for _, pieces in protected if not pieces) > 100
    only_math = [(t, p) for t, p in protected if p and all(isinstance(x, markup.Math) for x in p)]
    assert len(only_math) > 20
    for protected_text, pieces in protected:
        for as_source in (False, True):
            assert markup.restore(protected_text, pieces, as_source) == restore_every_time(
                protected_text, pieces, as_source
            )
        assert pieces or not markup.PLACEHOLDER.search(protected_text)


def check_printable(source):
    assert markup.is_printable(source) == source.isprintable(), source


def test_printable_told_by_translate_on_real_text():
    for source in REAL_TEXTS:
        check_printable(source)


@TEXT_PROPERTY
@given(st.text(alphabet=st.sampled_from(list("a \t\n\x00\x1f\x7f~\x85é\u200b")), max_size=20))
def test_printable_told_by_translate(source):
    check_printable(source)


# the pattern simple_markdown_segments found its marks with
MARK_RUN = re.compile(r"\*+|`+")


@REAL_TEXT_SHARES
def test_mark_runs_equal_the_pattern_on_real_text(share):
    texts = REAL_TEXTS[::share]
    assert sum(len(MARK_RUN.findall(source)) > 1 for source in texts) > 20 // share
    for source in texts:
        assert markup.mark_runs(source) == [m.span() for m in MARK_RUN.finditer(source)], source


@TEXT_PROPERTY
@given(st.text(alphabet=st.sampled_from(list("*`a ")), max_size=20))
def test_mark_runs_equal_the_pattern(source):
    assert markup.mark_runs(source) == [m.span() for m in MARK_RUN.finditer(source)]


def split_text_as_it_was(text, pieces):
    """split_text with every text split at placeholders and searched for URLs."""
    segments = []
    for part in re.split("([\ue100-\uf7ff])", text) if pieces else [text]:
        if not part:
            continue
        if markup.PLACEHOLDER.fullmatch(part):
            piece = pieces[ord(part) - markup.PLACEHOLDER_BASE]
            segments.append(piece if isinstance(piece, markup.Math) else markup.Text(piece))
            continue
        position = 0
        for url in markup.BARE_URL.finditer(part):
            segments.append(markup.Text(part[position : url.start()]))
            segments.append(markup.Link(url.group(0), ()))
            position = url.end()
        segments.append(markup.Text(part[position:]))
    return [segment for segment in segments if segment != markup.Text("")]


def check_split_text(source):
    protected, pieces = markup.set_aside(source)
    for reading in (markup.restore(protected, pieces), protected, source):
        assert markup.split_text(reading, pieces) == split_text_as_it_was(reading, pieces), source


@REAL_TEXT_SHARES
def test_split_text_skipping_ascii_and_colonless_text_on_real_text(share):
    texts = REAL_TEXTS[::share]
    assert sum(markup.set_aside(s)[1] != [] and s.isascii() for s in texts) > 100 // share
    assert sum("http" in s for s in texts) > 20 // share
    for source in texts:
        check_split_text(source)


@TEXT_PROPERTY
@given(
    st.lists(
        st.sampled_from([*"a :/.$\\`'", "$x$", "\\$", "``a''", "http://a.b", "https://x", "é"]),
        max_size=16,
    ).map("".join)
)
def test_split_text_skipping_ascii_and_colonless_text(source):
    check_split_text(source)


def set_aside_searching_from_each_end(text):
    """set_aside with the pattern searched from where the last match ended."""
    original = markup.first_mark
    try:
        markup.first_mark = lambda text, position: position
        return markup.set_aside(text)
    finally:
        markup.first_mark = original


def check_set_aside(source):
    assert markup.set_aside(source) == set_aside_searching_from_each_end(source), source
    for match in markup.MATH_OR_ESCAPE.finditer(source):
        assert source[match.start()] in markup.MATH_OR_ESCAPE_STARTS, source


@REAL_TEXT_SHARES
def test_set_aside_skipping_to_the_first_mark_on_real_text(share):
    texts = REAL_TEXTS[::share]
    assert sum(len(markup.set_aside(s)[1]) > 1 for s in texts) > 100 // share
    for source in texts:
        check_set_aside(source)


@TEXT_PROPERTY
@given(
    st.lists(
        st.sampled_from([*"a $\\`'()[]{}\n.", "$$", "``", "''", "\\(", "\\)", "\\[", "\\]", "é"]),
        max_size=20,
    ).map("".join)
)
def test_set_aside_skipping_to_the_first_mark(source):
    check_set_aside(source)


def check_definition_words(source):
    found = markup.holds_definition_word(source)
    assert found == markup.holds_any(source, markup.DEFINITION_WORDS), source
    if markup.DEFINITION.search(source):
        assert found, source


def test_definition_words_found_at_each_backslash_on_real_text():
    assert sum("\\" in s for s in REAL_TEXTS) > 100
    assert any(markup.holds_definition_word(s) for s in REAL_TEXTS)
    for source in REAL_TEXTS:
        check_definition_words(source)


@TEXT_PROPERTY
@given(
    st.lists(
        st.sampled_from(
            [*markup.DEFINITION_WORDS, "\\", "\\\\", "new", "command", "def", "a", "{", "}"]
            + ["\\R", "$", " ", "re", "*"]
        ),
        max_size=10,
    ).map("".join)
)
def test_definition_words_found_at_each_backslash(source):
    check_definition_words(source)


# plain_html: the fast path for texts without markup gives the full reading's HTML, on every
# real, seed and hostile title and abstract --------------------------------------------------

CRAFTED = [
    'Say "no" to it',
    "It's 3 > 2 and 2 < 3",
    "a\u00a0b",
    "line\nbreak\tand tab",
    "carriage\r\nreturn",
    "nul\x00byte",
    "bell\x07",
    "e\u0301 composed",
    "emoji \U0001f600 and \ufffd",
    "&amp; an entity",
    "<script>alert(1)</script>",
    "$x^2$ math",
    "",
    " ",
]


def texts(seed_catalog):
    with sqlite3.connect(seed_catalog) as connection:
        rows = connection.execute("select label, title, abstract from papers").fetchall()
    found = [text for row in rows for text in row if isinstance(text, str)]
    for path in [*FIXTURES.rglob("*.jsonl"), *FIXTURES.rglob("*.json")]:
        for line in path.read_text(encoding="utf-8", errors="replace").splitlines():
            try:
                record = json.loads(line)
            except ValueError:
                continue
            if isinstance(record, dict):
                found += [
                    record[k] for k in ("title", "abstract") if isinstance(record.get(k), str)
                ]
    # a lone surrogate never reaches a page: the loader stores UTF-8
    return [text for text in found + CRAFTED if is_utf8(text)]


def is_utf8(text):
    try:
        text.encode("utf-8")
    except UnicodeEncodeError:
        return False
    return True


def test_plain_texts_render_as_markup_renders_them(seed_catalog):
    checked = 0
    for text in texts(seed_catalog):
        fragment = plain_html(text)
        if fragment is not None:
            checked += 1
            assert fragment == read_html(text, title=True) == read_html(text, title=False), repr(
                text
            )
        assert title_html(text) == read_html(text, title=True), repr(text)
        assert render_html(text) == read_html(text, title=False), repr(text)
    assert checked > 100


@pytest.mark.parametrize("text", ["$x$", "a <b>", "a & b", "x\ry", "x\x00y", "*em*", "http://a.b"])
def test_texts_with_markup_or_odd_characters_take_the_full_reading(text):
    assert plain_html(text) is None


@pytest.mark.parametrize("tex", ["n", r"\mathcal{O}(n \log n)", r"\frac{a}{b", "x" * 81])
@pytest.mark.parametrize("display", [False, True])
@pytest.mark.parametrize("inline_only", [False, True])
def test_a_formula_kept_reads_as_rendered_afresh(tex, display, inline_only):
    math = markup.Math(tex, display)
    for _ in range(2):  # the second time from what the worker kept, for a short formula
        assert markup.mathml(math, inline_only) == markup.render_mathml(math, inline_only)
