"""The parameters of ``train``: defaults, aliases, types and ranges, in one table.

Names follow XGBoost; LightGBM's and scikit-learn's names for the same thing
are accepted as aliases. Unknown names and out-of-range values raise a
ValueError (with a "did you mean" when a known name is close).
"""
import difflib
import numbers
import warnings
from collections.abc import Mapping

from ..data.checks import INF, Param, check_value
from ..data.dataset import BINNING_PARAMS
from ..objectives import OBJECTIVES, Softmax
from ..tree.approx import MAX_APPROX_CANDIDATES
from ..tree.stats import MAX_QUANT_BINS

#: Most boosting rounds (LightGBM's int32 limit): beyond it a typo, not a plan.
MAX_ROUNDS = (1 << 31) - 1
#: ``train``'s and ``cv``'s default ``num_boost_round`` (XGBoost's).
DEFAULT_ROUNDS = 10

#: Learning to rank (the ``rank:*``, ``lambdarank`` and ``rank_xendcg`` objectives, and the
#: ranking metrics). Added with ranking: a model saves them only where they differ from
#: their defaults, so that every other model's file is what it was.
RANKING_PARAMS = {
    "lambdarank_pair_method": Param("topk", "str", choices=("topk", "mean"),
                                    doc="LambdaMART's pairs: every pair whose upper row ranks in "
                                        "the top k (by current score), or k pairs per row drawn "
                                        "at random among the rows of another label"),
    "lambdarank_num_pair_per_sample": Param(None, "optional_int", 1, 1 << 30,
                                            aliases=("lambdarank_truncation_level",),
                                            doc="k of lambdarank_pair_method: the top positions "
                                                "(default 32; 30 under LightGBM's 'lambdarank') "
                                                "or the pairs drawn per row (default 1)"),
    "ndcg_exp_gain": Param(True, "bool",
                           doc="NDCG's gain 2^y - 1 (integer labels up to 52), else the label "
                               "itself (any non-negative relevance, real-valued too)"),
    "label_gain": Param(None, "optional_float_list", 0.0, INF,
                        doc="NDCG's gain of each integer label 0, 1, ... (LightGBM's); "
                            "replaces ndcg_exp_gain"),
    "sigmoid": Param(1.0, "float", 0.0, INF, low_open=True,
                     doc="LambdaMART's sigma: the slope of the pair's logistic loss"),
    "lambdarank_normalization": Param(True, "bool", aliases=("lambdarank_norm",),
                                      doc="scale each query's gradients by log2(1 + L) / L, L the "
                                          "sum of its pairs' |lambda| (topk), or by 1/k (mean); "
                                          "LightGBM's lambdarank_norm also sets the next one"),
    "lambdarank_score_normalization": Param(True, "bool",
                                            doc="divide each pair's metric change by 0.01 + the "
                                                "gap of the two scores"),
    "lambdarank_ties": Param("expected", "str", choices=("expected", "input_order"),
                             doc="tied scores: every order of the tied rows counted alike (the "
                                 "gradients do not depend on the row order), or the rows' input "
                                 "order (LightGBM's and XGBoost's rule)"),
    "lambdarank_unbiased": Param(False, "bool",
                                 doc="learn the position bias of click data from the Dataset's "
                                     "position (lambdarank_bias_method says how)"),
    "lambdarank_bias_method": Param("additive", "str", choices=("additive", "ipw"),
                                    doc="lambdarank_unbiased: a score offset per position, "
                                        "learnt beside the trees and left out of the model "
                                        "(LightGBM's position bias), or inverse propensity "
                                        "weights of the pairs (XGBoost's Unbiased LambdaMART)"),
    "lambdarank_position_bias_regularization": Param(
        0.0, "float", 0.0, INF, doc="additive position bias: L2 penalty on the offsets "
                                    "(LightGBM's name)"),
    "lambdarank_bias_norm": Param(1.0, "float", 0.0, INF,
                                  doc="ipw position bias: the exponent p of the L_p "
                                      "regularisation, t = ratio^(1/(1+p)) (XGBoost's)"),
    "eval_at": Param(None, "optional_int_list", 1, 1 << 30,
                     aliases=("ndcg_eval_at", "ndcg_at", "map_eval_at", "map_at"),
                     doc="cut-offs of the metrics ndcg, map and mrr given without @k "
                         "(LightGBM's): one metric per cut-off"),
    "eval_ties": Param("expected", "str", choices=("expected", "input_order"),
                       doc="ranking metrics: the expected value over every order of tied "
                           "scores (scikit-learn's ndcg_score), or the input order's value"),
    "eval_empty_query": Param("skip", "str", choices=("skip", "one", "zero"),
                              doc="ranking metrics: a query without a relevant row is left out "
                                  "of the mean, or scores 1 (LightGBM, XGBoost), or 0 "
                                  "(scikit-learn; XGBoost's metric name ending in '-')"),
}

