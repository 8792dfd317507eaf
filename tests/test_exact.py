"""tree_method="exact": the exact greedy algorithm, checked three ways.

1. It is the histogram algorithm with every distinct value its own bin: on data
   with few distinct values, exact and hist grow identical trees.
2. It grows the same trees as XGBoost's ``tree_method="exact"`` with the same
   parameters (features, thresholds, leaf values), and the one difference by
   design is named and checked: where a node saw no missing value, XGBoost
   sends NaN left, boostwood to the child with the larger hessian sum.
3. Midpoint thresholds, missing values learned per split, bad parameters.
"""
import json

import numpy as np
import pytest

import boostwood as bw

from conftest import shared_file

xgb = pytest.importorskip("xgboost")

PARAMS = dict(objective="binary:logistic", eta=0.3, max_depth=4, reg_lambda=1.0, gamma=0.0,
              min_child_weight=1.0, base_score=0.5)


def _small_integer_data(seed=1, n=4000, missing=0.1):
    r = np.random.default_rng(seed)
    X = r.integers(0, 30, size=(n, 5)).astype(float)
    X[r.random(X.shape) < missing] = np.nan
    y = (np.nan_to_num(X[:, 0]) / 30 + np.nan_to_num(X[:, 1], nan=15) / 60
         + r.normal(size=n) * 0.3 > 0.6).astype(float)
    return X, y


@pytest.mark.parametrize("policy", ["depthwise", "lossguide"])
def test_exact_is_hist_with_one_bin_per_value(policy):
    X, y = _small_integer_data()
    kw = dict(max_depth=5) if policy == "depthwise" else dict(max_depth=0, max_leaves=20)
    models = [bw.train(dict(objective="binary:logistic", tree_method=tm, grow_policy=policy,
                            min_data_in_leaf=3, colsample_bynode=0.8, seed=3, **kw),
                       bw.Dataset(X, y), 10, verbose_eval=False) for tm in ("hist", "exact")]
    hist, exact = models
    for a, b in zip(hist.trees, exact.trees):
        assert np.array_equal(a.feature, b.feature)
        assert np.array_equal(a.default_left, b.default_left)
        np.testing.assert_array_equal(a.value, b.value)
    np.testing.assert_array_equal(hist.predict(X), exact.predict(X))


def _xgb_tree_nodes(booster):
    """Each XGBoost tree as {nodeid: node dict}."""
    out = []
    for dump in booster.get_dump(dump_format="json"):
        nodes, stack = {}, [json.loads(dump)]
        while stack:
            n = stack.pop()
            nodes[n["nodeid"]] = n
            stack.extend(n.get("children", []))
        out.append(nodes)
    return out


def _compare_trees(ours, theirs, X):
    """Walk both trees from the root together; return the number of splits compared."""
    n_splits = 0
    stack = [(0, 0)]
    while stack:
        a, b = stack.pop()
        nb = theirs[b]
        if ours.feature[a] < 0:
            assert "leaf" in nb, "boostwood made a leaf where XGBoost split"
            assert ours.value[a] == pytest.approx(nb["leaf"], rel=1e-6, abs=1e-7)
            continue
        assert "leaf" not in nb, "boostwood split where XGBoost made a leaf"
        f = ours.feature[a]
        assert nb["split"] == f"f{f}"
        assert ours.threshold[a] == pytest.approx(nb["split_condition"], rel=1e-6, abs=1e-6)
        # the difference by design: a feature without NaN in the node sends NaN left in
        # XGBoost, to the heavier child in boostwood
        assert nb["missing"] == nb["yes"]
        heavier_left = ours.cover[ours.left[a]] >= ours.cover[ours.right[a]]
        assert bool(ours.default_left[a]) == heavier_left
        n_splits += 1
        stack += [(ours.left[a], nb["yes"]), (ours.right[a], nb["no"])]
    return n_splits


