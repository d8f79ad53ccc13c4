"""How many examples a property test of a pure text function (tests/test_markup.py,
test_labels.py, test_lines.py) tries: half of the profile's, 100 in `make test` (derandomized,
the same each run) and as many times more in `make test-deep` as that profile has more
(tests/conftest.py scaled_examples). These are the many small properties that back the fast
paths and the rules on generated text; their real-text twins read every line of real text in
`make test-slow`."""

from hypothesis import settings

from .conftest import scaled_examples

TEXT_PROPERTY = settings(max_examples=scaled_examples(100))
