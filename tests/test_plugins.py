"""The plugin functions called directly: abstract rendering on nasty input, snippet highlight,
blank-search guard, CSV link rewriting, chart geometry."""

import pytest
from hypothesis import given, settings
from hypothesis import strategies as st
from markupsafe import Markup

from .html_tags import parse
from .plugin_files import load_plugin

render_cells = load_plugin("render_cells")
search_guard = load_plugin("search_guard")
csv_links = load_plugin("csv_links")
charts = load_plugin("charts")
render_abstract = render_cells.render_abstract
render_snippet = render_cells.render_snippet


def assert_safe(html):
    """Only the renderer's own tags; no event handlers, no script URLs."""
    allowed = render_cells.TEXT_TAGS | render_cells.MATH_TAGS
    for tag, attributes in parse(html).tags:
        assert tag in allowed, (tag, html)
        for name, value in attributes.items():
            assert not name.startswith("on"), (name, html)
            allowed_attributes = render_cells.ALLOWED_ATTRIBUTES.get(tag, set())
            assert name in allowed_attributes | {"rel"}, (tag, name, html)
            if name == "href":
                assert value.startswith(("http://", "https://")), (value, html)


# abstract rendering ------------------------------------------------------------------------


def test_script_in_text_stays_text():
    html = render_abstract("before <script>alert(1)</script> after")
    assert "<script" not in html
    assert "&lt;script&gt;alert(1)&lt;/script&gt;" in html
    assert "<script>alert(1)</script>" in "".join(parse(html).text)


def test_event_handler_markup_is_escaped():
    html = render_abstract('<img src=x onerror="alert(1)"> and <a href="javascript:x">y</a>')
    assert "<img" not in html and "<a " not in html
    assert_safe(html)


def test_inline_math_becomes_mathml():
    html = render_abstract(r"accuracy $1/\varepsilon$ in $\mathbb{R}^d$")
    assert html.count("<math") == 2
    assert 'display="inline"' in html
    assert "<msup>" in html and "ℝ" in html
    assert_safe(html)


def test_display_math_becomes_block_mathml():
    html = render_abstract(r"we show $$\sum_{i=1}^N x_i$$ holds")
    assert 'display="block"' in html
    assert "<munderover>" in html or "<msubsup>" in html


def test_less_than_inside_math_is_an_operator_not_a_tag():
    html = render_abstract(r"for $0<\alpha<1$ we")
    assert html.count("<mo>&lt;</mo>") == 2
    assert_safe(html)


def test_script_inside_math_text_stays_inert():
    html = render_abstract(r"$\text{<script>alert(1)</script>}$ and $\mbox{<b>x</b>}$")
    assert "<script" not in html and "<b>" not in html
    assert "<mtext>&lt;script&gt;alert(1)&lt;/script&gt;</mtext>" in html
    assert "<mtext>&lt;b&gt;x&lt;/b&gt;</mtext>" in html
    assert_safe(html)


def test_math_links_and_styles_are_removed():
    html = render_abstract(r"$\href{javascript:alert(1)}{x} \style{color:red}{y} \class{a}{z}$")
    assert "javascript" not in html and "style=" not in html and "class=" not in html
    assert "<math" in html
    assert_safe(html)


@pytest.mark.parametrize(
    "text",
    [
        "it costs $5 and more",
        "unbalanced $x^2 never closes",
        "two $ signs $ with spaces",
        r"an escaped \$ sign and $$ empty",
    ],
)
def test_unbalanced_dollars_stay_text(text):
    html = render_abstract(text)
    assert "<math" not in html
    assert "$" in html
    assert_safe(html)


@pytest.mark.parametrize("tex", [r"\left( x", "a^{", r"\frac{1}{", r"\begin{matrix} a", "x_"])
def test_math_latex2mathml_cannot_parse_is_shown_as_code(tex):
    html = render_abstract(f"see ${tex}$ here")
    assert "<math" not in html
    assert html == Markup('see <code class="tex" title="TeX">{}</code> here').format(f"${tex}$")


def test_url_macro_becomes_a_safe_link():
    html = render_abstract(r"code at \url{https://github.com/x/y?a=1&b=2}.")
    links = [attributes for tag, attributes in parse(html).tags if tag == "a"]
    assert links == [
        {"href": "https://github.com/x/y?a=1&b=2", "rel": "nofollow noopener noreferrer"}
    ]


@pytest.mark.parametrize(
    "text",
    [
        r"\url{javascript:alert(1)}",
        r"\url{JaVaScRiPt:alert(1)}",
        r"\url{ javascript:alert(1)}",
        r"\url{data:text/html,<script>alert(1)</script>}",
        r"\url{java	script:alert(1)}",
        r"\href{javascript:alert(1)}{click me}",
        "[click me](javascript:alert(1))",
        r"\url{//evil.example/x}",
    ],
)
def test_unsafe_urls_never_become_links(text):
    html = render_abstract(text)
    assert "<a" not in html
    assert "<script" not in html
    assert_safe(html)


