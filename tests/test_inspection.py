"""Looking inside a model: importance, leaf indices, dumps, export_text, partial dependence."""
import json
import re

import numpy as np
import pytest

import boostwood as bw
from boostwood._kernels.reference import _expected_value_naive

from conftest import make_classification, make_regression


@pytest.fixture(scope="module")
def model():
    X, y = make_regression(n=1500, f=6, seed=1)
    X[np.random.default_rng(2).random(X.shape) < 0.05] = np.nan
    names = [f"x{j}" for j in range(6)]
    b = bw.train({"max_depth": 4, "eta": 0.3}, bw.Dataset(X, label=y, feature_names=names), 12)
    return b, X, y


def _walk_json(node, gains, splits):
    if "leaf" in node:
        return
    gains[node["split"]] = gains.get(node["split"], 0.0) + node["gain"]
    splits[node["split"]] = splits.get(node["split"], 0) + 1
    for child in node["children"]:
        _walk_json(child, gains, splits)


def test_influence_of_the_notes_is_total_gain_over_trees(model):
    """Influence_j = 1/M sum_trees sum_{splits on j} IG (notes 004), read off the JSON dump."""
    b, _, _ = model
    gains, splits = {}, {}
    for tree in json.loads(b.dump_model(format="json")):
        _walk_json(tree, gains, splits)
    influence = np.array([gains.get(n, 0.0) for n in b.feature_names]) / len(b.trees)
    assert np.allclose(b.feature_importance("total_gain") / len(b.trees), influence)
    n_splits = np.array([splits.get(n, 0) for n in b.feature_names])
    assert np.array_equal(b.feature_importance("split"), n_splits)
    with np.errstate(invalid="ignore"):
        assert np.allclose(b.feature_importance("gain"),
                           np.nan_to_num(b.feature_importance("total_gain") / n_splits))
    assert influence.argmax() in (0, 2, 3)  # y = 2 x0 + sin(3 x1) + x2 x3 + noise


def test_split_gain_is_eq7_on_the_rows(model):
    """The root's recorded gain is 1/2 [G_L^2/(H_L+l) + G_R^2/(H_R+l) - G^2/(H+l)] - gamma
    recomputed from the rows (squared error, first tree: g = F0 - y, h = 1)."""
    b, X, y = model
    t = b.trees[0]
    f, thr = t.feature[0], t.threshold[0]
    x = X[:, f]
    left = np.where(np.isnan(x), bool(t.default_left[0]), x <= thr)
    g = b.base_score[0] - y

    def score(G, H):
        return G * G / (H + 1.0)

    want = 0.5 * (score(g[left].sum(), left.sum()) + score(g[~left].sum(), (~left).sum())
                  - score(g.sum(), len(g)))
    assert t.gain[0] == pytest.approx(want, rel=1e-5)


def test_text_dump_describes_the_trees(model):
    b, X, _ = model
    text = b.dump_model()
    blocks = re.split(r"booster\[\d+\]:\n", text)[1:]
    assert len(blocks) == len(b.trees)
    node_re = re.compile(r"^\t*(\d+):\[(\w+)<=([-\d.e+]+)\] yes=(\d+),no=(\d+),missing=(\d+)")
    for tree, block in zip(b.trees, blocks):
        for line in block.strip("\n").split("\n"):
            m = node_re.match(line)
            if m is None:
                node = int(re.match(r"^\t*(\d+):leaf=", line).group(1))
                assert tree.feature[node] < 0
                continue
            node = int(m.group(1))
            assert b.feature_names[tree.feature[node]] == m.group(2)
            assert float(m.group(3)) == pytest.approx(tree.threshold[node], rel=1e-8, abs=1e-12)
            assert (int(m.group(4)), int(m.group(5))) == (tree.left[node], tree.right[node])
    # leaves of the dump are the leaf indices predict(pred_leaf=True) returns
    leaves = b.predict(X[:200], pred_leaf=True, validate_features=False)
    for k, tree in enumerate(b.trees):
        assert np.all(tree.feature[leaves[:, k]] < 0)


def test_dataframe_and_export_text(model, tmp_path):
    pytest.importorskip("pandas")
    b, _, _ = model
    df = b.trees_to_dataframe()
    assert len(df) == sum(t.n_nodes for t in b.trees)
    assert set(df["Feature"]) <= set(b.feature_names) | {"Leaf"}
    first = df[df.Tree == 0]
    assert np.allclose(first.Gain.to_numpy(), b.trees[0].gain)
    txt = b.export_text(0)
    assert txt.count("value:") == b.trees[0].n_leaves
    assert txt.startswith(f"|--- {b.feature_names[b.trees[0].feature[0]]} <= ")
    path = tmp_path / "dump.txt"
    assert b.dump_model(path) == path.read_text()
    with pytest.raises(ValueError, match="format"):
        b.dump_model(format="xml")
    with pytest.raises(ValueError, match="tree_index"):
        b.export_text(99)


def test_partial_dependence_equals_its_definition(model):
    """Recursion PD = base + sum over trees of E[tree | x_j = v] under the cover weights."""
    b, X, _ = model
    grid = np.linspace(-2, 2, 9)
    for j in (0, 3):
        pd = b.partial_dependence(j, grid)
        for g, v in zip(grid, pd):
            x = np.full(X.shape[1], np.nan)
            x[j] = g
            want = b.base_score[0] + sum(
                _expected_value_naive(x, (t.feature, t.threshold, t.left, t.right,
                                          t.default_left, t.value, t.cover), {j})
                for t in b.trees)
            assert v == pytest.approx(want, abs=1e-10)
    with pytest.raises(ValueError, match="feature"):
        b.partial_dependence(6, grid)


def test_partial_dependence_recovers_an_additive_effect():
    """For an additive target of independent features the PD curve is the effect itself."""
    rng = np.random.default_rng(3)
    X = rng.uniform(-2, 2, size=(4000, 3))
    y = np.sin(2 * X[:, 0]) + X[:, 1]
    b = bw.train({"max_depth": 3, "eta": 0.2}, bw.Dataset(X, label=y), 150)
    grid = np.linspace(-1.5, 1.5, 13)
    pd = b.partial_dependence(0, grid)
    assert np.allclose(pd - pd.mean(), np.sin(2 * grid) - np.sin(2 * grid).mean(), atol=0.12)


def test_leaf_indices_everywhere():
    X, y = make_classification(n=800, seed=4)
    clf = bw.GBDTClassifier(n_estimators=7, max_depth=3).fit(X, y)
    leaves = clf.apply(X)
    assert leaves.shape == (800, 7)
    assert np.array_equal(leaves, clf.booster_.predict(X, pred_leaf=True))
