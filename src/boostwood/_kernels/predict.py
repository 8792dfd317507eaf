"""Tree traversal: raw-value prediction, binned prediction, leaf indices.

A model is a forest of flat trees concatenated into one set of node arrays;
``tree_offsets[t]`` is the first node of tree ``t`` and child ids are relative
to it. A node is a leaf when ``feature[node] < 0``. Where a row goes at a split
is :func:`boostwood._kernels.splits.goes_left` (raw values) or
:func:`~boostwood._kernels.splits.goes_left_binned` (bins): numeric thresholds or
category sets, NaN (the missing bin) by ``default_left``.

The node arrays travel as one tuple ``nodes = (feature, threshold, left, right,
default_left, split_kind, cat_start, cat_len, cat_bits)`` (:meth:`Tree.nodes`;
binned traversal takes ``threshold_bin`` in the threshold's place).
"""
import numpy as np
from numba import njit, prange

from .._config import lock_cache_writes
from .intrinsics import PREFETCH_DISTANCE, prefetch
from .splits import NUMERIC, goes_left, goes_left_binned, goes_right_numeric, in_category_set

#: Rows per block of the raw-value traversals (at most): each block runs the trees one
#: after the other over its rows, so a tree's nodes are read from cache, not memory, for
#: all of them (visiting every tree per row thrashes the cache on forests of deep trees).
#: Smaller inputs get smaller blocks, at least 8 of them, so threads still share the work.
#: Results do not depend on it: each row still adds its trees in order.
ROW_BLOCK = 4096
#: Rows per task of :func:`add_class_columns` (a streaming pass: blocks only share it out).
_ADD_BLOCK = 8192
#: Rows per task when a tree's leaf values go to the rows of their partition segments
#: (:func:`add_leaf_values`): leaves differ in size by orders of magnitude, so tasks cut
#: the leaves' rows into equal runs. One task per leaf, statically shared, gave the
#: busiest of 16 threads 3.75x the mean rows on depth-8 HIGGS trees (1.71x on 255-leaf
#: leaf-wise trees; 1.29x and 1.11x on 2 threads). Results do not depend on it: each row
#: is written once.
LEAF_TASK_ROWS = 4096


