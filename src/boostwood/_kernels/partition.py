"""Stable in-place partition of node row segments after a split.

Every node owns a contiguous segment ``[start, start+count)`` of one of two
index buffers ``buf[0]`` / ``buf[1]`` (its "side"). Splitting a node writes its
rows into the same segment of the *other* buffer, the left child's rows first,
each side keeping the original (ascending) order; the children live on that
other side (ping-pong, so no copy-back pass is needed)::

    buf[side]     [start : start+count] = [ a b c d e f g h ]   goes left: b d e h
    buf[1 - side] [start : start+count] = [ b d e h | a c f g ]
                                            left child  right child

Rows stay ascending inside every segment, so the histogram loop reads
gradients and binned columns in increasing address order.

Parallel and deterministic: segments are cut into blocks; pass 1 decides every row
of a block and stages it in the block's own range of a workspace (left rows from the
front, right rows from the back, :func:`_stage`) and counts its left rows, an exclusive
prefix sum gives each block its write offsets, pass 2 copies the two staged runs into
the other buffer (a node of one block, whose offsets need no prefix sum, is placed in
pass 1, while its rows are in cache: 128 nodes of 6,250 rows 10 % faster). The
partition is stable, so its result does not depend on how the rows are cut into
blocks, and the block size follows a work-size rule (:func:`partition_block_size`):
small batches, such as the single small node of a late leaf-wise split, are cut into
one block per thread rather than left to one thread.
"""
import numpy as np
from numba import njit, prange

from .._config import lock_cache_writes
from .intrinsics import PREFETCH_DISTANCE, prefetch
from .nodes import (ND_BIN, ND_CAT_LEN, ND_CAT_START, ND_COUNT, ND_DEFAULT_LEFT, ND_FEATURE,
                    ND_KIND, ND_SIDE, ND_START)
from .splits import NUMERIC, goes_left_binned


#: Fewest rows per partition block: a batch smaller than two of these is one block
#: (splitting it further costs more in starting threads than it saves).
MIN_PARTITION_BLOCK = 1024
#: A segment whose rows span fewer than this many times their count is dense (at least
#: one row in every 16 positions: nearly every cache line of the column is read, in
#: order), and its column reads are left to the hardware prefetcher; software prefetches
#: cost more than they save there (800k rows, 2 threads: a root 0.94 ms against 1.20,
#: a node of a sixteenth of the rows 0.08-0.10 against 0.10). A sparser segment keeps them.
DENSE_SPAN = 16


@njit(parallel=True, cache=True, nogil=True)
def all_rows(out, n):
    """``out[:n] = 0, 1, ..., n - 1``: a tree's root segment, written in place (a
    temporary ``np.arange`` of 4 bytes a row, 16 MB at 4M rows, was allocated and copied
    every tree)."""
    for i in prange(n):
        out[i] = i


