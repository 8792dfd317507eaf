"""Exact path-dependent TreeSHAP (Lundberg et al. 2020, "From local explanations to
global understanding with explainable AI for trees", Algorithm 2).

For one row x and one tree, the Shapley value of feature i for the value
function v(S) = E[f(x) | x_S] -- where a split on a feature outside S sends the
row to both children, weighted by the children's training cover -- is found in
O(L D^2) time (L leaves, D depth) by walking every root-to-leaf path once while
keeping, for the unique features met on the path so far, the proportion of
subsets ("permutation weights") that reach the current node:

* ``z`` (zero fraction): the share of the paths through this node that a row
  *without* the feature takes (cover of the child / cover of the node),
* ``o`` (one fraction): 1 if x itself goes this way, else 0,
* ``w``: the weight of subsets of each size; EXTEND adds a feature to the
  path, UNWIND removes one (used when a feature is split on twice, and to read
  each feature's contribution at a leaf: phi_i += sum(UNWIND(i).w) (o_i - z_i) v).

Conditioning (for SHAP interaction values, section 2.6 of the paper): with
``cond = +1`` feature ``cond_feature`` is held "present" (only x's branch is
followed at its splits, and it is not added to the path); with ``cond = -1`` it is
held "absent" (both branches, weighted by cover). Interaction values are then
phi_ij = (phi_i | j present - phi_i | j absent) / 2.

Paths live in one scratch buffer per row: level ``k`` of the walk owns the
segment starting at ``k (k + 1) / 2`` (its path has at most k + 1 entries), so a
node never overwrites its parent's path.
"""
import numpy as np
from numba import njit, prange

from .._config import lock_cache_writes
from .splits import goes_left


@njit(cache=True, nogil=True, inline="always")
def _extend(pd, pz, po, pw, s, n, zero, one, feat):
    """Append (feat, zero, one) to the path of length n at offset s; update weights."""
    pd[s + n] = feat
    pz[s + n] = zero
    po[s + n] = one
    pw[s + n] = 1.0 if n == 0 else 0.0
    for i in range(n - 1, -1, -1):
        pw[s + i + 1] += one * pw[s + i] * (i + 1) / (n + 1)
        pw[s + i] = zero * pw[s + i] * (n - i) / (n + 1)


@njit(cache=True, nogil=True, inline="always")
def _unwind(pd, pz, po, pw, s, n, k):
    """Remove entry k from the path of length n at offset s (the inverse of _extend)."""
    one, zero = po[s + k], pz[s + k]
    nxt = pw[s + n - 1]
    for j in range(n - 2, -1, -1):
        if one != 0.0:
            t = pw[s + j]
            pw[s + j] = nxt * n / ((j + 1) * one)
            nxt = t - pw[s + j] * zero * (n - j - 1) / n
        else:
            pw[s + j] = pw[s + j] * n / (zero * (n - j - 1))
    for j in range(k, n - 1):
        pd[s + j] = pd[s + j + 1]
        pz[s + j] = pz[s + j + 1]
        po[s + j] = po[s + j + 1]


@njit(cache=True, nogil=True, inline="always")
def _unwound_sum(pz, po, pw, s, n, k):
    """sum of the weights the path would have after _unwind(k), without changing it."""
    one, zero = po[s + k], pz[s + k]
    nxt = pw[s + n - 1]
    total = 0.0
    for j in range(n - 2, -1, -1):
        if one != 0.0:
            t = nxt * n / ((j + 1) * one)
            total += t
            nxt = pw[s + j] - t * zero * (n - j - 1) / n
        else:
            total += pw[s + j] * n / (zero * (n - j - 1))
    return total


