"""The histogram split scan (numeric features; categorical ones in :mod:`.categorical`),
over the gain formulas of :mod:`.gain` (re-exported here).
"""
import numpy as np
from numba import njit, prange

from .._config import lock_cache_writes
from .categorical import scan_categorical
from .gain import (N_SETTINGS, S_ALPHA, S_G_UNIT, S_GAMMA, S_H_UNIT,  # noqa: F401 (re-exported)
                   S_LAMBDA, S_MAX_DELTA_STEP, S_MIN_CHILD_WEIGHT, S_MIN_DATA_IN_LEAF,
                   S_ROW_MAX, TIE_RTOL, _children_score, leaf_score, leaf_values, leaf_weight,
                   split_gain, split_settings, threshold_l1)
from .histogram import used_cells
from .intrinsics import SMALL_INT_BOUND, as_float, as_float_small, float_of_bits
from .splits import P_BIN, P_DEFAULT_LEFT, P_NEXT


#: (node, feature) scans per parallel task of :func:`find_best_splits`, which share one
#: scratch allocation: a quarter of the allocations, and still 14 tasks for the two
#: children of a split on 28 features.
SCAN_CHUNK = 4


#: Count given in the left sums to the boundary after an empty bin: below any
#: ``min_data_in_leaf`` even with the missing rows added (it splits as the one before).
_EMPTY = -(1 << 62)


@njit(cache=True, nogil=True)
def _left_sums(cell, nb, n, sums):
    """Pass 1 of the scans: exact left sums (the cells' type) of boundaries 0..n-1; the
    count of one after an empty bin, but the last, is ``_EMPTY``."""
    GL = cell[0, 0] - cell[0, 0]  # zero of the cells' type: sums stay exact integers
    HL = GL
    CL = GL
    for b in range(n):
        c = cell[b, 2]
        GL += cell[b, 0]
        HL += cell[b, 1]
        CL += c
        sums[0, b] = GL
        sums[1, b] = HL
        sums[2, b] = CL if c != 0 or b == nb - 1 else _EMPTY


@njit(cache=True, nogil=True, inline="always")
def _small_sums(Ct, Gt, Ht, row_max):
    """Whether every sum pass 2 converts to float is below ``SMALL_INT_BOUND`` (2**51), so
    that :func:`~boostwood._kernels.intrinsics.as_float_small` converts it exactly.

    A left sum (the missing rows on either side) is a sum of some of the node's ``Ct``
    rows, at most ``Ct * row_max`` in magnitude (``row_max`` from the settings: one
    row's bound, 0 when none is known), and a right one is ``T - left``, at most
    ``|T| + Ct * row_max``: with both terms below 2**50 each sum is below 2**51, for
    the gradients (``T = Gt``) and the hessians (``Ht``). With 31-bit rows that is every
    node of fewer than 2**19 rows; larger ones take the general conversion (the same
    floats)."""
    half = SMALL_INT_BOUND // 2
    return (row_max > 0.0) & (as_float(Ct) * row_max < half) & (abs(Gt) < half) & \
        (abs(Ht) < half)


