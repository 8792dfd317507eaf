"""Claim frequency on a real insurance table: freMTPL2 (678k policies, 9 features),
Poisson (or Tweedie) regression of ``ClaimNb / Exposure`` weighted by ``Exposure``, the
standard actuarial GBDT benchmark, against LightGBM and XGBoost in the same run.

Unlike ``bench_higgs.py``'s synthetic columns, these are what real tables hold: four
string columns (integer codes here), counts and ages of a few dozen values, one
heavy-tailed density; most rows share a few bins of each feature. The log-link losses
compute an exp per row and round, so their gradient kernel is part of what is timed.

Each library is warmed up first (boostwood's JIT, a 2-round fit), then the libraries
take turns ``--repeat`` times (a slow minute slows all of them); reported are the
median training seconds (construct excluded), the ratio to the faster of LightGBM and
XGBoost, and the holdout mean Poisson deviance (weighted by exposure, 20 % of the
policies) -- equal quality is part of the comparison. LightGBM has no depth-wise
policy: its "depthwise" runs grow 64 leaves to depth 6 leaf-wise (as ``bench_higgs.py``).

Usage::

    python benchmarks/bench_fremtpl2.py                         # 200 rounds, 2 threads
    python benchmarks/bench_fremtpl2.py --objective tweedie --repeat 5
"""
import argparse
import os
import statistics
import sys
import time

import numpy as np

DATA = os.path.join(os.path.dirname(os.path.abspath(__file__)), "..", "..", "shared", "data",
                    "fremtpl2", "freMTPL2freq.csv.gz")
#: growth policy -> (leaves, depth): LightGBM's default leaves and XGBoost's default depth
SETTINGS = {"lossguide": (31, 0), "depthwise": (0, 6)}


def load(path=DATA, seed=0):
    """(X, rate, exposure) of every policy, string columns as integer codes, shuffled."""
    import pandas as pd
    df = pd.read_csv(path)
    for c in df.columns:
        if not pd.api.types.is_numeric_dtype(df[c]):
            df[c] = df[c].astype("category").cat.codes
    exposure = df["Exposure"].to_numpy(np.float64)
    rate = df["ClaimNb"].to_numpy(np.float64) / exposure
    X = df.drop(columns=["IDpol", "ClaimNb", "Exposure"]).to_numpy(np.float64)
    order = np.random.default_rng(seed).permutation(len(rate))
    return X[order], rate[order], exposure[order]


def deviance(rate, pred, w, power):
    """Mean weighted Poisson (power 1) or Tweedie deviance of predicted rates."""
    pred = np.maximum(pred, 1e-12)
    if power == 1.0:
        with np.errstate(divide="ignore", invalid="ignore"):
            term = np.where(rate > 0, rate * np.log(rate / pred), 0.0)
        d = 2.0 * (term - rate + pred)
    else:
        a, b = 1.0 - power, 2.0 - power
        d = 2.0 * (np.maximum(rate, 0) ** b / (a * b) - rate * pred ** a / a + pred ** b / b)
    return float(np.sum(w * d) / np.sum(w))


def runners(objective, power, setting, threads):
    """Per library: (make_data(X, y, w), fit(data, rounds), predict(model, X))."""
    import boostwood as bw
    import lightgbm as lgb
    import xgboost as xgb
    leaves, depth = SETTINGS[setting]
    bw_obj = "count:poisson" if objective == "poisson" else "reg:tweedie"
    common = dict(eta=0.1, max_bin=255, nthread=threads, min_child_weight=1e-3,
                  reg_lambda=0.0, objective=bw_obj, tweedie_variance_power=power)
    if objective == "poisson":
        common.pop("tweedie_variance_power")
    bwp = dict(common, grow_policy=setting, max_leaves=leaves, max_depth=depth,
               min_data_in_leaf=20)
    xgp = dict(common, tree_method="hist", grow_policy=setting, max_leaves=leaves,
               max_depth=depth, max_bin=256)
    lgp = dict(learning_rate=0.1, max_bin=255, num_threads=threads, objective=objective,
               num_leaves=leaves or 2 ** depth, max_depth=depth or -1,
               min_sum_hessian_in_leaf=1e-3, min_data_in_leaf=20, lambda_l2=0.0, verbose=-1,
               deterministic=True, force_row_wise=True)
    if objective == "tweedie":
        lgp["tweedie_variance_power"] = power
    return {
        "boostwood": (lambda X, y, w: bw.Dataset(X, y, weight=w).construct(),
                      lambda d, r: bw.train(bwp, d, r, verbose_eval=False),
                      lambda m, X: m.predict(X)),
        "lightgbm": (lambda X, y, w: lgb.Dataset(X, y, weight=w, params=lgp).construct(),
                     lambda d, r: lgb.train(lgp, d, r),
                     lambda m, X: m.predict(X)),
        "xgboost": (lambda X, y, w: xgb.QuantileDMatrix(X, y, weight=w, max_bin=256),
                    lambda d, r: xgb.train(xgp, d, r),
                    lambda m, X: m.inplace_predict(X)),
    }


def main():
    ap = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    ap.add_argument("--rounds", type=int, default=200)
    ap.add_argument("--threads", type=int, default=2)
    ap.add_argument("--objective", choices=("poisson", "tweedie"), default="poisson")
    ap.add_argument("--power", type=float, default=1.5, help="Tweedie variance power")
    ap.add_argument("--settings", default="lossguide,depthwise")
    ap.add_argument("--repeat", type=int, default=3)
    args = ap.parse_args()
    if not os.path.exists(DATA):
        sys.exit(f"freMTPL2 not found at {DATA} (the shared data folder)")
    X, rate, w = load()
    cut = int(0.8 * len(rate))
    power = 1.0 if args.objective == "poisson" else args.power
    print(f"# freMTPL2 {args.objective}: {cut} training / {len(rate) - cut} holdout policies x "
          f"{X.shape[1]} features, {args.rounds} rounds, {args.threads} threads, "
          f"learning rate 0.1, medians of {args.repeat} interleaved runs")
    print("| policy | library | train s | / faster of LightGBM, XGBoost | holdout deviance |")
    print("|---|---|---|---|---|")
    for setting in args.settings.split(","):
        libs = runners(args.objective, args.power, setting, args.threads)
        data = {name: make(X[:cut], rate[:cut], w[:cut]) for name, (make, _, _) in libs.items()}
        for name, (_, fit, _) in libs.items():
            fit(data[name], 2)  # warm-up (boostwood's JIT)
        seconds = {name: [] for name in libs}
        models = {}
        for _ in range(args.repeat):
            for name, (_, fit, _) in libs.items():
                t = time.perf_counter()
                models[name] = fit(data[name], args.rounds)
                seconds[name].append(time.perf_counter() - t)
        median = {name: statistics.median(s) for name, s in seconds.items()}
        faster = min(median["lightgbm"], median["xgboost"])
        for name, (_, _, predict) in libs.items():
            dev = deviance(rate[cut:], predict(models[name], X[cut:]), w[cut:], power)
            print(f"| {setting} | {name} | {median[name]:.2f} | {median[name] / faster:.2f} | "
                  f"{dev:.5f} |", flush=True)


if __name__ == "__main__":
    main()
