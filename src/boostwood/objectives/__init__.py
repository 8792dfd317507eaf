"""Layer 3: losses, their derivatives, initial scores and links."""
from .builtin import (Logistic, LogisticRaw, LogisticRegression, Objective, Softmax,
                      SoftmaxClass, SquaredError)
from .custom import CompiledObjective, CustomObjective, objective
from .pointwise import POINTWISE
from .ranking import RANKING, Ranking

OBJECTIVES = {cls.name: cls for cls in (SquaredError, Logistic, Softmax, SoftmaxClass,
                                         LogisticRaw, LogisticRegression) + POINTWISE
              + RANKING}


def get_objective(name, num_class=None, params=None):
    """Instantiate the objective registered as ``name``.

    ``params`` (the resolved training parameters) supply the objective's own
    parameter, e.g. ``quantile_alpha`` for ``reg:quantileerror``.
    """
    if name not in OBJECTIVES:
        raise ValueError(f"unknown objective {name!r}; available: {sorted(OBJECTIVES)}")
    cls = OBJECTIVES[name]
    if issubclass(cls, Softmax):
        return cls(num_class)
    if issubclass(cls, Ranking):
        if params is None:
            raise ValueError(f"objective {name!r} reads the resolved training parameters")
        return cls(params)
    param_name = getattr(cls, "param_name", None)
    if param_name is not None:
        return cls(param=(params or {}).get(param_name))
    return cls()


__all__ = ["OBJECTIVES", "CompiledObjective", "CustomObjective", "Objective", "Ranking", "Softmax",
           "get_objective", "objective"]
