"""Exact greedy split finding over pre-sorted columns (Chen & Guestrin 2016, Alg. 1 and 3).

Every feature is coded once per training run by the rank of its distinct
values (code c = the c-th smallest distinct value; NaN = ``n_values[f]``) and
its rows are sorted by value once (``order``). A level of the tree is then one
pass per feature over its sorted rows: each row adds its (g, h) to the running
left sums of the node it belongs to (``node_of[row]``), and whenever a node sees
a new value the boundary "left = values up to the previous one" is a candidate.
That costs O(rows x features) per level, not a sort per node.

The candidates, their order, the missing-value handling and the tie rule are
those of :func:`boostwood._kernels.split.scan_feature` applied to a histogram
with one bin per distinct value: exact greedy *is* the histogram algorithm with
every distinct value its own bin, evaluated without materialising the bins.
"""
import numpy as np
from numba import njit, prange

from .._config import lock_cache_writes
from .splits import P_BIN, P_DEFAULT_LEFT, P_NEXT
from .split import (S_ALPHA, S_G_UNIT, S_GAMMA, S_H_UNIT, S_LAMBDA, S_MAX_DELTA_STEP,
                    S_MIN_CHILD_WEIGHT, S_MIN_DATA_IN_LEAF, TIE_RTOL, _children_score,
                    leaf_score)


@njit(parallel=True, cache=True, nogil=True)
def mark_nodes(buf, sides, starts, counts, node_of):
    """``node_of[row] = k`` for the rows of the k-th node of a batch.

    buf : ndarray of shape (2, n_rows), int32   # IN, the partition's index buffers
    sides, starts, counts : ndarray of shape (n_nodes,), int64   # IN
    node_of : ndarray of shape (n_rows,), int32   # OUT (rows of other nodes untouched)
    """
    for k in prange(starts.shape[0]):
        rows = buf[sides[k]]
        for i in range(starts[k], starts[k] + counts[k]):
            node_of[rows[i]] = k


@njit(cache=True, nogil=True)
def _missing_sums(gh, node_of, missing_rows, n_nodes):
    """Per node, fixed-point (G, H, count) of its rows whose value of this feature is missing."""
    m = np.zeros((n_nodes, 3), dtype=np.int64)
    for i in range(missing_rows.shape[0]):
        r = missing_rows[i]
        k = node_of[r]
        if k >= 0:
            m[k, 0] += gh[r, 0]
            m[k, 1] += gh[r, 1]
            m[k, 2] += 1
    return m


@njit(cache=True, nogil=True, inline="always")
def _try(gl, hl, cl, Gt, Ht, Ct, s, parent, tol, best_gain, has_best):
    """Gain of one candidate from fixed-point left sums and node totals (-inf when it
    breaks a constraint or does not improve). The right child is ``total - left``,
    exact in integers, then scored as :func:`boostwood._kernels.split.scan_feature` does."""
    ug, uh = s[S_G_UNIT], s[S_H_UNIT]
    if cl < s[S_MIN_DATA_IN_LEAF] or Ct - cl < s[S_MIN_DATA_IN_LEAF]:
        return -np.inf
    hlf = hl * uh
    hrf = (Ht - hl) * uh
    if hlf < s[S_MIN_CHILD_WEIGHT] or hrf < s[S_MIN_CHILD_WEIGHT]:
        return -np.inf
    alpha, mds = s[S_ALPHA], s[S_MAX_DELTA_STEP]
    plain = alpha == 0.0 and mds <= 0.0
    delta = _children_score(gl * ug, hlf, (Gt - gl) * ug, hrf, s[S_LAMBDA], alpha, mds,
                            plain) - parent
    if 0.5 * delta <= tol:
        return -np.inf
    gain = 0.5 * delta - s[S_GAMMA]
    if has_best and not gain > best_gain + TIE_RTOL * abs(best_gain):
        return -np.inf
    return gain


