"""Split kinds: a hand-built model with categorical nodes goes through every path that
decides where a row goes -- partition, prediction (raw and binned), leaf ids, SHAP,
partial dependence, dumps, plots, the report -- and all of them agree with one plain
Python rule. Also: model format v2 round trips and rejects bad category sets."""
import json

import numpy as np
import pytest

import boostwood as bw
from boostwood._kernels.partition import partition_nodes
from boostwood._kernels.predict import add_tree_binned
from boostwood._kernels.reference import (naive_goes_left, partition_naive, predict_tree_naive,
                                          shap_naive)
from boostwood._kernels.nodes import node_records
from boostwood._kernels.splits import CATEGORICAL, NUMERIC, bitset_of, categories_of
from boostwood.boosting import dump, explain, model_io
from boostwood.tree import Tree

CATS_A = {0: {1, 3, 4, 40}}   # tree A: root is "f1 in {1,3,4,40}" (NaN left)
CATS_B = {1: {0, 5}}          # tree B: node 1 is "f1 in {0,5}" (NaN right)


def _tree(feature, threshold, left, right, default_left, value, cover, cats):
    n = len(feature)
    t = Tree(np.array(feature), np.array(threshold, float), np.array(left), np.array(right),
             np.array(default_left), np.array(value, float), np.ones(n), np.array(cover, float),
             np.array(cover, float))
    for node, c in cats.items():
        t.set_categorical(node, sorted(c))
    return t


def _booster():
    a = _tree([1, 0, -1, -1, -1], [0, 0.5, 0, 0, 0], [1, 3, -1, -1, -1], [2, 4, -1, -1, -1],
              [1, 0, 0, 0, 0], [0, 0, -1.0, 1.0, 2.0], [10, 6, 4, 2, 4], CATS_A)
    b = _tree([2, 1, -1, -1, -1], [0.0, 0, 0, 0, 0], [1, 3, -1, -1, -1], [2, 4, -1, -1, -1],
              [0, 0, 0, 0, 0], [0, 0, 0.5, 0.25, -0.25], [10, 7, 3, 3, 4], CATS_B)
    booster = bw.Booster({"objective": "reg:squarederror"})
    booster._start(np.array([0.1]), ["f0", "f1", "f2"])
    booster.feature_types[1] = "categorical"
    # no dictionary: the numbers of f1 are the codes themselves (a model made by hand;
    # trained models code data by their dictionaries' values, tests/test_categorical.py)
    booster.category_dictionaries = {}
    booster.trees = [a, b]
    return booster


def _rows(n=400, seed=0):
    r = np.random.default_rng(seed)
    X = np.column_stack([r.uniform(-1, 2, n), r.integers(-1, 8, n).astype(float),
                         r.normal(size=n)])
    X[::17, 1] = np.nan
    X[::23, 1] = 2.5      # not an integer: no category
    X[::29, 1] = 40.0     # in A's set, beyond B's words
    X[::31, 0] = np.nan
    return X


def _naive_margin(booster, X):
    out = np.full(X.shape[0], booster.base_score[0])
    for t, cats in zip(booster.trees, (CATS_A, CATS_B)):
        out += predict_tree_naive(X, t.feature, t.threshold, t.left, t.right, t.default_left,
                                  t.value, cats)
    return out


def test_bitsets():
    words = bitset_of([0, 5, 31, 32, 70])
    assert words.dtype == np.uint32 and words.size == 3
    assert categories_of(words).tolist() == [0, 5, 31, 32, 70]
    t = _booster().trees[0]
    assert t.split_kind.tolist() == [CATEGORICAL, NUMERIC, NUMERIC, NUMERIC, NUMERIC]
    assert t.categories(0).tolist() == [1, 3, 4, 40]
    values = np.array([1, 3, 4, 40, 0, 2, 5, 41, 1e9, -1, 3.5, np.nan, -0.0])
    expect = [naive_goes_left(v, 0, t.threshold, t.default_left, CATS_A) for v in values]
    assert t.goes_left(0, values).tolist() == expect


