"""HistogramBuilder: a pool of node histograms, built in batches, summed by the reducer."""
import numba
import numpy as np

from .._comm import LocalReducer
from .._config import HIST_CHANNELS, HIST_DTYPE
from .._kernels.histogram import (FEW_BLOCKS_PER_THREAD, build_histograms, feature_groups,
                                  partials_needed, subtract_histograms)

#: Rows per histogram task. A constant, so that the summation order (and hence
#: every bit of the result) never depends on the number of threads.
HIST_BLOCK = 16384


#: Most bytes of partial buffers reserved for cutting small batches into pieces (see
#: :func:`piece_buffers`).
PIECE_BUFFER_BYTES = 64 << 20
#: Pieces per thread the reserved buffers allow (:func:`piece_buffers`): a batch of up to
#: ``FEW_BLOCKS_PER_THREAD`` blocks a thread is cut into at most that many pieces a thread.
#: A module attribute so that benchmarks can compare values in one process; 1 reserves
#: what the rule before 4cfbc2c reserved (n + 1), but pieces are still cut by today's
#: ``piece_rows``, so it is not that code (a batch it cut into 3 pieces now asks for 4).
PIECE_BUFFERS_PER_THREAD = FEW_BLOCKS_PER_THREAD


def piece_buffers(n_threads, hist_bytes):
    """Partial buffers that let a batch of one node (or two) of fewer than
    ``FEW_BLOCKS_PER_THREAD`` row blocks per thread be cut into pieces (see
    :func:`boostwood._kernels.histogram.piece_rows`; a batch of many nodes may need more
    pieces than this, and is then cut by feature ranges):
    ``PIECE_BUFFERS_PER_THREAD * n_threads + 1`` histograms of ``hist_bytes``, or, where
    those would pass ``PIECE_BUFFER_BYTES`` (wide data on many threads), ``n_threads + 1``
    for batches of up to a block per thread (like LightGBM's per-thread buffers); none
    with one thread, or when even those would pass the cap. Without them the kernel cuts
    small batches by feature ranges, as before the pieces, and still takes pieces
    whenever the buffers of large nodes' extra blocks suffice. (The cap is a memory
    bound, not a measured crossover: no wide data set was timed.)"""
    if n_threads < 2:
        return 0
    for n in (PIECE_BUFFERS_PER_THREAD * n_threads + 1, n_threads + 1):
        if n * hist_bytes <= PIECE_BUFFER_BYTES:
            return n
    return 0


class HistogramBuilder:
    """Owns the histogram memory of one training run.

    Histograms live in slots of one array of shape
    (n_slots, n_features, n_bins_max, 3); a node holds a slot while it may
    still be split. The pool grows by doubling when all slots are taken.

    Parameters
    ----------
    X_binned : ndarray of shape (n_rows, n_features), uint8 or uint16
    n_bins_max : int, bins per feature including the missing bin
    reducer : object with ``allreduce_histograms(hist, slots)``; defaults to local
    initial_slots : int
    """

    def __init__(self, X_binned, n_bins_max, reducer=None, initial_slots=16):
        self.X_binned = X_binned
        self.reducer = reducer if reducer is not None else LocalReducer()
        n_features = X_binned.shape[1]
        self.hist = np.zeros((initial_slots, n_features, n_bins_max, HIST_CHANNELS),
                             dtype=HIST_DTYPE)
        self._free = list(range(initial_slots - 1, -1, -1))
        self.partial = np.zeros((0,) + self.hist.shape[1:], dtype=HIST_DTYPE)

    def acquire(self):
        """A free slot id (grows the pool when needed)."""
        if not self._free:
            self.ensure_free(1)
        return self._free.pop()

    def ensure_free(self, n_free):
        """At least ``n_free`` free slots: the pool doubles (at least) when it has fewer.
        ``hist`` may be reallocated: re-read it after this."""
        if len(self._free) >= n_free:
            return
        old = self.hist
        n_old = old.shape[0]
        n_new = max(2 * n_old, n_old + n_free - len(self._free))
        self.hist = np.empty((n_new,) + old.shape[1:], dtype=HIST_DTYPE)
        self.hist[:n_old] = old
        self._free = list(range(n_new - 1, n_old - 1, -1)) + self._free

    def release(self, slot):
        self._free.append(slot)

    def release_many(self, slots):
        """Give back every slot of the list ``slots``."""
        self._free.extend(slots)

    def reserve_partials(self, n_buffers):
        """Make room for ``n_buffers`` partial histograms (extra blocks of large nodes, or
        the pieces of small batches: :func:`piece_buffers`)."""
        if self.partial.shape[0] < n_buffers:
            self.partial = np.empty((n_buffers,) + self.hist.shape[1:], dtype=HIST_DTYPE)

    def build(self, gh, buf, sides, starts, counts, slots, features):
        """Histograms of a batch of nodes from their rows, then summed across shards.

        Each node's segment is cut into blocks of ``HIST_BLOCK`` rows (one
        parallel task each, or one per thread and block for small batches);
        see :func:`boostwood._kernels.histogram.build_histograms`.
        """
        n_blocks = sum(max((c + HIST_BLOCK - 1) // HIST_BLOCK, 1) for c in counts.tolist())
        n_threads = numba.get_num_threads()
        self.reserve_partials(max(partials_needed(n_blocks, len(counts), n_threads),
                                  piece_buffers(n_threads, self.hist[0].nbytes)))
        n_groups = feature_groups(n_blocks, features.shape[0], n_threads)
        build_histograms(self.X_binned, gh, buf, sides, starts, counts, slots, features,
                         HIST_BLOCK, n_groups, n_threads, self.hist, self.partial)
        self.allreduce(slots)

    def allreduce(self, slots):
        """Sum the histograms in ``slots`` across data shards: the only place where shards'
        histograms meet (the grower builds some slots itself, fused with the partition)."""
        if len(slots):
            self.reducer.allreduce_histograms(self.hist, np.asarray(slots, dtype=np.int64))

    def subtract(self, parent_slots, child_slots, features):
        """The parent's slot becomes the sibling's histogram: hist[p] -= hist[c]."""
        subtract_histograms(parent_slots, child_slots, features, self.hist)
