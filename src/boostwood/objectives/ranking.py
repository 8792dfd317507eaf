"""Learning-to-rank objectives: LambdaMART (``rank:ndcg``, ``rank:map``, ``rank:pairwise``,
LightGBM's ``lambdarank``) and XE-NDCG (LightGBM's ``rank_xendcg``).

A ranking objective reads the query groups of the rows (``RowInfo.queries``); its scores
mean something only within a query, so the initial margin is 0. The gradients are the
kernels of :mod:`boostwood._kernels.rank` (see there for the formulas, the tie rule and
the pair methods); this module reads the parameters and checks the labels.
"""
import numpy as np

from .._comm import exact_value
from .._kernels.exact_sum import new_accumulator
from .._kernels.loss import as_kernel_weights
from .._kernels.rank import (N_SETTINGS, PAIR_MEAN, PAIR_TOPK, R_MAP, R_NDCG, R_PAIRWISE,
                             S_EXP_GAIN, S_K, S_METRIC, S_NORM, S_PAIR, S_ROUND,
                             S_SCORE_NORM, S_SEED, S_SIGMA, S_TIES, TIES_EXPECTED, TIES_INPUT,
                             lambdarank_grad, position_totals, query_inverse_idcg,
                             xendcg_grad)
from .builtin import Objective

#: Pairs per row of ``lambdarank_pair_method`` when ``lambdarank_num_pair_per_sample`` is
#: not given: the top positions of ``topk`` (XGBoost's 32; LightGBM's truncation level is
#: 30) and the partners each row draws with ``mean`` (XGBoost's 1).
DEFAULT_PAIRS = {"topk": 32, "mean": 1}
#: Largest label of the exponential gain 2^y - 1: beyond it the gain is no longer an
#: exact float64 integer.
MAX_EXP_LABEL = 52


def ranking_settings(p, default_pairs=DEFAULT_PAIRS):
    """The gain table, and the kernel's settings but its metric, seed and round, of
    resolved params ``p`` (where LightGBM's ``lambdarank_norm`` has already set both
    normalisations under ``lambdarank``, unless the score normalisation is given too)."""
    method = p["lambdarank_pair_method"]
    k = p["lambdarank_num_pair_per_sample"] or default_pairs[method]
    settings = np.zeros(N_SETTINGS)
    settings[S_PAIR] = PAIR_TOPK if method == "topk" else PAIR_MEAN
    settings[S_K] = k
    settings[S_EXP_GAIN] = 1.0 if p["ndcg_exp_gain"] else 0.0
    settings[S_SIGMA] = p["sigmoid"]
    settings[S_NORM] = 1.0 if p["lambdarank_normalization"] else 0.0
    settings[S_SCORE_NORM] = 1.0 if p["lambdarank_score_normalization"] else 0.0
    settings[S_TIES] = TIES_EXPECTED if p["lambdarank_ties"] == "expected" else TIES_INPUT
    table = np.zeros(0) if p["label_gain"] is None else \
        np.asarray(p["label_gain"], dtype=np.float64)
    return table, settings


def check_relevance(name, y, exp_gain, table):
    """``y`` if its labels suit the gain: non-negative; integers below the table's length
    with ``label_gain``; integers up to :data:`MAX_EXP_LABEL` with the exponential gain
    (real-valued relevance needs ``ndcg_exp_gain=False``, the linear gain)."""
    if np.any(y < 0):
        raise ValueError(f"{name} needs non-negative relevance labels, got "
                         f"{np.unique(y[y < 0])[:5].tolist()}")
    whole = np.all(y == np.round(y))
    if table.shape[0]:
        if not whole or np.any(y >= table.shape[0]):
            raise ValueError(f"{name}: label_gain has {table.shape[0]} entries, so labels must "
                             f"be integers 0..{table.shape[0] - 1}; got "
                             f"{np.unique(y)[-5:].tolist()}")
    elif exp_gain and (not whole or np.any(y > MAX_EXP_LABEL)):
        raise ValueError(f"{name} with the exponential gain 2^y - 1 needs integer labels "
                         f"0..{MAX_EXP_LABEL}, got {np.unique(y)[-5:].tolist()}; real-valued or "
                         "larger relevance needs the linear gain: ndcg_exp_gain=False")
    return y


