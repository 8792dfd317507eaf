"""Depth-wise growth of criterion trees one *level* at a time, with no Python per node.

Deep trees (a random forest grows each tree until its leaves are pure: tens of
thousands of nodes) spend more time in per-node Python bookkeeping than in the
kernels. :func:`grow_levels` runs exactly the steps of
:class:`~boostwood.tree.criterion.CriterionTreeGrower` for ``depthwise`` growth
-- mark the level's rows, draw the features each node may use (among those that
vary in it), scan, partition (the same kernel) -- but keeps the nodes in arrays
and handles a whole level with a few compiled calls (:mod:`boostwood._kernels.
levels`), and its scan reads each feature's rows grouped by node
(:func:`~boostwood._kernels.criterion.regroup`; on histogram bins, each node's
own rows), so a node pays only for the features it drew. Nodes are
numbered, and random numbers drawn, in the same order as the generic grower,
so it grows the same trees (``tests/test_trees.py`` checks it).
"""
import numba
import numpy as np

from .._kernels.criterion import count_by_node, grouped_random_scan, grouped_scan, \
    grouped_varies, regroup
from .._kernels.criterion_bins import binned_node_scan, pack_row_stats
from .._kernels.exact import mark_nodes
from .._kernels.levels import choose_splits, record_level
from .._kernels.partition import partition_nodes
from .._kernels.splits import NO_CATEGORIES, pack_splits
from .criterion import BinnedColumns
from .grower import PARTITION_BLOCK
from .tree import Tree


