"""Fixed-point gradients: per-row (g, h) as integer multiples of a power-of-two unit.

Integer sums are associative, so a histogram, a node total or a child obtained
by subtraction is the same integer whatever the order of the rows, the number of
threads or the number of data shards that added it up. The unit is chosen by
:func:`boostwood.tree.stats.fixed_point_units`; these kernels only find the
largest magnitudes and round.
"""
import numpy as np
from numba import njit, prange, uint64

from .random import STREAM_QUANTIZE, counter_hash

#: Rows per task of the parallel passes below (a constant: results never depend on
#: threads, and max / round are order-free anyway).
FIXED_BLOCK = 65536


@njit(parallel=True, cache=True, nogil=True)
def max_abs_gh(gh, out):
    """out[c] = max over rows of |gh[:, c]| (c = 0 gradient, 1 hessian); NaN if any is NaN.

    gh : ndarray of shape (n_rows, 2), float32 or float64   # IN
    out : ndarray of shape (2,), float64   # OUT
    """
    n = gh.shape[0]
    n_blocks = (n + FIXED_BLOCK - 1) // FIXED_BLOCK
    part = np.zeros((max(n_blocks, 1), 2))
    for t in prange(n_blocks):
        mg = 0.0
        mh = 0.0
        bad = False
        for i in range(t * FIXED_BLOCK, min(n, (t + 1) * FIXED_BLOCK)):
            g = abs(np.float64(gh[i, 0]))
            h = abs(np.float64(gh[i, 1]))
            if not (g <= 1.7976931348623157e308 and h <= 1.7976931348623157e308):
                bad = True  # NaN or inf
            mg = max(mg, g)
            mh = max(mh, h)
        part[t, 0] = np.nan if bad else mg
        part[t, 1] = np.nan if bad else mh
    out[0] = 0.0
    out[1] = 0.0
    for t in range(part.shape[0]):
        for c in range(2):
            if np.isnan(part[t, c]) or np.isnan(out[c]):
                out[c] = np.nan
            else:
                out[c] = max(out[c], part[t, c])


@njit(parallel=True, cache=True, nogil=True)
def quantize_gh(gh, scales, out):
    """out[i, c] = round-half-even(gh[i, c] * scales[c]) as an integer (int32 or int64).

    ``scales`` are powers of two, so the product is exact and only the rounding
    to an integer loses anything: at most half a unit per row.

    gh : ndarray of shape (n_rows, 2), float32 or float64   # IN
    scales : ndarray of shape (2,), float64   # IN, 1 / unit of each channel
    out : ndarray of shape (n_rows, 2), int32 or int64   # OUT; the scales must keep
        every value in range
    """
    n = gh.shape[0]
    sg = scales[0]
    sh = scales[1]
    for t in prange((n + FIXED_BLOCK - 1) // FIXED_BLOCK):
        for i in range(t * FIXED_BLOCK, min(n, (t + 1) * FIXED_BLOCK)):
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
    row_ids : ndarray of shape (n_rows,), int64   # IN, global row ids
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
                z = counter_hash(seed, STREAM_QUANTIZE, counter, row_ids[i])
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
