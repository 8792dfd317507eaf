import numpy as np
import pytest

from boostwood._kernels.histogram import sum_gradients
from boostwood._kernels.reference import histogram_naive
from boostwood.tree.histogram import HIST_BLOCK, HistogramBuilder


def _data(n, F, nb, seed=0):
    """Binned rows and fixed-point (g, h) as the grower hands them to the builder."""
    r = np.random.default_rng(seed)
    X = r.integers(0, nb, size=(n, F)).astype(np.uint8)
    gh = r.normal(size=(n, 2)).astype(np.float32)
    gh[:, 1] = np.abs(gh[:, 1])
    return X, np.rint(gh.astype(np.float64) * 2.0 ** 40).astype(np.int64)


@pytest.mark.parametrize("n", [1, 50, HIST_BLOCK + 7, 3 * HIST_BLOCK + 1])
def test_histogram_matches_naive_across_blocks(n):
    X, gh = _data(n, 4, 9)
    rows = np.sort(np.random.default_rng(1).choice(n, max(1, n // 2), replace=False)).astype(np.int32)
    b = HistogramBuilder(X, 10)
    feats = np.arange(4, dtype=np.int64)
    b.build(gh, rows[None, :], np.zeros(1, np.int64), np.array([0]), np.array([rows.size]),
            np.array([3]), feats)
    np.testing.assert_allclose(b.hist[3], histogram_naive(X, gh[:, 0], gh[:, 1], rows, 10),
                               rtol=1e-12, atol=1e-9)


def test_batch_of_nodes_and_feature_subset():
    X, gh = _data(5000, 5, 7)
    idx = np.random.default_rng(2).permutation(5000).astype(np.int32)
    starts, counts = np.array([0, 1000, 1001]), np.array([1000, 1, 3999])
    b = HistogramBuilder(X, 8)
    feats = np.array([1, 3], dtype=np.int64)
    b.hist[:] = -7
    b.build(gh, idx[None, :], np.zeros(3, np.int64), starts, counts, np.array([0, 1, 2]), feats)
    for k in range(3):
        naive = histogram_naive(X, gh[:, 0], gh[:, 1], idx[starts[k]:starts[k] + counts[k]], 8)
        np.testing.assert_allclose(b.hist[k][feats], naive[feats], rtol=1e-12, atol=1e-9)
        assert np.all(b.hist[k][[0, 2, 4]] == -7.0)  # features not asked for stay untouched


def test_subtraction_equals_brute_force_and_totals_agree():
    X, gh = _data(40000, 3, 12)
    idx = np.arange(40000, dtype=np.int32)
    left = X[:, 0] <= 5
    part = np.concatenate([idx[left], idx[~left]]).astype(np.int32)
    nl = int(left.sum())
    b = HistogramBuilder(X, 13)
    feats = np.arange(3, dtype=np.int64)
    b.build(gh, part[None, :], np.zeros(1, np.int64), np.array([0]), np.array([40000]),
            np.array([0]), feats)  # parent
    b.build(gh, part[None, :], np.zeros(2, np.int64), np.array([0, nl]), np.array([nl, 40000 - nl]),
            np.array([1, 2]), feats)
    b.subtract(np.array([0]), np.array([1]), feats)  # parent - left = right
    np.testing.assert_allclose(b.hist[0], b.hist[2], rtol=1e-9, atol=1e-7)
    # every feature's histogram sums to the node totals
    tot = np.empty(3, dtype=np.int64)
    sum_gradients(gh, part, nl, 40000 - nl, tot)
    np.testing.assert_allclose(b.hist[2].sum(axis=1), np.tile(tot, (3, 1)), rtol=1e-9)


def test_result_does_not_depend_on_threads():
    import numba
    X, gh = _data(3 * HIST_BLOCK, 6, 30)
    idx = np.arange(X.shape[0], dtype=np.int32)
    out = []
    for t in (1, numba.config.NUMBA_NUM_THREADS):
        numba.set_num_threads(t)
        b = HistogramBuilder(X, 31)
        b.build(gh, idx[None, :], np.zeros(1, np.int64), np.array([0]), np.array([idx.size]),
                np.array([0]), np.arange(6, dtype=np.int64))
        out.append(b.hist[0].copy())
    assert np.array_equal(out[0], out[1])


def test_integer_histograms_are_exact():
    """Fixed-point cells are exact sums: equal to the naive sum to the last bit, and
    parent - left is exactly the right child's histogram."""
    X, gh = _data(3 * HIST_BLOCK + 5, 4, 11, seed=5)
    idx = np.arange(X.shape[0], dtype=np.int32)
    b = HistogramBuilder(X, 12)
    feats = np.arange(4, dtype=np.int64)
    nl = 20000
    b.build(gh, idx[None, :], np.zeros(3, np.int64), np.array([0, 0, nl]),
            np.array([idx.size, nl, idx.size - nl]), np.array([0, 1, 2]), feats)
    assert b.hist.dtype == np.int64
    np.testing.assert_array_equal(b.hist[0], histogram_naive(X, gh[:, 0], gh[:, 1], idx, 12))
    b.subtract(np.array([0]), np.array([1]), feats)
    np.testing.assert_array_equal(b.hist[0], b.hist[2])


def _extreme_gh(n, seed):
    """int32 fixed-point rows at the edges of the range, negative hessians included."""
    r = np.random.default_rng(seed)
    gh = r.integers(-2 ** 31, 2 ** 31, size=(n, 2), dtype=np.int64)
    gh[r.random(n) < 0.3] = 2 ** 31 - 1
    gh[r.random(n) < 0.2, 1] = -2 ** 31
    return gh.astype(np.int32)


def test_scratch_rows_of_features_are_not_4_kib_apart():
    """The rule of *Scratch rows padded* (histogram.py): no two features' scratch rows
    start a multiple of 4,096 bytes apart, for any bin count and lane width, so a row
    whose features fall in the same low bins (binary and low-cardinality columns)
    never updates cells the CPU takes for one address (2.5-3.5x slower builds)."""
    from boostwood._kernels.histogram import _feature_words
    for lanes in (1, 2):
        for nb in range(2, 1025):
            words = _feature_words(nb, lanes)
            assert words >= nb * lanes
            assert words >= (nb + 4) * lanes  # four cells or more between rows
            for k in range(1, 256):  # features k apart
                assert (k * words * 8) % 4096 != 0, (lanes, nb, k)


def test_histogram_slots_of_features_are_not_4_kib_apart():
    """The grower's histogram slots (written by the direct loop) follow the same rule:
    ``hist_bins`` cells of 24 bytes, never a multiple of 4,096 bytes for features under
    256 apart; the extra cell of an even bin count stays zero through a fit."""
    from boostwood._kernels.histogram import hist_bins
    from boostwood.tree import GrowerParams, TreeGrower
    for nb in range(2, 1025):
        cells = hist_bins(nb)
        assert cells in (nb, nb + 1)
        for k in range(1, 256):
            assert (k * cells * 24) % 4096 != 0, (nb, k)
    rng = np.random.default_rng(0)
    X = rng.integers(0, 256, size=(3000, 4)).astype(np.uint8)
    grower = TreeGrower(X, np.full(4, 255, np.int32), 256,
                        GrowerParams(grow_policy="lossguide", max_leaves=16, max_depth=0))
    assert grower.builder.hist.shape[2] == 257
    gh = np.column_stack([rng.normal(size=3000), np.ones(3000)]).astype(np.float32)
    tree, _ = grower.grow(gh, None, np.arange(4, dtype=np.int64), rng)
    assert tree.n_leaves > 8 and not grower.builder.hist[:, :, 256].any()


@pytest.mark.parametrize("dtype,nb", [(np.uint8, 256), (np.uint16, 300)])
def test_packed_block_equals_direct_and_naive(dtype, nb):
    """The packed accumulation (two channels, count in the low bits of h) gives the
    direct three-channel sums to the last bit, at the largest block and extreme values,
    for all features and a subset, and leaves other features untouched."""
    from boostwood._kernels.histogram import (COUNT_BITS, _feature_words, _packed_accumulate,
                                              _zero_and_accumulate)
    n, F = 3 * HIST_BLOCK, 5
    X = np.random.default_rng(3).integers(0, nb, size=(n, F)).astype(dtype)
    X[: HIST_BLOCK // 2, 2] = 7  # one crowded bin: its count reaches ~HIST_BLOCK / 2
    gh = _extreme_gh(n, 4)
    rows = np.sort(np.random.default_rng(5).choice(n, 2 * HIST_BLOCK, replace=False))
    rows = rows.astype(np.int32)
    count = (1 << COUNT_BITS) - 1  # the most rows a packed block may hold
    assert count <= rows.size
    full = np.full(F, nb - 1, dtype=np.int32)  # every cell a bin
    for features, flo, fhi in ((np.arange(F, dtype=np.int64), 0, F),
                               (np.array([0, 2, 4], dtype=np.int64), 1, 3)):
        all_f = features.size == F
        packed = np.full(F * nb * 3, -9, dtype=np.int64)
        direct = packed.copy()
        scratch = np.full(F * _feature_words(nb, 2), 5, dtype=np.int64)  # dirty workspace
        _packed_accumulate(X, gh, rows, 0, count, features, full, flo, fhi, all_f, nb, scratch,
                           packed)
        _zero_and_accumulate(X, gh, rows, 0, count, features, full, flo, fhi, all_f, nb, direct)
        np.testing.assert_array_equal(packed, direct)
        naive = histogram_naive(X, gh[:, 0], gh[:, 1], rows[:count], nb)
        got = packed.reshape(F, nb, 3)
        for j in range(flo, fhi):
            np.testing.assert_array_equal(got[features[j]], naive[features[j]])
        untouched = np.setdiff1d(np.arange(F), features[flo:fhi])
        assert np.all(got[untouched] == -9)


@pytest.mark.parametrize("n_threads", [1, 2, 5, 16])
@pytest.mark.parametrize("rows_kind", ["int32", "int16 quantized"])
def test_build_mixes_packed_and_direct_blocks_exactly(n_threads, rows_kind):
    """Nodes of many sizes (below and above the packing rule, one and several blocks)
    built in one batch equal the exact naive histograms: int32 rows (two-lane packed cells
    where the rule allows) and int16 quantized rows (one-lane cells). The same batch with
    int64 rows (always direct) gives the same cells."""
    from boostwood._kernels.histogram import PACKED_MIN_ROWS_PER_BIN, build_histograms
    n, F, nb = 4 * HIST_BLOCK, 6, 64
    X = np.random.default_rng(6).integers(0, nb, size=(n, F)).astype(np.uint8)
    gh = _extreme_gh(n, 7) if rows_kind == "int32" else _extreme_quantized(n, 7)
    idx = np.random.default_rng(8).permutation(n).astype(np.int32)
    rule = PACKED_MIN_ROWS_PER_BIN * nb
    counts = np.array([1, rule - 1, rule, rule + 1, HIST_BLOCK, 2 * HIST_BLOCK + 3])
    starts = np.concatenate([[0], np.cumsum(counts)[:-1]])
    assert starts[-1] + counts[-1] <= n
    feats = np.arange(F, dtype=np.int64)
    results = []
    for rows_gh in (gh, gh.astype(np.int64)):
        hist = np.zeros((counts.size, F, nb, 3), dtype=np.int64)
        partial = np.zeros((8, F, nb, 3), dtype=np.int64)
        build_histograms(X, rows_gh, idx[None, :], np.zeros(counts.size, np.int64), starts,
                         counts, np.arange(counts.size, dtype=np.int64), feats,
                         np.full(F, nb - 1, np.int32), HIST_BLOCK, n_threads, hist, partial)
        results.append(hist)
    np.testing.assert_array_equal(results[0], results[1])
    for k in range(counts.size):
        seg = np.sort(idx[starts[k]:starts[k] + counts[k]])
        naive = histogram_naive(X, gh[:, 0], gh[:, 1], seg, nb)
        np.testing.assert_array_equal(results[0][k], naive)

def _extreme_quantized(n, seed):
    """int16 quantized rows at the edges of the levels the one-lane cell takes
    (|g| <= 128, |h| <= 255, negative hessians included)."""
    r = np.random.default_rng(seed)
    gh = np.empty((n, 2), dtype=np.int16)
    gh[:, 0] = r.integers(-128, 129, n)
    gh[:, 1] = r.integers(-255, 256, n)
    gh[r.random(n) < 0.3] = (128, 255)
    gh[r.random(n) < 0.2] = (-128, -255)
    return gh


@pytest.mark.parametrize("dtype,nb", [(np.uint8, 256), (np.uint16, 300)])
def test_one_lane_block_equals_direct_and_naive(dtype, nb):
    """Quantized rows summed in one-lane cells (g, h and the count in one int64) give the
    direct three-channel sums to the last bit, at the largest block, with one bin holding
    the whole block at the extreme levels of both signs, for all features and a subset."""
    from boostwood._kernels.histogram import (COUNT_BITS, _feature_words, _one_lane_accumulate,
                                              _zero_and_accumulate)
    n, F = 3 * HIST_BLOCK, 5
    X = np.random.default_rng(3).integers(0, nb, size=(n, F)).astype(dtype)
    gh = _extreme_quantized(n, 4)
    rows = np.sort(np.random.default_rng(5).choice(n, 2 * HIST_BLOCK, replace=False))
    rows = rows.astype(np.int32)
    count = (1 << COUNT_BITS) - 1
    X[rows[:count], 2] = 7  # one bin holding the whole block, ...
    gh[rows[:count * 7 // 8]] = (128, 255)  # ... its cell near the largest sums (7/8 of
    gh[rows[count * 7 // 8:count]] = (-128, -255)  # 2**23 for h), then back down
    full = np.full(F, nb - 1, dtype=np.int32)  # every cell a bin
    for features, flo, fhi in ((np.arange(F, dtype=np.int64), 0, F),
                               (np.array([0, 2, 4], dtype=np.int64), 1, 3)):
        all_f = features.size == F
        one = np.full(F * nb * 3, -9, dtype=np.int64)
        direct = one.copy()
        scratch = np.full(F * _feature_words(nb, 1), 5, dtype=np.int64)  # dirty workspace
        _one_lane_accumulate(X, gh, rows, 0, count, features, full, flo, fhi, all_f, nb, scratch,
                             one)
        _zero_and_accumulate(X, gh, rows, 0, count, features, full, flo, fhi, all_f, nb, direct)
        np.testing.assert_array_equal(one, direct)
        naive = histogram_naive(X, gh[:, 0], gh[:, 1], rows[:count], nb)
        got = one.reshape(F, nb, 3)
        for j in range(flo, fhi):
            np.testing.assert_array_equal(got[features[j]], naive[features[j]])
        assert np.all(got[np.setdiff1d(np.arange(F), features[flo:fhi])] == -9)
    # the crowded cell really came near the edge of its fields
    assert int(gh[rows[:count], 1].astype(np.int64).sum()) > 2 ** 22



@pytest.mark.parametrize("rows_kind", ["int32", "int16 quantized"])
@pytest.mark.parametrize("counts,n_threads,all_features", [
    ([40000], 3, True),  # one node over 2**COUNT_BITS rows, in 3 runs
    ([2048], 2, False),  # the smallest batch of two runs, feature subset
    ([5000, 20000], 2, True),  # two nodes, the run boundary inside the second
    ([1, 3000], 4, True),  # a one-row node beside a cut one: 2 runs of 2 ranges
    ([50000], 2, True),  # two runs of two blocks each
    ([4000], 16, True),  # 3 runs of the 5 features in 5 ranges: 15 units
    ([2048], 16, False),  # 2 runs, the 2 features of the subset one range each
    ([1, 3000], 16, True),  # 2 runs of 5 ranges
])
def test_small_batch_cut_into_runs_equals_naive(rows_kind, counts, n_threads, all_features):
    """A small batch built in runs of equal rows (each run's part of a node summed in
    packed cells, the parts that start inside a node then added to its slot) equals the
    naive histograms to the bit, including a bin that holds every row of a node of more
    than 2**COUNT_BITS rows at extreme values (each part is unpacked before the parts are
    added), and leaves the features it was not asked for untouched. The plan is the one
    meant (runs and ranges), and it uses one buffer per run after the first at most."""
    from boostwood._kernels.histogram import (COUNT_BITS, MIN_RUN_ROWS, build_histograms,
                                              partials_bound, row_workers)
    n, F, nb = 50000, 5, 40
    X = np.random.default_rng(9).integers(0, nb, size=(n, F)).astype(np.uint8)
    gh = _extreme_gh(n, 10) if rows_kind == "int32" else _extreme_quantized(n, 10)
    idx = np.random.default_rng(11).permutation(n).astype(np.int32)
    counts = np.array(counts, dtype=np.int64)
    starts = np.concatenate([[0], np.cumsum(counts)[:-1]]).astype(np.int64)
    X[idx[:counts[0]], 1] = 3  # a crowded bin: all the first node's rows
    feats = np.arange(F, dtype=np.int64) if all_features else np.array([1, 4], dtype=np.int64)
    n_buffers = partials_bound(int(counts.sum()), n_threads)
    n_runs, n_groups = row_workers(counts.sum(), feats.size, n_threads, n_buffers + 1)
    assert n_runs == min(n_threads, counts.sum() // MIN_RUN_ROWS) >= 2
    assert n_runs * n_groups <= n_threads and n_groups <= feats.size
    assert n_groups == (1 if n_runs == n_threads else min(feats.size, n_threads // n_runs))
    partial = np.full((n_buffers + 1, F, nb, 3), 77, dtype=np.int64)  # dirty, one spare
    hist = np.full((counts.size + 1, F, nb, 3), -5, dtype=np.int64)
    slots = np.arange(1, counts.size + 1, dtype=np.int64)
    build_histograms(X, gh, idx[None, :], np.zeros(counts.size, np.int64), starts, counts,
                     slots, feats, np.full(F, nb - 1, np.int32), HIST_BLOCK, n_threads, hist,
                     partial)
    for k in range(counts.size):
        naive = histogram_naive(X, gh[:, 0], gh[:, 1], idx[starts[k]:starts[k] + counts[k]], nb)
        np.testing.assert_array_equal(hist[slots[k]][feats], naive[feats])
        others = np.setdiff1d(np.arange(F), feats)
        assert np.all(hist[slots[k]][others] == -5)
    assert np.all(hist[0] == -5)
    assert np.all(partial[n_runs - 1:] == 77)
    if counts[0] >= 1 << COUNT_BITS:
        assert hist[1, 1, 3, 2] == counts[0]


def test_runs_and_ranges_follow_rows_threads_and_buffers():
    """row_workers: a run per thread once each run has MIN_RUN_ROWS rows; with fewer
    runs, the threads left over share each run's features (never more ranges than
    features); never more runs than the buffers allow (one per run after the first);
    one thread, one run. partials_bound gives every run it allows its buffer."""
    from boostwood._kernels.histogram import MIN_RUN_ROWS as M
    from boostwood._kernels.histogram import partials_bound, row_workers
    assert row_workers(800_000, 28, 16, 15) == (16, 1)
    assert row_workers(4000, 28, 16, 15) == (3, 5)  # a leaf-wise child on 16 threads
    assert row_workers(4000, 2, 16, 15) == (3, 2)  # no more ranges than features
    assert row_workers(500, 28, 16, 15) == (1, 16)
    assert row_workers(800_000, 28, 16, 3) == (4, 4)  # few buffers: few runs
    assert row_workers(800_000, 28, 16, 0) == (1, 16)
    assert row_workers(800_000, 28, 1, 0) == (1, 1)
    assert row_workers(0, 28, 2, 1) == (1, 2)
    for t in (1, 2, 3, 8, 16):
        for total in (0, M - 1, M, 2 * M, 5 * M + 3, 10 ** 6):
            b = partials_bound(total, t)
            runs, groups = row_workers(total, 28, t, b)
            assert runs == max(1, min(t, total // M)) and b == runs - 1
            assert runs * groups <= t


def _level(block, seed):
    """A depth-wise level's batch: full blocks beside nodes of a few rows, and empty
    nodes at both ends and inside."""
    rng = np.random.default_rng(seed)
    return np.concatenate([[0, 7 * block + 11, 3 * block], rng.integers(1, 60, size=40), [0],
                           [5 * block - 7], rng.integers(1, 40, size=30), [0]]).astype(np.int64)


@pytest.mark.parametrize("n_runs", [1, 2, 3, 8, 16])
def test_runs_hold_equal_rows_and_a_buffer_per_boundary(n_runs):
    """_plan_runs on a depth-wise level: every run holds the batch's rows / n_runs within
    one row (the plan before gave each thread an equal number of blocks or pieces: at 16
    threads the busiest had 1.6-2.3x the mean rows on depth-8 trees); every block at most
    block_size rows; each node's tasks tile its segment exactly once; a part that starts
    at the node's first row goes to its slot, one that starts inside to a buffer of its
    own, and a node's buffers are consecutive, at most n_runs - 1 in all; in each part
    the first block overwrites and the others add; an empty node is one empty task that
    overwrites its slot."""
    from boostwood._kernels.histogram import _plan_runs
    block = 300
    counts = _level(block, 21)
    k = counts.size
    starts = 1000 + np.concatenate([[0], np.cumsum(counts)[:-1]]).astype(np.int64)
    slots = np.random.default_rng(1).permutation(k).astype(np.int64) + 100
    sides = np.arange(k, dtype=np.int64) % 2
    (t_start, t_count, t_dest, t_partial, t_add, t_side, run_first, part_first, part_count,
     split) = _plan_runs(starts, counts, slots, sides, block, n_runs)
    n_tasks = int(run_first[n_runs])
    rows = [int(t_count[run_first[w]:run_first[w + 1]].sum()) for w in range(n_runs)]
    assert sum(rows) == counts.sum() and max(rows) - min(rows) <= 1
    assert run_first[0] == 0 and np.all(np.diff(run_first) >= 0)
    assert np.all(t_count[:n_tasks] <= block)
    ends = starts + counts
    covered = np.zeros(int(ends[-1]), dtype=np.int64)
    buffers = {j: set() for j in range(k)}
    for w in range(n_runs):
        seen = set()
        for t in range(run_first[w], run_first[w + 1]):
            if t_count[t] == 0:  # an empty node
                j = int(np.flatnonzero((counts == 0) & (slots == t_dest[t]))[0])
            else:
                j = int(np.searchsorted(starts, t_start[t], side="right") - 1)
                while counts[j] == 0:  # empty nodes share their start with the next
                    j += 1
                assert t_start[t] + t_count[t] <= ends[j]
                covered[t_start[t]:t_start[t] + t_count[t]] += 1
            assert t_side[t] == sides[j]
            key = (bool(t_partial[t]), int(t_dest[t]))
            assert t_add[t] == (key in seen)  # a part's first block overwrites
            seen.add(key)
            if t_partial[t]:
                buffers[j].add(int(t_dest[t]))
            else:
                assert t_dest[t] == slots[j]
                assert t_count[t] == 0 or t_start[t] == starts[j] or t_add[t]
    assert np.all(covered[1000:] == 1)
    for j in range(k):
        assert buffers[j] == set(range(part_first[j], part_first[j] + part_count[j]))
    assert sum(part_count) <= n_runs - 1
    assert list(split) == [j for j in range(k) if part_count[j] > 0]
    for j in np.flatnonzero(counts == 0):
        assert np.sum((t_count[:n_tasks] == 0) & (t_dest[:n_tasks] == slots[j])) == 1


@pytest.mark.parametrize("n_threads", [2, 3, 8])
@pytest.mark.parametrize("rows_kind", ["int32", "int16 quantized", "int64"])
def test_level_in_runs_equals_naive_within_partials_bound(n_threads, rows_kind):
    """A depth-wise level and a batch of two nodes of many blocks each, built in runs on
    ``partials_bound`` buffers (a spare one stays untouched), equal the exact naive
    histograms: packed (int32, int16) and direct (int64) blocks alike."""
    from boostwood._kernels.histogram import MIN_RUN_ROWS, build_histograms, partials_bound
    block, F, nb = 300, 5, 16
    for counts in (_level(block, 21), np.array([12 * block + 17, 5 * block - 3])):
        n, k = int(counts.sum()), counts.size
        rng = np.random.default_rng(n_threads)
        X = rng.integers(0, nb, size=(n, F)).astype(np.uint8)
        gh = {"int32": _extreme_gh(n, 10), "int16 quantized": _extreme_quantized(n, 10),
              "int64": _data(n, 1, 2, seed=10)[1]}[rows_kind]
        idx = rng.permutation(n).astype(np.int32)
        starts = np.concatenate([[0], np.cumsum(counts)[:-1]]).astype(np.int64)
        need = partials_bound(n, n_threads)
        assert need == min(n_threads, n // MIN_RUN_ROWS) - 1 >= 1
        hist = np.full((k, F, nb, 3), 9, dtype=np.int64)
        partial = np.full((need + 1, F, nb, 3), -5, dtype=np.int64)
        build_histograms(X, gh, idx[None, :], np.zeros(k, np.int64), starts, counts,
                         np.arange(k, dtype=np.int64), np.arange(F, dtype=np.int64),
                         np.full(F, nb - 1, np.int32), block, n_threads, hist, partial)
        assert np.all(partial[need:] == -5)
        for j in range(k):
            seg = np.sort(idx[starts[j]:starts[j] + counts[j]])
            np.testing.assert_array_equal(
                hist[j], histogram_naive(X, gh[:, 0].astype(np.int64),
                                         gh[:, 1].astype(np.int64), seg, nb))


def test_one_feature_on_many_threads_and_too_few_buffers():
    """No more feature ranges than features: one feature on 16 threads is one range; a
    batch given fewer buffers than its runs want takes fewer runs (none given: one run)
    and stays exact."""
    from boostwood._kernels.histogram import build_histograms, row_workers
    block, nb = 300, 8
    n = 4 * block
    assert row_workers(n, 1, 16, 15) == (1, 1)
    X = np.random.default_rng(12).integers(0, nb, size=(n, 1)).astype(np.uint8)
    gh = _extreme_gh(n, 13)
    idx = np.arange(n, dtype=np.int32)
    naive = histogram_naive(X, gh[:, 0].astype(np.int64), gh[:, 1].astype(np.int64), idx, nb)
    for n_threads, n_buffers in ((16, 3), (2, 0)):
        hist = np.zeros((1, 1, nb, 3), dtype=np.int64)
        partial = np.full((n_buffers, 1, nb, 3), -5, dtype=np.int64)
        build_histograms(X, gh, idx[None, :], np.zeros(1, np.int64), np.array([0]),
                         np.array([n]), np.array([0]), np.arange(1, dtype=np.int64),
                         np.full(1, nb - 1, np.int32), block, n_threads, hist, partial)
        np.testing.assert_array_equal(hist[0], naive)
        assert np.all(partial == -5)
    X5 = np.random.default_rng(14).integers(0, nb, size=(40 * block, 5)).astype(np.uint8)
    gh5 = _extreme_gh(40 * block, 15)
    idx5 = np.random.default_rng(16).permutation(40 * block).astype(np.int32)
    hist = np.zeros((1, 5, nb, 3), dtype=np.int64)
    partial = np.full((2, 5, nb, 3), -5, dtype=np.int64)  # 3 runs of the 8 wanted
    build_histograms(X5, gh5, idx5[None, :], np.zeros(1, np.int64), np.array([0]),
                     np.array([40 * block]), np.array([0]), np.arange(5, dtype=np.int64),
                     np.full(5, nb - 1, np.int32), block, 8, hist, partial)
    np.testing.assert_array_equal(hist[0], histogram_naive(
        X5, gh5[:, 0].astype(np.int64), gh5[:, 1].astype(np.int64), idx5, nb))


def test_builder_reserves_a_buffer_per_run_after_the_first():
    """The builder reserves ``partials_bound`` buffers with a build (one on 2 threads),
    and the result is the naive histogram."""
    import numba
    if numba.config.NUMBA_NUM_THREADS < 2:
        pytest.skip("one thread: one run")
    X, gh = _data(5000, 4, 9)
    b = HistogramBuilder(X, 10)
    before = numba.get_num_threads()
    numba.set_num_threads(2)
    try:
        b.build(gh, np.arange(5000, dtype=np.int32)[None, :], np.zeros(1, np.int64),
                np.array([0]), np.array([5000]), np.array([0]), np.arange(4, dtype=np.int64))
    finally:
        numba.set_num_threads(before)
    assert b.partial.shape[0] == 1
    np.testing.assert_array_equal(b.hist[0], histogram_naive(X, gh[:, 0], gh[:, 1],
                                                             np.arange(5000), 10))


def test_subtract_kernel_takes_every_cell_of_the_features_asked_for():
    """``subtract_histograms`` on cells all non-zero (the missing bin's count and every
    channel included), several pairs at once, a feature subset: parent - child exactly
    on those features, the others and the children untouched."""
    from boostwood._kernels.histogram import subtract_histograms
    r = np.random.default_rng(3)
    hist = r.integers(1, 2 ** 40, size=(6, 5, 9, 3))
    before = hist.copy()
    parents, children = np.array([4, 0]), np.array([1, 5])
    feats = np.array([0, 2, 4], dtype=np.int64)
    subtract_histograms(parents, children, feats, hist)
    want = before.copy()
    for p, c in zip(parents, children):
        want[p][feats] -= before[c][feats]
    np.testing.assert_array_equal(hist, want)


@pytest.mark.parametrize("count", [1, 40, 300])
def test_one_small_node_on_a_feature_subset(count):
    """A batch of one node (40 rows of 28 features: below SERIAL_MAX_UPDATES, built on the
    calling thread; 300 rows: the parallel plan) over a slot full of stale sums: the
    naive histogram on the features asked for, the others untouched."""
    from boostwood._kernels.histogram import SERIAL_MAX_UPDATES
    assert (40 * 20 < SERIAL_MAX_UPDATES) and (300 * 28 >= SERIAL_MAX_UPDATES)
    X, gh = _data(6000, 28, 200, seed=count)
    gh = (gh >> 20).astype(np.int32)
    rows = np.sort(np.random.default_rng(count).choice(6000, count, replace=False))
    buf = np.zeros((2, 6000), np.int32)
    buf[1, 500:500 + count] = rows
    feats = np.arange(0, 28, 1 if count == 300 else 4, dtype=np.int64)
    b = HistogramBuilder(X, 201)
    b.hist[:] = 12345
    b.build(gh, buf, np.ones(1, np.int64), np.array([500]), np.array([count]), np.array([2]),
            feats)
    naive = histogram_naive(X, gh[:, 0].astype(np.int64), gh[:, 1].astype(np.int64), rows, 201)
    np.testing.assert_array_equal(b.hist[2][feats], naive[feats])
    others = np.setdiff1d(np.arange(28), feats)
    assert np.all(b.hist[2][others] == 12345) and np.all(b.hist[1] == 12345)
