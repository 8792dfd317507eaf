"""Categorical features: boostwood against LightGBM and XGBoost, each splitting them natively.

Data: ``--rows`` rows of 4 numeric features and one categorical column per entry of
``--levels`` (pandas ``category`` dtype, string values, Zipf-like frequencies, 2 % missing),
a binary label whose log-odds add a random effect per category of every column and a
smooth function of the numbers; 80/20 split.

All three libraries get the same frame (LightGBM and XGBoost read the ``category`` dtype:
``categorical_feature="auto"``, ``enable_categorical=True``), the same threads, rounds,
learning rate, depth (depth-wise, ``--depth``; LightGBM with ``num_leaves`` 2^depth),
L2 penalty 1, ``min_child_weight`` 1, and each its own categorical defaults (LightGBM's:
one-vs-rest up to 4 categories, sorted partitions above, ``cat_smooth`` 10, ``cat_l2`` 10,
``max_cat_threshold`` 32, ``min_data_per_group`` 100, which boostwood's set splits share;
XGBoost's: one-hot below 4, partitions above, ``max_cat_threshold`` 64). boostwood's own
default is one-vs-rest for every categorical feature (chosen on real data,
``bench_categorical_quality.py``); "boostwood partitions" is boostwood with LightGBM's
``max_cat_to_onehot`` 4, the like-for-like row. Inside the timer:
the library's Dataset from the frame, and training. Each library is warmed on a small
slice first; the libraries take turns ``--repeat`` times and the best time of each is
reported, with test AUC and the ratio to the faster of LightGBM and XGBoost. With
``--memory``, each library also trains once more in a fresh process of its own: its peak
resident memory above what the process held once the data were made and a warm-up fit
on 5,000 rows was done (Linux's VmHWM, reset then), the Dataset and training included.

Usage::

    python benchmarks/bench_categorical.py                       # 200k rows, 10/100/1000 levels
    python benchmarks/bench_categorical.py --rows 1000000 --levels 10,100,10000
"""
import argparse
import json
import os
import platform
import subprocess
import sys
import time

import numpy as np
import pandas as pd


def make_data(n_rows, levels, seed=0):
    rng = np.random.default_rng(seed)
    X = rng.normal(size=(n_rows, 4))
    logit = 0.6 * X[:, 0] - 0.4 * X[:, 1] ** 2 + 0.3 * np.sin(2 * X[:, 2]) * X[:, 3]
    frame = {f"x{j}": X[:, j] for j in range(4)}
    for i, k in enumerate(levels):
        weights = 1.0 / np.arange(1, k + 1) ** 0.8
        codes = rng.choice(k, size=n_rows, p=weights / weights.sum())
        effect = rng.normal(size=k) * 0.8
        logit = logit + effect[codes]
        values = np.array([f"L{c}" for c in range(k)], dtype=object)[codes]
        values[rng.random(n_rows) < 0.02] = None
        frame[f"c{i}_{k}"] = pd.Categorical(values)
    y = (logit + rng.logistic(size=n_rows) > 0).astype(np.float64)
    return pd.DataFrame(frame), y


def auc(y, p):
    order = np.argsort(p, kind="stable")
    ranks = np.empty(len(p))
    ranks[order] = np.arange(1, len(p) + 1)
    pos = y == 1
    return (ranks[pos].sum() - pos.sum() * (pos.sum() + 1) / 2) / (pos.sum() * (~pos).sum())


def fit_boostwood(df, y, a, **extra):
    import boostwood as bw
    params = dict(objective="binary:logistic", eta=0.1, max_depth=a.depth, reg_lambda=1.0,
                  min_child_weight=1.0, nthread=a.threads, verbosity=0, **extra)
    b = bw.train(params, bw.Dataset(df, label=y), a.rounds)
    return lambda X: b.predict(X)


def fit_lightgbm(df, y, a):
    import lightgbm as lgb
    params = dict(objective="binary", learning_rate=0.1, max_depth=a.depth,
                  num_leaves=2 ** a.depth, lambda_l2=1.0, min_sum_hessian_in_leaf=1.0,
                  min_data_in_leaf=1, num_threads=a.threads, verbose=-1)
    b = lgb.train(params, lgb.Dataset(df, label=y), a.rounds)
    return lambda X: b.predict(X)


def fit_xgboost(df, y, a):
    import xgboost as xgb
    params = dict(objective="binary:logistic", eta=0.1, max_depth=a.depth, reg_lambda=1.0,
                  min_child_weight=1.0, tree_method="hist", nthread=a.threads)
    b = xgb.train(params, xgb.DMatrix(df, label=y, enable_categorical=True), a.rounds)
    return lambda X: b.predict(xgb.DMatrix(X, enable_categorical=True))


