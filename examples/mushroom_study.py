"""The "GBDT in action" slides of the notes (000), redrawn with boostwood.

The mushroom data (UCI agaricus, bundled: 6,513 training and 1,611 test rows,
126 binary features) with the notes' default settings: binary:logistic, eta 0.05,
subsample 0.5, colsample_bytree 1.0, gamma 1.0, min_child_weight 1, max_depth 3.

1. training time against the number of trees (100 .. 800), and prediction speed
   in rows per millisecond against the number of trees (the slide's table:
   221, 125, 91, 72, 59 rows/ms with xgboost in 2014);
2. training time against the number of training rows (10% .. 100%);
3. training time against the tree depth (1 .. 10, 100 trees);
4. the training and test error curves with subsample 0.1 and colsample_bytree 0.1.

Each time is the best of ``--repeat`` runs (the slides used 10) after a JIT
warm-up. Writes four PNGs and ``mushroom_study.md`` (the tables) into ``--out``.

Run:  python examples/mushroom_study.py [--out DIR] [--repeat 3] [--threads 1]
"""
import argparse
import time
from pathlib import Path

import numpy as np

import boostwood as bw
from boostwood.datasets import load_agaricus

NOTES = dict(objective="binary:logistic", eta=0.05, subsample=0.5, colsample_bytree=1.0,
             gamma=1.0, min_child_weight=1, max_depth=3, seed=0)
SLIDE_SPEED = {100: 221, 200: 125, 400: 91, 600: 72, 800: 59}


def best_time(fn, repeat):
    best, out = np.inf, None
    for _ in range(repeat):
        t = time.perf_counter()
        out = fn()
        best = min(best, time.perf_counter() - t)
    return best, out


def trees_study(data, trees, repeat, params):
    Xtr, ytr, Xte, _ = data
    rows = []
    for n in trees:
        fit_s, model = best_time(lambda: bw.train(params, bw.Dataset(Xtr, ytr), n), repeat)
        pred_s, _ = best_time(lambda: model.predict(Xte), repeat)
        rows.append((n, fit_s, Xte.shape[0] / (pred_s * 1000)))
    return rows


def rows_study(data, fractions, repeat, params, rounds):
    Xtr, ytr, _, _ = data
    rng = np.random.default_rng(0)
    order = rng.permutation(Xtr.shape[0])
    out = []
    for frac in fractions:
        idx = np.sort(order[:max(10, int(frac * Xtr.shape[0]))])
        fit_s, _ = best_time(lambda: bw.train(params, bw.Dataset(Xtr[idx], ytr[idx]), rounds),
                             repeat)
        out.append((idx.size, fit_s))
    return out


def depth_study(data, depths, repeat, params, rounds):
    Xtr, ytr, _, _ = data
    return [(d, best_time(lambda: bw.train({**params, "max_depth": d}, bw.Dataset(Xtr, ytr),
                                           rounds), repeat)[0]) for d in depths]


def error_curves(data, params, rounds):
    Xtr, ytr, Xte, yte = data
    dtr = bw.Dataset(Xtr, ytr)
    log = {}
    bw.train({**params, "subsample": 0.1, "colsample_bytree": 0.1, "eval_metric": "error"}, dtr,
             rounds, evals=[(dtr, "train"), (bw.Dataset(Xte, yte, reference=dtr), "test")],
             evals_result=log, verbose_eval=False)
    return log


