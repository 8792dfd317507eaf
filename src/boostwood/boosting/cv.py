"""``cv``: k-fold cross-validation of the boosting loop."""
import numba
import numpy as np

from .._comm import threadsafe_numba
from .._config import resolve_nthreads
from ..data import Dataset
from ..data.checks import Param, check_value
from ._side_by_side import SideBySide
from .callback import TrainingCallback, nan_metric_message
from .engine import train
from .params import DEFAULT_ROUNDS, model_params, replace_param, resolve_params, rounds_and_patience


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


def fold_pairs(folds, n_rows, labels, groups=None):
    """``folds`` of :func:`cv` as a list of (train rows, test rows) int64 arrays
    (``groups``: each row's query, given to a scikit-learn splitter, e.g. ``GroupKFold``)."""
    ids = _as_fold_ids(folds)
    if ids is not None:
        if not np.issubdtype(ids.dtype, np.integer):
            raise ValueError(f"folds as fold ids must be integers, got dtype {ids.dtype}")
        if ids.shape != (n_rows,):
            raise ValueError(f"folds as fold ids must hold one per row: {ids.size} ids "
                             f"for {n_rows} rows")
        uniq = np.unique(ids)
        if uniq.size < 2:
            raise ValueError(f"folds must hold at least two fold ids, got {uniq.tolist()}")
        return [(np.nonzero(ids != f)[0], np.nonzero(ids == f)[0]) for f in uniq]
    if hasattr(folds, "split"):  # a scikit-learn splitter
        folds = folds.split(np.zeros((n_rows, 1)), labels, groups)
    try:
        pairs = [tuple(p) for p in folds]
    except TypeError:
        raise TypeError("folds must be fold ids (one integer per row), a list of "
                        "(train_rows, test_rows) pairs or a scikit-learn splitter, got "
                        f"{type(folds).__name__}") from None
    if not pairs:
        raise ValueError("folds holds no (train_rows, test_rows) pair")
    return [_fold_pair(p, k, n_rows) for k, p in enumerate(pairs)]


def _as_fold_ids(folds):
    """``folds`` as a 1-d array of fold ids (an array, list, range, pandas or polars
    Series, ...), or None when it is not one (pairs, an iterator, a splitter)."""
    if hasattr(folds, "split") or not hasattr(folds, "__len__") or len(folds) == 0:
        return None
    try:
        ids = np.asarray(folds)
    except ValueError:  # ragged (train_rows, test_rows) pairs
        return None
    return ids if ids.ndim == 1 and ids.dtype != object else None


def _fold_pair(pair, k, n_rows):
    if len(pair) != 2:
        raise ValueError(f"folds[{k}] must be a (train_rows, test_rows) pair, got "
                         f"{len(pair)} entries")
    out = []
    for name, rows in zip(("train", "test"), pair):
        rows = np.asarray(rows)
        if rows.ndim != 1 or rows.size == 0 or not np.issubdtype(rows.dtype, np.integer):
            raise ValueError(f"folds[{k}]: the {name} rows must be a non-empty 1-d array "
                             f"of integer row indices, got dtype {rows.dtype}, shape "
                             f"{rows.shape}")
        if rows.min() < 0 or rows.max() >= n_rows:
            raise ValueError(f"folds[{k}]: {name} row indices must be in [0, {n_rows}), got "
                             f"[{rows.min()}, {rows.max()}]")
        out.append(rows.astype(np.int64))
    if np.intersect1d(out[0], out[1]).size:
        raise ValueError(f"folds[{k}]: {np.intersect1d(out[0], out[1]).size} rows are in "
                         "both its train and test rows")
    return out[0], out[1]


