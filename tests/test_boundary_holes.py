"""The boundary's last holes: inputs that crashed, or answered silently wrong, until each
got its clear error or its right answer (one test per class of input)."""
import json
import subprocess
import sys
import warnings

import numpy as np
import pytest
from scipy import sparse

import boostwood as bw
from boostwood.boosting import model_io


def _trees(booster):
    """The saved trees of a model (its JSON, without the version string)."""
    return json.loads(model_io.dumps(booster._to_dict()))["model"]["trees"]


def _fit(X, y, **params):
    return bw.train({"objective": "binary:logistic", "verbosity": 0, **params},
                    bw.Dataset(X, y), 5)


@pytest.fixture
def binary(rng):
    X = rng.normal(size=(400, 4))
    X[rng.random(X.shape) < 0.4] = 0.0
    return X, (X[:, 0] + rng.normal(size=400) > 0) * 1.0


# -- a model file under an address-space limit -----------------------------------------

_LOAD_UNDER_LIMIT = """
import resource, sys
resource.setrlimit(resource.RLIMIT_AS, (3_000_000_000, 3_000_000_000))
import boostwood as bw
print(bw.Booster(model_file=sys.argv[1]).num_boosted_rounds())
"""


def test_a_model_loads_in_a_process_with_an_address_space_limit(tmp_path, binary):
    """Reading a model asked for its 4 GiB size limit at once (a buffered read of the
    limit): MemoryError in any process capped below that (containers, sandboxed
    workers). It reads the file's own size now."""
    _fit(*binary).save_model(tmp_path / "m.json")
    out = subprocess.run([sys.executable, "-c", _LOAD_UNDER_LIMIT, str(tmp_path / "m.json")],
                         capture_output=True, text=True, timeout=300)
    assert out.returncode == 0, out.stderr[-1500:]
    assert out.stdout.split() == ["5"]


def test_a_model_file_that_grows_past_the_limit_while_read_is_refused(tmp_path):
    path = tmp_path / "big.json"
    path.write_text("x" * 1000)
    assert len(model_io.read_text(path, limit=1000)) == 1000
    with pytest.raises(ValueError, match="more than the 999 bytes"):
        model_io.read_text(path, limit=999)
    with open(path, "rb") as fh:  # a file larger than its size said (it grew)
        assert len(model_io._read_at_most(fh, 10, 500, chunk=7)) == 501


# -- sparse input in non-canonical form ----------------------------------------------

def _noncanonical(D):
    """D as a CSR matrix with every value stored as two halves (duplicates, which scipy
    sums), each row's columns in descending order, and an explicit zero per row."""
    data, indices, indptr = [], [], [0]
    for i in range(D.shape[0]):
        for c in np.nonzero(D[i])[0][::-1]:
            data += [D[i, c] / 2, D[i, c] / 2]
            indices += [c, c]
        data.append(0.0)
        indices.append(D.shape[1] - 1)
        indptr.append(len(data))
    M = sparse.csr_matrix((np.array(data), np.array(indices), np.array(indptr)), shape=D.shape)
    assert not M.has_canonical_format and np.array_equal(M.toarray(), D)
    return M


@pytest.mark.parametrize("tree_method", ["hist", "approx", "exact"])
def test_a_noncanonical_sparse_matrix_gives_the_dense_model(binary, tree_method):
    """Duplicates were read as the last of them (scipy sums them: toarray() does, and so
    did prediction), so training saw other values than prediction."""
    X, y = binary
    M = _noncanonical(X)
    dense = _trees(_fit(X, y, tree_method=tree_method))
    assert _trees(_fit(M, y, tree_method=tree_method)) == dense
    assert _trees(_fit(M.tocsc(), y, tree_method=tree_method)) == dense


def test_noncanonical_sparse_input_in_the_estimators(binary):
    X, y = binary
    M = _noncanonical(X)
    for est in (bw.GBDTClassifier(n_estimators=5), bw.RandomForestClassifier(5, random_state=0)):
        a = est.fit(X, y).predict_proba(X)
        b = est.fit(M, y).predict_proba(M)
        assert np.array_equal(a, b)


def test_a_complex_sparse_matrix_is_refused():
    with pytest.raises(TypeError, match="real numeric dtype"):
        bw.Dataset(sparse.csr_matrix(np.ones((3, 2)) * (1 + 1j)), np.zeros(3))


# -- weights scaled by tiny factors --------------------------------------------------