def draw(out, trees, rows, depths, log):
    import matplotlib
    matplotlib.use("Agg")
    import matplotlib.pyplot as plt
    from boostwood.plotting import plot_metric
    paths = {}
    fig, (a, b) = plt.subplots(1, 2, figsize=(10, 3.6))
    a.plot([r[0] for r in trees], [r[1] for r in trees], "o-")
    a.set(xlabel="number of trees", ylabel="training time (s)", title="# of trees vs training time")
    b.plot([r[0] for r in trees], [r[2] for r in trees], "o-", label="boostwood")
    b.plot(list(SLIDE_SPEED), list(SLIDE_SPEED.values()), "s--", label="slide (xgboost, 2014)")
    b.set(xlabel="number of trees", ylabel="rows / millisecond", title="prediction speed")
    b.legend()
    paths["trees"] = out / "trees_vs_time.png"
    fig.tight_layout()
    fig.savefig(paths["trees"], dpi=90)
    for key, data, xlabel, title in (
            ("rows", rows, "training rows", "# of instances vs training time"),
            ("depth", depths, "max_depth", "tree depth vs training time")):
        fig, ax = plt.subplots(figsize=(5, 3.6))
        ax.plot([r[0] for r in data], [r[1] for r in data], "o-")
        ax.set(xlabel=xlabel, ylabel="training time (s)", title=title)
        paths[key] = out / f"{key}_vs_time.png"
        fig.tight_layout()
        fig.savefig(paths[key], dpi=90)
    ax = plot_metric(log, "error", title="training and test error (subsample 0.1, "
                                         "colsample_bytree 0.1)")
    paths["error"] = out / "error_curve.png"
    ax.figure.tight_layout()
    ax.figure.savefig(paths["error"], dpi=90)
    plt.close("all")
    return paths


def table(trees, rows, depths, log, threads, repeat):
    lines = [f"# Mushroom study ({threads} thread(s), best of {repeat})", "",
             "| trees | training s | predicting rows/ms | slide (xgboost 2014) rows/ms |",
             "|---|---|---|---|"]
    lines += [f"| {n} | {s:.3f} | {v:.0f} | {SLIDE_SPEED.get(n, '')} |" for n, s, v in trees]
    lines += ["", "| training rows | training s |", "|---|---|"]
    lines += [f"| {n} | {s:.3f} |" for n, s in rows]
    lines += ["", "| max_depth | training s |", "|---|---|"]
    lines += [f"| {d} | {s:.3f} |" for d, s in depths]
    tr, te = log["train"]["error"], log["test"]["error"]
    lines += ["", "| round | train error | test error |", "|---|---|---|"]
    lines += [f"| {r} | {tr[r]:.4f} | {te[r]:.4f} |"
              for r in sorted({0, 9, 24, 49, 99, len(tr) - 1}) if r < len(tr)]
    return "\n".join(lines) + "\n"


def main(argv=None):
    ap = argparse.ArgumentParser(description=__doc__.split("\n")[0])
    ap.add_argument("--out", default="mushroom_study", help="output folder")
    ap.add_argument("--repeat", type=int, default=3)
    ap.add_argument("--threads", type=int, default=1, help="the slides timed one thread")
    ap.add_argument("--quick", action="store_true", help="a small grid (for tests)")
    args = ap.parse_args(argv)
    out = Path(args.out)
    out.mkdir(parents=True, exist_ok=True)
    Xtr, ytr, Xte, yte, _ = load_agaricus()
    data = (Xtr, ytr, Xte, yte)
    params = {**NOTES, "nthread": args.threads}
    bw.train(params, bw.Dataset(Xtr[:500], ytr[:500]), 3)  # JIT warm-up
    trees = [10, 20] if args.quick else [100, 200, 400, 600, 800]
    fractions = [0.2, 1.0] if args.quick else [0.1, 0.25, 0.5, 0.75, 1.0]
    depths = [1, 3] if args.quick else list(range(1, 11))
    rounds = 10 if args.quick else 100
    t = trees_study(data, trees, args.repeat, params)
    r = rows_study(data, fractions, args.repeat, params, rounds)
    d = depth_study(data, depths, args.repeat, params, rounds)
    log = error_curves(data, params, 20 if args.quick else 200)
    paths = draw(out, t, r, d, log)
    text = table(t, r, d, log, args.threads, args.repeat)
    (out / "mushroom_study.md").write_text(text)
    print(text)
    print("wrote", ", ".join(str(p) for p in paths.values()))
    return paths


if __name__ == "__main__":
    main()
