"""The split scan, the gain and the leaf weights, including the notes' worked exercise."""
import numpy as np
import pytest
from hypothesis import given, settings
from hypothesis import strategies as st

from boostwood._kernels.reference import best_split_naive, histogram_naive
from boostwood._kernels.splits import N_PICK, P_BIN
from boostwood._kernels.split import (find_best_splits, leaf_score, leaf_weight,
                                      pick_best_features, scan_feature, split_gain,
                                      split_settings)

# 002_a9b531642bebda76.txt: six rows, logistic loss at margin 0, gamma = lambda = 1
X6 = np.array([[1, 2], [2, 1], [3, 2], [1, 3], [2, 2], [3, 3]], dtype=float)
Y6 = np.array([0, 0, 0, 1, 1, 1], dtype=float)
G6 = 0.5 - Y6          # sigmoid(0) - y
H6 = np.full(6, 0.25)  # sigmoid(0) (1 - sigmoid(0))


@pytest.mark.parametrize("feature,threshold,expected", [
    (0, 1.5, -1.0), (0, 2.5, -1.0), (1, 1.5, -0.84), (1, 2.5, -0.41)])
def test_worked_exercise_root_gains(feature, threshold, expected):
    left = X6[:, feature] < threshold
    gain = split_gain(G6[left].sum(), H6[left].sum(), G6[~left].sum(), H6[~left].sum(),
                      1.0, 0.0, 0.0, 1.0)
    assert gain == pytest.approx(expected, abs=0.01)  # the notes truncate to 2 decimals


def test_worked_exercise_scan_picks_x2_below_2_5_with_its_leaves():
    Xb = (X6 - 1).astype(np.uint8)  # values 1, 2, 3 -> bins 0, 1, 2
    gh = np.column_stack([G6, H6]).astype(np.float32)
    hist = histogram_naive(Xb, gh[:, 0], gh[:, 1], np.arange(6), 4)[None]
    totals = np.array([[G6.sum(), H6.sum(), 6.0]])
    gain, pick, left = np.empty((1, 2)), np.empty((N_PICK, 1, 2), np.int64), np.empty((1, 2, 3))
    find_best_splits(hist, np.array([0]), np.zeros((2, 0), np.int64), totals,
                     np.array([3, 3], np.int32),
                     np.array([0, 1], np.int64), np.ones((1, 2), np.uint8),
                     split_settings(1.0, 0.0, 0.0, 1.0, 0.0, 1.0), (gain, pick, left))
    b, best = pick[P_BIN], np.empty(1, np.int64)
    pick_best_features(gain, best)
    assert best[0] == 1 and b[0, 1] == 1          # x2 <= bin of 2, i.e. x2 < 2.5
    assert gain[0, 1] == pytest.approx(-0.4167, abs=1e-4)   # the notes' -0.41; gamma = 1 forbids it
    GL, HL = left[0, 1, 0], left[0, 1, 1]
    GR, HR = G6.sum() - GL, H6.sum() - HL
    assert leaf_weight(GL, HL, 1.0, 0.0, 0.0) == pytest.approx(-0.5)
    assert leaf_weight(GR, HR, 1.0, 0.0, 0.0) == pytest.approx(0.67, abs=0.005)


def test_leaf_weight_l1_and_max_delta_step():
    assert leaf_weight(5.0, 1.0, 1.0, 2.0, 0.0) == pytest.approx(-1.5)   # -(5-2)/(1+1)
    assert leaf_weight(1.0, 1.0, 1.0, 2.0, 0.0) == 0.0                   # |G| <= alpha
    assert leaf_weight(-50.0, 1.0, 0.0, 0.0, 0.7) == pytest.approx(0.7)  # clipped
    # the score is -2 x the minimum of G w + (H + lambda) w^2 / 2 + alpha |w|
    for G, H, lam, alpha, mds in [(3.0, 2.0, 1.0, 0.5, 0.0), (-4.0, 0.5, 0.0, 1.0, 0.3)]:
        w = np.linspace(-10, 10, 200001)
        obj = G * w + 0.5 * (H + lam) * w * w + alpha * np.abs(w)
        if mds:
            obj[np.abs(w) > mds + 1e-9] = np.inf
        assert leaf_score(G, H, lam, alpha, mds) == pytest.approx(-2 * obj.min(), rel=1e-6)


