"""Pointwise losses of one margin per row: robust regression, quantiles, counts,
positive targets, and the boosting losses of the notes.

Each objective names its loss L(y, F) (formula in the class docstring), its
gradient kernel (:func:`boostwood._kernels.loss.pointwise_grad`), the constant
margin minimising sum_i w_i L(y_i, c) (``init_score``), the link from margins
to predictions and the default metric. Losses whose hessian is constant or
uninformative (absolute, Huber, quantile) re-estimate each leaf after the tree
is grown by a line search over the leaf's rows (Friedman 2001, algorithm step
2.3 of the notes' 004): ``leaf_values`` returns gamma_j = argmin_gamma
sum_{i in leaf} w_i L(y_i, F_i + gamma).
"""
import numpy as np

from .._comm import exact_sums
from .._kernels import loss as K
from .builtin import Objective, check_binary_labels, probability_margin

_EPS = 1e-15


def weighted_quantile(x, w, alpha):
    """The lower weighted alpha-quantile: the smallest x_k with sum_{x_i <= x_k} w_i >= alpha W.

    It minimises sum_i w_i rho_alpha(x_i - c) (the pinball loss); alpha = 0.5 is a
    weighted median. Without rows (a leaf grown on an empty bag) or weight, 0: the step
    that leaves the margins as they are.
    """
    if x.size == 0:
        return 0.0
    order = np.argsort(x, kind="stable")
    x, w = x[order], w[order]
    cum = np.cumsum(w)
    if cum[-1] <= 0:
        return 0.0
    k = int(np.searchsorted(cum, alpha * cum[-1] * (1 - 1e-12), side="left"))
    return float(x[min(k, x.size - 1)])


def _minimise_convex(dloss, lo, hi, iters=200):
    """Root of a non-decreasing derivative on [lo, hi] by bisection."""
    for _ in range(iters):
        mid = 0.5 * (lo + hi)
        if dloss(mid) > 0:
            hi = mid
        else:
            lo = mid
        if hi - lo <= 1e-12 * max(1.0, abs(mid)):
            break
    return 0.5 * (lo + hi)


class Pointwise(Objective):
    """Base of the losses of :mod:`boostwood._kernels.loss` selected by ``kind``."""

    kind = None
    param_name = None  # the user parameter passed to the kernel, if any
    param_default = 0.0

    def __init__(self, num_class=None, param=None):
        super().__init__(num_class)
        self.param = float(self.param_default if param is None else param)

    def gradient(self, info, raw, gh_out):
        w = K.as_kernel_weights(info.weight)
        K.pointwise_grad(self.kind, info.label, raw, w, self.param, gh_out)

    def _minimise(self, y, w):
        y, w = np.ascontiguousarray(y, dtype=np.float64), np.ascontiguousarray(w, dtype=np.float64)
        return _minimise_convex(lambda c: K.pointwise_grad_sum(self.kind, y, c, w, self.param),
                                float(y.min()) - 1.0, float(y.max()) + 1.0)

    def leaf_values(self, y, raw, w, output=0):
        """The line-search value gamma of a leaf from its rows' labels, margins and weights
        (``output``: which margin, for objectives with several)."""
        raise NotImplementedError


class AbsoluteError(Pointwise):
    """``reg:absoluteerror``: L = |y - F|. Initial margin and leaves: weighted medians."""

    name, kind, default_metric = "reg:absoluteerror", K.ABSOLUTE, "mae"
    line_search = True

    def init_from_rows(self, y, w):
        return np.array([weighted_quantile(y, w, 0.5)])

    def leaf_values(self, y, raw, w, output=0):
        return weighted_quantile(y - raw, w, 0.5)

    def loss(self, y, raw):
        return np.abs(y - raw[:, 0])


