"""The hardened boundary, one root cause at a time: the CLI never guesses columns or the
label, model files are read only from regular files and written through links, a
Dataset owns its data, sparse and dense input give the same model, absurd class
counts fail fast, probabilities never exceed 1."""
import io
import os
import stat
import subprocess
import sys
from contextlib import redirect_stderr, redirect_stdout

import numpy as np
import pytest
import scipy.sparse as sp

import boostwood as bw
from boostwood.cli import main


def _cli(*args, cwd):
    """Run the CLI in-process: (exit status, stdout, stderr)."""
    out, err = io.StringIO(), io.StringIO()
    old = os.getcwd()
    os.chdir(cwd)
    try:
        with redirect_stdout(out), redirect_stderr(err):
            code = main(list(args))
    finally:
        os.chdir(old)
    return code, out.getvalue(), err.getvalue()


@pytest.fixture
def files(tmp_path):
    r = np.random.default_rng(0)
    X = r.normal(size=(400, 3))
    y = (X[:, 0] - 2 * X[:, 1] > 0).astype(int)
    header = "a,b,c,target"
    rows = [f"{a:.6f},{b:.6f},{c:.6f},{t}" for (a, b, c), t in zip(X, y)]
    (tmp_path / "train.csv").write_text("\n".join([header] + rows) + "\n")
    # the same data, columns in another order
    rows2 = [f"{t},{c:.6f},{b:.6f},{a:.6f}" for (a, b, c), t in zip(X, y)]
    (tmp_path / "shuffled.csv").write_text("\n".join(["target,c,b,a"] + rows2) + "\n")
    (tmp_path / "noheader.csv").write_text("\n".join(rows) + "\n")
    (tmp_path / "lacking.csv").write_text("\n".join(
        ["a,c,target"] + [f"{a:.6f},{c:.6f},{t}" for (a, b, c), t in zip(X, y)]) + "\n")
    (tmp_path / "scored.csv").write_text("\n".join(
        [header + ",score"] + [f"{r},{2.5 + i % 3}" for i, r in enumerate(rows)]) + "\n")
    code, _, err = _cli("train", "--data", "train.csv", "--label", "target", "--rounds", "5",
                        "--param", "objective=binary:logistic", "--quiet", "--model", "m.json",
                        cwd=tmp_path)
    assert code == 0, err
    return tmp_path, X, y


def test_predict_matches_columns_by_name_not_position(files):
    tmp, X, y = files
    for name in ("train.csv", "shuffled.csv"):
        code, _, err = _cli("predict", "--model", "m.json", "--data", name, "--output",
                            f"p_{name}", cwd=tmp)
        assert code == 0, err
    a = np.loadtxt(tmp / "p_train.csv", skiprows=1)
    b = np.loadtxt(tmp / "p_shuffled.csv", skiprows=1)
    assert np.array_equal(a, b)  # reordered columns: the same predictions
    model = bw.Booster(model_file=tmp / "m.json")
    assert np.allclose(a, model.predict(X, validate_features=False))  # X: the file's order


@pytest.mark.parametrize("name,message", [("lacking.csv", "'b'"),
                                          ("noheader.csv", "no header row")])
def test_a_file_without_the_models_columns_is_a_clear_error(files, name, message):
    tmp, _, _ = files
    code, _, err = _cli("predict", "--model", "m.json", "--data", name, "--output", "p.csv",
                        cwd=tmp)
    assert code == 2 and message in err and len(err.strip().splitlines()) == 1
    assert not (tmp / "p.csv").exists() and not (tmp / "p.csv.tmp").exists()


