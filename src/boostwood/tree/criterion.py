"""The growers of classic decision trees: impurity criteria (Gini, entropy, gain
ratio, squared error) instead of a gradient gain.

Same grower as boosting -- growth policies, partition kernel, per-node feature
draws, the exact search over sorted columns -- composed with a
:class:`~boostwood.tree.splitters.CriterionSplitter` (per-class statistics in the scan,
:func:`boostwood._kernels.criterion.criterion_scan`) and :class:`CriterionStatistics`.
On raw values that is CART's exact search (thresholds half-way between consecutive
values); on :class:`boostwood.data.columns.BinnedColumns` it searches histogram bins.
Depth-wise trees grow a level at a time (:func:`boostwood.tree.levels.grow_levels`).
"""
import numpy as np

from .._kernels.criterion import ENTROPY, GAIN_RATIO, criterion_settings
from .._kernels.levels import splittable_nodes
from .._kernels.nodes import ND_DEPTH
from .._kernels.splits import CATEGORICAL
from .grower import TreeGrower
from .levels import grow_levels
from .nodes import NodeTable
from .splitters import CriterionSplitter, TreeState

CRITERIA = {"gini": 0, "entropy": ENTROPY, "gain_ratio": GAIN_RATIO, "squared_error": 3}

#: Depth-wise criterion trees grow a level at a time (:func:`grow_levels`: no Python per
#: node); False selects the node-by-node path of the grower (tests compare the two).
LEVEL_WISE = True


class CriterionStatistics:
    """What a criterion tree's nodes sum: ``K`` channels (class counts, or the target's
    sum for regression), the weight and the sum of squares (``K + 2`` floats, from the
    splitter's row statistics); a node may split by ``settings``
    (:func:`~boostwood._kernels.criterion.criterion_settings`); a leaf is worth channel
    0 over the weight."""

    #: The splitter draws each node's features by scikit-learn's rule, not by node keys.
    keyed_node_draws = False

    def __init__(self, K, settings, splitter):
        self.K, self.settings, self.splitter = K, settings, splitter

    def begin_tree(self, gh, params):
        # the policy cells next_batch and retire_next read (which leaves expand next);
        # whether a node may split is can_split_many's rule here
        return None, self.settings, 1.0

    def new_table(self, params, n_rows):
        return NodeTable(self.K + 2, np.float64, 64, cat_words=self.splitter.cat_words)

    def root_totals(self, gh, buf, n):
        return self.splitter.root_stats(n)

    def can_split_many(self, stats, depth):
        """May these nodes (statistics (m, K + 2), depths (m,)) be split? One rule for
        both growth paths (:func:`boostwood._kernels.levels.splittable_nodes`)."""
        out = np.empty(stats.shape[0], dtype=np.bool_)
        splittable_nodes(np.ascontiguousarray(stats, dtype=np.float64),
                         np.asarray(depth, dtype=np.int64), self.settings, out)
        return out

    def splittable(self, table, node, policy):
        return bool(self.can_split_many(table.stats[node:node + 1],
                                        table.ints[ND_DEPTH, node:node + 1])[0])

    def finish(self, table, params):
        """(Tree, node statistics of shape (n_nodes, K + 2)); ``Tree.value`` holds channel
        0 / weight (the mean for regression), ``Tree.gain`` the impurity decrease."""
        n = table.n
        stats = table.stats[:n].copy()
        w = stats[:, self.K]
        value = np.divide(stats[:, 0], w, out=np.zeros(n), where=w > 0)
        tree = table.to_tree(value, w, stats[:, self.K + 1].copy())
        return categories_of_codes(tree, self.splitter.columns), stats


