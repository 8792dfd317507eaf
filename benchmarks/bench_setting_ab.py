"""A/B of an engine setting in one process: the same data and warm kernels, the
values taken in turn (A B C, then C B A, ...), so a slow minute slows all of them.

A setting is a class or module attribute that changes how boostwood trains but not
what it learns (e.g. ``TreeGrower.ahead_max_rows``): every value's model must be the
same to the last byte, which this script checks. Meant for a many-core machine lent
for minutes: one data set, one compilation, then only timed fits.

Usage::

    python benchmarks/bench_setting_ab.py \\
        --set boostwood.tree.grower:TreeGrower.ahead_max_rows=0,65536 \\
        --threads 16 --rows 1000000 --rounds 100 --pairs 3 --settings lossguide,depthwise

Prints each fit's seconds and its ratio to the first value's, row by row, then the
median ratio of each value.
"""
import argparse
import ast
import importlib
import os
import statistics
import sys
import time

sys.path.insert(0, os.path.dirname(os.path.abspath(__file__)))
from bench_higgs import boostwood_params, make_case  # noqa: E402

import boostwood as bw  # noqa: E402
from boostwood.boosting import model_io  # noqa: E402


def parse_setting(text):
    """``module:Owner.attr=v1,v2`` -> (owner object, attribute name, [values])."""
    target, _, values = text.partition("=")
    module, _, path = target.partition(":")
    owner = importlib.import_module(module)
    *parents, attr = path.split(".")
    for name in parents:
        owner = getattr(owner, name)
    if not hasattr(owner, attr):
        raise SystemExit(f"{target}: no such attribute")
    return owner, attr, [ast.literal_eval(v) for v in values.split(",")]


def main():
    ap = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    ap.add_argument("--set", required=True, help="module:Owner.attr=value,value,...")
    ap.add_argument("--threads", type=int, default=2)
    ap.add_argument("--rows", type=int, default=1_000_000)
    ap.add_argument("--rounds", type=int, default=100)
    ap.add_argument("--pairs", type=int, default=3, help="rows of fits per setting")
    ap.add_argument("--settings", default="lossguide,depthwise")
    args = ap.parse_args()
    owner, attr, values = parse_setting(args.set)
    if len(set(map(repr, values))) != len(values):
        raise SystemExit("--set: each value once")
    X, y = make_case("higgs", args.rows)
    n = int(0.8 * args.rows)
    d = bw.Dataset(X[:n], y[:n]).construct()
    print(f"# {args.set}, {n} rows, {args.rounds} rounds, {args.threads} threads")
    for setting in args.settings.split(","):
        params = boostwood_params(setting, args.threads)
        for v in values:  # compile (or load) and warm what every value runs
            setattr(owner, attr, v)
            bw.train(params, d, 2, verbose_eval=False)
        setattr(owner, attr, values[0])
        ratios = {v: [] for v in values}
        order = list(values)
        for _ in range(args.pairs):
            secs, models = {}, set()
            for v in order:
                setattr(owner, attr, v)
                t = time.perf_counter()
                booster = bw.train(params, d, args.rounds, verbose_eval=False)
                secs[v] = time.perf_counter() - t
                models.add(model_io.dumps(booster._to_dict()))
            setattr(owner, attr, values[0])
            if len(models) != 1:
                raise SystemExit(f"{setting}: the values gave different models")
            for v in values:
                ratios[v].append(secs[v] / secs[values[0]])
            print(f"{setting}: " + ", ".join(f"{attr}={v!r} {secs[v]:.2f} s "
                                              f"({secs[v] / secs[values[0]]:.3f})"
                                              for v in values), flush=True)
            order.reverse()
        print(f"{setting} median ratio to {values[0]!r}: " + ", ".join(
            f"{v!r} {statistics.median(r):.3f}" for v, r in ratios.items()))


if __name__ == "__main__":
    main()
