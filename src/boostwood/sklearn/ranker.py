"""``GBDTRanker``: learning to rank as a scikit-learn estimator.

``fit`` takes the rows' queries as LightGBM's ``group`` (sizes of contiguous queries)
or XGBoost's ``qid`` (a query id per row, in any order); ``predict`` returns scores,
which order rows within a query; ``score`` is the mean NDCG over queries. ``qid`` and
``group`` are declared to scikit-learn's metadata routing, so that
``cross_validate(GBDTRanker().set_fit_request(qid=True).set_score_request(qid=True), X,
y, groups=qid, cv=GroupKFold(), params={"qid": qid})`` keeps queries whole and scores
each fold by query.
"""
import inspect

import numpy as np
from sklearn.utils.validation import _check_sample_weight, check_is_fitted

from ..boosting import train
from ..boosting.metrics import get_metric
from ..boosting.params import PARAMS, objective_name
from ..boosting.rank_metrics import is_ranking_metric, metric_names
from ..data import Dataset
from ..data.checks import check_value
from ..data.queries import queries_from
from ..data.rowinfo import RowInfo
from ..objectives import OBJECTIVES, Ranking
from . import _hyper
from ._hyper import checked_data, kept_on_error
from .gbdt import _COMMON_DOC, _GBDTBase, _labels

#: The ranker's objective parameters, passed to ``train`` when given.
_RANKING_PARAMS = ("lambdarank_pair_method", "lambdarank_num_pair_per_sample",
                   "ndcg_exp_gain", "label_gain", "lambdarank_unbiased", "eval_ties",
                   "eval_empty_query")


def _check_ranking_objective(name, value):
    value = check_value(name, objective_name(value), PARAMS["objective"])
    if not issubclass(OBJECTIVES[value], Ranking):
        raise ValueError(f"GBDTRanker needs a ranking objective (rank:ndcg, rank:map, "
                         f"rank:pairwise, lambdarank, rank_xendcg), got {value!r}")
    return value


