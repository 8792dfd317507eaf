"""Gradient histograms of a batch of nodes.

A histogram cell ``hist[slot, f, b]`` holds three int64 channels: the sum of
the fixed-point gradients, the sum of the fixed-point hessians (see
:mod:`boostwood.tree.stats`) and the number of rows of the node whose feature
``f`` falls in bin ``b``. The split scan (``split.py``) reads prefix
sums of these cells: that is all the exact-greedy gain needs, evaluated only at
bin boundaries (Chen & Guestrin 2016, Alg. 2 on pre-bucketed data).

Parallelism and determinism: the batch's rows are cut into runs, one per thread (see
*Runs of equal rows* below), and a run's part of a node into blocks of at most a fixed
number of rows. A block reads each of its rows once (the binned matrix is row-major;
gradient and hessian sit side by side) and updates every feature's histogram (or,
where runs are fewer than threads, every feature of its range).
Histograms are integer sums, so they are bit-identical in any order and for any
number of threads (row blocks of several data shards included). A run's blocks of one
node add into one histogram: the partial buffers a batch needs are one per run
boundary inside a node, at most one per thread after the first, not one per block (a
4M-row root had 244 buffers of 164 KiB, 40 MiB held through training).

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
two-lane cell per store and per scratch (28 features x 256 bins, padded: 58 KB instead
of 117): 1.5x faster on a 800k-row root (measured).

Scratch rows padded. A feature's packed (or one-lane) scratch cells are followed by at
least ``SCRATCH_PAD_CELLS`` unused cells, to an odd number of cells
(:func:`_feature_words`). Unpadded, 256 bins of 16-byte cells put bin b of every feature
a multiple of 4,096 bytes from bin b of the next: a load and an older store whose
addresses agree in their low 12 bits are taken for the same address until the full
addresses are known (4K aliasing), so where a row's features fall in the same low bins
(binary, one-hot, count and other low-cardinality columns: most real tables), the
updates of different features wait on each other. On this rule no two features less
than 256 apart have rows a multiple of 4,096 bytes apart. One thread, blocks of 16,384
rows of 28 features, 800k rows: 0.27-0.45x the time where half the features are
binary or the bins geometric, 1.00x on uniform bins (measured). The direct loop writes
a node's histogram slot itself (blocks of few rows a bin): the grower's slots have an
odd number of 24-byte cells per feature for the same reason (:func:`hist_bins`).

One small node. A batch of one node of fewer than ``SERIAL_MAX_UPDATES`` row-feature
updates (a late leaf-wise split's smaller child of a few dozen rows) is summed directly
on the calling thread: no parallel region, no task plan.

Runs of equal rows. A batch's rows, taken node after node, are cut into one run per
thread of equal rows (:func:`row_workers`, :func:`_plan_runs`, a work-size rule), and
every thread sums its run, whatever the nodes' sizes: a run may hold many small nodes,
or part of a large one (whose other parts go to buffers, added to its slot after).
A batch too small for a run per thread (under ``MIN_RUN_ROWS`` rows a run) has fewer
runs, and the threads over share each run's features. The alternative, feature
ranges of all rows, leaves every thread reading every row, and on scattered rows the
reads are the cost (28 features, 256 bins, 2 threads: cut by rows 1.75x one thread's
speed at 8,000 rows and 2.0x at 32,000, against 1.4-1.5x by features).
"""
import numpy as np
from numba import njit, prange
from numba.extending import overload

from .._config import lock_cache_writes
from .intrinsics import PREFETCH_DISTANCE, add_pair, prefetch

