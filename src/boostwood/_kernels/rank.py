"""Learning to rank: LambdaMART gradients and the per-query ranking metrics.

A query's rows are ``order[ptr[q]:ptr[q + 1]]`` (``ptr``: the query boundaries, ``order``:
row ids grouped by query); every kernel here runs the queries in parallel, each writing
only its own rows, so the result is the same on any number of threads.

**LambdaMART** (Burges 2010, "From RankNet to LambdaRank to LambdaMART"). For every pair
(i, j) of a query with y_i > y_j, at scores s: rho = 1 / (1 + exp(sigma (s_i - s_j))) is
the probability that the pair is mis-ordered, and with |dZ| the change of the target
metric when i and j swap places in the ranking by score,

    lambda_ij = -sigma |dZ| rho      (added to g_i, taken from g_j)
    w_ij = sigma^2 |dZ| rho (1 - rho)   (added to h_i and h_j)

(LightGBM's hessian; XGBoost's is twice that). For NDCG, |dZ| = |G(y_i) - G(y_j)|
|D(r_i) - D(r_j)| / IDCG with gain G(y) = 2^y - 1 (or y, or a table) and discount
D(r) = 1 / log2(r + 2) at 0-based rank r.

**Ties.** Every ranking depends on how tied scores are ordered, and at the first round
every score is tied. LightGBM and XGBoost take the input order, so permuting a query's
rows changes the gradients. Here (``TIES_EXPECTED``, the default) a pair's discount gap
is its expectation over every order of the tied rows, which is exact and cheap: sort the
query by score into blocks of equal scores; a row of a block of m positions starting at
p has the expected discount D_bar = mean(D(p), ..., D(p + m - 1)); two rows of different
blocks have the gap |D_bar_b - D_bar_c|, and two rows of one block the mean gap of two
distinct random positions of it, (2 / (m (m - 1))) sum_{a<b} (D_a - D_b). Inside a tie,
rho = 1/2. Without ties this is LambdaMART exactly. Rows are ordered by (score, label),
both descending: rows equal in both are interchangeable, so permuting a query's rows
gives every row the same gradient, to the last bit. ``TIES_INPUT`` orders ties as they
come (LightGBM's and XGBoost's rule), each row its own block.

**Pairs.** ``PAIR_TOPK`` (k = ``S_K``): every pair whose higher-ranked row's block starts
before position k, with IDCG@k (LightGBM's ``lambdarank_truncation_level``, XGBoost's
``topk``); ``PAIR_MEAN``: for every row, ``S_K`` partners of another label drawn at random
(a counter-based draw keyed by seed, round and the row's global id: shards and threads
draw alike), IDCG of the whole query (XGBoost's ``mean``).

**Normalisation** (LightGBM's ``lambdarank_norm``, XGBoost's ``lambdarank_normalization`` and
``lambdarank_score_normalization``): each |dZ| is divided by 0.01 + |s_i - s_j| where the
query's scores are not all equal; a query's gradients and hessians are scaled by
log2(1 + L) / L, L the sum of 2 |lambda_ij| (``topk``), or by 1 / ``S_K`` (``mean``).

**Metrics** (NDCG@k, MAP@k, MRR@k) are computed per query with the same tie rules: with
``TIES_EXPECTED`` each is its expectation over the orders of tied rows (for NDCG,
scikit-learn's tie-averaged DCG).
"""
import math

import numpy as np
from numba import njit, prange

from .._config import lock_cache_writes
from .exact_sum import _add
from .random import STREAM_RANK_PAIRS, STREAM_XENDCG, counter_hash

#: The metric a LambdaMART gradient targets (``S_METRIC``).
R_NDCG, R_MAP, R_PAIRWISE = 0, 1, 2
#: How pairs are formed (``S_PAIR``).
PAIR_TOPK, PAIR_MEAN = 0, 1
#: How tied scores are ranked (``S_TIES``, and the metrics' ``ties``).
TIES_EXPECTED, TIES_INPUT = 0, 1
#: Cells of the settings vector of :func:`lambdarank_grad`.
S_METRIC, S_PAIR, S_K, S_EXP_GAIN, S_SIGMA, S_NORM, S_SCORE_NORM, S_TIES, S_SEED, \
    S_ROUND = range(10)
N_SETTINGS = 10


#: D(p) of the first positions, looked up rather than computed per pair and position.
_DISCOUNTS = 1.0 / np.log2(np.arange(4096) + 2.0)


