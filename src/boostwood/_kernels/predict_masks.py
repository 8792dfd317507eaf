"""Forest prediction by leaf masks: the fast path of ``Booster.predict`` for forests with
category sets whose trees have at most ``MAX_LEAVES`` leaves.

The idea is QuickScorer's (Lucchese et al., SIGIR 2015), over bins. Number a tree's
leaves 0, 1, ... from left to right, and give each split node the mask of the leaves of
its left subtree. A row goes right at some of the tree's nodes; clear, from a mask of
ones, the left-subtree leaves of each of those nodes. The lowest set bit that remains is
the row's leaf: the row's own leaf is never cleared (it lies in the left subtree of no
node where the row went right on its way, and in no subtree of a node off its way), and
any leaf to its left is cleared by the node where the two paths part, where the row went
right.

Where a row goes at a node depends on one feature only. So, per tree and feature the tree
splits on, one table holds, for every bin of that feature, the AND of the cleared masks of
all that tree's nodes on the feature where a value of the bin goes right: a row's leaf
is then the lowest set bit of the AND of one table entry per feature of the tree -- a
gather and an AND per row and feature, the same for a category set of any shape as for a
threshold, and for a tree of any depth. An entry is one 64-bit word where no tree of the
forest has more than 64 leaves, else four (up to 256 leaves; a fixed four lets the
compiler AND an entry as one vector). A four-word table keeps a run of equal entries
once, behind a uint16 index per entry (a threshold changes its table at one bin only):
the 255-leaf tables below took 1.3-1.8 MiB with the index instead of 4.6-4.7, for
1.05x the time.

The binned walk (:mod:`boostwood._kernels.predict_binned`) instead takes a category set
that is not a run of consecutive codes through its bits, a row at a time, at each level
(six scalar operations and four dependent loads per row and level), and a leaf-wise
tree of one-vs-rest splits is a deep chain (median depth 52 at 255 leaves, against 22
for the same data's codes as numbers). Against the same-size numeric model (the
categories' codes as numbers, by the binned walk), 40k rows on 2 threads, 2-core Zen 4
VM, 100 trees over 4 numeric features and 10-, 100- and 1,000-level categorical ones:

* depth 6: many-vs-many sets 2.9x by the binned walk, 1.1x by this one; one-vs-rest
  sets 1.3x and 1.0x;
* 255 leaves, leaf-wise: many-vs-many 4.1x and 1.4x; one-vs-rest 6.1x and 1.4x.

The bins are the binned walk's: per feature the sorted distinct thresholds of the
forest (its cuts), and for a categorical feature (its values are the codes of the model's
dictionaries, or NaN) the codes where some set starts or ends a run. A value's bin is the
number of cuts below it; NaN takes bin ``n_cuts + 1``, its own. The tables are built by
evaluating :func:`boostwood._kernels.splits.goes_left`, the one rule of where a row goes,
at one value of each bin (:func:`mask_tables`), so this walk sends every row where the
node-by-node walk does, and each row adds its trees' leaf values in tree order: the
same sums, to the last bit.

A numeric forest keeps the binned walk, which takes its top levels as vector compares:
there this walk took 1.13x its time (100 depth-6 trees, 40k rows).
"""
import numpy as np
from numba import njit, prange

from .._config import lock_cache_writes
from .intrinsics import trailing_zeros
from .predict_binned import _block_rows, bin_of
from .splits import NUMERIC, goes_left

#: Most leaves a tree of the walk may have: one bit each, in one 64-bit word per entry
#: where every tree has at most 64, else in four.
MAX_LEAVES = 256
_ALL = np.uint64(0xFFFFFFFFFFFFFFFF)
#: Fewest rows of a block (but a call's all where it has fewer): a block pays a loop per
#: tree and table whatever its rows, where the binned walk cuts short calls into up to
#: eight blocks (calls of 10 rows of a frame, 100 depth-6 trees: 50.8 us with those
#: blocks, 49.2 us with one; one run each).
SMALL_BLOCK = 32


