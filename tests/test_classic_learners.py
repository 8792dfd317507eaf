"""The classic learners of the notes against scikit-learn's, on the defects users met:
zero-gain splits (XOR), missingness in the random splitter, AdaBoost's learning rates,
where NaN goes at prediction, and errors before fit."""
import pickle

import numpy as np
import pytest

pytest.importorskip("sklearn")
from sklearn import ensemble as sk_ensemble  # noqa: E402
from sklearn import tree as sk_tree  # noqa: E402
from sklearn.datasets import load_diabetes, load_iris  # noqa: E402
from sklearn.exceptions import NotFittedError  # noqa: E402
from sklearn.model_selection import cross_val_score  # noqa: E402

import boostwood as bw  # noqa: E402

#: The four XOR points, each three times: no single split lowers the impurity.
XOR_X = np.array([[0, 0], [0, 1], [1, 0], [1, 1]] * 3, dtype=float)
XOR_Y = np.array([0, 1, 1, 0] * 3)


@pytest.mark.parametrize("ours, theirs", [
    (bw.DecisionTreeClassifier(), sk_tree.DecisionTreeClassifier(random_state=0)),
    (bw.DecisionTreeClassifier(splitter="hist"), sk_tree.DecisionTreeClassifier(random_state=0)),
    (bw.DecisionTreeClassifier(criterion="entropy"),
     sk_tree.DecisionTreeClassifier(criterion="entropy", random_state=0)),
    (bw.DecisionTreeClassifier(max_leaf_nodes=4), sk_tree.DecisionTreeClassifier(
        max_leaf_nodes=4, random_state=0)),
    (bw.DecisionTreeRegressor(), sk_tree.DecisionTreeRegressor(random_state=0)),
    (bw.RandomForestClassifier(bootstrap=False, max_features=None, random_state=0),
     sk_ensemble.RandomForestClassifier(bootstrap=False, max_features=None, random_state=0)),
], ids=["gini", "gini-hist", "entropy", "best-first", "regressor", "forest"])
def test_xor_is_learnt_as_scikit_learn_learns_it(ours, theirs):
    """A root split of zero gain was never made, so the trees stayed single leaves
    (accuracy 0.50, R^2 0.00, against scikit-learn's 1.00)."""
    y = XOR_Y if hasattr(theirs, "predict_proba") else XOR_Y.astype(float)
    assert theirs.fit(XOR_X, y).score(XOR_X, y) == 1.0
    assert ours.fit(XOR_X, y).score(XOR_X, y) == 1.0


def test_zero_gain_ties_go_to_the_first_feature_and_threshold():
    """Between splits of zero gain the first candidate wins, in feature order, then
    threshold order (the docstring's rule): XOR's root splits on feature 0."""
    tree = bw.DecisionTreeClassifier().fit(XOR_X, XOR_Y).tree_
    assert tree.feature[0] == 0 and tree.threshold[0] == 0.5
    assert tree.gain[0] == 0.0  # recorded as no gain: importances stay non-negative
    assert np.all(bw.DecisionTreeClassifier().fit(XOR_X, XOR_Y).feature_importances_ >= 0)


def test_a_pure_node_is_still_a_leaf(rng):
    """Zero-gain splits are made in impure nodes only: a node of one class, or a
    regression node of one target value, stays a leaf (scikit-learn's rule), so the tree
    has scikit-learn's number of nodes."""
    X = rng.normal(size=(60, 3))
    y = np.where(X[:, 0] > 0, 3.0, (X[:, 1] > 0) * 1.0)  # the right half is one value
    ours = bw.DecisionTreeRegressor().fit(X, y)
    theirs = sk_tree.DecisionTreeRegressor(random_state=0).fit(X, y)
    assert ours.tree_.n_nodes == theirs.tree_.node_count
    yc = (X[:, 0] > 0) * 2 + (X[:, 1] > 0)
    ours = bw.DecisionTreeClassifier().fit(X, yc)
    theirs = sk_tree.DecisionTreeClassifier(random_state=0).fit(X, yc)
    assert ours.tree_.n_nodes == theirs.tree_.node_count


def _missingness_data(rng, n=90):
    """Feature 0 is 1.0 where present, NaN for class 1: only its missingness separates
    the classes; feature 1 is noise."""
    y = np.arange(n) % 2
    X = np.column_stack([np.where(y == 1, np.nan, 1.0), rng.normal(size=n)])
    return X, y


def test_extra_trees_split_on_missingness(rng):
    """The random splitter skipped a feature whose present values are all equal, though
    its missing values separate the classes (3-fold accuracy 0.53 against 1.00)."""
    X, y = _missingness_data(rng)
    theirs = cross_val_score(sk_ensemble.ExtraTreesClassifier(random_state=0), X, y, cv=3)
    ours = cross_val_score(bw.ExtraTreesClassifier(random_state=0), X, y, cv=3)
    assert theirs.mean() == 1.0 and ours.mean() == 1.0


def test_a_random_regression_tree_separates_by_missingness(rng):
    """On the missingness feature alone the random regressor predicted a constant."""
    X, y = _missingness_data(rng)
    X = X[:, :1]
    ours = bw.DecisionTreeRegressor(splitter="random", random_state=0).fit(X, y * 1.0)
    theirs = sk_tree.ExtraTreeRegressor(random_state=0).fit(X, y * 1.0)
    assert theirs.score(X, y) == 1.0 and ours.score(X, y) == 1.0


