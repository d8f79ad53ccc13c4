"""How much of the real texts (tests/real_texts.py) a check of a fast path against the plain
reading it replaces reads: `make test` every twelfth text (the same ones each run), `make
test-slow` every one."""

import pytest

REAL_TEXT_SHARES = pytest.mark.parametrize(
    "share", [12, pytest.param(1, marks=pytest.mark.slow)], ids=lambda n: f"1-in-{n}"
)
