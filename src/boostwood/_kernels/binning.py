"""Mapping raw feature values to bin ids.

Bin convention (shared with :mod:`boostwood.data.binning`): feature ``f`` has
``n_bins[f]`` value bins with ascending upper edges ``edges[f][0..n_bins-1]``,
the last of them ``+inf``. A value ``x`` falls in the first bin ``b`` with
``x <= edges[b]``, so ``bin(x) <= b  <=>  x <= edges[b]``: a split "bin <= b"
on binned data and "x <= edges[b]" on raw data send every row the same way.
NaN goes to the missing bin, whose id is ``n_bins[f]``.
"""
import numpy as np
from numba import njit, prange

from .._config import lock_cache_writes

#: Entries of a feature's row in the padded edge table of :func:`bin_dense_padded`.
PADDED_EDGES = 256
#: Most features given padded tables (2 KiB each: 8 MiB at most); above it the tables
#: would outgrow the caches, and the general search is used.
MAX_PADDED_FEATURES = 4096


@njit(cache=True, nogil=True, inline="always")
def _search_bin(edges, lo, n, x):
    """Smallest b in [0, n) with x <= edges[lo + b] (binary search)."""
    left = 0
    right = n - 1  # the last edge is +inf, so the answer exists
    while left < right:
        mid = (left + right) >> 1
        if x <= edges[lo + mid]:
            right = mid
        else:
            left = mid + 1
    return left


@njit(parallel=True, cache=True, nogil=True)
def bin_dense(X, edges, edge_offsets, n_bins, out):
    """Bin a dense matrix, rows in parallel.

    Parameters
    ----------
    X : ndarray of shape (n_rows, n_features), float32 or float64   # IN
    edges : ndarray of shape (sum(n_bins),), float64   # IN, all features' edges
    edge_offsets : ndarray of shape (n_features,), int64   # IN, start of each feature's edges
    n_bins : ndarray of shape (n_features,), int32   # IN, value bins per feature
    out : ndarray of shape (n_rows, n_features), uint8 or uint16   # OUT
    """
    n_rows, n_features = X.shape
    for i in prange(n_rows):
        for f in range(n_features):
            x = X[i, f]
            if np.isnan(x):
                out[i, f] = n_bins[f]
            else:
                out[i, f] = _search_bin(edges, edge_offsets[f], n_bins[f], x)


@njit(cache=True, nogil=True)
def bin_values(values, edges, lo, nb, out):
    """Bin one 1-D array of values of a single feature.

    values : ndarray of shape (n,), float   # IN
    edges : ndarray, float64   # IN, edges of all features; this one's start at ``lo``
    out : ndarray of shape (n,), uint8 or uint16   # OUT
    """
    for i in range(values.shape[0]):
        x = values[i]
        if np.isnan(x):
            out[i] = nb
        else:
            out[i] = _search_bin(edges, lo, nb, x)


@njit(cache=True, nogil=True, inline="always")
def count_below_padded(table, start, x):
    """Number of ``table[start:start + PADDED_EDGES]`` (sorted, padded with +inf) strictly
    below ``x``, i.e. the smallest b with ``x <= table[start + b]``: ``log2(PADDED_EDGES)``
    steps of constant size, which the compiler unrolls into straight-line loads and
    compares. Shared by Dataset binning (edges) and binned prediction (split cuts)."""
    b = np.uint64(0)
    step = np.uint64(PADDED_EDGES >> 1)
    first = np.uint64(start) - np.uint64(1)
    while step > 0:
        b += step * np.uint64(table[first + b + step] < x)
        step >>= np.uint64(1)
    return b


@njit(parallel=True, cache=True, nogil=True)
def bin_dense_padded(X, table, n_bins, out):
    """:func:`bin_dense` for features of at most ``PADDED_EDGES`` bins, their edges padded
    with +inf to ``PADDED_EDGES`` each (``table``, shape (n_features * PADDED_EDGES,)):
    the same bins, without the data-dependent branches of a search whose number of
    steps follows the feature's bins (7x faster on a row of 28 features of 255 bins).
    """
    n_rows, n_features = X.shape
    for i in prange(n_rows):
        for f in range(n_features):
            x = X[i, f]
            b = count_below_padded(table, f * PADDED_EDGES, x)
            out[i, f] = n_bins[f] if np.isnan(x) else b


