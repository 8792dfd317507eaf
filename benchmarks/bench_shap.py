"""SHAP values (pred_contribs) and interaction values: boostwood against XGBoost.

Data: 10k HIGGS-like rows of ``bench_higgs.py`` (28 dense features, float32);
each library explains its own model of 100 trees of depth 6 (binary logistic,
learning rate 0.1, trained on 50k rows), so both walk trees of the same shape
(full depth-6 trees: 64 leaves). 2 threads, JIT warmed first; best of 3.
Interaction values (28 x 28 per row, ~30x the work) are timed on 1,000 rows.

Usage::

    python benchmarks/bench_shap.py [--rows 10000] [--trees 100] [--depth 6]
"""
import argparse
import os
import sys
import time

import numpy as np

sys.path.insert(0, os.path.dirname(os.path.abspath(__file__)))
from bench_higgs import make_higgs_like  # noqa: E402


def best_of(fn, repeat=3):
    times = []
    for _ in range(repeat):
        t = time.perf_counter()
        fn()
        times.append(time.perf_counter() - t)
    return min(times)


def main():
    ap = argparse.ArgumentParser()
    ap.add_argument("--rows", type=int, default=10_000)
    ap.add_argument("--trees", type=int, default=100)
    ap.add_argument("--depth", type=int, default=6)
    ap.add_argument("--threads", type=int, default=2)
    args = ap.parse_args()
    import boostwood as bw
    import xgboost as xgb
    X, y = make_higgs_like(50_000 + args.rows, seed=0)
    X = X.astype(np.float32)
    Xtr, ytr, Xex = X[:50_000], y[:50_000], X[50_000:]
    params = dict(objective="binary:logistic", eta=0.1, max_depth=args.depth,
                  nthread=args.threads)
    ours = bw.train(params, bw.Dataset(Xtr, ytr), args.trees, verbose_eval=False)
    ref = xgb.train(params, xgb.DMatrix(Xtr, ytr), args.trees)
    dm, dm_small = xgb.DMatrix(Xex), xgb.DMatrix(Xex[:1000])
    ours.predict(Xex[:50], pred_contribs=True)  # JIT
    ours.predict(Xex[:5], pred_interactions=True)
    rows = [
        ("pred_contribs", args.rows,
         best_of(lambda: ours.predict(Xex, pred_contribs=True)),
         best_of(lambda: ref.predict(dm, pred_contribs=True))),
        ("pred_interactions", 1000,
         best_of(lambda: ours.predict(Xex[:1000], pred_interactions=True), 1),
         best_of(lambda: ref.predict(dm_small, pred_interactions=True), 1)),
    ]
    phi = ours.predict(Xex, pred_contribs=True)
    err = np.abs(phi.sum(axis=1) - ours.predict(Xex, output_margin=True)).max()
    print(f"{args.trees} trees of depth {args.depth}, {X.shape[1]} features, "
          f"{args.threads} threads; local accuracy of boostwood's values: {err:.1e}\n")
    print("| what | rows | boostwood s | xgboost s | boostwood / xgboost |")
    print("|---|---|---|---|---|")
    for name, n, a, b in rows:
        print(f"| {name} | {n} | {a:.3f} | {b:.3f} | {a / b:.2f}x |")


if __name__ == "__main__":
    main()
