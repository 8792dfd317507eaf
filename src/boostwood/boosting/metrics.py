"""Evaluation metrics.

An additive metric gives per-row terms whose exact totals, summed across data
shards by the reducer, ``finalize`` turns into the reported value. AUC is not
additive: with several shards, every shard's rows (ids, labels, predictions, weights)
go to the reducer's meeting point only, which computes the value on all rows in global
row order and hands every shard that one number (:func:`boostwood._comm.combine`).
Predictions passed in are on the scale metrics read (the objective's
``eval_transform``: probabilities for classification, also under multi:softmax and
binary:logitraw), labels as the objective sees them.
"""
import numbers

import numpy as np

from .._comm import combine, exact_sums_of_finite
from .._kernels.loss import binary_logloss_columns, log_factorial
from .._kernels.sort import argsort_stable, auc_of_sorted, sorted_pairs
from ..data.rowinfo import RowInfo

_EPS = 1e-15


class Metric:
    """A named metric.

    An additive metric gives per-row ``terms`` (a numerator and a weight per row);
    their totals are exact sums (:mod:`boostwood._kernels.exact_sum`) passed through
    the reducer before ``finalize`` turns them into the value, so the value is the
    same whatever the row order or the sharding.

    Attributes
    ----------
    name : str
    higher_better : bool, direction used by early stopping
    additive : bool, whether the value is a function of per-row sums
    labels : str or None, the labels the metric is defined for (checked by
        :meth:`check`): "unit" (in [0, 1]: 0/1, or probabilities), "classes" (class ids
        0..K-1 of K prediction columns), "nonnegative", "positive", "above_minus_one",
        or None (any)
    """

    name = None
    higher_better = False
    additive = True
    labels = None

    def n_columns(self, n_outputs):
        """The prediction columns the metric reads from a model of ``n_outputs`` margins,
        or None when it cannot read that model's predictions."""
        return 1 if n_outputs == 1 else None

    def check(self, y, n_outputs):
        """A ValueError, naming the metric, unless it is defined for labels ``y`` and the
        predictions of a model of ``n_outputs`` columns (before: crashes deep in numpy,
        or numbers of no meaning, such as a negative log loss of regression labels)."""
        kind = self.label_kind(n_outputs)
        if self.n_columns(n_outputs) is None:
            what = "one prediction per row" if kind != "classes" else \
                "class probabilities (multi:softprob or multi:softmax)"
            raise ValueError(f"eval_metric {self.name!r} needs {what}; the model predicts "
                             f"{n_outputs} column{'s' * (n_outputs != 1)} per row")
        y = np.asarray(y)
        ok = {"unit": lambda: (y >= 0) & (y <= 1), "nonnegative": lambda: y >= 0,
              "positive": lambda: y > 0, "above_minus_one": lambda: y > -1,
              "classes": lambda: (y >= 0) & (y < n_outputs) & (y == np.floor(y)),
              None: lambda: True}[kind]()
        if not np.all(ok):
            bad = np.unique(y[~np.broadcast_to(ok, y.shape)])[:5].tolist()
            need = {"unit": "labels in [0, 1] (0/1, or probabilities)",
                    "nonnegative": "non-negative labels", "positive": "positive labels",
                    "above_minus_one": "labels above -1",
                    "classes": f"class ids 0..{n_outputs - 1}"}[kind]
            raise ValueError(f"eval_metric {self.name!r} needs {need}, got {bad}")

    def label_kind(self, n_outputs):
        """The ``labels`` the metric takes with a model of ``n_outputs`` columns."""
        return self.labels

    def terms(self, y, pred, w):
        """(numerator, weight) per row: arrays of shape (n_rows,)."""
        raise NotImplementedError

    def from_rows(self, y, pred, w):
        """The value from every row (metrics that are not additive)."""
        raise NotImplementedError

    def finalize(self, total, weight):
        return total / weight if weight > 0 else float("nan")

    def columns(self, y, pred, w):
        """The (numerator, weight) of each row as columns of one (n_rows, 2) float64
        array: what :func:`_column_totals` sums."""
        return _as_columns(*self.terms(y, pred, w), len(y))

    def partial(self, y, pred, w):
        """Exact (sum, weight) over these rows, to be added across blocks before ``finalize``."""
        return _column_totals(self.columns(y, pred, w), None)

    def evaluate(self, info, pred, reducer=None):
        """The metric over the rows of ``info`` (a :class:`~boostwood.data.RowInfo`) of every
        shard of ``reducer``, with predictions ``pred`` of these rows on the scale metrics
        read (the objective's ``eval_transform``)."""
        y, w = info.label, info.weight
        if not self.additive:
            if reducer is None or reducer.n_shards == 1:
                return float(self.from_rows(y, pred, w))
            one = _one_weight(w)  # (unit weights travel as one number)
            return combine(reducer, (info.ids(), y, pred, w if one is None else one),
                           self._from_parts)
        return float(self.finalize(*_column_totals(self.columns(y, pred, w), reducer)))

    def _from_parts(self, parts):
        """The value on every shard's rows, ``parts`` [(ids, y, pred, w or the one
        weight of every row)] put in global row order: what one process gets."""
        ids = np.concatenate([p[0] for p in parts])
        order = np.argsort(ids, kind="stable")
        y, pred = (np.concatenate([p[j] for p in parts])[order] for j in (1, 2))
        if all(np.ndim(p[3]) == 0 for p in parts) and len({float(p[3]) for p in parts}) == 1:
            w = np.broadcast_to(np.float64(parts[0][3]), ids.shape)  # as RowInfo holds it
        else:
            w = np.concatenate([p[3] if np.ndim(p[3]) else np.full(len(p[0]), p[3])
                                for p in parts])[order]
        return float(self.from_rows(y, pred, w))

    def __call__(self, y, pred, w):
        self.check(y, 1 if np.ndim(pred) == 1 else np.shape(pred)[1])
        return self.evaluate(RowInfo.of(y, w), pred)


