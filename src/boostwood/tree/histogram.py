"""HistogramBuilder: a pool of node histograms, built in batches, summed by the reducer."""
import numba
import numpy as np

from .._comm import LocalReducer
from .._config import HIST_CHANNELS, HIST_DTYPE
from .._kernels.histogram import build_histograms, partials_bound, subtract_histograms

#: Most rows a histogram block sums in one pass (below 2**COUNT_BITS, so that int32 and
#: int16 rows fit packed cells). Sums are integers: no bit of a result depends on it.
HIST_BLOCK = 16384


class HistogramBuilder:
    """Owns the histogram memory of one training run.

    Histograms live in slots of one array of shape
    (n_slots, n_features, n_bins_max, 3); a node holds a slot while it may
    still be split. The pool grows by doubling when all slots are taken.

    Parameters
    ----------
    X_binned : ndarray of shape (n_rows, n_features), uint8 or uint16
    n_bins_max : int, cells per feature: the data's bins including the missing bin, or more
        (the grower gives an odd count, :func:`~boostwood._kernels.histogram.hist_bins`)
    reducer : object with ``allreduce_histograms(hist, slots)``; defaults to local
    initial_slots : int
    n_bins : ndarray of shape (n_features,), int32, optional: value bins per feature (its
        missing bin is ``n_bins[f]``). A build writes feature f's first ``n_bins[f] + 1``
        cells only (:func:`~boostwood._kernels.histogram.used_cells`); the cells above may
        hold anything. Held, not copied: a caller that re-bins between trees updates it
        in place. None: every cell is a bin (``n_bins_max - 1`` value bins).
    """

    def __init__(self, X_binned, n_bins_max, reducer=None, initial_slots=16, n_bins=None):
        self.X_binned = X_binned
        if n_bins is None:
            n_bins = np.full(X_binned.shape[1], n_bins_max - 1, dtype=np.int32)
        if n_bins.dtype != np.int32 or n_bins.shape != (X_binned.shape[1],):
            raise ValueError("n_bins must be an int32 array of one entry per feature")
        self.n_bins = n_bins
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

    def free_stack(self):
        """The free slots as the compiled loop's stack: (an int64 array of the pool's
        size holding them first, their number)."""
        free = np.empty(self.hist.shape[0], dtype=np.int64)
        free[:len(self._free)] = self._free
        return free, len(self._free)

    def set_free_stack(self, free, n):
        """Take back the free slots from the compiled loop's stack (its first ``n``)."""
        self._free = free[:n].tolist()

    def release(self, slot):
        self._free.append(slot)

    def release_many(self, slots):
        """Give back every slot of the list ``slots``."""
        self._free.extend(slots)

    def reserve_partials(self, n_buffers):
        """Make room for ``n_buffers`` partial histograms (one per thread after the first:
        :func:`~boostwood._kernels.histogram.partials_bound`)."""
        if self.partial.shape[0] < n_buffers:
            self.partial = np.empty((n_buffers,) + self.hist.shape[1:], dtype=HIST_DTYPE)

    def build(self, gh, buf, sides, starts, counts, slots, features):
        """Histograms of a batch of nodes from their rows, then summed across shards.

        The batch's rows are cut into a run per thread and a run's part of a node into
        blocks of at most ``HIST_BLOCK`` rows; see
        :func:`boostwood._kernels.histogram.build_histograms`.
        """
        n_threads = numba.get_num_threads()
        self.reserve_partials(partials_bound(int(np.sum(counts)), n_threads))
        build_histograms(self.X_binned, gh, buf, sides, starts, counts, slots, features,
                         self.n_bins, HIST_BLOCK, n_threads, self.hist, self.partial)
        self.allreduce(slots)

    def allreduce(self, slots):
        """Sum the histograms in ``slots`` across data shards: the only place where shards'
        histograms meet (the grower builds some slots itself, fused with the partition)."""
        if len(slots):
            self.reducer.allreduce_histograms(self.hist, np.asarray(slots, dtype=np.int64))

    def subtract(self, parent_slots, child_slots, features):
        """The parent's slot becomes the sibling's histogram: hist[p] -= hist[c]."""
        subtract_histograms(parent_slots, child_slots, features, self.hist)