@njit(cache=True, nogil=True, inline="always")
def discount(p):
    """D(p) = 1 / log2(p + 2) at 0-based rank p."""
    if p < _DISCOUNTS.shape[0]:
        return _DISCOUNTS[p]
    return 1.0 / math.log2(p + 2.0)


@njit(cache=True, nogil=True, inline="always")
def gain_of(y, exp_gain, table):
    """G(y): ``table[y]`` when a table is given (integer labels), else 2^y - 1 or y."""
    if table.shape[0] > 0:
        return table[np.int64(y)]
    if not exp_gain:
        return y
    if 0.0 <= y < 53.0 and y == np.floor(y):  # 2^y - 1 exactly, without a pow
        return np.float64((np.int64(1) << np.int64(y)) - 1)
    return 2.0 ** y - 1.0


#: The gradient kernels split the queries into this many chunks (at most), run in
#: parallel, each with a work space sized by its longest query: what a query computes
#: does not depend on the chunking, so neither do the results.
QUERY_CHUNKS = 1024
#: Queries up to this many rows are ranked by an insertion sort (no allocation).
SMALL_QUERY = 64


@njit(cache=True, nogil=True)
def rank_order(s, y, ties, out, warm):
    """Write to ``out`` the positions of a query's rows ranked by score, descending: ties
    by label, descending (``TIES_EXPECTED``: rows equal in both are interchangeable) or
    in input order (``TIES_INPUT``), then by input order: a total order, so the result
    is unique. ``warm``: ``out`` already holds a permutation (the last round's ranking)
    to start the insertion sort from, which is nearly sorted after a round's small
    steps; else it starts from the input order."""
    m = s.shape[0]
    if m > SMALL_QUERY:
        if ties == TIES_EXPECTED:
            by_label = np.argsort(-y, kind="mergesort")
            out[:] = by_label[np.argsort(-s[by_label], kind="mergesort")]
        else:
            out[:] = np.argsort(-s, kind="mergesort")
        return
    if not warm:
        for i in range(m):
            out[i] = i
    by_label = ties == TIES_EXPECTED
    for i in range(1, m):
        x = out[i]
        sx, yx = s[x], y[x]
        j = i
        while j > 0:
            o = out[j - 1]
            if s[o] > sx or (s[o] == sx and (by_label and y[o] > yx or (
                    (not by_label or y[o] == yx) and o < x))):
                break
            out[j] = o
            j -= 1
        out[j] = x


@njit(cache=True, nogil=True)
def tie_blocks(s_sorted, ties, start, size):
    """Each position's block: its first position (``start``) and length (``size``):
    runs of equal scores with ``TIES_EXPECTED``, single positions with ``TIES_INPUT``."""
    m = s_sorted.shape[0]
    p = 0
    while p < m:
        q = p + 1
        if ties == TIES_EXPECTED:
            while q < m and s_sorted[q] == s_sorted[p]:
                q += 1
        for r in range(p, q):
            start[r] = p
            size[r] = q - p
        p = q


@njit(cache=True, nogil=True)
def expected_discounts(start, size, mean_d, within):
    """Per position: the mean discount of its block (``mean_d``) and the mean discount gap
    of two distinct random positions of it (``within``; 0 for a block of one)."""
    m = start.shape[0]
    p = 0
    while p < m:
        b = size[p]
        total = 0.0
        pair = 0.0
        for a in range(b):
            d = discount(p + a)
            total += d
            pair += d * (b - 1 - 2 * a)
        mean = total / b
        gap = 2.0 * pair / (b * (b - 1)) if b > 1 else 0.0
        for a in range(b):
            mean_d[p + a] = mean
            within[p + a] = gap
        p += b


@njit(cache=True, nogil=True)
def ideal_dcg(y, k, exp_gain, table, work):
    """IDCG@k (k <= 0: every row) of a query's labels ``y`` (``work``: scratch of y's size)."""
    m = y.shape[0]
    for i in range(m):  # the labels, descending
        j = i
        if m <= SMALL_QUERY:  # an insertion sort, without allocating
            while j > 0 and work[j - 1] > -y[i]:
                work[j] = work[j - 1]
                j -= 1
        work[j] = -y[i]
    if m > SMALL_QUERY:
        work.sort()
    n = m if k <= 0 else min(k, m)
    total = 0.0
    for p in range(n):
        total += gain_of(-work[p], exp_gain, table) * discount(p)
    return total


