"""Training on a Dask LocalCluster: boostwood.dask against xgboost.dask and lightgbm.dask
on the same data, in the same run ([Q5] item 5).

Data: HIGGS-like rows (``bench_higgs.make_higgs_like``, 28 dense features, binary label),
``--rows`` training rows (2M by default) as a dask Array of ``--partitions`` row blocks,
persisted on the workers before any timer starts, and 200k test rows predicted on the
client. Every library: a fresh ``LocalCluster`` of ``--workers`` worker processes with 1
thread each (``nthread`` / ``n_jobs`` 1), a warm-up training on 1,000 rows first (numba's
kernels load from their cache; XGBoost's and LightGBM's start their collectives once),
then one timed call that builds the library's distributed dataset and trains ``--rounds``
rounds, depth 6 (LightGBM: 63 leaves, ``max_depth`` 6), learning rate 0.1, 255 bins.

Reported per library: the timed seconds, the time / the faster other library, test AUC,
and each worker's peak resident memory above what it held after the data were persisted
(``VmHWM`` minus ``VmRSS`` read on the worker, a fresh process per library), the largest
worker's and, in brackets, the smallest's. With ``--scaling``, boostwood alone on 1, 2 and 4 workers (more workers than
cores oversubscribe this machine: the table says how many cores there are).

Usage::

    python benchmarks/bench_dask.py [--rows 2000000] [--workers 2] [--scaling]
"""
import argparse
import os
import platform
import sys
import time

sys.path.insert(0, os.path.dirname(os.path.abspath(__file__)))
from bench_categorical import auc, commit  # noqa: E402
from bench_higgs import make_higgs_like  # noqa: E402


# (These three run on the workers through client.run: defined in this script, they travel
# by value; bench_higgs's and bench_categorical's twins would have to be importable there.)
def _status_kib(field):
    with open("/proc/self/status") as f:
        for line in f:
            if line.startswith(field):
                return int(line.split()[1])
    return 0


def _reset_peak():
    """Start the worker's peak (VmHWM) afresh where the kernel allows it; returns the
    resident KiB now."""
    try:
        with open("/proc/self/clear_refs", "w") as f:
            f.write("5")
    except OSError:
        pass
    return _status_kib("VmRSS")


def _peak():
    return _status_kib("VmHWM")


def fit_boostwood(client, X, y, a):
    import boostwood.dask as bwd
    params = dict(objective="binary:logistic", eta=0.1, max_depth=6, max_bin=255, nthread=1,
                  seed=0)
    out = bwd.train(client, params, bwd.DaskDataset(client, X, y), a.rounds)
    return out["booster"].predict


def fit_xgboost(client, X, y, a):
    import xgboost as xgb
    import xgboost.dask  # noqa: F401 (a submodule xgboost does not import)
    params = dict(objective="binary:logistic", eta=0.1, max_depth=6, max_bin=256,
                  tree_method="hist", nthread=1, seed=0)
    out = xgb.dask.train(client, params, xgb.dask.DaskDMatrix(client, X, y), a.rounds)
    booster = out["booster"]
    return lambda Xt: booster.inplace_predict(Xt)


def fit_lightgbm(client, X, y, a):
    import lightgbm as lgb
    model = lgb.DaskLGBMClassifier(client=client, n_estimators=a.rounds, learning_rate=0.1,
                                   max_depth=6, num_leaves=63, max_bin=255, n_jobs=1,
                                   verbose=-1, random_state=0)
    model.fit(X, y)
    local = model.to_local()
    return lambda Xt: local.predict_proba(Xt)[:, 1]


FITS = {"boostwood": fit_boostwood, "xgboost": fit_xgboost, "lightgbm": fit_lightgbm}


def run(name, n_workers, data, a):
    """(seconds, test AUC, the workers' peak MiB above their data, ascending) of one
    library on a fresh cluster."""
    import dask.array as da
    from distributed import Client, LocalCluster, wait
    X, y, Xt, yt = data
    with LocalCluster(n_workers=n_workers, threads_per_worker=1, processes=True,
                      dashboard_address=":0") as cluster, Client(cluster) as client:
        small = (da.from_array(X[:1000], chunks=(500, X.shape[1])),
                 da.from_array(y[:1000], chunks=500))
        warm = argparse.Namespace(**{**vars(a), "rounds": 2})
        FITS[name](client, *small, warm)
        chunk = -(-len(y) // a.partitions)
        Xd = da.from_array(X, chunks=(chunk, X.shape[1])).persist()
        yd = da.from_array(y, chunks=chunk).persist()
        wait([Xd, yd])
        base = client.run(_reset_peak)
        t0 = time.perf_counter()
        predict = FITS[name](client, Xd, yd, a)
        seconds = time.perf_counter() - t0
        peak = client.run(_peak)
        above = sorted((peak[w] - base[w]) / 1024 for w in peak)
    return seconds, auc(yt, predict(Xt)), above


def main():
    ap = argparse.ArgumentParser(description=__doc__.split("\n")[0])
    ap.add_argument("--rows", type=int, default=2_000_000)
    ap.add_argument("--test-rows", type=int, default=200_000)
    ap.add_argument("--rounds", type=int, default=100)
    ap.add_argument("--workers", type=int, default=2)
    ap.add_argument("--partitions", type=int, default=8)
    ap.add_argument("--libraries", default="boostwood,xgboost,lightgbm")
    ap.add_argument("--scaling", action="store_true")
    a = ap.parse_args()
    X, y = make_higgs_like(a.rows + a.test_rows, seed=0)[:2]
    data = (X[:a.rows], y[:a.rows], X[a.rows:], y[a.rows:])
    print(f"commit {commit()}; {platform.processor() or platform.machine()}, {os.cpu_count()} "
          f"cores; {a.rows} rows in {a.partitions} partitions, {a.rounds} rounds, "
          f"{a.workers} workers x 1 thread")
    print("| library | seconds | / faster other | test AUC | peak MiB above data: largest "
          "worker (smallest) |")
    print("|---|---|---|---|---|")
    res = {name: run(name, a.workers, data, a) for name in a.libraries.split(",")}
    for name, (s, area, mib) in res.items():
        others = [v[0] for k, v in res.items() if k != name]
        ratio = f"{s / min(others):.2f}x" if others else "-"
        print(f"| {name} | {s:.2f} | {ratio} | {area:.4f} | {mib[-1]:.0f} ({mib[0]:.0f}) |",
              flush=True)
    if a.scaling:
        print("\n| boostwood workers | seconds | test AUC | peak MiB above data (worker) |")
        print("|---|---|---|---|")
        for k in (1, 2, 4):
            s, area, mib = run("boostwood", k, data, a)
            print(f"| {k} | {s:.2f} | {area:.4f} | {mib[-1]:.0f} |", flush=True)


if __name__ == "__main__":
    main()
