"""AdaBoost with boostwood's decision trees (fitted on sample weights).

* :class:`AdaBoostClassifier`: SAMME (Zhu, Zou, Rosset & Hastie 2009), the
  multiclass AdaBoost of the notes (001): with weighted error err_m of tree m,
  alpha_m = lr (log((1 - err_m) / err_m) + log(K - 1)); misclassified rows get
  their weight multiplied by exp(alpha_m); the prediction is
  argmax_k sum_m alpha_m [tree_m(x) = k]. For K = 2 this is Freund & Schapire's
  AdaBoost.M1.
* :class:`AdaBoostRegressor`: AdaBoost.R2 (Drucker 1997): each tree is fitted on a
  weighted bootstrap (integer sample weights); with relative losses e_i in [0, 1]
  and average loss L_m, beta_m = L_m / (1 - L_m), weights are multiplied by
  beta_m^(lr (1 - e_i)), and the prediction is the weighted median of the trees
  with weights log(1 / beta_m).

The loops themselves are :mod:`boostwood.ensemble.adaboost` (no scikit-learn needed);
these estimators validate, clone the base tree per round and predict.
"""

import numpy as np
from sklearn.base import BaseEstimator, ClassifierMixin, RegressorMixin, clone
from sklearn.metrics import accuracy_score, r2_score
from sklearn.utils.multiclass import check_classification_targets
from sklearn.utils.validation import _check_sample_weight, check_is_fitted, validate_data

from ..data.checks import Param
from ..ensemble.adaboost import R2_LOSSES, adaboost_r2, samme, weighted_median
from ..tree.tree import feature_importance as _tree_importance
from ._hyper import (ADABOOST, FittedAttributes, categorical_spec, check_hyperparameters,
                     checked_data, is_frame, labels_of, seed_of)
from .trees import DecisionTreeClassifier, DecisionTreeRegressor, log_proba


class _AdaBoost(FittedAttributes, BaseEstimator):
    _hyperparameters = ADABOOST

    def __sklearn_tags__(self):
        tags = super().__sklearn_tags__()
        tags.input_tags.allow_nan = True
        tags.input_tags.sparse = True
        return tags

    def _categorical(self, X):
        """Does X train with categorical features (by the base tree's
        ``categorical_features``)? Then it is passed to the trees as it is: each codes
        its categories by value."""
        base = self.estimator if self.estimator is not None else DecisionTreeClassifier()
        return categorical_spec(getattr(base, "categorical_features", None), X) is not None

    def _check(self, X, y, sample_weight, classifier):
        check_hyperparameters(self)
        if self._categorical(X):
            validate_data(self, X, reset=True, skip_check_array=True)
            y = labels_of(y, len(X) if is_frame(X) else np.shape(X)[0])
        else:
            X, y = checked_data(self, X, y, accept_sparse=["csr", "csc"],
                                 ensure_all_finite=False, dtype=[np.float64, np.float32],
                                 y_numeric=not classifier)
        w = _check_sample_weight(sample_weight, X, dtype=np.float64)
        if np.any(w < 0) or w.sum() <= 0:
            raise ValueError("sample_weight must be non-negative with a positive sum")
        return X, y, w / w.sum()

    def _check_X(self, X):
        """X for prediction, checked once against what fit saw: its feature count and,
        for a DataFrame, its column names (scikit-learn's rule: other names or order are
        an error); the trees then take the checked array, as in fit."""
        check_is_fitted(self, "estimators_")
        if self._categorical(X):
            validate_data(self, X, reset=False, skip_check_array=True)
            return X
        return checked_data(self, X, reset=False, accept_sparse=["csr", "csc"],
                             ensure_all_finite=False, dtype=[np.float64, np.float32])

    def _base(self, default):
        est = default if self.estimator is None else self.estimator
        if not isinstance(est, (DecisionTreeClassifier, DecisionTreeRegressor)):
            raise TypeError("estimator must be a boostwood DecisionTreeClassifier or "
                            f"DecisionTreeRegressor, got {type(est).__name__}")
        return est

    @property
    def feature_importances_(self):
        """Mean of the trees' normalised impurity importances, weighted by the estimator
        weights (scikit-learn's definition)."""
        check_is_fitted(self, "estimators_")
        w = self.estimator_weights_
        imp = sum(wi * t.feature_importances_ for wi, t in zip(w, self.estimators_))
        return imp / w.sum() if w.sum() > 0 else imp

    def feature_importance(self, importance_type="gain"):
        """Importance types over all trees (see :meth:`DecisionTreeClassifier.feature_importance`)."""
        check_is_fitted(self, "estimators_")
        return _tree_importance([t.tree_ for t in self.estimators_], self.n_features_in_,
                                importance_type)

    def staged_score(self, X, y, sample_weight=None):
        """:meth:`score` (accuracy, or R^2 for the regressor) after each round, as
        scikit-learn's AdaBoost yields it."""
        for pred in self.staged_predict(X):
            yield self._scorer(y, pred, sample_weight=sample_weight)


