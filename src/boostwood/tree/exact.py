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
import numba
import numpy as np

from .._config import HIST_DTYPE, INDEX_DTYPE
from .._comm import LocalReducer
from .._kernels.histogram import sum_gradients
from .._kernels.partition import partition_nodes
from .grower import PARTITION_BLOCK, TreeGrower
from .splitters import SortedSplitter
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
        self.params = params
        self.reducer = reducer if reducer is not None else LocalReducer()
        self.builder = None
        self.X_columns = columns.codes
        self.n_bins = columns.n_values.astype(np.int32)
        self.missing_bins = self.n_bins  # the missing code equals the number of values
        n_rows = columns.codes.shape[1]
        self.n_rows = n_rows
        self.buf = np.empty((2, n_rows), dtype=INDEX_DTYPE)
        self.staging = np.empty(n_rows, dtype=np.int32)
        self.node_of = np.empty(n_rows, dtype=np.int32)
        self.stats = FixedPointStats(n_rows, self.reducer)
        self.splitter = SortedSplitter(columns, self.buf, self.node_of, local_eps)
        self.tree_state = None

    def _n_rows(self):
        return self.n_rows

    def _root(self, table, n):
        totals = np.empty(3, dtype=HIST_DTYPE)
        sum_gradients(self._gh, self.buf[0], 0, n, totals)
        self.reducer.allreduce_sum(totals)
        table.add_root(totals, n)
        if self._splittable(table, 0):
            self._scan(table, [0])

    def _expand(self, table, batch):
        """Partition the batch's rows by their candidates, then scan the children."""
        n_left = np.empty(batch.shape[0], dtype=np.int64)
        partition_nodes(self.X_columns, self.buf, self.staging, table.ints, batch, table.cat_bits,
                        self.missing_bins, PARTITION_BLOCK, numba.get_num_threads(), n_left)
        first = table.split(batch, n_left)
        self._child_keys(batch, first)
        to_scan = [c for c in range(first, table.n) if self._splittable(table, c)]
        if to_scan:
            self._scan(table, to_scan)

    def _drop(self, nodes):
        pass  # no histograms to free