class Quantile(Pointwise):
    """``reg:quantileerror``: pinball loss L = a (y - F) for y >= F, (1 - a)(F - y) otherwise,
    a = ``quantile_alpha``. Initial margin and leaves: weighted a-quantiles.

    ``quantile_alpha`` may be a list: every level gets its own margin (one tree per
    level and round, like the classes of ``multi:softprob``), the levels are kept in
    ascending order, and predictions are sorted per row. Sorting (monotone
    rearrangement, Chernozhukov, Fernandez-Val & Galichon 2010) never increases the
    summed pinball loss, and predicted quantiles never cross.
    """

    name, kind, default_metric = "reg:quantileerror", K.QUANTILE, "quantile"
    line_search = True
    param_name, param_default = "quantile_alpha", 0.5

    def __init__(self, num_class=None, param=None):
        alphas = np.atleast_1d(np.asarray(self.param_default if param is None else param,
                                          dtype=np.float64))
        if alphas.ndim != 1 or alphas.size == 0:
            raise ValueError(f"quantile_alpha must be a number or a list of numbers, got {param!r}")
        if np.any((alphas <= 0) | (alphas >= 1)) or np.unique(alphas).size != alphas.size:
            raise ValueError(f"quantile_alpha must hold distinct levels in (0, 1), got "
                             f"{alphas.tolist()}")
        self.alphas = np.sort(alphas)
        super().__init__(num_class, float(self.alphas[0]))
        self.n_outputs = int(self.alphas.size)

    def gradient(self, info, raw, gh_out):
        w = K.as_kernel_weights(info.weight)
        for k, a in enumerate(self.alphas):
            K.pointwise_grad(self.kind, info.label, raw[:, k:k + 1], w, a, gh_out[k:k + 1])

    def init_from_rows(self, y, w):
        return np.array([weighted_quantile(y, w, a) for a in self.alphas])

    def base_margin_from_score(self, base_score):
        return np.full(self.n_outputs, float(base_score))

    def leaf_values(self, y, raw, w, output=0):
        return weighted_quantile(y - raw, w, self.alphas[output])

    def transform(self, raw):
        if self.n_outputs == 1:
            return raw[:, 0]
        return np.sort(raw, axis=1)

    def loss(self, y, raw):
        r = y[:, None] - raw
        a = self.alphas[None, :]
        return np.where(r >= 0, a * r, (a - 1.0) * r).sum(axis=1)


class Huber(Pointwise):
    """``reg:huber``: L = r^2 / 2 for |r| <= d, d (|r| - d / 2) beyond, r = y - F, d =
    ``huber_delta``. Leaves: one Huber M-step from the median (Friedman 2001, alg. 4)."""

    name, kind, default_metric = "reg:huber", K.HUBER, "huber"
    line_search = True
    param_name, param_default = "huber_delta", 1.0

    def init_from_rows(self, y, w):
        return np.array([self._minimise(y, w)])

    def leaf_values(self, y, raw, w, output=0):
        r = y - raw
        med = weighted_quantile(r, w, 0.5)
        d = r - med
        return med + float(np.sum(w * np.sign(d) * np.minimum(self.param, np.abs(d)))
                           / max(np.sum(w), _EPS))

    def loss(self, y, raw):
        r = np.abs(y - raw[:, 0])
        return np.where(r <= self.param, 0.5 * r * r, self.param * (r - 0.5 * self.param))


class PseudoHuber(Pointwise):
    """``reg:pseudohubererror``: L = d^2 (sqrt(1 + (r / d)^2) - 1), d = ``huber_slope``."""

    name, kind, default_metric = "reg:pseudohubererror", K.PSEUDO_HUBER, "mphe"
    param_name, param_default = "huber_slope", 1.0

    def init_score(self, info, reducer=None):
        """The minimiser of sum_i w_i L(y_i, c) over every shard's rows by bisection, each
        step's derivative an exact sum (:func:`boostwood._comm.exact_sums`) across the
        shards: two small collectives a step, no row leaves its shard, and the margin is
        the same however the rows are split."""
        y = np.ascontiguousarray(info.label, dtype=np.float64)
        w = K.as_kernel_weights(info.weight)
        ends = np.array([-np.min(y, initial=np.inf), np.max(y, initial=-np.inf)])
        if reducer is not None:
            reducer.allreduce_max(ends)
        terms = np.empty(y.shape[0])

        def derivative(c):
            K.pointwise_grad_terms(self.kind, y, c, w, self.param, terms)
            return exact_sums(terms, reducer)[0]
        return np.array([_minimise_convex(derivative, float(-ends[0]) - 1.0,
                                          float(ends[1]) + 1.0)])

    def loss(self, y, raw):
        r = (y - raw[:, 0]) / self.param
        return self.param ** 2 * (np.sqrt(1.0 + r * r) - 1.0)


class _LogLink(Pointwise):
    """Log link: predictions exp(F); the initial margin is log of the weighted mean."""

    link = "log"

    def init_terms(self, y, w):
        return np.column_stack([w * y, w])

    def init_from_totals(self, totals):
        mean = totals[0] / totals[1] if totals[1] > 0 else 1.0
        return np.array([np.log(max(mean, _EPS))])

    def base_margin_from_score(self, base_score):
        if base_score <= 0:
            raise ValueError(f"base_score must be > 0 for {self.name}, got {base_score}")
        return np.array([np.log(base_score)])

    def transform(self, raw):
        return np.exp(np.minimum(raw[:, 0], K.EXP_CLIP))


class Poisson(_LogLink):
    """``count:poisson``: negative log-likelihood L = e^F - y F (+ log y!), counts y >= 0.

    The hessians are e^(F + ``poisson_max_delta_step``) (0.7 by default, as LightGBM's and
    XGBoost's ``count:poisson``): each leaf takes about half a Newton step (e^-0.7 = 0.50),
    which keeps early rounds from over-shooting on rare counts (freMTPL2, 200 rounds of
    31 leaves: holdout deviance 0.4485 against 0.4503 for plain Newton; LightGBM 0.4489).
    """

    name, kind, default_metric = "count:poisson", K.POISSON, "poisson-nloglik"
    param_name, param_default = "poisson_max_delta_step", 0.7

    def check_labels(self, y):
        if np.any(y < 0):
            raise ValueError(f"count:poisson needs non-negative labels, got min {y.min()}")
        return y

    def loss(self, y, raw):
        F = np.clip(raw[:, 0], -K.EXP_CLIP, K.EXP_CLIP)
        return np.exp(F) - y * F


