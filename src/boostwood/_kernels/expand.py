"""The whole expansion loop of a histogram tree in compiled code.

:class:`boostwood.tree.grower.TreeGrower` grows a tree by choosing leaves to
expand (the growth policy), splitting them and scanning their children. Driven
from Python, that loop costs about thirty interpreter-level calls per split, so
a 255-leaf lossguide tree spent more time in bookkeeping than in work on small
nodes, and the bookkeeping does not get faster with more threads.
:func:`expand_tree` runs the same loop -- the same policy, the same plan of which
child is built and which derived, the same kernels in the same order -- without
returning to Python, so a tree costs a fixed number of Python calls whatever its
number of leaves. With several data shards the histograms of each step must meet in
the reducer: the loop then stops after building them (``NEED_REDUCE``), hands the caller
the slots to sum and what it was about to scan, and goes on from there when called
again; every shard stops at the same steps, since every decision of the loop reads
global sums (``tests/test_shards.py``).

*Splitting ahead* (leaf-wise, ``AHEAD_MIN_THREADS`` threads or more; the grower's
``ahead_max_rows``, 0 turns it off). A leaf-wise tree splits one leaf at a time, and late in a
tree that leaf is small: its partition, histogram and scan are too little work to share,
and the other threads wait. So a best leaf of at most ``policy[P_AHEAD_ROWS]`` rows is
split in one batch with the next ``n_threads - 1`` open leaves by gain, ahead of their
turn. Their children are scanned but wait
(``F_WAITING``): the leaves stay open, and when one becomes the best leaf it takes its
turn with no work, its children opening then. Leaves take turns, and children get
their node ids, exactly as one leaf at a time would; a leaf whose turn never comes (the
tree reached ``max_leaves``) is undone at the end (its rows are still in its segment:
a partition writes the other buffer), and the table is renumbered in that order. So
the tree is the same, node for node, as one leaf at a time grows it (and as the naive
twin of ``tests/naive_tree.py`` does); only idle threads did the work ahead. (Splitting
the next leaves for good instead is not the same tree: their children would compete for
the remaining leaves earlier than one leaf at a time lets them.) On data shards every
leaf-wise batch is split so, a fixed number of leaves wide whatever a shard's rows or
threads (``sizes[3]``): the histograms of a batch meet in one collective, so a tree
needs a fraction of the collectives of one leaf at a time, and every shard still
splits the same batches.

State lives in arrays the caller owns, so the loop can stop when a buffer is
full, let the caller enlarge it, and go on where it stopped:

* ``slot_of`` (n_capacity,) int64: the histogram slot each node holds, -1 none;
* ``free`` (n_slots,) int64: a stack of free slots;
* ``open_ids`` (n_capacity,) int64: the leaves with a candidate split, in the order of
  their ids one leaf at a time would give (``logical``; the node ids themselves where no
  leaf is split ahead), which the tie rules below rely on;
* ``counters`` (N_COUNTERS,) int64: the named cells ``ST_*``;
* ``logical`` (n_capacity,) int64 and ``flags`` (n_capacity,) uint8: each node's id in
  the order of one leaf at a time (-1: none yet) and its ``F_*`` bits.

:func:`expand_tree` is compiled serial (it has no parallel loop of its own; the
kernels it calls are parallel). Not ``parallel=True``: numba's array analysis, which
runs on any parallel function, takes the shape of an array redefined in a loop
(``pairs``, first empty) for a constant and drops the branch that uses it, which
silently skipped histogram subtractions. A cached serial caller of parallel kernels crashes when loaded from
the cache before numba's threads are started (numba #8578); the grower always
builds the root histogram (a parallel kernel called from Python) first, and
``tests/_kernels/test_grow.py`` loads a warm cache in a fresh process.
"""
import numpy as np
from numba import njit

from .._config import lock_cache_writes
from .categorical import choose_categorical
from .grow import SM_LEFT, SM_SLOT, built_children, node_totals
from .histogram import build_histograms, partials_bound
from .intrinsics import cycle_count
from .nodes import (N_PICK, ND_COUNT, ND_DEPTH, ND_LEFT, ND_RIGHT, NF_GAIN, choose_gradient,
                    split_nodes)
from .partition import partition_nodes
from .random import STREAM_BYNODE, counter_hash
from .split import find_best_splits

