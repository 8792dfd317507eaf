"""TreeGrower: grows one tree from per-row gradients and hessians.

One grower serves both growth policies; they differ only in which candidate
leaves are expanded next:

* ``depthwise`` (XGBoost's default): every splittable leaf of the current
  level, as one batch, until ``max_depth``.
* ``lossguide`` (LightGBM's leaf-wise growth): the leaf with the highest
  gain, until ``max_leaves``.

Each expansion is: partition the rows of the batch, build the histograms of the
smaller children (then the reducer, on shards), derive the larger children by
subtraction, and scan every feature of every new node for its best split. A
histogram tree grows in one compiled loop that does all of it
(:func:`boostwood._kernels.expand.expand_tree`); Python steps only the growers of
other splitters (exact, local approx, criterion: :mod:`.exact`, :mod:`.criterion`),
with the same policy kernels.

Statistics are fixed point (:mod:`.stats`): node totals ``G``, ``H`` are exact
integers in units of the tree's gradient and hessian units; a float is made of
them only to check ``min_child_weight``, score a split or set a leaf.
"""
from dataclasses import dataclass

import numba
import numpy as np

from .._comm import LocalReducer
from .._config import INDEX_DTYPE
from .._kernels.binning import feature_major
from .._kernels.categorical import category_settings
from .._kernels.histogram import hist_bins
from .._kernels.expand import (AHEAD_MAX_ROWS, AHEAD_MIN_THREADS, DEPTHWISE, LOSSGUIDE,
                               N_COUNTERS, NEED_NODES, NEED_PARTIALS, NEED_REDUCE, NEED_SLOTS,
                               P_AHEAD_ROWS, ST_FREE, ST_LEAVES, ST_LOGICAL, ST_NEED, ST_NODES,
                               ST_OPEN, child_keys, expand_tree, inherit_mask,
                               next_batch, retire_next, take_batch)
from .._kernels.nodes import NF_GAIN
from .._kernels.partition import all_rows, partition_nodes
from .histogram import HIST_BLOCK, HistogramBuilder
from .splitters import HistogramSplitter, TreeState
from .statistics import GradientStatistics

#: Leaves of a leaf-wise batch on data shards (:attr:`TreeGrower.shard_ahead_width`), and
#: the rows rule there (every leaf qualifies). Two shards x 1 thread, 100k rows, 255
#: leaves: see the note of [R1].
SHARD_AHEAD_WIDTH = 8
SHARD_AHEAD_ROWS = 1 << 62

#: Most rows per partition block (smaller batches are cut into one block per thread,
#: see :func:`boostwood._kernels.partition.partition_block_size`).
PARTITION_BLOCK = 4096


@dataclass
class GrowerParams:
    """Parameters of one tree (already validated by the caller).

    ``max_depth`` 0 and ``max_leaves`` 0 mean "no limit".
    """

    max_depth: int = 6
    max_leaves: int = 0
    grow_policy: str = "depthwise"
    reg_lambda: float = 1.0
    reg_alpha: float = 0.0
    max_delta_step: float = 0.0
    gamma: float = 0.0
    min_child_weight: float = 1.0
    min_data_in_leaf: int = 1
    colsample_bynode: float = 1.0
    learning_rate: float = 0.3
    max_cat_to_onehot: int = 1 << 16
    cat_smooth: float = 10.0
    cat_l2: float = 10.0
    max_cat_threshold: int = 32
    min_data_per_group: int = 100
    min_data_per_category: int = 0