class Ranking(Objective):
    """Base of the ranking objectives: scores within a query, initial margin 0."""

    link = "identity"
    default_metric = "ndcg@10"
    #: the objective needs query groups (a Dataset with ``group`` or ``qid``)
    needs_queries = True

    def __init__(self, params):
        super().__init__(None)
        self.params = params
        self.seed, self.round, self.reducer = 0, 0, None

    def __getstate__(self):
        """A pickled objective (a model sent to prediction workers) leaves its training
        run's reducer behind: a Dask run's holds its worker."""
        state = dict(self.__dict__)
        state["reducer"] = None
        return state

    def start_round(self, seed, rnd, reducer=None):
        """The round about to be grown (the pair and target draws are keyed by it), and
        where the shards meet (position-bias sums)."""
        self.seed, self.round = int(seed) & 0x7FFFFFFFFFFFFFFF, int(rnd)
        self.reducer = reducer

    def init_score(self, info, reducer=None):
        return np.zeros(1)

    def base_margin_from_score(self, base_score):
        return np.array([float(base_score)])

    def _queries(self, info):
        if info.queries is None:
            raise ValueError(f"objective {self.name!r} ranks rows within queries: give the "
                             "Dataset group= (query sizes) or qid= (a query id per row)")
        return info.queries

    def loss(self, y, raw):
        raise NotImplementedError(f"{self.name} has no per-row loss")


class LambdaMART(Ranking):
    """``rank:ndcg``: LambdaMART on NDCG (Burges 2010), the pairs and ties of
    ``lambdarank_pair_method`` and ``lambdarank_ties`` (see :mod:`boostwood._kernels.rank`).

    ``lambdarank_unbiased`` learns from clicks, whose rows shown first are clicked more
    for being shown first; the Dataset's ``position`` says where each row was shown.

    * ``lambdarank_bias_method="additive"`` (LightGBM's position bias): the gradients are
      taken at score + b[position], and after each round every offset b[p] takes one
      Newton step on the rows shown at p (step ``eta``, L2 penalty
      ``lambdarank_position_bias_regularization``): the trees learn relevance, the
      offsets the position's effect, and the model keeps the trees only.
      ``position_bias`` holds the offsets after training.
    * ``"ipw"`` (XGBoost's Unbiased LambdaMART, Hu, Wang, Peng & Li 2019): a pair of a
      clicked row shown at position i over a row shown at j weighs 1 / (t+_i t-_j);
      after each round t+_i = (L+_i / L+_0)^(1 / (1 + p)), L+_i the pair losses of upper
      rows shown at i over their partners' t- (t- alike, p = ``lambdarank_bias_norm``).
      On simulated clicks it ranked worse than no correction here (XGBoost's maintainers
      report it overfits), so it is not the default.

    The per-position sums are exact and go through the reducer: shards estimate the same
    biases as one process.
    """

    name = "rank:ndcg"
    metric = R_NDCG
    default_pairs = DEFAULT_PAIRS

    def __init__(self, params):
        super().__init__(params)
        self.table, self.settings = ranking_settings(params, self.default_pairs)
        self.position_bias = None  # additive: the offsets by position
        self.t_plus = self.t_minus = None  # ipw: the biases of upper and lower rows
        # per query: the last ranking and 1 / IDCG, and the (queries, labels) they are of
        self._ranked = self._inv_idcg = self._state_for = None

    def check_labels(self, y):
        return check_relevance(self.name, y, bool(self.params["ndcg_exp_gain"]), self.table)

    def gradient(self, info, raw, gh_out):
        q = self._queries(info)
        settings = self.settings.copy()
        settings[S_METRIC] = self.metric
        settings[S_SEED], settings[S_ROUND] = self.seed, self.round
        qw = np.zeros(0) if q.weight is None else q.weight
        empty = np.zeros(0)
        bias = (np.zeros(0, np.int64), empty, empty, np.zeros((2, 0)))
        unbiased = self.params["lambdarank_unbiased"]
        if unbiased:
            self._start_biases(q, raw.shape[0])
            if self.params["lambdarank_bias_method"] == "ipw":
                bias = (q.position, self.t_plus, self.t_minus, np.zeros((2, raw.shape[0])))
            else:
                raw = raw + self.position_bias[q.position][:, None]
        ranked, inv_idcg = self._query_state(q, info.label)
        lambdarank_grad(raw, info.label, as_kernel_weights(info.weight), qw, q.keys, q.ptr,
                        q.order, self.table, inv_idcg, settings, bias, ranked, gh_out)
        if unbiased and self.params["lambdarank_bias_method"] == "ipw":
            self._update_propensities(q.position, bias[3])
        elif unbiased:
            self._update_offsets(q.position, gh_out[0])

    def _query_state(self, q, label):
        """What the gradient kernel keeps per query between rounds, for the queries ``q``
        and labels it was made for: the ranking at the last round (where this round's
        sort starts: scores move little in a round, so it is nearly sorted; the result
        does not depend on it) and, for NDCG, 1 / IDCG at the pairs' cut (constant)."""
        if self._state_for is None or self._state_for[0] is not q \
                or self._state_for[1] is not label:
            sizes = q.sizes()
            self._ranked = np.arange(q.order.shape[0], dtype=np.int64) \
                - np.repeat(q.ptr[:-1], sizes)
            self._inv_idcg = np.zeros(0)
            if self.metric == R_NDCG:
                k = int(self.settings[S_K]) if self.settings[S_PAIR] == PAIR_TOPK else 0
                self._inv_idcg = np.empty(q.ptr.shape[0] - 1)
                query_inverse_idcg(label, q.ptr, q.order, self.table, k,
                                   bool(self.settings[S_EXP_GAIN]), self._inv_idcg)
            self._state_for = (q, label)
        return self._ranked, self._inv_idcg

    def _start_biases(self, q, n):
        if q.position is None:
            raise ValueError("lambdarank_unbiased estimates the bias of display positions: "
                             "give the Dataset position= (each row's rank when shown)")
        if self.position_bias is not None or self.t_plus is not None:
            return
        top = np.array([float(q.position.max()) if n else 0.0])
        if self.reducer is not None:
            self.reducer.allreduce_max(top)
        n_pos = int(top[0]) + 1
        self.position_bias = np.zeros(n_pos)
        self.t_plus, self.t_minus = np.ones(n_pos), np.ones(n_pos)

    def _by_position(self, position, values):
        """Exact sums of the rows of ``values`` (2, n_rows) by position, across shards."""
        n_pos = self.position_bias.shape[0]
        acc = new_accumulator(2 * n_pos)
        position_totals(position, values, acc)
        if self.reducer is not None:
            self.reducer.allreduce_sum(acc)
        return np.array([exact_value(a) for a in acc]).reshape(2, n_pos)

    def _update_offsets(self, position, gh):
        """One Newton step of each position's offset on this round's g and h."""
        g, h = self._by_position(position, np.ascontiguousarray(gh.T, dtype=np.float64))
        counts = np.bincount(position, minlength=g.shape[0]).astype(np.int64)
        if self.reducer is not None:
            self.reducer.allreduce_sum(counts)
        reg = self.params["lambdarank_position_bias_regularization"] * counts
        b = self.position_bias
        b += self.params["eta"] * (-g - reg * b) / (np.abs(h + reg) + 0.001)

    def _update_propensities(self, position, cost):
        """t+ and t- from this round's pair losses by position."""
        totals = self._by_position(position, cost)
        exponent = 1.0 / (1.0 + self.params["lambdarank_bias_norm"])
        for t, total in ((self.t_plus, totals[0]), (self.t_minus, totals[1])):
            if total[0] > 0.0:
                seen = total > 0.0  # (a position without pairs keeps its estimate)
                t[seen] = (total[seen] / total[0]) ** exponent