#: Growth policies (``policy[P_GROW]``).
DEPTHWISE, LOSSGUIDE = 0, 1
#: Cells of ``policy``: growth policy, max_depth and max_leaves (0: no limit),
#: min_data_in_leaf, min_child_weight and one hessian unit (floats), and the most rows of
#: a best leaf split with others ahead of their turn (leaf-wise; 0: none).
P_GROW, P_MAX_DEPTH, P_MAX_LEAVES, P_MIN_DATA, P_MIN_WEIGHT, P_H_UNIT, P_AHEAD_ROWS = range(7)
#: Cells of ``counters``: free slots, open leaves, leaves, nodes in the table, how much
#: of the resource named by the return value is needed, the next id in the order of one
#: leaf at a time, and the leaves split ahead of their turn and those undone at the end.
ST_FREE, ST_OPEN, ST_LEAVES, ST_NODES, ST_NEED, ST_LOGICAL, ST_AHEAD, ST_UNDONE = range(8)
N_COUNTERS = 8
#: ``flags`` bits: a leaf split ahead of its turn (its children wait), a waiting child.
F_AHEAD, F_WAITING = 1, 2
#: Leaf-wise, a best leaf of at most this many rows is split together with the next
#: ``n_threads - 1`` open leaves (ahead of their turn): alone, its small kernels leave
#: threads idle. The grower's default ``ahead_max_rows`` (``policy[P_AHEAD_ROWS]``).
AHEAD_MAX_ROWS = 16384
#: Fewest threads the grower splits leaves ahead of their turn on. Measured on a 16-core
#: machine (HIGGS-like, 800k rows, 100 rounds of 255 leaves, same models): 0.84x the
#: time at 16 threads (before small batches shared features), but 1.12x at 4 and 1.09x at 8 (after it),
#: and 0.90-1.09x on 2 cores (the 10-class case 0.99-1.10x); so only from 16 (``benchmarks/results/
#: history/tree_profile_16cores.md``). Between 8 and 16 it is not measured.
AHEAD_MIN_THREADS = 16
#: What :func:`expand_tree` returns: the tree is finished, or it stopped because the
#: node table, the slot pool or the partial histograms must hold ``counters[ST_NEED]``,
#: or (data shards) because the histograms it just built must be summed across shards.
DONE, NEED_NODES, NEED_SLOTS, NEED_PARTIALS, NEED_REDUCE = range(5)
#: Sections of the optional profile ``clock`` of :func:`expand_tree`: scanning histograms
#: for splits (with the subtractions, in the same region), the loop's own bookkeeping
#: (choosing leaves, slots, node records), partitioning rows and building histograms.
C_SCAN, C_BOOKKEEP, C_PARTITION, C_BUILD = range(4)
N_CLOCK_SECTIONS = 4
#: Size classes of the profile: a step is counted by the rows of the batch it splits
#: (its scans by the batch whose children they scan), below each bound, then the rest.
CLOCK_ROWS = (8192, 32768, 131072)


def new_clock():
    """A zeroed profile for :func:`expand_tree`: (section, size class, (cycles, calls))
    int64, accumulated over every call it is passed to (see ``CLOCK_ROWS``)."""
    return np.zeros((N_CLOCK_SECTIONS, len(CLOCK_ROWS) + 1, 2), dtype=np.int64)


@njit(cache=True, nogil=True)
def _tick(clock):
    """The cycle counter, or 0 without a profile (then no counter is read)."""
    if clock is None:
        return 0
    return cycle_count()


@njit(cache=True, nogil=True)
def _lap(clock, section, size_class, t0):
    """Charge the cycles since ``t0`` to a section of the profile; returns the counter
    (0 without a profile: numba drops the branch for a None ``clock``)."""
    if clock is None:
        return 0
    t = cycle_count()
    clock[section, size_class, 0] += t - t0
    clock[section, size_class, 1] += 1
    return t


@njit(cache=True, nogil=True)
def _size_class(ints, batch):
    n = 0
    for k in batch:
        n += ints[ND_COUNT, k]
    c = 0
    while c < len(CLOCK_ROWS) and n >= CLOCK_ROWS[c]:
        c += 1
    return c


@njit(cache=True, nogil=True)
def can_split(policy, depth, count, hess):
    """May a node of this depth, row count and fixed-point hessian sum be split? (The one
    rule: the gradient statistics' ``splittable`` calls it for the growers stepped from
    Python, :mod:`boostwood.tree.statistics`.)"""
    max_depth = policy[P_MAX_DEPTH]
    if max_depth > 0 and depth >= max_depth:
        return False
    return count >= 2 * policy[P_MIN_DATA] and hess * policy[P_H_UNIT] >= 2 * policy[P_MIN_WEIGHT]


