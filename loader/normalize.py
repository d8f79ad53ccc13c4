"""Pure normalization rules: tracks, affiliations, markup -> plain text, identity, labels."""

import hashlib
import re
import unicodedata

from .names import name_key  # noqa: F401  re-exported: plugins/facets.py imports it from here

TRACK_SEPARATOR = "·"
GREEK = {
    "alpha": "α",
    "beta": "β",
    "gamma": "γ",
    "delta": "δ",
    "epsilon": "ε",
    "varepsilon": "ε",
    "zeta": "ζ",
    "eta": "η",
    "theta": "θ",
    "vartheta": "ϑ",
    "iota": "ι",
    "kappa": "κ",
    "lambda": "λ",
    "mu": "μ",
    "nu": "ν",
    "xi": "ξ",
    "pi": "π",
    "rho": "ρ",
    "sigma": "σ",
    "tau": "τ",
    "upsilon": "υ",
    "phi": "φ",
    "varphi": "φ",
    "chi": "χ",
    "psi": "ψ",
    "omega": "ω",
    "Gamma": "Γ",
    "Delta": "Δ",
    "Theta": "Θ",
    "Lambda": "Λ",
    "Xi": "Ξ",
    "Pi": "Π",
    "Sigma": "Σ",
    "Phi": "Φ",
    "Psi": "Ψ",
    "Omega": "Ω",
    "ell": "ℓ",
    "infty": "∞",
    "cdot": "·",
    "times": "×",
    "leq": "≤",
    "le": "≤",
    "geq": "≥",
    "ge": "≥",
    "neq": "≠",
    "approx": "≈",
    "sim": "~",
    "in": "∈",
    "to": "→",
    "rightarrow": "→",
    "sqrt": "√",
    "sum": "∑",
    "log": "log",
    "ldots": "…",
    "dots": "…",
    "pm": "±",
}
INLINE_MATH = re.compile(r"\$(?!\s)([^$\n]{1,400}?)(?<![\s\\])\$")
HREF = re.compile(r"\\href\{([^{}]*)\}\{([^{}]*)\}")
MACRO_WITH_ARGUMENT = re.compile(r"\\[a-zA-Z]+\*?\{([^{}]*)\}")
MACRO = re.compile(r"\\([a-zA-Z]+)")
ESCAPED_CHARACTER = re.compile(r"\\([%&$#_{}])")
MARKDOWN_LINK = re.compile(r"\[([^\[\]]+)\]\((?:https?://|/)[^()\s]*\)")
# bounded like INLINE_MATH: an unbounded `.+?` rescans the line from every unclosed "**"
MARKDOWN_STRONG = re.compile(r"(\*\*|__)(?=\S)(.{1,400}?)(?<=\S)\1")
MARKDOWN_EMPHASIS = re.compile(r"(?<![\w*])\*(?=\S)([^*\n]+?)(?<=\S)\*(?![\w*])")
MARKDOWN_CODE = re.compile(r"`([^`\n]+)`")
# every pattern above and the dash replacements need one of these
MARKUP_MARKS = ("$", "\\", "[", "*", "_", "`", "--")

INTRO_VERB = re.compile(
    r"\b(?:propos(?:e|es|ed|ing)|introduc(?:e|es|ed|ing)|present(?:s|ed|ing)?|"
    r"develop(?:s|ed|ing)?|call(?:ed)?|nam(?:e|ed)|dub(?:bed)?|term(?:ed)?|coin(?:ed)?)\b"
)
# a method name: one token with at least two capitals or a capital and a digit
METHOD_NAME = r"(?=[\w\-]*?[A-Z][\w\-]*?[A-Z0-9])[A-Za-z][\w\-]*\w"
# the expansion has a space, so "Mixture-of-Experts (MoE)" is not read as a name and its expansion
NAME_WITH_EXPANSION = re.compile(rf"\b({METHOD_NAME})\s*\(([^()\s]+\s[^()]{{1,90}})\)")
EXPANSION_WITH_NAME = re.compile(
    rf"((?:[A-Z][\w'\-]*\s+){{1,8}}[A-Z][\w'\-]*)\s*\(({METHOD_NAME})\)"
)
NAME_WITH_APPOSITION = re.compile(rf"\b({METHOD_NAME}),\s+((?:a|an|the)\s[^.;:]{{5,200}})")
NAME_ALONE = re.compile(rf"\b({METHOD_NAME})\b")
SENTENCE_END = re.compile(r"(?<=[.!?])\s+(?=[A-Z(\"“])")
LABEL_LENGTH = 90
LABEL_WINDOW = 140


