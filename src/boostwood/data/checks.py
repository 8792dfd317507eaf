"""One checker for every named argument that enters boostwood.

``train`` parameters (:data:`boostwood.boosting.params.PARAMS`), the scikit-learn
estimators' hyperparameters and ``Dataset``'s own arguments are each described by a
:class:`Param` (type, range, choices) and pass through :func:`check_value`, so that
the same value gets the same answer everywhere: a bool is not a number, a float is
not an integer, NaN and infinity are not numbers a parameter can take, and a string
is checked against its choices. Wrong type -> TypeError, wrong value -> ValueError,
both naming the argument.
"""
import math
import numbers
from dataclasses import dataclass

import numpy as np

INF = float("inf")
#: Integers travel through int64 arrays and kernels: no argument may exceed them.
INT64_MAX = (1 << 63) - 1


@dataclass(frozen=True)
class Param:
    """What one named argument may be.

    ``kind``: "float", "int", "bool", "str" (one of ``choices``), "seed" (an integer
    or a ``numpy.random.RandomState``), "metric" (a name or list of names),
    "float_or_list" (a number, or a list of distinct numbers), "float_list" and
    "int_list" (a non-empty list, in its order; int_list also LightGBM's "1,3,5");
    "optional_float",
    "optional_int" and "optional_str" also accept None. Numbers lie in
    ``[low, high]`` (``low_open`` / ``high_open`` exclude the bound).
    """
    default: object
    kind: str
    low: float = None
    high: float = None
    low_open: bool = False
    choices: tuple = None
    aliases: tuple = ()
    doc: str = ""
    high_open: bool = False


def check_number(name, spec, value, integer):
    """``value`` as an int or float within ``spec``'s bounds."""
    ok_type = numbers.Integral if integer else numbers.Real
    if isinstance(value, bool) or not isinstance(value, ok_type):
        kind = "an integer" if integer else "a number"
        raise TypeError(f"parameter {name!r} must be {kind}, got {value!r}")
    try:
        value = int(value) if integer else float(value)
    except OverflowError:  # a Python integer beyond the float range (10**400)
        raise ValueError(f"parameter {name!r} must be a finite number, got an integer of "
                         f"{len(str(abs(int(value))))} digits") from None
    if integer and abs(value) > INT64_MAX:
        raise ValueError(f"parameter {name!r} must fit a 64-bit integer, got an integer of "
                         f"{len(str(abs(value)))} digits" if abs(value) > 10 ** 30 else
                         f"parameter {name!r} must fit a 64-bit integer, got {value}")
    if not integer and not math.isfinite(value):
        what = "NaN" if value != value else "infinite"
        raise ValueError(f"parameter {name!r} must be a finite number, not {what}")
    low_bad = spec.low is not None and (value <= spec.low if spec.low_open else value < spec.low)
    high_bad = spec.high is not None and (value >= spec.high if spec.high_open
                                          else value > spec.high)
    if low_bad or high_bad:
        lo = "-inf" if spec.low is None else spec.low
        hi = "inf" if spec.high is None else spec.high
        left = "(" if spec.low_open else "["
        right = ")" if spec.high_open else "]"
        raise ValueError(f"parameter {name!r} must be in {left}{lo}, {hi}{right}, got {value}")
    return value


def _float_list(name, spec, value):
    """A number, or a non-empty list of distinct numbers (returned sorted; one element
    comes back as a plain number)."""
    if isinstance(value, (list, tuple)) or (hasattr(value, "ndim") and value.ndim == 1):
        values = [check_number(name, spec, v, integer=False) for v in value]
        if not values:
            raise ValueError(f"parameter {name!r} must not be an empty list")
        if len(set(values)) != len(values):
            raise ValueError(f"parameter {name!r} has repeated values: {values}")
        values = sorted(values)
        return values[0] if len(values) == 1 else values
    return check_number(name, spec, value, integer=False)


def _number_list(name, spec, value, integer):
    """A non-empty list of numbers within ``spec``'s bounds, in the order given; integers
    may also come as LightGBM's comma-separated string ("1,3,5")."""
    if integer and isinstance(value, str):
        try:
            value = [int(v) for v in value.split(",")]
        except ValueError:
            raise ValueError(f"parameter {name!r} must be integers separated by commas, got "
                             f"{value!r}") from None
    if not (isinstance(value, (list, tuple)) or (hasattr(value, "ndim") and value.ndim == 1)):
        raise TypeError(f"parameter {name!r} must be a list of "
                        f"{'integers' if integer else 'numbers'}, got {value!r:.60}")
    values = [check_number(name, spec, v.item() if hasattr(v, "item") else v, integer)
              for v in value]
    if not values:
        raise ValueError(f"parameter {name!r} must not be an empty list")
    return values


def _metric(name, value):
    """Metric names: one, a list, or LightGBM's comma-separated string ("auc,l1"; no
    metric name holds a comma)."""
    names = [v.strip() for v in value.split(",")] if isinstance(value, str) else \
        list(value) if isinstance(value, (list, tuple)) else None
    if not names or not all(isinstance(v, str) and v for v in names):
        raise TypeError(f"parameter {name!r} must be a name or a list of names, got {value!r}")
    return names


def _seed(name, spec, value):
    if hasattr(value, "randint") and hasattr(value, "get_state"):
        return value  # a numpy RandomState (scikit-learn's convention)
    return check_number(name, spec, value, integer=True)


def check_value(name, value, spec):
    """Check ``value`` of the argument ``name`` against ``spec``; return it normalised
    (ints as int, floats as float, metric names as a list)."""
    kind = spec.kind
    if value is None and (kind.startswith("optional") or kind in ("metric", "seed")):
        return None
    kind = kind.replace("optional_", "")
    if kind in ("float", "int"):
        return check_number(name, spec, value, integer=kind == "int")
    if kind == "float_or_list":
        return _float_list(name, spec, value)
    if kind in ("float_list", "int_list"):
        return _number_list(name, spec, value, integer=kind == "int_list")
    if kind == "bool":
        if not isinstance(value, (bool, np.bool_)):
            raise TypeError(f"parameter {name!r} must be True or False, got {value!r}")
        return bool(value)
    if kind == "seed":
        return _seed(name, spec, value)
    if kind == "metric":
        return _metric(name, value)
    if spec.choices is None:
        if not isinstance(value, str):
            raise TypeError(f"parameter {name!r} must be a string, got {value!r}")
        return value
    if not isinstance(value, str) or value not in spec.choices:
        raise ValueError(f"parameter {name!r} must be one of {list(spec.choices)}, got {value!r}")
    return value


def check_values(owner, specs):
    """Check the attributes of ``owner`` named in ``specs`` ({name: Param})."""
    for name, spec in specs.items():
        check_value(name, getattr(owner, name), spec)
