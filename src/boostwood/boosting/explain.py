"""SHAP values of a Booster: exact path-dependent TreeSHAP over all its trees.

The kernels are in :mod:`boostwood._kernels.shap`; this module packs the
forest, adds the bias column (the model's expected margin: the base score plus
each tree's cover-weighted mean leaf value, the v(empty set) of TreeSHAP) and
shapes the output like XGBoost's ``pred_contribs`` / ``pred_interactions``.
"""
import numpy as np

from .._kernels.shap import _scratch_size, shap_interactions, shap_values


def tree_expected_value(tree):
    """E[f(x)] under the training cover: each split sends a share cover(child) / cover(node)
    of the mass to each child (what TreeSHAP's path-dependent v(empty set) is)."""
    ev = tree.value.astype(np.float64).copy()
    for node in range(tree.n_nodes - 1, -1, -1):  # children come after their parent
        if tree.feature[node] >= 0:
            lo, hi, c = tree.left[node], tree.right[node], tree.cover[node]
            if c > 0:
                ev[node] = (tree.cover[lo] * ev[lo] + tree.cover[hi] * ev[hi]) / c
            else:
                ev[node] = 0.5 * (ev[lo] + ev[hi])
    return float(ev[0])


def contributions(booster, fm, base_margin, start, stop, interactions=False):
    """SHAP values (or interaction values) of every row of the feature matrix ``fm``.

    Returns (n_rows, K, M + 1) or, with ``interactions``, (n_rows, K, M + 1, M + 1)
    for K outputs and M features; the last index is the bias.
    """
    packed = booster._pack(start, stop)
    K, M = booster.n_outputs, booster.n_features
    trees = booster.trees[start * K: stop * K]
    depth = max((t.depth() for t in trees), default=0)
    scratch = _scratch_size(depth, M)
    n = fm.shape[0]
    shape = (n, K, M + 1, M + 1) if interactions else (n, K, M + 1)
    out = np.zeros(shape)
    bias = np.array(booster.base_score, dtype=np.float64).copy()
    for i, t in enumerate(trees):
        bias[i % K] += tree_expected_value(t)
    kernel = shap_interactions if interactions else shap_values
    for s, X in fm.row_chunks():
        kernel(X, packed["nodes"], packed["value"], packed["cover"], packed["offsets"],
               packed["group"], scratch, out[s:s + X.shape[0]])
    if base_margin is not None:  # a row's own starting margin replaces the base score
        bias = bias[None, :] - booster.base_score[None, :] + base_margin.reshape(n, K)
    else:
        bias = np.broadcast_to(bias, (n, K))
    if interactions:
        out[:, :, M, M] = bias
    else:
        out[:, :, M] = bias
    return out


def partial_dependence(booster, feature, grid, start, stop):
    """The margin's partial dependence on ``feature`` at ``grid`` by the recursion method:
    every tree is walked once with a weight per grid value; a split on ``feature``
    sends each grid value its own way, any other split sends its weight to both
    children in proportion to their training cover (what TreeSHAP's v({feature}) is)."""
    grid = np.asarray(grid, dtype=np.float64)
    if grid.ndim != 1 or grid.size == 0:
        raise ValueError(f"grid must be a non-empty 1-dimensional list of values, got shape "
                         f"{grid.shape}")
    if not np.all(np.isfinite(grid)):
        raise ValueError("grid values must be finite")
    K = booster.n_outputs
    out = np.tile(np.asarray(booster.base_score, dtype=np.float64), (grid.size, 1))
    for i, t in enumerate(booster.trees[start * K: stop * K]):
        weight = {0: np.ones(grid.size)}
        for node in range(t.n_nodes):  # parents before children
            w = weight.pop(node)
            if t.feature[node] < 0:
                out[:, i % K] += w * t.value[node]
                continue
            lo, hi = int(t.left[node]), int(t.right[node])
            if t.feature[node] == feature:
                go = t.goes_left(node, grid)
                weight[lo], weight[hi] = w * go, w * ~go
            else:
                c = t.cover[node]
                share = t.cover[lo] / c if c > 0 else 0.5
                weight[lo], weight[hi] = w * share, w * (1.0 - share)
    return out[:, 0] if K == 1 else out
