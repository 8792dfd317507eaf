"""The splitter seam and the node table: every splitter (histogram, sorted, criterion) hands
back a named batch of splits whose child totals are those of the rows the split sends
left and right, and every growth path grows into the same NodeTable."""
import numpy as np
import pytest

import boostwood as bw
from boostwood._kernels.nodes import (N_NODE_INTS, ND_COUNT, ND_DEPTH, ND_FEATURE, ND_LEFT,
                                      ND_RIGHT, ND_SIDE, ND_START, split_nodes)
from boostwood.data.columns import SortedColumns
from boostwood.data.validation import as_feature_matrix
from boostwood.tree import GrowerParams, TreeGrower
from boostwood.data.columns import BinnedColumns
from boostwood.tree.criterion import criterion_grower, grow_tree
from boostwood.tree.exact import exact_grower
from boostwood.tree.nodes import NodeTable
from boostwood.tree.splitters import (CriterionSplitter, HistogramSplitter, SortedSplitter,
                                      SplitBatch)


def _data(n=2000, F=5, seed=0):
    r = np.random.default_rng(seed)
    X = r.normal(size=(n, F)).round(2)
    X[r.random(X.shape) < 0.05] = np.nan
    y = np.nan_to_num(X[:, 0]) + (np.nan_to_num(X[:, 1]) > 0.3) + 0.3 * r.normal(size=n)
    return X, y


def _record_batches(grower, monkeypatch):
    """Wrap the grower's splitter: for each batch, the node rows and the batch itself."""
    seen = []
    find = grower.splitter.find

    def spy(table, nodes, tree):
        rows = {int(k): grower.buf[table.ints[ND_SIDE, k],
                                   table.ints[ND_START, k]:table.ints[ND_START, k]
                                   + table.ints[ND_COUNT, k]].copy() for k in nodes}
        batch = find(table, nodes, tree)
        seen.append((rows, batch, {f: getattr(batch, f).copy() for f in
                                   ("feature", "bin", "threshold", "default_left", "left",
                                    "right", "gain", "recorded_gain", "kind")}))
        return batch

    monkeypatch.setattr(grower.splitter, "find", spy)
    return seen


def _split_nodes_of(grower, table):
    """The split nodes of a finished table as one recorded batch, each with its rows: those
    of the leaves below it (a leaf's segment holds its rows at the end; a split node's
    segment is partly overwritten by its descendants' partitions)."""
    ints = table.ints
    rows = {}
    for k in range(table.n - 1, -1, -1):  # children have higher ids than their parent
        if ints[ND_LEFT, k] >= 0:
            rows[k] = np.concatenate([rows[int(ints[ND_LEFT, k])], rows[int(ints[ND_RIGHT, k])]])
        else:
            start = ints[ND_START, k]
            rows[k] = grower.buf[ints[ND_SIDE, k], start:start + ints[ND_COUNT, k]].copy()
    nodes = np.nonzero(ints[ND_LEFT, :table.n] >= 0)[0]
    batch = SplitBatch(table, nodes)
    return rows, batch, {f: getattr(batch, f).copy() for f in
                         ("feature", "bin", "threshold", "default_left", "left", "right",
                          "gain", "recorded_gain", "kind")}


def _check(seen, goes_left, stat_of, tol=0.0):
    n_splits = 0
    for rows, batch, f in seen:
        for i, k in enumerate(batch.nodes.tolist()):
            r = rows[k]
            left = goes_left(r, f["feature"][i], f["bin"][i], f["threshold"][i],
                             f["default_left"][i])
            assert f["kind"][i] == 0  # numeric: no learner makes categorical splits yet
            np.testing.assert_allclose(f["left"][i], stat_of(r[left]), rtol=tol, atol=tol)
            np.testing.assert_allclose(f["right"][i], stat_of(r[~left]), rtol=tol, atol=tol)
            assert f["gain"][i] > 0
            n_splits += 1
    assert n_splits > 5


@pytest.mark.parametrize("policy", ["depthwise", "lossguide"])
def test_histogram_splitter_child_totals_are_the_rows_sent_each_way(policy, monkeypatch):
    X, y = _data()
    d = bw.Dataset(X, y, max_bin=32).construct()
    m = d.bin_mapper
    g = TreeGrower(d.X_binned, m.n_bins, m.n_bins_max,
                   GrowerParams(grow_policy=policy, max_depth=4 if policy == "depthwise" else 0,
                                max_leaves=0 if policy == "depthwise" else 12))
    assert isinstance(g.splitter, HistogramSplitter)
    # its scan runs in the compiled loop: every split of the finished table, as one batch
    tables = []
    finish = g.finish_tree
    monkeypatch.setattr(g, "finish_tree", lambda table: (tables.append(table), finish(table))[1])
    gh = np.column_stack([-(y - y.mean()), np.ones_like(y)]).astype(np.float32)
    g.grow(gh, None, np.arange(5, dtype=np.int64), np.random.default_rng(0))
    seen = [_split_nodes_of(g, tables[0])]
    q = g.tree_state.gh  # the fixed-point rows the sums are made of

    def goes_left(r, f, b, thr, dl):
        col = d.X_binned[r, f].astype(np.int64)
        return np.where(col == m.n_bins[f], dl == 1, col <= b)

    _check(seen, goes_left, lambda r: [q[r, 0].sum(), q[r, 1].sum(), r.size])