def test_adaboost_with_large_learning_rates_fits_as_scikit_learn_does():
    """learning_rate=5 on iris overflowed the weights to NaN (an error from inside
    scikit-learn's input check). Now the same rounds and estimator weights as
    scikit-learn's (its stumps split on other features where gains tie, so the
    scores may differ)."""
    X, y = load_iris(return_X_y=True)
    ours = bw.AdaBoostClassifier(learning_rate=5, random_state=0).fit(X, y)
    theirs = sk_ensemble.AdaBoostClassifier(learning_rate=5, random_state=0).fit(X, y)
    assert len(ours.estimators_) == len(theirs.estimators_)
    np.testing.assert_allclose(ours.estimator_weights_,
                               theirs.estimator_weights_[:len(theirs.estimators_)], rtol=1e-9)
    assert ours.score(X, y) >= theirs.score(X, y) - 0.1
    X, y = load_diabetes(return_X_y=True)
    ours = bw.AdaBoostRegressor(learning_rate=50, random_state=0).fit(X, y)
    theirs = sk_ensemble.AdaBoostRegressor(learning_rate=50, random_state=0).fit(X, y)
    assert len(ours.estimators_) == len(theirs.estimators_)
    assert np.all(np.isfinite(ours.predict(X)))


def test_adaboost_stops_where_scikit_learn_stops():
    """A perfect first tree decides alone; a tree no better than chance ends the loop
    (the first one is an error)."""
    X = np.array([[0.0], [1.0], [2.0], [3.0]])
    y = np.array([0, 0, 1, 1])
    ours = bw.AdaBoostClassifier(n_estimators=10).fit(X, y)
    theirs = sk_ensemble.AdaBoostClassifier(n_estimators=10).fit(X, y)
    assert len(ours.estimators_) == len(theirs.estimators_) == 1


#: Eight points on one feature: a depth-1 regressor splits them four and four.
EIGHT_X = np.arange(8.0)[:, None]
EIGHT_Y = np.array([0.1, 0.3, 0.2, 0.2, 1.6, 1.4, 1.5, 1.4])


def test_nan_at_prediction_goes_to_the_larger_child_and_right_on_a_tie():
    """A feature without NaN in training: the trees sent NaN left when the children
    were the same size (0.200 against scikit-learn's 1.475)."""
    nan = np.array([[np.nan]])
    ours = bw.DecisionTreeRegressor(max_depth=1).fit(EIGHT_X, EIGHT_Y)
    theirs = sk_tree.DecisionTreeRegressor(max_depth=1).fit(EIGHT_X, EIGHT_Y)
    assert ours.predict(nan)[0] == pytest.approx(theirs.predict(nan)[0]) == pytest.approx(1.475)
    # unequal children: the one of more training rows (by rows, not weight)
    X, y = np.arange(7.0)[:, None], np.array([0, 0, 0, 0, 0, 1, 1]) * 1.0
    w = np.array([1, 1, 1, 1, 1, 10, 10.0])
    ours = bw.DecisionTreeRegressor(max_depth=1).fit(X, y, sample_weight=w)
    theirs = sk_tree.DecisionTreeRegressor(max_depth=1).fit(X, y, sample_weight=w)
    assert ours.predict(nan)[0] == theirs.predict(nan)[0] == 0.0
    forest = bw.RandomForestRegressor(5, max_depth=1, bootstrap=False, max_features=None)
    assert forest.fit(EIGHT_X, EIGHT_Y).predict(nan)[0] == pytest.approx(1.475)


def test_gbdt_trees_keep_their_missing_value_rule():
    """The GBDT estimators keep boostwood's documented rule (missing values of a node
    that saw none go to the child of larger hessian sum), unchanged."""
    gbdt = bw.GBDTRegressor(n_estimators=1, max_depth=1, learning_rate=1.0, reg_lambda=0.0,
                            min_child_weight=0).fit(EIGHT_X, EIGHT_Y)
    tree = gbdt.booster_.trees[0]
    cover = tree.cover
    assert tree.default_left[0] == (cover[tree.left[0]] >= cover[tree.right[0]])


@pytest.mark.parametrize("est", [bw.DecisionTreeClassifier(), bw.DecisionTreeRegressor(),
                                 bw.RandomForestClassifier(), bw.ExtraTreesRegressor(),
                                 bw.AdaBoostClassifier(), bw.AdaBoostRegressor(),
                                 bw.GBDTClassifier(), bw.GBDTRegressor()],
                         ids=lambda e: type(e).__name__)
def test_fitted_attributes_before_fit_raise_not_fitted_error(est):
    """scikit-learn's NotFittedError (an AttributeError and a ValueError), not a bare
    AttributeError; hasattr still answers False; a fitted estimator's unknown names stay
    AttributeError."""
    for name in ("feature_importances_", "n_features_in_"):
        with pytest.raises(NotFittedError, match="not fitted yet"):
            getattr(est, name)
    assert not hasattr(est, "feature_importances_")
    pickle.loads(pickle.dumps(est))
    y = XOR_Y if hasattr(est, "predict_proba") else XOR_Y * 1.0
    est.fit(XOR_X, y)
    with pytest.raises(AttributeError) as info:
        est.no_such_thing_
    assert not isinstance(info.value, NotFittedError)


def test_estimators_pickled_before_these_changes_predict_as_before():
    """Estimators fitted and pickled at 85c88a1 (``tests/fixtures/make_classic_pickles.py``,
    rows with NaN included) load here and predict what they predicted there: their trees
    carry their own missing-value directions."""
    from pathlib import Path
    folder = Path(__file__).parent / "fixtures" / "classic"
    data = np.load(folder / "expected.npz")
    for name in ("tree_classifier", "tree_regressor", "forest", "extra_trees", "adaboost"):
        with open(folder / f"{name}.pkl", "rb") as fh:
            est = pickle.load(fh)
        got = est.predict_proba(data["X"]) if hasattr(est, "predict_proba") else \
            est.predict(data["X"])
        assert np.array_equal(got, data[name]), name