class Gamma(_LogLink):
    """``reg:gamma``: L = y e^-F + F (gamma deviance up to constants), targets y > 0."""

    name, kind, default_metric = "reg:gamma", K.GAMMA, "gamma-deviance"

    def check_labels(self, y):
        if np.any(y <= 0):
            raise ValueError(f"reg:gamma needs positive labels, got min {y.min()}")
        return y

    def loss(self, y, raw):
        F = np.clip(raw[:, 0], -K.EXP_CLIP, K.EXP_CLIP)
        return y * np.exp(-F) + F


class Tweedie(_LogLink):
    """``reg:tweedie``: L = -y e^((1-p)F)/(1-p) + e^((2-p)F)/(2-p), p =
    ``tweedie_variance_power`` in (1, 2), targets y >= 0."""

    name, kind, default_metric = "reg:tweedie", K.TWEEDIE, "tweedie-nloglik"
    param_name, param_default = "tweedie_variance_power", 1.5

    def check_labels(self, y):
        if np.any(y < 0):
            raise ValueError(f"reg:tweedie needs non-negative labels, got min {y.min()}")
        return y

    def loss(self, y, raw):
        p = self.param
        F = np.clip(raw[:, 0], -K.EXP_CLIP, K.EXP_CLIP)
        return -y * np.exp((1 - p) * F) / (1 - p) + np.exp((2 - p) * F) / (2 - p)


class _Binary(Pointwise):
    """Labels 0/1 (y* = 2y - 1); P(y = 1) = 1 / (1 + e^(-2F)), so F is half the log-odds."""

    default_metric = "logloss"
    link = "half_logit"

    def check_labels(self, y):
        return check_binary_labels(self.name, y)

    def init_terms(self, y, w):
        return np.column_stack([w * y, w])

    def init_from_totals(self, totals):
        p = np.clip(totals[0] / totals[1] if totals[1] > 0 else 0.5, _EPS, 1 - _EPS)
        return np.array([0.5 * np.log(p / (1 - p))])

    def base_margin_from_score(self, base_score):
        return probability_margin(self.name, base_score, scale=0.5)

    def transform(self, raw):
        return K.sigmoid_of(raw[:, 0], 2.0)


class LogitBoost(_Binary):
    """``binary:logitboost``: Friedman's binomial deviance L = log(1 + e^(-2 y* F))
    (notes 000, eq. 42); probability 1 / (1 + e^(-2F))."""

    name, kind = "binary:logitboost", K.LOGITBOOST

    def loss(self, y, raw):
        return np.logaddexp(0.0, -2.0 * (2 * y - 1) * raw[:, 0])


class Exponential(_Binary):
    """``binary:exponential``: the AdaBoost loss L = e^(-y* F); its population minimiser is
    half the log-odds, so the probability is 1 / (1 + e^(-2F))."""

    name, kind, default_metric = "binary:exponential", K.EXPONENTIAL, "exponential"

    def loss(self, y, raw):
        return np.exp(np.clip(-(2 * y - 1) * raw[:, 0], -K.EXP_CLIP, K.EXP_CLIP))


class SquaredLogError(Pointwise):
    """``reg:squaredlogerror``: L = (log1p(F) - log1p(y))^2 / 2, the loss of RMSLE, for
    labels y > -1; predictions are the margins (XGBoost's gradient, and its floors on the
    margin and the hessian: :data:`boostwood._kernels.loss.SQUARED_LOG_FLOOR`). The initial
    margin is expm1 of the weighted mean of log1p(y), which minimises the loss."""

    name, kind, default_metric = "reg:squaredlogerror", K.SQUARED_LOG, "rmsle"

    def check_labels(self, y):
        if np.any(y <= -1):
            raise ValueError(f"reg:squaredlogerror needs labels > -1, got min {y.min()}")
        return y

    def init_terms(self, y, w):
        return np.column_stack([w * np.log1p(y), w])

    def init_from_totals(self, totals):
        return np.array([np.expm1(totals[0] / totals[1]) if totals[1] > 0 else 0.0])

    def loss(self, y, raw):
        return 0.5 * (np.log1p(np.maximum(raw[:, 0], K.SQUARED_LOG_FLOOR)) - np.log1p(y)) ** 2


POINTWISE = (AbsoluteError, Quantile, Huber, PseudoHuber, Poisson, Gamma, Tweedie, LogitBoost,
             Exponential, SquaredLogError)
