"""Criterion split search on histogram bins, node by node: no sorted feature lists at all.

A random forest draws a few features per node (``max_features="sqrt"``: 5 of 28),
so one pass over a node's rows fills the histograms of *all* the features it
drew at once, reading each row once:

* ``codes_rows`` is the binned matrix row-major (n_rows, n_features): the bins
  of one row's features share a cache line, so a deep node whose rows are
  scattered costs one line per row, not one per (row, feature);
* ``row_stats`` packs each row's (stat, weight, channel) in one 32-byte record,
  prefetched a few rows ahead;
* the present bins of a feature are bits of a small bitmask, set without a
  branch while filling and read back in ascending order with a bit scan
  (:func:`~boostwood._kernels.intrinsics.trailing_zeros`), so no sort;
* only the bins a node touched are cleared afterwards.

The scan of a histogram visits the same candidates in the same order as
:func:`boostwood._kernels.criterion.criterion_scan` visits sorted codes (every
boundary between two present bins, missing rows right and then left, then
"all present left, missing right"), with the same scores, tolerance and ties,
so both give the same tree on the same bins.
"""
import numpy as np
from numba import njit, prange

from .._config import lock_cache_writes
from .criterion import (ENTROPY, GAIN_RATIO, candidate, default_left_of, impurity, keeps, recorded,
                        unpack_settings)
from .criterion_categories import category_work, scan_and_record
from .intrinsics import PREFETCH_DISTANCE, prefetch, trailing_zeros
from .splits import P_BIN, P_DEFAULT_LEFT, P_NEXT

#: (stat, weight, channel, unused) per row of ``row_stats``
ROW_STAT_WIDTH = 4


def pack_row_stats(stat, channel, weight):
    """The (n_rows, 4) float64 records :func:`binned_node_scan` reads."""
    out = np.zeros((stat.shape[0], ROW_STAT_WIDTH))
    out[:, 0], out[:, 1], out[:, 2] = stat, weight, channel
    return out


@njit(cache=True, nogil=True, inline="always")
def _scan_hist(hist, bins, n_present, mb, K, criterion, parent, tot, msl, mwl, run, left, right,
               best_left, out):
    """Best boundary of one feature's histogram: ``bins[:n_present]`` its present bins
    ascending, ``hist[mb]`` its missing rows. ``out`` = (score, last bin left, next bin,
    missing-go-left), bin -1 when no boundary qualifies; ``best_left`` gets the left
    child's statistics."""
    W = K + 2
    has_miss = hist[mb, K + 1] > 0.0
    tol = 1e-10 * max(abs(parent), 1e-300)
    best, bcode, bnext, bdl = -np.inf, -1, -1, 0
    for c in range(W):
        run[c] = 0.0
    for j in range(n_present + 1):
        if j > 0 and (j < n_present or has_miss):
            last = bins[j - 1]
            nxt = bins[j] if j < n_present else -1
            for tl in range(2 if has_miss and nxt >= 0 else 1):
                ok, g = candidate(run, hist, mb, tl == 1, tot, K, criterion, parent, left,
                                  right, msl, mwl)
                if not ok or not keeps(g, best, bcode >= 0, tol):
                    continue
                best, bcode, bnext = recorded(g, tol), last, nxt
                if has_miss:
                    bdl = tl
                else:
                    bdl = default_left_of(left[K + 1], tot[K + 1] - left[K + 1])
                for c in range(W):
                    best_left[c] = left[c]
        if j < n_present:
            b = bins[j]
            for c in range(W):
                run[c] += hist[b, c]
    out[0], out[1], out[2], out[3] = best, bcode, bnext, bdl


@njit(cache=True, nogil=True, inline="always")
def _present_bins(mask, mb, bins):
    """The set bits of ``mask`` other than ``mb``, ascending, into ``bins``; clears the
    mask. Returns how many."""
    n = 0
    for w in range(mask.shape[0]):
        m = mask[w]
        mask[w] = 0
        while m != 0:
            b = w * 64 + trailing_zeros(m)
            m &= m - np.uint64(1)
            if b != mb:
                bins[n] = b
                n += 1
    return n


