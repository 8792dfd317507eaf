"""Fixed-point gradients: per-row (g, h) as integer multiples of a power-of-two unit.

Integer sums are associative, so a histogram, a node total or a child obtained
by subtraction is the same integer whatever the order of the rows, the number of
threads or the number of data shards that added it up. The unit is chosen by
:func:`boostwood.tree.stats.fixed_point_units`; these kernels only find the
largest magnitudes and round.
"""
import numpy as np
from numba import njit, prange, uint64

from .._config import lock_cache_writes
from .intrinsics import bits_of_float, float_of_bits
from .random import STREAM_QUANTIZE, counter_hash

#: Rows per task of the parallel passes below (a constant: results never depend on
#: threads, and max / round are order-free anyway). Small enough that the tasks share
#: out evenly: 800k rows on 16 threads are 196 tasks, the busiest thread 1.06x the mean
#: rows (65,536-row tasks were 13, 1.31x, and left 3 threads idle).
FIXED_BLOCK = 4096


#: The bits of float64 inf: a non-negative double's bits order as its value, and a NaN's
#: are above inf's.
_INF_BITS = np.int64(0x7FF0000000000000)


@njit(parallel=True, cache=True, nogil=True)
def max_abs_gh(gh, out):
    """out[c] = max over rows of |gh[:, c]| (c = 0 gradient, 1 hessian); NaN if any is NaN
    or infinite.

    Each block of ``FIXED_BLOCK`` rows goes through :func:`_max_abs_bits`, a serial loop
    of vector code.

    gh : ndarray of shape (n_rows, 2), float32 or float64   # IN
    out : ndarray of shape (2,), float64   # OUT
    """
    n = gh.shape[0]
    n_blocks = (n + FIXED_BLOCK - 1) // FIXED_BLOCK
    part = np.empty((n_blocks, 2), dtype=np.int64)  # each block sets its row
    for t in prange(n_blocks):
        _max_abs_bits(gh[t * FIXED_BLOCK:min(n, (t + 1) * FIXED_BLOCK)], part[t])
    # scalars and loops, not np.zeros: an array expression is a parallel region here
    top_g = top_h = np.int64(0)
    for t in range(n_blocks):
        top_g = max(top_g, part[t, 0])
        top_h = max(top_h, part[t, 1])
    bad = top_g >= _INF_BITS or top_h >= _INF_BITS
    out[0] = np.nan if bad else float_of_bits(top_g)
    out[1] = np.nan if bad else float_of_bits(top_h)


@njit(cache=True, nogil=True)
def _max_abs_bits(gh, out):
    """The int64 bits of max |gh[:, c]| (as float64) for c = 0, 1: a maximum of integers
    (vector code, where a float maximum stays one compare at a time); above ``_INF_BITS``
    when a value is NaN, at it when one is infinite."""
    bits_g = np.int64(0)
    bits_h = np.int64(0)
    for i in range(gh.shape[0]):
        g = abs(np.float64(gh[i, 0]))
        h = abs(np.float64(gh[i, 1]))
        bits_g = max(bits_g, bits_of_float(g))
        bits_h = max(bits_h, bits_of_float(h))
    out[0] = bits_g
    out[1] = bits_h


