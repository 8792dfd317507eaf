"""Split search for classic decision trees (CART, C4.5): impurity criteria over sorted columns.

The scan is :func:`boostwood._kernels.exact.exact_scan` -- one pass per feature
over its pre-sorted rows, a running sum per node, every boundary between two of
a node's distinct codes a candidate, missing values tried on both sides -- with
per-class sums instead of (g, h), because Gini, entropy and gain ratio need the
class counts of both children, not only their sum.

A node's statistics are K channels plus its weight and row count: row r adds
``stat[r]`` to channel ``channel[r]``, ``weight[r]`` to the weight and 1 to the
count. Classification: channel = class, stat = weight, so channel k holds the
weighted count N_k of class k. Regression: one channel, stat = w y, so it holds
S = sum w y.

Impurity of a node times its weight, I (Breiman et al. 1984; Quinlan 1993):

* ``GINI``:    I = N - sum_k N_k^2 / N              (N times 1 - sum p_k^2)
* ``ENTROPY``: I = N log2 N - sum_k N_k log2 N_k    (N times -sum p_k log2 p_k)
* ``SQUARED``: I = -S^2 / N                          (N times the variance, up to
  a constant that cancels in the decrease)

A split's score is the decrease I(parent) - I(left) - I(right); for
``GAIN_RATIO`` (C4.5) it is the entropy decrease divided by the split
information N (-(N_L/N) log2(N_L/N) - (N_R/N) log2(N_R/N)).
"""
import math

import numpy as np
from numba import njit, prange

from .._config import lock_cache_writes
from .splits import P_BIN, P_DEFAULT_LEFT, P_NEXT

GINI, ENTROPY, GAIN_RATIO, SQUARED = 0, 1, 2, 3

#: Named positions of the criterion settings array the criterion kernels take
#: (see :func:`criterion_settings`).
C_CRITERION, C_MIN_SPLIT, C_MIN_LEAF, C_MIN_WEIGHT, C_MAX_DEPTH = range(5)
N_CRITERION_SETTINGS = 5


def criterion_settings(criterion, min_samples_split, min_samples_leaf, min_weight_leaf,
                       max_depth):
    """The float64 settings array of the criterion kernels: the criterion code, the rows
    a node needs to be split, the rows and the weight each child needs, and the
    maximum depth (0: none)."""
    s = np.empty(N_CRITERION_SETTINGS)
    s[C_CRITERION], s[C_MIN_SPLIT], s[C_MIN_LEAF] = criterion, min_samples_split, \
        min_samples_leaf
    s[C_MIN_WEIGHT], s[C_MAX_DEPTH] = min_weight_leaf, max_depth
    return s


@njit(cache=True, nogil=True, inline="always")
def unpack_settings(settings):
    """(criterion, rows each child needs (at least 1), weight each child needs)."""
    return np.int64(settings[C_CRITERION]), max(settings[C_MIN_LEAF], 1.0), \
        settings[C_MIN_WEIGHT]

#: relative margin a candidate must beat the best by (as in the gradient scan):
#: ties up to rounding go to the first candidate, so row order never matters
TIE_RTOL = 1e-12


@njit(cache=True, nogil=True, inline="always")
def _xlog2x(x):
    return x * math.log2(x) if x > 0.0 else 0.0


@njit(cache=True, nogil=True, inline="always")
def impurity(v, K, criterion):
    """I of a node from its statistics ``v`` = (channels..., weight, count)."""
    n = v[K]
    if n <= 0.0:
        return 0.0
    if criterion == SQUARED:
        return -v[0] * v[0] / n
    if criterion == GINI:
        s = 0.0
        for k in range(K):
            s += v[k] * v[k]
        return n - s / n
    s = 0.0
    for k in range(K):
        s += _xlog2x(v[k])
    return _xlog2x(n) - s


