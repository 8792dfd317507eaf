"""The command line, run as a subprocess end to end."""
import json
import shutil
import signal
import subprocess
import sys
import tempfile
import time
from pathlib import Path

import numpy as np
import pytest

import boostwood as bw

from conftest import shared_file


def run(*args, cwd, check=True):
    r = subprocess.run([sys.executable, "-m", "boostwood", *map(str, args)], cwd=cwd,
                       capture_output=True, text=True, timeout=600)
    if check:
        assert r.returncode == 0, r.stderr[-3000:]
    return r


@pytest.fixture
def workdir(tmp_path):
    r = np.random.default_rng(0)
    X = r.normal(size=(1600, 4))
    y = (X[:, 0] + X[:, 1] * X[:, 2] > 0).astype(int)
    for name, rows in (("train.csv", range(1200)), ("test.csv", range(1200, 1600))):
        with open(tmp_path / name, "w") as fh:
            fh.write("id,a,b,c,d,target\n")
            for i in rows:
                c = "" if i % 13 == 0 else f"{X[i, 2]:.6f}"
                fh.write(f"{i},{X[i, 0]:.6f},{X[i, 1]:.6f},{c},{X[i, 3]:.6f},{y[i]}\n")
    (tmp_path / "cfg.toml").write_text(
        '[data]\ntrain = "train.csv"\nvalid = ["test.csv"]\nlabel = "target"\nignore = ["id"]\n'
        '[params]\nobjective = "binary:logistic"\neta = 0.3\n'
        '[train]\nnum_boost_round = 20\nmodel = "m.json"\n')
    return tmp_path


def test_main_job_trains_the_mushroom_demo(tmp_path):
    r = run("train", cwd=tmp_path)
    assert "test-error" in r.stdout and "test error: " in r.stdout
    model = bw.Booster(model_file=tmp_path / "mushroom.model.json")
    assert model.num_boosted_rounds() == 100


def test_train_predict_eval_importance_dump(workdir):
    r = run("train", "cfg.toml", "--param", "max_depth=3", "--param", "train.num_boost_round=15",
            "--quiet", cwd=workdir)
    assert r.stdout.strip() == ""  # --quiet: nothing but errors
    model = bw.Booster(model_file=workdir / "m.json")
    assert model.num_boosted_rounds() == 15 and model.params["max_depth"] == 3
    assert model.feature_names == ["a", "b", "c", "d"]
    run("predict", "--model", "m.json", "--data", "test.csv", "--config", "cfg.toml",
        "--has-label", "--chunk-size", "64", "--output", "p.csv", cwd=workdir)
    pred = np.loadtxt(workdir / "p.csv", delimiter=",", skiprows=1)
    data = np.genfromtxt(workdir / "test.csv", delimiter=",", skip_header=1)
    assert np.allclose(pred, model.predict(data[:, 1:5], validate_features=False), atol=1e-8)
    e = run("eval", "--model", "m.json", "--data", "test.csv", "--config", "cfg.toml",
            "--metric", "auc", "--metric", "logloss", cwd=workdir)
    auc = float(e.stdout.split("auc: ")[1].split()[0])
    assert auc == pytest.approx(bw.boosting.metrics.roc_auc(data[:, 5], pred), abs=1e-5)
    imp = run("importance", "--model", "m.json", "--type", "total_gain", cwd=workdir)
    assert imp.stdout.split()[0] == "a"
    dump = run("dump", "--model", "m.json", "--format", "json", cwd=workdir)
    assert len(json.loads(dump.stdout)) == 15
    leaves = run("predict", "--model", "m.json", "--data", "test.csv", "--config", "cfg.toml",
                 "--has-label", "--pred-leaf", cwd=workdir)
    assert len(leaves.stdout.splitlines()[1].split(",")) == 15


def test_cv_and_report(workdir):
    r = run("cv", "cfg.toml", "--nfold", "3", "--rounds", "5", cwd=workdir)
    assert "3-fold logloss" in r.stdout
    run("train", "cfg.toml", "--quiet", cwd=workdir)
    run("report", "--model", "m.json", "--data", "test.csv", "--config", "cfg.toml",
        "--output", "r.html", cwd=workdir)
    page = (workdir / "r.html").read_text()
    assert page.startswith("<!DOCTYPE html>") and "Learning curve" in page
    assert "http://" not in page and "https://" not in page and "<script" not in page
    assert page.count("<svg") >= 3  # curve, importance, trees (inline, no downloads)
    browser = shutil.which("chromium") or shutil.which("chromium-browser")
    if browser is None:
        pytest.skip("headless Chromium (Debian's chromium package) is not installed")
    shot = workdir / "r.png"
    b = subprocess.run([browser, "--headless", "--no-sandbox", "--disable-gpu",
                        "--enable-logging=stderr", f"--screenshot={shot}",
                        f"file://{workdir / 'r.html'}"], capture_output=True, text=True,
                       timeout=120)
    assert shot.exists() and shot.stat().st_size > 10_000
    assert "Uncaught" not in b.stderr and ":CONSOLE(" not in b.stderr