@njit(cache=True, nogil=True)
def partition_block_size(n_rows, max_block, n_threads):
    """Rows per block for partitioning a batch of ``n_rows``: the fewest blocks of at most
    ``max_block`` rows that is a multiple of ``n_threads`` (numba gives each thread an
    equal count of blocks, so a node cut into near-equal blocks gives each the same
    rows), but at least ``MIN_PARTITION_BLOCK`` rows. Before, ``min(max_block,
    ceil(n_rows / n_threads))``: a leaf-wise node of 50,000 rows was 13 blocks of 4,096 for
    16 threads; over leaf-wise trees of 800k rows the busiest thread had 1.29x the mean
    rows on 16 threads (``benchmarks/bench_balance.py``)."""
    per_thread = (n_rows + n_threads * max_block - 1) // (n_threads * max_block)
    n_blocks = max(per_thread * n_threads, 1)
    return max(MIN_PARTITION_BLOCK, (n_rows + n_blocks - 1) // n_blocks)


@njit(cache=True, nogil=True, inline="always")
def _block_rows(starts, ends, blocks_per_node, k, j):
    """Rows lo..hi of block ``j``, of node ``k``: the node's blocks are near-equal."""
    n_k = blocks_per_node[k + 1] - blocks_per_node[k]
    i = j - blocks_per_node[k]
    c = ends[k] - starts[k]
    return starts[k] + c * i // n_k, starts[k] + c * (i + 1) // n_k


@njit(cache=True, nogil=True)
def _segments(ints, nodes):
    """Start and end of each node's segment, and their total rows."""
    starts = np.empty(nodes.shape[0], dtype=np.int64)
    ends = np.empty(nodes.shape[0], dtype=np.int64)
    total = 0
    for k in range(nodes.shape[0]):
        starts[k] = ints[ND_START, nodes[k]]
        ends[k] = starts[k] + ints[ND_COUNT, nodes[k]]
        total += ends[k] - starts[k]
    return starts, ends, total


@njit(cache=True, nogil=True)
def _block_layout(ints, nodes, block_size):
    """First block id of each node (plus the total at the end) and the node of each block."""
    n_nodes = nodes.shape[0]
    first = np.empty(n_nodes + 1, dtype=np.int64)
    first[0] = 0
    for k in range(n_nodes):
        first[k + 1] = first[k] + (ints[ND_COUNT, nodes[k]] + block_size - 1) // block_size
    block_node = np.empty(first[n_nodes], dtype=np.int64)
    for k in range(n_nodes):
        for j in range(first[k], first[k + 1]):
            block_node[j] = k
    return first, block_node


@njit(parallel=True, cache=True, nogil=True)
def partition_nodes(X_columns, buf, staging, ints, nodes, cat_bits, missing_bins, block_size,
                    n_threads, out_left_counts):
    """Split the segments of a batch of nodes into left | right.

    Parameters
    ----------
    X_columns : ndarray of shape (n_features, n_rows), uint8 or uint16, feature-major   # IN
        (a split reads one feature of many rows: one byte per row, in address order)
    buf : ndarray of shape (2, n_partition), int32   # IN/OUT, the two index buffers
    staging : ndarray of shape (n_partition,), int32   # OUT, workspace: each block's rows,
        its left rows from the block's first position on and its right rows from its last
        position back (see :func:`_stage`)
    ints : ndarray of shape (N_NODE_INTS, n_table), int64   # IN, the node table's integer
        fields (``nodes.py``): each node's segment (start, count, side) and the split it
        is split by (feature, bin, default_left, kind, category words)
    nodes : ndarray of shape (n_nodes,), int64   # IN, the table rows of the batch
    cat_bits : ndarray, uint32   # IN, the category words of the batch's categorical splits
    missing_bins : ndarray of shape (n_features,), int32   # IN, missing bin id per feature
    block_size, n_threads : ints, the most rows per block and the threads; the block size
        used follows :func:`partition_block_size` (the result does not depend on it)
    out_left_counts : ndarray of shape (n_nodes,), int64   # OUT
    """
    if staging.itemsize != buf.itemsize:
        raise TypeError("partition_nodes: staging must hold row ids of the index buffers' width")
    n_nodes = nodes.shape[0]
    if n_nodes == 1 and ints[ND_COUNT, nodes[0]] <= MIN_PARTITION_BLOCK:
        # one block: no parallel region or block tables (250 rows: 0.8 us, not 5.8)
        out_left_counts[0] = _partition_one(X_columns, buf, staging, ints, nodes[0], cat_bits,
                                            missing_bins)
        return
    # serial helpers and explicit loops: in a parallel function numba runs an array
    # expression (``a + b``, ``.sum()``, ``np.zeros``) as a parallel region of its own
    starts, ends, total = _segments(ints, nodes)
    block_size = partition_block_size(total, block_size, n_threads)
    blocks_per_node, block_node = _block_layout(ints, nodes, block_size)
    n_blocks = block_node.shape[0]
    n_left = np.empty(n_blocks, dtype=np.int64)  # every block's entry is set in pass 1

    # pass 1: decide every row and stage it in the block's own range of ``staging``
    for j in prange(n_blocks):
        k = block_node[j]
        p = nodes[k]
        lo, hi = _block_rows(starts, ends, blocks_per_node, k, j)
        n_left[j] = _stage_node(X_columns, buf, staging, ints, p, lo, hi, cat_bits,
                                missing_bins)
        if blocks_per_node[k + 1] - blocks_per_node[k] == 1:
            # the node's only block: its offsets are known, place while the rows are hot
            _place(staging, buf[1 - ints[ND_SIDE, p]], lo, hi, n_left[j], lo, lo + n_left[j])

    # exclusive prefix sums: where each block writes its left and right rows
    left_off = np.empty(n_blocks, dtype=np.int64)
    right_off = np.empty(n_blocks, dtype=np.int64)
    for k in range(n_nodes):
        total_left = 0
        for j in range(blocks_per_node[k], blocks_per_node[k + 1]):
            total_left += n_left[j]
        out_left_counts[k] = total_left
        lpos = starts[k]
        rpos = starts[k] + total_left
        for j in range(blocks_per_node[k], blocks_per_node[k + 1]):
            lo, hi = _block_rows(starts, ends, blocks_per_node, k, j)
            left_off[j] = lpos
            right_off[j] = rpos
            lpos += n_left[j]
            rpos += (hi - lo) - n_left[j]

    # pass 2: copy the staged runs into the other buffer
    for j in prange(n_blocks):
        k = block_node[j]
        if blocks_per_node[k + 1] - blocks_per_node[k] == 1:
            continue  # placed in pass 1
        lo, hi = _block_rows(starts, ends, blocks_per_node, k, j)
        _place(staging, buf[1 - ints[ND_SIDE, nodes[k]]], lo, hi, n_left[j], left_off[j],
               right_off[j])


@njit(cache=True, nogil=True)
def _partition_one(X_columns, buf, staging, ints, p, cat_bits, missing_bins):
    """:func:`partition_nodes` of the one node ``p`` as one block, serially; returns its
    left rows."""
    lo = ints[ND_START, p]
    hi = lo + ints[ND_COUNT, p]
    n_left = _stage_node(X_columns, buf, staging, ints, p, lo, hi, cat_bits, missing_bins)
    _place(staging, buf[1 - ints[ND_SIDE, p]], lo, hi, n_left, lo, lo + n_left)
    return n_left


@njit(cache=True, nogil=True)
def _stage_node(X_columns, buf, staging, ints, p, lo, hi, cat_bits, missing_bins):
    """Stage positions lo..hi of node ``p``'s rows by its split (:func:`_stage`); returns
    how many go left. A numeric split's kind is a constant in the row loop."""
    f = ints[ND_FEATURE, p]
    src = buf[ints[ND_SIDE, p]]
    if ints[ND_KIND, p] == NUMERIC:
        return _stage(X_columns[f], src, staging, lo, hi, missing_bins[f], NUMERIC,
                      ints[ND_BIN, p], ints[ND_DEFAULT_LEFT, p], cat_bits, 0, 0)
    return _stage(X_columns[f], src, staging, lo, hi, missing_bins[f], ints[ND_KIND, p],
                  ints[ND_BIN, p], ints[ND_DEFAULT_LEFT, p], cat_bits, ints[ND_CAT_START, p],
                  ints[ND_CAT_LEN, p])


@njit(cache=True, nogil=True, inline="always")
def _stage(col, src, staging, lo, hi, missing_bin, kind, threshold_bin, default_left,
           cat_bits, cat_start, cat_len):
    """Rows ``src[lo:hi]`` into ``staging[lo:hi]`` by the split: the left ones from ``lo``
    on, in order, the right ones from ``hi - 1`` back (in reverse order); returns how
    many go left. Every row is stored at both ends and only the side it goes to moves
    on, so the row loop has neither a branch nor a select on the split's outcome: a
    store at the other end is overwritten later, or is the row itself (the two ends
    meet at the last row). One pass that decides and stages, against a mask pass and a
    scatter pass that read every row twice (2,000-60,000 scattered rows of 800,000:
    1.05-1.17x the speed on 1 and 2 threads)."""
    lp = lo
    rp = hi - 1
    if not _sparse(src, lo, hi):
        # separate loops, not a test in one: a loop-invariant test left in the row loop
        # cost back the whole gain of leaving dense reads to the hardware prefetcher
        if kind == NUMERIC:
            for i in range(lo, hi):
                r = src[i]
                m = np.int64(goes_left_binned(col[np.uint64(r)], missing_bin, NUMERIC,
                                              threshold_bin, default_left, cat_bits, 0, 0))
                staging[np.uint64(lp)] = r
                staging[np.uint64(rp)] = r
                lp += m
                rp -= 1 - m
            return lp - lo
        for i in range(lo, hi):
            r = src[i]
            m = np.int64(goes_left_binned(col[np.uint64(r)], missing_bin, kind,
                                          threshold_bin, default_left, cat_bits, cat_start,
                                          cat_len))
            staging[np.uint64(lp)] = r
            staging[np.uint64(rp)] = r
            lp += m
            rp -= 1 - m
        return lp - lo
    for i in range(lo, hi):
        if i + PREFETCH_DISTANCE < hi:
            prefetch(col, src[i + PREFETCH_DISTANCE])
        r = src[i]
        m = np.int64(goes_left_binned(col[np.uint64(r)], missing_bin, kind, threshold_bin,
                                      default_left, cat_bits, cat_start, cat_len))
        staging[np.uint64(lp)] = r
        staging[np.uint64(rp)] = r
        lp += m
        rp -= 1 - m
    return lp - lo


@njit(cache=True, nogil=True, inline="always")
def _place(staging, dst, lo, hi, n_left, lp, rp):
    """A block staged by :func:`_stage` into ``dst``: its left rows from ``lp`` on, its
    right rows (staged backwards) from ``rp`` on, both in the original order. Positions
    and row ids index as unsigned integers: a signed index gets a negative-index fix-up
    of three instructions (17 % of a partition's time on one thread, measured)."""
    for t in range(n_left):
        dst[np.uint64(lp + t)] = staging[np.uint64(lo + t)]
    for t in range(hi - lo - n_left):
        dst[np.uint64(rp + t)] = staging[np.uint64(hi - 1 - t)]


@njit(cache=True, nogil=True, inline="always")
def _sparse(indices, lo, hi):
    """Are rows ``indices[lo:hi]`` (ascending) spread over ``DENSE_SPAN`` times their
    count or more? Only such rows get software prefetches of their column reads in
    :func:`_stage`."""
    return hi > lo and indices[hi - 1] - indices[lo] >= DENSE_SPAN * (hi - lo)


lock_cache_writes(globals())  # numba's cache, safe when processes compile at once
