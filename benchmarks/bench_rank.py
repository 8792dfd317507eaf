"""Learning to rank: boostwood vs LightGBM vs XGBoost on synthetic web-search-like data.

Data: ``--queries`` queries (default 50,000) of 5 to 35 documents each (about 1M rows
in all), 40 dense features: 30 document features, 10 query features (one value per
query, repeated on its rows), and a relevance label 0..4 from a noisy nonlinear
function of both, skewed towards 0 as in web search (a held-out set of 10,000 queries
scores the models).

Every library gets the same: LambdaMART with NDCG gain 2^y - 1, pairs among the top 30
positions (LightGBM's ``lambdarank`` default truncation level; boostwood's
``lambdarank`` is its twin; XGBoost's ``rank:ndcg`` with ``lambdarank_pair_method=topk``
and ``lambdarank_num_pair_per_sample=30``), leaf-wise trees of 31 leaves, eta 0.1,
255 bins, min_data_in_leaf 20 (XGBoost has no such limit), min hessian 1e-3, no L2,
the rows already sorted by query (XGBoost needs that), every library's binning and
training on the same number of threads. Each library runs in its own subprocess, after
a 2-round warm-up fit on 2,000 queries.

Reported: binning (Dataset construction) and training seconds, the ratio of
boostwood's training time to the faster other library's, NDCG@10 on the test queries
(boostwood's metric, ties averaged, a query without a relevant document skipped, on
every library's predictions), and peak memory of construct + train (``VmHWM`` after
resetting it once the data are loaded), all taken by bench_higgs.py's ``_timed`` (which
also times prediction, outside the training figures).

Usage::

    python benchmarks/bench_rank.py                       # 50k queries, 100 rounds, 2 threads
    python benchmarks/bench_rank.py --queries 5000 --rounds 20    # quicker
    python benchmarks/bench_rank.py --repeat 3            # interleaved runs, medians
"""
import argparse
import json
import os
import statistics
import sys
import tempfile

import numpy as np

sys.path.insert(0, os.path.dirname(os.path.abspath(__file__)))
from bench_higgs import _timed, run_child  # noqa: E402

WARM_UP_QUERIES = 2000
TOP_K = 30


def make_ranking(n_queries, seed=0):
    """(X, y, group sizes) of ``n_queries`` queries of 5..35 documents."""
    r = np.random.default_rng(seed)
    sizes = r.integers(5, 36, n_queries)
    n = int(sizes.sum())
    doc = r.normal(size=(n, 30))
    query = np.repeat(r.normal(size=(n_queries, 10)), sizes, axis=0)
    score = (doc[:, 0] + 0.7 * doc[:, 1] * doc[:, 2] + np.sin(2 * doc[:, 3])
             + 0.5 * np.abs(doc[:, 4]) + 0.6 * doc[:, 5] * query[:, 0]
             + 0.4 * (doc[:, 6] > query[:, 1]) + 0.8 * r.normal(size=n))
    y = np.digitize(score, [0.8, 1.8, 2.6, 3.3]).astype(np.float64)
    return np.hstack([doc, query]), y, sizes


def _common():
    return dict(max_bin=255, min_data_in_leaf=20)


def _run_boostwood(Xtr, ytr, gtr, Xte, rounds, threads):
    import numba

    import boostwood as bw
    numba.set_num_threads(threads)
    params = dict(objective="lambdarank", eta=0.1, nthread=threads, grow_policy="lossguide",
                  max_leaves=31, max_depth=0, min_child_weight=1e-3, reg_lambda=0.0,
                  lambdarank_num_pair_per_sample=TOP_K, verbosity=0, **_common())
    w = int(gtr[:WARM_UP_QUERIES].sum())

    def warm_up():
        bw.train(params, bw.Dataset(Xtr[:w], ytr[:w], group=gtr[:WARM_UP_QUERIES]), 2)

    return _timed(warm_up, lambda: bw.Dataset(Xtr, ytr, group=gtr).construct(),
                  lambda d: bw.train(params, d, rounds), lambda b, X: b.predict(X), Xte)


def _run_lightgbm(Xtr, ytr, gtr, Xte, rounds, threads):
    import lightgbm as lgb
    params = dict(objective="lambdarank", learning_rate=0.1, num_threads=threads,
                  num_leaves=31, max_depth=-1, min_sum_hessian_in_leaf=1e-3, lambda_l2=0.0,
                  lambdarank_truncation_level=TOP_K, verbose=-1, deterministic=True,
                  force_row_wise=True, **_common())
    w = int(gtr[:WARM_UP_QUERIES].sum())
    return _timed(
        lambda: lgb.train(params, lgb.Dataset(Xtr[:w], ytr[:w], group=gtr[:WARM_UP_QUERIES]),
                          2),
        lambda: lgb.Dataset(Xtr, ytr, group=gtr, params=params).construct(),
        lambda d: lgb.train(params, d, rounds),
        lambda b, X: b.predict(X, num_threads=threads), Xte)


