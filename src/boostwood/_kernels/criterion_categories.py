"""Categorical splits of the criterion trees (CART, forests, extra trees, AdaBoost's trees).

A categorical feature's codes are its categories: the rank of the category among the
training values for sorted columns, its bin for histogram bins (missing: code
``n_values[f]``). A split sends a *set* of codes left, the missing rows the learned way,
and every other code right, as the gradient trees' categorical splits do
(:func:`boostwood._kernels.splits.goes_left_binned`); the grower turns the set of codes
into a set of categories when the tree is finished.

The candidate sets come from the node's per-category statistics (channels..., weight,
count, as :mod:`.criterion` sums them):

* **Two classes, and regression: Breiman's ordering.** The node's categories sorted by
  the share of class 1 in their weight (regression: their mean target); for Gini,
  entropy and squared error the best split into two sets is a prefix of that order
  (Breiman, Friedman, Olshen & Stone 1984, Theorem 4.5; Fisher 1958), so k categories
  need k - 1 candidates, not 2^(k-1) - 1. Ties in the order by code, so the order
  depends on the sums only. Gain ratio scans the same order.
* **More classes: one-vs-rest.** Each category alone against the rest (the ordering
  theorem does not hold for three classes or more).
* **Extremely randomized trees: a random subset.** Each of the node's categories goes
  left by a hash of (the node and feature's uniform draw, the code), as Geurts, Ernst &
  Wehenkel (2006) draw a subset for a categorical attribute; a subset that is empty or
  holds every category is mended to hold exactly the first.

Every candidate is tried with the missing rows right, then left (when the node has
some), and "every present category left, missing right" is one more candidate, all
scored and kept by the numeric scan's rules (:func:`.criterion.keeps`), so categorical and
numeric features compete on the same scores.
"""
import numpy as np
from numba import njit, prange

from .._config import lock_cache_writes
from .criterion import ENTROPY, GAIN_RATIO, SQUARED, candidate, default_left_of, impurity, keeps, \
    recorded, unpack_settings
from .random import counter_hash
from .splits import P_BIN, P_DEFAULT_LEFT, P_NEXT

#: Up to this many categories a node's are sorted in place (no allocation); more by a
#: merge sort.
SORT_IN_PLACE = 48

#: The counter-based stream of extra trees' category subsets.
STREAM_CATEGORY_SUBSET = 7


@njit(cache=True, nogil=True, inline="always")
def _order(hist, bins, n_present, K, criterion, keys, order):
    """``order[:n_present]``: the present bins in the order their candidates are scanned
    (Breiman's order for two classes and regression, else by code); returns whether the
    candidates are prefixes of it (else each bin alone)."""
    for i in range(n_present):
        order[i] = bins[i]
    if not (criterion == SQUARED or K == 2):
        return False
    for i in range(n_present):  # (one-vs-rest needs no keys)
        b = bins[i]
        w = hist[b, K]
        keys[i] = (hist[b, 0] if criterion == SQUARED else hist[b, 1]) / w if w > 0.0 else 0.0
    if n_present > SORT_IN_PLACE:
        idx = np.argsort(keys[:n_present], kind="mergesort")  # stable: ties by code
        for i in range(n_present):
            order[i] = bins[idx[i]]
        return True
    for i in range(1, n_present):  # insertion sort, stable: ties keep code order
        key, b = keys[i], order[i]
        j = i - 1
        while j >= 0 and keys[j] > key:
            keys[j + 1], order[j + 1] = keys[j], order[j]
            j -= 1
        keys[j + 1], order[j + 1] = key, b
    return True


@njit(cache=True, nogil=True, inline="always")
def _random_left(hist, bins, n_present, u, left_of):
    """``left_of[i]`` = 1 for the present bins of a random subset (see the module doc)."""
    seed = np.int64(u * 9007199254740992.0)  # the uniform's 53 bits
    n_left = 0
    for i in range(n_present):
        h = counter_hash(seed, STREAM_CATEGORY_SUBSET, 0, bins[i])
        left_of[i] = np.int64(h >> np.uint64(63))
        n_left += left_of[i]
    if n_left == 0 or n_left == n_present:
        for i in range(n_present):
            left_of[i] = 1 if i == 0 else 0


