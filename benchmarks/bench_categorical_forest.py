"""Random forests with string columns: boostwood's categorical splits against its own
ordinal codes and against scikit-learn's forest, which has no categorical splits and needs
the columns encoded first (ordinal codes, or one-hot) ([Q2] item 4).

Data (``../shared/data``, loaded as ``bench_categorical_quality.py`` loads them): adult,
bank_marketing (without ``duration``), titanic and penguins. Every forest: 100 trees,
scikit-learn's defaults otherwise (``max_features="sqrt"``, grown until pure, bootstrap),
``n_jobs=2``, ``random_state=0``; the same shuffled stratified folds (seed 0). Encoding
for scikit-learn (an ``OrdinalEncoder`` with missing as -1, or a ``OneHotEncoder``
ignoring unknown categories, fitted on the training fold) is inside its timer, as
boostwood's coding of the frame is inside its own; scikit-learn's forest refuses missing
numbers, so they are imputed with the training fold's median (boostwood learns where
missing values go). Printed per data set: mean log loss
(clipped at 1e-15) and accuracy over the folds with their standard deviations, and the
median fit time, boostwood native first.

Usage::

    python benchmarks/bench_categorical_forest.py --folds 3
"""
import argparse
import os
import platform
import sys
import time

import numpy as np

sys.path.insert(0, os.path.dirname(os.path.abspath(__file__)))
from bench_categorical import commit  # noqa: E402
from bench_categorical_quality import adult, bank_marketing, penguins, titanic  # noqa: E402

SETS = {"adult": adult, "bank_marketing": bank_marketing, "titanic": titanic,
        "penguins": penguins}


def _ordinal(X):
    return X.apply(lambda c: c.cat.codes.replace(-1, np.nan).astype(float)
                   if str(c.dtype) == "category" else c)


def _sklearn(encoding):
    from sklearn.compose import make_column_transformer
    from sklearn.ensemble import RandomForestClassifier
    from sklearn.impute import SimpleImputer
    from sklearn.pipeline import make_pipeline
    from sklearn.preprocessing import OneHotEncoder, OrdinalEncoder

    def fit(X, y):
        cats = [c for c in X.columns if str(X[c].dtype) == "category"]
        enc = OrdinalEncoder(handle_unknown="use_encoded_value", unknown_value=-1,
                             encoded_missing_value=-1) if encoding == "ordinal" else \
            OneHotEncoder(handle_unknown="ignore")
        nums = [c for c in X.columns if c not in cats]  # its forest refuses NaN: median
        pre = make_column_transformer((enc, cats), (SimpleImputer(strategy="median"), nums))
        return make_pipeline(pre, RandomForestClassifier(100, n_jobs=2, random_state=0)).fit(
            X, y)
    return fit


def _boostwood(ordinal):
    import boostwood as bw

    def fit(X, y):
        X = _ordinal(X) if ordinal else X
        est = bw.RandomForestClassifier(100, n_jobs=2, random_state=0).fit(X, y)
        return _Coded(est) if ordinal else est
    return fit


class _Coded:
    """A forest fitted on ordinal codes, predicting on the frame's codes."""

    def __init__(self, est):
        self.est = est

    def predict_proba(self, X):
        return self.est.predict_proba(_ordinal(X))


MODELS = {"boostwood native": _boostwood(False), "boostwood ordinal": _boostwood(True),
          "sklearn ordinal": _sklearn("ordinal"), "sklearn one-hot": _sklearn("onehot")}


def run(name, folds):
    from sklearn.model_selection import StratifiedKFold
    X, y, _, _ = SETS[name]()
    y = y.astype(int)
    out = {m: ([], [], []) for m in MODELS}
    split = StratifiedKFold(folds, shuffle=True, random_state=0).split(X, y)
    for train, test in split:
        for m, fit in MODELS.items():
            t0 = time.perf_counter()
            model = fit(X.iloc[train], y[train])
            seconds = time.perf_counter() - t0
            p = np.clip(model.predict_proba(X.iloc[test]), 1e-15, 1.0)
            loss = -np.mean(np.log(p[np.arange(len(test)), y[test]]))
            acc = np.mean(np.argmax(p, axis=1) == y[test])
            for lst, v in zip(out[m], (loss, acc, seconds)):
                lst.append(v)
            time.sleep(0.5)  # the other library's threads settle
    return out


def main():
    ap = argparse.ArgumentParser(description=__doc__.split("\n")[0])
    ap.add_argument("--sets", default=",".join(SETS))
    ap.add_argument("--folds", type=int, default=3)
    a = ap.parse_args()
    import boostwood as bw
    bw.RandomForestClassifier(2).fit(*adult()[:2])  # compile outside the timers
    print(f"commit {commit()}; {platform.processor() or platform.machine()}, {os.cpu_count()} "
          f"cores; {a.folds} folds, 100 trees, n_jobs=2")
    print("| data | model | log loss | accuracy | fit s (median) | vs native |")
    print("|---|---|---|---|---|---|")
    for name in a.sets.split(","):
        res = run(name, a.folds)
        base = np.median(res["boostwood native"][2])
        for m, (loss, acc, secs) in res.items():
            print(f"| {name} | {m} | {np.mean(loss):.4f} ± {np.std(loss):.4f} | "
                  f"{np.mean(acc):.4f} ± {np.std(acc):.4f} | {np.median(secs):.2f} | "
                  f"{np.median(secs) / base:.2f}x |", flush=True)


if __name__ == "__main__":
    main()