class AdaBoostClassifier(ClassifierMixin, _AdaBoost):
    """SAMME AdaBoost (multiclass) on boostwood decision trees; stumps by default.

    Parameters
    ----------
    estimator : DecisionTreeClassifier, optional (default: ``max_depth=1``)
    n_estimators : int, default=50
    learning_rate : float, default=1.0
    random_state : int, optional (seeds the trees' feature draws)

    Attributes
    ----------
    estimators_, estimator_weights_, estimator_errors_, classes_, n_classes_
    """

    _scorer = staticmethod(accuracy_score)

    def __init__(self, estimator=None, *, n_estimators=50, learning_rate=1.0, random_state=None):
        self.estimator = estimator
        self.n_estimators = n_estimators
        self.learning_rate = learning_rate
        self.random_state = random_state

    def fit(self, X, y, sample_weight=None):
        X, y, w = self._check(X, y, sample_weight, classifier=True)
        check_classification_targets(y)
        self.classes_ = np.unique(y)
        K = self.n_classes_ = len(self.classes_)
        if K < 2:
            raise ValueError(f"AdaBoostClassifier needs samples of at least 2 classes; got {K} "
                             f"class")
        base = self._base(DecisionTreeClassifier(max_depth=1))

        def fit_tree(weight, seed):
            tree = clone(base).set_params(random_state=seed).fit(X, y, sample_weight=weight)
            return tree, tree.predict(X)

        rng = np.random.default_rng(seed_of(self.random_state))
        self.estimators_, self.estimator_weights_, self.estimator_errors_ = samme(
            fit_tree, y, w, K, self.n_estimators, self.learning_rate, rng)
        return self

    def _votes(self, X):
        X = self._check_X(X)
        for tree, a in zip(self.estimators_, self.estimator_weights_):
            pred = tree.predict(X)
            yield a * (pred[:, None] == self.classes_[None, :])

    def _staged_votes(self, X):
        """Per round, the normalised votes sum_m alpha_m [tree_m = k] / sum_m alpha_m."""
        check_is_fitted(self, "estimators_")
        total, norm = 0.0, 0.0
        for v, a in zip(self._votes(X), self.estimator_weights_):
            total = total + v
            norm += a
            yield total / norm

    def _symmetric(self, votes):
        """SAMME's symmetric coding: a vote is +1 for the predicted class and -1/(K-1) for
        the others, i.e. D_k = (K v_k - 1) / (K - 1) for the normalised votes v."""
        K = self.n_classes_
        return (K * votes - 1.0) / (K - 1.0)

    def _decision(self, votes):
        D = self._symmetric(votes)
        return D[:, 1] - D[:, 0] if self.n_classes_ == 2 else D

    def staged_decision_function(self, X):
        """Decision function after each round in SAMME's symmetric coding (binary: the
        second class's score minus the first's, shape (n_samples,))."""
        for v in self._staged_votes(X):
            yield self._decision(v)

    def decision_function(self, X):
        for v in self._staged_votes(X):
            pass
        return self._decision(v)

    def staged_predict(self, X):
        """Predicted classes after each round."""
        for v in self._staged_votes(X):
            yield self.classes_[np.argmax(v, axis=1)]

    def predict(self, X):
        for v in self._staged_votes(X):
            pass
        return self.classes_[np.argmax(v, axis=1)]

    def _proba(self, votes):
        """softmax(D / (K - 1)) of the symmetric scores D (scikit-learn's SAMME probabilities)."""
        d = self._symmetric(votes) / (self.n_classes_ - 1)
        e = np.exp(d - d.max(axis=1, keepdims=True))
        return e / e.sum(axis=1, keepdims=True)

    def predict_proba(self, X):
        """softmax(D / (K - 1)) of the symmetric scores D (scikit-learn's SAMME probabilities)."""
        for v in self._staged_votes(X):
            pass
        return self._proba(v)

    def staged_predict_proba(self, X):
        """Class probabilities after each round (the last one is ``predict_proba``'s)."""
        for v in self._staged_votes(X):
            yield self._proba(v)

    def predict_log_proba(self, X):
        """Log of :meth:`predict_proba` (-inf where a probability is 0)."""
        return log_proba(self.predict_proba(X))


class AdaBoostRegressor(RegressorMixin, _AdaBoost):
    """AdaBoost.R2 on boostwood regression trees (depth 3 by default).

    Parameters
    ----------
    estimator : DecisionTreeRegressor, optional (default: ``max_depth=3``)
    n_estimators : int, default=50
    learning_rate : float, default=1.0
    loss : {"linear", "square", "exponential"}, default="linear"
    random_state : int, optional (the weighted bootstraps)
    """

    _hyperparameters = {**ADABOOST, "loss": Param("linear", "str", choices=tuple(R2_LOSSES))}
    _scorer = staticmethod(r2_score)

    def __init__(self, estimator=None, *, n_estimators=50, learning_rate=1.0, loss="linear",
                 random_state=None):
        self.estimator = estimator
        self.n_estimators = n_estimators
        self.learning_rate = learning_rate
        self.loss = loss
        self.random_state = random_state

    def fit(self, X, y, sample_weight=None):
        X, y, w = self._check(X, y, sample_weight, classifier=False)
        y = np.asarray(y, dtype=np.float64)
        base = self._base(DecisionTreeRegressor(max_depth=3))

        def fit_tree(counts, seed):
            tree = clone(base).set_params(random_state=seed).fit(X, y, sample_weight=counts)
            return tree, tree.predict(X)

        rng = np.random.default_rng(seed_of(self.random_state))
        self.estimators_, self.estimator_weights_, self.estimator_errors_ = adaboost_r2(
            fit_tree, y, w, self.n_estimators, self.learning_rate, self.loss, rng)
        return self

    def _median(self, preds, weights):
        return weighted_median(preds, weights)

    def staged_predict(self, X):
        """Predictions after each round (weighted median of the trees so far)."""
        X = self._check_X(X)
        preds = []
        for i, tree in enumerate(self.estimators_):
            preds.append(tree.predict(X))
            yield self._median(np.column_stack(preds), self.estimator_weights_[:i + 1])

    def predict(self, X):
        X = self._check_X(X)
        preds = np.column_stack([t.predict(X) for t in self.estimators_])
        return self._median(preds, self.estimator_weights_)
