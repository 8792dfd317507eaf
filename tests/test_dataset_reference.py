"""A Dataset holds the caller's float array by reference (no copy), bins it at once when
it has a label, and never lets a later change of that array alter an answer: training
and prediction fall back to the bins, every other read of the values is refused."""
import tracemalloc

import numba
import numpy as np
import pytest

import boostwood as bw
from boostwood._kernels.checksum import fingerprint_words
from boostwood._kernels.reference import fingerprint_naive

CHANGED = "has been changed since"


def _data(n=600, seed=0, n_features=5):
    r = np.random.default_rng(seed)
    X = r.normal(size=(n, n_features))
    X[r.random(X.shape) < 0.1] = np.nan
    y = (np.nan_to_num(X[:, 0]) - np.nan_to_num(X[:, 1]) + r.normal(size=n) * 0.3 > 0)
    return X, y.astype(float)


def test_fingerprint_matches_its_naive_twin_on_any_thread_count():
    w = np.random.default_rng(1).integers(0, 2 ** 32, 5000, dtype=np.uint32)
    want = fingerprint_naive(w)
    old = numba.get_num_threads()
    try:
        for t in sorted({1, old}):
            numba.set_num_threads(t)
            assert int(fingerprint_words(w)) == want
    finally:
        numba.set_num_threads(old)
    swapped = w.copy()
    swapped[[10, 20]] = swapped[[20, 10]]
    assert int(fingerprint_words(swapped)) != want  # a moved value is a change
    flipped = w.copy()
    flipped[4999] ^= 1
    assert int(fingerprint_words(flipped)) != want


def test_a_float_array_is_held_by_reference_not_copied():
    X, y = _data(100000, n_features=20)
    bw.Dataset(X[:100], y[:100])  # compile first
    tracemalloc.start()
    try:
        d = bw.Dataset(X, y, bin_construct_sample_cnt=2000)
        _, peak = tracemalloc.get_traced_memory()
    finally:
        tracemalloc.stop()
    assert np.shares_memory(d.features.dense, X)
    # bins (1 byte per value), the sample's row hashes (a few per row) and the sample:
    # far below a copy of the floats
    assert peak < X.nbytes / 2, (peak, X.nbytes)


def test_another_max_bin_bins_again_from_the_unchanged_array(tmp_path):
    X, y = _data()
    params = {"max_depth": 3, "max_bin": 16, "objective": "binary:logistic"}
    texts, logs = [], []
    for kw in ({}, {"max_bin": 16}):
        d = bw.Dataset(X[:400], y[:400], **kw)
        dv = bw.Dataset(X[400:], y[400:], reference=d)  # binned now, with d's bins of now
        res = {}
        bw.train(params, d, 4, evals=[(dv, "v")], evals_result=res,
                 verbose_eval=False).save_model(tmp_path / "m.json")
        texts.append((tmp_path / "m.json").read_bytes())
        logs.append(res["v"]["logloss"])
        assert d.bin_mapper.max_bin == 16 and dv.bin_mapper is d.bin_mapper
    assert texts[0] == texts[1] and logs[0] == logs[1]


def test_a_change_after_creation_is_refused_where_the_bins_cannot_stand_in():
    X, y = _data()
    d = bw.Dataset(X, y)
    X[0, 0] = 123.0
    with pytest.raises(ValueError, match=CHANGED):
        bw.train({"max_bin": 16}, d, 2, verbose_eval=False)  # binning again
    with pytest.raises(ValueError, match=CHANGED):
        bw.train({"tree_method": "exact"}, d, 2, verbose_eval=False)
    with pytest.raises(ValueError, match=CHANGED):
        bw.cv({"max_depth": 2}, d, 2, nfold=2)
    exact = bw.train({"tree_method": "exact", "max_depth": 3}, bw.Dataset(X.copy(), y), 3,
                     verbose_eval=False)  # thresholds that are not d's bin edges
    with pytest.raises(ValueError, match=CHANGED):
        exact.predict(d)
    unlabelled = bw.Dataset(X)
    X[1, 1] = -5.0
    with pytest.raises(ValueError, match=CHANGED):
        exact.predict(unlabelled)


def test_predictions_on_a_changed_dataset_come_from_its_bins():
    X, y = _data()
    keep = X.copy()
    d = bw.Dataset(X, y)
    b = bw.train({"max_depth": 4, "objective": "binary:logistic"}, d, 5, verbose_eval=False)
    want = {k: b.predict(keep, **{k: True}) for k in ("output_margin", "pred_leaf",
                                                       "pred_contribs")}
    X[:] = 0.0
    for k, v in want.items():
        assert np.array_equal(b.predict(d, **{k: True}), v), k


def test_evaluation_sets_use_the_training_bins_and_ignore_later_changes():
    X, y = _data(900, seed=3)
    Xv, yv = X[600:].copy(), y[600:]
    params = {"max_depth": 3, "objective": "binary:logistic", "eval_metric": ["logloss"]}
    logs = []
    for change in (False, True):
        dtr = bw.Dataset(X[:600].copy(), y[:600])
        Xe = Xv.copy()
        dva = bw.Dataset(Xe, yv, reference=dtr)
        if change:
            Xe[:] = 1.0
        res = {}
        bw.train(params, dtr, 6, evals=[(dva, "v")], evals_result=res, verbose_eval=False)
        logs.append(res["v"]["logloss"])
    assert logs[0] == logs[1]
    # and the binned evaluation equals a prediction from the values
    b = bw.train(params, bw.Dataset(X[:600].copy(), y[:600]), 6, verbose_eval=False)
    p = np.clip(b.predict(Xv), 1e-15, 1 - 1e-15)
    assert np.isclose(logs[0][-1], -np.mean(yv * np.log(p) + (1 - yv) * np.log(1 - p)))


def test_the_cli_bins_the_training_file_once_with_the_runs_max_bin(tmp_path, monkeypatch):
    import contextlib
    import io
    import os

    from boostwood.cli import main
    from boostwood.data import binning

    X, y = _data(300)
    rows = [",".join(f"{v:.6f}" for v in r) + f",{int(t)}" for r, t in zip(np.nan_to_num(X), y)]
    (tmp_path / "t.csv").write_text("\n".join(["a,b,c,d,e,target"] + rows) + "\n")
    fits = []
    real = binning.BinMapper.fit

    def spy(self, *args, **kwargs):
        fits.append(self.max_bin)
        return real(self, *args, **kwargs)

    monkeypatch.setattr(binning.BinMapper, "fit", spy)
    old = os.getcwd()
    os.chdir(tmp_path)
    try:
        with contextlib.redirect_stdout(io.StringIO()), contextlib.redirect_stderr(io.StringIO()):
            code = main(["train", "--data", "t.csv", "--label", "target", "--rounds", "2",
                         "--param", "max_bin=16", "--quiet", "--model", "m.json"])
    finally:
        os.chdir(old)
    assert code == 0 and fits == [16]