@njit(cache=True, nogil=True, inline="always")
def _delta_ap(rel_hi_first, a, b, hits, recip, n_rel):
    """|change of AP| when the rows at positions a < b swap, one relevant and one not
    (``rel_hi_first``: the relevant one is at a); ``hits[p]`` relevant rows at positions up
    to p, ``recip[p]`` the sum of 1 / (q + 1) over relevant positions q up to p."""
    between = recip[b - 1] - recip[a]
    if rel_hi_first:  # relevant moves down from a to b
        d = hits[b] / (b + 1.0) - hits[a] / (a + 1.0) - between
    else:  # relevant moves up from b to a
        d = (hits[a] + 1.0) / (a + 1.0) - hits[b] / (b + 1.0) + between
    return abs(d) / n_rel


#: Rows of the float work space of :func:`lambdarank_grad`, one per chunk of queries (as
#: many columns as its longest query): each query of the chunk works in its first m
#: columns in turn (nothing is allocated per query). In the query's input order: scores,
#: labels, g, h, the pair losses as upper and as lower row; by rank: the rest.
F_S, F_Y, F_G, F_H, F_C0, F_C1, F_SS, F_YS, F_MEAN_D, F_WITHIN, F_HITS, F_RECIP, F_GP, \
    F_HP, F_CP, F_CM, F_WORK, F_GAIN = range(18)
N_F = 18
#: Rows of its int64 work space: by rank, but I_PIN (display positions, input order).
I_START, I_SIZE, I_BY_LABEL, I_LO, I_HI, I_POS, I_PIN, I_ORDER = range(8)
N_I = 8


@njit(cache=True, nogil=True)
def _zero(a, b, c, d):
    for i in range(a.shape[0]):
        a[i] = 0.0
        b[i] = 0.0
        c[i] = 0.0
        d[i] = 0.0


@njit(cache=True, nogil=True)
def _precision_prefix(ys, hits, recip):
    """MAP's prefix sums over the ranked labels ``ys``: ``hits[p]`` relevant rows in the
    top p + 1, ``recip[p]`` the sum of their 1/rank; returns the relevant rows in all."""
    n_rel = 0.0
    for p in range(ys.shape[0]):
        rel = 1.0 if ys[p] > 0.0 else 0.0
        n_rel += rel
        hits[p] = (hits[p - 1] if p else 0.0) + rel
        recip[p] = (recip[p - 1] if p else 0.0) + rel / (p + 1.0)
    return n_rel


@njit(cache=True, nogil=True)
def _blocks(ss, ties, start, size, mean_d, within):
    """:func:`tie_blocks` and :func:`expected_discounts` of the ranked scores ``ss``;
    returns whether a block holds more than one row. Without a tie (most queries once
    the scores spread) every block is one position: filled directly, the same values."""
    m = ss.shape[0]
    tied = False
    if ties == TIES_EXPECTED:
        for p in range(1, m):
            if ss[p] == ss[p - 1]:
                tied = True
                break
    if tied:
        tie_blocks(ss, ties, start, size)
        expected_discounts(start, size, mean_d, within)
    else:
        for p in range(m):
            start[p] = p
            size[p] = 1
            mean_d[p] = discount(p)
            within[p] = 0.0
    return tied


@njit(cache=True, nogil=True)
def _normalise(topk, k, total, gp, hp):
    """A query's gradients times log2(1 + L) / L (top k; L: the sum of 2 |lambda|) or 1/k
    (mean pairs)."""
    scale = 1.0
    if topk:
        scale = math.log2(1.0 + total) / total if total > 0.0 else 1.0
    elif k > 0:
        scale = 1.0 / k
    for p in range(gp.shape[0]):
        gp[p] *= scale
        hp[p] *= scale