@njit(cache=True, nogil=True, inline="always")
def _score(left, total, K, criterion, parent, scratch):
    """Decrease (or gain ratio) of the split sending ``left`` left."""
    for k in range(K + 2):
        scratch[k] = total[k] - left[k]
    crit = ENTROPY if criterion == GAIN_RATIO else criterion
    dec = parent - impurity(left, K, crit) - impurity(scratch, K, crit)
    if criterion != GAIN_RATIO:
        return dec
    n, nl = total[K], left[K]
    split_info = -(_xlog2x(nl / n) + _xlog2x((n - nl) / n))
    return dec / split_info if split_info > 0.0 else 0.0


@njit(cache=True, nogil=True, inline="always")
def candidate(run, hist, mb, with_missing, total, K, criterion, parent, left, scratch, msl,
              mwl):
    """A histogram scan's candidate: its left child, the statistics ``run`` plus, where
    ``with_missing``, the missing rows ``hist[mb]``, into ``left``; returns (whether
    each child holds ``msl`` rows and ``mwl`` weight, its :func:`_score`)."""
    for c in range(K + 2):
        left[c] = run[c] + hist[mb, c] if with_missing else run[c]
    if left[K + 1] < msl or total[K + 1] - left[K + 1] < msl \
            or left[K] < mwl or total[K] - left[K] < mwl:
        return False, -np.inf
    return True, _score(left, total, K, criterion, parent, scratch)


@njit(cache=True, nogil=True, inline="always")
def keeps(g, best, has_best, tol):
    """Does a candidate of score ``g`` replace the best so far (``best``; ``has_best``:
    there is one)? A score above ``tol`` (the rounding of the node's impurity) is a gain,
    and the first of the highest gains wins, up to ``TIE_RTOL``. A score within ``tol``
    of 0 is no gain, but still a split (scikit-learn's rule: an impure node splits when
    any valid split exists, so XOR-like interactions are learnt): the first such
    candidate, in feature then code order, counts until a gain appears. Its score is
    recorded as exactly 0 (:func:`recorded`), so that among features too the lowest
    one wins a tie of zero gains, not rounding noise."""
    if g > tol:
        return not has_best or best <= tol or g > best + TIE_RTOL * abs(best)
    return g > -tol and not has_best


@njit(cache=True, nogil=True, inline="always")
def recorded(g, tol):
    """The score a candidate is recorded with: 0 exactly when it is no gain."""
    return g if g > tol else 0.0


@njit(cache=True, nogil=True, inline="always")
def default_left_of(left_count, right_count):
    """Where missing values go at a split whose node had none in training: to the child
    of more training rows, right on a tie (scikit-learn's rule)."""
    return 1 if left_count > right_count else 0


@njit(cache=True, nogil=True, inline="always")
def _consider(k, a, run, miss, totals, parent, code, next_code, K, criterion, msl, mwl,
              scratch, left, out_gain, out_pick, out_left):
    """Boundary after ``code`` of node k: missing rows right, then (if any) left."""
    W = K + 2
    has_miss = miss[k, K + 1] > 0.0
    tol = 1e-10 * max(abs(parent[k]), 1e-300)
    for try_left in range(2):
        if try_left == 1 and (not has_miss or next_code < 0):
            break
        for c in range(W):
            left[c] = run[k, c] + miss[k, c] * try_left
        if left[K + 1] < msl or totals[k, K + 1] - left[K + 1] < msl \
                or left[K] < mwl or totals[k, K] - left[K] < mwl:
            continue
        g = _score(left, totals[k], K, criterion, parent[k], scratch)
        if not keeps(g, out_gain[k, a], out_pick[P_BIN, k, a] >= 0, tol):
            continue
        out_gain[k, a] = recorded(g, tol)
        out_pick[P_BIN, k, a] = code
        out_pick[P_NEXT, k, a] = next_code
        if has_miss:
            out_pick[P_DEFAULT_LEFT, k, a] = try_left
        else:
            out_pick[P_DEFAULT_LEFT, k, a] = default_left_of(left[K + 1],
                                                             totals[k, K + 1] - left[K + 1])
        for c in range(W):
            out_left[k, a, c] = left[c]


