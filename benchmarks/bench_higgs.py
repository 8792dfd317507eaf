"""End-to-end benchmark on synthetic HIGGS-like data: boostwood vs LightGBM vs XGBoost.

Data: 28 dense features (21 "low-level" Gaussian-ish measurements and 7
"high-level" nonlinear combinations of them, as in HIGGS), a binary label from
a noisy nonlinear function with interactions; 80/20 split.

Other cases (``--case``) reuse those features: ``nan`` blanks 20 % of the
values at random, ``regression50`` has 50 features and a continuous target
(squared error, test RMSE), ``multiclass10`` a 10-class target (softmax, test
log-loss), ``onehot`` adds five categorical variables of eight levels, one-hot encoded
(68 features, 40 of them binary: the shape of most real tables, where many columns
take a few values), that move the label's log-odds.

Each library runs in its own subprocess, after a JIT / library warm-up on a
small slice. Reported per library and growth policy: binning (Dataset
construction) time, training time, prediction throughput on float64 and
float32 input (XGBoost through ``inplace_predict``, the fastest path it has),
single-row latency (one row, one call, median of 200), peak memory, the test
metric, and ratios to the faster of LightGBM and XGBoost.

Peak memory is the worker's own high-water mark of construct + train: ``VmHWM``
from ``/proc/self/status`` after resetting it (``/proc/self/clear_refs``) once
the data are loaded and the library is warm. ``ru_maxrss`` cannot be used: a
child started by fork + exec inherits its parent's high-water mark.

Usage::

    python benchmarks/bench_higgs.py                    # 1M rows, 500 rounds, 2 threads
    python benchmarks/bench_higgs.py --rows 200000 --rounds 100   # quicker
    python benchmarks/bench_higgs.py --threads 1,2,4,8,16         # scaling table
    python benchmarks/bench_higgs.py --threads all                # 1, 2, 4, ... up to the cores
    python benchmarks/bench_higgs.py --case nan --rows 1000000 --rounds 200
    python benchmarks/bench_higgs.py --quantized     # boostwood and LightGBM with
                                                     # use_quantized_grad (XGBoost has none)
    python benchmarks/bench_higgs.py --repeat 3      # every run three times, interleaved;
                                                     # the tables show medians

``--repeat`` is for before/after claims on noisy machines: the libraries take turns,
so a slow minute slows all of them, and the ratio of medians is quoted with the range
of the per-round ratios.
"""
import argparse
import json
import os
import statistics
import resource
import subprocess
import sys
import tempfile
import time

import numpy as np


def make_higgs_like(n_rows, seed=0):
    rng = np.random.default_rng(seed)
    low = rng.normal(size=(n_rows, 21)).astype(np.float64)
    low[:, ::3] = np.abs(low[:, ::3]) * 1.5  # momenta: positive, skewed
    high = np.column_stack([
        np.sqrt(low[:, 0] ** 2 + low[:, 3] ** 2),
        low[:, 1] * low[:, 4],
        np.sin(low[:, 2]) * low[:, 6],
        np.log1p(low[:, 9] * low[:, 12]),
        np.maximum(low[:, 5], low[:, 7]) - low[:, 8],
        low[:, 10] ** 2 - low[:, 11],
        np.tanh(low[:, 13] + low[:, 14] * low[:, 15]),
    ])
    X = np.column_stack([low, high])
    logit = (0.8 * high[:, 0] - 1.2 + 0.6 * high[:, 1] + 0.9 * high[:, 2] - 0.5 * high[:, 3]
             + 0.4 * np.sign(low[:, 16]) * low[:, 17] + 0.3 * high[:, 6] * low[:, 18]
             + 0.25 * (low[:, 19] > 0.5) - 0.2 * low[:, 20] ** 2)
    y = (logit + rng.logistic(size=n_rows) * 0.8 > 0).astype(np.float64)
    return X, y


CASES = ("higgs", "nan", "regression50", "multiclass10", "onehot")
TASK = {"higgs": "binary", "nan": "binary", "regression50": "regression",
        "multiclass10": "multiclass", "onehot": "binary"}
