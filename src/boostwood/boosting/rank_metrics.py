"""Ranking metrics: NDCG, MAP and MRR, whole or @k, per query.

Each query gets its value (:func:`boostwood._kernels.rank.query_metric`); the metric is
their weighted mean, whose numerator and weight are exact sums across shards (so the
value is the same whatever the row order, the thread count or the sharding).

Rules, each a parameter of the training run (see ``docs/parameters.md``):

* **Ties** (``eval_ties``): ``"expected"`` (default) is the metric's expectation over
  every order of rows with tied scores, which for NDCG is scikit-learn's tie-averaged
  DCG (``ndcg_score(ignore_ties=False)``): reversing a query's rows never changes it.
  ``"input_order"`` ranks tied rows in their input order (LightGBM's and XGBoost's rule).
* **Queries without a relevant row** (IDCG = 0; for MAP and MRR no label > 0),
  ``eval_empty_query``: ``"skip"`` (default) leaves them out of the mean; ``"one"``
  scores them 1 (LightGBM, XGBoost); ``"zero"`` scores them 0 (scikit-learn). A metric
  name ending in ``-`` (XGBoost's ``ndcg@10-``) scores them 0 too.
* **Gain**: NDCG's gain is the training run's (``ndcg_exp_gain``, ``label_gain``):
  2^y - 1 by default. Relevant, for MAP and MRR: label > 0.
* **Weights**: a query weighs its ``group_weight``, else the mean weight of its rows
  (LightGBM's rule; 1 without weights).
"""
import numpy as np

from .._kernels.rank import M_MAP, M_MRR, M_NDCG, TIES_EXPECTED, TIES_INPUT, query_metric
from .metrics import Metric, _column_totals

#: Ranking metric names (with LightGBM's aliases) and the kernel's metric.
RANKING_METRICS = {"ndcg": M_NDCG, "map": M_MAP, "mean_average_precision": M_MAP,
                   "mrr": M_MRR}
#: LightGBM's metric names for NDCG (its ranking objectives' names).
_NDCG_ALIASES = ("lambdarank", "rank_xendcg", "xendcg", "xe_ndcg", "xe_ndcg_mart",
                 "xendcg_mart")


def is_ranking_metric(name):
    """Whether ``name`` (``base``, ``base@k``, either with a trailing ``-``) is one here."""
    base = name.rstrip("-").partition("@")[0]
    return base in RANKING_METRICS or base in _NDCG_ALIASES


def expand_eval_at(names, params):
    """LightGBM's ``eval_at``: each ranking metric named without ``@k`` becomes one
    metric per cut-off (``ndcg`` with eval_at [1, 3] -> ``ndcg@1``, ``ndcg@3``); without
    eval_at the names are as given (``ndcg``: the whole ranking, XGBoost's meaning)."""
    cuts = (params or {}).get("eval_at")
    if not cuts:
        return list(names)
    out = []
    for name in names:
        if is_ranking_metric(name) and "@" not in name:
            dash = "-" if name.endswith("-") else ""
            out.extend(f"{name.rstrip('-')}@{k}{dash}" for k in cuts)
        else:
            out.append(name)
    return out


def metric_names(params, objective, names=None):
    """The metrics a model evaluates: ``names`` if given, else its ``eval_metric``, else
    its objective's default, each ranking metric without ``@k`` cut by ``eval_at``."""
    return expand_eval_at(names or params["eval_metric"] or [objective.default_metric],
                          params)


class RankingMetric(Metric):
    """NDCG, MAP or MRR of the rows' queries, @k or whole (see the module docstring)."""

    higher_better = True
    labels = "nonnegative"

    def __init__(self, name, params=None):
        p = params or {}
        self.name = name
        zero = name.endswith("-")
        base, _, cut = name.rstrip("-").partition("@")
        self.kind = RANKING_METRICS.get(base, M_NDCG)
        self.k = 0
        if cut:
            try:
                self.k = int(cut)
            except ValueError:
                self.k = -1
            if self.k < 1:
                raise ValueError(f"eval_metric {name!r}: the cut-off after '@' must be a "
                                 f"positive integer, got {cut!r}")
        self.empty = "zero" if zero else p.get("eval_empty_query", "skip")
        self.ties = TIES_INPUT if p.get("eval_ties", "expected") == "input_order" \
            else TIES_EXPECTED
        self.exp_gain = bool(p.get("ndcg_exp_gain", True))
        gain = p.get("label_gain")
        self.table = np.zeros(0) if gain is None else np.asarray(gain, dtype=np.float64)

    def check(self, y, n_outputs):
        super().check(y, n_outputs)
        y = np.asarray(y)
        if self.kind == M_NDCG and self.table.shape[0] and (
                np.any(y != np.round(y)) or np.any(y >= self.table.shape[0])):
            raise ValueError(f"eval_metric {self.name!r}: label_gain has "
                             f"{self.table.shape[0]} entries, so labels must be integers "
                             f"0..{self.table.shape[0] - 1}")

    def query_values(self, info, pred):
        """(value, defined) per query of ``info.queries`` at predictions ``pred``."""
        q = info.queries
        if q is None:
            raise ValueError(f"eval_metric {self.name!r} ranks rows within queries: give the "
                             "Dataset group= or qid=")
        values = np.empty(q.n_queries)
        defined = np.empty(q.n_queries, dtype=np.bool_)
        query_metric(np.ascontiguousarray(pred, dtype=np.float64).reshape(-1),
                     np.ascontiguousarray(info.label, dtype=np.float64), q.ptr, q.order,
                     self.kind, self.k, self.exp_gain, self.table, self.ties, values, defined)
        return values, defined

    def query_weights(self, info):
        """Each query's weight: its group weight, else its rows' mean weight."""
        q = info.queries
        if q.weight is not None:
            return q.weight
        w = info.weight
        if w.strides[0] == 0 or q.n_queries == 0:  # unit weights
            return np.full(q.n_queries, float(w[0]) if w.shape[0] else 1.0)
        return np.add.reduceat(w[q.order], q.ptr[:-1]) / q.sizes()

    def evaluate(self, info, pred, reducer=None):
        values, defined = self.query_values(info, pred)
        weight = self.query_weights(info)
        if self.empty == "skip":
            weight = np.where(defined, weight, 0.0)
        else:
            values = np.where(defined, values, 1.0 if self.empty == "one" else 0.0)
        cols = np.empty((values.shape[0], 2))
        cols[:, 0] = values * weight
        cols[:, 1] = weight
        return float(self.finalize(*_column_totals(cols, reducer)))


def ranking_metric(name, params=None):
    """The ranking metric called ``name`` (LightGBM's ``lambdarank`` etc. mean NDCG)."""
    base = name.rstrip("-").partition("@")[0]
    if base in _NDCG_ALIASES:
        metric = RankingMetric("ndcg" + name.rstrip("-")[len(base):]
                               + ("-" if name.endswith("-") else ""), params)
        metric.name = name
        return metric
    return RankingMetric(name, params)