@njit(cache=True, nogil=True)
def _tree_shap(x, base, nodes, value, cover, phi, pd, pz, po, pw, fr, ff, state, cond,
               cond_feature):
    """Add one tree's SHAP values of row ``x`` to ``phi``.

    Algorithm 2 as a flat depth-first walk whose stack level is the recursion
    level (numba cannot load a cached self-recursive function, and one loop
    avoids a call per node). A split node leaves in ``fr[level]`` = (path length,
    hot child, cold child, feature) and ``ff[level]`` = (hot zero fraction, cold
    zero fraction, one fraction, hot and cold conditioning shares) what its
    children need; ``state[level]`` records which children were visited.
    """
    feature, threshold, left, right, default_left, kind, cat_start, cat_len, cat_bits = nodes
    level, node, n, zero, one, feat, frac = 0, 0, 0, 1.0, 1.0, -1, 1.0
    visit = True
    lvl = -1
    while True:
        if visit:
            visit = False
            if frac == 0.0:
                continue
            width = pd.shape[0] // state.shape[0]  # each level's segment (_scratch_size)
            s = level * width
            if level > 0:  # copy the parent's path into this level's segment
                p = s - width
                for i in range(n):
                    pd[s + i] = pd[p + i]
                    pz[s + i] = pz[p + i]
                    po[s + i] = po[p + i]
                    pw[s + i] = pw[p + i]
            if cond == 0 or cond_feature != feat:
                _extend(pd, pz, po, pw, s, n, zero, one, feat)
                n += 1
            j = base + node
            f = feature[j]
            if f < 0:  # a leaf: every feature on the path gets its share of the value
                for i in range(1, n):
                    w = _unwound_sum(pz, po, pw, s, n, i)
                    phi[pd[s + i]] += w * (po[s + i] - pz[s + i]) * value[j] * frac
                continue
            go_left = goes_left(x[f], j, kind, threshold, default_left, cat_start, cat_len,
                                cat_bits)
            hot = left[j] if go_left else right[j]
            cold = right[j] if go_left else left[j]
            c = cover[j]
            hot_zero = cover[base + hot] / c if c > 0 else 0.5
            cold_zero = cover[base + cold] / c if c > 0 else 0.5
            in_zero, in_one = 1.0, 1.0
            for k in range(1, n):  # the feature was split on above: take it off the path
                if pd[s + k] == f:
                    in_zero, in_one = pz[s + k], po[s + k]
                    _unwind(pd, pz, po, pw, s, n, k)
                    n -= 1
                    break
            hot_frac, cold_frac = frac, frac
            if cond > 0 and f == cond_feature:
                cold_frac = 0.0
            elif cond < 0 and f == cond_feature:
                hot_frac *= hot_zero
                cold_frac *= cold_zero
            fr[level, 0], fr[level, 1], fr[level, 2], fr[level, 3] = n, hot, cold, f
            ff[level, 0], ff[level, 1] = hot_zero * in_zero, cold_zero * in_zero
            ff[level, 2], ff[level, 3], ff[level, 4] = in_one, hot_frac, cold_frac
            state[level] = 0
            lvl = level
            continue
        if lvl < 0:
            return
        if state[lvl] == 0:  # go down the branch x takes
            state[lvl] = 1
            level, node, n, feat = lvl + 1, fr[lvl, 1], fr[lvl, 0], fr[lvl, 3]
            zero, one, frac = ff[lvl, 0], ff[lvl, 2], ff[lvl, 3]
            visit = True
        elif state[lvl] == 1:  # then the other one, unless no training row went there
            state[lvl] = 2
            if ff[lvl, 1] > 0.0:
                level, node, n, feat = lvl + 1, fr[lvl, 2], fr[lvl, 0], fr[lvl, 3]
                zero, one, frac = ff[lvl, 1], 0.0, ff[lvl, 4]
                visit = True
        else:
            lvl -= 1


def _scratch_size(max_depth, n_features):
    """(levels, width) of the path buffers for trees of depth ``max_depth`` on
    ``n_features`` features: a segment of ``width`` entries per level. A level's path
    holds at most level + 1 entries and never more than n_features + 1 (a feature
    split on again is taken off before it is added), so the buffers grow as depth
    times features, not depth squared (a chain 20,000 deep on one feature: 60k
    entries, not 200 million)."""
    levels = max_depth + 2
    return levels, min(levels, n_features + 2)


