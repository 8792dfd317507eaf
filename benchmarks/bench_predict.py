"""Prediction speed: boostwood vs XGBoost (``inplace_predict``) vs LightGBM.

Each library trains its own 500-tree model on the same HIGGS-like data (see
``bench_higgs.py``; 200k training rows, both growth policies, the same settings as
there), then predicts 500k rows, float64 and float32 input, at each thread count
asked for. Reported: rows per second (best of 3 calls after a warm-up call, for every
library), single-row latency (one row per call, median of 300 calls) and boostwood's
ratio to XGBoost. boostwood's traversal kernels are also timed on the same packed
model: the general one (``predict_raw``: any tree, row by row), the level-by-level
one (``predict_levels``, balanced numeric trees) and the binned walk
(``predict_binned``, any forest of numeric splits) that ``Booster.predict`` picks
first.

Usage::

    python benchmarks/bench_predict.py                  # 2 threads
    python benchmarks/bench_predict.py --threads 1,2 --rounds 500
"""
import argparse
import sys
import time

import numpy as np

sys.path.insert(0, __file__.rsplit("/", 1)[0])
from bench_higgs import SETTINGS, make_higgs_like  # noqa: E402


def best_rate(fn, n_rows, repeat=3):
    """Rows/s of the best of ``repeat`` timed calls after a warm-up call: the same for
    every library (a slow one is not given fewer tries)."""
    _seconds(fn)
    return n_rows / min(_seconds(fn) for _ in range(repeat))


def _seconds(fn):
    t = time.perf_counter()
    fn()
    return time.perf_counter() - t


def latency_us(fn, X, calls=300):
    fn(X[:1])
    times = [_seconds(lambda i=i: fn(X[i:i + 1])) for i in range(calls)]
    return float(np.median(times)) * 1e6


def train_all(Xtr, ytr, setting, rounds):
    import boostwood as bw
    import lightgbm as lgb
    import xgboost as xgb
    s = SETTINGS[setting]
    bw_model = bw.train(dict(objective="binary:logistic", eta=0.1, max_bin=255,
                             grow_policy=setting, max_leaves=s["leaves"], max_depth=s["depth"],
                             min_child_weight=1e-3, min_data_in_leaf=20, reg_lambda=0.0),
                        bw.Dataset(Xtr, ytr), rounds, verbose_eval=False)
    xgb_model = xgb.train(dict(objective="binary:logistic", eta=0.1, max_bin=256,
                               tree_method="hist", grow_policy=setting, max_leaves=s["leaves"],
                               max_depth=s["depth"], min_child_weight=1e-3, reg_lambda=0.0),
                          xgb.DMatrix(Xtr, ytr), rounds)
    lgb_model = lgb.train(dict(objective="binary", learning_rate=0.1, max_bin=255,
                               num_leaves=s["leaves"] or 2 ** s["depth"],
                               max_depth=s["depth"] or -1, min_sum_hessian_in_leaf=1e-3,
                               min_data_in_leaf=20, lambda_l2=0.0, verbose=-1),
                          lgb.Dataset(Xtr, ytr), rounds)
    return bw_model, xgb_model, lgb_model


def kernel_rates(model, X, threads):
    """Rows/s of the traversal kernels on one packed model (None: not usable on it)."""
    from boostwood._kernels.predict import predict_levels, predict_raw
    import numba
    from boostwood._kernels.predict_binned import predict_binned
    packed = model._pack(0, model.num_boosted_rounds())
    out = np.zeros((X.shape[0], 1))
    args = (packed["value"], packed["offsets"], packed["group"], out)
    runs = {"general": lambda: predict_raw(X, packed["nodes"], *args),
            "levels": lambda: predict_levels(X, packed["levels"], *args),
            "binned": lambda: predict_binned(X, *packed["binned"], *args,
                                             packed["binned_sets"], numba.get_num_threads())}
    usable = {"general": True, "levels": packed["levels"] is not None,
              "binned": packed["binned"] is not None}
    return {name: best_rate(run, X.shape[0]) if usable[name] else None
            for name, run in runs.items()}


def main():
    ap = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    ap.add_argument("--train-rows", type=int, default=200_000)
    ap.add_argument("--predict-rows", type=int, default=500_000)
    ap.add_argument("--rounds", type=int, default=500)
    ap.add_argument("--threads", default="2")
    ap.add_argument("--settings", default="lossguide,depthwise")
    args = ap.parse_args()
    import numba
    X, y = make_higgs_like(args.train_rows + args.predict_rows)
    Xtr, ytr, Xte = X[:args.train_rows], y[:args.train_rows], X[args.train_rows:]
    Xte32 = Xte.astype(np.float32)
    print(f"# {args.train_rows} training rows, {args.rounds} rounds; predicting "
          f"{args.predict_rows} rows x {X.shape[1]} features")
    print("| setting | threads | library | rows/s f64 | rows/s f32 | 1-row latency us | "
          "rows/s f64 / XGB | rows/s f32 / XGB |")
    print("|---|---|---|---|---|---|---|---|")
    kernel_lines = []
    for setting in args.settings.split(","):
        bw_model, xgb_model, lgb_model = train_all(Xtr, ytr, setting, args.rounds)
        for threads in [int(t) for t in args.threads.split(",")]:
            numba.set_num_threads(threads)
            bw_model.params["nthread"] = threads
            xgb_model.set_param({"nthread": threads})
            libs = {"boostwood": bw_model.predict,
                    "xgboost": xgb_model.inplace_predict,
                    "lightgbm": lambda X, m=lgb_model, t=threads: m.predict(X, num_threads=t)}
            rows = {}
            for lib, fn in libs.items():
                rows[lib] = (best_rate(lambda: fn(Xte), len(Xte)),
                             best_rate(lambda: fn(Xte32), len(Xte)), latency_us(fn, Xte))
            for lib, (r64, r32, lat) in rows.items():
                x64, x32, _ = rows["xgboost"]
                print(f"| {setting} | {threads} | {lib} | {r64:.3g} | {r32:.3g} | {lat:.0f} | "
                      f"{r64 / x64:.2f}x | {r32 / x32:.2f}x |", flush=True)
            k = kernel_rates(bw_model, Xte, threads)
            cells = [f"{k[name]:.3g} ({k[name] / k['general']:.2f}x)" if k[name] else
                     "not usable" for name in ("levels", "binned")]
            kernel_lines.append(f"| {setting} | {threads} | {k['general']:.3g} | "
                                + " | ".join(cells) + " |")
    print("\nboostwood's traversal kernels, float64, the same packed model (rows/s, and "
          "the speed-up on the general kernel)\n")
    print("| setting | threads | general (predict_raw) | level walk (predict_levels) | "
          "binned walk (predict_binned) |")
    print("|---|---|---|---|---|")
    print("\n".join(kernel_lines))


if __name__ == "__main__":
    main()
