"""Compile the kernels ahead of time: ``boostwood compile`` or :func:`compile_kernels`.

boostwood's kernels are compiled by numba the first time they run and kept in numba's
cache (``__pycache__`` beside the package's sources, or ``NUMBA_CACHE_DIR``), so only
the first fit on a machine pays for compiling them. ``pip install`` runs this while it
builds the package (``setup.py``), so a package built on the machine that runs it
carries the cache: on a 2-core VM the compile takes 35-37 s of waiting in two
processes (:func:`compile_kernels`; ``benchmarks/bench_compile.py``,
``benchmarks/results/compile_before_after_ee4fe47.md``). Run it again where the install's cache
cannot serve (another processor or numba version than the build's), for example as a
step of a Docker image build (``RUN boostwood compile``) or of a CI job that keeps its
cache: later processes load every kernel it compiled from the cache.

Two things decide whether they can (numba's rules):

* the cache folder must be writable by the user who runs the fits, or numba skips it
  (and compiles into ``~/.cache/numba``): set ``NUMBA_CACHE_DIR`` to a folder that user
  owns when the image is built as another user;
* cached code is specific to the processor it was compiled for: on an image that runs
  on other machines, set ``NUMBA_CPU_NAME=generic`` both when compiling and when
  running (portable code, somewhat slower kernels).

It fits and predicts tiny models along the paths most fits take (:data:`_WORKLOADS`):
binary, weighted, multiclass and regression objectives, the scikit-learn estimators'
weights, leaf-wise and depth-wise growth, float64 and float32 data with missing values,
row subsampling, evaluation sets (on the training bins or their own) and early
stopping, and predictions of 1 to 16,384 rows. Paths few fits take compile on their
first use (``boostwood compile --all`` compiles them too, :data:`_FIRST_USE_WORKLOADS`):
quantized gradients (about 13 s), each pointwise loss (Poisson, Tweedie, gamma,
absolute, Huber, quantile error: 2-3 s each), ranking (about 18 s), categorical features
(about 20 s; ``--all`` compiles these four), exact and
approximate splits, forests and single trees, AdaBoost, SHAP values, the CLI's readers.
``boostwood compile --report`` times each kernel's compilation.
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

#: The tiny fits of an install's compile: (name, parameters, how: "weighted", with an
#: evaluation set binned on its own; "sampled bins", as data sets of over
#: ``bin_construct_sample_cnt`` rows are binned; "float32, evaluation set", float32 data
#: with an evaluation set binned by reference; or ""). A fit with an evaluation set stops
#: early. Each fits, then predicts float64 and float32 rows.
_WORKLOADS = (
    ("binary, leaf-wise", dict(objective="binary:logistic", grow_policy="lossguide",
                               max_leaves=15), ""),
    ("binary, depth-wise, sampled bins", dict(objective="binary:logistic",
                                              grow_policy="depthwise", max_depth=4),
     "sampled bins"),
    ("binary, weighted, evaluation set", dict(objective="binary:logistic"), "weighted"),
    ("multiclass", dict(objective="multi:softprob", num_class=3), ""),
    ("regression", dict(objective="reg:squarederror"), ""),
    # the scikit-learn estimators always pass sample weights (ones by default)
    ("regression, weighted, evaluation set", dict(objective="reg:squarederror"),
     "weighted"),
    ("float32 data, subsample, evaluation set", dict(objective="binary:logistic",
                                                    subsample=0.8,
                                                    eval_metric=["logloss", "auc"]),
     "float32, evaluation set"),
)
#: Paths few fits take, compiled on their first use, or by ``compile_kernels(
#: everything=True)`` (``boostwood compile --all``): quantized gradients (int16 rows: a
#: histogram build and expansion loop of their own, about 13 s) and a pointwise loss
#: (Poisson here; each of Poisson, Tweedie, gamma, absolute, Huber and quantile error
#: compiles its own row loop on its first fit, 2-3 s), ranking (LambdaMART's
#: gradients and the ranking metrics, about 18 s), and categorical features (the scans,
#: partitions and the leaf-mask walk, about 15 s).
_FIRST_USE_WORKLOADS = (
    ("binary, quantized gradients", dict(objective="binary:logistic",
                                         use_quantized_grad=True), ""),
    ("counts, weighted", dict(objective="count:poisson"), "weighted"),
    ("ranking", dict(objective="rank:ndcg", eval_metric=["ndcg@10"]), "queries"),
    ("binary, a categorical feature", dict(objective="binary:logistic", max_depth=4),
     "categorical"),
)
_ALL_WORKLOADS = _WORKLOADS + _FIRST_USE_WORKLOADS


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
    if objective.startswith("rank:"):
        return np.digitize(score, [-0.5, 0.5, 1.5]).astype(np.float64)
    return (score > 0).astype(np.float64) if objective.startswith("binary:") else score


def _datasets(params, how, X, score):
    """A workload's training Dataset and its evaluation sets (name -> Dataset)."""
    y = _label(params, score)
    if how == "float32, evaluation set":
        X = X.astype(np.float32)
        dtrain = Dataset(X[:2000], y[:2000])
        return dtrain, {"valid": Dataset(X[2000:], y[2000:], reference=dtrain)}
    if how == "weighted":  # with an evaluation set binned on its own: trees walk its values
        dtrain = Dataset(X, y, weight=np.linspace(0.5, 1.5, y.shape[0]))
        return dtrain, {"valid": Dataset(X[2000:], y[2000:])}
    if how == "queries":  # queries of 30 rows, an evaluation set of its own queries
        dtrain = Dataset(X[:2400], y[:2400], group=[30] * 80)
        return dtrain, {"valid": Dataset(X[2400:], y[2400:], group=[30] * 20,
                                         reference=dtrain)}
    if how == "categorical":  # (a column of category codes, as a frame's becomes)
        codes = np.where(np.isnan(X[:, 0]), np.nan, np.floor(np.abs(X[:, 0]) * 8))
        X = np.column_stack([codes, X[:, 1:]])
        return Dataset(X, y, categorical_feature=[0]), {}
    binning = {"bin_construct_sample_cnt": 1000} if how == "sampled bins" else {}
    return Dataset(X, y, **binning), {}