def _totals(num, wt, n, reducer):
    """Exact totals of per-row numerators and weights across shards (see
    :func:`_column_totals`)."""
    return _column_totals(_as_columns(num, wt, n), reducer)


def _as_columns(num, wt, n):
    cols = np.empty((n, 2))
    cols[:, 0], cols[:, 1] = num, wt  # (either may be a scalar)
    return cols


def _column_totals(cols, reducer):
    """Exact totals of per-row numerators and weights (the two columns of ``cols``)
    across shards. A NaN or infinite term makes the total what IEEE addition would make
    it (NaN, or +-inf); the weight total is that of the finite weights."""
    (total, weight), flags = exact_sums_of_finite(cols, reducer)
    if flags.any():
        nan, pos, neg = flags > 0
        total = np.nan if nan or (pos and neg) else (np.inf if pos else -np.inf)
    return float(total), float(weight)


def _check_lengths(y, pred, w):
    """A ValueError unless labels, predictions and weights (None: none) have one entry a
    row each (the kernels read them by row)."""
    n = np.shape(y)[0] if np.ndim(y) else 0
    for name, a in (("predictions", pred), ("weights", w)):
        if a is not None and (np.ndim(a) != 1 or np.shape(a)[0] != n):
            raise ValueError(f"{name} have shape {np.shape(a)}, the labels ({n},)")


def _one_weight(w):
    """The weight of every row when ``w`` holds one value by construction (a scalar, or
    a stride-0 view such as RowInfo's unit weights), else None."""
    if w.ndim == 0 or (w.ndim == 1 and w.shape[0] > 0 and w.strides[0] == 0):
        return float(w.flat[0])
    return None


class RMSE(Metric):
    """Root mean squared error sqrt(sum w (y - p)^2 / sum w)."""

    name = "rmse"

    def terms(self, y, pred, w):
        return w * (y - pred) ** 2, w

    def finalize(self, total, weight):
        return np.sqrt(total / weight) if weight > 0 else float("nan")