@njit(cache=True, nogil=True)
def next_batch(policy, open_ids, counters, gain):
    """The leaves to expand next, ascending (empty: the tree is finished).

    lossguide: the open leaf of highest gain (the lowest id on ties); depthwise: every
    open leaf, or, when that would pass ``max_leaves``, those of highest gain (the lowest
    ids on ties). ``open_ids`` is in that id order: children always get ids above every
    node's (with leaves split ahead, the ids of one leaf at a time, see ``logical``)."""
    n_open, n_leaves = counters[ST_OPEN], counters[ST_LEAVES]
    max_leaves = policy[P_MAX_LEAVES]
    if n_open == 0 or (max_leaves > 0 and n_leaves >= max_leaves):
        return np.empty(0, dtype=np.int64)
    if policy[P_GROW] == LOSSGUIDE:
        return np.full(1, open_ids[_best_open(open_ids, n_open, gain, None)], dtype=np.int64)
    if max_leaves == 0 or n_leaves + n_open <= max_leaves:
        return open_ids[:n_open].copy()
    taken = np.zeros(n_open, dtype=np.uint8)
    for _ in range(max_leaves - n_leaves):
        taken[_best_open(open_ids, n_open, gain, taken)] = 1
    batch = np.empty(max_leaves - n_leaves, dtype=np.int64)
    m = 0
    for j in range(n_open):
        if taken[j]:
            batch[m] = open_ids[j]
            m += 1
    return batch


@njit(cache=True, nogil=True)
def _best_open(open_ids, n_open, gain, taken):
    """Position in ``open_ids`` (in id order) of the open leaf of highest gain, the first
    on ties, skipping those ``taken`` (None: none)."""
    best = -1
    for j in range(n_open):
        if taken is not None and taken[j]:
            continue
        if best < 0 or gain[open_ids[j]] > gain[open_ids[best]]:
            best = j
    return best


@njit(cache=True, nogil=True)
def retire_beyond_budget(policy, gain, state, ints, flags):
    """Leaf-wise growth: open leaves that can no longer be expanded leave the open set
    and give their histogram slots back.

    A leaf-wise step expands the best open leaf (highest gain, the lowest id on ties),
    and ``max_leaves`` leaves ``b`` more steps. A leaf with ``b`` or more open leaves
    before it in that order is never expanded: each step takes one leaf and new
    children can only join the queue, never shorten it. Retiring it changes no tree;
    it only frees its histogram, so a tree holds at most about ``max_leaves / 2``
    histograms at once (the open leaves and the steps left cannot both pass half of
    it; plus up to ``2 (width - 1)`` for leaves split ahead), where it had held one
    per open leaf: up to ``max_leaves`` (255 leaves of 28 features and 256 bins: 44 MB
    of histograms, now about half). A retired leaf that was
    split ahead of its turn (``F_AHEAD``, see the module docstring) also frees its
    waiting children's histograms; :func:`_in_order` undoes its split at the end."""
    slot_of, free, open_ids, counters = state
    while True:
        k = retire_next(policy, gain, open_ids, counters)
        if k < 0:
            return
        if slot_of[k] >= 0:
            _release(free, counters, slot_of[k])
            slot_of[k] = -1
        if flags is not None:  # (None: no leaves split ahead)
            if flags[k] & F_AHEAD:  # split ahead, its turn will never come: its waiting
                for c in (ints[ND_LEFT, k], ints[ND_RIGHT, k]):  # children give their
                    if slot_of[c] >= 0:  # slots back (the split is undone at the end)
                        _release(free, counters, slot_of[c])
                        slot_of[c] = -1


@njit(cache=True, nogil=True)
def retire_next(policy, gain, open_ids, counters):
    """The open leaf :func:`retire_beyond_budget` retires next, taken out of the open set
    (the last in the order: lowest gain, the highest id on ties), or -1 when every open
    leaf can still be reached. The one rule, for both loops."""
    if policy[P_GROW] != LOSSGUIDE or policy[P_MAX_LEAVES] <= 0:
        return -1
    n_open = counters[ST_OPEN]
    if n_open <= max(policy[P_MAX_LEAVES] - counters[ST_LEAVES], 0):
        return -1
    worst = 0
    for j in range(1, n_open):
        if gain[open_ids[j]] <= gain[open_ids[worst]]:
            worst = j
    k = open_ids[worst]
    for j in range(worst, n_open - 1):
        open_ids[j] = open_ids[j + 1]
    counters[ST_OPEN] = n_open - 1
    return k


