"""Random forest and CART: boostwood against scikit-learn, same data, same settings.

Data: the HIGGS-like rows of ``bench_higgs.py`` (28 dense features, binary label),
200k training and 50k test rows. Forests: both libraries on 2 threads (``n_jobs=2``).
Single trees: both on 1 thread (scikit-learn's tree has no ``n_jobs`` and runs on one;
boostwood's kernels run on numba's threads, set to 1 here), and boostwood again on 2
threads, marked as such.

* ``RandomForestClassifier``: 100 trees, bootstrap, max_features="sqrt",
  fully grown (scikit-learn's defaults); boostwood on histograms (255 bins,
  its default) and on exact values (``splitter="best"``).
* ``DecisionTreeClassifier``: exact split search, fully grown and depth 10.

Reported: training seconds, test accuracy and AUC, and time / scikit-learn's.
JIT warmed first; each fit runs once (a fit of 100 trees is long enough).

Usage::

    python benchmarks/bench_forest.py [--rows 200000] [--trees 100]
"""
import argparse
import os
import sys
import time

import numpy as np

sys.path.insert(0, os.path.dirname(os.path.abspath(__file__)))
from bench_higgs import make_higgs_like  # noqa: E402


def timed_fit(est, X, y):
    t = time.perf_counter()
    est.fit(X, y)
    return time.perf_counter() - t


def main():
    ap = argparse.ArgumentParser()
    ap.add_argument("--rows", type=int, default=200_000)
    ap.add_argument("--trees", type=int, default=100)
    args = ap.parse_args()
    import boostwood as bw
    from boostwood._config import threads_given_back
    from sklearn import ensemble, tree
    from sklearn.metrics import roc_auc_score
    X, y = make_higgs_like(args.rows + 50_000, seed=0)
    Xtr, ytr, Xte, yte = X[:args.rows], y[:args.rows], X[args.rows:], y[args.rows:]
    bw.RandomForestClassifier(2).fit(Xtr[:3000], ytr[:3000])  # JIT
    bw.RandomForestClassifier(2, splitter="best").fit(Xtr[:3000], ytr[:3000])
    bw.DecisionTreeClassifier().fit(Xtr[:3000], ytr[:3000])
    runs = [
        ("forest", "scikit-learn", 2, ensemble.RandomForestClassifier(
            args.trees, n_jobs=2, random_state=0)),
        ("forest", "boostwood hist", 2, bw.RandomForestClassifier(
            args.trees, n_jobs=2, random_state=0)),
        ("forest", "boostwood exact", 2, bw.RandomForestClassifier(
            args.trees, n_jobs=2, random_state=0, splitter="best")),
        ("tree, full depth", "scikit-learn", 1, tree.DecisionTreeClassifier(random_state=0)),
        ("tree, full depth", "boostwood exact", 1, bw.DecisionTreeClassifier()),
        ("tree, full depth", "boostwood exact", 2, bw.DecisionTreeClassifier()),
        ("tree, depth 10", "scikit-learn", 1, tree.DecisionTreeClassifier(max_depth=10,
                                                                          random_state=0)),
        ("tree, depth 10", "boostwood exact", 1, bw.DecisionTreeClassifier(max_depth=10)),
        ("tree, depth 10", "boostwood exact", 2, bw.DecisionTreeClassifier(max_depth=10)),
    ]
    print(f"{args.rows} training rows x {X.shape[1]} features, {len(yte)} test rows, "
          f"{args.trees} trees per forest; threads as in the table (scikit-learn's tree "
          f"has one); each fit once, after a warm-up of every kernel\n")
    print("| model | library | threads | training s | test accuracy | test AUC | "
          "time / scikit-learn |")
    print("|---|---|---|---|---|---|---|")
    ref = {}
    for model, lib, threads, est in runs:
        with threads_given_back(threads):  # numba's threads for this fit (and predict)
            seconds = timed_fit(est, Xtr, ytr)
            proba = est.predict_proba(Xte)[:, 1]
        acc = float(np.mean((proba > 0.5) == yte))
        ref.setdefault(model, seconds)
        print(f"| {model} | {lib} | {threads} | {seconds:.2f} | {acc:.4f} | "
              f"{roc_auc_score(yte, proba):.4f} | {seconds / ref[model]:.2f}x |", flush=True)


if __name__ == "__main__":
    main()