@njit(cache=True, nogil=True, inline="always")
def _clear(out_gain, out_pick, k, a):
    """No split yet for (node k, feature position a)."""
    out_gain[k, a] = -np.inf
    out_pick[P_BIN, k, a] = -1
    out_pick[P_NEXT, k, a] = -1
    out_pick[P_DEFAULT_LEFT, k, a] = 0


@njit(cache=True, nogil=True, inline="always")
def _missing_by_node(missing_rows, s, e, node_of, stat, channel, weight, out):
    """Add the statistics of the missing rows ``missing_rows[s:e]`` to their node's row of
    ``out`` (rows of no node in the batch are skipped)."""
    K = out.shape[1] - 2
    for i in range(s, e):
        r = missing_rows[i]
        k = node_of[r]
        if k >= 0:
            out[k, channel[r]] += stat[r]
            out[k, K] += weight[r]
            out[k, K + 1] += 1.0


@njit(parallel=True, cache=True, nogil=True)
def criterion_scan(codes, lists, row_stats, node_of, totals, features, feature_mask, settings,
                   out, out_varies):
    """Best split of every (node, feature) pair of a batch by one pass per feature.

    Parameters
    ----------
    codes, lists, node_of, features, feature_mask : as in
        :func:`boostwood._kernels.exact.exact_scan`
    row_stats : tuple (stat, channel, weight) of arrays of shape (n_rows,): float64,
        int32 in [0, K), float64   # IN
    totals : ndarray of shape (n_nodes, K + 2), float64   # IN, per node (channels, weight, count)
    settings : ndarray, float64   # IN, see :func:`criterion_settings` (criterion, the rows
        and the weight each child needs)
    out : tuple (gain, pick, left)   # OUT, as every scan kernel fills it
        (:mod:`boostwood._kernels.nodes`): gain (n_nodes, n_active) float64, the score of
        the best split, -inf = none; pick (N_PICK, n_nodes, n_active) int64, last code
        left, the next one and missing-go-left; left (n_nodes, n_active, K + 2) float64,
        statistics of the left child
    out_varies : (n_nodes, n_active) uint8   # OUT, 1 if the feature is not constant in the
        node (two distinct values, or values and missing ones), whether or not a split
        on it is allowed
    """
    n_nodes, W = totals.shape
    K = W - 2
    order, order_offsets, missing_rows, missing_offsets = lists
    stat, channel, weight = row_stats
    out_gain, out_pick, out_left = out
    criterion, min_samples_leaf, min_weight_leaf = unpack_settings(settings)
    for a in prange(features.shape[0]):
        f = features[a]
        miss = np.zeros((n_nodes, W))
        _missing_by_node(missing_rows, missing_offsets[f], missing_offsets[f + 1], node_of,
                         stat, channel, weight, miss)
        run = np.zeros((n_nodes, W))
        last = np.full(n_nodes, -1, dtype=np.int64)
        parent = np.empty(n_nodes)
        scratch = np.empty(W)
        left = np.empty(W)
        for k in range(n_nodes):
            parent[k] = impurity(totals[k], K, ENTROPY if criterion == GAIN_RATIO else criterion)
            _clear(out_gain, out_pick, k, a)
            out_varies[k, a] = 0
        col = codes[f]
        for i in range(order_offsets[f], order_offsets[f + 1]):
            r = order[i]
            k = node_of[r]
            if k < 0 or feature_mask[k, a] == 0:
                continue
            c = np.int64(col[r])
            if last[k] >= 0 and c != last[k]:
                out_varies[k, a] = 1
                _consider(k, a, run, miss, totals, parent, last[k], c, K, criterion,
                          min_samples_leaf, min_weight_leaf, scratch, left, out_gain, out_pick,
                          out_left)
            run[k, channel[r]] += stat[r]
            run[k, K] += weight[r]
            run[k, K + 1] += 1.0
            last[k] = c
        for k in range(n_nodes):  # every present value left, the missing ones right
            if last[k] >= 0 and miss[k, K + 1] > 0.0:
                out_varies[k, a] = 1
                _consider(k, a, run, miss, totals, parent, last[k], -1, K, criterion,
                          min_samples_leaf, min_weight_leaf, scratch, left, out_gain, out_pick,
                          out_left)