@njit(cache=True, nogil=True)
def _query_lambdas(qkey, table, settings, t_plus, t_minus, f, iw, m, warm, inv):
    """LambdaMART gradients and hessians of one query (see the module docstring): reads
    its scores ``f[F_S]``, labels ``f[F_Y]`` and (unbiased) display positions
    ``iw[I_PIN]``, writes ``f[F_G]``, ``f[F_H]`` and the pair losses ``f[F_C0]``,
    ``f[F_C1]``, all in the query's input order, in the first ``m`` columns of the work
    spaces ``f`` and ``iw`` (whole C-contiguous arrays, so that numba knows each row
    slice is contiguous). ``warm``: ``iw[I_ORDER]`` holds the last ranking of the query
    to start from. ``inv``: the query's 1 / IDCG (0: no relevant row) for NDCG, from
    :func:`query_inverse_idcg`, or < 0 to compute it here. Rows of a query of one label
    get 0."""
    s, y, g, h = f[F_S, :m], f[F_Y, :m], f[F_G, :m], f[F_H, :m]
    m = s.shape[0]
    _zero(g, h, f[F_C0, :m], f[F_C1, :m])
    same = True
    for i in range(1, m):
        if y[i] != y[0]:
            same = False
            break
    if same:
        return  # one row, or one label: no pair to order
    metric, method = np.int64(settings[S_METRIC]), np.int64(settings[S_PAIR])
    k, exp_gain = np.int64(settings[S_K]), settings[S_EXP_GAIN] != 0.0
    sigma, ties = settings[S_SIGMA], np.int64(settings[S_TIES])
    order = iw[I_ORDER, :m]
    rank_order(s, y, ties, order, warm)
    ss, ys, gains = f[F_SS, :m], f[F_YS, :m], f[F_GAIN, :m]
    for p in range(m):
        ss[p] = s[order[p]]
        ys[p] = y[order[p]]
        gains[p] = gain_of(ys[p], exp_gain, table)
    start, size = iw[I_START, :m], iw[I_SIZE, :m]
    mean_d, within = f[F_MEAN_D, :m], f[F_WITHIN, :m]
    tied = _blocks(ss, ties, start, size, mean_d, within)
    if metric == R_NDCG:
        if inv < 0.0:
            idcg = ideal_dcg(y, k if method == PAIR_TOPK else 0, exp_gain, table,
                             f[F_WORK, :m])
            inv = 1.0 / idcg if idcg > 0.0 else 0.0
        if inv == 0.0:
            return  # no row is relevant: nothing to order
    else:
        inv = 1.0
    hits, recip, n_rel = f[F_HITS, :m], f[F_RECIP, :m], 0.0
    if metric == R_MAP:
        n_rel = _precision_prefix(ys, hits, recip)
        if n_rel == 0.0:
            return
    unbiased = t_plus.shape[0] > 0
    posq = iw[I_POS, :m]
    if unbiased:
        for p in range(m):
            posq[p] = iw[I_PIN, order[p]]
    score_norm = settings[S_SCORE_NORM] != 0.0 and ss[0] != ss[m - 1]
    gp, hp, cp, cm = f[F_GP, :m], f[F_HP, :m], f[F_CP, :m], f[F_CM, :m]
    _zero(gp, hp, cp, cm)
    ctx = (ss, ys, mean_d, within, start, hits, recip, n_rel, metric, gains, inv,
           sigma, score_norm, unbiased, posq, t_plus, t_minus)
    total = 0.0
    if method == PAIR_TOPK and metric == R_NDCG and not unbiased \
            and sigma * (ss[0] - ss[m - 1]) < 600.0:
        total = _ndcg_topk_pairs(k, ss, ys, gains, mean_d, within, start, inv, sigma,
                                 score_norm, f[F_WORK, :m], gp, hp)
    elif method == PAIR_TOPK:
        for p in range(m):
            if start[p] >= k:
                break
            for q in range(p + 1, m):
                total += _pair(p, q, ctx, gp, hp, cp, cm)
    else:
        _mean_pairs(qkey, settings, iw, ctx, gp, hp, cp, cm)
    if settings[S_NORM] != 0.0:
        _normalise(method == PAIR_TOPK, k, total, gp, hp)
    if tied:
        _share_alike(ss, ys, gp, hp, cp, cm)
    for p in range(m):
        g[order[p]] = gp[p]
        h[order[p]] = hp[p]
        f[F_C0, order[p]] = cp[p]
        f[F_C1, order[p]] = cm[p]


@njit(cache=True, nogil=True)
def _share_alike(ss, ys, gp, hp, cp, cm):
    """Give the rows of each run of equal score and label (interchangeable rows, adjacent
    in the ranking) the mean of their positions' values: which of them took which
    position depends on the input order, and their positions' values differ (the
    partners each position draws, the order in which its pairs were added)."""
    m = ss.shape[0]
    a = 0
    while a < m:
        b = a + 1
        while b < m and ss[b] == ss[a] and ys[b] == ys[a]:
            b += 1
        if b - a > 1:
            for arr in (gp, hp, cp, cm):
                total = 0.0
                for p in range(a, b):
                    total += arr[p]
                for p in range(a, b):
                    arr[p] = total / (b - a)
        a = b


