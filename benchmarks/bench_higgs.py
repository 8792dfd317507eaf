"""End-to-end benchmark on synthetic HIGGS-like data: boostwood vs LightGBM vs XGBoost.

Data: 28 dense features (21 "low-level" Gaussian-ish measurements and 7
"high-level" nonlinear combinations of them, as in HIGGS), a binary label from
a noisy nonlinear function with interactions; 80/20 split.

Each library runs in its own subprocess (so peak RSS is its own), after a JIT /
library warm-up on a small slice. Reported per library and growth policy:
binning (Dataset construction) time, training time, prediction time and
throughput, peak RSS, test AUC, and ratios to LightGBM.

Usage::

    python benchmarks/bench_higgs.py                    # 1M rows, 500 rounds (the issue's setting)
    python benchmarks/bench_higgs.py --rows 200000 --rounds 100   # quicker
"""
import argparse
import json
import os
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


SETTINGS = {
    "lossguide": dict(leaves=255, depth=0),
    "depthwise": dict(leaves=0, depth=8),
}


def _timed(warm_up, make_data, fit, predict, Xte):
    """Warm up, then time (binning, training, prediction) of one library."""
    warm_up()
    t = time.perf_counter()
    data = make_data()
    t_bin = time.perf_counter() - t
    t = time.perf_counter()
    model = fit(data)
    t_train = time.perf_counter() - t
    predict(model, Xte[:100])
    t = time.perf_counter()
    p = predict(model, Xte)
    return t_bin, t_train, time.perf_counter() - t, p


def _run_boostwood(Xtr, ytr, Xte, setting, rounds, threads):
    import boostwood as bw
    s = SETTINGS[setting]
    params = dict(objective="binary:logistic", eta=0.1, max_bin=255, nthread=threads,
                  grow_policy=setting, max_leaves=s["leaves"], max_depth=s["depth"],
                  min_child_weight=1e-3, min_data_in_leaf=20, reg_lambda=0.0)
    return _timed(lambda: bw.train(params, bw.Dataset(Xtr[:2000], ytr[:2000]), 2,
                                   verbose_eval=False),  # JIT warm-up
                  lambda: bw.Dataset(Xtr, ytr).construct(),
                  lambda d: bw.train(params, d, rounds, verbose_eval=False),
                  lambda b, X: b.predict(X), Xte)


def _run_lightgbm(Xtr, ytr, Xte, setting, rounds, threads):
    import lightgbm as lgb
    s = SETTINGS[setting]
    params = dict(objective="binary", learning_rate=0.1, max_bin=255, num_threads=threads,
                  num_leaves=s["leaves"] or 2 ** s["depth"], max_depth=s["depth"] or -1,
                  min_sum_hessian_in_leaf=1e-3, min_data_in_leaf=20, lambda_l2=0.0,
                  verbose=-1, deterministic=True, force_row_wise=True)
    return _timed(lambda: lgb.train(params, lgb.Dataset(Xtr[:2000], ytr[:2000]), 2),
                  lambda: lgb.Dataset(Xtr, ytr, params=params).construct(),
                  lambda d: lgb.train(params, d, rounds),
                  lambda b, X: b.predict(X), Xte)


def _run_xgboost(Xtr, ytr, Xte, setting, rounds, threads):
    import xgboost as xgb
    s = SETTINGS[setting]
    params = dict(objective="binary:logistic", eta=0.1, max_bin=256, nthread=threads,
                  tree_method="hist", grow_policy=setting, max_leaves=s["leaves"],
                  max_depth=s["depth"], min_child_weight=1e-3, reg_lambda=0.0)
    dte = xgb.DMatrix(Xte)  # prediction input built outside the timed region
    return _timed(lambda: xgb.train(params, xgb.DMatrix(Xtr[:2000], ytr[:2000]), 2),
                  lambda: xgb.QuantileDMatrix(Xtr, ytr, max_bin=256),
                  lambda d: xgb.train(params, d, rounds),
                  lambda b, X: b.predict(dte if X is Xte else xgb.DMatrix(X)), Xte)