@njit(cache=True, nogil=True)
def mask_tables(feature, threshold, left, right, default_left, kind, cat_start, cat_len,
                cat_bits, value, offsets, pair_start, pair_of, table_start, rep, rep_start,
                tables, index, row_start, leaf_value):
    """Fill ``tables``, ``index``, ``row_start`` and ``leaf_value`` (module doc); returns
    the number of rows of ``tables`` filled where ``index`` is given (else 0: ``tables``
    has a row per entry).

    feature .. cat_bits : the forest's node tuple (child ids within each tree)   # IN
    value : ndarray of shape (n_nodes,), float64   # IN
    offsets : ndarray of shape (n_trees,), int64; each tree's first node   # IN
    pair_start : ndarray of shape (n_trees + 1,), int64; tree t's tables   # IN
    pair_of : ndarray of shape (n_nodes,), int64; the (tree, feature) table of each
        split node (-1 at leaves)   # IN
    table_start : ndarray of shape (n_pairs + 1,), int64; each table's first entry, and
        the number of entries   # IN
    rep, rep_start : ndarray, float64 / int64; feature f's values of its bins 0 ..
        n_cuts + 1 (the last NaN) are ``rep[rep_start[f]:rep_start[f + 1]]``   # IN
    tables : ndarray of shape (n_rows, W), uint64; an entry's leaf k in bit k % 64 of
        word k // 64: one row per entry where ``index`` is empty, else one per run of
        equal entries of a table   # OUT
    index : ndarray of shape (n_entries,) or (0,), uint16; each entry's row, counted
        from its table's first   # OUT
    row_start : ndarray of shape (n_pairs,), int64; each table's first row   # OUT
    leaf_value : ndarray of shape (n_trees, 64 * W), float64; leaf k (from the left) of
        tree t at ``[t, k]``   # OUT
    """
    n, W = feature.shape[0], tables.shape[1]
    stack = np.empty(64 * W * 2, dtype=np.int64)
    order = np.empty(n, dtype=np.int64)
    first = np.empty(n, dtype=np.int64)  # the rank of a node's leftmost leaf
    keep = np.empty(W, dtype=np.uint64)
    rows = 0
    for t in range(offsets.shape[0]):
        e0 = table_start[pair_start[t]]
        mine = np.full((table_start[pair_start[t + 1]] - e0, W), _ALL, dtype=np.uint64)
        suffix = np.full(mine.shape, _ALL, dtype=np.uint64)
        visited = _leaves_in_order(feature, left, right, value, offsets[t], t, stack, order,
                                   first, leaf_value)
        for v in range(visited - 1, -1, -1):  # children before their parent
            j = offsets[t] + order[v]
            if feature[j] < 0:
                continue
            a, b = first[offsets[t] + left[j]], first[offsets[t] + right[j]]
            first[j] = a  # (a .. b - 1: the left subtree's leaves)
            for w in range(W):
                keep[w] = ~(_below(b - 64 * w) & ~_below(a - 64 * w))
            _node_into(j, table_start[pair_of[j]] - e0, keep, feature, threshold,
                       default_left, kind, cat_start, cat_len, cat_bits, rep, rep_start,
                       mine, suffix)
        for p in range(pair_start[t], pair_start[t + 1]):
            rows = _table_out(p, table_start[p] - e0, table_start[p + 1] - e0, e0, mine,
                              suffix, tables, index, row_start, rows)
    return rows


@njit(cache=True, nogil=True)
def _node_into(j, s, keep, feature, threshold, default_left, kind, cat_start, cat_len,
               cat_bits, rep, rep_start, tables, suffix):
    """AND node ``j``'s ``keep`` into the entries of its table (from ``s``) whose bins go
    right. A category set is evaluated at every bin. A threshold sends the values of its
    feature's bins right from the first bin that :func:`goes_left` sends right (a binary
    search: the rule is monotone in the value), so it is ANDed once, into that bin of
    ``suffix``, and :func:`_table_out`'s running AND takes it to every bin from there (a
    leaf-wise tree of 255 leaves has about 36 thresholds per feature, each over 257
    bins)."""
    f = feature[j]
    r0, nv = rep_start[f], rep_start[f + 1] - rep_start[f] - 1  # value bins, then NaN
    if not goes_left(rep[r0 + nv], j, kind, threshold, default_left, cat_start, cat_len,
                     cat_bits):
        tables[s + nv] &= keep
    if kind[j] != NUMERIC:
        for u in range(nv):
            if not goes_left(rep[r0 + u], j, kind, threshold, default_left, cat_start,
                             cat_len, cat_bits):
                tables[s + u] &= keep
        return
    lo, hi = 0, nv
    while lo < hi:
        mid = (lo + hi) >> 1
        if goes_left(rep[r0 + mid], j, kind, threshold, default_left, cat_start, cat_len,
                     cat_bits):
            lo = mid + 1
        else:
            hi = mid
    if lo < nv:
        suffix[s + lo] &= keep


