"""``boostwood.cv``: folds, curves, early stopping, and the same numbers as training by hand."""
import numpy as np
import pytest

import boostwood as bw
from boostwood.boosting.callback import TrainingCallback
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


@pytest.fixture
def fold_workers(monkeypatch):
    """The fold runner of every cv call (None: folds in turn)."""
    import sys
    cv_module = sys.modules["boostwood.boosting.cv"]  # the package exports the function
    made = []
    make = cv_module._fold_workers
    monkeypatch.setattr(cv_module, "_fold_workers", lambda *a: made.append(make(*a)) or made[-1])
    return made


@pytest.mark.parametrize("params", [
    {"objective": "binary:logistic", "max_depth": 3, "n_jobs": 2},
    {"objective": "multi:softprob", "num_class": 3, "grow_policy": "lossguide",
     "max_leaves": 9, "nthread": 2, "subsample": 0.8},
    {"objective": "reg:squarederror", "nthread": 3, "use_quantized_grad": True}])
def test_cv_folds_side_by_side_give_the_same_numbers(params, fold_workers, monkeypatch):
    """Folds trained side by side, each on its share of the threads: every fold's log
    equal to the last bit to the folds trained in turn, and numba's thread count given
    back as the caller had it (one here) either way (before, both left the run's)."""
    import numba
    from boostwood.boosting._side_by_side import SideBySide
    X, y = make_classification(1500, 5, seed=3)
    if params["objective"] == "multi:softprob":
        y = np.digitize(X[:, 0] + X[:, 1], [-0.5, 0.5]).astype(float)
    numba.set_num_threads(1)
    together = bw.cv(params, bw.Dataset(X, y), 6, nfold=4, return_folds=True)
    assert fold_workers[-1] is not None
    left = numba.get_num_threads()
    monkeypatch.setattr(SideBySide, "enabled", False)
    numba.set_num_threads(1)
    in_turn = bw.cv(params, bw.Dataset(X, y), 6, nfold=4, return_folds=True)
    assert fold_workers[-1] is None
    assert left == numba.get_num_threads() == 1
    assert together[1] == in_turn[1]
    for key in in_turn[0]:
        assert np.array_equal(together[0][key], in_turn[0][key])


@pytest.mark.parametrize("extra", [
    {"params": {"nthread": 1}},
    {"obj": lambda preds, d: (preds - d.get_label(), np.ones_like(preds))},
    {"custom_metric": lambda preds, d: ("mae", float(np.mean(np.abs(preds - d.get_label()))))},
    {"callbacks": [TrainingCallback()]}])
def test_cv_folds_in_turn_around_user_code_and_one_thread(extra, fold_workers):
    """Code of the user's called during training need not be thread-safe."""
    X, y = make_classification(600, 4, seed=1)
    extra = dict(extra)
    params = {"objective": "reg:squarederror", "nthread": 2, **extra.pop("params", {})}
    bw.cv(params, bw.Dataset(X, y), 2, nfold=3, **extra)
    assert fold_workers == [None]


def test_cv_needs_two_folds():
    X, y = make_classification(300, 3, seed=1)
    with pytest.raises(ValueError, match="at least two fold ids"):
        bw.cv({"nthread": 2}, bw.Dataset(X, y), 2, folds=np.zeros(300, dtype=int))


