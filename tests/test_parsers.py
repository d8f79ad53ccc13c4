"""Each input format, through the real parsers, on small nasty fixtures."""

import json

import pytest

from loader.records import Entry, Problem
from loader.sources import detect_format, read_source
from loader.text import split_authors

ABSTRACT = "We study a problem and propose a method that works well in practice."


def parse(tmp_path, text, name="input.txt", encoding="utf-8", forced=None):
    path = tmp_path / name
    path.write_bytes(text.encode(encoding) if isinstance(text, str) else text)
    source, items = read_source(path, forced)
    items = list(items)
    return (
        source,
        [i for i in items if isinstance(i, Entry)],
        [i for i in items if isinstance(i, Problem)],
    )


@pytest.mark.parametrize(
    "line, names, truncated",
    [
        ("A Bc, De Fg", ["A Bc", "De Fg"], False),
        ("Yuan Sui", ["Yuan Sui"], False),
        ("A Bc, De Fg 等", ["A Bc", "De Fg"], True),
        ("A Bc, De Fg et al.", ["A Bc", "De Fg"], True),
        ("J. R. Smith, Jr., Zoë O'Neil-Ng", ["J. R. Smith", "Jr.", "Zoë O'Neil-Ng"], False),
        ("We study it.", None, None),
        ("Recently, Arjevani et al. [1] established a bound", None, None),
    ],
)
def test_split_authors(line, names, truncated):
    result = split_authors(line)
    if names is None:
        assert result is None
    else:
        assert result == (names, truncated)


def test_listing_with_tracks_and_optional_track(tmp_path):
    text = (
        "论文检索\n\nSocial Aspects · Accountability, Transparency, and Interpretability\n\n"
        f"Ann Lee, Bo Chen 等\n\n{ABSTRACT}\n\nCara Diaz\n\nSingle author abstract here.\n"
    )
    source, entries, problems = parse(tmp_path, text)
    assert source.format == "listing" and not problems
    first, second = entries
    assert first.track.startswith("Social Aspects ·") and first.truncated
    assert first.authors == ["Ann Lee", "Bo Chen"] and first.line == 3
    assert second.track is None and second.authors == ["Cara Diaz"] and second.line == 9


def test_bom_crlf_trailing_spaces_and_extra_blank_lines(tmp_path):
    text = "\ufeff论文检索\r\n\r\n\r\n\r\nAnn Lee, Bo Chen   \r\n\r\n\r\n" + ABSTRACT + "  \r\n"
    source, entries, problems = parse(tmp_path, text)
    assert source.format == "listing" and not problems
    assert entries[0].authors == ["Ann Lee", "Bo Chen"]
    assert entries[0].abstract == ABSTRACT and entries[0].line == 5


def test_profile_page_links_owner_and_affiliations(tmp_path):
    text = (
        "Huishuai Zhang\n\nShufang Xie, Junliang Guo et al. · microsoft-research, stanford\n\n"
        f"{ABSTRACT}\n\nKaipeng Zheng, Huishuai Zhang\n\nAnother abstract, complete list.\n"
    )
    source, entries, problems = parse(tmp_path, text)
    assert source.format == "profile" and not problems
    assert entries[0].owner == "Huishuai Zhang" and entries[0].truncated
    assert entries[0].affiliations == ["microsoft-research", "stanford"]
    assert entries[1].affiliations == [] and not entries[1].truncated


def test_jsonl(tmp_path):
    lines = [
        {
            "abstract": ABSTRACT,
            "authors": ["Ann Lee", "Bo Chen"],
            "title": "A Title",
            "track": "Deep Learning · Robustness",
            "affiliations": ["pku"],
            "url": "https://x.org",
        },
        {"abstract": "Other abstract.", "authors": "Ann Lee, Cara Diaz et al."},
        {"authors": ["Ann Lee"]},
        "not an object",
    ]
    text = "\n".join(json.dumps(x) for x in lines) + "\n{broken\n"
    source, entries, problems = parse(tmp_path, text, "x.jsonl")
    assert source.format == "jsonl"
    assert entries[0].title == "A Title" and entries[0].affiliations == ["pku"]
    assert entries[1].truncated and entries[1].authors == ["Ann Lee", "Cara Diaz"]
    assert [(p.line, p.message.split(":")[0]) for p in problems] == [
        (3, "record has no abstract"),
        (4, "a JSON Lines record must be an object"),
        (5, "invalid JSON"),
    ]


@pytest.mark.parametrize(
    "text, line, message",
    [
        (
            f"论文检索\n\nAnn Lee, Bo Chen\n\nCara Diaz\n\n{ABSTRACT}\n",
            3,
            "authors line with no abstract",
        ),
        (f"论文检索\n\n{ABSTRACT}\n", 3, "abstract with no authors line"),
        (
            f"论文检索\n\nArea · Sub\n\nArea · Other\n\nAnn Lee\n\n{ABSTRACT}\n",
            3,
            "track line with no paper",
        ),
        ("论文检索\n\nAnn Lee, Bo Chen\n", 3, "authors line with no abstract"),
        ("Just some prose that is not a listing. It goes on.\n\nMore.\n", 1, "unknown format"),
        ("   \n\n", 1, "file is empty"),
        ("", 1, "file is empty"),
    ],
)
def test_bad_input_is_reported_with_file_and_line(tmp_path, text, line, message):
    _, _, problems = parse(tmp_path, text)
    assert problems[0].line == line
    assert message in problems[0].message
    assert str(problems[0]).startswith(f"{tmp_path / 'input.txt'}:{line}: ")


def test_undecodable_line_is_one_problem_and_the_rest_loads(tmp_path):
    text = (
        "论文检索\n\nAnn Lee\n\n".encode()
        + b"caf\xe9 abstract in latin-1.\n\nBo Chen\n\n"
        + ABSTRACT.encode()
        + b"\n"
    )
    _, entries, problems = parse(tmp_path, text)
    assert [e.authors for e in entries] == [["Bo Chen"]]
    assert [(p.line, p.message) for p in problems] == [
        (5, "invalid UTF-8 at column 4"),
        (3, "authors line with no abstract after it"),
    ]


def test_file_in_another_encoding_is_one_problem(tmp_path):
    _, entries, problems = parse(tmp_path, "论文检索\n\nAnn Lee\n", encoding="utf-16")
    assert not entries and len(problems) == 1 and problems[0].line == 1


def test_forced_format(tmp_path):
    text = f"Ann Lee\n\nBo Chen\n\n{ABSTRACT}\n"
    source, entries, _ = parse(tmp_path, text, forced="listing")
    assert source.format == "listing"
    assert entries[0].authors == ["Bo Chen"] and entries[0].owner is None


def test_detect_format():
    assert detect_format(["论文检索", "", "x"]) == "listing"
    assert detect_format(['{"abstract": "x"}']) == "jsonl"
    assert detect_format(["Ann Lee", "", "Bo Chen", "", "text"]) == "profile"
    assert detect_format(["This is prose. Not a name."]) is None