@njit(cache=True, nogil=True, error_model="numpy")
def _score_candidates(sums, n, Gt, Ht, Ct, s, score_parent, Gm, Hm, Cm, work, row, small):
    """Pass 2 of the scans: for boundaries 0..n-1, with the missing sums (Gm, Hm, Cm)
    added to the left, the children score minus the parent's (``work[row]``) and whether
    the candidate meets the constraints (``work[row + 1]``, 1.0 or 0.0), with no branch,
    so that the compiler turns it into vector instructions. Each value is the one the
    scalar form computes (same operations in the same order, no fused multiply-add);
    ``error_model="numpy"`` lets a zero denominator give inf instead of raising, and such
    a value is never used (``_children_score``'s rule picks the other form). ``small``
    (:func:`_small_sums`) converts the sums by the short exact route: 0.55x pass 2's
    time on AVX2."""
    lam, mcw = s[S_LAMBDA], s[S_MIN_CHILD_WEIGHT]
    # counts are whole numbers, so count < mdl is count < ceil(mdl): an integer compare for
    # integer cells, not two int64 -> float conversions a boundary (no vector conversion
    # on AVX2)
    mdl = np.int64(np.ceil(min(s[S_MIN_DATA_IN_LEAF], 2.0 ** 62)))
    ug, uh = s[S_G_UNIT], s[S_H_UNIT]
    # with mcw > 0 and lambda >= 0 a valid candidate has h >= mcw > 0 on both sides, so
    # both denominators are positive and the common form is its score: that loop does
    # one division per boundary, the general one three
    if mcw > 0.0 and lam >= 0.0:
        for b in range(n):
            gl, gr, dl, dr, ok = _boundary(sums, b, Gt, Ht, Ct, Gm, Hm, Cm, ug, uh, lam, mcw,
                                           mdl, small)
            work[row, b] = (gl * gl * dr + gr * gr * dl) / (dl * dr) - score_parent
            work[row + 1, b] = ok
        return
    for b in range(n):
        gl, gr, dl, dr, ok = _boundary(sums, b, Gt, Ht, Ct, Gm, Hm, Cm, ug, uh, lam, mcw, mdl,
                                       small)
        both = (dl > 0.0) & (dr > 0.0)
        common = (gl * gl * dr + gr * gr * dl) / (dl * dr)
        apart = (gl * gl / dl if dl > 0.0 else 0.0) + (gr * gr / dr if dr > 0.0 else 0.0)
        work[row, b] = (common if both else apart) - score_parent
        work[row + 1, b] = ok


@njit(cache=True, nogil=True, inline="always", error_model="numpy")
def _boundary(sums, b, Gt, Ht, Ct, Gm, Hm, Cm, ug, uh, lam, mcw, mdl, small):
    """Boundary b of the scans' pass 2, the missing sums added to the left: the
    children's gradients and denominators, and 1.0 when the candidate meets the
    constraints (0.0 otherwise)."""
    GL, HL, CL = sums[0, b] + Gm, sums[1, b] + Hm, sums[2, b] + Cm
    # as_float: the conversions of int64 sums as vector code on AVX2 too (the same values);
    # as_float_small the same floats by fewer operations, for sums below 2**51
    if small:
        gl, gr = as_float_small(GL) * ug, as_float_small(Gt - GL) * ug
        hl, hr = as_float_small(HL) * uh, as_float_small(Ht - HL) * uh
    else:
        gl, gr = as_float(GL) * ug, as_float(Gt - GL) * ug
        hl, hr = as_float(HL) * uh, as_float(Ht - HL) * uh
    bad = (CL < mdl) | (Ct - CL < mdl) | (hl < mcw) | (hr < mcw)
    return gl, gr, hl + lam, hr + lam, 0.0 if bad else 1.0


@njit(cache=True, nogil=True, inline="always")
def _better(work, row, b, tol, gamma, best, best_bin):
    """The candidate's gain when it is valid and beats ``best`` by the tie rule, else -inf."""
    if work[row + 1, b] == 0.0:
        return -np.inf
    delta = work[row, b]
    if 0.5 * delta <= tol:
        return -np.inf
    gain = 0.5 * delta - gamma
    if best_bin < 0 or gain > best + TIE_RTOL * abs(best):
        return gain
    return -np.inf