class GBDTRanker(_GBDTBase):
    __doc__ = "Gradient boosted trees for learning to rank (LambdaMART).\n" + _COMMON_DOC + """
    objective : str, default="rank:ndcg"
        ``rank:ndcg`` (LambdaMART on NDCG), ``rank:map``, ``rank:pairwise``, or
        LightGBM's ``lambdarank`` and ``rank_xendcg``.
    lambdarank_pair_method : {"topk", "mean"}, optional
        LambdaMART's pairs (train's default "topk").
    lambdarank_num_pair_per_sample : int, optional
        The top positions of "topk" (32; 30 under ``lambdarank``), or the pairs per row
        of "mean" (1).
    ndcg_exp_gain : bool, optional
        Gain 2^y - 1 (default) or y (real-valued relevance).
    label_gain : list of float, optional
        The gain of each integer label (LightGBM's).
    lambdarank_unbiased : bool, optional
        Learn the position bias of click data; ``fit`` then needs ``position``.
    eval_ties : {"expected", "input_order"}, optional
        The ranking metrics' tie rule (default: every order of tied scores alike).
    eval_empty_query : {"skip", "one", "zero"}, optional
        How the metrics count a query without a relevant row (default: left out).

    ``eval_metric`` defaults to ``ndcg@10`` (``map@10`` for ``rank:map``), early stopping
    included, and ``score``; their ties and queries without a relevant row follow
    ``eval_ties`` and ``eval_empty_query``.
    """

    def __init__(self, *, objective="rank:ndcg", lambdarank_pair_method=None,
                 lambdarank_num_pair_per_sample=None, ndcg_exp_gain=None, label_gain=None,
                 lambdarank_unbiased=None, eval_ties=None, eval_empty_query=None,
                 **kwargs):
        super().__init__(**kwargs)
        self.objective = objective
        self.lambdarank_pair_method = lambdarank_pair_method
        self.lambdarank_num_pair_per_sample = lambdarank_num_pair_per_sample
        self.ndcg_exp_gain = ndcg_exp_gain
        self.label_gain = label_gain
        self.lambdarank_unbiased = lambdarank_unbiased
        self.eval_ties = eval_ties
        self.eval_empty_query = eval_empty_query

    __init__.__signature__ = inspect.Signature(
        list(inspect.signature(__init__).parameters.values())[:-1]
        + list(inspect.signature(_GBDTBase.__init__).parameters.values())[1:])
    _hyperparameters = {
        **_GBDTBase._hyperparameters,
        "objective": _check_ranking_objective,
        **{name: _hyper.optional(_hyper.param(PARAMS[name])) for name in _RANKING_PARAMS}}

    def _native_params(self):
        params = super()._native_params()
        params["objective"] = _check_ranking_objective("objective", self.objective)
        for name in _RANKING_PARAMS:
            if getattr(self, name) is not None:
                params[name] = getattr(self, name)
        return params

    def fit(self, X, y, *, group=None, qid=None, sample_weight=None, group_weight=None,
            position=None, eval_set=None, eval_group=None, eval_qid=None,
            sample_weight_eval_set=None, init_model=None, xgb_model=None):
        """Fit the ranker.

        Parameters
        ----------
        X : array-like or sparse matrix of shape (n_samples, n_features); NaN = missing
        y : array-like of shape (n_samples,); relevance labels (integers 0, 1, ... with the
            default exponential gain)
        group : array-like of int, optional
            Sizes of the queries, whose rows are contiguous and in order (LightGBM's).
        qid : array-like of shape (n_samples,), optional
            Each row's query id (XGBoost's), in any order. Give ``group`` or ``qid``.
        sample_weight : array-like of shape (n_samples,), optional
            Per-row weights (LightGBM's meaning).
        group_weight : array-like of shape (n_queries,), optional
            Per-query weights (XGBoost's meaning), in the order of ``group`` or of the
            sorted ``qid`` values.
        position : array-like of int of shape (n_samples,), optional
            The position each row was shown at (``lambdarank_unbiased``).
        eval_set : list of (X, y) pairs, optional
            Evaluated every round; the last one drives early stopping.
        eval_group, eval_qid : list of array-like, optional
            The queries of each ``eval_set`` pair (one list entry per pair).
        sample_weight_eval_set : list of array-like, optional
        init_model, xgb_model : fitted GBDTRanker, Booster or model path, optional
            Continue its training.

        Without ``eval_set``, ``early_stopping_rounds`` holds out ``validation_fraction``
        of the queries (whole queries, drawn with ``random_state``).
        """
        with kept_on_error(self):
            init = self._init_booster(init_model, xgb_model)
            _hyper.check_hyperparameters(self)
            categorical = self._categorical(X)
            if categorical is None:
                X, y = checked_data(self, X, y, accept_sparse=["csr", "csc"],
                                    ensure_all_finite=False, dtype=[np.float64, np.float32],
                                    y_numeric=True)
            else:  # a frame with categorical columns: the Dataset codes them
                X, y = self._frame(X, reset=True), _labels(y, X.shape[0])
            y = self._encode_y(y)
            if group is None and qid is None:
                raise ValueError("GBDTRanker.fit needs the query of every row: group= (query "
                                 "sizes) or qid= (a query id per row)")
            weight = None if sample_weight is None else \
                _check_sample_weight(sample_weight, X, dtype=np.float64)
            params = self._native_params()
            names = getattr(self, "feature_names_in_", None)
            names = None if names is None else [str(n) for n in names]
            dtrain = Dataset(X, y, weight=weight, feature_names=names, max_bin=self.max_bin,
                             seed=params["seed"], group=group, qid=qid,
                             group_weight=group_weight, position=position,
                             categorical_feature=categorical or None)
            evals = self._eval_datasets(eval_set, eval_group, eval_qid,
                                        sample_weight_eval_set, names, dtrain)
            if not evals and self.early_stopping_rounds is not None:
                dtrain, held = self._hold_out(dtrain, params["seed"])
                evals = [(held, "validation_0")]
            self.evals_result_ = {}
            self.booster_ = train(params, dtrain, num_boost_round=self.n_estimators,
                                  evals=evals, early_stopping_rounds=self.early_stopping_rounds,
                                  verbose_eval=self.verbose, evals_result=self.evals_result_,
                                  init_model=init)
            self.best_iteration_ = self.booster_.best_iteration
            self.best_score_ = self.booster_.best_score
            self.n_estimators_ = self.booster_.num_boosted_rounds()
            return self

    def _eval_datasets(self, eval_set, eval_group, eval_qid, weights, names, dtrain):
        if eval_set is None:
            for name, value in (("eval_group", eval_group), ("eval_qid", eval_qid)):
                if value is not None:
                    raise ValueError(f"{name} was given without eval_set")
            return []
        if not isinstance(eval_set, (list, tuple)) or not all(
                isinstance(p, (list, tuple)) and len(p) == 2 for p in eval_set):
            raise TypeError("eval_set must be a list of (X, y) pairs, e.g. [(X_valid, y_valid)]")
        n = len(eval_set)
        lists = {}
        for name, value in (("eval_group", eval_group), ("eval_qid", eval_qid),
                            ("sample_weight_eval_set", weights)):
            if value is not None and (not isinstance(value, (list, tuple)) or len(value) != n):
                raise ValueError(f"{name} must be a list with one entry per eval_set pair ({n})")
            lists[name] = [None] * n if value is None else list(value)
        out = []
        for i, (Xe, ye) in enumerate(eval_set):
            if lists["eval_group"][i] is None and lists["eval_qid"][i] is None:
                raise ValueError(f"eval_set[{i}] needs its queries: eval_group or eval_qid")
            out.append((Dataset(self._check_X(Xe), self._encode_y(np.asarray(ye)),
                                weight=lists["sample_weight_eval_set"][i], feature_names=names,
                                reference=dtrain, group=lists["eval_group"][i],
                                qid=lists["eval_qid"][i]), f"validation_{i}"))
        return out

    def _hold_out(self, dtrain, seed):
        """(training, validation) Datasets: ``validation_fraction`` of the queries held out."""
        q = dtrain.queries
        n_held = int(np.ceil(self.validation_fraction * q.n_queries))
        if q.n_queries < 2 or n_held >= q.n_queries:
            raise ValueError(f"early stopping holds out {self.validation_fraction} of the "
                             f"{q.n_queries} queries, which leaves none to train or to "
                             "validate on: give an eval_set, or more queries")
        held = np.zeros(q.n_queries, dtype=bool)
        held[np.random.default_rng(seed).permutation(q.n_queries)[:n_held]] = True
        of_row = q.query_of_rows(dtrain.num_row())
        train_rows = np.flatnonzero(~held[of_row])
        part = dtrain.subset(train_rows)
        return part, dtrain.subset(np.flatnonzero(held[of_row]), reference=part)

    def predict(self, X, output_margin=False, iteration_range=None):
        """Scores, shape (n_samples,): within a query, higher ranks first (the rounds of
        ``iteration_range`` = (start, stop), else those up to ``best_iteration_``)."""
        return self._raw(X, output_margin, iteration_range)

    def score(self, X, y, *, group=None, qid=None, sample_weight=None):
        """The mean over the queries of ``X`` (``group`` or ``qid``, as in :meth:`fit`) of
        the first ranking metric of ``eval_metric`` (as ``eval_at`` cuts it), else of the
        objective's (NDCG@10; MAP@10 for ``rank:map``); ties averaged,
        queries without a relevant row skipped (the training run's ``eval_*`` rules).
        ``sample_weight``: per-row weights; a query weighs its rows' mean weight."""
        check_is_fitted(self, "booster_")
        pred = self.predict(X)
        y = self._encode_y(np.asarray(y))
        if y.shape[0] != pred.shape[0]:
            raise ValueError(f"y has {y.shape[0]} entries, X {pred.shape[0]} rows")
        if group is None and qid is None:
            raise ValueError("GBDTRanker.score ranks rows within queries: give group= or "
                             "qid= (with metadata routing: set_score_request(qid=True))")
        queries = queries_from(y.shape[0], group, qid)
        weight = None if sample_weight is None else \
            _check_sample_weight(sample_weight, pred[:, None], dtype=np.float64)
        names = metric_names(self.booster_.params, self.booster_.objective)
        name = next((m for m in names if is_ranking_metric(m)), "ndcg@10")
        metric = get_metric(name, self.booster_.params)
        metric.check(y, 1)
        return metric.evaluate(RowInfo.of(y, weight, queries=queries), pred)
