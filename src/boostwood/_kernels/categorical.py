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
  ``min_data_per_group`` rows.

Each candidate is tried with the missing rows right and, when the node has some, left;
the best one by the numeric scan's tie rule (a candidate must beat the best so far by
``TIE_RTOL``; the earlier one wins ties), so the split depends on the sums only, never
on the order of rows, threads or shards. Sums are the histogram's exact integers; they
are converted to float only to be scored.
"""
import numpy as np
from numba import njit

from .gain import (S_ALPHA, S_G_UNIT, S_GAMMA, S_H_UNIT, S_LAMBDA, S_MAX_DELTA_STEP,
                   S_MIN_CHILD_WEIGHT, S_MIN_DATA_IN_LEAF, TIE_RTOL, _children_score,
                   leaf_score)
from .splits import CATEGORICAL, SP_CAT_LEN, SP_CAT_START, SP_FEATURE, SP_KIND

ND_FEATURE, ND_KIND, ND_CAT_START, ND_CAT_LEN = SP_FEATURE, SP_KIND, SP_CAT_START, SP_CAT_LEN

#: Named cells of the categorical settings array (:func:`category_settings`).
CS_ONEHOT_MAX, CS_SMOOTH, CS_L2, CS_MAX_THRESHOLD, CS_MIN_GROUP = range(5)
N_CATEGORY_SETTINGS = 5


def category_settings(max_cat_to_onehot, cat_smooth, cat_l2, max_cat_threshold,
                      min_data_per_group):
    """The float64 settings array of :func:`scan_categorical`."""
    cs = np.empty(N_CATEGORY_SETTINGS)
    cs[CS_ONEHOT_MAX], cs[CS_SMOOTH], cs[CS_L2] = max_cat_to_onehot, cat_smooth, cat_l2
    cs[CS_MAX_THRESHOLD], cs[CS_MIN_GROUP] = max_cat_threshold, min_data_per_group
    return cs


@njit(cache=True, nogil=True)
def _order(cell, nb, ug, uh, smooth, onehot):
    """The categories the node holds (count > 0): ascending codes for one-vs-rest, else
    sorted by ``G / (H + smooth)`` (stable: ties keep code order)."""
    used = np.empty(nb, dtype=np.int64)
    n = 0
    for c in range(nb):
        if cell[c, 2] > 0:
            used[n] = c
            n += 1
    used = used[:n]
    if onehot or n < 2:
        return used
    key = np.empty(n)
    for i in range(n):
        c = used[i]
        key[i] = (cell[c, 0] * ug) / (cell[c, 1] * uh + smooth)
    return used[np.argsort(key, kind="mergesort")]


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
    lam, alpha, mds = s[S_LAMBDA], s[S_ALPHA], s[S_MAX_DELTA_STEP]
    gamma, mcw, mdl = s[S_GAMMA], s[S_MIN_CHILD_WEIGHT], s[S_MIN_DATA_IN_LEAF]
    ug, uh = s[S_G_UNIT], s[S_H_UNIT]
    onehot = nb <= cs[CS_ONEHOT_MAX]
    lam_kids = lam if onehot else lam + cs[CS_L2]
    plain = alpha == 0.0 and mds <= 0.0
    score_parent = leaf_score(Gt * ug, Ht * uh, lam, alpha, mds)
    tol = 1e-10 * abs(score_parent)
    order = _order(cell, nb, ug, uh, cs[CS_SMOOTH], onehot)
    n = order.shape[0]
    Gm, Hm, Cm = cell[nb, 0], cell[nb, 1], cell[nb, 2]
    C_cats = Ct - Cm
    best, best_j, best_t = -np.inf, -1, 0
    GL = HL = CL = cell[0, 0] - cell[0, 0]
    # one-vs-rest: candidate j is {order[j]}; many-vs-many: the prefix order[:j + 1]
    n_cand = n if onehot else n - 1
    if not onehot and Cm > 0:
        n_cand = n  # every category left, the missing rows right
    for j in range(n_cand):
        c = order[j]
        if onehot:
            GL, HL, CL = cell[c, 0], cell[c, 1], cell[c, 2]
        else:
            GL += cell[c, 0]
            HL += cell[c, 1]
            CL += cell[c, 2]
            small_side = min(j + 1, n - j - 1)
            if small_side > cs[CS_MAX_THRESHOLD]:
                continue
            if CL < cs[CS_MIN_GROUP] or (j < n - 1 and C_cats - CL < cs[CS_MIN_GROUP]):
                continue
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
            if best_j < 0 or gain > best + TIE_RTOL * abs(best):
                best, best_j, best_t = gain, j, t
                best_left[0], best_left[1], best_left[2] = gq, hq, cl
    if best_j < 0:
        return -np.inf, False
    if Cm > 0:
        dl = best_t == 1
    else:
        dl = best_left[1] * uh >= (Ht - best_left[1]) * uh
    if bits.shape[0] > 0:
        bits[:] = 0
        lo = best_j if onehot else 0
        for i in range(lo, best_j + 1):
            c = order[i]
            bits[c >> 5] |= np.uint32(1) << np.uint32(c & 31)
    return best, dl


@njit(cache=True, nogil=True)
def choose_categorical(cats, hist, slots, totals, n_bins, settings, nodes, ints, cat_bits):
    """The category sets of the nodes of a scan whose chosen candidate is categorical:
    the scan of that feature again, now writing its set to the node's words of
    ``cat_bits`` (``words`` per table row, row k's at ``k * words``), and the node's
    split kind and set recorded in its table row.

    cats : (categorical (n_features,) uint8, category settings, words)   # IN
    hist, slots, totals, n_bins, settings : what the scan read, per node of ``nodes``
    ints : the node table's ints   # IN/OUT; cat_bits : the table's words   # OUT
    """
    is_cat, cs, words = cats
    left = np.empty(3, dtype=hist.dtype)
    for r in range(nodes.shape[0]):
        k = nodes[r]
        f = ints[ND_FEATURE, k]
        if f < 0 or is_cat[f] == 0:
            continue
        start = k * words
        scan_categorical(hist[slots[r], f], n_bins[f], totals[r, 0], totals[r, 1],
                         totals[r, 2], settings, cs, left, cat_bits[start:start + words])
        ints[ND_KIND, k] = CATEGORICAL
        ints[ND_CAT_START, k] = start
        ints[ND_CAT_LEN, k] = words
