"""Splitters: the one seam between a growth path and where its splits come from.

A splitter turns a batch of leaves of a :class:`~.nodes.NodeTable` into their best
splits: ``find(table, nodes)`` runs one scan kernel over the batch, picks each
node's best feature, writes it into the leaves' candidate fields and returns a
:class:`SplitBatch` naming them. Every scan kernel fills the same three outputs
(gain ``(B, A)``, the ``pick`` planes of :mod:`boostwood._kernels.nodes` and the
left child's statistics ``(B, A, W)``), so choosing and recording is shared:

* :class:`HistogramSplitter` -- gradient histograms (``hist`` / global ``approx``), whose
  scan runs inside the compiled expansion loop;
* :class:`SortedSplitter` -- pre-sorted columns, exact greedy or local proposals;
* :class:`CriterionSplitter` -- impurity criteria over sorted columns or bins
  (CART, forests, AdaBoost's trees), random thresholds for extra trees.

A splitter never reads its grower: it is made with the arrays it scans (columns,
partition buffers) and reads the tree being grown from one :class:`TreeState`
record the grower makes per tree (features, gradients, settings, generator,
histogram slots, what restricts each node's features) and passes to ``find``.
Growth policies, the partition and the node table stay in the grower, so a new
split kind, a constraint or a new statistic is a change to one splitter and its
kernel (``tests/test_layers.py`` checks that no module of ``tree/`` reads
another's underscore attributes).
"""
import numba
import numpy as np

from .._config import HIST_DTYPE
from .._kernels.categorical import choose_categorical
from .._kernels.criterion import (SQUARED, compact_rows, criterion_random_scan, criterion_scan,
                                  feature_varies, node_statistics)
from .._kernels.criterion_categories import category_scan
from .._kernels.exact import exact_scan, mark_nodes
from .._kernels.expand import scan_mask
from .._kernels.levels import choose_splits
from .._kernels.nodes import (N_PICK, ND_BIN, ND_CAT_LEN, ND_CAT_START, ND_DEFAULT_LEFT,
                              ND_FEATURE, ND_KIND, ND_NEXT, NF_GAIN, NF_RECORDED_GAIN,
                              NF_THRESHOLD, choose_gradient)


class TreeState:
    """The tree being grown, as a splitter reads it: made by the grower once per tree.

    features : (A,) int64, the features the tree may split on
    gh : the rows' fixed-point gradients (None for criterion trees)
    settings : the split settings (``split_settings``; ``criterion_settings`` for the
        criterion trees)
    rng : the tree's numpy Generator
    builder, n_bins : the histogram pool (None without histograms) and the bins per feature
    slots : dict, node -> its histogram slot (the nodes holding one)
    keys, n_pick : ``colsample_bynode``: the node keys (by node id) and the features each
        node draws (keys None: no draw)
    masks : (n, A) uint8, the features each node may split on (by node id), or None
    """

    __slots__ = ("features", "gh", "settings", "rng", "builder", "n_bins", "slots", "keys",
                 "n_pick", "masks")

    def __init__(self, features, gh, settings, rng, builder=None, n_bins=None):
        self.features, self.gh, self.settings, self.rng = features, gh, settings, rng
        self.builder, self.n_bins = builder, n_bins
        self.slots = {}
        self.keys, self.n_pick, self.masks = None, 0, None


def node_feature_mask(tree, nodes):
    """(B, A) uint8: which of the tree's A features each node of ``nodes`` may split on
    (``colsample_bynode``'s draw from each node's key, the node masks: the compiled
    loop's :func:`~boostwood._kernels.expand.scan_mask`), or None for all of them."""
    if tree.keys is None and tree.masks is None:
        return None
    bynode = None if tree.keys is None else (tree.keys, tree.n_pick)
    return scan_mask(bynode, tree.masks, np.asarray(nodes, dtype=np.int64),
                     tree.features.shape[0])


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