@settings(max_examples=80, deadline=None)
@given(st.integers(0, 10**6), st.integers(2, 40), st.floats(0, 2), st.floats(0, 0.5),
       st.sampled_from([0.0, 0.3]), st.integers(1, 4))
def test_scan_matches_brute_force(seed, n, lam, gamma, missing, min_data):
    r = np.random.default_rng(seed)
    n_bins = np.array([3, 5], dtype=np.int32)
    X = np.column_stack([r.integers(0, nb, n) for nb in n_bins]).astype(np.uint8)
    X[r.random(X.shape) < missing] = 9  # placeholder for the missing bin
    for f in range(2):
        X[X[:, f] == 9, f] = n_bins[f]
    g = r.normal(size=n)
    h = r.uniform(0.1, 1.0, size=n)
    rows = np.arange(n)
    expected = best_split_naive(X, g, h, rows, n_bins, lam, gamma, 0.0, min_data)
    hist = histogram_naive(X, g, h, rows, 6)
    best = (-np.inf, -1, -1, False)
    for f in range(2):
        left = np.empty(3)
        gain, b, dl = scan_feature(hist[f], n_bins[f], g.sum(), h.sum(), float(n),
                                   split_settings(lam, 0.0, 0.0, gamma, 0.0, min_data), left)
        if gain > best[0] + 1e-9:
            best = (gain, f, b, dl)
    # the scan only reports splits that decrease the objective (gain + gamma > 0)
    if expected[1] < 0 or expected[0] + gamma <= 1e-9:
        assert best[1] < 0 or best[0] + gamma <= 1e-9
    else:
        assert best[0] == pytest.approx(expected[0], rel=1e-9, abs=1e-9)


def test_no_missing_values_send_nan_to_the_heavier_child():
    hist = np.zeros((3, 3))
    hist[0] = (-3.0, 1.0, 1.0)   # bin 0: one row
    hist[1] = (2.0, 5.0, 5.0)    # bin 1: five rows, the larger hessian
    left = np.empty(3)
    s = split_settings(1.0, 0.0, 0.0, 0.0, 0.0, 1.0)
    gain, b, dl = scan_feature(hist, 2, -1.0, 6.0, 6.0, s, left)
    assert b == 0 and dl is False  # right child (bin 1) is heavier
    hist[[0, 1]] = hist[[1, 0]]
    gain, b, dl = scan_feature(hist, 2, -1.0, 6.0, 6.0, s, left)
    assert b == 0 and dl is True


@settings(max_examples=60, deadline=None)
@given(st.integers(0, 10**6), st.integers(2, 40), st.floats(0, 2), st.sampled_from([0.0, 0.3]),
       st.integers(-30, 30))
