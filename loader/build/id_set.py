"""A set of 64-bit integers (paper ids as numbers) in a fraction of a dict's memory: a dict of
the paper ids was a large share of a 1M-paper build's peak (figures: docs/benchmark.md)."""

import array

# the top bits pick a bucket: ids are hashes, so buckets fill evenly (15 ids each at 1M papers)
BUCKET_BITS = 16


class IdSet:
    """Ids in arrays of unsigned 64-bit integers, one array per value of their top BUCKET_BITS
    bits; an id is looked for in its bucket only, a short scan: slower than a dict's look-up,
    but a small share of a build's time."""

    def __init__(self) -> None:
        self.buckets: list[array.array[int] | None] = [None] * (1 << BUCKET_BITS)
        self.count = 0

    def add(self, number: int) -> bool:
        """Add `number` (0 <= number < 2**64); returns whether it was new."""
        index = number >> (64 - BUCKET_BITS)
        bucket = self.buckets[index]
        if bucket is None:
            bucket = self.buckets[index] = array.array("Q")
        elif number in bucket:
            return False
        bucket.append(number)
        self.count += 1
        return True

    def __contains__(self, number: int) -> bool:
        bucket = self.buckets[number >> (64 - BUCKET_BITS)]
        return bucket is not None and number in bucket

    def __len__(self) -> int:
        return self.count
