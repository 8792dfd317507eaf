"""Scaling proxies measurable on a 2-core machine ([Q1c] item 2).

Two questions decide whether training can scale to many cores, and both can be
answered without them:

1. **Python calls per tree.** Every Python-level function call the grower makes
   runs on one thread while the others wait. If that count grows with the number
   of leaves, the serial share of a tree grows with it (Amdahl). Counted with
   ``sys.setprofile`` (Python ``call`` events only; calls into compiled kernels
   and C functions are not counted) over whole boosting rounds, for 15, 63 and
   255 leaves, per growth policy, with the compiled expansion loop (the one loop
   of histogram trees; the Python loop it replaced is gone).
2. **Each hot kernel's speed-up from 1 to 2 threads.** The kernels are wrapped in
   timers inside a real training run (nothing else changes) and the run is
   repeated at 1 and 2 threads; the ratio of the time spent inside each kernel
   is its speed-up. Prediction (``predict_raw`` over the test rows) is timed the
   same way. Inside the compiled loop (``expand_tree``) the kernels cannot be
   wrapped one by one: ``bench_tree_profile.py`` splits its time by kernel with the
   CPU's cycle counter. The 1- and 2-thread runs alternate ``--repeat`` times and
   each kernel's least time counts.

Usage::

    python benchmarks/bench_proxies.py                       # 200k rows, 20 rounds
    python benchmarks/bench_proxies.py --rows 1000000 --rounds 20 --repeat 3
"""
import argparse
import sys
import time
from collections import defaultdict

import numba
import numpy as np

sys.path.insert(0, __file__.rsplit("/", 1)[0])
from bench_higgs import make_higgs_like  # noqa: E402

import boostwood as bw  # noqa: E402
from boostwood.boosting import _state, booster as booster_mod  # noqa: E402
from boostwood.tree import grower, histogram, stats  # noqa: E402

#: (module, attribute) of each kernel timed, by the name reported
KERNELS = {
    "compiled expansion loop (expand_tree)": (grower, "expand_tree"),
    "root/level histograms (build_histograms)": (histogram, "build_histograms"),
    "quantize gradients (quantize_gh)": (stats, "quantize_gh"),
    "update scores (add_leaf_values)": (_state, "add_leaf_values"),
    "predict (predict_raw)": (booster_mod, "predict_raw"),
    "predict (predict_levels)": (booster_mod, "predict_levels"),
    "predict (predict_binned)": (booster_mod, "predict_binned"),
}

TRAIN, OUTSIDE = "whole training run", "training outside these kernels (Python, NumPy)"


def params_for(policy, leaves, threads):
    depth = 0 if policy == "lossguide" else int(np.log2(leaves + 1))
    return dict(objective="binary:logistic", eta=0.1, max_bin=255, nthread=threads,
                grow_policy=policy, max_leaves=leaves if policy == "lossguide" else 0,
                max_depth=depth, min_child_weight=1e-3, min_data_in_leaf=20,
                reg_lambda=0.0, verbosity=0)


def python_calls_per_tree(dtrain, policy, leaves, rounds):
    """Python function calls per boosting round (one tree) and leaves per tree."""
    params = params_for(policy, leaves, 2)
    bw.train(params, dtrain, 1, verbose_eval=False)  # compile outside the count
    calls = [0]

    def profile(frame, event, arg):
        if event == "call":
            calls[0] += 1

    sys.setprofile(profile)
    try:
        b = bw.train(params, dtrain, rounds, verbose_eval=False)
    finally:
        sys.setprofile(None)
    n_leaves = np.mean([t.n_leaves for t in b.trees])
    return calls[0] / rounds, n_leaves


def kernel_times(dtrain, Xte, policy, leaves, rounds, threads):
    """Seconds spent inside each kernel of KERNELS during training + one prediction."""
    spent = defaultdict(float)
    saved = {}
    for name, (mod, attr) in KERNELS.items():
        fn = getattr(mod, attr)
        saved[name] = fn

        def timed(*a, _fn=fn, _name=name, **k):
            t = time.perf_counter()
            out = _fn(*a, **k)
            spent[_name] += time.perf_counter() - t
            return out

        setattr(mod, attr, timed)
    try:
        numba.set_num_threads(threads)
        params = params_for(policy, leaves, threads)
        t = time.perf_counter()
        b = bw.train(params, dtrain, rounds, verbose_eval=False)
        spent[TRAIN] = time.perf_counter() - t
        spent[OUTSIDE] = 2 * spent[TRAIN] - sum(spent.values())
        b.predict(Xte)
    finally:
        for name, (mod, attr) in KERNELS.items():
            setattr(mod, attr, saved[name])
    return dict(spent)


def main():
    ap = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    ap.add_argument("--rows", type=int, default=200_000)
    ap.add_argument("--rounds", type=int, default=20)
    ap.add_argument("--repeat", type=int, default=3,
                    help="runs per thread count, 1 and 2 threads interleaved; each kernel's "
                         "least time is reported (the VM's noise only ever adds time)")
    args = ap.parse_args()
    X, y = make_higgs_like(args.rows)
    cut = int(0.8 * args.rows)
    dtrain = bw.Dataset(X[:cut], y[:cut]).construct()
    Xte = np.repeat(X[cut:], 5, axis=0)  # enough rows for prediction to be measurable
    print(f"# {cut} training rows x {X.shape[1]} features, {args.rounds} rounds, "
          f"least of {args.repeat} runs per thread count, "
          f"{numba.config.NUMBA_NUM_THREADS} threads available")

    print("\n## 1. Python function calls per tree\n")
    print("| policy | leaves asked | leaves grown | Python calls / tree | calls / leaf |")
    print("|---|---|---|---|---|")
    for policy in ("lossguide", "depthwise"):
        for leaves in (15, 63, 255):
            calls, grown = python_calls_per_tree(dtrain, policy, leaves, args.rounds)
            print(f"| {policy} | {leaves} | {grown:.0f} | {calls:.0f} "
                  f"| {calls / grown:.1f} |", flush=True)

    print("\n## 2. Time inside each hot kernel, 1 vs 2 threads (255 leaves)\n")
    for policy in ("lossguide", "depthwise"):
        kernel_times(dtrain, Xte, policy, 255, 2, 2)  # warm-up: compile
        one, two = {}, {}
        for _ in range(args.repeat):
            for best, threads in ((one, 1), (two, 2)):
                run = kernel_times(dtrain, Xte, policy, 255, args.rounds, threads)
                for name, seconds in run.items():
                    best[name] = min(best.get(name, seconds), seconds)
        print(f"\n{policy}\n")
        print("| kernel | 1 thread s | 2 threads s | speed-up |")
        print("|---|---|---|---|")
        for name in list(KERNELS) + [OUTSIDE, TRAIN]:
            if name in one and name in two:
                print(f"| {name} | {one[name]:.3f} | {two[name]:.3f} | "
                      f"{one[name] / two[name]:.2f}x |", flush=True)
    numba.set_num_threads(numba.config.NUMBA_NUM_THREADS)


if __name__ == "__main__":
    main()
