"""Decision trees, random forests, extra trees and AdaBoost as scikit-learn estimators.

All of them grow their trees with boostwood's one tree engine
(:func:`boostwood.tree.criterion.criterion_grower`, driven by
:mod:`boostwood.ensemble`): no second tree builder. Parameter names and
defaults follow scikit-learn's estimators of the same name; ``splitter`` adds
``"hist"`` (search at most ``max_bin`` histogram bin boundaries per feature).
Missing values (NaN) are allowed: each split learns where they go.
"""
import numbers

import numpy as np
from sklearn.base import BaseEstimator, ClassifierMixin, RegressorMixin
from sklearn.utils import Bunch
from sklearn.utils.class_weight import compute_sample_weight
from sklearn.utils.multiclass import check_classification_targets
from sklearn.utils.validation import _check_sample_weight, check_is_fitted, validate_data

from ..boosting.dump import export_text as _export_tree_text
from ..data import as_feature_matrix
from ..data.categories import recode
from ..data.validation import coded_features
from ..ensemble import cart, pruning
from ..tree.tree import feature_importance as _tree_importance
from ._hyper import (CLASSIFIER, DECISION_TREE, SPLITTERS, FittedAttributes, categorical_spec,
                     check_hyperparameters, checked_data, is_frame, labels_of, seed_of)


def _count(value, n, name, minimum):
    """An int count, or a float fraction of ``n`` (scikit-learn's convention)."""
    if isinstance(value, numbers.Integral) and not isinstance(value, bool):
        if value < minimum:
            raise ValueError(f"{name} must be >= {minimum}, got {value}")
        return int(value)
    if isinstance(value, numbers.Real) and 0.0 < value <= 1.0:
        return max(minimum, int(np.ceil(value * n)))
    raise ValueError(f"{name} must be an int >= {minimum} or a float in (0, 1], got {value!r}")


def resolve_max_features(value, n_features):
    """Features drawn per node: None = all, "sqrt", "log2", an int, or a fraction."""
    if value is None:
        return n_features
    if value == "sqrt":
        return max(1, int(np.sqrt(n_features)))
    if value == "log2":
        return max(1, int(np.log2(n_features)))
    if isinstance(value, numbers.Integral) and not isinstance(value, bool):
        if not 1 <= value <= n_features:
            raise ValueError(f"max_features must be in [1, {n_features}], got {value}")
        return int(value)
    if isinstance(value, numbers.Real) and 0.0 < value <= 1.0:
        return max(1, int(value * n_features))
    raise ValueError(f"max_features must be None, 'sqrt', 'log2', an int or a float in (0, 1], "
                     f"got {value!r}")


class _TreeParams:
    """Validation shared by every estimator that grows decision trees."""

    def _tree_spec(self, n_rows, n_features, total_weight):
        """The growth settings (hyperparameters were checked by ``check_hyperparameters``)."""
        return cart.TreeSpec(
            criterion=self.criterion, max_depth=self.max_depth or 0,
            max_leaf_nodes=self.max_leaf_nodes or 0,
            min_samples_split=_count(self.min_samples_split, n_rows, "min_samples_split", 2),
            min_samples_leaf=_count(self.min_samples_leaf, n_rows, "min_samples_leaf", 1),
            min_weight_leaf=self.min_weight_fraction_leaf * total_weight,
            min_impurity_decrease=float(self.min_impurity_decrease),
            max_features=resolve_max_features(self.max_features, n_features))

    def _splitter(self):
        return SPLITTERS[self.splitter]


def class_targets(est, y, w):
    """Validate a classifier's criterion and labels; set ``classes_`` and ``n_classes_``.
    Returns (class codes as int32, sample weights times ``class_weight``)."""
    if est.criterion not in ("gini", "entropy", "gain_ratio"):
        raise ValueError(f"criterion must be 'gini', 'entropy' or 'gain_ratio', "
                         f"got {est.criterion!r}")
    check_classification_targets(y)
    est.classes_, codes = np.unique(y, return_inverse=True)
    est.n_classes_ = len(est.classes_)
    if est.class_weight is not None:
        w = w * compute_sample_weight(est.class_weight, y)
    return codes.astype(np.int32), w


