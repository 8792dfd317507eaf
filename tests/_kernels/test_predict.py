import numpy as np
import pytest

from boostwood._kernels.predict import add_tree_binned, predict_leaf_raw, predict_raw
from boostwood._kernels.reference import predict_tree_naive
from boostwood.data.binning import BinMapper
from boostwood.data.validation import as_feature_matrix
from boostwood.tree import Tree

# a depth-2 tree: x0 <= 0.5 ? (x1 <= 1.5 ? 10 : 20) : 30 ; NaN in x0 -> right, in x1 -> left
TREE = dict(feature=np.array([0, 1, -1, -1, -1], np.int32),
            threshold=np.array([0.5, 1.5, 0, 0, 0]),
            left=np.array([1, 3, -1, -1, -1], np.int32), right=np.array([2, 4, -1, -1, -1], np.int32),
            default_left=np.array([0, 1, 0, 0, 0], np.uint8),
            value=np.array([0, 0, 30.0, 10.0, 20.0]))


def _nodes(t):
    """The node tuple of a numeric tree given as arrays."""
    tree = Tree(t["feature"], np.zeros(5), t["left"], t["right"], t["default_left"], t["value"],
                np.zeros(5), np.ones(5), np.ones(5))
    return (tree.feature, np.asarray(t["threshold"]), tree.left, tree.right,
            tree.default_left) + tree.nodes()[5:]


def test_raw_prediction_matches_naive_walk():
    r = np.random.default_rng(0)
    X = r.uniform(-1, 3, size=(500, 2))
    X[r.random(X.shape) < 0.2] = np.nan
    out = np.zeros((500, 1))
    t = TREE
    predict_raw(X, _nodes(t), t["value"], np.array([0]), np.array([0]), out)
    expect = predict_tree_naive(X, t["feature"], t["threshold"], t["left"], t["right"],
                                t["default_left"], t["value"])
    assert np.array_equal(out[:, 0], expect)
    leaves = np.empty((500, 1), np.int32)
    predict_leaf_raw(X, _nodes(t), np.array([0]), leaves)
    assert np.array_equal(t["value"][leaves[:, 0]], expect)


def test_binned_and_raw_prediction_agree_at_bin_edges():
    r = np.random.default_rng(1)
    X = np.round(r.uniform(0, 3, size=(400, 2)), 1)
    X[r.random(X.shape) < 0.1] = np.nan
    fm = as_feature_matrix(X)
    mapper = BinMapper(max_bin=8).fit(fm)
    Xb = mapper.transform(fm)
    t = dict(TREE)
    tb = np.array([2, 3, -1, -1, -1], np.int32)  # split on bins; raw thresholds from the edges
    t["threshold"] = np.array([mapper.edges[0][2], mapper.edges[1][3], 0, 0, 0])
    raw = np.zeros((400, 1))
    binned = np.zeros((400, 1))
    predict_raw(X, _nodes(t), t["value"], np.array([0]), np.array([0]), raw)
    add_tree_binned(Xb, mapper.missing_bins, _nodes(dict(t, threshold=tb)), t["value"], binned, 0)
    assert np.array_equal(raw, binned)


def test_branch_free_rule_is_goes_left_negated():
    from boostwood._kernels.splits import goes_left, goes_right_numeric
    xs = np.array([-np.inf, -1.0, 0.5, np.nextafter(0.5, 1), 2.0, np.inf, np.nan])
    for thr in (-np.inf, 0.5, np.inf):
        for dl in (0, 1):
            for x in xs:
                left = goes_left(x, 0, np.zeros(1, np.uint8), np.array([thr]),
                                 np.array([dl], np.uint8), np.zeros(1, np.int32),
                                 np.zeros(1, np.int32), np.zeros(0, np.uint32))
                assert goes_right_numeric(x, thr, np.uint8(1 - dl)) == (not left), (x, thr, dl)