def _parity(X, y, rounds=10, **extra):
    X = X.astype(np.float32).astype(np.float64)  # XGBoost works in float32
    ours = bw.train(dict(PARAMS, tree_method="exact", **extra), bw.Dataset(X, y), rounds,
                    verbose_eval=False)
    theirs = xgb.train(dict(PARAMS, tree_method="exact", nthread=1, **extra),
                       xgb.DMatrix(X, y), rounds)
    splits = sum(_compare_trees(a, b, X) for a, b in zip(ours.trees, _xgb_tree_nodes(theirs)))
    assert splits >= rounds * 3
    np.testing.assert_allclose(ours.predict(X), theirs.predict(xgb.DMatrix(X)), rtol=1e-5,
                               atol=1e-6)


def test_same_trees_as_xgboost_exact_on_agaricus():
    from boostwood.datasets import load_agaricus
    X, y = load_agaricus()[:2]  # the bundled copy: the test runs without ../shared
    _parity(X, y)


def test_same_trees_as_xgboost_exact_on_lightgbm_binary_example():
    data = np.loadtxt(shared_file("lightgbm_examples", "binary_classification", "binary.train"))
    _parity(data[:, 1:], data[:, 0])


def test_same_trees_as_xgboost_exact_with_scale_pos_weight():
    """``scale_pos_weight`` (before: an unknown parameter) weighs positive rows in the
    gradients as XGBoost does: the same trees, and the same trees as weighting them."""
    r = np.random.default_rng(11)
    X = r.normal(size=(3000, 5))
    y = (X[:, 0] + 0.5 * X[:, 1] * X[:, 2] + r.normal(size=3000) > 1.0).astype(float)
    _parity(X, y, 6, scale_pos_weight=3.5)
    # reg:logistic's labels in [0, 1]: the rows of label exactly 1 are the positives
    frac = np.where(y == 1, 1.0, np.clip(0.3 + 0.2 * X[:, 3], 0.0, 0.9))
    _parity(X, frac, 6, scale_pos_weight=3.5, objective="reg:logistic")
    logs = ({}, {})
    exact = dict(PARAMS, tree_method="exact")  # (histogram bins would follow the weights)
    a = bw.train(dict(exact, scale_pos_weight=3.5), bw.Dataset(X, y), 6,
                 evals=[(bw.Dataset(X, y), "t")], evals_result=logs[0], verbose_eval=False)
    b = bw.train(exact, bw.Dataset(X, y, weight=np.where(y == 1, 3.5, 1.0)), 6,
                 evals=[(bw.Dataset(X, y), "t")], evals_result=logs[1], verbose_eval=False)
    np.testing.assert_array_equal(a.predict(X), b.predict(X))
    assert logs[0] == logs[1]  # the evaluation set keeps its own (unit) weights
    for params, obj in ((dict(objective="reg:squarederror"), None),
                        (dict(objective="multi:softprob", num_class=2), None),
                        (dict(objective="binary:logistic"), lambda p, d: (p - d.label, p * 0 + 1))):
        with pytest.raises(ValueError, match="scale_pos_weight applies to the built-in binary "
                                             "objectives and reg:logistic only"):
            bw.train(dict(params, scale_pos_weight=2.0), bw.Dataset(X, y), 1, obj=obj)
    with pytest.raises(ValueError, match="scale_pos_weight"):
        bw.train(dict(PARAMS, scale_pos_weight=0.0), bw.Dataset(X, y), 1)


def test_thresholds_are_midpoints_of_the_nodes_values_and_nan_direction_is_learned():
    r = np.random.default_rng(0)
    x = r.choice([1.0, 2.0, 4.0, 8.0], size=2000)
    y = (x >= 4).astype(float)
    x[:300] = np.nan
    y[:300] = 1.0  # missing rows behave like large values: NaN must go right
    b = bw.train(dict(objective="binary:logistic", tree_method="exact", max_depth=1),
                 bw.Dataset(x[:, None], y), 1, verbose_eval=False)
    t = b.trees[0]
    assert t.threshold[0] == 3.0 and t.default_left[0] == 0
    assert b.predict(np.array([[np.nan], [2.0], [4.0]]), output_margin=True).tolist()[0] > 0


def test_exact_with_row_subsampling_and_eval_set_matches_its_own_predictions():
    X, y = _small_integer_data(seed=5)
    ev = {}
    b = bw.train(dict(objective="binary:logistic", tree_method="exact", subsample=0.7, seed=1),
                 bw.Dataset(X, y), 5, evals=[(bw.Dataset(X, y), "again")], evals_result=ev,
                 verbose_eval=False)
    from boostwood.boosting.metrics import get_metric
    assert ev["again"]["logloss"][-1] == pytest.approx(get_metric("logloss")(y, b.predict(X),
                                                                             np.ones(len(y))))