def test_fixed_point_scan_equals_float_scan_of_the_same_values(seed, n, lam, missing, e):
    """Scanning int64 cells with units u gives the gain of scanning the float cells
    u * cells: the integers change only how sums are formed, not the split rule."""
    r = np.random.default_rng(seed)
    X = r.integers(0, 4, size=(n, 1)).astype(np.uint8)
    X[r.random(X.shape) < missing] = 4
    gq = r.integers(-2 ** 20, 2 ** 20, n)
    hq = r.integers(1, 2 ** 20, n)
    unit = 2.0 ** e
    hist_q = histogram_naive(X, gq, hq, np.arange(n), 5)[0]
    hist_f = histogram_naive(X, gq * unit, hq * unit, np.arange(n), 5)[0]
    out_q, out_f = np.empty(3, np.int64), np.empty(3)
    got = scan_feature(hist_q, 4, gq.sum(), hq.sum(), n,
                       split_settings(lam, 0.0, 0.0, 0.0, 0.0, 1, (unit, unit)), out_q)
    ref = scan_feature(hist_f, 4, (gq * unit).sum(), (hq * unit).sum(), float(n),
                       split_settings(lam, 0.0, 0.0, 0.0, 0.0, 1), out_f)
    assert got[1:] == ref[1:]
    if ref[1] >= 0:
        assert got[0] == pytest.approx(ref[0], rel=1e-9)
        np.testing.assert_allclose(out_q * np.array([unit, unit, 1.0]), out_f, rtol=1e-12)


def _one_pass_scan(cell, nb, Gt, Ht, Ct, lam, gamma, mcw, mdl, ug, uh):
    """The scan written as the plain one-pass loop (naive twin of the three-pass kernel):
    each boundary scored on its own, in order, missing rows right then left."""
    def score(g, h):
        d = h + lam
        return g * g / d if d > 0.0 else 0.0
    sp = score(Gt * ug, Ht * uh)
    tol = 1e-10 * abs(sp)
    Gm, Hm, Cm = (int(v) for v in cell[nb])
    best, best_bin, best_dl, left = -np.inf, -1, False, None
    GL = HL = CL = 0
    for b in range(nb):
        if cell[b, 2] == 0 and b < nb - 1:
            continue
        GL, HL, CL = GL + int(cell[b, 0]), HL + int(cell[b, 1]), CL + int(cell[b, 2])
        if b == nb - 1 and Cm == 0:
            break
        for t in (0, 1) if Cm > 0 and b < nb - 1 else (0,):
            gq, hq, cq = GL + Gm * t, HL + Hm * t, CL + Cm * t
            if cq < mdl or Ct - cq < mdl:
                continue
            hl, hr = hq * uh, (Ht - hq) * uh
            if hl < mcw or hr < mcw:
                continue
            gl, gr = gq * ug, (Gt - gq) * ug
            dl, dr = hl + lam, hr + lam
            if dl > 0.0 and dr > 0.0:
                delta = (gl * gl * dr + gr * gr * dl) / (dl * dr) - sp
            else:
                delta = score(gl, hl) + score(gr, hr) - sp
            if 0.5 * delta <= tol:
                continue
            gain = 0.5 * delta - gamma
            if best_bin < 0 or gain > best + 1e-6 * abs(best):
                best, best_bin, left = gain, b, (gq, hq, cq)
                best_dl = t == 1 if Cm > 0 else hl >= hr
    return best, best_bin, best_dl, left


def _assert_scan_is_the_one_pass_loop(cell, nb, bits, lam, gamma, mcw, mdl, row_max=0.0):
    """The kernel's scan of ``cell`` (units 2**-bits and 2**(2 - bits)) gives the one-pass
    loop's gain, bin, default direction and left sums, to the bit."""
    Gt, Ht, Ct = (int(v) for v in cell.sum(axis=0))
    ug, uh = 2.0 ** -bits, 2.0 ** (2 - bits)
    left = np.empty(3, np.int64)
    got = scan_feature(cell, nb, Gt, Ht, Ct,
                       split_settings(lam, 0.0, 0.0, gamma, mcw, mdl, (ug, uh), row_max), left)
    want = _one_pass_scan(cell, nb, Gt, Ht, Ct, lam, gamma, mcw, mdl, ug, uh)
    assert got[1] == want[1]
    if want[1] >= 0:
        assert got[0] == want[0] and got[2] == want[2]
        assert tuple(left) == want[3]
    else:
        assert got[0] == -np.inf