@njit(cache=True, nogil=True)
def _pick(work, n, nb, missing, tol, gamma):
    """Pass 3 of the scans: (gain, bin, 1 if the missing rows go left) of the candidate
    the ordered scan picks, boundaries 0..n-1 (with missing values, each boundary but
    the last also with the missing rows left), by the tie rule of :func:`_better`.

    When exactly one candidate comes within ``3 * TIE_RTOL`` of the top gain
    (:func:`_top_bits`, :func:`_near_top`: vector code), that candidate is the pick:
    every earlier one is at least ``2 * TIE_RTOL`` below it, so the running best it meets
    is beaten by more than the rule's margin, and no later one can beat it. Otherwise
    the candidates are walked in order, as the rule defines."""
    m = min(n, nb - 1) if missing else 0  # boundaries with the missing rows left
    top_bits = max(_top_bits(work, 0, n, tol), _top_bits(work, 2, m, tol))
    if top_bits < 0:
        return -np.inf, -1, 0
    g_top = 0.5 * float_of_bits(top_bits) - gamma
    floor = g_top - 3.0 * TIE_RTOL * abs(g_top)
    c0, k0 = _near_top(work, 0, n, tol, gamma, floor)
    c2, k2 = _near_top(work, 2, m, tol, gamma, floor)
    if c0 + c2 == 1:
        return (g_top, k0, 0) if c0 == 1 else (g_top, k2, 1)
    best, best_bin, best_t = -np.inf, -1, 0
    for b in range(n):
        gain = _better(work, 0, b, tol, gamma, best, best_bin)
        if gain > -np.inf:
            best, best_bin, best_t = gain, b, 0
        if b < m:
            gain = _better(work, 2, b, tol, gamma, best, best_bin)
            if gain > -np.inf:
                best, best_bin, best_t = gain, b, 1
    return best, best_bin, best_t


@njit(cache=True, nogil=True)
def _top_bits(work, row, n, tol):
    """The int64 bits of the largest ``work[row, b]`` (b < n) of a valid candidate above
    ``tol`` (-1: none). Such a delta is positive (``0.5 * d > tol >= 0``), and positive
    doubles order as their bits, so the maximum is taken on integers: vector code, where
    a float maximum stays one compare at a time (1 ns per bin for the ordered walk, 0.23
    for this pass)."""
    bits = work.view(np.int64)
    top = np.int64(-1)
    for b in range(n):
        d = work[row, b]
        ok = (work[row + 1, b] != 0.0) & (0.5 * d > tol)
        top = max(top, bits[row, b] if ok else np.int64(-1))
    return top


@njit(cache=True, nogil=True)
def _near_top(work, row, n, tol, gamma, floor):
    """How many valid candidates of ``work[row, :n]`` above ``tol`` have a gain of at
    least ``floor``, and the first of them (n when none): two reductions, vector code."""
    count = 0
    first = n
    for b in range(n):
        d = work[row, b]
        near = (work[row + 1, b] != 0.0) & (0.5 * d > tol) & (0.5 * d - gamma >= floor)
        count += 1 if near else 0
        first = min(first, b if near else n)
    return count, first


@njit(cache=True, nogil=True)
def _scan_plain(cell, nb, Gt, Ht, Ct, s, score_parent, tol, best_left, sums, work):
    """:func:`scan_feature` without L1 penalty or step clipping: the same candidates,
    gains, order and tie rule as its one-pass loop, in three passes (:func:`_left_sums`,
    :func:`_score_candidates`, vectorized, then the ordered pick). ``sums``
    (3, n_bins_max) of the cells' type and ``work`` (4, n_bins_max) float64 are scratch.
    In :func:`find_best_splits` at one thread, 3.5 ns per bin instead of 5.6-7.4 for the
    one-pass loop, whose mixed integer / float tests and divisions ran one at a time."""
    gamma = s[S_GAMMA]
    Gm, Hm, Cm = cell[nb, 0], cell[nb, 1], cell[nb, 2]
    missing = Cm > 0
    n = nb if missing else nb - 1  # every row left is a split only with missing rows right
    _left_sums(cell, nb, n, sums)
    small = _small_sums(Ct, Gt, Ht, s[S_ROW_MAX])
    zero = Gm - Gm
    _score_candidates(sums, n, Gt, Ht, Ct, s, score_parent, zero, zero, zero, work, 0, small)
    if missing:  # the same boundaries with the missing rows on the left
        _score_candidates(sums, n, Gt, Ht, Ct, s, score_parent, Gm, Hm, Cm, work, 2, small)
    best, best_bin, best_t = _pick(work, n, nb, missing, tol, gamma)
    best_dl = False
    if best_bin >= 0:
        for k in range(3):
            best_left[k] = sums[k, best_bin] + cell[nb, k] * best_t
        if missing:
            best_dl = best_t == 1
        else:
            uh = s[S_H_UNIT]
            best_dl = sums[1, best_bin] * uh >= (Ht - sums[1, best_bin]) * uh
    return best, best_bin, best_dl


