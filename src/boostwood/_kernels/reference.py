"""Naive, obviously-correct twins of the optimised kernels. Used only by tests.

Plain Python / numpy, no numba, no cleverness: each function states the
definition the fast kernel must agree with.
"""
import numpy as np


def bin_values_naive(X, edges_list):
    """bin(x) = smallest b with x <= edges[b]; NaN -> len(edges). Shape (n_rows, n_features)."""
    out = np.empty(X.shape, dtype=np.int64)
    for f, edges in enumerate(edges_list):
        for i in range(X.shape[0]):
            x = X[i, f]
            out[i, f] = len(edges) if np.isnan(x) else int(np.nonzero(x <= edges)[0][0])
    return out


def histogram_naive(X_binned, g, h, rows, n_bins_max):
    """hist[f, b] = (sum g, sum h, count) over ``rows`` with X_binned[row, f] == b
    (int64 for fixed-point g and h, else float64)."""
    F = X_binned.shape[1]
    g, h, rows = np.asarray(g), np.asarray(h), np.asarray(rows, dtype=np.int64)
    integer = np.issubdtype(g.dtype, np.integer)
    dtype = np.int64 if integer else np.float64
    hist = np.zeros((F, n_bins_max, 3), dtype=dtype)
    for f in range(F):  # np.add.at: one unbuffered add per row, in row order
        b = X_binned[rows, f].astype(np.int64)
        np.add.at(hist[f, :, 0], b, g[rows].astype(dtype))
        np.add.at(hist[f, :, 1], b, h[rows].astype(dtype))
        np.add.at(hist[f, :, 2], b, 1)
    return hist


def gain_naive(GL, HL, GR, HR, lam, gamma):
    """Eq. 7 of Chen & Guestrin without L1 or max_delta_step."""
    score = lambda G, H: G * G / (H + lam)  # noqa: E731
    return 0.5 * (score(GL, HL) + score(GR, HR) - score(GL + GR, HL + HR)) - gamma


def best_split_naive(X_binned, g, h, rows, n_bins, lam, gamma, min_child_weight,
                     min_data_in_leaf):
    """Best (gain, feature, bin, default_left) by trying every threshold and both
    missing directions on the raw rows (no histograms, no prefix sums)."""
    best = (-np.inf, -1, -1, False)
    rows = np.asarray(rows)
    for f in range(X_binned.shape[1]):
        col = X_binned[rows, f]
        missing = col == n_bins[f]
        for b in range(n_bins[f]):
            for dl in (False, True):
                if dl and not missing.any():
                    continue
                left = (col <= b) & ~missing
                if dl:
                    left |= missing
                right = ~left
                nl, nr = left.sum(), right.sum()
                if nl < max(min_data_in_leaf, 1) or nr < max(min_data_in_leaf, 1):
                    continue
                GL, HL = g[rows[left]].sum(), h[rows[left]].sum()
                GR, HR = g[rows[right]].sum(), h[rows[right]].sum()
                if HL < min_child_weight or HR < min_child_weight:
                    continue
                gain = gain_naive(GL, HL, GR, HR, lam, gamma)
                if gain > best[0] + 1e-9:
                    best = (gain, f, b, dl)
    return best


def naive_goes_left(x, node, threshold, default_left, categories=None):
    """The split rule in plain Python: NaN by default_left; at a categorical node
    (``categories``: dict node -> set of ints) x goes left iff it is an integer of the
    set; else x <= threshold."""
    if np.isnan(x):
        return bool(default_left[node])
    if categories is not None and node in categories:
        return float(x).is_integer() and int(x) in categories[node]
    return x <= threshold[node]


def predict_tree_naive(X, feature, threshold, left, right, default_left, value,
                       categories=None):
    """Walk one tree per row with plain Python."""
    out = np.empty(X.shape[0])
    for i in range(X.shape[0]):
        node = 0
        while feature[node] >= 0:
            x = X[i, feature[node]]
            go_left = naive_goes_left(x, node, threshold, default_left, categories)
            node = left[node] if go_left else right[node]
        out[i] = value[node]
    return out


def partition_naive(indices, goes_left):
    """Stable partition: rows going left first, each side in its original order."""
    indices = np.asarray(indices)
    return np.concatenate([indices[goes_left], indices[~goes_left]]), int(goes_left.sum())


def _factorial(k):
    out = 1
    for i in range(2, k + 1):
        out *= i
    return out


def _subsets(items, size):
    """All subsets of ``items`` with ``size`` elements, as tuples (itertools-free: the
    kernel layer imports numpy, numba and _config only)."""
    if size == 0:
        return [()]
    return [(items[i],) + rest for i in range(len(items))
            for rest in _subsets(items[i + 1:], size - 1)]


def _expected_value_naive(x, tree, present):
    """E[f(x) | x_S] for S = ``present`` (a set of features): at a split on a feature of S
    follow x, else average both children weighted by their training cover. ``tree`` is
    (feature, threshold, left, right, default_left, value, cover[, categories])."""
    feature, threshold, left, right, default_left, value, cover = tree[:7]
    categories = tree[7] if len(tree) > 7 else None

    def walk(node):
        f = feature[node]
        if f < 0:
            return value[node]
        if f in present:
            go_left = naive_goes_left(x[f], node, threshold, default_left, categories)
            return walk(left[node] if go_left else right[node])
        lo, hi = left[node], right[node]
        return (cover[lo] * walk(lo) + cover[hi] * walk(hi)) / cover[node]

    return walk(0)