def test_a_failing_fold_side_by_side_raises_what_in_turn_raises(fold_workers, monkeypatch):
    """Folds of 100, 200, 300 and 400 test rows; those of 200 and 400 fail. In turn the
    fold of 200 fails first, and side by side its error is the one raised, whichever
    worker met which error first; every fold side by side can stop early."""
    import sys
    cv_module = sys.modules["boostwood.boosting.cv"]
    train = cv_module.train
    seen = []

    def failing(params, dtrain, rounds, evals, **kw):
        n_test = evals[1][0].num_row()
        seen.append(kw["callbacks"])
        if n_test in (200, 400):
            raise ValueError(f"fold of {n_test} rows")
        return train(params, dtrain, rounds, evals=evals, **kw)

    monkeypatch.setattr(cv_module, "train", failing)
    X, y = make_classification(1000, 3, seed=1)
    folds = np.repeat([0, 1, 2, 3], [100, 200, 300, 400])
    with pytest.raises(ValueError, match="fold of 200 rows"):
        bw.cv({"nthread": 2}, bw.Dataset(X, y), 3, folds=folds)
    assert fold_workers[-1] is not None
    assert all(type(c[0]).__name__ == "_StopWhenSet" for c in seen)
    with pytest.raises(ValueError, match="fold of 200 rows"):
        bw.cv({"nthread": 1}, bw.Dataset(X, y), 3, folds=folds)


def test_folds_as_index_pairs_and_splitters_as_xgboost_and_lightgbm_take_them():
    """``folds`` also takes (train_rows, test_rows) pairs, an iterator of them, or a
    scikit-learn splitter (XGBoost's and LightGBM's forms; before, all of them were
    refused as 'one integer fold id per row'): the same logs as the fold ids they make."""
    X, y = make_classification(300, 4, seed=3)
    d = bw.Dataset(X, y)
    params = {"objective": "binary:logistic", "max_depth": 3}
    ids = fold_ids(len(y), 3, seed=5)
    pairs = [(np.nonzero(ids != f)[0], np.nonzero(ids == f)[0]) for f in range(3)]
    want = bw.cv(params, d, 4, folds=ids, return_folds=True)[1]
    assert bw.cv(params, d, 4, folds=pairs, return_folds=True)[1] == want
    assert bw.cv(params, d, 4, folds=iter(pairs), return_folds=True)[1] == want
    assert bw.cv(params, d, 4, folds=[tuple(map(list, p)) for p in pairs],
                 return_folds=True)[1] == want
    pd = pytest.importorskip("pandas")  # fold ids as a Series (taken before d8b9e3f too)
    assert bw.cv(params, d, 4, folds=pd.Series(ids), return_folds=True)[1] == want
    assert bw.cv(params, d, 4, folds=ids.tolist(), return_folds=True)[1] == want
    model_selection = pytest.importorskip("sklearn.model_selection")
    for splitter in (model_selection.KFold(4, shuffle=True, random_state=0),
                     model_selection.StratifiedKFold(4, shuffle=True, random_state=0)):
        got = bw.cv(params, d, 3, folds=splitter, return_folds=True)[1]
        split = list(splitter.split(X, y))
        assert len(got) == 4 and got == bw.cv(params, d, 3, folds=split, return_folds=True)[1]
        log = {}
        tr, te = split[2]
        dtr = bw.Dataset(X[tr], y[tr])
        bw.train(params, dtr, 3, evals=[(dtr, "train"), (bw.Dataset(X[te], y[te]), "test")],
                 evals_result=log, verbose_eval=False)
        assert got[2] == log


def test_bad_fold_pairs_are_refused():
    X, y = make_classification(60, 3)
    d = bw.Dataset(X, y)
    a, b = np.arange(40), np.arange(40, 60)
    cases = [([(a, np.arange(30, 60))], ValueError, "10 rows are in both"),
             ([(a, np.arange(40, 61))], ValueError, r"in \[0, 60\)"),
             ([(a * 1.0, b * 1.0)], ValueError, "integer row indices"),
             ([(a, b[:0])], ValueError, "non-empty"),
             ([(a, b, b)], ValueError, "pair"),
             ([], ValueError, "no \\(train_rows, test_rows\\) pair"),
             (5, TypeError, "fold ids"),
             (np.zeros(3, dtype=int), ValueError, "3 ids for 60 rows")]
    for folds, error, match in cases:
        with pytest.raises(error, match=match):
            bw.cv({}, d, 2, folds=folds)