def collapse_whitespace(text):
    return " ".join(text.split())


def paper_id(abstract):
    """Stable id: the same abstract (up to whitespace and Unicode form) gives the same id."""
    canonical = collapse_whitespace(unicodedata.normalize("NFC", abstract))
    return hashlib.sha256(canonical.encode("utf-8")).hexdigest()[:16]


def split_track(text):
    """'Area · Subarea' -> (name, area, subarea); the subarea may contain commas."""
    text = collapse_whitespace(unicodedata.normalize("NFC", text))
    area, separator, subarea = text.partition(TRACK_SEPARATOR)
    area, subarea = area.strip(), subarea.strip()
    if not separator or not subarea:
        return area, area, None
    return f"{area} {TRACK_SEPARATOR} {subarea}", area, subarea


def affiliation_slug(text):
    return collapse_whitespace(unicodedata.normalize("NFKC", text)).casefold()


def affiliation_name(slug):
    """Derived display name: short slugs are acronyms (pku -> PKU), others title case."""
    words = re.split(r"[-_\s]+", slug)
    if len(words) == 1 and len(slug) <= 4:
        return slug.upper()
    return " ".join(word.capitalize() for word in words if word)


def _math_to_text(match):
    math = MACRO.sub(lambda m: GREEK.get(m.group(1), m.group(1)), match.group(1))
    return math.replace("{", "").replace("}", "")


def plain_text(abstract):
    """LaTeX and Markdown markup removed, for search and labels.

    '**S**mooth' -> 'Smooth', '\\emph{x}' -> 'x', '21.74\\%' -> '21.74%', '$1/\\varepsilon$' -> '1/ε'.
    """
    text = unicodedata.normalize("NFC", abstract)
    if not any(mark in text for mark in MARKUP_MARKS):
        return collapse_whitespace(text)  # about half of all abstracts: no pass can change them
    text = INLINE_MATH.sub(_math_to_text, text)
    text = HREF.sub(r"\2", text)
    for _ in range(3):  # nested macros: \textbf{\emph{x}}
        text = MACRO_WITH_ARGUMENT.sub(r"\1", text)
    text = ESCAPED_CHARACTER.sub(r"\1", text)
    text = MACRO.sub(lambda m: GREEK.get(m.group(1), m.group(1)), text)
    text = MARKDOWN_LINK.sub(r"\1", text)
    if "*" in text or "__" in text:  # the lookbehinds make these scans slow on any text
        text = MARKDOWN_STRONG.sub(r"\2", text)
        text = MARKDOWN_EMPHASIS.sub(r"\1", text)
    text = MARKDOWN_CODE.sub(r"\1", text)
    text = text.replace("---", "—").replace("--", "–")
    return collapse_whitespace(text)


def cut_at_word(text, limit=LABEL_LENGTH):
    text = text.strip().rstrip(",;:")
    if len(text) <= limit:
        return text
    cut = text[:limit].rsplit(" ", 1)[0].rstrip(",;:")
    return cut + "…"


def derive_label(text):
    """A heading for a paper that has no title: the method the abstract introduces
    ('NorMuon: Neuron-wise Normalized Muon'), else its first sentence cut at a word."""
    for verb in INTRO_VERB.finditer(text):
        window = text[verb.end() : verb.end() + LABEL_WINDOW]
        window = SENTENCE_END.split(window, maxsplit=1)[0]
        matches = [
            (match.start(), template.format(*match.groups()))
            for pattern, template in (
                (EXPANSION_WITH_NAME, "{1}: {0}"),
                (NAME_WITH_EXPANSION, "{0}: {1}"),
                (NAME_WITH_APPOSITION, "{0}: {1}"),
            )
            for match in [pattern.search(window)]
            if match
        ]
        if matches:
            return cut_at_word(min(matches)[1])
        match = NAME_ALONE.match(window.lstrip(" ,"))
        if match and not match.group(1).isupper():
            return match.group(1)
    first_sentence = SENTENCE_END.split(text, maxsplit=1)[0].rstrip(".")
    return cut_at_word(first_sentence)
