"""Global proposals of the approximate algorithm (``tree_method="approx"``).

Before every tree, each feature's candidate split points are re-proposed as
hessian-weighted percentiles of its values over the rows in the bag (Chen &
Guestrin 2016, Alg. 2 with global proposals, eq. 8-9: the hessians weight the
ranks because the objective is a weighted squared loss with weights h_i). The
candidates are the answers of the exact weighted quantile summary of its distinct
values (:class:`boostwood.data.sketch.Summary`'s query rule, compiled as
:func:`boostwood._kernels.fixed.exact_cuts`) and become that tree's bins; the tree
is then grown by the histogram grower on them (bucket statistics, subtraction
trick, the same split scan). Local proposals, re-proposed at every node, are
:func:`~boostwood.tree.exact.exact_grower` with ``local_eps``.

*A row sample* (``sketch_sample_cnt`` = m > 0, fewer than the n rows of all shards):
the weights are those of the rows whose uniform for (seed, row id) is below m / n, the
same rows however the data are split into shards, so the proposals stay byte-identical
across shard counts, while each shard sends only its sampled rows' distinct values
where the proposals are computed (without a sample: its distinct values of nonzero
weight, and its largest value). The proposals are then the exact weighted quantiles of
the sample. With equal hessians, by the Dvoretzky-Kiefer-Wolfowitz inequality, each
one's rank in all rows is within sqrt(ln(2 / delta) / (2 m)) of its rank in the sample
with probability 1 - delta: about 0.0044 for 200,000 rows at delta = 0.001, against a
spacing of ``sketch_eps`` (0.03 by default) between candidates. With unequal hessians
the same holds approximately with the sample's effective size m_eff = (sum of h)^2 / sum
of h^2 in place of m. The sample is drawn once per training; every tree weighs it by
its own hessians.
"""
import math

import numpy as np

from .._comm import combine
from .._kernels.binning import bins_of_codes
from .._kernels.fixed import code_weight_sums, exact_cuts
from .._kernels.random import STREAM_SKETCH_SAMPLE, row_uniforms

#: Most candidate splits per feature of global proposals (``1 / sketch_eps``): value
#: bins, at most one more, and the missing bin fit uint16 codes.
MAX_APPROX_CANDIDATES = 65534


class GlobalProposal:
    """Per-tree candidate cuts and the binned matrix they induce.

    Parameters
    ----------
    columns : SortedColumns of the training data (of this shard)
    eps : float, sketch_eps: about 1 / eps candidates per feature
    reducer : optional; with several shards, every shard proposes the same cuts
        from the weights of all of them
    categories : dict, feature index -> number of categories, for categorical features:
        they keep one bin per category (category c in bin c) in every tree
    sample : (sketch_sample_cnt, seed, row ids or None for 0..n-1): propose from a row
        sample (module doc) when sketch_sample_cnt is above 0 and below the rows of all
        shards
    """

    def __init__(self, columns, eps, reducer=None, categories=None, sample=(0, 0, None)):
        self.columns = columns
        self.reducer = reducer
        self.categories = dict(categories or {})
        if not 1.0 / eps <= MAX_APPROX_CANDIDATES:  # (5e-324 makes it inf: no integer)
            raise ValueError(f"sketch_eps={eps} asks for more than {MAX_APPROX_CANDIDATES} "
                             "candidates per feature")
        self.n_cand = int(math.ceil(1.0 / eps))
        n_features, n_rows = columns.codes.shape
        # value bins: at most n_cand + 1, and no more than a feature's distinct values (on
        # every shard: all size their histograms alike), then the missing bin
        most = np.array([max(columns.n_values, default=0)], dtype=np.float64)
        if reducer is not None:
            reducer.allreduce_max(most)
        self.n_bins_max = max(min(self.n_cand + 1, max(int(most[0]), 1)),
                              max(self.categories.values(), default=0)) + 1
        self.dtype = np.uint8 if self.n_bins_max <= 256 else np.uint16
        self.X_columns = np.empty((n_features, n_rows), dtype=self.dtype)
        self.X_binned = np.empty((n_rows, n_features), dtype=self.dtype)
        self.n_bins = np.ones(n_features, dtype=np.int32)
        self.cut_values = [np.zeros(1)] * n_features
        self._n_values = np.asarray(columns.n_values, dtype=np.int64)
        self._sums = np.empty((n_features, max(int(self._n_values.max(initial=0)), 1)),
                              dtype=np.int64)
        self.sampled = _row_sample(n_rows, *sample, reducer)  # 1 / 0 per row, or None

    def propose(self, hess, unit, rows=None):
        """Re-propose every feature's cuts from the fixed-point hessians ``hess`` (int64,
        one unit = ``unit``) of the rows in the bag (all rows when ``rows`` is None) and
        re-bin the training matrix.

        Each distinct value's weight is an exact integer sum, added across shards, so
        the proposal is the same however the rows are split."""
        c = self.columns
        w = np.asarray(hess, dtype=np.int64)
        if rows is not None:
            bag = np.zeros_like(w)
            bag[rows] = w[rows]
            w = bag
        if self.sampled is not None:
            w = w * self.sampled
        code_weight_sums(c.codes, np.ascontiguousarray(w), self._n_values, self._sums)
        lut_starts = np.zeros(c.codes.shape[0], dtype=np.int64)
        lut_starts[1:] = np.cumsum(self._n_values + 1)[:-1]
        luts = np.empty(int(np.sum(self._n_values + 1)), dtype=self.dtype)
        own = [(c.values[f][:int(self._n_values[f])], self._sums[f, :int(self._n_values[f])])
               for f in range(c.codes.shape[0])]
        every = None
        if self.reducer is not None and self.reducer.n_shards > 1:
            # every shard's distinct values of weight and largest value meet where the
            # reducer combines them (the cuts read no other); the shards receive the cuts
            every = combine(self.reducer, [_weighed(*part) for part in own], lambda parts: [
                _cuts(*_merged([p[f] for p in parts]), float(unit), self.n_cand)
                for f in range(len(own))])
        for f in range(c.codes.shape[0]):
            n_values = int(self._n_values[f])
            cuts = _cuts(*own[f], float(unit), self.n_cand) if every is None else every[f]
            if self.categories.get(f, 0) > 0:  # codes 0..k-1: category c in bin c
                cuts = np.arange(self.categories[f], dtype=np.float64)
            self.cut_values[f] = cuts
            lut = luts[lut_starts[f]:lut_starts[f] + n_values + 1]
            lut[:n_values] = _bins_of_sorted(cuts, c.values[f][:n_values], self.dtype)
            lut[n_values] = cuts.size  # missing bin
            self.n_bins[f] = cuts.size
        bins_of_codes(c.codes, luts, lut_starts, self.X_columns)
        self.X_binned[:] = self.X_columns.T
        return self

    def thresholds(self, features, bins):
        """Raw thresholds of splits "bin <= b": the candidate value s_b itself, so the
        split is "x <= s_b" (buckets are (s_{b-1}, s_b], as in the paper's Alg. 2)."""
        return np.array([self.cut_values[f][b] for f, b in zip(features, bins)])