def test_eval_and_report_need_the_label_named(files):
    tmp, X, y = files
    for cmd in (["eval"], ["report", "--output", "r.html"]):
        code, _, err = _cli(*cmd, "--model", "m.json", "--data", "shuffled.csv", cwd=tmp)
        assert code == 2 and "which column is the label" in err
    code, out, err = _cli("eval", "--model", "m.json", "--data", "shuffled.csv", "--label",
                          "target", "--metric", "error", cwd=tmp)
    assert code == 0, err
    pred = bw.Booster(model_file=tmp / "m.json").predict(X, validate_features=False)
    assert float(out.split("error: ")[1]) == pytest.approx(np.mean((pred > 0.5) != y),
                                                             abs=1e-6)
    code, _, err = _cli("report", "--model", "m.json", "--data", "shuffled.csv", "--label",
                        "target", "--output", "r.html", cwd=tmp)
    assert code == 0 and (tmp / "r.html").exists(), err


def test_a_label_the_objective_rejects_is_one_line(files):
    tmp, _, _ = files
    code, _, err = _cli("eval", "--model", "m.json", "--data", "scored.csv", "--label",
                        "score", cwd=tmp)
    assert code == 2 and "label column 'score'" in err and "Traceback" not in err
    assert len(err.strip().splitlines()) == 1


def test_version_and_help_without_markup():
    r = subprocess.run([sys.executable, "-m", "boostwood", "--version"], capture_output=True,
                       text=True, timeout=120)
    assert r.returncode == 0 and r.stdout.strip() == f"boostwood {bw.__version__}"
    r = subprocess.run([sys.executable, "-m", "boostwood", "--help"], capture_output=True,
                       text=True, timeout=120)
    assert r.returncode == 0 and "``" not in r.stdout and ":func:" not in r.stdout


def test_an_internal_error_is_one_line_with_status_1(files, monkeypatch):
    tmp, _, _ = files
    from boostwood.cli import commands

    def boom(args):
        raise KeyError("unexpected")

    monkeypatch.setattr(commands, "cmd_importance", boom)  # the parser takes it from here
    monkeypatch.delenv("BOOSTWOOD_TRACEBACK", raising=False)
    code, _, err = _cli("importance", "--model", "m.json", cwd=tmp)
    assert code == 1 and "internal error" in err and len(err.strip().splitlines()) == 1


# -- model files -------------------------------------------------------------------------------
def _booster():
    r = np.random.default_rng(1)
    X = r.normal(size=(200, 3))
    return bw.train({"max_depth": 2}, bw.Dataset(X, X[:, 0] + r.normal(size=200)), 3,
                    verbose_eval=False), X


@pytest.mark.skipif(not hasattr(os, "mkfifo"), reason="needs FIFOs")
def test_loading_from_a_fifo_fails_fast(tmp_path):
    fifo = tmp_path / "m.json"
    os.mkfifo(fifo)
    with pytest.raises(ValueError, match="not a regular file"):
        bw.Booster(model_file=fifo)  # used to block forever
    with pytest.raises(ValueError, match="not a regular file"):
        bw.Booster(model_file=tmp_path)  # a directory


def test_save_model_writes_through_a_symlink_and_refuses_devices(tmp_path):
    b, X = _booster()
    target = tmp_path / "real.json"
    target.write_text("old")
    link = tmp_path / "link.json"
    link.symlink_to(target)
    b.save_model(link)
    assert link.is_symlink() and os.readlink(link) == str(target)  # the link stays a link
    assert np.array_equal(bw.Booster(model_file=target).predict(X), b.predict(X))
    with pytest.raises(ValueError, match="not a regular file"):
        b.save_model(tmp_path)  # a directory
    if hasattr(os, "mkfifo"):
        fifo = tmp_path / "pipe"
        os.mkfifo(fifo)
        with pytest.raises(ValueError, match="not a regular file"):
            b.save_model(fifo)
        assert stat.S_ISFIFO(os.stat(fifo).st_mode)  # not replaced by a regular file
    if os.path.exists("/dev/null"):
        with pytest.raises(ValueError, match="not a regular file"):
            b.save_model("/dev/null")
        assert stat.S_ISCHR(os.stat("/dev/null").st_mode)


def test_a_model_file_over_the_size_limit_is_refused(tmp_path, monkeypatch):
    from boostwood.boosting import model_io
    b, _ = _booster()
    b.save_model(tmp_path / "m.json")
    monkeypatch.setattr(model_io, "MAX_MODEL_BYTES", 100)
    monkeypatch.setattr(model_io.read_text, "__defaults__", (100,))
    with pytest.raises(ValueError, match="more than the 100 bytes"):
        bw.Booster(model_file=tmp_path / "m.json")