def path_indicator(tree, leaves):
    """Sparse (len(leaves), n_nodes) indicator of the nodes from the root to each leaf:
    every row climbs from its leaf to the root together, a numpy step per level (no loop
    over samples or nodes)."""
    from scipy import sparse
    parent = cart.node_parents(tree)
    node = np.asarray(leaves, dtype=np.int64)
    row = np.arange(node.shape[0])
    rows, nodes = [], []
    while node.size:
        rows.append(row)
        nodes.append(node)
        up = parent[node]
        row, node = row[up >= 0], up[up >= 0]
    rows = np.concatenate(rows) if rows else np.zeros(0, dtype=np.int64)
    nodes = np.concatenate(nodes) if nodes else np.zeros(0, dtype=np.int64)
    out = sparse.csr_matrix((np.ones(rows.shape[0], dtype=np.int64), (rows, nodes)),
                            shape=(len(leaves), tree.n_nodes))
    out.sort_indices()
    return out


def log_proba(proba):
    """The log of class probabilities, -inf where one is 0 (scikit-learn's
    ``predict_log_proba``)."""
    with np.errstate(divide="ignore"):
        return np.log(proba)


def _check_X_predict(est, X):
    dictionaries = getattr(est, "category_dictionaries_", None)
    if not dictionaries:
        X = checked_data(est, X, reset=False, accept_sparse=["csr", "csc"],
                         ensure_all_finite=False, dtype=[np.float64, np.float32])
        return as_feature_matrix(X, "X", allow_empty_rows=True)
    # names and count checked as fit checked them; categories coded by value, with the
    # fitted dictionaries (a category fit never saw goes the missing way)
    validate_data(est, X, reset=False, skip_check_array=True)
    names = [str(n) for n in getattr(est, "feature_names_in_", [])] or None
    fm = coded_features(X, names, dictionaries) if names else None  # (one pass)
    if fm is not None:
        return fm
    fm = as_feature_matrix(X, "X", allow_empty_rows=True)
    return recode(fm, dictionaries, "missing", names)


def _leaves(trees, fm):
    out = np.empty((fm.shape[0], len(trees)), dtype=np.int32)
    for s, X in fm.row_chunks():
        out[s:s + X.shape[0]] = cart.leaf_ids(trees, X)
    return out


def _fit_inputs(est, X, y, sample_weight, classifier):
    """(FeatureMatrix, y, sample weights) of a fit; categorical columns (by
    ``categorical_features``) as codes, their dictionaries kept for prediction."""
    check_hyperparameters(est)
    categorical = categorical_spec(est.categorical_features, X)
    if categorical is None:
        X, y = checked_data(est, X, y, accept_sparse=["csc", "csr"], ensure_all_finite=False,
                             dtype=[np.float64, np.float32], y_numeric=not classifier)
        fm = as_feature_matrix(X, "X")
    else:
        validate_data(est, X, reset=True, skip_check_array=True)
        y = labels_of(y, len(X) if is_frame(X) else np.shape(X)[0])
        if not classifier:
            y = _numeric_labels(y)
        fm = as_feature_matrix(X, "X", categorical_feature=categorical or None)
    est.category_dictionaries_ = fm.categories
    sample_weight = _check_sample_weight(sample_weight, X, dtype=np.float64)
    if np.any(sample_weight < 0):
        raise ValueError("sample_weight must be non-negative")
    if not classifier and not np.all(np.isfinite(y)):
        raise ValueError("y contains NaN or infinity")
    return fm, y, sample_weight


def _numeric_labels(y):
    try:
        return np.asarray(y, dtype=np.float64)
    except (TypeError, ValueError) as exc:
        raise TypeError(f"y must hold numbers only: {exc}") from None