PARAMS = {
    "objective": Param("reg:squarederror", "str", choices=tuple(OBJECTIVES),
                       aliases=("objective_type", "app", "application", "loss"),
                       doc="loss function (XGBoost's names, or LightGBM's of the same loss)"),
    "num_class": Param(None, "optional_int", 2, 1 << 15, aliases=("num_classes",),
                       doc="classes of multi:softprob and multi:softmax"),
    "huber_delta": Param(1.0, "float", 0.0, INF, low_open=True,
                         doc="reg:huber: residual beyond which the loss is linear"),
    "huber_slope": Param(1.0, "float", 0.0, INF, low_open=True,
                         doc="reg:pseudohubererror: the scale d of the loss"),
    "quantile_alpha": Param(0.5, "float_or_list", 0.0, 1.0, low_open=True,
                            doc="reg:quantileerror: the quantile level in (0, 1), or a list of "
                                "levels trained together (sorted, non-crossing predictions)"),
    "tweedie_variance_power": Param(1.5, "float", 1.0, 2.0, low_open=True,
                                    doc="reg:tweedie: variance power p, in (1, 2)"),
    "poisson_max_delta_step": Param(0.7, "float", 0.0, 700.0,
                                    doc="count:poisson: the hessians are e^(F + this), not e^F, "
                                        "which damps each Newton step (LightGBM's name; it and "
                                        "XGBoost default to 0.7); 0: plain Newton"),
    **RANKING_PARAMS,
    "boosting": Param("newton", "str", choices=("newton", "gradient"),
                      aliases=("boosting_type", "boost"),
                      doc="newton: second-order trees (XGBoost; LightGBM's gbdt); gradient: "
                          "Friedman's first-order machine, least-squares trees with "
                          "line-searched leaves"),
    "line_search": Param("leaf", "str", choices=("leaf", "global", "none"),
                         doc="boosting='gradient': a line search per leaf (TreeBoost), one "
                             "step per tree, or none (step 1)"),
    "eta": Param(0.3, "float", 0.0, INF, low_open=True, aliases=("learning_rate", "shrinkage_rate"),
                 doc="shrinkage applied to every leaf value"),
    "max_depth": Param(6, "int", 0, aliases=(),
                       doc="maximum depth; 0 (LightGBM's -1) = unlimited (lossguide)"),
    "max_leaves": Param(0, "int", 0, aliases=("num_leaves", "max_leaf_nodes"),
                        doc="maximum leaves per tree; 0 = unlimited"),
    "grow_policy": Param("depthwise", "str", choices=("depthwise", "lossguide"),
                         doc="level by level, or best leaf first"),
    "tree_method": Param("hist", "str", choices=("hist", "exact", "approx"),
                         doc="split finding: histogram bins, exact greedy over sorted values, or "
                             "weighted-percentile candidates"),
    "sketch_eps": Param(0.03, "float", 0.0, 1.0, low_open=True,
                        doc="approx: about 1/sketch_eps candidate splits per feature"),
    "approx_proposal": Param("global", "str", choices=("global", "local"),
                             doc="approx: candidates re-proposed per tree or per node"),
    "sketch_sample_cnt": Param(0, "int", 0,
                               doc="approx (global proposals): propose from about this "
                                   "many rows, drawn by row id (the same rows on any number "
                                   "of shards); 0 = every row"),
    "min_child_weight": Param(1.0, "float", 0.0, aliases=("min_sum_hessian_in_leaf",),
                              doc="minimum hessian sum of a child"),
    "min_data_in_leaf": Param(1, "int", 0, aliases=("min_child_samples", "min_samples_leaf"),
                              doc="minimum number of rows of a child"),
    "gamma": Param(0.0, "float", 0.0, aliases=("min_split_loss",),
                   doc="gain a split must exceed (the cost of a leaf)"),
    "lambda": Param(1.0, "float", 0.0, aliases=("reg_lambda", "lambda_l2"), doc="L2 penalty on leaves"),
    "alpha": Param(0.0, "float", 0.0, aliases=("reg_alpha", "lambda_l1"), doc="L1 penalty on leaves"),
    "max_delta_step": Param(0.0, "float", 0.0, doc="clip of leaf values before shrinkage; 0 = none"),
    "scale_pos_weight": Param(1.0, "float", 0.0, INF, low_open=True, high_open=True,
                              doc="binary objectives and reg:logistic: the gradient, hessian "
                                  "and initial-margin share of a positive row (label 1) count "
                                  "this many times (XGBoost's name; LightGBM's for binary); "
                                  "metrics are not reweighted"),
    "is_unbalance": Param(False, "bool", aliases=("unbalance", "unbalanced_sets"),
                          doc="binary objectives (LightGBM's): the rarer class's rows count "
                              "(majority rows / minority rows) times; not with "
                              "scale_pos_weight"),
    "subsample": Param(1.0, "float", 0.0, 1.0, low_open=True, aliases=("bagging_fraction",),
                       doc="fraction of rows drawn per round"),
    "bagging_freq": Param(1, "int", 0, MAX_ROUNDS, aliases=("subsample_freq",),
                          doc="rounds a subsample bag is kept (LightGBM's): the bag is drawn "
                              "afresh every k-th round; 0 = no bagging (LightGBM's default, "
                              "where bagging_fraction alone does not bag; here the default is "
                              "XGBoost's, a new bag every round)"),
    "colsample_bytree": Param(1.0, "float", 0.0, 1.0, low_open=True, aliases=("feature_fraction",),
                              doc="fraction of features drawn per tree"),
    "colsample_bynode": Param(1.0, "float", 0.0, 1.0, low_open=True,
                              aliases=("feature_fraction_bynode",),
                              doc="fraction of the tree's features drawn per node"),
    **BINNING_PARAMS,  # (the Dataset's: it owns the binning)
    # categorical features (LightGBM's names and defaults; see _kernels/categorical.py)
    # one-vs-rest for every categorical feature by default: on seven data sets with string
    # columns (benchmarks/bench_categorical_quality.py, 5-fold CV) it was as good as or
    # better than LightGBM's sorted partitions (its default, 4) on all seven, and better
    # on five (taxis RMSE 1.33 against 1.44, titanic log loss 0.492 against 0.499), as
    # XGBoost's 72-data-set study found (next-features.md B.2); partitions overfit
    "max_cat_to_onehot": Param(1 << 16, "int", 1, 1 << 16,
                               doc="categorical features of at most this many categories "
                                   "split one category against the rest (the default: all "
                                   "of them); larger ones by a set of categories (sorted by "
                                   "G / (H + cat_smooth)); LightGBM's default is 4"),
    "cat_smooth": Param(10.0, "float", 0.0, doc="set splits: added to each category's hessian "
                                                 "sum in the sort key (damps rare categories)"),
    "cat_l2": Param(10.0, "float", 0.0, doc="set splits: L2 penalty added to lambda in the "
                                             "children's scores"),
    "max_cat_threshold": Param(32, "int", 1, 1 << 16,
                               doc="set splits: most categories on the smaller side"),
    "min_data_per_group": Param(100, "int", 0,
                                doc="set splits: fewest rows the categories of each side hold"),
    "min_data_per_category": Param(0, "int", 0,
                                   doc="set splits: a category of fewer rows in the node is "
                                       "no candidate (it stays right)"),
    "unseen_category": Param("missing", "str", choices=("missing", "error"),
                             doc="prediction on a category training never saw: 'missing' "
                                 "(it follows each split's missing direction) or 'error'"),
    "use_quantized_grad": Param(False, "bool",
                                doc="hist/approx: round gradients and hessians to a few levels "
                                    "per tree (num_grad_quant_bins) for faster histograms"),
    "num_grad_quant_bins": Param(16, "int", 2, MAX_QUANT_BINS,
                                 doc="use_quantized_grad: levels of the hessian; the gradient "
                                     "gets half as many on each side of zero"),
    "stochastic_rounding": Param(True, "bool",
                                 doc="use_quantized_grad: round at random, unbiased (else to "
                                     "the nearest level)"),
    "base_score": Param(None, "optional_float", doc="initial prediction; default: loss minimiser"),
    "eval_metric": Param(None, "metric", aliases=("metric", "metrics", "metric_types"),
                         doc="metric name or list of names"),
    "seed": Param(0, "int", None, aliases=("random_state", "random_seed"), doc="random seed"),
    "nthread": Param(0, "int", None, aliases=("n_jobs", "num_threads", "nthreads"),
                     doc="threads; 0 or negative = all cores"),
    "num_iterations": Param(None, "optional_int", 0, MAX_ROUNDS,
                            aliases=("num_iteration", "n_iter", "num_tree", "num_trees",
                                     "num_round", "num_rounds", "nrounds", "num_boost_round",
                                     "n_estimators", "max_iter"),
                            doc="boosting rounds given in params (LightGBM's): they replace "
                                "train's and cv's num_boost_round, with a warning where that "
                                "is not its default and differs"),
    "early_stopping_round": Param(None, "optional_int", 1,
                                  aliases=("early_stopping_rounds", "early_stopping",
                                           "n_iter_no_change"),
                                  doc="early stopping given in params (LightGBM's): as train's "
                                      "early_stopping_rounds, which must not say otherwise"),
    "verbosity": Param(1, "int", 0, 3, aliases=("verbose",),
                       doc="0 (LightGBM's -1) = silent"),
}

