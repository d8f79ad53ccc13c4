"""loader.build.id_set.IdSet against Python's own set."""

import random

from hypothesis import given
from hypothesis import strategies as st

from loader.build.id_set import BUCKET_BITS, IdSet

ids = st.integers(min_value=0, max_value=2**64 - 1)


@given(st.lists(st.one_of(ids, st.sampled_from([0, 1, 2**63, 2**64 - 1])), max_size=200))
def test_add_answers_as_a_set_would(numbers):
    id_set, reference = IdSet(), set()
    for number in numbers:
        assert id_set.add(number) == (number not in reference)
        reference.add(number)
        assert number in id_set
    assert len(id_set) == len(reference)


def test_ids_sharing_a_bucket_are_told_apart():
    bucket = 5 << (64 - BUCKET_BITS)
    numbers = [bucket + offset for offset in (0, 1, 2, 1 << 40)]
    id_set = IdSet()
    assert all(id_set.add(number) for number in numbers)
    assert not any(id_set.add(number) for number in numbers)
    assert bucket + 3 not in id_set
    assert len(id_set) == 4


def test_a_hundred_thousand_paper_ids():
    generator = random.Random(13)
    numbers = [generator.getrandbits(64) for _ in range(100_000)]
    id_set = IdSet()
    assert sum(id_set.add(number) for number in numbers + numbers[::7]) == len(set(numbers))
    assert all(number in id_set for number in numbers[::101])
    assert generator.getrandbits(64) not in id_set