def test_unknown_tree_method_is_a_clear_error():
    X, y = _small_integer_data(n=100)
    with pytest.raises(ValueError, match="tree_method"):
        bw.train(dict(tree_method="exactt"), bw.Dataset(X, y), 1)


# -- tree_method="approx" ----------------------------------------------------------------

def _auc_pair(Xtr, ytr, Xte, yte, rounds=30):
    from boostwood.boosting.metrics import roc_auc
    out = {}
    for name, extra in [("exact", dict(tree_method="exact")),
                        ("global", dict(tree_method="approx", approx_proposal="global")),
                        ("local", dict(tree_method="approx", approx_proposal="local"))]:
        b = bw.train(dict(objective="binary:logistic", eta=0.3, max_depth=6, **extra),
                     bw.Dataset(Xtr, ytr), rounds, verbose_eval=False)
        out[name] = roc_auc(yte, b.predict(Xte))
    return out


def test_approx_auc_close_to_exact_on_agaricus():
    from boostwood.datasets import load_agaricus
    Xtr, ytr, Xte, yte, _ = load_agaricus()
    auc = _auc_pair(Xtr, ytr, Xte, yte)
    assert abs(auc["global"] - auc["exact"]) <= 0.003 and abs(auc["local"] - auc["exact"]) <= 0.003


def test_approx_auc_close_to_exact_on_lightgbm_binary_example():
    """500 test rows are too few to compare AUCs within 0.003 (a split's AUC moves by
    1% with the seed), so, as in test_parity, the out-of-fold predictions of a 5-fold
    cross-validation over all 7,500 rows are pooled."""
    from boostwood.boosting.metrics import roc_auc
    load = lambda s: np.loadtxt(shared_file("lightgbm_examples", "binary_classification",  # noqa
                                            f"binary.{s}"))
    data = np.vstack([load("train"), load("test")])
    X, y = data[:, 1:], data[:, 0]
    folds = np.arange(len(y)) % 5
    auc = {}
    for name, extra in [("exact", dict(tree_method="exact")),
                        ("global", dict(tree_method="approx", approx_proposal="global")),
                        ("local", dict(tree_method="approx", approx_proposal="local"))]:
        oof = np.empty(len(y))
        for f in range(5):
            tr, te = folds != f, folds == f
            b = bw.train(dict(objective="binary:logistic", eta=0.1, max_depth=6, **extra),
                         bw.Dataset(X[tr], y[tr]), 100, verbose_eval=False)
            oof[te] = b.predict(X[te])
        auc[name] = roc_auc(y, oof)
    assert abs(auc["global"] - auc["exact"]) <= 0.003, auc
    assert abs(auc["local"] - auc["exact"]) <= 0.003, auc


def test_local_proposals_finer_than_the_data_are_exact_greedy():
    X, y = _small_integer_data(seed=2)
    kw = dict(objective="binary:logistic", max_depth=4, min_data_in_leaf=2)
    exact = bw.train(dict(kw, tree_method="exact"), bw.Dataset(X, y), 5, verbose_eval=False)
    local = bw.train(dict(kw, tree_method="approx", approx_proposal="local", sketch_eps=1e-9),
                     bw.Dataset(X, y), 5, verbose_eval=False)
    np.testing.assert_array_equal(exact.predict(X), local.predict(X))


def test_approx_global_proposes_about_one_over_eps_weighted_percentiles():
    from boostwood.data.columns import SortedColumns
    from boostwood.data.validation import as_feature_matrix
    from boostwood.tree.approx import GlobalProposal
    r = np.random.default_rng(0)
    x = r.normal(size=20000)
    h = np.where(x > 1.0, 10.0, 0.1)  # the hessian mass sits in the right tail
    prop = GlobalProposal(SortedColumns(as_feature_matrix(x[:, None], "data")), 0.1)
    prop.propose(np.rint(h * 2.0 ** 20).astype(np.int64), 2.0 ** -20)  # fixed-point hessians
    cuts = prop.cut_values[0]
    assert 9 <= cuts.size <= 12
    # weighted percentiles: most candidates land where the hessian is
    assert (cuts > 1.0).sum() >= 7
    # bins follow the cuts: rows at or below cut b are in bins <= b
    assert np.all(prop.X_binned[x <= cuts[0], 0] == 0) and np.all(prop.X_binned[x > cuts[0], 0] > 0)