@pytest.mark.parametrize("tree_method", ["hist", "approx", "exact"])
def test_weights_times_a_tiny_power_of_two_give_the_same_model(rng, tree_method):
    """With lambda = gamma = alpha = min_child_weight = 0 the model does not depend on
    the weights' scale; a power of two keeps every float exact."""
    X = rng.normal(size=(500, 4))
    y = (X[:, 0] + rng.normal(size=500) > 0) * 1.0
    w = rng.uniform(0.5, 2.0, size=500)
    params = {"objective": "binary:logistic", "tree_method": tree_method, "lambda": 0,
              "min_child_weight": 0, "verbosity": 0}
    one = bw.train(params, bw.Dataset(X, y, weight=w), 5)
    tiny = bw.train(params, bw.Dataset(X, y, weight=w * 2.0 ** -90), 5)
    fields = ("feature", "threshold", "left", "right", "default_left", "value")
    assert [[t[k] for k in fields] for t in _trees(one)] == \
        [[t[k] for k in fields] for t in _trees(tiny)]  # (gains and covers scale)


@pytest.mark.parametrize("scale, word", [(1e-100, "underflow"), (1e31, "overflow")])
def test_weights_beyond_the_float32_gradients_are_refused(rng, scale, word):
    """Below about 1e-38 the float32 gradients flushed to zero: every tree a single leaf
    of value 0, without a word (from 1e-44 the splits changed already)."""
    X = rng.normal(size=(100, 3))
    y = (X[:, 0] > 0) * 1.0
    d = bw.Dataset(X, y, weight=np.full(100, scale))
    for tm in ("hist", "approx"):
        with pytest.raises(ValueError, match=f"weight .* {word}"):
            bw.train({"objective": "binary:logistic", "tree_method": tm, "lambda": 0}, d, 2)
    with pytest.raises(ValueError, match=word):
        bw.GBDTClassifier(n_estimators=2).fit(X, y, sample_weight=np.full(100, scale))


def test_trees_grown_by_a_criterion_take_tiny_weights(rng):
    """A criterion sums float64 weights: CART's trees are the same for weights times
    1e-100 (only boosting's float32 gradients need the range)."""
    X = rng.normal(size=(300, 4))
    y = (X[:, 0] + rng.normal(size=300) > 0) * 1
    w = rng.uniform(0.5, 2.0, size=300)
    for splitter in ("best", "hist"):
        a = bw.DecisionTreeClassifier(splitter=splitter, max_depth=4).fit(X, y, sample_weight=w)
        b = bw.DecisionTreeClassifier(splitter=splitter, max_depth=4).fit(
            X, y, sample_weight=w * 1e-100)
        assert np.array_equal(a.tree_.feature, b.tree_.feature)
        assert np.allclose(a.predict_proba(X), b.predict_proba(X), rtol=0, atol=1e-12)


# -- a tampered model ------------------------------------------------------------------

def _tampered(booster, tmp_path, edit):
    """The model's file after ``edit(model dict)``, its checksum made again (so only the
    contents' own checks can catch it)."""
    m = booster._to_dict()
    edit(m)
    path = tmp_path / "tampered.json"
    path.write_text(model_io.dumps(m))
    return path


def _leaves(tree_dict, value):
    tree_dict["value"] = [value if f < 0 else v for f, v in
                          zip(tree_dict["feature"], tree_dict["value"])]


@pytest.mark.parametrize("edit", [
    lambda m: [_leaves(t, 1e308) for t in m["trees"][:2]],
    lambda m: (m.update(base_score=[1.7e308]), _leaves(m["trees"][0], 1.7e308)),
    lambda m: (m["trees"][0].update(cover=[c * 1e300 for c in m["trees"][0]["cover"]]),
               _leaves(m["trees"][0], 1e10)),
], ids=["two leaves 1e308", "base score 1.7e308", "covers 1e300 times"])
def test_a_tampered_model_with_infinite_outputs_is_refused_at_load(binary, tmp_path, edit):
    """Each number finite, the checksum mended: before, it loaded, and predict (or
    pred_contribs' bias, cover times value) gave inf."""
    path = _tampered(_fit(*binary), tmp_path, edit)
    with pytest.raises(ValueError, match="infinite prediction|overflow"):
        bw.Booster(model_file=path)


def test_a_model_with_zero_or_subnormal_covers_still_loads(binary, tmp_path):
    """The bounds refuse no model training could make: covers of 0 (a node of zero-weight
    rows) or subnormal ones give finite outputs and load."""
    X, y = binary
    for factor in (0.0, 1e-320):
        path = _tampered(_fit(X, y), tmp_path, lambda m: [t.update(
            cover=[c * factor for c in t["cover"]]) for t in m["trees"]])
        b = bw.Booster(model_file=path)
        assert np.all(np.isfinite(b.predict(X[:20], pred_contribs=True)))