def _cuts(values, weight, unit, n_cand):
    """A feature's cuts from its sorted distinct values and their fixed-point weights:
    ``Summary.from_value_weights(values, weight * unit).cuts(n_cand)`` (compiled), the
    last reaching the largest value."""
    cuts = exact_cuts(values, np.asarray(weight, dtype=np.int64), unit, n_cand)
    if cuts.size == 0:
        return values[-1:].copy() if values.size else np.array([np.inf])
    cuts[-1] = values[-1]
    return cuts


def _weighed(values, weight):
    """A shard's sorted distinct values of one feature, and their weights, less the values
    of zero weight but the largest: :func:`_cuts` of the merged parts leaves values of no
    total weight out, but for the largest value of all (the last cut). (Not "> 0": a
    negative part of a value's total, which hessians of either sign could give, must
    still reach it.)"""
    keep = weight != 0
    if keep.size:
        keep[-1] = True
    return values[keep], weight[keep]


def _row_sample(n_rows, count, seed, row_ids, reducer):
    """1 for the rows whose uniform for (seed, STREAM_SKETCH_SAMPLE, row id) is below
    count / (rows of all shards), else 0 (int64, one per row); None where ``count`` is 0
    or holds every row. One collective (the rows of all shards) when ``count`` > 0."""
    if count <= 0:
        return None
    total = np.array([n_rows], dtype=np.int64)
    if reducer is not None:
        reducer.allreduce_sum(total)
    if count >= total[0]:
        return None
    ids = np.arange(n_rows, dtype=np.int64) if row_ids is None else \
        np.ascontiguousarray(row_ids, dtype=np.int64)
    u = np.empty(n_rows, dtype=np.float64)
    row_uniforms(int(seed) & 0x7FFFFFFFFFFFFFFF, STREAM_SKETCH_SAMPLE, 0, ids, u)
    return (u < count / float(total[0])).astype(np.int64)


def _merged(parts):
    """The distinct values of every shard's (values, weights) and their total weights
    (exact)."""
    every, inverse = np.unique(np.concatenate([p[0] for p in parts]), return_inverse=True)
    total = np.zeros(every.size, dtype=np.int64)
    np.add.at(total, inverse, np.concatenate([p[1] for p in parts]))
    return every, total


def _bins_of_sorted(cuts, values, dtype):
    """``np.searchsorted(cuts, values, side="left")`` for ascending ``values``: the bins
    are runs, so this searches the cuts among the values (a few hundred searches, not one
    per distinct value: 800k of them per continuous feature, 13 ms a feature) and writes
    each run."""
    ends = np.searchsorted(values, cuts, side="right")  # values <= cuts[k]: bins 0..k
    runs = np.diff(ends, prepend=0, append=values.size)
    return np.repeat(np.arange(cuts.size + 1, dtype=dtype), runs)
