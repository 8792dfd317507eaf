"""Gradient histograms of a batch of nodes.

A histogram cell ``hist[slot, f, b]`` holds three int64 channels: the sum of
the fixed-point gradients, the sum of the fixed-point hessians (see
:mod:`boostwood.tree.stats`) and the number of rows of the node whose feature
``f`` falls in bin ``b``. The split scan (``split.py``) reads prefix
sums of these cells: that is all the exact-greedy gain needs, evaluated only at
bin boundaries (Chen & Guestrin 2016, Alg. 2 on pre-bucketed data).

Parallelism and determinism: every node's rows are cut into blocks of a fixed
number of rows, one task per block. A task reads each of its rows once (the
binned matrix is row-major; gradient and hessian sit side by side) and updates
every feature's histogram. Histograms are integer sums, so they are bit-identical
in any order and for any number of threads (row blocks of several data shards
included). A worker's consecutive blocks of one node add into one histogram: the
partial buffers a batch needs are one per worker boundary, not one per block (a
4M-row root had 244 buffers of 164 KiB, 40 MiB held through training, where two
threads now need one).

Subtraction trick::

    parent rows  [**********************]   hist(parent) known
    small child  [*******]                  hist built from its rows
    large child          [**************]   hist = hist(parent) - hist(small)

Only the smaller child is ever scanned row by row, so a level costs at most
half the rows of its parents.

Packed cells. A row adds to three channels of each of its features' cells: two
stores per feature and row (a vector pair for g and h, a scalar for the count),
and the stores bound the loop. A block of fewer than ``2**COUNT_BITS`` rows of
int32 gradients is summed instead into a two-channel scratch histogram whose
second channel holds ``h * 2**COUNT_BITS + 1`` per row: one vector store per
feature and row. Its sums stay exact (``|h| < 2**31`` and at most
``2**COUNT_BITS - 1`` rows keep every sum below ``2**61``), and the block's cell is
then unpacked: ``H = packed >> COUNT_BITS`` (arithmetic shift, exact for negative
``H`` too, as the count is in ``[0, 2**COUNT_BITS)``), ``count = packed & mask``.
The result is the direct sum to the last bit; only the time differs. Unpacking
costs one pass over the block's cells, so a block is packed only when it has at
least ``PACKED_MIN_ROWS_PER_BIN`` rows per bin (a work-size rule, never a timing):
about 4x fewer stores on the rows against one pass over ``n_bins`` cells per
feature; below that rule the direct loop is as fast (measured on 28 features,
256 bins: packed 0.9x the direct loop's time at 1,024 rows, 1.15x at 256).

Quantized gradients (int16 rows, ``use_quantized_grad``, see :mod:`boostwood.tree.stats`)
pack all three channels into one int64 per cell: a row adds
``g * 2**G_SHIFT + h * 2**COUNT_BITS + 1``. With ``|g| <= 128``, ``|h| <= 255`` and fewer
than ``2**COUNT_BITS`` rows, the count stays in its 15 bits, the hessian sum in the next
``G_SHIFT - COUNT_BITS`` = 25 bits as a signed field and the gradient sum in the top 24,
so each channel is recovered exactly: count by a mask, the hessian by sign-extending
its field, the gradient by an arithmetic shift of what remains. Half the bytes of the
two-lane cell per store and per scratch (28 features x 256 bins: 57 KB instead of
114): 1.5x faster on a 800k-row root (measured).

One small node. A batch of one node of fewer than ``SERIAL_MAX_UPDATES`` row-feature
updates (a late leaf-wise split's smaller child of a few dozen rows) is summed directly
on the calling thread: no parallel region, no task plan.

Small batches. A batch of fewer than ``FEW_BLOCKS_PER_THREAD`` (4) blocks per thread
(as the single built child of a leaf-wise split) of int32 or int16 rows is cut into
near-equal pieces, as few as the block size allows and, for one node, the same number
per thread (:func:`piece_rows`, :func:`_pieces_rows`, a work-size rule), when
``partial`` has a buffer for every piece (else by feature ranges), each summed into
packed cells in a buffer of ``partial``, and the pieces are then added cell by cell.
Fewer pieces than threads (a leaf-wise child of a few thousand rows on many threads)
have their features cut into ranges as well (:func:`piece_groups`).
The alternative, feature ranges of one block, leaves every thread reading every row,
and on scattered rows the reads are the cost: pieces give each thread its own rows (28
features, 256 bins, 2 threads: 1.75x one thread's speed at 8,000 rows and 2.0x at
32,000, against 1.4-1.5x). Integer sums, so the result is the same to the bit.
"""
import numpy as np
from numba import njit, prange

from .intrinsics import PREFETCH_DISTANCE, add_pair, prefetch
from .runs import equal_work_runs