@njit(cache=True, nogil=True, inline="always")
def _pair(p, q, ctx, gp, hp, cp, cm):
    """Add the pair of positions p < q to the gradients by position; returns 2 |lambda|
    (0 when the labels are equal)."""
    (ss, ys, mean_d, within, start, hits, recip, n_rel, metric, gains, inv,
     sigma, score_norm, unbiased, posq, t_plus, t_minus) = ctx
    if ys[p] == ys[q]:
        return 0.0
    hi, lo = (p, q) if ys[p] > ys[q] else (q, p)
    if metric == R_MAP and (ys[hi] > 0.0) == (ys[lo] > 0.0):
        return 0.0  # both relevant (or neither): their swap leaves AP as it is
    if metric == R_NDCG:
        gap = within[p] if start[p] == start[q] else abs(mean_d[p] - mean_d[q])
        dz = abs(gains[hi] - gains[lo]) * gap * inv
    elif metric == R_MAP:
        dz = _delta_ap(hi == p, p, q, hits, recip, n_rel)
    else:
        dz = 1.0
    ds = ss[hi] - ss[lo]
    if score_norm:
        dz /= 0.01 + abs(ds)
    x = sigma * ds
    rho = 1.0 / (1.0 + math.exp(min(x, 700.0)))
    lam = sigma * dz * rho
    hes = sigma * sigma * dz * rho * (1.0 - rho)
    if unbiased:  # Hu et al. 2019: the pair weighs 1 / (t+ of the upper row's position
        # times t- of the lower's); the positions' pair losses estimate the next t
        tp, tm = t_plus[posq[hi]], t_minus[posq[lo]]
        loss = dz * (max(-x, 0.0) + math.log1p(math.exp(-abs(x))))  # log(1 + e^-x)
        cp[hi] += loss / tm
        cm[lo] += loss / tp
        lam /= tp * tm
        hes /= tp * tm
    gp[hi] -= lam
    gp[lo] += lam
    hp[hi] += hes
    hp[lo] += hes
    return 2.0 * lam


@njit(cache=True, nogil=True)
def _ndcg_topk_pairs(k, ss, ys, gains, mean_d, within, start, inv, sigma, score_norm, ex,
                     gp, hp):
    """The top-k NDCG pairs of :func:`_pair` (no position bias), without a branch per
    pair and without an exp per pair: ``ex[p] = exp(sigma (ss[p] - ss[0]))`` once per
    position (the caller keeps sigma times the query's score range under 600, so none
    underflows), and a pair's exp(-sigma |s_p - s_q|) is ex[q] / ex[p]. A pair of equal
    labels has |dZ| = 0 and adds zeros. Returns the sum of 2 |lambda|."""
    m = ss.shape[0]
    for p in range(m):
        ex[p] = math.exp(sigma * (ss[p] - ss[0]))
    total = 0.0
    for p in range(m):
        if start[p] >= k:
            break
        yp, gain_p, mean_p, start_p, within_p = ys[p], gains[p], mean_d[p], start[p], within[p]
        inv_ex = 1.0 / ex[p]
        g_sum = 0.0
        h_sum = 0.0
        for q in range(p + 1, m):
            up = yp > ys[q]  # p is the upper row (ranked above q by score already)
            gap = within_p if start_p == start[q] else abs(mean_p - mean_d[q])
            dz = abs(gain_p - gains[q]) * gap * inv
            diff = ss[p] - ss[q]  # >= 0: positions are by descending score
            if score_norm:
                dz /= 0.01 + diff
            r = ex[q] * inv_ex  # exp(-sigma diff)
            rho = (r if up else 1.0) / (1.0 + r)  # P(the pair is mis-ordered)
            lam = sigma * dz * rho
            hes = sigma * lam * (1.0 - rho)
            signed = lam if up else -lam
            g_sum -= signed
            gp[q] += signed
            h_sum += hes
            hp[q] += hes
            total += 2.0 * lam
        gp[p] += g_sum
        hp[p] += h_sum
    return total


@njit(cache=True, nogil=True)
def _mean_pairs(qkey, settings, iw, ctx, gp, hp, cp, cm):
    """``PAIR_MEAN``: each position draws ``S_K`` partners among the positions of another
    label, uniformly, keyed by (seed, round, the query's key, the position, the draw):
    positions, not rows, so that rows equal in score and label stay interchangeable."""
    ys = ctx[1]
    m = ys.shape[0]
    k = np.int64(settings[S_K])
    seed, rnd = np.int64(settings[S_SEED]), np.int64(settings[S_ROUND])
    # positions by label: the rows of another label than p's are those outside its run
    by_label = iw[I_BY_LABEL, :m]
    by_label[:] = np.argsort(-ys, kind="mergesort")
    lo_of, hi_of = iw[I_LO, :m], iw[I_HI, :m]
    a = 0
    while a < m:
        b = a + 1
        while b < m and ys[by_label[b]] == ys[by_label[a]]:
            b += 1
        for c in range(a, b):
            lo_of[by_label[c]] = a
            hi_of[by_label[c]] = b
        a = b
    query = counter_hash(seed, STREAM_RANK_PAIRS, rnd, qkey)
    for p in range(m):
        others = m - (hi_of[p] - lo_of[p])
        if others == 0:
            continue
        for d in range(k):
            u = counter_hash(query, STREAM_RANK_PAIRS, d, p)
            c = np.int64(u % np.uint64(others))
            c = c if c < lo_of[p] else c + (hi_of[p] - lo_of[p])
            q = by_label[c]
            _pair(min(p, q), max(p, q), ctx, gp, hp, cp, cm)