@njit(parallel=True, cache=True, nogil=True)
def node_statistics(buf, sides, starts, counts, stat, channel, weight, out):
    """(channels, weight, count) of the rows of each node of a batch.

    out : ndarray of shape (n_nodes, K + 2), float64   # OUT
    """
    K = out.shape[1] - 2
    for j in prange(starts.shape[0]):
        rows = buf[sides[j]]
        for c in range(K + 2):
            out[j, c] = 0.0
        for i in range(starts[j], starts[j] + counts[j]):
            r = rows[i]
            out[j, channel[r]] += stat[r]
            out[j, K] += weight[r]
            out[j, K + 1] += 1.0


@njit(cache=True, nogil=True, inline="always")
def _random_cut(vals, lo, hi, u):
    """(last code sent left, threshold) of a random split of a node whose present values
    run from code ``lo`` to ``hi``: t = lo + u (hi - lo), every value at most t left. With
    one present value (``hi == lo``: the node has missing values, else it would not be
    drawn) the split is present against missing, drawn like any other (a feature whose
    missingness separates the rows is a feature)."""
    if hi <= lo:
        return lo, vals[lo]
    t = vals[lo] + u * (vals[hi] - vals[lo])
    b = np.searchsorted(vals, t, side="right") - 1
    if b >= hi:
        b = hi - 1
        t = vals[b]
    return max(b, lo), t


@njit(parallel=True, cache=True, nogil=True)
def criterion_random_scan(codes, lists, randoms, row_stats, node_of, totals, features,
                          feature_mask, settings, out, out_threshold, out_varies):
    """Extremely randomized trees (Geurts, Ernst & Wehenkel 2006): per (node, feature) one
    threshold t = lo + u (hi - lo), u = ``uniform[node, feature]``, lo and hi the node's
    smallest and largest value; the split "x <= t" is scored like
    :func:`criterion_scan` scores a candidate (missing rows tried on both sides).

    randoms : tuple (values, value_offsets, uniform)   # IN: feature f's distinct values
        ascending are ``values[value_offsets[f]:value_offsets[f + 1]]`` (code c is the
        c-th); uniform (n_nodes, n_active) float64 in [0, 1)
    out : as in :func:`criterion_scan` (pick: last code sent left, the code after it)
    out_threshold : (n_nodes, n_active) float64   # OUT, t
    (other arguments as in :func:`criterion_scan`)
    """
    n_nodes, W = totals.shape
    K = W - 2
    order, order_offsets, missing_rows, missing_offsets = lists
    values, value_offsets, uniform = randoms
    stat, channel, weight = row_stats
    out_gain, out_pick, out_left = out
    criterion, min_samples_leaf, min_weight_leaf = unpack_settings(settings)
    for a in prange(features.shape[0]):
        f = features[a]
        vals = values[value_offsets[f]:value_offsets[f + 1]]
        miss = np.zeros((n_nodes, W))
        _missing_by_node(missing_rows, missing_offsets[f], missing_offsets[f + 1], node_of,
                         stat, channel, weight, miss)
        lo = np.full(n_nodes, -1, dtype=np.int64)
        hi = np.full(n_nodes, -1, dtype=np.int64)
        col = codes[f]
        for i in range(order_offsets[f], order_offsets[f + 1]):  # rows ascending: first = min
            r = order[i]
            k = node_of[r]
            if k >= 0 and feature_mask[k, a] != 0:
                if lo[k] < 0:
                    lo[k] = col[r]
                hi[k] = col[r]
        cut = np.full(n_nodes, -1, dtype=np.int64)
        for k in range(n_nodes):
            _clear(out_gain, out_pick, k, a)
            out_varies[k, a] = 1 if (lo[k] >= 0 and (hi[k] > lo[k] or miss[k, K + 1] > 0.0)) \
                else 0
            if lo[k] >= 0 and (hi[k] > lo[k] or miss[k, K + 1] > 0.0):
                cut[k], out_threshold[k, a] = _random_cut(vals, lo[k], hi[k], uniform[k, a])
        run = np.zeros((n_nodes, W))
        for i in range(order_offsets[f], order_offsets[f + 1]):
            r = order[i]
            k = node_of[r]
            if k >= 0 and cut[k] >= 0 and col[r] <= cut[k]:
                run[k, channel[r]] += stat[r]
                run[k, K] += weight[r]
                run[k, K + 1] += 1.0
        parent = np.empty(n_nodes)
        scratch = np.empty(W)
        left = np.empty(W)
        for k in range(n_nodes):
            if cut[k] < 0:
                continue
            parent[k] = impurity(totals[k], K, ENTROPY if criterion == GAIN_RATIO else criterion)
            _consider(k, a, run, miss, totals, parent, cut[k], cut[k] + 1 if hi[k] > lo[k]
                      else -1, K, criterion, min_samples_leaf, min_weight_leaf, scratch, left,
                      out_gain, out_pick, out_left)