def _one(params, how, X, score):
    dtrain, evals = _datasets(params, how, X, score)
    if evals:
        booster = train(params, dtrain, num_boost_round=4,
                        evals=[(d, name) for name, d in evals.items()],
                        early_stopping_rounds=2, verbose_eval=False)
    else:
        booster = train(params, dtrain, num_boost_round=3)
    _predictions(booster, X)


def _column_major(X, score):
    """Bin a column-major matrix, a pandas frame's values (the fits bin numpy's)."""
    Dataset(np.asfortranarray(X), score).has_missing()


def _predictions(booster, X):
    """The predictions every workload makes: float64 and float32 rows, column-major
    rows (a pandas frame's values), one row, and enough rows for the link to run across
    threads."""
    booster.predict(X)
    booster.predict(X.astype(np.float32))
    booster.predict(np.asfortranarray(X))  # (a pandas frame's values: column-major)
    booster.predict(X[:1])
    # from LINK_PARALLEL_ROWS rows the logistic link runs across threads (its own kernel)
    booster.predict(np.resize(X, (LINK_PARALLEL_ROWS, X.shape[1])))


# -- the two halves of a compile on two cores ---------------------------------------------
# Every fit needs the kernels of the training loop (histograms, partition, split scan,
# expansion: about half of the compile) and the ones around it (binning, gradients,
# metrics, prediction: the other half). Two processes that ran fits side by side would
# both compile the loop at once; instead one grows trees on synthetic binned data (the
# tree layer alone) while the other compiles everything around the loop without growing
# a tree. Then the fits themselves load what the two left in the cache.

