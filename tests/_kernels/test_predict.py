import numpy as np

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