_ALIAS = {a: name for name, p in PARAMS.items() for a in p.aliases}


#: LightGBM's names for objectives boostwood has (with LightGBM's aliases of each): as
#: ``objective`` they mean the XGBoost-named objective here, which the model keeps.
LIGHTGBM_OBJECTIVES = {
    **dict.fromkeys(("regression", "regression_l2", "l2", "mean_squared_error", "mse",
                     "l2_root", "root_mean_squared_error", "rmse"), "reg:squarederror"),
    **dict.fromkeys(("regression_l1", "l1", "mean_absolute_error", "mae"),
                    "reg:absoluteerror"),
    "binary": "binary:logistic",
    **dict.fromkeys(("multiclass", "softmax"), "multi:softprob"),
    **dict.fromkeys(("cross_entropy", "xentropy"), "reg:logistic"),
    "poisson": "count:poisson", "gamma": "reg:gamma", "tweedie": "reg:tweedie",
    **dict.fromkeys(("xendcg", "xe_ndcg", "xe_ndcg_mart", "xendcg_mart"), "rank_xendcg"),
}
#: LightGBM objectives whose parameter (LightGBM's ``alpha``) has another name here, where
#: ``alpha`` is the L1 penalty: refused, with the way to write them.
_LIGHTGBM_RENAMED = {"quantile": ("reg:quantileerror", "quantile_alpha"),
                     "huber": ("reg:huber", "huber_delta")}


