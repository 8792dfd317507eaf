"""Compile the kernels ahead of time: ``boostwood compile`` or :func:`compile_kernels`.

boostwood's kernels are compiled by numba the first time they run and kept in numba's
cache (``__pycache__`` beside the package's sources, or ``NUMBA_CACHE_DIR``), so only
the first fit on a machine pays for compiling them: about three minutes of one core's
time (177-204 s on a 2-core AMD EPYC VM, numba 0.68), about two minutes of waiting when two
processes share the work (:data:`PARTS`).
``pip install`` runs this while it builds the package (``setup.py``), so a package
built on the machine that runs it carries the cache. Run it again where the install's
cache cannot serve (another processor or numba version than the build's),
for example as a step of a Docker image build (``RUN boostwood compile``) or of a CI
job that keeps its cache: later processes load every kernel it compiled from the
cache.

Two things decide whether they can (numba's rules):

* the cache folder must be writable by the user who runs the fits, or numba skips it
  (and compiles into ``~/.cache/numba``): set ``NUMBA_CACHE_DIR`` to a folder that user
  owns when the image is built as another user;
* cached code is specific to the processor it was compiled for: on an image that runs
  on other machines, set ``NUMBA_CPU_NAME=generic`` both when compiling and when
  running (portable code, somewhat slower kernels).

It fits and predicts tiny models along the paths most fits take: binary, weighted,
multiclass, (weighted) regression and weighted count (Poisson) objectives, leaf-wise and
depth-wise growth, quantized gradients, float64 and float32 data with missing values, row
subsampling with an evaluation set (log loss and AUC) and early stopping, and predictions
of 1 to 16,384 rows.
Other paths (exact and approximate splits, forests, SHAP) still compile on their first use.
"""
import json
import os
import subprocess
import sys
import tempfile
import time

import numpy as np

from ._kernels.loss import LINK_PARALLEL_ROWS
from .boosting import train
from .data import Dataset

#: The tiny fits: (name, parameters, how: "weighted"; "sampled bins", as data sets of
#: over ``bin_construct_sample_cnt`` rows are binned; "float32, evaluation set", float32
#: data with an evaluation set binned by reference and early stopping; or "").
_WORKLOADS = (
    ("binary, leaf-wise", dict(objective="binary:logistic", grow_policy="lossguide",
                               max_leaves=15), ""),
    ("binary, depth-wise, sampled bins", dict(objective="binary:logistic",
                                              grow_policy="depthwise", max_depth=4),
     "sampled bins"),
    ("binary, weighted", dict(objective="binary:logistic"), "weighted"),
    ("binary, quantized gradients", dict(objective="binary:logistic",
                                         use_quantized_grad=True), ""),
    ("multiclass", dict(objective="multi:softprob", num_class=3), ""),
    ("regression", dict(objective="reg:squarederror"), ""),
    # the scikit-learn estimators always pass sample weights (ones by default)
    ("regression, weighted", dict(objective="reg:squarederror"), "weighted"),
    ("float32 data, subsample, evaluation set", dict(objective="binary:logistic",
                                                    subsample=0.8,
                                                    eval_metric=["logloss", "auc"]),
     "float32, evaluation set"),
    # counts with exposure weights: the pointwise gradient kernel of Poisson, Tweedie,
    # gamma, absolute, Huber and quantile error (7 s to compile on its own)
    ("counts, weighted", dict(objective="count:poisson"), "weighted"),
)


#: The workloads cut in two for two processes (``jobs=2``), by what their largest kernels
#: are compiled for: the second part holds the int16 (quantized) gradients and the float32
#: input, whose histogram and prediction kernels are specializations of their own (on a
#: 2-core VM: 124.5 s of waiting against 179.3 s in one process,
#: ``benchmarks/results/compile_2_jobs_zen3.md``). The parts share
#: smaller kernels (binning, gradients, the split scan), which both compile at once: the
#: part in the first process decides the wall time.
PARTS = (("binary, leaf-wise", "binary, depth-wise, sampled bins", "binary, weighted",
          "multiclass", "regression", "regression, weighted"),
         ("binary, quantized gradients", "float32 data, subsample, evaluation set",
          "counts, weighted"))


def _data(seed=0, n=3000, p=6):
    rng = np.random.default_rng(seed)
    X = rng.normal(size=(n, p))
    X[rng.random(X.shape) < 0.05] = np.nan
    score = np.nan_to_num(X[:, 0]) + 0.5 * np.nan_to_num(X[:, 1]) + rng.normal(size=n)
    return X, score


def _label(params, score):
    objective = params["objective"]
    if objective.startswith("multi:"):
        return np.digitize(score, [-0.5, 0.5]).astype(np.float64)
    if objective.startswith("count:"):
        return np.round(np.exp(0.5 * score))
    return (score > 0).astype(np.float64) if objective.startswith("binary:") else score


def _one(params, how, X, score):
    y = _label(params, score)
    w = np.linspace(0.5, 1.5, y.shape[0]) if how == "weighted" else None
    binning = {"bin_construct_sample_cnt": 1000} if how == "sampled bins" else {}
    if how == "float32, evaluation set":
        X = X.astype(np.float32)
        dtrain = Dataset(X[:2000], y[:2000])
        valid = Dataset(X[2000:], y[2000:], reference=dtrain)
        booster = train(params, dtrain, num_boost_round=4, evals=[(valid, "valid")],
                        early_stopping_rounds=2, verbose_eval=False)
    else:
        booster = train(params, Dataset(X, y, weight=w, **binning), num_boost_round=3)
    booster.predict(X)
    booster.predict(X.astype(np.float32))
    booster.predict(X[:1])
    # from LINK_PARALLEL_ROWS rows the logistic link runs across threads (its own kernel)
    booster.predict(np.resize(X, (LINK_PARALLEL_ROWS, X.shape[1])))


