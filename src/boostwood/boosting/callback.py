"""Training callbacks: everything around the training loop that is not the loop.

Each hook returns ``True`` to stop training (``before_iteration`` /
``after_iteration``) or the model (``before_training`` / ``after_training``).
``evals_log`` is ``{data_name: {metric_name: [value per round]}}``.
"""
from ..data.checks import Param, check_value
from .metrics import LIGHTGBM_METRICS, METRICS
from .rank_metrics import is_ranking_metric


class TrainingCallback:
    """Base class: override the hooks you need."""

    def before_training(self, model):
        return model

    def after_training(self, model):
        return model

    def before_iteration(self, model, epoch, evals_log):
        return False

    def after_iteration(self, model, epoch, evals_log):
        return False


class CallbackContainer:
    """Runs a list of callbacks in order; any "stop" stops training."""

    def __init__(self, callbacks):
        for cb in callbacks:
            if not isinstance(cb, TrainingCallback):
                raise TypeError(f"callbacks must be TrainingCallback instances, got {type(cb).__name__}")
        self.callbacks = list(callbacks)

    def before_training(self, model):
        for cb in self.callbacks:
            model = cb.before_training(model)
        return model

    def after_training(self, model):
        for cb in self.callbacks:
            model = cb.after_training(model)
        return model

    def before_iteration(self, model, epoch, evals_log):
        return any([cb.before_iteration(model, epoch, evals_log) for cb in self.callbacks])

    def after_iteration(self, model, epoch, evals_log):
        return any([cb.after_iteration(model, epoch, evals_log) for cb in self.callbacks])


def nan_metric_message(name, epoch):
    return (f"early stopping metric {name} is NaN at round {epoch}, so rounds cannot be "
            "compared (AUC, for one, is undefined on a set of one class); evaluate on "
            "other data or stop on another metric")


class EarlyStopping(TrainingCallback):
    """Stop when a validation metric has not improved for ``rounds`` rounds.

    Parameters
    ----------
    rounds : int
    metric_name : str, optional
        Default: the last metric evaluated.
    data_name : str, optional
        Default: the last evaluation set.
    maximize : bool, optional
        Default: from the metric (True for AUC).
    save_best : bool, default=False
        Truncate the returned model after its best round.
    min_delta : float, default=0
        An improvement must exceed this.

    After training the model's ``best_iteration`` (0-based) and ``best_score``
    are set.
    """

    def __init__(self, rounds, metric_name=None, data_name=None, maximize=None,
                 save_best=False, min_delta=0.0):
        for name, value, spec in (("rounds", rounds, Param(None, "int", 1)),
                                  ("metric_name", metric_name, Param(None, "optional_str")),
                                  ("data_name", data_name, Param(None, "optional_str")),
                                  ("maximize", maximize, Param(None, "optional_bool")),
                                  ("save_best", save_best, Param(False, "bool")),
                                  ("min_delta", min_delta, Param(0.0, "float", 0.0))):
            check_value("early stopping " + name, value, spec)
        self.rounds = int(rounds)
        self.metric_name = metric_name
        self.data_name = data_name
        self.maximize = maximize
        self.save_best = save_best
        self.min_delta = float(min_delta)

    def before_training(self, model):
        self.best_score = None
        self.best_iteration = None
        # rounds of an init_model come first: best_iteration counts the model's rounds,
        # not this run's epochs (as XGBoost's and LightGBM's), since predict reads it so
        self.start = model.num_boosted_rounds() if model.base_score is not None else 0
        return model

    def after_iteration(self, model, epoch, evals_log):
        epoch += self.start
        if not evals_log:
            raise ValueError("early stopping needs at least one evaluation set")
        data = self.data_name or list(evals_log)[-1]
        if data not in evals_log:
            raise ValueError(f"early stopping data {data!r} is not among {list(evals_log)}")
        metric = self.metric_name or list(evals_log[data])[-1]
        if metric not in evals_log[data]:
            raise ValueError(f"early stopping metric {metric!r} is not among {list(evals_log[data])}")
        maximize = self.maximize
        if maximize is None:
            base = metric.partition("@")[0]  # (a metric with a parameter: name@value)
            base = LIGHTGBM_METRICS.get(base, base)  # (LightGBM's name of a metric)
            maximize = (base in METRICS and METRICS[base].higher_better) \
                or is_ranking_metric(metric)
        score = evals_log[data][metric][-1]
        if score != score:  # NaN: no round would compare with it, so round 0 would "win"
            raise ValueError(nan_metric_message(f"{data}-{metric}", epoch))
        if self.best_score is None:
            improved = True
        elif maximize:
            improved = score > self.best_score + self.min_delta
        else:
            improved = score < self.best_score - self.min_delta
        if improved:
            self.best_score, self.best_iteration = score, epoch
            model.best_iteration, model.best_score = epoch, score
        return epoch - self.best_iteration >= self.rounds

    def after_training(self, model):
        if self.save_best and self.best_iteration is not None:
            best = self.best_iteration
            model = model[: best + 1]
            model.best_iteration, model.best_score = best, self.best_score
        return model


class EvaluationMonitor(TrainingCallback):
    """Print the evaluation results every ``period`` rounds (and at the last round).

    Lines look like ``[9]\\ttrain-logloss:0.12345\\tvalid-logloss:0.13456``.
    """

    def __init__(self, period=1, logger=print):
        check_value("period", period, Param(1, "int", 1))
        if not callable(logger):
            raise TypeError(f"logger must be callable, got {type(logger).__name__}")
        self.period = int(period)
        self.logger = logger
        self._last = None

    def _line(self, epoch, evals_log):
        parts = [f"{d}-{m}:{vals[-1]:.5f}" for d, ms in evals_log.items() for m, vals in ms.items()]
        return f"[{epoch}]\t" + "\t".join(parts)

    def after_iteration(self, model, epoch, evals_log):
        if evals_log:
            line = self._line(epoch, evals_log)
            if epoch % self.period == 0:
                self.logger(line)
                self._last = None
            else:
                self._last = line
        return False

    def after_training(self, model):
        if self._last is not None:
            self.logger(self._last)
        return model


class Checkpoint(TrainingCallback):
    """Save the model every ``every`` rounds (atomically) to ``path``: a crashed run resumes
    from it with ``train(..., init_model=Booster(model_file=path))`` to the same model
    (the command line's ``--checkpoint-every``, and ``boostwood.dask.train``'s)."""

    def __init__(self, path, every):
        self.path, self.every = path, every

    def after_iteration(self, model, epoch, evals_log):
        if (epoch + 1) % self.every == 0:
            model.save_model(self.path)
        return False


class RecordEvaluation(TrainingCallback):
    """Copy the evaluation history into the dict ``eval_result`` as training goes."""

    def __init__(self, eval_result):
        if not isinstance(eval_result, dict):
            raise TypeError("eval_result must be a dict")
        self.eval_result = eval_result

    def after_iteration(self, model, epoch, evals_log):
        self.eval_result.clear()
        for d, ms in evals_log.items():
            self.eval_result[d] = {m: list(v) for m, v in ms.items()}
        return False
