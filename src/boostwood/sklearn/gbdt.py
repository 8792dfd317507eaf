"""scikit-learn estimators: thin keyword-only wrappers around :func:`boostwood.train`.

``fit`` validates and encodes the inputs, builds :class:`Dataset` objects, maps
the estimator's parameters in :meth:`_native_params` (the one mapping
function) and calls ``train``. The fitted model is a native :class:`Booster`
in ``booster_``. Requires scikit-learn (``pip install boostwood[sklearn]``).
"""
import inspect
import os

import numpy as np
from sklearn.base import BaseEstimator, ClassifierMixin, RegressorMixin, TransformerMixin, clone
from sklearn.model_selection import train_test_split
from sklearn.utils.class_weight import compute_sample_weight
from sklearn.utils.multiclass import check_classification_targets
from sklearn.utils.validation import _check_sample_weight, check_is_fitted

from ..boosting import Booster, train
from ..boosting.params import PARAMS, objective_name
from ..data import Dataset
from ..data.checks import Param, check_value
from ..data.validation import check_vector
from . import _hyper
from ._hyper import FittedAttributes, checked_data, kept_on_error, seed_of

#: ``importance_type`` -> the Booster's name for it ("weight" is XGBoost's for "split").
_IMPORTANCE = {"total_gain": "total_gain", "gain": "gain", "split": "split", "weight": "split",
               "total_cover": "total_cover", "cover": "cover"}
#: Estimator hyperparameter -> the ``train`` parameter it becomes (the one mapping).
_NATIVE = {
    "learning_rate": "eta", "max_depth": "max_depth", "max_leaves": "max_leaves",
    "grow_policy": "grow_policy", "min_child_weight": "min_child_weight",
    "min_child_samples": "min_data_in_leaf", "gamma": "gamma", "reg_lambda": "lambda",
    "reg_alpha": "alpha", "max_delta_step": "max_delta_step", "subsample": "subsample",
    "subsample_freq": "bagging_freq",
    "colsample_bytree": "colsample_bytree", "colsample_bynode": "colsample_bynode",
    "max_bin": "max_bin", "tree_method": "tree_method", "sketch_eps": "sketch_eps",
    "sketch_sample_cnt": "sketch_sample_cnt",
    "use_quantized_grad": "use_quantized_grad",
    "boosting": "boosting", "line_search": "line_search", "base_score": "base_score",
    "eval_metric": "eval_metric"}