@njit(cache=True, nogil=True)
def _chunk(ptr, c, n_chunks):
    """Chunk ``c`` of ``n_chunks`` of the queries of ``ptr``: (first query, stop, rows of
    its longest query)."""
    n_q = ptr.shape[0] - 1
    first, stop = c * n_q // n_chunks, (c + 1) * n_q // n_chunks
    longest = 0
    for q in range(first, stop):
        longest = max(longest, ptr[q + 1] - ptr[q])
    return first, stop, longest


@njit(parallel=True, cache=True, nogil=True)
def lambdarank_grad(raw, y, w, qw, qkey, ptr, order, table, inv_idcg, settings, bias, ranked,
                    gh_out):
    """LambdaMART gradients of every query, in parallel over queries.

    raw : ndarray of shape (n_rows, 1), float64   # IN, scores
    y : ndarray of shape (n_rows,), float64   # IN, relevance labels
    w : ndarray of shape (n_rows,) or (1,), float64   # IN, row weights (one for every row
        when of shape (1,)): a row's g and h times its weight (LightGBM's per-row weights)
    qw : ndarray of shape (n_queries,) or (0,), float64   # IN, query weights: every row
        of query q times qw[q] (XGBoost's per-group weights); none when empty
    qkey : ndarray of shape (n_queries,), int64   # IN, each query's key (from its id; the
        ``PAIR_MEAN`` draws are keyed by it, so shards and threads draw alike)
    ptr : ndarray of shape (n_queries + 1,), int64   # IN, query boundaries in ``order``
    order : ndarray of shape (n_rows,), int64   # IN, row ids grouped by query
    table : ndarray, float64   # IN, gain by integer label, or empty
    inv_idcg : ndarray of shape (n_queries,) or (0,), float64   # IN, each query's
        1 / IDCG at the pairs' cut (:func:`query_inverse_idcg`; constant over training,
        so computed once), or empty to compute it per call
    settings : ndarray of shape (N_SETTINGS,), float64   # IN, the ``S_*`` cells
    bias : tuple (position, t_plus, t_minus, cost)   # IN, IN, IN, OUT: Unbiased
        LambdaMART, all empty when off: int64 (n_rows,) display positions 0..P-1;
        float64 (P,) the biases t+ of upper and t- of lower rows by position; float64
        (2, n_rows) each row's weighted pair losses over the other row's bias, as the
        upper row and as the lower row (what the next t+ and t- are estimated from)
    ranked : ndarray of shape (n_rows,) or (0,), int64   # INOUT, each query's ranking at
        the last call (positions within the query, at its place in ``order``), where the
        ranking starts from (any permutation: the result does not depend on it); empty:
        none kept
    gh_out : ndarray of shape (1, n_rows, 2), float32   # OUT
    """
    one = w.shape[0] != y.shape[0]
    position, t_plus, t_minus, cost = bias
    unbiased = t_plus.shape[0] > 0
    n_chunks = min(ptr.shape[0] - 1, QUERY_CHUNKS)
    for c in prange(n_chunks):
        first, stop, longest = _chunk(ptr, c, n_chunks)
        fs = np.empty((N_F, longest))  # the chunk's work space, reused query by query
        iw = np.empty((N_I, longest), dtype=np.int64)
        for q in range(first, stop):
            a, m = ptr[q], ptr[q + 1] - ptr[q]
            warm = ranked.shape[0] > 0
            for i in range(m):
                r = order[a + i]
                fs[F_S, i] = raw[r, 0]
                fs[F_Y, i] = y[r]
                if unbiased:
                    iw[I_PIN, i] = position[r]
                if warm:
                    iw[I_ORDER, i] = ranked[a + i]
            inv = inv_idcg[q] if inv_idcg.shape[0] > 0 else -1.0
            _query_lambdas(qkey[q], table, settings, t_plus, t_minus, fs, iw, m, warm, inv)
            if warm:
                for i in range(m):
                    ranked[a + i] = iw[I_ORDER, i]
            scale = qw[q] if qw.shape[0] > 0 else 1.0
            for i in range(m):
                r = order[a + i]
                wr = (w[0] if one else w[r]) * scale
                gh_out[0, r, 0] = wr * fs[F_G, i]
                gh_out[0, r, 1] = wr * fs[F_H, i]
                if unbiased:
                    cost[0, r] = wr * fs[F_C0, i]
                    cost[1, r] = wr * fs[F_C1, i]