#: LightGBM's boosting modes boostwood has not, and what to use instead.
_LIGHTGBM_BOOSTING = {"rf": "boostwood.sklearn.RandomForestClassifier / Regressor",
                      "random_forest": "boostwood.sklearn.RandomForestClassifier / Regressor",
                      "dart": None, "goss": None}


def _lightgbm_value(name, value):
    """``value`` of parameter ``name`` as LightGBM writes it, in this library's terms:
    its objective names (:func:`objective_name`), ``boosting="gbdt"`` (second-order
    trees: ``newton``), ``max_depth=-1`` (no limit: 0 here), ``verbosity=-1`` (quiet:
    0 here) and ``early_stopping_round <= 0`` (off). Other values are returned as given,
    for the usual checks."""
    if name == "objective":
        return objective_name(value)
    if name == "boosting" and isinstance(value, str):
        if value in ("gbdt", "gbrt"):
            return "newton"
        if value in _LIGHTGBM_BOOSTING:
            use = _LIGHTGBM_BOOSTING[value]
            raise ValueError(f"LightGBM's boosting {value!r} is not a boosting mode here" +
                             (f"; use {use}" if use else " (not implemented)"))
    if name in ("max_depth", "verbosity") and _is_minus_one(value):
        return 0
    if name == "early_stopping_round" and _is_int(value) and value <= 0:
        return None  # LightGBM's default 0: off
    return value