@njit(parallel=True, cache=True, nogil=True)
def compact_rows(rows, offsets, node_of, out_rows, out_offsets):
    """Keep, per feature, only the rows whose node is still being split (``node_of >= 0``),
    in the same order: later levels then pass over the rows still in play, not all.

    rows, offsets : feature f's rows are ``rows[offsets[f]:offsets[f + 1]]``   # IN
    out_rows : ndarray, int32, at least as long as ``rows``   # OUT
    out_offsets : ndarray of shape (n_features + 1,), int64   # OUT
    """
    F = offsets.shape[0] - 1
    kept = np.empty(F + 1, dtype=np.int64)  # not np.zeros: a parallel region of its own
    for f in prange(F):
        c = 0
        for i in range(offsets[f], offsets[f + 1]):
            if node_of[rows[i]] >= 0:
                c += 1
        kept[f + 1] = c
    out_offsets[0] = 0
    for f in range(F):
        out_offsets[f + 1] = out_offsets[f] + kept[f + 1]
    for f in prange(F):
        j = out_offsets[f]
        for i in range(offsets[f], offsets[f + 1]):
            r = rows[i]
            if node_of[r] >= 0:
                out_rows[j] = r
                j += 1


@njit(parallel=True, cache=True, nogil=True)
def feature_varies(codes, lists, node_of, n_nodes, out_varies):
    """Which features are not constant in each node of a batch: two distinct values, or
    values and missing ones. A pass that only reads codes, so a forest can draw its
    ``max_features`` per node among varying features before the (costlier) scan.

    out_varies : ndarray of shape (n_nodes, n_active), uint8   # OUT
    (other arguments as in :func:`criterion_scan`; ``features`` are all of them here)
    """
    F = out_varies.shape[1]
    order, order_offsets, missing_rows, missing_offsets = lists
    for f in prange(F):
        first = np.full(n_nodes, -1, dtype=np.int64)
        varies = np.zeros(n_nodes, dtype=np.uint8)
        col = codes[f]
        for i in range(order_offsets[f], order_offsets[f + 1]):
            k = node_of[order[i]]
            if k >= 0:
                c = np.int64(col[order[i]])
                if first[k] < 0:
                    first[k] = c
                elif c != first[k]:
                    varies[k] = 1
        for i in range(missing_offsets[f], missing_offsets[f + 1]):
            k = node_of[missing_rows[i]]
            if k >= 0 and first[k] >= 0:
                varies[k] = 1
        for k in range(n_nodes):
            out_varies[k, f] = varies[k]


# -- rows grouped by node: a level scans only the (node, feature) pairs it draws ----------------
#
# Depth-wise growth keeps each feature's sorted rows grouped by node: feature f's rows of
# node k are ``rows[seg[f, k]:seg[f, k + 1]]``, still in ascending order of value (a node's
# rows are a stable subset of its parent's). Each level regroups the rows of the nodes it
# splits (dropping those of finished leaves), so a node's scan reads one contiguous,
# sorted segment per drawn feature (the attribute lists of SLIQ / SPRINT), and features
# that a node did not draw cost nothing.