class MAE(Metric):
    """Mean absolute error sum w |y - p| / sum w."""

    name = "mae"

    def terms(self, y, pred, w):
        return w * np.abs(y - pred), w


class LogLoss(Metric):
    """Binary log loss -sum w [y log p + (1 - y) log(1 - p)] / sum w, p clipped to [1e-15, 1 - 1e-15]."""

    name = "logloss"
    labels = "unit"

    def columns(self, y, pred, w):
        """0/1 labels and float64 predictions: the one-log terms of :meth:`terms` by a
        kernel across threads (the same operations, one pass, no temporaries)."""
        if isinstance(pred, np.ndarray) and pred.dtype == np.float64 and pred.ndim == 1:
            y, w = np.asarray(y, dtype=np.float64), np.asarray(w, dtype=np.float64)
            one = _one_weight(w)
            _check_lengths(y, pred, None if one is not None else w)
            # writable C arrays: one compiled kernel for weighted and unweighted sets alike
            args = [np.require(a, np.float64, ["C", "W"]) for a in
                    (y, pred, w if one is None else np.full(1, one))]
            cols = np.empty((y.shape[0], 2))
            if binary_logloss_columns(*args, one is not None, cols) == 0:
                return cols
        return super().columns(y, pred, w)

    def terms(self, y, pred, w):
        p = np.clip(pred, _EPS, 1 - _EPS)
        if p.dtype == np.float64 and np.all((y == 0) | (y == 1)):
            # one log a row, the same number to the bit (y = 1: log p + 0 * log(1 - p),
            # and 1 - p > 0 after the clip in float64; y = 0: -0.0 + log(1 - p))
            return -(w * np.log(np.where(y == 1, p, 1 - p))), w
        return -(w * (y * np.log(p) + (1 - y) * np.log(1 - p))), w


class ErrorRate(Metric):
    """Binary error rate: weighted share of rows with (p > t) != y, t = 0.5 unless given
    as ``error@t``. A soft label y in (0, 1) counts as y positive and 1 - y negative (its
    expected error, as in XGBoost)."""

    name = "error"
    labels = "unit"

    def __init__(self, param=None):
        self.param = 0.5 if param is None else float(param)
        if not 0.0 <= self.param <= 1.0:
            raise ValueError(f"eval_metric 'error@{param}': the threshold must be in [0, 1]")

    def terms(self, y, pred, w):
        return w * np.where(pred > self.param, 1.0 - y, y), w


class MultiLogLoss(Metric):
    """Multiclass log loss -sum w log p_y / sum w."""

    name = "mlogloss"
    labels = "classes"

    def n_columns(self, n_outputs):
        return n_outputs if n_outputs >= 2 else None

    def terms(self, y, pred, w):
        p = np.clip(pred[np.arange(y.shape[0]), y.astype(np.int64)], _EPS, 1.0)
        return -(w * np.log(p)), w


class MultiError(Metric):
    """Multiclass error rate: weighted share of rows with argmax p != y."""

    name = "merror"
    labels = "classes"
    n_columns = MultiLogLoss.n_columns

    def terms(self, y, pred, w):
        return w * (np.argmax(pred, axis=1) != y), w


class AUC(Metric):
    """Area under the ROC curve, weighted; tied predictions count one half. With class
    probabilities (multi:softprob, multi:softmax), XGBoost's multi-class AUC: each
    class's one-vs-rest AUC, averaged with the classes' weights."""

    name = "auc"
    higher_better = True
    additive = False
    labels = "unit"

    def n_columns(self, n_outputs):
        return n_outputs

    def label_kind(self, n_outputs):
        return "unit" if n_outputs == 1 else "classes"

    def from_rows(self, y, pred, w):
        return roc_auc(y, pred, w) if np.ndim(pred) == 1 else one_vs_rest_auc(y, pred, w)


