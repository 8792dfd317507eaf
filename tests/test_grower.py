"""Invariants of tree growth: partitions, sums, policies, monotone training loss."""
import numpy as np
import pytest

import boostwood as bw
from boostwood.tree import GrowerParams, TreeGrower

from conftest import make_classification, make_regression


def _grow(policy="depthwise", **kw):
    X, y = make_regression(3000, 5, seed=3)
    d = bw.Dataset(X, y, max_bin=32).construct()
    m = d.bin_mapper
    params = GrowerParams(grow_policy=policy, **kw)
    grower = TreeGrower(d.X_binned, m.n_bins, m.n_bins_max, params)
    gh = np.column_stack([-(y - y.mean()), np.ones_like(y)]).astype(np.float32)
    tree, segments = grower.grow(gh, None, np.arange(5, dtype=np.int64), np.random.default_rng(0))
    return d, gh, grower, tree, segments


@pytest.mark.parametrize("policy,kw", [("depthwise", dict(max_depth=4)),
                                       ("lossguide", dict(max_depth=0, max_leaves=11))])
def test_children_partition_parent_and_sums_add_up(policy, kw):
    d, gh, grower, tree, (sides, starts, counts, _) = _grow(policy, **kw)
    # leaves' segments tile the rows exactly once
    rows = np.concatenate([grower.buf[b, s:s + c] for b, s, c in zip(sides, starts, counts)])
    assert np.array_equal(np.sort(rows), np.arange(d.num_row()))
    # each split: children counts and hessians add up to the parent
    for node in np.nonzero(tree.feature >= 0)[0]:
        l, r = tree.left[node], tree.right[node]
        assert tree.count[l] + tree.count[r] == tree.count[node]
        assert tree.cover[l] + tree.cover[r] == pytest.approx(tree.cover[node])
        assert tree.gain[node] > 0
    # each leaf's segment holds exactly the rows that the tree sends there
    leaf_of = np.empty(d.num_row(), dtype=np.int64)
    for leaf, b, s, c in zip(np.nonzero(tree.feature < 0)[0], sides, starts, counts):
        leaf_of[grower.buf[b, s:s + c]] = leaf
        assert tree.count[leaf] == c
    tree.threshold[:] = 0
    split = tree.feature >= 0
    tree.threshold[split] = d.bin_mapper.bin_thresholds(tree.feature[split], tree.threshold_bin[split])
    b = bw.Booster()
    b._start(np.zeros(1), d.feature_names)
    b._append_round([tree])
    assert np.array_equal(b.predict(d.features.dense, pred_leaf=True)[:, 0], leaf_of)


def test_the_scan_is_told_the_bound_of_a_row():
    """The split settings carry the magnitude bound of one fixed-point row, from the rows'
    dtype (int32: 2**31; quantized int16: 2**15), which lets the scan convert the sums
    of small nodes by its short exact route (split._small_sums); 0 would turn it off."""
    from boostwood._kernels.split import S_ROW_MAX
    d, gh, grower, *_ = _grow("lossguide", max_depth=0, max_leaves=7)
    assert grower._gh.dtype == np.int32 and grower._settings[S_ROW_MAX] == 2.0 ** 31
    grower.stats.use_quantized(16)
    grower.grow(gh, None, np.arange(5, dtype=np.int64), np.random.default_rng(0))
    assert grower._gh.dtype == np.int16 and grower._settings[S_ROW_MAX] == 2.0 ** 15


def test_policies_respect_their_limits():
    *_, tree, _ = _grow("depthwise", max_depth=3)
    assert tree.depth() <= 3 and tree.n_leaves <= 8
    *_, tree, _ = _grow("lossguide", max_depth=0, max_leaves=7)
    assert tree.n_leaves == 7
    *_, tree, _ = _grow("depthwise", max_depth=6, max_leaves=5)
    assert tree.n_leaves <= 5


def test_min_data_in_leaf_and_min_child_weight():
    *_, tree, _ = _grow("depthwise", max_depth=8, min_data_in_leaf=150)
    assert tree.count[tree.feature < 0].min() >= 150
    *_, tree, _ = _grow("depthwise", max_depth=8, min_child_weight=300.0)
    assert tree.cover[tree.feature < 0].min() >= 300