class _DecisionTree(FittedAttributes, _TreeParams, BaseEstimator):
    """Shared parts of the decision tree estimators."""
    _hyperparameters = DECISION_TREE

    def __sklearn_tags__(self):
        tags = super().__sklearn_tags__()
        tags.input_tags.allow_nan = True
        tags.input_tags.sparse = True
        return tags

    def _grow(self, fm, channel, stat, weight, K):
        spec = self._tree_spec(fm.shape[0], fm.shape[1], weight.sum())
        seed = seed_of(self.random_state)
        columns = cart.search_columns(fm, self._splitter(), self.max_bin, seed, weight)
        grower = cart.make_grower(columns, spec, K, fm.shape[1], self._splitter() == "random")
        tree, stats = cart.grow(grower, channel, stat, weight, seed)
        return tree, stats

    def _finish_fit(self, tree, stats, K):
        if self.ccp_alpha > 0:
            _, _, cut = pruning.pruning_sequence(tree, stats, K, self.criterion, self.ccp_alpha)
            tree, stats = pruning.collapse(tree, stats, cut)
        self.tree_, self.node_stats_ = tree, stats
        imp = cart.importances(tree, self.n_features_in_)
        self.feature_importances_ = imp / imp.sum() if imp.sum() > 0 else imp
        return self

    def feature_importance(self, importance_type="gain"):
        """Importance types of the boosted models (``split``, ``gain``, ``total_gain``,
        ``cover``, ``total_cover``): gain is a split's weighted impurity decrease, cover
        its node's weight. ``feature_importances_`` is total_gain normalised."""
        check_is_fitted(self, "tree_")
        return _tree_importance([self.tree_], self.n_features_in_, importance_type)

    def apply(self, X):
        """Leaf node id of every sample, shape (n_samples,)."""
        check_is_fitted(self, "tree_")
        return _leaves([self.tree_], _check_X_predict(self, X))[:, 0]

    def decision_path(self, X):
        """Sparse (n_samples, n_nodes) indicator of the nodes each sample passes through."""
        return path_indicator(self.tree_, self.apply(X))

    def get_depth(self):
        check_is_fitted(self, "tree_")
        return self.tree_.depth()

    def get_n_leaves(self):
        check_is_fitted(self, "tree_")
        return self.tree_.n_leaves

    def cost_complexity_pruning_path(self, X, y, sample_weight=None):
        """Effective alphas of weakest-link pruning and the total leaf impurity of each
        pruned tree (Breiman et al. 1984), as scikit-learn's method of the same name."""
        est = self.__class__(**{**self.get_params(), "ccp_alpha": 0.0}).fit(X, y, sample_weight)
        K = est._n_channels()
        alphas, risks, _ = pruning.pruning_sequence(est.tree_, est.node_stats_, K,
                                                    est.criterion)
        return Bunch(ccp_alphas=alphas, impurities=risks + est._impurity_offset)

    def export_text(self, feature_names=None, decimals=2):
        """The tree as indented rules; leaves show the class (classifier) or value."""
        check_is_fitted(self, "tree_")
        names = feature_names
        if names is None and hasattr(self, "feature_names_in_"):
            names = [str(n) for n in self.feature_names_in_]
        return _export_tree_text(self.tree_, names, decimals, leaf_label=self._leaf_label,
                                 labels=getattr(self, "category_dictionaries_", None))


class DecisionTreeClassifier(ClassifierMixin, _DecisionTree):
    """A classification tree: CART with the Gini index (default) or entropy, or C4.5's
    gain ratio; class probabilities at the leaves.

    Parameters
    ----------
    criterion : {"gini", "entropy", "gain_ratio"}, default="gini"
    splitter : {"best", "hist"}, default="best"
        ``best``: every midpoint between consecutive distinct values (CART's exact
        search); ``hist``: the boundaries of at most ``max_bin`` quantile bins.
    max_depth : int, optional
    min_samples_split : int or float, default=2
    min_samples_leaf : int or float, default=1
    min_weight_fraction_leaf : float, default=0.0
    max_features : int, float, "sqrt", "log2" or None, default=None
        Features drawn at random for each node.
    random_state : int, optional
    max_leaf_nodes : int, optional
        Grow best-first up to this many leaves.
    min_impurity_decrease : float, default=0.0
    class_weight : dict, "balanced" or None
    ccp_alpha : float, default=0.0
        Minimal cost-complexity pruning.
    max_bin : int, default=255
        Bins per feature for ``splitter="hist"``.
    categorical_features : "from_dtype", None, or list, default="from_dtype"
        Categorical features: "from_dtype" takes the ``category``, string and object
        columns of a pandas or polars DataFrame and the string and dictionary columns of
        an Arrow table; a list of names or indices, or a boolean mask, names them (a
        numpy array's listed columns then hold categories as numbers); None takes
        numbers only. A categorical split sends a set of categories left: for two
        classes and for regression the best set, by Breiman's ordering of the node's
        categories (by their share of the second class, or their mean target); for
        three classes or more one category against the rest; extra trees draw a random
        subset. Categories the node did not hold go right, missing values the learned
        way, and at prediction a category ``fit`` never saw goes the missing way.

    Growth follows scikit-learn's rules (scikit-learn's trees have no categorical
    splits). A node is split while it is impure (more than
    one class; for regression, more than one target value) and some split gives both
    children ``min_samples_leaf`` rows, even when no split lowers its impurity: an XOR of
    two features needs a first split of zero gain. Among splits of equal gain the first
    wins, in feature order, then threshold order (ascending); a split of zero gain is
    chosen only where no split has a gain, and its recorded gain is 0. At prediction, a
    missing value on a feature that had none in a node's training rows goes to the child
    that had more training rows, right on a tie; where training rows were missing, each
    split learnt its side.
    """

    _hyperparameters = {**DECISION_TREE, **CLASSIFIER}

    def __init__(self, *, criterion="gini", splitter="best", max_depth=None,
                 min_samples_split=2, min_samples_leaf=1, min_weight_fraction_leaf=0.0,
                 max_features=None, random_state=None, max_leaf_nodes=None,
                 min_impurity_decrease=0.0, class_weight=None, ccp_alpha=0.0, max_bin=255,
                 categorical_features="from_dtype"):
        self.criterion = criterion
        self.splitter = splitter
        self.max_depth = max_depth
        self.min_samples_split = min_samples_split
        self.min_samples_leaf = min_samples_leaf
        self.min_weight_fraction_leaf = min_weight_fraction_leaf
        self.max_features = max_features
        self.random_state = random_state
        self.max_leaf_nodes = max_leaf_nodes
        self.min_impurity_decrease = min_impurity_decrease
        self.class_weight = class_weight
        self.ccp_alpha = ccp_alpha
        self.max_bin = max_bin
        self.categorical_features = categorical_features

    _impurity_offset = 0.0

    def _n_channels(self):
        return len(self.classes_)

    def fit(self, X, y, sample_weight=None):
        fm, y, w = _fit_inputs(self, X, y, sample_weight, classifier=True)
        codes, w = class_targets(self, y, w)
        tree, stats = self._grow(fm, codes, w, w, self.n_classes_)
        return self._finish_fit(tree, stats, self.n_classes_)

    def predict_proba(self, X):
        """Class probabilities of the samples' leaves, shape (n_samples, n_classes)."""
        check_is_fitted(self, "tree_")
        return cart.class_proba(self.node_stats_, self.apply(X), self.n_classes_)

    def predict_log_proba(self, X):
        """Log of :meth:`predict_proba` (-inf where a probability is 0)."""
        return log_proba(self.predict_proba(X))

    def predict(self, X):
        check_is_fitted(self, "tree_")
        return self.classes_[np.argmax(self.predict_proba(X), axis=1)]

    def _leaf_label(self, node):
        s = self.node_stats_[node]
        return f"class: {self.classes_[int(np.argmax(s[:self.n_classes_]))]}"


