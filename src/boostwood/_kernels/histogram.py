"""Gradient histograms of a batch of nodes.

A histogram cell ``hist[slot, f, b]`` holds three float64 channels: the sum of
the gradients, the sum of the hessians and the number of rows of the node whose
feature ``f`` falls in bin ``b``. The split scan (``split.py``) reads prefix
sums of these cells: that is all the exact-greedy gain needs, evaluated only at
bin boundaries (Chen & Guestrin 2016, Alg. 2 on pre-bucketed data).

Parallelism and determinism: every node's rows are cut into blocks of a fixed
number of rows, one task per block. A task reads each of its rows once (the
binned matrix is row-major; gradient and hessian sit side by side) and updates
every feature's histogram. Blocks of one node are summed in block order. The
cut depends on the node's size only, never on the thread count, so histograms
are bit-identical for any number of threads.

Subtraction trick::

    parent rows  [**********************]   hist(parent) known
    small child  [*******]                  hist built from its rows
    large child          [**************]   hist = hist(parent) - hist(small)

Only the smaller child is ever scanned row by row, so a level costs at most
half the rows of its parents.
"""
from numba import njit, prange

from .intrinsics import PREFETCH_DISTANCE, prefetch


@njit(parallel=True, cache=True, nogil=True)
def build_histograms(X_binned, gh, indices, task_start, task_count, task_partial, task_dest,
                     task_flo, task_fhi, features, hist, partial):
    """Accumulate one block of rows, for a range of features, per task.

    The caller cuts every node's segment into blocks of a fixed number of rows
    (see ``HistogramBuilder``); the first block of a node writes into the
    node's slot of ``hist``, every further block into its own buffer of
    ``partial``, which :func:`reduce_partials` then adds in block order. A
    block may also be shared by several tasks on disjoint feature ranges
    (``features[task_flo:task_fhi]``): each cell still sums the block's rows in
    order, so how the features are shared never changes a bit of the result.

    Parameters
    ----------
    X_binned : ndarray of shape (n_rows, n_features), uint8 or uint16, row-major   # IN
    gh : ndarray of shape (n_rows, 2), float32   # IN, gradient and hessian of each row
    indices : ndarray of shape (n_partition,), int32   # IN, rows of every node, by segment
    task_start, task_count : ndarray of shape (n_tasks,), int64   # IN, the block's rows in ``indices``
    task_partial : ndarray of shape (n_tasks,), uint8   # IN, 1 = write into ``partial``
    task_dest : ndarray of shape (n_tasks,), int64   # IN, slot of ``hist`` or buffer of ``partial``
    task_flo, task_fhi : ndarray of shape (n_tasks,), int64   # IN, the task's range of ``features``
    features : ndarray of shape (n_active,), int64   # IN, features to build (others untouched)
    hist : ndarray of shape (n_slots, n_features, n_bins_max, 3), float64   # OUT
    partial : ndarray of shape (n_buffers, n_features, n_bins_max, 3), float64   # OUT
    """
    for t in prange(task_start.shape[0]):
        out = partial[task_dest[t]] if task_partial[t] else hist[task_dest[t]]
        flo = task_flo[t]
        fhi = task_fhi[t]
        for j in range(flo, fhi):
            out[features[j]] = 0.0
        start = task_start[t]
        end = start + task_count[t]
        for i in range(start, end):
            if i + PREFETCH_DISTANCE < end:  # scattered rows: ask for them early
                ahead = indices[i + PREFETCH_DISTANCE]
                prefetch(gh[ahead], 0)
                prefetch(X_binned[ahead], 0)
            r = indices[i]
            gr = gh[r, 0]
            hr = gh[r, 1]
            row = X_binned[r]
            for j in range(flo, fhi):
                f = features[j]
                b = row[f]
                out[f, b, 0] += gr
                out[f, b, 1] += hr
                out[f, b, 2] += 1.0


@njit(parallel=True, cache=True, nogil=True)
def reduce_partials(slots, part_first, part_count, features, hist, partial):
    """hist[slots[k]] += partial[part_first[k] + 0], + partial[... + 1], ... in block order.

    slots, part_first, part_count : ndarray of shape (n_nodes,), int64   # IN
    features : ndarray of shape (n_active,), int64   # IN
    hist : ndarray of shape (n_slots, n_features, n_bins_max, 3), float64   # IN/OUT
    partial : ndarray of shape (n_buffers, n_features, n_bins_max, 3), float64   # IN
    """
    n_nodes = slots.shape[0]
    n_active = features.shape[0]
    n_bins_max = hist.shape[2]
    for task in prange(n_active * n_nodes):
        f = features[task // n_nodes]
        k = task % n_nodes
        cell = hist[slots[k], f]
        for p in range(part_first[k], part_first[k] + part_count[k]):
            other = partial[p, f]
            for b in range(n_bins_max):
                cell[b, 0] += other[b, 0]
                cell[b, 1] += other[b, 1]
                cell[b, 2] += other[b, 2]


@njit(parallel=True, cache=True, nogil=True)
def subtract_histograms(parent_slots, child_slots, features, hist):
    """In place: ``hist[parent] -= hist[child]`` for each pair of the batch.

    After the call the parent's slot holds the histogram of the sibling of
    ``child`` (the subtraction trick).

    parent_slots, child_slots : ndarray of shape (n_pairs,), int64   # IN
    features : ndarray of shape (n_active,), int64   # IN
    hist : ndarray of shape (n_slots, n_features, n_bins_max, 3), float64   # IN/OUT
    """
    n_pairs = parent_slots.shape[0]
    n_active = features.shape[0]
    n_bins_max = hist.shape[2]
    for task in prange(n_active * n_pairs):
        f = features[task // n_pairs]
        p = task % n_pairs
        parent = hist[parent_slots[p], f]
        child = hist[child_slots[p], f]
        for b in range(n_bins_max):
            parent[b, 0] -= child[b, 0]
            parent[b, 1] -= child[b, 1]
            parent[b, 2] -= child[b, 2]


@njit(cache=True, nogil=True)
def sum_gradients(gh, indices, start, count, out):
    """Node totals in row order: out = (sum g, sum h, n_rows).

    gh : ndarray of shape (n_rows, 2), float32   # IN
    indices : ndarray, int32   # IN
    out : ndarray of shape (3,), float64   # OUT
    """
    sg = 0.0
    sh = 0.0
    for i in range(start, start + count):
        r = indices[i]
        sg += gh[r, 0]
        sh += gh[r, 1]
    out[0] = sg
    out[1] = sh
    out[2] = float(count)
