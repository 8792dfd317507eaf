"""Counter-based random numbers: a value per (seed, stream, counter, row id).

A data shard holding rows 17, 40 and 99 draws for them exactly what a single
process holding every row draws, because nothing depends on how many numbers
were drawn before: each value is a hash of its coordinates. The hash is
SplitMix64's finaliser (Steele, Lea & Flood 2014), applied once per coordinate;
it passes BigCrush as a generator and is what counter-based uses need here
(bagging rows, sampling rows for the bin edges), not cryptographic strength.
"""
import numpy as np
from numba import njit, prange, uint64

from .._config import lock_cache_writes

#: Streams: independent uses of the same seed.
STREAM_BAGGING = 1
STREAM_BIN_SAMPLE = 2
STREAM_QUANTIZE = 3
STREAM_RANK_PAIRS = 4  # LambdaMART's sampled pairs (lambdarank_pair_method="mean")
STREAM_XENDCG = 5  # XE-NDCG's per-row targets
STREAM_BYNODE = 6  # colsample_bynode: a node's key from its parent's, its feature draw
STREAM_SKETCH_SAMPLE = 7  # the rows approx proposes candidates from (sketch_sample_cnt)

_GOLDEN = uint64(0x9E3779B97F4A7C15)
_M1 = uint64(0xBF58476D1CE4E5B9)
_M2 = uint64(0x94D049BB133111EB)
#: Rows per task of the parallel passes here (results never depend on it: every draw is
#: a hash of its row id); 800k rows on 16 threads are 196 tasks, the busiest thread
#: 1.06x the mean rows (65,536-row tasks: 13, 1.31x).
_BLOCK = 4096


@njit(cache=True, nogil=True, inline="always")
def _mix(z):
    z = (z ^ (z >> uint64(30))) * _M1
    z = (z ^ (z >> uint64(27))) * _M2
    return z ^ (z >> uint64(31))


@njit(cache=True, nogil=True, inline="always")
def counter_hash(seed, stream, counter, row):
    """uint64 hash of (seed, stream, counter, row); every argument an integer >= 0."""
    z = _mix(uint64(seed) + _GOLDEN)
    z = _mix(z ^ (uint64(stream) * _GOLDEN + uint64(counter)))
    return _mix(z ^ (uint64(row) + _GOLDEN))


@njit(parallel=True, cache=True, nogil=True)
def row_hashes(seed, stream, counter, row_ids, out):
    """out[i] = counter_hash(seed, stream, counter, row_ids[i]).

    row_ids : ndarray of shape (n,), int64   # IN, global row ids
    out : ndarray of shape (n,), uint64   # OUT
    """
    n = row_ids.shape[0]
    for t in prange((n + _BLOCK - 1) // _BLOCK):
        for i in range(t * _BLOCK, min(n, (t + 1) * _BLOCK)):
            out[i] = counter_hash(seed, stream, counter, row_ids[i])


def row_uniforms(seed, stream, counter, row_ids, out):
    """out[i] = a uniform float in [0, 1) for (seed, stream, counter, row_ids[i]): the top
    53 bits of :func:`row_hashes`.

    row_ids : ndarray of shape (n,), int64   # IN, global row ids
    out : ndarray of shape (n,), float64   # OUT
    """
    h = np.empty(row_ids.shape[0], dtype=np.uint64)
    row_hashes(seed, stream, counter, row_ids, h)
    out[:] = (h >> np.uint64(11)).astype(np.float64) * (1.0 / 9007199254740992.0)


@njit(cache=True, nogil=True, inline="always")
def _in_bag(seed, stream, counter, row_ids, all_ids, i, fraction):
    """Is row ``i`` in the bag: its uniform (as :func:`row_uniforms`) below ``fraction``?"""
    row = i if all_ids else row_ids[i]
    h = counter_hash(seed, stream, counter, row)
    return np.float64(h >> uint64(11)) * (1.0 / 9007199254740992.0) < fraction


@njit(parallel=True, cache=True, nogil=True)
def split_rows(seed, stream, counter, row_ids, all_ids, n, fraction, inside, outside):
    """The rows whose uniform for (seed, stream, counter, row id) is below ``fraction``
    into ``inside``, the others into ``outside``, each ascending; returns how many are
    inside. The same draws as ``row_uniforms(...) < fraction``, in two passes over blocks
    (count, then write at each block's offset) without an array of uniforms.

    row_ids : ndarray of shape (n,), int64   # IN, global row ids (unused when ``all_ids``)
    all_ids : bool   # IN, the row ids are 0..n-1
    inside : ndarray of shape (n,), int32   # OUT, its first (returned) entries
    outside : ndarray of shape (n,), int64   # OUT, its first n - (returned) entries
    """
    nb = (n + _BLOCK - 1) // _BLOCK
    counts = np.zeros(nb + 1, dtype=np.int64)
    for t in prange(nb):
        c = 0
        for i in range(t * _BLOCK, min(n, (t + 1) * _BLOCK)):
            c += _in_bag(seed, stream, counter, row_ids, all_ids, i, fraction)
        counts[t + 1] = c
    for t in range(nb):
        counts[t + 1] += counts[t]
    for t in prange(nb):
        a = counts[t]
        b = t * _BLOCK - counts[t]
        for i in range(t * _BLOCK, min(n, (t + 1) * _BLOCK)):
            if _in_bag(seed, stream, counter, row_ids, all_ids, i, fraction):
                inside[a] = i
                a += 1
            else:
                outside[b] = i
                b += 1
    return counts[nb]


lock_cache_writes(globals())  # numba's cache, safe when processes compile at once