_COMMON_DOC = """
    Parameters
    ----------
    n_estimators : int, default=100
        Boosting rounds.
    learning_rate : float, default=0.1
    max_depth : int, default=6
        0 means unlimited (then ``max_leaves`` must bound the tree).
    max_leaves : int, default=0
        Leaves per tree; 0 means no limit.
    grow_policy : {"depthwise", "lossguide"}, default="depthwise"
    min_child_weight : float, default=1.0
        Minimum hessian sum of a leaf.
    min_child_samples : int, default=1
        Minimum number of rows of a leaf.
    gamma : float, default=0.0
        Minimum split gain (eq. 7 of Chen & Guestrin, including its 1/2).
    reg_lambda, reg_alpha : float, default=1.0, 0.0
        L2 and L1 penalties on leaf values.
    max_delta_step : float, default=0.0
    subsample, colsample_bytree, colsample_bynode : float, default=1.0
    subsample_freq : int, default=1
        Rounds a ``subsample`` bag is kept (LGBMClassifier's name): drawn afresh every
        k-th round; 0 = no bagging. LightGBM's default is 0, where ``subsample`` alone
        does not bag; here 1, XGBoost's ``subsample``.
    max_bin : int, default=255
    tree_method : {"hist", "exact", "approx"}, default="hist"
        Split finding: histogram bins, exact greedy over sorted values, or
        hessian-weighted percentile candidates (``sketch_eps`` apart).
    sketch_eps : float, default=0.03
        ``tree_method="approx"``: about 1/sketch_eps candidate splits per feature.
    sketch_sample_cnt : int, default=0
        ``tree_method="approx"``: propose the candidates from about this many rows,
        drawn by row id (the same rows on any number of Dask workers, which then send
        only their sampled rows' values); 0 = every row.
    use_quantized_grad : bool, default=False
        Round gradients and hessians to 16 levels per tree (unbiased, stochastic):
        faster histograms, about the same accuracy (LightGBM's option).
    boosting : {"newton", "gradient"}, default="newton"
        Newton boosting (XGBoost's second-order trees), or Friedman's gradient
        boosting machine: least-squares trees on the pseudo-residuals with leaves
        set by line search (set ``reg_lambda=0`` for Friedman's exact algorithm).
    line_search : {"leaf", "global", "none"}, default="leaf"
        ``boosting="gradient"`` only: a line search per leaf (TreeBoost), one step
        per tree, or none.
    early_stopping_rounds : int, optional
        Stop when the last ``eval_set`` (or, without one, a ``validation_fraction``
        hold-out) has not improved for this many rounds.
    validation_fraction : float, default=0.1
        Hold-out share used for early stopping when no ``eval_set`` is given.
    eval_metric : str or list of str, optional
    base_score : float, optional
    random_state : int, optional
        Seed (None means 0: fits are reproducible by default).
    n_jobs : int, optional
        Threads (None or <= 0: all cores).
    verbose : bool or int, default=False
        Print the evaluation log (every ``verbose`` rounds).
    importance_type : str, default="total_gain"
        What ``feature_importances_`` sums per feature, normalised to sum to 1:
        "total_gain", "gain" (mean gain per split, XGBoost's default and meaning;
        LightGBM's "gain" is "total_gain" here), "split" or "weight" (number of
        splits), "total_cover", "cover".
    categorical_features : "from_dtype", None, or list, default="from_dtype"
        Categorical features of a DataFrame (pandas, polars) or Arrow table X:
        "from_dtype" (scikit-learn's HistGradientBoosting default) takes pandas
        ``category``, string and object columns and Arrow / polars string and dictionary
        columns; a list of feature names or indices, or a boolean mask, adds numeric
        columns to them (``Dataset``'s ``categorical_feature``); None takes numbers only.
        A list (indices, or a mask) also marks columns of a numpy array categorical, whose
        numbers are then categories. The model keeps each feature's categories and codes
        later data by value (see docs/guide.md).
"""