@pytest.mark.parametrize("content,name,message", [
    ("id,a,target\n1,2\n", "bad.csv", "bad.csv:2: 2 fields, expected 3"),
    # (text in a feature column is a categorical feature since [Q2]; in the label, an error)
    ("id,a,target\n1,2,x\n", "bad2.csv", "bad2.csv:2: 'x' is not a number"),
    ("1 1:0.5 2:oops\n", "bad.libsvm", "bad.libsvm:1: 'oops' is not a number"),
    ("1 1:0.5 seven\n", "bad2.libsvm", "bad2.libsvm:1: 'seven' is not index:value"),
])
def test_malformed_files_give_file_and_line(tmp_path, content, name, message):
    (tmp_path / name).write_text(content)
    r = run("train", "--data", name, "--label", "target", cwd=tmp_path, check=False)
    assert r.returncode == 2
    assert message in r.stderr and "Traceback" not in r.stderr


def test_bad_parameters_and_missing_files(workdir):
    r = run("train", "cfg.toml", "--param", "etaa=0.1", cwd=workdir, check=False)
    assert r.returncode == 2 and "did you mean 'eta'" in r.stderr and "Traceback" not in r.stderr
    r = run("predict", "--model", "nope.json", "--data", "test.csv", cwd=workdir, check=False)
    assert r.returncode == 2 and "nope.json" in r.stderr
    (workdir / "broken.toml").write_text("[data\n")
    r = run("train", "broken.toml", cwd=workdir, check=False)
    assert r.returncode == 2 and "not valid TOML" in r.stderr
    # LightGBM's rounds in [params]: the config's rounds live in [train] (resume counts them)
    r = run("train", "cfg.toml", "--param", "num_iterations=30", cwd=workdir, check=False)
    assert r.returncode == 2 and "give it as train.num_boost_round" in r.stderr


def _bundled_agaricus(tmp_path):
    """The bundled agaricus training file, unpacked to ``tmp_path/agaricus.libsvm``;
    returns its path and number of rows."""
    import gzip
    from importlib import resources
    data = gzip.decompress(resources.files("boostwood.datasets").joinpath(
        "data", "agaricus.txt.train.gz").read_bytes())
    path = tmp_path / "agaricus.libsvm"
    path.write_bytes(data)
    return path, data.count(b"\n")


def test_libsvm_with_side_files(tmp_path):
    """A ``.weight`` side file is read: the model is ``train``'s with those weights, not
    the unweighted one, and a side file of the wrong length is refused."""
    path, n = _bundled_agaricus(tmp_path)
    args = ["train", "--data", "agaricus.libsvm", "--rounds", "5", "--param",
            "objective=binary:logistic", "--param", "min_child_weight=3"]
    run(*args, "--model", "plain.json", cwd=tmp_path)
    (tmp_path / "agaricus.libsvm.weight").write_text("\n".join(["2"] * n) + "\n")
    r = run(*args, "--model", "a.json", cwd=tmp_path)
    assert "train-logloss" in r.stdout
    weighted = bw.Booster(model_file=tmp_path / "a.json")
    assert weighted.n_features == 126
    from boostwood.datasets import load_agaricus
    Xtr, ytr = load_agaricus()[:2]
    twice = bw.train({"objective": "binary:logistic", "min_child_weight": 3, "verbosity": 0},
                     bw.Dataset(Xtr, ytr, weight=np.full(len(ytr), 2.0)), 5)
    plain = bw.Booster(model_file=tmp_path / "plain.json")
    assert np.array_equal(weighted.predict(Xtr, validate_features=False),
                          twice.predict(Xtr, validate_features=False))
    assert not np.array_equal(weighted.predict(Xtr, validate_features=False),
                              plain.predict(Xtr, validate_features=False))
    (tmp_path / "agaricus.libsvm.weight").write_text("2\n2\n")
    r = run(*args, "--model", "b.json", cwd=tmp_path, check=False)
    assert r.returncode == 2 and "weight" in r.stderr