@pytest.mark.parametrize("objective", ["reg:squarederror", "binary:logistic"])
def test_training_loss_is_non_increasing(objective):
    X, y = (make_regression if objective.startswith("reg") else make_classification)(2000, 5)
    metric = "rmse" if objective.startswith("reg") else "logloss"
    d = bw.Dataset(X, y)
    log = {}
    bw.train({"objective": objective, "eta": 0.3, "eval_metric": metric}, d, 30,
             evals=[(d, "train")], verbose_eval=False, evals_result=log)
    curve = np.array(log["train"][metric])
    assert np.all(np.diff(curve) <= 1e-12)


def test_colsample_bynode_restricts_each_node():
    X, y = make_regression(2000, 8)
    b = bw.train({"colsample_bytree": 0.25, "max_depth": 3}, bw.Dataset(X, y), 5, verbose_eval=False)
    for t in b.trees:  # 2 of 8 features per tree
        assert len(set(t.feature[t.feature >= 0])) <= 2


def test_tree_methods_own_what_differs_between_hist_approx_and_exact():
    """boost_round asks a tree-method object; each sets raw thresholds its own way, and
    adding a tree to out-of-bag margins agrees with predicting it from raw values."""
    from boostwood.tree.methods import (ApproxMethod, ExactMethod, HistMethod, add_tree_raw,
                                        make_tree_method)
    X, y = make_regression(2000, 4, seed=7)
    d = bw.Dataset(X, y).construct()
    kinds = {"hist": HistMethod, "approx": ApproxMethod, "exact": ExactMethod}
    gh = np.column_stack([-(y - y.mean()), np.ones_like(y)]).astype(np.float32)
    for name, cls in kinds.items():
        method = make_tree_method(name, d, GrowerParams(max_depth=3), sketch_eps=0.1)
        assert type(method) is cls
        gq = method.stats.quantize(gh)
        tree, _ = method.grow(gq, None, np.arange(4, dtype=np.int64), np.random.default_rng(0))
        a, b = np.zeros((2000, 1)), np.zeros((2000, 1))
        method.add_to_margins(tree, a, 0, d)
        add_tree_raw(d, b, tree, 0)
        np.testing.assert_array_equal(a, b)
    assert type(make_tree_method("approx", d, GrowerParams(), approx_proposal="local")) \
        is ExactMethod
    with pytest.raises(ValueError, match="tree_method"):
        make_tree_method("gpu_hist", d, GrowerParams())


def _growers():
    """Every TreeGrower object the collector tracks (splitters' proxies of dead growers
    are skipped: they raise on any use)."""
    import gc
    import weakref
    return [o for o in gc.get_objects()
            if not isinstance(o, weakref.ProxyTypes) and isinstance(o, TreeGrower)]


@pytest.mark.parametrize("method, extra", [("hist", {}), ("exact", {}),
                                           ("hist", {"objective": "multi:softprob",
                                                     "num_class": 3, "nthread": 2})])
def test_training_leaves_no_grower_for_the_cyclic_collector(method, extra, monkeypatch):
    """A grower owns the run's big buffers (histogram pool, feature-major copy, index
    buffers): they must go when training returns, not wait for the cyclic garbage
    collector (a splitter referring back to its grower kept a 42 MiB pool alive)."""
    import gc
    from boostwood.boosting._side_by_side import ClassTreeWorkers
    made = []
    init = ClassTreeWorkers.__init__
    monkeypatch.setattr(ClassTreeWorkers, "__init__",
                        lambda self, *a: made.append(1) or init(self, *a))
    r = np.random.default_rng(0)
    X = r.normal(size=(2000, 4))
    y = (X[:, 0] > 0).astype(float) + (X[:, 1] > 0.5)
    gc.collect()
    gc.disable()
    try:
        before = {id(o) for o in _growers()}  # other tests'
        params = dict(objective="binary:logistic", tree_method=method, max_depth=3)
        if not extra:  # multiclass: the side-by-side workers' growers too
            y = np.minimum(y, 1)
        bw.train({**params, **extra}, bw.Dataset(X, y), 2, verbose_eval=False)
        left = [o for o in _growers() if id(o) not in before]
    finally:
        gc.enable()
    assert left == []
    assert len(made) == (1 if extra else 0)  # multiclass: grown side by side