def test_deep_nesting_and_inconsistent_covers_are_refused(tmp_path):
    import json
    from boostwood.boosting import model_io
    deep = tmp_path / "deep.json"
    deep.write_text("[" * 100_000 + "]" * 100_000)
    with pytest.raises(ValueError, match="nested too deeply|not a boostwood model"):
        bw.Booster(model_file=deep)
    b, X = _booster()
    b.save_model(tmp_path / "m.json")
    model = json.loads((tmp_path / "m.json").read_text())["model"]
    tree = model["trees"][0]
    tree["cover"][tree["left"][0]] *= 3  # SHAP would no longer add up to the margin
    (tmp_path / "bad.json").write_text(model_io.dumps(model))  # checksum recomputed
    with pytest.raises(ValueError, match="covers do not add up"):
        bw.Booster(model_file=tmp_path / "bad.json")
    tree["cover"][tree["left"][0]] /= 3
    tree["count"][0] = -5
    (tmp_path / "bad2.json").write_text(model_io.dumps(model))
    with pytest.raises(ValueError, match="negative"):
        bw.Booster(model_file=tmp_path / "bad2.json")


# -- data ----------------------------------------------------------------------------------------
def test_a_dataset_is_immune_to_later_changes_of_the_callers_arrays():
    r = np.random.default_rng(2)
    X = r.normal(size=(500, 4))
    y = X[:, 0] + r.normal(size=500)
    w = r.uniform(0.5, 2, 500)
    want = bw.train({"max_depth": 3}, bw.Dataset(X.copy(), y.copy(), weight=w.copy()), 5,
                    verbose_eval=False).predict(X)
    d = bw.Dataset(X, y, weight=w)
    X[:] = 0.0
    y[:] = 1.0
    w[:] = 7.0
    got = bw.train({"max_depth": 3}, d, 5, verbose_eval=False).predict(d)
    assert np.array_equal(got, want)


@pytest.mark.parametrize("weighted", [False, True])
def test_sparse_and_dense_input_give_byte_identical_models(tmp_path, weighted):
    r = np.random.default_rng(3)
    n = 3000
    X = r.normal(size=(n, 6)) * (r.random((n, 6)) < 0.3)  # mostly zeros
    y = X[:, 0] - X[:, 1] + r.normal(size=n) * 0.1
    w = r.uniform(0.1, 3.0, n) if weighted else None
    params = {"max_depth": 4, "bin_construct_sample_cnt": 1000, "subsample": 0.8}
    texts = []
    for data in (X, sp.csr_matrix(X), sp.csc_matrix(X)):
        b = bw.train(params, bw.Dataset(data, y, weight=w), 6, verbose_eval=False)
        b.save_model(tmp_path / "m.json")
        texts.append((tmp_path / "m.json").read_bytes())
    assert texts[0] == texts[1] == texts[2]


def test_duplicate_dataframe_columns_are_refused():
    pd = pytest.importorskip("pandas")
    df = pd.DataFrame(np.ones((5, 3)), columns=["a", "b", "a"])
    with pytest.raises(ValueError, match="duplicated: \\['a'\\]"):
        bw.Dataset(df, np.zeros(5))


def test_an_absurd_class_count_fails_fast():
    X = np.random.default_rng(4).normal(size=(64, 3))
    y = np.arange(64) % 3
    with pytest.raises(ValueError, match="num_class"):
        bw.train({"objective": "multi:softprob", "num_class": 65535}, bw.Dataset(X, y), 1)
    with pytest.raises(ValueError, match="more than the 64 training rows"):
        bw.train({"objective": "multi:softprob", "num_class": 100}, bw.Dataset(X, y), 1)


