"""Forest prediction over the forest's own bins: the fast path of ``Booster.predict``.

A numeric split sends a row right when ``x > threshold``. Collect, per feature, the
sorted distinct thresholds of every split in the forest (its *cuts*) and replace
``x`` by its bin, the number of cuts below it (NaN gets ``NAN_BIN``), and every
split by the index of its threshold among the cuts: ``x > cuts[j]`` exactly when
``bin(x) > j``. The rows of a block are binned once (a branch-free binary search
per feature) and the trees then compare small integers, read from a block of
2-byte bins that stays in the first-level cache, instead of doubles.

A feature of at most ``PADDED_CUTS - 1`` cuts (any forest grown on 256 bins or fewer)
has its cuts padded with +inf to ``PADDED_CUTS`` entries: +inf is below no value, so
the count is unchanged, and the search takes exactly eight steps whose offsets are
constants. The compiler unrolls those into a straight line of loads and compares, and
binning a row of 28 features took 0.24 us instead of 1.75 with the search whose
number of steps follows the feature's number of cuts (measured on this module's
kernels, 200k rows, one thread): binning had been a third of predicting 300 trees.

A node is one 64-bit entry, read with a single load: a 32-bit word in the low half and
its left child in the high half (see :func:`boostwood.tree.tree.binned_nodes`; words and
children in two arrays took 1.01-1.14x as long on 300-tree models, 200k rows, 1 and 2
threads). The word holds ``a`` (1 when NaN goes left) at bit 17, the feature from bit 18
on and ``threshold bin + a`` in bits 0-16; a row goes right when ``(bin + a) mod 2**16`` is
greater than that, which is ``bin > threshold bin`` for a value and, for NaN
(``NAN_BIN`` = 2**16 - 1), always when ``a`` = 0 and never when ``a`` = 1: missing
values follow ``default_left`` without a branch. The right child is left + 1. A leaf's
threshold field is ``LEAF`` (2**16, above every bin: bit 16 marks a leaf) and its left
child is itself, so a step taken at a leaf stays there.

Rows walk a tree several at a time, without a branch on the data, so the processor
overlaps their chains of dependent reads: eight rows for the tree's full depth on a
balanced tree, four rows until all four stand on leaves on a lopsided one (leaf-wise
growth, where the deepest leaf is far below the typical row's).

Each row adds its trees' leaf values in tree order to what ``out`` held, the same
additions as :func:`boostwood._kernels.predict.predict_raw`: results are equal
to the last bit, for float32 and float64 input alike (a float32 value is compared
with the float64 cut as it is with the float64 threshold).
"""
import numpy as np
from numba import njit, prange

from .binning import PADDED_EDGES, count_below_padded

#: The bin of a missing (NaN) value; cut indices stay below it (at most 65,534 cuts).
NAN_BIN = 65535
#: The threshold field of a leaf: above every bin, and the only one with bit 16 set.
LEAF = 1 << 16
#: Most distinct thresholds one feature may have for the binned walk (else predict_raw).
MAX_CUTS = 65534
#: Entries of a feature's padded cuts (see the module docstring): the width of
#: Dataset binning's padded edges, searched by the same kernel.
PADDED_CUTS = PADDED_EDGES
#: Features the 14-bit feature field can name.
MAX_FEATURES = 1 << 14
#: Bytes of bins per row block: half the 32 KiB first-level data cache of current x86 and
#: ARM cores, so a block's bins stay there while every tree walks over it.
BLOCK_BYTES = 16384

_M16 = np.uint32(0xFFFF)
_M17 = np.uint32(0x1FFFF)
_ONE = np.uint32(1)
_S17 = np.uint32(17)
_S18 = np.uint32(18)
_LOW32 = np.uint64(0xFFFFFFFF)
_S32 = np.uint64(32)
_LEAF64 = np.uint64(LEAF)