def _is_int(value):
    return isinstance(value, numbers.Integral) and not isinstance(value, bool)


def _is_minus_one(value):
    """LightGBM's -1 ("no limit", "quiet"), as an integer."""
    return _is_int(value) and value == -1


def objective_name(value):
    """The objective ``value`` names: XGBoost's names as they are, LightGBM's (in any
    case, as LightGBM reads them: ``"Regression"``) as the same loss's XGBoost name
    (:data:`LIGHTGBM_OBJECTIVES`); anything else is left for the choices check, where
    XGBoost's names must be written as XGBoost writes them."""
    if not isinstance(value, str):
        return value
    lower = value.lower()  # LightGBM reads its names in any case; XGBoost's keep theirs
    if lower in _LIGHTGBM_RENAMED:
        name, param = _LIGHTGBM_RENAMED[lower]
        raise ValueError(f"LightGBM's objective {value!r} is objective={name!r} here, its "
                         f"alpha is {param!r} (alpha here is the L1 penalty, reg_alpha)")
    return LIGHTGBM_OBJECTIVES.get(lower, value)


def _canonical(key):
    if key in PARAMS:
        return key
    if key in _ALIAS:
        return _ALIAS[key]
    known = list(PARAMS) + list(_ALIAS)
    close = difflib.get_close_matches(key, known, n=1, cutoff=0.6)
    hint = f"; did you mean {close[0]!r}?" if close else ""
    raise ValueError(f"unknown parameter {key!r}{hint}")


#: The names under which a list of pairs may give several metrics.
_METRIC_KEYS = ("eval_metric", "metric", "metrics", "metric_types")


def _check_value(name, value):
    return check_value(name, value, PARAMS[name])


def as_param_dict(params):
    """User ``params`` as a new dict: a dict, None (no parameters), or XGBoost's list of
    ``(name, value)`` pairs, in which ``eval_metric`` may come several times (its metrics,
    in order) and any other name at most once."""
    if params is None:
        return {}
    if isinstance(params, Mapping):
        return dict(params)
    if not isinstance(params, (list, tuple)):
        raise TypeError(f"params must be a dict or a list of (name, value) pairs, got "
                        f"{type(params).__name__}")
    out = {}
    for item in params:
        if not (isinstance(item, (tuple, list)) and len(item) == 2 and isinstance(item[0], str)):
            raise TypeError(f"params as a list must hold (name, value) pairs, got {item!r}")
        key, value = item
        if key in out and key in _METRIC_KEYS:
            old = out[key] if isinstance(out[key], (list, tuple)) else [out[key]]
            out[key] = list(old) + (list(value) if isinstance(value, (list, tuple)) else [value])
        elif key in out:
            raise ValueError(f"parameter {key!r} given twice in the list of pairs (only "
                             "eval_metric may repeat)")
        else:
            out[key] = value
    return out


