"""The expansion drivers against the naive partition, histogram and split search."""
import numpy as np
import pytest

from boostwood._kernels.grow import split_and_build, subtract_and_scan
from boostwood._kernels.nodes import (ND_COUNT, ND_FEATURE, ND_LEFT, ND_START,
                                      node_records)
from boostwood._kernels.reference import best_split_naive, histogram_naive, partition_naive
from boostwood._kernels.split import pick_best_features, split_settings
from boostwood._kernels.splits import N_PICK
from boostwood.tree.nodes import NodeTable

# the drivers are parallel=True without a parallel loop of their own (see grow.py)
pytestmark = pytest.mark.filterwarnings("ignore::numba.core.errors.NumbaPerformanceWarning")


def _node_data(n=3000, F=4, nb=7, seed=0):
    r = np.random.default_rng(seed)
    X = r.integers(0, nb + 1, size=(n, F)).astype(np.uint8)  # bin nb = missing
    gh = np.column_stack([r.normal(size=n), r.uniform(0.1, 1.0, n)])
    return X, np.rint(gh * UNIT_INV).astype(np.int64)  # fixed point, as the grower passes it


UNIT_INV = 2.0 ** 30


@pytest.mark.parametrize("build_left", [True, False])
@pytest.mark.parametrize("hist_block", [64, 16384])
def test_split_build_subtract_scan_match_naive(build_left, hist_block):
    n, F, nb = 3000, 4, 7
    X, gh = _node_data(n, F, nb)
    rows = np.sort(np.random.default_rng(1).choice(n, 2000, replace=False)).astype(np.int32)
    buf = np.zeros((2, n), dtype=np.int32)
    buf[0, 100:2100] = rows  # the node is the segment [100, 2100) of side 0
    feats = np.arange(F, dtype=np.int64)
    hist = np.zeros((3, F, nb + 1, 3), dtype=np.int64)
    hist[0] = histogram_naive(X, gh[:, 0], gh[:, 1], rows, nb + 1)  # the parent, slot 0
    one = lambda v: np.array([v], dtype=np.int64)  # noqa: E731
    n_left = np.empty(1, dtype=np.int64)
    # split on feature 2 at bin 3, missing left
    ints, nodes = node_records([100], [2000], [0], [2], [3], [1])
    table = NodeTable(3, np.int64, capacity=8)
    table.add_root([0, 0, 2000], 2000)
    table.ints[:, :1] = ints
    table.cand_left[0] = [5, 6, 7]
    small = np.array([[int(build_left)], [1]], dtype=np.int64)  # SM_LEFT, SM_SLOT
    first = table.grow(2)
    split_and_build((np.ascontiguousarray(X.T), X), gh, buf, np.empty(n, np.int32), table.record,
                    nodes, first, np.full(F, nb, np.int32), small, feats,
                    (128, hist_block, 2),
                    (hist, np.empty((2000 // hist_block + 2, F, nb + 1, 3), np.int64)), n_left)
    goes_left = (X[rows, 2] <= 3) | (X[rows, 2] == nb)
    expect, nl = partition_naive(rows, goes_left)
    assert n_left[0] == nl and np.array_equal(buf[1, 100:2100], expect)
    # and the children are in the node table
    assert table.ints[ND_LEFT, 0] == 1 and table.ints[ND_COUNT, 1] == nl
    assert table.ints[ND_START, 2] == 100 + nl and table.stats[1].tolist() == [5, 6, 7]
    left_rows, right_rows = expect[:nl], expect[nl:]
    small_rows, large_rows = (left_rows, right_rows) if build_left else (right_rows, left_rows)
    np.testing.assert_allclose(hist[1], histogram_naive(X, gh[:, 0], gh[:, 1], small_rows, nb + 1),
                               rtol=1e-12, atol=1e-9)
    # the parent's slot becomes the larger child; then both children are scanned
    totals = np.array([[gh[r, 0].sum(), gh[r, 1].sum(), len(r)]
                       for r in (small_rows, large_rows)])
    out = (np.empty((2, F)), np.empty((N_PICK, 2, F), np.int64), np.empty((2, F, 3), np.int64))
    unit = 1.0 / UNIT_INV
    scan = NodeTable(3, np.int64, capacity=4)
    scan.add_root(totals[0], 0)
    scan.stats[scan.grow(1)] = totals[1]
    found = subtract_and_scan(hist, np.array([[0], [1]], dtype=np.int64), feats,
                              np.array([1, 0]), np.full(F, nb, np.int32),
                              np.ones((2, F), np.uint8),
                              split_settings(1.0, 0.0, 0.0, 0.0, 0.0, 5, (unit, unit)), out,
                              np.array([0, 1]), scan.record)
    np.testing.assert_allclose(hist[0], histogram_naive(X, gh[:, 0], gh[:, 1], large_rows, nb + 1),
                               rtol=1e-9, atol=1e-9)
    gain = out[0]
    best = np.empty(2, np.int64)
    pick_best_features(gain, best)
    assert found.tolist() == [k for k in (0, 1) if gain[k, best[k]] > 0]
    assert [scan.ints[ND_FEATURE, k] for k in found] == [feats[best[k]] for k in found]
    for i, node_rows in enumerate((small_rows, large_rows)):
        naive = best_split_naive(X, gh[:, 0] * unit, gh[:, 1] * unit, node_rows,
                                 np.full(F, nb), 1.0, 0.0, 0.0, 5)
        assert best[i] == naive[1]
        assert gain[i, best[i]] == pytest.approx(naive[0], rel=1e-9)


def test_a_fresh_process_loads_the_cached_drivers():
    """A cached serial function calling parallel kernels used to crash when loaded
    from numba's cache (see grow.py): train here (compiles or loads the cache),
    then again in a new process, which must load it and give the same model."""
    import subprocess
    import sys

    code = ("import numpy as np, boostwood as bw\n"
            "r = np.random.default_rng(0); X = r.normal(size=(3000, 5)); y = X[:, 0] + r.normal(size=3000)\n"
            "b = bw.train({'grow_policy': 'lossguide', 'max_leaves': 15, 'max_depth': 0}, bw.Dataset(X, y), 3,"
            " verbose_eval=False)\n"
            "print(repr(float(b.predict(X).sum())))\n")
    exec_ns = {}
    exec(code.replace("print(", "out = ("), exec_ns)
    r = subprocess.run([sys.executable, "-c", code], capture_output=True, text=True, timeout=600)
    assert r.returncode == 0, r.stderr[-2000:]
    assert float(r.stdout.strip()) == float(exec_ns["out"])
