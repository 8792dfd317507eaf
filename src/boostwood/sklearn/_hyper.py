"""The estimators' hyperparameters: what each may be, checked once at the start of ``fit``.

Every estimator class names its hyperparameters in ``_hyperparameters``
({name: Param or checker}); :func:`check_hyperparameters` runs them before any data
is looked at, so a wrong value is a TypeError / ValueError naming the argument --
never a silent coercion (``bootstrap="no"`` is not True, ``max_depth=True`` is not 1,
``min_samples_leaf=True`` is not the fraction 1.0). A hyperparameter that maps onto a
``train`` parameter uses that parameter's spec (:data:`boostwood.boosting.params.PARAMS`)
under the estimator's own name.
"""
import contextlib
import numbers

import numpy as np

from ..boosting.params import MAX_ROUNDS, PARAMS
from ..data.checks import Param, check_value

ROUNDS = Param(100, "int", 1, MAX_ROUNDS)
SEED = Param(None, "seed")
JOBS = Param(None, "optional_int")
MAX_BIN = PARAMS["max_bin"]


def checked_data(est, X, y="no_validation", **kwargs):
    """scikit-learn's ``validate_data``, with a value that is not a number (a string in
    an object array or a DataFrame column) refused as a TypeError that names the
    argument, not numpy's bare ValueError ("could not convert string to float")."""
    from sklearn.utils.validation import validate_data
    try:
        return validate_data(est, X, y, **kwargs)
    except ValueError as exc:
        if "could not convert" not in str(exc):
            raise
        name = "y"
        try:
            np.asarray(X, dtype=np.float64)
        except (TypeError, ValueError):
            name = "X"
        except Exception:  # a sparse matrix or frame numpy cannot read: X was fine
            pass
        raise TypeError(f"{name} must hold numbers only: {exc} (string and categorical "
                        "columns: pass a DataFrame or Arrow table, whose categorical columns "
                        "categorical_features='from_dtype' takes; a numpy array takes "
                        "numbers only)") from None


def is_frame(X):
    """A pandas or polars DataFrame or an Arrow table (whose columns carry types)."""
    module = type(X).__module__ or ""
    return module.startswith(("pandas", "polars", "pyarrow")) and hasattr(X, "columns")


def has_categories(X):
    """Does the frame hold a column categorical by its type?"""
    from ..data.validation import as_feature_matrix
    try:
        return bool(as_feature_matrix(X.head(1) if hasattr(X, "head") else X.slice(0, 1),
                                      "X", allow_empty_rows=True).categories)
    except (TypeError, ValueError):
        return False


def categorical_spec(spec, X):
    """The ``categorical_feature`` list ``X`` trains with under ``categorical_features``
    = ``spec``: [] for "from_dtype" on a frame with a categorical column (the data layer
    reads the types), the names or indices of a list (a frame or an array), or None where
    X goes the numeric way ("from_dtype" without categorical columns, or None)."""
    if spec is None:
        return None
    if isinstance(spec, str):
        if spec != "from_dtype":
            raise ValueError(f"categorical_features must be 'from_dtype', None, or a list "
                             f"of feature names, indices or a boolean mask; got {spec!r}")
        return [] if is_frame(X) and has_categories(X) else None
    spec = np.asarray(spec)
    if spec.dtype == bool:
        n = len(X.columns) if is_frame(X) else np.shape(X)[1] if np.ndim(X) == 2 else -1
        if spec.shape != (n,):
            raise ValueError(f"categorical_features as a boolean mask needs one entry per "
                             f"feature ({n}), got {spec.shape[0] if spec.ndim else 0}")
        spec = np.nonzero(spec)[0]
    if spec.size == 0:  # nothing named: the frame's own categorical columns, if any
        return categorical_spec("from_dtype", X)
    return spec.tolist()


def labels_of(y, n):
    """y as a 1-d array of n entries (the numeric path's checks come after)."""
    from sklearn.utils.validation import column_or_1d
    y = column_or_1d(y, warn=True)
    if y.shape[0] != n:
        raise ValueError(f"y has {y.shape[0]} entries but X has {n} rows")
    return y


class FittedAttributes:
    """An unfitted estimator's fitted attributes (names ending in ``_``, properties
    included) raise scikit-learn's ``NotFittedError`` (an ``AttributeError`` and a
    ``ValueError``), as scikit-learn's estimators do, not a bare ``AttributeError``. A
    fitted estimator's unknown names stay ``AttributeError``. ``__getattr__`` runs only
    when the normal lookup failed, so fitted estimators pay nothing."""

    def __getattr__(self, name):
        if name.endswith("_") and not name.startswith("__") and not any(
                k.endswith("_") and not k.startswith("__") for k in vars(self)):
            from sklearn.exceptions import NotFittedError
            raise NotFittedError(f"This {type(self).__name__} instance is not fitted yet: "
                                 f"call 'fit' with appropriate arguments before using "
                                 f"{name!r}.")
        raise AttributeError(f"{type(self).__name__!r} object has no attribute {name!r}")