@njit(cache=True, nogil=True, inline="always")
def _nth_drawn(keys, k, j, taken):
    """The feature position with the (j+1)-th smallest key of node k (ties: lowest
    position), marking it taken; a selection step, no full sort per node."""
    best = -1
    for a in range(keys.shape[1]):
        if taken[a] == 0 and (best < 0 or keys[k, a] < keys[k, best]):
            best = a
    taken[best] = 1
    return best


@njit(cache=True, nogil=True, inline="always")
def _fill(codes_rows, rs, rows, s, e, fs, P, hist, mask):
    """Histograms of features ``fs[:P]`` over rows[s:e], one pass over the rows."""
    W = hist.shape[2]
    K = W - 2
    n_feat = codes_rows.shape[1]
    flat = codes_rows.reshape(-1)
    one = np.uint64(1)
    for i in range(s, e):
        if i + PREFETCH_DISTANCE < e:
            ahead = np.int64(rows[i + PREFETCH_DISTANCE])
            prefetch(rs, ahead * ROW_STAT_WIDTH)
            prefetch(flat, ahead * n_feat)
        r = np.int64(rows[i])
        at = ROW_STAT_WIDTH * r
        st, wt, ch = rs[at], rs[at + 1], np.int64(rs[at + 2])
        for j in range(P):
            b = np.int64(codes_rows[r, fs[j]])
            mask[j, b >> 6] |= one << np.uint64(b & 63)
            hist[j, b, ch] += st
            hist[j, b, K] += wt
            hist[j, b, K + 1] += 1.0


@njit(cache=True, nogil=True, inline="always")
def _scan_filled(j, a, k, hist, mask, bins, mb, K, criterion, parent, totals, msl, mwl, work,
                 out_gain, out_pick, out_left, scan, cat, cat_work, out_sets):
    """Scan histogram j (feature position a) of node k into the outputs (if ``scan``),
    then clear the bins it used. Returns 1 if the feature varies in the node, else 0.
    ``work`` = (run, left, right, res) scratch arrays. (The outputs are separate
    arguments: written through a tuple made outside the parallel loop, they were lost.)
    A categorical feature (``cat``) is scanned for its best set of bins
    (:func:`~boostwood._kernels.criterion_categories.scan_and_record`, scratch
    ``cat_work`` = (its work, best left, result)), written to ``out_sets[k, a]``."""
    run, left, right, res = work
    n_present = _present_bins(mask[j], mb, bins)
    varies = 1 if n_present > 1 or (n_present == 1 and hist[j, mb, K + 1] > 0.0) else 0
    if varies and scan and cat:
        scan_and_record(hist[j], bins, n_present, mb, K, criterion, parent, totals[k], msl, mwl,
                        cat_work, k, a, out_gain, out_pick, out_left, out_sets)
    elif varies and scan:
        _scan_hist(hist[j], bins, n_present, mb, K, criterion, parent, totals[k], msl, mwl,
                   run, left, right, out_left[k, a], res)
        if res[1] >= 0:
            out_gain[k, a] = res[0]
            out_pick[P_BIN, k, a] = np.int64(res[1])
            out_pick[P_NEXT, k, a] = np.int64(res[2])
            out_pick[P_DEFAULT_LEFT, k, a] = np.int64(res[3])
    for i in range(n_present):
        b = bins[i]
        for c in range(K + 2):
            hist[j, b, c] = 0.0
    for c in range(K + 2):
        hist[j, mb, c] = 0.0
    return varies