@njit(cache=True, nogil=True)
def scan_feature(cell, nb, Gt, Ht, Ct, s, best_left):
    """Best threshold of one feature of one node from its histogram (see
    :func:`scan_feature_into`, which takes its scratch from the caller)."""
    return scan_feature_into(cell, nb, Gt, Ht, Ct, s, best_left,
                             np.empty((3, cell.shape[0]), cell.dtype),
                             np.empty((4, cell.shape[0])))


@njit(cache=True, nogil=True)
def scan_feature_into(cell, nb, Gt, Ht, Ct, s, best_left, sums, work):
    """Best threshold of one feature of one node from its histogram.

    Scans the value bins left to right; at each boundary ``b`` (left child = bins
    0..b) the missing bin ``nb`` is tried on the right and, when the node has missing
    values, on the left (sparsity-aware split finding, Chen & Guestrin Alg. 3). When it
    has none, NaN at prediction time follows the child with the larger hessian sum.
    With missing values, "all values left, missing right" is tried too.

    The left sums run in the cells' own type (int64 fixed point in training, so
    the right child ``total - left`` is exact); each candidate is converted to
    float with the units of ``s`` only to be scored. Counts are whole numbers (rows,
    float cells too): the plain scan tests ``count < ceil(min_data_in_leaf)``.

    Parameters
    ----------
    cell : ndarray of shape (n_bins_max, 3), int64 (or float64)   # IN
    nb : int, value bins of this feature (the missing bin is ``nb``)
    Gt, Ht, Ct : node totals, of the cells' type
    s : ndarray of shape (N_SETTINGS,), float64   # IN, see :func:`split_settings`
    best_left : ndarray of shape (3,), of the cells' type   # OUT, (G, H, count) of the
        best left child
    sums, work : scratch, of shape (3, n_bins_max) of the cells' type and (4, n_bins_max)
        float64

    Returns
    -------
    (gain, bin, default_left); gain is -inf when no split satisfies the
    ``min_child_weight`` / ``min_data_in_leaf`` constraints or improves the
    objective by more than rounding noise.
    """
    lam, alpha, max_delta_step = s[S_LAMBDA], s[S_ALPHA], s[S_MAX_DELTA_STEP]
    gamma, mcw, mdl = s[S_GAMMA], s[S_MIN_CHILD_WEIGHT], s[S_MIN_DATA_IN_LEAF]
    ug, uh = s[S_G_UNIT], s[S_H_UNIT]
    score_parent = leaf_score(Gt * ug, Ht * uh, lam, alpha, max_delta_step)
    plain = alpha == 0.0 and max_delta_step <= 0.0
    tol = 1e-10 * abs(score_parent)  # a decrease at rounding level is not a split
    Gm, Hm, Cm = cell[nb, 0], cell[nb, 1], cell[nb, 2]
    if plain:
        return _scan_plain(cell, nb, Gt, Ht, Ct, s, score_parent, tol, best_left, sums, work)
    best, best_bin, best_dl = -np.inf, -1, False
    GL = HL = CL = cell[0, 0] - cell[0, 0]  # zero of the cells' type
    for b in range(nb):
        if cell[b, 2] == 0 and b < nb - 1:
            continue  # empty bin: same partition as the previous threshold (ties keep the first)
        GL += cell[b, 0]
        HL += cell[b, 1]
        CL += cell[b, 2]
        if b == nb - 1 and Cm <= 0:
            break  # every row left: not a split
        for try_left in range(2):
            if try_left == 1 and (Cm <= 0 or b == nb - 1):
                break
            gq = GL + Gm * try_left
            hq = HL + Hm * try_left
            cl = CL + Cm * try_left
            if cl < mdl or Ct - cl < mdl:
                continue
            hl = hq * uh
            hr = (Ht - hq) * uh
            if hl < mcw or hr < mcw:
                continue
            delta = _children_score(gq * ug, hl, (Gt - gq) * ug, hr, lam, alpha,
                                    max_delta_step, plain) - score_parent
            if 0.5 * delta <= tol:
                continue
            gain = 0.5 * delta - gamma
            # Ties (up to rounding) keep the first candidate, so that summing
            # the same rows in another order cannot change the chosen split.
            if best_bin < 0 or gain > best + TIE_RTOL * abs(best):
                best = gain
                best_bin = b
                if Cm > 0:
                    best_dl = try_left == 1
                else:
                    best_dl = hl >= hr
                best_left[0] = gq
                best_left[1] = hq
                best_left[2] = cl
    return best, best_bin, best_dl