@njit(parallel=True, cache=True, nogil=True)
def count_by_node(rows, starts, ends, node_of, out_counts):
    """out_counts[f, k] = rows of node k in feature f's list (``node_of`` < 0: not counted).

    out_counts : ndarray of shape (n_features, n_nodes), int64   # OUT
    """
    for f in prange(starts.shape[0]):
        for k in range(out_counts.shape[1]):
            out_counts[f, k] = 0
        for i in range(starts[f], ends[f]):
            k = node_of[rows[i]]
            if k >= 0:
                out_counts[f, k] += 1


@njit(parallel=True, cache=True, nogil=True)
def regroup(rows, starts, ends, node_of, counts, out_rows, out_seg):
    """Stable-partition each feature's rows (``rows[starts[f]:ends[f]]``) by node, in one
    pass, given how many rows of each node every feature holds.

    node_of : ndarray, int32   # IN, batch position of each row's node (-1: dropped)
    counts : ndarray of shape (n_features, n_nodes), int64   # IN
    out_rows : ndarray, int32, at least ``counts.sum()`` long   # OUT
    out_seg : ndarray of shape (n_features, n_nodes + 1), int64   # OUT
    """
    F, n_nodes = counts.shape
    pos = 0
    for f in range(F):
        for k in range(n_nodes):
            out_seg[f, k] = pos
            pos += counts[f, k]
        out_seg[f, n_nodes] = pos
    for f in prange(F):
        cursor = out_seg[f, :n_nodes].copy()
        for i in range(starts[f], ends[f]):
            r = rows[i]
            k = node_of[r]
            if k >= 0:
                out_rows[cursor[k]] = r
                cursor[k] += 1


@njit(parallel=True, cache=True, nogil=True)
def grouped_varies(codes, rows, seg, miss_seg, features, out_varies):
    """1 where feature ``features[a]`` is not constant in node k: its first and last
    (sorted) codes differ, or it has both values and missing ones. O(1) per pair.

    out_varies : ndarray of shape (n_nodes, n_active), uint8   # OUT
    """
    n_nodes = out_varies.shape[0]
    for a in prange(features.shape[0]):
        f = features[a]
        col = codes[f]
        for k in range(n_nodes):
            s, e = seg[f, k], seg[f, k + 1]
            v = 0
            if e > s:
                if col[rows[s]] != col[rows[e - 1]] or miss_seg[f, k + 1] > miss_seg[f, k]:
                    v = 1
            out_varies[k, a] = v


@njit(cache=True, nogil=True)
def _segment_stats(rows, s, e, stat, channel, weight, out):
    for c in range(out.shape[0]):
        out[c] = 0.0
    K = out.shape[0] - 2
    for i in range(s, e):
        r = rows[i]
        out[channel[r]] += stat[r]
        out[K] += weight[r]
        out[K + 1] += 1.0


