"""``cv``: k-fold cross-validation of the boosting loop."""
import numba
import numpy as np

from .._comm import threadsafe_numba
from .._config import resolve_nthreads
from ..data import Dataset
from ..data.checks import Param, check_value
from ._side_by_side import SideBySide
from .callback import TrainingCallback
from .engine import train
from .params import replace_param, resolve_params

_ARGS = {"nfold": Param(3, "int", 2), "stratified": Param(False, "bool"),
         "seed": Param(0, "int"), "shuffle": Param(True, "bool"),
         "early_stopping_rounds": Param(None, "optional_int", 1),
         "return_folds": Param(False, "bool")}


def fold_ids(n_rows, nfold, seed=0, shuffle=True, labels=None):
    """Fold of each row: a seeded permutation of 0..n-1 modulo ``nfold`` (``shuffle``;
    else the rows dealt round-robin in order); with ``labels`` (stratified) the rows,
    in that random order and sorted by label, are dealt round-robin, so every fold has
    each class in the same proportion up to one row."""
    check_value("nfold", nfold, _ARGS["nfold"])
    if n_rows < nfold:
        raise ValueError(f"nfold={nfold} needs at least {nfold} rows, got {n_rows}")
    order = np.random.default_rng(seed).permutation(n_rows) if shuffle else np.arange(n_rows)
    if labels is None:
        return order % nfold
    order = order[np.argsort(np.asarray(labels)[order], kind="stable")]
    folds = np.empty(n_rows, dtype=np.int64)
    folds[order] = np.arange(n_rows) % nfold
    return folds


def subset(data, rows, reference=None):
    """A Dataset of the given rows of ``data`` (labels, weights, base margins, names and
    binning settings kept)."""
    pick = (lambda a: None if a is None else a[rows])  # noqa: E731
    f = data.features.take_rows(rows)
    return Dataset(f.dense if f.dense is not None else f.csc, pick(data.label),
                   weight=pick(data.weight), base_margin=pick(data.base_margin),
                   feature_names=data.feature_names, reference=reference,
                   max_bin=data.max_bin, bin_construct_sample_cnt=data.bin_construct_sample_cnt,
                   seed=data.seed)


