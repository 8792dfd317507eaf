"""Two everyday training set-ups: a validation set scored every round, and row bagging.

``bench_higgs.py`` times plain fits. Most real fits also score a validation set each
round (for early stopping) or sample rows (``subsample``, LightGBM's bagging). Both add
per-round work outside tree growth: the validation margins, the metric (AUC sorts the
predictions every round) and the margins of the rows left out of the bag. This script
times, on HIGGS-like data (``bench_higgs.make_higgs_like``, 80/20 split), each library's
training in three set-ups:

* ``plain``: no validation set, every row;
* ``auc-valid``: the 20 % held out scored with AUC every round;
* ``bagging``: 80 % of the rows drawn each round (XGBoost ``subsample``, LightGBM
  ``bagging_fraction`` with ``bagging_freq=1``).

Each (library, set-up) runs in its own subprocess after a warm-up on a small slice; with
``--repeat`` the runs are interleaved and the tables show medians. Reported: training
seconds, the seconds the set-up adds to ``plain``, and boostwood's ratio to the faster
of LightGBM and XGBoost.

Usage::

    python benchmarks/bench_eval_bagging.py --rows 1000000 --rounds 50 --repeat 2
"""
import argparse
import json
import os
import sys
import tempfile
import time

import numpy as np

sys.path.insert(0, os.path.dirname(os.path.abspath(__file__)))
from bench_higgs import (SETTINGS, boostwood_params, make_higgs_like,  # noqa: E402
                         run_child)

SETUPS = ("plain", "auc-valid", "bagging")
LIBS = ("boostwood", "lightgbm", "xgboost")


def _fit_boostwood(Xtr, ytr, Xva, yva, setting, setup, rounds, threads):
    import boostwood as bw
    p = boostwood_params(setting, threads)
    if setup == "bagging":
        p["subsample"] = 0.8
    if setup == "auc-valid":
        p["eval_metric"] = "auc"
    w = slice(20_000)
    bw.train(p, bw.Dataset(Xtr[w], ytr[w]), 2,
             evals=[(bw.Dataset(Xva[w], yva[w]), "v")], verbose_eval=False)
    d = bw.Dataset(Xtr, ytr)
    d.construct()
    evals = [(bw.Dataset(Xva, yva, reference=d), "valid")] if setup == "auc-valid" else []
    for v, _ in evals:
        v.construct()
    t = time.perf_counter()
    bw.train(p, d, rounds, evals=evals, verbose_eval=False)
    return time.perf_counter() - t


def _fit_lightgbm(Xtr, ytr, Xva, yva, setting, setup, rounds, threads):
    import lightgbm as lgb
    s = SETTINGS[setting]
    p = dict(objective="binary", learning_rate=0.1, max_bin=255, num_threads=threads,
             num_leaves=s["leaves"] or 2 ** s["depth"], max_depth=s["depth"] or -1,
             min_sum_hessian_in_leaf=1e-3, min_data_in_leaf=20, lambda_l2=0.0, verbose=-1,
             deterministic=True, force_row_wise=True, metric="auc")
    if setup == "bagging":
        p.update(bagging_fraction=0.8, bagging_freq=1)
    w = slice(20_000)
    lgb.train(p, lgb.Dataset(Xtr[w], ytr[w]), 2)
    d = lgb.Dataset(Xtr, ytr, params=p).construct()
    valid = [lgb.Dataset(Xva, yva, reference=d).construct()] if setup == "auc-valid" else []
    t = time.perf_counter()
    lgb.train(p, d, rounds, valid_sets=valid)
    return time.perf_counter() - t


