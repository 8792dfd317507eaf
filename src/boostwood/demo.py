"""The mushroom demo of the lecture notes, on the bundled agaricus data.

    python -m boostwood.demo

Settings from the notes ("A Demo with xgboost"): binary:logistic, eta 0.05,
subsample 0.5, colsample_bytree 1.0, gamma 1.0, min_child_weight 1,
max_depth 3, 100 rounds. Prints the evaluation log and the test error.
"""
import argparse
import time

import numpy as np

from .boosting import train
from .data import Dataset
from .datasets import load_agaricus

MUSHROOM_PARAMS = {
    "objective": "binary:logistic", "eta": 0.05, "subsample": 0.5, "colsample_bytree": 1.0,
    "gamma": 1.0, "min_child_weight": 1, "max_depth": 3, "eval_metric": ["logloss", "error"],
    "seed": 0,
}
MUSHROOM_ROUNDS = 100


def main(argv=None):
    ap = argparse.ArgumentParser(description="Train the mushroom demo of the lecture notes.")
    ap.add_argument("--rounds", type=int, default=MUSHROOM_ROUNDS)
    ap.add_argument("--period", type=int, default=10, help="print the log every N rounds")
    args = ap.parse_args(argv)
    Xtr, ytr, Xte, yte, names = load_agaricus()
    dtrain = Dataset(Xtr, ytr, feature_names=names)
    dtest = Dataset(Xte, yte, feature_names=names, reference=dtrain)
    print(f"mushroom data: {Xtr.shape[0]} training rows, {Xte.shape[0]} test rows, "
          f"{Xtr.shape[1]} features")
    t = time.perf_counter()
    booster = train(MUSHROOM_PARAMS, dtrain, args.rounds, evals=[(dtrain, "train"), (dtest, "test")],
                    verbose_eval=args.period)
    seconds = time.perf_counter() - t
    error = float(np.mean((booster.predict(dtest) > 0.5) != yte))
    print(f"test error: {error:.4f}  ({args.rounds} rounds in {seconds:.2f} s)")
    return 0


if __name__ == "__main__":
    raise SystemExit(main())