@settings(max_examples=200, deadline=None)
@given(st.integers(0, 10**6), st.integers(2, 300), st.sampled_from([0.0, 1.0]),
       st.sampled_from([0.0, 0.4]), st.sampled_from([0.0, 3.0]),
       st.sampled_from([1, 2, 3, 5, 2.5, 20]), st.sampled_from([0, 1, 6]),
       st.sampled_from([0.7, 0.1]), st.sampled_from([20, 42]))
def test_vectorized_scan_equals_the_one_pass_loop_to_the_bit(seed, nb, lam, gamma, mcw, mdl,
                                                             n_missing, filled, bits):
    """Empty bins (the last one too), bins of zero hessian (zero-weight rows: with
    lambda 0 a child's denominator is 0 and the score takes the per-child form), missing
    rows or none, every constraint: the same gain to the last bit, the same bin,
    default direction and left sums, on nodes with most bins filled and on nodes with a
    tenth of them filled (a small node of a late leaf-wise tree). Sums past 2**32 and 2**53
    too (``bits``), where the scan's conversion of int64 sums (two halves on AVX2, see
    :func:`~boostwood._kernels.intrinsics.float_of_halves`) rounds."""
    r = np.random.default_rng(seed)
    cell = np.zeros((nb + 1, 3), np.int64)
    count = np.append(r.integers(0, 4, nb) * (r.random(nb) < filled), n_missing)
    cell[:, 2] = count
    cell[:, 0] = r.integers(-2 ** bits, 2 ** bits, nb + 1) * (count > 0)
    cell[:, 1] = r.integers(0, 2 ** bits, nb + 1) * (count > 0) * (r.random(nb + 1) < 0.8)
    _assert_scan_is_the_one_pass_loop(cell, nb, bits, lam, gamma, mcw, mdl)


@settings(max_examples=200, deadline=None)
@given(st.integers(0, 10**6), st.integers(2, 300), st.sampled_from([0.0, 1.0]),
       st.sampled_from([0.0, 3.0]), st.sampled_from([1, 2.5, 20]), st.sampled_from([0, 1, 6]),
       st.sampled_from([20, 31, 40, 47]), st.sampled_from([1, 8]))
def test_scan_with_a_row_bound_equals_the_one_pass_loop_to_the_bit(seed, nb, lam, mcw, mdl,
                                                                  n_missing, bits, rows):
    """Cells of ``c`` rows of at most ``2**bits`` each, the bound stated as ``row_max``:
    nodes whose sums stay below 2**51 (``c * 2**bits`` below 2**50) take the short
    conversion, larger ones the general one, and both give the one-pass loop's gain,
    bin, direction and left sums to the bit (``bits`` 40 and 47 put nodes on either
    side of the rule, with sums past 2**51 on the far side, where the short route would
    be wrong)."""
    r = np.random.default_rng(seed)
    cell = np.zeros((nb + 1, 3), np.int64)
    count = np.append(r.integers(0, rows + 1, nb) * (r.random(nb) < 0.7), n_missing)
    bound = 2 ** bits
    cell[:, 2] = count
    # a cell of c rows sums c values of magnitude at most 2**bits; half the cells at
    # that extreme, so that sums reach the rule's bound
    extreme = r.random((nb + 1, 2)) < 0.5
    cell[:, 0] = [c * bound * int(r.choice([-1, 1])) if e else int(r.integers(-c * bound,
                  c * bound + 1)) for c, e in zip(count, extreme[:, 0])]
    cell[:, 1] = [c * bound if e else int(r.integers(0, c * bound + 1))
                  for c, e in zip(count, extreme[:, 1])]
    _assert_scan_is_the_one_pass_loop(cell, nb, bits, lam, 0.0, mcw, mdl, float(bound))


