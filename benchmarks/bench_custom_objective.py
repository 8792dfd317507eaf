"""A compiled custom objective against the built-in one it re-implements.

Squared error written as ``@boostwood.objective def f(label, margin)`` runs inside
the gradient kernel; this measures what that costs against ``reg:squarederror``
(and, for reference, the XGBoost-style Python callable) on 1M rows x 28
features, 100 rounds of depth 6, 2 threads, JIT warmed up first.

Usage::

    python benchmarks/bench_custom_objective.py [--rows 1000000] [--rounds 100]
"""
import argparse
import os
import sys
import time

import numpy as np

sys.path.insert(0, os.path.dirname(os.path.abspath(__file__)))
from bench_higgs import make_higgs_like  # noqa: E402

import boostwood as bw  # noqa: E402


@bw.objective
def squared_error(label, margin):
    return margin - label, 1.0


def python_squared_error(preds, dtrain):
    return preds - dtrain.get_label(), np.ones_like(preds)


def main():
    ap = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    ap.add_argument("--rows", type=int, default=1_000_000)
    ap.add_argument("--rounds", type=int, default=100)
    ap.add_argument("--repeats", type=int, default=3)
    args = ap.parse_args()
    X, _ = make_higgs_like(args.rows)
    y = X[:, 21] * 2 + X[:, 1] * X[:, 4] + np.random.default_rng(1).normal(size=args.rows)
    d = bw.Dataset(X, y).construct()
    params = dict(objective="reg:squarederror", base_score=0.0, max_depth=6, eta=0.1, nthread=2)
    variants = {"built-in reg:squarederror": None, "compiled @boostwood.objective": squared_error,
                "Python callable obj(preds, dtrain)": python_squared_error}
    small = bw.Dataset(X[:2000], y[:2000])
    for obj in variants.values():  # JIT warm-up of every path
        bw.train(params, small, 2, verbose_eval=False, obj=obj)
    times = {name: [] for name in variants}
    for _ in range(args.repeats):  # interleaved, so machine noise hits all alike
        for name, obj in variants.items():
            t = time.perf_counter()
            bw.train(params, d, args.rounds, verbose_eval=False, obj=obj)
            times[name].append(time.perf_counter() - t)
    base = min(times["built-in reg:squarederror"])
    print(f"# {args.rows} rows x 28, {args.rounds} rounds, depth 6, 2 threads; best of "
          f"{args.repeats}")
    print("| objective | training s | / built-in |")
    print("|---|---|---|")
    for name, ts in times.items():
        print(f"| {name} | {min(ts):.2f} | {min(ts) / base:.2f}x |")


if __name__ == "__main__":
    main()
