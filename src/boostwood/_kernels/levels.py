"""Bookkeeping of level-wise criterion trees: choose each node's split, record the children.

:func:`boostwood.tree.levels.grow_levels` grows a tree a level at a time. Between
the scan and the partition of a level, every node needs its best feature, the
impurity decrease of that split and the test against ``min_impurity_decrease``;
after the partition, the children need their row segments, statistics and the
test whether they may be split in turn. On small data sets (tens of thousands
of rows, trees of thirty levels) these steps done with NumPy calls cost as
much as the scan itself, and they hold the GIL that the trees grown on other
threads need; here they are one compiled call each.
"""
import numpy as np
from numba import njit

from .criterion import ENTROPY, GAIN_RATIO, SQUARED, impurity
from .split import pick_best_features


@njit(cache=True, nogil=True)
def choose_splits(gain, code, nxt, dl, left, thr_of, totals, level, features, criterion,
                  min_decrease):
    """The split of each node of a level that has one: its best feature (the first of
    the highest score, up to ties), kept if its impurity decrease is at least
    ``min_decrease``.

    gain, code, nxt, dl, left : the scan's outputs (n_nodes, n_active[, K + 2])   # IN
    thr_of : (n_nodes, n_active) thresholds of random splits, or (0, 0) (bins / values
        give them later)   # IN
    totals : (n_nodes, K + 2) the nodes' statistics; level : (n_nodes,) their ids   # IN
    Returns, one entry per node that splits, in level order: (node ids, features,
    codes, next codes, missing-go-left, decreases, left statistics, totals, thresholds).
    """
    B, W = totals.shape
    K = W - 2
    crit = ENTROPY if criterion == GAIN_RATIO else criterion
    best = np.empty(B, dtype=np.int64)
    pick_best_features(gain, best)
    dec = np.empty(B)
    right = np.empty(W)
    n = 0
    for k in range(B):
        a = best[k]
        if a < 0:
            continue
        for c in range(W):
            right[c] = totals[k, c] - left[k, a, c]
        dec[k] = impurity(totals[k], K, crit) - impurity(left[k, a], K, crit) \
            - impurity(right, K, crit)
        if dec[k] >= min_decrease:
            n += 1
        else:
            best[k] = -1
    split, feats = np.empty(n, dtype=np.int64), np.empty(n, dtype=np.int64)
    codes, nexts = np.empty(n, dtype=np.int64), np.empty(n, dtype=np.int64)
    dls, decs, thr = np.empty(n, dtype=np.int64), np.empty(n), np.zeros(n)
    lefts, tots = np.empty((n, W)), np.empty((n, W))
    i = 0
    for k in range(B):
        a = best[k]
        if a < 0:
            continue
        split[i], feats[i], codes[i], nexts[i] = level[k], features[a], code[k, a], nxt[k, a]
        dls[i], decs[i] = dl[k, a], dec[k]
        if thr_of.shape[0] > 0:
            thr[i] = thr_of[k, a]
        lefts[i, :] = left[k, a]
        tots[i, :] = totals[k]
        i += 1
    return split, feats, codes, nexts, dls, decs, lefts, tots, thr


@njit(cache=True, nogil=True, inline="always")
def _splittable(stats, depth, K, criterion, min_split, min_leaf, min_child_weight, max_depth):
    """May a node with statistics ``stats`` (channels, weight, rows) at ``depth`` be
    split? Enough rows and weight for two leaves, below ``max_depth`` (0: none), and
    for classification more than one class: a node of a single class is a leaf
    (scikit-learn's "impurity <= eps" rule; every split of it decreases the impurity
    by 0, and with fractional weights rounding noise would otherwise split it)."""
    count = stats[K + 1]
    if count < min_split or count < 2 * min_leaf or stats[K] < 2.0 * min_child_weight:
        return False
    if max_depth > 0 and depth >= max_depth:
        return False
    if criterion != SQUARED:
        classes = 0
        for c in range(K):
            if stats[c] > 0.0:
                classes += 1
        return classes > 1
    return True


@njit(cache=True, nogil=True)
def splittable_nodes(stats, depth, criterion, min_split, min_leaf, min_child_weight, max_depth,
                     out):
    """:func:`_splittable` of every node: stats (m, K + 2), depth (m,); out (m,) bool."""
    K = stats.shape[1] - 2
    for i in range(stats.shape[0]):
        out[i] = _splittable(stats[i], depth[i], K, criterion, min_split, min_leaf,
                             min_child_weight, max_depth)


@njit(cache=True, nogil=True)
def record_level(split, feats, codes, dls, decs, thr, lefts, tots, n_left, first, feature,
                 threshold, left, right, default_left, gain, depth, start, count, side, code,
                 stats, const, criterion, min_split, min_leaf, min_child_weight, max_depth):
    """Write the splits of a level into the node arrays and create the children: node
    ``split[i]`` gets children ``first + 2i`` (left, rows ``[start, start + n_left[i])``)
    and ``first + 2i + 1``, on the other partition buffer, with their statistics and
    the parent's known-constant features. Returns the children that may be split, in
    order (the next level).
    """
    K = stats.shape[1] - 2
    m = split.shape[0]
    out = np.empty(2 * m, dtype=np.int64)
    n_out = 0
    for i in range(m):
        p = split[i]
        lk, rk = first + 2 * i, first + 2 * i + 1
        feature[p], threshold[p], code[p] = feats[i], thr[i], codes[i]
        default_left[p], gain[p], left[p], right[p] = dls[i], decs[i], lk, rk
        start[lk], count[lk] = start[p], n_left[i]
        start[rk], count[rk] = start[p] + n_left[i], count[p] - n_left[i]
        for c in range(K + 2):
            stats[lk, c] = lefts[i, c]
            stats[rk, c] = tots[i, c] - lefts[i, c]
        for kid in (lk, rk):
            feature[kid], left[kid], right[kid] = -1, -1, -1
            depth[kid], side[kid] = depth[p] + 1, 1 - side[p]
            const[kid, :] = const[p, :]
            if _splittable(stats[kid], depth[kid], K, criterion, min_split, min_leaf,
                           min_child_weight, max_depth):
                out[n_out] = kid
                n_out += 1
    return out[:n_out]