def test_small_sums_rule_at_its_edge():
    """Rows of at most 2**47: 7 rows keep every sum below 2**50 + 2**50 (the short
    conversion), 8 do not; totals at 2**50 or no stated bound (0) turn it off too."""
    from boostwood._kernels.split import _small_sums
    assert _small_sums(7, 0, 7 * 2 ** 47, 2.0 ** 47)
    assert not _small_sums(8, 0, 8 * 2 ** 47, 2.0 ** 47)
    assert not _small_sums(7, 2 ** 50, 0, 2.0 ** 47)
    assert not _small_sums(7, 0, -2 ** 50, 2.0 ** 47)
    assert not _small_sums(7, 0, 0, 0.0)
    assert _small_sums(2 ** 18, -2 ** 49, 2 ** 49, 2.0 ** 31)


@pytest.mark.parametrize("counts", [(2, 3), (8, 23), (23, 8), (100, 200)])
def test_row_bound_rule_at_its_edge(counts):
    """Two bins of rows at the bound (2**47 each): 5 rows (sums below 2**51, the short
    conversion), 31 rows (sums up to 23 * 2**47 > 2**51 with the node's bound between
    2**50 and 2**52: only the general conversion is exact there), 300 rows. The gain
    is the one-pass loop's to the bit."""
    bound = 2 ** 47
    cell = np.zeros((3, 3), np.int64)
    cell[:2, 2] = counts
    cell[:2, 0] = (counts[0] * bound, -counts[1] * bound)
    cell[:2, 1] = (counts[0] * bound, counts[1] * bound)
    Gt, Ht, Ct = (int(v) for v in cell.sum(axis=0))
    ug, uh = 2.0 ** -47, 2.0 ** -45
    left = np.empty(3, np.int64)
    got = scan_feature(cell, 2, Gt, Ht, Ct,
                       split_settings(1.0, 0.0, 0.0, 0.0, 0.0, 1, (ug, uh), float(bound)), left)
    want = _one_pass_scan(cell, 2, Gt, Ht, Ct, 1.0, 0.0, 0.0, 1, ug, uh)
    assert want[1] == 0 and got[1] == 0
    assert got[0] == want[0]


def _ordered_pick(work, n, nb, missing, tol, gamma):
    """The pick of the scans as the tie rule defines it: candidates in scan order (each
    boundary with the missing rows right, then left), a valid one above ``tol`` taken
    when it is the first or beats the running best by more than TIE_RTOL."""
    from boostwood._kernels.split import TIE_RTOL
    best, best_bin, best_t = -np.inf, -1, 0
    for b in range(n):
        for t, row in ((0, 0), (1, 2)):
            if t == 1 and not (missing and b < nb - 1):
                continue
            d = work[row, b]
            if work[row + 1, b] == 0.0 or 0.5 * d <= tol:
                continue
            gain = 0.5 * d - gamma
            if best_bin < 0 or gain > best + TIE_RTOL * abs(best):
                best, best_bin, best_t = gain, b, t
    return best, best_bin, best_t


@settings(max_examples=300, deadline=None)
@given(st.integers(0, 10**6), st.integers(2, 40), st.booleans(),
       st.sampled_from([0.0, 0.4, 50.0]), st.sampled_from([0.0, 1e-3]))
def test_pick_equals_the_ordered_tie_rule(seed, nb, missing, gamma, tol):
    """Pass 3 of the scans on deltas crowded near the top (equal, 1, 2, 3 and 4
    TIE_RTOL apart, of both signs of gain with gamma): the one-candidate shortcut and the
    ordered walk give the rule's pick, gain to the bit."""
    from boostwood._kernels.split import TIE_RTOL, _pick
    r = np.random.default_rng(seed)
    n = nb if missing else nb - 1
    top = float(r.choice([1.0, 80.0, 100.4]))
    steps = np.array([0.0, 0.0, 1.0, 2.0, 3.0, 4.0, 1e3, 1e5])
    work = np.zeros((4, nb + 3))
    for row in (0, 2):
        work[row, :n] = top * (1.0 - r.choice(steps, n) * TIE_RTOL)
        work[row + 1, :n] = (r.random(n) < 0.8).astype(float)
    work[:, n:] = np.nan  # past the boundaries: never read
    got = _pick(work, n, nb, missing, tol, gamma)
    want = _ordered_pick(work, n, nb, missing, tol, gamma)
    assert got[1] == want[1] and got[2] == want[2]
    assert got[0] == want[0] or (got[1] < 0 and want[1] < 0)


