"""The fifth round of build fast paths give exactly what the readings they replace give.

Each is checked against the pattern or pass it replaces over every line of the real fixtures
and seeds (test_build_speed.REAL_TEXTS) and over generated text with the characters it turns
on."""

import re

from hypothesis import given, settings
from hypothesis import strategies as st

from loader import markup

from .test_build_speed import REAL_TEXTS

# the pattern simple_markdown_segments found its marks with
MARK_RUN = re.compile(r"\*+|`+")


def test_mark_runs_equal_the_pattern_on_real_text():
    assert sum(len(MARK_RUN.findall(source)) > 1 for source in REAL_TEXTS) > 20
    for source in REAL_TEXTS:
        assert markup.mark_runs(source) == [m.span() for m in MARK_RUN.finditer(source)], source


@settings(max_examples=5000, deadline=None)
@given(st.text(alphabet=st.sampled_from(list("*`a ")), max_size=20))
def test_mark_runs_equal_the_pattern(source):
    assert markup.mark_runs(source) == [m.span() for m in MARK_RUN.finditer(source)]
