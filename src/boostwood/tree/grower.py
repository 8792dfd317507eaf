"""TreeGrower: grows one tree from per-row gradients and hessians.

One grower serves both growth policies; they differ only in which candidate
leaves are expanded next:

* ``depthwise`` (XGBoost's default): every splittable leaf of the current
  level, as one batch, until ``max_depth``.
* ``lossguide`` (LightGBM's leaf-wise growth): the leaf with the highest
  gain, until ``max_leaves``.

Each expansion is: partition the rows of the batch (kernel), build the
histograms of the smaller children (kernel, then the reducer), derive the
larger children by subtraction (kernel), and scan every feature of every new
node for its best split (kernel). Python only does the bookkeeping per node.

Statistics are fixed point (:mod:`.stats`): node totals ``G``, ``H`` are exact
integers in units of the tree's gradient and hessian units; a float is made of
them only to check ``min_child_weight``, score a split or set a leaf.
"""
import heapq
import warnings
from dataclasses import dataclass
from typing import NamedTuple

import numba
import numpy as np
from numba.core.errors import NumbaPerformanceWarning

from .._config import GQ_DTYPE, HIST_DTYPE, INDEX_DTYPE
from .._kernels.histogram import sum_gradients
from .._kernels.grow import split_and_build, subtract_and_scan
from .._kernels.split import leaf_weight, split_settings
from .._kernels.splits import NO_CATEGORIES
from .histogram import HIST_BLOCK, HistogramBuilder
from .stats import FixedPointStats
from .tree import Tree

# The expansion drivers are parallel=True for the numba cache's sake only (see
# _kernels/grow.py); numba's notice that they hold no parallel loop means nothing to users.
warnings.filterwarnings("ignore", message=r"(?s).*parallel=True.*was specified but no transformation",
                        category=NumbaPerformanceWarning)

#: Rows per partition block; fixed so that results never depend on threads.
PARTITION_BLOCK = 4096


class Split(NamedTuple):
    """A node's best split as a split scan reports it: named fields, never positions.

    ``left_G``, ``left_H``, ``left_count`` are the left child's sums in the grower's
    statistics (fixed-point integers for gradient trees, class weight / weight /
    row count for criterion trees); the right child's are the node's minus these.
    """

    gain: float                  # what candidates are ranked by
    feature: int
    bin: int                     # rows whose bin (or rank code) is <= this go left
    default_left: int            # where missing values go
    left_G: object
    left_H: object
    left_count: object
    threshold: float = None      # raw threshold, when the scan knows it (sorted columns)
    recorded_gain: float = None  # the gain the tree records, when it is not ``gain``


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


class _Nodes:
    """Growing tree: per-node lists, turned into a :class:`Tree` at the end."""

    def __init__(self):
        self.cols = {k: [] for k in ("feature", "threshold_bin", "threshold", "left", "right",
                                     "default_left", "gain", "G", "H", "C",
                                     "depth", "start", "count", "side")}

    def add(self, G, H, C, depth, start, count, side):
        c = self.cols
        for k in ("feature", "threshold_bin", "left", "right"):
            c[k].append(-1)
        c["default_left"].append(0)
        c["threshold"].append(0.0)
        c["gain"].append(0.0)
        c["G"].append(G)
        c["H"].append(H)
        c["C"].append(C)
        c["depth"].append(depth)
        c["start"].append(start)
        c["count"].append(count)
        c["side"].append(side)
        return len(c["feature"]) - 1

    def __getitem__(self, key):
        return self.cols[key]