#: Bits of the row count in a packed cell's second channel (see the module docstring).
COUNT_BITS = 15
#: Where the gradient sum starts in a one-lane cell (quantized gradients).
G_SHIFT = 40
#: A block is summed in packed cells when it has at least this many rows per bin.
PACKED_MIN_ROWS_PER_BIN = 4
#: The row count field of a packed cell.
COUNT_MASK = (1 << COUNT_BITS) - 1
#: A batch with fewer blocks than this per thread is small: its blocks alone cannot keep
#: every thread busy (:func:`feature_groups`, :func:`_pieces_rows`).
FEW_BLOCKS_PER_THREAD = 4


@njit(cache=True, nogil=True, inline="always")
def _n_parts(count, size):
    """Parts of at most ``size`` rows a node of ``count`` rows is cut into (at least one)."""
    return max((count + size - 1) // size, 1)


@njit(cache=True, nogil=True)
def _plan_tasks(starts, counts, slots, sides, block_size, n_groups, n_features, n_threads):
    """Cut each node into blocks of ``block_size`` rows, each block into ``n_groups``
    feature ranges: one task per (block, range), and the workers that run them: runs of
    consecutive tasks of about equal work (rows times features, :func:`_runs`; a level of
    a depth-wise tree mixes full blocks with nodes of a few hundred rows, so equal
    numbers of tasks were unequal work). Where to each task sums (its destination):

    * with one range per block, a worker's consecutive blocks of one node go to one
      histogram: the node's slot when the run holds its first block, else one buffer of
      ``partial`` for the run; the run's first block overwrites it, the others add to it
      (``t_add``). A node then has a buffer per worker boundary inside it: at most
      ``n_workers - 1`` buffers in all, however many rows the batch has;
    * with several ranges (few blocks, see :func:`feature_groups`), the node's first
      block to its slot and every further block to a buffer of its own.

    Integer sums: how blocks are grouped never changes a bit of the result. Returns the
    task arrays, the number of workers, the first task of each worker's run (and the
    task count at the end) and, per node, its first partial buffer and number of
    buffers (consecutive)."""
    n_nodes = starts.shape[0]
    n_blocks = 0
    for k in range(n_nodes):
        n_blocks += _n_parts(counts[k], block_size)
    n_tasks = n_blocks * n_groups
    n_workers = max(min(n_threads, n_tasks), 1)
    t_start = np.empty(n_tasks, dtype=np.int64)
    t_count = np.empty(n_tasks, dtype=np.int64)
    t_node = np.empty(n_tasks, dtype=np.int64)
    t_block = np.empty(n_tasks, dtype=np.int64)
    t_flo = np.empty(n_tasks, dtype=np.int64)
    t_fhi = np.empty(n_tasks, dtype=np.int64)
    t_side = np.empty(n_tasks, dtype=np.int64)
    t_grp = np.empty(n_tasks, dtype=np.int64)
    t = 0
    for k in range(n_nodes):
        for j in range(_n_parts(counts[k], block_size)):
            for grp in range(n_groups):
                t_start[t] = starts[k] + j * block_size
                t_count[t] = min(block_size, counts[k] - j * block_size)
                t_node[t], t_block[t], t_grp[t] = k, j, grp
                t_flo[t] = (grp * n_features) // n_groups
                t_fhi[t] = ((grp + 1) * n_features) // n_groups
                t_side[t] = sides[k]
                t += 1
    run_first = _runs(t_count, t_flo, t_fhi, n_workers)
    t_dest = np.empty(n_tasks, dtype=np.int64)
    t_partial = np.zeros(n_tasks, dtype=np.bool_)
    t_add = np.zeros(n_tasks, dtype=np.bool_)
    part_first = np.zeros(n_nodes, dtype=np.int64)
    part_count = np.zeros(n_nodes, dtype=np.int64)
    n_parts = 0
    for w in range(n_workers):  # tasks in order: a node's buffers come out consecutive
        first_t = run_first[w]
        for t in range(first_t, run_first[w + 1]):
            k = t_node[t]
            if n_groups == 1 and t > first_t and t_node[t - 1] == k:
                t_dest[t], t_partial[t], t_add[t] = t_dest[t - 1], t_partial[t - 1], True
            elif t_block[t] == 0:
                t_dest[t] = slots[k]
            elif t_grp[t] > 0:  # the block's buffer, from its first range (ranges may be empty)
                t_dest[t], t_partial[t] = t_dest[t - 1], True
            else:
                if part_count[k] == 0:
                    part_first[k] = n_parts
                part_count[k] += 1
                t_dest[t], t_partial[t] = n_parts, True
                n_parts += 1
    return (t_start, t_count, t_dest, t_partial, t_add, t_flo, t_fhi, t_side, n_workers,
            run_first, part_first, part_count)


@njit(cache=True, nogil=True)
def _runs(t_count, t_flo, t_fhi, n_workers):
    """Each worker's run of consecutive tasks, of about equal rows times features
    (:func:`~boostwood._kernels.runs.equal_work_runs`)."""
    work = np.empty(t_count.shape[0], dtype=np.int64)
    for t in range(t_count.shape[0]):
        work[t] = t_count[t] * (t_fhi[t] - t_flo[t])
    return equal_work_runs(work, n_workers)


@njit(cache=True, nogil=True)
def partials_needed(n_blocks, n_nodes, n_threads):
    """Buffers of ``partial`` that :func:`build_histograms` needs for a batch of
    ``n_nodes`` nodes cut into ``n_blocks`` blocks in all (see :func:`_plan_tasks`): one
    per block past each node's first when the blocks are shared among feature ranges
    (fewer than ``FEW_BLOCKS_PER_THREAD`` per thread), else one per worker boundary.
    Never more than ``FEW_BLOCKS_PER_THREAD * n_threads``."""
    if n_blocks < FEW_BLOCKS_PER_THREAD * n_threads:
        return n_blocks - n_nodes
    return min(n_blocks - n_nodes, max(n_threads - 1, 0))


@njit(cache=True, nogil=True)
def partials_bound(n_rows, block_size, n_threads):
    """Buffers of ``partial`` that suffice for building any children of parents holding
    ``n_rows`` rows in all, before the partition says how they split: a node of c rows
    has ``ceil(c / block_size) - 1 <= c // block_size`` extra blocks, a sum of floors is
    at most the floor of the sum (the parents' rows bound the children's), and
    :func:`partials_needed` never passes ``FEW_BLOCKS_PER_THREAD`` per thread."""
    return min(n_rows // block_size, FEW_BLOCKS_PER_THREAD * n_threads)


@njit(cache=True, nogil=True)
def feature_groups(n_blocks, n_active, n_threads):
    """How many feature ranges each row block is shared among: with too few blocks
    to keep every thread busy (fewer than FEW_BLOCKS_PER_THREAD per thread), one per
    thread, else 1.
    Never changes a result (see :func:`build_histograms`), only how work is cut."""
    if n_blocks < FEW_BLOCKS_PER_THREAD * n_threads:
        return max(min(n_active, n_threads), 1)
    return 1


#: A batch of one node with fewer row-feature updates than this is built on the
#: calling thread (:func:`build_histograms`): below it, starting the threads and
#: planning tasks cost more than they share. 28 features, 256 bins, 2 threads: 48 rows
#: 3.2 us against 5.4 in two feature groups, 150 rows 5.9 against 7.0, even near 256.
SERIAL_MAX_UPDATES = 7168

#: Fewest rows per piece when the nodes of a small batch are cut across threads (see
#: :func:`piece_rows`).
MIN_PIECE_ROWS = 1024


@njit(cache=True, nogil=True)
def piece_rows(total_rows, block_size, n_threads):
    """Rows per piece for a small batch of ``total_rows`` cut across ``n_threads``: the
    fewest pieces that is a multiple of ``n_threads`` and keeps each piece within
    ``block_size`` rows (below ``2**COUNT_BITS``, so a piece always fits packed cells),
    so every thread gets the same number of near-equal pieces; but at least
    ``MIN_PIECE_ROWS`` rows (a smaller piece costs more in its pass over the cells than
    it saves). A batch of ``FEW_BLOCKS_PER_THREAD`` blocks per thread or fewer is cut into
    at most that many pieces per thread (an 800k-row root on 16 threads: 64 pieces of
    12,500 rows, 4 per thread; cut by the block size it had 49 pieces, 3 or 4 per thread,
    more than the buffers then reserved, and was built in 16 feature ranges instead,
    every thread reading its rows 16 times). Measured on 2 threads, 28 features, rows
    scattered over 800k: 50,000 rows 0.57 ms in 4 pieces against 0.95 ms in 2 feature
    ranges, 100,000 rows 1.14 ms in 8 pieces against 1.75 ms."""
    per_thread = (total_rows + n_threads * block_size - 1) // (n_threads * block_size)
    n_pieces = max(n_threads * per_thread, 1)
    return min(block_size, max(MIN_PIECE_ROWS, (total_rows + n_pieces - 1) // n_pieces))


@njit(cache=True, nogil=True)
def _plan_pieces(counts, rows):
    """Cut node k into ``max(ceil(counts[k] / rows), 1)`` near-equal pieces: the first
    piece of each node (plus the total at the end) and the node of each piece."""
    n_nodes = counts.shape[0]
    first = np.empty(n_nodes + 1, dtype=np.int64)
    first[0] = 0
    for k in range(n_nodes):
        first[k + 1] = first[k] + _n_parts(counts[k], rows)
    node_of = np.empty(first[n_nodes], dtype=np.int64)
    for k in range(n_nodes):
        node_of[first[k]:first[k + 1]] = k
    return first, node_of


@njit(cache=True, nogil=True)
def piece_groups(n_pieces, n_active, n_threads):
    """Feature ranges each piece of a small batch is cut into (a work-size rule): with
    fewer pieces than threads, ``n_threads // n_pieces`` (at most one per feature), so
    every thread has a share; else 1. Pieces are at least ``MIN_PIECE_ROWS`` rows, so
    a leaf-wise child of 4,000 rows is 4 pieces: on 16 threads it had kept 12 threads
    idle, and now each piece is 4 tasks of 7 of 28 features. A range re-reads its
    piece's rows for fewer features; it zeroes and fills only its features' cells, so
    a piece's buffer costs the same. Never more than one range on 2 threads (a small
    batch has at least 2 pieces there)."""
    return max(1, min(n_active, n_threads // max(n_pieces, 1)))


@njit(parallel=True, cache=True, nogil=True)
def _build_pieces(X_binned, gh, buf, sides, starts, counts, slots, features, rows, n_threads,
                  hist, partial):
    """Histograms of a small batch, its nodes cut into pieces of about ``rows`` rows
    (:func:`_plan_pieces`) summed in parallel, each into packed cells in its own buffer of
    ``partial`` (one per piece; with fewer pieces than ``n_threads``, each piece's
    features are cut into ranges, :func:`piece_groups`); then, in parallel over (node,
    feature), every cell is the sum of its pieces' cells, each unpacked first (a node may
    pass ``2**COUNT_BITS`` rows). Integer sums: the same bits as any other cut. ``gh``
    int32 or int16 (the caller's check)."""
    n_active = features.shape[0]
    all_features = n_active == hist.shape[1]
    n_bins_max = hist.shape[2]
    one_lane = gh.itemsize == 2
    lanes = 1 if one_lane else 2
    first, node_of = _plan_pieces(counts, rows)
    n_groups = piece_groups(node_of.shape[0], n_active, n_threads)
    flat = partial.reshape(partial.shape[0], hist.shape[1] * n_bins_max * 3)
    for task in prange(node_of.shape[0] * n_groups):
        t, g = task // n_groups, task % n_groups
        k = node_of[t]
        n_k = first[k + 1] - first[k]
        lo = starts[k] + counts[k] * (t - first[k]) // n_k
        hi = starts[k] + counts[k] * (t - first[k] + 1) // n_k
        # features flo..fhi of the piece, into their own cells of its buffer
        flo, fhi = n_active * g // n_groups, n_active * (g + 1) // n_groups
        cells = flat[t, flo * n_bins_max * lanes:]
        if one_lane:
            _one_lane_rows(X_binned, gh, buf[sides[k]], lo, hi - lo, features, flo, fhi,
                           all_features, n_bins_max, cells)
        else:
            _packed_rows(X_binned, gh, buf[sides[k]], lo, hi - lo, features, flo, fhi,
                         all_features, n_bins_max, cells)
    n_nodes = counts.shape[0]
    for task in prange(n_nodes * n_active):
        k, j = task // n_active, task % n_active
        cell = hist[slots[k], features[j]]
        for b in range(n_bins_max):
            at = (j * n_bins_max + b) * lanes
            g = h = c = 0
            for t in range(first[k], first[k + 1]):
                if one_lane:
                    g1, h1, c1 = _unpack_one_lane(flat[t, at])
                    g, h, c = g + g1, h + h1, c + c1
                else:
                    g += flat[t, at]
                    h += flat[t, at + 1] >> COUNT_BITS
                    c += flat[t, at + 1] & COUNT_MASK
            cell[b, 0], cell[b, 1], cell[b, 2] = g, h, c


@njit(cache=True, nogil=True)
def _one_small_node(X_binned, gh, buf, sides, starts, counts, slots, features, hist):
    """Build a batch of one node of fewer than ``SERIAL_MAX_UPDATES`` row-feature updates
    directly on this thread (no parallel region or task plan); False for other batches."""
    n_active = features.shape[0]
    if counts.shape[0] != 1 or counts[0] * n_active >= SERIAL_MAX_UPDATES:
        return False
    _zero_and_accumulate(X_binned, gh, buf[sides[0]], starts[0], counts[0], features, 0,
                         n_active, n_active == hist.shape[1], hist.shape[2],
                         hist[slots[0]].reshape(hist[slots[0]].size), False)
    return True


@njit(cache=True, nogil=True)
def _pieces_rows(counts, block_size, n_threads, n_buffers):
    """The piece size when a batch is built by :func:`_build_pieces`, else 0: several
    threads, a batch of fewer than FEW_BLOCKS_PER_THREAD blocks per thread (a big batch
    keeps every thread busy with whole blocks), at least two minimal pieces of rows, and
    a buffer of ``partial`` for every piece."""
    n_blocks = 0
    for c in counts:
        n_blocks += _n_parts(c, block_size)
    total = counts.sum()
    if n_threads < 2 or n_blocks >= FEW_BLOCKS_PER_THREAD * n_threads \
            or total < 2 * MIN_PIECE_ROWS:
        return 0
    rows = piece_rows(total, block_size, n_threads)
    n_pieces = 0
    for c in counts:
        n_pieces += _n_parts(c, rows)
    return rows if n_pieces <= n_buffers else 0


@njit(cache=True, nogil=True)
def _scratch_width(gh, packs, t_count, t_flo, t_fhi, min_packed, n_bins_max):
    """Scratch cells a worker needs for the packed blocks among the tasks: packed cells
    need int32 rows (two lanes) or int16 (one lane, quantized gradients) and blocks of
    fewer than 2**COUNT_BITS rows (``packs``), and at least ``min_packed`` rows."""
    lanes = 1 if gh.itemsize == 2 else 2
    width = 0
    if packs:
        for t in range(t_count.shape[0]):
            if t_count[t] >= min_packed:
                width = max(width, (t_fhi[t] - t_flo[t]) * n_bins_max * lanes)
    return width


@njit(cache=True, nogil=True)
def _any_positive(a):
    """Is an entry of ``a`` above 0? A serial loop: in a parallel function ``a.sum()``
    would open a parallel region of its own."""
    for v in a:
        if v > 0:
            return True
    return False


@njit(parallel=True, cache=True, nogil=True)
def build_histograms(X_binned, gh, buf, sides, starts, counts, slots, features, block_size,
                     n_groups, n_threads, hist, partial):
    """Histograms of a batch of nodes from their rows.

    Every node's segment is cut into blocks of ``block_size`` rows; the run of a
    node's blocks that a worker takes accumulates into the node's slot of ``hist``
    (the run with the first block) or into a buffer of ``partial``, and those are then
    added to the slot (:func:`_plan_tasks`). A block may also be shared by ``n_groups``
    tasks on disjoint feature ranges. Integer sums: neither changes a bit of the result.

    A small batch is cut into pieces instead (the module docstring, *Small batches*).

    Parameters
    ----------
    X_binned : ndarray of shape (n_rows, n_features), uint8 or uint16, row-major   # IN
    gh : ndarray of shape (n_rows, 2), int16, int32 or int64   # IN, fixed-point g and h
    buf : ndarray of shape (2, n_partition), int32   # IN, the two index buffers (see partition.py)
    sides, starts, counts, slots : ndarray of shape (n_nodes,), int64   # IN, where each node's
        rows are (buffer, segment) and its histogram slot
    features : ndarray of shape (n_active,), int64   # IN, features to build (others untouched)
    block_size : int, rows per block (a constant: results never depend on threads)
    n_groups : int, feature ranges per block
    n_threads : int, the threads of the parallel loop (they only cut the work)
    hist : ndarray of shape (n_slots, n_features, n_bins_max, 3), int64   # OUT
    partial : ndarray of shape (n_buffers, n_features, n_bins_max, 3), int64   # OUT, workspace
        with at least :func:`partials_needed` buffers; small batches are cut into pieces
        only when it has one per piece (:func:`_pieces_rows` counts them; up to
        ``FEW_BLOCKS_PER_THREAD * n_threads + n_nodes - 1``), else by feature ranges
    """
    n_active = features.shape[0]
    if _one_small_node(X_binned, gh, buf, sides, starts, counts, slots, features, hist):
        return
    packs = gh.itemsize <= 4 and block_size < (1 << COUNT_BITS)
    rows = _pieces_rows(counts, block_size, n_threads, partial.shape[0]) if packs else 0
    if rows > 0:
        _build_pieces(X_binned, gh, buf, sides, starts, counts, slots, features, rows,
                      n_threads, hist, partial)
        return
    t_start, t_count, t_dest, t_partial, t_add, t_flo, t_fhi, t_side, n_workers, run_first, \
        part_first, part_count = _plan_tasks(starts, counts, slots, sides, block_size,
                                             n_groups, n_active, n_threads)
    n_bins_max = hist.shape[2]
    size = hist.shape[1] * n_bins_max * 3
    all_features = n_active == hist.shape[1]  # then features[j] == j
    min_packed = PACKED_MIN_ROWS_PER_BIN * n_bins_max
    # one worker per thread, each with its own scratch for packed blocks, allocated once
    # per call here (an allocation per task costs page faults in the threads' arenas).
    # Each worker takes its run of consecutive tasks (about equal work, see _plan_tasks).
    scratch = np.empty((n_workers, _scratch_width(gh, packs, t_count, t_flo, t_fhi, min_packed,
                                                  n_bins_max)), dtype=np.int64)
    for w in prange(n_workers):
        for t in range(run_first[w], run_first[w + 1]):
            # flat views: cell (f, b, c) is at (f * n_bins_max + b) * 3 + c. Each branch
            # passes its own array so that numba keeps the contiguous layout in the loop.
            indices = buf[t_side[t]]
            packed = packs and t_count[t] >= min_packed
            if t_partial[t]:
                _sum_block(X_binned, gh, indices, t_start[t], t_count[t], features, t_flo[t],
                           t_fhi[t], all_features, n_bins_max, packed, scratch[w],
                           partial[t_dest[t]].reshape(size), t_add[t])
            else:
                _sum_block(X_binned, gh, indices, t_start[t], t_count[t], features, t_flo[t],
                           t_fhi[t], all_features, n_bins_max, packed, scratch[w],
                           hist[t_dest[t]].reshape(size), t_add[t])
    # add the extra blocks of each node in block order, in parallel over features
    n_nodes = starts.shape[0]
    if not _any_positive(part_count):
        return  # single-block nodes only: no second parallel region
    for task in prange(n_active * n_nodes):
        k = task % n_nodes
        if part_count[k] == 0:
            continue
        cell = hist[slots[k], features[task // n_nodes]]
        for p in range(part_first[k], part_first[k] + part_count[k]):
            other = partial[p, features[task // n_nodes]]
            for b in range(n_bins_max):
                cell[b, 0] += other[b, 0]
                cell[b, 1] += other[b, 1]
                cell[b, 2] += other[b, 2]


@njit(cache=True, nogil=True, inline="always")
def _prefetch_row(X_binned, gh, r, last):
    """Ask for row ``r``'s gradients and binned values (``last``: its last column; a row
    may straddle two cache lines)."""
    prefetch(gh[r], 0)
    prefetch(X_binned[r], 0)
    prefetch(X_binned[r], last)


@njit(cache=True, nogil=True, inline="always")
def _scattered(indices, start, count):
    """Are rows start..start+count of ``indices`` apart in memory? A node's indices
    ascend, so its segment is contiguous (a root) exactly when its ends are count - 1
    apart; contiguous rows are left to the hardware prefetcher."""
    return count > 0 and indices[start + count - 1] - indices[start] != count - 1


@njit(cache=True, nogil=True, inline="always")
def _prefetch_two(X_binned, gh, indices, i, end, last):
    """Ask early for the rows ``PREFETCH_DISTANCE`` ahead of rows i and i + 1 of
    ``indices`` (the loops that take two rows at a time), when there are such rows."""
    if i + PREFETCH_DISTANCE + 1 < end:
        _prefetch_row(X_binned, gh, indices[i + PREFETCH_DISTANCE], last)
        _prefetch_row(X_binned, gh, indices[i + PREFETCH_DISTANCE + 1], last)


@njit(cache=True, nogil=True, inline="always")
def _sum_block(X_binned, gh, indices, start, count, features, flo, fhi, all_features, n_bins_max,
               packed, scratch, out, add):
    """Features flo..fhi of flat ``out`` := (or, with ``add``, +=) the sums of rows
    start..start+count of ``indices``, through packed cells or directly (the same
    result)."""
    if packed and gh.itemsize == 2:
        _one_lane_accumulate(X_binned, gh, indices, start, count, features, flo, fhi,
                             all_features, n_bins_max, scratch, out, add)
    elif packed:
        _packed_accumulate(X_binned, gh, indices, start, count, features, flo, fhi, all_features,
                           n_bins_max, scratch, out, add)
    else:
        _zero_and_accumulate(X_binned, gh, indices, start, count, features, flo, fhi,
                             all_features, n_bins_max, out, add)


@njit(cache=True, nogil=True)
def _packed_accumulate(X_binned, gh, indices, start, count, features, flo, fhi, all_features,
                       n_bins_max, scratch, out, add=False):
    """As :func:`_zero_and_accumulate`, through packed cells (the module docstring) in
    ``scratch`` (1-D int64 of at least ``(fhi - flo) * n_bins_max * 2``, workspace):
    ``gh`` int32 and ``count < 2**COUNT_BITS`` (the caller's checks)."""
    _packed_rows(X_binned, gh, indices, start, count, features, flo, fhi, all_features,
                 n_bins_max, scratch)
    keep = np.int64(-1 if add else 0)  # a mask: what ``out`` held, or nothing
    for j in range(flo, fhi):
        lo = features[j] * n_bins_max * 3
        s = (j - flo) * n_bins_max * 2
        for b in range(n_bins_max):
            v = scratch[s + 2 * b + 1]
            out[lo + 3 * b] = (out[lo + 3 * b] & keep) + scratch[s + 2 * b]
            out[lo + 3 * b + 1] = (out[lo + 3 * b + 1] & keep) + (v >> COUNT_BITS)
            out[lo + 3 * b + 2] = (out[lo + 3 * b + 2] & keep) + (v & COUNT_MASK)


@njit(cache=True, nogil=True, inline="always")
def _packed_rows(X_binned, gh, indices, start, count, features, flo, fhi, all_features,
                 n_bins_max, scratch):
    """Zero ``scratch`` and sum rows start..start+count of ``indices`` into its packed
    two-lane cells: cell (j - flo, b) at ``2 * ((j - flo) * n_bins_max + b)``.

    Two rows at a time, feature by feature: the two updates of a step never depend on
    each other (different rows), so more of them are in flight; 1.2x the speed of one
    row at a time on 800k rows of 28 features, 1.15x on scattered rows (measured).
    Rows that follow each other in memory (a root) are left to the hardware
    prefetcher."""
    nb = np.uint64(n_bins_max)
    two = np.uint64(2)
    base = np.uint64(flo)
    scratch[:(fhi - flo) * n_bins_max * 2] = 0
    end = start + count
    last = X_binned.shape[1] - 1
    scattered = _scattered(indices, start, count)
    i = start
    while i + 1 < end:
        if scattered:
            _prefetch_two(X_binned, gh, indices, i, end, last)
        r0 = np.uint64(indices[i])
        r1 = np.uint64(indices[i + 1])
        g0 = np.int64(gh[r0, np.uint64(0)])
        h0 = (np.int64(gh[r0, np.uint64(1)]) << COUNT_BITS) + 1
        g1 = np.int64(gh[r1, np.uint64(0)])
        h1 = (np.int64(gh[r1, np.uint64(1)]) << COUNT_BITS) + 1
        row0 = X_binned[r0]
        row1 = X_binned[r1]
        if all_features:
            for f in range(flo, fhi):
                uf = np.uint64(f)
                at = (uf - base) * nb
                add_pair(scratch, (at + np.uint64(row0[uf])) * two, g0, h0)
                add_pair(scratch, (at + np.uint64(row1[uf])) * two, g1, h1)
        else:
            for j in range(flo, fhi):
                uj = np.uint64(j)
                uf = np.uint64(features[j])
                at = (uj - base) * nb
                add_pair(scratch, (at + np.uint64(row0[uf])) * two, g0, h0)
                add_pair(scratch, (at + np.uint64(row1[uf])) * two, g1, h1)
        i += 2
    if i < end:  # an odd row out
        r = np.uint64(indices[i])
        gr = np.int64(gh[r, np.uint64(0)])
        hr = (np.int64(gh[r, np.uint64(1)]) << COUNT_BITS) + 1
        row = X_binned[r]
        for j in range(flo, fhi):
            uj = np.uint64(j)
            uf = uj if all_features else np.uint64(features[j])
            add_pair(scratch, ((uj - base) * nb + np.uint64(row[uf])) * two, gr, hr)


@njit(cache=True, nogil=True)
def _one_lane_accumulate(X_binned, gh, indices, start, count, features, flo, fhi, all_features,
                         n_bins_max, scratch, out, add=False):
    """As :func:`_packed_accumulate`, for quantized (int16) rows: one int64 per cell
    (the module docstring); ``scratch`` holds at least ``(fhi - flo) * n_bins_max``."""
    _one_lane_rows(X_binned, gh, indices, start, count, features, flo, fhi, all_features,
                   n_bins_max, scratch)
    keep = np.int64(-1 if add else 0)
    for j in range(flo, fhi):
        lo = features[j] * n_bins_max * 3
        s = (j - flo) * n_bins_max
        for b in range(n_bins_max):
            g, h, c = _unpack_one_lane(scratch[s + b])
            out[lo + 3 * b] = (out[lo + 3 * b] & keep) + g
            out[lo + 3 * b + 1] = (out[lo + 3 * b + 1] & keep) + h
            out[lo + 3 * b + 2] = (out[lo + 3 * b + 2] & keep) + c


@njit(cache=True, nogil=True, inline="always")
def _unpack_one_lane(v):
    """(g, h, count) of a one-lane cell, exactly (the module docstring)."""
    h_bits = G_SHIFT - COUNT_BITS
    rest = v >> COUNT_BITS  # g * 2**h_bits + h, exactly
    h = (rest << (64 - h_bits)) >> (64 - h_bits)  # the signed low field
    return (rest - h) >> h_bits, h, v & COUNT_MASK


@njit(cache=True, nogil=True, inline="always")
def _one_lane_rows(X_binned, gh, indices, start, count, features, flo, fhi, all_features,
                   n_bins_max, scratch):
    """Zero ``scratch`` and sum rows start..start+count of ``indices`` (int16) into its
    one-lane cells: cell (j - flo, b) at ``(j - flo) * n_bins_max + b``."""
    nb = np.uint64(n_bins_max)
    base = np.uint64(flo)
    scratch[:(fhi - flo) * n_bins_max] = 0
    end = start + count
    last = X_binned.shape[1] - 1
    scattered = _scattered(indices, start, count)
    i = start
    while i + 1 < end:  # two rows at a time, as in _packed_rows
        if scattered:
            _prefetch_two(X_binned, gh, indices, i, end, last)
        r0 = np.uint64(indices[i])
        r1 = np.uint64(indices[i + 1])
        v0 = _one_lane_value(gh, r0)
        v1 = _one_lane_value(gh, r1)
        row0 = X_binned[r0]
        row1 = X_binned[r1]
        for j in range(flo, fhi):
            uj = np.uint64(j)
            uf = uj if all_features else np.uint64(features[j])
            at = (uj - base) * nb
            scratch[at + np.uint64(row0[uf])] += v0
            scratch[at + np.uint64(row1[uf])] += v1
        i += 2
    if i < end:  # an odd row out
        r = np.uint64(indices[i])
        v = _one_lane_value(gh, r)
        row = X_binned[r]
        for j in range(flo, fhi):
            uj = np.uint64(j)
            uf = uj if all_features else np.uint64(features[j])
            scratch[(uj - base) * nb + np.uint64(row[uf])] += v


@njit(cache=True, nogil=True, inline="always")
def _one_lane_value(gh, r):
    """What row ``r`` adds to a one-lane cell: ``g * 2**G_SHIFT + h * 2**COUNT_BITS + 1``."""
    return (np.int64(gh[r, np.uint64(0)]) << G_SHIFT) \
        + (np.int64(gh[r, np.uint64(1)]) << COUNT_BITS) + 1


@njit(cache=True, nogil=True)
def _zero_and_accumulate(X_binned, gh, indices, start, count, features, flo, fhi, all_features,
                         n_bins_max, out, add=False):
    """The inner loop: zero features flo..fhi of flat ``out`` (unless ``add``), then add
    rows start..start+count of ``indices`` into them.

    Indices are cast to unsigned so that numba emits no negative-index
    wrap-around test per access (about 10% of the loop).
    """
    width = n_bins_max * 3
    for j in range(flo, fhi):
        lo = features[j] * width
        if not add:
            out[lo:lo + width] = 0
    nb = np.uint64(n_bins_max)
    three = np.uint64(3)
    end = start + count
    last = X_binned.shape[1] - 1
    scattered = _scattered(indices, start, count)
    i = start
    while i + 1 < end:  # two rows at a time, as in _packed_rows (each cell still adds
        # its rows in row order: one feature's cells take row i, then row i + 1)
        if scattered:
            _prefetch_two(X_binned, gh, indices, i, end, last)
        r0 = np.uint64(indices[i])
        r1 = np.uint64(indices[i + 1])
        g0, h0 = gh[r0, np.uint64(0)], gh[r0, np.uint64(1)]
        g1, h1 = gh[r1, np.uint64(0)], gh[r1, np.uint64(1)]
        row0 = X_binned[r0]
        row1 = X_binned[r1]
        for j in range(flo, fhi):
            uf = np.uint64(j) if all_features else np.uint64(features[j])
            k0 = (uf * nb + np.uint64(row0[uf])) * three
            add_pair(out, k0, g0, h0)
            out[k0 + np.uint64(2)] += 1
            k1 = (uf * nb + np.uint64(row1[uf])) * three
            add_pair(out, k1, g1, h1)
            out[k1 + np.uint64(2)] += 1
        i += 2
    if i < end:  # an odd row out
        r = np.uint64(indices[i])
        gr, hr = gh[r, np.uint64(0)], gh[r, np.uint64(1)]
        row = X_binned[r]
        for j in range(flo, fhi):
            uf = np.uint64(j) if all_features else np.uint64(features[j])
            k = (uf * nb + np.uint64(row[uf])) * three
            add_pair(out, k, gr, hr)
            out[k + np.uint64(2)] += 1


@njit(parallel=True, cache=True, nogil=True)
def subtract_histograms(parent_slots, child_slots, features, hist):
    """In place: ``hist[parent] -= hist[child]`` for each pair of the batch.

    After the call the parent's slot holds the histogram of the sibling of
    ``child`` (the subtraction trick).

    parent_slots, child_slots : ndarray of shape (n_pairs,), int64   # IN
    features : ndarray of shape (n_active,), int64   # IN
    hist : ndarray of shape (n_slots, n_features, n_bins_max, 3), int64   # IN/OUT (exact)
    """
    n_pairs = parent_slots.shape[0]
    n_active = features.shape[0]
    n_cells = hist.shape[2] * hist.shape[3]
    for task in prange(n_active * n_pairs):
        f = features[task // n_pairs]
        p = task % n_pairs
        # one feature's cells as one run of int64: a unit stride the compiler turns into
        # vector code (28 x 256 bins, 2 threads, warm: 3.5 us against 4.4 by cells)
        parent = hist[parent_slots[p], f].reshape(n_cells)
        child = hist[child_slots[p], f].reshape(n_cells)
        for c in range(n_cells):
            parent[c] -= child[c]


@njit(cache=True, nogil=True)
def sum_gradients(gh, indices, start, count, out):
    """Node totals: out = (sum g, sum h, n_rows) over rows start..start+count of ``indices``.

    gh : ndarray of shape (n_rows, 2), int32 or int64   # IN, fixed point
    indices : ndarray, int32   # IN
    out : ndarray of shape (3,), int64   # OUT (exact)
    """
    sg = np.int64(0)
    sh = np.int64(0)
    for i in range(start, start + count):
        r = np.uint64(indices[i])
        sg += gh[r, 0]
        sh += gh[r, 1]
    out[0] = sg
    out[1] = sh
    out[2] = count
