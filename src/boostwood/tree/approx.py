"""Global proposals of the approximate algorithm (``tree_method="approx"``).

Before every tree, each feature's candidate split points are re-proposed as
hessian-weighted percentiles of its values over the rows in the bag (Chen &
Guestrin 2016, Alg. 2 with global proposals, eq. 8-9: the hessians weight the
ranks because the objective is a weighted squared loss with weights h_i). The
candidates come from a weighted quantile summary
(:class:`boostwood.data.sketch.Summary`) and become that tree's bins; the tree
is then grown by the histogram grower on them (bucket statistics, subtraction
trick, the same split scan). Local proposals, re-proposed at every node, are
:class:`~boostwood.tree.exact.ExactTreeGrower` with ``local_eps``.
"""
import math

import numpy as np

from ..data.sketch import Summary


class GlobalProposal:
    """Per-tree candidate cuts and the binned matrix they induce.

    Parameters
    ----------
    columns : SortedColumns of the training data
    eps : float, sketch_eps: about 1 / eps candidates per feature
    """

    def __init__(self, columns, eps):
        self.columns = columns
        self.n_cand = int(math.ceil(1.0 / eps))
        self.n_bins_max = self.n_cand + 2  # value bins (at most n_cand + 1) and the missing bin
        n_features, n_rows = columns.codes.shape
        if self.n_bins_max > 65536:
            raise ValueError(f"sketch_eps={eps} asks for more than 65534 candidates per feature")
        self.dtype = np.uint8 if self.n_bins_max <= 256 else np.uint16
        self.X_columns = np.empty((n_features, n_rows), dtype=self.dtype)
        self.X_binned = np.empty((n_rows, n_features), dtype=self.dtype)
        self.n_bins = np.ones(n_features, dtype=np.int32)
        self.cut_codes = [np.zeros(1, dtype=np.int64)] * n_features

    def propose(self, hess, rows=None):
        """Re-propose every feature's cuts from the hessians ``hess`` of the rows in
        the bag (all rows when ``rows`` is None) and re-bin the training matrix."""
        c = self.columns
        w = np.asarray(hess, dtype=np.float64)
        if rows is not None:
            bag = np.zeros_like(w)
            bag[rows] = w[rows]
            w = bag
        for f in range(c.codes.shape[0]):
            n_values = int(c.n_values[f])
            codes = c.codes[f]
            present = codes < n_values
            weight = np.bincount(codes[present], weights=w[present], minlength=n_values)
            summary = Summary.from_value_weights(np.arange(n_values, dtype=np.float64), weight)
            if len(summary) == 0:
                cuts = np.array([max(n_values - 1, 0)], dtype=np.int64)
            else:
                cuts = summary.cuts(self.n_cand).astype(np.int64)
                cuts[-1] = n_values - 1  # the last bin reaches the largest value
            self.cut_codes[f] = cuts
            lut = np.searchsorted(cuts, np.arange(n_values + 1), side="left").astype(self.dtype)
            lut[n_values] = cuts.size  # missing bin
            self.X_columns[f] = lut[codes]
            self.n_bins[f] = cuts.size
        self.X_binned[:] = self.X_columns.T
        return self

    def thresholds(self, features, bins):
        """Raw thresholds of splits "bin <= b": the candidate value s_b itself, so the
        split is "x <= s_b" (buckets are (s_{b-1}, s_b], as in the paper's Alg. 2)."""
        cut = [self.cut_codes[f][b] for f, b in zip(features, bins)]
        return np.array([self.columns.values[f][c] for f, c in zip(features, cut)])