def test_forest_probabilities_never_exceed_one():
    r = np.random.default_rng(5)
    X = r.normal(size=(300, 3))
    y = (X[:, 0] > 0).astype(int)
    w = r.uniform(0.1, 1.0, 300) ** 7 * 1e-3  # fractional weights: sums in different orders
    for m in (bw.RandomForestClassifier(10, random_state=0),
              bw.DecisionTreeClassifier(max_depth=12)):
        p = m.fit(X, y, sample_weight=w).predict_proba(X)
        assert p.max() <= 1.0 and p.min() >= 0.0


@pytest.mark.parametrize("make,message", [
    (lambda X, y: bw.Dataset(X, [10 ** 400] * len(y)), "too large for float64"),
    (lambda X, y: bw.train({}, bw.Dataset(X, np.full(len(y), 1e308)), 1), "overflows float64"),
])
def test_huge_labels_are_a_clear_error_not_an_overflow(make, message):
    X = np.random.default_rng(6).normal(size=(50, 3))
    with pytest.raises(ValueError, match=message):
        make(X, np.zeros(50))


def test_an_absurd_leaf_limit_does_not_allocate_for_it():
    """The node table starts small and grows; max_leaves=2**40 used to ask for 208 TiB."""
    X = np.random.default_rng(7).normal(size=(60, 3))
    b = bw.train({"grow_policy": "lossguide", "max_depth": 0, "max_leaves": 2 ** 40},
                 bw.Dataset(X, X[:, 0]), 2, verbose_eval=False)
    assert b.num_boosted_rounds() == 2


def test_resume_never_trains_a_different_number_of_rounds(files):
    """A checkpoint of more rounds than --rounds asks for used to become the model as it
    was (10 rounds for --rounds 4, exit status 0)."""
    tmp, _, _ = files
    code, _, err = _cli("train", "--data", "train.csv", "--label", "target", "--rounds", "6",
                        "--quiet", "--model", "six.json", cwd=tmp)
    assert code == 0, err
    (tmp / "r.json.checkpoint").write_bytes((tmp / "six.json").read_bytes())
    code, _, err = _cli("train", "--data", "train.csv", "--label", "target", "--rounds", "4",
                        "--resume", "--quiet", "--model", "r.json", cwd=tmp)
    assert code == 2 and "holds 6 rounds, more than the 4" in err and not (tmp / "r.json").exists()
    code, _, err = _cli("train", "--data", "train.csv", "--label", "target", "--rounds", "9",
                        "--resume", "--quiet", "--model", "r.json", cwd=tmp)
    assert code == 0 and bw.Booster(model_file=tmp / "r.json").num_boosted_rounds() == 9


def test_validation_files_are_matched_to_the_training_columns_by_name(files):
    """A validation file with its columns in another order evaluates the same rows the
    same way (by position, 'target,c,b,a' used to be read as features c, b, a)."""
    tmp, _, _ = files
    code, out, err = _cli("train", "--data", "train.csv", "--valid", "shuffled.csv", "--label",
                          "target", "--rounds", "3", "--model", "v.json", cwd=tmp)
    assert code == 0, err
    last = [line for line in out.splitlines() if line.startswith("[2]")][0]
    train_value = last.split("train-")[1].split(":")[1].split()[0]
    valid_value = last.split("valid-")[1].split(":")[1].split()[0]
    assert train_value == valid_value  # the same rows: the same metric
    code, _, err = _cli("train", "--data", "train.csv", "--valid", "lacking.csv", "--label",
                        "target", "--rounds", "3", "--quiet", "--model", "v.json", cwd=tmp)
    assert code == 2 and "'b'" in err


def test_predict_has_label_needs_the_label_named(files):
    tmp, _, _ = files
    code, _, err = _cli("predict", "--model", "m.json", "--data", "train.csv", "--has-label",
                        "--output", "p.csv", cwd=tmp)
    assert code == 2 and "which column is the label" in err
    assert not (tmp / "p.csv").exists() and not (tmp / "p.csv.tmp").exists()
    code, _, err = _cli("predict", "--model", "m.json", "--data", "train.csv", "--has-label",
                        "--label", "target", "--output", "p.csv", cwd=tmp)
    assert code == 0, err