def test_prediction_leaves_and_binned_traversal_agree_with_the_plain_rule():
    booster = _booster()
    X = _rows()
    margin = booster.predict(X, output_margin=True)
    np.testing.assert_array_equal(margin, _naive_margin(booster, X))
    leaves = booster.predict(X, pred_leaf=True)
    for k, (t, cats) in enumerate(zip(booster.trees, (CATS_A, CATS_B))):
        ids = np.arange(t.n_nodes, dtype=float)
        np.testing.assert_array_equal(leaves[:, k], predict_tree_naive(
            X, t.feature, t.threshold, t.left, t.right, t.default_left, ids, cats))
    # binned rows: categories binned by identity, NaN in the missing bin (8); numeric
    # features cut at the thresholds, so "bin 0 <= threshold bin 0" means "x <= threshold"
    keep = np.all(np.isfinite(X[:, [0, 2]]), axis=1) & (np.isnan(X[:, 1]) | (X[:, 1] >= 0)
                                                        & (X[:, 1] < 8) & (X[:, 1] % 1 == 0))
    Xk = X[keep]
    Xb = np.column_stack([(Xk[:, 0] > 0.5).astype(np.uint8),
                          np.where(np.isnan(Xk[:, 1]), 8, np.nan_to_num(Xk[:, 1])).astype(np.uint8),
                          (Xk[:, 2] > 0.0).astype(np.uint8)])
    missing = np.array([2, 8, 2], dtype=np.int32)
    out = np.full((Xk.shape[0], 1), 0.1)  # the base score first, as predict adds it
    for t in booster.trees:
        nodes = t.nodes()
        add_tree_binned(Xb, missing, (nodes[0], np.zeros(t.n_nodes, np.int32)) + nodes[2:],
                        t.value, out, 0)
    np.testing.assert_array_equal(out[:, 0], margin[keep])


@pytest.mark.parametrize("n", [5000, 700])  # 700 rows: one block, the serial path
def test_partition_of_a_categorical_split(n):
    r = np.random.default_rng(3)
    Xc = r.integers(0, 12, size=(1, n)).astype(np.uint8)  # bin 11 is the missing bin
    idx = np.arange(n, dtype=np.int32)
    words = bitset_of([2, 3, 7])
    for dl in (0, 1):
        buf = np.stack([idx, np.full(n, -1, np.int32)])
        n_left = np.empty(1, dtype=np.int64)
        partition_nodes(Xc, buf, np.empty(n, np.int32),
                        *node_records([0], [n], [0], [0], [0], [dl], [CATEGORICAL], [0],
                                      [words.size]),
                        words, np.array([11], np.int32), 512, 2, n_left)
        col = Xc[0]
        goes = np.where(col == 11, dl == 1, np.isin(col, [2, 3, 7]))
        expect, nl = partition_naive(idx, goes)
        assert n_left[0] == nl and np.array_equal(buf[1], expect)


def test_shap_values_agree_with_the_definition_and_sum_to_the_margin():
    booster = _booster()
    X = _rows(60, seed=1)
    phi = booster.predict(X, pred_contribs=True)
    np.testing.assert_allclose(phi.sum(axis=1), booster.predict(X, output_margin=True),
                               rtol=1e-12, atol=1e-12)
    for i in range(0, 60, 7):
        expect = np.zeros(4)
        for t, cats in zip(booster.trees, (CATS_A, CATS_B)):
            expect += shap_naive(X[i], (t.feature, t.threshold, t.left, t.right,
                                        t.default_left, t.value, t.cover, cats), 3)
        expect[3] += 0.1
        np.testing.assert_allclose(phi[i], expect, atol=1e-12)
    inter = booster.predict(X[:5], pred_interactions=True)
    np.testing.assert_allclose(inter.sum(axis=(1, 2)), booster.predict(X[:5], output_margin=True))


def test_partial_dependence_follows_the_category_sets():
    booster = _booster()
    grid = np.array([0, 1, 2, 3, 4, 5, 40, 2.5, -1])
    pd_ = explain.partial_dependence(booster, 1, grid, 0, 2)
    a, b = booster.trees
    share_a = a.cover[3] / a.cover[1]  # tree A's f0 split: cover-weighted
    inset_a = np.isin(grid, [1, 3, 4, 40])
    tree_a = np.where(inset_a, share_a * 1.0 + (1 - share_a) * 2.0, -1.0)
    share_b = b.cover[1] / b.cover[0]  # tree B's f2 root: cover-weighted
    tree_b = share_b * np.where(np.isin(grid, [0, 5]), 0.25, -0.25) + (1 - share_b) * 0.5
    np.testing.assert_allclose(pd_, 0.1 + tree_a + tree_b)