@njit(cache=True, nogil=True)
def pick_best_features(gain, out_best):
    """Per node, the lowest feature position whose gain is the maximum up to TIE_RTOL (-1 = none).

    gain : ndarray of shape (n_nodes, n_active), float64   # IN, -inf = no split
    out_best : ndarray of shape (n_nodes,), int64   # OUT
    """
    for node in range(gain.shape[0]):
        top = -np.inf
        for a in range(gain.shape[1]):
            top = max(top, gain[node, a])
        best = -1
        if top > -np.inf:
            floor = top - TIE_RTOL * abs(top)
            for a in range(gain.shape[1]):
                if gain[node, a] >= floor:
                    best = a
                    break
        out_best[node] = best


@njit(cache=True, nogil=True, inline="always")
def _subtract_feature(hist, parent, child, f, n_bins):
    """``hist[parent, f] -= hist[child, f]`` over the feature's value bins and its missing
    bin (:func:`~boostwood._kernels.histogram.used_cells`; a build does not write the
    ones above, and no scan reads them), as one run of unit stride (vector code): a
    binary column's 3 cells of the grower's 257 (2 threads, 128 pairs: 40 binary features
    0.54x the time of :func:`find_best_splits`, 28 continuous and 40 binary 0.96x)."""
    n_cells = used_cells(n_bins, f, hist.shape[2]) * hist.shape[3]
    mine = hist[parent, f].reshape(hist.shape[2] * hist.shape[3])
    theirs = hist[child, f].reshape(hist.shape[2] * hist.shape[3])
    for c in range(n_cells):
        mine[c] -= theirs[c]


@njit(cache=True, nogil=True)
def _minus_slots(hist, slots, pairs, features, n_bins):
    """Per node of a scan, the slot to subtract from its own first (-1: none), through a
    table of the node holding each slot (linear in slots, nodes and pairs). A pair whose
    parent slot no node holds is subtracted here (serially: never in the loops, where
    the larger child of a pair is always scanned). Two nodes holding one slot, or two
    pairs with one parent, would subtract twice or lose one: an error."""
    minus = np.full(slots.shape[0], -1, dtype=np.int64)
    node_of = np.full(hist.shape[0], -1, dtype=np.int64)
    for node in range(slots.shape[0]):
        if node_of[slots[node]] >= 0:
            raise ValueError("two nodes of a scan hold one histogram slot")
        node_of[slots[node]] = node
    for p in range(pairs.shape[1]):
        node = node_of[pairs[0, p]]
        if node >= 0:
            if minus[node] >= 0:
                raise ValueError("two subtraction pairs share a parent slot")
            minus[node] = pairs[1, p]
            continue
        for f in features:
            _subtract_feature(hist, pairs[0, p], pairs[1, p], f, n_bins)
    return minus