@njit(cache=True, nogil=True, inline="always")
def scan_categories(hist, bins, n_present, mb, K, criterion, parent, tot, msl, mwl, u, work,
                    best_left, res, bits):
    """Best set of one categorical feature's histogram in a node.

    hist : (>= mb + 1, K + 2) the node's statistics per bin, ``hist[mb]`` its missing rows
    bins : the present bins ascending, ``n_present`` of them
    parent, tot : the node's impurity and statistics; msl, mwl: rows and weight each child
        needs; u : a uniform in [0, 1) for a random subset, or -1 for the best set
    work : (keys, order, left_of (int64), run, left, right) scratch
    best_left : (K + 2,) the chosen left child's statistics   # OUT
    res : (score, found (0/1), missing-go-left, last code left)   # OUT
    bits : (n_words,) uint32, the codes sent left   # OUT (when found)
    """
    keys, order, left_of, run, left, right = work
    W = K + 2
    has_miss = hist[mb, K + 1] > 0.0
    tol = 1e-10 * max(abs(parent), 1e-300)
    best, found, bdl, blast, bj = -np.inf, False, 0, -1, -1
    if u >= 0.0:
        _random_left(hist, bins, n_present, u, left_of)
        for c in range(W):
            run[c] = 0.0
        for i in range(n_present):
            if left_of[i] != 0:
                for c in range(W):
                    run[c] += hist[bins[i], c]
        n_cand = 1
        prefixes = False
    else:
        prefixes = _order(hist, bins, n_present, K, criterion, keys, order)
        n_cand = n_present - 1 + (1 if has_miss else 0) + (0 if prefixes else 1)
        for c in range(W):
            run[c] = 0.0
    for j in range(n_cand):
        if u < 0.0:
            if prefixes:  # the first j + 1 categories of the order
                for c in range(W):
                    run[c] += hist[order[j], c]
            elif j < n_present:  # category j alone
                for c in range(W):
                    run[c] = hist[order[j], c]
            else:  # every present one
                for c in range(W):
                    run[c] = tot[c] - hist[mb, c]
        # every present category left: only the missing rows go right
        everything = j == n_present - 1 if prefixes else j == n_present
        for tl in range(1 if everything or not has_miss else 2):
            ok, g = candidate(run, hist, mb, tl == 1, tot, K, criterion, parent, left, right,
                              msl, mwl)
            if not ok or not keeps(g, best, found, tol):
                continue
            best, found, bj = recorded(g, tol), True, j
            bdl = tl if has_miss else default_left_of(left[K + 1], tot[K + 1] - left[K + 1])
            for c in range(W):
                best_left[c] = left[c]
    res[0], res[1], res[2] = best, 1.0 if found else 0.0, bdl
    if not found:
        return
    bits[:] = 0
    for i in range(n_present):
        if u >= 0.0:
            on = left_of[i] != 0
            b = bins[i]
        else:
            on = i <= bj if prefixes else (i == bj or bj == n_present)
            b = order[i]
        if on:
            bits[b >> 5] |= np.uint32(1) << np.uint32(b & 31)
            blast = b
    res[3] = blast


@njit(cache=True, nogil=True)
def category_work(max_bins, W):
    """Scratch of :func:`scan_categories` for features of at most ``max_bins`` bins."""
    return (np.empty(max_bins), np.empty(max_bins, dtype=np.int64),
            np.empty(max_bins, dtype=np.int64), np.empty(W), np.empty(W), np.empty(W))


@njit(cache=True, nogil=True, inline="always")
def record_categories(k, a, res, best_left, out_gain, out_pick, out_left):
    """Write a found set's candidate for (node k, feature position a): its gain, its last
    code left (so the pick reads as found), no next code, the missing rows' side."""
    out_gain[k, a] = res[0]
    out_pick[P_BIN, k, a] = np.int64(res[3])
    out_pick[P_NEXT, k, a] = -1
    out_pick[P_DEFAULT_LEFT, k, a] = np.int64(res[2])
    for c in range(best_left.shape[0]):
        out_left[k, a, c] = best_left[c]