def categories_of_codes(tree, columns):
    """``tree`` with its categorical splits' sets of codes (ranks or bins, what the grower
    partitions by) turned into sets of category codes (what prediction reads)."""
    nodes = np.nonzero(tree.split_kind == CATEGORICAL)[0]
    features = tree.feature[nodes]
    remap = [f for f in np.unique(features).tolist() if not columns.codes_are_categories(f)]
    if not remap:
        return tree  # (the usual case: the sets are already sets of categories)
    words = [tree.cat_bits[tree.cat_start[j]:tree.cat_start[j] + tree.cat_len[j]]
             for j in nodes]
    for f in remap:  # every node of feature f at once: codes -> bits -> categories
        at = np.nonzero(features == f)[0]
        n_codes = int(columns.n_values[f])
        width = (n_codes + 31) // 32
        block = np.zeros((at.size, width), dtype="<u4")
        for row, i in enumerate(at):
            block[row, :words[i].size] = words[i][:width]
        bits = np.unpackbits(block.view(np.uint8), axis=1, bitorder="little")[:, :n_codes]
        code = columns.code_per_category(f)  # a category is in the set its code is in
        held = np.nonzero(code >= 0)[0]
        out = np.zeros((at.size, (code.size + 31) // 32 * 32), dtype=bool)
        out[:, held] = bits[:, code[held]]
        packed = np.packbits(out, axis=1, bitorder="little").view("<u4").astype(np.uint32)
        for row, i in enumerate(at):
            last = np.flatnonzero(packed[row])
            words[i] = packed[row, :last[-1] + 1]
    lengths = np.array([w.size for w in words], dtype=tree.cat_len.dtype)
    tree.cat_len[nodes] = lengths
    tree.cat_start[nodes] = np.cumsum(lengths) - lengths
    tree.cat_bits = np.concatenate(words).astype(np.uint32)
    return tree


def criterion_grower(columns, params, n_channels, criterion, min_samples_split=2,
                     min_impurity_decrease=0.0, random_splits=False):
    """A :class:`~boostwood.tree.grower.TreeGrower` of one decision tree at a time by an
    impurity criterion (grow with :func:`grow_tree`).

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
    if criterion not in CRITERIA:
        raise ValueError(f"criterion must be one of {sorted(CRITERIA)}, got {criterion!r}")
    K, code, p = int(n_channels), CRITERIA[criterion], params
    n_rows = columns.codes.shape[1]

    def splitter(buf):
        return CriterionSplitter(columns, buf, np.empty(n_rows, dtype=np.int32), K, code,
                                 p.colsample_bynode, p.grow_policy == "depthwise",
                                 bool(random_splits), float(min_impurity_decrease))

    settings = criterion_settings(code, int(min_samples_split), p.min_data_in_leaf,
                                  p.min_child_weight, max(p.max_depth, 0))
    return TreeGrower.stepped(columns.codes, columns.n_values, params, None, splitter,
                              lambda s, _: CriterionStatistics(K, settings, s),
                              columns=columns)


def grow_tree(grower, stat, channel, weight, rows, features, rng):
    """Grow a tree with a :func:`criterion_grower` on rows ``rows`` (None = all): row r
    adds ``stat[r]`` to channel ``channel[r]`` and ``weight[r]`` to the weight. Returns
    (Tree, node statistics of shape (n_nodes, K + 2)); ``Tree.value`` holds channel 0 /
    weight (the mean for regression), ``Tree.gain`` the impurity decrease of each split."""
    g, s = grower, grower.splitter
    if g.params.grow_policy == "depthwise" and LEVEL_WISE:
        s.begin_tree(stat, channel, weight)
        n = g.n_rows if rows is None else rows.shape[0]
        g.buf[0, :n] = np.arange(n, dtype=g.buf.dtype) if rows is None else rows
        g.tree_state = TreeState(features, None, g.statistics.settings, rng)
        return grow_levels(g, n)
    # the rows each feature lists: all of them, then (depth-wise) only those of nodes
    # still being split, compacted level by level
    s.begin_tree(stat, channel, weight, g.n_rows)
    return g.grow(None, rows, features, rng)