@pytest.mark.parametrize("local_eps", [0.0, 0.2])
def test_sorted_splitter_child_totals_and_raw_thresholds(local_eps, monkeypatch):
    X, y = _data(seed=1)
    cols = SortedColumns(as_feature_matrix(X, "data"))
    g = exact_grower(cols, GrowerParams(max_depth=4), local_eps=local_eps)
    assert isinstance(g.splitter, SortedSplitter)
    seen = _record_batches(g, monkeypatch)
    gh = np.column_stack([-(y - y.mean()), np.ones_like(y)]).astype(np.float32)
    g.grow(gh, None, np.arange(5, dtype=np.int64), np.random.default_rng(0))
    q = g._gh

    def goes_left(r, f, b, thr, dl):
        x = X[r, f]
        return np.where(np.isnan(x), dl == 1, x <= thr)  # the raw threshold agrees with codes

    _check(seen, goes_left, lambda r: [q[r, 0].sum(), q[r, 1].sum(), r.size])


@pytest.mark.parametrize("binned", [False, True])
def test_criterion_splitter_child_totals(binned, monkeypatch):
    X, y = _data(seed=2)
    yc = (y > 0.5).astype(np.int64)
    if binned:
        d = bw.Dataset(X, yc, max_bin=16).construct()
        m = d.bin_mapper
        cols = BinnedColumns(d.X_binned, m.n_bins, m.bin_thresholds)
    else:
        cols = SortedColumns(as_feature_matrix(X, "data"))
    g = criterion_grower(cols, GrowerParams(grow_policy="lossguide", max_depth=0,
                                            max_leaves=10, min_child_weight=0.0,
                                            colsample_bynode=1.0), 2, "gini")
    assert isinstance(g.splitter, CriterionSplitter)
    seen = _record_batches(g, monkeypatch)
    w = np.ones(y.size)
    grow_tree(g, w, yc.astype(np.int32), w, None, np.arange(5, dtype=np.int64),
                np.random.default_rng(0))

    def goes_left(r, f, b, thr, dl):
        x = X[r, f]
        return np.where(np.isnan(x), dl == 1, x <= thr)

    _check(seen, goes_left, lambda r: [np.sum(yc[r] == 0), np.sum(yc[r] == 1), r.size, r.size])


def test_split_nodes_makes_children_from_the_candidates():
    t = NodeTable(3, np.int64, capacity=4)
    t.add_root(np.array([10, 20, 8]), 8)
    t.ints[0, 0], t.cand_left[0] = 2, [3, 5, 3]  # feature 2; left: G 3, H 5, 3 rows
    first = t.split(np.array([0]), np.array([3]))
    assert first == 1 and t.n == 3
    assert t.ints[ND_LEFT, 0] == 1 and t.ints[ND_RIGHT, 0] == 2
    assert t.stats[1].tolist() == [3, 5, 3] and t.stats[2].tolist() == [7, 15, 5]
    assert t.ints[[ND_START, ND_COUNT, ND_SIDE, ND_DEPTH], 1].tolist() == [0, 3, 1, 1]
    assert t.ints[[ND_START, ND_COUNT, ND_SIDE, ND_DEPTH], 2].tolist() == [3, 5, 1, 1]
    assert (t.ints[ND_FEATURE, 1:t.n] == -1).all() and t.ints.shape[0] == N_NODE_INTS
    # the table grows past its capacity and keeps what it holds
    t.cand_left[1] = [1, 1, 1]
    t.ints[0, 1] = 0
    t.split(np.array([1]), np.array([1]))
    t.cand_left[2] = [1, 1, 1]
    t.ints[0, 2] = 0
    t.split(np.array([2]), np.array([1]))
    assert t.n == 7 and t.stats.shape[0] >= 7 and t.stats[2].tolist() == [7, 15, 5]
    tree = t.to_tree(np.zeros(7), np.ones(7), t.stats[:7, 2])
    assert tree.feature.tolist() == [2, 0, 0, -1, -1, -1, -1]


def test_split_nodes_kernel_matches_a_python_twin():
    """The kernel against the rule written out: children ids, segments, statistics."""
    r = np.random.default_rng(4)
    t = NodeTable(3, np.int64, capacity=8)
    t.add_root(np.array([100, 200, 50]), 50)
    t.cand_left[0] = [40, 70, 20]
    t.ints[0, 0] = 1
    t.split(np.array([0]), np.array([20]))
    t.reserve(4)
    t.cand_left[:] = r.integers(0, 10, size=t.cand_left.shape)
    ints, stats = t.ints.copy(), t.stats.copy()
    nodes, n_left = np.array([1, 2]), np.array([7, 11])
    split_nodes(ints, t.floats.copy(), stats, t.cand_left, nodes, n_left, 3)
    for i, p in enumerate(nodes):
        lk, rk = 3 + 2 * i, 4 + 2 * i
        assert (ints[ND_LEFT, p], ints[ND_RIGHT, p]) == (lk, rk)
        assert ints[ND_START, lk] == ints[ND_START, p] and ints[ND_COUNT, lk] == n_left[i]
        assert ints[ND_START, rk] == ints[ND_START, p] + n_left[i]
        assert ints[ND_COUNT, rk] == ints[ND_COUNT, p] - n_left[i]
        assert ints[ND_DEPTH, lk] == ints[ND_DEPTH, rk] == ints[ND_DEPTH, p] + 1
        assert ints[ND_SIDE, lk] == 1 - ints[ND_SIDE, p] == ints[ND_SIDE, rk]
        assert stats[lk].tolist() == t.cand_left[p].tolist()
        assert stats[rk].tolist() == (stats[p] - t.cand_left[p]).tolist()
