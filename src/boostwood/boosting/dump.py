"""Readable forms of a fitted model: text and JSON dumps, a pandas table, ``export_text``.

Conventions (all forms): node ids are those of :class:`~boostwood.tree.Tree`
(root 0); a row goes to ``yes`` (the left child) when ``x <= threshold``, or, at a
categorical split, when ``x`` is one of the node's categories (:func:`condition`
writes both), and a missing value goes to ``missing``; ``gain`` is the split gain of eq. 7 of Chen &
Guestrin (with its 1/2), ``cover`` the training hessian sum of the node, and
leaf values include the learning rate.
"""
import json

import numpy as np

from .._kernels.splits import CATEGORICAL


def _fmt(x, decimals=None):
    return f"{x:.{decimals}f}" if decimals is not None else f"{x:.9g}"


def _feature_name(names, f):
    return names[f] if names is not None else f"f{f}"


def category_values(tree, node, labels=None):
    """The categories going left at categorical split ``node``: their values where
    ``labels`` (a model's ``category_dictionaries``) has the feature's, else their codes."""
    codes = tree.categories(node).tolist()
    values = (labels or {}).get(int(tree.feature[node]))
    if values is None:
        return codes
    return [values[c] if c < len(values) else c for c in codes]


def _category_text(tree, node, labels=None):
    return "{" + ",".join(repr(v) if isinstance(v, str) else str(v)
                          for v in category_values(tree, node, labels)) + "}"


def condition(tree, node, names=None, decimals=None, negate=False, sep="", precision=None,
              labels=None):
    """The rule sending a row left at split ``node``, as text: ``f1<=0.5`` or ``f3 in {1,4}``
    (``negate``: the rule of the right branch, ``f1>0.5`` / ``f3 not in {1,4}``; ``sep`` is
    put around a numeric comparison; ``decimals`` or ``precision`` (significant digits)
    format the threshold; with ``labels``, the model's category dictionaries, a set is
    written as its values, ``colour in {'blue','red'}``)."""
    name = _feature_name(names, tree.feature[node])
    if tree.split_kind[node] == CATEGORICAL:
        return f"{name} {'not in' if negate else 'in'} {_category_text(tree, node, labels)}"
    op = ">" if negate else "<="
    thr = tree.threshold[node]
    number = f"{thr:.{precision}g}" if precision is not None else _fmt(thr, decimals)
    return f"{name}{sep}{op}{sep}{number}"


def _missing(tree, node):
    return int(tree.left[node] if tree.default_left[node] else tree.right[node])


def _depths(tree):
    depth = np.zeros(tree.n_nodes, dtype=np.int64)
    for node in range(tree.n_nodes):
        if tree.feature[node] >= 0:
            depth[tree.left[node]] = depth[tree.right[node]] = depth[node] + 1
    return depth


def _preorder(tree):
    order, stack = [], [0]
    while stack:
        node = stack.pop()
        order.append(node)
        if tree.feature[node] >= 0:
            stack.extend((int(tree.right[node]), int(tree.left[node])))
    return order


def tree_to_text(tree, names=None, with_stats=True, labels=None):
    """One tree in XGBoost's text dump style: ``id:[feature<=threshold] yes=..,no=..,missing=..``
    for splits, ``id:leaf=value`` for leaves, indented one tab per depth."""
    depth = _depths(tree)
    lines = []
    for node in _preorder(tree):
        pad = "\t" * int(depth[node])
        stats = f",cover={_fmt(tree.cover[node])}" if with_stats else ""
        if tree.feature[node] < 0:
            lines.append(f"{pad}{node}:leaf={_fmt(tree.value[node])}{stats}")
            continue
        gain = f",gain={_fmt(tree.gain[node])}" if with_stats else ""
        lines.append(f"{pad}{node}:[{condition(tree, node, names, labels=labels)}] "
                     f"yes={tree.left[node]},no={tree.right[node]},"
                     f"missing={_missing(tree, node)}{gain}{stats}")
    return "\n".join(lines) + "\n"


def _node_dict(tree, names, with_stats, node, depth, labels=None):
    """One node's entry of :func:`tree_to_dict`, without its children."""
    out = {"nodeid": int(node), "depth": int(depth)}
    if tree.feature[node] < 0:
        out["leaf"] = float(tree.value[node])
    else:
        out["split"] = _feature_name(names, tree.feature[node])
        if tree.split_kind[node] == CATEGORICAL:
            out.update(split_type="categorical",
                       categories=category_values(tree, node, labels))
        else:
            out.update(split_type="numerical", split_condition=float(tree.threshold[node]))
        out.update(yes=int(tree.left[node]), no=int(tree.right[node]),
                   missing=_missing(tree, node))
    if with_stats:
        out["cover"] = float(tree.cover[node])
        if tree.feature[node] >= 0:
            out["gain"] = float(tree.gain[node])
    return out


def tree_to_dict(tree, names=None, with_stats=True, labels=None):
    """One tree as nested dicts (XGBoost's JSON dump layout: ``split_condition`` with the
    ``<=`` rule, or ``split_type`` "categorical" with the ``categories`` that go ``yes``:
    their values where ``labels`` has the feature's dictionary, else codes).
    Built without recursion: a chain-shaped tree may be thousands of levels deep."""
    depth = _depths(tree)
    nodes = {}
    for node in reversed(_preorder(tree)):  # children before their parent
        out = _node_dict(tree, names, with_stats, node, depth[node], labels)
        if tree.feature[node] >= 0:
            out["children"] = [nodes.pop(int(tree.left[node])),
                               nodes.pop(int(tree.right[node]))]
        nodes[node] = out
    return nodes[0]