FITS = {"boostwood": fit_boostwood,
        "boostwood partitions": lambda df, y, a: fit_boostwood(df, y, a, max_cat_to_onehot=4),
        "lightgbm": fit_lightgbm, "xgboost": fit_xgboost}


def _status_kib(field):
    with open("/proc/self/status") as fh:
        for line in fh:
            if line.startswith(field + ":"):
                return int(line.split()[1])
    return 0


def memory_of(name, a):
    """MiB of peak resident memory above the data's, of one fit of library ``name`` (run in
    a fresh process: ``--memory-of``)."""
    levels = [int(v) for v in a.levels.split(",")]
    df, y = make_data(a.rows, levels)
    cut = int(0.8 * a.rows)
    train = df.iloc[:cut]
    FITS[name](train.iloc[:5000], y[:5000], argparse.Namespace(**{**vars(a), "rounds": 2}))
    base = _status_kib("VmRSS")  # (after a warm-up fit: imports and compiled code in)
    with open("/proc/self/clear_refs", "w") as fh:  # the peak so far: reset to now
        fh.write("5")
    FITS[name](train, y[:cut], a)
    return (_status_kib("VmHWM") - base) / 1024


def memory_table(a):
    out = {}
    for name in FITS:
        cmd = [sys.executable, os.path.abspath(__file__), "--memory-of", name,
               "--rows", str(a.rows), "--levels", a.levels, "--rounds", str(a.rounds),
               "--depth", str(a.depth), "--threads", str(a.threads)]
        res = subprocess.run(cmd, capture_output=True, text=True, check=True)
        out[name] = float(res.stdout.strip().splitlines()[-1])
    return out


def data_arguments(ap, repeat):
    """The arguments of the data, the models and the turns, shared with
    ``bench_categorical_predict.py``."""
    ap.add_argument("--rows", type=int, default=200_000)
    ap.add_argument("--levels", default="10,100,1000")
    ap.add_argument("--rounds", type=int, default=100)
    ap.add_argument("--depth", type=int, default=6)
    ap.add_argument("--threads", type=int, default=2)
    ap.add_argument("--repeat", type=int, default=repeat)


def commit():
    """The short id of the checked-out commit, for the results' header."""
    return subprocess.run(["git", "rev-parse", "--short", "HEAD"], capture_output=True,
                          text=True).stdout.strip()


def main():
    ap = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    data_arguments(ap, repeat=3)
    ap.add_argument("--out", default=None, help="write the results as JSON here")
    ap.add_argument("--memory", action="store_true", help="also measure peak memory")
    ap.add_argument("--memory-of", default=None, help=argparse.SUPPRESS)
    a = ap.parse_args()
    if a.memory_of:
        print(memory_of(a.memory_of, a))
        return
    levels = [int(v) for v in a.levels.split(",")]
    df, y = make_data(a.rows, levels)
    cut = int(0.8 * a.rows)
    train, test = df.iloc[:cut], df.iloc[cut:]
    small = argparse.Namespace(**{**vars(a), "rounds": 2})
    for fit in FITS.values():  # warm: compile, import
        fit(train.iloc[:5000], y[:5000], small)
    best, quality = {}, {}
    for _ in range(a.repeat):
        for name, fit in FITS.items():
            t = time.perf_counter()
            predict = fit(train, y[:cut], a)
            best[name] = min(best.get(name, np.inf), time.perf_counter() - t)
            quality[name] = auc(y[cut:], predict(test))
    fastest = min(best["lightgbm"], best["xgboost"])
    commit_id = commit()
    print(f"commit {commit_id}; {platform.processor() or platform.machine()}, {os.cpu_count()} "
          f"cores; {a.rows} rows, levels {levels}, {a.rounds} rounds, depth {a.depth}, "
          f"{a.threads} threads, best of {a.repeat}")
    memory = memory_table(a) if a.memory else {}
    print("| library | train s | / faster of LightGBM, XGBoost | test AUC | "
          "peak MiB above the data |")
    print("|---|---|---|---|---|")
    for name in FITS:
        mib = f"{memory[name]:.0f}" if name in memory else "not measured"
        print(f"| {name} | {best[name]:.2f} | {best[name] / fastest:.2f}x | {quality[name]:.4f} "
              f"| {mib} |")
    if a.out:
        with open(a.out, "w") as fh:
            json.dump({"commit": commit_id, "args": vars(a), "seconds": best, "auc": quality,
                       "peak_mib": memory}, fh, indent=1)


if __name__ == "__main__":
    main()
