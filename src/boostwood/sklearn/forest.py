"""Random forests and extra trees as scikit-learn estimators.

The forest itself -- bootstrap weights, one tree per seed, trees grown in
parallel, one per thread of ``n_jobs`` -- is :func:`boostwood.ensemble.forest.grow_forest`,
which needs no scikit-learn; this module validates, encodes and maps parameters.
Every tree depends only on its own seed, so the forest is the same for any
``n_jobs`` given ``random_state``.
"""
import numbers
import warnings

import numpy as np
from sklearn.base import BaseEstimator, ClassifierMixin, RegressorMixin
from sklearn.metrics import accuracy_score, r2_score
from sklearn.utils.validation import check_is_fitted

from .._config import threads_given_back
from ..data.checks import Param
from ..data.dataset import fingerprint
from ..ensemble import cart, forest
from ..tree.tree import feature_importance as _tree_importance
from ._hyper import CLASSIFIER, FOREST, FittedAttributes, kept_on_error, seed_of
from .trees import (_check_X_predict, _fit_inputs, _leaves, _TreeParams, class_targets,
                    log_proba, path_indicator)


def _out_of_bag_rows(seen):
    """``seen`` (rows out of at least one tree's bag): the OOB score covers those rows
    only, so rows in every bag are warned about (scikit-learn warns too); with none
    out of bag the score is NaN."""
    missing = int(np.count_nonzero(~seen))
    if missing:
        warnings.warn(f"{missing} of {seen.size} rows were in every tree's bag: oob_score_ "
                      "covers the others only (their out-of-bag predictions are NaN); more "
                      "trees give every row an estimate", UserWarning,
                      stacklevel=4)  # _fit, fit, the caller's line
    return seen


#: Elements per block of a dense X that :func:`_rows_fingerprint` converts at a time
#: (32 MiB of float64): few kernel launches, a bounded copy.
_FINGERPRINT_BLOCK = 1 << 22