#: Bits of the row count in a packed cell's second channel (see the module docstring).
COUNT_BITS = 15
#: Where the gradient sum starts in a one-lane cell (quantized gradients).
G_SHIFT = 40
#: A block is summed in packed cells when it has at least this many rows per bin.
PACKED_MIN_ROWS_PER_BIN = 4
#: The row count field of a packed cell.
COUNT_MASK = (1 << COUNT_BITS) - 1
#: A batch of one node with fewer row-feature updates than this is built on the
#: calling thread (:func:`build_histograms`): below it, starting the threads and
#: planning tasks cost more than they share. 28 features, 256 bins, 2 threads: 48 rows
#: 3.2 us against 5.4 in two feature groups, 150 rows 5.9 against 7.0, even near 256.
SERIAL_MAX_UPDATES = 7168

#: Fewest cells between the end of one feature's scratch cells and the next feature's
#: (see *Scratch rows padded* in the module docstring).
SCRATCH_PAD_CELLS = 4

#: Fewest rows of a worker's run (:func:`row_workers`): a batch of fewer than
#: ``n_threads * MIN_RUN_ROWS`` rows has fewer runs than threads, and the threads left
#: over share the runs' features instead. A shorter run costs more in its passes over
#: the cells (zeroing, unpacking, adding its buffer) than its rows save.
MIN_RUN_ROWS = 1024


