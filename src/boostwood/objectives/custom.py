"""User-defined objectives: a Python callable as in XGBoost, or a compiled elementwise loss.

* ``train(..., obj=f)`` with ``f(preds, dtrain) -> (grad, hess)``: ``preds`` are
  the raw margins (shape (n_rows,), or (n_rows, K) with several outputs), and
  ``grad``, ``hess`` have the same shape; sample weights are the function's
  business, as in XGBoost.
* ``@boostwood.objective`` on ``def loss(label, margin): return grad, hess``
  (plain scalar Python that numba can compile): the function runs inside the
  gradient kernel, in parallel, with sample weights applied, at the speed of a
  built-in loss.

Either way the ``objective`` parameter still sets the link (what ``predict``
returns), the default metric and the label checks; without ``base_score`` the
initial margin is 0, since an arbitrary loss has no known minimiser.
"""
import numpy as np
from numba import njit

from .._kernels.loss import compiled_objective_grad


class CompiledObjective:
    """A scalar ``(label, margin) -> (grad, hess)`` function compiled by numba.

    Create it with the :func:`objective` decorator and pass it as ``obj`` to ``train``.
    """

    def __init__(self, fn):
        self.py_func = fn
        self.jitted = njit(fn)
        self.__name__ = getattr(fn, "__name__", "objective")
        self.__doc__ = fn.__doc__

    def __call__(self, label, margin):
        return self.py_func(label, margin)


def objective(fn):
    """Decorator: compile a scalar loss derivative ``fn(label, margin) -> (grad, hess)``.

    Example::

        @boostwood.objective
        def squared(label, margin):
            return margin - label, 1.0

        booster = boostwood.train(params, dtrain, 100, obj=squared)
    """
    if not callable(fn):
        raise TypeError(f"boostwood.objective decorates a function, got {type(fn).__name__}")
    return CompiledObjective(fn)


class CustomObjective:
    """Wraps a built-in objective (link, metric, label checks) around a user's gradients."""

    def __init__(self, base, fn, dtrain):
        self.base, self.fn, self.dtrain = base, fn, dtrain
        self.n_outputs = base.n_outputs
        self.default_metric = base.default_metric
        self.line_search = False

    def __getattr__(self, name):  # link, loss, checks: the base objective's
        return getattr(self.base, name)

    def init_score(self, info, reducer=None):
        return np.zeros(self.n_outputs)

    def gradient(self, info, raw, gh_out):
        y, w = info.label, info.weight
        if isinstance(self.fn, CompiledObjective):
            if self.n_outputs != 1:
                raise ValueError("a compiled elementwise objective supports one output per row")
            compiled_objective_grad(self.fn.jitted, y, raw, w, gh_out)
            return
        preds = raw[:, 0] if self.n_outputs == 1 else raw
        out = self.fn(preds.copy(), self.dtrain)
        if not (isinstance(out, tuple) and len(out) == 2):
            raise TypeError("a custom objective must return (grad, hess)")
        for name, arr in zip(("grad", "hess"), out):
            arr = np.asarray(arr, dtype=np.float64)
            if arr.shape != preds.shape:
                raise ValueError(f"custom objective returned {name} of shape {arr.shape}, "
                                 f"expected {preds.shape}")
            if not np.all(np.isfinite(arr)):
                raise ValueError(f"custom objective returned non-finite {name}")
            gh_out[:, :, 0 if name == "grad" else 1] = arr.reshape(len(y), -1).T
