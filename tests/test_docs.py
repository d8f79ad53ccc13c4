"""The README and docs/: the generated CLI reference is current and every link leads somewhere."""

import re
from pathlib import Path

import pytest
from cogapp import Cog

ROOT = Path(__file__).resolve().parents[1]
CLI_REFERENCE = ROOT / "docs" / "cli.md"
PAGES = sorted(
    [ROOT / "README.md", ROOT / "SECURITY.md", ROOT / "CHANGELOG.md", *(ROOT / "docs").glob("*.md")]
)
# [text](target) and ![alt](target); a target ends at whitespace or the closing bracket
LINK = re.compile(r"!?\[[^\]]*\]\(([^)\s]+)(?:\s+\"[^\"]*\")?\)")
FENCE = re.compile(r"```.*?```", re.DOTALL)
CODE = re.compile(r"```.*?```|`[^`\n]*`", re.DOTALL)


def test_cli_reference_is_current(capsys):
    status = Cog().main(["cog", "--check", str(CLI_REFERENCE)])
    assert status == 0, f"docs/cli.md is stale: run `make cog`\n{capsys.readouterr()}"


def local_links(page):
    """(file, anchor) of every link to this repository; file is "" for the page itself."""
    text = CODE.sub("", page.read_text(encoding="utf-8"))
    for target in LINK.findall(text):
        if re.match(r"[a-z][a-z0-9+.-]*:", target):
            continue  # a web address
        path, _, anchor = target.partition("#")
        yield path, anchor


def anchors(page):
    """The ids GitHub gives the page's headings: lower case, punctuation dropped, spaces to
    hyphens, a repeated heading numbered."""
    seen = {}
    text = FENCE.sub("", page.read_text(encoding="utf-8"))
    for heading in re.findall(r"^#+ (.+)$", text, re.MULTILINE):
        slug = re.sub(r"[^\w\- ]", "", heading.strip().lower()).replace(" ", "-")
        count = seen.get(slug, 0)
        seen[slug] = count + 1
        yield slug if count == 0 else f"{slug}-{count}"


@pytest.mark.parametrize("page", PAGES, ids=lambda page: str(page.relative_to(ROOT)))
def test_links_lead_somewhere(page):
    broken = []
    for path, anchor in local_links(page):
        target = page.parent / path if path else page
        if not target.exists():
            broken.append(path)
        elif anchor and target.suffix == ".md" and anchor not in set(anchors(target)):
            broken.append(f"{path}#{anchor}")
    assert not broken, f"{page.relative_to(ROOT)} has links to nothing: {broken}"


def test_every_docs_page_is_linked_from_the_readme():
    readme = ROOT / "README.md"
    linked = {(readme.parent / path).resolve() for path, _ in local_links(readme)}
    pages = [page for page in PAGES if page.parent == ROOT / "docs"]
    assert [p.name for p in pages if p.resolve() not in linked] == []
