"""Booster: a fitted additive tree model. Predicts, explains itself, saves and loads."""
import copy
import os

import numba
import numpy as np

from .._version import __version__
from .._config import threads_given_back
from .._kernels.predict import predict_leaf_raw, predict_levels, predict_raw
from .._kernels.predict_binned import predict_binned
from .._kernels.predict_masks import predict_masks
from ..data import Dataset, as_feature_matrix
from ..data.categories import recode
from ..data.validation import as_compiled, check_vector, coded_features
from ..data.dataset import default_feature_names
from ..data.checks import Param, check_value
from ..objectives import get_objective
from ..tree import Tree
from ..tree.tree import feature_importance as tree_importance, pack_trees
from . import dump, explain, model_io
from .metrics import custom_metric_values, get_metric
from .params import Params, objective_name, resolve_params
from .rank_metrics import metric_names



class Booster:
    """An additive model of regression trees: ``F(x) = base_score + sum_t f_t(x)``.

    Parameters
    ----------
    params : dict, optional
        Training parameters (kept for reference and for prediction threads).
    model_file : str or os.PathLike, optional
        Load a model saved with :meth:`save_model`.

    Attributes
    ----------
    params : Params, the resolved parameters (a read-only mapping of every parameter's
        name to its value; ``params.replace(...)`` gives a changed copy)
    trees : list of Tree, round-major: round ``r`` owns ``trees[r*K:(r+1)*K]``
        for ``K`` outputs (classes of multi:softprob and multi:softmax, else 1)
    base_score : ndarray of shape (K,), the initial margins
    best_iteration : int or None, the best round found by early stopping (0-based)
    best_score : float or None
    feature_names : list of str
    feature_types : list of str, "numeric" or "categorical" per feature
    category_dictionaries : dict, feature index -> list of category labels (the label
        of category code c is entry c); empty while no feature is categorical
    """

    def __init__(self, params=None, model_file=None):
        self.params = resolve_params(params)
        self.trees = []
        self.base_score = None
        self.best_iteration = None
        self.best_score = None
        self.feature_names = None
        self.n_features = None
        self._packed = {}
        self._set_objective()
        if model_file is not None:
            self.load_model(model_file)

    def __getstate__(self):
        # the packed trees are a cache of the trees (a categorical forest's leaf-mask
        # tables take MiBs): rebuilt on the first prediction, never pickled or sent
        return dict(self.__dict__, _packed={})

    def __setstate__(self, state):
        # a Booster pickled before parameters were a Params record kept a dict
        if not isinstance(state.get("params"), Params):
            state["params"] = resolve_params(state["params"])
        self.__dict__.update(state)

    def _set_objective(self):
        self.objective = get_objective(self.params["objective"], self.params["num_class"],
                                       self.params)
        self.n_outputs = self.objective.n_outputs

    # -- building (used by train) ------------------------------------------------------------
    def _start(self, base_score, feature_names):
        self.base_score = np.asarray(base_score, dtype=np.float64)
        self.feature_names = list(feature_names)
        self.n_features = len(feature_names)
        self.feature_types = ["numeric"] * self.n_features
        self.category_dictionaries = {}
        self.trees = []
        self._packed = {}

    def _take_feature_types(self, other):
        """The feature types and category dictionaries of ``other`` (a slice, a continued
        model: :meth:`_start` makes every feature numeric)."""
        self.feature_types = list(other.feature_types)
        self.category_dictionaries = {f: list(v) for f, v in other.category_dictionaries.items()}

    def _append_round(self, trees):
        self.trees.extend(trees)
        self._packed = {}

    def num_boosted_rounds(self):
        """Number of boosting rounds in the model."""
        return len(self.trees) // self.n_outputs

    def __len__(self):
        return self.num_boosted_rounds()

    def __getitem__(self, item):
        """A new Booster with the rounds ``item`` (a slice of rounds, step 1)."""
        def whole(v):
            return v is None or (isinstance(v, (int, np.integer))
                                 and not isinstance(v, (bool, np.bool_)))
        if not isinstance(item, slice) or not all(map(whole, (item.start, item.stop,
                                                              item.step))) \
                or item.step not in (None, 1):
            raise TypeError(f"a Booster can only be sliced by rounds, with integers and step "
                            f"1, e.g. booster[:50]; got {item!r}")
        start, stop, _ = item.indices(self.num_boosted_rounds())
        out = Booster(self.params)
        out._start(self.base_score, self.feature_names)
        out._take_feature_types(self)
        K = self.n_outputs
        out.trees = self.trees[start * K: max(start, stop) * K]
        return out

    # -- prediction ------------------------------------------------------------------------
    def _round_range(self, iteration_range):
        n = self.num_boosted_rounds()
        if iteration_range is None:
            if self.best_iteration is not None:
                return 0, min(self.best_iteration + 1, n)
            return 0, n
        if not isinstance(iteration_range, (tuple, list)) or len(iteration_range) != 2 \
                or not all(isinstance(v, (int, np.integer)) and not isinstance(v, (bool, np.bool_))
                           for v in iteration_range):
            raise TypeError(f"iteration_range must be a pair of integers (start, stop), got "
                            f"{iteration_range!r}")
        start, stop = (int(v) for v in iteration_range)
        if stop == 0:
            stop = n
        if not 0 <= start <= stop <= n:
            raise ValueError(f"iteration_range {iteration_range} is out of [0, {n}]")
        return int(start), int(stop)

    def _pack(self, start, stop):
        key = (start, stop)
        if key not in self._packed:
            K = self.n_outputs
            trees = self.trees[start * K: stop * K]
            # every input is recoded by the dictionaries (_features_of): codes or NaN
            coded = all(int(f) in self.category_dictionaries
                        for t in trees for f in t.feature[t.split_kind != 0])
            self._packed = {key: pack_trees(trees, K, coded=coded)}
        return self._packed[key]

    @staticmethod
    def _add_trees(packed, X, out):
        """Add the packed trees' values to ``out``: the leaf-mask walk for forests with
        category sets (of features the model's dictionaries code) whose trees have at
        most 256 leaves and whose tables fit ``tree.MAX_MASK_BYTES``, else the binned
        walk where the forest allows it (numeric splits, and such category sets), else
        the level walk (balanced trees, with category sets or without), else node by
        node -- the same sums, to the last bit, by any."""
        args = (packed["value"], packed["offsets"], packed["group"], out)
        if packed["masks"] is not None:
            predict_masks(as_compiled(X), *packed["masks"], packed["group"], out,
                          numba.get_num_threads())
        elif packed["binned"] is not None:
            predict_binned(as_compiled(X), *packed["binned"], *args, packed["binned_sets"],
                           numba.get_num_threads())
        elif packed["levels"] is not None:
            predict_levels(X, packed["levels"], *args, packed["level_sets"])
        else:
            predict_raw(X, packed["nodes"], *args)

    def _split_points(self):
        """(features, thresholds) of every split of the model (thresholds None when a
        split is not a threshold on the value)."""
        feats = [t.feature[t.feature >= 0] for t in self.trees]
        if any(np.any(t.cat_len) for t in self.trees):
            return np.concatenate(feats or [np.zeros(0, np.int64)]), None
        thresholds = [t.threshold[t.feature >= 0] for t in self.trees]
        return (np.concatenate(feats or [np.zeros(0, np.int64)]),
                np.concatenate(thresholds or [np.zeros(0)]))

    def _features_of(self, data, validate_features):
        if isinstance(data, Dataset):
            fm, base_margin = data.features_for_splits(*self._split_points()), data.base_margin
        else:
            fm = self._coded_frame(data) if self.category_dictionaries else None
            if fm is not None:
                return fm, None
            fm, base_margin = as_feature_matrix(data, "data", allow_empty_rows=True), None
        if fm.shape[1] != self.n_features:
            raise ValueError(f"data has {fm.shape[1]} features but the model was trained on "
                             f"{self.n_features}")
        if validate_features:
            fm = self._check_names(fm)
        if self.category_dictionaries or fm.categories:  # by name, then by value
            fm = recode(fm, self.category_dictionaries, self.params["unseen_category"],
                        names=self.feature_names)
        return fm, base_margin

    def _coded_frame(self, data):
        """``data`` coded by the model's dictionaries in one pass where it is a frame of
        the model's columns (:func:`~boostwood.data.validation.coded_features`); None
        where the general path must decide."""
        return coded_features(data, self.feature_names, self.category_dictionaries)

    def _check_names(self, fm):
        """``fm`` with its columns in the model's order, selected by name when it has the
        model's names in another order; data whose columns could only be matched to the
        model's by a guess is refused."""
        if fm.feature_names is None:
            # columns matched by position to named features would be a guess: an error,
            # as XGBoost's DMatrix gives (only names f0, f1, ... mean "no names")
            if self.feature_names != default_feature_names(self.n_features):
                raise ValueError(
                    f"data has no feature names, but the model was trained on named "
                    f"features {self.feature_names[:5]}...; give the data those names (a "
                    "DataFrame with those columns, or Dataset(feature_names=...)), or pass "
                    "validate_features=False to match the columns by position")
        elif list(fm.feature_names) != self.feature_names:
            if sorted(fm.feature_names) != sorted(self.feature_names):
                raise ValueError(self._names_differ(list(fm.feature_names)))
            where = {name: j for j, name in enumerate(fm.feature_names)}
            return fm.take_columns([where[name] for name in self.feature_names])
        return fm

    def _names_differ(self, names):
        """The error for data whose feature names are not the model's: how they differ,
        and the way out."""
        unnamed = self.feature_names == default_feature_names(self.n_features)
        theirs, ours = set(names), set(self.feature_names)
        if unnamed:
            how = (f"the model was trained without feature names, and the data's columns "
                   f"are named {_some(names)}; matching them by position would be a guess")
        else:
            missing = [n for n in self.feature_names if n not in theirs]
            extra = [n for n in names if n not in ours]
            how = f"the model's features {_some(missing)} are not in the data" + (
                f", which has {_some(extra)} instead" if extra else "")
        return (f"data's feature names differ from the model's: {how}. Pass "
                f"validate_features=False to match the columns by position"
                + (" (or the data as an array without names)" if unnamed else ""))

    def predict(self, data, output_margin=False, pred_leaf=False, pred_contribs=False,
                pred_interactions=False, iteration_range=None, validate_features=True):
        """Predict for ``data`` (Dataset, numpy array, pandas or polars DataFrame, Arrow
        table or sparse matrix).

        Parameters
        ----------
        output_margin : bool, default=False
            Return raw margins F(x) instead of transformed predictions.
        pred_leaf : bool, default=False
            Return the leaf node id of each row in each tree, shape (n_rows, n_trees).
        pred_contribs : bool, default=False
            Return SHAP values by exact path-dependent TreeSHAP (Lundberg et al. 2020),
            shape (n_rows, n_features + 1) -- or (n_rows, K, n_features + 1) for K
            outputs -- whose last column is the bias (the expected margin); each row
            sums to its margin.
        pred_interactions : bool, default=False
            Return SHAP interaction values, shape (n_rows, n_features + 1,
            n_features + 1) (or with a K axis after the rows): off-diagonal entries
            split each pairwise interaction in two halves, the diagonal holds the
            main effects, and [M, M] the bias; each row's matrix sums to its margin.
        iteration_range : (int, int), optional
            Use rounds [start, stop). Default: up to ``best_iteration`` when early
            stopping set it, else every round.
        validate_features : bool, default=True
            Check the data's feature names against the model's. Names that differ are an
            error, and so is data without names (a numpy array, a Dataset given none) for
            a model trained on named features, since its columns could only be matched by
            position; ``False`` matches them by position.

        Returns
        -------
        ndarray of shape (n_rows,) for single-output objectives and multi:softmax (class
        ids), (n_rows, K) for multi:softprob, or (n_rows, n_trees) int32 with
        ``pred_leaf``.
        """
        if self.base_score is None:
            raise ValueError("this Booster has no model; train it or load one first")
        for name, flag in (("output_margin", output_margin), ("pred_leaf", pred_leaf),
                           ("pred_contribs", pred_contribs),
                           ("pred_interactions", pred_interactions),
                           ("validate_features", validate_features)):
            if not isinstance(flag, (bool, np.bool_)):
                raise TypeError(f"{name} must be True or False, got {flag!r}")
        if pred_leaf + pred_contribs + pred_interactions > 1:  # which one was meant?
            raise ValueError("one kind of prediction at a time: pred_leaf, pred_contribs "
                             "and pred_interactions exclude each other")
        fm, base_margin = self._features_of(data, validate_features)
        return self._predict_matrix(fm, base_margin, output_margin, pred_leaf, pred_contribs,
                                    pred_interactions, iteration_range)

    def _predict_matrix(self, fm, base_margin, output_margin, pred_leaf, pred_contribs,
                        pred_interactions, iteration_range):
        """The predictions of ``predict`` on this model's ``nthread`` threads (numba's
        count given back after: the call's own)."""
        with threads_given_back(self.params["nthread"]):
            return self._predict_rows(fm, base_margin, output_margin, pred_leaf, pred_contribs,
                                      pred_interactions, iteration_range)

    def _predict_rows(self, fm, base_margin, output_margin, pred_leaf, pred_contribs,
                      pred_interactions, iteration_range):
        start, stop = self._round_range(iteration_range)
        packed = self._pack(start, stop)
        n_rows = fm.shape[0]
        if pred_contribs or pred_interactions:
            out = explain.contributions(self, fm, base_margin, start, stop,
                                        interactions=bool(pred_interactions))
            return out[:, 0] if self.n_outputs == 1 else out
        if pred_leaf:
            out = np.zeros((n_rows, len(packed["offsets"])), dtype=np.int32)
            for s, X in fm.row_chunks():
                predict_leaf_raw(X, packed["nodes"], packed["offsets"], out[s:s + X.shape[0]])
            return out
        raw = np.empty((n_rows, self.n_outputs), dtype=np.float64)
        if base_margin is not None:
            raw[:] = base_margin.reshape(n_rows, -1)
        else:
            raw[:] = self.base_score
        for s, X in fm.row_chunks():
            self._add_trees(packed, X, raw[s:s + X.shape[0]])
        if output_margin:
            return raw[:, 0] if self.n_outputs == 1 else raw
        return self.objective.transform(raw)

    def _metric_predictions(self, data, iteration_range=None, validate_features=False):
        """Predictions on the scale the metrics read (:meth:`Objective.eval_transform`:
        probabilities where ``predict`` gives class ids or margins)."""
        raw = self.predict(data, output_margin=True, iteration_range=iteration_range,
                           validate_features=validate_features)
        return self._metric_scale(raw)

    def _metric_scale(self, raw):
        """``predict``'s margins (shape (n,) or (n, K)) on the scale the metrics read."""
        return self.objective.eval_transform(raw.reshape(raw.shape[0], self.n_outputs))

    def inplace_predict(self, data, iteration_range=None, predict_type="value",
                        missing=np.nan, validate_features=True, base_margin=None):
        """XGBoost's ``inplace_predict``: :meth:`predict` of a numpy array, DataFrame, Arrow
        table or sparse matrix (no Dataset) with ``predict_type`` "value" (transformed)
        or "margin"; entries equal to ``missing`` (besides NaN) are missing values, and
        ``base_margin`` (shape (n_rows,) or (n_rows, K)) replaces ``base_score``."""
        check_value("predict_type", predict_type, Param("value", "str",
                                                        choices=("value", "margin")))
        check_value("validate_features", validate_features, Param(True, "bool"))
        if isinstance(data, Dataset):
            raise TypeError("inplace_predict takes the data itself, not a Dataset; use "
                            "predict for a Dataset")
        if self.base_score is None:
            raise ValueError("this Booster has no model; train it or load one first")
        fm, _ = self._features_of(data, validate_features)
        if not (isinstance(missing, (int, float, np.number)) and not isinstance(missing, bool)):
            raise TypeError(f"missing must be a number, got {missing!r}")
        if not np.isnan(missing):
            fm = fm.with_missing(float(missing))
        if base_margin is not None:
            base_margin = check_vector(base_margin, fm.shape[0], "base_margin", allow_2d=True)
            if base_margin.size != fm.shape[0] * self.n_outputs:
                raise ValueError(f"base_margin has {base_margin.size} values for "
                                 f"{fm.shape[0]} rows and {self.n_outputs} outputs")
        return self._predict_matrix(fm, base_margin, predict_type == "margin", False, False,
                                    False, iteration_range)

    def eval_set(self, evals, iteration=0, feval=None, output_margin=True,
                 iteration_range=None):
        """XGBoost's ``eval_set``: the model's metrics (its ``eval_metric``, else the
        objective's) for each ``(Dataset, name)`` pair of ``evals``, as the line
        ``"[iteration]\tname-metric:value..."`` (values to the last digit; ``iteration``
        only labels the line).

        The rounds are those :meth:`predict` uses (up to ``best_iteration`` after early
        stopping), or ``iteration_range``; XGBoost's evaluates every tree. ``feval(preds,
        dataset)`` returns ``(name, value)`` or a list of them; ``preds`` are the margins,
        as XGBoost's gives them, or with ``output_margin=False`` what the built-in metrics
        read (what :func:`train`'s ``custom_metric`` gets)."""
        if self.base_score is None:
            raise ValueError("this Booster has no model; train it or load one first")
        check_value("iteration", iteration, Param(0, "int", 0))
        check_value("output_margin", output_margin, Param(False, "bool"))
        if not isinstance(evals, (list, tuple)) or not all(
                isinstance(e, (list, tuple)) and len(e) == 2 and isinstance(e[0], Dataset)
                and isinstance(e[1], str) for e in evals):
            raise TypeError("evals must be a list of (Dataset, name) pairs")
        if feval is not None and not callable(feval):
            raise TypeError(f"feval must be callable, got {type(feval).__name__}")
        metrics = [get_metric(m, self.params)
                   for m in metric_names(self.params, self.objective)]
        parts = []
        for d, name in evals:
            if d.label is None:
                raise ValueError(f"evals set {name!r} has no label to evaluate against")
            y = self.objective.check_labels(np.asarray(d.label, dtype=np.float64))
            info = d.row_info(y)
            raw = self.predict(d, output_margin=True, iteration_range=iteration_range)
            pred = self._metric_scale(raw)
            for m in metrics:
                try:
                    m.check(y, 1 if pred.ndim == 1 else pred.shape[1])
                    parts.append(f"{name}-{m.name}:{m.evaluate(info, pred)!r}")
                except ValueError as exc:
                    raise ValueError(f"evals set {name!r}: {exc}") from None
            if feval is not None:
                for metric, value in custom_metric_values(
                        feval(raw if output_margin else pred, d), "feval"):
                    parts.append(f"{name}-{metric}:{value!r}")
        return f"[{iteration}]\t" + "\t".join(parts)

    def eval(self, data, name="eval", iteration=0):
        """XGBoost's ``eval``: :meth:`eval_set` of the one set ``data`` named ``name``."""
        return self.eval_set([(data, name)], iteration)

    def num_features(self):
        """Number of features the model was trained on."""
        return self.n_features

    def copy(self):
        """An independent copy of this Booster."""
        return copy.deepcopy(self)

    # -- importance --------------------------------------------------------------------------
    def feature_importance(self, importance_type="gain"):
        """Importance of each feature, shape (n_features,).

        ``split``: number of splits on the feature; ``total_gain`` / ``total_cover``:
        sum over those splits of the gain (eq. 7 of Chen & Guestrin) / of the
        hessian sum of the split node; ``gain`` / ``cover``: the same averaged
        per split (XGBoost's convention).

        The notes' Influence_j = (1/M) sum over the M trees of the gains of the
        splits on j (004, variable importance) is
        ``feature_importance("total_gain") / len(booster.trees)``.
        """
        return tree_importance(self.trees, self.n_features, importance_type)

    # -- looking inside ------------------------------------------------------------------------
    def dump_model(self, fout=None, format="text", with_stats=True):
        """The trees as text (XGBoost's dump style) or JSON (nested nodes); written to
        ``fout`` when given, and returned. See :mod:`boostwood.boosting.dump`."""
        if fout is not None and not isinstance(fout, (str, os.PathLike)):
            raise TypeError(f"fout must be a path, got {type(fout).__name__}")
        check_value("with_stats", with_stats, Param(True, "bool"))
        return dump.dump_model(self, fout, format, with_stats)

    def trees_to_dataframe(self):
        """Every node of every tree as one row of a pandas DataFrame."""
        return dump.trees_to_dataframe(self)

    def export_text(self, tree_index=0, decimals=3):
        """Tree ``tree_index`` as indented rules (scikit-learn's ``export_text`` style)."""
        check_value("tree_index", tree_index, Param(0, "int", 0, len(self.trees), high_open=True))
        check_value("decimals", decimals, Param(3, "int", 0, 17))
        return dump.export_text(self.trees[tree_index], self.feature_names, decimals,
                                labels=self.category_dictionaries)

    def partial_dependence(self, feature, grid, iteration_range=None):
        """Partial dependence of the margin on one feature at the values ``grid``, by the
        recursion over the trees (Friedman 2001, sec. 8.2): at splits on ``feature`` a
        grid value goes its way, elsewhere both ways weighted by the training cover.
        Returns shape (len(grid),) or (len(grid), K). For a categorical feature the grid
        holds category values (looked up in the model's dictionary; one it lacks is an
        error)."""
        check_value("feature", feature, Param(0, "int", 0, self.n_features, high_open=True))
        start, stop = self._round_range(iteration_range)
        if feature in self.category_dictionaries:
            grid = self._category_codes(feature, grid)
        return explain.partial_dependence(self, feature, grid, start, stop)

    def _category_codes(self, feature, values):
        """The codes of category values of a categorical feature (unknown ones: error)."""
        index = {v: c for c, v in enumerate(self.category_dictionaries[feature])}
        values = list(np.atleast_1d(np.asarray(values, dtype=object)))
        unknown = [v for v in values if v not in index]
        if unknown:
            raise ValueError(f"feature {self.feature_names[feature]!r} has no categories "
                             f"{unknown[:5]} in the model")
        return np.array([index[v] for v in values], dtype=np.float64)

    def get_score(self, importance_type="gain"):
        """Importance as ``{feature_name: value}`` for features used in at least one split."""
        imp = self.feature_importance(importance_type)
        used = self.feature_importance("split") > 0
        return {n: float(v) for n, v, u in zip(self.feature_names, imp, used) if u}

    # -- persistence ---------------------------------------------------------------------------
    def _to_dict(self):
        K = self.n_outputs
        # (the parameters that differ from their defaults, as format version 3 records
        # them: a parameter added later, at its default, leaves every file as it was)
        params = self.params.non_default()
        trees = []
        for i, t in enumerate(self.trees):
            d = t.to_dict()
            d["threshold"] = model_io.encode_float_list(d["threshold"])
            d["group"] = i % K
            trees.append(d)
        return {"boostwood_version": __version__, "objective": self.params["objective"],
                "num_class": self.params["num_class"], "n_outputs": K,
                "n_features": self.n_features, "feature_names": self.feature_names,
                "base_score": self.base_score.tolist(), "params": params,
                "best_iteration": self.best_iteration, "best_score": self.best_score,
                "feature_types": list(self.feature_types),
                "category_dictionaries": {str(f): list(v) for f, v in
                                          sorted(self.category_dictionaries.items())},
                "certificates": {}, "trees": trees}

    def save_model(self, fname):
        """Save to a JSON file (atomically: a crash never leaves a half-written file)."""
        _check_path(fname)
        if self.base_score is None:
            raise ValueError("this Booster has no model to save")
        model_io.write_atomic(fname, model_io.dumps(self._to_dict()))

    def load_model(self, fname):
        """Load a model written by :meth:`save_model`, replacing this Booster's content."""
        source = _check_path(fname)
        loaded = Booster()  # a file that fails validation leaves this Booster as it was
        model, version = model_io.read_model(model_io.read_text(source), source)
        loaded._from_dict(model, source, version)
        self.__dict__.update(loaded.__dict__)
        return self

    def _from_dict(self, m, source, version=model_io.FORMAT_VERSION):
        model_io.check_header(m, source)
        try:
            params = m["params"]  # (version 3: those not at their defaults)
            self.params = resolve_params(_grown_as(params) if version < 3 else params)
        except (TypeError, ValueError) as exc:
            raise ValueError(f"{source} has invalid params: {exc}") from None
        self._set_objective()
        p = self.params
        if (m["objective"], m["num_class"], m["n_outputs"]) != \
                (p["objective"], p["num_class"], self.n_outputs):
            raise ValueError(
                f"{source}: its objective {m['objective']!r} (num_class {m['num_class']}, "
                f"{m['n_outputs']} outputs) disagrees with its params ({p['objective']!r}, "
                f"num_class {p['num_class']}, {self.n_outputs} outputs)")
        n_features, names, trees_raw = m["n_features"], m["feature_names"], m["trees"]
        base = np.asarray(m["base_score"], dtype=np.float64)
        if base.shape != (self.n_outputs,):
            raise ValueError(f"{source}: base_score has {base.size} values for "
                             f"{self.n_outputs} outputs")
        if len(trees_raw) % self.n_outputs:
            raise ValueError(f"{source}: the number of trees is not a multiple of {self.n_outputs}")
        best_iteration = m["best_iteration"]
        if best_iteration is not None and best_iteration >= len(trees_raw) // self.n_outputs:
            raise ValueError(f"{source}: best_iteration {best_iteration} is past the model's "
                             f"{len(trees_raw) // self.n_outputs} rounds")
        trees = []
        for i, d in enumerate(trees_raw):
            if not isinstance(d, dict) or d.get("group") != i % self.n_outputs:
                raise ValueError(f"{source}: tree {i} is malformed or out of order")
            try:
                trees.append(Tree.from_dict(d, n_features))
            except ValueError as exc:
                raise ValueError(f"{source}: tree {i}: {exc}") from None
        _check_output_bounds(base, trees, self.n_outputs, source)
        types, dictionaries = model_io.read_feature_types(m, n_features, source)
        model_io.check_certificates(m, source)
        for i, t in enumerate(trees):
            cat_features = t.feature[t.split_kind == 1]
            if any(types[f] != "categorical" for f in cat_features):
                raise ValueError(f"{source}: tree {i} has a categorical split on a numeric feature")
        self._start(base, names)
        self.feature_types, self.category_dictionaries = types, dictionaries
        self.trees = trees
        self.best_iteration = best_iteration
        self.best_score = m["best_score"]


