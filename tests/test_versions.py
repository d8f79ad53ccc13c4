"""A merged paper's versions as its page lists them (loader/web/versions.py), on rows shaped as
the paper page reads them from paper_sources."""

from loader.web.versions import paper_versions


def row(path, line, format, venue=None, year=None, status=None, title=None, url=None):
    return {
        "path": path,
        "line": line,
        "format": format,
        "venue": venue,
        "year": year,
        "status": status,
        "title": title,
        "url": url,
    }


def test_entries_that_say_the_same_are_one_version():
    versions = paper_versions(
        [
            row("a.txt", 7, "profile"),
            row("b.txt", 31, "profile"),
            row("c.jsonl", 2, "jsonl", "NeurIPS", 2017, "Poster", "T", "https://x.example/1"),
            row("c.jsonl", 9, "jsonl", "NeurIPS", 2017, "Poster", "T", "https://x.example/1"),
        ],
        "T",
    )
    assert [(v.name, len(v.entries)) for v in versions] == [
        ("NeurIPS 2017", 2),
        ("author profile page (no venue or year)", 2),
    ]


def test_oldest_first_own_titles_and_only_web_links():
    versions = paper_versions(
        [
            row("icml.jsonl", 4, "jsonl", "ICML", 2015, "Poster", "Stay on Path", "javascript:x"),
            row("arxiv.jsonl", 8, "jsonl", "arXiv", 2013, None, "Stay on path.", "https://a/1"),
            row("iclr.jsonl", 1, "jsonl", "ICLR", 2014, None, "An Older Name", None),
        ],
        "Stay on path",
    )
    assert [(v.name, v.title, v.url) for v in versions] == [
        ("arXiv 2013", None, "https://a/1"),  # the same title up to case and punctuation
        ("ICLR 2014", "An Older Name", None),
        ("ICML 2015", None, None),  # a link that is not http(s) is no link
    ]