# -- errors that escaped from inside numpy -------------------------------------------

@pytest.mark.parametrize("item", [np.s_[1.5:3], np.s_["a":2], np.s_[:2.0], np.s_[True:3],
                                  np.s_[::1.0], 3])
def test_slicing_a_booster_with_anything_but_integers_is_refused(binary, item):
    with pytest.raises(TypeError, match="sliced by rounds"):
        _fit(*binary)[item]


@pytest.mark.parametrize("est", [bw.DecisionTreeClassifier(), bw.RandomForestClassifier(3),
                                 bw.AdaBoostClassifier(n_estimators=3), bw.GBDTClassifier(
                                     n_estimators=3)], ids=lambda e: type(e).__name__)
def test_an_object_array_with_a_string_is_refused_naming_x(est):
    X = np.array([[1, "a"], [2, 3], [3, 4], [4, 5]], dtype=object)
    y = np.array([0, 1, 0, 1])
    with pytest.raises(TypeError, match="X must hold numbers only.*'a'"):
        est.fit(X, y)
    est.fit(X[1:].astype(float), y[1:])
    with pytest.raises(TypeError, match="X must hold numbers only"):
        est.predict(X)


def test_a_regressor_s_string_labels_are_refused_naming_y():
    X = np.arange(8.0).reshape(4, 2)
    with pytest.raises(TypeError, match="y must hold numbers only"):
        bw.DecisionTreeRegressor().fit(X, np.array(["a", "b", "c", "d"], dtype=object))


# -- crashes -----------------------------------------------------------------------------

@pytest.mark.parametrize("name", ["eta", "lambda", "gamma", "subsample", "base_score",
                                  "max_delta_step"])
def test_a_python_integer_beyond_the_float_range_is_a_clear_error(binary, name):
    with pytest.raises(ValueError, match=f"'{name}' must be a finite number, got an integer "
                                         "of 401 digits"):
        _fit(*binary, **{name: 10 ** 400})


def test_huge_integers_in_estimators_and_integer_parameters(binary):
    X, y = binary
    with pytest.raises(ValueError, match="'learning_rate' must be a finite number"):
        bw.GBDTClassifier(learning_rate=10 ** 400).fit(X, y)
    with pytest.raises(ValueError, match="'max_depth' must fit a 64-bit integer, got an "
                                         "integer of 401 digits"):
        _fit(X, y, max_depth=10 ** 400)


@pytest.mark.parametrize("objective", ["reg:quantileerror", "reg:absoluteerror", "reg:huber"])
@pytest.mark.parametrize("boosting", ["newton", "gradient"])
def test_a_line_search_on_a_leaf_without_rows(rng, objective, boosting):
    """subsample=0.001 of 200 rows draws an empty bag: the line search of its one leaf
    read the last element of an empty array (IndexError). The leaf's step is 0 now."""
    X = rng.normal(size=(200, 3))
    y = X[:, 0] + rng.normal(size=200)
    b = bw.train({"objective": objective, "subsample": 0.001, "boosting": boosting,
                  "verbosity": 0}, bw.Dataset(X, y), 5)
    assert np.all(np.isfinite(b.predict(X)))


def _chain(depth):
    """A model of one tree shaped as a chain ``depth`` levels deep on one feature (every
    split's left child a leaf), built as its file would hold it."""
    X = np.arange(50, dtype=float)[:, None]
    m = bw.train({"max_depth": 1, "verbosity": 0}, bw.Dataset(X, X[:, 0] ** 2), 1)._to_dict()
    n = 2 * depth + 1
    t = {k: m["trees"][0][k] for k in ("group",)}
    t.update(feature=[-1] * n, left=[-1] * n, right=[-1] * n, threshold=[0.0] * n,
             value=[0.0] * n, cover=[0.0] * n, gain=[0.0] * n, default_left=[0] * n,
             split_kind=[0] * n)
    for i in range(depth):
        s = 2 * i
        t["feature"][s], t["left"][s], t["right"][s] = 0, s + 1, s + 2
        t["threshold"][s], t["gain"][s] = i + 0.5, 1.0
        t["value"][s + 1], t["cover"][s + 1] = 0.01 * i, 1.0
    t["value"][2 * depth], t["cover"][2 * depth] = 0.01 * depth, 1.0
    for i in range(depth - 1, -1, -1):
        t["cover"][2 * i] = t["cover"][2 * i + 1] + t["cover"][2 * i + 2]
    t["count"] = list(t["cover"])
    m["trees"] = [t]
    b = bw.Booster()
    b._from_dict(json.loads(model_io.dumps(m))["model"], "chain")
    return b


