"""One expansion step of tree growth as two kernel calls.

Growing a leaf-wise tree of 255 leaves takes 254 expansions, each of which
partitions rows, builds a histogram, subtracts one and scans the new nodes (the
subtraction runs in the scan's parallel region). Called one by one from Python, those
kernels cost more in dispatch and bookkeeping than in work once nodes are small. These
drivers run them back to back inside compiled code: Python calls :func:`split_and_build`,
hands the new histograms to the reducer (the only place where shards meet), then calls
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

from .histogram import build_histograms
from .nodes import ND_COUNT, ND_SIDE, ND_START, choose_gradient, split_nodes
from .partition import partition_nodes
from .split import find_best_splits

#: Named rows of ``small``, the per-node plan of :func:`split_and_build`: whether the
#: left child is the one built, and the histogram slot it is built into (-1: none).
SM_LEFT, SM_SLOT = range(2)


@njit(parallel=True, cache=True, nogil=True)
def split_and_build(data, gh, buf, staging, table, nodes, first, missing_bins, small, features,
                    sizes, hists, out_left_counts):
    """Partition a batch of nodes, add their children to the node table, then build the
    histogram of each one's smaller child.

    Parameters
    ----------
    data : tuple (X_columns, X_binned), the binned matrix feature-major (for the
        partition) and row-major (for the histograms)   # IN
    table : tuple (ints, floats, stats, cand_left, cat_bits), the node table
        (:class:`boostwood.tree.nodes.NodeTable`), with room for two children per node   # IN/OUT
    first : int, id of the first child (see :func:`boostwood._kernels.nodes.split_nodes`)
    buf, staging, nodes, missing_bins : as in
        :func:`boostwood._kernels.partition.partition_nodes` (a feature's missing bin id is
        its value bins, the ``n_bins`` of :func:`build_histograms`)
    gh, features : as in :func:`boostwood._kernels.histogram.build_histograms`
    small : ndarray of shape (2, n_nodes), int64   # IN, per node: SM_LEFT (1 = the left
        child is built) and SM_SLOT (slot of the built child; -1 = none)
    sizes : tuple (partition_block, hist_block, n_threads) of ints: the most rows per
        partition block (see :func:`.partition.partition_block_size`), rows per histogram
        block (most rows a block sums in one pass), and the threads of the parallel loops (they only cut the work)
    hists : tuple (hist, partial), as in :func:`build_histograms`; with
        :func:`~boostwood._kernels.histogram.partials_bound` buffers for the nodes' rows
        every thread gets a run of the build (fewer give fewer runs)   # OUT
    out_left_counts : ndarray of shape (n_nodes,), int64   # OUT, rows that went left
    """
    X_columns, X_binned = data
    partition_block, hist_block, n_threads = sizes
    hist, partial = hists
    ints, floats, stats, cand_left, cat_bits = table
    partition_nodes(X_columns, buf, staging, ints, nodes, cat_bits, missing_bins, partition_block,
                    n_threads, out_left_counts)
    split_nodes(ints, floats, stats, cand_left, nodes, out_left_counts, first)
    b_sides, b_starts, b_counts, b_slots = built_children(ints, nodes, small, out_left_counts)
    m = b_slots.shape[0]
    if m == 0:
        return
    build_histograms(X_binned, gh, buf, b_sides, b_starts, b_counts, b_slots, features,
                     missing_bins, hist_block, n_threads, hist, partial)


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


@njit(parallel=True, cache=True, nogil=True)
def subtract_and_scan(hist, pairs, features, scan_slots, n_bins, feature_mask, settings, out,
                      nodes, table):
    """``hist[parent] -= hist[child]`` for each pair (``pairs`` (2, n_pairs) int64: parent
    slots, child slots), then the best split of each node of ``nodes`` (whose histograms
    are in ``scan_slots``), recorded as its candidate in ``table`` (the tuple of
    :func:`split_and_build`) by :func:`boostwood._kernels.nodes.choose_gradient`; the
    subtractions run in the scan's parallel region (:func:`find_best_splits`). Other
    arguments as in :func:`find_best_splits`. Returns the nodes that have a candidate."""
    ints, floats, stats, cand_left, cat_bits = table
    find_best_splits(hist, scan_slots, pairs, node_totals(stats, nodes), n_bins, features,
                     feature_mask, settings, out)
    gain, pick, left = out
    return choose_gradient(gain, pick, left, nodes, features, ints, floats, cand_left)
