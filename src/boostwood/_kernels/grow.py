"""Helpers of the compiled expansion loop (:func:`boostwood._kernels.expand.expand_tree`)
that plan one expansion: which child of each split node is built (``small``) and where
its rows lie, and a batch's node totals.

The loop sequences the parallel kernels of ``partition.py``, ``histogram.py`` and
``split.py`` (each tested against its naive twin); the loop as a whole is tested
against the naive twin grower of ``tests/naive_tree.py``.
"""
import numpy as np
from numba import njit

from .._config import lock_cache_writes
from .nodes import ND_COUNT, ND_SIDE, ND_START

#: Named rows of ``small``, the per-node plan of an expansion: whether the left child
#: is the one built, and the histogram slot it is built into (-1: none).
SM_LEFT, SM_SLOT = range(2)


@njit(cache=True, nogil=True)
def built_children(ints, nodes, small, left_counts):
    """The segments of the children a split batch builds (as ``small`` plans them):
    (sides, starts, counts, slots) int64 arrays, one entry per built child."""
    n_nodes = nodes.shape[0]
    m = 0
    for i in range(n_nodes):
        if small[SM_SLOT, i] >= 0:
            m += 1
    b_sides = np.empty(m, dtype=np.int64)
    b_starts = np.empty(m, dtype=np.int64)
    b_counts = np.empty(m, dtype=np.int64)
    b_slots = np.empty(m, dtype=np.int64)
    j = 0
    for i in range(n_nodes):
        if small[SM_SLOT, i] < 0:
            continue
        p = nodes[i]
        b_sides[j] = 1 - ints[ND_SIDE, p]  # children live in the other buffer
        if small[SM_LEFT, i] != 0:
            b_starts[j] = ints[ND_START, p]
            b_counts[j] = left_counts[i]
        else:
            b_starts[j] = ints[ND_START, p] + left_counts[i]
            b_counts[j] = ints[ND_COUNT, p] - left_counts[i]
        b_slots[j] = small[SM_SLOT, i]
        j += 1
    return b_sides, b_starts, b_counts, b_slots


@njit(cache=True, nogil=True)
def node_totals(stats, nodes):
    """The statistics rows of ``nodes``, as one (n_nodes, W) array."""
    totals = np.empty((nodes.shape[0], stats.shape[1]), dtype=stats.dtype)
    for i in range(nodes.shape[0]):
        for c in range(stats.shape[1]):  # element by element: no shape checks to compile
            totals[i, c] = stats[nodes[i], c]
    return totals


lock_cache_writes(globals())  # numba's cache, safe when processes compile at once
