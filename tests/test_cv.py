"""``boostwood.cv``: folds, curves, early stopping, and the same numbers as training by hand."""
import numpy as np
import pytest

import boostwood as bw
from boostwood.boosting.cv import fold_ids

from conftest import make_classification


def test_cv_equals_training_each_fold_by_hand():
    X, y = make_classification(900, 5, seed=2)
    params = {"objective": "binary:logistic", "max_depth": 3, "eta": 0.3}
    res, logs = bw.cv(params, bw.Dataset(X, y), 6, nfold=3, seed=4, return_folds=True)
    folds = fold_ids(len(y), 3, 4)
    finals = []
    for f in range(3):
        tr, te = folds != f, folds == f
        log = {}
        dtr = bw.Dataset(X[tr], y[tr])
        bw.train(params, dtr, 6, evals=[(dtr, "train"), (bw.Dataset(X[te], y[te]), "test")],
                 evals_result=log, verbose_eval=False)
        assert log == logs[f]
        finals.append(log["test"]["logloss"])
    np.testing.assert_allclose(res["test-logloss-mean"], np.mean(finals, axis=0))
    np.testing.assert_allclose(res["test-logloss-std"], np.std(finals, axis=0))
    assert set(res) == {"train-logloss-mean", "train-logloss-std", "test-logloss-mean",
                        "test-logloss-std"}
    assert all(v.shape == (6,) for v in res.values())


def test_stratified_folds_keep_class_proportions():
    y = np.r_[np.zeros(90), np.ones(30)]
    folds = fold_ids(len(y), 3, seed=1, labels=y)
    for f in range(3):
        assert (y[folds == f] == 1).sum() == 10 and (folds == f).sum() == 40
    X = np.random.default_rng(0).normal(size=(120, 3))
    res = bw.cv({"objective": "binary:logistic"}, bw.Dataset(X, y), 3, nfold=3,
                stratified=True)
    assert res["test-logloss-mean"].shape == (3,)


def test_cv_early_stopping_cuts_at_the_best_mean_round():
    X, y = make_classification(600, 4, seed=3)
    y = np.where(np.random.default_rng(1).random(y.size) < 0.35, 1 - y, y)  # noisy: overfits
    params = {"objective": "binary:logistic", "max_depth": 6, "eta": 1.0}
    full = bw.cv(params, bw.Dataset(X, y), 40, nfold=3)
    cut = bw.cv(params, bw.Dataset(X, y), 40, nfold=3, early_stopping_rounds=5)
    best = int(np.argmin(full["test-logloss-mean"]))
    assert len(cut["test-logloss-mean"]) == best + 1 < 40
    np.testing.assert_array_equal(cut["test-logloss-mean"], full["test-logloss-mean"][:best + 1])


def test_cv_rejects_bad_arguments():
    X, y = make_classification(50, 3)
    d = bw.Dataset(X, y)
    with pytest.raises(ValueError, match="nfold"):
        bw.cv({}, d, 2, nfold=1)
    with pytest.raises(ValueError, match="folds"):
        bw.cv({}, d, 2, folds=np.zeros(3, dtype=int))
    with pytest.raises(ValueError, match="labels"):
        bw.cv({}, bw.Dataset(X), 2)
    with pytest.raises(TypeError, match="Dataset"):
        bw.cv({}, X, 2)
