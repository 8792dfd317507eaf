"""The tree grower for classic decision trees: impurity criteria (Gini, entropy, gain
ratio, squared error) instead of a gradient gain.

Same grower as boosting -- growth policies, partition kernel, per-node feature
draws, the exact search over sorted columns of :class:`ExactTreeGrower` -- with
per-class statistics in the scan (:func:`boostwood._kernels.criterion.criterion_scan`).
On raw values that is CART's exact search (thresholds half-way between
consecutive values); on :class:`boostwood.data.columns.BinnedColumns` it searches histogram bins.
"""
import numpy as np

from .._kernels.criterion import (ENTROPY, GAIN_RATIO, compact_rows, criterion_settings,
                                  feature_varies, node_statistics)
from .._kernels.levels import splittable_nodes
from .._kernels.nodes import ND_DEPTH
from .exact import ExactTreeGrower
from .levels import grow_levels
from .nodes import NodeTable
from .splitters import CriterionSplitter

CRITERIA = {"gini": 0, "entropy": ENTROPY, "gain_ratio": GAIN_RATIO, "squared_error": 3}


class CriterionTreeGrower(ExactTreeGrower):
    """Grows one decision tree by an impurity criterion.

    Parameters
    ----------
    columns : SortedColumns (exact) or BinnedColumns (histogram bins)
    params : GrowerParams; ``min_data_in_leaf`` is min_samples_leaf, ``min_child_weight``
        the minimum weight of a leaf, ``colsample_bynode`` the share of features drawn
        per node; gradient penalties are not used
    n_channels : int, classes (1 for regression)
    criterion : "gini", "entropy", "gain_ratio" or "squared_error"
    min_samples_split : int, rows a node needs to be split
    min_impurity_decrease : float, a split must lower the weighted impurity by this
        much, relative to the root's weight (scikit-learn's definition)
    random_splits : bool, default False
        Extremely randomized trees: one random threshold per node and feature
        (needs sorted raw columns).
    """

    keyed_node_draws = False  # feature_mask draws per node, scikit-learn's rule

    def __init__(self, columns, params, n_channels, criterion, min_samples_split=2,
                 min_impurity_decrease=0.0, random_splits=False):
        super().__init__(columns, params)
        self.random_splits = bool(random_splits)
        if self.random_splits:
            vals = columns.values
            self._values = np.concatenate(vals) if vals else np.zeros(0)
            self._value_offsets = np.concatenate([[0], np.cumsum([v.size for v in vals])]) \
                .astype(np.int64)
        if criterion not in CRITERIA:
            raise ValueError(f"criterion must be one of {sorted(CRITERIA)}, got {criterion!r}")
        self.K = int(n_channels)
        self.criterion = CRITERIA[criterion]
        self.min_samples_split = int(min_samples_split)
        self.min_impurity_decrease = float(min_impurity_decrease)
        self.splitter = CriterionSplitter(self)
        p = params
        self._crit_settings = criterion_settings(self.criterion, self.min_samples_split,
                                                 p.min_data_in_leaf, p.min_child_weight,
                                                 max(p.max_depth, 0))

    def grow_tree(self, stat, channel, weight, rows, features, rng):
        """Grow a tree on rows ``rows`` (None = all): row r adds ``stat[r]`` to channel
        ``channel[r]`` and ``weight[r]`` to the weight. Returns (Tree, node statistics of
        shape (n_nodes, K + 2)); ``Tree.value`` holds channel 0 / weight (the mean for
        regression), ``Tree.gain`` the impurity decrease of each split."""
        self._stat = np.ascontiguousarray(stat, dtype=np.float64)
        self._channel = np.ascontiguousarray(channel, dtype=np.int32)
        self._weight = np.ascontiguousarray(weight, dtype=np.float64)
        self._row_stats_tuple = (self._stat, self._channel, self._weight)
        if self.params.grow_policy == "depthwise" and self.vectorized:
            n = self.n_rows if rows is None else rows.shape[0]
            self.buf[0, :n] = np.arange(n, dtype=self.buf.dtype) if rows is None else rows
            self._features, self._rng = features, rng
            return grow_levels(self, n)
        c = self.columns
        # the rows each feature lists: all of them, then (depth-wise) only those of nodes
        # still being split, compacted level by level
        self._lists = [c.order, c.order_offsets, c.missing_rows, c.missing_offsets]
        self._listed = self.n_rows
        return self.grow(None, rows, features, rng)

    #: depth-wise trees are grown by :func:`boostwood.tree.levels.grow_levels` (no Python
    #: per node); False selects the generic node-by-node path (tests compare the two)
    vectorized = True

    def _root_stats(self, n):
        out = np.empty((1, self.K + 2))
        one = np.zeros(1, dtype=np.int64)
        node_statistics(self.buf, one, one, np.full(1, n, dtype=np.int64), self._stat,
                        self._channel, self._weight, out)
        self._root_weight = out[0, self.K]
        return out[0]

    def _can_split_many(self, stats, depth):
        """May these nodes (statistics (m, K + 2), depths (m,)) be split? One rule for
        both growth paths (:func:`boostwood._kernels.levels.splittable_nodes`)."""
        out = np.empty(stats.shape[0], dtype=np.bool_)
        splittable_nodes(np.ascontiguousarray(stats, dtype=np.float64),
                         np.asarray(depth, dtype=np.int64), self._crit_settings, out)
        return out

    def _splittable(self, table, node):
        return bool(self._can_split_many(table.stats[node:node + 1],
                                         table.ints[ND_DEPTH, node:node + 1])[0])

    def _new_table(self):
        return NodeTable(self.K + 2, np.float64, 64)

    def _begin_tree(self, gh):
        self._gh = None
        # the policy cells next_batch and retire_next read (which leaves expand next);
        # whether a node may split is _can_split_many's rule here
        self._policy = self._growth_policy(1.0, 0)

    def _root(self, table, n):
        table.add_root(self._root_stats(n), n)
        if self._splittable(table, 0):
            self._scan(table, [0])

    def _compact(self, active):
        """Drop the rows of finished leaves from the feature lists once they are a third."""
        if self.params.grow_policy != "depthwise" or active > 0.67 * self._listed:
            return
        out = []
        for rows, offsets in (self._lists[:2], self._lists[2:]):
            new_rows = np.empty(rows.shape[0], dtype=rows.dtype)
            new_offsets = np.empty_like(offsets)
            compact_rows(rows, offsets, self.node_of, new_rows, new_offsets)
            out += [new_rows[:new_offsets[-1]], new_offsets]
        self._lists, self._listed = out, active

    def feature_mask(self, B, lists, varies=None):
        """(B, A) uint8: the features each node of the batch may split on.

        ``max_features`` features are drawn at random per node (Breiman 2001); those
        constant in the node are drawn like any other but cannot split it, and when
        all the drawn ones are constant the draw goes on to the next varying feature
        (scikit-learn's rule, so a node that can be split always is). Needs
        ``node_of`` set for the batch (or ``varies`` given).
        """
        A = self._features.shape[0]
        n_pick = max(1, int(round(self.params.colsample_bynode * A)))
        if n_pick >= A:
            return np.ones((B, A), dtype=np.uint8)
        if varies is None:
            varies = np.empty((B, A), dtype=np.uint8)
            feature_varies(self.columns.codes, tuple(lists), self.node_of, B, varies)
        keys = self._rng.random((B, A))
        pick = np.argpartition(keys, n_pick - 1, axis=1)[:, :n_pick]
        mask = np.zeros((B, A), dtype=np.uint8)
        np.put_along_axis(mask, pick, 1, axis=1)
        mask &= varies
        none = ~mask.any(axis=1) & varies.any(axis=1)
        if none.any():  # the first varying feature in the draw order
            k = np.where(varies[none] != 0, keys[none], np.inf)
            mask[np.flatnonzero(none), np.argmin(k, axis=1)] = 1
        return mask

    def _finish(self, table):
        n = table.n
        stats = table.stats[:n].copy()
        w = stats[:, self.K]
        value = np.divide(stats[:, 0], w, out=np.zeros(n), where=w > 0)
        return table.to_tree(value, w, stats[:, self.K + 1].copy()), stats