def _eval_json_tree(node, x, names):
    while "leaf" not in node:
        v = x[names.index(node["split"])]
        if np.isnan(v):
            go = node["missing"] == node["yes"]
        elif node["split_type"] == "categorical":
            go = float(v).is_integer() and int(v) in node["categories"]
        else:
            go = v <= node["split_condition"]
        nxt = node["yes"] if go else node["no"]
        node = next(c for c in node["children"] if c["nodeid"] == nxt)
    return node["leaf"]


def test_dumps_plots_and_report_write_the_same_rule():
    booster = _booster()
    X = _rows(200, seed=2)
    trees = json.loads(booster.dump_model(format="json"))
    names = booster.feature_names
    from_dump = np.full(len(X), 0.1)
    for t in trees:  # trees added one after the other, as predict adds them
        from_dump += [_eval_json_tree(t, x, names) for x in X]
    np.testing.assert_array_equal(from_dump, booster.predict(X, output_margin=True))
    text = booster.dump_model()
    assert "0:[f1 in {1,3,4,40}] yes=1,no=2,missing=1" in text
    assert "1:[f1 in {0,5}] yes=3,no=4,missing=4" in text
    rules = dump.export_text(booster.trees[0], names)
    assert "f1 in {1,3,4,40} (missing: left)" in rules and "f1 not in {1,3,4,40}" in rules
    pytest.importorskip("pandas")
    frame = booster.trees_to_dataframe()
    assert frame.loc[0, "Category"] == [1, 3, 4, 40] and np.isnan(frame.loc[0, "Split"])
    from boostwood.cli.svg import tree_drawing
    assert "f1 in {0,5}" in tree_drawing(booster.trees[1], names)
    pytest.importorskip("matplotlib")
    import matplotlib
    matplotlib.use("Agg")
    from boostwood import plotting
    assert plotting._node_label(booster.trees[0], 0, names, 4).startswith("f1 in {1,3,4,40}")
    plotting.plot_tree(booster, 0)


def test_format_v3_round_trip(tmp_path):
    booster = _booster()
    path = tmp_path / "m.json"
    booster.save_model(path)
    doc = json.loads(path.read_text())
    assert doc["version"] == 3 and doc["model"]["feature_types"][1] == "categorical"
    t0 = doc["model"]["trees"][0]
    assert t0["split_kind"] == [1, 0, 0, 0, 0]
    assert t0["cat_nodes"] == [0] and t0["cat_sets"] == [[1, 3, 4, 40]]
    back = bw.Booster(model_file=path)
    X = _rows()
    np.testing.assert_array_equal(back.predict(X), booster.predict(X))
    assert back.category_dictionaries == booster.category_dictionaries


def _tampered(tmp_path, change):
    path = tmp_path / "m.json"
    _booster().save_model(path)
    model = json.loads(path.read_text())["model"]
    change(model)
    path.write_text(model_io.dumps(model))  # checksum recomputed: only validation can tell
    return path


@pytest.mark.parametrize("change,match", [
    (lambda m: m["trees"][0].update(cat_sets=[[-1, 3]]), "categor"),
    (lambda m: m["trees"][0].update(cat_sets=[[1.5]]), "categor"),
    (lambda m: m["trees"][0].update(cat_sets=[[]]), "categor"),
    (lambda m: m["trees"][0].update(cat_nodes=[2]), "cat_nodes"),
    (lambda m: m["trees"][0].update(split_kind=[2, 0, 0, 0, 0]), "split_kind"),
    (lambda m: m["trees"][0].pop("split_kind"), "split_kind"),
    (lambda m: m.update(feature_types=["numeric"] * 3, category_dictionaries={}),
     "numeric feature"),
    (lambda m: m.update(feature_types=["numeric", "text", "numeric"]), "feature_types"),
    (lambda m: m.update(category_dictionaries={"0": ["a"]}), "category_dictionaries"),
    (lambda m: m.update(certificates={"monotone": {}}), "certificates"),
])
def test_format_v2_rejects_bad_split_kinds(tmp_path, change, match):
    with pytest.raises(ValueError, match=match):
        bw.Booster(model_file=_tampered(tmp_path, change))