@njit(cache=True, nogil=True)
def take_batch(open_ids, counters, batch):
    """The leaves ``batch`` (ascending) are expanded: they leave the open set and each
    becomes two leaves."""
    _remove_open(open_ids, counters, batch)
    counters[ST_LEAVES] += batch.shape[0]


@njit(cache=True, nogil=True)
def _release(free, counters, slot):
    free[counters[ST_FREE]] = slot
    counters[ST_FREE] += 1


@njit(cache=True, nogil=True)
def _acquire(free, counters):
    counters[ST_FREE] -= 1
    return free[counters[ST_FREE]]


@njit(cache=True, nogil=True)
def _children_need(policy, k, stats, cand_left, ints):
    """Whether the left and the right child of leaf k's candidate split may be split
    again (and so need a histogram)."""
    HL, CL, H, C = cand_left[k, 1], cand_left[k, 2], stats[k, 1], stats[k, 2]
    depth = ints[ND_DEPTH, k] + 1
    return (can_split(policy, depth, CL, HL), can_split(policy, depth, C - CL, H - HL))


@njit(cache=True, nogil=True)
def plan_batch(policy, batch, stats, cand_left, ints, state):
    """Which child of each node of ``batch`` is built (the smaller) into which new slot,
    and which is derived from the parent's slot by subtraction.

    Returns ``small`` (2, B) (rows ``SM_*`` of :mod:`.grow`), ``pairs`` (2, m)
    (parent slot, built child's slot) and ``need`` (2, B): whether the left and the
    right child may be split again. Each parent gives up its slot."""
    slot_of, free, open_ids, counters = state
    B = batch.shape[0]
    small = np.empty((2, B), dtype=np.int64)
    need = np.zeros((2, B), dtype=np.uint8)
    pairs = np.empty((2, B), dtype=np.int64)
    n_pairs = 0
    for i in range(B):
        k = batch[i]
        need_l, need_r = _children_need(policy, k, stats, cand_left, ints)
        need[0, i], need[1, i] = need_l, need_r
        left_small = 2 * cand_left[k, 2] <= stats[k, 2]  # the left child has at most half
        small[SM_LEFT, i] = 1 if left_small else 0
        small[SM_SLOT, i] = -1
        parent_slot = slot_of[k]
        slot_of[k] = -1
        if not (need_l or need_r):
            _release(free, counters, parent_slot)
            continue
        small[SM_SLOT, i] = _acquire(free, counters)
        if need_r if left_small else need_l:
            pairs[0, n_pairs], pairs[1, n_pairs] = parent_slot, small[SM_SLOT, i]
            n_pairs += 1
        else:
            _release(free, counters, parent_slot)
    return small, pairs[:, :n_pairs].copy(), need


@njit(cache=True, nogil=True)
def place_children(small, need, pairs, first, state):
    """Give the children of a split batch their slots; returns the children to scan
    (ascending) and those whose histogram was built only to be subtracted."""
    slot_of = state[0]
    B = small.shape[1]
    to_scan = np.empty(2 * B, dtype=np.int64)
    unused = np.empty(B, dtype=np.int64)
    n_scan = n_unused = n_pairs = 0
    for i in range(B):
        if small[SM_SLOT, i] < 0:
            continue
        lk, rk = first + 2 * i, first + 2 * i + 1
        left_small = small[SM_LEFT, i] != 0
        small_k, large_k = (lk, rk) if left_small else (rk, lk)
        slot_of[small_k] = small[SM_SLOT, i]
        if n_pairs < pairs.shape[1] and pairs[1, n_pairs] == small[SM_SLOT, i]:
            slot_of[large_k] = pairs[0, n_pairs]  # the larger child, after the subtraction
            n_pairs += 1
        if need[0, i]:
            to_scan[n_scan] = lk
            n_scan += 1
        if need[1, i]:
            to_scan[n_scan] = rk
            n_scan += 1
        if not (need[0, i] if left_small else need[1, i]):
            unused[n_unused] = small_k
            n_unused += 1
    return to_scan[:n_scan], unused[:n_unused]


@njit(cache=True, nogil=True)
def open_found(nodes, found, state, flags):
    """Nodes of a scan with a candidate (``found``, a subsequence of ``nodes``) become
    open leaves, or keep their slots until their parent's turn (``F_WAITING``); the
    others give up their slots."""
    slot_of, free, open_ids, counters = state
    j = 0
    for k in nodes:
        if j < found.shape[0] and found[j] == k:
            waiting = False
            if flags is not None:  # (None: no leaves split ahead, see expand_tree)
                waiting = flags[k] & F_WAITING != 0
            if not waiting:
                open_ids[counters[ST_OPEN]] = k
                counters[ST_OPEN] += 1
            j += 1
        else:
            _release(free, counters, slot_of[k])
            slot_of[k] = -1


