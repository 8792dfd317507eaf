"""``train``: the boosting loop, and nothing else."""
from .._comm import REDUCER_METHODS
from .._config import threads_given_back
from ..data import Dataset
from ..data.checks import Param, check_value
from .booster import Booster
from .callback import CallbackContainer, EarlyStopping, EvaluationMonitor, RecordEvaluation
from .params import DEFAULT_ROUNDS, MAX_ROUNDS, model_params, resolve_params, rounds_and_patience
from ._state import TrainingState


def _as_list(value, name):
    if value is None:
        return []
    if not isinstance(value, (list, tuple)):
        raise TypeError(f"{name} must be a list, got {type(value).__name__}")
    return list(value)


def _check_evals(evals, dtrain):
    evals = _as_list(evals, "evals")
    for item in evals:
        if not (isinstance(item, tuple) and len(item) == 2 and isinstance(item[1], str)):
            raise TypeError("evals must be a list of (Dataset, name) pairs")
    names = [n for _, n in evals]
    if len(set(names)) != len(names):
        raise ValueError(f"evals names must be unique, got {names}")
    for d, name in evals:
        if not isinstance(d, Dataset):
            raise TypeError(f"evals set {name!r} must be a boostwood.Dataset, got "
                            f"{type(d).__name__}")
        if d.label is None:  # (it crashed in the metrics with a TypeError)
            raise ValueError(f"evals set {name!r} has no label to evaluate against; give "
                             "the Dataset one")
        if d.num_feature() != dtrain.num_feature():
            raise ValueError(f"evals set {name!r} has {d.num_feature()} features but the "
                             f"training data has {dtrain.num_feature()}")
        # an evaluation set whose columns are not the training data's by name would be
        # scored (and early stopping decided) on columns matched by position
        if d.feature_names != dtrain.feature_names:
            raise ValueError(
                f"evals set {name!r} has feature names {d.feature_names[:5]}... but the "
                f"training data has {dtrain.feature_names[:5]}...: its columns would be "
                "matched by position; give it the training data's columns and names")
    return evals


_ROUNDS = Param(10, "int", 0, MAX_ROUNDS)
_VERBOSE = Param(True, "int", 0, MAX_ROUNDS)


def _check_arguments(num_boost_round, verbose_eval, evals_result, obj, custom_metric,
                     reducer):
    check_value("num_boost_round", num_boost_round, _ROUNDS)
    if not isinstance(verbose_eval, bool):
        check_value("verbose_eval", verbose_eval, _VERBOSE)
    if evals_result is not None and not isinstance(evals_result, dict):
        raise TypeError(f"evals_result must be a dict, got {type(evals_result).__name__}")
    for name, fn in (("obj", obj), ("custom_metric", custom_metric)):
        if fn is not None and not callable(fn):
            raise TypeError(f"{name} must be callable, got {type(fn).__name__}")
    if reducer is not None and not (all(callable(getattr(reducer, m, None))
                                            for m in REDUCER_METHODS)
                                        and isinstance(getattr(reducer, "n_shards", None), int)):
        raise TypeError(f"reducer must provide {list(REDUCER_METHODS)} and n_shards, got "
                        f"{type(reducer).__name__}")


def train(params, dtrain, num_boost_round=DEFAULT_ROUNDS, evals=None, callbacks=None,
          early_stopping_rounds=None, verbose_eval=True, evals_result=None, obj=None,
          custom_metric=None, init_model=None, reducer=None):
    """Train a gradient boosted tree model.

    Parameters
    ----------
    params : dict
        Training parameters; see ``boostwood.boosting.params.PARAMS`` and the README.
    dtrain : Dataset
        Training data with labels.
    num_boost_round : int, default=10
        Boosting rounds (``num_class`` trees per round for multi:softprob and softmax).
    evals : list of (Dataset, str), optional
        Sets evaluated after every round, in order.
    callbacks : list of TrainingCallback, optional
    early_stopping_rounds : int, optional
        Stop when the last metric on the last evaluation set has not improved
        for this many rounds; the Booster's ``best_iteration`` is set. LightGBM's
        ``num_iterations`` and ``early_stopping_round`` in ``params`` set these two.
    verbose_eval : bool or int, default=True
        Print the evaluation every round (True) or every ``verbose_eval`` rounds.
    evals_result : dict, optional
        Filled with ``{set name: {metric: [values]}}``.
    obj : callable, optional
        Custom objective: ``obj(preds, dtrain) -> (grad, hess)`` on raw margins (as in
        XGBoost), or a function decorated with :func:`boostwood.objective`
        (``(label, margin) -> (grad, hess)``, compiled). The ``objective`` parameter
        still sets the link and the default metric.
    custom_metric : callable, optional
        ``custom_metric(preds, dataset) -> (name, value)`` (or a list of such pairs) on
        the predictions the built-in metrics read (those of ``predict``, but probabilities
        for ``multi:softmax`` and ``binary:logitraw``), evaluated after the built-in
        metrics (so early stopping uses it); lower is better unless an
        ``EarlyStopping(maximize=True)`` callback says otherwise.
    init_model : Booster or path, optional
        Continue training this model: its trees are kept and ``num_boost_round`` more
        rounds are added (XGBoost's ``xgb_model``). Round r draws its random numbers
        from (seed, r): 50 rounds and then 50 more give the model of 100 in one go.
    reducer : optional
        For distributed drivers: this process trains one shard (``dtrain`` and every
        ``evals`` set hold its rows, with their global ``row_ids``); the reducer sums
        statistics with the other shards (:mod:`boostwood._comm`), and every shard builds
        the model of one process holding all rows.

    Returns
    -------
    Booster
    """
    if not isinstance(dtrain, Dataset):
        raise TypeError(f"dtrain must be a boostwood.Dataset, got {type(dtrain).__name__}")
    _check_arguments(num_boost_round, verbose_eval, evals_result, obj, custom_metric, reducer)
    p = resolve_params(params)
    num_boost_round, early_stopping_rounds = rounds_and_patience(p, num_boost_round,
                                                                 early_stopping_rounds)
    evals = _check_evals(evals, dtrain)
    cbs = _as_list(callbacks, "callbacks")
    if verbose_eval and evals and p["verbosity"] > 0:
        cbs.append(EvaluationMonitor(period=1 if verbose_eval is True else int(verbose_eval)))
    if early_stopping_rounds is not None:
        cbs.append(EarlyStopping(early_stopping_rounds))
    if evals_result is not None:
        cbs.append(RecordEvaluation(evals_result))
    container = CallbackContainer(cbs)
    if init_model is not None and not isinstance(init_model, Booster):
        init_model = Booster(model_file=init_model)
    booster = Booster(model_params(p))
    with threads_given_back():  # the state sets numba's threads from nthread
        state = TrainingState(p, dtrain, evals, booster, obj=obj, custom_metric=custom_metric,
                              init_model=init_model, reducer=reducer)
        booster = container.before_training(booster)
        evals_log = {}
        for epoch in range(num_boost_round):
            if container.before_iteration(booster, epoch, evals_log):
                break
            state.boost_round()
            state.evaluate(evals_log)
            if container.after_iteration(booster, epoch, evals_log):
                break
        return container.after_training(booster)