@njit(parallel=True, cache=True, nogil=True)
def query_inverse_idcg(y, ptr, order, table, k, exp_gain, out):
    """``out[q]`` = 1 / IDCG@k of query q (k <= 0: every row), 0 where no row is relevant,
    in parallel over queries (arguments as :func:`lambdarank_grad`): the same value
    :func:`_query_lambdas` computes, once for the whole training."""
    n_chunks = min(ptr.shape[0] - 1, QUERY_CHUNKS)
    for c in prange(n_chunks):
        first, stop, longest = _chunk(ptr, c, n_chunks)
        ys, work = np.empty(longest), np.empty(longest)
        for q in range(first, stop):
            a, m = ptr[q], ptr[q + 1] - ptr[q]
            for i in range(m):
                ys[i] = y[order[a + i]]
            idcg = ideal_dcg(ys[:m], k, exp_gain, table, work[:m])
            out[q] = 1.0 / idcg if idcg > 0.0 else 0.0


@njit(parallel=True, cache=True, nogil=True)
def xendcg_grad(raw, y, w, qw, ptr, order, rowid, seed, rnd, gh_out):
    """XE-NDCG gradients (Bruch 2020, "An Alternative Cross Entropy Loss for
    Learning-to-Rank"; LightGBM's ``rank_xendcg``), per query: rho = softmax(scores),
    targets phi_i = 2^y_i - u_i with u_i uniform, keyed by (seed, round, global row id);
    the gradient is the third-order expansion LightGBM uses, the hessian rho (1 - rho).
    O(rows) per query. Arguments as :func:`lambdarank_grad`; ``rowid``: global row ids."""
    one = w.shape[0] != y.shape[0]
    n = y.shape[0]
    fs = np.empty((3, n))
    for q in prange(ptr.shape[0] - 1):
        a, b = ptr[q], ptr[q + 1]
        m = b - a
        if m < 2:
            for i in range(a, b):
                gh_out[0, order[i], 0] = 0.0
                gh_out[0, order[i], 1] = 0.0
            continue
        rho, phi, lam = fs[0, a:b], fs[1, a:b], fs[2, a:b]
        top = -np.inf
        for i in range(m):
            top = max(top, raw[order[a + i], 0])
        total = 0.0
        for i in range(m):
            rho[i] = math.exp(raw[order[a + i], 0] - top)
            total += rho[i]
        denom = 0.0
        for i in range(m):
            r = order[a + i]
            rho[i] /= total
            u = counter_hash(seed, STREAM_XENDCG, rnd, rowid[r])
            phi[i] = 2.0 ** y[r] - np.float64(u >> np.uint64(11)) * (1.0 / 9007199254740992.0)
            denom += phi[i]
        denom = 1.0 / max(denom, 1e-15)
        l1 = 0.0
        for i in range(m):
            lam[i] = -phi[i] * denom + rho[i]
            phi[i] = lam[i] / max(1.0 - rho[i], 1e-15)
            l1 += phi[i]
        l2 = 0.0
        for i in range(m):
            term = rho[i] * (l1 - phi[i])
            lam[i] += term
            phi[i] = term / max(1.0 - rho[i], 1e-15)
            l2 += phi[i]
        scale = qw[q] if qw.shape[0] > 0 else 1.0
        for i in range(m):
            r = order[a + i]
            wr = (w[0] if one else w[r]) * scale
            gh_out[0, r, 0] = wr * (lam[i] + rho[i] * (l2 - phi[i]))
            gh_out[0, r, 1] = wr * rho[i] * (1.0 - rho[i])


@njit(cache=True, nogil=True)
def position_totals(position, cost, acc):
    """Exact sums by display position of the pair losses of :func:`lambdarank_grad`:
    ``cost[0]`` (as upper row) into ``acc[p]``, ``cost[1]`` (as lower row) into
    ``acc[P + p]``, P = ``acc.shape[0] // 2``; the accumulator of
    :mod:`boostwood._kernels.exact_sum` (order-free: shards add theirs)."""
    n_pos = acc.shape[0] // 2
    for r in range(position.shape[0]):
        _add(acc, position[r], cost[0, r])
        _add(acc, n_pos + position[r], cost[1, r])