@njit(cache=True, nogil=True)
def _shortage(batch, policy, table, n_slots_free, n_partials, n_threads, counters):
    """The first resource too small for expanding ``batch`` (DONE: none); the amount
    needed goes to ``counters[ST_NEED]``. A node takes a new slot only when one of its
    children may be split again (:func:`plan_batch`), and takes it before it gives its
    own back: so many free slots suffice, and the last level of a depth-limited tree
    needs none (asking one per node there doubled a depth-wise tree's histogram pool)."""
    ints, _, stats, cand_left, _ = table
    B = batch.shape[0]
    if counters[ST_NODES] + 2 * B > stats.shape[0]:
        counters[ST_NEED] = counters[ST_NODES] + 2 * B
        return NEED_NODES
    n_slots = 0
    for k in batch:
        need_l, need_r = _children_need(policy, k, stats, cand_left, ints)
        if need_l or need_r:
            n_slots += 1
    if n_slots_free < n_slots:
        counters[ST_NEED] = n_slots
        return NEED_SLOTS
    n_rows = 0
    for k in batch:
        n_rows += ints[ND_COUNT, k]
    need = partials_bound(n_rows, n_threads)
    if need > n_partials:
        counters[ST_NEED] = need
        return NEED_PARTIALS
    return DONE


@njit(cache=True, nogil=True)
def _slots_of(slot_of, nodes):
    slots = np.empty(nodes.shape[0], dtype=np.int64)
    for j in range(nodes.shape[0]):
        slots[j] = slot_of[nodes[j]]
    return slots


@njit(cache=True, nogil=True)
def _flags_of(order):
    """The ``F_*`` bits of ``order``, or None without it."""
    if order is None:
        return None
    return order[1]


@njit(cache=True, nogil=True)
def _choose_batch(policy, state, order, gain, ints, width):
    """The next batch: the policy's (:func:`next_batch`), leaf-wise with the leaves split
    ahead of their turn (:func:`_leafwise_batch`, ``width`` leaves at most)."""
    if order is not None:  # None: no leaves split ahead, one leaf at a time
        if policy[P_GROW] == LOSSGUIDE:
            return _leafwise_batch(policy, state, order, gain, ints, width)
    return next_batch(policy, state[2], state[3], gain)