def test_bare_urls_become_links_without_trailing_punctuation():
    html = render_abstract("Code: https://github.com/gaosh/ToMoE. Also (https://a.example/b).")
    hrefs = [attributes["href"] for tag, attributes in parse(html).tags if tag == "a"]
    assert hrefs == ["https://github.com/gaosh/ToMoE", "https://a.example/b"]


def test_latex_and_markdown_emphasis():
    html = render_abstract(
        r"\emph{high-quality} and \textbf{Delta \emph{Prover} 95.9\% rate}, "
        r"*polylogarithmically*, **S**mooth, \textit{per-sample}, \textsc{Reuse}, `x<y`"
    )
    assert "<em>high-quality</em>" in html
    assert "<strong>Delta <em>Prover</em> 95.9% rate</strong>" in html
    assert "<em>polylogarithmically</em>" in html
    assert "<strong>S</strong>mooth" in html
    assert "<em>per-sample</em>" in html
    assert '<span class="smallcaps">Reuse</span>' in html
    assert "<code>x&lt;y</code>" in html
    assert_safe(html)


def test_unknown_macros_are_shown_harmlessly():
    html = render_abstract(r"We introduce \nameA{} (\fullname{}) \revise{the weights} \foo.")
    assert '<code class="tex-macro">\\nameA</code>' in html
    assert '<code class="tex-macro">\\fullname</code>' in html
    assert '<span class="tex-macro" title="\\revise">the weights</span>' in html
    assert '<code class="tex-macro">\\foo</code>' in html
    assert_safe(html)


def test_unclosed_macro_argument_is_text():
    html = render_abstract(r"\emph{never closed and \textbf{also")
    assert "never closed" in html and "<em>" not in html
    assert_safe(html)


def test_deeply_nested_macros_do_not_recurse_forever():
    text = r"\emph{" * 300 + "x" + "}" * 300
    html = render_abstract(text)
    assert "x" in html
    assert_safe(html)


def test_plain_abstract_is_only_escaped():
    text = 'Plain text with "quotes", ampersands & <angle> brackets.'
    assert render_abstract(text) == Markup(
        'Plain text with "quotes", ampersands &amp; &lt;angle&gt; brackets.'
    )


def test_render_abstract_returns_markup_and_handles_none():
    assert isinstance(render_abstract("x"), Markup)
    assert render_abstract(None) == ""


def test_every_seed_abstract_renders_safely(query):
    abstracts = [row[0] for row in query("select abstract from papers")]
    assert len(abstracts) > 50
    math_papers = 0
    for abstract in abstracts:
        html = render_abstract(abstract)
        assert_safe(html)
        math_papers += "<math" in html
    assert math_papers >= 5


MARKUP_PIECES = st.sampled_from(
    [
        "$", "$$", "\\", "{", "}", "*", "**", "`", "[", "]", "(", ")", "<", ">", "&", '"', "'",
        "<script>", "</script>", "javascript:", "https://", "\\url{", "\\href{", "\\emph{",
        "\\text{", "\\frac{", "^", "_", "onerror=", "<img src=x ", "<math>", "<mi>", " ", "\n",
        "x", "α", "\ue000", "\ue001",
    ]
)  # fmt: skip


@settings(max_examples=300, deadline=None)
@given(st.lists(MARKUP_PIECES | st.text(max_size=5), max_size=40).map("".join))
def test_any_input_renders_to_allowed_markup_only(text):
    html = render_abstract(text)
    assert_safe(html)
    assert "<script" not in html.lower()


# snippets ----------------------------------------------------------------------------------


def test_snippet_escapes_first_then_marks():
    html = render_snippet("a <b>bold</b> \ue000match\ue001 & \ue000<script>\ue001")
    assert html == Markup(
        "a &lt;b&gt;bold&lt;/b&gt; <mark>match</mark> &amp; <mark>&lt;script&gt;</mark>"
    )


def test_snippet_stray_sentinels_are_balanced_or_dropped():
    assert render_snippet("\ue001x \ue000open") == Markup("x <mark>open</mark>")
    assert render_snippet("\ue000a\ue000b\ue001") == Markup("<mark>ab</mark>")
    assert render_snippet(None) == ""


# render_cell hook --------------------------------------------------------------------------


class FakeUrls:
    def table(self, database, table):
        return f"/{database}/{table}"


class FakeDatasette:
    urls = FakeUrls()


def call_render_cell(row, column, table=None, database="catalog"):
    return render_cells.render_cell(
        row=row,
        value=row[column],
        column=column,
        table=table,
        database=database,
        datasette=FakeDatasette(),
    )


def test_render_cell_abstract_in_table_and_query():
    row = {"abstract": "<script>x</script> $a<b$"}
    for table in ("papers", None):
        html = call_render_cell(row, "abstract", table)
        assert html.startswith('<div class="abstract">') and "<math" in html
        assert "<script" not in html


def test_render_cell_plain_abstract_text_is_escaped():
    html = call_render_cell({"abstract_text": "<b>x</b>"}, "abstract_text", "papers")
    assert html == Markup('<div class="abstract-text">&lt;b&gt;x&lt;/b&gt;</div>')


