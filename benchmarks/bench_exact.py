"""Exact greedy and approximate split finding: boostwood against XGBoost.

Data: the HIGGS-like rows of ``bench_higgs.py`` (28 dense features), cast to
float32 (XGBoost's precision, so both see the same distinct values), 80/20
split. Binary logistic loss, depth 6, learning rate 0.1, 2 threads for everything
timed in both libraries (boostwood's Dataset and XGBoost's DMatrix included), other
parameters at each library's defaults. Approximate splits: about 256 candidates per
feature in both (boostwood ``sketch_eps=1/256``, XGBoost's ``max_bin=256``).

Reported per method: training time (boostwood's includes sorting the columns
once, XGBoost's includes building its column pages), test AUC, and the ratio
to XGBoost's exact training time measured in the same run. Each library and
method runs in its own process after a warm-up (JIT compile / library load).

Usage::

    python benchmarks/bench_exact.py                      # 200k rows, 100 rounds
    python benchmarks/bench_exact.py --rows 50000 --rounds 20
"""
import argparse
import json
import os
import subprocess
import sys
import tempfile
import time

import numpy as np

sys.path.insert(0, os.path.dirname(os.path.abspath(__file__)))
from bench_higgs import make_higgs_like  # noqa: E402

METHODS = {
    "boostwood exact": ("boostwood", dict(tree_method="exact")),
    # about 256 candidates per feature, as XGBoost's approx takes max_bin=256 of them
    "boostwood approx global": ("boostwood", dict(tree_method="approx", approx_proposal="global",
                                                  sketch_eps=1 / 256)),
    # the same, proposed from about 200,000 rows drawn by row id (all of them below that)
    "boostwood approx global sampled": ("boostwood", dict(tree_method="approx",
                                                          sketch_eps=1 / 256,
                                                          sketch_sample_cnt=200_000)),
    "boostwood approx local": ("boostwood", dict(tree_method="approx", approx_proposal="local",
                                                 sketch_eps=1 / 256)),
    "boostwood hist": ("boostwood", dict(tree_method="hist")),
    "xgboost exact": ("xgboost", dict(tree_method="exact")),
    "xgboost approx": ("xgboost", dict(tree_method="approx")),
}


def run_one(name, Xtr, ytr, Xte, yte, rounds, threads, depth=6):
    """Train one method; returns (training seconds, test AUC)."""
    lib, extra = METHODS[name]
    params = dict(objective="binary:logistic", eta=0.1, max_depth=depth, nthread=threads,
                  **extra)
    if lib == "boostwood":
        import numba

        import boostwood as bw
        numba.set_num_threads(threads)  # the Dataset bins on as many threads as XGBoost's
        bw.train(params, bw.Dataset(Xtr[:3000], ytr[:3000]), 2, verbose_eval=False)  # JIT
        t = time.perf_counter()
        model = bw.train(params, bw.Dataset(Xtr, ytr), rounds, verbose_eval=False)
        seconds = time.perf_counter() - t
        pred = model.predict(Xte)
    else:
        import xgboost as xgb
        xgb.train(params, xgb.DMatrix(Xtr[:3000], ytr[:3000], nthread=threads), 2)
        t = time.perf_counter()
        model = xgb.train(params, xgb.DMatrix(Xtr, ytr, nthread=threads), rounds)
        seconds = time.perf_counter() - t
        pred = model.predict(xgb.DMatrix(Xte))
    from boostwood.boosting.metrics import roc_auc
    return seconds, roc_auc(yte, pred)


def make_data(rows, seed=0):
    X, y = make_higgs_like(rows, seed=seed)
    X = X.astype(np.float32).astype(np.float64)
    cut = int(0.8 * rows)
    return X[:cut], y[:cut], X[cut:], y[cut:]


def in_subprocess(name, path, rounds, threads, depth=6):
    cmd = [sys.executable, os.path.abspath(__file__), "--child", name, "--data", path,
           "--rounds", str(rounds), "--threads", str(threads), "--depth", str(depth)]
    r = subprocess.run(cmd, capture_output=True, text=True)
    if r.returncode != 0:
        raise RuntimeError(f"{name} failed:\n{r.stderr[-2000:]}")
    return json.loads(r.stdout.strip().splitlines()[-1])


def main():
    ap = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    ap.add_argument("--rows", type=int, default=200_000)
    ap.add_argument("--rounds", type=int, default=100)
    ap.add_argument("--threads", type=int, default=2)
    ap.add_argument("--depth", type=int, default=6)
    ap.add_argument("--methods", default=",".join(METHODS))
    ap.add_argument("--child", help=argparse.SUPPRESS)
    ap.add_argument("--data", help=argparse.SUPPRESS)
    args = ap.parse_args()
    if args.child:
        d = np.load(args.data)
        s, auc = run_one(args.child, d["Xtr"], d["ytr"], d["Xte"], d["yte"], args.rounds,
                         args.threads, args.depth)
        print(json.dumps(dict(seconds=s, auc=auc)))
        return
    print(f"# {args.rows} rows x 28 features (80% train), depth {args.depth}, {args.rounds} "
          f"rounds, {args.threads} threads, learning rate 0.1")
    with tempfile.TemporaryDirectory() as tmp:
        path = os.path.join(tmp, "data.npz")
        Xtr, ytr, Xte, yte = make_data(args.rows)
        np.savez(path, Xtr=Xtr, ytr=ytr, Xte=Xte, yte=yte)
        results = {}
        for name in args.methods.split(","):
            results[name] = in_subprocess(name, path, args.rounds, args.threads, args.depth)
            print("#", name, results[name], flush=True)
    ref = results.get("xgboost exact")
    print("| method | training s | test AUC | time / XGBoost exact |")
    print("|---|---|---|---|")
    for name, r in results.items():
        ratio = f"{r['seconds'] / ref['seconds']:.2f}x" if ref else "-"
        print(f"| {name} | {r['seconds']:.2f} | {r['auc']:.4f} | {ratio} |")


if __name__ == "__main__":
    main()
