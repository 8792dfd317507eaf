"""Exact sums of float64 values that add up the same in any order and across shards.

Fixed point does not fit sums whose terms span unknown magnitudes (labels for the
initial score, per-row metric terms). These are summed exactly instead, in a
"superaccumulator": every finite float64 is ``M * 2**E`` with an integer
``|M| < 2**53`` and ``-1126 <= E <= 971``; ``M`` is split into a high part
(< 2**27) and a low part (< 2**26), and each part is added to the int64 cell of
its exponent. Integer cells are exact and order-free, so accumulators of several
row blocks or data shards are simply added cell by cell (the reducer's
``allreduce_sum``), and :func:`boostwood._comm.exact_value` rounds the exact total
once, to the nearest float64.

Capacity: a cell receives at most one part of magnitude < 2**27 per value, so
fewer than 2**36 values can never overflow it.
"""
import math

import numpy as np
from numba import njit, prange

from .._config import lock_cache_writes

#: Cells per accumulator row: exponents -1126 .. 971 of the integer mantissa.
N_CELLS = 2098
#: Exponent of cell 0.
E0 = -1126
#: The mantissa is split at this bit.
SPLIT = 26
#: Rows per task of the parallel accumulation (a constant; sums are exact anyway).
_BLOCK = 65536


def new_accumulator(n_sums=1):
    """Zeroed accumulator for ``n_sums`` independent sums: int64 (n_sums, 2, N_CELLS)."""
    return np.zeros((n_sums, 2, N_CELLS), dtype=np.int64)


@njit(cache=True, nogil=True, inline="always")
def _add(acc, s, x):
    if x == 0.0:
        return
    m, e = math.frexp(x)  # x = m 2**e, 0.5 <= |m| < 1
    mant = np.int64(m * 9007199254740992.0)  # m 2**53: exact
    cell = e - 53 - E0
    neg = mant < 0
    if neg:
        mant = -mant
    hi = mant >> SPLIT
    lo = mant & ((1 << SPLIT) - 1)
    if neg:
        hi = -hi
        lo = -lo
    acc[s, 0, cell] += hi
    acc[s, 1, cell] += lo


@njit(parallel=True, cache=True, nogil=True)
def accumulate(values, acc, flags):
    """Add every finite entry of ``values`` (shape (n_rows, n_sums), float64) to the
    accumulator ``acc[j]`` of its column j; a NaN, +inf or -inf entry is left out and
    sets ``flags[0]``, ``flags[1]`` or ``flags[2]`` to 1 (one pass: callers need no
    check of their own before).

    values : ndarray of shape (n_rows, n_sums), float64   # IN
    acc : ndarray of shape (n_sums, 2, N_CELLS), int64   # IN/OUT
    flags : ndarray of shape (3,), float64   # IN/OUT, set where a kind of entry was seen
    """
    n, n_sums = values.shape
    n_blocks = (n + _BLOCK - 1) // _BLOCK
    parts = np.empty((n_blocks, n_sums, 2, N_CELLS), dtype=np.int64)
    seen = np.empty((n_blocks, 3), dtype=np.float64)
    for t in prange(n_blocks):
        part = parts[t]
        for s in range(n_sums):  # loops, not array expressions: each of those would be a
            for c in range(2):  # parallel region of its own in this function
                for cell in range(N_CELLS):
                    part[s, c, cell] = 0
        for k in range(3):
            seen[t, k] = 0.0
        for i in range(t * _BLOCK, min(n, (t + 1) * _BLOCK)):
            for s in range(n_sums):
                x = values[i, s]
                if math.isfinite(x):
                    _add(part, s, x)
                else:
                    seen[t, 0 if x != x else (1 if x > 0 else 2)] = 1.0
    for t in range(n_blocks):
        for k in range(3):
            if seen[t, k] > 0:
                flags[k] = 1.0
        for s in range(n_sums):
            for c in range(2):
                for cell in range(N_CELLS):
                    acc[s, c, cell] += parts[t, s, c, cell]


lock_cache_writes(globals())  # numba's cache, safe when processes compile at once