def test_a_deep_chain_shaped_tree_dumps_and_explains():
    """Walkers that recursed per level stopped near a thousand levels (RecursionError in
    dump_model's JSON, export_text), and SHAP's path buffers grew as depth squared (at
    20,000 levels 19 GiB a row: SystemError from the kernel)."""
    b = _chain(3000)
    X = np.array([[0.0], [1500.0], [3001.0]])
    text = b.dump_model(format="json")  # (json.loads itself recurses per level)
    assert text.startswith("[") and text.count('"nodeid"') == 6001
    assert b.dump_model(format="text").count("leaf=") == 3001
    assert b.export_text(0).count("value: ") == 3001
    assert len(b.trees_to_dataframe()) == 6001
    contribs = b.predict(X, pred_contribs=True)
    assert np.allclose(contribs.sum(axis=1), b.predict(X, output_margin=True))
    deep = _chain(20000)
    X = np.array([[0.0], [19999.5]])
    contribs = deep.predict(X, pred_contribs=True)
    assert np.allclose(contribs.sum(axis=1), deep.predict(X, output_margin=True))
    assert len(deep.trees_to_dataframe()) == 40001


def test_the_json_dump_is_json_dumps_output():
    from boostwood.boosting.dump import _json_text
    value = {"a": [], "b": {}, "c": [1, {"x": None, "y": True, "z": 1.5e-300}], "d": "\u00e9\n"}
    assert _json_text(value, 1) == json.dumps(value, indent=1)


@pytest.mark.parametrize("eps", [5e-324, 1e-300, 1.0 / 65535])
def test_a_sketch_eps_too_small_for_global_proposals_is_a_clear_error(binary, eps):
    with pytest.raises(ValueError, match="'sketch_eps' must be at least 1/65534"):
        _fit(*binary, tree_method="approx", sketch_eps=eps)


def test_approx_histograms_are_sized_by_the_data_s_values(rng):
    """Global proposals sized every histogram for 1/sketch_eps candidates however few
    values the data had (60 rows, 3 values a feature: 3 GB of address space at
    sketch_eps=1/65533); the bins are at most the values now, the model the same."""
    from boostwood.tree.approx import GlobalProposal
    X = rng.integers(0, 3, size=(60, 4)).astype(float)
    d = bw.Dataset(X, (X[:, 0] > 0) * 1.0)
    assert GlobalProposal(d.sorted_columns(), 1.0 / 65533).n_bins_max == 4
    fine = _fit(X, d.label, tree_method="approx", sketch_eps=1.0 / 65533)
    coarse = _fit(X, d.label, tree_method="approx", sketch_eps=0.3)
    assert _trees(fine) == _trees(coarse)


# -- complex numbers ---------------------------------------------------------------------

@pytest.mark.parametrize("field", ["label", "weight", "base_margin"])
def test_complex_labels_weights_and_margins_are_refused(field):
    X = np.ones((4, 2))
    args = {"label": np.zeros(4), field: np.ones(4) + 1j}
    with warnings.catch_warnings():
        warnings.simplefilter("error")  # (numpy's ComplexWarning was all a user got)
        with pytest.raises(TypeError, match=f"{field} must be real numbers"):
            bw.Dataset(X, **args)


def test_complex_evaluation_labels_in_the_regressor_are_refused():
    X = np.random.default_rng(0).normal(size=(40, 2))
    with pytest.raises(TypeError, match="y must be real numbers"):
        bw.GBDTRegressor(n_estimators=2).fit(X, X[:, 0], eval_set=[(X, X[:, 0] + 1j)])


def test_adaboost_with_a_huge_learning_rate_fits():
    """learning_rate=1e9 overflowed the row weights (inf / inf = NaN, then an error from
    inside scikit-learn's input check); the weights now update in log space and the
    loop stops, as scikit-learn's does, when their sum overflows (with its warning)."""
    from sklearn.datasets import load_diabetes, load_iris
    X, y = load_iris(return_X_y=True)
    with pytest.warns(UserWarning, match="Sample weights have reached infinite values"):
        clf = bw.AdaBoostClassifier(learning_rate=1e9, random_state=0).fit(X, y)
    assert len(clf.estimators_) == 1 and np.all(np.isfinite(clf.estimator_weights_))
    X, y = load_diabetes(return_X_y=True)
    reg = bw.AdaBoostRegressor(learning_rate=1e9, random_state=0).fit(X, y)
    assert np.all(np.isfinite(reg.predict(X)))