class TreeGrower:
    """Grows trees: one growth policy, node table and partition, composed with a splitter
    (where a node's candidate splits come from, :mod:`.splitters`) and the statistics of
    its trees (what a node sums, when it may split, what a leaf is worth:
    :mod:`.statistics`). No grower subclasses another.

    ``TreeGrower(X_binned, ...)`` grows histogram trees (``hist``, global ``approx``)
    with gradient statistics, in the compiled loop; :meth:`stepped` composes the growers
    stepped from Python (:func:`boostwood.tree.exact.exact_grower`,
    :func:`boostwood.tree.criterion.criterion_grower`).

    Parameters
    ----------
    X_binned : ndarray of shape (n_rows, n_features), uint8 or uint16
    n_bins : ndarray of shape (n_features,), int32, value bins per feature
    n_bins_max : int, bins per feature including the missing bin
    params : GrowerParams
    reducer : optional, sums histograms and totals across data shards
    X_columns : optional, the feature-major copy of ``X_binned`` (made here if not given)
    """

    #: A profile from :func:`boostwood._kernels.expand.new_clock` that the compiled loop
    #: adds its time to, by kernel and node size (``benchmarks/bench_tree_profile.py``);
    #: None (the default) compiles the loop without reading a clock.
    profile_clock = None
    #: The compiled leaf-wise loop splits a best leaf of at most this many rows together
    #: with the next open leaves, ahead of their turn, on ``AHEAD_MIN_THREADS`` (16)
    #: threads or more (0: never; the tree is the same either way). On 16 cores it took
    #: 0.84x the time (measured before small batches shared features and the scan's fused subtraction),
    #: at 4 and 8 threads 1.12x and 1.09x (after them; see ``AHEAD_MIN_THREADS``).
    #: A leaf split ahead keeps its waiting children's histograms:
    #: :meth:`held_histograms` counts ``2 (n_threads - 1)`` more.
    ahead_max_rows = AHEAD_MAX_ROWS
    #: On data shards a leaf-wise batch splits this many leaves (the best and the next
    #: ones, ahead of their turn; any size, on any threads, so every shard splits the
    #: same): their histograms meet in one collective, where one leaf at a time needs
    #: one per leaf (0 or 1: one leaf at a time). The tree is the same either way.
    shard_ahead_width = SHARD_AHEAD_WIDTH

    def __init__(self, X_binned, n_bins, n_bins_max, params, reducer=None, X_columns=None,
                 categorical=None):
        self.X_binned, self.params, self.columns = X_binned, params, None
        self._cats = self._category_inputs(categorical, n_bins, params)
        self.n_bins = np.ascontiguousarray(n_bins, dtype=np.int32)
        self._n_shards = 1 if reducer is None else int(reducer.n_shards)
        # size the pool up front for the most histograms held at once (it grows on
        # demand past that)
        builder = HistogramBuilder(X_binned, hist_bins(n_bins_max), reducer,
                                   initial_slots=int(min(max(self.held_histograms(), 4), 512)),
                                   n_bins=self.n_bins)
        # a feature-major copy for the partition kernel, which reads one feature of many rows
        # (given when the caller re-bins the data between trees and keeps both up to date)
        if X_columns is None:
            X_columns = np.empty(X_binned.shape[::-1], dtype=X_binned.dtype)
            feature_major(X_binned, X_columns)
        n_rows = X_binned.shape[0]
        self._compose(X_columns, n_bins, params, builder.reducer, builder,
                      lambda buf: HistogramSplitter(),
                      lambda splitter, reducer: GradientStatistics(n_rows, reducer))

    @classmethod
    def stepped(cls, X_columns, n_bins, params, reducer, make_splitter, make_statistics,
                columns=None):
        """A grower stepped from Python, with no histogram pool: partition codes
        ``X_columns`` (n_features, n_rows) with ``n_bins`` values per feature (the missing
        code equals it), the splitter ``make_splitter(buf)`` makes over the partition
        buffers and the statistics ``make_statistics(splitter, reducer)`` makes (the
        reducer: the one given, or a single shard's); ``columns``, the
        columns the splitter scans, kept for the caller."""
        g = cls.__new__(cls)
        g.X_binned, g.columns = None, columns
        g._n_shards = 1 if reducer is None else int(reducer.n_shards)
        g._compose(X_columns, n_bins, params, reducer if reducer is not None else LocalReducer(),
                   None, make_splitter, make_statistics)
        return g

    def _compose(self, X_columns, n_bins, params, reducer, builder, make_splitter,
                 make_statistics):
        self.X_columns, self.params, self.reducer, self.builder = X_columns, params, reducer, builder
        self.n_bins = np.ascontiguousarray(n_bins, dtype=np.int32)
        self.missing_bins = self.n_bins  # the missing bin id equals n_bins
        self.n_rows = n_rows = X_columns.shape[1]
        # two index buffers; a node's rows are a segment of one of them (its side)
        self.buf = np.empty((2, n_rows), dtype=INDEX_DTYPE)
        self.staging = np.empty(n_rows, dtype=np.int32)
        self.splitter = make_splitter(self.buf)
        self.statistics = make_statistics(self.splitter, reducer)
        self.tree_state = None  # the TreeState of the tree being grown
        self._policy = None

    @property
    def stats(self):
        """The :class:`~.stats.FixedPointStats` of gradient trees (None for the others)."""
        return getattr(self.statistics, "fixed", None)

    # -- public ------------------------------------------------------------------------
    def held_histograms(self, n_threads=None):
        """About the most histograms one tree holds at once on ``n_threads`` threads
        (numba's by default; the pool grows past it on demand; the memory rule of
        :mod:`boostwood.boosting._side_by_side` reads it):

        * leaf-wise with ``max_leaves``: half of it, plus two (the loops retire the
          leaves they can no longer reach, see
          :func:`boostwood._kernels.expand.retire_beyond_budget`);
        * leaf-wise with only ``max_depth``: every leaf of that depth may be open;
        * leaf-wise, plus ``2 (n_threads - 1)`` where leaves are split ahead of their
          turn (:attr:`ahead_max_rows`: their waiting children's histograms;
          ``2 (shard_ahead_width - 1)`` on data shards);
        * depth-wise: one level's smaller children and their parents, ``2**(max_depth -
          1)``, and never more than ``max_leaves``.

        Depths count up to 12 (deeper trees are bounded by their rows, not here)."""
        p = self.params
        depth = min(p.max_depth, 12) if p.max_depth > 0 else 12
        if p.grow_policy == "lossguide":
            n_threads = numba.get_num_threads() if n_threads is None else n_threads
            ahead = 2 * (self._ahead_width(n_threads) - 1) \
                if self._ahead_rows(n_threads) > 0 else 0
            if p.max_leaves > 0:
                return p.max_leaves // 2 + 2 + ahead
            return 2 ** depth + 2 + ahead
        bound = 2 ** max(depth - 1, 0) + 2
        return min(bound, p.max_leaves + 2) if p.max_leaves > 0 else bound

    def grow(self, gh, rows, features, rng, root_mask=None):
        """Grow one tree.

        Parameters
        ----------
        gh : ndarray of shape (n_rows, 2), float32, gradient and hessian of each row
            (quantized to fixed point here, see :mod:`.stats`), or the integers
            quantized by ``self.stats``
        rows : ndarray of int32 (ascending) or None; the rows in the bag
        features : ndarray of int64 (ascending); features this tree may split on
        rng : numpy.random.Generator, for per-node feature sampling
        root_mask : array of ``len(features)`` (0/1 or bool), optional; the features the
            root may split on, which every node inherits from its parent (the per-node
            seam of feature constraints, see :func:`~boostwood._kernels.expand.inherit_mask`;
            None: all, and the loop compiles no mask code)

        Returns
        -------
        What the statistics make of the finished table (:meth:`finish_tree`): for gradient
        trees, tree : Tree (values include the learning rate) and leaf_segments : (sides,
        starts, counts, values) of the leaves in ``self.buf``; for criterion trees, the
        Tree and the node statistics.
        """
        n = self.n_rows if rows is None else rows.shape[0]
        if rows is None:
            all_rows(self.buf[0], n)
        else:
            self.buf[0, :n] = rows
        self._features, self._rng = features, rng
        self._begin_tree(gh)
        self.tree_state = TreeState(features, self._gh, self._settings, rng, self.builder,
                                    self.n_bins if self.builder is not None else None)
        self._slot = self.tree_state.slots
        self._start_node_keys()
        self._start_node_masks(root_mask)
        table = self._new_table()
        if self._compiled_expansion():
            if self._root(table, n):
                self._expand_compiled(table)
        else:
            # the open leaves (those with a candidate split, ascending) and the counters
            # ST_OPEN, ST_LEAVES: the compiled loop's policy state, read by its functions
            self._open_ids = np.zeros(64, dtype=np.int64)
            self._counters = np.zeros(N_COUNTERS, dtype=np.int64)
            self._counters[ST_LEAVES] = 1
            self._root(table, n)
            while True:
                gain = table.floats[NF_GAIN]  # (each time: the table may have grown)
                self._drop_unreachable(gain)
                batch = next_batch(self._policy, self._open_ids, self._counters, gain)
                if batch.shape[0] == 0:
                    break
                take_batch(self._open_ids, self._counters, batch)
                self._expand(table, batch)
        self._slot.clear()
        return self.finish_tree(table)

    def _begin_tree(self, gh):
        """Per-tree state: the statistics' rows and split settings (fixed-point gradients
        and their units, for gradient trees) and the growth policy."""
        self._gh, self._settings, h_unit = self.statistics.begin_tree(gh, self.params)
        self._n_threads = numba.get_num_threads()
        self._policy = self.growth_policy(h_unit, self._ahead_rows(self._n_threads))

    def growth_policy(self, h_unit, ahead_rows):
        """The cells P_* of _kernels/expand.py: which leaves are expanded, and may be split
        (``next_batch``, ``can_split``; the level-wise criterion growth reads it too)."""
        p = self.params
        return (LOSSGUIDE if p.grow_policy == "lossguide" else DEPTHWISE, int(p.max_depth),
                int(p.max_leaves), int(p.min_data_in_leaf), float(p.min_child_weight),
                float(h_unit), int(ahead_rows))

    def _ahead_rows(self, n_threads=None):
        """The most rows of a best leaf split with others ahead of their turn: leaf-wise,
        ``ahead_max_rows`` on ``AHEAD_MIN_THREADS`` threads or more; on data shards any
        leaf (a shard's rows and threads must not decide which leaves go ahead: every
        shard splits the same batches) where ``shard_ahead_width`` > 1 (and
        ``ahead_max_rows`` is not 0); else 0."""
        n_threads = numba.get_num_threads() if n_threads is None else n_threads
        if self.params.grow_policy != "lossguide":
            return 0
        if self._n_shards > 1:
            return SHARD_AHEAD_ROWS if self.shard_ahead_width > 1 and self.ahead_max_rows > 0 \
                else 0
        return int(self.ahead_max_rows) if n_threads >= AHEAD_MIN_THREADS else 0

    def _ahead_width(self, n_threads):
        """How many leaves a leaf-wise batch splits at most where leaves are split ahead:
        one per thread, or ``shard_ahead_width`` on data shards."""
        return int(self.shard_ahead_width) if self._n_shards > 1 else int(n_threads)

    @staticmethod
    def _category_inputs(categorical, n_bins, params):
        """The compiled loop's ``cats`` (:func:`~boostwood._kernels.expand.expand_tree`):
        None without categorical features (``categorical``: 1 per categorical feature)."""
        if categorical is None or not np.any(categorical):
            return None
        is_cat = np.ascontiguousarray(categorical, dtype=np.uint8)
        most = int(np.max(np.asarray(n_bins)[is_cat > 0]))
        p = params
        cs = category_settings(p.max_cat_to_onehot, p.cat_smooth, p.cat_l2,
                               p.max_cat_threshold, p.min_data_per_group,
                               p.min_data_per_category)
        return is_cat, cs, max((most + 31) // 32, 1)

    def _new_table(self):
        table = self.statistics.new_table(self.params, self.n_rows)
        cats = getattr(self, "_cats", None)
        if cats is not None:
            table.hold_categories(cats[2])
        return table

    def _root(self, table, n):
        """Add the root node. Histogram trees: True if it may be split (the compiled loop
        scans it); the others scan it here when it may be split (False)."""
        features = self._features
        hist = self.builder is not None and features.shape[0] > 0
        root_slot = self._root_histogram(n) if hist else None
        if root_slot is None:
            totals = self.statistics.root_totals(self._gh, self.buf, n)
        else:
            # every row is in exactly one bin of any feature: the root totals are
            # the sum of one feature's cells, its value bins and missing bin (no extra
            # pass over the rows, and already summed across shards)
            f = features[0]
            totals = self.builder.hist[root_slot, f, :self.n_bins[f] + 1].sum(axis=0)
        table.add_root(totals, n)
        if root_slot is not None:
            if self._splittable(table, 0):
                self._slot[0] = root_slot
                return True
            self.builder.release(root_slot)
        elif self.builder is None and self._splittable(table, 0):
            self._scan(table, [0])
        return False

    def _root_histogram(self, n):
        slot = self.builder.acquire()
        one = np.zeros(1, dtype=np.int64)
        self.builder.build(self._gh, self.buf, one, one, np.full(1, n, dtype=np.int64),
                           np.full(1, slot, dtype=np.int64), self._features)
        return slot

    # -- the compiled loop ------------------------------------------------------------
    def _compiled_expansion(self):
        """Does :func:`~boostwood._kernels.expand.expand_tree` grow this tree? It grows
        every histogram tree that has a feature to split on, on one shard or several (it
        stops for the reducer after each batch's histograms), with or without
        ``colsample_bynode`` and node masks; the Python loop of :meth:`grow` steps the
        other splitters' growers (exact, local approx, criterion) with the same policy
        kernels."""
        return isinstance(self.splitter, HistogramSplitter) and self._features.shape[0] > 0

    def _expand_compiled(self, table):
        """Scan the root and grow the tree to the end in compiled code, enlarging the node
        table, the histogram pool or the partial buffers whenever the loop stops for room."""
        builder = self.builder
        cap = table.stats.shape[0]
        slot_of, open_ids = np.full(cap, -1, dtype=np.int64), np.zeros(cap, dtype=np.int64)
        for k, slot in self._slot.items():
            slot_of[k] = slot
        counters = np.zeros(N_COUNTERS, dtype=np.int64)
        counters[ST_LEAVES], counters[ST_NODES], counters[ST_LOGICAL] = 1, table.n, table.n
        # each node's id in the order of one leaf at a time, and its F_* bits; None when
        # no leaf is split ahead (the loop is then compiled without that code)
        ahead = self._policy[P_AHEAD_ROWS] > 0
        logical, flags = np.full(cap, -1, dtype=np.int64), np.zeros(cap, dtype=np.uint8)
        logical[:table.n] = np.arange(table.n)
        sizes = (PARTITION_BLOCK, HIST_BLOCK, self._n_threads,
                 self._ahead_width(self._n_threads))
        # what the loop scans first: the root; after a NEED_REDUCE, what it was about to
        start = (np.zeros(1, dtype=np.int64), np.zeros((2, 0), dtype=np.int64),
                 np.zeros(0, dtype=np.int64))
        reduce_each = self.reducer.n_shards > 1
        bynode = self._bynode_draws(cap)
        masks = self.tree_state.masks
        masks = None if masks is None else self._grown_rows(masks, cap)
        while True:
            free, counters[ST_FREE] = builder.free_stack()
            status, start, slots = expand_tree(
                (self.X_columns, self.X_binned), self._gh, (self.buf, self.staging),
                table.record, (builder.hist, builder.partial), self._features, self.n_bins,
                self._settings, self._policy, sizes, (slot_of, free, open_ids, counters),
                (logical, flags) if ahead else None, start, reduce_each, bynode, masks,
                self.profile_clock, self._cats)
            builder.set_free_stack(free, counters[ST_FREE])
            table.n = int(counters[ST_NODES])
            need = int(counters[ST_NEED])
            if status == NEED_NODES:
                table.reserve(need - table.n)
                grown = table.stats.shape[0] - slot_of.shape[0]
                slot_of = np.concatenate([slot_of, np.full(grown, -1, dtype=np.int64)])
                open_ids = np.concatenate([open_ids, np.zeros(grown, dtype=np.int64)])
                logical = np.concatenate([logical, np.full(grown, -1, dtype=np.int64)])
                flags = np.concatenate([flags, np.zeros(grown, dtype=np.uint8)])
                if bynode is not None:
                    bynode = (self._grown_rows(bynode[0], bynode[0].shape[0] + grown),
                              bynode[1])
                if masks is not None:
                    masks = self._grown_rows(masks, masks.shape[0] + grown)
            elif status == NEED_SLOTS:
                builder.ensure_free(need)
            elif status == NEED_PARTIALS:
                builder.reserve_partials(need)
            elif status == NEED_REDUCE:
                builder.allreduce(slots)
            else:
                break
        builder.release_many(slot_of[slot_of >= 0].tolist())
        self._slot.clear()
        self.expansion_counters = counters  # the last tree's (ST_AHEAD, ST_UNDONE, ...)

    def _start_node_keys(self):
        """``colsample_bynode < 1``: the node keys each node's feature draw comes from
        (:func:`boostwood._kernels.expand.node_features`): the root's is one number from
        the round's generator (the same on every shard and thread), a child's a hash of
        its parent's and its side (:func:`~boostwood._kernels.expand.child_keys`). Both
        loops draw alike. Else (and for the criterion trees) None. They live in the tree
        state, where the splitters read them."""
        tree = self.tree_state
        if self.params.colsample_bynode < 1.0 and self.statistics.keyed_node_draws:
            tree.keys = np.zeros(64, dtype=np.uint64)
            tree.keys[0] = np.uint64(self._rng.integers(0, 2 ** 63))
            tree.n_pick = max(1, int(round(self.params.colsample_bynode
                                           * self._features.shape[0])))

    def _start_node_masks(self, root_mask):
        """The per-node feature masks (row k: the features node k may split on), the
        root's given, or None (in the tree state)."""
        if root_mask is not None:
            root = np.asarray(root_mask)
            if root.shape != self._features.shape:
                raise ValueError(f"root_mask has shape {root.shape}, the tree has "
                                 f"{self._features.shape[0]} features")
            self.tree_state.masks = np.zeros((64, root.shape[0]), dtype=np.uint8)
            self.tree_state.masks[0] = root != 0

    @staticmethod
    def _grown_rows(rows, n):
        """``rows`` (keys or masks by node id) with at least ``n`` rows (the new ones zero)."""
        if rows.shape[0] >= n:
            return rows
        out = np.zeros((n,) + rows.shape[1:], dtype=rows.dtype)
        out[:rows.shape[0]] = rows
        return out

    def _bynode_draws(self, cap):
        """(node keys of the table's capacity, features per node) for the compiled loop,
        or None without ``colsample_bynode``."""
        tree = self.tree_state
        if tree.keys is None:
            return None
        return self._grown_rows(tree.keys[:cap], cap).copy(), tree.n_pick

    def _child_keys(self, batch, first):
        """The Python loop: the keys (and masks) of the children ``first + 2i``, ``+ 1`` of
        ``batch``."""
        tree, need = self.tree_state, first + 2 * batch.shape[0]
        if tree.masks is not None:
            if need > tree.masks.shape[0]:
                tree.masks = self._grown_rows(tree.masks, max(need, 2 * tree.masks.shape[0]))
            inherit_mask(tree.masks, batch, first)
        if tree.keys is not None:
            if need > tree.keys.shape[0]:
                tree.keys = self._grown_rows(tree.keys, max(need, 2 * tree.keys.shape[0]))
            child_keys(tree.keys, batch, first)

    # -- policy: the compiled loop's own (next_batch, retire_next, can_split) ---------------
    def _drop_unreachable(self, gain):
        """Leaf-wise, open leaves that ``max_leaves`` leaves no step to reach leave the
        open set (:func:`boostwood._kernels.expand.retire_next`'s rule, the compiled
        loop's, which also gives their histograms back)."""
        while retire_next(self._policy, gain, self._open_ids, self._counters) >= 0:
            pass

    def _add_candidates(self, found):
        """Open the nodes of a :class:`SplitBatch` (above every open id: kept ascending)."""
        nodes = found.nodes
        n, m = int(self._counters[ST_OPEN]), nodes.shape[0]
        if n + m > self._open_ids.shape[0]:
            grown = np.zeros(max(2 * self._open_ids.shape[0], n + m), dtype=np.int64)
            grown[:n] = self._open_ids[:n]
            self._open_ids = grown
        self._open_ids[n:n + m] = nodes
        self._counters[ST_OPEN] = n + m

    def _splittable(self, table, node):
        """May ``node`` be split? Its statistics' rule (gradient trees: the compiled
        loop's ``can_split``)."""
        return self.statistics.splittable(table, node, self._policy)

    # -- one expansion (the Python loop) ----------------------------------------------------
    def _expand(self, table, batch):
        """Partition the batch's rows by their candidates, then scan the children that
        may split (histogram trees expand in the compiled loop instead)."""
        n_left = np.empty(batch.shape[0], dtype=np.int64)
        partition_nodes(self.X_columns, self.buf, self.staging, table.ints, batch,
                        table.cat_bits, self.missing_bins, PARTITION_BLOCK,
                        numba.get_num_threads(), n_left)
        first = table.split(batch, n_left)
        self._child_keys(batch, first)
        to_scan = [c for c in range(first, table.n) if self._splittable(table, c)]
        if to_scan:
            self._scan(table, to_scan)

    def _scan(self, table, scan):
        """Find the best split of each node of ``scan`` (in node order) and open those
        that have one."""
        nodes = np.array(sorted(scan), dtype=np.int64)
        if self._features.shape[0] == 0 or nodes.shape[0] == 0:
            return
        self._add_candidates(self.splitter.find(table, nodes, self.tree_state))

    def finish_tree(self, table):
        """The finished tree of ``table``, as the statistics make it (gradient trees:
        (Tree, leaf segments with values); criterion trees: (Tree, node statistics))."""
        return self.statistics.finish(table, self.params)
