"""SHAP values and SHAP interaction values (exact path-dependent TreeSHAP)."""
import json

import numpy as np
import pytest

import boostwood as bw
from boostwood._kernels.reference import shap_interactions_naive, shap_naive
from boostwood.tree import Tree

from conftest import make_classification, make_regression


def _tree_arrays(t):
    return (t.feature, t.threshold, t.left, t.right, t.default_left, t.value, t.cover)


def _with_missing(X, rate, seed):
    X = X.copy()
    X[np.random.default_rng(seed).random(X.shape) < rate] = np.nan
    return X


@pytest.mark.parametrize("params", [
    {"objective": "reg:squarederror", "max_depth": 6},
    {"objective": "binary:logistic", "max_depth": 4, "subsample": 0.7},
    {"objective": "multi:softprob", "num_class": 3, "max_depth": 3},
    {"objective": "reg:squarederror", "grow_policy": "lossguide", "max_depth": 0,
     "max_leaves": 40},
])
def test_local_accuracy(params):
    """Contributions plus bias equal the margin, for every row and output."""
    X, y = make_classification(n=1500, f=8, seed=1)
    if params["objective"].startswith("multi"):
        y = (np.nan_to_num(X[:, 0]) > 0).astype(float) + (np.nan_to_num(X[:, 1]) > 1)
    X = _with_missing(X, 0.1, 2)
    b = bw.train(params, bw.Dataset(X, label=y), 20)
    phi = b.predict(X, pred_contribs=True)
    margin = b.predict(X, output_margin=True)
    assert np.allclose(phi.sum(axis=-1), margin, atol=1e-6)
    inter = b.predict(X[:50], pred_interactions=True)
    assert np.allclose(inter.sum(axis=(-1, -2)), margin[:50], atol=1e-6)
    # the rows of the interaction matrix add up to the SHAP values
    assert np.allclose(inter.sum(axis=-1)[..., :-1], phi[:50][..., :-1], atol=1e-6)


def test_equals_brute_force_shapley_values():
    """Against the exponential-time definition, tree by tree (NaN rows included)."""
    X, y = make_regression(n=400, f=5, seed=3)
    X = _with_missing(X, 0.15, 4)
    b = bw.train({"max_depth": 4, "eta": 0.5}, bw.Dataset(X, label=y), 3)
    for r in range(3):
        one = b[r:r + 1]
        phi = one.predict(X[:15], pred_contribs=True)
        inter = one.predict(X[:4], pred_interactions=True)
        tree = _tree_arrays(one.trees[0])
        for i in range(15):
            want = shap_naive(X[i], tree, 5)
            want[-1] += b.base_score[0]
            assert np.allclose(phi[i], want, atol=1e-10)
        for i in range(4):
            want = shap_interactions_naive(X[i], tree, 5)
            want[-1, -1] += b.base_score[0]
            assert np.allclose(inter[i], want, atol=1e-10)


def test_multiclass_brute_force_per_class():
    rng = np.random.default_rng(5)
    X = rng.normal(size=(600, 4))
    y = np.digitize(X[:, 0] + X[:, 1], [-0.5, 0.5]).astype(float)
    b = bw.train({"objective": "multi:softprob", "num_class": 3, "max_depth": 3},
                 bw.Dataset(X, label=y), 1)
    phi = b.predict(X[:10], pred_contribs=True)
    assert phi.shape == (10, 3, 5)
    for k in range(3):
        for i in range(10):
            want = shap_naive(X[i], _tree_arrays(b.trees[k]), 4)
            want[-1] += b.base_score[k]
            assert np.allclose(phi[i, k], want, atol=1e-10)


# -- XGBoost: its trees loaded into a boostwood Booster, SHAP values compared -------------------

xgb = pytest.importorskip("xgboost")


def _from_xgboost(model, n_features, objective):
    """A boostwood Booster holding exactly the trees of an XGBoost model."""
    doc = json.loads(model.save_raw("json"))
    learner = doc["learner"]
    base = float(learner["learner_model_param"]["base_score"].strip("[]"))
    trees = []
    for t in learner["gradient_booster"]["model"]["trees"]:
        left = np.array(t["left_children"])
        leaf = left < 0
        cond = np.array(t["split_conditions"], dtype=np.float32)
        # XGBoost goes left when x < c (float32); boostwood when x <= threshold
        thr = np.where(leaf, 0.0, np.nextafter(cond, np.float32(-np.inf)).astype(np.float64))
        trees.append(Tree(np.where(leaf, -1, t["split_indices"]), thr, left,
                          t["right_children"], t["default_left"],
                          np.where(leaf, cond.astype(np.float64), 0.0),
                          np.zeros(len(left)), t["sum_hessian"], np.zeros(len(left))))
    b = bw.Booster({"objective": objective})
    margin = np.log(base / (1 - base)) if objective == "binary:logistic" else base
    b._start(np.array([margin]), [f"f{j}" for j in range(n_features)])
    b.trees = trees
    return b


def test_agrees_with_xgboost_on_identical_trees():
    X, y = make_classification(n=3000, f=7, seed=6)
    X = _with_missing(X, 0.1, 7).astype(np.float32)
    ref = xgb.train({"objective": "binary:logistic", "max_depth": 5, "eta": 0.3, "nthread": 2},
                    xgb.DMatrix(X, label=y), 15)
    ours = _from_xgboost(ref, 7, "binary:logistic")
    dm = xgb.DMatrix(X[:300])
    assert np.allclose(ours.predict(X[:300], output_margin=True),
                       ref.predict(dm, output_margin=True), atol=1e-5)
    assert np.allclose(ours.predict(X[:300], pred_contribs=True),
                       ref.predict(dm, pred_contribs=True), atol=1e-5)
    assert np.allclose(ours.predict(X[:100], pred_interactions=True),
                       ref.predict(xgb.DMatrix(X[:100]), pred_interactions=True), atol=1e-5)


def test_contribs_survive_save_and_load(tmp_path):
    X, y = make_regression(n=500, seed=8)
    b = bw.train({"max_depth": 5}, bw.Dataset(X, label=y), 10)
    b.save_model(tmp_path / "m.json")
    again = bw.Booster(model_file=tmp_path / "m.json")
    assert np.array_equal(again.predict(X, pred_contribs=True), b.predict(X, pred_contribs=True))


def test_cached_kernels_load_in_a_fresh_process():
    """The SHAP kernels are cached; a new process loading them must get the same values
    (a self-recursive cached numba function segfaults on load, hence the flat walk)."""
    import subprocess
    import sys
    code = ("import numpy as np, boostwood as bw\n"
            "r = np.random.default_rng(0); X = r.normal(size=(500, 4)); y = X[:, 0] + X[:, 1]\n"
            "b = bw.train({'max_depth': 4}, bw.Dataset(X, y), 3, verbose_eval=False)\n"
            "print(repr(float(b.predict(X, pred_contribs=True)[:, 0].sum())))\n")
    ns = {}
    exec(code.replace("print(", "out = ("), ns)  # compiles (and caches) here
    r = subprocess.run([sys.executable, "-c", code], capture_output=True, text=True, timeout=600)
    assert r.returncode == 0, r.stderr[-2000:]
    assert float(r.stdout.strip()) == float(ns["out"])
