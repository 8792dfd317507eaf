"""Splitters: the one seam between a growth path and where its splits come from.

A splitter turns a batch of leaves of a :class:`~.nodes.NodeTable` into their best
splits: ``find(table, nodes)`` runs one scan kernel over the batch, picks each
node's best feature, writes it into the leaves' candidate fields and returns a
:class:`SplitBatch` naming them. Every scan kernel fills the same three outputs
(gain ``(B, A)``, the ``pick`` planes of :mod:`boostwood._kernels.nodes` and the
left child's statistics ``(B, A, W)``), so choosing and recording is shared:

* :class:`HistogramSplitter` -- gradient histograms (``hist`` / global ``approx``);
* :class:`SortedSplitter` -- pre-sorted columns, exact greedy or local proposals;
* :class:`CriterionSplitter` -- impurity criteria over sorted columns or bins
  (CART, forests, AdaBoost's trees), random thresholds for extra trees.

A splitter is made by its grower and reads that grower's per-tree state (its
gradients, features, settings and random generator); growth policies, the
partition and the node table stay in the grower, so a new split kind, a
constraint or a new statistic is a change to one splitter and its kernel.
"""
import weakref

import numpy as np

from .._config import HIST_DTYPE
from .._kernels.criterion import SQUARED, criterion_random_scan, criterion_scan
from .._kernels.exact import exact_scan, mark_nodes
from .._kernels.grow import subtract_and_scan
from .._kernels.levels import choose_splits
from .._kernels.nodes import (N_PICK, ND_BIN, ND_CAT_LEN, ND_CAT_START, ND_DEFAULT_LEFT,
                              ND_FEATURE, ND_KIND, ND_NEXT, NF_GAIN, NF_RECORDED_GAIN,
                              NF_THRESHOLD, choose_gradient)


class SplitBatch:
    """The best splits a splitter found for a batch of nodes, by name.

    ``nodes`` are the batch's nodes that have a split (ascending); the other fields
    are read from the node table on access, one entry per such node: ``gain`` (what
    candidates are ranked by), ``recorded_gain``, ``feature``, ``kind``, ``bin`` and
    ``threshold`` (numeric splits), ``cat_start`` / ``cat_len`` (categorical ones),
    ``default_left`` (missing values), ``left`` and ``right`` (the children's statistics).
    """

    def __init__(self, table, nodes):
        self.table = table
        self.nodes = nodes

    def __len__(self):
        return self.nodes.shape[0]

    def _int(self, f):
        return self.table.ints[f, self.nodes]

    gain = property(lambda s: s.table.floats[NF_GAIN, s.nodes])
    recorded_gain = property(lambda s: s.table.floats[NF_RECORDED_GAIN, s.nodes])
    threshold = property(lambda s: s.table.floats[NF_THRESHOLD, s.nodes])
    feature = property(lambda s: s._int(ND_FEATURE))
    kind = property(lambda s: s._int(ND_KIND))
    bin = property(lambda s: s._int(ND_BIN))
    default_left = property(lambda s: s._int(ND_DEFAULT_LEFT))
    cat_start = property(lambda s: s._int(ND_CAT_START))
    cat_len = property(lambda s: s._int(ND_CAT_LEN))
    left = property(lambda s: s.table.cand_left[s.nodes])
    right = property(lambda s: s.table.stats[s.nodes] - s.table.cand_left[s.nodes])


def scan_outputs(B, A, W, dtype=np.float64):
    """Fresh outputs of a scan kernel for B nodes, A features and W statistics:
    (gain (B, A), pick (N_PICK, B, A) int64, left (B, A, W) of ``dtype``)."""
    return (np.empty((B, A)), np.empty((N_PICK, B, A), dtype=np.int64),
            np.empty((B, A, W), dtype=dtype))


class _ScanBuffers:
    """Output arrays of a scan kernel for B nodes, reused across calls with the same B
    (each C-contiguous, so the kernels see one array layout)."""

    def __init__(self, dtype):
        self.dtype = dtype
        self._by_size = {}

    def get(self, B, A, W):
        key = (B, A, W)
        out = self._by_size.get(key)
        if out is None:
            if len(self._by_size) > 64:
                self._by_size.clear()
            out = self._by_size[key] = scan_outputs(B, A, W, self.dtype)
        return out


#: No histogram subtractions: the (2, 0) pairs array of :func:`subtract_and_scan`.
NO_PAIRS = np.zeros((2, 0), dtype=np.int64)


class HistogramSplitter:
    """Best splits from the grower's gradient histograms (one slot per node)."""

    def __init__(self, grower):
        self.g = weakref.proxy(grower)  # no cycle: the grower's memory goes with it
        self._buffers = _ScanBuffers(HIST_DTYPE)

    def find(self, table, nodes, pairs=()):
        """Subtract ``pairs`` (parent slot, child slot), then scan ``nodes``."""
        g = self.g
        B, A = nodes.shape[0], g._features.shape[0]
        gain, pick, left = self._buffers.get(B, A, 3)
        mask = g._node_feature_mask(nodes)
        if mask is None:
            mask = g._all_features(B, A)
        pair_arr = np.array([[p for p, _ in pairs], [c for _, c in pairs]], dtype=np.int64) \
            if pairs else NO_PAIRS
        slots = np.array([g._slot[k] for k in nodes.tolist()], dtype=np.int64)
        return SplitBatch(table, subtract_and_scan(g.builder.hist, pair_arr, g._features, slots,
                                                   g.n_bins, mask, g._settings,
                                                   (gain, pick, left), nodes, table.record))