class HistogramSplitter:
    """Best splits from the tree's gradient histograms (``hist``, global ``approx``): the
    compiled loop's own scan (:func:`boostwood._kernels.split.find_best_splits` inside
    :func:`boostwood._kernels.expand.expand_tree`, over the slots of the tree's histogram
    pool), so it has no Python ``find``; a grower holding it grows in that loop."""


class SortedSplitter:
    """Best splits over pre-sorted ``columns`` (a SortedColumns): exact greedy, or local
    percentile proposals (``local_eps`` > 0); raw thresholds half-way between a node's
    values. ``buf`` and ``node_of`` are the grower's partition buffers and row marks."""

    def __init__(self, columns, buf, node_of, local_eps=0.0):
        self.columns, self.buf, self.node_of = columns, buf, node_of
        self.local_eps = float(local_eps)

    def find(self, table, nodes, tree):
        B, A = nodes.shape[0], tree.features.shape[0]
        mark_batch(self.buf, self.node_of, table, nodes)
        mask = node_feature_mask(tree, nodes)
        if mask is None:
            mask = np.ones((B, A), dtype=np.uint8)
        gain, pick, left = scan_outputs(B, A, 3, HIST_DTYPE)
        c = self.columns
        exact_scan(c.codes, c.lists, tree.gh, self.node_of, table.stats[nodes], tree.features,
                   mask, tree.settings, self.local_eps, (gain, pick, left))
        found = choose_gradient(gain, pick, left, nodes, tree.features, table.ints,
                                table.floats, table.cand_left)
        set_sorted_thresholds(table, found, c)
        return SplitBatch(table, found)


#: The most categories (codes) of one feature a criterion tree keeps apart: every node's
#: candidate holds a set of them for every feature (``cat_words`` words each).
MAX_SPLIT_CATEGORIES = 2048


