"""A naive twin of the compiled expansion loop (``_kernels/expand.py: expand_tree``).

It grows the same histogram tree the slow, obvious way, sharing nothing with the loop
but the one-feature scan (:func:`~boostwood._kernels.split.scan_feature`, which
``tests/_kernels/test_split.py`` checks on its own) and the leaf-value formula:

* each node's histogram is summed from its own rows with ``np.add.at`` (no smaller
  child built and larger one derived, no pool of slots, no retired leaves);
* rows are sent left or right by a NumPy mask (no partition kernel or buffers);
* the policy is written out in Python: leaf-wise, the open leaf of highest gain (the
  lowest id on ties); depth-wise, every open leaf, or those of highest gain when they
  would pass ``max_leaves``; a node may split while its depth, rows and hessian allow;
* the children of the i-th node of a batch get ids ``first + 2i`` (left) and ``+ 1``;
* ``colsample_bynode`` and a root mask restrict each node's features as the loop's
  documented rule says: a node's key is a hash of its parent's key and side, the root's
  the tree generator's first draw; a child inherits its parent's mask.

The tests compare the loop's trees with it field by field, and its leaves' rows.
"""
import numpy as np

from boostwood._kernels.expand import node_features
from boostwood._kernels.random import STREAM_BYNODE, counter_hash
from boostwood._kernels.split import TIE_RTOL, leaf_values, scan_feature


class NaiveTree:
    """The twin's tree: per node (by id) ``feature`` (-1 leaf), ``threshold_bin`` (-1),
    ``left``, ``right`` (-1), ``default_left`` (0), ``gain`` (0 at leaves), ``value``,
    ``cover``, ``count``; ``leaf_rows``, the rows of each leaf in node order, sorted;
    ``most_open``, the most leaves waiting with a split at once (what a loop that
    retires no leaf holds in histograms)."""


def naive_tree(X_binned, n_bins, gh, units, settings, params, features, rows=None, rng=None,
               root_mask=None):
    """Grow one tree of ``params`` (a :class:`~boostwood.tree.GrowerParams`) on the
    fixed-point rows ``gh`` (n, 2) with units ``units`` and split settings ``settings``
    (as the grower's tree state holds them), over ``features``, from the rows ``rows``
    (None: all). ``rng``: a generator in the state the grower's was given (for
    ``colsample_bynode``)."""
    p = params
    n_bins = np.asarray(n_bins)
    features = np.asarray(features, dtype=np.int64)
    ug, uh = float(units[0]), float(units[1])
    rows = np.arange(X_binned.shape[0]) if rows is None else np.asarray(rows, dtype=np.int64)
    A = features.shape[0]
    n_pick, root_key = 0, 0
    if p.colsample_bynode < 1.0:
        n_pick = max(1, int(round(p.colsample_bynode * A)))
        root_key = np.uint64(rng.integers(0, 2 ** 63))
    mask0 = np.ones(A, dtype=bool) if root_mask is None else np.asarray(root_mask) != 0
    nodes = []

    def add(r, depth, key, mask):
        g = gh[r].astype(np.int64)
        nodes.append(dict(rows=r, depth=depth, key=key, mask=mask, G=g[:, 0].sum(),
                          H=g[:, 1].sum(), C=r.shape[0], cand=None, left=-1, right=-1))
        return len(nodes) - 1

    def may_split(depth, C, H):
        if p.max_depth > 0 and depth >= p.max_depth:
            return False
        return C >= 2 * int(p.min_data_in_leaf) and H * uh >= 2 * float(p.min_child_weight)

    def allowed(node):
        ok = node["mask"].copy()
        if n_pick:
            drawn = np.zeros(A, dtype=np.uint8)
            node_features(node["key"], n_pick, drawn)
            ok &= drawn != 0
        return ok

    def best_split(k):
        node = nodes[k]
        r, ok = node["rows"], allowed(node)
        gains, picks = np.full(A, -np.inf), []
        for a, f in enumerate(features.tolist()):
            cell = np.zeros((int(n_bins[f]) + 1, 3), dtype=np.int64)
            np.add.at(cell, X_binned[r, f].astype(np.int64),
                      np.column_stack([gh[r].astype(np.int64), np.ones(r.shape[0], np.int64)]))
            left = np.zeros(3, dtype=np.int64)
            gain, b, dl = scan_feature(cell, int(n_bins[f]), np.int64(node["G"]),
                                       np.int64(node["H"]), np.int64(node["C"]), settings, left)
            picks.append((int(f), int(b), int(dl)))
            if ok[a]:
                gains[a] = gain
        top = gains.max()
        if top == -np.inf:
            return None
        a = int(np.argmax(gains >= top - TIE_RTOL * abs(top)))  # the first of the ties
        return (*picks[a], float(gains[a])) if gains[a] > 0.0 else None

    def consider(k):
        node = nodes[k]
        if may_split(node["depth"], node["C"], node["H"]):
            node["cand"] = best_split(k)
        return node["cand"] is not None

    open_ = [0] if consider(add(rows, 0, root_key, mask0)) else []
    n_leaves, most_open = 1, len(open_)
    while open_ and not (p.max_leaves > 0 and n_leaves >= p.max_leaves):
        batch = _next_batch(p, open_, n_leaves, lambda k: nodes[k]["cand"][3])
        open_ = [k for k in open_ if k not in batch]
        n_leaves += len(batch)
        children = []
        for k in batch:
            node = nodes[k]
            f, b, dl, _ = node["cand"]
            v = X_binned[node["rows"], f].astype(np.int64)
            goes_left = np.where(v == n_bins[f], dl == 1, v <= b)
            for side, part in enumerate((node["rows"][goes_left], node["rows"][~goes_left])):
                key = np.uint64(counter_hash(node["key"], STREAM_BYNODE, side, 1)) if n_pick else 0
                children.append(add(part, node["depth"] + 1, key, node["mask"]))
            node["left"], node["right"] = children[-2], children[-1]
        open_ += [c for c in children if consider(c)]
        most_open = max(most_open, len(open_))
    return _finish(nodes, p, ug, uh, most_open)


