"""``train``: the boosting loop, and nothing else."""
from ..data import Dataset
from .booster import Booster
from .callback import CallbackContainer, EarlyStopping, EvaluationMonitor, RecordEvaluation
from .params import resolve_params
from ._state import TrainingState


def _check_evals(evals):
    evals = list(evals or [])
    for item in evals:
        if not (isinstance(item, tuple) and len(item) == 2 and isinstance(item[1], str)):
            raise TypeError("evals must be a list of (Dataset, name) pairs")
    names = [n for _, n in evals]
    if len(set(names)) != len(names):
        raise ValueError(f"evals names must be unique, got {names}")
    return evals


def train(params, dtrain, num_boost_round=10, evals=None, callbacks=None,
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
        Boosting rounds (``num_class`` trees per round for multi:softprob).
    evals : list of (Dataset, str), optional
        Sets evaluated after every round, in order.
    callbacks : list of TrainingCallback, optional
    early_stopping_rounds : int, optional
        Stop when the last metric on the last evaluation set has not improved
        for this many rounds; the Booster's ``best_iteration`` is set.
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
        ``custom_metric(preds, dataset) -> (name, value)`` on output-scale predictions,
        evaluated after the built-in metrics (so early stopping uses it); lower is
        better unless an ``EarlyStopping(maximize=True)`` callback says otherwise.
    init_model : Booster or path, optional
        Continue training this model: its trees are kept and ``num_boost_round``
        more rounds are added (XGBoost's ``xgb_model``). Round r draws its random
        numbers from (seed, r), so training 50 rounds and then 50 more gives the
        model of 100 rounds in one go.
    reducer : optional
        For distributed drivers: this process trains one shard of the data (``dtrain``
        and every ``evals`` set hold this shard's rows, with their global ``row_ids``),
        and the reducer sums statistics with the other shards (see
        :mod:`boostwood._comm`). Every shard then builds the same model, the same as
        one process holding all rows.

    Returns
    -------
    Booster
    """
    if not isinstance(dtrain, Dataset):
        raise TypeError(f"dtrain must be a boostwood.Dataset, got {type(dtrain).__name__}")
    if isinstance(num_boost_round, bool) or not isinstance(num_boost_round, int) \
            or num_boost_round < 0:
        raise ValueError(f"num_boost_round must be a non-negative integer, got {num_boost_round!r}")
    p = resolve_params(params)
    evals = _check_evals(evals)
    cbs = list(callbacks or [])
    if verbose_eval and evals and p["verbosity"] > 0:
        cbs.append(EvaluationMonitor(period=1 if verbose_eval is True else int(verbose_eval)))
    if early_stopping_rounds is not None:
        cbs.append(EarlyStopping(early_stopping_rounds))
    if evals_result is not None:
        cbs.append(RecordEvaluation(evals_result))
    container = CallbackContainer(cbs)

    if init_model is not None and not isinstance(init_model, Booster):
        init_model = Booster(model_file=init_model)
    booster = Booster(params)
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