def _count_compiles():
    """A numba listener counting compilations (cache loads are not compilations)."""
    from numba.core import event

    class Counter(event.Listener):
        n = 0

        def on_start(self, ev):
            Counter.n += 1

        def on_end(self, ev):
            pass

    listener = Counter()
    event.register("numba:compile", listener)
    return listener


def _cores():
    """Cores this process may run on."""
    try:
        return len(os.sched_getaffinity(0))
    except (AttributeError, OSError):
        return os.cpu_count() or 1


def _run(names, listener, report, verbose=False):
    """Run the workloads ``names``; ``report[name] = (seconds, numba compilations)``."""
    X, score = _data()
    by_name = {w[0]: w for w in _WORKLOADS}
    for name in names:
        _, params, how = by_name[name]
        before, t0 = listener.n, time.perf_counter()
        _one(params, how, X, score)
        report[name] = (time.perf_counter() - t0, listener.n - before)
        if verbose:
            _say(name, report[name])


def _say(name, entry):
    print(f"{name}: {entry[0]:.1f} s, {entry[1]} compilations", flush=True)


def _part_main(k, package):
    """A helper process's work: run ``PARTS[k]`` and print its report as one JSON line;
    exit status 2, doing nothing, when this process imported another boostwood than
    ``package`` (the parent's ``__init__.py``)."""
    import boostwood
    if os.path.realpath(boostwood.__file__) != os.path.realpath(package):
        print(f"this process imports boostwood from {boostwood.__file__}, not {package}",
              file=sys.stderr)
        sys.exit(2)
    report = {}
    _run(PARTS[k], _count_compiles(), report)
    print(json.dumps(report), flush=True)


def _start_part(k):
    """Start a process running ``PARTS[k]``; its output goes to files (a pipe nobody
    reads while this process compiles could fill and stall it). It inherits this
    process's environment, so it imports boostwood as this process did (the build hook
    sets ``PYTHONPATH`` to the built tree), and checks that it did."""
    import boostwood
    out, err = tempfile.TemporaryFile("w+"), tempfile.TemporaryFile("w+")
    code = f"from boostwood.warmup import _part_main; _part_main({k}, {boostwood.__file__!r})"
    proc = subprocess.Popen([sys.executable, "-c", code], stdout=out, stderr=err, text=True)
    return proc, out, err


def _part_report(proc, out, err):
    """The report a helper printed, or None (with a warning) if it failed."""
    proc.wait()
    out.seek(0)
    err.seek(0)
    lines = out.read().strip().splitlines()
    try:
        if proc.returncode == 0 and lines:
            return {name: tuple(v) for name, v in json.loads(lines[-1]).items()}
    except ValueError:
        pass
    tail = err.read().strip().splitlines()[-5:]
    print(f"boostwood: a compiling process failed (exit status {proc.returncode}); "
          f"its workloads compile here instead. {' / '.join(tail)}", file=sys.stderr)
    return None


def compile_kernels(verbose=False, jobs=None):
    """Compile (or load from numba's cache) the kernels of the common training and
    prediction paths, so that later processes find them in the cache.

    Parameters
    ----------
    verbose : bool, print one line per workload (seconds and numba compilations)
    jobs : int, optional; processes that compile at once: 1, or 2 for the two
        :data:`PARTS`, which any larger number also means (default: 2 where this process
        may run on two cores or more).
        With 2, this process then runs the other part's workloads as well: they load
        what the helper left in the cache and compile what it did not (a helper that
        failed, or a cache index entry lost when both wrote it at once), so the cache
        ends up as complete as after one process.

    Returns
    -------
    dict : workload name -> (seconds, numba compilations); 0 compilations means that
        every kernel of that workload came from the cache (with 2 jobs, the helper's
        figures plus this process's check)

    Raises
    ------
    RuntimeError : numba's JIT is disabled (``NUMBA_DISABLE_JIT``): there is nothing to
        compile, and fits would run as slow Python
    ValueError : ``jobs`` is not a positive integer
    """
    from numba import config
    from numba.core import event

    if config.DISABLE_JIT:
        raise RuntimeError("numba's JIT is disabled (NUMBA_DISABLE_JIT): nothing to compile")
    if jobs is None:
        jobs = min(len(PARTS), _cores())
    if not isinstance(jobs, (int, np.integer)) or isinstance(jobs, bool) or jobs < 1:
        raise ValueError(f"jobs must be a positive integer, got {jobs!r}")
    listener = _count_compiles()
    report, helpers = {}, []
    try:
        if jobs > 1:
            helpers = [(k, _start_part(k)) for k in range(1, len(PARTS))]
        _run(PARTS[0] if helpers else [w[0] for w in _WORKLOADS], listener, report, verbose)
        for k, helper in helpers:
            done, check = _part_report(*helper) or {}, {}
            _run(PARTS[k], listener, check)
            for name in PARTS[k]:
                seconds, n = done.get(name, (0.0, 0))
                report[name] = (seconds + check[name][0], n + check[name][1])
                if verbose:
                    _say(name, report[name])
    finally:
        event.unregister("numba:compile", listener)
        for _, (proc, out, err) in helpers:
            if proc.poll() is None:
                proc.kill()
                proc.wait()
            out.close()
            err.close()
    return report


def cache_folder():
    """The folder numba's cache of boostwood's kernels is in (None if unknown)."""
    from ._kernels.split import leaf_values

    return getattr(getattr(leaf_values, "_cache", None), "_cache_path", None)