class _GBDTBase(FittedAttributes, BaseEstimator):
    _objective = None
    _hyperparameters = {
        **{name: PARAMS[native] for name, native in _NATIVE.items()},
        "n_estimators": _hyper.ROUNDS, "early_stopping_rounds": Param(None, "optional_int", 1),
        "validation_fraction": Param(0.1, "float", 0.0, 1.0, low_open=True, high_open=True),
        "random_state": _hyper.SEED, "n_jobs": _hyper.JOBS, "verbose": _hyper.verbosity,
        "importance_type": Param("total_gain", "str", choices=tuple(_IMPORTANCE))}

    def __init__(self, *, n_estimators=100, learning_rate=0.1, max_depth=6, max_leaves=0,
                 grow_policy="depthwise", min_child_weight=1.0, min_child_samples=1,
                 gamma=0.0, reg_lambda=1.0, reg_alpha=0.0, max_delta_step=0.0, subsample=1.0,
                 subsample_freq=1, colsample_bytree=1.0, colsample_bynode=1.0, max_bin=255,
                 tree_method="hist", sketch_eps=0.03, sketch_sample_cnt=0,
                 use_quantized_grad=False,
                 boosting="newton", line_search="leaf",
                 early_stopping_rounds=None, validation_fraction=0.1, eval_metric=None,
                 base_score=None, random_state=None, n_jobs=None, verbose=False,
                 importance_type="total_gain", categorical_features="from_dtype"):
        self.categorical_features = categorical_features
        self.n_estimators = n_estimators
        self.learning_rate = learning_rate
        self.max_depth = max_depth
        self.max_leaves = max_leaves
        self.grow_policy = grow_policy
        self.min_child_weight = min_child_weight
        self.min_child_samples = min_child_samples
        self.gamma = gamma
        self.reg_lambda = reg_lambda
        self.reg_alpha = reg_alpha
        self.max_delta_step = max_delta_step
        self.subsample = subsample
        self.subsample_freq = subsample_freq
        self.colsample_bytree = colsample_bytree
        self.colsample_bynode = colsample_bynode
        self.max_bin = max_bin
        self.tree_method = tree_method
        self.sketch_eps = sketch_eps
        self.sketch_sample_cnt = sketch_sample_cnt
        self.use_quantized_grad = use_quantized_grad
        self.boosting = boosting
        self.line_search = line_search
        self.early_stopping_rounds = early_stopping_rounds
        self.validation_fraction = validation_fraction
        self.eval_metric = eval_metric
        self.base_score = base_score
        self.random_state = random_state
        self.n_jobs = n_jobs
        self.verbose = verbose
        self.importance_type = importance_type

    def __sklearn_tags__(self):
        tags = super().__sklearn_tags__()
        tags.input_tags.allow_nan = True
        tags.input_tags.sparse = True
        return tags

    def _native_params(self):
        """The one place where estimator parameters become ``train`` parameters."""
        params = {native: getattr(self, name) for name, native in _NATIVE.items()}
        if params["eval_metric"] is None:
            del params["eval_metric"]
        params.update(objective=self._objective, seed=seed_of(self.random_state),
                      nthread=0 if self.n_jobs is None else self.n_jobs,
                      verbosity=1 if self.verbose else 0)
        return params

    def _encode_y(self, y):
        y = np.asarray(y)
        return check_vector(y, y.shape[0] if y.ndim else 1, "y")

    def _check_X(self, X):
        if self._categorical(X) is not None:
            return self._frame(X, reset=False)
        return checked_data(self, X, reset=False, accept_sparse=["csr", "csc"],
                             ensure_all_finite=False, dtype=[np.float64, np.float32])

    def _categorical(self, X):
        """The ``categorical_feature`` list X trains with, or None (the numeric way):
        :func:`~boostwood.sklearn._hyper.categorical_spec`."""
        return _hyper.categorical_spec(self.categorical_features, X)

    def _frame(self, X, reset):
        """A frame with categorical columns, its names checked as scikit-learn checks
        them, and passed on as it is (the Dataset codes its categories)."""
        from sklearn.utils.validation import validate_data
        validate_data(self, X, reset=reset, skip_check_array=True)
        return X

    def fit(self, X, y, sample_weight=None, eval_set=None, sample_weight_eval_set=None,
            init_model=None, xgb_model=None):
        """Fit the model.

        Parameters
        ----------
        X : array-like or sparse matrix of shape (n_samples, n_features); NaN = missing
        y : array-like of shape (n_samples,)
        sample_weight : array-like of shape (n_samples,), optional
        eval_set : list of (X, y) pairs, optional
            Evaluated every round; the last one drives early stopping.
        sample_weight_eval_set : list of array-like, optional
        init_model, xgb_model : fitted estimator of this class, Booster or model path,
            optional
            Continue its training: its trees are kept and ``n_estimators`` more rounds
            are added (LightGBM's and XGBoost's names for it; give at most one). A
            classifier's classes must be the estimator's; a Booster or file has no class
            labels, so its outputs are taken as this data's classes in sorted order.
        """
        with kept_on_error(self):
            return self._fit(X, y, sample_weight, eval_set, sample_weight_eval_set,
                             self._init_booster(init_model, xgb_model))

    def _fit(self, X, y, sample_weight, eval_set, sample_weight_eval_set, init):
        _hyper.check_hyperparameters(self)
        categorical = self._categorical(X)
        if categorical is None:
            X, y = checked_data(self, X, y, accept_sparse=["csr", "csc"],
                                 ensure_all_finite=False, dtype=[np.float64, np.float32],
                                 y_numeric=self._objective != "_clf")
        else:
            X = self._frame(X, reset=True)
            y = _labels(y, X.shape[0])
        y = self._encode_y(y)
        sample_weight = self._weigh_classes(y, _check_sample_weight(sample_weight, X,
                                                                    dtype=np.float64))
        params = self._native_params()
        evals = []
        if eval_set is not None:
            if not isinstance(eval_set, (list, tuple)) or not all(
                    isinstance(p, (list, tuple)) and len(p) == 2 for p in eval_set):
                raise TypeError("eval_set must be a list of (X, y) pairs, e.g. "
                                "[(X_valid, y_valid)]")
            weights = sample_weight_eval_set or [None] * len(eval_set)
            if len(weights) != len(eval_set):
                raise ValueError("sample_weight_eval_set must have one entry per eval_set pair")
            for i, ((Xe, ye), we) in enumerate(zip(eval_set, weights)):
                evals.append((self._check_X(Xe), self._encode_y(np.asarray(ye)), we,
                              f"validation_{i}"))
        elif self.early_stopping_rounds is not None:
            X, Xv, y, yv, sample_weight, wv = train_test_split(
                X, y, sample_weight, test_size=self.validation_fraction,
                random_state=params["seed"], stratify=self._stratify(y))
            evals.append((Xv, yv, wv, "validation_0"))
        names = getattr(self, "feature_names_in_", None)
        names = None if names is None else [str(n) for n in names]
        dtrain = Dataset(X, y, weight=sample_weight, feature_names=names, max_bin=self.max_bin,
                         seed=params["seed"], categorical_feature=categorical or None)
        # every X of evals is checked (the split of X already was: checking it again
        # warned that it has no feature names)
        dsets = [(Dataset(Xe, ye, weight=we, feature_names=names, reference=dtrain), name)
                 for Xe, ye, we, name in evals]
        self.evals_result_ = {}
        self.booster_ = train(params, dtrain, num_boost_round=self.n_estimators, evals=dsets,
                              early_stopping_rounds=self.early_stopping_rounds,
                              verbose_eval=self.verbose, evals_result=self.evals_result_,
                              init_model=init)
        self.best_iteration_ = self.booster_.best_iteration
        self.best_score_ = self.booster_.best_score
        self.n_estimators_ = self.booster_.num_boosted_rounds()
        return self

    def _stratify(self, y):
        return None

    def _init_booster(self, init_model, xgb_model):
        """The Booster whose training ``fit`` continues (``init_model`` or ``xgb_model``:
        an estimator of this class, a Booster or a model file), or None."""
        if init_model is not None and xgb_model is not None:
            raise ValueError("give init_model or xgb_model (two names for one thing), not both")
        init = init_model if init_model is not None else xgb_model
        if init is None or isinstance(init, Booster):
            return init
        if isinstance(init, (str, os.PathLike)):
            return Booster(model_file=init)
        if isinstance(init, type(self)):
            check_is_fitted(init, "booster_")
            return init.booster_
        raise TypeError(f"init_model must be a fitted {type(self).__name__}, a Booster or a "
                        f"model path, got {type(init).__name__}")

    def _weigh_classes(self, y, sample_weight):
        return sample_weight

    def _raw(self, X, output_margin, iteration_range=None):
        check_is_fitted(self, "booster_")
        return self.booster_.predict(self._check_X(X), output_margin=output_margin,
                                     validate_features=False, iteration_range=iteration_range)

    def evals_result(self):
        """XGBoost's ``evals_result()``: the evaluation log of ``fit``,
        ``{"validation_0": {metric: [values]}}`` (a copy of ``evals_result_``)."""
        check_is_fitted(self, "booster_")
        if not self.evals_result_:
            raise ValueError("no evaluation result: fit had no eval_set (nor early stopping, "
                             "whose validation split is evaluated)")
        return {name: {m: list(v) for m, v in log.items()}
                for name, log in self.evals_result_.items()}

    def _staged_raw(self, X):
        """Per boosting round that ``predict`` uses (up to ``best_iteration_`` after early
        stopping, as scikit-learn's early-stopped models hold only those), the margins of
        the rounds so far, shape (n_samples, K): each round's trees' leaf values added in
        tree order to the base margins, the same additions as ``predict`` (the last stage
        equals it to the last bit). X is checked and converted once."""
        check_is_fitted(self, "booster_")
        b = self.booster_
        fm, _ = b._features_of(self._check_X(X), False)
        K = b.n_outputs
        raw = np.empty((fm.shape[0], K), dtype=np.float64)
        raw[:] = b.base_score
        for r in range(b._round_range(None)[1]):
            leaves = b._predict_matrix(fm, None, False, True, False, False, (r, r + 1))
            for k in range(K):
                raw[:, k] += b.trees[r * K + k].value[leaves[:, k]]
            yield raw

    def get_booster(self):
        """The fitted :class:`~boostwood.Booster` (XGBoost's name for ``booster_``)."""
        check_is_fitted(self, "booster_")
        return self.booster_

    def apply(self, X, iteration_range=None):
        """Leaf index of every sample in every tree, shape (n_samples, n_trees) (of the
        rounds ``iteration_range`` = (start, stop), else those ``predict`` uses)."""
        check_is_fitted(self, "booster_")
        return self.booster_.predict(self._check_X(X), pred_leaf=True, validate_features=False,
                                     iteration_range=iteration_range)

    @property
    def feature_importances_(self):
        """Each feature's ``importance_type`` (total gain by default) over its splits,
        normalised to sum to 1 (zeros if no split)."""
        check_is_fitted(self, "booster_")
        kind = check_value("importance_type", self.importance_type,
                           self._hyperparameters["importance_type"])  # (set after fit?)
        imp = self.booster_.feature_importance(_IMPORTANCE[kind])
        total = imp.sum()
        return imp / total if total > 0 else imp


