"""Forest prediction over the forest's own bins: the fast path of ``Booster.predict``.

A numeric split sends a row right when ``x > threshold``. Collect, per feature, the
sorted distinct thresholds of every split in the forest (its *cuts*) and replace
``x`` by its bin, the number of cuts below it, and every split by the index of its
threshold among the cuts: ``x > cuts[j]`` exactly when ``bin(x) > j``. The rows of a
block are binned once (a branch-free binary search per feature) and the trees then
compare small integers, read from a block of one- or two-byte bins that stays in the
second-level cache, instead of doubles. Bins take one byte where no feature has more than
255 cuts (any forest grown on 256 bins or fewer), else two.

A feature of at most ``PADDED_CUTS - 1`` cuts (any forest grown on 256 bins or fewer)
has its cuts padded with +inf to ``PADDED_CUTS`` entries: +inf is below no value, so
the count is unchanged, and the search takes exactly eight steps whose offsets are
constants. The compiler unrolls those into a straight line of loads and compares, and
binning a row of 28 features took 0.24 us instead of 1.75 with the search whose
number of steps follows the feature's number of cuts (measured on this module's
kernels, 200k rows, one thread): binning had been a third of predicting 300 trees.

Each feature gets two bins per row, its two *slots*: the first holds NaN as 0 (below
every threshold bin: missing goes left), the second as the largest bin of the type, 255
or ``NAN_BIN`` = 2**16 - 1 (above every one: missing goes right); a value has the same
bin in both. A value may share its bin with NaN (below every cut, or above all 255 of a
feature's cuts in one byte): in the slot a split reads, both then go the same way at
every split on the feature. A split reads the slot of its ``default_left``, and a row
goes right exactly when that bin is greater than the split's threshold bin: missing
values follow ``default_left`` with no instruction of their own (on depth-8 trees the
one-slot step, which adds and masks a NaN flag, took 1.2x as long).

A node is one 64-bit entry, read with a single load: a 32-bit word in the low half and
its left child in the high half (see :func:`boostwood.tree.tree.binned_nodes`; words and
children in two arrays took 1.01-1.14x as long on 300-tree models). The word holds the
threshold bin in bits 0-15, a leaf flag at bit 16 and the slot from bit 17 on. A leaf's
threshold bin is 2**16 - 1, which no bin exceeds, and its left child is itself, so a step
taken at a leaf stays there. The right child is left + 1. Node ids are unsigned: with a
signed id the compiler adds a negative-index fix-up (three instructions) to every step.

The rows of a block walk a tree in three phases, without a branch on the data in the
first two. (0) The tree's top levels (``TOP_LEVELS``, fewer where ``steps`` is less) go
a level at a time over the whole block, in blocks of ``TOP_MIN_ROWS`` rows or more.
Their bins are kept twice, row-major and slot-major (one slot's bins of all the block's
rows side by side). Taken as a complete tree (:func:`boostwood.tree.tree.top_levels`),
level d has 2**d nodes, and each is one pass that compares a whole column of bins with
the node's threshold bin (64 one-byte bins per 512-bit instruction) and keeps the answer
for the rows standing at that node. No load waits for another, and where a row leaves
the top levels names its node. (1) Sixteen rows at a time (a last group of five to
sixteen runs on into the zero rows that pad the block to a multiple of 16) take the
tree's remaining steps (``steps`` less the top levels) in lock-step, so the processor
overlaps their chains of dependent loads. (The one unrolled group is inlined once: a
second one of eight rows for the last five to eight cost 6 s of the install's compile
and no measurable time.) A step (:func:`_step` and the functions it calls) is a
function compiled once and called, not inlined by numba: LLVM inlines it the same, and
numba's own inlining at each of its call sites in the walk (21 of the step, 8 more of
:func:`_next_any`) took the compile of a numeric forest's prediction kernels on an
empty cache from 9.4 to 15.1 s, and a categorical model's first prediction after the
install (its kernels compile then) from 8.6 to 32.2 s; the prediction times are equal
(0.94-1.04x, 500k-row, 1,000-row and one-row calls of four models).
``steps`` is the depth by which leaves hold ``1 - STRAGGLER_SHARE`` of the tree's cover
(see ``binned_nodes``): the full depth on balanced trees, about 4 on 255-leaf leaf-wise
trees whose deepest leaf is at about 23 but whose typical row stops at about 4. (2) Rows
not yet on a leaf (where ``steps`` is below the tree's depth, and the last one to four
rows of a block) are gathered into a list and go on four at a time until all four stand
on leaves. Walking four rows until all four were on leaves, as before, took 7.0 steps
per row and tree on the leaf-wise HIGGS model where 4.2 suffice. On the 500-tree HIGGS
models of ``benchmarks/bench_predict.py`` (2-core Zen 5 VM, 500k rows, one and two
threads, one run) the three phases with one-byte bins predicted 1.37-1.40x (depth-wise)
and 1.20-1.24x (leaf-wise) as fast as eight rows in lock-step from the root on two-byte
bins; calls of 20 to 1,000 rows took 0.5-1.06x as long.

Blocks of fewer than eight rows (every block of a call of up to 56 rows, which is cut into
up to eight blocks so that threads share it, and the last block of some longer calls)
cannot fill the lock-step: each of their rows walks eight trees at a time instead, until
all eight stand on leaves, which overlaps the trees' chains of loads the same way (calls
of 4 and 20 rows: the kernel in 0.5-0.7x the time on 200-tree HIGGS models).

Forests with category sets (``sets``; numeric forests compile none of this) take the
walk too, on data whose categorical features hold the codes of the model's dictionaries
or NaN (``Booster`` recodes every input). A categorical feature's cuts split its codes
where some set of the forest starts or ends a run of consecutive codes (so a 1,000-level
feature whose sets name a hundred categories takes about two hundred bins, one byte);
NaN is bin 0 of its low slot. A set of consecutive codes is then a run of bins ``lo ..
lo + span``, and a step stays one compare: the row goes right when ``bin - lo``
(unsigned: a bin below ``lo`` is a large number) exceeds ``span`` and the bin is at least
``z`` (1 where missing values go left), with ``lo`` = ``z`` = 0 at numeric splits. The
entry then holds the left child in bits 32-46, ``z`` at bit 47 and ``lo`` from bit 48.
One-vs-rest splits, the default, are all runs. Any other set has ``lo = NO_RUN`` and
words of its right-going bins; its step reads the bin's bit (a branch), and the top
levels read those bits in one pass per level. The top levels are ``TOP_LEVELS_SETS``
deep: a step costs more here than a numeric one, so more of it runs as vector compares.
On 100 depth-6 trees over 40k rows with one-vs-rest sets (2-core Zen 4 VM) the walk
took 1.0-1.1x the time of the same-size numeric model (1.05-1.25x with a 1,000-level
feature); with many-vs-many sets 2.7x. ``Booster`` therefore predicts forests with
category sets whose trees have at most 256 leaves by leaf masks
(:mod:`boostwood._kernels.predict_masks`, 1.0-1.4x); this walk takes the rest.

Each row adds its trees' leaf values in tree order to what ``out`` held, the same
additions as :func:`boostwood._kernels.predict.predict_raw`: results are equal
to the last bit, for float32 and float64 input alike (a float32 value is compared
with the float64 cut as it is with the float64 threshold).
"""
import numpy as np
from numba import njit, prange