@njit(cache=True, nogil=True)
def _leaves_in_order(feature, left, right, value, o, t, stack, order, first, leaf_value):
    """Tree ``t`` (first node ``o``) in pre-order, left subtree first, into ``order``;
    its leaves' ranks from the left into ``first`` and their values into
    ``leaf_value[t]``. Returns the number of nodes."""
    top, visited, rank = 1, 0, 0
    stack[0] = 0
    while top > 0:
        top -= 1
        k = stack[top]
        order[visited] = k
        visited += 1
        if feature[o + k] < 0:
            first[o + k] = rank
            leaf_value[t, rank] = value[o + k]
            rank += 1
        else:
            stack[top], stack[top + 1] = right[o + k], left[o + k]
            top += 2
    return visited


@njit(cache=True, nogil=True)
def _table_out(p, a, b, e0, mine, suffix, tables, index, row_start, rows):
    """The table of entries a..b-1 of a tree's ``mine`` (the tree's first entry is
    ``e0`` of the forest's) into ``tables``: its value bins (all but the last, NaN's)
    ANDed with the running AND of ``suffix`` over the bins up to them; each entry its own
    row where ``index`` is empty, else a row per run of equal entries, named by ``index``.
    Returns the rows filled."""
    W = mine.shape[1]
    run = np.empty(W, dtype=np.uint64)
    run[:] = _ALL
    for e in range(a, b - 1):
        for w in range(W):
            run[w] &= suffix[e, w]
            mine[e, w] &= run[w]
    if index.shape[0] == 0:
        row_start[p] = e0 + a
        for e in range(a, b):
            tables[e0 + e] = mine[e]
        return rows
    first = row_start[p] = rows
    for e in range(a, b):
        same = e > a
        for w in range(W):
            same = same and mine[e, w] == mine[e - 1, w]
        if not same:
            tables[rows] = mine[e]
            rows += 1
        index[e0 + e] = rows - 1 - first
    return rows


@njit(cache=True, nogil=True, inline="always")
def _below(k):
    """The bits below bit ``k`` of a word (none for k <= 0, all for k >= 64)."""
    if k <= 0:
        return np.uint64(0)
    if k >= 64:
        return _ALL
    return (np.uint64(1) << np.uint64(k)) - np.uint64(1)