N_CLASSES = 10


#: The ``onehot`` case's categorical variables and their levels.
ONEHOT_VARIABLES, ONEHOT_LEVELS = 5, 8


def make_case(case, n_rows, seed=0):
    """Features and target of one benchmark case (see the module docstring)."""
    X, y = make_higgs_like(n_rows, seed)
    if case == "nan":
        rng = np.random.default_rng(seed + 1)
        X[rng.random(X.shape) < 0.2] = np.nan
    elif case == "regression50":
        rng = np.random.default_rng(seed + 2)
        extra = rng.normal(size=(n_rows, 22))
        X = np.column_stack([X, extra])
        y = (0.8 * X[:, 21] + 0.6 * X[:, 22] + 0.9 * X[:, 23] - 0.5 * X[:, 24]
             + 0.3 * np.sin(2 * extra[:, 0]) * extra[:, 1] + 0.2 * extra[:, 2] ** 2
             + 0.5 * rng.normal(size=n_rows))
    elif case == "multiclass10":
        rng = np.random.default_rng(seed + 3)
        score = 0.8 * X[:, 21] + 0.6 * X[:, 22] + 0.9 * X[:, 23] + 0.7 * X[:, 26] \
            + 0.4 * rng.logistic(size=n_rows)
        y = np.searchsorted(np.quantile(score, np.linspace(0, 1, N_CLASSES + 1)[1:-1]),
                            score).astype(np.float64)
    elif case == "onehot":
        rng = np.random.default_rng(seed + 4)
        levels = rng.integers(0, ONEHOT_LEVELS, size=(n_rows, ONEHOT_VARIABLES))
        effects = rng.normal(scale=0.6, size=(ONEHOT_VARIABLES, ONEHOT_LEVELS))
        logit = 2.0 * y - 1.0 + effects[np.arange(ONEHOT_VARIABLES), levels].sum(axis=1)
        y = (rng.random(n_rows) < 1.0 / (1.0 + np.exp(-logit))).astype(np.float64)
        onehot = (levels[:, :, None] == np.arange(ONEHOT_LEVELS)).reshape(n_rows, -1)
        X = np.column_stack([X, onehot.astype(np.float64)])
    elif case != "higgs":
        raise ValueError(f"unknown case {case!r}; expected one of {CASES}")
    return X, y


#: Rows of each library's warm-up fit (2 rounds) before anything is timed. Enough for
#: boostwood to build a histogram in several runs (2,048 rows or more at 2 threads), so
#: that kernel is compiled or loaded before the timed fit; few enough that the warm-up
#: leaves little memory behind, which would count in the peak: 5,000 rows leave 4 MiB
#: more resident than 2,000, 20,000 rows 21 MiB more (VmRSS after the warm-up, HIGGS-like).
WARM_UP_ROWS = 5_000


SETTINGS = {
    "lossguide": dict(leaves=255, depth=0),
    "depthwise": dict(leaves=0, depth=8),
}
#: Gradient levels of ``--quantized``, for boostwood and LightGBM alike (LightGBM's
#: default ``num_grad_quant_bins``; boostwood's own default is 16).
QUANT_BINS = 4
#: What each library is given beyond the shared settings, printed with every table so
#: that a results file says it.
DISCLOSURE = (
    "# settings: learning rate 0.1, 255 value bins (XGBoost max_bin=255, QuantileDMatrix), "
    "min hessian 1e-3 per leaf, L2 0; min_data_in_leaf=20 for boostwood and LightGBM "
    "(XGBoost has no rows-per-leaf limit)",
    "# lossguide: 255 leaves, no depth limit. depthwise: depth 8 for boostwood and XGBoost "
    "(level by level); LightGBM has no depth-wise growth: leaf-wise with max_depth=8 and "
    "256 leaves",
    "# LightGBM: deterministic=True, force_row_wise=True (reproducible runs; "
    "force_row_wise skips its row/column-wise probe)",
    "# timed: Dataset construction (binning; boostwood and LightGBM fit bins on a 200k-row "
    "sample, XGBoost sketches every row) and training, each on the same number of threads "
    "in every library, in a fresh process per run after a 2-round warm-up fit on 5,000 "
    "rows; one predict call per input type",
)