@njit(cache=True, nogil=True)
def expand_tree(data, gh, bufs, table, hists, features, n_bins, settings, policy, sizes, state,
                order, start, reduce_each, bynode, node_mask, clock=None, cats=None):
    """Scan ``start`` (the root, on the first call; what the last call left, after a
    ``NEED_REDUCE``), then expand the tree's open leaves until the policy stops.

    data : (X_columns, X_binned); gh, features, n_bins, settings : fixed-point rows, the
    tree's features, bins, split settings; bufs : (buf, staging); table : the node table
    record; hists : (hist, partial); policy : ``P_*``; sizes : (partition_block,
    hist_block, n_threads, most leaves of a leaf-wise batch split ahead)
    state : (slot_of, free, open_ids, counters), see the module docstring   # IN/OUT
    order : (logical, flags), see the module docstring   # IN/OUT; None where no leaf
        is split ahead (numba then compiles none of that code)
    start : (to_scan (m,), pairs (2, p), unused (u,)) int64: leaves to scan first (ascending),
        (parent, built child) slots to subtract before, nodes whose slots go back after
    reduce_each : bool, stop with ``NEED_REDUCE`` after each batch's build (shards)
    bynode : None, or (node keys (n_capacity,) uint64, n_pick): ``colsample_bynode``
        (:func:`node_features`); node_mask : None, or (n_capacity, n_active) uint8, the
        features each node may split on (row 0 the caller's; :func:`inherit_mask`). A node
        splits on what both allow (None: all features)   # keys, mask rows IN/OUT
    clock : None, or a profile from :func:`new_clock` (IN/OUT; None reads no counter).
    cats : None (no categorical feature: numba compiles none of that code), or
        (categorical (n_features,) uint8, category settings, words per table row of the
        table's ``cat_bits``): categorical features' scans and sets
        (:mod:`.categorical`)
    Returns (status, start, slots): DONE, or the NEED_* code of the buffer to enlarge
    (call again with an empty ``start``); NEED_REDUCE: sum ``slots`` across shards,
    then call again with the ``start`` returned.
    """
    (X_columns, X_binned), (buf, staging), (hist, partial) = data, bufs, hists
    ints, floats, stats, cand_left, cat_bits = table
    slot_of, free, open_ids, counters = state
    flags = _flags_of(order)
    n_active = features.shape[0]
    to_scan, pairs, unused = start
    size_class = len(CLOCK_ROWS)  # the root's scan
    t = _tick(clock)
    while True:
        m = to_scan.shape[0]
        if m > 0:
            found = _scan(hist, slot_of, to_scan, pairs, table, n_bins, features,
                          scan_mask(bynode, node_mask, to_scan, n_active), settings, cats)
            t = _lap(clock, C_SCAN, size_class, t)
            open_found(to_scan, found, state, flags)
        for k in unused:
            _release(free, counters, slot_of[k])
            slot_of[k] = -1
        retire_beyond_budget(policy, floats[NF_GAIN], state, ints, flags)
        batch = _choose_batch(policy, state, order, floats[NF_GAIN], ints, sizes[3])
        B = batch.shape[0]
        if B == 0 and order is not None:
            _in_order(table, order, counters)
        status = DONE if B == 0 else _shortage(batch, policy, table, counters[ST_FREE],
                                               partial.shape[0], sizes[2], counters)
        if B == 0 or status != DONE:  # finished, or stopped for room
            _lap(clock, C_BOOKKEEP, size_class, t)
            return status, nothing_pending(), np.empty(0, dtype=np.int64)
        size_class = _size_class(ints, batch) if clock is not None else 0
        small, pairs, need = plan_batch(policy, batch, stats, cand_left, ints, state)
        first = counters[ST_NODES]
        n_now = B if policy[P_GROW] != LOSSGUIDE else 1  # leaf-wise: batch[0] takes its turn
        _take_turns(batch, n_now, first, state, order)
        counters[ST_NODES] += 2 * B
        n_left = np.empty(B, dtype=np.int64)
        t = _lap(clock, C_BOOKKEEP, size_class, t)
        partition_nodes(X_columns, buf, staging, ints, batch, cat_bits, n_bins, sizes[0], sizes[2],
                        n_left)
        t = _lap(clock, C_PARTITION, size_class, t)
        _record_split(table, batch, n_left, first, bynode, node_mask)
        b_sides, b_starts, b_counts, b_slots = built_children(ints, batch, small, n_left)
        t = _lap(clock, C_BOOKKEEP, size_class, t)
        if b_slots.shape[0] > 0:
            build_histograms(X_binned, gh, buf, b_sides, b_starts, b_counts, b_slots, features,
                             n_bins, sizes[1], sizes[2], hist, partial)
            t = _lap(clock, C_BUILD, size_class, t)
        to_scan, unused = place_children(small, need, pairs, first, state)
        if reduce_each and b_slots.shape[0] > 0:  # the shards' histograms must meet first
            return NEED_REDUCE, (to_scan.copy(), pairs, unused.copy()), b_slots.copy()


@njit(cache=True, nogil=True)
def _scan(hist, slot_of, to_scan, pairs, table, n_bins, features, mask, settings, cats):
    """Scan the nodes ``to_scan`` (subtracting ``pairs`` first) and record each one's
    candidate split in the table; returns the nodes that have one."""
    ints, floats, stats, cand_left, cat_bits = table
    m, n_active = to_scan.shape[0], features.shape[0]
    scan_slots = _slots_of(slot_of, to_scan)
    gain = np.empty((m, n_active))
    pick = np.empty((N_PICK, m, n_active), dtype=np.int64)
    left = np.empty((m, n_active, stats.shape[1]), dtype=stats.dtype)
    totals = node_totals(stats, to_scan)
    if cats is None:
        find_best_splits(hist, scan_slots, pairs, totals, n_bins, features, mask, settings,
                         (gain, pick, left))
    else:
        sets = np.empty((m, n_active, cats[2]), dtype=np.uint32)
        find_best_splits(hist, scan_slots, pairs, totals, n_bins, features, mask, settings,
                         (gain, pick, left), (cats[0], cats[1], sets))
    found = choose_gradient(gain, pick, left, to_scan, features, ints, floats, cand_left)
    if cats is not None:
        choose_categorical(cats[0], sets, features, to_scan, ints, cat_bits)
    return found