class Params(Mapping):
    """Resolved parameters: a read-only mapping of every canonical name of
    :data:`PARAMS` to its value, made once per ``train`` / ``cv`` by
    :func:`resolve_params` and read by the training state, the grower's record, the
    Booster and the model file.

    ``given`` names the parameters the user gave (the others hold their defaults);
    :meth:`replace` makes a changed copy, checked as the original was."""

    __slots__ = ("_values", "_given")

    def __init__(self, values, given):
        object.__setattr__(self, "_values", dict(values))
        object.__setattr__(self, "_given", frozenset(given))

    def __setattr__(self, name, value):
        raise AttributeError("resolved parameters are read-only: use replace()")

    __delattr__ = __setattr__

    def __getitem__(self, name):
        return self._values[name]

    def __iter__(self):
        return iter(self._values)

    def __len__(self):
        return len(self._values)

    def __repr__(self):
        return f"Params({self._values!r})"

    def __reduce__(self):  # (pickle and copy: __setattr__ refuses the default way)
        return Params, (self._values, sorted(self._given))

    @property
    def given(self):
        """The canonical names the user gave, a frozenset."""
        return self._given

    def non_default(self):
        """The parameters whose values differ from their defaults, a dict in
        :data:`PARAMS` order: what a model file records."""
        return {k: v for k, v in self._values.items() if v != PARAMS[k].default}

    def replace(self, **changes):
        """A copy with ``changes`` (canonical names or aliases, checked as given ones
        are); a name set to its default counts as not given."""
        values, given = dict(self._values), set(self._given)
        for key, value in changes.items():
            name = _canonical(key)
            values[name] = _check_value(name, _lightgbm_value(name, value))
            (given.discard if values[name] == PARAMS[name].default else given.add)(name)
        _check_combinations(values)
        return Params(values, given)


def resolve_params(params):
    """Validate user parameters and fill in defaults.

    Parameters
    ----------
    params : dict, list of (name, value) pairs, Params or None
        Keys are canonical names or aliases (see :func:`as_param_dict` for the pairs).
        Resolved parameters (a :class:`Params`) are returned as they are.

    Returns
    -------
    Params, with every canonical name of :data:`PARAMS`.
    """
    if isinstance(params, Params):
        return params
    params = as_param_dict(params)
    params.pop("_given", None)  # (resolved parameters as a dict before Params existed)
    given = {}
    for key, value in params.items():
        if not isinstance(key, str):
            raise TypeError(f"parameter names must be strings, got {key!r}")
        name = _canonical(key)
        value = _check_value(name, _lightgbm_value(name, value))
        if name in given and given[name][1] != value:
            raise ValueError(f"parameter {name!r} given twice with different values "
                             f"({given[name][0]}={given[name][1]!r}, {key}={value!r})")
        given[name] = (key, value)
    out = {name: spec.default for name, spec in PARAMS.items()}
    out.update({name: v for name, (_, v) in given.items()})
    if objective_name(out["objective"]) == "lambdarank" and "lambdarank_score_normalization" \
            not in given and given.get("lambdarank_normalization", ("",))[0] == "lambdarank_norm":
        # LightGBM's lambdarank_norm switches both normalisations (a rule of that name,
        # not of the value: resolved parameters resolve again to themselves)
        out["lambdarank_score_normalization"] = out["lambdarank_normalization"]
    _warn_lightgbm_defaults(params, given)
    _check_combinations(out)
    return Params(out, given)


def _warn_lightgbm_defaults(params, given):
    """Warn where a LightGBM user's parameters train something else here than in
    LightGBM because a default differs: ``bagging_fraction`` without ``bagging_freq``
    (LightGBM does not bag then, here every round) and ``max_depth=-1`` without
    ``grow_policy`` (LightGBM grows leaf-wise, here depth-wise)."""
    if "subsample" in given and given["subsample"][0] == "bagging_fraction" \
            and given["subsample"][1] < 1.0 and "bagging_freq" not in given:
        warnings.warn("bagging_fraction without bagging_freq: LightGBM does not bag then; "
                      "here a new bag is drawn every round (bagging_freq=1). Give "
                      "bagging_freq to say which", UserWarning, stacklevel=4)
    if "max_depth" in given and _is_minus_one(params[given["max_depth"][0]]) \
            and "grow_policy" not in given:
        warnings.warn("max_depth=-1 (LightGBM's no limit) grows depth-wise here, XGBoost's "
                      "default; LightGBM grows leaf-wise: grow_policy='lossguide' gives its "
                      "trees", UserWarning, stacklevel=4)