def _real(value):
    return isinstance(value, numbers.Real) and not isinstance(value, (bool, np.bool_))


def count(minimum, fraction_high=1.0):
    """An int count >= ``minimum``, or a float fraction in (0, ``fraction_high``]."""
    def check(name, value):
        if isinstance(value, numbers.Integral) and _real(value):
            return check_value(name, value, Param(minimum, "int", minimum))
        if _real(value) and 0.0 < value <= fraction_high:
            return float(value)
        raise ValueError(f"parameter {name!r} must be an int >= {minimum} or a float in "
                         f"(0, {fraction_high}], got {value!r}")
    return check


def param(spec):
    """A checker of ``spec`` (to combine with :func:`optional`)."""
    def check(name, value):
        return check_value(name, value, spec)
    return check


def optional(checker):
    def check(name, value):
        return None if value is None else checker(name, value)
    return check


def choice_or(strings, checker):
    """One of the strings ``strings`` (None included if listed), else ``checker``."""
    def check(name, value):
        if (value is None and None in strings) or (isinstance(value, str) and value in strings):
            return value
        if isinstance(value, str) or value is None:
            raise ValueError(f"parameter {name!r} must be one of {list(strings)} or a number, "
                             f"got {value!r}")
        return checker(name, value)
    return check


def verbosity(name, value):
    """``verbose``: a bool, or a period of rounds >= 0."""
    if isinstance(value, (bool, np.bool_)):
        return bool(value)
    return check_value(name, value, Param(0, "int", 0))


def class_weight(name, value):
    """None, "balanced", or {class label: non-negative finite weight}."""
    if value is None or (isinstance(value, str) and value == "balanced"):
        return value
    if not isinstance(value, dict):
        raise TypeError(f"parameter {name!r} must be None, 'balanced' or a dict "
                        f"{{class: weight}}, got {value!r}")
    for label, w in value.items():
        check_value(f"{name}[{label!r}]", w, Param(1.0, "float", 0.0))
    return value


def check_hyperparameters(est):
    """Check every hyperparameter ``est`` declares in ``_hyperparameters``."""
    for name, spec in est._hyperparameters.items():
        value = getattr(est, name)
        if isinstance(spec, Param):
            check_value(name, value, spec)
        else:
            spec(name, value)


@contextlib.contextmanager
def kept_on_error(est):
    """A fit that raises leaves the estimator's fitted attributes (``name_``) as they
    were: validation sets ``classes_``, ``n_features_in_`` and feature names from the
    new data before a later check may refuse it, and a refused fit must not pair them
    with the earlier model (``booster_``, ``trees_``), which predict would then read by
    position."""
    saved = {k: v for k, v in vars(est).items() if k.endswith("_")}
    try:
        yield
    except BaseException:
        for k in [k for k in vars(est) if k.endswith("_")]:
            delattr(est, k)
        vars(est).update(saved)
        raise


def seed_of(random_state):
    """An int seed from scikit-learn's ``random_state`` (None -> 0: fits are reproducible
    by default; an int as is; a RandomState draws one)."""
    random_state = check_value("random_state", random_state, SEED)
    if random_state is None:
        return 0
    if isinstance(random_state, int):
        return random_state
    return int(random_state.randint(2 ** 31 - 1))


#: ``splitter`` -> the engine's search ("best" is scikit-learn's name for exact).
SPLITTERS = {"best": "exact", "exact": "exact", "hist": "hist", "random": "random"}
_NON_NEGATIVE = Param(0.0, "float", 0.0)
#: Every tree-growing estimator (decision trees, forests).
TREE = {
    "splitter": Param("best", "str", choices=tuple(SPLITTERS)),
    "max_depth": optional(param(Param(None, "int", 1))),
    "min_samples_split": count(2), "min_samples_leaf": count(1),
    "min_weight_fraction_leaf": Param(0.0, "float", 0.0, 0.5),
    "max_features": choice_or((None, "sqrt", "log2"), count(1)),
    "max_leaf_nodes": optional(param(Param(None, "int", 2))),
    "min_impurity_decrease": _NON_NEGATIVE, "random_state": SEED, "max_bin": MAX_BIN,
    "categorical_features": lambda name, value: categorical_spec(value, None)
    if value is None or isinstance(value, str) else value}
DECISION_TREE = {**TREE, "ccp_alpha": _NON_NEGATIVE}
FOREST = {**TREE, "n_estimators": ROUNDS, "bootstrap": Param(True, "bool"),
          "oob_score": Param(False, "bool"), "n_jobs": JOBS,
          "max_samples": optional(count(1)), "warm_start": Param(False, "bool")}
CLASSIFIER = {"class_weight": class_weight}
ADABOOST = {"n_estimators": ROUNDS, "learning_rate": Param(1.0, "float", 0.0, low_open=True),
            "random_state": SEED}