#: The ranking metrics of :func:`query_metric`.
M_NDCG, M_MAP, M_MRR = 0, 1, 2


@njit(cache=True, nogil=True, inline="always")
def _relevant(ys, p, b):
    """How many of the labels ``ys[p:p + b]`` are relevant (> 0)."""
    r = 0.0
    for a in range(b):
        r += 1.0 if ys[p + a] > 0.0 else 0.0
    return r


@njit(cache=True, nogil=True)
def _query_value(f, iw, kind, k, exp_gain, table, ties):
    """(value, defined) of one query's metric @k (k <= 0: every position) from its scores
    ``f[0]`` and labels ``f[1]`` (``f``, ``iw``: the query's columns of the work space);
    undefined where no row is relevant (NDCG: IDCG = 0)."""
    s, y, ss, ys = f[0], f[1], f[2], f[3]
    m = s.shape[0]
    order = iw[2]
    rank_order(s, y, ties, order, False)
    for p in range(m):
        ss[p] = s[order[p]]
        ys[p] = y[order[p]]
    start, size = iw[0], iw[1]
    tie_blocks(ss, ties, start, size)
    cut = m if k <= 0 else min(k, m)
    if kind == M_NDCG:
        idcg = ideal_dcg(y, k, exp_gain, table, f[4])
        if idcg <= 0.0:
            return 0.0, False
        dcg = 0.0
        p = 0
        while p < cut:
            b = size[p]
            mean_g = 0.0
            for a in range(b):
                mean_g += gain_of(ys[p + a], exp_gain, table)
            mean_g /= b
            for a in range(b):
                if p + a < cut:
                    dcg += mean_g * discount(p + a)
            p += b
        return dcg / idcg, True
    n_rel = _relevant(ys, 0, m)
    if n_rel == 0.0:
        return 0.0, False
    if kind == M_MRR:  # E[1 / rank of the first relevant row], 0 beyond k
        p = 0
        while p < m:
            b = size[p]
            r = _relevant(ys, p, b)
            if r > 0.0:
                value = 0.0
                prob = r / b  # P(the first relevant row of the block is at its offset x)
                for x in range(b - np.int64(r) + 1):
                    if p + x < cut:
                        value += prob / (p + x + 1.0)
                    if b - x - 1 > 0:
                        prob *= (b - x - r) / (b - x - 1.0)
                return value, True
            p += b
        return 0.0, True
    total = 0.0  # MAP@k: E[precision at each relevant position], over min(n_rel, k)
    hits = 0.0
    p = 0
    while p < m:
        b = size[p]
        r = _relevant(ys, p, b)
        for a in range(b):
            if p + a < cut and r > 0.0:
                other = (r - 1.0) * a / (b - 1.0) if b > 1 else 0.0
                total += (r / b) * (hits + 1.0 + other) / (p + a + 1.0)
        hits += r
        p += b
    return total / min(n_rel, float(cut)), True


@njit(parallel=True, cache=True, nogil=True)
def query_metric(pred, y, ptr, order, kind, k, exp_gain, table, ties, out_value, out_defined):
    """The metric of every query (``M_*``, @k; k <= 0: the whole ranking), in parallel.

    pred, y : ndarray of shape (n_rows,), float64   # IN, scores and labels
    ptr, order : the queries (see :func:`lambdarank_grad`)   # IN
    out_value : ndarray of shape (n_queries,), float64   # OUT
    out_defined : ndarray of shape (n_queries,), bool   # OUT, False: no relevant row
    """
    n_chunks = min(ptr.shape[0] - 1, QUERY_CHUNKS)
    for c in prange(n_chunks):
        first, stop, longest = _chunk(ptr, c, n_chunks)
        fs = np.empty((5, longest))  # the chunk's work space, reused query by query
        iw = np.empty((3, longest), dtype=np.int64)
        for q in range(first, stop):
            a, m = ptr[q], ptr[q + 1] - ptr[q]
            for i in range(m):
                fs[0, i] = pred[order[a + i]]
                fs[1, i] = y[order[a + i]]
            v, ok = _query_value(fs[:, :m], iw[:, :m], kind, k, exp_gain, table, ties)
            out_value[q] = v
            out_defined[q] = ok


lock_cache_writes(globals())  # numba's cache, safe when processes compile at once