from .._config import lock_cache_writes
from .binning import PADDED_EDGES, count_below_padded

#: The bin of a missing (NaN) value in a feature's second slot; cut indices stay below
#: it (at most 65,534 cuts).
NAN_BIN = 65535
#: A leaf's word: threshold bin NAN_BIN, which no bin exceeds, and the leaf flag.
LEAF = NAN_BIN | (1 << 16)
#: Most distinct thresholds one feature may have for the binned walk (else predict_raw).
MAX_CUTS = 65534
#: Entries of a feature's padded cuts (see the module docstring): the width of
#: Dataset binning's padded edges, searched by the same kernel.
PADDED_CUTS = PADDED_EDGES
#: Features the 15-bit slot field can name (two slots each).
MAX_FEATURES = 1 << 14
#: Share of a tree's cover allowed in leaves below its lock-step ``steps``; those rows
#: finish in the second phase. On the leaf-wise HIGGS model (500 trees of 255 leaves)
#: shares of 0.2, 0.25 and 0.3 predicted within 3 % of each other, 0.1 and 0.5 slower.
STRAGGLER_SHARE = 0.25
#: Most levels of a tree that the rows of a block take a level at a time, with vector
#: compares over the whole block (module docstring). Level d costs 2**d passes over the
#: block, each a compare of one-byte bins (64 rows per 512-bit instruction, 32 per
#: 256-bit one; half that with two-byte bins), against one dependent step (about 2
#: cycles) per row in the lock-step walk. On the depth-wise HIGGS model (2-core Zen 5 VM)
#: 3 and 5 levels predicted at 0.92x and 1.03x the speed of 4; 5 would cost twice as much
#: where vectors have 256 bits.
TOP_LEVELS = 4
#: TOP_LEVELS for forests with category sets, whose steps cost more than the numeric
#: compare in lock-step (see the module doc): on 100 depth-6 trees over 40k rows (3
#: numeric and 2 categorical features, 2-core Zen 4 VM) the walk took 7.1 ms with 6
#: top levels against 10.7 ms with 4 (the same trees' numeric twin: 6.5 and 7.1 ms).
TOP_LEVELS_SETS = 6
#: Fewer rows per block take TOP_LEVELS levels only: each position of a level costs a
#: pass, whose fixed cost a short block does not repay (1,000-row calls cut into blocks
#: of 125 rows took 1.08 ms for 100 depth-6 trees with 6 levels).
TOP_SETS_MIN_ROWS = 1024
assert max(TOP_LEVELS, TOP_LEVELS_SETS) <= 8, "a row's position in a level is a uint8"
#: Blocks of fewer rows walk every level in lock-step (and keep no slot-major bins): a
#: pass costs about as much over a short block as over a full vector of rows.
TOP_MIN_ROWS = 64
#: The bins of a block with top levels have a multiple of this many rows (zeros past its
#: last; a multiple of 16 without): one 512-bit vector of one-byte bins, so the passes of
#: the top levels end on a whole vector, and lock-step groups never run past them.
_PAD_ROWS = 64
#: Bytes of bins per row block, counted as four per used feature and row (two slots of
#: two bytes; blocks that keep both layouts hold twice that with two-byte bins): a quarter
#: of the 512 KiB-2 MiB second-level cache per core of current x86 and ARM processors,
#: so a block's bins stay there while every tree walks over it. Larger blocks spread
#: each tree's per-block work (the straggler list) over more rows: on the leaf-wise
#: HIGGS model 128 KiB blocks predicted 1.1x as fast as 32 KiB ones.
BLOCK_BYTES = 131072

