"""Model files written by earlier releases keep loading and predicting bit for bit.

The margins (sums of tree leaves) are compared bit for bit.  Transformed
predictions go through the platform's ``exp``/``log``, which NumPy dispatches
per CPU (AVX2 and AVX-512 differ in the last bit), so they are compared bit for
bit with the link applied to the stored margin on this machine, and within a
few units in the last place of the values the release computed elsewhere.

``tests/fixtures/v1`` and ``tests/fixtures/v2`` hold models saved by the last
releases that wrote format versions 1 and 2 (see ``tests/fixtures/make_v1_models.py``
and ``make_v2_models.py``) and the margins and predictions those releases computed
from them.
"""
import glob
import json
import os

import numpy as np
import pytest

import boostwood as bw

HERE = os.path.join(os.path.dirname(os.path.abspath(__file__)), "fixtures")
V1 = sorted(glob.glob(os.path.join(HERE, "v1", "*.json")))
V2 = sorted(glob.glob(os.path.join(HERE, "v2", "*.json")))
SAVED = V1 + V2


def _name(path):
    return os.path.basename(os.path.dirname(path)) + "-" + os.path.basename(path)[:-5]


def _inputs():
    import importlib.util
    spec = importlib.util.spec_from_file_location("make_v1", os.path.join(HERE,
                                                                          "make_v1_models.py"))
    mod = importlib.util.module_from_spec(spec)
    spec.loader.exec_module(mod)
    return mod.inputs()[0]


def test_fixtures_are_format_v1_and_v2():
    assert (len(V1), len(V2)) == (7, 8)
    for version, paths in ((1, V1), (2, V2)):
        for path in paths:
            with open(path, encoding="utf-8") as fh:
                assert json.load(fh)["version"] == version


@pytest.mark.parametrize("path", SAVED, ids=_name)
def test_saved_models_load_and_predict_bit_identically(path):
    X = _inputs()
    booster = bw.Booster(model_file=path)
    margin = np.asarray(booster.predict(bw.Dataset(X), output_margin=True), dtype=np.float64)
    pred = np.asarray(booster.predict(bw.Dataset(X)), dtype=np.float64)
    np.testing.assert_array_equal(margin, np.load(path[:-5] + ".margin.npy"))
    stored_margin = np.load(path[:-5] + ".margin.npy")
    link = booster.objective.transform(stored_margin.reshape(len(X), -1))
    np.testing.assert_array_equal(pred, np.asarray(link, dtype=np.float64))
    np.testing.assert_array_max_ulp(pred, np.load(path[:-5] + ".pred.npy"), maxulp=4)


@pytest.mark.parametrize("path", V1[:3] + V2[-3:], ids=_name)
def test_saved_models_saved_again_predict_the_same(path, tmp_path):
    X = _inputs()
    out = tmp_path / "again.json"
    bw.Booster(model_file=path).save_model(out)
    margin = np.asarray(bw.Booster(model_file=out).predict(bw.Dataset(X), output_margin=True))
    np.testing.assert_array_equal(margin, np.load(path[:-5] + ".margin.npy"))


def test_poisson_model_saved_before_the_damping_reads_as_plain_newton(tmp_path):
    """A count:poisson file saved before ``poisson_max_delta_step`` existed was grown with
    plain Newton steps: it loads as 0 (not today's default 0.7), and saving it again keeps
    that; a model grown now records the default."""
    import boostwood as bw
    old = bw.Booster(model_file=os.path.join(HERE, "v1", "poisson_hist.json"))
    assert old.params["poisson_max_delta_step"] == 0.0
    old.save_model(tmp_path / "again.json")
    assert bw.Booster(model_file=tmp_path / "again.json").params["poisson_max_delta_step"] == 0.0
    X = np.random.default_rng(0).normal(size=(200, 3))
    y = np.random.default_rng(1).poisson(np.exp(X[:, 0] * 0.3))
    new = bw.train({"objective": "count:poisson"}, bw.Dataset(X, y), 2, verbose_eval=False)
    new.save_model(tmp_path / "new.json")
    assert bw.Booster(model_file=tmp_path / "new.json").params["poisson_max_delta_step"] == 0.7


def _trained(params, X, y, **dataset):
    return bw.train({"seed": 1, **params}, bw.Dataset(X, y, **dataset), 3, verbose_eval=False)


def test_a_model_file_records_the_parameters_that_differ_from_their_defaults(tmp_path):
    X = _inputs()
    y = np.nan_to_num(X[:, 0])
    b = _trained({"max_depth": 3, "eta": 0.3, "lambda": 1.0, "subsample": 1.0}, X, y)
    b.save_model(tmp_path / "m.json")
    doc = json.loads((tmp_path / "m.json").read_text())
    assert doc["version"] == 3
    assert doc["model"]["params"] == {"max_depth": 3, "seed": 1}  # (eta, lambda: defaults)
    assert bw.Booster(model_file=tmp_path / "m.json").params == b.params


def test_a_new_parameter_at_its_default_leaves_model_files_unchanged(tmp_path, monkeypatch):
    """Format 3's promise: a parameter added in a later release, left at its default,
    does not change the bytes of a model that does not use it."""
    from boostwood.boosting import params as mod
    from boostwood.data.checks import Param
    X = _inputs()
    y = np.nan_to_num(X[:, 0])
    texts = []
    for extra in (False, True):
        if extra:
            monkeypatch.setitem(mod.PARAMS, "some_new_knob", Param(0, "int", 0, 9))
        _trained({"max_depth": 3}, X, y).save_model(tmp_path / "m.json")
        texts.append((tmp_path / "m.json").read_bytes())
        assert ("some_new_knob" in bw.Booster(model_file=tmp_path / "m.json").params) is extra
    assert texts[0] == texts[1]


def test_the_model_records_the_binning_its_dataset_made(tmp_path):
    """max_bin has one owner, the Dataset: a model trained on a Dataset of 63 bins with
    no max_bin in params records 63 (not the default 255 it did not use)."""
    X = _inputs()
    y = np.nan_to_num(X[:, 0])
    b = _trained({"max_depth": 3}, X, y, max_bin=63)
    assert b.params["max_bin"] == 63 and b._to_dict()["params"]["max_bin"] == 63
    again = _trained(dict(b.params), X, y)  # training again from the record bins alike
    assert [t.to_dict() for t in again.trees] == [t.to_dict() for t in b.trees]
