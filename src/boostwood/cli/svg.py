"""Inline SVG pictures for the HTML report: no plotting library, nothing to download."""
import html

import numpy as np

from ..boosting.dump import condition, tree_layout


def _esc(text):
    return html.escape(str(text))


def line_chart(xs, ys, xlabel, ylabel, width=640, height=300):
    """A polyline of ys against xs with axis labels and min / max ticks."""
    pad = 50
    xs, ys = np.asarray(xs, float), np.asarray(ys, float)
    x0, x1 = xs.min(), max(xs.max(), xs.min() + 1)
    y0, y1 = ys.min(), ys.max()
    y1 = y1 if y1 > y0 else y0 + 1e-12
    px = pad + (xs - x0) / (x1 - x0) * (width - 2 * pad)
    py = height - pad - (ys - y0) / (y1 - y0) * (height - 2 * pad)
    pts = " ".join(f"{a:.1f},{b:.1f}" for a, b in zip(px, py))
    return (f'<svg width="{width}" height="{height}" '
            f'role="img" aria-label="{_esc(ylabel)} by {_esc(xlabel)}">'
            f'<rect width="100%" height="100%" fill="white"/>'
            f'<line x1="{pad}" y1="{height - pad}" x2="{width - pad}" y2="{height - pad}" '
            f'stroke="black"/><line x1="{pad}" y1="{pad}" x2="{pad}" y2="{height - pad}" '
            f'stroke="black"/><polyline fill="none" stroke="#1f77b4" stroke-width="2" '
            f'points="{pts}"/>'
            f'<text x="{width / 2}" y="{height - 10}" text-anchor="middle">{_esc(xlabel)}</text>'
            f'<text x="12" y="{height / 2}" transform="rotate(-90 12 {height / 2})" '
            f'text-anchor="middle">{_esc(ylabel)}</text>'
            f'<text x="{pad - 4}" y="{height - pad}" text-anchor="end">{y0:.4g}</text>'
            f'<text x="{pad - 4}" y="{pad + 4}" text-anchor="end">{y1:.4g}</text>'
            f'<text x="{pad}" y="{height - pad + 16}">{x0:.0f}</text>'
            f'<text x="{width - pad}" y="{height - pad + 16}" text-anchor="end">{x1:.0f}</text>'
            f'</svg>')


def bar_chart(labels, values, width=640, bar=18):
    """Horizontal bars, largest first."""
    order = np.argsort(values)[::-1]
    top = max(float(np.max(values)), 1e-300)
    left, height = 160, bar * len(values) + 20
    parts = [f'<svg width="{width}" height="{height}" '
             f'role="img" aria-label="importance"><rect width="100%" height="100%" fill="white"/>']
    for row, i in enumerate(order):
        y = 10 + row * bar
        w = (width - left - 80) * values[i] / top
        parts.append(f'<text x="{left - 6}" y="{y + bar * 0.7}" text-anchor="end">'
                     f'{_esc(labels[i])}</text><rect x="{left}" y="{y + 2}" width="{w:.1f}" '
                     f'height="{bar - 4}" fill="#1f77b4"/><text x="{left + w + 4:.1f}" '
                     f'y="{y + bar * 0.7}">{values[i]:.4g}</text>')
    return "".join(parts) + "</svg>"


def tree_drawing(tree, names, precision=4, labels=None):
    """One tree: boxes for nodes (rule and gain, or value and cover), edges marked
    yes / no and where missing values go; ``labels``: category dictionaries (sets are
    written as values)."""
    x, depth = tree_layout(tree)
    sx, sy, box_w, box_h = 130, 80, 120, 34
    width = int(sx * (x.max() + 1)) + 20
    height = int(sy * (depth.max() + 1)) + 20
    cx = lambda n: 10 + box_w / 2 + sx * x[n]  # noqa: E731
    cy = lambda n: 10 + box_h / 2 + sy * depth[n]  # noqa: E731
    parts = [f'<svg width="{width}" height="{height}" '
             f'font-size="10" role="img" aria-label="tree">']
    for n in range(tree.n_nodes):
        if tree.feature[n] < 0:
            continue
        for child, word in ((tree.left[n], "yes"), (tree.right[n], "no")):
            missing = bool(tree.default_left[n]) == (word == "yes")
            parts.append(f'<line x1="{cx(n):.0f}" y1="{cy(n):.0f}" x2="{cx(child):.0f}" '
                         f'y2="{cy(child):.0f}" stroke="#888"/><text x="{(cx(n) + cx(child)) / 2:.0f}" '
                         f'y="{(cy(n) + cy(child)) / 2:.0f}" fill="#444">'
                         f'{word}{", missing" if missing else ""}</text>')
    for n in range(tree.n_nodes):
        leaf = tree.feature[n] < 0
        if leaf:
            lines = (f"leaf {tree.value[n]:.{precision}g}", f"cover {tree.cover[n]:.{precision}g}")
        else:
            lines = (condition(tree, n, names or None, sep=" ", precision=precision,
                               labels=labels),
                     f"gain {tree.gain[n]:.{precision}g}")
        fill = "#e8f4e8" if leaf else "#e8eef8"
        parts.append(f'<rect x="{cx(n) - box_w / 2:.0f}" y="{cy(n) - box_h / 2:.0f}" '
                     f'width="{box_w}" height="{box_h}" rx="5" fill="{fill}" stroke="#666"/>'
                     f'<text x="{cx(n):.0f}" y="{cy(n) - 3:.0f}" text-anchor="middle">'
                     f'{_esc(lines[0])}</text><text x="{cx(n):.0f}" y="{cy(n) + 11:.0f}" '
                     f'text-anchor="middle">{_esc(lines[1])}</text>')
    return "".join(parts) + "</svg>"