#: Largest output bound a loaded model may have (see :func:`_check_output_bounds`):
#: far above any model training makes, far enough below float64's 1.8e308 that sums
#: over features and interaction pairs stay finite.
OUTPUT_BOUND = 1e300


def _check_output_bounds(base, trees, n_outputs, source):
    """Refuse a model whose predictions or SHAP values could be infinite though each of
    its numbers is finite (an edited file, checksum mended): per output, the base
    score plus twice the sum of its trees' largest leaf magnitudes bounds every margin
    and every SHAP value; per tree, its largest cover times its largest leaf bounds the
    cover-weighted sums of the expected value."""
    bound = np.abs(base).astype(np.float64)
    for i, t in enumerate(trees):
        top = float(np.max(np.abs(t.value), initial=0.0))
        bound[i % n_outputs] += 2.0 * top
        if not float(np.max(t.cover, initial=0.0)) * top < OUTPUT_BOUND:
            raise ValueError(f"{source}: tree {i}'s covers times its leaf values overflow "
                             "(not a model training makes: an edited file?)")
    if not np.all(bound < OUTPUT_BOUND):
        raise ValueError(f"{source}: its base score and leaf values can add up to an "
                         f"infinite prediction (bound {float(np.max(bound)):.3g}; not a model "
                         "training makes: an edited file?)")


def _check_path(fname):
    """A model file's path as a string (a file descriptor or a buffer is not one)."""
    if not isinstance(fname, (str, os.PathLike)):
        raise TypeError(f"fname must be a path (str or os.PathLike), got {type(fname).__name__}")
    return os.fspath(fname)


def _some(names, k=5):
    """The first ``k`` of ``names`` for a message, with "..." where there are more."""
    return f"{names[:k]}" + ("..." if len(names) > k else "")


def _grown_as(params):
    """A format 1 or 2 model's parameters as it was grown: a ``count:poisson`` model saved before
    ``poisson_max_delta_step`` existed (every newer file holds it) took plain Newton
    steps, so it reads as 0, not as today's default 0.7 (which saving it again would
    then record as how it was grown)."""
    if isinstance(params, dict) and "poisson_max_delta_step" not in params and \
            objective_name(params.get("objective")) == "count:poisson":
        return dict(params, poisson_max_delta_step=0.0)
    return params