@njit(cache=True, nogil=True, inline="always")
def _block_rows(n_rows, n_used):
    """Rows per block: BLOCK_BYTES of bins (16 to 512 rows), and at least 8 blocks
    when the input is small enough that threads would otherwise idle."""
    rows = min(512, max(16, BLOCK_BYTES // (2 * max(n_used, 1))))
    return max(1, min(rows, (n_rows + 7) // 8))


@njit(cache=True, nogil=True, inline="always")
def count_below(cuts, start, n, x):
    """Number of ``cuts[start:start + n]`` (sorted) strictly below ``x``; a binary
    search whose steps are selects, not branches."""
    base = start
    while n > 1:
        half = n >> 1
        base = base + half if cuts[base + half - 1] < x else base
        n -= half
    if n == 1 and cuts[base] < x:
        base += 1
    return base - start


@njit(cache=True, nogil=True, inline="always")
def _bin_block(X, lo, hi, cuts, cut_start, xb):
    for i in range(hi - lo):
        for f in range(xb.shape[1]):
            x = X[lo + i, f]
            start, n = cut_start[f], cut_start[f + 1] - cut_start[f]
            if n == PADDED_CUTS:
                b = np.int64(count_below_padded(cuts, start, x))
            else:
                b = count_below(cuts, start, n, x)
            xb[i, f] = NAN_BIN if x != x else b


@njit(cache=True, nogil=True, inline="always")
def _next(e, xr):
    """The child (id within its tree) that a row with bins ``xr`` takes from the node
    with entry ``e`` (word in the low 32 bits, left child in the high 32)."""
    w = np.uint32(e & _LOW32)
    v = np.uint32(xr[w >> _S18])
    return np.int32(e >> _S32) + np.int32(((v + ((w >> _S17) & _ONE)) & _M16) > (w & _M17))


@njit(cache=True, nogil=True, inline="always")
def _walk_balanced(N, V, xb, i, depth, acc, g):
    """Rows i..i+7: ``depth`` steps down the tree (its deepest leaf's depth)."""
    x0, x1, x2, x3, x4, x5, x6, x7 = xb[i], xb[i + 1], xb[i + 2], xb[i + 3], xb[i + 4], \
        xb[i + 5], xb[i + 6], xb[i + 7]
    k0 = k1 = k2 = k3 = k4 = k5 = k6 = k7 = np.int32(0)
    for _ in range(depth):
        k0, k1 = _next(N[k0], x0), _next(N[k1], x1)
        k2, k3 = _next(N[k2], x2), _next(N[k3], x3)
        k4, k5 = _next(N[k4], x4), _next(N[k5], x5)
        k6, k7 = _next(N[k6], x6), _next(N[k7], x7)
    acc[i, g] += V[k0]
    acc[i + 1, g] += V[k1]
    acc[i + 2, g] += V[k2]
    acc[i + 3, g] += V[k3]
    acc[i + 4, g] += V[k4]
    acc[i + 5, g] += V[k5]
    acc[i + 6, g] += V[k6]
    acc[i + 7, g] += V[k7]


@njit(cache=True, nogil=True, inline="always")
def _walk_lopsided(N, V, xb, i, acc, g):
    """Rows i..i+3: steps until all four stand on leaves."""
    x0, x1, x2, x3 = xb[i], xb[i + 1], xb[i + 2], xb[i + 3]
    k0 = k1 = k2 = k3 = np.int32(0)
    while (N[k0] & N[k1] & N[k2] & N[k3] & _LEAF64) == 0:
        k0, k1 = _next(N[k0], x0), _next(N[k1], x1)
        k2, k3 = _next(N[k2], x2), _next(N[k3], x3)
    acc[i, g] += V[k0]
    acc[i + 1, g] += V[k1]
    acc[i + 2, g] += V[k2]
    acc[i + 3, g] += V[k3]


@njit(cache=True, nogil=True, inline="always")
def _walk_one(N, V, xb, i, acc, g):
    x0 = xb[i]
    k = np.int32(0)
    while (N[k] & _LEAF64) == 0:
        k = _next(N[k], x0)
    acc[i, g] += V[k]


@njit(parallel=True, cache=True, nogil=True)
def predict_binned(X, cuts, cut_start, nodes, depth, value, tree_offsets, tree_group,
                   out):
    """Add every tree's leaf value to ``out[:, group]``; equal to
    :func:`boostwood._kernels.predict.predict_raw` on a forest of numeric splits.

    X : ndarray of shape (n_rows, n_features), float32 or float64   # IN
    cuts : ndarray, float64; each feature's sorted distinct thresholds, concatenated   # IN
    cut_start : ndarray of shape (n_used + 1,), int64; feature f's cuts are
        ``cuts[cut_start[f]:cut_start[f + 1]]``; features from n_used on are in no split   # IN
    nodes : ndarray of shape (n_nodes_total,), uint64; per node its word (module doc) in
        the low 32 bits and its left child, within the tree, in the high 32   # IN
    depth : ndarray of shape (n_trees,), int64; the tree's depth when it is balanced
        (walked eight rows at a time for that many steps), else -1   # IN
    value : ndarray of shape (n_nodes_total,), float64   # IN
    tree_offsets, tree_group : ndarray of shape (n_trees,), int64   # IN
    out : ndarray of shape (n_rows, n_groups), float64   # IN/OUT, margins to add to
    """
    n_rows = X.shape[0]
    n_used = cut_start.shape[0] - 1
    n_groups = out.shape[1]
    size = _block_rows(n_rows, n_used)
    for b in prange((n_rows + size - 1) // size):
        lo, hi = b * size, min((b + 1) * size, n_rows)
        m = hi - lo
        xb = np.empty((m, n_used), dtype=np.uint16)
        _bin_block(X, lo, hi, cuts, cut_start, xb)
        acc = np.empty((m, n_groups), dtype=np.float64)
        for i in range(m):
            for g in range(n_groups):
                acc[i, g] = out[lo + i, g]
        for t in range(tree_offsets.shape[0]):  # a tree at a time: its nodes stay cached
            base, g, d = tree_offsets[t], tree_group[t], depth[t]
            N, V = nodes[base:], value[base:]
            i = 0
            if d >= 0:
                while i + 8 <= m:
                    _walk_balanced(N, V, xb, i, d, acc, g)
                    i += 8
            else:
                while i + 4 <= m:
                    _walk_lopsided(N, V, xb, i, acc, g)
                    i += 4
            for r in range(i, m):
                _walk_one(N, V, xb, r, acc, g)
        for i in range(m):
            for g in range(n_groups):
                out[lo + i, g] = acc[i, g]