#: ``python -m boostwood`` that stops after round STOP's checkpoint is written, as if
#: the machine hung there: a test kills it at a known round, however fast it trains.
_PAUSED_CLI = """
import pathlib, sys, time
from boostwood.cli import commands, main
STOP = int(sys.argv.pop(1))
saved = commands.Checkpoint.after_iteration
def after_iteration(self, model, epoch, evals_log):
    stop = saved(self, model, epoch, evals_log)
    if epoch + 1 == STOP:
        pathlib.Path("paused").touch()
        time.sleep(3600)
    return stop
commands.Checkpoint.after_iteration = after_iteration
sys.exit(main(sys.argv[1:]))
"""


def test_killed_training_resumes_to_the_same_model(workdir):
    """Kill ``train --checkpoint-every`` mid-run (at round 23, the checkpoint of round 20
    on disk); ``--resume`` ends with the model of an uninterrupted run."""
    args = ["train", "cfg.toml", "--quiet", "--rounds", "60", "--checkpoint-every", "5",
            "--param", "subsample=0.8", "--param", "colsample_bynode=0.7"]
    run(*args, "--model", "full.json", cwd=workdir)
    proc = subprocess.Popen([sys.executable, "-c", _PAUSED_CLI, "23", *args, "--model",
                             "cut.json"], cwd=workdir, stdout=subprocess.DEVNULL,
                            stderr=subprocess.PIPE, text=True)
    deadline = time.monotonic() + 300
    try:
        while not (workdir / "paused").exists():
            assert proc.poll() is None, f"the run ended before round 23: {proc.stderr.read()}"
            assert time.monotonic() < deadline, "round 23 never came"
            time.sleep(0.05)
    finally:
        proc.send_signal(signal.SIGKILL)
        proc.wait()
    ckpt = workdir / "cut.json.checkpoint"
    assert not (workdir / "cut.json").exists()
    assert bw.Booster(model_file=ckpt).num_boosted_rounds() == 20
    run(*args, "--resume", "--model", "cut.json", cwd=workdir)
    a = bw.Booster(model_file=workdir / "full.json")
    b = bw.Booster(model_file=workdir / "cut.json")
    assert b.num_boosted_rounds() == 60
    data = np.genfromtxt(workdir / "test.csv", delimiter=",", skip_header=1)[:, 1:5]
    assert np.array_equal(a.predict(data, output_margin=True, validate_features=False),
                          b.predict(data, output_margin=True, validate_features=False))
    assert not ckpt.exists()


def test_help_documents_every_subcommand(tmp_path):
    top = run("--help", cwd=tmp_path).stdout
    for cmd in ("train", "predict", "eval", "cv", "importance", "dump", "report"):
        assert cmd in top
        assert "usage: boostwood " + cmd in run(cmd, "--help", cwd=tmp_path).stdout


def test_trains_on_a_shared_csv_with_strings_ignored_and_blanks_missing(tmp_path):
    path = shared_file("california_housing", "housing.csv")
    r = run("train", "--data", path, "--label", "median_house_value", "--ignore",
            "ocean_proximity", "--rounds", "10", "--param", "max_depth=4", "--model", "h.json",
            cwd=tmp_path)
    assert "train-rmse" in r.stdout
    model = bw.Booster(model_file=tmp_path / "h.json")
    assert "total_bedrooms" in model.feature_names and "ocean_proximity" not in model.feature_names


def test_init_side_file_sets_the_starting_margin(workdir):
    n = sum(1 for _ in open(workdir / "train.csv")) - 1
    (workdir / "train.csv.init").write_text("\n".join(["0.5"] * n) + "\n")
    run("train", "cfg.toml", "--quiet", "--rounds", "1", cwd=workdir)
    (workdir / "train.csv.init").unlink()
    from boostwood.cli.data import DataSpec, read_table
    (workdir / "x.csv").write_text("a,target\n1,0\n2,1\n")
    (workdir / "x.csv.init").write_text("0.1\n0.2\n")
    (workdir / "x.csv.weight").write_text("1\n3\n")
    t = read_table(DataSpec(str(workdir / "x.csv"), label="target"))
    assert t.init.tolist() == [0.1, 0.2] and t.weight.tolist() == [1, 3]
    (workdir / "x.csv.weight").write_text("1\n")
    with pytest.raises(ValueError, match="1 lines, the data has 2 rows"):
        read_table(DataSpec(str(workdir / "x.csv"), label="target"))


