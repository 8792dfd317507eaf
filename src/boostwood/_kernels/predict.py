"""Tree traversal: raw-value prediction, binned prediction, leaf indices.

A model is a forest of flat trees concatenated into one set of node arrays;
``tree_offsets[t]`` is the first node of tree ``t`` and child ids are relative
to it. A node is a leaf when ``feature[node] < 0``. Rows go left when
``x <= threshold`` (raw) or ``bin <= threshold_bin`` (binned); NaN (the missing
bin) follows ``default_left``.
"""
import numpy as np
from numba import njit, prange

#: Rows per block of the raw-value traversals (at most): each block runs the trees one
#: after the other over its rows, so a tree's nodes are read from cache, not memory, for
#: all of them (visiting every tree per row thrashes the cache on forests of deep trees).
#: Smaller inputs get smaller blocks, at least 8 of them, so threads still share the work.
#: Results do not depend on it: each row still adds its trees in order.
ROW_BLOCK = 4096


@njit(cache=True, nogil=True, inline="always")
def _row_block(n_rows):
    return max(1, min(ROW_BLOCK, (n_rows + 7) // 8))


@njit(cache=True, nogil=True, inline="always")
def _leaf_of_raw(X, i, base, feature, threshold, left, right, default_left):
    node = 0
    while feature[base + node] >= 0:
        j = base + node
        x = X[i, feature[j]]
        if np.isnan(x):
            go_left = default_left[j] != 0
        else:
            go_left = x <= threshold[j]
        node = left[j] if go_left else right[j]
    return node


@njit(parallel=True, cache=True, nogil=True)
def predict_raw(X, feature, threshold, left, right, default_left, value,
                tree_offsets, tree_group, out):
    """Add every tree's leaf value to ``out[:, group]``, rows in parallel.

    X : ndarray of shape (n_rows, n_features), float32 or float64   # IN
    feature, left, right : ndarray of shape (n_nodes_total,), int32   # IN
    threshold, value : ndarray of shape (n_nodes_total,), float64   # IN
    default_left : ndarray of shape (n_nodes_total,), uint8   # IN
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
                node = _leaf_of_raw(X, i, base, feature, threshold, left, right, default_left)
                out[i, tree_group[t]] += value[base + node]


@njit(parallel=True, cache=True, nogil=True)
def predict_leaf_raw(X, feature, threshold, left, right, default_left,
                     tree_offsets, out):
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
                out[i, t] = _leaf_of_raw(X, i, tree_offsets[t], feature, threshold,
                                         left, right, default_left)


@njit(parallel=True, cache=True, nogil=True)
def add_tree_binned(X_binned, missing_bins, feature, threshold_bin, left, right,
                    default_left, value, out, group):
    """Add one tree's prediction to ``out[:, group]`` from binned data.

    X_binned : ndarray of shape (n_rows, n_features), uint8 or uint16   # IN
    missing_bins : ndarray of shape (n_features,), int32   # IN
    feature, threshold_bin, left, right : ndarray of shape (n_nodes,), int32   # IN
    default_left : ndarray of shape (n_nodes,), uint8   # IN
    value : ndarray of shape (n_nodes,), float64   # IN
    out : ndarray of shape (n_rows, n_groups), float64   # IN/OUT
    """
    n_rows = X_binned.shape[0]
    for i in prange(n_rows):
        node = 0
        while feature[node] >= 0:
            f = feature[node]
            b = X_binned[i, f]
            if b == missing_bins[f]:
                go_left = default_left[node] != 0
            else:
                go_left = b <= threshold_bin[node]
            node = left[node] if go_left else right[node]
        out[i, group] += value[node]


@njit(parallel=True, cache=True, nogil=True)
def add_leaf_values(buf, leaf_sides, leaf_starts, leaf_counts, leaf_values, out, group):
    """Add each leaf's value to the rows of its partition segment.

    Used on the training rows right after a tree is grown: the partition
    already knows every row's leaf, so no traversal is needed.

    buf : ndarray of shape (2, n_partition), int32   # IN, the partition's two index buffers
    leaf_sides, leaf_starts, leaf_counts : ndarray of shape (n_leaves,), int64   # IN
    leaf_values : ndarray of shape (n_leaves,), float64   # IN
    out : ndarray of shape (n_rows, n_groups), float64   # IN/OUT
    """
    for k in prange(leaf_starts.shape[0]):
        v = leaf_values[k]
        s = leaf_starts[k]
        indices = buf[leaf_sides[k]]
        for i in range(s, s + leaf_counts[k]):
            out[indices[i], group] += v


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