#: Rows per task of :func:`feature_major` and :func:`missing_features`: a block of
#: 28 one-byte features is 112 KiB, read once per feature from the second-level cache.
LAYOUT_BLOCK = 4096


@njit(parallel=True, cache=True, nogil=True)
def feature_major(X_binned, out):
    """``out[f, i] = X_binned[i, f]``: the feature-major copy of a binned matrix that the
    partition kernel reads, a block of rows per task (``np.ascontiguousarray(X.T)`` runs
    on one thread and strides through memory: 58-108 ms at 800k rows of 28 features on
    this project's 2-core VM).

    X_binned : ndarray of shape (n_rows, n_features), uint8 or uint16   # IN
    out : ndarray of shape (n_features, n_rows), of X_binned's type   # OUT
    """
    n, p = X_binned.shape
    for t in prange((n + LAYOUT_BLOCK - 1) // LAYOUT_BLOCK):
        lo = t * LAYOUT_BLOCK
        hi = min(n, lo + LAYOUT_BLOCK)
        for f in range(p):
            col = out[f]
            for i in range(lo, hi):
                col[i] = X_binned[i, f]


@njit(parallel=True, cache=True, nogil=True)
def bins_of_codes(codes, luts, lut_starts, X_columns):
    """``X_columns[f, i] = luts[lut_starts[f] + codes[f, i]]``: a matrix of value codes
    re-binned through one table per feature, a feature per task (``tree_method="approx"``
    re-bins its training matrix before every tree). A feature's table (one entry per
    distinct value: 800 KB for a continuous feature of 800k rows) is read at random, so
    it stays in cache only while one task runs through its feature: 28 ms at 800k rows of
    28 features, where blocks of rows across all features took 265 and a NumPy gather
    per feature about 100 (2 threads, this project's 2-core VM). The row-major copy is
    NumPy's transpose into the existing array (12-13 ms: no page faults, unlike a new
    array's, see :func:`feature_major`).

    codes : ndarray of shape (n_features, n_rows), unsigned or integer   # IN, each row's
        value code per feature
    luts : ndarray of shape (sum of the tables' lengths,), uint8 or uint16   # IN, the
        tables one after another: feature f's bin of code c at ``lut_starts[f] + c``
    lut_starts : ndarray of shape (n_features,), int64   # IN
    X_columns : ndarray of shape (n_features, n_rows), of luts' type   # OUT
    """
    p, n = codes.shape
    for f in prange(p):
        base = np.uint64(lut_starts[f])
        col = X_columns[f]
        code = codes[f]
        for i in range(n):
            col[i] = luts[base + np.uint64(code[i])]


@njit(parallel=True, cache=True, nogil=True)
def missing_features(X_binned, missing_bins, out):
    """``out[f]`` = does any row of ``X_binned`` fall in feature f's missing bin, a block
    of rows per task (each block's flags, then their union).

    X_binned : ndarray of shape (n_rows, n_features), uint8 or uint16   # IN
    missing_bins : ndarray of shape (n_features,), integer   # IN
    out : ndarray of shape (n_features,), bool   # OUT
    """
    n, p = X_binned.shape
    n_blocks = (n + LAYOUT_BLOCK - 1) // LAYOUT_BLOCK
    flags = np.zeros((n_blocks, p), dtype=np.uint8)
    for t in prange(n_blocks):
        for i in range(t * LAYOUT_BLOCK, min(n, (t + 1) * LAYOUT_BLOCK)):
            for f in range(p):
                flags[t, f] |= X_binned[i, f] == missing_bins[f]
    for f in range(p):
        out[f] = False
        for t in range(n_blocks):
            out[f] |= flags[t, f] != 0


lock_cache_writes(globals())  # numba's cache, safe when processes compile at once
