"""Plots of boostwood models: importance, learning curves, a tree, partial dependence.

matplotlib is an optional dependency (``pip install boostwood[plot]``), imported
inside each function. Every function draws on ``ax`` when given (else on a new
figure) and returns the Axes (an array of Axes for several partial dependences).
Models may be a :class:`~boostwood.Booster` or a fitted scikit-learn estimator.
"""
import numpy as np

from .boosting import Booster
from .data.checks import Param, check_value
from .boosting.dump import condition, tree_layout as _layout


def _plt():
    try:
        import matplotlib.pyplot as plt
    except ImportError:
        raise ImportError("plotting needs matplotlib: pip install boostwood[plot]") from None
    return plt


def _booster(model):
    booster = model if isinstance(model, Booster) else getattr(model, "booster_", None)
    if isinstance(booster, Booster):
        if booster.base_score is None:
            raise ValueError("this Booster has no model; train it or load one first")
        return booster
    raise TypeError(f"expected a boostwood Booster or fitted estimator, got {type(model).__name__}")


def _axes(ax, figsize=None):
    if ax is not None:
        return ax
    _, ax = _plt().subplots(figsize=figsize)
    return ax


def plot_importance(model, importance_type="gain", max_num_features=None, ax=None,
                    title="Feature importance", xlabel=None, height=0.6, show_values=True):
    """Horizontal bars of the features used in splits, most important on top.

    importance_type : one of ``split``, ``gain``, ``total_gain``, ``cover``, ``total_cover``
    max_num_features : show only the top ones
    """
    booster = _booster(model)
    if max_num_features is not None:
        check_value("max_num_features", max_num_features, Param(None, "int", 1))
    scores = booster.get_score(importance_type)
    if not scores:
        raise ValueError("the model has no splits: nothing to plot")
    items = sorted(scores.items(), key=lambda kv: kv[1])
    if max_num_features is not None:
        items = items[-int(max_num_features):]
    names, values = zip(*items)
    ax = _axes(ax)
    ypos = np.arange(len(values))
    ax.barh(ypos, values, height=height, align="center")
    ax.set_yticks(ypos, labels=names)
    if show_values:
        for y, v in zip(ypos, values):
            ax.text(v, y, f" {v:.4g}" if isinstance(v, float) else f" {v}", va="center")
    ax.set_title(title)
    ax.set_xlabel(xlabel or importance_type)
    ax.set_ylabel("feature")
    ax.grid(axis="x", alpha=0.3)
    return ax


def plot_metric(evals_result, metric=None, ax=None, title="Learning curve", xlabel="round"):
    """Learning curves: one line per evaluation set of ``metric`` by round.

    evals_result : the ``{set: {metric: [values]}}`` dict filled by ``train(evals_result=...)``
        (an estimator's ``evals_result_`` works too)
    metric : which metric (default: the last one recorded)
    """
    evals_result = getattr(evals_result, "evals_result_", evals_result)
    if not isinstance(evals_result, dict) or not evals_result:
        raise ValueError("evals_result is empty: train with evals=[...] and evals_result={}")
    first = next(iter(evals_result.values()))
    metric = metric or list(first)[-1]
    ax = _axes(ax)
    for name, log in evals_result.items():
        if metric not in log:
            raise ValueError(f"metric {metric!r} was not recorded for {name!r}; "
                             f"recorded: {sorted(log)}")
        ax.plot(np.arange(len(log[metric])), log[metric], label=name)
    ax.set_title(title)
    ax.set_xlabel(xlabel)
    ax.set_ylabel(metric)
    ax.legend()
    ax.grid(alpha=0.3)
    return ax


def _feature_indices(booster, features):
    """Column indices of ``features`` (one or a list of indices or names)."""
    features = [features] if isinstance(features, (int, str, np.integer)) else list(features)
    if not features:
        raise ValueError("features is empty: name at least one feature")
    idx = []
    for f in features:
        if isinstance(f, str):
            if f not in booster.feature_names:
                raise ValueError(f"unknown feature {f!r}; the model's features are "
                                 f"{booster.feature_names[:10]}...")
            idx.append(booster.feature_names.index(f))
        else:
            idx.append(check_value("feature", f, Param(0, "int", 0, booster.n_features,
                                                       high_open=True)))
    return idx


def _percentiles(percentiles):
    try:
        lo, hi = (float(v) for v in percentiles)
    except (TypeError, ValueError):
        raise TypeError(f"percentiles must be a pair of numbers, got {percentiles!r}") from None
    if not 0.0 <= lo < hi <= 1.0:
        raise ValueError(f"percentiles must satisfy 0 <= low < high <= 1, got {percentiles!r}")
    return lo, hi


def _node_label(tree, node, names, precision, labels=None):
    if tree.feature[node] < 0:
        return f"leaf {tree.value[node]:.{precision}g}\ncover {tree.cover[node]:.{precision}g}"
    rule = condition(tree, node, names or None, sep=" ", precision=precision, labels=labels)
    return f"{rule}\ngain {tree.gain[node]:.{precision}g}"