class _Arrays:
    """Growable node arrays."""

    FIELDS = {"feature": np.int32, "threshold": np.float64, "left": np.int32,
              "right": np.int32, "default_left": np.uint8, "gain": np.float64,
              "depth": np.int64, "start": np.int64, "count": np.int64, "side": np.int64,
              "code": np.int64}

    def __init__(self, K, n_features, capacity=64):
        self.n = 0
        self.a = {k: np.zeros(capacity, dtype=t) for k, t in self.FIELDS.items()}
        self.stats = np.zeros((capacity, K + 2))
        # bit a: feature position a is constant in the node (so in all its descendants)
        self.const = np.zeros((capacity, (n_features + 63) // 64), dtype=np.uint64)

    def add(self, m):
        """Room for m more nodes; returns the first new id."""
        need = self.n + m
        if need > self.stats.shape[0]:
            cap = max(need, 2 * self.stats.shape[0])
            for k, v in self.a.items():
                self.a[k] = np.concatenate([v, np.zeros(cap - v.size, dtype=v.dtype)])
            grow = cap - self.stats.shape[0]
            self.stats = np.concatenate([self.stats, np.zeros((grow, self.stats.shape[1]))])
            self.const = np.concatenate([self.const, np.zeros((grow, self.const.shape[1]),
                                                              dtype=np.uint64)])
        first = self.n
        self.n = need
        for k in ("feature", "left", "right"):
            self.a[k][first:need] = -1
        return first


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


def _binned_scan(g, nodes, level):
    """Histogram bins: each node builds per-bin statistics of the features it draws from
    its own rows (:func:`~boostwood._kernels.criterion_bins.binned_node_scan`); no lists."""
    p, K, c = g.params, g.K, g.columns
    B, A = level.size, g._features.shape[0]
    A_ = nodes.a
    n_pick = max(1, int(round(p.colsample_bynode * A)))
    if n_pick >= A:
        keys = np.zeros((B, A))  # every feature, in order
        n_pick = A
    else:  # the draw of CriterionTreeGrower.feature_mask: same random numbers, same rule
        keys = g._rng.random((B, A))
    totals = np.ascontiguousarray(nodes.stats[level])
    gain, code = np.empty((B, A)), np.empty((B, A), dtype=np.int64)
    nxt, dl = np.empty((B, A), dtype=np.int64), np.empty((B, A), dtype=np.uint8)
    left = np.empty((B, A, K + 2))
    const = np.empty((B, nodes.const.shape[1]), dtype=np.uint64)
    binned_node_scan(c.rows, g._row_stats, c.n_values, g.buf, A_["side"][level],
                     A_["start"][level], A_["count"][level], totals, g._features, keys, n_pick,
                     np.ascontiguousarray(nodes.const[level]), g.criterion,
                     float(max(p.min_data_in_leaf, 1)), p.min_child_weight,
                     g._chunks, gain, code, nxt, dl, left, const)
    nodes.const[level] = const  # the children inherit it
    return gain, code, nxt, dl, left, np.zeros((0, 0)), totals


def _scan_level(g, nodes, level, grouped):
    """Scan every node of ``level`` over the features it drew: (gain, code, next,
    missing-left, left statistics, random thresholds or an empty array, totals)."""
    p, K, c = g.params, g.K, g.columns
    B, A = level.size, g._features.shape[0]
    if grouped is None:
        return _binned_scan(g, nodes, level)
    rows, miss = grouped.present[0], grouped.missing[0]
    seg, miss_seg = grouped.seg, grouped.miss_seg
    totals = np.ascontiguousarray(nodes.stats[level])
    gain, code = np.empty((B, A)), np.empty((B, A), dtype=np.int64)
    nxt, dl = np.empty((B, A), dtype=np.int64), np.empty((B, A), dtype=np.uint8)
    left = np.empty((B, A, K + 2))
    varies = np.empty((B, A), dtype=np.uint8)
    grouped_varies(c.codes, rows, seg, miss_seg, g._features, varies)
    mask = g.feature_mask(B, None, varies)
    msl = float(max(p.min_data_in_leaf, 1))
    thr_of = np.zeros((0, 0))
    if g.random_splits:
        thr_of = np.empty((B, A))
        grouped_random_scan(c.codes, rows, seg, miss, miss_seg, g._values,
                            g._value_offsets.astype(np.int64), g._stat, g._channel, g._weight,
                            totals, g._features, mask, g.criterion, msl, p.min_child_weight,
                            g._rng.random((B, A)), gain, code, thr_of, dl, left)
    else:
        grouped_scan(c.codes, rows, seg, miss, miss_seg, g._stat, g._channel, g._weight, totals,
                     g._features, mask, g.criterion, msl, p.min_child_weight, gain, code, nxt,
                     dl, left)
    return gain, code, nxt, dl, left, thr_of, totals


def grow_levels(g, n_root):
    """Grow one tree depth-wise with grower ``g`` (a CriterionTreeGrower whose statistics
    and root rows are set). Returns (Tree, node statistics)."""
    K = g.K
    nodes = _Arrays(K, g._features.shape[0], max(64, min(2 * n_root, 1 << 14)))
    g._chunks = 4 * numba.get_num_threads()  # (this thread's setting: 1 in a forest worker)
    nodes.add(1)
    nodes.stats[0] = g._root_stats(n_root)
    nodes.a["count"][0] = n_root
    level = np.nonzero(g._can_split_many(nodes.stats[:1], np.zeros(1)))[0]
    A = nodes.a
    binned = isinstance(g.columns, BinnedColumns) and not g.random_splits
    grouped = None if binned else _Grouped(g.columns)
    if binned:
        g._row_stats = pack_row_stats(g._stat, g._channel, g._weight)
    while level.size:
        if grouped is not None:
            counts = A["count"][level]
            g.node_of[:] = -1
            mark_nodes(g.buf, A["side"][level], A["start"][level], counts, g.node_of)
            grouped.regroup(g.node_of, counts)
        gain, code, nxt, dl, left, thr_of, totals = _scan_level(g, nodes, level, grouped)
        split, feats, codes, nexts, dls, decs, lefts, tots, thr = choose_splits(
            gain, code, nxt, dl, left, thr_of, totals, level, g._features, g.criterion,
            g.min_impurity_decrease * g._root_weight)
        if not split.size:
            break
        if not g.random_splits:
            thr = g.columns.thresholds(feats, codes, nexts)
        n_left = np.empty(split.size, dtype=np.int64)
        partition_nodes(g.X_columns, g.buf, A["side"][split], g.mask, A["start"][split],
                        A["count"][split], pack_splits(feats, codes, dls), NO_CATEGORIES,
                        g.missing_bins, PARTITION_BLOCK, n_left)
        first = nodes.add(2 * split.size)
        level = record_level(split, feats, codes, dls, decs, thr, lefts, tots, n_left, first,
                             A["feature"], A["threshold"], A["left"], A["right"],
                             A["default_left"], A["gain"], A["depth"], A["start"], A["count"],
                             A["side"], A["code"], nodes.stats, nodes.const, *g._split_limits())
    n = nodes.n
    stats = nodes.stats[:n].copy()
    w = stats[:, K]
    value = np.divide(stats[:, 0], w, out=np.zeros(n), where=w > 0)
    tree = Tree(A["feature"][:n], A["threshold"][:n], A["left"][:n], A["right"][:n],
                A["default_left"][:n], value, A["gain"][:n], w, stats[:, K + 1],
                threshold_bin=A["code"][:n])
    return tree, stats