RUNNERS = {"boostwood": _run_boostwood, "lightgbm": _run_lightgbm, "xgboost": _run_xgboost}


def child(args):
    """Run one library on one setting; print a JSON line."""
    data = np.load(args.data)
    Xtr, ytr, Xte, yte = data["Xtr"], data["ytr"], data["Xte"], data["yte"]
    t_bin, t_train, t_pred, p = RUNNERS[args.lib](Xtr, ytr, Xte, args.setting, args.rounds,
                                                  args.threads)
    from boostwood.boosting.metrics import roc_auc
    peak = resource.getrusage(resource.RUSAGE_SELF).ru_maxrss / 1024.0  # KiB -> MiB on Linux
    print(json.dumps(dict(lib=args.lib, setting=args.setting, bin_s=t_bin, train_s=t_train,
                          predict_s=t_pred, rows_per_s=len(Xte) / t_pred, peak_mib=peak,
                          auc=roc_auc(yte, p))))


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


def main():
    ap = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    ap.add_argument("--rows", type=int, default=1_000_000)
    ap.add_argument("--rounds", type=int, default=500)
    ap.add_argument("--threads", type=int, default=2)
    ap.add_argument("--libs", default="boostwood,lightgbm,xgboost")
    ap.add_argument("--settings", default="lossguide,depthwise")
    ap.add_argument("--child", action="store_true", help=argparse.SUPPRESS)
    ap.add_argument("--lib", help=argparse.SUPPRESS)
    ap.add_argument("--setting", help=argparse.SUPPRESS)
    ap.add_argument("--data", help=argparse.SUPPRESS)
    args = ap.parse_args()
    if args.child:
        return child(args)
    X, y = make_higgs_like(args.rows)
    cut = int(0.8 * args.rows)
    with tempfile.TemporaryDirectory() as tmp:
        path = os.path.join(tmp, "higgs.npz")
        np.savez(path, Xtr=X[:cut], ytr=y[:cut], Xte=X[cut:], yte=y[cut:])
        del X, y
        print(f"# {args.rows} rows x 28 features, {args.rounds} rounds, {args.threads} threads, "
              "255 bins, learning rate 0.1")
        st = startup_overhead()
        print(f"# boostwood import + first fit: cold {st['cold']:.1f} s (compiles kernels), "
              f"warm {st['warm']:.1f} s (numba cache)")
        results = []
        for setting in args.settings.split(","):
            for lib in args.libs.split(","):
                cmd = [sys.executable, __file__, "--child", "--lib", lib, "--setting", setting,
                       "--data", path, "--rounds", str(args.rounds), "--threads", str(args.threads)]
                r = subprocess.run(cmd, capture_output=True, text=True)
                if r.returncode != 0:
                    print(f"# {lib} {setting} failed:\n{r.stderr[-2000:]}")
                    continue
                results.append(json.loads(r.stdout.strip().splitlines()[-1]))
                print("#", results[-1], flush=True)
    report(results)


def report(results):
    hdr = ("| setting | library | binning s | training s | predict s | rows/s | peak MiB | "
           "test AUC | train / LGB | predict / LGB | memory / LGB | AUC - LGB |")
    print(hdr)
    print("|" + "---|" * 12)
    for r in results:
        ref = next((q for q in results if q["lib"] == "lightgbm" and q["setting"] == r["setting"]),
                   None)
        ratio = (lambda k: f"{r[k] / ref[k]:.2f}x") if ref else (lambda k: "-")
        dauc = f"{r['auc'] - ref['auc']:+.4f}" if ref else "-"
        print(f"| {r['setting']} | {r['lib']} | {r['bin_s']:.2f} | {r['train_s']:.1f} | "
              f"{r['predict_s']:.3f} | {r['rows_per_s']:.3g} | {r['peak_mib']:.0f} | "
              f"{r['auc']:.4f} | {ratio('train_s')} | {ratio('predict_s')} | "
              f"{ratio('peak_mib')} | {dauc} |")


if __name__ == "__main__":
    main()