@njit(parallel=True, cache=True, nogil=True)
def grouped_scan(codes, grouped, row_stats, totals, features, feature_mask, settings, out):
    """:func:`criterion_scan` on rows grouped by node: each (node, feature) pair the mask
    allows is one pass over its sorted segment; the others are skipped (gain -inf).
    Same candidates, order, ties and results as :func:`criterion_scan`.

    grouped : tuple (rows, seg, miss_rows, miss_seg)   # IN: present rows grouped by node
        (see :func:`regroup`), and the same for the rows whose value is missing
    """
    n_nodes, W = totals.shape
    K = W - 2
    rows, seg, miss_rows, miss_seg = grouped
    stat, channel, weight = row_stats
    out_gain, out_pick, out_left = out
    criterion, min_samples_leaf, min_weight_leaf = unpack_settings(settings)
    crit = ENTROPY if criterion == GAIN_RATIO else criterion
    for a in prange(features.shape[0]):
        f = features[a]
        col = codes[f]
        parent = np.empty(1)
        miss = np.empty((1, W))
        run = np.empty((1, W))
        scratch = np.empty(W)
        left = np.empty(W)
        for k in range(n_nodes):
            _clear(out_gain, out_pick, k, a)
            s, e = seg[f, k], seg[f, k + 1]
            if feature_mask[k, a] == 0 or e <= s:
                continue
            parent[0] = impurity(totals[k], K, crit)
            _segment_stats(miss_rows, miss_seg[f, k], miss_seg[f, k + 1], stat, channel, weight,
                           miss[0])
            run[0, :] = 0.0
            tot = totals[k:k + 1]
            gain_k, pick_k = out_gain[k:k + 1, a:a + 1], out_pick[:, k:k + 1, a:a + 1]
            left_k = out_left[k:k + 1, a:a + 1]
            last = np.int64(col[rows[s]])
            for i in range(s, e):
                r = rows[i]
                c = np.int64(col[r])
                if c != last:
                    _consider(0, 0, run, miss, tot, parent, last, c, K, criterion,
                              min_samples_leaf, min_weight_leaf, scratch, left, gain_k, pick_k,
                              left_k)
                run[0, channel[r]] += stat[r]
                run[0, K] += weight[r]
                run[0, K + 1] += 1.0
                last = c
            if miss[0, K + 1] > 0.0:  # every present value left, the missing ones right
                _consider(0, 0, run, miss, tot, parent, last, -1, K, criterion,
                          min_samples_leaf, min_weight_leaf, scratch, left, gain_k, pick_k,
                          left_k)


@njit(parallel=True, cache=True, nogil=True)
def grouped_random_scan(codes, grouped, randoms, row_stats, totals, features, feature_mask,
                        settings, out, out_threshold):
    """:func:`criterion_random_scan` on rows grouped by node (same thresholds and results;
    ``grouped`` as in :func:`grouped_scan`)."""
    n_nodes, W = totals.shape
    K = W - 2
    rows, seg, miss_rows, miss_seg = grouped
    values, value_offsets, uniform = randoms
    stat, channel, weight = row_stats
    out_gain, out_pick, out_left = out
    criterion, min_samples_leaf, min_weight_leaf = unpack_settings(settings)
    crit = ENTROPY if criterion == GAIN_RATIO else criterion
    for a in prange(features.shape[0]):
        f = features[a]
        col = codes[f]
        vals = values[value_offsets[f]:value_offsets[f + 1]]
        parent = np.empty(1)
        miss = np.empty((1, W))
        run = np.empty((1, W))
        scratch = np.empty(W)
        left = np.empty(W)
        for k in range(n_nodes):
            _clear(out_gain, out_pick, k, a)
            s, e = seg[f, k], seg[f, k + 1]
            if feature_mask[k, a] == 0 or e <= s:
                continue
            lo, hi = np.int64(col[rows[s]]), np.int64(col[rows[e - 1]])
            _segment_stats(miss_rows, miss_seg[f, k], miss_seg[f, k + 1], stat, channel, weight,
                           miss[0])
            if hi <= lo and miss[0, K + 1] == 0.0:
                continue  # one value and no missing one: no split on this feature
            b, out_threshold[k, a] = _random_cut(vals, lo, hi, uniform[k, a])
            parent[0] = impurity(totals[k], K, crit)
            run[0, :] = 0.0
            for i in range(s, e):
                r = rows[i]
                if np.int64(col[r]) > b:
                    break
                run[0, channel[r]] += stat[r]
                run[0, K] += weight[r]
                run[0, K + 1] += 1.0
            _consider(0, 0, run, miss, totals[k:k + 1], parent, b, b + 1 if hi > lo else -1,
                      K, criterion, min_samples_leaf, min_weight_leaf, scratch, left,
                      out_gain[k:k + 1, a:a + 1], out_pick[:, k:k + 1, a:a + 1],
                      out_left[k:k + 1, a:a + 1])


lock_cache_writes(globals())  # numba's cache, safe when processes compile at once