@njit(parallel=True, cache=True, nogil=True)
def find_best_splits(hist, slots, pairs, totals, n_bins, features, feature_mask, settings,
                     out, cats=None):
    """Best split of every (node, feature) pair of a batch, in parallel (each node's best
    feature is then :func:`pick_best_features`, in :func:`boostwood._kernels.nodes.
    choose_gradient`), after the subtraction trick for the nodes that need it.

    ``pairs`` (parent slot, built child's slot) are subtracted in the same parallel
    region, feature by feature: the task that scans feature f of the node holding a
    pair's parent slot (the larger child, whose histogram it becomes) first subtracts
    the child's cells of f (every active feature, masked or not: the histogram is a
    parent's later). One parallel region a batch, not two, and each feature's cells are
    scanned while still in cache (a region costs 5.6-7.9 us on 16 threads,
    ``benchmarks/results/history/tree_profile_16cores.md``). A pair whose parent slot no node
    holds is subtracted first, on its own (:func:`boostwood._kernels.histogram.
    subtract_histograms` does the same sums on every cell a scan reads).

    Parameters
    ----------
    hist : ndarray of shape (n_slots, n_features, n_bins_max, 3), int64   # IN/OUT
    slots : ndarray of shape (n_nodes,), int64   # IN
    pairs : ndarray of shape (2, n_pairs), int64   # IN, (parent slot, child slot) to
        subtract, ``hist[parent] -= hist[child]``, before the parent's slot is scanned
    totals : ndarray of shape (n_nodes, 3), int64   # IN, fixed-point (G, H, count) per node
    n_bins : ndarray of shape (n_features,), int32   # IN
    features : ndarray of shape (n_active,), int64   # IN
    feature_mask : ndarray of shape (n_nodes, n_active), uint8   # IN, 0 = not a candidate
    settings : ndarray of shape (N_SETTINGS,), float64   # IN, see :func:`split_settings`
    out : tuple (gain, pick, left)   # OUT, as every scan kernel fills it
        (:mod:`boostwood._kernels.nodes`): gain (n_nodes, n_active) float64, -inf = none;
        pick (N_PICK, n_nodes, n_active) int64: the last bin left, -1 (no next code)
        and missing-go-left; left (n_nodes, n_active, 3) int64, fixed-point left sums
    cats : None (no categorical code is compiled), or (categorical (n_features,) uint8,
        category settings, sets (n_nodes, n_active, W) uint32 OUT): :func:`~boostwood.
        _kernels.categorical.scan_categorical` scans the features marked 1 (pick bin 0)
    """
    out_gain, out_pick, out_left = out
    n_nodes = slots.shape[0]
    n_active = features.shape[0]
    n_tasks = n_active * n_nodes
    # SCAN_CHUNK tasks at a time share one scan scratch (a work-size rule: the same
    # chunks on any machine); every task writes only its own outputs
    n_chunks = (n_tasks + SCAN_CHUNK - 1) // SCAN_CHUNK
    minus = _minus_slots(hist, slots, pairs, features, n_bins)
    # feature-major tasks; node-major with categorical features (dear scans, spread out)
    node_major = False
    if cats is not None:
        node_major = True
    for chunk in prange(n_chunks):
        sums = np.empty((3, hist.shape[2]), hist.dtype)
        work = np.empty((4, hist.shape[2]))
        for task in range(chunk * n_tasks // n_chunks, (chunk + 1) * n_tasks // n_chunks):
            a = task // n_nodes
            node = task % n_nodes
            if node_major:
                node, a = task // n_active, task % n_active
            if minus[node] >= 0:
                _subtract_feature(hist, slots[node], minus[node], features[a], n_bins)
            out_gain[node, a] = -np.inf
            out_pick[P_BIN, node, a] = -1
            out_pick[P_NEXT, node, a] = -1
            out_pick[P_DEFAULT_LEFT, node, a] = 0
            if feature_mask[node, a] == 0:
                continue
            f = features[a]
            if cats is not None:
                if cats[0][f] != 0:  # (outputs written here: a callee's writes may reorder)
                    gain_c, dl_c = scan_categorical(
                        hist[slots[node], f], n_bins[f], totals[node, 0], totals[node, 1],
                        totals[node, 2], settings, cats[1], out_left[node, a],
                        cats[2][node, a])
                    out_gain[node, a] = gain_c
                    out_pick[P_BIN, node, a] = 0
                    out_pick[P_DEFAULT_LEFT, node, a] = 1 if dl_c else 0
                    continue
            gain, b, dl = scan_feature_into(hist[slots[node], f], n_bins[f], totals[node, 0],
                                            totals[node, 1], totals[node, 2], settings,
                                            out_left[node, a], sums, work)
            out_gain[node, a] = gain
            out_pick[P_BIN, node, a] = b
            out_pick[P_DEFAULT_LEFT, node, a] = 1 if dl else 0


lock_cache_writes(globals())  # numba's cache, safe when processes compile at once
