"""Bookkeeping of criterion trees in the node table: choose each node's split, add the
children of a level.

Criterion trees (CART, forests, AdaBoost's trees) grow into the same
:class:`~boostwood.tree.nodes.NodeTable` as gradient trees. Between the scan and
the partition, every node of a batch needs its best feature, the impurity decrease
of that split and the test against ``min_impurity_decrease``
(:func:`choose_splits`); after the partition of a level, the children need the
test whether they may be split in turn (:func:`level_children`). On small data
sets (tens of thousands of rows, trees of thirty levels) these steps done with
NumPy calls cost as much as the scan itself, and they hold the GIL that the trees
grown on other threads need; here they are one compiled call each.
"""
import numpy as np
from numba import njit

from .._config import lock_cache_writes
from .criterion import (C_CRITERION, C_MAX_DEPTH, C_MIN_LEAF, C_MIN_SPLIT, C_MIN_WEIGHT,
                        ENTROPY, GAIN_RATIO, SQUARED, impurity)
from .nodes import ND_DEPTH, ND_FEATURE, NF_THRESHOLD, set_candidate
from .split import pick_best_features
from .splits import P_BIN, P_DEFAULT_LEFT, P_NEXT


@njit(cache=True, nogil=True)
def choose_splits(gain, pick, left, thr_of, nodes, features, settings, min_decrease, ints,
                  floats, stats, cand_left):
    """Record the candidate split of each node of a batch that has one: its best feature
    (the first of the highest score, up to ties; with no gain anywhere, the first
    feature and code that split the node at all), kept if its impurity decrease is at
    least ``min_decrease``; the decrease is the gain the tree records.

    gain, pick, left : a criterion scan's outputs, (n_nodes, n_active[, K + 2])   # IN
    thr_of : (n_nodes, n_active) thresholds of random splits, or (0, 0) (bins / values
        give them later)   # IN
    nodes : (n_nodes,) int64, the table rows scanned; features : (n_active,) int64   # IN
    settings : criterion settings (:func:`~boostwood._kernels.criterion.criterion_settings`)
    ints, floats, stats, cand_left : the node table   # IN/OUT, candidate fields of ``nodes``
    Returns the nodes that have a candidate, in batch order.
    """
    B = nodes.shape[0]
    W = stats.shape[1]
    K = W - 2
    criterion = np.int64(settings[C_CRITERION])
    crit = ENTROPY if criterion == GAIN_RATIO else criterion
    best = np.empty(B, dtype=np.int64)
    pick_best_features(gain, best)
    right = np.empty(W)
    found = np.empty(B, dtype=np.int64)
    n = 0
    for r in range(B):
        k = nodes[r]
        a = best[r]
        ints[ND_FEATURE, k] = -1
        if a < 0:
            continue
        for c in range(W):
            right[c] = stats[k, c] - left[r, a, c]
        parent = impurity(stats[k], K, crit)
        dec = parent - impurity(left[r, a], K, crit) - impurity(right, K, crit)
        # a split of no gain (its decrease 0 up to rounding) is made where no decrease
        # is asked for (scikit-learn's rule, see criterion.keeps), and recorded as 0
        if not (dec >= min_decrease
                or (min_decrease <= 0.0 and dec > -1e-10 * max(abs(parent), 1e-300))):
            continue
        set_candidate(ints, floats, cand_left, k, features[a], pick[P_BIN, r, a],
                      pick[P_NEXT, r, a], pick[P_DEFAULT_LEFT, r, a], gain[r, a],
                      max(dec, 0.0), left[r, a])
        if thr_of.shape[0] > 0:
            floats[NF_THRESHOLD, k] = thr_of[r, a]
        found[n] = k
        n += 1
    return found[:n]


@njit(cache=True, nogil=True, inline="always")
def _splittable(stats, depth, K, settings):
    """May a node with statistics ``stats`` (channels, weight, rows) at ``depth`` be
    split? Enough rows and weight for two leaves, below the maximum depth (0: none), and
    for classification more than one class: a node of a single class is a leaf
    (scikit-learn's "impurity <= eps" rule; every split of it decreases the impurity
    by 0, and with fractional weights rounding noise would otherwise split it)."""
    count = stats[K + 1]
    if count < settings[C_MIN_SPLIT] or count < 2 * settings[C_MIN_LEAF] \
            or stats[K] < 2.0 * settings[C_MIN_WEIGHT]:
        return False
    max_depth = settings[C_MAX_DEPTH]
    if max_depth > 0 and depth >= max_depth:
        return False
    if np.int64(settings[C_CRITERION]) != SQUARED:
        classes = 0
        for c in range(K):
            if stats[c] > 0.0:
                classes += 1
        return classes > 1
    return True


@njit(cache=True, nogil=True)
def splittable_nodes(stats, depth, settings, out):
    """:func:`_splittable` of every node: stats (m, K + 2), depth (m,); out (m,) bool."""
    K = stats.shape[1] - 2
    for i in range(stats.shape[0]):
        out[i] = _splittable(stats[i], depth[i], K, settings)


@njit(cache=True, nogil=True)
def level_children(ints, stats, const, split, first, settings):
    """After :func:`~boostwood._kernels.nodes.split_nodes` made the children ``first +
    2i``, ``first + 2i + 1`` of ``split[i]``: give them the parent's known-constant
    features and return those that may be split, in order (the next level)."""
    K = stats.shape[1] - 2
    m = split.shape[0]
    out = np.empty(2 * m, dtype=np.int64)
    n_out = 0
    for i in range(m):
        for kid in (first + 2 * i, first + 2 * i + 1):
            const[kid, :] = const[split[i], :]
            if _splittable(stats[kid], ints[ND_DEPTH, kid], K, settings):
                out[n_out] = kid
                n_out += 1
    return out[:n_out]


lock_cache_writes(globals())  # numba's cache, safe when processes compile at once