def _grow_trees():
    """The training loop alone: trees grown leaf-wise and depth-wise on synthetic binned
    data (uint8 bins, fixed-point int32 gradients), on every row and on a bag."""
    from .tree import GrowerParams
    from .tree.grower import TreeGrower

    X_binned, n_bins, gq, bag = _synthetic_round()
    features = np.arange(X_binned.shape[1], dtype=np.int64)
    for policy in (dict(grow_policy="lossguide", max_leaves=15, max_depth=0),
                   dict(grow_policy="depthwise", max_depth=4)):
        grower = TreeGrower(X_binned, n_bins, int(n_bins[0]) + 1, GrowerParams(**policy))
        for rows in (None, bag):
            grower.grow(gq, rows, features, np.random.default_rng(0))


def _loop_part():
    """The helper process's half: the training loop, and a round's walk of the bins by
    the rows a tree was not grown on (the rest of a round's kernels are the other half's:
    since the prediction walk's lock-step part compiles on its own, that half was the
    shorter, 29 against 38 s)."""
    _grow_trees()
    _out_of_bag_walks()


def _synthetic_round(n=3000, p=6, bins=255):
    """Binned rows as a Dataset bins them (uint8, bin ``bins`` missing), their bins per
    feature, fixed-point gradients as a round quantizes them (int32 (g, h) rows) and a
    bag of rows (ascending int32)."""
    from .tree.stats import GQ_DTYPE

    rng = np.random.default_rng(0)
    X_binned = rng.integers(0, bins + 1, size=(n, p)).astype(np.uint8)
    gq = np.empty((n, 2), dtype=GQ_DTYPE)
    gq[:, 0], gq[:, 1] = rng.integers(-1000, 1000, size=n), rng.integers(1, 1000, size=n)
    bag = np.flatnonzero(rng.random(n) < 0.8).astype(np.int32)
    return X_binned, np.full(p, bins, dtype=np.int32), gq, bag


def _bag(n):
    """The rows outside a round's bag (the bag's draw)."""
    from ._kernels.random import STREAM_BAGGING, split_rows

    inside, outside = np.empty(n, dtype=np.int32), np.empty(n, dtype=np.int64)
    k = split_rows(0, STREAM_BAGGING, 1, np.zeros(0, np.int64), True, n, 0.8, inside, outside)
    return outside[:n - k]


def _out_of_bag_walks():
    """The walk of the bins, on a made-up tree, by every row and by the rows a tree was
    not grown on, into the margins."""
    from .tree.methods import _add_binned

    X_binned, n_bins, _, _ = _synthetic_round()
    tree = _tree(0, 1, 0.1)
    tree.threshold_bin = np.array([100, 50, 0, 0, 0], dtype=tree.feature.dtype)
    raw = np.zeros((X_binned.shape[0], 1))
    for rows in (None, np.arange(0, X_binned.shape[0], 5, dtype=np.int64)):  # (as _bag's)
        _add_binned(X_binned, n_bins, tree, raw, 0, rows)