def one_vs_rest_auc(y, proba, w=None):
    """Multi-class AUC: sum over classes c of W_c AUC_c / sum of W_c, where AUC_c ranks
    the rows by ``proba[:, c]`` with class c positive and W_c is its weight (scikit-learn's
    ``roc_auc_score(multi_class="ovr", average="weighted")``); a class without rows has
    no weight. NaN when only one class has rows."""
    y, proba = np.asarray(y), np.asarray(proba)
    w = np.ones(y.shape[0]) if w is None else np.asarray(w, dtype=np.float64)
    if proba.ndim != 2 or proba.shape[0] != y.shape[0] or w.shape != y.shape:
        raise ValueError(f"class probabilities have shape {proba.shape}, the labels "
                         f"{y.shape}, the weights {w.shape}")
    area = total = 0.0
    for c in range(proba.shape[1]):
        positive = y == c
        weight = float(w[positive].sum())
        if weight > 0:
            area += weight * roc_auc(positive, proba[:, c], w)
            total += weight
    return area / total if total > 0 else float("nan")


def _check_unit_labels(y, who):
    """A ValueError naming ``who`` unless every label is in [0, 1] (NaN is not)."""
    bad = ~((y >= 0) & (y <= 1))
    if np.any(bad):
        raise ValueError(f"{who} needs labels in [0, 1] (0/1, or probabilities), got "
                         f"{np.unique(y[bad])[:5].tolist()}")


def roc_auc(y, score, w=None):
    """Weighted ROC AUC: P(score of a positive > score of a negative), ties 1/2.

    The rows are put in score order by a stable radix sort across threads and summed
    group by group in that order (:mod:`boostwood._kernels.sort`). Returns NaN when one
    class has no weight. A soft label y in (0, 1) makes its row a positive of weight
    y w and a negative of weight (1 - y) w (as XGBoost counts it); labels outside
    [0, 1] are an error.
    """
    y, score = np.asarray(y), np.asarray(score)
    w = None if w is None else np.asarray(w, dtype=np.float64)
    _check_lengths(y, score, w)
    positive = y == 1
    if not np.all(positive | (y == 0)):
        _check_unit_labels(y, "auc")
        # each row twice: its positive part, then its negative part (a tie of 1/2)
        w = np.ones(y.shape[0]) if w is None else w
        y = np.asarray(y, dtype=np.float64)
        return roc_auc(np.r_[np.ones_like(y), np.zeros_like(y)], np.r_[score, score],
                       np.r_[w * y, w * (1.0 - y)])
    tags = (np.arange(positive.shape[0], dtype=np.uint64) << np.uint64(1)) | positive
    # unit weights (a stride-0 view of one 1.0, RowInfo's default) need no reads
    weighted = w is not None and _one_weight(w) != 1.0
    w = np.require(w, np.float64, ["C", "W"]) if weighted else np.ones(1)  # one signature
    area, w_pos, w_neg = auc_of_sorted(sorted_pairs(score, tags), w, weighted)
    if w_pos <= 0 or w_neg <= 0:
        return float("nan")
    return float(area / (w_pos * w_neg))


def _pr_points(y, score, w):
    """Weighted true and false positives above each distinct score, from the highest
    down (a soft label y counts y positive, 1 - y negative); ties form one point."""
    y = np.asarray(y, dtype=np.float64)
    score = np.asarray(score, dtype=np.float64)
    w = np.ones(y.shape[0]) if w is None else np.asarray(w, dtype=np.float64)
    _check_lengths(y, score, w)
    _check_unit_labels(y, "a precision-recall metric")
    if y.size == 0:
        return np.zeros(0), np.zeros(0)
    order = argsort_stable(score)[::-1]
    s = score[order]
    starts = np.r_[0, np.flatnonzero(s[1:] != s[:-1]) + 1]
    return (np.cumsum(np.add.reduceat((w * y)[order], starts)),
            np.cumsum(np.add.reduceat((w * (1.0 - y))[order], starts)))