class LambdaRankLightGBM(LambdaMART):
    """LightGBM's name for LambdaMART on NDCG, with its defaults: the top 30 positions
    (``lambdarank_truncation_level``), and ``lambdarank_norm`` switching both
    normalisations."""

    name = "lambdarank"
    default_pairs = {"topk": 30, "mean": 1}


class LambdaMAP(LambdaMART):
    """``rank:map``: LambdaMART on mean average precision (relevant: label > 0). Its
    swap deltas use the ranking by score, ties by label (descending)."""

    name = "rank:map"
    metric = R_MAP
    default_metric = "map@10"

    def check_labels(self, y):
        if np.any(y < 0):
            raise ValueError(f"{self.name} needs non-negative labels (relevant: > 0)")
        return y


class RankNet(LambdaMAP):
    """``rank:pairwise``: every pair of different labels weighs 1 (RankNet's loss,
    Burges et al. 2005), with LambdaMART's pair methods."""

    name = "rank:pairwise"
    metric = R_PAIRWISE
    default_metric = "ndcg@10"


class XENDCG(Ranking):
    """``rank_xendcg`` (LightGBM's name): XE-NDCG (Bruch 2020), a cross entropy between
    the softmax of a query's scores and targets 2^y - u, u uniform per row and round;
    O(rows) per query."""

    name = "rank_xendcg"

    def check_labels(self, y):
        return check_relevance(self.name, y, True, np.zeros(0))

    def gradient(self, info, raw, gh_out):
        q = self._queries(info)
        qw = np.zeros(0) if q.weight is None else q.weight
        if self.params["lambdarank_unbiased"]:
            raise ValueError("lambdarank_unbiased is a LambdaMART option (rank:ndcg, "
                             "rank:map, rank:pairwise, lambdarank), not rank_xendcg's")
        xendcg_grad(raw, info.label, as_kernel_weights(info.weight), qw, q.ptr, q.order,
                    info.ids(), self.seed, self.round, gh_out)


RANKING = (LambdaMART, LambdaRankLightGBM, LambdaMAP, RankNet, XENDCG)