class DecisionTreeRegressor(RegressorMixin, _DecisionTree):
    """A regression tree (CART, squared error): leaves predict the weighted mean.

    Parameters are those of :class:`DecisionTreeClassifier` with
    ``criterion="squared_error"`` and no ``class_weight``; so are the growth rules (zero-gain
    splits of nodes of more than one target value, ties, missing values at prediction).
    """

    def __init__(self, *, criterion="squared_error", splitter="best", max_depth=None,
                 min_samples_split=2, min_samples_leaf=1, min_weight_fraction_leaf=0.0,
                 max_features=None, random_state=None, max_leaf_nodes=None,
                 min_impurity_decrease=0.0, ccp_alpha=0.0, max_bin=255,
                 categorical_features="from_dtype"):
        self.criterion = criterion
        self.splitter = splitter
        self.max_depth = max_depth
        self.min_samples_split = min_samples_split
        self.min_samples_leaf = min_samples_leaf
        self.min_weight_fraction_leaf = min_weight_fraction_leaf
        self.max_features = max_features
        self.random_state = random_state
        self.max_leaf_nodes = max_leaf_nodes
        self.min_impurity_decrease = min_impurity_decrease
        self.ccp_alpha = ccp_alpha
        self.max_bin = max_bin
        self.categorical_features = categorical_features

    def _n_channels(self):
        return 1

    def fit(self, X, y, sample_weight=None):
        if self.criterion != "squared_error":
            raise ValueError(f"criterion must be 'squared_error', got {self.criterion!r}")
        fm, y, w = _fit_inputs(self, X, y, sample_weight, classifier=False)
        y = np.asarray(y, dtype=np.float64)
        if y.ndim != 1:
            raise ValueError("y must be one-dimensional")
        total = w.sum()
        self._impurity_offset = float(np.sum(w * y * y) / total) if total > 0 else 0.0
        tree, stats = self._grow(fm, np.zeros(len(y), dtype=np.int32), w * y, w, 1)
        return self._finish_fit(tree, stats, 1)

    def predict(self, X):
        check_is_fitted(self, "tree_")
        return self.tree_.value[self.apply(X)]

    def _leaf_label(self, node):
        return None


def export_text(decision_tree, feature_names=None, decimals=2):
    """Indented rules of a fitted boostwood decision tree (scikit-learn's ``export_text``)."""
    return decision_tree.export_text(feature_names=feature_names, decimals=decimals)