@njit(cache=True, nogil=True)
def _frames(scratch):
    """One row's scratch: the path buffers (features, zero and one fractions, weights),
    a segment of ``width`` entries per level, and the per-level stack."""
    levels, width = scratch
    size = levels * width
    return (np.empty(size, dtype=np.int64), np.empty(size), np.empty(size),
            np.empty(size), np.empty((levels, 4), dtype=np.int64), np.empty((levels, 5)),
            np.empty(levels, dtype=np.int8))


@njit(parallel=True, cache=True, nogil=True)
def shap_values(X, nodes, value, cover, tree_offsets, tree_group, scratch, out):
    """Add every tree's SHAP values of every row to ``out[row, group, :n_features]``.

    X : ndarray of shape (n_rows, n_features), float32 or float64   # IN
    nodes : node tuple of the packed forest (see ``predict.py``); value, cover : float64   # IN
    tree_offsets, tree_group : ndarray of shape (n_trees,), int64   # IN
    scratch : (levels, width), the path buffers' shape (``_scratch_size``)
    out : ndarray of shape (n_rows, n_groups, n_features + 1), float64   # IN/OUT
    """
    n_rows, n_features = X.shape
    for i in prange(n_rows):
        pd, pz, po, pw, fr, ff, state = _frames(scratch)
        phi = np.zeros(n_features)
        for t in range(tree_offsets.shape[0]):
            phi[:] = 0.0
            _tree_shap(X[i], tree_offsets[t], nodes, value, cover, phi, pd, pz, po, pw, fr, ff,
                       state, 0, -1)
            g = tree_group[t]
            for f in range(n_features):
                out[i, g, f] += phi[f]


@njit(parallel=True, cache=True, nogil=True)
def shap_interactions(X, nodes, value, cover, tree_offsets, tree_group, scratch, out):
    """Add every tree's SHAP interaction values to ``out[row, group, i, j]`` (i, j <
    n_features; the diagonal holds the main effects phi_i - sum_{j != i} phi_ij).

    out : ndarray of shape (n_rows, n_groups, n_features + 1, n_features + 1)   # IN/OUT
    """
    feature = nodes[0]
    n_rows, n_features = X.shape
    for i in prange(n_rows):
        pd, pz, po, pw, fr, ff, state = _frames(scratch)
        phi = np.zeros(n_features)
        on = np.zeros(n_features)
        off = np.zeros(n_features)
        for t in range(tree_offsets.shape[0]):
            base, g = tree_offsets[t], tree_group[t]
            phi[:] = 0.0
            _tree_shap(X[i], base, nodes, value, cover, phi, pd, pz, po, pw, fr, ff, state, 0,
                       -1)
            for f in range(n_features):
                out[i, g, f, f] += phi[f]
            used = np.zeros(n_features, dtype=np.uint8)
            end = tree_offsets[t + 1] if t + 1 < tree_offsets.shape[0] else feature.shape[0]
            for j in range(base, end):
                if feature[j] >= 0:
                    used[feature[j]] = 1
            for a in range(n_features):
                if used[a] == 0:
                    continue
                on[:] = 0.0
                off[:] = 0.0
                _tree_shap(X[i], base, nodes, value, cover, on, pd, pz, po, pw, fr, ff, state, 1,
                           a)
                _tree_shap(X[i], base, nodes, value, cover, off, pd, pz, po, pw, fr, ff, state,
                           -1, a)
                for b in range(n_features):
                    if b != a:
                        v = 0.5 * (on[b] - off[b])
                        out[i, g, a, b] += v
                        out[i, g, a, a] -= v


lock_cache_writes(globals())  # numba's cache, safe when processes compile at once
