"""k-fold cross-validation: boostwood's ``cv`` against ``lightgbm.cv`` and ``xgboost.cv``.

The same HIGGS-like data and settings as ``bench_higgs.py`` (its ``--case`` data sets
too), ``nfold`` folds, every fold trained for ``--rounds`` rounds. Timed per library,
each in its own subprocess after a warm-up cv on a small slice: the whole call, from
the full Dataset to the per-round mean curves, fold construction and binning
included (boostwood's Dataset bins the full data when made, and cv bins each fold
again from its own training rows, as training a fold by hand would). Reported:
seconds, the ratio to the faster of LightGBM and XGBoost, and the last round's mean
test metric (they differ a little:
the libraries deal rows to folds differently).

boostwood trains ``min(nfold, nthread)`` folds side by side, each on its share of the
threads (see ``boostwood/boosting/_side_by_side.py``); ``--in-turn`` trains them one
after another, each on every thread, for comparison.

Usage::

    python benchmarks/bench_cv.py                          # 200k rows, 5 folds, 100 rounds
    python benchmarks/bench_cv.py --rows 1000000 --rounds 50 --repeat 2
"""
import argparse
import json
import os
import subprocess
import sys
import time

sys.path.insert(0, os.path.dirname(os.path.abspath(__file__)))
from bench_higgs import CASES, SETTINGS, TASK, WARM_UP_ROWS, _objective, make_case  # noqa: E402


def _params(lib, setting, threads, task):
    s = SETTINGS[setting]
    if lib == "lightgbm":
        return dict(learning_rate=0.1, max_bin=255, num_threads=threads,
                    num_leaves=s["leaves"] or 2 ** s["depth"], max_depth=s["depth"] or -1,
                    min_sum_hessian_in_leaf=1e-3, min_data_in_leaf=20, lambda_l2=0.0,
                    verbose=-1, deterministic=True, force_row_wise=True,
                    **_objective(lib, task))
    extra = dict(tree_method="hist", max_bin=256) if lib == "xgboost" else \
        dict(max_bin=255, min_data_in_leaf=20)
    return dict(eta=0.1, nthread=threads, grow_policy=setting, max_leaves=s["leaves"],
                max_depth=s["depth"], min_child_weight=1e-3, reg_lambda=0.0, **extra,
                **_objective(lib, task))


def _cv(lib, params, X, y, rounds, nfold, in_turn=False):
    """Run one library's cv; the last round's mean test metric."""
    if lib == "boostwood":
        import numba

        import boostwood as bw
        from boostwood.boosting._side_by_side import SideBySide
        numba.set_num_threads(params["nthread"])  # its Datasets bin on the run's threads
        SideBySide.enabled = not in_turn
        r = bw.cv(params, bw.Dataset(X, y), rounds, nfold=nfold, seed=0)
    elif lib == "lightgbm":
        import lightgbm as lgb
        r = lgb.cv(params, lgb.Dataset(X, y, params=params), rounds, nfold=nfold,
                   stratified=False, seed=0)
    else:
        import xgboost as xgb
        r = xgb.cv(params, xgb.DMatrix(X, y, nthread=params["nthread"]), rounds, nfold=nfold,
                   seed=0,
                   as_pandas=False)
    key = next(k for k in r if k.startswith(("test", "valid")) and k.endswith("-mean"))
    return key, float(r[key][-1])


def _child(args):
    X, y = make_case(args.case, args.rows)
    task = TASK[args.case]
    lib = "boostwood" if args.lib == "boostwood-in-turn" else args.lib
    params = _params(lib, args.setting, args.threads, task)
    w = slice(WARM_UP_ROWS)
    _cv(lib, params, X[w], y[w], 2, args.nfold, args.lib.endswith("in-turn"))
    t = time.perf_counter()
    metric, value = _cv(lib, params, X, y, args.rounds, args.nfold,
                        args.lib.endswith("in-turn"))
    print(json.dumps(dict(lib=args.lib, setting=args.setting, cv_s=time.perf_counter() - t,
                          metric=metric, value=value)))


def main():
    ap = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    ap.add_argument("--rows", type=int, default=200_000)
    ap.add_argument("--rounds", type=int, default=100)
    ap.add_argument("--nfold", type=int, default=5)
    ap.add_argument("--threads", type=int, default=2)
    ap.add_argument("--case", choices=CASES, default="higgs")
    ap.add_argument("--settings", default="lossguide,depthwise")
    ap.add_argument("--repeat", type=int, default=1)
    ap.add_argument("--in-turn", action="store_true",
                    help="also run boostwood with its folds in turn")
    ap.add_argument("--child", action="store_true", help=argparse.SUPPRESS)
    ap.add_argument("--lib", default="boostwood", help=argparse.SUPPRESS)
    ap.add_argument("--setting", default="lossguide", help=argparse.SUPPRESS)
    args = ap.parse_args()
    if args.child:
        return _child(args)
    libs = ["boostwood"] + (["boostwood-in-turn"] if args.in_turn else []) + \
        ["lightgbm", "xgboost"]
    print(f"# cv: case {args.case}, {args.rows} rows, {args.nfold} folds, {args.rounds} "
          f"rounds, {args.threads} threads, {os.cpu_count()} cores, runs interleaved")
    subprocess.run([sys.executable, "-m", "boostwood", "compile", "--quiet"], check=True)
    for setting in args.settings.split(","):
        runs = {lib: [] for lib in libs}
        for _ in range(args.repeat):
            for lib in libs:
                cmd = [sys.executable, __file__, "--child", "--lib", lib, "--setting", setting,
                       "--rows", str(args.rows), "--rounds", str(args.rounds), "--nfold",
                       str(args.nfold), "--threads", str(args.threads), "--case", args.case]
                r = subprocess.run(cmd, capture_output=True, text=True, check=True)
                res = json.loads(r.stdout.strip().splitlines()[-1])
                print("#", json.dumps(res))
                runs[lib].append(res)
        print(f"\n{setting}\n| library | cv s, run by run | / faster of LightGBM, XGBoost "
              "| last mean test metric |\n|---|---|---|---|")
        for lib in libs:
            others = [min(runs[o][i]["cv_s"] for o in ("lightgbm", "xgboost"))
                      for i in range(args.repeat)]
            secs = [r["cv_s"] for r in runs[lib]]
            ratio = ", ".join(f"{s / o:.2f}x" for s, o in zip(secs, others))
            last = runs[lib][-1]
            print(f"| {lib} | {', '.join(f'{s:.2f}' for s in secs)} | {ratio} | "
                  f"{last['metric']} {last['value']:.4f} |")


if __name__ == "__main__":
    main()