def cv(params, dtrain, num_boost_round=DEFAULT_ROUNDS, nfold=3, stratified=False, folds=None,
       early_stopping_rounds=None, seed=0, shuffle=True, obj=None, custom_metric=None,
       callbacks=None, return_folds=False):
    """Cross-validate ``train`` on ``nfold`` folds of ``dtrain``.

    Parameters
    ----------
    params, num_boost_round, obj, custom_metric, callbacks : as in :func:`train`
    dtrain : Dataset with labels
    nfold : int, default=3
    stratified : bool, default=False; folds keep the class proportions (classification)

    Ranking data (a Dataset with queries) is dealt to folds by query, so that no query
    has rows in two folds; ``folds`` given as ids or pairs must keep queries whole, and a
    scikit-learn splitter gets each row's query as ``groups`` (``GroupKFold``).
    folds : optional; overrides ``nfold``, ``stratified``, ``seed`` and ``shuffle``.
        An integer array of shape (n_rows,), the fold of every row; or, as XGBoost's and
        LightGBM's ``cv`` take, a list (or iterator) of ``(train_rows, test_rows)``
        integer index pairs, or a scikit-learn splitter (``KFold``, ``StratifiedKFold``,
        ...), whose ``split`` is given the labels. A pair whose test rows are also among
        its training rows is an error (the test score would be a training score).
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
    params, num_boost_round, early_stopping_rounds = _fold_params(
        resolve_params(params), num_boost_round, early_stopping_rounds)
    pairs = _pairs_of(dtrain, folds, nfold, stratified, seed, shuffle)

    def fit(k, workers=None):
        """Train on pair ``k``'s training rows, test on its test rows; its evaluation
        log. Side by side, on the worker's threads, stopping early once another fold
        failed."""
        dtr = dtrain.subset(pairs[k][0])
        dte = dtrain.subset(pairs[k][1], reference=dtr)
        log, p, cbs = {}, params, callbacks
        if workers is not None:
            p = replace_param(params, "nthread", numba.get_num_threads())
            cbs = [_StopWhenSet(workers.stop)]
        train(p, dtr, num_boost_round, evals=[(dtr, "train"), (dte, "test")],
              evals_result=log, verbose_eval=False, obj=obj, custom_metric=custom_metric,
              callbacks=cbs)
        return log

    workers = _fold_workers(params, len(pairs), (obj, custom_metric, callbacks))
    if workers is None:
        logs = [fit(k) for k in range(len(pairs))]
    else:
        logs = workers.run(len(pairs), lambda _, k: fit(k, workers))
    result = {}
    for name in ("train", "test"):
        for metric in logs[0][name]:
            curves = np.array([log[name][metric] for log in logs])
            result[f"{name}-{metric}-mean"] = curves.mean(axis=0)
            result[f"{name}-{metric}-std"] = curves.std(axis=0)
    if early_stopping_rounds is not None:
        result = _early_stop(result, logs, params, early_stopping_rounds)
    return (result, logs) if return_folds else result


def _pairs_of(dtrain, folds, nfold, stratified, seed, shuffle):
    """The (train rows, test rows) pairs of :func:`cv`; ranking data is dealt to folds by
    query (and a splitter gets each row's query as ``groups``)."""
    n, queries = dtrain.num_row(), dtrain.queries
    query_of = None if queries is None else queries.query_of_rows(n)
    if folds is None and queries is not None:  # ranking data: whole queries to a fold
        if stratified:
            raise ValueError("stratified folds split queries; ranking data (a Dataset with "
                             "group or qid) is dealt to folds by query: stratified=False")
        if queries.n_queries < nfold:
            raise ValueError(f"nfold={nfold} needs at least {nfold} queries (ranking data is "
                             f"dealt to folds by query), got {queries.n_queries}")
        folds = fold_ids(queries.n_queries, nfold, seed, shuffle)[query_of]
    elif folds is None:
        folds = fold_ids(n, nfold, seed, shuffle, dtrain.label if stratified else None)
    return fold_pairs(folds, n, dtrain.label, query_of)


def _fold_params(params, num_boost_round, early_stopping_rounds):
    """The folds' parameters, rounds and early-stopping patience (``params`` resolved):
    LightGBM's ``num_iterations`` and ``early_stopping_round`` in params as in
    :func:`train`, taken out of the folds' parameters (each fold trains every round;
    early stopping reads the folds' mean curve)."""
    rounds, patience = rounds_and_patience(params, num_boost_round, early_stopping_rounds,
                                           stacklevel=4)
    return model_params(params), rounds, patience


def _fold_workers(params, n_folds, user_code):
    """Workers that train the folds side by side (see :mod:`._side_by_side`), or None:
    in turn, when the run has one thread, numba's threading layer is not thread-safe,
    or the user passes code called during training (``obj``, ``custom_metric``,
    ``callbacks``), which need not be thread-safe."""
    nthread = resolve_nthreads(params["nthread"])
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
    if np.isnan(mean).any():
        raise ValueError(nan_metric_message(f"test-{metric}-mean", int(np.argmax(np.isnan(mean)))))
    try:
        higher = get_metric(metric, params).higher_better
    except ValueError:  # a custom metric: lower is better
        higher = False
    best = int(np.argmax(mean) if higher else np.argmin(mean))
    if len(mean) - 1 - best >= rounds:
        return {k: v[:best + 1] for k, v in result.items()}
    return result
