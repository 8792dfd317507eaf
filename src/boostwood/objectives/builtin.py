"""The built-in objectives of Newton boosting.

Each objective gives, for margins F (the raw additive model): per-row
gradients and hessians (a numba kernel), the constant initial margin that
minimises the loss, the link from margins to predictions, its default metric,
and the check that labels are in its domain.
"""
import numpy as np

from .._comm import exact_sums
from .._kernels.loss import (as_kernel_weights, logistic_grad, sigmoid_of, softmax_grad,
                             squared_error_grad)
from ..data.rowinfo import gather_rows

_EPS = 1e-15


def check_binary_labels(name, y):
    """``y`` if every label is 0 or 1, else a ValueError naming the objective."""
    if not np.all((y == 0) | (y == 1)):
        bad = np.unique(y[(y != 0) & (y != 1)])[:5]
        hint = ("; for probabilities (soft labels) in [0, 1] use reg:logistic"
                if np.all((y >= 0) & (y <= 1)) else "")
        raise ValueError(f"{name} needs labels 0 or 1, got {bad.tolist()}{hint}")
    return y


def probability_margin(name, base_score, scale=1.0):
    """The margin ``scale * log(p / (1 - p))`` of a user's ``base_score`` p in (0, 1)."""
    if not 0 < base_score < 1:
        raise ValueError(f"base_score must be a probability in (0, 1) for {name}, "
                         f"got {base_score}")
    return np.array([scale * np.log(base_score / (1 - base_score))])


class Objective:
    """Base class of objectives.

    Attributes
    ----------
    name : str, the name users pass as ``objective``
    n_outputs : int, margins per row (number of trees per round)
    default_metric : str
    line_search : bool, leaves are re-estimated by :meth:`leaf_values` after the tree
        is grown (losses whose hessian carries no curvature information)
    gradient_leaf_scale : float, factor on a leaf's line-search step in first-order
        boosting (Friedman's (K - 1) / K for softmax)
    link : str, the scale of the margins: "identity", "logit", "half_logit" (F is half
        the log-odds), "log" or "softmax"; training may continue a model only under an
        objective of the same link

    Objectives see the rows through one :class:`~boostwood.data.RowInfo` record
    (label, weight, query boundaries, base margin, global row ids).
    """

    name = None
    default_metric = None
    link = "identity"
    n_outputs = 1
    line_search = False
    gradient_leaf_scale = 1.0
    #: whether the objective ranks rows within query groups (``RowInfo.queries``)
    needs_queries = False

    def __init__(self, num_class=None):
        self.num_class = num_class

    def start_round(self, seed, rnd, reducer=None):
        """Called before each round's :meth:`gradient`: the run's seed, the round (from
        1) and the reducer, for objectives whose gradients draw at random or sum over
        shards (ranking); nothing for the others."""

    def check_labels(self, y):
        """Return the labels as float64, or raise ValueError when out of the domain."""
        return y

    def init_score(self, info, reducer=None):
        """Constant margin(s) minimising sum_i w_i L(y_i, c) over every row of every shard;
        shape (n_outputs,).

        Objectives whose minimiser is a function of a few sums declare them
        (:meth:`init_terms`, :meth:`init_from_totals`); those sums are exact
        (:mod:`boostwood._kernels.exact_sum`) and go through the reducer, so the margin
        does not depend on the row order or the sharding. The others (quantiles, Huber)
        see every row in global row order (:meth:`init_from_rows`).
        """
        terms = self.init_terms(info.label, info.weight)
        if terms is not None:
            return self.init_from_totals(exact_sums(terms, reducer))
        y, w = gather_rows(info, reducer, info.label, info.weight)
        return self.init_from_rows(y, w)

    def init_terms(self, y, w):
        """Per-row columns whose totals determine the initial margin, or None."""
        return None

    def init_from_totals(self, totals):
        """The initial margin from the exact totals of :meth:`init_terms`."""
        raise NotImplementedError

    def init_from_rows(self, y, w):
        """The initial margin from all labels and weights (when no totals suffice)."""
        raise NotImplementedError

    def base_margin_from_score(self, base_score):
        """Margins for a user ``base_score`` given on the prediction scale."""
        return np.full(self.n_outputs, float(base_score))

    def gradient(self, info, raw, gh_out):
        """Fill gh_out (shape (n_outputs, n_rows, 2), float32: g then h) at margins raw
        (n_rows, n_outputs) for the rows of ``info``."""
        raise NotImplementedError

    def transform(self, raw):
        """Predictions from margins of shape (n_rows, n_outputs)."""
        return raw[:, 0]

    def eval_transform(self, raw):
        """What metrics read, from margins of shape (n_rows, n_outputs): the predictions,
        except where those are class ids or margins (``multi:softmax``,
        ``binary:logitraw``), whose metrics read probabilities."""
        return self.transform(raw)

    def loss(self, y, raw):
        """Per-row loss at the given margins (used by tests and metrics)."""
        raise NotImplementedError


class SquaredError(Objective):
    """``reg:squarederror``: L = (y - F)^2 / 2, identity link, initial margin = weighted mean."""

    name = "reg:squarederror"
    default_metric = "rmse"

    def init_terms(self, y, w):
        return np.column_stack([w * y, w])

    def init_from_totals(self, totals):
        return np.array([totals[0] / totals[1] if totals[1] > 0 else 0.0])

    def gradient(self, info, raw, gh_out):
        squared_error_grad(info.label, raw, as_kernel_weights(info.weight), gh_out)

    def loss(self, y, raw):
        return 0.5 * (y - raw[:, 0]) ** 2