@pytest.mark.parametrize("extra", [dict(tree_method="exact", subsample=0.7),
                                   dict(tree_method="approx"),
                                   dict(tree_method="approx", subsample=0.6, sketch_eps=0.1),
                                   dict(tree_method="approx", approx_proposal="local")])
def test_raw_thresholds_agree_with_the_training_partition(extra):
    """The margins kept during training (from the partition) equal predictions
    from the saved raw thresholds: the threshold of every split separates
    exactly the rows the split sent left and right."""
    X, y = _small_integer_data(seed=5)
    X[:, 2] = np.random.default_rng(0).normal(size=len(X))  # a continuous feature too
    d = bw.Dataset(X, y)
    ev = {}
    b = bw.train(dict(objective="binary:logistic", seed=1, **extra), d, 8, evals=[(d, "train")],
                 evals_result=ev, verbose_eval=False)
    from boostwood.boosting.metrics import get_metric
    assert ev["train"]["logloss"][-1] == pytest.approx(
        get_metric("logloss")(y, b.predict(X), np.ones(len(y))), rel=1e-12)


@pytest.mark.parametrize("extra", [dict(tree_method="exact"), dict(tree_method="approx"),
                                   dict(tree_method="approx", approx_proposal="local")])
def test_infinities_sparse_input_and_round_trip(tmp_path, extra):
    import scipy.sparse as sp
    r = np.random.default_rng(3)
    X = r.normal(size=(600, 3))
    X[:40, 0], X[40:80, 0] = np.inf, -np.inf
    y = ((X[:, 0] > 0.5) | (X[:, 1] > 1)).astype(float)
    d = bw.Dataset(X, y)
    ev = {}
    b = bw.train(dict(objective="binary:logistic", max_depth=3, **extra), d, 5,
                 evals=[(d, "train")], evals_result=ev, verbose_eval=False)
    from boostwood.boosting.metrics import get_metric
    p = b.predict(X)
    assert np.all(np.isfinite(p)) and p[:40].mean() > 0.5 and p[40:80].mean() < 0.5
    assert ev["train"]["logloss"][-1] == pytest.approx(
        get_metric("logloss")(y, p, np.ones(len(y))), rel=1e-12)
    b.save_model(tmp_path / "m.json")
    np.testing.assert_array_equal(bw.Booster(model_file=tmp_path / "m.json").predict(X), p)
    Xs = sp.csr_matrix(np.where(r.random(X.shape) < 0.5, 0.0, np.nan_to_num(X)))
    dense = bw.train(dict(max_depth=3, **extra), bw.Dataset(Xs.toarray(), y), 3,
                     verbose_eval=False)
    sparse = bw.train(dict(max_depth=3, **extra), bw.Dataset(Xs, y), 3, verbose_eval=False)
    np.testing.assert_array_equal(dense.predict(Xs.toarray()), sparse.predict(Xs))


@pytest.mark.parametrize("objective", ["binary:logitraw", "reg:logistic", "reg:squaredlogerror"])
def test_same_trees_as_xgboost_exact_for_logitraw_soft_logistic_and_squared_log(objective):
    """``binary:logitraw`` (margins out), ``reg:logistic`` (labels anywhere in [0, 1]) and
    ``reg:squaredlogerror`` (RMSLE's loss) were unknown objectives; each grows XGBoost's
    trees and predicts what it predicts."""
    r = np.random.default_rng(12)
    X = r.normal(size=(3000, 5))
    z = X[:, 0] + 0.5 * X[:, 1] * X[:, 2] + r.normal(size=3000)
    p = 1 / (1 + np.exp(-z))
    y = {"binary:logitraw": (p > 0.5).astype(float), "reg:logistic": p,
         "reg:squaredlogerror": np.expm1(np.abs(z))}[objective]
    _parity(X, y, 6, objective=objective)