def _rows_fingerprint(fm, *columns):
    """A fingerprint of the training rows (features and the per-row ``columns``) by their
    values, whatever the array's memory order or float type (a sparse X by its nonzero
    entries): the rows that an out-of-bag score of a warm start must find again."""
    if fm.dense is not None:
        X = fm.dense
        step = max(1, _FINGERPRINT_BLOCK // max(X.shape[1], 1))
        parts = [np.ascontiguousarray(X[lo:lo + step], dtype=np.float64)
                 for lo in range(0, X.shape[0], step)]  # row blocks in C order
    else:
        csc = fm.csc
        if not csc.has_canonical_format or (csc.nnz and not np.all(csc.data)):
            csc = csc.copy()  # duplicates summed, explicit zeros dropped, indices sorted
            csc.sum_duplicates()
            csc.eliminate_zeros()
        parts = [csc.data.astype(np.float64, copy=False), csc.indices.astype(np.int64),
                 csc.indptr.astype(np.int64)]
    parts += [np.asarray(c, dtype=np.float64) for c in columns]
    return tuple(fingerprint(p) for p in parts) + (fm.shape, fm.dense is None)


class _Forest(FittedAttributes, _TreeParams, BaseEstimator):
    _classifier = False
    _hyperparameters = FOREST
    _default_splitter = "hist"

    def __sklearn_tags__(self):
        tags = super().__sklearn_tags__()
        tags.input_tags.allow_nan = True
        tags.input_tags.sparse = True
        tags.non_deterministic = False
        return tags

    def _check_forest_params(self):
        if self.oob_score and not self.bootstrap:
            raise ValueError("oob_score needs bootstrap=True")
        if self.max_samples is not None and not self.bootstrap:
            raise ValueError("max_samples needs bootstrap=True")

    def _n_bootstrap(self, n):
        m = self.max_samples
        if m is None:
            return n
        if isinstance(m, numbers.Integral) and not isinstance(m, bool):
            if not 1 <= m <= n:
                raise ValueError(f"max_samples must be in [1, {n}], got {m}")
            return int(m)
        if isinstance(m, numbers.Real) and 0.0 < m <= 1.0:
            return max(1, int(round(m * n)))
        raise ValueError(f"max_samples must be None, an int or a float in (0, 1], got {m!r}")

    _WARM_KEYS = ("n_features_in_", "feature_names_in_", "classes_", "n_classes_",
                  "category_dictionaries_")

    def fit(self, X, y, sample_weight=None):
        """Grow the forest (``warm_start``: add trees to it); a fit that raises leaves the
        fitted forest as it was."""
        with kept_on_error(self):
            return self._fit(X, y, sample_weight)

    def _warm_state(self):
        """The fitted attributes a warm start must find unchanged (features, their names,
        classes), or None when this fit grows a fresh forest."""
        if not (isinstance(self.warm_start, (bool, np.bool_)) and self.warm_start
                and hasattr(self, "trees_")):
            return None
        return {k: getattr(self, k) for k in self._WARM_KEYS if hasattr(self, k)}

    def _kept_trees(self, warm, rows):
        """How many grown trees this fit keeps: with ``warm_start``, every one (their data
        must have the same features and classes), else none."""
        if warm is None:
            return 0
        now = {k: getattr(self, k) for k in self._WARM_KEYS if hasattr(self, k)}
        same = now.keys() == warm.keys() and all(
            now[k] == warm[k] if isinstance(now[k], dict) else np.array_equal(now[k], warm[k])
            for k in now)
        if not same:  # (fit's kept_on_error puts back what validation set from this data)
            raise ValueError(
                "warm_start adds trees for the same features and classes (and the same "
                "categories of categorical features): this data has "
                f"{now['n_features_in_']} features {list(now.get('feature_names_in_', []))[:5]}"
                f" and classes {list(now.get('classes_', []))[:5]}, the forest "
                f"{warm['n_features_in_']} {list(warm.get('feature_names_in_', []))[:5]} and "
                f"{list(warm.get('classes_', []))[:5]}")
        kept = len(self.trees_)
        if self.oob_score:
            # each kept tree's bag names rows of the data it was grown on: out-of-bag
            # predictions of other rows would take in-bag ones for out-of-bag
            specs = list(getattr(self, "_tree_bags", []))
            if len(specs) != kept or any(sp is None or len(sp) < 4 for sp in specs):
                raise ValueError("oob_score with warm_start needs each tree's bag, which "
                                 "this forest did not keep (it was fitted by an earlier "
                                 "boostwood); fit it again without warm_start")
            if any(sp[3] != rows for sp in specs):
                raise ValueError("oob_score with warm_start needs the rows (features, targets "
                                 "and weights, in the same order, dense or sparse as before) "
                                 "that the forest's trees were grown on")
        if self.n_estimators < kept:
            raise ValueError(f"n_estimators={self.n_estimators} is below the {kept} trees "
                             "already grown; with warm_start=True it must be at least that")
        if self.n_estimators == kept:
            warnings.warn(f"warm_start with n_estimators={kept}, the trees already grown: no "
                          "tree added", UserWarning,
                          stacklevel=5)  # _fit_forest, _fit, fit, the caller's line
        return kept

    def _fit_forest(self, fm, channel, stat, w, K, warm=None):
        """Grow the forest (with a warm start, the trees from ``len(trees_)`` on: the
        forest of one fit with all of them); each tree's in-bag rows, (n_trees, n_rows)."""
        self._check_forest_params()
        rows = _rows_fingerprint(fm, channel, stat, w)
        kept = self._kept_trees(warm, rows)
        n, n_boot = fm.shape[0], self._n_bootstrap(fm.shape[0])
        seed = seed_of(self.random_state)
        seeds = np.random.default_rng(seed).integers(0, 2 ** 31 - 1, size=self.n_estimators)
        trees, stats = (self.trees_, self.node_stats_) if kept else ([], [])
        # each kept tree's bag (for the OOB score), drawn again from its own seed and draw
        # count (a forest pickled before boostwood kept them has none: _kept_trees refused)
        specs = list(getattr(self, "_tree_bags", [None] * kept))[:kept]
        specs += [None] * (kept - len(specs))
        bags = [forest.in_bag([sp[0]], n, sp[1], sp[2]) for sp in specs] if self.oob_score \
            else []
        if kept < self.n_estimators:
            splitter = self._splitter()
            with threads_given_back(self._n_jobs()) as n_threads:  # this fit's own
                columns = cart.search_columns(fm, splitter, self.max_bin, int(seed), w)
                grown = forest.grow_forest(columns, self._tree_spec(n, fm.shape[1], w.sum()),
                                           channel, stat, w, K, fm.shape[1], seeds[kept:],
                                           self.bootstrap, n_boot, n_threads,
                                           splitter == "random")
            trees, stats = trees + grown.trees, stats + grown.node_stats
            bags.append(grown.in_bag)
            specs = specs + [(int(sd), n_boot, bool(self.bootstrap), rows)
                             for sd in seeds[kept:]]
        self.trees_, self.node_stats_ = trees, stats
        self._tree_bags = specs  # each tree's (seed, draws, bootstrap, rows): for warm starts
        self.feature_importances_ = forest.forest_importances(trees, fm.shape[1])
        return np.concatenate(bags) if self.oob_score else None

    def feature_importance(self, importance_type="gain"):
        """Importance types over all trees (``split``, ``gain``, ``total_gain``, ``cover``,
        ``total_cover``; gain = weighted impurity decrease, cover = node weight)."""
        check_is_fitted(self, "trees_")
        return _tree_importance(self.trees_, self.n_features_in_, importance_type)

    def apply(self, X):
        """Leaf node id of every sample in every tree, shape (n_samples, n_estimators)."""
        check_is_fitted(self, "trees_")
        return self._forest_leaves(_check_X_predict(self, X))

    def _forest_leaves(self, fm):
        """Every row's leaf in every tree, on ``n_jobs`` threads as the fit (scikit-learn's
        forests predict on ``n_jobs`` too); numba's count is given back after."""
        with threads_given_back(self._n_jobs()):
            return _leaves(self.trees_, fm)

    def _n_jobs(self):
        """``n_jobs`` as an ``nthread``: None is every core (0)."""
        return 0 if self.n_jobs is None else self.n_jobs

    def decision_path(self, X):
        """scikit-learn's forest ``decision_path``: a sparse (n_samples, total nodes)
        indicator of the nodes each sample passes through in every tree, the trees' node
        columns side by side, and ``n_nodes_ptr`` (tree t's columns start there)."""
        from scipy import sparse
        leaves = self.apply(X)
        blocks = [path_indicator(tree, leaves[:, t]) for t, tree in enumerate(self.trees_)]
        ptr = np.concatenate([[0], np.cumsum([t.n_nodes for t in self.trees_])])
        return sparse.hstack(blocks, format="csr"), ptr

    @property
    def estimators_(self):
        check_is_fitted(self, "trees_")
        return self.trees_


_FOREST_DOC = """
    Parameters
    ----------
    n_estimators : int, default=100
    criterion : str
        Classifier: "gini" (default), "entropy" or "gain_ratio"; regressor: "squared_error".
    splitter : {"hist", "best"}, default="hist" (forests) / "best" (extra trees draw random
        thresholds between each node's minimum and maximum whatever this says)
        ``hist`` searches at most ``max_bin`` histogram bin boundaries per feature,
        ``best`` every midpoint between consecutive values (scikit-learn's search).
    max_depth, min_samples_split, min_samples_leaf, min_weight_fraction_leaf,
    max_leaf_nodes, min_impurity_decrease : as in :class:`DecisionTreeClassifier`
    max_features : "sqrt" (classifier default), "log2", int, float, or None (all;
        regressor default 1.0), drawn per node
    bootstrap : bool, default=True
        Each tree sees integer sample weights drawn as ``max_samples`` draws with
        replacement (out-of-bag rows have weight 0).
    oob_score : bool, default=False
        Score on the out-of-bag rows (accuracy / R^2) in ``oob_score_``.
    max_samples : int or float, optional
    n_jobs : int, optional, threads for growing each tree (None or <= 0: all cores)
    random_state : int, optional; the forest is the same for any ``n_jobs``
    max_bin : int, default=255
    categorical_features : "from_dtype", None, or list, default="from_dtype"
        Categorical features and their splits, as :class:`DecisionTreeClassifier`'s.
    warm_start : bool, default=False
        ``fit`` keeps the trees already grown and adds trees up to ``n_estimators``: with
        the same data and an int ``random_state``, the forest of one fit with all of
        them. Each tree keeps its own bag, so ``oob_score`` stays right whatever the
        settings; it needs the rows the trees were grown on (else an error).
"""


class RandomForestClassifier(ClassifierMixin, _Forest):
    __doc__ = ("Random forest of classification trees (Breiman 2001): bootstrap rows, "
               "features drawn per node; averaged probabilities or, with "
               "``voting='hard'``, the majority vote of the trees.\n" + _FOREST_DOC + """
    voting : {"soft", "hard"}, default="soft"
    class_weight : dict, "balanced" or None
    """)
    _classifier = True
    _hyperparameters = {**FOREST, **CLASSIFIER,
                        "voting": Param("soft", "str", choices=("soft", "hard"))}

    def __init__(self, n_estimators=100, *, criterion="gini", splitter="hist", max_depth=None,
                 min_samples_split=2, min_samples_leaf=1, min_weight_fraction_leaf=0.0,
                 max_features="sqrt", max_leaf_nodes=None, min_impurity_decrease=0.0,
                 bootstrap=True, oob_score=False, n_jobs=None, random_state=None,
                 class_weight=None, max_samples=None, voting="soft", max_bin=255,
                 warm_start=False, categorical_features="from_dtype"):
        self.n_estimators = n_estimators
        self.criterion = criterion
        self.splitter = splitter
        self.max_depth = max_depth
        self.min_samples_split = min_samples_split
        self.min_samples_leaf = min_samples_leaf
        self.min_weight_fraction_leaf = min_weight_fraction_leaf
        self.max_features = max_features
        self.max_leaf_nodes = max_leaf_nodes
        self.min_impurity_decrease = min_impurity_decrease
        self.bootstrap = bootstrap
        self.oob_score = oob_score
        self.n_jobs = n_jobs
        self.random_state = random_state
        self.class_weight = class_weight
        self.max_samples = max_samples
        self.voting = voting
        self.max_bin = max_bin
        self.warm_start = warm_start
        self.categorical_features = categorical_features

    def _fit(self, X, y, sample_weight):
        warm = self._warm_state()
        fm, y, w = _fit_inputs(self, X, y, sample_weight, classifier=True)
        codes, w = class_targets(self, y, w)
        inbag = self._fit_forest(fm, codes, w, w, self.n_classes_, warm)
        if self.oob_score:
            votes = self._tree_votes(self._forest_leaves(fm))
            votes[inbag.T] = 0.0
            seen = _out_of_bag_rows(votes.sum(axis=(1, 2)) > 0)
            self.oob_decision_function_ = np.full((fm.shape[0], self.n_classes_), np.nan)
            self.oob_decision_function_[seen] = votes[seen].sum(axis=1) / \
                votes[seen].sum(axis=(1, 2))[:, None]
            self.oob_score_ = accuracy_score(
                codes[seen], np.argmax(self.oob_decision_function_[seen], axis=1)) \
                if seen.any() else np.nan
        return self

    def _tree_votes(self, leaves):
        """(n_samples, n_trees, n_classes): each tree's probabilities, or one-hot votes."""
        K = self.n_classes_
        out = np.stack([cart.class_proba(s, leaves[:, t], K)
                        for t, s in enumerate(self.node_stats_)], axis=1)
        if self.voting == "hard":
            out = np.eye(K)[np.argmax(out, axis=2)]
        return out

    def predict_proba(self, X):
        """Mean of the trees' leaf probabilities (``voting='hard'``: share of votes)."""
        leaves = self.apply(X)
        K = self.n_classes_
        tables = [cart.class_proba(s, np.arange(s.shape[0]), K) for s in self.node_stats_]
        if self.voting == "hard":
            tables = [np.eye(K)[np.argmax(tb, axis=1)] for tb in tables]
        return cart.mean_over_trees(leaves, tables)

    def predict(self, X):
        check_is_fitted(self, "trees_")
        return self.classes_[np.argmax(self.predict_proba(X), axis=1)]

    def predict_log_proba(self, X):
        """Log of :meth:`predict_proba` (-inf where a probability is 0)."""
        return log_proba(self.predict_proba(X))


class RandomForestRegressor(RegressorMixin, _Forest):
    __doc__ = "Random forest of regression trees: the mean of the trees.\n" + _FOREST_DOC

    def __init__(self, n_estimators=100, *, criterion="squared_error", splitter="hist",
                 max_depth=None, min_samples_split=2, min_samples_leaf=1,
                 min_weight_fraction_leaf=0.0, max_features=1.0, max_leaf_nodes=None,
                 min_impurity_decrease=0.0, bootstrap=True, oob_score=False, n_jobs=None,
                 random_state=None, max_samples=None, max_bin=255, warm_start=False,
                 categorical_features="from_dtype"):
        self.n_estimators = n_estimators
        self.criterion = criterion
        self.splitter = splitter
        self.max_depth = max_depth
        self.min_samples_split = min_samples_split
        self.min_samples_leaf = min_samples_leaf
        self.min_weight_fraction_leaf = min_weight_fraction_leaf
        self.max_features = max_features
        self.max_leaf_nodes = max_leaf_nodes
        self.min_impurity_decrease = min_impurity_decrease
        self.bootstrap = bootstrap
        self.oob_score = oob_score
        self.n_jobs = n_jobs
        self.random_state = random_state
        self.max_samples = max_samples
        self.max_bin = max_bin
        self.warm_start = warm_start
        self.categorical_features = categorical_features

    def _fit(self, X, y, sample_weight):
        if self.criterion != "squared_error":
            raise ValueError(f"criterion must be 'squared_error', got {self.criterion!r}")
        warm = self._warm_state()
        fm, y, w = _fit_inputs(self, X, y, sample_weight, classifier=False)
        y = np.asarray(y, dtype=np.float64)
        inbag = self._fit_forest(fm, np.zeros(len(y), dtype=np.int32), w * y, w, 1, warm)
        if self.oob_score:
            pred = self._tree_values(self._forest_leaves(fm))
            pred[inbag.T] = np.nan
            seen = _out_of_bag_rows(~np.all(np.isnan(pred), axis=1))
            self.oob_prediction_ = np.full(len(y), np.nan)
            self.oob_prediction_[seen] = np.nanmean(pred[seen], axis=1)
            self.oob_score_ = r2_score(y[seen], self.oob_prediction_[seen]) \
                if seen.any() else np.nan
        return self

    def _tree_values(self, leaves):
        return np.stack([t.value[leaves[:, i]] for i, t in enumerate(self.trees_)], axis=1)

    def predict(self, X):
        leaves = self.apply(X)
        return cart.mean_over_trees(leaves, [t.value[:, None] for t in self.trees_])[:, 0]


class ExtraTreesClassifier(RandomForestClassifier):
    __doc__ = ("Extremely randomized trees (Geurts et al. 2006): at each node every drawn "
               "feature gets one random threshold between its minimum and maximum in the "
               "node, and the best of those splits is taken; no bootstrap by default.\n"
               + _FOREST_DOC)

    def __init__(self, n_estimators=100, *, criterion="gini", splitter="random",
                 max_depth=None, min_samples_split=2, min_samples_leaf=1,
                 min_weight_fraction_leaf=0.0, max_features="sqrt", max_leaf_nodes=None,
                 min_impurity_decrease=0.0, bootstrap=False, oob_score=False, n_jobs=None,
                 random_state=None, class_weight=None, max_samples=None, voting="soft",
                 max_bin=255, warm_start=False, categorical_features="from_dtype"):
        super().__init__(n_estimators, criterion=criterion, splitter=splitter,
                         max_depth=max_depth, min_samples_split=min_samples_split,
                         min_samples_leaf=min_samples_leaf,
                         min_weight_fraction_leaf=min_weight_fraction_leaf,
                         max_features=max_features, max_leaf_nodes=max_leaf_nodes,
                         min_impurity_decrease=min_impurity_decrease, bootstrap=bootstrap,
                         oob_score=oob_score, n_jobs=n_jobs, random_state=random_state,
                         class_weight=class_weight, max_samples=max_samples, voting=voting,
                         max_bin=max_bin, warm_start=warm_start,
                         categorical_features=categorical_features)


class ExtraTreesRegressor(RandomForestRegressor):
    __doc__ = ("Extremely randomized regression trees (Geurts et al. 2006).\n" + _FOREST_DOC)

    def __init__(self, n_estimators=100, *, criterion="squared_error", splitter="random",
                 max_depth=None, min_samples_split=2, min_samples_leaf=1,
                 min_weight_fraction_leaf=0.0, max_features=1.0, max_leaf_nodes=None,
                 min_impurity_decrease=0.0, bootstrap=False, oob_score=False, n_jobs=None,
                 random_state=None, max_samples=None, max_bin=255, warm_start=False,
                 categorical_features="from_dtype"):
        super().__init__(n_estimators, criterion=criterion, splitter=splitter,
                         max_depth=max_depth, min_samples_split=min_samples_split,
                         min_samples_leaf=min_samples_leaf,
                         min_weight_fraction_leaf=min_weight_fraction_leaf,
                         max_features=max_features, max_leaf_nodes=max_leaf_nodes,
                         min_impurity_decrease=min_impurity_decrease, bootstrap=bootstrap,
                         oob_score=oob_score, n_jobs=n_jobs, random_state=random_state,
                         max_samples=max_samples, max_bin=max_bin, warm_start=warm_start,
                         categorical_features=categorical_features)