@njit(cache=True, nogil=True)
def scan_and_record(hist, bins, n_present, mb, K, criterion, parent, tot, msl, mwl, cat_work,
                    k, a, out_gain, out_pick, out_left, out_sets):
    """:func:`scan_categories` for the best set of (node k, feature position a), recorded
    in the scan outputs when found; ``cat_work`` = (its work, best left, result). (Not
    inlined: numba's parallel array analysis mistook the scratch tuple's shapes.)"""
    work, best_left, res = cat_work
    scan_categories(hist, bins, n_present, mb, K, criterion, parent, tot, msl, mwl, -1.0, work,
                    best_left, res, out_sets[k, a])
    if res[1] > 0.0:
        record_categories(k, a, res, best_left, out_gain, out_pick, out_left)


@njit(parallel=True, cache=True, nogil=True)
def category_scan(codes, segments, row_stats, n_values, totals, features, scan_mask, settings,
                  uniform, n_chunks, out, out_sets):
    """Best set of each (node, categorical feature) pair of a batch that ``scan_mask`` names,
    from each node's own rows; the other pairs' outputs are left as they are.

    codes : (n_features, n_rows) codes, feature-major, missing = ``n_values[f]``   # IN
    segments : (buf, sides, starts, counts), the nodes' row segments   # IN
    row_stats : (stat, channel, weight), as :func:`.criterion.criterion_scan` reads them
    totals : (n_nodes, K + 2) float64   # IN
    features : (n_active,) int64; scan_mask : (n_nodes, n_active) uint8   # IN
    settings : criterion settings; uniform : (n_nodes, n_active) in [0, 1) for random
        subsets, or (0, 0) for the best sets   # IN
    n_chunks : int, blocks of nodes (each allocates its scratch once)
    out : (gain, pick, left), as every scan kernel fills it   # OUT, for the scanned pairs
    out_sets : (n_nodes, n_active, n_words) uint32, the codes sent left   # OUT, likewise
    """
    buf, sides, starts, counts = segments
    stat, channel, weight = row_stats
    out_gain, out_pick, out_left = out
    criterion, msl, mwl = unpack_settings(settings)
    n_nodes, W = totals.shape
    K = W - 2
    crit = ENTROPY if criterion == GAIN_RATIO else criterion
    max_bins = 1  # (over the scanned features only: a numeric one may have n_rows codes)
    for a in range(features.shape[0]):
        for k in range(n_nodes):
            if scan_mask[k, a] != 0:
                max_bins = max(max_bins, n_values[features[a]] + 1)
                break
    n_chunks = max(1, min(n_nodes, n_chunks))
    per = (n_nodes + n_chunks - 1) // n_chunks
    for t in prange(n_chunks):
        hist = np.zeros((max_bins, W))
        seen = np.zeros(max_bins, dtype=np.uint8)
        bins = np.empty(max_bins, dtype=np.int64)
        work = category_work(max_bins, W)
        best_left = np.empty(W)
        res = np.empty(4)
        for k in range(t * per, min((t + 1) * per, n_nodes)):
            rows = buf[sides[k]]
            parent = impurity(totals[k], K, crit)
            for a in range(features.shape[0]):
                if scan_mask[k, a] == 0:
                    continue
                f = features[a]
                mb = n_values[f]
                col = codes[f]
                for i in range(starts[k], starts[k] + counts[k]):
                    r = rows[i]
                    b = np.int64(col[r])
                    seen[b] = 1
                    hist[b, channel[r]] += stat[r]
                    hist[b, K] += weight[r]
                    hist[b, K + 1] += 1.0
                n_present = 0
                for b in range(mb):
                    if seen[b] != 0:
                        bins[n_present] = b
                        n_present += 1
                u = uniform[k, a] if uniform.shape[0] > 0 else -1.0
                if n_present > 0:
                    scan_categories(hist, bins, n_present, mb, K, criterion, parent, totals[k],
                                    msl, mwl, u, work, best_left, res, out_sets[k, a])
                    if res[1] > 0.0:
                        record_categories(k, a, res, best_left, out_gain, out_pick, out_left)
                for b in range(mb + 1):
                    if seen[b] != 0:
                        seen[b] = 0
                        for c in range(W):
                            hist[b, c] = 0.0


lock_cache_writes(globals())  # numba's cache, safe when processes compile at once
