"""The tree grower for classic decision trees: impurity criteria (Gini, entropy, gain
ratio, squared error) instead of a gradient gain.

Same grower as boosting -- growth policies, partition kernel, per-node feature
draws, the exact search over sorted columns of :class:`ExactTreeGrower` -- with
per-class statistics in the scan (:func:`boostwood._kernels.criterion.criterion_scan`).
On raw values that is CART's exact search (thresholds half-way between
consecutive values); on :class:`boostwood.data.columns.BinnedColumns` it searches histogram bins.
"""
import numpy as np

from .._kernels.criterion import ENTROPY, GAIN_RATIO, criterion_settings
from .._kernels.levels import splittable_nodes
from .._kernels.nodes import ND_DEPTH
from .exact import ExactTreeGrower
from .levels import grow_levels
from .nodes import NodeTable
from .splitters import CriterionSplitter, TreeState

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

    keyed_node_draws = False  # the splitter's feature_mask draws per node, scikit-learn's rule

    def __init__(self, columns, params, n_channels, criterion, min_samples_split=2,
                 min_impurity_decrease=0.0, random_splits=False):
        super().__init__(columns, params)
        if criterion not in CRITERIA:
            raise ValueError(f"criterion must be one of {sorted(CRITERIA)}, got {criterion!r}")
        self.random_splits = bool(random_splits)
        self.K = int(n_channels)
        self.criterion = CRITERIA[criterion]
        self.min_samples_split = int(min_samples_split)
        self.min_impurity_decrease = float(min_impurity_decrease)
        p = params
        self.splitter = CriterionSplitter(columns, self.buf, self.node_of, self.K, self.criterion,
                                          p.colsample_bynode, p.grow_policy == "depthwise",
                                          self.random_splits, self.min_impurity_decrease)
        self.crit_settings = criterion_settings(self.criterion, self.min_samples_split,
                                                p.min_data_in_leaf, p.min_child_weight,
                                                max(p.max_depth, 0))

    def grow_tree(self, stat, channel, weight, rows, features, rng):
        """Grow a tree on rows ``rows`` (None = all): row r adds ``stat[r]`` to channel
        ``channel[r]`` and ``weight[r]`` to the weight. Returns (Tree, node statistics of
        shape (n_nodes, K + 2)); ``Tree.value`` holds channel 0 / weight (the mean for
        regression), ``Tree.gain`` the impurity decrease of each split."""
        if self.params.grow_policy == "depthwise" and self.vectorized:
            self.splitter.begin_tree(stat, channel, weight)
            n = self.n_rows if rows is None else rows.shape[0]
            self.buf[0, :n] = np.arange(n, dtype=self.buf.dtype) if rows is None else rows
            self.tree_state = TreeState(features, None, self.crit_settings, rng)
            return grow_levels(self, n)
        # the rows each feature lists: all of them, then (depth-wise) only those of nodes
        # still being split, compacted level by level
        self.splitter.begin_tree(stat, channel, weight, self.n_rows)
        return self.grow(None, rows, features, rng)

    #: depth-wise trees are grown by :func:`boostwood.tree.levels.grow_levels` (no Python
    #: per node); False selects the generic node-by-node path (tests compare the two)
    vectorized = True

    def can_split_many(self, stats, depth):
        """May these nodes (statistics (m, K + 2), depths (m,)) be split? One rule for
        both growth paths (:func:`boostwood._kernels.levels.splittable_nodes`)."""
        out = np.empty(stats.shape[0], dtype=np.bool_)
        splittable_nodes(np.ascontiguousarray(stats, dtype=np.float64),
                         np.asarray(depth, dtype=np.int64), self.crit_settings, out)
        return out

    def _splittable(self, table, node):
        return bool(self.can_split_many(table.stats[node:node + 1],
                                         table.ints[ND_DEPTH, node:node + 1])[0])

    def _new_table(self):
        return NodeTable(self.K + 2, np.float64, 64)

    def _begin_tree(self, gh):
        self._gh = None
        self._settings = self.crit_settings  # (the splitter's through the tree state)
        # the policy cells next_batch and retire_next read (which leaves expand next);
        # whether a node may split is can_split_many's rule here
        self._policy = self.growth_policy(1.0, 0)

    def _root(self, table, n):
        table.add_root(self.splitter.root_stats(n), n)
        if self._splittable(table, 0):
            self._scan(table, [0])

    def finish_tree(self, table):
        n = table.n
        stats = table.stats[:n].copy()
        w = stats[:, self.K]
        value = np.divide(stats[:, 0], w, out=np.zeros(n), where=w > 0)
        return table.to_tree(value, w, stats[:, self.K + 1].copy()), stats
