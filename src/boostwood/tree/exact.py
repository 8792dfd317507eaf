"""The tree grower with exact greedy split finding (``tree_method="exact"``).

Same grower, same growth policies, same gain, leaf and tie rules as the
histogram method; only where a node's candidate splits come from differs: the
:class:`~boostwood.tree.grower.TreeGrower` is composed with a
:class:`~boostwood.tree.splitters.SortedSplitter` and gradient statistics. The
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

from .grower import TreeGrower
from .splitters import SortedSplitter
from .statistics import GradientStatistics


def exact_grower(columns, params, reducer=None, local_eps=0.0):
    """A :class:`~boostwood.tree.grower.TreeGrower` that grows trees by exact greedy split
    finding over pre-sorted columns, stepped from Python.

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
    n_rows = columns.codes.shape[1]

    def splitter(buf):
        return SortedSplitter(columns, buf, np.empty(n_rows, dtype=np.int32), local_eps)

    return TreeGrower.stepped(columns.codes, columns.n_values, params, reducer, splitter,
                              lambda _, reducer_: GradientStatistics(n_rows, reducer_),
                              columns=columns)