def _vm_status(key):
    """A ``/proc/self/status`` field in MiB (Linux), or NaN elsewhere."""
    try:
        with open("/proc/self/status") as f:
            for line in f:
                if line.startswith(key + ":"):
                    return int(line.split()[1]) / 1024.0
    except OSError:
        pass
    return float("nan")


def _reset_peak():
    """Reset this process's high-water mark to its current RSS; return that RSS in MiB."""
    try:
        with open("/proc/self/clear_refs", "w") as f:
            f.write("5")
    except OSError:
        pass
    return _vm_status("VmRSS")


def _timed(warm_up, make_data, fit, predict, Xte):
    """Warm up, then time binning, training, prediction (float64, float32) and latency."""
    warm_up()
    base = _reset_peak()
    t = time.perf_counter()
    data = make_data()
    t_bin = time.perf_counter() - t
    t = time.perf_counter()
    model = fit(data)
    t_train = time.perf_counter() - t
    peak = _vm_status("VmHWM")
    del data
    out = dict(bin_s=t_bin, train_s=t_train, peak_mib=peak, added_mib=peak - base)
    Xte32 = np.ascontiguousarray(Xte, dtype=np.float32)
    for name, X in (("f64", Xte), ("f32", Xte32)):
        predict(model, X[:100])
        t = time.perf_counter()
        p = predict(model, X)
        out[f"rows_per_s_{name}"] = len(X) / (time.perf_counter() - t)
        if name == "f64":
            pred = p
    one = Xte[:1]
    predict(model, one)
    times = []
    for i in range(200):
        row = Xte[i:i + 1]
        t = time.perf_counter()
        predict(model, row)
        times.append(time.perf_counter() - t)
    out["latency_us"] = float(np.median(times)) * 1e6
    return out, pred


def _objective(lib, task):
    names = {"boostwood": ("binary:logistic", "reg:squarederror", "multi:softprob"),
             "lightgbm": ("binary", "regression", "multiclass"),
             "xgboost": ("binary:logistic", "reg:squarederror", "multi:softprob")}[lib]
    obj = dict(zip(("binary", "regression", "multiclass"), names))[task]
    extra = {"num_class": N_CLASSES} if task == "multiclass" else {}
    return dict(objective=obj, **extra)


def boostwood_params(setting, threads, task="binary"):
    """boostwood's parameters for a growth policy of ``SETTINGS`` (also bench_setting_ab's)."""
    s = SETTINGS[setting]
    return dict(eta=0.1, max_bin=255, nthread=threads,
                grow_policy=setting, max_leaves=s["leaves"], max_depth=s["depth"],
                min_child_weight=1e-3, min_data_in_leaf=20, reg_lambda=0.0,
                **_objective("boostwood", task))


