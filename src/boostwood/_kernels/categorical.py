"""The split scan of a categorical feature, from its histogram.

A categorical feature of k categories is binned by identity (category c in bin c, the
missing bin k; :mod:`boostwood.data.binning`), so its histogram holds the (G, H, count)
of each category. A split sends a *set* of categories left (and the missing rows the
learned way); everything else -- categories the node's rows do not hold, and at
prediction unseen ones coded missing -- follows the rule of
:func:`boostwood._kernels.splits.goes_left`.

* **One-vs-rest** when the feature has at most ``max_cat_to_onehot`` categories: each
  category the node holds, alone, against the rest (LightGBM's and XGBoost's one-hot
  mode), scored with ``lambda``.
* **Many-vs-many** above it: the node's categories sorted by ``G / (H + cat_smooth)``
  (ascending; ties by code, a stable order), then every prefix of that order is a
  candidate left set (Fisher 1958, and CART's ordering: for squared error the best
  binary partition is a prefix of the categories sorted by mean response; ``G / H`` is
  a Newton step's analogue). Regularised as LightGBM's: ``cat_l2`` is added to
  ``lambda`` in the children's scores (not the parent's), the smaller side holds at
  most ``max_cat_threshold`` categories, and each side's categories hold at least
  ``min_data_per_group`` rows; a category of fewer than ``min_data_per_category`` rows
  in the node is no candidate and stays right (LightGBM hides this filter in
  ``cat_smooth``, on counts estimated from hessians; here it is its own, on rows).

Each candidate is tried with the missing rows right and, when the node has some, left;
the best one by the numeric scan's tie rule (a candidate must beat the best so far by
``TIE_RTOL``; the earlier one wins ties), so the split depends on the sums only, never
on the order of rows, threads or shards. Sums are the histogram's exact integers; they
are converted to float only to be scored.
"""
import numpy as np
from numba import njit

from .._config import lock_cache_writes
from .gain import (S_ALPHA, S_G_UNIT, S_GAMMA, S_H_UNIT, S_LAMBDA, S_MAX_DELTA_STEP,
                   S_MIN_CHILD_WEIGHT, S_MIN_DATA_IN_LEAF, TIE_RTOL, _children_score,
                   leaf_score)
from .splits import CATEGORICAL, SP_CAT_LEN, SP_CAT_START, SP_FEATURE, SP_KIND

ND_FEATURE, ND_KIND, ND_CAT_START, ND_CAT_LEN = SP_FEATURE, SP_KIND, SP_CAT_START, SP_CAT_LEN

#: Named cells of the categorical settings array (:func:`category_settings`).
CS_ONEHOT_MAX, CS_SMOOTH, CS_L2, CS_MAX_THRESHOLD, CS_MIN_GROUP, CS_MIN_CATEGORY = range(6)
N_CATEGORY_SETTINGS = 6


def category_settings(max_cat_to_onehot, cat_smooth, cat_l2, max_cat_threshold,
                      min_data_per_group, min_data_per_category=0):
    """The float64 settings array of :func:`scan_categorical`."""
    cs = np.empty(N_CATEGORY_SETTINGS)
    cs[CS_ONEHOT_MAX], cs[CS_SMOOTH], cs[CS_L2] = max_cat_to_onehot, cat_smooth, cat_l2
    cs[CS_MAX_THRESHOLD], cs[CS_MIN_GROUP] = max_cat_threshold, min_data_per_group
    cs[CS_MIN_CATEGORY] = min_data_per_category
    return cs


@njit(cache=True, nogil=True, inline="always")
def _key(cell, c, ug, uh, smooth):
    """The sort key of category c: G / (H + smooth) (0 where that has no denominator)."""
    d = cell[c, 1] * uh + smooth
    return (cell[c, 0] * ug) / d if d > 0.0 else 0.0


@njit(cache=True, nogil=True)
def _extremes(cell, nb, ug, uh, smooth, m, min_count, totals):
    """The node's candidate categories (at least ``max(min_count, 1)`` rows) of the ``m``
    smallest and of the ``m`` largest sort keys, each list ascending in the order (key,
    code) -- the first and the last ``m`` of the stable sort of every candidate, without
    sorting them all: a category enters a list only when it beats its worst entry (O(nb)
    compares, few inserts). ``totals`` (3,) gets the candidates' (G, H, count) sums.
    Returns (small codes, small count, large codes, large count, candidates)."""
    small = np.empty(m, dtype=np.int64)
    large = np.empty(m, dtype=np.int64)
    sk = np.empty(m)
    lk = np.empty(m)
    ns = nl = n = 0
    totals[:] = 0
    for c in range(nb):
        if cell[c, 2] <= 0 or cell[c, 2] < min_count:
            continue
        n += 1
        totals[0] += cell[c, 0]
        totals[1] += cell[c, 1]
        totals[2] += cell[c, 2]
        k = _key(cell, c, ug, uh, smooth)
        # codes arrive ascending, so a tie on the key puts c after the entries it ties with
        if ns < m or k < sk[ns - 1]:
            i = min(ns, m - 1)
            while i > 0 and sk[i - 1] > k:
                sk[i], small[i] = sk[i - 1], small[i - 1]
                i -= 1
            sk[i], small[i] = k, c
            ns = min(ns + 1, m)
        if nl < m or k >= lk[0]:
            if nl == m:  # drop the smallest entry, shift the rest down to make room
                for i in range(m - 1):
                    lk[i], large[i] = lk[i + 1], large[i + 1]
                nl -= 1
            i = nl
            while i > 0 and lk[i - 1] > k:
                lk[i], large[i] = lk[i - 1], large[i - 1]
                i -= 1
            lk[i], large[i] = k, c
            nl += 1
    return small, ns, large, nl, n


