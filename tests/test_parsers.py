"""Each input format, through the real parsers, on small nasty fixtures."""

import json

import pytest
from hypothesis import given
from hypothesis import strategies as st

from loader.read import listing
from loader.read.entries import read_block
from loader.read.lines import Block, line_problem, split_authors, too_long
from loader.read.sources import detect_format, read_source
from loader.records import Entry, Problem
from loader.rules.normalize import TRACK_SEPARATOR

from .conftest import FIXTURES
from .real_texts import REAL_TEXTS

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
    text += json.dumps({"title": "No Abstract Given", "authors": ["Ann Lee"]}) + "\n"
    source, entries, problems = parse(tmp_path, text, "x.jsonl")
    assert source.format == "jsonl"
    assert entries[0].title == "A Title" and entries[0].affiliations == ["pku"]
    assert entries[1].truncated and entries[1].authors == ["Ann Lee", "Cara Diaz"]
    # a titled record without an abstract is a paper
    assert (entries[2].line, entries[2].title, entries[2].abstract) == (6, "No Abstract Given", "")
    assert [(p.line, p.message.split(":")[0]) for p in problems] == [
        (3, "record has no title and no abstract"),
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


# ---------------------------------------------------------------------------------------------
# Real pages (tests/fixtures/real/parse, see SOURCE.md there): each rule on a fixture of its own

REAL = FIXTURES / "real" / "parse"


def read_fixture(name):
    source, items = read_source(REAL / name)
    items = list(items)
    entries = [i for i in items if isinstance(i, Entry)]
    problems = [(i.line, i.message) for i in items if isinstance(i, Problem)]
    return source, entries, problems


def test_real_nicknames_in_brackets_and_quotes():
    _, entries, problems = read_fixture("names_nicknames.txt")
    assert not problems
    assert [e.authors[i] for e, i in zip(entries, (0, 1, 1, 4))] == [
        "Junbo (Jake) Zhao",
        "Huazhe(Harry) Xu",
        "Shixiang (Shane) Gu",
        "Anh “Totti” Nguyen",
    ]


def test_real_dotted_initials_with_and_without_spaces():
    _, entries, problems = read_fixture("names_initials.txt")
    assert not problems
    names = [name for e in entries for name in e.authors]
    for name in (
        "Philip H.S. Torr",
        "Victor O.K. Li",
        "Prashanth L.A.",
        "Christopher K. I. Williams",
        "M.Naseer Subhani",
        "Rif. A. Saurous",
    ):
        assert name in names


def test_real_titles_footnote_marks_and_a_final_full_stop_are_not_part_of_names():
    _, entries, problems = read_fixture("names_titles_and_marks.txt")
    assert not problems
    assert entries[0].authors[2:] == ["Nadereh Hatami", "Paul Lukowicz"]  # "Dr.", "Prof. Dr."
    assert entries[1].authors[4] == "Prabhat"  # "Mr. Prabhat"
    assert entries[2].authors[:2] == ["Sahil Sharma", "Ashutosh Kumar Jha"]  # "Sahil Sharma*"
    assert entries[3].authors[-1] == "Roger Grosse"  # "…, Roger Grosse."


def test_real_apostrophes_and_html_entities():
    _, entries, problems = read_fixture("names_entities_apostrophes.txt")
    assert not problems
    assert entries[0].authors[1] == "Brendan O’Donoghue"
    assert entries[1].authors[2] == "Florence d'Alché-Buc"  # written d&#x27;Alché-Buc
    assert entries[2].authors[2] == "Marc'Aurelio Ranzato"


def test_real_empty_name_slot_control_character_and_combining_accents():
    _, entries, problems = read_fixture("names_empty_slot_and_unicode.txt")
    assert not problems
    assert entries.pop(0).authors[:2] == ["Anna Levit", "Daniel Crawford"]  # ", \x06 Daniel"
    assert entries[0].authors == ["Jianing Li", "Shiliang Zhang"]  # "Jianing Li, , Shiliang Zhang"
    assert entries[1].authors[1] == "David Martı́nez-Rubio"  # ı + U+0301 stays as given
    assert "Stanisław Jastrzębski" in entries[2].authors


def test_real_lowercase_author_lists_load():
    _, entries, problems = read_fixture("names_lowercase.txt")
    assert not problems
    assert entries[0].authors[:2] == ["jianqi ma", "hangyu lin"]
    assert entries[0].track == "vocabulary-informed learning · data augmentation"
    assert entries[1].authors[0] == "chao qiao"


def test_real_area_only_tracks_are_tracks():
    _, entries, problems = read_fixture("tracks_area_only.txt")
    assert not problems
    assert [(e.line, e.track) for e in entries] == [
        (3, "Reinforcement learning"),
        (9, "Reinforcement learning"),
        (15, "RNN"),
        (21, "Non-convex optimization · Deep Learning"),
        # one long keyword: no name, but a short line where a track stands
        (
            27,
            (
                "gaussian process neuron activation function stochastic transfer function "
                "learning variational bayes probabilistic"
            ),
        ),
    ]
    assert entries[2].authors == ["Corentin Tallec", "Yann Ollivier"]


def test_real_keyword_row_where_the_abstract_should_be_is_a_problem():
    """Before: a paper by the authors "task clustering", "matrix completion", ..."""
    _, entries, problems = read_fixture("keyword_row_as_abstract.txt")
    assert problems == [
        (7, "authors line with no abstract after it"),
        (9, "a list of short phrases (keywords?), not an abstract"),
    ]
    assert [e.line for e in entries] == [3, 11]  # both neighbours load
    assert entries[1].authors[0] == "William Fedus"


def test_real_missing_and_cut_abstracts_cost_no_neighbour():
    """A real row with no abstract and one whose abstract is "Part of": each is a problem;
    the papers around them load, with their area-only tracks."""
    _, entries, problems = read_fixture("missing_and_cut_abstracts.txt")
    assert [(e.line, e.track) for e in entries] == [
        (3, "Poster"),
        (11, "Poster"),
        (23, "Poster"),
    ]
    assert problems == [
        (9, "authors line with no abstract after it"),
        (19, "authors line with no abstract after it"),
        (17, "track line with no paper after it"),
        (21, "a names line where the abstract should be"),  # "Part of"
    ]


def test_real_wrapped_abstract_stays_one_paragraph():
    """Lines of a hard-wrapped abstract that look like names ("of both techniques lead to")
    are part of the paragraph, not authors lines."""
    _, entries, problems = read_fixture("wrapped_abstract.txt")
    assert not problems and len(entries) == 1
    lines = (REAL / "wrapped_abstract.txt").read_text(encoding="utf-8").split("\n")
    assert entries[0].abstract == "\n".join(lines[4:-1])


def test_real_profile_owner_with_a_nickname():
    source, entries, problems = read_fixture("profile_nickname_owner.txt")
    assert source.format == "profile" and not problems
    assert entries[0].owner == "Shixiang (Shane) Gu"
    assert entries[0].affiliations == ["google"]


@pytest.mark.parametrize(
    "line, names",
    [
        (
            "Tianhe (Kevin) Yu, John C.S. Lui, Prof. Kan",
            ["Tianhe (Kevin) Yu", "John C.S. Lui", "Kan"],
        ),
        (
            "Zhangyang “Atlas” Wang, Pierluca D&#x27;Oro",
            ["Zhangyang “Atlas” Wang", "Pierluca D'Oro"],
        ),
        ("J.-P. Vert, Gerard 't Hooft", ["J.-P. Vert", "Gerard 't Hooft"]),
        ("Ann Lee,, Bo Chen", ["Ann Lee", "Bo Chen"]),
        ("Ann Lee,,, Bo Chen", None),  # two empty slots: not a names line
        # a keyword row has the shape of lowercase names: its position tells them apart
        ("diffusion,image generation,multimodal", ["diffusion", "image generation", "multimodal"]),
        ("However, we study it.", None),
        ("In this paper, a deep boosting algorithm is developed to", None),
    ],
)
def test_split_authors_real_shapes(line, names):
    result = split_authors(line)
    assert (result[0] if result else None) == names


def test_block_that_fits_nothing_is_a_problem_and_ends_the_pending_entry(tmp_path):
    text = (
        f"论文检索\n\nArea · Sub\n\nAnn Lee\n\nPart of\n\nBo Chen\n\n{ABSTRACT}\n\n"
        f"Cara Diaz\n\ndiffusion,image generation,multimodal\n"
    )
    _, entries, problems = parse(tmp_path, text)
    assert [(e.line, e.authors) for e in entries] == [(9, ["Bo Chen"])]
    assert [(p.line, p.message) for p in problems] == [
        (5, "authors line with no abstract after it"),
        (3, "track line with no paper after it"),
        (7, "a names line where the abstract should be"),
        (13, "authors line with no abstract after it"),
        (15, "a list of short phrases (keywords?), not an abstract"),
    ]


def test_jsonl_venue_year_status_and_identifiers(tmp_path):
    records = [
        {
            "abstract": ABSTRACT,
            "authors": ["Ann Lee"],
            "venue": "ICLR",
            "year": "2024",
            "status": "oral",
            "url": "https://arxiv.org/abs/2101.00001v2",
        },
        {
            "abstract": ABSTRACT,
            "authors": "Bo Chen",
            "year": 2023,
            "url": "https://openreview.net/forum?id=B11bwYgfM",
        },
        {
            "abstract": ABSTRACT,
            "authors": "Bo Chen",
            "url": "https://doi.org/10.1145/3292500.3330701",
        },
        {
            "abstract": ABSTRACT,
            "authors": "Bo Chen",
            "arxiv_id": "arXiv:hep-th/9901001v1",
            "doi": "10.5555/ABC.1",
        },
        {"abstract": ABSTRACT, "authors": "Bo Chen", "year": "next year"},
        {"abstract": ABSTRACT, "authors": "Bo Chen", "year": True},
        {"abstract": ABSTRACT, "authors": "Bo Chen", "venue": ["ICLR"]},
        {"abstract": ABSTRACT, "authors": "Bo Chen", "arxiv_id": "1234"},
    ]
    text = "\n".join(json.dumps(r) for r in records) + "\n"
    _, entries, problems = parse(tmp_path, text, "x.jsonl")
    first, second, third, fourth = entries
    assert (first.venue, first.year, first.status, first.arxiv_id) == (
        "ICLR",
        2024,
        "oral",
        "2101.00001",
    )
    assert (second.year, second.openreview_id, second.venue) == (2023, "B11bwYgfM", None)
    assert third.doi == "10.1145/3292500.3330701"
    assert (fourth.arxiv_id, fourth.doi) == ("hep-th/9901001", "10.5555/abc.1")
    assert [(p.line, p.message) for p in problems] == [
        (5, "year must be a year such as 2024"),
        (6, "year must be a year such as 2024"),
        (7, "venue must be a string"),
        (8, "arxiv_id '1234' is not a valid identifier"),
    ]


def test_real_json_lines_venue_year_status_and_openreview_url():
    _, entries, problems = read_fixture("venue_year_status.jsonl")
    assert not problems
    assert [(e.venue, e.year, e.status, e.openreview_id) for e in entries] == [
        ("ICLR", 2018, "workshop", "BkM3ibZRW"),
        ("ICLR", 2018, "reject", "BkPrDFgR-"),
        ("NeurIPS", 2018, "poster", None),  # "2018" as text; a nips.cc link is no identifier
    ]
    assert entries[0].authors[0] == "Junbo (Jake) Zhao"


@pytest.mark.parametrize(
    "line, names",
    [
        # NeurIPS 1993 and ICLR 2018 author lines as papercopilot/paperlists has them
        (
            "Jose C. Principe, Hui-H. Hsu, Jyh-Ming Kuo",
            ["Jose C. Principe", "Hui-H. Hsu", "Jyh-Ming Kuo"],
        ),
        ("H. N. Mhaskar, C. A.. Micchelli", ["H. N. Mhaskar", "C. A.. Micchelli"]),
        ("Jo\\~{a}o P. Costeira, Tom\\'a\\v s Pevn\\'y", ["João P. Costeira", "Tomáš Pevný"]),
    ],
)
def test_real_names_with_hyphenated_initials_typos_and_tex_accents(line, names):
    from loader.read.lines import clean_name

    assert [clean_name(part) for part in line.split(", ")] == names


def test_an_ampersand_joins_the_last_two_names():
    from loader.read.lines import split_authors

    # ICLR 2017 (papercopilot/paperlists), as the listing page shows it
    line = "Masayoshi Ishikawa, Mariko Okude, Takehisa Nishida & Kazuo Muto"
    names, _truncated = split_authors(line)
    assert names == ["Masayoshi Ishikawa", "Mariko Okude", "Takehisa Nishida", "Kazuo Muto"]
    assert split_authors("Pierluca D&#x27;Oro, Bo Li")[0] == ["Pierluca D'Oro", "Bo Li"]


# ---------------------------------------------------------------------------------------------
# No real line lost (tests/fixtures/real/parse/SOURCE.md): author lines and bare areas that
# were read as keywords, as too short, or as authors


def test_real_detached_hyphens_short_given_names_and_en_dashes():
    """Before, each of these pages' entries was lost: its authors line read as "a list of
    short phrases" or "too short", its abstract as having no authors line."""
    _, entries, problems = read_fixture("names_hyphens_and_short_forms.txt")
    assert not problems and len(entries) == 8
    names = {name for e in entries for name in e.authors}
    assert {
        "Saeed Sharifi-Malvajerdi",  # ICML 2019 "Sharifi -Malvajerdi"
        "Max Q.-H. Meng",  # ICRA 2015 "Max Q. -H. Meng"
        "J-P. Merlet",  # IROS 2018 "J -P. Merlet"
        "Ying. Xiao",  # COLT 2015
        "Fengjuan. Jia",  # UAI 2023
        "Laks Lakshmanan. V.S.",  # COLING 2020
        "Lydia.Y Chen",  # ACML 2022
        "Jo–Anne Ting",  # AISTATS 2010, an en dash
    } <= names


def test_real_encodings_marks_quotes_a_trailing_slot_and_a_lowercase_first_author():
    _, entries, problems = read_fixture("names_marks_and_encodings.txt")
    assert not problems
    assert [e.authors[i] for e, i in zip(entries, (2, 0, 3, -1, 0, 0, 0, 0))] == [
        "Hal Daumé III",  # AISTATS 2011 "DaumÃ©": UTF-8 read as Windows-1252
        "Jordi Cornellà",  # ICRA 2012 "Cornell`a": TeX's grave accent without its backslash
        "Narc´is Palomeras",  # IROS 2013: an accent PDF text left beside its letter, kept
        "Ram Vasudevan",  # RSS 2019 "…; Ram Vasudevan;": a trailing empty slot
        "julien perez",  # ICLR 2018: a lowercase first author
        "élise crepon",  # AISTATS 2024
        'Chiyu "Max" Jiang',  # ICCV 2019
        "Nicol‘o Cesa-Bianchi",  # COLT 2016
    ]


@pytest.mark.parametrize(
    "line, names",
    [
        # the shapes
        ("Anna M. -L. Berg, Tom Berg", ["Anna M.-L. Berg", "Tom Berg"]),
        ("Pierre J. -P. DURAND, Ana Costa", ["Pierre J.-P. DURAND", "Ana Costa"]),
        ("Muhd. Amir Rahman, K. L. M. Perera", ["Muhd. Amir Rahman", "K. L. M. Perera"]),
        ("Muhd. Amir Rahman, K.L.M. Perera", ["Muhd. Amir Rahman", "K.L.M. Perera"]),
        ("sara ahmadi, Tom Berg", ["sara ahmadi", "Tom Berg"]),
        ("Robert `Bob' Smith, Tom Berg", ["Robert ‘Bob’ Smith", "Tom Berg"]),
        ("Robert ``Bob'' Smith, Tom Berg", ["Robert “Bob” Smith", "Tom Berg"]),
        ("Ana Costa,  ", ["Ana Costa"]),
        ("\u202aAna Costa\u202c, Tom Berg\u200f", ["Ana Costa", "Tom Berg"]),
        # real lines: SIGGRAPH 2015 (U+200F after a name; no abstract in the source), a
        # lowercase first author (NeurIPS 2016), an accent PDF text left apart (ICRA 2014)
        (
            "Hao Pan, Yang Liu, Alla Sheffer, Nicholas Vining\u200f, Changjian Li, Wenping Wang",
            [
                "Hao Pan",
                "Yang Liu",
                "Alla Sheffer",
                "Nicholas Vining",
                "Changjian Li",
                "Wenping Wang",
            ],
        ),
        (
            "sabyasachi chatterjee, John C. Duchi, John Lafferty, Yuancheng Zhu",
            ["sabyasachi chatterjee", "John C. Duchi", "John Lafferty", "Yuancheng Zhu"],
        ),
        ("Eddy Ilg, Rainer Ku¨mmerle", ["Eddy Ilg", "Rainer Ku¨mmerle"]),
        # still no names: a clause cut at its comma, prose, e-mail user names
        ("In this paper,", None),
        ("Recently, deep learning,", None),
        ("However, we study it.", None),
        ("Yu Wang, jiahao.liang", None),
    ],
)
def test_split_authors_no_real_line_lost(line, names):
    result = split_authors(line)
    assert (result[0] if result else None) == names


def test_real_empty_full_stop_slot_and_lowercase_four_word_name_load():
    """RSS 2019's list ending in an empty `.` slot, and PeerRead's lowercase list whose last
    author has four words (`alfred o hero iii`): both were refused, their papers lost."""
    _, entries, problems = read_fixture("names_dot_slot_and_lowercase_four_words.txt")
    assert not problems
    assert [(e.line, e.authors[0], e.authors[-1], len(e.authors)) for e in entries] == [
        (3, "Kevin Chen", "Silvio Savarese", 7),
        (7, "zhaoshi meng", "alfred o hero iii", 3),
    ]


@pytest.mark.parametrize(
    "line, names",
    [
        # the lines
        ("A. Smith, B. Jones, .", ["A. Smith", "B. Jones"]),
        ("maria jose garcia lopez, john smith", ["maria jose garcia lopez", "john smith"]),
        ("zhaoshi meng, alfred o hero iii", ["zhaoshi meng", "alfred o hero iii"]),
        # still no names: a clause of four lowercase words, a four-word lowercase name among
        # capitalized ones, a sentence's start before an empty slot, a lone lowercase line
        ("on the other hand, this works", None),
        ("in a new way, we", None),
        ("maria jose garcia lopez, John Smith", None),
        ("In this paper, .", None),
        ("john smith, .", None),
        ("maria jose garcia lopez", None),
    ],
)
def test_split_authors_empty_full_stop_slot_and_lowercase_four_words(line, names):
    result = split_authors(line)
    assert (result[0] if result else None) == names


def test_real_bare_areas_with_a_comma_or_an_ampersand_are_tracks():
    """AAAI 2022 and IJCAI 2021 primary areas, an IJCAI 2024 track: before, each was read as
    an authors line ("authors line with no abstract after it") and its paper lost its track."""
    _, entries, problems = read_fixture("tracks_area_lists.txt")
    assert not problems
    assert [(e.line, e.track) for e in entries] == [
        (3, "Planning, Routing, and Scheduling"),
        (9, "Planning, Routing, and Scheduling"),
        (15, "Cognitive Modeling & Cognitive Systems"),
        (21, "Search and Optimization"),
        (27, "AI Ethics, Trust, Fairness"),
        (33, "AI, Arts & Creativity"),
    ]
    assert entries[0].authors[0] == "Noah Patton" and entries[2].authors[-1] == "Ankur Mali"


@pytest.mark.parametrize(
    "area",
    [
        "Search, Optimization, and Games",
        "Knowledge Representation & Reasoning",
        # ICLR 2024-2026 primary areas: lowercase lists, one ends like a sentence
        "transfer learning, meta learning, and lifelong learning",
        "probabilistic methods (Bayesian methods, variational inference, sampling, UQ, etc.)",
        "alignment, fairness, safety, privacy, and societal considerations",
    ],
)
def test_bare_area_lists_are_tracks(tmp_path, area):
    text = f"论文检索\n\n{area}\n\nAnn Lee, Bo Chen\n\n{ABSTRACT}\n\n{area}\n\nCara Diaz\n\n{ABSTRACT} Again.\n"
    _, entries, problems = parse(tmp_path, text)
    assert not problems
    assert [(e.track, e.authors) for e in entries] == [
        (area, ["Ann Lee", "Bo Chen"]),
        (area, ["Cara Diaz"]),
    ]


def test_an_authors_line_where_a_track_may_stand_stays_authors(tmp_path):
    """A real names line with an Oxford "and" (RSS 2007) where a track could stand (its paper
    has no abstract): its words are no area's, so it stays a problem, and the next paper gets
    no track."""
    names = "Lina María Paz, José Guivant, Juan D. Tardós, and José Neira"
    text = f"论文检索\n\n{names}\n\nAnn Lee, Bo Chen\n\n{ABSTRACT}\n"
    _, entries, problems = parse(tmp_path, text)
    assert [(e.track, e.authors) for e in entries] == [(None, ["Ann Lee", "Bo Chen"])]
    assert [(p.line, p.message) for p in problems] == [
        (3, "authors line with no abstract after it")
    ]


def test_real_json_lines_slot_without_a_letter_is_skipped():
    """AISTATS 2022: "Barcelona Supercomputing Center; )*; and Joan Gimeno" as the list of a
    JSON Lines record: ")*" is no name, skipped like an empty slot (it was stored as an author)."""
    _, entries, problems = read_fixture("names_no_letter.jsonl")
    assert not problems
    assert entries[0].authors == [
        "Axel Brando",
        "Barcelona Supercomputing Center",
        "and Joan Gimeno",
        "Jose Rodriguez-Serrano",
        "Jordi Vitria",
    ]


def test_json_lines_names_must_hold_a_letter(tmp_path):
    records = [
        {"abstract": ABSTRACT, "authors": ["Ann Lee", ".", "Bo Chen"]},
        {"abstract": ABSTRACT, "authors": "Ann Lee, ., Bo Chen"},
        {"abstract": ABSTRACT, "authors": [".", "*"]},
        {"abstract": ABSTRACT, "authors": ["\u202aAna Costa\u202c", "Hal DaumÃ© III"]},
    ]
    text = "\n".join(json.dumps(r) for r in records) + "\n"
    _, entries, problems = parse(tmp_path, text, "x.jsonl")
    assert [e.authors for e in entries] == [
        ["Ann Lee", "Bo Chen"],
        ["Ann Lee", "Bo Chen"],
        ["Ana Costa", "Hal Daumé III"],
    ]
    assert [(p.line, p.message) for p in problems] == [
        (3, "record has no authors (a list or a comma-separated string)")
    ]


def test_paper_copilot_slot_without_a_letter_is_skipped(tmp_path):
    """The same AISTATS 2022 record as Paper Copilot writes it ("A; B; )*; ..."): the dump
    reader skips the slot as JSON Lines does."""
    record = read_fixture("names_no_letter.jsonl")[1][0]
    author = "Axel Brando; Barcelona Supercomputing Center; )*; and Joan Gimeno; Jose Rodriguez-Serrano; Jordi Vitria"
    dump = [{"title": record.title, "author": author, "abstract": record.abstract, "site": ""}]
    source, entries, problems = parse(tmp_path, json.dumps(dump), "aistats2022.json")
    assert source.format == "paperlists" and not problems
    assert entries[0].authors == record.authors


# ---------------------------------------------------------------------------------------------
# Fast paths of the text formats: each gives what the plain reading it replaces gives, on every
# line of real text (tests/real_texts.py) and on generated lines


def shapes_checking_every_line(path, block, classify):
    """read_block as it was: line_problem asked about every line."""
    shapes = []
    for offset, line in enumerate(block.lines):
        problem = line_problem(path, block.line + offset, line)
        shapes.append(("problem", problem) if problem else classify(line))
    for index in range(1, len(shapes) - 1):
        sandwiched = shapes[index - 1][0] == shapes[index + 1][0] == "text"
        if sandwiched and shapes[index][0] != "problem":
            shapes[index] = ("text", block.lines[index])
    return shapes


def classify_by_length(line):
    return ("text", line) if len(line) > 3 else ("authors", line)


def check_block(block_lines):
    block = Block(7, block_lines)
    assert read_block("f.txt", block, classify_by_length) == shapes_checking_every_line(
        "f.txt", block, classify_by_length
    )


def test_read_block_finds_the_problems_line_problem_finds_on_real_text():
    real = [line.strip() for line in REAL_TEXTS if line.strip()]
    for start in range(0, len(real), 5):
        check_block(real[start : start + 5])
    check_block(["ok", "a\0b", "\udcff", too_long(1 << 21), "plain"])


@given(st.lists(st.text(alphabet=st.sampled_from(list("ab \0\udcff\ud800é")), min_size=1)))
def test_read_block_finds_the_problems_line_problem_finds(block_lines):
    check_block(block_lines)


def test_cached_track_lines_read_as_fresh_ones_on_real_text():
    listing.is_track.cache_clear()
    tracks = [t.strip() for t in REAL_TEXTS if TRACK_SEPARATOR in t and len(t) <= 200]
    assert sum(listing.is_track(line) for line in tracks) > 20
    for line in tracks + tracks:  # the second time from the cache
        assert listing.is_track(line) == listing.is_track.__wrapped__(line), line
    assert listing.is_track.cache_info().hits >= len(tracks)