def _fit_xgboost(Xtr, ytr, Xva, yva, setting, setup, rounds, threads):
    import xgboost as xgb
    s = SETTINGS[setting]
    p = dict(objective="binary:logistic", eta=0.1, max_bin=256, nthread=threads,
             tree_method="hist", grow_policy=setting, max_leaves=s["leaves"],
             max_depth=s["depth"], min_child_weight=1e-3, reg_lambda=0.0, eval_metric="auc")
    if setup == "bagging":
        p["subsample"] = 0.8
    w = slice(20_000)
    xgb.train(p, xgb.DMatrix(Xtr[w], ytr[w]), 2)
    d = xgb.QuantileDMatrix(Xtr, ytr, max_bin=256)
    evals = [(xgb.QuantileDMatrix(Xva, yva, ref=d), "valid")] if setup == "auc-valid" else []
    t = time.perf_counter()
    xgb.train(p, d, rounds, evals=evals, verbose_eval=False)
    return time.perf_counter() - t


FITS = {"boostwood": _fit_boostwood, "lightgbm": _fit_lightgbm, "xgboost": _fit_xgboost}


def child(args):
    data = np.load(args.data)
    seconds = FITS[args.lib](data["Xtr"], data["ytr"], data["Xva"], data["yva"],
                             args.setting, args.setup, args.rounds, args.threads)
    print(json.dumps(dict(lib=args.lib, setting=args.setting, setup=args.setup,
                          seconds=seconds)))


def report(results, settings):
    med = {}
    for r in results:
        med.setdefault((r["setting"], r["setup"], r["lib"]), []).append(r["seconds"])
    med = {k: float(np.median(v)) for k, v in med.items()}
    print("| setting | set-up | library | training s | added to plain s | / faster other |")
    print("|---|---|---|---|---|---|")
    for setting in settings:
        for setup in SETUPS:
            others = [med.get((setting, setup, lib)) for lib in ("lightgbm", "xgboost")]
            others = [o for o in others if o is not None]
            best = min(others) if others else None
            for lib in LIBS:
                t = med.get((setting, setup, lib))
                if t is None:
                    continue
                plain = med.get((setting, "plain", lib))
                added = f"{t - plain:+.2f}" if plain is not None and setup != "plain" else ""
                ratio = f"{t / best:.2f}x" if best else ""
                print(f"| {setting} | {setup} | {lib} | {t:.2f} | {added} | {ratio} |")


def main():
    ap = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    ap.add_argument("--rows", type=int, default=1_000_000)
    ap.add_argument("--rounds", type=int, default=50)
    ap.add_argument("--threads", type=int, default=2)
    ap.add_argument("--settings", default="lossguide,depthwise")
    ap.add_argument("--libs", default=",".join(LIBS))
    ap.add_argument("--repeat", type=int, default=1, help="runs of each, interleaved")
    ap.add_argument("--child", action="store_true", help=argparse.SUPPRESS)
    ap.add_argument("--lib", help=argparse.SUPPRESS)
    ap.add_argument("--setting", help=argparse.SUPPRESS)
    ap.add_argument("--setup", help=argparse.SUPPRESS)
    ap.add_argument("--data", help=argparse.SUPPRESS)
    args = ap.parse_args()
    if args.child:
        return child(args)
    X, y = make_higgs_like(args.rows)
    cut = int(0.8 * args.rows)
    settings = args.settings.split(",")
    print(f"# {cut} training rows, {args.rows - cut} validation rows x {X.shape[1]} features, "
          f"{args.rounds} rounds, {args.threads} threads, {os.cpu_count()} cores"
          + (f", median of {args.repeat} interleaved runs" if args.repeat > 1 else ""))
    results = []
    with tempfile.TemporaryDirectory() as tmp:
        path = os.path.join(tmp, "data.npz")
        np.savez(path, Xtr=X[:cut], ytr=y[:cut], Xva=X[cut:], yva=y[cut:])
        del X, y
        runs = [(s, u, lib) for _ in range(args.repeat) for s in settings for u in SETUPS
                for lib in args.libs.split(",")]
        for setting, setup, lib in runs:
            cmd = [sys.executable, __file__, "--child", "--lib", lib, "--setting", setting,
                   "--setup", setup, "--data", path, "--rounds", str(args.rounds),
                   "--threads", str(args.threads)]
            out = run_child(cmd, f"{lib} {setting} {setup}")
            if out is not None:
                results.append(out)
    report(results, settings)


if __name__ == "__main__":
    main()