def plot_tree(model, tree_index=0, ax=None, precision=4, fontsize=8, figsize=None):
    """Draw one tree with matplotlib only (no graphviz): split nodes show the rule and
    gain, leaves their value and cover; edges say ``yes`` / ``no`` and which side
    missing values take."""
    booster = _booster(model)
    if not 0 <= tree_index < len(booster.trees):
        raise ValueError(f"tree_index must be in [0, {len(booster.trees)}), got {tree_index}")
    tree = booster.trees[tree_index]
    x, depth = _layout(tree)
    width = max(6.0, 1.6 * tree.n_leaves)
    ax = _axes(ax, figsize or (min(width, 40), 1.4 * (depth.max() + 1) + 1))
    names = booster.feature_names
    for node in range(tree.n_nodes):
        if tree.feature[node] < 0:
            continue
        for child, word in ((tree.left[node], "yes"), (tree.right[node], "no")):
            missing = bool(tree.default_left[node]) == (word == "yes")
            ax.plot([x[node], x[child]], [-depth[node], -depth[child]], color="0.5", lw=1,
                    zorder=1)
            ax.text(0.5 * (x[node] + x[child]), -0.5 * (depth[node] + depth[child]),
                    word + (", missing" if missing else ""), fontsize=fontsize - 1,
                    ha="center", va="center", color="0.3",
                    bbox=dict(boxstyle="round,pad=0.1", fc="white", ec="none"))
    for node in range(tree.n_nodes):
        leaf = tree.feature[node] < 0
        ax.text(x[node], -depth[node],
                _node_label(tree, node, names, precision, booster.category_dictionaries),
                ha="center", va="center", fontsize=fontsize, zorder=2,
                bbox=dict(boxstyle="round,pad=0.3", fc="#e8f4e8" if leaf else "#e8eef8",
                          ec="0.4"))
    ax.set_xlim(x.min() - 0.8, x.max() + 0.8)
    ax.set_ylim(-depth.max() - 0.6, 0.6)
    ax.set_axis_off()
    ax.set_title(f"tree {tree_index}")
    return ax


def to_graphviz(model, tree_index=0, precision=4):
    """Graphviz DOT source of one tree (render it with the ``graphviz`` package or
    ``dot -Tpng``; nothing here needs graphviz installed)."""
    booster = _booster(model)
    tree = booster.trees[tree_index]
    names = booster.feature_names
    lines = ["digraph tree {", '  node [shape=box, style="rounded,filled", fontsize=10];']
    for node in range(tree.n_nodes):
        label = _node_label(tree, node, names, precision,
                            booster.category_dictionaries).replace("\n", "\\n")
        color = "#e8f4e8" if tree.feature[node] < 0 else "#e8eef8"
        lines.append(f'  {node} [label="{label}", fillcolor="{color}"];')
        if tree.feature[node] >= 0:
            dl = bool(tree.default_left[node])
            lines.append(f'  {node} -> {tree.left[node]} [label="yes{", missing" if dl else ""}"];')
            lines.append(f'  {node} -> {tree.right[node]} '
                         f'[label="no{"" if dl else ", missing"}"];')
    lines.append("}")
    return "\n".join(lines) + "\n"


def _category_bars(a, booster, j, output):
    """Partial dependence on categorical feature ``j``: one bar per category."""
    values = booster.category_dictionaries[j]
    pd = booster.partial_dependence(j, values)
    pd = pd if pd.ndim == 1 else pd[:, output]
    a.bar(np.arange(len(values)), pd)
    a.set_xticks(np.arange(len(values)), labels=[str(v) for v in values], rotation=90)
    a.set_xlabel(booster.feature_names[j])
    a.set_ylabel("partial dependence (margin)")


def plot_partial_dependence(model, X, features, grid_resolution=50, percentiles=(0.05, 0.95),
                            ax=None, output=0, validate_features=True):
    """Partial dependence of the margin on each of ``features`` (indices or names), by
    the recursion over the trees (:meth:`Booster.partial_dependence`), on a grid
    between the given percentiles of that column of ``X``; the column's deciles are
    marked on the x axis (a categorical feature: one bar per category). ``X``'s columns are matched to the model's features as
    :meth:`Booster.predict` matches them (``validate_features``), or, for a scikit-learn
    estimator, as its ``predict`` does; ``ax``, when given, holds one Axes per feature."""
    booster = _booster(model)
    if not isinstance(model, Booster) and hasattr(model, "_check_X"):
        X, validate_features = model._check_X(X), False  # scikit-learn's rule, as predict
    fm, _ = booster._features_of(X, validate_features)
    X = fm.dense if fm.dense is not None else fm.csc.toarray()
    idx = _feature_indices(booster, features)
    check_value("grid_resolution", grid_resolution, Param(50, "int", 2))
    check_value("output", output, Param(0, "int", 0, booster.n_outputs, high_open=True))
    lo_q, hi_q = _percentiles(percentiles)
    plt = _plt()
    if ax is None:
        _, axes = plt.subplots(1, len(idx), figsize=(4 * len(idx), 3.2), squeeze=False)
        axes = axes[0]
    else:
        axes = np.atleast_1d(ax).ravel()
        if axes.size != len(idx):
            raise ValueError(f"ax holds {axes.size} Axes for {len(idx)} features")
    for a, j in zip(axes, idx):
        if j in booster.category_dictionaries:  # one bar per category
            _category_bars(a, booster, j, output)
            continue
        col = X[:, j][~np.isnan(X[:, j])]
        if col.size == 0:
            raise ValueError(f"feature {booster.feature_names[j]!r} has no values in X (all "
                             "missing): no grid to draw on")
        lo, hi = np.quantile(col, (lo_q, hi_q))
        grid = np.unique(np.linspace(lo, hi, grid_resolution))
        pd = booster.partial_dependence(j, grid)
        pd = pd if pd.ndim == 1 else pd[:, output]
        a.plot(grid, pd)
        a.plot(np.quantile(col, np.linspace(0.1, 0.9, 9)), np.full(9, pd.min()), "|",
               color="k", markersize=10)
        a.set_xlabel(booster.feature_names[j])
        a.set_ylabel("partial dependence (margin)")
        a.grid(alpha=0.3)
    return axes