def pr_auc(y, score, w=None):
    """XGBoost's ``aucpr``: the area under the precision-recall curve, with precision
    interpolated between the curve's points as Davis & Goadrich (2006) do (false
    positives grow linearly with true positives along a segment, so precision is
    x / (x + fp(x)), integrated in closed form). NaN without positive weight."""
    tp, fp = _pr_points(y, score, w)
    P = tp[-1] if tp.size else 0.0
    if not P > 0:
        return float("nan")
    tp0, fp0 = np.r_[0.0, tp[:-1]], np.r_[0.0, fp[:-1]]
    step = tp > tp0  # (a segment without new positives adds no recall, no area)
    tp, fp, tp0, fp0 = tp[step], fp[step], tp0[step], fp0[step]
    a = 1.0 + (fp - fp0) / (tp - tp0)
    b = (fp0 - (a - 1.0) * tp0) / P
    with np.errstate(divide="ignore", invalid="ignore"):
        curve = np.where(b != 0, b / a * (np.log(a * tp / P + b) - np.log(a * tp0 / P + b)), 0.0)
    return float(np.sum(((tp - tp0) / P - curve) / a))


def average_precision(y, score, w=None):
    """LightGBM's ``average_precision`` (scikit-learn's ``average_precision_score``):
    sum over the distinct scores, from the highest down, of the recall gained times the
    precision there. NaN without positive weight."""
    tp, fp = _pr_points(y, score, w)
    if not (tp.size and tp[-1] > 0):
        return float("nan")
    return float(np.sum(np.diff(np.r_[0.0, tp / tp[-1]]) * (tp / (tp + fp))))


class AUCPR(Metric):
    """Area under the precision-recall curve, interpolated (:func:`pr_auc`)."""

    name = "aucpr"
    higher_better = True
    additive = False
    labels = "unit"

    def from_rows(self, y, pred, w):
        return pr_auc(y, pred, w)


class AveragePrecision(AUCPR):
    """Average precision, the step-wise area under the precision-recall curve
    (:func:`average_precision`)."""

    name = "average_precision"

    def from_rows(self, y, pred, w):
        return average_precision(y, pred, w)


class RMSLE(RMSE):
    """Root mean squared log error sqrt(sum w (log1p(p) - log1p(y))^2 / sum w), labels > -1
    (NaN where a prediction is -1 or below)."""

    name = "rmsle"
    labels = "above_minus_one"

    def terms(self, y, pred, w):
        with np.errstate(invalid="ignore", divide="ignore"):
            return w * (np.log1p(pred) - np.log1p(y)) ** 2, w


class MAPE(Metric):
    """Mean absolute percentage error sum w |y - p| / max(|y|, 1e-15) / sum w."""

    name = "mape"

    def terms(self, y, pred, w):
        return w * np.abs(y - pred) / np.maximum(np.abs(y), _EPS), w


class _WithParam(Metric):
    """A metric with a parameter: ``name@value``, else the objective's parameter, else a default."""

    param_name = None
    param_default = None

    def __init__(self, param=None):
        self.param = float(self.param_default if param is None else param)


class HuberMetric(_WithParam):
    """Mean Huber loss: r^2/2 for |r| <= d, d (|r| - d/2) beyond, d = huber_delta."""

    name, param_name, param_default = "huber", "huber_delta", 1.0

    def terms(self, y, pred, w):
        r = np.abs(y - pred)
        d = self.param
        return w * np.where(r <= d, 0.5 * r * r, d * (r - 0.5 * d)), w


class PseudoHuberMetric(_WithParam):
    """Mean pseudo-Huber loss d^2 (sqrt(1 + (r/d)^2) - 1), d = huber_slope."""

    name, param_name, param_default = "mphe", "huber_slope", 1.0

    def terms(self, y, pred, w):
        r = (y - pred) / self.param
        return w * self.param ** 2 * (np.sqrt(1 + r * r) - 1), w


