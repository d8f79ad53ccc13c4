"""loader.rules.markup: the one reading of an abstract's markup, for search (plain_text) and pages
(render_html, title_html). Each rule is checked on a real abstract from
tests/fixtures/real/markup/ (see SOURCE.md there); hostile input keeps its synthetic tests."""

import html
import json
import re
from pathlib import Path

import pytest
from hypothesis import given, settings
from hypothesis import strategies as st
from markupsafe import Markup

from loader.rules import markup
from loader.rules.markup import plain_text, render_html, title_html, title_text

from .html_tags import parse

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


def test_backticks_around_math_are_no_code_span():
    """A stray TeX quote pairing with a later backtick (no closing ' between): the marks stay
    text, the math inside is math, never a code span showing raw TeX."""
    source = "the `true $\\ell_1$ norm and `x' values"
    assert not any(isinstance(s, markup.Styled) and s.style == "code" for s in markup.parse(source))
    fragment = render_html(source)
    assert "<code>" not in fragment and "<math" in fragment and "$" not in fragment
    assert render_html("use `code` here") == Markup("use <code>code</code> here")


QUOTE_PIECES = st.sampled_from(["`", "``", "'", "''", " ", "a", "Bo", "$x$", "$", ".", "\n"])


@settings(deadline=None)
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


@settings(max_examples=300, deadline=None)
@given(st.lists(MARKUP_PIECES | st.text(max_size=5), max_size=40).map("".join))
def test_any_input_renders_to_allowed_markup_and_plain_text(text):
    fragment = render_html(text)
    assert_safe(fragment)
    assert "<script" not in fragment.lower()
    assert isinstance(plain_text(text), str)
    assert_safe(title_html(text))
