"""Random forests on small real data sets: boostwood against scikit-learn.

``bench_forest.py`` measures 200k rows, where the histogram scan dominates; on
data sets of 10-20k rows the per-level bookkeeping and thread start-up weigh
more. Data from ``../shared/data`` (skipped when absent), a 75/25 split:
covertype_kaggle_subset (54 features, 44 of them binary, 7 classes) and
letter_recognition (16 features, 26 classes).

100 trees, scikit-learn's defaults (bootstrap, max_features="sqrt", fully grown),
boostwood on histograms (its default). JIT warmed first; best of 3 fits.

Reads the data with the tests' loaders (``tests/shared_data.py``), so it needs the
test extra (pandas, pytest) besides the bench one.

Usage::

    python benchmarks/bench_forest_small.py [--threads 2]
"""
import argparse
import os
import sys
import time

import numpy as np

HERE = os.path.dirname(os.path.abspath(__file__))
sys.path.insert(0, os.path.join(HERE, "..", "tests"))


def best_fit_seconds(make, X, y, repeats=3):
    best = np.inf
    for _ in range(repeats):
        est = make()
        t = time.perf_counter()
        est.fit(X, y)
        best = min(best, time.perf_counter() - t)
    return best, est


def main():
    ap = argparse.ArgumentParser()
    ap.add_argument("--threads", type=int, default=2)
    args = ap.parse_args()
    import pytest
    import boostwood as bw
    from sklearn import ensemble
    from shared_data import covertype, letter_recognition, split
    nj = args.threads
    print(f"100 trees, {nj} threads, best of 3 fits\n")
    print("| data | rows x features | library | training s | test accuracy "
          "| time / scikit-learn |")
    print("|---|---|---|---|---|---|")
    for loader in (covertype, letter_recognition):
        try:
            X, y, _ = loader()
        except pytest.skip.Exception as e:
            print(f"skipped {loader.__name__}: {e}")
            continue
        Xtr, Xte, ytr, yte, _, _ = split(X, y)
        bw.RandomForestClassifier(2).fit(Xtr[:500], ytr[:500])  # JIT
        ref = None
        for lib, make in (("scikit-learn", lambda: ensemble.RandomForestClassifier(
                              100, n_jobs=nj, random_state=0)),
                          ("boostwood", lambda: bw.RandomForestClassifier(
                              100, n_jobs=nj, random_state=0))):
            seconds, est = best_fit_seconds(make, Xtr, ytr)
            ref = ref or seconds
            acc = float(np.mean(est.predict(Xte) == yte))
            print(f"| {loader.__name__} | {Xtr.shape[0]} x {Xtr.shape[1]} | {lib} "
                  f"| {seconds:.2f} | {acc:.4f} | {seconds / ref:.2f}x |", flush=True)


if __name__ == "__main__":
    main()