def test_level_walk_matches_the_naive_walk_and_the_general_kernel():
    """predict_levels on trained forests (balanced depth-wise trees; NaN in training and
    at prediction; +-inf; float32 and float64 input) is bit-identical to the general
    kernel and to the naive walk of each tree -- also with every tree walked deeper
    than it is (a leaf must hold its row)."""
    import boostwood as bw
    from boostwood._kernels.predict import predict_levels
    from boostwood.tree.tree import pack_trees

    r = np.random.default_rng(3)
    X = r.normal(size=(3000, 6))
    X[r.random(X.shape) < 0.15] = np.nan
    y = np.nan_to_num(X[:, 0]) * 2 + np.nan_to_num(X[:, 1]) ** 2 + r.normal(size=3000)
    b = bw.train(dict(max_depth=5, eta=0.3, min_data_in_leaf=2), bw.Dataset(X, y), 12,
                 verbose_eval=False)
    packed = pack_trees(b.trees)
    assert packed["levels"] is not None
    *arrays, depth = packed["levels"]
    assert np.array_equal(depth, [t.depth() for t in b.trees])
    Xp = r.normal(size=(700, 6)) * 2
    Xp[r.random(Xp.shape) < 0.2] = np.nan
    Xp[:5, 0], Xp[5:10, 1] = np.inf, -np.inf
    for data in (Xp, Xp.astype(np.float32)):
        general = np.zeros((700, 1))
        predict_raw(data, packed["nodes"], packed["value"], packed["offsets"], packed["group"],
                    general)
        naive = sum(predict_tree_naive(data.astype(np.float64), t.feature, t.threshold, t.left,
                                       t.right, t.default_left, t.value) for t in b.trees)
        np.testing.assert_allclose(general[:, 0], naive, rtol=1e-12, atol=1e-12)
        for steps in (depth, depth + 3):
            fast = np.zeros((700, 1))
            predict_levels(data, tuple(arrays) + (steps,), packed["value"], packed["offsets"],
                           packed["group"], fast)
            assert np.array_equal(fast, general)
        from_base = np.full((700, 1), b.base_score[0])
        predict_raw(data, packed["nodes"], packed["value"], packed["offsets"], packed["group"],
                    from_base)
        assert np.array_equal(b.predict(data, output_margin=True), from_base[:, 0])


def test_forests_the_branch_free_kernel_cannot_read_take_the_general_one():
    from boostwood.tree.tree import level_nodes
    t = TREE
    kinds = np.zeros(5, np.uint8)
    nodes = (t["feature"], t["threshold"], t["left"], t["right"], t["default_left"], kinds)
    at, cover = np.array([0]), np.ones(5)
    assert level_nodes(nodes, at, cover) is not None  # children side by side: 1|2, 3|4
    apart = (t["feature"], t["threshold"], np.array([2, 3, -1, -1, -1], np.int32),
             np.array([1, 4, -1, -1, -1], np.int32), t["default_left"], kinds)
    assert level_nodes(apart, at, cover) is None  # the root's right child (1) is not left + 1
    # a category set: the level walk takes it (with the sets, [Q2]), the binned one not
    from boostwood.tree.tree import binned_nodes
    categorical = nodes[:5] + (np.array([1, 0, 0, 0, 0], np.uint8),
                               np.zeros(5, np.int32), np.array([1, 0, 0, 0, 0], np.int32),
                               np.array([0b1010], np.uint32))
    from boostwood.tree.tree import level_sets
    assert level_nodes(categorical, at, cover) is not None
    assert level_sets(categorical)[0].tolist() == [1, 0, 0, 0, 0] and level_sets(nodes) is None
    assert binned_nodes(categorical, at, cover) is None
    # a chain: depth 3, but the rows (by cover) sit at depth 1: too lopsided
    chain = (np.array([0, -1, 0, -1, 0, -1, -1], np.int32), np.zeros(7),
             np.array([1, -1, 3, -1, 5, -1, -1], np.int32),
             np.array([2, -1, 4, -1, 6, -1, -1], np.int32), np.zeros(7, np.uint8),
             np.zeros(7, np.uint8))
    cover = np.array([100, 90, 10, 5, 5, 3, 2.0])
    assert level_nodes(chain, at, cover) is None
    assert level_nodes(chain, at, np.array([100, 1, 99, 1, 98, 49, 49.0])) is not None


def _leaf_segments(r, n, n_cuts):
    """(buf, sides, starts, counts): leaf segments tiling positions 0..n in shuffled
    order, each on its own side of the two index buffers, every row in one leaf (the
    other side holds stale rows)."""
    cuts = np.unique(np.r_[0, np.sort(r.integers(0, n, size=min(n, n_cuts))), n])
    starts, counts = cuts[:-1], np.diff(cuts)
    perm = r.permutation(starts.size)
    starts, counts = starts[perm].astype(np.int64), counts[perm].astype(np.int64)
    sides = r.integers(0, 2, starts.size).astype(np.int64)
    rows = r.permutation(n).astype(np.int32)
    buf = np.stack([r.permutation(n), r.permutation(n)]).astype(np.int32)
    for s, c, d in zip(starts, counts, sides):
        buf[d, s:s + c] = rows[s:s + c]
    return buf, sides, starts, counts