@pytest.mark.parametrize("deltas,n_near", [
    ([1.0, 2.0, 5.0, 3.0, 5.0 * (1 - 1e3 * 1e-6)], 1),  # one near the top: the shortcut
    ([5.0 * (1 - 1e-7), 2.0, 5.0, 3.0], 2),  # an earlier near-tie: the ordered walk keeps it
])
def test_pick_takes_each_path_and_keeps_the_rule(deltas, n_near):
    """The shortcut is taken exactly when one candidate is within 3 TIE_RTOL of the top,
    and both paths give the rule's pick (the near-tie keeps the earlier bin)."""
    from boostwood._kernels.split import TIE_RTOL, _near_top, _pick
    n = len(deltas)
    work = np.zeros((4, n + 1))
    work[0, :n], work[1, :n] = deltas, 1.0
    top = max(deltas)
    floor = 0.5 * top - 3.0 * TIE_RTOL * abs(0.5 * top)
    assert _near_top(work, 0, n, 0.0, 0.0, floor)[0] == n_near
    got = _pick(work, n, n + 1, False, 0.0, 0.0)
    assert got == _ordered_pick(work, n, n + 1, False, 0.0, 0.0)
    assert got[1] == (2 if n_near == 1 else 0)


def test_scan_subtracts_its_pairs_in_the_same_region():
    """find_best_splits with pairs: the larger child's slot is its parent's minus the
    built child's, feature by feature in the scan's tasks, exactly as subtract_histograms
    then a scan without pairs; masked features are subtracted too (the histogram is a
    parent later), inactive ones are not, and a pair whose parent no node holds is
    subtracted on its own."""
    from boostwood._kernels.histogram import subtract_histograms
    rng = np.random.default_rng(3)
    n, F, nb = 3000, 5, 16
    X = rng.integers(0, nb, size=(n, F)).astype(np.uint8)  # bin nb - 1: missing
    g, h = rng.integers(-500, 500, n), rng.integers(1, 400, n)
    rows = rng.permutation(n)
    A, B, C, D = rows[:1400], rows[1400:2000], rows[2000:2600], rows[2600:]
    hist = np.stack([histogram_naive(X, g, h, r, nb)
                     for r in (np.r_[A, B], B, np.r_[C, D], D)])
    features = np.array([0, 2, 3, 4], dtype=np.int64)  # feature 1 inactive
    slots = np.array([1, 0], dtype=np.int64)  # the built child B, the larger child A
    pairs = np.array([[0, 2], [1, 3]], dtype=np.int64)  # (2, 3): its parent is not scanned
    totals = np.array([[g[r].sum(), h[r].sum(), r.size] for r in (B, A)], dtype=np.int64)
    mask = np.ones((2, 4), np.uint8)
    mask[1, 1] = 0  # A may not split on feature 2: subtracted all the same
    settings_ = split_settings(1.0, 0.0, 0.0, 0.0, 0.0, 1.0)
    results = []
    for fused in (True, False):
        hh = hist.copy()
        out = (np.zeros((2, 4)), np.zeros((N_PICK, 2, 4), np.int64), np.zeros((2, 4, 3), np.int64))
        if not fused:
            subtract_histograms(pairs[0], pairs[1], features, hh)
        find_best_splits(hh, slots, pairs if fused else np.zeros((2, 0), np.int64), totals,
                         np.full(F, nb - 1, np.int32), features, mask, settings_, out)
        results.append((hh, out))
    (h1, o1), (h2, o2) = results
    np.testing.assert_array_equal(h1, h2)
    for a, b in zip(o1, o2):
        np.testing.assert_array_equal(a, b)
    np.testing.assert_array_equal(h1[0][features], histogram_naive(X, g, h, A, nb)[features])
    np.testing.assert_array_equal(h1[2][features], histogram_naive(X, g, h, C, nb)[features])
    np.testing.assert_array_equal(h1[0][1], hist[0][1])  # inactive: untouched
    assert o1[0][1, 1] == -np.inf and np.isfinite(o1[0][0]).all()


