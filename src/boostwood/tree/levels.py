"""Depth-wise growth of criterion trees one *level* at a time, with no Python per node.

Deep trees (a random forest grows each tree until its leaves are pure: tens of
thousands of nodes) spend more time in per-node Python bookkeeping than in the
kernels. :func:`grow_levels` runs exactly the steps of the criterion grower
(:func:`~boostwood.tree.criterion.criterion_grower`) for ``depthwise`` growth
-- mark the level's rows, draw the features each node may use (among those that
vary in it), scan, partition (the same kernel) -- but keeps the nodes in arrays
and handles a whole level with a few compiled calls (:mod:`boostwood._kernels.
levels`), and its scan reads each feature's rows grouped by node
(:func:`~boostwood._kernels.criterion.regroup`; on histogram bins, each node's
own rows), so a node pays only for the features it drew. Nodes are
numbered, and random numbers drawn, in the same order as the generic grower,
so it grows the same trees (``tests/test_trees.py`` checks it). Which of a level's
nodes are split is the compiled policy's ``next_batch`` (all of them, or those of
highest gain where ``max_leaves`` would be passed), as on every other growth path.
"""
import numba
import numpy as np

from .._kernels.criterion import count_by_node, grouped_random_scan, grouped_scan, \
    grouped_varies, regroup
from .._kernels.criterion_bins import binned_node_scan, pack_row_stats
from .._kernels.exact import mark_nodes
from .._kernels.expand import N_COUNTERS, ST_LEAVES, ST_OPEN, next_batch, take_batch
from .._kernels.levels import choose_splits, level_children
from .._kernels.nodes import NF_GAIN
from .._kernels.partition import partition_nodes
from ..data.columns import BinnedColumns
from .grower import PARTITION_BLOCK
from .nodes import NodeTable
from .splitters import drop_constant_targets, scan_outputs, set_sorted_thresholds


class _Grouped:
    """Each feature's sorted rows (and its missing rows) grouped by the nodes of a level."""

    def __init__(self, columns):
        c = columns
        self.present = (c.order, c.order_offsets[:-1], c.order_offsets[1:])
        self.missing = (c.missing_rows, c.missing_offsets[:-1], c.missing_offsets[1:])
        self.seg = self.miss_seg = None

    def regroup(self, node_of, node_counts):
        """Keep only the rows of the level's nodes, grouped by node (stable). Every row is
        in each feature's present or missing list, so counting the (few) missing rows
        gives the present counts too, and each list is regrouped in a single pass."""
        B = node_counts.size
        rows, starts, ends = self.missing
        miss_counts = np.empty((starts.shape[0], B), dtype=np.int64)
        count_by_node(rows, starts, ends, node_of, miss_counts)
        out = []
        for (rows, starts, ends), counts in ((self.present, node_counts[None, :] - miss_counts),
                                             (self.missing, miss_counts)):
            new_rows = np.empty(int(counts.sum()), dtype=rows.dtype)
            seg = np.empty((starts.shape[0], B + 1), dtype=np.int64)
            regroup(rows, starts, ends, node_of, np.ascontiguousarray(counts), new_rows, seg)
            out.append((new_rows, seg))
        (rows, self.seg), (miss, self.miss_seg) = out
        self.present = (rows, self.seg[:, 0].copy(), self.seg[:, B].copy())
        self.missing = (miss, self.miss_seg[:, 0].copy(), self.miss_seg[:, B].copy())

    def record(self):
        """(rows, seg, miss_rows, miss_seg) as the grouped scans take them."""
        return self.present[0], self.seg, self.missing[0], self.miss_seg


def _binned_scan(s, tree, table, level, row_stats, chunks):
    """Histogram bins: each node builds per-bin statistics of the features it draws from
    its own rows (:func:`~boostwood._kernels.criterion_bins.binned_node_scan`); no lists."""
    K, c = s.K, s.columns
    B, A = level.size, tree.features.shape[0]
    n_pick = max(1, int(round(s.colsample_bynode * A)))
    if n_pick >= A:
        keys = np.zeros((B, A))  # every feature, in order
        n_pick = A
    else:  # the draw of CriterionSplitter.feature_mask: same random numbers, same rule
        keys = tree.rng.random((B, A))
    totals = table.stats[level]
    out = scan_outputs(B, A, K + 2)
    const = np.empty((B, table.const.shape[1]), dtype=np.uint64)
    starts, counts, sides = table.segments(level)
    sets = np.zeros((B, A, s.cat_words), dtype=np.uint32)
    binned_node_scan(c.rows, row_stats, c.n_values, (s.buf, sides, starts, counts), totals,
                     tree.features, keys, n_pick, table.const[level],
                     tree.settings, chunks, out, const, (s.is_cat, sets))
    table.const[level] = const  # the children inherit it
    return out, np.zeros((0, 0)), sets if s.cat_words else None


