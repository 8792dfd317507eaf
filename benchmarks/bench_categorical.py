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
reported, with test AUC and the ratio to the faster of LightGBM and XGBoost. Peak memory
is not measured here.

Usage::

    python benchmarks/bench_categorical.py                       # 200k rows, 10/100/1000 levels
    python benchmarks/bench_categorical.py --rows 1000000 --levels 10,100,10000
"""
import argparse
import json
import os
import platform
import subprocess
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


def main():
    ap = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    ap.add_argument("--rows", type=int, default=200_000)
    ap.add_argument("--levels", default="10,100,1000")
    ap.add_argument("--rounds", type=int, default=100)
    ap.add_argument("--depth", type=int, default=6)
    ap.add_argument("--threads", type=int, default=2)
    ap.add_argument("--repeat", type=int, default=3)
    ap.add_argument("--out", default=None, help="write the results as JSON here")
    a = ap.parse_args()
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
    commit = subprocess.run(["git", "rev-parse", "--short", "HEAD"], capture_output=True,
                            text=True).stdout.strip()
    print(f"commit {commit}; {platform.processor() or platform.machine()}, {os.cpu_count()} "
          f"cores; {a.rows} rows, levels {levels}, {a.rounds} rounds, depth {a.depth}, "
          f"{a.threads} threads, best of {a.repeat}")
    print("| library | train s | / faster of LightGBM, XGBoost | test AUC |")
    print("|---|---|---|---|")
    for name in FITS:
        print(f"| {name} | {best[name]:.2f} | {best[name] / fastest:.2f}x | {quality[name]:.4f} |")
    if a.out:
        with open(a.out, "w") as fh:
            json.dump({"commit": commit, "args": vars(a), "seconds": best, "auc": quality}, fh,
                      indent=1)


if __name__ == "__main__":
    main()