def test_scan_subtracts_only_the_cells_of_each_features_bins():
    """The subtraction in the scan covers a feature's value bins and its missing bin
    (``n_bins[f] + 1`` cells, 3 of a binary column's 16 here): cells above are left as
    they are (zero in every histogram the build writes; a stale value in the child's
    stands in for any), and the sibling's used cells and the best splits are exact."""
    rng = np.random.default_rng(8)
    n, nb_max = 2000, 16
    n_bins = np.array([2, 15, 5], dtype=np.int32)  # binary, full, five values
    X = np.column_stack([rng.integers(0, k + 1, n) for k in n_bins]).astype(np.uint8)
    g, h = rng.integers(-500, 500, n), rng.integers(1, 400, n)
    rows = rng.permutation(n)
    A, B = rows[:1200], rows[1200:]
    hist = np.stack([histogram_naive(X, g, h, r, nb_max) for r in (np.r_[A, B], B)])
    for f, k in enumerate(n_bins):
        assert not hist[:, f, k + 1:].any()
        hist[1, f, k + 1:] = 7  # stale cells above the child's bins: never read
    features = np.arange(3, dtype=np.int64)
    totals = np.array([[g[r].sum(), h[r].sum(), r.size] for r in (B, A)], dtype=np.int64)
    settings_ = split_settings(1.0, 0.0, 0.0, 0.0, 0.0, 1.0)
    out = (np.zeros((2, 3)), np.zeros((N_PICK, 2, 3), np.int64), np.zeros((2, 3, 3), np.int64))
    find_best_splits(hist, np.array([1, 0]), np.array([[0], [1]]), totals, n_bins, features,
                     np.ones((2, 3), np.uint8), settings_, out)
    clean = np.stack([histogram_naive(X, g, h, r, nb_max) for r in (A, B)])
    ref = (np.zeros((2, 3)), np.zeros((N_PICK, 2, 3), np.int64), np.zeros((2, 3, 3), np.int64))
    find_best_splits(clean, np.array([1, 0]), np.zeros((2, 0), np.int64), totals, n_bins,
                     features, np.ones((2, 3), np.uint8), settings_, ref)
    np.testing.assert_array_equal(hist[0], clean[0])  # the used cells exact, the rest zero
    for a, b in zip(out, ref):
        np.testing.assert_array_equal(a, b)


def test_scan_refuses_pairs_it_would_subtract_twice_or_lose():
    """Two nodes of a scan on one slot (both would subtract), or two pairs with one parent
    (one would be lost): an error, never a wrong histogram."""
    from boostwood._kernels.split import _minus_slots
    hist = np.zeros((4, 2, 8, 3), np.int64)
    feats = np.arange(2, dtype=np.int64)
    n_bins = np.full(2, 7, dtype=np.int32)
    with pytest.raises(ValueError, match="hold one histogram slot"):
        _minus_slots(hist, np.array([0, 0]), np.array([[0], [1]]), feats, n_bins)
    with pytest.raises(ValueError, match="share a parent slot"):
        _minus_slots(hist, np.array([0, 2]), np.array([[0, 0], [1, 3]]), feats, n_bins)
    minus = _minus_slots(hist, np.array([2, 0]), np.array([[0], [1]]), feats, n_bins)
    assert minus.tolist() == [-1, 1]