_M16 = np.uint64(0xFFFF)
_S17 = np.uint64(17)
_S32 = np.uint64(32)
_LOW32 = np.uint64(0xFFFFFFFF)
_LEAF_FLAG = np.uint64(1 << 16)
_S5 = np.uint64(5)
_M5 = np.uint64(31)
_S16 = np.uint64(16)
_S15 = np.uint64(15)
_M15 = np.uint64(0x7FFF)
_ONE = np.uint64(1)
#: ``lo`` of a node whose category set is not a run of consecutive codes: its step
#: reads the set's bits (see the module doc).
NO_RUN = 0xFFFF
_NO_RUN = np.uint64(NO_RUN)


@njit(cache=True, nogil=True, inline="always")
def _block_rows(n_rows, n_used, n_threads):
    """Rows per block: at most BLOCK_BYTES of bins (16 to 4096 rows). From 64 rows per
    thread (``n_threads``; 0: not known), the blocks are as large as that allows, and as
    many as a multiple of the threads would need (the rounding of their size can leave
    fewer), so each thread walks every tree over as few blocks as possible: a block pays
    a fixed cost per tree (its top levels' passes, the start of its lock-step groups),
    which eight blocks of 125 rows paid four times a thread on 2 threads. On 2 threads
    (2-core Zen 4 VM) that took calls of 200 to 20,000 rows 0.66-0.96x the time (100
    depth-6 trees, numeric or with category sets; 100 HIGGS-like trees, 255 leaves or
    depth 8), the same at 200k. Shorter calls keep no more
    than an eighth of the rows a block (so up to eight blocks), so that threads do not
    idle: blocks of fewer than eight rows for calls of up to 56 rows."""
    rows = min(4096, max(16, BLOCK_BYTES // (4 * max(n_used, 1))))
    if n_threads > 0 and n_rows >= 64 * n_threads:
        blocks = n_threads * ((n_rows + n_threads * rows - 1) // (n_threads * rows))
        return (n_rows + blocks - 1) // blocks
    return max(1, min(rows, (n_rows + 7) // 8))


@njit(cache=True, nogil=True, inline="always")
def count_below(cuts, start, n, x):
    """Number of ``cuts[start:start + n]`` (sorted) strictly below ``x``; a binary
    search whose steps are selects, not branches."""
    base = start
    while n > 1:
        half = n >> 1
        base = base + half if cuts[base + half - 1] < x else base
        n -= half
    if n == 1 and cuts[base] < x:
        base += 1
    return base - start


@njit(cache=True, nogil=True, inline="always")
def bin_of(x, cuts, cut_start, f):
    """The bin of value ``x`` of feature ``f``: the number of its cuts below ``x`` (a
    padded segment by the unrolled search). NaN is below none; callers give it its own
    bin."""
    start, n = cut_start[f], cut_start[f + 1] - cut_start[f]
    if n == PADDED_CUTS:
        return np.int64(count_below_padded(cuts, start, x))
    return count_below(cuts, start, n, x)


@njit(cache=True, nogil=True, inline="always")
def _bin_block(X, lo, hi, cuts, cut_start, nan_bin, xb, xr):
    """Both slots of every used feature of rows lo..hi-1 (module docstring), row-major
    (``xr[i, s]``) and, unless ``xb`` has no columns, slot-major (``xb[s, i]``);
    ``nan_bin`` is the largest bin of their type."""
    columns = xb.shape[1] > 0
    for i in range(hi - lo):
        for f in range(cut_start.shape[0] - 1):
            x = X[lo + i, f]
            b = bin_of(x, cuts, cut_start, f)
            missing = x != x
            xr[i, 2 * f] = low = 0 if missing else b
            xr[i, 2 * f + 1] = high = nan_bin if missing else b
            if columns:
                xb[2 * f, i], xb[2 * f + 1, i] = low, high


@njit(cache=True, nogil=True)
def _next(e, xr):
    """The child (id within its tree, unsigned) that a row with slots ``xr`` takes from
    the node with entry ``e``."""
    w = e & _LOW32
    return (e >> _S32) + np.uint64(np.uint64(xr[w >> _S17]) > (w & _M16))


@njit(cache=True, nogil=True)
def _bit(W, a, v):
    """Bit ``v`` of the words from ``W[a]`` (a category set's right-going bits)."""
    v = np.uint64(v)
    return (np.uint64(W[np.uint64(a) + (v >> _S5)]) >> (v & _M5)) & np.uint64(1)


@njit(cache=True, nogil=True)
def _step(N, k, x, sets, base):
    """The child (id within the tree ``N``, unsigned) that a row with slots ``x`` takes
    from node ``k``: :func:`_next` in a numeric forest, :func:`_next_set` in one with
    category sets (``base``: the tree's first node in the forest)."""
    return _next_any(N[k], x, sets, base + k)


@njit(cache=True, nogil=True)
def _next_set(e, x, sets, k):
    """The step of a forest with category sets (module doc), from node ``k`` (id in the
    forest) whose entry is ``e``: right when the bin minus the node's ``lo`` (unsigned,
    so a bin below it is a large number) exceeds its threshold bin -- a numeric split
    (lo 0) or a run of consecutive codes -- and the bin is at least the node's ``z`` (1:
    missing, bin 0, goes left; else 0); or, at a node flagged ``lo = NO_RUN``, when the
    row's bin has its bit in the node's words."""
    w, hi = e & _LOW32, e >> _S32
    v = np.uint64(x[w >> _S17])
    lo, child = hi >> _S16, hi & _M15
    if lo == _NO_RUN:
        return child + _bit(sets[1], sets[0][k], v)
    return child + (np.uint64(v - lo > (w & _M16)) & np.uint64(v >= ((hi >> _S15) & _ONE)))


@njit(cache=True, nogil=True)
def _next_any(e, x, sets, k):
    """:func:`_step` for the entry ``e`` of node ``k`` (id in the forest)."""
    if sets is None:
        return _next(e, x)
    return _next_set(e, x, sets, k)


@njit(cache=True, nogil=True, inline="always")
def _plain(sets, t, q):
    """Is top position ``q`` of tree ``t`` a plain compare of the bin with the threshold
    bin (numeric forests; numeric nodes and leaves: lo and z 0)?"""
    if sets is None:
        return True
    return sets[3][t, q] == 0 and sets[4][t, q] == 0


@njit(cache=True, nogil=True, inline="always")
def _goes_right(col, th, sets, t, q):
    """Whether bin ``col`` goes right at top position ``q`` of tree ``t`` (threshold bin
    ``th``): ``col > th`` in a numeric forest; in one with category sets, after taking
    the position's ``lo`` off in the bins' type (module doc)."""
    if sets is None:
        return np.uint8(col > th)
    lo, z = sets[3][t, q], sets[4][t, q]
    return np.uint8(np.uint64(col - lo) & np.uint64(np.iinfo(sets[3].dtype).max) > th) \
        & np.uint8(col >= z)


@njit(cache=True, nogil=True, inline="always")
def _top_position(B, P, q, col, th, sets, t, pos, init):
    """Whether each row standing at top position ``q`` of its level (``P == q``; tree
    ``t``, position ``pos`` of its top levels) goes right, into ``B`` (set where
    ``init``, else or-ed in): a compare of a whole column of bins with the threshold bin,
    or :func:`_goes_right`'s where the position has a ``lo`` or ``z`` (a position whose
    set is not a run compares as a leaf: :func:`_top_with_sets` reads its bits)."""
    if init:
        for i in range(P.shape[0]):
            B[i] = 0
    if _plain(sets, t, pos):
        for i in range(P.shape[0]):
            B[i] |= np.uint8(P[i] == q) & np.uint8(col[i] > th)
    else:
        for i in range(P.shape[0]):
            B[i] |= np.uint8(P[i] == q) & _goes_right(col[i], th, sets, t, pos)


@njit(cache=True, nogil=True, inline="always")
def _top(xb, slot, thr, node, levels, P, B, K, sets, t):
    """The node (id within the tree) of each of the block's rows after the tree's top
    ``levels`` levels, into K, a level at a time over the whole block (module doc): ``P``
    holds each row's position in the level, ``B`` whether it goes right. ``thr`` has the
    bins' type, so the compares take as many rows per instruction as fit. The passes run
    over the padding rows too, so they end on a whole vector, and K (one entry per
    padded row) gets their nodes, which the lock-step groups read."""
    if levels == 0:
        for i in range(K.shape[0]):
            K[i] = node[0]
        return
    mp = xb.shape[1]
    if sets is None:
        _top_numeric(xb, slot, thr, levels, P, B)
    else:
        _top_with_sets(xb, slot, thr, levels, P, B, sets, t)
    first = (1 << levels) - 1
    for i in range(mp):
        K[i] = node[first + np.int64(P[i])]


@njit(cache=True, nogil=True, inline="always")
def _top_numeric(xb, slot, thr, levels, P, B):
    """:func:`_top`'s levels in a numeric forest: each position a compare of a whole
    column of bins with the threshold bin."""
    mp = xb.shape[1]
    col, th = xb[slot[0]], thr[0]
    for i in range(mp):
        P[i] = np.uint8(col[i] > th)
    for d in range(1, levels):
        first = (1 << d) - 1
        for p in range(1 << d):
            col, th = xb[slot[first + p]], thr[first + p]
            q = np.uint8(p)
            if p == 0:
                for i in range(mp):
                    B[i] = np.uint8(P[i] == q) & np.uint8(col[i] > th)
            else:
                for i in range(mp):
                    B[i] |= np.uint8(P[i] == q) & np.uint8(col[i] > th)
        for i in range(mp):
            P[i] = P[i] + P[i] + B[i]


@njit(cache=True, nogil=True, inline="always")
def _top_with_sets(xb, slot, thr, levels, P, B, sets, t):
    """:func:`_top`'s levels in a forest with category sets: per position a compare
    (:func:`_top_position`); every level's first position sets ``B``."""
    mp = xb.shape[1]
    for i in range(mp):
        P[i] = 0
    for d in range(levels):
        first = (1 << d) - 1
        other = False  # a position whose set is not a run
        for p in range(1 << d):
            _top_position(B, P, np.uint8(p), xb[slot[first + p]], thr[first + p], sets, t,
                          first + p, p == 0)
            other |= sets[2][t, first + p] != 0
        if other:  # one pass for all of them: each row reads its own position's bit
            for i in range(mp):  # (0 at other positions: their offset names zero words)
                pos = first + np.int64(P[i])
                B[i] |= np.uint8(_bit(sets[1], sets[2][t, pos], xb[slot[pos], i]))
        for i in range(mp):
            P[i] = P[i] + P[i] + B[i]


@njit(cache=True, nogil=True, inline="always")
def _lock_step(N, xr, i, steps, K, S, base):
    """Rows i..i+15 (of the row-major bins ``xr``) take ``steps`` steps from their nodes in
    K, back into K."""
    x0, x1, x2, x3 = xr[i + 0], xr[i + 1], xr[i + 2], xr[i + 3]
    x4, x5, x6, x7 = xr[i + 4], xr[i + 5], xr[i + 6], xr[i + 7]
    x8, x9, xa, xb = xr[i + 8], xr[i + 9], xr[i + 10], xr[i + 11]
    xc, xd, xe, xf = xr[i + 12], xr[i + 13], xr[i + 14], xr[i + 15]
    k0, k1, k2, k3, k4, k5, k6, k7 = \
        K[i + 0], K[i + 1], K[i + 2], K[i + 3], K[i + 4], K[i + 5], K[i + 6], K[i + 7]
    k8, k9, ka, kb, kc, kd, ke, kf = \
        K[i + 8], K[i + 9], K[i + 10], K[i + 11], K[i + 12], K[i + 13], K[i + 14], K[i + 15]
    for _ in range(steps):
        k0, k1 = _step(N, k0, x0, S, base), _step(N, k1, x1, S, base)
        k2, k3 = _step(N, k2, x2, S, base), _step(N, k3, x3, S, base)
        k4, k5 = _step(N, k4, x4, S, base), _step(N, k5, x5, S, base)
        k6, k7 = _step(N, k6, x6, S, base), _step(N, k7, x7, S, base)
        k8, k9 = _step(N, k8, x8, S, base), _step(N, k9, x9, S, base)
        ka, kb = _step(N, ka, xa, S, base), _step(N, kb, xb, S, base)
        kc, kd = _step(N, kc, xc, S, base), _step(N, kd, xd, S, base)
        ke, kf = _step(N, ke, xe, S, base), _step(N, kf, xf, S, base)
    K[i + 0], K[i + 1], K[i + 2], K[i + 3], K[i + 4], K[i + 5], K[i + 6], K[i + 7] = \
        k0, k1, k2, k3, k4, k5, k6, k7
    K[i + 8], K[i + 9], K[i + 10], K[i + 11], K[i + 12], K[i + 13], K[i + 14], K[i + 15] = \
        k8, k9, ka, kb, kc, kd, ke, kf


@njit(cache=True, nogil=True, inline="always")
def _to_leaves(N, xr, L, j, K, S, base):
    """Rows L[j..j+3] go on from their nodes in K until all four stand on leaves."""
    i0, i1, i2, i3 = L[j], L[j + 1], L[j + 2], L[j + 3]
    x0, x1, x2, x3 = xr[i0], xr[i1], xr[i2], xr[i3]
    k0, k1, k2, k3 = K[i0], K[i1], K[i2], K[i3]
    while (N[k0] & N[k1] & N[k2] & N[k3] & _LEAF_FLAG) == 0:
        k0, k1 = _step(N, k0, x0, S, base), _step(N, k1, x1, S, base)
        k2, k3 = _step(N, k2, x2, S, base), _step(N, k3, x3, S, base)
    K[i0], K[i1], K[i2], K[i3] = k0, k1, k2, k3


@njit(cache=True, nogil=True, inline="always")
def _to_leaf(N, x, k, S, base):
    """The leaf (id within the tree ``N``) that the row with slots ``x`` reaches from
    node ``k``."""
    while (N[k] & _LEAF_FLAG) == 0:
        k = _step(N, k, x, S, base)
    return k


@njit(cache=True, nogil=True)
def _walk_tree(N, xr, m, steps, complete, K, L, S, base):
    """The leaf (id within the tree) of each of the block's m rows, from their nodes in
    K (after the top levels), into K: sixteen rows at a time take ``steps`` steps in
    lock-step, a last group of five to sixteen running on into the padding rows (whose
    nodes K also holds); the rows then not on a leaf (the last one to four, and none else
    where ``complete``: the tree's depth reached) go on four at a time.

    Compiled on its own, not inlined into the block's walk: numba then optimises the
    unrolled lock-step group once per walk instead of inside the whole block's code,
    which took the numeric walk's compile from 18.2 to 11.0 s (with category sets 23.7 to
    15.1 s); the call once per tree and block costs 0-7 % on calls of 100 to 200 rows and
    nothing measurable from 1,000 (100 HIGGS-like trees, 2-core Zen 4)."""
    i = 0
    while i + 4 < m:  # (a last group of five to sixteen rows runs on into the padding)
        _lock_step(N, xr, i, steps, K, S, base)
        i += 16
    if complete and i >= m:
        return
    n = 0
    for r in range(i if complete else 0, m):  # the rows not on a leaf, without a branch
        L[n] = r
        n += np.int64((N[K[r]] & _LEAF_FLAG) == 0)
    j = 0
    while j + 4 <= n:
        _to_leaves(N, xr, L, j, K, S, base)
        j += 4
    for q in range(j, n):
        r = L[q]
        K[r] = _to_leaf(N, xr[r], K[r], S, base)


@njit(cache=True, nogil=True, inline="always")
def _eight_trees(nodes, x, b0, b1, b2, b3, b4, b5, b6, b7, S):
    """Global leaf ids of the row with slots ``x`` in the eight trees at b0..b7, walked
    in lock-step until all eight stand on leaves (a leaf's step stays on it)."""
    k0 = k1 = k2 = k3 = k4 = k5 = k6 = k7 = np.uint64(0)
    e0, e1, e2, e3 = nodes[b0], nodes[b1], nodes[b2], nodes[b3]
    e4, e5, e6, e7 = nodes[b4], nodes[b5], nodes[b6], nodes[b7]
    while (e0 & e1 & e2 & e3 & e4 & e5 & e6 & e7 & _LEAF_FLAG) == 0:
        k0, k1 = _next_any(e0, x, S, b0 + k0), _next_any(e1, x, S, b1 + k1)
        k2, k3 = _next_any(e2, x, S, b2 + k2), _next_any(e3, x, S, b3 + k3)
        k4, k5 = _next_any(e4, x, S, b4 + k4), _next_any(e5, x, S, b5 + k5)
        k6, k7 = _next_any(e6, x, S, b6 + k6), _next_any(e7, x, S, b7 + k7)
        e0, e1, e2, e3 = nodes[b0 + k0], nodes[b1 + k1], nodes[b2 + k2], nodes[b3 + k3]
        e4, e5, e6, e7 = nodes[b4 + k4], nodes[b5 + k5], nodes[b6 + k6], nodes[b7 + k7]
    return b0 + k0, b1 + k1, b2 + k2, b3 + k3, b4 + k4, b5 + k5, b6 + k6, b7 + k7


@njit(cache=True, nogil=True)
def _few_rows(nodes, xr, m, value, tree_offsets, tree_group, acc, sets):
    """Blocks of fewer than eight rows (short calls, see :func:`_block_rows`, and some
    calls' last block): each row walks eight trees at a time, so the trees' chains of
    dependent loads overlap as sixteen rows' do in :func:`_lock_step`, and adds their leaf
    values in tree order (the same additions)."""
    n_trees = tree_offsets.shape[0]
    for i in range(m):
        x = xr[i]
        t = 0
        while t + 8 <= n_trees:
            leaves = _eight_trees(nodes, x, np.uint64(tree_offsets[t]),
                                  np.uint64(tree_offsets[t + 1]), np.uint64(tree_offsets[t + 2]),
                                  np.uint64(tree_offsets[t + 3]), np.uint64(tree_offsets[t + 4]),
                                  np.uint64(tree_offsets[t + 5]), np.uint64(tree_offsets[t + 6]),
                                  np.uint64(tree_offsets[t + 7]), sets)
            for j in range(8):
                acc[i, tree_group[t + j]] += value[leaves[j]]
            t += 8
        for u in range(t, n_trees):
            base = tree_offsets[u]
            leaf = _to_leaf(nodes[base:], x, np.uint64(0), sets, np.uint64(base))
            acc[i, tree_group[u]] += value[base + leaf]


@njit(cache=True, nogil=True, inline="always")
def _many_rows(nodes, xb, xr, steps, depth, top_slot, top_thr, top_node, value,
               tree_offsets, tree_group, acc, sets):
    """Blocks of eight rows or more: a tree at a time (its nodes stay cached), its top
    levels a level at a time (:func:`_top`), then its rows in lock-step
    (:func:`_walk_tree`)."""
    m = acc.shape[0]
    K = np.empty(xr.shape[0], dtype=np.uint64)
    L = np.empty(m, dtype=np.int64)
    P = np.empty(xb.shape[1], dtype=np.uint8)
    B = np.empty(xb.shape[1], dtype=np.uint8)
    n_top = 0  # the top levels the arrays hold: 2**n_top - 1 positions
    while (1 << n_top) - 1 < top_slot.shape[1]:
        n_top += 1
    for t in range(tree_offsets.shape[0]):
        base, g = tree_offsets[t], tree_group[t]
        V = value[base:]
        levels = min(n_top if m >= TOP_SETS_MIN_ROWS else TOP_LEVELS, steps[t]) \
            if xb.shape[1] else 0
        _top(xb, top_slot[t], top_thr[t], top_node[t], levels, P, B, K, sets, t)
        _walk_tree(nodes[base:], xr, m, steps[t] - levels, steps[t] >= depth[t], K, L,
                   sets, np.uint64(base))
        for i in range(m):
            acc[i, g] += V[K[i]]


@njit(parallel=True, cache=True, nogil=True)
def predict_binned(X, cuts, cut_start, nodes, steps, depth, top_slot, top_thr, top_node,
                   value, tree_offsets, tree_group, out, sets=None, n_threads=0):
    """Add every tree's leaf value to ``out[:, group]``; equal to
    :func:`boostwood._kernels.predict.predict_raw` (with ``sets``: on data coded by the
    model's dictionaries).

    X : ndarray of shape (n_rows, n_features), float32 or float64   # IN
    cuts : ndarray, float64; each feature's sorted distinct thresholds, concatenated   # IN
    cut_start : ndarray of shape (n_used + 1,), int64; feature f's cuts are
        ``cuts[cut_start[f]:cut_start[f + 1]]``; features from n_used on are in no split   # IN
    nodes : ndarray of shape (n_nodes_total,), uint64; per node its word (module doc) in
        the low 32 bits and its left child, within the tree, in the high 32   # IN
    steps : ndarray of shape (n_trees,), int64; the lock-step steps of each tree (module
        doc); any value from 0 to its depth gives the same result   # IN
    depth : ndarray of shape (n_trees,), int64; the tree's deepest leaf   # IN
    top_slot, top_thr : ndarray of shape (n_trees, 2**L - 1), uint16 / uint8 or uint16;
        the splits of each tree's top L levels (``TOP_LEVELS``, or ``TOP_LEVELS_SETS``
        in a forest with category sets) as a complete tree, level by level
        (:func:`boostwood.tree.tree.top_levels`); ``top_thr``'s type is the bins'   # IN
    top_node : ndarray of shape (n_trees, 2**(L + 1) - 1), uint64; the node (id
        within the tree) at each position of them and of the level below   # IN
    value : ndarray of shape (n_nodes_total,), float64   # IN
    tree_offsets, tree_group : ndarray of shape (n_trees,), int64   # IN
    out : ndarray of shape (n_rows, n_groups), float64   # IN/OUT, margins to add to
    sets : None (numeric forests: numba compiles no set code), or the category sets of
        a forest with categorical splits (module doc): (per-node offset into the words,
        uint32 (n_nodes_total,); the words, uint32; the offsets of each tree's top
        positions, uint32, and their lo and z, in the bins' type (n_trees, 2**L - 1))   # IN
    n_threads : int, the threads the call runs on (``numba.get_num_threads()``), which
        sizes its blocks (:func:`_block_rows`; 0: not known); any value gives the same
        result   # IN
    """
    n_rows = X.shape[0]
    n_used = cut_start.shape[0] - 1
    size = _block_rows(n_rows, n_used, n_threads)
    for b in prange((n_rows + size - 1) // size):
        lo, hi = b * size, min((b + 1) * size, n_rows)
        xb, xr = _block_bins(X, lo, hi, cuts, cut_start, top_thr)
        _walk_block(xb, xr, lo, hi - lo, nodes, steps, depth, top_slot, top_thr, top_node,
                    value, tree_offsets, tree_group, out, sets)


@njit(cache=True, nogil=True)
def _block_bins(X, lo, hi, cuts, cut_start, top_thr):
    """Both layouts of the bins of rows lo..hi-1 (:func:`_bin_block`), padded: the one
    part of a block's work that reads ``X``, so that float32 and float64 input share
    :func:`_walk_block` (one compilation of the walk for both; numba's passes over a
    parallel loop's body cost more the larger it is)."""
    n_used = cut_start.shape[0] - 1
    m = hi - lo
    top = m >= TOP_MIN_ROWS
    pad = _PAD_ROWS if top else 16  # whole vectors for the top levels, or lock-step groups
    mp = (m + pad - 1) // pad * pad
    xb = np.empty((2 * n_used, mp if top else 0), dtype=top_thr.dtype)
    xr = np.empty((mp, 2 * n_used), dtype=top_thr.dtype)
    xb[:, m:] = 0
    xr[m:] = 0
    _bin_block(X, lo, hi, cuts, cut_start, np.iinfo(top_thr.dtype).max, xb, xr)
    return xb, xr


@njit(cache=True, nogil=True)
def _walk_block(xb, xr, lo, m, nodes, steps, depth, top_slot, top_thr, top_node, value,
                tree_offsets, tree_group, out, sets):
    """Add the leaf values of the block of m rows from ``lo``, binned into ``xb`` /
    ``xr``, to ``out``, in tree order."""
    n_groups = out.shape[1]
    acc = np.empty((m, n_groups), dtype=np.float64)
    for i in range(m):
        for g in range(n_groups):
            acc[i, g] = out[lo + i, g]
    if m < 8:
        _few_rows(nodes, xr, m, value, tree_offsets, tree_group, acc, sets)
    else:
        _many_rows(nodes, xb, xr, steps, depth, top_slot, top_thr, top_node, value,
                   tree_offsets, tree_group, acc, sets)
    for i in range(m):
        for g in range(n_groups):
            out[lo + i, g] = acc[i, g]


lock_cache_writes(globals())  # numba's cache, safe when processes compile at once
