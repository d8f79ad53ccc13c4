"""The loader's rules that pages apply at request time, so a page reads a value exactly as the
build wrote it: an author's name key, an affiliation's slug and display name, and an abstract's
or title's markup as HTML (the one reading of markup that also feeds the search text)."""

from markupsafe import Markup

from loader.rules import markup, names, normalize


def name_key(name: str) -> str:
    """The key the build merges spellings of a name by (loader/rules/names.py)."""
    return names.name_key(name)


def affiliation_slug(text: str) -> str:
    return normalize.affiliation_slug(text)


def affiliation_name(slug: str) -> str:
    """An affiliation's name derived from its slug (pku -> PKU, far-ai -> Far AI), where the
    affiliations table's name is not at hand."""
    return normalize.affiliation_name(slug)


def render_html(source: str | None) -> Markup:
    """An abstract as sanitized HTML: math as MathML, emphasis, http(s) links."""
    return markup.render_html(source)


def title_html(text: str | None) -> Markup:
    """A title or label as HTML: math inline, no links of its own."""
    return markup.title_html(text)


def title_text(text: str | None) -> str:
    """A title as plain text (a page's <title>, a chart label)."""
    return markup.title_text(text)