@njit(cache=True, nogil=True)
def _record_split(table, batch, n_left, first, bynode, node_mask):
    """Write the splits of ``batch`` and its children to the table (and the children's
    keys, with ``bynode``; their feature masks, with ``node_mask``)."""
    ints, floats, stats, cand_left, _ = table
    split_nodes(ints, floats, stats, cand_left, batch, n_left, first)
    if bynode is not None:
        child_keys(bynode[0], batch, first)
    if node_mask is not None:
        inherit_mask(node_mask, batch, first)


@njit(cache=True, nogil=True)
def inherit_mask(node_mask, batch, first):
    """The children of a split batch (``first + 2i``, ``+ 1``) may split on what their
    parent may: the per-node seam of constraints on which features a path may use
    (a constraint narrows the children's rows here, from the parent's split feature)."""
    for i in range(batch.shape[0]):
        for side in range(2):
            node_mask[first + 2 * i + side] = node_mask[batch[i]]


@njit(cache=True, nogil=True)
def child_keys(keys, batch, first):
    """The keys of the children of a split batch (``first + 2i``, ``+ 1``): hashes of
    their parent's key and side. A node's key is so a function of its path from the
    root (and the tree's key), not of the order in which nodes are numbered: the same
    on any number of threads (leaves split ahead get other ids first) and shards."""
    for i in range(batch.shape[0]):
        for side in range(2):
            keys[first + 2 * i + side] = counter_hash(keys[batch[i]], STREAM_BYNODE, side, 1)


@njit(cache=True, nogil=True)
def node_features(key, n_pick, out):
    """``colsample_bynode``: ``out[a] = 1`` for the ``n_pick`` of the tree's features a
    node of key ``key`` may split on, 0 for the others: those of the ``n_pick`` smallest
    hashes of (key, a), ties by position -- a uniform draw without replacement that
    depends on the node's key only."""
    n_active = out.shape[0]
    u = np.empty(n_active, dtype=np.uint64)
    for a in range(n_active):
        u[a] = counter_hash(key, STREAM_BYNODE, a, 0)
    order = np.argsort(u, kind="mergesort")
    out[:] = 0
    for j in range(min(n_pick, n_active)):
        out[order[j]] = 1


@njit(cache=True, nogil=True)
def scan_mask(bynode, node_mask, nodes, n_active):
    """(m, n_active) uint8: the features each node of ``nodes`` may split on: those of its
    ``node_mask`` row and of its ``bynode`` draw (all of them without either; numba drops
    the code of a None). The sorted splitters' mask too."""
    mask = np.ones((nodes.shape[0], n_active), dtype=np.uint8)
    if node_mask is not None:
        for j in range(nodes.shape[0]):
            mask[j] = node_mask[nodes[j]]
    if bynode is not None:
        keys, n_pick = bynode
        drawn = np.empty(n_active, dtype=np.uint8)
        for j in range(nodes.shape[0]):
            node_features(keys[nodes[j]], n_pick, drawn)
            mask[j] &= drawn
    return mask


@njit(cache=True, nogil=True)
def nothing_pending():
    """An empty ``start`` of :func:`expand_tree`."""
    return (np.empty(0, dtype=np.int64), np.empty((2, 0), dtype=np.int64),
            np.empty(0, dtype=np.int64))


@njit(cache=True, nogil=True)
def _take_turns(batch, n_now, first, state, order):
    """The first ``n_now`` nodes of a split batch take their turn now: they leave the open
    set and their children (``first + 2i``, ``+ 1``) get the next ids in the order of
    one leaf at a time; the others are split ahead (``F_AHEAD``), their children wait."""
    slot_of, free, open_ids, counters = state
    take_batch(open_ids, counters, np.sort(batch[:n_now]))
    for i in range(batch.shape[0]):
        if i < n_now:
            if order is not None:
                for c in (first + 2 * i, first + 2 * i + 1):
                    order[0][c] = counters[ST_LOGICAL]
                    counters[ST_LOGICAL] += 1
        elif order is not None:
            counters[ST_AHEAD] += 1
            order[1][batch[i]] |= F_AHEAD
            order[1][first + 2 * i] |= F_WAITING
            order[1][first + 2 * i + 1] |= F_WAITING


@njit(cache=True, nogil=True)
def _remove_open(open_ids, counters, gone):
    """The leaves ``gone`` (ascending) leave the open set, the others keep their order:
    one pass, each open leaf looked up in ``gone`` (a depth-wise level of B nodes, one
    at a time, had cost B passes)."""
    n = 0
    for j in range(counters[ST_OPEN]):
        k = open_ids[j]
        at = np.searchsorted(gone, k)
        if at < gone.shape[0] and gone[at] == k:
            continue
        open_ids[n] = k
        n += 1
    counters[ST_OPEN] = n


