"""``boostwood report``: one self-contained HTML page about a model and a data set.

Parameters, a summary of the data, the metrics, the learning curve on the data
(the metric after every few rounds, via ``iteration_range``), the importance and
drawings of the first trees. Pictures are inline SVG (:mod:`.svg`): no plotting
library needed, and the page loads nothing from the network and runs no script.
"""
import html

import numpy as np

from ..boosting.metrics import get_metric
from . import svg
from .commands import _load_model, data_config, load_for_model


def _table(rows, head):
    cells = "".join(f"<th>{html.escape(str(h))}</th>" for h in head)
    body = "".join("<tr>" + "".join(f"<td>{html.escape(str(c))}</td>" for c in r) + "</tr>"
                   for r in rows)
    return f"<table><tr>{cells}</tr>{body}</table>"


def _curve(booster, d, y, w, metric):
    """The metric on ``d`` after rounds 1, ..., n (at most 40 points)."""
    n = booster.num_boosted_rounds()
    points = sorted(set(np.linspace(1, n, min(n, 40)).astype(int))) if n else []
    return points, [metric(y, booster._metric_predictions(d, (0, r)), w) for r in points]


def _figures(booster, d, y, w, metric, n_trees):
    figs = {}
    rounds, values = _curve(booster, d, y, w, metric)
    if rounds:
        figs["curve"] = svg.line_chart(rounds, values, "rounds", metric.name)
    scores = booster.get_score("total_gain")
    if scores:
        top = sorted(scores.items(), key=lambda kv: -kv[1])[:20]
        figs["importance"] = svg.bar_chart([k for k, _ in top], np.array([v for _, v in top]))
    figs["trees"] = [svg.tree_drawing(booster.trees[t], booster.feature_names,
                                      labels=booster.category_dictionaries)
                     for t in range(min(n_trees, len(booster.trees)))]
    return figs


def build_report(booster, d, model_path, data_path, n_trees=3):
    """The HTML text of the report."""
    y = booster.objective.check_labels(d.label)
    w = np.ones(len(y)) if d.weight is None else d.weight
    metric = get_metric(booster.objective.default_metric, booster.params)
    X = d.features.dense if d.features.dense is not None else None
    missing = float(np.isnan(X).mean()) if X is not None else float("nan")
    pred = booster._metric_predictions(d)
    names = [booster.objective.default_metric] + (["auc"] if booster.objective.name in (
        "binary:logistic", "binary:logitraw", "binary:logitboost") else [])
    metrics = [(m, f"{get_metric(m, booster.params)(y, pred, w):.6g}") for m in names]
    figs = _figures(booster, d, y, w, metric, n_trees)
    params = [(k, v) for k, v in sorted(booster.params.items()) if not k.startswith("_")]
    img = (lambda key: figs.get(key, "<p>(nothing to draw)</p>"))
    trees = "".join(f"<h3>tree {i}</h3><div class=scroll>{pic}</div>"
                    for i, pic in enumerate(figs.get("trees", [])))
    return f"""<!DOCTYPE html>
<html lang="en"><head><meta charset="utf-8"><title>boostwood report</title>
<style>body{{font-family:sans-serif;margin:2em;max-width:1100px}}
table{{border-collapse:collapse;margin:.5em 0}}td,th{{border:1px solid #ccc;padding:2px 8px;
text-align:left}}.scroll{{overflow-x:auto}}svg{{display:block;margin:.5em 0}}</style></head>
<body>
<h1>boostwood report</h1>
<p>model <code>{html.escape(model_path)}</code>, data <code>{html.escape(data_path)}</code></p>
<h2>Data</h2>{_table([("rows", d.num_row()), ("features", booster.n_features),
                      ("missing share", f"{missing:.4f}"), ("label mean", f"{np.mean(y):.6g}")],
                     ("", "value"))}
<h2>Metrics</h2>{_table(metrics, ("metric", "value"))}
<h2>Learning curve</h2>{img("curve")}
<h2>Importance (total gain)</h2>{img("importance")}
<h2>First trees</h2>{trees or "<p>(no trees)</p>"}
<h2>Parameters</h2>{_table(params, ("parameter", "value"))}
<p>{booster.num_boosted_rounds()} rounds, {len(booster.trees)} trees.</p>
</body></html>
"""


def cmd_report(args):
    booster = _load_model(args.model)
    d = load_for_model(args.data, data_config(args), booster)
    text = build_report(booster, d, args.model, args.data, args.trees)
    from ..boosting.model_io import write_atomic
    write_atomic(args.output, text)
    print(f"report written to {args.output}")
    return 0