def _run_xgboost(Xtr, ytr, gtr, Xte, rounds, threads):
    import xgboost as xgb
    params = dict(objective="rank:ndcg", eta=0.1, nthread=threads, tree_method="hist",
                  grow_policy="lossguide", max_leaves=31, max_depth=0, min_child_weight=1e-3,
                  reg_lambda=0.0, max_bin=255, lambdarank_pair_method="topk",
                  lambdarank_num_pair_per_sample=TOP_K)
    qid = np.repeat(np.arange(len(gtr)), gtr)
    w = int(gtr[:WARM_UP_QUERIES].sum())
    return _timed(
        lambda: xgb.train(params, xgb.QuantileDMatrix(Xtr[:w], ytr[:w], qid=qid[:w],
                                                      max_bin=255, nthread=threads), 2),
        lambda: xgb.QuantileDMatrix(Xtr, ytr, qid=qid, max_bin=255, nthread=threads),
        lambda d: xgb.train(params, d, rounds),
        lambda b, X: b.inplace_predict(X), Xte)


RUNNERS = {"boostwood": _run_boostwood, "lightgbm": _run_lightgbm, "xgboost": _run_xgboost}


def ndcg_at_10(y, pred, sizes):
    from boostwood.boosting.metrics import get_metric
    from boostwood.data.queries import queries_from
    from boostwood.data.rowinfo import RowInfo
    info = RowInfo.of(y, queries=queries_from(len(y), group=sizes))
    return get_metric("ndcg@10", {}).evaluate(info, np.asarray(pred, dtype=np.float64))


def child(args):
    data = np.load(args.data)
    out, pred = RUNNERS[args.lib](data["Xtr"], data["ytr"], data["gtr"], data["Xte"],
                                  args.rounds, args.threads)
    out["ndcg10"] = ndcg_at_10(data["yte"], pred, data["gte"])
    print(json.dumps(dict(lib=args.lib, threads=args.threads, **out)))


def _medians(results):
    groups = {}
    for r in results:
        groups.setdefault((r["threads"], r["lib"]), []).append(r)
    out = {k: {f: statistics.median(r[f] for r in rs) for f in rs[0]
               if f not in ("lib", "threads")} for k, rs in groups.items()}
    for (threads, lib), row in out.items():
        row["runs"] = [r["train_s"] for r in groups[(threads, lib)]]
    return out


def report(results, args, n_train, n_test):
    rows = _medians(results)
    print(f"\n# {args.queries:,} training queries ({n_train:,} rows), {n_test:,} test rows, "
          f"40 features, {args.rounds} rounds, lambdarank top {TOP_K}, 31 leaves; medians "
          f"of {args.repeat} run(s)")
    for threads in sorted({t for t, _ in rows}):
        others = [rows[(threads, lib)]["train_s"] for lib in ("lightgbm", "xgboost")
                  if (threads, lib) in rows]
        best = min(others) if others else float("nan")
        print(f"\n## {threads} thread(s)\n")
        print("| library | binning s | training s | training / faster other | NDCG@10 | "
              "peak MiB | added MiB | training runs s |")
        print("|---|---|---|---|---|---|---|---|")
        for lib in ("boostwood", "lightgbm", "xgboost"):
            r = rows.get((threads, lib))
            if r is None:
                continue
            print(f"| {lib} | {r['bin_s']:.2f} | {r['train_s']:.2f} | "
                  f"{r['train_s'] / best:.2f}x | {r['ndcg10']:.4f} | {r['peak_mib']:.0f} | "
                  f"{r['added_mib']:.0f} | {', '.join(f'{t:.2f}' for t in r['runs'])} |")
        mine = rows.get((threads, "boostwood"), {}).get("runs", [])
        others = [rows[(threads, lib)]["runs"] for lib in ("lightgbm", "xgboost")
                  if (threads, lib) in rows]
        if mine and others and all(len(o) == len(mine) for o in others):
            print("\nboostwood / the faster other, run by run: " + ", ".join(
                f"{m / min(o[i] for o in others):.2f}x" for i, m in enumerate(mine)))


def main():
    ap = argparse.ArgumentParser(description=__doc__.split("\n")[0])
    ap.add_argument("--queries", type=int, default=50_000)
    ap.add_argument("--test-queries", type=int, default=10_000)
    ap.add_argument("--rounds", type=int, default=100)
    ap.add_argument("--threads", default="2", help="comma-separated thread counts")
    ap.add_argument("--libs", default="boostwood,lightgbm,xgboost")
    ap.add_argument("--repeat", type=int, default=1)
    ap.add_argument("--child", action="store_true", help=argparse.SUPPRESS)
    ap.add_argument("--lib", help=argparse.SUPPRESS)
    ap.add_argument("--data", help=argparse.SUPPRESS)
    args = ap.parse_args()
    if args.child:
        args.threads = int(args.threads)
        return child(args)
    Xtr, ytr, gtr = make_ranking(args.queries, seed=0)
    Xte, yte, gte = make_ranking(args.test_queries, seed=1)
    results = []
    with tempfile.TemporaryDirectory() as tmp:
        path = os.path.join(tmp, "data.npz")
        np.savez(path, Xtr=Xtr, ytr=ytr, gtr=gtr, Xte=Xte, yte=yte, gte=gte)
        for _ in range(args.repeat):
            for threads in [int(t) for t in args.threads.split(",")]:
                for lib in args.libs.split(","):
                    cmd = [sys.executable, __file__, "--child", "--lib", lib, "--data", path,
                           "--rounds", str(args.rounds), "--threads", str(threads)]
                    out = run_child(cmd, f"{lib} {threads} threads")
                    if out is not None:
                        results.append(out)
    report(results, args, len(ytr), len(yte))


if __name__ == "__main__":
    main()