@njit(cache=True, nogil=True)
def row_workers(total_rows, n_active, n_threads, n_buffers):
    """How a batch of ``total_rows`` rows is cut across ``n_threads`` (a work-size rule,
    never a timing): ``(n_runs, n_groups)``. ``n_runs`` equal runs of the batch's rows, one
    per thread, but none under ``MIN_RUN_ROWS`` rows and no more than ``n_buffers + 1``
    (a run that starts inside a node needs a buffer of ``partial``); where that leaves
    threads over, each run's features are cut into ``n_groups`` ranges (at most one per
    feature), so that every thread has a share: a leaf-wise child of 4,000 rows on 16
    threads is 3 runs of 5 ranges. ``n_runs * n_groups <= max(n_threads, 1)``."""
    n_runs = min(_most_runs(total_rows, n_threads), n_buffers + 1)
    if n_runs >= n_threads:
        return n_runs, 1
    return n_runs, max(1, min(n_active, n_threads // n_runs))


@njit(cache=True, nogil=True)
def partials_bound(n_rows, n_threads):
    """Buffers of ``partial`` that let :func:`build_histograms` give every thread its own
    run of a batch of at most ``n_rows`` rows: one per run after the first
    (:func:`row_workers`). Children are built from their parents' rows, so the parents'
    count bounds a split batch's before the partition says how it splits."""
    return _most_runs(n_rows, n_threads) - 1


@njit(cache=True, nogil=True, inline="always")
def _most_runs(n_rows, n_threads):
    """Runs of a batch of ``n_rows`` with buffers enough: one per thread, none under
    ``MIN_RUN_ROWS`` rows, at least one."""
    return max(1, min(n_threads, n_rows // MIN_RUN_ROWS))


@njit(cache=True, nogil=True)
def _plan_runs(starts, counts, slots, sides, block_size, n_runs):
    """Cut a batch into ``n_runs`` runs of equal rows (within one row), in node order, and
    each run's part of a node into near-equal blocks of at most ``block_size`` rows: one
    task per block, and run w's tasks are ``run_first[w]..run_first[w + 1]``.

    Where a task sums to (its destination): a run's part of a node that starts at the
    node's first row goes to the node's slot, a part that starts inside the node (the
    run began there) to a buffer of ``partial`` of its own; a part's first block
    overwrites, its further blocks add (``t_add``). So a node's buffers are consecutive,
    one per run boundary inside it, at most ``n_runs - 1`` in all. A node of no rows is
    one empty task of the run where it stands (its slot is zeroed).

    An earlier plan cut nodes into blocks (or pieces) first and gave each thread an equal
    number of them: at 16 threads, on the levels of depth-8 trees of 800k rows, the
    busiest thread had 1.6-2.3x the mean rows (1.06x on 2 threads); equal runs have 1x.

    Returns the task arrays (start in the node's buffer, rows, destination, to a partial
    buffer?, add?, buffer side), ``run_first``, per node its first partial buffer and
    their number, and the nodes that have any (``split``)."""
    n_nodes = counts.shape[0]
    first = np.empty(n_nodes + 1, dtype=np.int64)
    first[0] = 0
    for k in range(n_nodes):
        first[k + 1] = first[k] + counts[k]
    total = first[n_nodes]
    cap = n_nodes + 2 * n_runs + total // max(block_size // 2, 1) + 1
    t_start = np.empty(cap, dtype=np.int64)
    t_count = np.empty(cap, dtype=np.int64)
    t_dest = np.empty(cap, dtype=np.int64)
    t_side = np.empty(cap, dtype=np.int64)
    t_partial = np.zeros(cap, dtype=np.bool_)
    t_add = np.zeros(cap, dtype=np.bool_)
    run_first = np.empty(n_runs + 1, dtype=np.int64)
    part_first = np.zeros(n_nodes, dtype=np.int64)
    part_count = np.zeros(n_nodes, dtype=np.int64)
    t = n_parts = k = 0
    for w in range(n_runs):
        run_first[w] = t
        lo, hi = total * w // n_runs, total * (w + 1) // n_runs
        # node k is the first not done: it starts at lo or later, or goes on from the run
        # before (that run stopped inside it); an empty node at lo stands in this run
        while k < n_nodes and (first[k] < hi or w == n_runs - 1):
            a, b = max(lo, first[k]), min(hi, first[k + 1])
            inside = a > first[k]
            if inside:
                if part_count[k] == 0:
                    part_first[k] = n_parts
                part_count[k] += 1
                n_parts += 1
            n_blocks = max((b - a + block_size - 1) // block_size, 1)
            for j in range(n_blocks):
                s, e = a + (b - a) * j // n_blocks, a + (b - a) * (j + 1) // n_blocks
                t_start[t] = starts[k] + s - first[k]
                t_count[t] = e - s
                t_dest[t] = n_parts - 1 if inside else slots[k]
                t_partial[t] = inside
                t_add[t] = j > 0
                t_side[t] = sides[k]
                t += 1
            if first[k + 1] > hi:
                break  # the node goes on in the next run
            k += 1
    run_first[n_runs] = t
    n_split = 0
    for k in range(n_nodes):
        n_split += part_count[k] > 0
    split = np.empty(n_split, dtype=np.int64)
    n_split = 0
    for k in range(n_nodes):
        if part_count[k] > 0:
            split[n_split] = k
            n_split += 1
    return (t_start, t_count, t_dest, t_partial, t_add, t_side, run_first, part_first,
            part_count, split)


@njit(cache=True, nogil=True)
def _total(counts):
    """The sum of ``counts``, in a serial loop: in a parallel function ``counts.sum()``
    would open a parallel region of its own."""
    total = 0
    for c in counts:
        total += c
    return total


@njit(cache=True, nogil=True)
def _one_small_node(X_binned, gh, buf, sides, starts, counts, slots, features, n_bins, hist):
    """Build a batch of one node of fewer than ``SERIAL_MAX_UPDATES`` row-feature updates
    directly on this thread (no parallel region or task plan); False for other batches."""
    n_active = features.shape[0]
    if counts.shape[0] != 1 or counts[0] * n_active >= SERIAL_MAX_UPDATES:
        return False
    _zero_and_accumulate(X_binned, gh, buf[sides[0]], starts[0], counts[0], features, n_bins,
                         0, n_active, n_active == hist.shape[1], hist.shape[2],
                         hist[slots[0]].reshape(hist[slots[0]].size), False)
    return True


@njit(cache=True, nogil=True)
def _scratch_width(gh, packs, t_count, n_tasks, n_range, min_packed, n_bins_max):
    """Scratch cells a unit needs for the packed blocks among the tasks: packed cells
    need int32 rows (two lanes) or int16 (one lane, quantized gradients) and blocks of
    fewer than 2**COUNT_BITS rows (``packs``), and at least ``min_packed`` rows; a unit
    sums at most ``n_range`` features."""
    lanes = 1 if gh.itemsize == 2 else 2
    if packs:
        for t in range(n_tasks):
            if t_count[t] >= min_packed:
                return n_range * _feature_words(n_bins_max, lanes)
    return 0


@njit(cache=True, nogil=True, inline="always")
def used_cells(n_bins, f, n_bins_max):
    """Cells of feature ``f``'s histogram: its ``n_bins[f]`` value bins and the missing bin
    (at ``n_bins[f]``), never more than a slot has. Cells above them are never read (the
    scans and subtractions stop there), so a build neither zeroes nor writes them: a
    binary column is 3 of the grower's 257 cells to zero and unpack."""
    return min(np.int64(n_bins[f]) + 1, n_bins_max)


@njit(cache=True, nogil=True, inline="always")
def _feature_words(n_bins_max, lanes):
    """Words (int64) of scratch one feature takes: an odd number of cells of ``lanes``
    words, its bins' and at least ``SCRATCH_PAD_CELLS`` more (*Scratch rows padded*)."""
    cells = n_bins_max + SCRATCH_PAD_CELLS
    return (cells + 1 - cells % 2) * lanes


def hist_bins(n_bins_max):
    """Cells per feature of a histogram slot for data of ``n_bins_max`` bins (the missing
    bin included): an odd number, one more where ``n_bins_max`` is even (*Scratch rows
    padded*: 256 cells of 24 bytes put features two apart 12,288 bytes, three times
    4,096, apart, and the direct loop writes the slots). The extra cell is never a bin:
    as every cell above a feature's bins (:func:`used_cells`), a build does not write it
    and nothing reads it. Blocks of 800 rows of 68 features, 40 of them binary: 0.70x
    the time."""
    return n_bins_max + 1 - n_bins_max % 2


@njit(parallel=True, cache=True, nogil=True)
def build_histograms(X_binned, gh, buf, sides, starts, counts, slots, features, n_bins,
                     block_size, n_threads, hist, partial):
    """Histograms of a batch of nodes from their rows.

    The batch's rows, in node order, are cut into equal runs, one per thread
    (:func:`row_workers`, :func:`_plan_runs`); where there are fewer runs than threads,
    each run's features are also cut into ranges. A parallel unit takes one run (and
    range) and sums its part of each node block by block, into the node's slot of
    ``hist`` where the part starts at the node's first row, else into a buffer of
    ``partial``; those buffers are then added to their slots, in parallel over (node,
    feature). Integer sums: how the rows are cut never changes a bit of the result.

    Parameters
    ----------
    X_binned : ndarray of shape (n_rows, n_features), uint8 or uint16, row-major   # IN
    gh : ndarray of shape (n_rows, 2), int16, int32 or int64   # IN, fixed-point g and h
    buf : ndarray of shape (2, n_partition), int32   # IN, the two index buffers (see partition.py)
    sides, starts, counts, slots : ndarray of shape (n_nodes,), int64   # IN, where each node's
        rows are (buffer, segment) and its histogram slot
    features : ndarray of shape (n_active,), int64   # IN, features to build (others untouched)
    n_bins : ndarray of shape (n_features,), int32   # IN, value bins per feature: feature f's
        histogram is its first ``n_bins[f] + 1`` cells (the missing bin is ``n_bins[f]``;
        :func:`used_cells`), and the build writes no cell above them
    block_size : int, most rows a block sums in one pass (below 2**COUNT_BITS: packed cells)
    n_threads : int, the threads of the parallel loop (they only cut the work)
    hist : ndarray of shape (n_slots, n_features, n_bins_max, 3), int64   # OUT
    partial : ndarray of shape (n_buffers, n_features, n_bins_max, 3), int64   # OUT, workspace;
        :func:`partials_bound` buffers give every thread a run, fewer give fewer runs
    """
    n_active = features.shape[0]
    if _one_small_node(X_binned, gh, buf, sides, starts, counts, slots, features, n_bins,
                       hist):
        return
    n_runs, n_groups = row_workers(_total(counts), n_active, n_threads, partial.shape[0])
    t_start, t_count, t_dest, t_partial, t_add, t_side, run_first, part_first, part_count, \
        split = _plan_runs(starts, counts, slots, sides, block_size, n_runs)
    n_bins_max = hist.shape[2]
    all_features = n_active == hist.shape[1]  # then features[j] == j
    packs = gh.itemsize <= 4 and block_size < (1 << COUNT_BITS)
    min_packed = PACKED_MIN_ROWS_PER_BIN * n_bins_max
    # each unit's scratch for packed blocks, allocated once per call here (an allocation
    # per task costs page faults in the threads' arenas)
    scratch = np.empty((n_runs * n_groups,
                        _scratch_width(gh, packs, t_count, run_first[n_runs],
                                       (n_active + n_groups - 1) // n_groups, min_packed,
                                       n_bins_max)), dtype=np.int64)
    for u in prange(n_runs * n_groups):
        _run_unit(X_binned, gh, buf, features, n_bins, n_active, all_features, n_bins_max,
                  packs, min_packed, u // n_groups, u % n_groups, n_groups, run_first, t_side,
                  t_start, t_count, t_dest, t_partial, t_add, scratch[u], hist, partial)
    if split.shape[0] == 0:
        return  # no node was cut by a run boundary: no second parallel region
    # add each cut node's buffers to its slot, in run order, in parallel over features
    for task in prange(split.shape[0] * n_active):
        k, f = split[task // n_active], features[task % n_active]
        cell = hist[slots[k], f]
        for p in range(part_first[k], part_first[k] + part_count[k]):
            other = partial[p, f]
            for b in range(used_cells(n_bins, f, n_bins_max)):
                cell[b, 0] += other[b, 0]
                cell[b, 1] += other[b, 1]
                cell[b, 2] += other[b, 2]


@njit(cache=True, nogil=True)
def _run_unit(X_binned, gh, buf, features, n_bins, n_active, all_features, n_bins_max, packs,
              min_packed, w, g, n_groups, run_first, t_side, t_start, t_count, t_dest,
              t_partial, t_add, scratch, hist, partial):
    """One parallel unit of :func:`build_histograms`: run ``w``'s blocks, feature range
    ``g`` of ``n_groups``. A function of its own, not the parallel loop's body: numba's
    passes over a parallel loop cost compile time by the code the body holds."""
    flo, fhi = n_active * g // n_groups, n_active * (g + 1) // n_groups
    size = hist.shape[1] * n_bins_max * 3
    for t in range(run_first[w], run_first[w + 1]):
        # flat views: cell (f, b, c) is at (f * n_bins_max + b) * 3 + c. Each branch
        # passes its own array so that numba keeps the contiguous layout in the loop.
        indices = buf[t_side[t]]
        packed = packs and t_count[t] >= min_packed
        if t_partial[t]:
            _sum_block(X_binned, gh, indices, t_start[t], t_count[t], features, n_bins,
                       flo, fhi, all_features, n_bins_max, packed, scratch,
                       partial[t_dest[t]].reshape(size), t_add[t])
        else:
            _sum_block(X_binned, gh, indices, t_start[t], t_count[t], features, n_bins,
                       flo, fhi, all_features, n_bins_max, packed, scratch,
                       hist[t_dest[t]].reshape(size), t_add[t])


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


@njit(cache=True, nogil=True)
def _sum_block(X_binned, gh, indices, start, count, features, n_bins, flo, fhi, all_features,
               n_bins_max, packed, scratch, out, add):
    """Features flo..fhi of flat ``out`` := (or, with ``add``, +=) the sums of rows
    start..start+count of ``indices``, through packed cells or directly (the same
    result)."""
    if packed:
        _packed_sum(X_binned, gh, indices, start, count, features, n_bins, flo, fhi,
                    all_features, n_bins_max, scratch, out, add)
    else:
        _zero_and_accumulate(X_binned, gh, indices, start, count, features, n_bins, flo, fhi,
                             all_features, n_bins_max, out, add)


def _packed_sum(X_binned, gh, indices, start, count, features, n_bins, flo, fhi, all_features,
                n_bins_max, scratch, out, add):
    """The packed block sum for ``gh``'s type: :func:`_one_lane_accumulate` (int16),
    :func:`_packed_accumulate` (int32), nothing (int64 rows never pack). Compiled code
    calls the overload below, which picks the kernel while typing, so numba compiles
    only the one a type can reach (a branch on ``gh.itemsize`` compiled both, about 2 s
    each at install)."""
    raise NotImplementedError("_packed_sum is called from compiled code only")


@overload(_packed_sum, jit_options={"nogil": True})
def _packed_sum_typed(X_binned, gh, indices, start, count, features, n_bins, flo, fhi,
                      all_features, n_bins_max, scratch, out, add):
    kernel = {16: _one_lane_accumulate, 32: _packed_accumulate}.get(gh.dtype.bitwidth)

    def impl(X_binned, gh, indices, start, count, features, n_bins, flo, fhi, all_features,
             n_bins_max, scratch, out, add):
        if kernel is not None:
            kernel(X_binned, gh, indices, start, count, features, n_bins, flo, fhi,
                   all_features, n_bins_max, scratch, out, add)
    return impl


@njit(cache=True, nogil=True)
def _packed_accumulate(X_binned, gh, indices, start, count, features, n_bins, flo, fhi,
                       all_features, n_bins_max, scratch, out, add=False):
    """As :func:`_zero_and_accumulate`, through packed cells (the module docstring) in
    ``scratch`` (1-D int64 of at least ``(fhi - flo) * _feature_words(n_bins_max, 2)``):
    ``gh`` int32 and ``count < 2**COUNT_BITS`` (the caller's checks)."""
    _packed_rows(X_binned, gh, indices, start, count, features, n_bins, flo, fhi, all_features,
                 n_bins_max, scratch)
    keep = np.int64(-1 if add else 0)  # a mask: what ``out`` held, or nothing
    for j in range(flo, fhi):
        f = features[j]
        lo = f * n_bins_max * 3
        s = (j - flo) * _feature_words(n_bins_max, 2)
        for b in range(used_cells(n_bins, f, n_bins_max)):
            v = scratch[s + 2 * b + 1]
            out[lo + 3 * b] = (out[lo + 3 * b] & keep) + scratch[s + 2 * b]
            out[lo + 3 * b + 1] = (out[lo + 3 * b + 1] & keep) + (v >> COUNT_BITS)
            out[lo + 3 * b + 2] = (out[lo + 3 * b + 2] & keep) + (v & COUNT_MASK)


@njit(cache=True, nogil=True, inline="always")
def _packed_rows(X_binned, gh, indices, start, count, features, n_bins, flo, fhi, all_features,
                 n_bins_max, scratch):
    """Zero ``scratch`` and sum rows start..start+count of ``indices`` into its packed
    two-lane cells: cell (j - flo, b) at ``(j - flo) * _feature_words(n_bins_max, 2) + 2 * b``.

    Two rows at a time, feature by feature: the two updates of a step never depend on
    each other (different rows), so more of them are in flight; 1.2x the speed of one
    row at a time on 800k rows of 28 features, 1.15x on scattered rows (measured).
    Rows that follow each other in memory (a root) are left to the hardware
    prefetcher."""
    words = np.uint64(_feature_words(n_bins_max, 2))
    two = np.uint64(2)
    base = np.uint64(flo)
    for j in range(flo, fhi):  # a feature's used cells only (a binary one's 3 of 261)
        at = (j - flo) * _feature_words(n_bins_max, 2)
        scratch[at:at + 2 * used_cells(n_bins, features[j], n_bins_max)] = 0
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
                at = (uf - base) * words
                add_pair(scratch, at + np.uint64(row0[uf]) * two, g0, h0)
                add_pair(scratch, at + np.uint64(row1[uf]) * two, g1, h1)
        else:
            for j in range(flo, fhi):
                uj = np.uint64(j)
                uf = np.uint64(features[j])
                at = (uj - base) * words
                add_pair(scratch, at + np.uint64(row0[uf]) * two, g0, h0)
                add_pair(scratch, at + np.uint64(row1[uf]) * two, g1, h1)
        i += 2
    if i < end:  # an odd row out
        r = np.uint64(indices[i])
        gr = np.int64(gh[r, np.uint64(0)])
        hr = (np.int64(gh[r, np.uint64(1)]) << COUNT_BITS) + 1
        row = X_binned[r]
        for j in range(flo, fhi):
            uj = np.uint64(j)
            uf = uj if all_features else np.uint64(features[j])
            add_pair(scratch, (uj - base) * words + np.uint64(row[uf]) * two, gr, hr)


@njit(cache=True, nogil=True)
def _one_lane_accumulate(X_binned, gh, indices, start, count, features, n_bins, flo, fhi,
                         all_features, n_bins_max, scratch, out, add=False):
    """As :func:`_packed_accumulate`, for quantized (int16) rows: one int64 per cell
    (the module docstring); ``scratch`` holds at least ``(fhi - flo) *
    _feature_words(n_bins_max, 1)``."""
    _one_lane_rows(X_binned, gh, indices, start, count, features, n_bins, flo, fhi, all_features,
                   n_bins_max, scratch)
    keep = np.int64(-1 if add else 0)
    for j in range(flo, fhi):
        f = features[j]
        lo = f * n_bins_max * 3
        s = (j - flo) * _feature_words(n_bins_max, 1)
        for b in range(used_cells(n_bins, f, n_bins_max)):
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
def _one_lane_rows(X_binned, gh, indices, start, count, features, n_bins, flo, fhi, all_features,
                   n_bins_max, scratch):
    """Zero ``scratch`` and sum rows start..start+count of ``indices`` (int16) into its
    one-lane cells: cell (j - flo, b) at ``(j - flo) * _feature_words(n_bins_max, 1) + b``."""
    words = np.uint64(_feature_words(n_bins_max, 1))
    base = np.uint64(flo)
    for j in range(flo, fhi):  # a feature's used cells only, as in _packed_rows
        at = (j - flo) * _feature_words(n_bins_max, 1)
        scratch[at:at + used_cells(n_bins, features[j], n_bins_max)] = 0
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
            at = (uj - base) * words
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
            scratch[(uj - base) * words + np.uint64(row[uf])] += v


@njit(cache=True, nogil=True, inline="always")
def _one_lane_value(gh, r):
    """What row ``r`` adds to a one-lane cell: ``g * 2**G_SHIFT + h * 2**COUNT_BITS + 1``."""
    return (np.int64(gh[r, np.uint64(0)]) << G_SHIFT) \
        + (np.int64(gh[r, np.uint64(1)]) << COUNT_BITS) + 1


@njit(cache=True, nogil=True)
def _zero_and_accumulate(X_binned, gh, indices, start, count, features, n_bins, flo, fhi,
                         all_features, n_bins_max, out, add=False):
    """The inner loop: zero features flo..fhi of flat ``out`` (unless ``add``; a feature's
    :func:`used_cells`), then add rows start..start+count of ``indices`` into them.

    Indices are cast to unsigned so that numba emits no negative-index
    wrap-around test per access (about 10% of the loop).
    """
    if not add:
        for j in range(flo, fhi):
            f = features[j]
            lo = f * n_bins_max * 3
            out[lo:lo + used_cells(n_bins, f, n_bins_max) * 3] = 0
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


lock_cache_writes(globals())  # numba's cache, safe when processes compile at once