class Logistic(Objective):
    """``binary:logistic``: L = -y log p - (1 - y) log(1 - p), p = 1 / (1 + exp(-F)).

    Labels must be 0 or 1. The initial margin is the log-odds of the weighted
    positive rate; a user ``base_score`` is a probability in (0, 1).
    """

    name = "binary:logistic"
    link = "logit"
    default_metric = "logloss"

    def check_labels(self, y):
        return check_binary_labels(self.name, y)

    def init_terms(self, y, w):
        return np.column_stack([w * y, w])

    def init_from_totals(self, totals):
        p = np.clip(totals[0] / totals[1] if totals[1] > 0 else 0.5, _EPS, 1 - _EPS)
        return np.array([np.log(p / (1 - p))])

    def base_margin_from_score(self, base_score):
        return probability_margin(self.name, base_score)

    def gradient(self, info, raw, gh_out):
        logistic_grad(info.label, raw, as_kernel_weights(info.weight), gh_out)

    def transform(self, raw):
        return sigmoid_of(raw[:, 0])

    def loss(self, y, raw):
        F = raw[:, 0]
        return np.logaddexp(0.0, F) - y * F


class LogisticRaw(Logistic):
    """``binary:logitraw``: the loss of ``binary:logistic``, predicting the margin (the
    log-odds) instead of the probability. Metrics read the probabilities, so ``logloss``
    and ``error`` mean what they mean for ``binary:logistic``. A user ``base_score`` is
    on the prediction scale, a margin (as in XGBoost)."""

    name = "binary:logitraw"

    def base_margin_from_score(self, base_score):
        return np.array([float(base_score)])

    transform = Objective.transform  # the margin
    eval_transform = Logistic.transform  # the probability


class LogisticRegression(Logistic):
    """``reg:logistic``: the loss of ``binary:logistic`` for labels anywhere in [0, 1]
    (probabilities, soft labels): L = -y log p - (1 - y) log(1 - p), p = 1 / (1 + exp(-F)),
    minimised at p = y. Predictions are probabilities; the default metric is ``rmse``."""

    name = "reg:logistic"
    default_metric = "rmse"

    def check_labels(self, y):
        if not np.all((y >= 0) & (y <= 1)):
            bad = np.unique(y[~((y >= 0) & (y <= 1))])[:5]
            raise ValueError(f"{self.name} needs labels in [0, 1], got {bad.tolist()}")
        return y


class Softmax(Objective):
    """``multi:softprob``: L = -log p_y, p = softmax(F) over ``num_class`` margins.

    One tree per class and round. Labels are class ids 0..num_class-1. The
    initial margins are the log of the weighted class priors.
    """

    name = "multi:softprob"
    link = "softmax"
    default_metric = "mlogloss"

    def __init__(self, num_class=None):
        if num_class is None or num_class < 2:
            raise ValueError(f"{self.name} needs num_class >= 2")
        super().__init__(num_class)
        self.n_outputs = int(num_class)
        #: boosting="gradient": Friedman's multinomial leaf factor (K - 1)/K (notes 003 eq. 20)
        self.gradient_leaf_scale = (num_class - 1) / num_class

    def check_labels(self, y):
        ok = (y == np.floor(y)) & (y >= 0) & (y < self.num_class)
        if not np.all(ok):
            bad = np.unique(y[~ok])[:5]
            raise ValueError(f"{self.name} with num_class={self.num_class} needs integer "
                             f"labels in [0, {self.num_class - 1}], got {bad.tolist()}")
        return y

    def init_terms(self, y, w):
        return w[:, None] * (y[:, None] == np.arange(self.num_class)[None, :])

    def init_from_totals(self, totals):
        total = totals.sum()
        prior = np.maximum(totals / total if total > 0 else totals + 1.0, _EPS)
        logp = np.log(prior)
        return logp - logp.mean()

    def gradient(self, info, raw, gh_out):
        softmax_grad(info.label, raw, as_kernel_weights(info.weight), gh_out)

    def transform(self, raw):
        """softmax(F) per row. The row maxima come column by column (a maximum is exact
        in any order: the same numbers as ``raw.max(axis=1)``, which numpy reduces slowly
        over a short axis), and exp and the division work in place: 160k rows of 10
        classes in half the time, the same probabilities to the bit."""
        m = raw[:, 0].copy()
        for k in range(1, raw.shape[1]):
            np.maximum(m, raw[:, k], out=m)
        e = np.exp(raw - m[:, None])
        return np.divide(e, e.sum(axis=1, keepdims=True), out=e)

    def loss(self, y, raw):
        z = raw - raw.max(axis=1, keepdims=True)
        logsum = np.log(np.exp(z).sum(axis=1))
        return logsum - z[np.arange(len(y)), y.astype(np.int64)]


class SoftmaxClass(Softmax):
    """``multi:softmax``: the loss of ``multi:softprob``, predicting the class id (the
    class of the largest margin, the first of equal ones) as a float, shape (n_rows,).
    Metrics read the probabilities, so ``mlogloss`` means what it means for
    ``multi:softprob``."""

    name = "multi:softmax"

    eval_transform = Softmax.transform  # the probabilities

    def transform(self, raw):
        return np.argmax(raw, axis=1).astype(np.float64)