@njit(cache=True, nogil=True)
def _leafwise_batch(policy, state, order, gain, ints, width):
    """The leaf-wise step: leaves split ahead take their turns while the best open leaf is
    one (no work: their children were scanned then, and now open in turn; after each turn
    the leaves it puts out of ``max_leaves``' reach are retired); then the best
    open leaf, and, when it is small (``policy[P_AHEAD_ROWS]`` rows or fewer), the next
    ``width - 1`` open leaves not yet split, to split ahead, as long as no more than
    ``2 (width - 1)`` leaves split ahead wait for their turn (``width``: the threads on
    one shard, a fixed width on several). Empty: the tree is finished.

    One leaf at a time is what decides: the leaves that take turns, their order and so
    the node ids are those of one leaf at a time (:func:`_in_order` renumbers the table
    by them at the end, and undoes splits ahead whose turn never came)."""
    slot_of, free, open_ids, counters = state
    logical, flags = order
    max_leaves = policy[P_MAX_LEAVES]
    while True:
        n_open = counters[ST_OPEN]
        if n_open == 0 or (max_leaves > 0 and counters[ST_LEAVES] >= max_leaves):
            return np.empty(0, dtype=np.int64)
        k = open_ids[_best_open(open_ids, n_open, gain, None)]
        if not flags[k] & F_AHEAD:
            break
        flags[k] &= ~F_AHEAD
        _remove_open(open_ids, counters, np.full(1, k, dtype=np.int64))
        counters[ST_LEAVES] += 1
        for c in (ints[ND_LEFT, k], ints[ND_RIGHT, k]):
            logical[c] = counters[ST_LOGICAL]
            counters[ST_LOGICAL] += 1
            flags[c] &= ~F_WAITING
            if slot_of[c] >= 0:  # scanned, with a candidate: open now
                open_ids[counters[ST_OPEN]] = c
                counters[ST_OPEN] += 1
        # a turn uses up a leaf of the budget: retire again before choosing, or the open
        # leaves (and the slots they hold) pass it by one for each turn taken here
        retire_beyond_budget(policy, gain, state, ints, flags)
    taken = np.zeros(n_open, dtype=np.uint8)
    waiting = 0  # leaves split ahead whose turn has not come: each holds one slot more
    for j in range(n_open):
        if open_ids[j] == k or flags[open_ids[j]] & F_AHEAD:
            taken[j] = 1
            waiting += open_ids[j] != k
    # at most 2 (width - 1) of them at once: the bound held_histograms counts
    n_ahead = max(0, min(width - 1, 2 * (width - 1) - waiting)) \
        if ints[ND_COUNT, k] <= policy[P_AHEAD_ROWS] else 0
    batch = np.empty(1 + n_ahead, dtype=np.int64)
    batch[0] = k
    m = 1
    while m <= n_ahead:
        j = _best_open(open_ids, n_open, gain, taken)
        if j < 0 or taken[j]:
            break
        taken[j] = 1
        batch[m] = open_ids[j]
        m += 1
    return batch[:m]


@njit(cache=True, nogil=True)
def _in_order(table, order, counters):
    """At the end of a tree: undo the splits ahead whose turn never came (their nodes are
    leaves again, their children dropped) and renumber the table in the order of one
    leaf at a time, which it then is, node for node."""
    ints, floats, stats, cand_left, _ = table
    logical, flags = order
    n = counters[ST_NODES]
    old_ints, old_floats = ints[:, :n].copy(), floats[:, :n].copy()
    old_stats, old_left = stats[:n].copy(), cand_left[:n].copy()
    for k in range(n):
        at = logical[k]
        if at < 0:
            continue
        ints[:, at] = old_ints[:, k]
        floats[:, at] = old_floats[:, k]
        stats[at] = old_stats[k]
        cand_left[at] = old_left[k]
        if flags[k] & F_AHEAD:
            counters[ST_UNDONE] += 1
        if flags[k] & F_AHEAD or old_ints[ND_LEFT, k] < 0:
            ints[ND_LEFT, at] = -1
            ints[ND_RIGHT, at] = -1
        else:
            ints[ND_LEFT, at] = logical[old_ints[ND_LEFT, k]]
            ints[ND_RIGHT, at] = logical[old_ints[ND_RIGHT, k]]
    counters[ST_NODES] = counters[ST_LOGICAL]


lock_cache_writes(globals())  # numba's cache, safe when processes compile at once
