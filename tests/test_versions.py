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


def test_a_version_is_listed_when_it_adds_a_venue_year_link_or_title():
    versions = paper_versions(
        [
            # a listing of arXiv papers with no year, the same paper's arXiv 2017 record, and
            # an author's profile page with neither: only the record tells something
            row("arxiv_listing.txt", 3, "listing", "arXiv"),
            row("arxiv.jsonl", 8, "arxiv", "arXiv", 2017, None, "T", "https://arxiv.org/abs/1"),
            row("profile_a.txt", 12, "profile"),
            # a year no other version gives, and a venue alone the others do not give
            row("b.txt", 4, "listing", None, 2018),
            row("c.txt", 5, "listing", "ICLR"),
        ],
        "T",
    )
    assert [(v.name, v.listed) for v in versions] == [
        ("arXiv 2017", True),
        ("2018", True),
        ("ICLR", True),
        ("arXiv", False),
        ("author profile page (no venue or year)", False),
    ]


def test_versions_differing_only_in_status_are_both_listed():
    versions = paper_versions(
        [
            row("a.jsonl", 1, "jsonl", "ICLR", 2018, "Reject"),
            row("b.jsonl", 1, "jsonl", "ICLR", 2018, "Poster"),
        ],
        "T",
    )
    assert [v.listed for v in versions] == [True, True]


def test_a_version_another_says_with_a_status_adds_nothing():
    versions = paper_versions(
        [
            row("iclr2018_p01.txt", 3, "listing", "ICLR", 2018),
            row("iclr2018.jsonl", 9, "jsonl", "ICLR", 2018, "Reject"),
        ],
        "T",
    )
    assert [(v.name, v.status, v.listed) for v in versions] == [
        ("ICLR 2018", None, False),
        ("ICLR 2018", "Reject", True),
    ]