def test_csv_is_streamed_in_chunks(workdir):
    """predict reads CSV a chunk at a time: the reader is a generator that stops after
    the rows it was asked for (so a file larger than memory never has to be held)."""
    from boostwood.cli.data import DataSpec, iter_chunks
    chunks = iter_chunks(DataSpec(str(workdir / "test.csv"), label="target",
                                  ignore=["id"]), 64)
    first = next(chunks)
    assert first.X.shape == (64, 4)
    sizes = [first.X.shape[0]] + [c.X.shape[0] for c in chunks]
    assert sum(sizes) == 400 and max(sizes) == 64


def test_end_to_end_on_shared_data_with_parquet(tmp_path):
    """train, predict, eval and report on ../shared/data's housing data, read from CSV and
    from Parquet, predictions written to Parquet."""
    pa = pytest.importorskip("pyarrow")
    pq = pytest.importorskip("pyarrow.parquet")
    src = shared_file("california_housing", "housing.csv")
    cfg = tmp_path / "h.toml"
    cfg.write_text(f'[data]\ntrain = "{src}"\nlabel = "median_house_value"\n'
                   'ignore = ["ocean_proximity"]\n[params]\nmax_depth = 4\n'
                   '[train]\nnum_boost_round = 8\nmodel = "h.json"\n')
    run("train", cfg, "--quiet", cwd=tmp_path)
    model = bw.Booster(model_file=tmp_path / "h.json")
    data = np.genfromtxt(src, delimiter=",", skip_header=1)
    X, y = data[:, :8], data[:, 8]
    table = pa.table({name: X[:, j] for j, name in enumerate(model.feature_names)}
                     | {"median_house_value": y})
    pq.write_table(table, tmp_path / "h.parquet")
    run("predict", "--model", "h.json", "--data", "h.parquet", "--param",
        "data.label=median_house_value", "--has-label", "--output", "p.parquet",
        "--chunk-size", "5000", cwd=tmp_path)
    pred = pq.read_table(tmp_path / "p.parquet").column("prediction").to_numpy()
    assert np.allclose(pred, model.predict(X, validate_features=False), atol=1e-9)
    e = run("eval", "--model", "h.json", "--data", src, "--config", cfg, cwd=tmp_path)
    rmse = float(e.stdout.split("rmse: ")[1])
    direct = model.predict(X, validate_features=False)  # X: the model's column order
    assert rmse == pytest.approx(np.sqrt(np.mean((direct - y) ** 2)), rel=1e-5)
    run("report", "--model", "h.json", "--data", "h.parquet", "--param",
        "data.label=median_house_value", "--output", "h.html", cwd=tmp_path)
    assert "total_bedrooms" in (tmp_path / "h.html").read_text()


def test_compile_leaves_every_common_kernel_in_the_cache(tmp_path):
    """``boostwood compile`` after the same workloads ran here: the new process loads
    every kernel of them from numba's cache and compiles none (a kernel that could not
    be cached would be compiled again there, and on every user's first fit)."""
    from boostwood.warmup import _WORKLOADS, cache_folder, compile_kernels
    compile_kernels(jobs=1)  # compiles here what this session has not yet
    out = run("compile", "--jobs", "2", cwd=tmp_path).stdout.splitlines()
    lines = [line for line in out if line.endswith("compilations")]
    assert len(lines) == len(_WORKLOADS) + 2  # the two halves, then each workload's fits
    assert all(line.endswith(", 0 compilations") for line in lines), out
    assert f"cache {cache_folder()}" in out[-1]
    assert run("compile", "--quiet", cwd=tmp_path).stdout == ""


def _compiled_signatures():
    """(kernel, signature) of every compiled or cache-loaded specialisation of every
    numba dispatcher in boostwood's kernel modules."""
    import importlib
    import pkgutil

    from numba.core.registry import CPUDispatcher
    import boostwood._kernels as kernels
    seen = set()
    for info in pkgutil.iter_modules(kernels.__path__):
        module = importlib.import_module(f"boostwood._kernels.{info.name}")
        for name, obj in vars(module).items():
            if isinstance(obj, CPUDispatcher):
                seen |= {(f"{info.name}.{name}", sig) for sig in obj.signatures}
    return seen


_HALVES_THEN_FITS = r"""
import sys
sys.path.insert(0, {tests!r})
from test_cli import _compiled_signatures
from boostwood import warmup
warmup._loop_part()
warmup._around_trees(warmup._workload_names(False))
halves = _compiled_signatures()
warmup._run(warmup._workload_names(False), warmup._count_compiles(), {{}})
print(sorted(str(k) for k in _compiled_signatures() - halves))
"""