class QuantileMetric(_WithParam):
    """Mean pinball loss: a (y - p) for y >= p, (1 - a)(p - y) otherwise, a = quantile_alpha.

    With several levels (``quantile_alpha`` a list; predictions of shape (n, levels),
    levels ascending) the pinball losses of the levels are averaged.
    """

    name, param_name, param_default = "quantile", "quantile_alpha", 0.5

    def n_columns(self, n_outputs):
        return n_outputs if n_outputs == self.alphas.size else None

    def __init__(self, param=None):
        alphas = np.sort(np.atleast_1d(np.asarray(self.param_default if param is None else param,
                                                  dtype=np.float64)))
        super().__init__(float(alphas[0]))
        self.alphas = alphas

    def terms(self, y, pred, w):
        pred = pred.reshape(len(y), -1)
        if pred.shape[1] != self.alphas.size:
            raise ValueError(f"the quantile metric has {self.alphas.size} levels but the model "
                             f"predicts {pred.shape[1]} columns")
        r = y[:, None] - pred
        a = self.alphas[None, :]
        loss = np.where(r >= 0, a * r, (a - 1) * r).mean(axis=1)
        return w * loss, w


class PoissonNLogLik(Metric):
    """Poisson negative log-likelihood sum w [p - y log p + log y!] / sum w, p = predicted mean."""

    name = "poisson-nloglik"
    labels = "nonnegative"

    def terms(self, y, pred, w):
        p = np.maximum(pred, _EPS)
        lg = np.empty(len(y))
        log_factorial(np.ascontiguousarray(y, dtype=np.float64), lg)
        return w * (p - y * np.log(p) + lg), w


class GammaDeviance(Metric):
    """Gamma deviance 2 sum w [(y - p)/p - log(y/p)] / sum w."""

    name = "gamma-deviance"
    labels = "positive"

    def terms(self, y, pred, w):
        p = np.maximum(pred, _EPS)
        yy = np.maximum(y, _EPS)
        return w * 2 * ((y - p) / p - np.log(yy / p)), w


class GammaNLogLik(Metric):
    """Gamma negative log-likelihood with unit shape (XGBoost's ``gamma-nloglik``, the
    default metric of its reg:gamma; boostwood's is ``gamma-deviance``): sum w [y / p +
    log p] / sum w, p = predicted mean floored at 1e-6 as XGBoost floors it."""

    name = "gamma-nloglik"
    labels = "positive"

    def terms(self, y, pred, w):
        p = np.maximum(pred, 1e-6)
        return w * (y / p + np.log(p)), w


class TweedieNLogLik(_WithParam):
    """Tweedie negative log-likelihood (without the normalising term), rho =
    tweedie_variance_power: sum w [-y p^(1-rho)/(1-rho) + p^(2-rho)/(2-rho)] / sum w."""

    name, param_name, param_default = "tweedie-nloglik", "tweedie_variance_power", 1.5
    labels = "nonnegative"

    def terms(self, y, pred, w):
        r = self.param
        p = np.maximum(pred, _EPS)
        val = -y * p ** (1 - r) / (1 - r) + p ** (2 - r) / (2 - r)
        return w * val, w


class ExponentialLoss(Metric):
    """Mean AdaBoost loss exp(-y* F) with y* = 2y - 1 and F = log(p / (1 - p)) / 2."""

    name = "exponential"
    labels = "unit"

    def terms(self, y, pred, w):
        p = np.clip(pred, _EPS, 1 - _EPS)
        F = 0.5 * np.log(p / (1 - p))
        return w * np.exp(-(2 * y - 1) * F), w


METRICS = {cls.name: cls for cls in (RMSE, MAE, LogLoss, ErrorRate, MultiLogLoss, MultiError, AUC,
                                     AUCPR, AveragePrecision, MAPE, RMSLE, HuberMetric,
                                     PseudoHuberMetric, QuantileMetric, PoissonNLogLik,
                                     GammaDeviance, GammaNLogLik, TweedieNLogLik,
                                     ExponentialLoss)}