class SortedSplitter:
    """Best splits over pre-sorted columns: exact greedy, or local percentile proposals
    (``local_eps`` > 0); raw thresholds half-way between a node's values."""

    def __init__(self, grower, local_eps=0.0):
        self.g = weakref.proxy(grower)  # no cycle: the grower's memory goes with it
        self.local_eps = float(local_eps)

    def find(self, table, nodes, pairs=()):
        g = self.g
        B, A = nodes.shape[0], g._features.shape[0]
        mark_batch(g, table, nodes)
        mask = g._node_feature_mask(nodes)
        if mask is None:
            mask = np.ones((B, A), dtype=np.uint8)
        gain, pick, left = scan_outputs(B, A, 3, HIST_DTYPE)
        c = g.columns
        exact_scan(c.codes, c.lists, g._gh, g.node_of, table.stats[nodes], g._features, mask,
                   g._settings, self.local_eps, (gain, pick, left))
        found = choose_gradient(gain, pick, left, nodes, g._features, table.ints, table.floats,
                                table.cand_left)
        set_sorted_thresholds(table, found, c)
        return SplitBatch(table, found)


class CriterionSplitter:
    """Best splits by an impurity criterion over the grower's sorted columns (or bins
    presented as sorted columns); with ``random_splits``, one random threshold per node
    and feature (extremely randomized trees)."""

    def __init__(self, grower):
        self.g = weakref.proxy(grower)  # no cycle: the grower's memory goes with it

    def find(self, table, nodes, pairs=()):
        g = self.g
        B, A, K = nodes.shape[0], g._features.shape[0], g.K
        counts = mark_batch(g, table, nodes)
        g._compact(int(counts.sum()))
        mask = g.feature_mask(B, g._lists)
        varies = np.empty((B, A), dtype=np.uint8)
        gain, pick, left = scan_outputs(B, A, K + 2)
        totals = table.stats[nodes]
        codes, lists, rows = g.columns.codes, tuple(g._lists), g._row_stats_tuple
        thr_of = np.zeros((0, 0))
        if g.random_splits:
            thr_of = np.empty((B, A))
            randoms = (g._values, g._value_offsets, g._rng.random((B, A)))
            criterion_random_scan(codes, lists, randoms, rows, g.node_of, totals, g._features,
                                  mask, g._crit_settings, (gain, pick, left), thr_of, varies)
        else:
            criterion_scan(codes, lists, rows, g.node_of, totals, g._features, mask,
                           g._crit_settings, (gain, pick, left), varies)
        found = drop_constant_targets(g, table, choose_splits(
            gain, pick, left, thr_of, nodes, g._features, g._crit_settings,
            g.min_impurity_decrease * g._root_weight, table.ints, table.floats, table.stats,
            table.cand_left))
        if not g.random_splits:
            set_sorted_thresholds(table, found, g.columns)
        return SplitBatch(table, found)


#: Relative spread of a node's targets below which a regression node is one value: a
#: leaf (scikit-learn's "impurity <= eps"); w * y / w may differ from y in its last bits.
CONSTANT_RTOL = 1e-13


def drop_constant_targets(g, table, found):
    """``found`` without the regression nodes whose rows all have one target value: a
    node that is one value is a leaf (scikit-learn's rule), though its split scores 0
    like the no-gain splits that impure nodes now make (``criterion.keeps``). Only nodes
    whose candidate has no gain (recorded as exactly 0) are looked at, row by row."""
    if g.criterion != SQUARED or not found.size:
        return found
    zero = found[table.floats[NF_GAIN, found] == 0.0]
    if not zero.size:
        return found
    starts, counts, sides = table.segments(zero)
    constant = []
    for k, start, count, side in zip(zero, starts, counts, sides):
        rows = g.buf[side, start:start + count]
        w = g._weight[rows]
        y = g._stat[rows][w > 0] / w[w > 0]
        if y.size and y.max() - y.min() <= CONSTANT_RTOL * max(abs(y.max()), abs(y.min())):
            table.ints[ND_FEATURE, k] = -1
            constant.append(k)
    return found[~np.isin(found, constant)] if constant else found


def mark_batch(g, table, nodes):
    """``g.node_of[row]`` = position in ``nodes`` of the row's node (-1: not in the batch);
    returns the nodes' row counts."""
    starts, counts, sides = table.segments(nodes)
    g.node_of[:] = -1
    mark_nodes(g.buf, sides, starts, counts, g.node_of)
    return counts


def set_sorted_thresholds(table, found, columns):
    """Raw thresholds of splits found on sorted columns (or bins): from the last code
    sent left and the node's next code."""
    if found.shape[0]:
        ints = table.ints
        table.floats[NF_THRESHOLD, found] = columns.thresholds(
            ints[ND_FEATURE, found], ints[ND_BIN, found], ints[ND_NEXT, found])