class CriterionSplitter:
    """Best splits by an impurity criterion over sorted ``columns`` (or bins presented as
    sorted columns); with ``random_splits``, one random threshold per node and feature
    (extremely randomized trees).

    Per tree, :meth:`begin_tree` gives it the rows' statistics (row r adds ``stat[r]``
    to channel ``channel[r]`` and ``weight[r]`` to the weight) and :meth:`root_stats`
    the root's; the draw of each node's features (:meth:`feature_mask`, scikit-learn's
    rule) and the compaction of the feature lists are its own."""

    def __init__(self, columns, buf, node_of, n_channels, criterion, colsample_bynode,
                 depthwise, random_splits=False, min_impurity_decrease=0.0):
        self.columns, self.buf, self.node_of = columns, buf, node_of
        self.K, self.criterion = int(n_channels), criterion
        self.colsample_bynode, self.depthwise = float(colsample_bynode), bool(depthwise)
        self.random_splits = bool(random_splits)
        self.min_impurity_decrease = float(min_impurity_decrease)
        if self.random_splits:
            vals = columns.values
            self.values = np.concatenate(vals) if vals else np.zeros(0)
            self.value_offsets = np.concatenate([[0], np.cumsum([v.size for v in vals])]) \
                .astype(np.int64)
        self.stat = self.channel = self.weight = self.row_stats = None
        self.root_weight, self.lists, self.listed = 0.0, None, 0
        self.is_cat = np.ascontiguousarray(columns.is_categorical, dtype=np.uint8)
        cat_bins = columns.n_values[self.is_cat > 0]
        if cat_bins.size and cat_bins.max() > MAX_SPLIT_CATEGORIES:
            f = int(np.flatnonzero(self.is_cat)[np.argmax(cat_bins)])
            raise ValueError(
                f"categorical feature {f} has {int(cat_bins.max())} categories; the classic "
                f"learners split at most {MAX_SPLIT_CATEGORIES} apart (a set per node and "
                f"feature): use splitter='hist' with max_bin <= {MAX_SPLIT_CATEGORIES}, "
                "which pools the rarest categories")
        #: 32-bit words of a set of codes of the widest categorical feature (0: none)
        self.cat_words = int((cat_bins.max() + 32) // 32) if cat_bins.size else 0

    def begin_tree(self, stat, channel, weight, n_rows=None):
        """This tree's row statistics; ``n_rows``: the rows of the node-by-node path, whose
        scans read every feature's sorted rows (compacted as leaves finish)."""
        self.stat = np.ascontiguousarray(stat, dtype=np.float64)
        self.channel = np.ascontiguousarray(channel, dtype=np.int32)
        self.weight = np.ascontiguousarray(weight, dtype=np.float64)
        self.row_stats = (self.stat, self.channel, self.weight)
        c = self.columns
        self.lists = None if n_rows is None else \
            [c.order, c.order_offsets, c.missing_rows, c.missing_offsets]
        self.listed = n_rows

    def root_stats(self, n):
        """The statistics (K + 2,) of the root's ``n`` rows (``buf[0, :n]``)."""
        out = np.empty((1, self.K + 2))
        one = np.zeros(1, dtype=np.int64)
        node_statistics(self.buf, one, one, np.full(1, n, dtype=np.int64), self.stat,
                        self.channel, self.weight, out)
        self.root_weight = out[0, self.K]
        return out[0]

    def find(self, table, nodes, tree):
        B, A, K = nodes.shape[0], tree.features.shape[0], self.K
        counts = mark_batch(self.buf, self.node_of, table, nodes)
        self._compact(int(counts.sum()))
        mask = self.feature_mask(tree, B, self.lists)
        varies = np.empty((B, A), dtype=np.uint8)
        gain, pick, left = scan_outputs(B, A, K + 2)
        totals = table.stats[nodes]
        codes, lists = self.columns.codes, tuple(self.lists)
        thr_of, uniform = np.zeros((0, 0)), np.zeros((0, 0))
        numeric = self.numeric_mask(tree, mask)
        if self.random_splits:
            thr_of, uniform = np.empty((B, A)), tree.rng.random((B, A))
            randoms = (self.values, self.value_offsets, uniform)
            criterion_random_scan(codes, lists, randoms, self.row_stats, self.node_of, totals,
                                  tree.features, numeric, tree.settings, (gain, pick, left),
                                  thr_of, varies)
        else:
            criterion_scan(codes, lists, self.row_stats, self.node_of, totals, tree.features,
                           numeric, tree.settings, (gain, pick, left), varies)
        sets = self.scan_categories(tree, table, nodes, mask, (gain, pick, left), uniform)
        found = drop_constant_targets(self, table, choose_splits(
            gain, pick, left, thr_of, nodes, tree.features, tree.settings,
            self.min_impurity_decrease * self.root_weight, table.ints, table.floats,
            table.stats, table.cand_left))
        self.record_sets(tree, table, nodes, sets)
        if not self.random_splits:
            set_sorted_thresholds(table, found, self.columns)
        return SplitBatch(table, found)

    def numeric_mask(self, tree, mask):
        """``mask`` without the categorical features (the numeric scans skip them)."""
        if not self.cat_words:
            return mask
        return mask & (1 - self.is_cat[tree.features])[None, :]

    def scan_categories(self, tree, table, nodes, mask, out, uniform):
        """The categorical features' candidates of a batch (``mask``: the features each
        node may use; ``uniform``: extra trees' draws, or (0, 0)) into the scan outputs
        ``out``; returns the sets of codes they send left, or None without any."""
        if not self.cat_words:
            return None
        B, A = nodes.shape[0], tree.features.shape[0]
        sets = np.zeros((B, A, self.cat_words), dtype=np.uint32)
        scan = np.ascontiguousarray(mask & self.is_cat[tree.features][None, :], dtype=np.uint8)
        if scan.any():
            starts, counts, sides = table.segments(nodes)
            category_scan(self.columns.codes, (self.buf, sides, starts, counts), self.row_stats,
                          self.columns.n_values, table.stats[nodes], tree.features, scan,
                          tree.settings, uniform, 4 * numba.get_num_threads(), out, sets)
        return sets

    def record_sets(self, tree, table, nodes, sets):
        """The kind and set of codes of each node of the batch whose candidate is on a
        categorical feature."""
        if sets is not None:
            choose_categorical(self.is_cat, sets, tree.features, nodes, table.ints,
                               table.cat_bits)

    def _compact(self, active):
        """Drop the rows of finished leaves from the feature lists once they are a third."""
        if not self.depthwise or active > 0.67 * self.listed:
            return
        out = []
        for rows, offsets in (self.lists[:2], self.lists[2:]):
            new_rows = np.empty(rows.shape[0], dtype=rows.dtype)
            new_offsets = np.empty_like(offsets)
            compact_rows(rows, offsets, self.node_of, new_rows, new_offsets)
            out += [new_rows[:new_offsets[-1]], new_offsets]
        self.lists, self.listed = out, active

    def feature_mask(self, tree, B, lists, varies=None):
        """(B, A) uint8: the features each node of the batch may split on.

        ``max_features`` features are drawn at random per node (Breiman 2001); those
        constant in the node are drawn like any other but cannot split it, and when
        all the drawn ones are constant the draw goes on to the next varying feature
        (scikit-learn's rule, so a node that can be split always is). Needs
        ``node_of`` set for the batch (or ``varies`` given).
        """
        A = tree.features.shape[0]
        n_pick = max(1, int(round(self.colsample_bynode * A)))
        if n_pick >= A:
            return np.ones((B, A), dtype=np.uint8)
        if varies is None:
            varies = np.empty((B, A), dtype=np.uint8)
            feature_varies(self.columns.codes, tuple(lists), self.node_of, B, varies)
        keys = tree.rng.random((B, A))
        pick = np.argpartition(keys, n_pick - 1, axis=1)[:, :n_pick]
        mask = np.zeros((B, A), dtype=np.uint8)
        np.put_along_axis(mask, pick, 1, axis=1)
        mask &= varies
        none = ~mask.any(axis=1) & varies.any(axis=1)
        if none.any():  # the first varying feature in the draw order
            k = np.where(varies[none] != 0, keys[none], np.inf)
            mask[np.flatnonzero(none), np.argmin(k, axis=1)] = 1
        return mask


#: Relative spread of a node's targets below which a regression node is one value: a
#: leaf (scikit-learn's "impurity <= eps"); w * y / w may differ from y in its last bits.
CONSTANT_RTOL = 1e-13


def drop_constant_targets(s, table, found):
    """``found`` without the regression nodes whose rows all have one target value: a
    node that is one value is a leaf (scikit-learn's rule), though its split scores 0
    like the no-gain splits that impure nodes now make (``criterion.keeps``). Only nodes
    whose candidate has no gain (recorded as exactly 0) are looked at, row by row
    (``s``: the CriterionSplitter)."""
    if s.criterion != SQUARED or not found.size:
        return found
    zero = found[table.floats[NF_GAIN, found] == 0.0]
    if not zero.size:
        return found
    starts, counts, sides = table.segments(zero)
    constant = []
    for k, start, count, side in zip(zero, starts, counts, sides):
        rows = s.buf[side, start:start + count]
        w = s.weight[rows]
        y = s.stat[rows][w > 0] / w[w > 0]
        if y.size and y.max() - y.min() <= CONSTANT_RTOL * max(abs(y.max()), abs(y.min())):
            table.ints[ND_FEATURE, k] = -1
            constant.append(k)
    return found[~np.isin(found, constant)] if constant else found


def mark_batch(buf, node_of, table, nodes):
    """``node_of[row]`` = position in ``nodes`` of the row's node (-1: not in the batch;
    the rows of a node are a segment of ``buf``); returns the nodes' row counts."""
    starts, counts, sides = table.segments(nodes)
    node_of[:] = -1
    mark_nodes(buf, sides, starts, counts, node_of)
    return counts


def set_sorted_thresholds(table, found, columns):
    """Raw thresholds of splits found on sorted columns (or bins): from the last code
    sent left and the node's next code."""
    if found.shape[0]:
        ints = table.ints
        table.floats[NF_THRESHOLD, found] = columns.thresholds(
            ints[ND_FEATURE, found], ints[ND_BIN, found], ints[ND_NEXT, found])