@pytest.mark.parametrize("n", [1, 5000, 3 * 16384 + 11])
def test_add_leaf_values_gives_each_row_its_leafs_value(n):
    """Segments tiling the partition positions in shuffled order, each on its own side
    of the buffers, some longer than a task's block: every row gets exactly its leaf's
    value added, in its group column only."""
    from boostwood._kernels.predict import add_leaf_values
    r = np.random.default_rng(n)
    buf, sides, starts, counts = _leaf_segments(r, n, 40)
    values = r.normal(size=starts.size)
    out = r.normal(size=(n, 3))
    want = out.copy()
    for s, c, d, v in zip(starts, counts, sides, values):
        want[buf[d, s:s + c], 1] += v
    add_leaf_values(buf, sides, starts, counts, values, out, 1)
    np.testing.assert_array_equal(out, want)


def _segments_of_counts(r, counts):
    """(buf, sides, starts): leaves of ``counts`` rows (in leaf order) whose segments tile
    positions 0..n in another, shuffled order, each on a random side of the buffers
    (the other side holds stale rows); empty leaves start anywhere."""
    counts = np.asarray(counts, np.int64)
    n = int(counts.sum())
    order = r.permutation(counts.size)
    starts = np.empty(counts.size, np.int64)
    starts[order] = np.r_[0, np.cumsum(counts[order])[:-1]]
    starts[counts == 0] = r.integers(0, n + 1, size=int((counts == 0).sum()))
    sides = r.integers(0, 2, counts.size).astype(np.int64)
    rows = r.permutation(n).astype(np.int32)
    buf = np.stack([r.permutation(n), r.permutation(n)]).astype(np.int32)
    for s, c, d in zip(starts, counts, sides):
        buf[d, s:s + c] = rows[s:s + c]
    return buf, sides, starts


_T = 4096  # LEAF_TASK_ROWS


@pytest.mark.parametrize("counts", [
    [], [0, 0], [0, 1, 0], [_T], [_T, 0, 0, _T - 1, 1], [0, _T, 0, _T, 0],
    [3, 0, 9 * _T + 7, 0, 0, 1, 250, 0, 40, 0],
    [0] + [5, 0, 1] * 40 + [30_000, 0, 2, 7 * _T, 0]])
def test_leaf_values_runs_cross_leaves_of_every_size(counts):
    """Leaves of very unequal sizes (one of most of the rows beside a few of one row),
    empty ones first, last and between, a run that starts exactly on a leaf boundary
    followed by empty leaves (4096, 0, 0, 4095, 1: the second run starts at row 4096),
    segments in shuffled positions: tasks cut the leaves' rows into equal runs that start
    and end inside leaves and step over empty ones, and every row still gets exactly its
    leaf's value, added (``add_leaf_values``) or set (``set_leaf_values``)."""
    from boostwood._kernels.predict import LEAF_TASK_ROWS, add_leaf_values, set_leaf_values
    assert LEAF_TASK_ROWS == _T
    r = np.random.default_rng(len(counts))
    buf, sides, starts = _segments_of_counts(r, counts)
    counts = np.asarray(counts, np.int64)
    n = buf.shape[1]
    values = r.normal(size=counts.size)
    out, col = r.normal(size=(n, 2)), np.full(n, np.nan)
    want, want_col = out.copy(), col.copy()
    for s, c, d, v in zip(starts, counts, sides, values):
        want[buf[d, s:s + c], 0] += v
        want_col[buf[d, s:s + c]] = v
    add_leaf_values(buf, sides, starts, counts, values, out, 0)
    set_leaf_values(buf, sides, starts, counts, values, col)
    np.testing.assert_array_equal(out, want)
    np.testing.assert_array_equal(col, want_col)


@pytest.mark.parametrize("n", [1, 5000, 3 * 8192 + 11])
def test_class_columns_give_the_margins_of_adding_each_tree(n):
    """A round of several trees set into class-major columns and added at the round's end
    (``set_leaf_values``, ``add_class_columns``): the same margins, bit for bit, as each
    tree's values added to its class (``add_leaf_values``), across row blocks."""
    from boostwood._kernels.predict import add_class_columns, add_leaf_values, set_leaf_values
    r = np.random.default_rng(n)
    K = 3
    out = r.normal(size=(n, K)) * 1e3
    want = out.copy()
    columns = np.full((K, n), np.nan)  # every row of a column is set
    for k in range(K):
        buf, sides, starts, counts = _leaf_segments(r, n, 30)
        values = r.normal(size=starts.size) * 1e-3
        add_leaf_values(buf, sides, starts, counts, values, want, k)
        set_leaf_values(buf, sides, starts, counts, values, columns[k])
    add_class_columns(out, columns)
    np.testing.assert_array_equal(out, want)


