"""Which lines read as a conference's area name (loader/rules/areas.py), on the real area lists
and on every real authors line the fixtures and seeds hold."""

import pytest

from loader.read.sources import discover, read_source
from loader.records import Entry
from loader.rules.areas import KNOWN_AREAS, reads_as_area

from .conftest import FIXTURES, SEEDS


def test_every_known_area_reads_as_one():
    assert [area for area in KNOWN_AREAS if not reads_as_area(area)] == []


@pytest.mark.parametrize(
    "area",
    [
        "Search, Optimization, and Games",  # the shapes
        "Knowledge Representation & Reasoning",
        "Planning, Routing, and Scheduling",  # AAAI 2022
        "AI Ethics, Trust, Fairness",  # IJCAI 2021
        "[Engagement] Summarization, Analytics, and Storytelling",  # ACM MM 2024
        "Social Aspects",  # seeds
        "reinforcement learning",
    ],
)
def test_area_lists_read_as_areas(area):
    assert reads_as_area(area)


@pytest.mark.parametrize(
    "line",
    [
        "Lina María Paz, José Guivant, Juan D. Tardós, and José Neira",  # RSS 2007
        "Masayoshi Ishikawa, Mariko Okude, Takehisa Nishida & Kazuo Muto",  # ICLR 2017
        "Noah Patton, Jihwan Jeong, Mike Gimelfarb, Scott Sanner",  # AAAI 2022
        "Grace Hopper",
        "Art B. Owen",  # an area word and an initial
    ],
)
def test_names_do_not_read_as_areas(line):
    assert not reads_as_area(line)


def authors_lines():
    """The author list of every paper the real fixtures and the seeds load (text pages, JSON
    Lines, the public dumps), joined as a page writes it."""
    for path in discover([FIXTURES / "real", FIXTURES / "dumps", SEEDS]):
        for item in read_source(path)[1]:
            if isinstance(item, Entry) and len(item.authors) > 1:
                yield ", ".join(item.authors)


def test_no_real_authors_line_reads_as_an_area():
    lines = list(authors_lines())
    assert len(lines) > 500
    assert [line for line in lines if reads_as_area(line)] == []