@njit(parallel=True, cache=True, nogil=True)
def quantize_gh(gh, scales, out):
    """out[i, c] = round-half-even(gh[i, c] * scales[c]) as an integer (int32 or int64).

    ``scales`` are powers of two, so the product is exact and only the rounding
    to an integer loses anything: at most half a unit per row. Each block of
    ``FIXED_BLOCK`` rows goes through :func:`_quantize_rows`, a serial loop of vector
    code (a parallel loop's own body is not vectorized).

    gh : ndarray of shape (n_rows, 2), float32 or float64   # IN
    scales : ndarray of shape (2,), float64   # IN, 1 / unit of each channel
    out : ndarray of shape (n_rows, 2), int32 or int64   # OUT; the scales must keep
        every value in range
    """
    n = gh.shape[0]
    for t in prange((n + FIXED_BLOCK - 1) // FIXED_BLOCK):
        lo = t * FIXED_BLOCK
        hi = min(n, lo + FIXED_BLOCK)
        _quantize_rows(gh[lo:hi], scales[0], scales[1], out[lo:hi])


@njit(cache=True, nogil=True)
def _quantize_rows(gh, sg, sh, out):
    """:func:`quantize_gh` on a block of rows, ``sg``, ``sh`` the two scales."""
    for i in range(gh.shape[0]):
        out[i, 0] = np.rint(np.float64(gh[i, 0]) * sg)
        out[i, 1] = np.rint(np.float64(gh[i, 1]) * sh)


_LOW32 = uint64(0xFFFFFFFF)
_TO_UNIT = 1.0 / 4294967296.0


@njit(parallel=True, cache=True, nogil=True)
def quantize_gh_low(gh, scales, stochastic, seed, counter, row_ids, out):
    """Few-level quantization (``use_quantized_grad``): ``out[i, c] = floor(gh[i, c] *
    scales[c] + u)``, with ``u`` uniform in [0, 1) drawn for (seed, counter, row id) when
    ``stochastic`` (unbiased: the expected integer is ``gh * scale``), else 1/2 (rounding
    to the nearest level). Each draw is a hash of the row's global id, so a row gets the
    same level on any number of threads or data shards.

    gh : ndarray of shape (n_rows, 2), float32 or float64   # IN
    scales : ndarray of shape (2,), float64   # IN, levels per unit of g and of h; they must
        keep every ``|gh * scale|`` within the range of ``out``'s dtype minus one
    stochastic : bool
    seed, counter : int >= 0   # the run's seed; a number per (round, output)
    row_ids : ndarray of shape (n_rows,), int64, or None   # IN, global row ids (None:
        0..n_rows-1, without an array of them)
    out : ndarray of shape (n_rows, 2), int16   # OUT
    """
    n = gh.shape[0]
    sg = scales[0]
    sh = scales[1]
    for t in prange((n + FIXED_BLOCK - 1) // FIXED_BLOCK):
        for i in range(t * FIXED_BLOCK, min(n, (t + 1) * FIXED_BLOCK)):
            ug = 0.5
            uh = 0.5
            if stochastic:
                if row_ids is None:  # one process holding every row: the id is i
                    rid = np.int64(i)
                else:
                    rid = row_ids[i]
                z = counter_hash(seed, STREAM_QUANTIZE, counter, rid)
                ug = np.float64(z >> uint64(32)) * _TO_UNIT
                uh = np.float64(z & _LOW32) * _TO_UNIT
            out[i, 0] = np.floor(np.float64(gh[i, 0]) * sg + ug)
            out[i, 1] = np.floor(np.float64(gh[i, 1]) * sh + uh)


@njit(parallel=True, cache=True, nogil=True)
def code_weight_sums(codes, weights, n_values, out):
    """out[f, c] = sum of the fixed-point ``weights`` of the rows whose code of feature f
    is c, for c < n_values[f] (missing codes are skipped). Exact (int64).

    codes : ndarray of shape (n_features, n_rows), uint32   # IN, rank codes
    weights : ndarray of shape (n_rows,), int64   # IN
    n_values : ndarray of shape (n_features,), int64   # IN
    out : ndarray of shape (n_features, max n_values), int64   # OUT
    """
    for f in prange(codes.shape[0]):
        out[f, :] = 0
        nv = n_values[f]
        col = codes[f]
        for i in range(codes.shape[1]):
            c = np.int64(col[i])
            if c < nv:
                out[f, c] += weights[i]


@njit(cache=True, nogil=True)
def exact_cuts(values, weights, unit, n):
    """The cuts :meth:`boostwood.data.sketch.Summary.cuts` gives for the exact summary of
    sorted distinct ``values`` with the fixed-point weights ``weights`` (one unit =
    ``unit``): ``Summary.from_value_weights(values, weights * unit).cuts(n)``, the same
    floats by the same operations in the same order, in one compiled pass over the values
    and a binary search per rank (``tree_method="approx"`` proposes them for every
    feature before every tree; the NumPy form made five passes of temporaries over each
    feature's 800k values). Values of zero weight are left out; returns an empty array
    when no value has weight.

    values : ndarray of shape (k,), float64, ascending   # IN
    weights : ndarray of shape (k,), int64, non-negative   # IN
    unit : float, the weight of one fixed-point unit
    n : int, the number of ranks, ``total * j / n`` for j = 1..n
    """
    m = 0
    for i in range(values.shape[0]):
        m += weights[i] > 0
    kept = np.empty(m, dtype=np.float64)
    wmin = np.empty(m, dtype=np.float64)
    rmax = np.empty(m, dtype=np.float64)
    mid = np.empty(m, dtype=np.float64)
    running = 0.0
    k = 0
    for i in range(values.shape[0]):
        if weights[i] > 0:
            w = weights[i] * unit
            running += w
            kept[k], wmin[k], rmax[k] = values[i], w, running
            mid[k] = (running - w) + running  # rmin + rmax
            k += 1
    if m == 0:
        return kept
    total = rmax[m - 1]
    out = np.empty(n + 1, dtype=np.float64)
    for r in range(n):
        d2 = 2.0 * (total * (r + 1) / n)
        i = min(max(np.searchsorted(mid, d2, side="right") - 1, 0), m - 1)
        j = min(i + 1, m - 1)
        take_next = (d2 >= (rmax[i] - wmin[i]) + wmin[i] + rmax[j] - wmin[j]) and j > i \
            and d2 >= mid[0]
        out[r] = kept[j] if take_next else kept[i]
    out[n] = kept[m - 1]
    return np.unique(out)


lock_cache_writes(globals())  # numba's cache, safe when processes compile at once