def rounds_and_patience(p, num_boost_round, early_stopping_rounds, stacklevel=3):
    """The boosting rounds and early-stopping patience of a run with resolved parameters
    ``p`` and the arguments of ``train``/``cv``: LightGBM's ``num_iterations`` in params
    replaces ``num_boost_round`` (as LightGBM's do; a warning where the argument is not
    its default, :data:`DEFAULT_ROUNDS`, and says otherwise); ``early_stopping_round`` in
    params is the argument's default, and the two given with different values are an
    error."""
    rounds, patience = num_boost_round, early_stopping_rounds
    if p["num_iterations"] is not None:
        if num_boost_round not in (DEFAULT_ROUNDS, p["num_iterations"]):
            warnings.warn(f"num_iterations={p['num_iterations']} in params replaces "
                          f"num_boost_round={num_boost_round} (params win, as in LightGBM)",
                          UserWarning, stacklevel=stacklevel)
        rounds = p["num_iterations"]
    if p["early_stopping_round"] is not None:
        if patience is not None and patience != p["early_stopping_round"]:
            raise ValueError(f"early_stopping_rounds={patience} and early_stopping_round="
                             f"{p['early_stopping_round']} in params disagree: give one")
        patience = p["early_stopping_round"]
    return rounds, patience


def model_params(params):
    """Resolved ``params`` (a :class:`Params`) without what steers one run rather than
    the model (the rounds and early stopping given in params): what a Booster keeps, so
    that training again from its ``params`` does not inherit them."""
    return params.replace(num_iterations=None, early_stopping_round=None)


def replace_param(params, name, value):
    """A copy of user ``params`` with ``name`` (a canonical name) set to ``value``, any
    alias of it given there dropped (so the two cannot disagree); resolved parameters
    give resolved parameters (:meth:`Params.replace`)."""
    if name not in PARAMS:
        raise ValueError(f"{name!r} is not a canonical parameter name")
    if isinstance(params, Params):
        return params.replace(**{name: value})

    def same(key):
        return isinstance(key, str) and (key in PARAMS or key in _ALIAS) \
            and _canonical(key) == name

    out = {k: v for k, v in as_param_dict(params).items() if not same(k)}
    out[name] = value
    return out


def binning_args(p):
    """The Dataset binning arguments (``max_bin``, ``bin_construct_sample_cnt``, ``seed``)
    that resolved parameters ``p`` give explicitly: pass them to ``Dataset`` to bin once."""
    return {k: p[k] for k in ("max_bin", "bin_construct_sample_cnt", "seed") if k in p.given}


def _check_combinations(p):
    multiclass = issubclass(OBJECTIVES[p["objective"]], Softmax)
    if multiclass and p["num_class"] is None:
        raise ValueError(f"objective {p['objective']!r} needs the parameter num_class")
    if not multiclass and p["num_class"] not in (None, 1):
        raise ValueError(f"num_class is only used by multi:softprob and multi:softmax, not "
                         f"{p['objective']!r}")
    alphas = p["quantile_alpha"] if isinstance(p["quantile_alpha"], list) else [p["quantile_alpha"]]
    if max(alphas) >= 1.0:
        raise ValueError(f"parameter 'quantile_alpha' must be in (0, 1), got {p['quantile_alpha']}")
    if p["tweedie_variance_power"] >= 2.0:
        raise ValueError("parameter 'tweedie_variance_power' must be in (1, 2), got "
                         f"{p['tweedie_variance_power']}")
    if p["use_quantized_grad"] and (p["tree_method"] == "exact" or (
            p["tree_method"] == "approx" and p["approx_proposal"] == "local")):
        raise ValueError("use_quantized_grad speeds up histograms: use tree_method 'hist' or "
                         "'approx' with global proposals")
    if p["tree_method"] == "approx" and p["approx_proposal"] == "global" \
            and p["sketch_eps"] < 1.0 / MAX_APPROX_CANDIDATES:
        raise ValueError(f"parameter 'sketch_eps' must be at least 1/{MAX_APPROX_CANDIDATES} "
                         f"with global approx proposals (about 1/sketch_eps candidate splits "
                         f"per feature, at most {MAX_APPROX_CANDIDATES}), got {p['sketch_eps']}")
    if p["max_depth"] == 0 and p["max_leaves"] == 0:
        raise ValueError("max_depth=0 or -1 (unlimited) needs max_leaves (num_leaves) > 0 to "
                         "bound the tree size")
