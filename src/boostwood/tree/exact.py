"""The tree grower with exact greedy split finding (``tree_method="exact"``).

Same grower, same growth policies, same gain, leaf and tie rules as the
histogram method; only where a node's candidate splits come from differs. The
rows of a node are still a segment of the partition buffers, split by the same
partition kernel, but on *rank codes* (every distinct value its own code, see
:class:`~boostwood.data.columns.SortedColumns`) instead of histogram bins, and a
batch of nodes is scanned by one pass per feature over the pre-sorted rows
(:func:`boostwood._kernels.exact.exact_scan`). Depth-wise growth scans a whole
level at once, so a level costs O(rows x features).

Thresholds are raw values half-way between a node's consecutive distinct
values, as in the exact greedy algorithm of Chen & Guestrin (2016, Alg. 1).
"""
import numpy as np

from .._config import HIST_DTYPE, INDEX_DTYPE
from .._comm import LocalReducer
from .._kernels.exact import exact_scan, mark_nodes
from .._kernels.split import pick_best_features
from .._kernels.histogram import sum_gradients
from .._kernels.partition import partition_nodes
from .._kernels.splits import NO_CATEGORIES, pack_splits
from .grower import PARTITION_BLOCK, Split, TreeGrower
from .stats import FixedPointStats


class ExactTreeGrower(TreeGrower):
    """Grows trees by exact greedy split finding over pre-sorted columns.

    Parameters
    ----------
    columns : SortedColumns of the training data
    params : GrowerParams
    reducer : optional; only node totals go through it (exact search is single-process)
    local_eps : float, default 0
        0: exact greedy. > 0: the approximate algorithm with local proposals, about
        1 / local_eps hessian-weighted percentiles of each node's rows per feature
        (see :func:`boostwood._kernels.exact.exact_scan`).
    """

    def __init__(self, columns, params, reducer=None, local_eps=0.0):
        self.columns = columns
        self.local_eps = float(local_eps)
        self.params = params
        self.reducer = reducer if reducer is not None else LocalReducer()
        self.builder = None
        self.X_columns = columns.codes
        self.n_bins = columns.n_values.astype(np.int32)
        self.missing_bins = self.n_bins  # the missing code equals the number of values
        n_rows = columns.codes.shape[1]
        self.n_rows = n_rows
        self.buf = np.empty((2, n_rows), dtype=INDEX_DTYPE)
        self.mask = np.empty(n_rows, dtype=np.uint8)
        self.node_of = np.empty(n_rows, dtype=np.int32)
        self.stats = FixedPointStats(n_rows, self.reducer)

    def _n_rows(self):
        return self.n_rows

    def _root(self, nodes, n):
        totals = np.empty(3, dtype=HIST_DTYPE)
        sum_gradients(self._gh, self.buf[0], 0, n, totals)
        self.reducer.allreduce_sum(totals)
        nodes.add(int(totals[0]), int(totals[1]), int(totals[2]), 0, 0, n, 0)
        if self._splittable(nodes, 0):
            self._scan(nodes, [0])

    def _expand(self, nodes, batch):
        """Partition the batch's rows by their candidates, then scan the children."""
        splits = [self._cand.pop(k) for k in batch]
        cols = nodes.cols
        B = len(batch)
        arr = np.array([cols["start"][k] for k in batch] + [cols["count"][k] for k in batch]
                       + [s.feature for s in splits] + [s.bin for s in splits]
                       + [s.default_left for s in splits] + [cols["side"][k] for k in batch],
                       dtype=np.int64).reshape(6, B)
        starts, counts, feats, codes, dleft, sides = arr
        n_left = np.empty(B, dtype=np.int64)
        partition_nodes(self.X_columns, self.buf, sides, self.mask, starts, counts,
                        pack_splits(feats, codes, dleft), NO_CATEGORIES, self.missing_bins,
                        PARTITION_BLOCK, n_left)
        to_scan = []
        for i, k in enumerate(batch):
            left, right = self._record_split(nodes, k, splits[i], int(n_left[i]))
            to_scan.extend(c for c in (left, right) if self._splittable(nodes, c))
        if to_scan:
            self._scan(nodes, to_scan)

    def _mark_batch(self, nodes, scan):
        """``node_of[row]`` = position in ``scan`` of the row's node (-1: not in the batch);
        returns the nodes' row counts."""
        cols = nodes.cols
        sides, starts, counts = np.array([(cols["side"][k], cols["start"][k], cols["count"][k])
                                          for k in scan], dtype=np.int64).T.copy()
        self.node_of[:] = -1
        mark_nodes(self.buf, sides, starts, counts, self.node_of)
        return counts

    def _scan(self, nodes, scan, pairs=()):
        p = self.params
        scan = sorted(scan)
        B, A = len(scan), self._features.shape[0]
        if A == 0 or B == 0:
            return
        cols = nodes.cols
        self._mark_batch(nodes, scan)
        mask = self._node_feature_mask(B, A)
        if mask is None:
            mask = np.ones((B, A), dtype=np.uint8)
        totals = np.array([(cols["G"][k], cols["H"][k], cols["C"][k]) for k in scan],
                          dtype=HIST_DTYPE)
        gain = np.empty((B, A))
        code = np.empty((B, A), dtype=np.int64)
        nxt = np.empty((B, A), dtype=np.int64)
        dl = np.empty((B, A), dtype=np.uint8)
        left = np.empty((B, A, 3), dtype=HIST_DTYPE)
        best = np.empty(B, dtype=np.int64)
        c = self.columns
        exact_scan(c.codes, c.order, c.order_offsets, c.missing_rows, c.missing_offsets, self._gh,
                   self.node_of, totals, self._features, mask, self._settings, self.local_eps,
                   gain, code, nxt, dl, left)
        pick_best_features(gain, best)
        for r, k in enumerate(scan):
            a = best[r]
            g = gain[r, a] if a >= 0 else 0.0
            if g > 0.0:
                f = int(self._features[a])
                thr = c.thresholds([f], [int(code[r, a])], [int(nxt[r, a])])[0]
                lr = left[r, a]
                self._cand[k] = Split(g, f, int(code[r, a]), int(dl[r, a]), int(lr[0]),
                                      int(lr[1]), int(lr[2]), threshold=thr)
                self._push_candidate(g, k)
