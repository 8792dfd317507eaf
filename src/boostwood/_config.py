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
#: Per-row gradients and hessians. float32 halves the memory traffic of the
#: histogram loop; every *sum* of them is float64 (see HIST_DTYPE).
G_H_DTYPE = np.float32
#: Histogram cells and node sums (gradient, hessian, row count). float64 so
#: that sums over millions of rows keep ~15 significant digits and histogram
#: subtraction (parent - child) stays accurate.
HIST_DTYPE = np.float64
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

