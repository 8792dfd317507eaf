"""Weighted quantile sketch (Chen & Guestrin 2016, appendix A).

A *summary* of a weighted multiset D = {(x_i, w_i)} keeps a few sorted values
x_1 < ... < x_k of D and, for each, bounds on its weighted ranks::

    rmin(x) <= r^-(x) = sum of w over points  < x
    rmax(x) >= r^+(x) = sum of w over points <= x
    w(x)    <= weight of the points equal to x

It is eps-approximate when ``rmax(x_{i+1}) - rmin(x_i) - w(x_{i+1}) - w(x_i) <= eps W``
for every pair of neighbours (W = total weight). Three operations keep it so:

* **exact**: a summary of raw points (every distinct value, exact ranks, eps = 0);
* **merge** of an eps1- and an eps2-approximate summary is max(eps1, eps2)-approximate;
* **prune** to b + 1 values adds 1/b to eps.

:class:`WeightedQuantileSketch` streams points through these: buffers are
summarised exactly, pruned, and merged like a binary counter (level i holds a
summary of 2^i buffers), so every point goes through at most ``n_levels``
prunes and the final summary is ``eps``-approximate for any stream up to
``max_n`` points. Summaries of different shards merge the same way, which is
how a distributed Dataset will combine per-worker sketches.

:meth:`Summary.query` answers a rank d with a value x whose true weighted rank
interval ``[r^-(x), r^+(x)]`` lies within ``eps W`` of d (tested against exact
weighted quantiles in ``tests/test_sketch.py``).
"""
import math

import numpy as np


class Summary:
    """An eps-approximate summary: sorted distinct ``values`` with rank bounds.

    Parameters
    ----------
    values, rmin, rmax, wmin : ndarray of shape (k,), float64
    total : float, total weight W of the points summarised
    """

    __slots__ = ("values", "rmin", "rmax", "wmin", "total")

    def __init__(self, values, rmin, rmax, wmin, total):
        self.values, self.rmin, self.rmax, self.wmin = values, rmin, rmax, wmin
        self.total = float(total)

    @classmethod
    def empty(cls):
        z = np.zeros(0)
        return cls(z, z, z, z, 0.0)

    @classmethod
    def from_points(cls, x, w=None):
        """Exact summary of points ``x`` (NaN and zero-weight points are left out)."""
        x = np.asarray(x, dtype=np.float64).ravel()
        w = np.ones_like(x) if w is None else np.asarray(w, dtype=np.float64).ravel()
        if w.shape != x.shape:
            raise ValueError(f"weights have shape {w.shape}, values {x.shape}")
        if np.any(w < 0) or not np.all(np.isfinite(w)):
            raise ValueError("sketch weights must be finite and non-negative")
        keep = ~np.isnan(x) & (w > 0)
        x, w = x[keep], w[keep]
        if x.size == 0:
            return cls.empty()
        values, inverse = np.unique(x, return_inverse=True)
        wsum = np.bincount(inverse, weights=w, minlength=values.size)
        rmax = np.cumsum(wsum)
        return cls(values, rmax - wsum, rmax, wsum, rmax[-1])

    @classmethod
    def from_value_weights(cls, values, weights):
        """Exact summary from sorted distinct ``values`` and the total weight of each
        (values of zero weight are dropped)."""
        keep = weights > 0
        values, weights = values[keep], np.asarray(weights, dtype=np.float64)[keep]
        if values.size == 0:
            return cls.empty()
        rmax = np.cumsum(weights)
        return cls(values, rmax - weights, rmax, weights, rmax[-1])

    def __len__(self):
        return self.values.size

    def eps(self):
        """The smallest eps for which this summary is eps-approximate."""
        if self.values.size < 2 or self.total <= 0:
            return 0.0
        gap = self.rmax[1:] - self.rmin[:-1] - self.wmin[1:] - self.wmin[:-1]
        return max(float(gap.max()), 0.0) / self.total

    # -- rank bounds of arbitrary values ------------------------------------------------
    def _bounds_at(self, x):
        """(rmin, rmax, wmin) of this summary evaluated at sorted values ``x``.

        For a value not kept here: rmin = rmin(y) + w(y) of the largest kept
        y < x (0 if none) and rmax = rmax(z) - w(z) of the smallest kept z > x
        (W if none); its weight bound is 0.
        """
        v = self.values  # not empty: merge() handles empty summaries itself
        pos = np.searchsorted(v, x, side="left")
        found = (pos < v.size) & (v[np.minimum(pos, v.size - 1)] == x)
        rmin = np.empty_like(x)
        rmax = np.empty_like(x)
        wmin = np.zeros_like(x)
        hit = pos[found]
        rmin[found], rmax[found], wmin[found] = self.rmin[hit], self.rmax[hit], self.wmin[hit]
        miss = ~found
        below = pos[miss] - 1  # largest kept value < x
        above = pos[miss]      # smallest kept value > x
        lo = np.where(below >= 0, self.rmin[np.maximum(below, 0)] + self.wmin[np.maximum(below, 0)],
                      0.0)
        top = np.minimum(above, v.size - 1)
        hi = np.where(above < v.size, self.rmax[top] - self.wmin[top], self.total)
        rmin[miss], rmax[miss] = lo, hi
        return rmin, rmax, wmin

    def merge(self, other):
        """Summary of the union of both point sets (eps = the larger of the two)."""
        if len(self) == 0:
            return other
        if len(other) == 0:
            return self
        values = np.union1d(self.values, other.values)
        a = self._bounds_at(values)
        b = other._bounds_at(values)
        return Summary(values, a[0] + b[0], a[1] + b[1], a[2] + b[2], self.total + other.total)

    def query(self, d):
        """Values whose weighted ranks are closest to the ranks ``d`` (array or scalar).

        Between neighbours x_i, x_{i+1} with rmin+rmax <= 2d < the next one's,
        answer x_i when 2d < rmin(x_i) + w(x_i) + rmax(x_{i+1}) - w(x_{i+1}),
        else x_{i+1} (the query function of the paper's appendix).
        """
        if len(self) == 0:
            raise ValueError("cannot query an empty summary")
        d2 = 2.0 * np.asarray(d, dtype=np.float64)
        mid = self.rmin + self.rmax
        i = np.searchsorted(mid, d2, side="right") - 1
        i = np.clip(i, 0, len(self) - 1)
        j = np.minimum(i + 1, len(self) - 1)
        pick_next = (d2 >= self.rmin[i] + self.wmin[i] + self.rmax[j] - self.wmin[j]) & (j > i) \
            & (d2 >= mid[0])
        return self.values[np.where(pick_next, j, i)]

    def prune(self, b):
        """Keep at most b + 1 values: the extremes and the answers to ranks k W / b."""
        if len(self) <= b + 1:
            return self
        ranks = self.total * np.arange(1, b) / b
        keep = np.union1d(self.query(ranks), self.values[[0, -1]])
        idx = np.searchsorted(self.values, keep)
        return Summary(self.values[idx], self.rmin[idx], self.rmax[idx], self.wmin[idx],
                       self.total)

    def cuts(self, n):
        """About ``n`` candidate split values: the answers to ranks k W / n, k = 1..n,
        deduplicated and ascending (the last is the largest value)."""
        if len(self) == 0:
            return np.zeros(0)
        ranks = self.total * np.arange(1, n + 1) / n
        return np.unique(np.concatenate([self.query(ranks), self.values[-1:]]))