@njit(cache=True, nogil=True, inline="always")
def _row_block(n_rows):
    return max(1, min(ROW_BLOCK, (n_rows + 7) // 8))


@njit(cache=True, nogil=True, inline="always")
def _leaf_of_raw(X, i, base, nodes):
    """The leaf (id within the tree at ``base``) that row ``i`` reaches. Node and
    feature ids index as unsigned integers: a signed index gets a negative-index fix-up
    per access."""
    feature, threshold, left, right, default_left, kind, cat_start, cat_len, cat_bits = nodes
    node = np.uint64(0)
    at = np.uint64(base)
    while feature[at + node] >= 0:
        j = at + node
        if goes_left(X[np.uint64(i), np.uint64(feature[j])], j, kind, threshold, default_left,
                     cat_start, cat_len, cat_bits):
            node = np.uint64(left[j])
        else:
            node = np.uint64(right[j])
    return np.int64(node)


@njit(parallel=True, cache=True, nogil=True)
def predict_raw(X, nodes, value, tree_offsets, tree_group, out):
    """Add every tree's leaf value to ``out[:, group]``, rows in parallel.

    X : ndarray of shape (n_rows, n_features), float32 or float64   # IN
    nodes : tuple of the node arrays of every tree, concatenated (see above)   # IN
    value : ndarray of shape (n_nodes_total,), float64   # IN
    tree_offsets, tree_group : ndarray of shape (n_trees,), int64   # IN
    out : ndarray of shape (n_rows, n_groups), float64   # IN/OUT, margins to add to
    """
    n_rows = X.shape[0]
    n_trees = tree_offsets.shape[0]
    size = _row_block(n_rows)
    for b in prange((n_rows + size - 1) // size):
        lo, hi = b * size, min((b + 1) * size, n_rows)
        for t in range(n_trees):  # a tree at a time over the block: its nodes stay cached
            base = tree_offsets[t]
            for i in range(lo, hi):
                node = _leaf_of_raw(X, i, base, nodes)
                out[i, tree_group[t]] += value[base + node]


@njit(cache=True, nogil=True, inline="always")
def _set_step(x, j, numeric, nan_right, sets):
    """The level walk's step at node j when the forest has category sets: ``numeric``
    (the numeric step) at a numeric node or leaf; at a categorical node, right when
    ``x`` is not one of its categories (NaN by ``nan_right``), ``goes_left``'s rule."""
    kind, cat_start, cat_len, cat_bits = sets
    if kind[j] == NUMERIC:
        return numeric
    if x != x:
        return np.int64(nan_right[j])
    return 1 - np.int64(in_category_set(x, cat_bits, cat_start[j], cat_len[j]))


@njit(parallel=True, cache=True, nogil=True)
def predict_levels(X, nodes, value, tree_offsets, tree_group, out, sets=None):
    """:func:`predict_raw` level by level, for forests of balanced trees (packed, and
    picked, by :func:`boostwood.tree.tree.level_nodes`).

    Every row of a block takes exactly ``depth[t]`` steps down tree ``t``, one level
    at a time over the whole block. A step is branch-free -- the next node is
    ``left + goes_right_numeric(...)``, right children sit at left + 1 -- and a leaf
    points at itself and never goes right (threshold +inf, NaN left), so a row that
    reached its leaf stays there. The rows of a level do not depend on each other,
    so the processor overlaps their memory reads, and no branch depends on the data.
    On deep, lopsided trees (leaf-wise growth) the walk would take the deepest
    leaf's steps for every row, so they keep :func:`predict_raw`.

    nodes : tuple (feature int32, threshold float64, left int32, nan_right uint8,
        depth int64 per tree)   # IN
    sets : None (numeric forests: numba compiles no set code), or (kind uint8, cat_start,
        cat_len, cat_bits) of every node (:func:`boostwood.tree.tree.level_sets`): a
        categorical node's step is :func:`_set_step`'s, with one branch on its kind
    Other arguments as in :func:`predict_raw`.
    """
    feature, threshold, left, nan_right, depth = nodes
    n_rows = X.shape[0]
    n_trees = tree_offsets.shape[0]
    size = _row_block(n_rows)
    for b in prange((n_rows + size - 1) // size):
        lo, hi = b * size, min((b + 1) * size, n_rows)
        at = np.empty(hi - lo, dtype=np.int64)
        for t in range(n_trees):
            base = tree_offsets[t]
            at[:] = base
            for _ in range(depth[t]):
                for i in range(lo, hi):
                    j = np.uint64(at[i - lo])  # unsigned: no negative-index fix-up
                    x = X[i, np.uint64(feature[j])]
                    r = goes_right_numeric(x, threshold[j], nan_right[j])
                    if sets is not None:
                        r = _set_step(x, j, r, nan_right, sets)
                    at[i - lo] = base + left[j] + r
            g = tree_group[t]
            for i in range(lo, hi):
                out[i, g] += value[np.uint64(at[i - lo])]


@njit(parallel=True, cache=True, nogil=True)
def predict_leaf_raw(X, nodes, tree_offsets, out):
    """Leaf node id of every row in every tree.

    out : ndarray of shape (n_rows, n_trees), int32   # OUT
    """
    n_rows = X.shape[0]
    n_trees = tree_offsets.shape[0]
    size = _row_block(n_rows)
    for b in prange((n_rows + size - 1) // size):
        lo, hi = b * size, min((b + 1) * size, n_rows)
        for t in range(n_trees):
            for i in range(lo, hi):
                out[i, t] = _leaf_of_raw(X, i, tree_offsets[t], nodes)


@njit(parallel=True, cache=True, nogil=True)
def add_tree_binned(X_binned, missing_bins, nodes, value, out, group):
    """Add one tree's prediction to ``out[:, group]`` from binned data.

    X_binned : ndarray of shape (n_rows, n_features), uint8 or uint16   # IN
    missing_bins : ndarray of shape (n_features,), int32   # IN
    nodes : the tree's node tuple with ``threshold_bin`` in the threshold's place
        (category sets over bin ids)   # IN
    value : ndarray of shape (n_nodes,), float64   # IN
    out : ndarray of shape (n_rows, n_groups), float64   # IN/OUT
    """
    feature, threshold_bin, left, right, default_left, kind, cat_start, cat_len, cat_bits = \
        nodes
    n_rows = X_binned.shape[0]
    for i in prange(n_rows):
        node = 0
        while feature[node] >= 0:
            f = feature[node]
            if goes_left_binned(X_binned[i, f], missing_bins[f], kind[node], threshold_bin[node],
                                default_left[node], cat_bits, cat_start[node], cat_len[node]):
                node = left[node]
            else:
                node = right[node]
        out[i, group] += value[node]


#: ``span`` of a node whose missing bin goes right (see :func:`binned_walk`): larger than
#: any ``bin - lo`` of a bin at or above ``lo``, smaller than the wrapped difference of one
#: below it.
_SPAN_ALL = 1 << 40
#: Rows per task of :func:`add_numeric_tree_binned`.
_WALK_BLOCK = 2048


def binned_walk(feature, threshold_bin, left, right, default_left, missing_bins):
    """One numeric tree as the branch-free walk of :func:`add_numeric_tree_binned` takes
    it: ``walk[k] = (feature, lo, span, leaf)`` and ``child[k] = (left, right)``.

    A row in bin ``b`` goes right at node k exactly when ``uint64(b - lo) < span``:
    ``lo = threshold_bin + 1``; ``span = missing_bin - lo`` when the missing bin (the
    feature's largest) goes left, so bins from ``lo`` up to but not including it go
    right, else ``_SPAN_ALL``, so every bin from ``lo`` goes right. A leaf has feature 0,
    span 0 (never right) and itself as both children, so a step taken on it stays.
    """
    leaf = feature < 0
    f = np.where(leaf, 0, feature).astype(np.int64)
    lo = threshold_bin.astype(np.int64) + 1
    span = np.where(default_left != 0, np.maximum(missing_bins[f].astype(np.int64) - lo, 0),
                    _SPAN_ALL)
    walk = np.column_stack([f, np.where(leaf, 0, lo), np.where(leaf, 0, span),
                            leaf.astype(np.int64)])
    ids = np.arange(feature.shape[0], dtype=np.int64)
    child = np.column_stack([np.where(leaf, ids, left), np.where(leaf, ids, right)])
    return np.ascontiguousarray(walk), np.ascontiguousarray(child.astype(np.int64))


@njit(cache=True, nogil=True, inline="always")
def _bin_step(X_binned, i, k, walk, child):
    """The child of node ``k`` that row ``i`` takes (``k`` itself on a leaf)."""
    b = np.int64(X_binned[i, walk[k, 0]])
    return child[k, np.int64(np.uint64(b - walk[k, 1]) < np.uint64(walk[k, 2]))]


@njit(parallel=True, cache=True, nogil=True)
def add_numeric_tree_binned(X_binned, rows, all_rows, walk, child, value, out, group):
    """:func:`add_tree_binned` for a tree of numeric splits, without a branch on the data:
    eight rows walk in lock-step (their chains of loads overlap) until all eight stand
    on leaves; the same leaf and the same addition for every row.

    X_binned : ndarray of shape (n_rows, n_features), uint8 or uint16   # IN
    rows : ndarray of shape (m,), int32 or int64; the rows to add to (ignored when
        ``all_rows``)   # IN
    all_rows : bool; every row of ``X_binned``   # IN
    walk, child : ndarray of shape (n_nodes, 4) / (n_nodes, 2), int64; :func:`binned_walk`   # IN
    value : ndarray of shape (n_nodes,), float64   # IN
    out : ndarray of shape (n_rows, n_groups), float64   # IN/OUT
    """
    m = X_binned.shape[0] if all_rows else rows.shape[0]
    for blk in prange((m + _WALK_BLOCK - 1) // _WALK_BLOCK):
        _add_numeric_block(X_binned, rows, all_rows, walk, child, value, out, group,
                           blk * _WALK_BLOCK, min(m, (blk + 1) * _WALK_BLOCK))


@njit(cache=True, nogil=True)
def _add_numeric_block(X_binned, rows, all_rows, walk, child, value, out, group, lo, hi):
    """:func:`add_numeric_tree_binned` for the rows lo..hi-1 (of ``rows``, or of
    ``X_binned`` where ``all_rows``): a function of its own, so that numba's passes over
    the parallel loop see a call, not the unrolled walk (compile time)."""
    j = lo
    while j + 8 <= hi:
        if all_rows:
            i0, i1, i2, i3, i4, i5, i6, i7 = j, j + 1, j + 2, j + 3, j + 4, j + 5, \
                j + 6, j + 7
        else:
            i0, i1, i2, i3 = np.int64(rows[j]), np.int64(rows[j + 1]), \
                np.int64(rows[j + 2]), np.int64(rows[j + 3])
            i4, i5, i6, i7 = np.int64(rows[j + 4]), np.int64(rows[j + 5]), \
                np.int64(rows[j + 6]), np.int64(rows[j + 7])
        k0 = k1 = k2 = k3 = k4 = k5 = k6 = k7 = 0
        while (walk[k0, 3] & walk[k1, 3] & walk[k2, 3] & walk[k3, 3] & walk[k4, 3]
               & walk[k5, 3] & walk[k6, 3] & walk[k7, 3]) == 0:
            k0 = _bin_step(X_binned, i0, k0, walk, child)
            k1 = _bin_step(X_binned, i1, k1, walk, child)
            k2 = _bin_step(X_binned, i2, k2, walk, child)
            k3 = _bin_step(X_binned, i3, k3, walk, child)
            k4 = _bin_step(X_binned, i4, k4, walk, child)
            k5 = _bin_step(X_binned, i5, k5, walk, child)
            k6 = _bin_step(X_binned, i6, k6, walk, child)
            k7 = _bin_step(X_binned, i7, k7, walk, child)
        out[i0, group] += value[k0]
        out[i1, group] += value[k1]
        out[i2, group] += value[k2]
        out[i3, group] += value[k3]
        out[i4, group] += value[k4]
        out[i5, group] += value[k5]
        out[i6, group] += value[k6]
        out[i7, group] += value[k7]
        j += 8
    for q in range(j, hi):
        i = q if all_rows else np.int64(rows[q])
        k = 0
        while walk[k, 3] == 0:
            k = _bin_step(X_binned, i, k, walk, child)
        out[i, group] += value[k]


@njit(cache=True, nogil=True)
def _leaf_runs(leaf_counts):
    """``first`` (``first[k]`` = the rows of the leaves before leaf ``k``, ``first[-1]`` all
    of them) and the number of tasks that cut the leaves' rows, taken in leaf order, into
    near-equal runs of at most :data:`LEAF_TASK_ROWS`."""
    n_leaves = leaf_counts.shape[0]
    first = np.empty(n_leaves + 1, dtype=np.int64)
    first[0] = 0
    for k in range(n_leaves):
        first[k + 1] = first[k] + leaf_counts[k]
    return first, max((first[n_leaves] + LEAF_TASK_ROWS - 1) // LEAF_TASK_ROWS, 1)


@njit(cache=True, nogil=True, inline="always")
def _run_bounds(first, n_tasks, task):
    """The rows ``lo..hi`` (in leaf order) of run ``task`` and the leaf holding row ``lo``."""
    total = first[first.shape[0] - 1]
    lo, hi = total * task // n_tasks, total * (task + 1) // n_tasks
    return lo, hi, np.searchsorted(first, lo, side="right") - 1


@njit(parallel=True, cache=True, nogil=True)
def add_leaf_values(buf, leaf_sides, leaf_starts, leaf_counts, leaf_values, out, group):
    """Add each leaf's value to the rows of its partition segment.

    Used on the training rows right after a tree is grown: the partition
    already knows every row's leaf, so no traversal is needed. Tasks are equal runs of
    rows, not leaves (:func:`_leaf_runs`). A leaf's rows are spread
    over all of ``out``, which the tree's work has pushed out of cache: each row asks for
    its line ``PREFETCH_DISTANCE`` rows ahead (800k rows in 255 leaves, 2 threads, after
    a 64 MB sweep, medians of three paired runs: 2.1-2.9 ms against 3.0-6.7 without).

    buf : ndarray of shape (2, n_partition), int32   # IN, the partition's two index buffers
    leaf_sides, leaf_starts, leaf_counts : ndarray of shape (n_leaves,), int64   # IN
    leaf_values : ndarray of shape (n_leaves,), float64   # IN
    out : ndarray of shape (n_rows, n_groups), float64   # IN/OUT
    """
    first, n_tasks = _leaf_runs(leaf_counts)
    for task in prange(n_tasks):
        lo, hi, k = _run_bounds(first, n_tasks, task)
        while lo < hi:  # the run's part of leaf k, then of the leaves after it
            e = min(hi, first[k + 1])
            v = leaf_values[k]
            indices = buf[leaf_sides[k]]
            shift = leaf_starts[k] - first[k]
            for i in range(lo + shift, e + shift):
                if i + PREFETCH_DISTANCE < e + shift:
                    prefetch(out[np.uint64(indices[i + PREFETCH_DISTANCE])], group)
                out[np.uint64(indices[i]), group] += v
            lo, k = e, k + 1


@njit(parallel=True, cache=True, nogil=True)
def set_leaf_values(buf, leaf_sides, leaf_starts, leaf_counts, leaf_values, out):
    """``out[row] = `` the value of the row's leaf, for the rows of every leaf segment (as
    :func:`add_leaf_values`, into a 1-D array: one class's column of a round's trees). It
    sets rather than adds, so the column needs no zeroing pass first."""
    first, n_tasks = _leaf_runs(leaf_counts)
    for task in prange(n_tasks):
        lo, hi, k = _run_bounds(first, n_tasks, task)
        while lo < hi:
            e = min(hi, first[k + 1])
            v = leaf_values[k]
            indices = buf[leaf_sides[k]]
            shift = leaf_starts[k] - first[k]
            for i in range(lo + shift, e + shift):  # stores only: a prefetch gained nothing
                out[np.uint64(indices[i])] = v
            lo, k = e, k + 1


@njit(parallel=True, cache=True, nogil=True)
def add_class_columns(out, columns):
    """``out[i, c] += columns[c, i]``: a round's class-major leaf values added to the
    row-major margins, a block of rows per task."""
    n, K = out.shape
    for t in prange((n + _ADD_BLOCK - 1) // _ADD_BLOCK):
        for i in range(t * _ADD_BLOCK, min(n, (t + 1) * _ADD_BLOCK)):
            for c in range(K):
                out[i, c] += columns[c, i]


@njit(parallel=True, cache=True, nogil=True)
def mean_leaf_rows(leaves, tree_offsets, table, out):
    """Average over trees of a per-node row: ``out[i] = mean_t table[tree_offsets[t] +
    leaves[i, t]]`` (a forest's class probabilities or values), trees added in order.

    leaves : ndarray of shape (n_rows, n_trees), int32   # IN, leaf id within each tree
    table : ndarray of shape (n_nodes_total, K), float64   # IN
    out : ndarray of shape (n_rows, K), float64   # OUT
    """
    n_rows, n_trees = leaves.shape
    K = table.shape[1]
    for i in prange(n_rows):
        for c in range(K):
            out[i, c] = 0.0
        for t in range(n_trees):
            r = tree_offsets[t] + leaves[i, t]
            for c in range(K):
                out[i, c] += table[r, c]
        for c in range(K):
            out[i, c] /= n_trees


lock_cache_writes(globals())  # numba's cache, safe when processes compile at once