@njit(cache=True, nogil=True)
def scan_categorical(cell, nb, Gt, Ht, Ct, s, cs, best_left, bits):
    """Best category set of one categorical feature of one node (see the module
    docstring); the same outputs as :func:`boostwood._kernels.split.scan_feature_into`.

    cell : (n_bins_max, 3) int64 (or float64) histogram of the feature   # IN
    nb : int, its categories (the missing bin is ``nb``); Gt, Ht, Ct : the node's totals
    s : split settings (:func:`boostwood._kernels.gain.split_settings`); cs : category
        settings (:func:`category_settings`)   # IN
    best_left : (3,) of the cells' type   # OUT, (G, H, count) of the best left child
    bits : uint32 words, empty or at least ``ceil(nb / 32)``   # OUT when not empty: the
        best left set, one bit per category (other words zeroed)
    Returns (gain, default_left); gain -inf when no candidate is valid.
    """
    if nb <= cs[CS_ONEHOT_MAX]:
        return _one_vs_rest(cell, nb, Gt, Ht, Ct, s, best_left, bits)
    return _partition(cell, nb, Gt, Ht, Ct, s, cs, best_left, bits)


@njit(cache=True, nogil=True, inline="always")
def _try(GL, HL, CL, Gm, Hm, Cm, Gt, Ht, Ct, s, lam_kids, score_parent, tol, best,
         best_found, best_left):
    """Score a left set with the missing rows right, then left; returns (best gain, 0 or
    1 for the missing side of the best, whether this set took the lead)."""
    alpha, mds, gamma = s[S_ALPHA], s[S_MAX_DELTA_STEP], s[S_GAMMA]
    mcw, mdl, ug, uh = s[S_MIN_CHILD_WEIGHT], s[S_MIN_DATA_IN_LEAF], s[S_G_UNIT], s[S_H_UNIT]
    plain = alpha == 0.0 and mds <= 0.0
    side, took = 0, False
    for t in range(2):
        if t == 1 and Cm <= 0:
            break
        gq, hq, cl = GL + Gm * t, HL + Hm * t, CL + Cm * t
        if cl < mdl or Ct - cl < mdl:
            continue
        hl, hr = hq * uh, (Ht - hq) * uh
        if hl < mcw or hr < mcw:
            continue
        delta = _children_score(gq * ug, hl, (Gt - gq) * ug, hr, lam_kids, alpha, mds,
                                plain) - score_parent
        if 0.5 * delta <= tol:
            continue
        gain = 0.5 * delta - gamma
        if not (best_found or took) or gain > best + TIE_RTOL * abs(best):
            best, side, took = gain, t, True
            best_left[0], best_left[1], best_left[2] = gq, hq, cl
    return best, side, took


@njit(cache=True, nogil=True, inline="always")
def _parent(Gt, Ht, s):
    """(the parent's score, the rounding tolerance of a decrease)."""
    score = leaf_score(Gt * s[S_G_UNIT], Ht * s[S_H_UNIT], s[S_LAMBDA], s[S_ALPHA],
                       s[S_MAX_DELTA_STEP])
    return score, 1e-10 * abs(score)


@njit(cache=True, nogil=True, inline="always")
def _default_left(Cm, side, best_left, Ht, uh):
    """Missing rows' side: learned when the node has some, else the heavier child."""
    if Cm > 0:
        return side == 1
    return best_left[1] * uh >= (Ht - best_left[1]) * uh


@njit(cache=True, nogil=True)
def _one_vs_rest(cell, nb, Gt, Ht, Ct, s, best_left, bits):
    """Each category the node holds, alone, against the rest (ascending codes)."""
    score_parent, tol = _parent(Gt, Ht, s)
    Gm, Hm, Cm = cell[nb, 0], cell[nb, 1], cell[nb, 2]
    best, best_c, best_side = -np.inf, -1, 0
    for c in range(nb):
        if cell[c, 2] <= 0:
            continue
        best, side, took = _try(cell[c, 0], cell[c, 1], cell[c, 2], Gm, Hm, Cm, Gt, Ht, Ct,
                                s, s[S_LAMBDA], score_parent, tol, best, best_c >= 0,
                                best_left)
        if took:
            best_c, best_side = c, side
    if best_c < 0:
        return -np.inf, False
    if bits.shape[0] > 0:
        bits[:] = 0
        bits[best_c >> 5] |= np.uint32(1) << np.uint32(best_c & 31)
    return best, _default_left(Cm, best_side, best_left, Ht, s[S_H_UNIT])