def _check_objective(name, value):
    """An objective by XGBoost's name or LightGBM's (:func:`objective_name`)."""
    return check_value(name, objective_name(value), PARAMS["objective"])


#: The regressor's objective parameters, passed to ``train`` when given.
_OBJECTIVE_PARAMS = ("quantile_alpha", "huber_delta", "huber_slope", "tweedie_variance_power",
                     "poisson_max_delta_step")


class GBDTRegressor(RegressorMixin, _GBDTBase):
    __doc__ = "Gradient boosted trees for regression.\n" + _COMMON_DOC + """
    objective : str, default="reg:squarederror"
        Any ``reg:*`` or ``count:*`` objective of :func:`boostwood.train`, e.g.
        ``reg:absoluteerror``, ``reg:huber``, ``reg:quantileerror``, ``count:poisson``,
        ``reg:gamma``, ``reg:tweedie``, or LightGBM's name of one (``regression``,
        ``regression_l1``, ``poisson``, ...).
    quantile_alpha : float or list of float, optional
        ``reg:quantileerror`` level(s); with a list, :meth:`predict` returns one
        column per level (ascending), sorted per row.
    huber_delta : float, optional
        ``reg:huber``: where the loss turns from squared to absolute error (train's
        default 1.0).
    huber_slope : float, optional
        ``reg:pseudohubererror``: the pseudo-Huber loss's delta (XGBoost's name; train's
        default 1.0).
    tweedie_variance_power : float, optional
        ``reg:tweedie``: the variance power p, 1 < p < 2 (train's default 1.5).
    poisson_max_delta_step : float, optional
        ``count:poisson``: hessians e^(F + this); None: train's default 0.7 (LightGBM's and
        XGBoost's), 0: plain Newton.
    """

    def __init__(self, *, objective="reg:squarederror", quantile_alpha=None, huber_delta=None,
                 huber_slope=None, tweedie_variance_power=None, poisson_max_delta_step=None,
                 **kwargs):
        super().__init__(**kwargs)
        self.objective = objective
        self.quantile_alpha = quantile_alpha
        self.huber_delta = huber_delta
        self.huber_slope = huber_slope
        self.tweedie_variance_power = tweedie_variance_power
        self.poisson_max_delta_step = poisson_max_delta_step

    # scikit-learn reads the parameter names from the signature of __init__: the
    # regressor's own parameters followed by the shared ones of _GBDTBase
    __init__.__signature__ = inspect.Signature(
        list(inspect.signature(__init__).parameters.values())[:-1]
        + list(inspect.signature(_GBDTBase.__init__).parameters.values())[1:])
    _hyperparameters = {
        **_GBDTBase._hyperparameters,
        "objective": _check_objective,
        **{name: _hyper.optional(_hyper.param(PARAMS[name]))
           for name in _OBJECTIVE_PARAMS}}

    def _native_params(self):
        objective = objective_name(self.objective)  # LightGBM's names too
        if not isinstance(objective, str) or not objective.startswith(("reg:", "count:")):
            hint = (" (learning to rank is GBDTRanker's)" if str(objective).startswith(
                ("rank", "lambdarank")) else "")
            raise ValueError(f"GBDTRegressor needs a regression objective (reg:* or count:*), "
                             f"got {self.objective!r}{hint}")
        params = super()._native_params()
        params["objective"] = objective
        for name in _OBJECTIVE_PARAMS:
            if getattr(self, name) is not None:
                params[name] = getattr(self, name)
        return params

    def predict(self, X, output_margin=False, iteration_range=None):
        """Predicted values, shape (n_samples,) (or (n_samples, levels) for several
        quantiles); ``output_margin``: before the link (log of the mean under count:* and
        log-link objectives); ``iteration_range`` = (start, stop) rounds, else those up to
        ``best_iteration_``."""
        return self._raw(X, output_margin, iteration_range)

    def staged_predict(self, X):
        """Predictions after each boosting round that ``predict`` uses, as scikit-learn's
        gradient boosting yields them (the last one is ``predict``'s)."""
        for raw in self._staged_raw(X):
            yield self.booster_.objective.transform(raw.copy())


