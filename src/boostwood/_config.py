"""Layer 0: the dtypes every layer agrees on, and thread resolution.

Each dtype carries the reason it was chosen; change one here and nowhere else.
"""
import numba
import numpy as np

#: Binned feature values. 255 value bins plus one missing bin fit a byte, which
#: keeps a 1M x 28 training matrix at 28 MB and the histogram loop cache-friendly.
X_BINNED_DTYPE = np.uint8
#: Used when ``max_bin`` > 255: two bytes per value, up to 65535 value bins.
X_BINNED_WIDE_DTYPE = np.uint16
#: Per-row gradients and hessians as the objective returns them. float32 halves
#: the memory of the (n_outputs, n_rows, 2) gradient array; the grower turns them
#: into fixed-point integers (GQ_DTYPE) before it sums anything.
G_H_DTYPE = np.float32
#: Per-row gradients and hessians in fixed point: integer multiples of a per-tree
#: power-of-two unit (see :mod:`boostwood.tree.stats`). int32 per row (the unit keeps
#: every row below 2**31, 8 bytes a row as float32 pairs were, so the histogram loop
#: reads no more memory); every *sum* is int64 (HIST_DTYPE), so the sum of any set of
#: rows is exact, the same in every order, on any number of threads or data shards,
#: and histogram subtraction (parent - child) is exact.
GQ_DTYPE = np.int32
#: The same with ``use_quantized_grad``: a few levels per row (at most 127 for a
#: gradient, 254 for a hessian), so that a histogram cell packs gradient, hessian and
#: count into one int64 (see :mod:`boostwood._kernels.histogram`); half the memory too.
GQ_LOW_DTYPE = np.int16
#: Histogram cells and node sums (fixed-point gradient, fixed-point hessian, row
#: count): int64 sums of GQ_DTYPE values, which the chosen unit keeps below 2**62
#: in magnitude. Converted to float64 only to score a split or set a leaf.
HIST_DTYPE = np.int64
#: Raw margins (the additive model F(x)) and leaf values: float64 so that
#: hundreds of small shrunken steps accumulate without drift.
RAW_DTYPE = np.float64
#: Split thresholds on raw feature values: float64 holds every float32 and
#: float64 input exactly, so prediction compares like training did.
THRESHOLD_DTYPE = np.float64
#: Row indices inside the partition array: int32 halves the memory of int64
#: and limits one Dataset to 2**31 - 1 rows (checked at the boundary).
INDEX_DTYPE = np.int32
MAX_ROWS = np.iinfo(np.int32).max
#: Node ids, feature ids and bin ids in trees.
NODE_DTYPE = np.int32

#: Number of channels of one histogram cell: sum of g, sum of h, row count.
HIST_CHANNELS = 3


def resolve_nthreads(nthread):
    """Number of threads to use: ``None``, 0 or negative mean all cores numba sees.

    Parameters
    ----------
    nthread : int or None

    Returns
    -------
    int, at least 1 and at most ``numba.config.NUMBA_NUM_THREADS``.
    """
    available = numba.config.NUMBA_NUM_THREADS
    if nthread is None or nthread <= 0:
        return available
    return int(min(nthread, available))


def set_threads(nthread):
    """Resolve ``nthread`` and make numba's parallel loops use that many threads."""
    n = resolve_nthreads(nthread)
    numba.set_num_threads(n)
    return n