@njit(cache=True, nogil=True)
def _partition(cell, nb, Gt, Ht, Ct, s, cs, best_left, bits):
    """Prefixes of the categories sorted by G / (H + cat_smooth): L categories left for
    L = 1, 2, ..., n - 1 (and n, the missing rows right, when there are some), of which
    only those with at most ``max_cat_threshold`` categories on the smaller side are
    candidates -- so only the first and the last ``max_cat_threshold`` of the order are
    needed (:func:`_extremes`); a long prefix's sums are the categories' total minus its
    complement's (exact integers)."""
    score_parent, tol = _parent(Gt, Ht, s)
    lam_kids = s[S_LAMBDA] + cs[CS_L2]
    T = np.int64(min(cs[CS_MAX_THRESHOLD], nb))
    totals = np.empty(3, dtype=cell.dtype)
    small, ns, large, nl, n = _extremes(cell, nb, s[S_G_UNIT], s[S_H_UNIT], cs[CS_SMOOTH], T,
                                        cs[CS_MIN_CATEGORY], totals)
    Gm, Hm, Cm = cell[nb, 0], cell[nb, 1], cell[nb, 2]
    Gu, Hu, Cu = totals[0], totals[1], totals[2]  # the candidates' totals
    C_cats = Ct - Cm  # every category's rows: the others always go right
    zero = cell[0, 0] - cell[0, 0]
    GS = HS = CS = zero  # sums of small[:L]
    best, best_L, best_side = -np.inf, -1, 0
    last = n if Cm > 0 or C_cats > Cu else n - 1  # all candidates left: a split then
    for L in range(1, last + 1):
        if L <= ns:
            c = small[L - 1]
            GS += cell[c, 0]
            HS += cell[c, 1]
            CS += cell[c, 2]
            GL, HL, CL = GS, HS, CS
        elif n - L <= nl:
            GL, HL, CL = Gu, Hu, Cu  # every category but the n - L largest
            for i in range(nl - (n - L), nl):
                c = large[i]
                GL -= cell[c, 0]
                HL -= cell[c, 1]
                CL -= cell[c, 2]
        else:
            continue
        if CL < cs[CS_MIN_GROUP] or (C_cats - CL < cs[CS_MIN_GROUP] and C_cats > CL):
            continue
        best, side, took = _try(GL, HL, CL, Gm, Hm, Cm, Gt, Ht, Ct, s, lam_kids,
                                score_parent, tol, best, best_L >= 0, best_left)
        if took:
            best_L, best_side = L, side
    if best_L < 0:
        return -np.inf, False
    if bits.shape[0] > 0:
        _write_set(cell, nb, small, ns, large, nl, n, best_L, bits, cs[CS_MIN_CATEGORY])
    return best, _default_left(Cm, best_side, best_left, Ht, s[S_H_UNIT])


@njit(cache=True, nogil=True)
def _write_set(cell, nb, small, ns, large, nl, n, L, bits, min_count):
    """The bits of the first L candidate categories of the order."""
    bits[:] = 0
    if L <= ns:
        for i in range(L):
            bits[small[i] >> 5] |= np.uint32(1) << np.uint32(small[i] & 31)
        return
    for c in range(nb):
        if cell[c, 2] > 0 and cell[c, 2] >= min_count:
            bits[c >> 5] |= np.uint32(1) << np.uint32(c & 31)
    for i in range(nl - (n - L), nl):
        c = large[i]
        bits[c >> 5] &= ~(np.uint32(1) << np.uint32(c & 31))


@njit(cache=True, nogil=True)
def choose_categorical(is_cat, sets, features, nodes, ints, cat_bits):
    """Record the category set of each node of a scan whose chosen candidate is
    categorical: the set its scan wrote (``sets[r, a]`` for node ``nodes[r]`` and its
    feature ``features[a]``) copied to the node's words of ``cat_bits`` (``W`` per table
    row, row k's at ``k * W``), and the split kind and words in its table row.

    is_cat : (n_features,) uint8; sets : (n_nodes, n_active, W) uint32   # IN
    ints : the node table's ints   # IN/OUT; cat_bits : the table's words   # OUT
    """
    W = sets.shape[2]
    for r in range(nodes.shape[0]):
        k = nodes[r]
        f = ints[ND_FEATURE, k]
        if f < 0 or is_cat[f] == 0:
            continue
        a = np.searchsorted(features, f)  # features ascending
        start = k * W
        for w in range(W):
            cat_bits[start + w] = sets[r, a, w]
        ints[ND_KIND, k] = CATEGORICAL
        ints[ND_CAT_START, k] = start
        ints[ND_CAT_LEN, k] = W


lock_cache_writes(globals())  # numba's cache, safe when processes compile at once