def test_render_cell_leaves_other_databases_and_columns_alone():
    assert call_render_cell({"abstract": "x"}, "abstract", "papers", database="other") is None
    assert call_render_cell({"abstract": "x"}, "abstract", "authors") is None
    assert call_render_cell({"label": "x"}, "label", "papers") is None
    assert call_render_cell({"snippet": "\ue000x\ue001"}, "snippet", "papers") is None


def test_render_cell_snippet_in_query_results():
    html = call_render_cell({"snippet": "<i>\ue000x\ue001"}, "snippet")
    assert html == Markup("&lt;i&gt;<mark>x</mark>")


def test_render_cell_links_papers_and_authors_in_query_results():
    row = {"id": "0123456789abcdef", "label": "<b>Label</b>", "author_id": 7, "name": "Ann <i>"}
    assert call_render_cell(row, "id") == Markup(
        '<a href="/catalog/papers/0123456789abcdef">0123456789abcdef</a>'
    )
    assert call_render_cell(row, "label") == Markup(
        '<a href="/catalog/papers/0123456789abcdef">&lt;b&gt;Label&lt;/b&gt;</a>'
    )
    assert call_render_cell(row, "name") == Markup('<a href="/catalog/authors/7">Ann &lt;i&gt;</a>')
    assert call_render_cell({"id": 3, "label": "x"}, "label") is None
    assert call_render_cell({"id": "not-a-paper-id!", "label": "x"}, "label") is None


# blank _search guard -----------------------------------------------------------------------


@pytest.mark.parametrize(
    "query_string, expected",
    [
        (b"_search=", b""),
        (b"_search=+++&_sort=id", b"_sort=id"),
        (b"_search=%20%09&track=a+b", b"track=a+b"),
        (b"_search_title=&_search=x", b"_search=x"),
        (b"_search=%22%22&track=x", b"track=x"),
        (b"_search=%00", b""),
        (b"_search=%22a%0Ab%22", b"_search=%22a+b%22"),
        (b"_search=reasoning", None),
        (b"track=x", None),
    ],
)
def test_unsearchable_search_parameters_are_cleaned(query_string, expected):
    assert search_guard.cleaned_query_string(query_string) == expected


# CSV links ---------------------------------------------------------------------------------


def test_export_pairs_replace_page_parameters():
    pairs = csv_links.export_pairs("_size=10&track=a+b&_facet=area&_next=5&_sort=id", True)
    assert pairs == [
        ("track", "a b"),
        ("_sort", "id"),
        ("_size", "max"),
        ("_stream", "on"),
        ("_dl", "1"),
        ("_labels", "on"),
    ]


def test_stream_all_adds_size_and_stream():
    url = csv_links.stream_all("/catalog/papers_by_author.csv?author_id=3&_size=5&_dl=1")
    assert url == "/catalog/papers_by_author.csv?author_id=3&_size=max&_stream=on&_dl=1"


# charts ------------------------------------------------------------------------------------


def test_bar_chart_scales_to_the_largest_value_and_drops_zeros():
    chart = charts.bar_chart("c", "t", [("a", 10, "/a"), ("b", 5, None), ("z", 0, "/z")])
    assert [bar["label"] for bar in chart["bars"]] == ["a", "b"]
    assert chart["bars"][0]["width"] == charts.BAR_WIDTH
    assert chart["bars"][1]["width"] == charts.BAR_WIDTH / 2
    assert chart["bars"][1]["y"] == charts.ROW_HEIGHT
    assert chart["height"] == 2 * charts.ROW_HEIGHT


def test_bar_chart_shortens_long_labels_and_keeps_the_full_one():
    label = "Area · " + "x" * 100
    bar = charts.bar_chart("c", "t", [(label, 1, None)])["bars"][0]
    assert len(bar["label"]) == charts.LABEL_CHARS and bar["label"].endswith("…")
    assert bar["full_label"] == label


def test_bar_chart_of_nothing():
    chart = charts.bar_chart("c", "t", [])
    assert chart["bars"] == [] and chart["height"] == charts.ROW_HEIGHT


def test_safe_url_schemes():
    assert render_cells.safe_url("https://a.example/x") == "https://a.example/x"
    for bad in ("javascript:alert(1)", "http://", "ftp://a/b", "https://a b", "/relative", ""):
        assert render_cells.safe_url(bad) is None, bad


def test_render_cell_authors_as_names():
    html = call_render_cell({"authors": '["Ann <b>", "Bo"]'}, "authors", "papers")
    assert html == Markup("Ann &lt;b&gt;, Bo")
    assert call_render_cell({"authors": "not json"}, "authors", "papers") is None
    assert call_render_cell({"authors": '{"a": 1}'}, "authors", None) is None
    assert call_render_cell({"affiliations": '["pku", "mit"]'}, "affiliations", None) == "pku, mit"
    assert "[]" not in call_render_cell({"affiliations": "[]"}, "affiliations", "papers")
