"""One expansion step of tree growth as two kernel calls.

Growing a leaf-wise tree of 255 leaves takes 254 expansions, each of which
partitions rows, builds a histogram, subtracts one and scans the new nodes.
Called one by one from Python, those four kernels cost more in dispatch and
bookkeeping than in work once nodes are small. These drivers run them back to
back inside compiled code: Python calls :func:`split_and_build`, hands the new
histograms to the reducer (the only place where shards meet), then calls
:func:`subtract_and_scan`.

Both only sequence the parallel kernels of ``partition.py``, ``histogram.py``
and ``split.py`` (which stay tested against their naive twins); they add no
arithmetic of their own, so results are bit-identical to calling the kernels
one at a time.

Both are declared ``parallel=True`` although they hold no parallel loop of
their own: a *cached* serial function that calls parallel ones crashes when it
is loaded from numba's cache in a new process (numba issues #8578 and #4807);
a parallel caller is cached and loaded correctly. ``tests/_kernels/test_grow.py``
runs a fresh process against a warm cache to keep it that way. numba's notice that
they hold no parallel loop is silenced where they are imported (``tree/grower.py``).
"""
import numpy as np
from numba import njit

from .histogram import build_histograms, feature_groups, subtract_histograms
from .partition import partition_nodes
from .split import find_best_splits


@njit(parallel=True, cache=True, nogil=True)
def split_and_build(X_columns, X_binned, gh, buf, mask, starts, counts, splits, cat_bits,
                    sides, missing_bins, partition_block, small_left, small_slots, features,
                    hist_block, n_threads, hist, partial, out_left_counts):
    """Partition a batch of nodes, then build the histogram of each one's smaller child.

    Parameters
    ----------
    X_columns, buf, mask, starts, counts, sides, missing_bins, partition_block :
        as in :func:`boostwood._kernels.partition.partition_nodes`
    splits, cat_bits : the batch's splits, as in :func:`partition_nodes`   # IN
    n_threads : int, threads of the parallel loops (only decides how work is cut)
    X_binned, gh, features, hist_block, hist, partial :
        as in :func:`boostwood._kernels.histogram.build_histograms`; ``partial``
        must hold at least ``sum(ceil(counts / hist_block))`` buffers
    small_left : ndarray of shape (n_nodes,), int64   # IN, 1 = the left child is built
    small_slots : ndarray of shape (n_nodes,), int64   # IN, slot of the built child; -1 = none
    out_left_counts : ndarray of shape (n_nodes,), int64   # OUT, rows that went left
    """
    partition_nodes(X_columns, buf, sides, mask, starts, counts, splits, cat_bits,
                    missing_bins, partition_block, out_left_counts)
    n_nodes = starts.shape[0]
    m = 0
    for i in range(n_nodes):
        if small_slots[i] >= 0:
            m += 1
    if m == 0:
        return
    b_sides = np.empty(m, dtype=np.int64)
    b_starts = np.empty(m, dtype=np.int64)
    b_counts = np.empty(m, dtype=np.int64)
    b_slots = np.empty(m, dtype=np.int64)
    n_extra = 0
    j = 0
    for i in range(n_nodes):
        if small_slots[i] < 0:
            continue
        b_sides[j] = 1 - sides[i]  # children live in the other buffer
        if small_left[i] != 0:
            b_starts[j] = starts[i]
            b_counts[j] = out_left_counts[i]
        else:
            b_starts[j] = starts[i] + out_left_counts[i]
            b_counts[j] = counts[i] - out_left_counts[i]
        b_slots[j] = small_slots[i]
        n_extra += max((b_counts[j] + hist_block - 1) // hist_block, 1) - 1
        j += 1
    n_groups = feature_groups(n_extra + m, features.shape[0], n_threads)
    build_histograms(X_binned, gh, buf, b_sides, b_starts, b_counts, b_slots, features,
                     hist_block, n_groups, hist, partial)


@njit(parallel=True, cache=True, nogil=True)
def subtract_and_scan(hist, parent_slots, child_slots, features, scan_slots, totals, n_bins,
                      feature_mask, settings, out_gain, out_bin, out_default_left, out_left,
                      out_best):
    """``hist[parent] -= hist[child]`` for each pair, then the best split of each
    node in ``scan_slots`` (arguments as in :func:`subtract_histograms` and
    :func:`find_best_splits`; empty arrays skip a step)."""
    if parent_slots.shape[0] > 0:
        subtract_histograms(parent_slots, child_slots, features, hist)
    if scan_slots.shape[0] > 0:
        find_best_splits(hist, scan_slots, totals, n_bins, features, feature_mask, settings,
                         out_gain, out_bin, out_default_left, out_left, out_best)
