"""Links as the dumps write them -> absolute URLs, one a kind (records.LINK_KINDS).

Sources give a link as a full URL, a bare id (`2110.02855`, `arXiv:1802.09232`,
`10.1609/aaai.v36i1.19922`), a URL without its scheme (`github.com/tzshi/bubble-parser-acl21`),
a path on their own site (`/pdf/1234.pdf`) or a Markdown link (`[![github](/images/...)
owner/repo](https://github.com/owner/repo)`). Each is kept as the URL it stands for; a value
that is none of these (words, a bare number) is no link.
"""

import re
from collections.abc import Iterable

from loader.records import LINK_KINDS

ARXIV_URL = "https://arxiv.org/abs/{}"
DOI_URL = "https://doi.org/{}"
OPENREVIEW_URL = "https://openreview.net/forum?id={}"
# a new-style (2007.12345v2) or old-style (hep-th/9901001, math.CO/0102001) arXiv id
ARXIV_ID = re.compile(
    r"^(?:arxiv:\s*)?((?:\d{4}\.\d{4,5}|[a-z-]+(?:\.[A-Z]{2})?/\d{7})(?:v\d+)?)$", re.IGNORECASE
)
DOI = re.compile(r"^(?:doi:\s*)?(10\.\d{4,9}/\S+)$", re.IGNORECASE)
URL = re.compile(r"^https?://[^\s/]+\.[^\s/]+\S*$", re.IGNORECASE)
# a host name and maybe a path, no scheme: "github.com/owner/repo", "www.example.org"
SCHEMELESS = re.compile(r"^(?:[a-z0-9-]+\.)+[a-z]{2,}(?:[/?#]\S*)?$", re.IGNORECASE)
# the targets of Markdown links: "[text](https://...)"
MARKDOWN_TARGET = re.compile(r"\]\((https?://[^\s)]+)\)")


def link_url(kind: str, value: str, site: str | None = None) -> str | None:
    """The absolute URL a link value stands for, or None. `site` ("https://openreview.net")
    completes a path on the source's own site."""
    text = value.strip()
    if not text:
        return None
    if URL.match(text):  # most links: a URL as it is
        return text
    targets = MARKDOWN_TARGET.findall(text)
    if targets:
        return targets[0]
    if text.lower().startswith("http://") or text.lower().startswith("https://"):
        return None  # a scheme and no host
    arxiv = ARXIV_ID.match(text)
    if arxiv and (kind == "arxiv" or text.lower().startswith("arxiv:")):
        return ARXIV_URL.format(arxiv[1])
    doi = DOI.match(text)
    if doi and (kind == "doi" or text.lower().startswith("doi:")):
        return DOI_URL.format(doi[1])
    if text.startswith("/") and not text.startswith("//") and site and " " not in text:
        return site.rstrip("/") + text
    if SCHEMELESS.match(text):
        return "https://" + text
    return None


def identifier_links(
    arxiv_id: str | None, doi: str | None, openreview_id: str | None
) -> dict[str, str]:
    """The links an entry's identifiers stand for."""
    links = {}
    if openreview_id:
        links["openreview"] = OPENREVIEW_URL.format(openreview_id)
    if arxiv_id:
        links["arxiv"] = ARXIV_URL.format(arxiv_id)
    if doi:
        links["doi"] = DOI_URL.format(doi)
    return links


def ordered_links(*found: Iterable[tuple[str, str | None]]) -> dict[str, str]:
    """(kind, URL) pairs -> one URL a kind (the first given), in LINK_KINDS order."""
    links: dict[str, str] = {}
    for pairs in found:
        for kind, url in pairs:
            if url and kind in LINK_KINDS:
                links.setdefault(kind, url)
    return {kind: links[kind] for kind in LINK_KINDS if kind in links}