@njit(parallel=True, cache=True, nogil=True)
def binned_node_scan(codes_rows, row_stats, n_bins, segments, totals, features, draw_keys,
                     n_pick, known_const, settings, n_chunks, out, out_const, cats):
    """Best split of each node of a batch over histogram bins, one node at a time.

    Features are visited in ascending order of ``draw_keys[k]`` (random keys per
    node; position a is visited j-th if its key is the j-th smallest): the
    first ``n_pick`` are the node's draw, of which those constant in the node cannot
    split it; if all of them are constant the walk goes on to the first varying one
    (Breiman's / scikit-learn's rule, as :meth:`boostwood.tree.splitters.CriterionSplitter.feature_mask`).
    A feature constant in a node is constant in its descendants: ``known_const``
    (inherited from the parent) lets a node skip those without reading its rows, as
    scikit-learn's splitter does; the walk fills up to ``n_pick`` candidates per pass.

    codes_rows : (n_rows, n_features) bins, row-major, missing = ``n_bins[f]``   # IN
    row_stats : (n_rows, 4) float64 from :func:`pack_row_stats`   # IN
    n_bins : (n_features,) int   # IN
    segments : (buf, sides, starts, counts), the nodes' row segments   # IN
    totals : (n_nodes, K + 2) float64, each node's (channels..., weight, count)   # IN
    features : (n_active,) int64, the feature of each position   # IN
    draw_keys : (n_nodes, n_active) float64 in [0, 1), or all 0 to visit in order   # IN
    known_const : (n_nodes, (n_active + 63) // 64) uint64, bit a set: position a is
        known to be constant in the node   # IN
    settings : criterion settings (:func:`~boostwood._kernels.criterion.criterion_settings`)
    n_chunks : int, blocks of nodes (each allocates its scratch once): a few per thread
    out : (gain, pick, left) as ``criterion_scan`` fills it; gain -inf: not used   # OUT
    out_const : ``known_const`` plus the positions found constant   # OUT
    cats : (is_cat, sets): (n_features,) uint8, 1 = categorical, scanned for a set of
        bins; (n_nodes, n_active, n_words) uint32, the bins a set sends left   # IN, OUT
    """
    (is_cat, out_sets), (buf, sides, starts, counts) = cats, segments
    out_gain, out_pick, out_left = out
    criterion, min_samples_leaf, min_weight_leaf = unpack_settings(settings)
    (n_nodes, W), A = totals.shape, features.shape[0]
    K = W - 2
    P = min(n_pick, A)
    crit = ENTROPY if criterion == GAIN_RATIO else criterion
    max_bins = max(1, np.max(n_bins[features]) + 1) if A > 0 else 1
    n_words = (max_bins + 63) // 64
    rs = row_stats.reshape(-1)
    one = np.uint64(1)
    n_chunks = max(1, min(n_nodes, n_chunks))
    per = (n_nodes + n_chunks - 1) // n_chunks
    for t in prange(n_chunks):
        hist = np.zeros((P, max_bins, W))
        mask = np.zeros((P, n_words), dtype=np.uint64)
        bins = np.empty(max_bins, dtype=np.int64)
        pa, fs = np.empty(P, dtype=np.int64), np.empty(P, dtype=np.int64)
        work = (np.empty(W), np.empty(W), np.empty(W), np.empty(4))
        cat_work = (category_work(max_bins, W), np.zeros(W), np.zeros(4))
        taken = np.zeros(A, dtype=np.uint8)
        for k in range(t * per, min((t + 1) * per, n_nodes)):
            taken[:] = 0
            rows = buf[sides[k]]
            s, e = starts[k], starts[k] + counts[k]
            parent = impurity(totals[k], K, crit)
            out_gain[k, :] = -np.inf
            out_pick[:, k, :] = -1
            out_pick[P_DEFAULT_LEFT, k, :] = 0
            out_const[k, :] = known_const[k, :]
            used, j = 0, 0
            while j < A and (j < P or used == 0):
                end = P if j < P else A  # the draw itself, then the walk past constants
                m = 0
                while j < end and m < P:
                    a = _nth_drawn(draw_keys, k, j, taken)
                    j += 1
                    if (known_const[k, a >> 6] >> np.uint64(a & 63)) & one == 0:
                        pa[m], fs[m] = a, features[a]
                        m += 1
                if m > 0:
                    _fill(codes_rows, rs, rows, s, e, fs, m, hist, mask)
                for i in range(m):
                    v = _scan_filled(i, pa[i], k, hist, mask, bins, n_bins[fs[i]], K, criterion,
                                     parent, totals, min_samples_leaf, min_weight_leaf, work,
                                     out_gain, out_pick, out_left, end == P or used == 0,
                                     is_cat[fs[i]] != 0, cat_work, out_sets)
                    if v == 0:
                        out_const[k, pa[i] >> 6] |= one << np.uint64(pa[i] & 63)
                    used += v  # (the walk scans only its first varying feature)


lock_cache_writes(globals())  # numba's cache, safe when processes compile at once