def cv(params, dtrain, num_boost_round=10, nfold=3, stratified=False, folds=None,
       early_stopping_rounds=None, seed=0, shuffle=True, obj=None, custom_metric=None,
       callbacks=None, return_folds=False):
    """Cross-validate ``train`` on ``nfold`` folds of ``dtrain``.

    Parameters
    ----------
    params, num_boost_round, obj, custom_metric, callbacks : as in :func:`train`
    dtrain : Dataset with labels
    nfold : int, default=3
    stratified : bool, default=False; folds keep the class proportions (classification)
    folds : array-like of shape (n_rows,), optional; the fold of every row (overrides
        ``nfold``, ``stratified``, ``seed`` and ``shuffle``)
    early_stopping_rounds : int, optional
        Cut the curves at the round with the best mean test value of the last metric
        if it did not improve for this many rounds after it.
    seed, shuffle : how rows are dealt to folds
    return_folds : bool, default=False; also return each fold's evaluation log

    With ``nthread`` of 2 or more, ``min(nfold, nthread)`` folds train at once, each on
    its share of the threads (every fold's log is what training it alone gives); that
    many folds' data and training state are held at once (XGBoost's and LightGBM's cv
    hold all ``nfold``). A custom ``obj``, ``custom_metric`` or ``callbacks`` (code
    that need not be thread-safe) trains the folds in turn.

    Returns
    -------
    dict ``{"train-<metric>-mean": array, "train-<metric>-std": ..., "test-<metric>-mean":
    ..., "test-<metric>-std": ...}`` (one value per round, as XGBoost's ``cv``), and with
    ``return_folds`` the list of per-fold ``{"train": {...}, "test": {...}}`` logs.
    """
    if not isinstance(dtrain, Dataset):
        raise TypeError(f"dtrain must be a boostwood.Dataset, got {type(dtrain).__name__}")
    if dtrain.label is None:
        raise ValueError("cv needs a Dataset with labels")
    for name, value in (("nfold", nfold), ("stratified", stratified), ("seed", seed),
                        ("shuffle", shuffle), ("early_stopping_rounds", early_stopping_rounds),
                        ("return_folds", return_folds)):
        check_value(name, value, _ARGS[name])
    n = dtrain.num_row()
    if folds is None:
        folds = fold_ids(n, nfold, seed, shuffle, dtrain.label if stratified else None)
    else:
        folds = np.asarray(folds)
        if folds.shape != (n,) or not np.issubdtype(folds.dtype, np.integer):
            raise ValueError("folds must hold one integer fold id per row")
    ids = np.unique(folds)
    if ids.size < 2:
        raise ValueError(f"folds must hold at least two fold ids, got {ids.tolist()}")

    def fit(k, workers=None):
        """Train on every fold but fold ``ids[k]``, test on it; its evaluation log. Side
        by side, on the worker's threads, stopping early once another fold failed."""
        dtr = subset(dtrain, np.nonzero(folds != ids[k])[0])
        dte = subset(dtrain, np.nonzero(folds == ids[k])[0], reference=dtr)
        log, p, cbs = {}, params, callbacks
        if workers is not None:
            p = replace_param(params, "nthread", numba.get_num_threads())
            cbs = [_StopWhenSet(workers.stop)]
        train(p, dtr, num_boost_round, evals=[(dtr, "train"), (dte, "test")],
              evals_result=log, verbose_eval=False, obj=obj, custom_metric=custom_metric,
              callbacks=cbs)
        return log

    workers = _fold_workers(params, ids.size, (obj, custom_metric, callbacks))
    if workers is None:
        logs = [fit(k) for k in range(ids.size)]
    else:
        logs = workers.run(ids.size, lambda _, k: fit(k, workers))
    result = {}
    for name in ("train", "test"):
        for metric in logs[0][name]:
            curves = np.array([log[name][metric] for log in logs])
            result[f"{name}-{metric}-mean"] = curves.mean(axis=0)
            result[f"{name}-{metric}-std"] = curves.std(axis=0)
    if early_stopping_rounds is not None:
        result = _early_stop(result, logs, params, early_stopping_rounds)
    return (result, logs) if return_folds else result


def _fold_workers(params, n_folds, user_code):
    """Workers that train the folds side by side (see :mod:`._side_by_side`), or None:
    in turn, when the run has one thread, numba's threading layer is not thread-safe,
    or the user passes code called during training (``obj``, ``custom_metric``,
    ``callbacks``), which need not be thread-safe."""
    nthread = resolve_nthreads(resolve_params(params)["nthread"])
    if (not SideBySide.enabled or min(n_folds, nthread) < 2
            or any(c is not None for c in user_code) or not threadsafe_numba()):
        return None
    return SideBySide([None] * min(n_folds, nthread), nthread)


class _StopWhenSet(TrainingCallback):
    """Ends a fold's training after the round in which ``event`` was set (another fold
    failed or was interrupted: this fold's log is discarded)."""

    def __init__(self, event):
        self.event = event

    def after_iteration(self, model, epoch, evals_log):
        return self.event.is_set()


def _early_stop(result, logs, params, rounds):
    from .metrics import get_metric
    metric = list(logs[0]["test"])[-1]
    mean = result[f"test-{metric}-mean"]
    try:
        higher = get_metric(metric, params).higher_better
    except ValueError:  # a custom metric: lower is better
        higher = False
    best = int(np.argmax(mean) if higher else np.argmin(mean))
    if len(mean) - 1 - best >= rounds:
        return {k: v[:best + 1] for k, v in result.items()}
    return result