def _next_batch(p, open_, n_leaves, gain):
    """The leaves expanded next, ascending (``open_`` is ascending)."""
    def best(candidates):
        top = candidates[0]
        for k in candidates[1:]:
            if gain(k) > gain(top):  # strictly: the lowest id keeps a tie
                top = k
        return top

    if p.grow_policy == "lossguide":
        return [best(open_)]
    if p.max_leaves == 0 or n_leaves + len(open_) <= p.max_leaves:
        return list(open_)
    left, taken = list(open_), []
    for _ in range(p.max_leaves - n_leaves):
        taken.append(best(left))
        left.remove(taken[-1])
    return sorted(taken)


def _finish(nodes, p, ug, uh, most_open):
    t = NaiveTree()
    split = [nd["left"] >= 0 for nd in nodes]
    cand = [nd["cand"] if s else (-1, -1, 0, 0.0) for nd, s in zip(nodes, split)]
    t.feature = np.array([c[0] for c in cand])
    t.threshold_bin = np.array([c[1] for c in cand])
    t.default_left = np.array([c[2] for c in cand])
    t.gain = np.array([c[3] for c in cand])
    t.left = np.array([nd["left"] for nd in nodes])
    t.right = np.array([nd["right"] for nd in nodes])
    t.count = np.array([nd["C"] for nd in nodes])
    G = ug * np.array([nd["G"] for nd in nodes], dtype=np.int64).astype(np.float64)
    H = uh * np.array([nd["H"] for nd in nodes], dtype=np.int64).astype(np.float64)
    t.value = leaf_values(G, H, float(p.learning_rate), float(p.reg_lambda), float(p.reg_alpha),
                          float(p.max_delta_step))
    t.cover = H
    t.leaf_rows = [np.sort(nd["rows"]) for nd, s in zip(nodes, split) if not s]
    t.most_open = most_open
    return t


FIELDS = ("feature", "threshold_bin", "left", "right", "default_left", "value", "gain",
          "cover", "count")


def assert_twin(grower, tree, leaf_rows, twin):
    """The loop's tree (and its leaves' rows, as the grower returned them) is the twin's,
    field by field, bit for bit."""
    for f in FIELDS:
        np.testing.assert_array_equal(np.asarray(getattr(tree, f)), getattr(twin, f), err_msg=f)
    assert len(leaf_rows) == len(twin.leaf_rows)
    for a, b in zip(leaf_rows, twin.leaf_rows):
        np.testing.assert_array_equal(np.sort(a), b)


def twin_of(grower, rows=None, rng=None, root_mask=None):
    """The twin of the tree ``grower`` just grew (same fixed-point rows, units, settings,
    features; ``rng`` in the state the grower's generator was given)."""
    state = grower.tree_state
    return naive_tree(grower.X_binned, grower.n_bins, state.gh, grower.stats.units,
                      state.settings, grower.params, state.features, rows, rng, root_mask)