def test_compile_halves_leave_the_fits_nothing_to_compile():
    """With two jobs, one process compiles the training loop and a round's kernels and
    the other what lies around them, each without the other's kernels; the fits after
    them must find every specialisation they use among the two halves' (one the halves
    missed would be compiled by the fits, after the halves: the install's wall time).
    Checked on the session's warm cache, in a fresh process, by the signatures each step
    loads."""
    code = _HALVES_THEN_FITS.format(tests=str(Path(__file__).parent))
    out = subprocess.run([sys.executable, "-c", code], capture_output=True, text=True,
                         timeout=600, check=True).stdout
    assert out.strip().splitlines()[-1] == "[]", out


def test_compile_helper_compiles_the_loop_in_another_process():
    """The helper process grows the trees (and runs a round's kernels) and reports its
    part (here, after the same kernels ran in this session, every one from the cache)."""
    from boostwood.warmup import LOOP_PART, _loop_part, _part_report, _start_loop_part
    _loop_part()
    report = _part_report(*_start_loop_part())
    assert set(report) == {LOOP_PART}
    assert all(seconds > 0 and n == 0 for seconds, n in report.values()), report


def test_compile_does_a_failed_helper_s_part_itself(monkeypatch, capsys):
    """A helper that fails costs time, not kernels: the fits compile what it left, say
    so on stderr, and the report still has every workload."""
    import boostwood.warmup as warmup

    def failing():
        out, err = tempfile.TemporaryFile("w+"), tempfile.TemporaryFile("w+")
        proc = subprocess.Popen([sys.executable, "-c", "import sys; sys.stderr.write('boom'); "
                                 "sys.exit(3)"], stdout=out, stderr=err, text=True)
        return proc, out, err

    monkeypatch.setattr(warmup, "_start_loop_part", failing)
    report = warmup.compile_kernels(jobs=2)
    assert set(report) == {w[0] for w in warmup._WORKLOADS} | {warmup.AROUND_PART}
    err = capsys.readouterr().err
    assert "a compiling process failed (exit status 3)" in err and "boom" in err


def test_compile_helper_that_imports_another_boostwood_does_nothing(tmp_path):
    """A helper whose ``import boostwood`` finds another copy than its parent's (a
    ``sys.path`` the environment does not carry) compiles nothing for it: exit status 2."""
    r = subprocess.run([sys.executable, "-c", "from boostwood.warmup import _loop_main; "
                        f"_loop_main({str(tmp_path / '__init__.py')!r})"],
                       capture_output=True, text=True, timeout=120)
    assert r.returncode == 2 and r.stdout == "" and "not " + str(tmp_path) in r.stderr


def test_compile_report_and_all(tmp_path):
    """``--report`` prints the per-kernel table (on a warm cache: nothing compiled, and
    it says how to time a cold compile); ``--all`` adds the first-use workloads."""
    out = run("compile", "--report", cwd=tmp_path).stdout
    assert "NUMBA_CACHE_DIR" in out or "| kernel |" in out
    from boostwood.warmup import _ALL_WORKLOADS, report_table
    lines = report_table([("loss.rows", "float64[:] A readonly", 2.0, 1.5, "counts"),
                          ("split.scan", "int64[:, :]", 1.0, 1.0, "binary")])
    assert lines[0].startswith("2 compilations, 2.5 s")
    assert lines.index("| counts | 1 | 1.5 |") < lines.index("| binary | 1 | 1.0 |")
    assert "| loss.rows | float64[:] A readonly | 1.50 | 2.00 | counts |" in lines
    out = run("compile", "--all", "--jobs", "1", cwd=tmp_path).stdout
    assert all(f"{w[0]}: " in out for w in _ALL_WORKLOADS)


@pytest.mark.parametrize("jobs", [0, -1, 1.5, True, "2"])
def test_compile_refuses_a_bad_number_of_jobs(jobs):
    from boostwood.warmup import compile_kernels
    with pytest.raises(ValueError, match="jobs must be a positive integer"):
        compile_kernels(jobs=jobs)


def test_compile_without_the_jit_is_an_error(tmp_path, monkeypatch):
    monkeypatch.setenv("NUMBA_DISABLE_JIT", "1")
    r = run("compile", cwd=tmp_path, check=False)
    assert r.returncode == 2 and "NUMBA_DISABLE_JIT" in r.stderr and r.stdout == ""
