"""Prediction speed of categorical models: boostwood against its numeric twin, LightGBM
and XGBoost.

Data as in ``bench_categorical.py`` (``--rows`` rows, 80/20 split; 4 numeric features and a
``category`` column per entry of ``--levels``). Models, each trained once on the training
rows with the same rounds, depth (or, with ``--leaves``, leaves grown leaf-wise) and
learning rate:

* boostwood (its defaults: one-vs-rest set splits),
* boostwood partitions (``max_cat_to_onehot`` 4: many-vs-many sets, LightGBM's default),
* boostwood numeric twin: the same frame with each category column replaced by its codes
  as numbers (NaN missing) -- the "same-size numeric model" of [Q2] item 4,
* LightGBM and XGBoost on the ``category`` columns.

Timed: one ``predict`` call on the whole test frame (the library's own coding of the
frame included: boostwood looks categories up by value in the model's dictionaries,
XGBoost builds a DMatrix), best of ``--repeat`` calls taken in turns after a warm-up
call of each, every model alike; and calls of 1,000 rows (best of the same turns, the
mean over the test frame's 1,000-row slices); each model's turn starts after a 0.5 s
pause, so that no other library's OpenMP threads still spin on the two cores (without
it, whichever model followed XGBoost in the turns was timed up to 1.4x slower).
Reported: milliseconds, ratio to
boostwood's numeric twin, and ratio to the faster of LightGBM and XGBoost.

Usage::

    python benchmarks/bench_categorical_predict.py                 # 200k rows, 10/100/1000
    python benchmarks/bench_categorical_predict.py --leaves 255    # leaf-wise, 255 leaves
    python benchmarks/bench_categorical_predict.py --levels 10,100 --rounds 300
"""
import argparse
import os
import platform
import sys
import time

import numpy as np
import pandas as pd

sys.path.insert(0, os.path.dirname(os.path.abspath(__file__)))
from bench_categorical import commit, data_arguments, make_data  # noqa: E402


def as_numbers(df):
    """The frame with every category column replaced by its codes as numbers."""
    out = df.copy()
    for c in out.columns:
        if isinstance(out[c].dtype, pd.CategoricalDtype):
            codes = out[c].cat.codes
            out[c] = codes.astype(np.float64).where(codes >= 0, np.nan)
    return out


def models(train, y, a):
    import boostwood as bw
    import lightgbm as lgb
    import xgboost as xgb
    shape = dict(max_depth=a.depth) if not a.leaves else \
        dict(grow_policy="lossguide", max_leaves=a.leaves, max_depth=0)
    common = dict(objective="binary:logistic", eta=0.1, nthread=a.threads, verbosity=0,
                  **shape)
    out = {}
    for name, frame, extra in (("boostwood", train, {}),
                               ("boostwood partitions", train, {"max_cat_to_onehot": 4}),
                               ("boostwood numeric twin", as_numbers(train), {})):
        b = bw.train(dict(common, **extra), bw.Dataset(frame, label=y), a.rounds)
        out[name] = (b.predict, name.endswith("twin"))
    lg = lgb.train(dict(objective="binary", learning_rate=0.1,
                        max_depth=-1 if a.leaves else a.depth,
                        num_leaves=a.leaves or 2 ** a.depth, num_threads=a.threads,
                        verbose=-1),
                   lgb.Dataset(train, label=y), a.rounds)
    out["lightgbm"] = (lg.predict, False)
    xg = xgb.train(dict(objective="binary:logistic", eta=0.1, tree_method="hist",
                        nthread=a.threads, **shape),
                   xgb.DMatrix(train, label=y, enable_categorical=True), a.rounds)
    out["xgboost"] = (lambda X: xg.predict(xgb.DMatrix(X, enable_categorical=True,
                                                       nthread=a.threads)), False)
    return out


def main():
    ap = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    data_arguments(ap, repeat=10)
    ap.add_argument("--leaves", type=int, default=0,
                    help="grow every model leaf-wise to this many leaves (no depth limit) "
                         "instead of depth-wise to --depth")
    a = ap.parse_args()
    levels = [int(v) for v in a.levels.split(",")]
    df, y = make_data(a.rows, levels)
    cut = int(0.8 * a.rows)
    test = df.iloc[cut:]
    fitted = models(df.iloc[:cut], y[:cut], a)
    frames = {name: as_numbers(test) if twin else test for name, (_, twin) in fitted.items()}
    whole, small = {}, {}
    for name, (predict, _) in fitted.items():
        predict(frames[name])
    for _ in range(a.repeat):
        for name, (predict, _) in fitted.items():
            X = frames[name]
            time.sleep(0.5)  # the previous library's OpenMP threads stop spinning first
            t = time.perf_counter()
            predict(X)
            whole[name] = min(whole.get(name, np.inf), time.perf_counter() - t)
            t = time.perf_counter()
            for s in range(0, len(X) - 999, 1000):
                predict(X.iloc[s:s + 1000])
            per_call = (time.perf_counter() - t) / (len(X) // 1000)
            small[name] = min(small.get(name, np.inf), per_call)
    print(f"commit {commit()}; {platform.processor() or platform.machine()}, {os.cpu_count()} "
          f"cores; {a.rows} rows ({len(test)} predicted), levels {levels}, {a.rounds} "
          f"rounds, {f'{a.leaves} leaves leaf-wise' if a.leaves else f'depth {a.depth}'}, "
          f"{a.threads} threads, best of {a.repeat} in turns")
    twin = "boostwood numeric twin"
    other = {k: min(v["lightgbm"], v["xgboost"]) for k, v in (("whole", whole),
                                                              ("small", small))}
    print(f"| model | {len(test)} rows, ms | / numeric twin | / faster of LightGBM, XGBoost "
          "| 1,000-row calls, ms | / numeric twin | / faster of LightGBM, XGBoost |")
    print("|---|---|---|---|---|---|---|")
    for name in fitted:
        print(f"| {name} | {whole[name] * 1e3:.1f} | {whole[name] / whole[twin]:.2f}x | "
              f"{whole[name] / other['whole']:.2f}x | {small[name] * 1e3:.2f} | "
              f"{small[name] / small[twin]:.2f}x | {small[name] / other['small']:.2f}x |")


if __name__ == "__main__":
    main()