class WeightedQuantileSketch:
    """Streaming eps-approximate weighted quantile summary.

    Parameters
    ----------
    eps : float, default=0.03
        Rank error bound, as a fraction of the total weight.
    max_n : int, default=2**40
        Largest number of points the guarantee must hold for; it sets the number
        of levels, hence the summary size ``b = ceil(n_levels / eps) + 1``.
    """

    def __init__(self, eps=0.03, max_n=2 ** 40):
        if not (0.0 < eps < 1.0):
            raise ValueError(f"eps must be in (0, 1), got {eps!r}")
        self.eps = float(eps)
        n_levels = 1
        while True:  # smallest number of levels whose buffers cover max_n points
            b = math.ceil(n_levels / self.eps) + 1
            if b * 2 ** n_levels >= max_n:
                break
            n_levels += 1
        self.limit = b
        self._levels = []
        self._buf_x, self._buf_w, self._buffered = [], [], 0

    def push(self, x, w=None):
        """Add points ``x`` with weights ``w`` (NaN and zero weights are ignored)."""
        x = np.asarray(x, dtype=np.float64).ravel()
        w = np.ones_like(x) if w is None else np.asarray(w, dtype=np.float64).ravel()
        if w.shape != x.shape:
            raise ValueError(f"weights have shape {w.shape}, values {x.shape}")
        for s in range(0, x.size, self.limit):
            self._buf_x.append(x[s:s + self.limit])
            self._buf_w.append(w[s:s + self.limit])
            self._buffered += self._buf_x[-1].size
            if self._buffered >= self.limit:
                self._flush()
        return self

    def _flush(self):
        if not self._buffered:
            return
        summary = Summary.from_points(np.concatenate(self._buf_x), np.concatenate(self._buf_w))
        self._buf_x, self._buf_w, self._buffered = [], [], 0
        self._carry(summary.prune(self.limit - 1), 0)

    def _carry(self, summary, level):
        while True:
            if level == len(self._levels):
                self._levels.append(None)
            if self._levels[level] is None:
                self._levels[level] = summary
                return
            summary = summary.merge(self._levels[level]).prune(self.limit - 1)
            self._levels[level] = None
            level += 1

    def merge(self, other):
        """Add every point of another sketch (e.g. another data shard's)."""
        self._carry(other.summary(), 0)
        return self

    def summary(self):
        """The eps-approximate summary of every point pushed so far."""
        self._flush()
        out = Summary.empty()
        for s in self._levels:
            if s is not None:
                out = out.merge(s)
        return out