def custom_metric_values(out, who="custom_metric"):
    """A custom metric's result, ``(name, value)`` or a list of such pairs (XGBoost takes
    both), as a list of (name, float); anything else is a TypeError naming ``who``."""
    pairs = out if isinstance(out, list) else [out]
    values = []
    for pair in pairs:
        if not (isinstance(pair, (tuple, list)) and len(pair) == 2 and isinstance(pair[0], str)):
            raise TypeError(f"{who} must return (name, value) or a list of such pairs, got "
                            f"{out!r:.80}")
        value = pair[1].item() if isinstance(pair[1], np.ndarray) and pair[1].ndim == 0 \
            else pair[1]
        if not isinstance(value, (numbers.Real, np.floating, np.integer)) or \
                isinstance(value, (bool, np.bool_)):  # not "0.5", True
            raise TypeError(f"{who}'s value for {pair[0]!r} must be a number, got "
                            f"{pair[1]!r:.40}")
        values.append((pair[0], float(value)))
    names = [n for n, _ in values]
    if not values or len(set(names)) != len(names):
        raise TypeError(f"{who} must return at least one (name, value) pair, each name once, "
                        f"got {names}")
    return values


#: LightGBM's metric names (with its aliases) whose values are a metric's here, to float
#: rounding (checked against LightGBM 4.7 on the same predictions and weights): the
#: metric logs under the name given.
LIGHTGBM_METRICS = {
    **dict.fromkeys(("l1", "mean_absolute_error", "regression_l1"), "mae"),
    **dict.fromkeys(("l2_root", "root_mean_squared_error"), "rmse"),
    **dict.fromkeys(("binary_logloss", "binary", "cross_entropy", "xentropy"), "logloss"),
    "binary_error": "error",
    **dict.fromkeys(("multi_logloss", "multiclass", "softmax"), "mlogloss"),
    "multi_error": "merror", "gamma": "gamma-nloglik", "tweedie": "tweedie-nloglik",
}
#: LightGBM's metrics that are other numbers than the nearest metric here: refused, with it.
_LIGHTGBM_OTHER = {
    **dict.fromkeys(("l2", "mean_squared_error", "mse", "regression_l2", "regression"),
                    "the mean squared error; 'rmse' here is its square root"),
    "poisson": "the Poisson log-likelihood without its log(y!) term; 'poisson-nloglik' here "
               "keeps it",
}  # ('mape' is XGBoost's here, |y - p| / |y|: LightGBM's divides by max(1, |y|))


def get_metric(name, params=None):
    """The metric called ``name``; ``name@value`` sets a metric's parameter (e.g.
    ``quantile@0.9``), otherwise it is read from the training ``params``. LightGBM's
    names of the same numbers are accepted (:data:`LIGHTGBM_METRICS`) and log as given.
    Ranking metrics (``ndcg@10``, ``map``, ...) are :mod:`boostwood.boosting.rank_metrics`'."""
    from .rank_metrics import is_ranking_metric, ranking_metric  # (it builds on Metric)
    if is_ranking_metric(name):
        return ranking_metric(name, params)
    base, _, value = name.partition("@")
    if base in LIGHTGBM_METRICS and not value:
        metric = get_metric(LIGHTGBM_METRICS[base], params)
        metric.name = name
        return metric
    if base in _LIGHTGBM_OTHER and not value:
        raise ValueError(f"LightGBM's metric {name!r} is {_LIGHTGBM_OTHER[base]}")
    if base not in METRICS:
        raise ValueError(f"unknown eval_metric {name!r}; available: {sorted(METRICS)} and the "
                         "ranking metrics ndcg, map, mrr (@k, and '-')")
    cls = METRICS[base]
    if not value:
        if issubclass(cls, _WithParam):
            return cls((params or {}).get(cls.param_name))
        return cls()
    if not (issubclass(cls, _WithParam) or cls is ErrorRate):  # (error@t: XGBoost's)
        raise ValueError(f"eval_metric {base!r} takes no parameter, got {name!r}")
    metric = cls(_number(name, value))
    metric.name = name  # its key in the evaluation log, beside the metric without "@"
    return metric


def _number(name, value):
    """The parameter ``value`` of metric ``name`` (``base@value``) as a float."""
    try:
        return float(value)
    except ValueError:
        raise ValueError(f"eval_metric {name!r}: {value!r} is not a number") from None