def _scan_level(s, tree, table, level, grouped):
    """Scan every node of ``level`` over the features it drew: ((gain, pick, left), random
    thresholds or an empty array). ``s``: the CriterionSplitter, ``tree``: the TreeState."""
    K, c = s.K, s.columns
    B, A = level.size, tree.features.shape[0]
    rows, seg, miss, miss_seg = grouped.record()
    totals = table.stats[level]
    out = scan_outputs(B, A, K + 2)
    varies = np.empty((B, A), dtype=np.uint8)
    grouped_varies(c.codes, rows, seg, miss_seg, tree.features, varies)
    mask = s.feature_mask(tree, B, None, varies)
    numeric = s.numeric_mask(tree, mask)
    thr_of, uniform = np.zeros((0, 0)), np.zeros((0, 0))
    if s.random_splits:
        thr_of, uniform = np.empty((B, A)), tree.rng.random((B, A))
        randoms = (s.values, s.value_offsets, uniform)
        grouped_random_scan(c.codes, grouped.record(), randoms, s.row_stats, totals,
                            tree.features, numeric, tree.settings, out, thr_of)
    else:
        grouped_scan(c.codes, grouped.record(), s.row_stats, totals, tree.features, numeric,
                     tree.settings, out)
    return out, thr_of, s.scan_categories(tree, table, level, mask, out, uniform)


def grow_levels(g, n_root):
    """Grow one tree depth-wise with grower ``g`` (a :func:`criterion_grower` whose splitter
    has the tree's statistics, whose ``tree_state`` is set and whose root rows are in
    ``buf[0, :n_root]``). Returns (Tree, node statistics)."""
    s, tree = g.splitter, g.tree_state
    table = NodeTable(s.K + 2, np.float64, max(64, min(2 * n_root, 1 << 14)),
                      const_words=(tree.features.shape[0] + 63) // 64, cat_words=s.cat_words)
    chunks = 4 * numba.get_num_threads()  # (this thread's setting: 1 in a forest worker)
    table.add_root(s.root_stats(n_root), n_root)
    level = np.nonzero(g.statistics.can_split_many(table.stats[:1],
                                                   np.zeros(1)))[0].astype(np.int64)
    binned = isinstance(s.columns, BinnedColumns) and not s.random_splits
    grouped = None if binned else _Grouped(s.columns)
    row_stats = pack_row_stats(s.stat, s.channel, s.weight) if binned else None
    min_decrease = s.min_impurity_decrease * s.root_weight
    # the one policy: a level's nodes with a split are the open leaves, and next_batch
    # takes every one of them (those of highest gain where max_leaves would be passed)
    policy = g.growth_policy(1.0, 0)
    counters = np.zeros(N_COUNTERS, dtype=np.int64)
    counters[ST_LEAVES] = 1
    while level.size:
        if binned:
            (gain, pick, left), thr_of, sets = _binned_scan(s, tree, table, level, row_stats,
                                                            chunks)
        else:
            starts, counts, sides = table.segments(level)
            s.node_of[:] = -1
            mark_nodes(s.buf, sides, starts, counts, s.node_of)
            grouped.regroup(s.node_of, counts)
            (gain, pick, left), thr_of, sets = _scan_level(s, tree, table, level, grouped)
        split = drop_constant_targets(s, table, choose_splits(
            gain, pick, left, thr_of, level, tree.features, tree.settings, min_decrease,
            table.ints, table.floats, table.stats, table.cand_left))
        s.record_sets(tree, table, level, sets)
        open_ids = np.ascontiguousarray(split, dtype=np.int64)
        counters[ST_OPEN] = open_ids.shape[0]
        split = next_batch(policy, open_ids, counters, table.floats[NF_GAIN])
        if not split.size:
            break
        take_batch(open_ids, counters, split)
        if not s.random_splits:
            set_sorted_thresholds(table, split, s.columns)
        n_left = np.empty(split.size, dtype=np.int64)
        partition_nodes(g.X_columns, g.buf, g.staging, table.ints, split, table.cat_bits,
                        g.missing_bins, PARTITION_BLOCK, numba.get_num_threads(), n_left)
        first = table.split(split, n_left)
        level = level_children(table.ints, table.stats, table.const, split, first,
                               tree.settings)
    return g.finish_tree(table)