@njit(parallel=True, cache=True, nogil=True)
def exact_scan(codes, lists, gh, node_of, totals, features, feature_mask, settings, local_eps,
               out):
    """Best split of every (node, feature) pair of a batch by one pass per feature.

    With ``local_eps`` = 0 every boundary between two of a node's distinct
    values is a candidate (exact greedy). With ``local_eps`` > 0 only the
    boundaries at the node's hessian-weighted percentiles are (the approximate
    algorithm with *local* proposals, Chen & Guestrin Alg. 2): a boundary is
    proposed once the node's running hessian sum over its sorted non-missing
    values has passed the next multiple of ``local_eps`` x their total, so each
    node gets about 1 / local_eps candidates per feature, re-proposed from its
    own rows and current hessians at every split.

    Parameters
    ----------
    codes : ndarray of shape (n_features, n_rows), uint32   # IN, rank codes
    lists : tuple (order, order_offsets, missing_rows, missing_offsets)   # IN: ``order``
        (int32) holds per feature its non-missing rows by ascending value, feature f at
        ``order[order_offsets[f]:order_offsets[f + 1]]``; ``missing_rows`` (int32) its
        rows with a missing value (``missing_offsets`` likewise)
    gh : ndarray of shape (n_rows, 2), int32 or int64   # IN, fixed-point gradients, hessians
    node_of : ndarray of shape (n_rows,), int32   # IN, batch position of each row's node, -1 = none
    totals : ndarray of shape (n_nodes, 3), int64   # IN, fixed-point (G, H, count) per node
    features : ndarray of shape (n_active,), int64   # IN
    feature_mask : ndarray of shape (n_nodes, n_active), uint8   # IN, 0 = not a candidate
    settings : ndarray, float64   # IN, see :func:`boostwood._kernels.split.split_settings`
    local_eps : float, 0 for exact greedy, else the spacing of local percentile proposals
    out : tuple (gain, pick, left)   # OUT, as every scan kernel fills it
        (:mod:`boostwood._kernels.nodes`): gain (n_nodes, n_active) float64, -inf = no
        split; pick (N_PICK, n_nodes, n_active) int64: the last code sent left, the
        node's next code (-1 = none) and missing-go-left; left (n_nodes, n_active, 3)
        int64, the fixed-point (G, H, count) going left
    """
    n_nodes = totals.shape[0]
    order, order_offsets, missing_rows, missing_offsets = lists
    out_gain, out_pick, out_left = out
    uh = settings[S_H_UNIT]
    for a in prange(features.shape[0]):
        f = features[a]
        miss = _missing_sums(gh, node_of, missing_rows[missing_offsets[f]:missing_offsets[f + 1]],
                             n_nodes)
        run = np.zeros((n_nodes, 3), dtype=np.int64)
        last = np.full(n_nodes, -1, dtype=np.int64)
        parent = np.empty(n_nodes)
        step = np.zeros(n_nodes)  # hessian between two proposals (0: every boundary)
        target = np.zeros(n_nodes)
        for k in range(n_nodes):
            if local_eps > 0.0:
                step[k] = local_eps * ((totals[k, 1] - miss[k, 1]) * uh)
                target[k] = step[k]
            parent[k] = leaf_score(totals[k, 0] * settings[S_G_UNIT], totals[k, 1] * uh,
                                   settings[S_LAMBDA], settings[S_ALPHA],
                                   settings[S_MAX_DELTA_STEP])
            out_gain[k, a] = -np.inf
            out_pick[P_BIN, k, a] = -1
            out_pick[P_NEXT, k, a] = -1
            out_pick[P_DEFAULT_LEFT, k, a] = 0
        col = codes[f]
        for i in range(order_offsets[f], order_offsets[f + 1]):
            r = order[i]
            k = node_of[r]
            if k < 0 or feature_mask[k, a] == 0:
                continue
            c = np.int64(col[r])
            if last[k] >= 0 and c != last[k] and (step[k] == 0.0
                                                  or run[k, 1] * uh >= target[k]):
                if step[k] > 0.0:  # the next proposal: the first boundary past the next percentile
                    target[k] = (np.floor(run[k, 1] * uh / step[k]) + 1.0) * step[k]
                _consider(k, a, run, miss, totals, parent, last[k], c, settings, out_gain,
                          out_pick, out_left)
            run[k, 0] += gh[r, 0]
            run[k, 1] += gh[r, 1]
            run[k, 2] += 1
            last[k] = c
        for k in range(n_nodes):  # every present value left, the missing ones right
            if last[k] >= 0 and miss[k, 2] > 0:
                _consider(k, a, run, miss, totals, parent, last[k], -1, settings, out_gain,
                          out_pick, out_left)


@njit(cache=True, nogil=True, inline="always")
def _consider(k, a, run, miss, totals, parent, code, next_code, s, out_gain, out_pick,
              out_left):
    """Boundary after ``code`` of node k: missing right, then (if any) missing left."""
    Gt, Ht, Ct = totals[k, 0], totals[k, 1], totals[k, 2]
    tol = 1e-10 * abs(parent[k])
    has_miss = miss[k, 2] > 0
    for try_left in range(2):
        if try_left == 1 and (not has_miss or next_code < 0):
            break
        gl = run[k, 0] + miss[k, 0] * try_left
        hl = run[k, 1] + miss[k, 1] * try_left
        cl = run[k, 2] + miss[k, 2] * try_left
        g = _try(gl, hl, cl, Gt, Ht, Ct, s, parent[k], tol, out_gain[k, a],
                 out_pick[P_BIN, k, a] >= 0)
        if g == -np.inf:
            continue
        out_gain[k, a] = g
        out_pick[P_BIN, k, a] = code
        out_pick[P_NEXT, k, a] = next_code
        if has_miss:
            out_pick[P_DEFAULT_LEFT, k, a] = try_left
        else:
            out_pick[P_DEFAULT_LEFT, k, a] = 1 if hl >= Ht - hl else 0
        out_left[k, a, 0] = gl
        out_left[k, a, 1] = hl
        out_left[k, a, 2] = cl


lock_cache_writes(globals())  # numba's cache, safe when processes compile at once
