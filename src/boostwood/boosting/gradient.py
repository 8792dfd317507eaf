"""Friedman's gradient boosting machine (``boosting="gradient"``): first-order trees.

Friedman (2001), algorithm 1 and TreeBoost, as in the notes (000 step 2.1-2.4,
003 eqs. 16 and 20, 004 step 2.3):

* the structure of tree k is a least-squares fit to the pseudo-residuals
  ``r_i = -dL/dF(y_i, F_i)``: in Newton form, g_i = -w_i r_i and h_i = w_i, so
  the split gain is the weighted reduction of squared error (``lambda`` and
  ``alpha`` still regularise that fit);
* ``line_search="leaf"`` (TreeBoost, the default) sets every leaf by its own line
  search gamma_j = argmin_gamma sum_{i in R_j} w_i L(y_i, F_i + gamma): the mean
  residual for squared error, the weighted median for L1, the alpha-quantile
  for the pinball loss, one Huber M-step, and one Newton step
  sum_j(w r) / sum_j(w h) for the other losses -- for the logistic loss that is
  sum r / sum |r|(1 - |r|) (003 eq. 16), for softmax the same times (K - 1)/K
  (003 eq. 20); ``count:poisson``'s h carries its ``poisson_max_delta_step`` (e^(F + d),
  0.7 by default, about half the step): ``poisson_max_delta_step=0`` for the plain step;
* ``line_search="global"`` keeps the least-squares leaves h(x) (mean residual of
  each leaf) and finds one step rho = argmin_rho sum_i w_i L(y_i, F_i + rho h(x_i))
  for the whole tree (000 step 2.3); ``"none"`` takes rho = 1.

Every leaf is then shrunk by the learning rate.
"""
import numpy as np

from ..data.rowinfo import RowInfo

_TINY = 1e-150


class LeafRows:
    """The rows of every leaf of a grown tree, as (row index, leaf number) pairs."""

    def __init__(self, buf, sides, starts, counts):
        self.n_leaves = len(counts)
        parts = [buf[s, a:a + c] for s, a, c in zip(sides, starts, counts)]
        self.rows = np.concatenate(parts) if parts else np.empty(0, dtype=np.int32)
        self.leaf = np.repeat(np.arange(self.n_leaves), counts)
        self.offsets = np.concatenate([[0], np.cumsum(counts)]).astype(np.int64)

    def sums(self, values):
        """Per-leaf sums of ``values`` (one per row of the data set), in float64."""
        return np.bincount(self.leaf, weights=np.asarray(values, dtype=np.float64)[self.rows],
                           minlength=self.n_leaves)

    def of(self, j):
        """The rows of leaf j."""
        return self.rows[self.offsets[j]:self.offsets[j + 1]]


class GradientBoosting:
    """Per-round work of ``boosting="gradient"`` inside :class:`TrainingState`.

    Parameters
    ----------
    obj : the objective (gradients, loss, line searches)
    line_search : "leaf", "global" or "none"
    y, w : labels and sample weights of the training set
    """

    def __init__(self, obj, line_search, y, w):
        self.obj, self.line_search, self.y, self.w = obj, line_search, y, w
        self.hess = None
        #: Friedman's (K - 1)/K for the multinomial deviance (003 eq. 20); 1 otherwise
        self.scale = obj.gradient_leaf_scale

    def prepare(self, gh):
        """Keep the loss's hessians for the leaf steps and grow on h = w (least squares)."""
        self.hess = gh[:, :, 1].astype(np.float64)
        gh[:, :, 1] = self.w

    def leaf_values(self, gh_k, leaves, raw, k, eta):
        """Shrunk leaf values of tree k (in leaf order) from its leaves' rows.

        gh_k : (n, 2) float32, this tree's g and h = w
        leaves : LeafRows
        raw : (n, K) margins: before this round in column k; with several outputs the
            round's earlier trees are already in theirs (the trees grow in turn, and
            a global step reads every column)
        """
        G, W = leaves.sums(gh_k[:, 0]), leaves.sums(self.w)
        if self.line_search == "leaf":
            if self.obj.line_search:
                gamma = np.array([self.obj.leaf_values(self.y[idx], raw[idx, k], self.w[idx],
                                                       output=k)
                                  for idx in (leaves.of(j) for j in range(leaves.n_leaves))])
            else:
                H = leaves.sums(self.hess[k])
                gamma = self.scale * np.where(H > _TINY, -G / np.maximum(H, _TINY), 0.0)
            return eta * gamma
        fit = np.where(W > _TINY, -G / np.maximum(W, _TINY), 0.0)  # least-squares leaves
        if self.line_search == "none":
            return eta * fit
        rho = self.global_step(fit[leaves.leaf], leaves.rows, raw, k)
        return eta * rho * fit

    def global_step(self, h, rows, raw, k):
        """rho = argmin_rho sum_i w_i L(y_i, F_i + rho h_i) over ``rows`` (the bag).

        The derivative sum_i g_i(F_i + rho h_i) h_i is non-decreasing in rho for a
        convex loss and negative at 0 (h points downhill), so a bracket [0, hi] is
        grown by doubling and the root found by the Illinois method (to 1e-6 relative).
        """
        y, w = self.y[rows], self.w[rows]
        base = np.ascontiguousarray(raw[rows], dtype=np.float64)
        K = base.shape[1]
        gh = np.empty((K, rows.size, 2), dtype=np.float32)
        info = RowInfo.of(y, w)

        def slope(rho):
            trial = base.copy()
            trial[:, k] += rho * h
            self.obj.gradient(info, trial, gh)
            return float(np.dot(gh[k, :, 0].astype(np.float64), h))

        lo, f_lo = 0.0, slope(0.0)
        if not f_lo < 0:
            return 0.0
        hi, f_hi = 1.0, slope(1.0)
        while f_hi < 0 and hi < 2.0 ** 30:
            lo, f_lo, hi = hi, f_hi, 2.0 * hi
            f_hi = slope(hi)
        side, f_tol = 0, 1e-9 * abs(f_lo)
        for it in range(80):
            # Illinois steps, with a bisection every third step: a loss with a kinked
            # derivative (L1, pinball) has a step-shaped slope where secants stall
            secant = it % 3 != 2 and f_hi != f_lo
            x = (lo * f_hi - hi * f_lo) / (f_hi - f_lo) if secant else 0.5 * (lo + hi)
            f = slope(x)
            if abs(f) <= f_tol or hi - lo <= 1e-6 * hi:
                return x
            if f < 0:
                lo, f_lo = x, f
                if side == -1:
                    f_hi *= 0.5
                side = -1
            else:
                hi, f_hi = x, f
                if side == 1:
                    f_lo *= 0.5
                side = 1
        return 0.5 * (lo + hi)
