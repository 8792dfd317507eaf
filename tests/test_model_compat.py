"""Model files written by earlier releases keep loading and predicting bit for bit.

The margins (sums of tree leaves) are compared bit for bit.  Transformed
predictions go through the platform's ``exp``/``log``, which NumPy dispatches
per CPU (AVX2 and AVX-512 differ in the last bit), so they are compared bit for
bit with the link applied to the stored margin on this machine, and within a
few units in the last place of the values the release computed elsewhere.

``tests/fixtures/v1`` holds models saved by the last release that wrote format
version 1 (see ``tests/fixtures/make_v1_models.py``) and the margins and
predictions that release computed from them.
"""
import glob
import json
import os

import numpy as np
import pytest

import boostwood as bw

HERE = os.path.join(os.path.dirname(os.path.abspath(__file__)), "fixtures")
V1 = sorted(glob.glob(os.path.join(HERE, "v1", "*.json")))


def _inputs():
    import importlib.util
    spec = importlib.util.spec_from_file_location("make_v1", os.path.join(HERE,
                                                                          "make_v1_models.py"))
    mod = importlib.util.module_from_spec(spec)
    spec.loader.exec_module(mod)
    return mod.inputs()[0]


def test_fixtures_are_format_v1():
    assert len(V1) == 7
    for path in V1:
        with open(path, encoding="utf-8") as fh:
            assert json.load(fh)["version"] == 1


@pytest.mark.parametrize("path", V1, ids=lambda p: os.path.basename(p)[:-5])
def test_v1_models_load_and_predict_bit_identically(path):
    X = _inputs()
    booster = bw.Booster(model_file=path)
    margin = np.asarray(booster.predict(bw.Dataset(X), output_margin=True), dtype=np.float64)
    pred = np.asarray(booster.predict(bw.Dataset(X)), dtype=np.float64)
    np.testing.assert_array_equal(margin, np.load(path[:-5] + ".margin.npy"))
    stored_margin = np.load(path[:-5] + ".margin.npy")
    link = booster.objective.transform(stored_margin.reshape(len(X), -1))
    np.testing.assert_array_equal(pred, np.asarray(link, dtype=np.float64))
    np.testing.assert_array_max_ulp(pred, np.load(path[:-5] + ".pred.npy"), maxulp=4)


@pytest.mark.parametrize("path", V1[:3], ids=lambda p: os.path.basename(p)[:-5])
def test_v1_models_saved_again_predict_the_same(path, tmp_path):
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
