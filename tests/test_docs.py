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
CODE = re.compile(r"```.*?```|`[^`\n]*`", re.DOTALL)


def test_cli_reference_is_current(capsys):
    status = Cog().main(["cog", "--check", str(CLI_REFERENCE)])
    assert status == 0, f"docs/cli.md is stale: run `make cog`\n{capsys.readouterr()}"


def local_links(page):
    text = CODE.sub("", page.read_text(encoding="utf-8"))
    for target in LINK.findall(text):
        if re.match(r"[a-z][a-z0-9+.-]*:", target) or target.startswith("#"):
            continue  # a web address or an anchor on the same page
        yield target.split("#", 1)[0]


@pytest.mark.parametrize("page", PAGES, ids=lambda page: str(page.relative_to(ROOT)))
def test_links_lead_to_files(page):
    missing = [t for t in local_links(page) if not (page.parent / t).exists()]
    assert not missing, f"{page.relative_to(ROOT)} links to missing files: {missing}"


def test_every_docs_page_is_linked_from_the_readme():
    readme = ROOT / "README.md"
    linked = {(readme.parent / target).resolve() for target in local_links(readme)}
    pages = [page for page in PAGES if page.parent == ROOT / "docs"]
    assert [p.name for p in pages if p.resolve() not in linked] == []
