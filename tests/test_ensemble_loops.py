"""The forest and AdaBoost loops of ``boostwood.ensemble`` run without scikit-learn and
give the estimators' models."""
import subprocess
import sys

import numpy as np
import pytest

from boostwood.ensemble import adaboost, cart, forest

from conftest import make_classification


def test_loops_import_and_run_without_scikit_learn():
    code = """
import sys
class Block:
    def find_spec(self, name, path=None, target=None):
        if name == "sklearn" or name.startswith("sklearn."):
            raise ImportError("scikit-learn is blocked in this test")
sys.meta_path.insert(0, Block())
import numpy as np
from boostwood.data import as_feature_matrix
from boostwood.ensemble import adaboost, cart, forest
r = np.random.default_rng(0)
X = r.normal(size=(400, 4)); y = (X[:, 0] + X[:, 1] > 0).astype(np.int64)
fm = as_feature_matrix(X)
spec = cart.TreeSpec(criterion="gini", max_features=2)
cols = cart.search_columns(fm, "hist", 64, 0, np.ones(400))
f = forest.grow_forest(cols, spec, y.astype(np.int32), np.ones(400), np.ones(400), 2, 4,
                       np.arange(5), n_threads=2)
assert len(f.trees) == 5 and f.in_bag.shape == (5, 400) and abs(f.importances.sum() - 1) < 1e-12
def fit(w, seed):  # a weak learner of plain numpy: the better sign of x0 > 0
    pred = (X[:, 0] > 0).astype(np.int64)
    return "stump", pred if np.sum(w[pred != y]) <= 0.5 else 1 - pred
models, weights, errors = adaboost.samme(fit, y, np.full(400, 1 / 400), 2, 3, 1.0,
                                         np.random.default_rng(0))
assert len(models) == 3 and np.all(errors < 0.5)
print("ok")
"""
    r = subprocess.run([sys.executable, "-c", code], capture_output=True, text=True, timeout=600)
    assert r.returncode == 0, r.stderr[-3000:]
    assert r.stdout.strip().endswith("ok")


def test_samme_loop_with_a_plain_weak_learner():
    """SAMME over decision stumps written in numpy: the weights follow the SAMME formulas."""
    X, y = make_classification(300, 3, seed=1)
    y = y.astype(int)

    def fit(w, seed):
        best = None
        for j in range(X.shape[1]):
            for t in np.quantile(X[:, j], np.linspace(0.05, 0.95, 19)):
                for sign in (0, 1):
                    pred = ((X[:, j] > t) ^ sign).astype(int)
                    err = np.sum(w[pred != y])
                    if best is None or err < best[0]:
                        best = (err, j, t, sign, pred)
        return best[1:4], best[4]

    w = np.full(len(y), 1 / len(y))
    models, weights, errors = adaboost.samme(fit, y, w, 2, 5, 0.5,
                                             np.random.default_rng(0))
    assert len(models) == 5
    np.testing.assert_allclose(weights, 0.5 * np.log((1 - errors) / errors))
    assert errors[0] < 0.5 and np.all(errors < 0.5)


def test_weighted_median():
    preds = np.array([[1.0, 5.0, 3.0], [2.0, 2.0, 9.0]])
    np.testing.assert_array_equal(adaboost.weighted_median(preds, np.array([1.0, 1.0, 3.0])),
                                  [3.0, 9.0])
    np.testing.assert_array_equal(adaboost.weighted_median(preds, np.array([1.0, 1.0, 1.0])),
                                  [3.0, 2.0])


def test_forest_estimator_uses_the_loop():
    pytest.importorskip("sklearn")
    from boostwood.sklearn import RandomForestClassifier
    from boostwood.data import as_feature_matrix
    X, y = make_classification(500, 4, seed=5)
    est = RandomForestClassifier(n_estimators=4, random_state=3, n_jobs=2).fit(X, y)
    fm = as_feature_matrix(X)
    seeds = np.random.default_rng(3).integers(0, 2 ** 31 - 1, size=4)
    spec = est._tree_spec(500, 4, 500.0)
    cols = cart.search_columns(fm, "hist", est.max_bin, 3, np.ones(500))
    f = forest.grow_forest(cols, spec, y.astype(np.int32), np.ones(500), np.ones(500), 2, 4,
                           seeds, n_threads=2)
    for a, b in zip(f.trees, est.trees_):
        np.testing.assert_array_equal(a.feature, b.feature)
        np.testing.assert_array_equal(a.threshold, b.threshold)