def shap_naive(x, tree, n_features):
    """Shapley values by their definition (exponential time): phi_i = sum over S not
    holding i of |S|! (M - |S| - 1)! / M! [v(S + i) - v(S)], v = :func:`_expected_value_naive`.
    Returns shape (n_features + 1,), the last entry v(empty set)."""
    M = n_features
    phi = np.zeros(M + 1)
    for i in range(M):
        others = [j for j in range(M) if j != i]
        for size in range(M):
            wt = _factorial(size) * _factorial(M - size - 1) / _factorial(M)
            for S in _subsets(others, size):
                S = set(S)
                phi[i] += wt * (_expected_value_naive(x, tree, S | {i})
                                - _expected_value_naive(x, tree, S))
    phi[M] = _expected_value_naive(x, tree, set())
    return phi


def shap_interactions_naive(x, tree, n_features):
    """SHAP interaction values by definition (Lundberg et al. 2020, eq. for Phi_ij):
    Phi_ij = sum over S without i, j of |S|! (M - |S| - 2)! / (2 (M - 1)!) *
    [v(S+i+j) - v(S+i) - v(S+j) + v(S)] for i != j; Phi_ii = phi_i - sum_{j != i} Phi_ij."""
    M = n_features
    out = np.zeros((M + 1, M + 1))
    v = lambda S: _expected_value_naive(x, tree, S)  # noqa: E731
    for i in range(M):
        for j in range(M):
            if i == j:
                continue
            others = [k for k in range(M) if k not in (i, j)]
            for size in range(M - 1):
                wt = _factorial(size) * _factorial(M - size - 2) / (2 * _factorial(M - 1))
                for S in _subsets(others, size):
                    S = set(S)
                    out[i, j] += wt * (v(S | {i, j}) - v(S | {i}) - v(S | {j}) + v(S))
    phi = shap_naive(x, tree, M)
    for i in range(M):
        out[i, i] = phi[i] - (out[i, :M].sum() - out[i, i])
    out[M, M] = phi[M]
    return out


def criterion_split_naive(x, stat, channel, weight, K, criterion, min_samples_leaf=1,
                          min_weight_leaf=0.0):
    """Best impurity decrease of one node on one feature by trying every threshold between
    consecutive distinct values, with the missing rows (NaN in ``x``) on either side.
    ``criterion``: "gini", "entropy", "gain_ratio" or "squared_error". Returns -inf if
    no split is allowed, 0 if every allowed split decreases nothing (within rounding of
    the node's impurity): such a split is still made (scikit-learn's rule)."""
    def stats(mask):
        v = np.zeros(K + 2)
        np.add.at(v, channel[mask], stat[mask])
        v[K], v[K + 1] = weight[mask].sum(), mask.sum()
        return v

    def imp(v):
        n = v[K]
        if n <= 0:
            return 0.0
        if criterion == "squared_error":
            return -v[0] ** 2 / n
        p = v[:K] / n
        if criterion == "gini":
            return n * (1.0 - np.sum(p ** 2))
        q = p[p > 0]
        return -n * np.sum(q * np.log2(q))

    total = stats(np.ones(x.size, dtype=bool))

    def score(left):
        """The split's decrease (or gain ratio), -inf if a child is too small."""
        lv, rv = stats(left), stats(~left)
        if min(lv[K + 1], rv[K + 1]) < min_samples_leaf or min(lv[K], rv[K]) < min_weight_leaf:
            return -np.inf
        dec = imp(total) - imp(lv) - imp(rv)
        if criterion == "gain_ratio":
            f = lv[K] / total[K]
            info = -(f * np.log2(f) + (1 - f) * np.log2(1 - f)) if 0 < f < 1 else 0.0
            dec = dec / info if info > 0 else 0.0
        return dec

    miss = np.isnan(x)
    values = np.unique(x[~miss])
    best = -np.inf
    for t in values[:-1]:
        for miss_left in (False, True):
            if miss_left and not miss.any():
                continue
            best = max(best, score((x <= t) | (miss & miss_left)))
    if miss.any() and values.size:  # every value left, the missing rows right
        best = max(best, score(~miss))
    tol = 1e-10 * max(abs(imp(total)), 1e-300)
    if best > tol:
        return best
    return 0.0 if best > -tol else -np.inf  # a valid split of no gain still splits


def fingerprint_naive(words):
    """sum_i splitmix64(w[i] + 2**32 * i) mod 2**64, one word at a time in Python ints."""
    mask = (1 << 64) - 1
    total = 0
    for i, w in enumerate(np.asarray(words, dtype=np.uint32).tolist()):
        z = (w | (i << 32)) & mask
        z = ((z ^ (z >> 30)) * 0xBF58476D1CE4E5B9) & mask
        z = ((z ^ (z >> 27)) * 0x94D049BB133111EB) & mask
        total = (total + (z ^ (z >> 31))) & mask
    return total