class GBDTClassifier(ClassifierMixin, _GBDTBase):
    __doc__ = "Gradient boosted trees for classification (logistic / softmax, Newton boosting).\n" \
              + _COMMON_DOC + """
    scale_pos_weight : float, default=1.0
        Binary problems: the rows of the second class (``classes_[1]``) weigh this much in
        the gradients (XGBoost's parameter); metrics are not reweighted.
    class_weight : dict, "balanced" or None, default=None
        Weights of the classes ({class label: weight}, 1 for a class not named;
        "balanced": n_samples / (n_classes * class count)), multiplied into
        ``sample_weight`` of the training rows, the validation split of early stopping
        included, as scikit-learn's and LightGBM's; an ``eval_set`` keeps its own weights.
    is_unbalance : bool, default=False
        Binary problems (LGBMClassifier's parameter): the rows of the rarer class weigh
        (majority rows / minority rows) times as much in the gradients, after
        ``class_weight``; not with ``scale_pos_weight``, and refused for more than two
        classes.

    Attributes
    ----------
    classes_ : ndarray of the class labels, in sorted order
    n_classes_ : int
    """
    _objective = "_clf"

    def __init__(self, *, scale_pos_weight=1.0, class_weight=None, is_unbalance=False,
                 **kwargs):
        super().__init__(**kwargs)
        self.scale_pos_weight = scale_pos_weight
        self.class_weight = class_weight
        self.is_unbalance = is_unbalance

    __init__.__signature__ = inspect.Signature(
        list(inspect.signature(__init__).parameters.values())[:-1]
        + list(inspect.signature(_GBDTBase.__init__).parameters.values())[1:])
    _hyperparameters = {**_GBDTBase._hyperparameters, **_hyper.CLASSIFIER,
                        "scale_pos_weight": _hyper.param(PARAMS["scale_pos_weight"]),
                        "is_unbalance": _hyper.param(PARAMS["is_unbalance"])}

    def _native_params(self):
        params = super()._native_params()
        if self.n_classes_ > 2:
            params.update(objective="multi:softprob", num_class=self.n_classes_)
        else:
            params["objective"] = "binary:logistic"
        params["scale_pos_weight"] = self.scale_pos_weight  # (binary only: train says so)
        params["is_unbalance"] = self.is_unbalance
        return params

    def fit(self, X, y, sample_weight=None, eval_set=None, sample_weight_eval_set=None,
            init_model=None, xgb_model=None):
        init = init_model if init_model is not None else xgb_model
        init_classes = getattr(init, "classes_", None) if isinstance(init, GBDTClassifier) \
            else None  # (read before this fit sets classes_: init may be self)
        with kept_on_error(self):
            check_classification_targets(y)
            self.classes_ = np.unique(np.asarray(y))
            self.n_classes_ = len(self.classes_)
            if self.n_classes_ < 2:
                raise ValueError("the classifier needs samples of at least 2 classes, but y "
                                 "holds only one class")
            if init_classes is not None and not np.array_equal(init_classes, self.classes_):
                raise ValueError(f"init_model was fitted on the classes "
                                 f"{init_classes.tolist()[:10]}, this data has "
                                 f"{self.classes_.tolist()[:10]}")
            return super().fit(X, y, sample_weight, eval_set, sample_weight_eval_set,
                               init_model, xgb_model)

    def _encode_y(self, y):
        y = np.asarray(y)
        if y.ndim == 2 and y.shape[1] == 1:
            y = y[:, 0]
        codes = np.searchsorted(self.classes_, y)
        codes = np.clip(codes, 0, len(self.classes_) - 1)
        if not np.all(self.classes_[codes] == y):
            unseen = np.unique(y[self.classes_[codes] != y])[:5]
            raise ValueError(f"y contains labels not seen in training: {unseen.tolist()}")
        return codes.astype(np.float64)

    def _stratify(self, y):
        return y


    def _weigh_classes(self, codes, sample_weight):
        """``sample_weight`` times the weight of each row's class (``class_weight``, as
        scikit-learn's ``compute_sample_weight`` gives it, which the tree estimators use)."""
        if self.class_weight is None:
            return sample_weight
        if isinstance(self.class_weight, dict):
            unknown = [k for k in self.class_weight if not np.any(self.classes_ == k)]
            if unknown:
                raise ValueError(f"class_weight names classes that are not in y: {unknown}")
        labels = self.classes_[codes.astype(np.int64)]
        return sample_weight * compute_sample_weight(self.class_weight, labels)

    def predict_proba(self, X, iteration_range=None):
        """Class probabilities, shape (n_samples, n_classes), of the rounds
        ``iteration_range`` = (start, stop), else those up to ``best_iteration_``."""
        check_is_fitted(self, "booster_")
        return _class_columns(self._raw(X, False, iteration_range))

    def decision_function(self, X, iteration_range=None):
        """The margins before the link, as scikit-learn's gradient boosting gives them:
        shape (n_samples,) with two classes (the log-odds of ``classes_[1]``), else
        (n_samples, n_classes) (the softmax's inputs). ``base_score`` included, as in
        XGBoost's ``predict(X, output_margin=True)``; ``iteration_range`` as in
        :meth:`predict_proba`."""
        check_is_fitted(self, "booster_")
        return self._raw(X, True, iteration_range)

    def staged_decision_function(self, X):
        """:meth:`decision_function` after each boosting round that ``predict`` uses."""
        for raw in self._staged_raw(X):
            yield raw[:, 0].copy() if raw.shape[1] == 1 else raw.copy()

    def predict(self, X, iteration_range=None, *, output_margin=False):
        """Predicted class labels, shape (n_samples,), or with ``output_margin`` (XGBoost's
        classifier's argument; a keyword here, as ``iteration_range`` comes second) the
        margins of :meth:`decision_function` (``iteration_range`` as in
        :meth:`predict_proba`)."""
        check_is_fitted(self, "booster_")
        if output_margin:
            return self.decision_function(X, iteration_range)
        return self.classes_[np.argmax(self.predict_proba(X, iteration_range), axis=1)]

    def staged_predict_proba(self, X):
        """Class probabilities after each boosting round that ``predict`` uses (the last
        one is ``predict_proba``'s)."""
        for raw in self._staged_raw(X):
            yield _class_columns(self.booster_.objective.transform(raw.copy()))

    def staged_predict(self, X):
        """Predicted classes after each boosting round."""
        for p in self.staged_predict_proba(X):
            yield self.classes_[np.argmax(p, axis=1)]