def _json_text(value, indent=1):
    """``json.dumps(value, indent=indent)``, written without recursion (json's encoder
    recurses once per level of nesting and stops near a thousand levels; a tree dump
    nests two levels per tree level). For dicts, lists, strings, numbers, bools, None."""
    parts, stack = [], [(False, value, 0)]  # (is text to write as is, item, level)
    while stack:
        text, item, level = stack.pop()
        if text:
            parts.append(item)
        elif isinstance(item, (dict, list)) and item:
            pad, inner = "\n" + " " * (indent * level), "\n" + " " * (indent * (level + 1))
            is_dict = isinstance(item, dict)
            entries = list(item.items()) if is_dict else [(None, v) for v in item]
            parts.append("{" if is_dict else "[")
            stack.append((True, pad + ("}" if is_dict else "]"), level))
            for k in range(len(entries) - 1, -1, -1):
                key, v = entries[k]
                stack.append((False, v, level + 1))
                head = inner if k == 0 else "," + inner
                stack.append((True, head + (json.dumps(key) + ": " if is_dict else ""), level))
        else:
            parts.append(json.dumps(item))
    return "".join(parts)


def dump_model(booster, fout=None, format="text", with_stats=True):
    """The whole model as text (``booster[i]:`` then the tree) or JSON (a list of trees)."""
    if format not in ("text", "json"):
        raise ValueError(f"format must be 'text' or 'json', got {format!r}")
    names, labels = booster.feature_names, booster.category_dictionaries
    if format == "text":
        out = "".join(f"booster[{i}]:\n" + tree_to_text(t, names, with_stats, labels)
                      for i, t in enumerate(booster.trees))
    else:
        out = _json_text([tree_to_dict(t, names, with_stats, labels) for t in booster.trees],
                         indent=1)
    if fout is not None:
        with open(fout, "w", encoding="utf-8") as fh:
            fh.write(out)
    return out


def trees_to_dataframe(booster):
    """One row per node of every tree (pandas DataFrame): Tree, Node, ID, Feature (``Leaf``
    at leaves), Split (the threshold), Category (the categories going ``Yes`` at a
    categorical split: their values), Yes, No, Missing, Gain, Cover, Count, Value."""
    try:
        import pandas as pd
    except ImportError:
        raise ImportError("trees_to_dataframe needs pandas: pip install boostwood[pandas]") \
            from None
    names, labels = booster.feature_names, booster.category_dictionaries
    rows = []
    for t_id, t in enumerate(booster.trees):
        for node in range(t.n_nodes):
            leaf = t.feature[node] < 0
            categorical = t.split_kind[node] == CATEGORICAL
            kid = (lambda c: np.nan if leaf else f"{t_id}-{c}")
            rows.append(dict(
                Tree=t_id, Node=node, ID=f"{t_id}-{node}",
                Feature="Leaf" if leaf else _feature_name(names, t.feature[node]),
                Split=np.nan if leaf or categorical else float(t.threshold[node]),
                Category=category_values(t, node, labels) if categorical else np.nan,
                Yes=kid(t.left[node]), No=kid(t.right[node]),
                Missing=np.nan if leaf else f"{t_id}-{_missing(t, node)}",
                Gain=float(t.gain[node]), Cover=float(t.cover[node]), Count=float(t.count[node]),
                Value=float(t.value[node])))
    return pd.DataFrame(rows)


def export_text(tree, feature_names=None, decimals=3, show_missing=True, leaf_label=None,
                labels=None):
    """A single tree as indented rules, in scikit-learn's ``export_text`` style::

        |--- x2 <= 2.500 (missing: left)
        |   |--- value: -0.500
        |--- x2 >  2.500
        |   |--- value: 0.667

    ``leaf_label(node)`` may name a leaf instead (e.g. ``"class: 1"``); ``labels`` (a
    model's category dictionaries) writes category sets as values.
    """
    lines = []
    stack = [(0, 0, None)]  # (node, depth, the line to write first), without recursion
    while stack:
        node, depth, line = stack.pop()
        if line is not None:
            lines.append(line)
        if node < 0:
            continue
        bar = "|   " * depth + "|--- "
        if tree.feature[node] < 0:
            label = leaf_label(node) if leaf_label is not None else None
            lines.append(f"{bar}{label or 'value: ' + _fmt(tree.value[node], decimals)}")
            continue
        yes = condition(tree, node, feature_names, decimals, sep=" ", labels=labels)
        no = condition(tree, node, feature_names, decimals, negate=True, sep=" ",
                       labels=labels)
        if tree.split_kind[node] != CATEGORICAL:
            no = no.replace(" > ", " >  ")  # aligned with "<="
        side = "left" if tree.default_left[node] else "right"
        note = f" (missing: {side})" if show_missing else ""
        stack.append((int(tree.right[node]), depth + 1,
                      f"{bar}{no}{note if side == 'right' else ''}"))
        stack.append((int(tree.left[node]), depth + 1,
                      f"{bar}{yes}{note if side == 'left' else ''}"))
    return "\n".join(lines) + "\n"


def tree_layout(tree):
    """(x, depth) of every node for drawing: leaves at consecutive x in left-to-right
    order, each split centred over its children."""
    x = np.zeros(tree.n_nodes)
    depth = np.zeros(tree.n_nodes, dtype=np.int64)
    next_leaf = 0
    for node in _preorder(tree):  # leaves numbered left to right
        if tree.feature[node] >= 0:
            depth[tree.left[node]] = depth[tree.right[node]] = depth[node] + 1
        else:
            x[node] = next_leaf
            next_leaf += 1
    for node in reversed(_preorder(tree)):  # children before their parent
        if tree.feature[node] >= 0:
            x[node] = 0.5 * (x[tree.left[node]] + x[tree.right[node]])
    return x, depth