def _round_kernels():
    """The kernels a boosting round calls around its trees (but for the walk of
    :func:`_out_of_bag_walks`), on made-up leaf segments: the bag's draw, the
    fixed-point gradients, leaf values added to the margins (or a class's column) from
    the partition."""
    from ._comm import LocalReducer
    from ._kernels.predict import add_class_columns, add_leaf_values, set_leaf_values
    from .tree.stats import FixedPointStats

    X_binned, n_bins, gq, _ = _synthetic_round()
    n = X_binned.shape[0]
    _bag(n)
    FixedPointStats(n, LocalReducer()).quantize(gq.astype(np.float32))
    buf = np.zeros((2, n), dtype=gq.dtype)
    buf[0] = np.arange(n)
    segments = (np.zeros(2, np.int64), np.array([0, n // 2]), np.array([n // 2, n - n // 2]),
                np.array([-0.1, 0.1]))
    raw, column = np.zeros((n, 1)), np.zeros((1, n))
    add_leaf_values(buf, *segments, raw, 0)
    set_leaf_values(buf, *segments, column[0])
    add_class_columns(np.zeros((n, 3)), np.zeros((3, n)))  # a round of class trees


def _tree(f, g, v):
    """A small hand-made tree: x_f <= 0.1 ? (x_g <= -0.2 ? v : -v) : v / 2."""
    from .tree import Tree

    return Tree(feature=[f, g, -1, -1, -1], threshold=[0.1, -0.2, 0, 0, 0],
                left=[1, 3, -1, -1, -1], right=[2, 4, -1, -1, -1],
                default_left=[1, 0, 0, 0, 0], value=[0, 0, v / 2, v, -v],
                gain=[1, 1, 0, 0, 0], cover=[4, 2, 2, 1, 1], count=[4, 2, 2, 1, 1])


def _forest(objective, num_class, n_features):
    """A Booster of two rounds of small hand-made trees: what prediction compiles for,
    without growing a tree."""
    from .boosting import Booster
    from .data.dataset import default_feature_names

    booster = Booster(dict(objective=objective, num_class=num_class))
    K = booster.n_outputs
    booster._start(np.zeros(K), default_feature_names(n_features))
    for r in range(2):
        booster._append_round([_tree((r + k) % n_features, (r + k + 1) % n_features,
                                     0.1 * (k + 1)) for k in range(K)])
    return booster


def _around_trees(names):
    """What the workloads ``names`` compile outside the training loop (:func:`_loop_part`
    compiles it), without growing a tree: a round's kernels around its trees, their
    predictions (on hand-made forests), their data binned, their objectives' initial
    margins and gradients, and their evaluation metrics."""
    from ._comm import LocalReducer
    from .boosting.metrics import get_metric
    from .boosting.params import resolve_params
    from .objectives import get_objective
    from .tree.methods import _raw_adder

    _round_kernels()
    X, score = _data()
    _column_major(X, score)
    by_name = {w[0]: w for w in _ALL_WORKLOADS}
    forests = {}
    for name in names:
        _, params, how = by_name[name]
        p = resolve_params(params)
        key = (p["objective"], p["num_class"])
        if key not in forests:
            forests[key] = _forest(*key, X.shape[1])
            _predictions(forests[key], X)
        dtrain, evals = _datasets(params, how, X, score)
        dtrain.has_missing()
        obj = get_objective(p["objective"], p["num_class"], p)
        info = dtrain.row_info(obj.check_labels(dtrain.label))
        raw = np.empty((dtrain.num_row(), obj.n_outputs))
        raw[:] = obj.init_score(info, LocalReducer())
        obj.gradient(info, raw, np.empty((obj.n_outputs, dtrain.num_row(), 2), np.float32))
        metrics = [get_metric(m, p) for m in p["eval_metric"] or [obj.default_metric]]
        for d in evals.values():
            raw = np.zeros((d.num_row(), obj.n_outputs))
            if d.reference is None:  # the margins of a set off the training bins
                _raw_adder(d.features)(_tree(0, 1, 0.1), raw, 0)
            pred = obj.eval_transform(raw)
            for m in metrics:
                m.evaluate(d.row_info(obj.check_labels(d.label)), pred, LocalReducer())


def _count_compiles(timed=False):
    """A numba listener counting compilations (cache loads are not compilations); with
    ``timed``, its ``rows`` also get one entry per compilation (:func:`_kernel_row`)."""
    from numba.core import event

    class Counter(event.Listener):
        n = 0
        workload = None

        def __init__(self):
            self.rows, self._open = [], []

        def on_start(self, ev):
            Counter.n += 1
            if timed:
                self._open.append([time.perf_counter(), 0.0])

        def on_end(self, ev):
            if not timed:
                return
            t0, nested = self._open.pop()
            seconds = time.perf_counter() - t0
            if self._open:  # a callee compiled inside its caller's compilation
                self._open[-1][1] += seconds
            self.rows.append(_kernel_row(ev.data, seconds, seconds - nested, self.workload))

    listener = Counter()
    event.register("numba:compile", listener)
    return listener


def _kernel_row(data, seconds, own, workload):
    """(kernel, argument types in short, seconds with its callees' compilations, seconds
    of its own, workload) of one numba compilation."""
    func = data["dispatcher"].py_func
    kernel = f"{func.__module__.rsplit('.', 1)[-1]}.{func.__name__}"
    args = getattr(data.get("args"), "args", data.get("args")) or ()
    return kernel, ", ".join(_short_type(t) for t in args), seconds, own, workload


def _short_type(t):
    """``float32[:, :]`` for a C-contiguous writable numba array type (other layouts and
    read-only arrays add theirs: ``float64[:] A readonly``), the type's name otherwise."""
    dtype, ndim = getattr(t, "dtype", None), getattr(t, "ndim", None)
    if dtype is not None and ndim is not None:
        layout = "" if getattr(t, "layout", "C") == "C" else f" {t.layout}"
        readonly = "" if getattr(t, "mutable", True) else " readonly"
        return f"{dtype}[{', '.join(':' * ndim)}]{layout}{readonly}"
    return str(t)


def report_table(rows, top=None):
    """Markdown lines of :func:`compile_kernels`'s per-kernel report, the costliest
    compilation first: each compilation's own seconds (its callees' compilations
    subtracted), with them, and the first workload that compiled it."""
    rows = sorted(rows, key=lambda r: -r[3])
    total = sum(r[3] for r in rows)
    lines = [f"{len(rows)} compilations, {total:.1f} s in all (own seconds add up to it)",
             "", "| workload | compilations | s |", "|---|---|---|"]
    for workload in dict.fromkeys(r[4] for r in rows):
        mine = [r[3] for r in rows if r[4] == workload]
        lines.append(f"| {workload} | {len(mine)} | {sum(mine):.1f} |")
    lines += ["", "| kernel | argument types | own s | with callees s | workload |",
              "|---|---|---|---|---|"]
    for kernel, sig, seconds, own, workload in rows[:top]:
        sig = sig if len(sig) <= 70 else sig[:67] + "..."
        lines.append(f"| {kernel} | {sig} | {own:.2f} | {seconds:.2f} | {workload} |")
    return lines


def _cores():
    """Cores this process may run on."""
    try:
        return len(os.sched_getaffinity(0))
    except (AttributeError, OSError):
        return os.cpu_count() or 1


def _run(names, listener, report, verbose=False):
    """Run the workloads ``names``; ``report[name] = (seconds, numba compilations)``."""
    X, score = _data()
    by_name = {w[0]: w for w in _ALL_WORKLOADS}
    for name in names:
        _, params, how = by_name[name]
        _timed(name, lambda: _one(params, how, X, score), listener, report, verbose)


def _timed(name, work, listener, report, verbose=False):
    """Run ``work()``; ``report[name] = (seconds, numba compilations)``."""
    listener.workload = name
    before, t0 = listener.n, time.perf_counter()
    work()
    report[name] = (time.perf_counter() - t0, listener.n - before)
    if verbose:
        _say(name, report[name])


def _say(name, entry):
    print(f"{name}: {entry[0]:.1f} s, {entry[1]} compilations", flush=True)


#: The helper process's half of a compile on two cores, as named in the report.
LOOP_PART = "the training loop (a second process)"
#: This process's half, before the fits.
AROUND_PART = "around the training loop"


def _loop_main(package):
    """The helper process's work: :func:`_loop_part`, then its report as one JSON line;
    exit status 2, doing nothing, when this process imported another boostwood than
    ``package`` (the parent's ``__init__.py``)."""
    import boostwood
    if os.path.realpath(boostwood.__file__) != os.path.realpath(package):
        print(f"this process imports boostwood from {boostwood.__file__}, not {package}",
              file=sys.stderr)
        sys.exit(2)
    report = {}
    _timed(LOOP_PART, _loop_part, _count_compiles(), report)
    print(json.dumps(report), flush=True)


def _start_loop_part():
    """Start a process running :func:`_loop_main`; its output goes to files (a pipe
    nobody reads while this process compiles could fill and stall it). It inherits this
    process's environment, so it imports boostwood as this process did (the build hook
    sets ``PYTHONPATH`` to the built tree), and checks that it did."""
    import boostwood
    out, err = tempfile.TemporaryFile("w+"), tempfile.TemporaryFile("w+")
    code = f"from boostwood.warmup import _loop_main; _loop_main({boostwood.__file__!r})"
    proc = subprocess.Popen([sys.executable, "-c", code], stdout=out, stderr=err, text=True)
    return proc, out, err


def _part_report(proc, out, err):
    """The report the helper printed, or {} (with a warning) if it failed."""
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
          f"the fits compile its kernels here instead. {' / '.join(tail)}", file=sys.stderr)
    return {}


def _workload_names(everything):
    return [w[0] for w in (_ALL_WORKLOADS if everything else _WORKLOADS)]


def compile_kernels(verbose=False, jobs=None, everything=False):
    """Compile (or load from numba's cache) the kernels of the common training and
    prediction paths (:data:`_WORKLOADS`), so that later processes find them in the
    cache.

    Parameters
    ----------
    verbose : bool, print one line per part and workload (seconds and numba compilations)
    jobs : int, optional; processes that compile at once: 1, or 2, which any larger
        number also means (default: 2 where this process may run on two cores or more).
        With 2, a second process compiles the training loop (:func:`_loop_part`)
        while this one compiles what lies around it
        (:func:`_around_trees`); the fits then run
        here, loading what the two left in the cache and compiling anything they did not
        (a helper that failed, or a cache entry not saved: see ``_config.LockedCacheFile``),
        so the cache ends up as complete as after one process.
    everything : bool, also the paths few fits take (:data:`_FIRST_USE_WORKLOADS`:
        quantized gradients, a pointwise loss, ranking, categorical features), which
        otherwise compile on first use

    Returns
    -------
    dict : part or workload name -> (seconds, numba compilations); 0 compilations means
        that every kernel of that workload came from the cache

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
        jobs = min(2, _cores())
    if not isinstance(jobs, (int, np.integer)) or isinstance(jobs, bool) or jobs < 1:
        raise ValueError(f"jobs must be a positive integer, got {jobs!r}")
    names = _workload_names(everything)
    listener = _count_compiles()
    report, helper = {}, None
    try:
        if jobs > 1:
            helper = _start_loop_part()
            _timed(AROUND_PART, lambda: _around_trees(names), listener, report, verbose)
            report.update(_part_report(*helper))
            if verbose and LOOP_PART in report:
                _say(LOOP_PART, report[LOOP_PART])
        _run(names, listener, report, verbose)
    finally:
        event.unregister("numba:compile", listener)
        if helper is not None:
            proc, out, err = helper
            if proc.poll() is None:
                proc.kill()
                proc.wait()
            out.close()
            err.close()
    return report


def kernel_report(names=None):
    """Compile the workloads ``names`` (default: an install's) in this process and return one row
    per numba compilation (see :func:`report_table`): which kernels an install spends its
    time on. On a warm cache nothing compiles and the list is empty: give the process an
    empty ``NUMBA_CACHE_DIR`` to measure a cold compile.

    Raises
    ------
    RuntimeError : numba's JIT is disabled (``NUMBA_DISABLE_JIT``)
    ValueError : an unknown workload name
    """
    from numba import config
    from numba.core import event

    if config.DISABLE_JIT:
        raise RuntimeError("numba's JIT is disabled (NUMBA_DISABLE_JIT): nothing to compile")
    known = _workload_names(True)
    names = _workload_names(False) if names is None else list(names)
    unknown = [n for n in names if n not in known]
    if unknown:
        raise ValueError(f"unknown workloads {unknown}; known: {known}")
    listener = _count_compiles(timed=True)
    try:
        _run(names, listener, {})
    finally:
        event.unregister("numba:compile", listener)
    return listener.rows


def cache_folder():
    """The folder numba's cache of boostwood's kernels is in (None if unknown)."""
    from ._kernels.split import leaf_values

    return getattr(getattr(leaf_values, "_cache", None), "_cache_path", None)