@njit(parallel=True, cache=True, nogil=True)
def predict_masks(X, cuts, cut_start, n_cuts, pair_start, pair_feature, table_start, tables,
                  index, row_start, leaf_value, tree_group, out, n_threads=0):
    """Add every tree's leaf value to ``out[:, group]``; equal to
    :func:`boostwood._kernels.predict.predict_raw` on data coded by the model's
    dictionaries (module doc).

    X : ndarray of shape (n_rows, n_features), float32 or float64   # IN
    cuts, cut_start : the binned walk's cuts (see
        :func:`boostwood._kernels.predict_binned.predict_binned`)   # IN
    n_cuts : ndarray of shape (n_used,), int64; each feature's number of cuts   # IN
    pair_start : ndarray of shape (n_trees + 1,), int64; tree t's tables are
        ``pair_start[t]:pair_start[t + 1]``   # IN
    pair_feature : ndarray of shape (n_pairs,), int64; each table's feature   # IN
    table_start : ndarray of shape (n_pairs + 1,), int64; each table's first entry   # IN
    tables, index, row_start : :func:`mask_tables`' (W 1: a row per entry, ``index``
        empty; W 4: ``index`` names each entry's row in its table)   # IN
    leaf_value : ndarray of shape (n_trees, 64 * W), float64   # IN
    tree_group : ndarray of shape (n_trees,), int64   # IN
    out : ndarray of shape (n_rows, n_groups), float64   # IN/OUT, margins to add to
    n_threads : int, as :func:`boostwood._kernels.predict_binned.predict_binned` takes
        it; any value gives the same result   # IN
    """
    n_rows = X.shape[0]
    size = max(_block_rows(n_rows, n_cuts.shape[0], n_threads), min(n_rows, SMALL_BLOCK))
    for b in prange((n_rows + size - 1) // size):
        lo, hi = b * size, min((b + 1) * size, n_rows)
        U = _bins(X, lo, hi, cuts, cut_start, n_cuts)
        _walk(U, lo, pair_start, pair_feature, table_start, tables, index, row_start,
              leaf_value, tree_group, out)


@njit(cache=True, nogil=True)
def _bins(X, lo, hi, cuts, cut_start, n_cuts):
    """The bins of rows lo..hi-1 (NaN: ``n_cuts + 1``), feature-major; the one part of
    a block's work that reads ``X`` (float32 and float64 input share :func:`_walk`)."""
    U = np.empty((n_cuts.shape[0], hi - lo), dtype=np.uint16)
    for i in range(hi - lo):
        for f in range(n_cuts.shape[0]):  # (a feature of no cut may have a table:
            x = X[lo + i, f]  # a threshold of +inf sends all but NaN left)
            U[f, i] = n_cuts[f] + 1 if x != x else bin_of(x, cuts, cut_start, f)
    return U


@njit(cache=True, nogil=True)
def _walk(U, lo, pair_start, pair_feature, table_start, tables, index, row_start,
          leaf_value, tree_group, out):
    """Add the leaf values of the block of rows from ``lo``, binned into ``U``, to
    ``out``, in tree order: per tree, the AND of its tables' entries, and the leaf of its
    lowest set bit."""
    m, n_groups = U.shape[1], out.shape[1]
    acc = np.empty((m, n_groups), dtype=np.float64)
    for i in range(m):
        for g in range(n_groups):
            acc[i, g] = out[lo + i, g]
    if tables.shape[1] == 1:
        _one_word(U, pair_start, pair_feature, table_start, tables[:, 0], leaf_value,
                  tree_group, acc)
    else:
        _words(U, pair_start, pair_feature, table_start, tables, index, row_start,
               leaf_value, tree_group, acc)
    for i in range(m):
        for g in range(n_groups):
            out[lo + i, g] = acc[i, g]


@njit(cache=True, nogil=True, inline="always")
def _one_word(U, pair_start, pair_feature, table_start, tables, leaf_value, tree_group,
              acc):
    """:func:`_walk` of trees of at most 64 leaves: one word per entry."""
    m = U.shape[1]
    mask = np.empty(m, dtype=np.uint64)
    for t in range(pair_start.shape[0] - 1):
        p0, p1 = pair_start[t], pair_start[t + 1]
        if p0 == p1:  # a tree of one leaf
            mask[:] = _ALL
        else:  # (the first table sets the masks)
            u, T = U[pair_feature[p0]], tables[table_start[p0]:]
            for i in range(m):
                mask[i] = T[u[i]]
        for p in range(p0 + 1, p1):
            u, T = U[pair_feature[p]], tables[table_start[p]:]
            for i in range(m):
                mask[i] &= T[u[i]]
        L, g = leaf_value[t], tree_group[t]
        for i in range(m):
            acc[i, g] += L[trailing_zeros(mask[i])]


@njit(cache=True, nogil=True, inline="always")
def _words(U, pair_start, pair_feature, table_start, tables, index, row_start, leaf_value,
           tree_group, acc):
    """:func:`_walk` of trees of 65 to 256 leaves: four words per entry, a run of equal
    entries of a table kept once (``index`` names each entry's row); the leaf is the
    lowest set bit of the first word that has one."""
    m = U.shape[1]
    mask = np.empty((m, 4), dtype=np.uint64)
    for t in range(pair_start.shape[0] - 1):
        p0, p1 = pair_start[t], pair_start[t + 1]
        if p0 == p1:  # a tree of one leaf
            mask[:] = _ALL
        else:  # (the first table sets the masks)
            u, I, T = U[pair_feature[p0]], index[table_start[p0]:], tables[row_start[p0]:]
            for i in range(m):
                e = T[np.int64(I[u[i]])]
                for w in range(4):
                    mask[i, w] = e[w]
        for p in range(p0 + 1, p1):
            u, I, T = U[pair_feature[p]], index[table_start[p]:], tables[row_start[p]:]
            for i in range(m):
                e = T[np.int64(I[u[i]])]
                for w in range(4):
                    mask[i, w] &= e[w]
        L, g = leaf_value[t], tree_group[t]
        for i in range(m):
            a0, a1, a2 = mask[i, 0], mask[i, 1], mask[i, 2]
            w = np.int64(a0 == 0) + np.int64((a0 | a1) == 0) + np.int64((a0 | a1 | a2) == 0)
            acc[i, g] += L[64 * w + trailing_zeros(mask[i, w])]


lock_cache_writes(globals())  # numba's cache, safe when processes compile at once
