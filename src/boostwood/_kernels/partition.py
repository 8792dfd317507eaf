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

Parallel and deterministic: segments are cut into fixed-size blocks (the
size does not depend on the thread count). Pass 1 counts left rows per block,
an exclusive prefix sum gives each block its write offsets, pass 2 writes the
rows into the other buffer.
"""
import numpy as np
from numba import njit, prange

from .intrinsics import PREFETCH_DISTANCE, prefetch
from .splits import (SP_BIN, SP_CAT_LEN, SP_CAT_START, SP_DEFAULT_LEFT, SP_FEATURE, SP_KIND,
                     goes_left_binned)


@njit(cache=True, nogil=True)
def _block_layout(counts, block_size):
    """First block id of each node (plus the total at the end) and the node of each block."""
    n_nodes = counts.shape[0]
    first = np.empty(n_nodes + 1, dtype=np.int64)
    first[0] = 0
    for k in range(n_nodes):
        first[k + 1] = first[k] + (counts[k] + block_size - 1) // block_size
    block_node = np.empty(first[n_nodes], dtype=np.int64)
    for k in range(n_nodes):
        for j in range(first[k], first[k + 1]):
            block_node[j] = k
    return first, block_node


@njit(parallel=True, cache=True, nogil=True)
def partition_nodes(X_columns, buf, sides, mask, starts, counts, splits, cat_bits,
                    missing_bins, block_size, out_left_counts):
    """Split the segments of a batch of nodes into left | right.

    Parameters
    ----------
    X_columns : ndarray of shape (n_features, n_rows), uint8 or uint16, feature-major   # IN
        (a split reads one feature of many rows: one byte per row, in address order)
    buf : ndarray of shape (2, n_partition), int32   # IN/OUT, the two index buffers
    sides : ndarray of shape (n_nodes,), int64   # IN, buffer holding each node's rows
    mask : ndarray of shape (n_partition,), uint8   # OUT (workspace: 1 = row goes left)
    starts, counts : ndarray of shape (n_nodes,), int64   # IN
    splits : ndarray of shape (N_SPLIT_FIELDS, n_nodes), int64   # IN, each node's split
        (feature, bin, default_left, kind, category words; see ``splits.py``)
    cat_bits : ndarray, uint32   # IN, the category words of the batch's categorical splits
    missing_bins : ndarray of shape (n_features,), int32   # IN, missing bin id per feature
    block_size : int, rows per block (a constant, so results do not depend on threads)
    out_left_counts : ndarray of shape (n_nodes,), int64   # OUT
    """
    n_nodes = starts.shape[0]
    blocks_per_node, block_node = _block_layout(counts, block_size)
    n_blocks = block_node.shape[0]
    n_left = np.zeros(n_blocks, dtype=np.int64)

    # pass 1: decide every row, count left rows per block
    for j in prange(n_blocks):
        k = block_node[j]
        lo = starts[k] + (j - blocks_per_node[k]) * block_size
        hi = min(lo + block_size, starts[k] + counts[k])
        f, tb, dl = splits[SP_FEATURE, k], splits[SP_BIN, k], splits[SP_DEFAULT_LEFT, k]
        kind, cs, cl = splits[SP_KIND, k], splits[SP_CAT_START, k], splits[SP_CAT_LEN, k]
        col = X_columns[f]
        mb = missing_bins[f]
        indices = buf[sides[k]]
        c = 0
        for i in range(lo, hi):
            if i + PREFETCH_DISTANCE < hi:
                prefetch(col, indices[i + PREFETCH_DISTANCE])
            left = goes_left_binned(col[indices[i]], mb, kind, tb, dl, cat_bits, cs, cl)
            mask[i] = left
            c += left
        n_left[j] = c

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
            lo = starts[k] + (j - blocks_per_node[k]) * block_size
            hi = min(lo + block_size, starts[k] + counts[k])
            left_off[j] = lpos
            right_off[j] = rpos
            lpos += n_left[j]
            rpos += (hi - lo) - n_left[j]

    # pass 2: scatter into the other buffer by the mask
    for j in prange(n_blocks):
        k = block_node[j]
        lo = starts[k] + (j - blocks_per_node[k]) * block_size
        hi = min(lo + block_size, starts[k] + counts[k])
        src = buf[sides[k]]
        dst = buf[1 - sides[k]]
        lp = left_off[j]
        rp = right_off[j]
        for i in range(lo, hi):
            if mask[i]:
                dst[lp] = src[i]
                lp += 1
            else:
                dst[rp] = src[i]
                rp += 1