def _random_binned_tree(r, n_features, n_bins, n_splits):
    """A random tree of numeric splits on bins (threshold bins up to the last value bin,
    missing bins left or right), grown by splitting random leaves."""
    feature, thr, left, right, dl = [-1], [0], [-1], [-1], [0]
    leaves = [0]
    for _ in range(n_splits):
        node = leaves.pop(r.integers(len(leaves)))
        f = int(r.integers(n_features))
        feature[node], thr[node], dl[node] = f, int(r.integers(0, n_bins[f])), int(r.random() < 0.5)
        left[node], right[node] = len(feature), len(feature) + 1
        for _ in range(2):
            feature.append(-1), thr.append(0), left.append(-1), right.append(-1), dl.append(0)
        leaves += [left[node], right[node]]
    n = len(feature)
    tree = Tree(np.array(feature, np.int32), np.zeros(n), np.array(left, np.int32),
                np.array(right, np.int32), np.array(dl, np.uint8), r.normal(size=n),
                np.zeros(n), np.ones(n), np.ones(n))
    tree.threshold_bin = np.array(thr, dtype=np.int32)
    return tree


@pytest.mark.parametrize("dtype, max_bins", [(np.uint8, 255), (np.uint16, 1000)])
@pytest.mark.parametrize("seed", range(3))
def test_lock_step_binned_walk_is_the_node_by_node_walk(dtype, max_bins, seed):
    """The branch-free walk of numeric trees (eight rows in lock-step, bins encoded as
    one unsigned compare per node) adds exactly what add_tree_binned adds, on every row
    or on a list of rows, missing bins (each feature's largest) either way."""
    from boostwood._kernels.predict import add_numeric_tree_binned, binned_walk
    r = np.random.default_rng(seed)
    n_rows, n_features = 3001, 6
    n_bins = r.integers(2, max_bins, n_features).astype(np.int32)
    missing_bins = n_bins.copy()  # the missing bin is n_bins, above every value bin
    Xb = (r.random((n_rows, n_features)) * n_bins).astype(dtype)
    miss = r.random(Xb.shape) < 0.15
    Xb[miss] = np.broadcast_to(missing_bins, Xb.shape)[miss]
    edge = r.random(Xb.shape) < 0.1  # rows on the last value bin
    Xb[edge] = np.broadcast_to(n_bins - 1, Xb.shape)[edge]
    for n_splits in (0, 1, 7, 60):
        tree = _random_binned_tree(r, n_features, n_bins, n_splits)
        nodes = (tree.feature, tree.threshold_bin) + tree.nodes()[2:]
        base = r.normal(size=(n_rows, 2))
        expect = base.copy()
        add_tree_binned(Xb, missing_bins, nodes, tree.value, expect, 1)
        walk, child = binned_walk(tree.feature, tree.threshold_bin, tree.left, tree.right,
                                  tree.default_left, missing_bins)
        got = base.copy()
        add_numeric_tree_binned(Xb, np.zeros(0, np.int64), True, walk, child, tree.value, got, 1)
        np.testing.assert_array_equal(got, expect)
        rows = np.sort(r.choice(n_rows, 1234, replace=False)).astype(np.int32)
        some = base.copy()
        add_numeric_tree_binned(Xb, rows, False, walk, child, tree.value, some, 1)
        np.testing.assert_array_equal(some[rows], expect[rows])
        others = np.setdiff1d(np.arange(n_rows), rows)
        np.testing.assert_array_equal(some[others], base[others])


def test_margins_of_some_rows_by_the_bins_with_and_without_category_sets():
    """``_add_binned`` on a list of rows (the rows outside a bag) adds to those rows
    exactly what the whole-table walk adds to them and leaves the others: the lock-step
    walk for numeric trees, the node-by-node walk of a gathered copy with category sets."""
    from boostwood.tree.methods import _add_binned
    r = np.random.default_rng(4)
    n_bins = np.full(4, 12, dtype=np.int32)
    Xb = r.integers(0, 13, size=(999, 4)).astype(np.uint8)  # 12: the missing bin
    rows = np.sort(r.choice(999, 400, replace=False)).astype(np.int32)
    others = np.setdiff1d(np.arange(999), rows)
    for categorical in (False, True):
        tree = _random_binned_tree(r, 4, n_bins, 9)
        if categorical:
            tree.set_categorical(0, [1, 4, 5, 11])
        assert bool(np.any(tree.split_kind)) == categorical
        base = r.normal(size=(999, 1))
        expect = base.copy()
        add_tree_binned(Xb, n_bins, (tree.feature, tree.threshold_bin) + tree.nodes()[2:],
                        tree.value, expect, 0)
        every, some = base.copy(), base.copy()
        _add_binned(Xb, n_bins, tree, every, 0)
        _add_binned(Xb, n_bins, tree, some, 0, rows)
        np.testing.assert_array_equal(every, expect)
        np.testing.assert_array_equal(some[rows], expect[rows])
        np.testing.assert_array_equal(some[others], base[others])
