"""Layer 1: where per-shard sums meet.

Training code never adds statistics across data shards itself; it hands them
to a Reducer. Single-process training uses :class:`LocalReducer` (one shard,
nothing to add). Distributed training swaps in a reducer that sums the same
arrays across workers; the grower stays the same.
"""


class LocalReducer:
    """Reducer of a single shard: every all-reduce is the identity."""

    n_shards = 1

    def allreduce_histograms(self, hist, slots):
        """Sum the histogram slots ``slots`` of ``hist`` across shards, in place."""
        return hist

    def allreduce_sum(self, array):
        """Sum a small array across shards, in place. int64 arrays (fixed-point totals,
        row counts) add up exactly in any order."""
        return array

    def allreduce_max(self, array):
        """Elementwise maximum of a small float64 array across shards, in place."""
        return array