def _class_columns(p):
    """Probabilities as one column per class: P(classes_[1]) of a binary model becomes
    (1 - p, p)."""
    return np.column_stack([1.0 - p, p]) if p.ndim == 1 else p


class LeafEncoder(FittedAttributes, TransformerMixin, BaseEstimator):
    """GBDT leaf indices as sparse one-hot features (He et al. 2014, "Practical lessons from
    predicting clicks on ads at Facebook"; the notes' GBDT + LR).

    ``fit`` trains a boostwood GBDT; ``transform`` maps each row to the leaf it reaches
    in every tree, one binary column per leaf (so exactly ``n_trees`` ones per row),
    ready for a linear model such as ``LogisticRegression``.

    Parameters
    ----------
    estimator : GBDTClassifier or GBDTRegressor, optional
        The (unfitted) model whose trees make the features; it is cloned. Default:
        ``GBDTClassifier(n_estimators=100, max_depth=3, learning_rate=0.1)``.

    Attributes
    ----------
    estimator_ : the fitted GBDT
    n_leaves_ : ndarray of shape (n_trees,), leaves per tree
    """

    def __init__(self, estimator=None):
        self.estimator = estimator

    def __sklearn_tags__(self):
        tags = super().__sklearn_tags__()
        tags.input_tags.allow_nan = True  # the trees route NaN by their learned directions
        tags.input_tags.sparse = True
        return tags

    def fit(self, X, y, sample_weight=None):
        est = self.estimator
        if est is None:
            est = GBDTClassifier(n_estimators=100, max_depth=3, learning_rate=0.1)
        if not isinstance(est, _GBDTBase):
            raise TypeError(f"estimator must be a boostwood GBDTClassifier or GBDTRegressor, "
                            f"got {type(est).__name__}")
        self.estimator_ = clone(est).fit(X, y, sample_weight=sample_weight)
        trees = self.estimator_.booster_.trees
        self.n_features_in_ = self.estimator_.n_features_in_
        if hasattr(self.estimator_, "feature_names_in_"):
            self.feature_names_in_ = self.estimator_.feature_names_in_
        # column of (tree t, node id): leaves numbered in node order within each tree
        self._leaf_column = []
        offset = 0
        for t in trees:
            col = np.full(t.n_nodes, -1, dtype=np.int64)
            leaves = np.nonzero(t.feature < 0)[0]
            col[leaves] = offset + np.arange(leaves.size)
            offset += leaves.size
            self._leaf_column.append(col)
        self.n_leaves_ = np.array([t.n_leaves for t in trees], dtype=np.int64)
        return self

    def transform(self, X):
        """Sparse CSR matrix of shape (n_samples, total leaves), one 1 per tree and row."""
        from scipy import sparse
        check_is_fitted(self, "estimator_")
        leaves = self.estimator_.apply(X)
        n, T = leaves.shape
        cols = np.empty((n, T), dtype=np.int64)
        for t in range(T):
            cols[:, t] = self._leaf_column[t][leaves[:, t]]
        indptr = np.arange(0, n * T + 1, T, dtype=np.int64)
        return sparse.csr_matrix((np.ones(n * T), cols.ravel(), indptr),
                                 shape=(n, int(self.n_leaves_.sum())))

    def get_feature_names_out(self, input_features=None):
        """Names of the output columns, ``tree{t}_leaf{j}``. ``input_features``, when
        given, must be the fitted input's names (or as many names when it had none),
        as scikit-learn's transformers require; they do not change the output names."""
        check_is_fitted(self, "estimator_")
        if input_features is not None:
            given = np.asarray(input_features, dtype=object)
            if given.ndim != 1 or given.size != self.n_features_in_:
                raise ValueError(f"input_features should have length equal to the number "
                                 f"of features seen in fit ({self.n_features_in_}), got "
                                 f"{given.size}")
            names = getattr(self, "feature_names_in_", None)
            if names is not None and not np.array_equal(given, names):
                raise ValueError("input_features is not equal to feature_names_in_")
        return np.array([f"tree{t}_leaf{j}" for t, k in enumerate(self.n_leaves_)
                         for j in range(k)], dtype=object)


_labels = _hyper.labels_of