class TreeGrower:
    """Grows trees on one binned training matrix.

    Parameters
    ----------
    X_binned : ndarray of shape (n_rows, n_features), uint8 or uint16
    n_bins : ndarray of shape (n_features,), int32, value bins per feature
    n_bins_max : int, bins per feature including the missing bin
    params : GrowerParams
    reducer : optional, sums histograms and totals across data shards
    X_columns : optional, the feature-major copy of ``X_binned`` (made here if not given)
    """

    def __init__(self, X_binned, n_bins, n_bins_max, params, reducer=None, X_columns=None):
        self.X_binned = X_binned
        self.n_bins = np.ascontiguousarray(n_bins, dtype=np.int32)
        self.missing_bins = self.n_bins  # the missing bin id equals n_bins
        self.params = params
        # size the pool up front for the most histograms held at once: every
        # candidate leaf (lossguide), or the smaller children of a level (depthwise)
        if params.grow_policy == "lossguide" and params.max_leaves > 0:
            bound = params.max_leaves + 2
        else:
            bound = 2 ** max(min(params.max_depth, 12) - 1, 0) + 2
        self.builder = HistogramBuilder(X_binned, n_bins_max, reducer,
                                        initial_slots=int(min(max(bound, 4), 512)))
        self.reducer = self.builder.reducer
        n_rows = X_binned.shape[0]
        # a feature-major copy for the partition kernel, which reads one feature of many rows
        # (given when the caller re-bins the data between trees and keeps both up to date)
        self.X_columns = np.ascontiguousarray(X_binned.T) if X_columns is None else X_columns
        # two index buffers; a node's rows are a segment of one of them (its side)
        self.buf = np.empty((2, n_rows), dtype=INDEX_DTYPE)
        self.mask = np.empty(n_rows, dtype=np.uint8)
        self.stats = FixedPointStats(n_rows, self.reducer)

    # -- public ------------------------------------------------------------------------
    def grow(self, gh, rows, features, rng):
        """Grow one tree.

        Parameters
        ----------
        gh : ndarray of shape (n_rows, 2), float32, gradient and hessian of each row
            (quantized to fixed point here, see :mod:`.stats`), or the integers
            quantized by ``self.stats``
        rows : ndarray of int32 (ascending) or None; the rows in the bag
        features : ndarray of int64 (ascending); features this tree may split on
        rng : numpy.random.Generator, for per-node feature sampling

        Returns
        -------
        tree : Tree (values include the learning rate)
        leaf_segments : (sides, starts, counts, values) of the leaves in ``self.buf``
        """
        n = self._n_rows() if rows is None else rows.shape[0]
        if rows is None:
            self.buf[0] = np.arange(n, dtype=INDEX_DTYPE)
        else:
            self.buf[0, :n] = rows
        self._features, self._rng = features, rng
        if gh is not None and gh.dtype != GQ_DTYPE:
            gh = self.stats.quantize(gh)
        self._gh = gh
        self._h_unit = float(self.stats.units[1])  # one hessian unit, for min_child_weight
        p = self.params
        self._settings = split_settings(p.reg_lambda, p.reg_alpha, p.max_delta_step, p.gamma,
                                        p.min_child_weight, p.min_data_in_leaf,
                                        self.stats.units)
        self._n_threads = numba.get_num_threads()
        nodes = _Nodes()
        self._cand = {}
        self._heap = []  # lossguide: (-gain, node) of every candidate
        self._slot = {}
        self._root(nodes, n)
        n_leaves = 1
        while True:
            batch = self._next_batch(n_leaves)
            if not batch:
                break
            self._expand(nodes, batch)
            n_leaves += len(batch)
        for slot in self._slot.values():
            self.builder.release(slot)
        self._slot = {}
        return self._finish(nodes)

    def _n_rows(self):
        return self.X_binned.shape[0]

    def _push_candidate(self, gain, node):
        heapq.heappush(self._heap, (-gain, node))

    def _root(self, nodes, n):
        """Add the root node and, if it may be split, find its best split."""
        features, gh = self._features, self._gh
        root_slot = self._root_histogram(n) if features.shape[0] else None
        if root_slot is None:
            totals = np.empty(3, dtype=HIST_DTYPE)
            sum_gradients(gh, self.buf[0], 0, n, totals)
            self.reducer.allreduce_sum(totals)
        else:
            # every row is in exactly one bin of any feature: the root totals are
            # the sum of one feature's cells (no extra pass over the rows, and
            # already summed across shards)
            totals = self.builder.hist[root_slot, features[0]].sum(axis=0)
        nodes.add(int(totals[0]), int(totals[1]), int(totals[2]), 0, 0, n, 0)
        if root_slot is not None:
            self._slot[0] = root_slot
            if self._splittable(nodes, 0):
                self._scan(nodes, [0])
            else:
                self.builder.release(self._slot.pop(0))

    def _root_histogram(self, n):
        slot = self.builder.acquire()
        one = np.zeros(1, dtype=np.int64)
        self.builder.build(self._gh, self.buf, one, one, np.full(1, n, dtype=np.int64),
                           np.full(1, slot, dtype=np.int64), self._features)
        return slot

    # -- policy ------------------------------------------------------------------------
    def _next_batch(self, n_leaves):
        p = self.params
        if not self._cand or (p.max_leaves > 0 and n_leaves >= p.max_leaves):
            return []
        if p.grow_policy == "lossguide":
            return [heapq.heappop(self._heap)[1]]  # highest gain, lowest node id on ties
        batch = sorted(self._cand)
        if p.max_leaves > 0 and n_leaves + len(batch) > p.max_leaves:
            keep = sorted(batch, key=lambda k: (-self._cand[k].gain, k))[:p.max_leaves - n_leaves]
            batch = sorted(keep)
        return batch

    def _splittable(self, nodes, node):
        c = nodes.cols
        return self._can_split(c["depth"][node], c["C"][node], c["H"][node])

    def _can_split(self, depth, count, hess):
        """May a node of this depth, row count and (fixed-point) hessian sum still be split?"""
        p = self.params
        if p.max_depth > 0 and depth >= p.max_depth:
            return False
        return count >= 2 * p.min_data_in_leaf and hess * self._h_unit >= 2 * p.min_child_weight

    # -- one expansion ---------------------------------------------------------------------
    def _expand(self, nodes, batch):
        """Split every node of ``batch`` by its candidate; build, subtract and scan the children.

        Which child's histogram is built (the smaller one) is decided from the
        split's global row counts, so every data shard builds the same child.
        """
        cand, slot_of, builder = self._cand, self._slot, self.builder
        cols = nodes.cols
        depth_of, H_of, C_of = cols["depth"], cols["H"], cols["C"]
        start_of, count_of, side_of = cols["start"], cols["count"], cols["side"]
        splits, plan, pairs = [], [], []
        small_left, small_slots = [], []
        for k in batch:
            s = cand.pop(k)
            splits.append(s)
            HL, CL = s.left_H, s.left_count
            CR, HR = C_of[k] - CL, H_of[k] - HL
            need_l = self._can_split(depth_of[k] + 1, CL, HL)
            need_r = self._can_split(depth_of[k] + 1, CR, HR)
            parent_slot = slot_of.pop(k)
            left_small = CL <= CR
            small_left.append(1 if left_small else 0)
            if not (need_l or need_r):
                builder.release(parent_slot)
                small_slots.append(-1)
                plan.append((need_l, need_r, -1, -1))
                continue
            small_slot = builder.acquire()
            small_slots.append(small_slot)
            large_slot = -1
            if need_r if left_small else need_l:
                large_slot = parent_slot
                pairs.append((parent_slot, small_slot))
            else:
                builder.release(parent_slot)
            plan.append((need_l, need_r, small_slot, large_slot))
        B = len(batch)
        zeros = [0] * (3 * B)  # split kind (numeric) and category words of every split
        arr = np.array([start_of[k] for k in batch] + [count_of[k] for k in batch]
                       + [s.feature for s in splits] + [s.bin for s in splits]
                       + [s.default_left for s in splits] + zeros + [side_of[k] for k in batch]
                       + small_left + small_slots, dtype=np.int64).reshape(11, B)
        starts, counts, sides, sleft, sslots = arr[0], arr[1], arr[8], arr[9], arr[10]
        split_record = arr[2:8]  # feature, bin, default_left, kind, category words (splits.py)
        n_left = np.empty(B, dtype=np.int64)
        builder.reserve_partials(B + sum(count_of[k] for k in batch) // HIST_BLOCK)
        split_and_build(self.X_columns, self.X_binned, self._gh, self.buf, self.mask, starts,
                        counts, split_record, NO_CATEGORIES, sides,
                        self.missing_bins, PARTITION_BLOCK, sleft, sslots, self._features,
                        HIST_BLOCK, self._n_threads, builder.hist, builder.partial, n_left)
        builder.allreduce([x for x in small_slots if x >= 0])
        unused, to_scan = self._add_children(nodes, batch, splits, plan, small_left,
                                             n_left.tolist())
        self._scan(nodes, to_scan, pairs)
        for k in unused:
            builder.release(slot_of.pop(k))

    def _add_children(self, nodes, batch, splits, plan, small_left, n_left):
        """Record the splits and their children; returns (built-only nodes, nodes to scan)."""
        slot_of = self._slot
        unused, to_scan = [], []
        for i, k in enumerate(batch):
            left, right = self._record_split(nodes, k, splits[i], n_left[i])
            need_l, need_r, small_slot, large_slot = plan[i]
            if small_slot < 0:
                continue
            small, large = (left, right) if small_left[i] else (right, left)
            slot_of[small] = small_slot
            if large_slot >= 0:
                slot_of[large] = large_slot
            if need_l:
                to_scan.append(left)
            if need_r:
                to_scan.append(right)
            if not (need_l if small == left else need_r):
                unused.append(small)  # built only to be subtracted from its parent
        return unused, to_scan

    @staticmethod
    def _record_split(nodes, k, split, n_left):
        """Make node k a split by its candidate ``split`` (a :class:`Split`); add its
        children, whose rows are the first ``n_left`` and the rest of k's segment in the
        other buffer. Returns (left, right)."""
        cols = nodes.cols
        f, b, dl, GL, HL, CL = split.feature, split.bin, split.default_left, split.left_G, \
            split.left_H, split.left_count
        gain = split.gain if split.recorded_gain is None else split.recorded_gain
        depth, start, count = cols["depth"][k] + 1, cols["start"][k], cols["count"][k]
        side = 1 - cols["side"][k]
        left = nodes.add(GL, HL, CL, depth, start, n_left, side)
        right = nodes.add(cols["G"][k] - GL, cols["H"][k] - HL, cols["C"][k] - CL, depth,
                          start + n_left, count - n_left, side)
        cols["feature"][k], cols["threshold_bin"][k] = f, b
        if split.threshold is not None:
            cols["threshold"][k] = split.threshold
        cols["left"][k], cols["right"][k] = left, right
        cols["default_left"][k], cols["gain"][k] = dl, gain
        return left, right

    def _node_feature_mask(self, B, A):
        """(B, A) uint8: which of the A tree features each of B nodes may split on
        (``colsample_bynode`` draws a subset per node), or None for all of them."""
        p = self.params
        if p.colsample_bynode >= 1.0:
            return None
        n_pick = max(1, int(round(p.colsample_bynode * A)))
        mask = np.zeros((B, A), dtype=np.uint8)
        for r in range(B):
            mask[r, self._rng.choice(A, n_pick, replace=False)] = 1
        return mask

    def _scan_buffers(self, B, A):
        """Output arrays of the split kernel for B nodes, reused across calls."""
        if getattr(self, "_buffers", None) is None or self._buffers[0].shape[0] < B \
                or self._buffers[0].shape[1] != A:
            cap = max(B, 8)
            self._buffers = (np.empty((cap, A)), np.empty((cap, A), dtype=np.int32),
                             np.empty((cap, A), dtype=np.uint8),
                             np.empty((cap, A, 3), dtype=HIST_DTYPE),
                             np.empty(cap, dtype=np.int64), np.ones((cap, A), dtype=np.uint8))
            self._views = (0, None)
        if self._views[0] != B:
            self._views = (B, [b[:B] for b in self._buffers])
        return self._views[1]

    def _scan(self, nodes, scan, pairs=()):
        """Subtract ``pairs`` (parent slot, child slot), then find the best split of
        each node of ``scan`` (in node order) and record it as a candidate."""
        p = self.params
        scan = sorted(scan)
        B, A = len(scan), self._features.shape[0]
        if A == 0 or B == 0:
            for k in scan:
                self.builder.release(self._slot.pop(k))
            return
        gain, best_bin, dl, left, best, mask = self._scan_buffers(B, A)
        drawn = self._node_feature_mask(B, A)
        if drawn is not None:
            mask = drawn
        G, H, C = nodes["G"], nodes["H"], nodes["C"]
        totals = np.array([(G[k], H[k], C[k]) for k in scan], dtype=HIST_DTYPE)
        pair_arr = np.array(pairs, dtype=np.int64).reshape(-1, 2).T.copy()
        subtract_and_scan(self.builder.hist, pair_arr[0], pair_arr[1], self._features,
                          np.array([self._slot[k] for k in scan], dtype=np.int64), totals,
                          self.n_bins, mask, self._settings, gain, best_bin, dl, left, best)
        for r, k in enumerate(scan):
            a = best[r]
            g = gain[r, a] if a >= 0 else 0.0
            if g > 0.0:
                lr = left[r, a]
                self._cand[k] = Split(g, int(self._features[a]), int(best_bin[r, a]),
                                      int(dl[r, a]), int(lr[0]), int(lr[1]), int(lr[2]))
                self._push_candidate(g, k)
            else:
                self.builder.release(self._slot.pop(k))

    def _finish(self, nodes):
        p = self.params
        n = len(nodes["feature"])
        ug, uh = (float(u) for u in self.stats.units)
        G = [ug * float(g) for g in nodes["G"]]
        H = [uh * float(h) for h in nodes["H"]]
        value = np.array([p.learning_rate * leaf_weight(G[k], H[k], p.reg_lambda, p.reg_alpha,
                                                        p.max_delta_step)
                          for k in range(n)])
        feature = np.array(nodes["feature"], dtype=np.int32)
        # thresholds: raw values where the split finder knows them (exact), else
        # filled in from the bin edges by the caller
        tree = Tree(feature, nodes["threshold"], nodes["left"], nodes["right"],
                    nodes["default_left"], value, nodes["gain"], H, nodes["C"],
                    threshold_bin=nodes["threshold_bin"])
        leaves = np.nonzero(feature < 0)[0]
        sides = np.array(nodes["side"], dtype=np.int64)[leaves]
        starts = np.array(nodes["start"], dtype=np.int64)[leaves]
        counts = np.array(nodes["count"], dtype=np.int64)[leaves]
        return tree, (sides, starts, counts, value[leaves])