def _run_boostwood(Xtr, ytr, Xte, setting, rounds, threads, task, quantized=False):
    import numba

    import boostwood as bw
    numba.set_num_threads(threads)  # the Dataset bins on this many threads, as the others
    params = boostwood_params(setting, threads, task)
    if quantized:
        params.update(use_quantized_grad=True, num_grad_quant_bins=QUANT_BINS)
    w = slice(WARM_UP_ROWS)

    def warm_up():  # JIT: binning from a row sample (as the timed Dataset bins), then a fit
        bw.Dataset(Xtr[w], ytr[w], bin_construct_sample_cnt=WARM_UP_ROWS // 5).construct()
        bw.train(params, bw.Dataset(Xtr[w], ytr[w]), 2, verbose_eval=False)

    return _timed(warm_up,
                  lambda: bw.Dataset(Xtr, ytr).construct(),
                  lambda d: bw.train(params, d, rounds, verbose_eval=False),
                  lambda b, X: b.predict(X), Xte)


def _run_lightgbm(Xtr, ytr, Xte, setting, rounds, threads, task, quantized=False):
    import lightgbm as lgb
    s = SETTINGS[setting]
    params = dict(learning_rate=0.1, max_bin=255, num_threads=threads,
                  num_leaves=s["leaves"] or 2 ** s["depth"], max_depth=s["depth"] or -1,
                  min_sum_hessian_in_leaf=1e-3, min_data_in_leaf=20, lambda_l2=0.0,
                  verbose=-1, deterministic=True, force_row_wise=True,
                  use_quantized_grad=quantized, **_objective("lightgbm", task))
    if quantized:
        params["num_grad_quant_bins"] = QUANT_BINS
    w = slice(WARM_UP_ROWS)
    return _timed(lambda: lgb.train(params, lgb.Dataset(Xtr[w], ytr[w]), 2),
                  lambda: lgb.Dataset(Xtr, ytr, params=params).construct(),
                  lambda d: lgb.train(params, d, rounds),
                  lambda b, X: b.predict(X, num_threads=threads), Xte)


def _run_xgboost(Xtr, ytr, Xte, setting, rounds, threads, task, quantized=False):
    import xgboost as xgb
    s = SETTINGS[setting]
    params = dict(eta=0.1, max_bin=255, nthread=threads,
                  tree_method="hist", grow_policy=setting, max_leaves=s["leaves"],
                  max_depth=s["depth"], min_child_weight=1e-3, reg_lambda=0.0,
                  **_objective("xgboost", task))
    w = slice(WARM_UP_ROWS)
    return _timed(lambda: xgb.train(params, xgb.QuantileDMatrix(Xtr[w], ytr[w], max_bin=255,
                                                                nthread=threads), 2),
                  lambda: xgb.QuantileDMatrix(Xtr, ytr, max_bin=255, nthread=threads),
                  lambda d: xgb.train(params, d, rounds),
                  lambda b, X: b.inplace_predict(X), Xte)


RUNNERS = {"boostwood": _run_boostwood, "lightgbm": _run_lightgbm, "xgboost": _run_xgboost}


def score_of(task, y, p):
    """AUC (binary, higher is better), RMSE (regression) or log-loss (multiclass)."""
    if task == "binary":
        from boostwood.boosting.metrics import roc_auc
        return "AUC", roc_auc(y, p)
    if task == "regression":
        return "RMSE", float(np.sqrt(np.mean((y - p) ** 2)))
    p = np.clip(p.reshape(len(y), -1)[np.arange(len(y)), y.astype(np.int64)], 1e-15, 1.0)
    return "logloss", float(-np.mean(np.log(p)))


def child(args):
    """Run one library on one setting; print a JSON line."""
    data = np.load(args.data)
    Xtr, ytr, Xte, yte = data["Xtr"], data["ytr"], data["Xte"], data["yte"]
    task = TASK[args.case]
    out, p = RUNNERS[args.lib](Xtr, ytr, Xte, args.setting, args.rounds, args.threads, task,
                               quantized=args.quantized)
    metric, value = score_of(task, yte, p)
    print(json.dumps(dict(lib=args.lib, setting=args.setting, threads=args.threads,
                          metric=metric, score=value, **out)))


def startup_overhead():
    """Cold (empty numba cache) and warm import + first fit, each in a fresh process."""
    code = ("import time; t=time.perf_counter(); import numpy as np, boostwood as bw; "
            "X=np.random.default_rng(0).normal(size=(500,5)); y=(X[:,0]>0)*1.0; "
            "bw.train({'objective':'binary:logistic'}, bw.Dataset(X,y), 5, verbose_eval=False); "
            "print(time.perf_counter()-t)")
    out = {}
    with tempfile.TemporaryDirectory() as cache:
        env = dict(os.environ, NUMBA_CACHE_DIR=cache)
        for label in ("cold", "warm"):
            r = subprocess.run([sys.executable, "-c", code], env=env, capture_output=True,
                               text=True, check=True)
            out[label] = float(r.stdout.strip().splitlines()[-1])
    return out


def thread_counts(text):
    """``"2"``, ``"1,2,4"`` or ``"all"`` (1, 2, 4, ... and the machine's core count)."""
    if text == "all":
        cores = os.cpu_count() or 1
        counts = [1]
        while counts[-1] * 2 <= cores:
            counts.append(counts[-1] * 2)
        return counts + ([cores] if counts[-1] != cores else [])
    return [int(t) for t in text.split(",")]


def main():
    ap = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    ap.add_argument("--rows", type=int, default=1_000_000)
    ap.add_argument("--rounds", type=int, default=500)
    ap.add_argument("--threads", default="2", help="a count, a comma list, or 'all'")
    ap.add_argument("--case", default="higgs", choices=CASES)
    ap.add_argument("--libs", default="boostwood,lightgbm,xgboost")
    ap.add_argument("--settings", default="lossguide,depthwise")
    ap.add_argument("--no-startup", action="store_true", help="skip the cold/warm start timing")
    ap.add_argument("--quantized", action="store_true",
                    help="use_quantized_grad in boostwood and LightGBM")
    ap.add_argument("--repeat", type=int, default=1, help="runs of each, interleaved")
    ap.add_argument("--child", action="store_true", help=argparse.SUPPRESS)
    ap.add_argument("--lib", help=argparse.SUPPRESS)
    ap.add_argument("--setting", help=argparse.SUPPRESS)
    ap.add_argument("--data", help=argparse.SUPPRESS)
    args = ap.parse_args()
    if args.child:
        args.threads = int(args.threads)
        return child(args)
    X, y = make_case(args.case, args.rows)
    cut = int(0.8 * args.rows)
    counts = thread_counts(args.threads)
    with tempfile.TemporaryDirectory() as tmp:
        path = os.path.join(tmp, "data.npz")
        np.savez(path, Xtr=X[:cut], ytr=y[:cut], Xte=X[cut:], yte=y[cut:])
        print(f"# case {args.case}: {args.rows} rows x {X.shape[1]} features, {args.rounds} "
              f"rounds, threads {counts}, 255 bins, learning rate 0.1, "
              f"{os.cpu_count()} cores"
              + (f", quantized gradients ({QUANT_BINS} levels, boostwood and LightGBM)"
                 if args.quantized else "")
              + (f", median of {args.repeat} interleaved runs (of an even number: the mean "
                 f"of the middle two)" if args.repeat > 1 else ""))
        print("\n".join(DISCLOSURE))
        del X, y
        if not args.no_startup:
            st = startup_overhead()
            print(f"# boostwood import + first fit: cold {st['cold']:.1f} s (an empty numba "
                  f"cache: compiles the kernels; a fresh pip install ships them, see "
                  f"bench_cold_start.py), warm {st['warm']:.1f} s (numba cache)")
        if "boostwood" in args.libs.split(","):
            # fill numba's cache first, so that every boostwood worker loads its kernels:
            # one that compiled them in its warm-up kept the compiler's memory resident,
            # and its peak counted it (783 MiB against 528 for a worker that loaded them)
            subprocess.run([sys.executable, "-m", "boostwood", "compile", "--quiet"],
                           check=True)
        results = []
        runs = [(threads, setting, lib) for _ in range(args.repeat) for threads in counts
                for setting in args.settings.split(",") for lib in args.libs.split(",")]
        for threads, setting, lib in runs:
            cmd = [sys.executable, __file__, "--child", "--lib", lib, "--setting",
                   setting, "--data", path, "--rounds", str(args.rounds),
                   "--threads", str(threads), "--case", args.case]
            if args.quantized:
                cmd.append("--quantized")
            out = run_child(cmd, f"{lib} {setting}")
            if out is not None:
                results.append(out)
    results = medians(results)
    for threads in counts:
        report([r for r in results if r["threads"] == threads])
    if len(counts) > 1:
        scaling(results, counts)


def run_child(cmd, label):
    """Run a benchmark worker; its last line of output as a dict (printed), or None
    after printing the end of its error output."""
    r = subprocess.run(cmd, capture_output=True, text=True)
    if r.returncode != 0:
        print(f"# {label} failed:\n{r.stderr[-2000:]}")
        return None
    out = json.loads(r.stdout.strip().splitlines()[-1])
    print("#", out, flush=True)
    return out


def medians(results):
    """One result per (threads, setting, library): each figure's median over the runs
    (of an even number of runs, the mean of the middle two), with every run's training
    seconds (``train_runs``); for boostwood, its ratio to the faster other library run
    by run is printed."""
    groups = {}
    for r in results:
        groups.setdefault((r["threads"], r["setting"], r["lib"]), []).append(r)
    out = []
    for key, rs in groups.items():
        row = {k: (statistics.median(r[k] for r in rs)
                   if isinstance(v, (int, float)) and not isinstance(v, bool)
                   and k != "threads" else v) for k, v in rs[0].items()}
        out.append(dict(row, train_runs=[r["train_s"] for r in rs]))
    for r in out:
        if r["lib"] != "boostwood" or len(r["train_runs"]) < 2:
            continue
        mine = groups[(r["threads"], r["setting"], "boostwood")]
        others = [groups[k] for k in groups
                  if k[:2] == (r["threads"], r["setting"]) and k[2] != "boostwood"]
        ratios = [m["train_s"] / min(o[i]["train_s"] for o in others)
                  for i, m in enumerate(mine) if others and all(len(o) > i for o in others)]
        if ratios:
            print(f"# {r['threads']} threads {r['setting']}: boostwood / faster other, run by "
                  f"run: " + ", ".join(f"{q:.2f}x" for q in ratios))
    return out


def _fmt_ratio(value, ref):
    return f"{value / ref:.2f}x" if ref else "-"


def report(results):
    """One table per thread count; ratios to the faster of LightGBM and XGBoost."""
    if not results:
        return
    print(f"\n{results[0]['threads']} threads")
    print("| setting | library | binning s | training s | rows/s f64 | rows/s f32 | 1-row us | "
          "peak MiB | added MiB | test metric | train / best other | rows/s / XGB | "
          "added MiB / LGB |")
    print("|" + "---|" * 13)
    for r in results:
        others = [q for q in results if q["setting"] == r["setting"] and q["lib"] != "boostwood"]
        best = min((q["train_s"] for q in others), default=None)
        xgb = next((q for q in others if q["lib"] == "xgboost"), None)
        lgb = next((q for q in others if q["lib"] == "lightgbm"), None)
        print(f"| {r['setting']} | {r['lib']} | {r['bin_s']:.2f} | {r['train_s']:.1f} | "
              f"{r['rows_per_s_f64']:.3g} | {r['rows_per_s_f32']:.3g} | {r['latency_us']:.0f} | "
              f"{r['peak_mib']:.0f} | {r['added_mib']:.0f} | {r['metric']} {r['score']:.4f} | "
              f"{_fmt_ratio(r['train_s'], best)} | "
              f"{_fmt_ratio(r['rows_per_s_f64'], xgb and xgb['rows_per_s_f64'])} | "
              f"{_fmt_ratio(r['added_mib'], lgb and lgb['added_mib'])} |")


def scaling(results, counts):
    """Training seconds per thread count, and the speed-up from the fewest to the most."""
    keys = sorted({(r["setting"], r["lib"]) for r in results})
    print("\n| threads | " + " | ".join(f"{lib} {setting}" for setting, lib in keys) + " |")
    print("|" + "---|" * (len(keys) + 1))
    train = {(r["setting"], r["lib"], r["threads"]): r["train_s"] for r in results}
    for t in counts:
        print(f"| {t} | " + " | ".join(f"{train[s, lib, t]:.1f} s" if (s, lib, t) in train
                                       else "-" for s, lib in keys) + " |")
    lo, hi = min(counts), max(counts)  # --threads 16,2 runs 16 first; the speed-up is 2 -> 16
    print(f"| speed-up {lo} -> {hi} | " + " | ".join(
        f"{train[s, lib, lo] / train[s, lib, hi]:.2f}x"
        if (s, lib, lo) in train and (s, lib, hi) in train else "-" for s, lib in keys) + " |")


if __name__ == "__main__":
    main()
