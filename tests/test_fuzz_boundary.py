"""Fuzzing the boundary: every bad input gets a clear error, never a crash, hang or silent
wrong answer.

Generated inputs go to each boundary -- ``Dataset``, training parameters, ``predict``,
model files (truncated, bytes flipped, numbers tampered with and the checksum
recomputed, keys deleted, nesting deepened) and the CLI's file readers -- and each
outcome is classified:

* ``accepted``: it worked, and the result passed its sanity check (finite predictions
  of the right shape; a loaded model's SHAP values add up to its margin);
* ``clear error``: ValueError / TypeError (or the CLI's exit status 2 with one line);
* ``crash``: any other exception, or a traceback from the CLI;
* ``silent wrong``: accepted, but the sanity check failed, or an illegal argument was
  accepted (``predict`` flags that are not booleans, a fractional iteration range).

The default run draws a bounded number of examples per boundary; the ``slow`` profile
(``pytest -m slow``) draws many more. ``python tests/test_fuzz_boundary.py N`` prints the
outcome counts of N examples per boundary without pytest (how the closing note of the
hardening issue counted before and after).
"""
import copy
import hashlib
import io
import json
import os
import sys
import tempfile
import warnings
from contextlib import redirect_stderr, redirect_stdout

import numpy as np
import pytest
from hypothesis import HealthCheck, given, settings, strategies as st

import boostwood as bw
from boostwood.boosting import model_io
from boostwood.boosting.params import PARAMS

#: A clear error: a ValueError / TypeError naming the argument, or a missing file.
CLEAR = (ValueError, TypeError, FileNotFoundError)
FAST = dict(deadline=None, suppress_health_check=list(HealthCheck), derandomize=True)


def _rng_data(seed, n=40, f=3):
    r = np.random.default_rng(seed)
    X = r.normal(size=(n, f))
    y = (X[:, 0] > 0).astype(float)
    return X, y


# -- the boundaries: each returns "accepted" or raises ----------------------------------------
def _silent_wrong(msg):
    return AssertionError("silent wrong: " + msg)


def dataset_case(data, label):
    """Build a Dataset and train one round on it."""
    with warnings.catch_warnings():
        warnings.simplefilter("ignore")
        d = bw.Dataset(data, label)
        b = bw.train({"max_depth": 2}, d, 1, verbose_eval=False)
        p = b.predict(data)
    if not np.all(np.isfinite(p)) or p.shape[0] != np.asarray(label).shape[0]:
        raise _silent_wrong("non-finite or misshapen predictions")
    return "accepted"


def param_case(key, value):
    X, y = _rng_data(1)
    with warnings.catch_warnings():
        warnings.simplefilter("ignore")
        b = bw.train({key: value}, bw.Dataset(X, y), 2, verbose_eval=False)
        p = b.predict(X)
    if not np.all(np.isfinite(p)):
        raise _silent_wrong("non-finite predictions")
    return "accepted"


_MODEL = {}


def _model(kind):
    if kind not in _MODEL:
        X, y = _rng_data(2, n=120, f=4)
        X[::7, 1] = np.nan
        params = {"binary": {"objective": "binary:logistic", "max_depth": 3},
                  "multi": {"objective": "multi:softprob", "num_class": 3, "max_depth": 2}}[kind]
        yy = y if kind == "binary" else (X[:, 2] > 0) + (X[:, 3] > 0.5)
        b = bw.train(params, bw.Dataset(X, yy), 4, verbose_eval=False)
        with tempfile.TemporaryDirectory() as tmp:
            b.save_model(os.path.join(tmp, "m.json"))
            text = open(os.path.join(tmp, "m.json"), encoding="utf-8").read()
        _MODEL[kind] = (b, X, text)
    return _MODEL[kind]


def _legal_predict_args(kwargs, n_rounds):
    """Whether predict's keyword arguments are legal: flags are booleans, an iteration
    range a pair of integers within the model."""
    for k, v in kwargs.items():
        if k == "iteration_range":
            if not (isinstance(v, tuple) and len(v) == 2 and all(type(x) is int for x in v)
                    and 0 <= v[0] <= (v[1] or n_rounds) <= n_rounds):
                return False
        elif not isinstance(v, bool):
            return False
    return True


def predict_case(kind, data, kwargs):
    b, X, _ = _model(kind)
    with warnings.catch_warnings():
        warnings.simplefilter("ignore")
        p = b.predict(data, **kwargs)
    if np.asarray(p).dtype.kind == "f" and not np.all(np.isfinite(p)):
        raise _silent_wrong("non-finite predictions")
    if not _legal_predict_args(kwargs, b.num_boosted_rounds()):
        raise _silent_wrong(f"illegal arguments accepted: {kwargs}")
    return "accepted"


def _with_checksum(model):
    return model_io.dumps(model)


def mutate_model(text, how, r):
    """A mutated model file text."""
    if how == "truncate":
        return text[:int(r.integers(0, len(text)))]
    if how == "flip":
        b = bytearray(text.encode())
        i = int(r.integers(0, len(b)))
        b[i] ^= 1 << int(r.integers(0, 8))
        return bytes(b)
    if how == "nest":
        depth = int(r.integers(1000, 200_000))
        return "[" * depth + "]" * depth
    model = copy.deepcopy(json.loads(text)["model"])
    trees = model["trees"]
    t = trees[int(r.integers(0, len(trees)))]
    if how == "delete":
        pool = [("model", k) for k in model] + [("tree", k) for k in t]
        where, key = pool[int(r.integers(0, len(pool)))]
        del (model if where == "model" else t)[key]
    elif how == "tamper":
        field = ["feature", "threshold", "left", "right", "default_left", "value", "gain",
                 "cover", "count"][int(r.integers(0, 9))]
        i = int(r.integers(0, len(t[field])))
        t[field][i] = [1e308, -1, 0, 10**6, 0.5, -3.0, "nan", None][int(r.integers(0, 8))]
    elif how == "meta":
        key = ["n_features", "base_score", "feature_names", "params", "best_iteration",
               "feature_types", "objective", "num_class", "n_outputs", "best_score",
               "extra_key"][int(r.integers(0, 11))]
        model[key] = [0, -5, 10**9, [], ["x"], {"objective": "reg:nope"}, [1e308], None, True,
                      "binary:logistic", "reg:squarederror", 2.5, "1", {}][int(r.integers(0, 14))]
    elif how == "link":  # the objective of the params changed, the rest kept consistent
        obj = ["reg:squarederror", "binary:logistic", "count:poisson", "multi:softprob",
               "reg:gamma"][int(r.integers(0, 5))]
        model["params"]["objective"] = obj
        if int(r.integers(0, 2)):
            model["objective"] = obj
    return _with_checksum(model)


def model_file_case(kind, how, seed):
    b0, X, text = _model(kind)
    data = mutate_model(text, how, np.random.default_rng(seed))
    with tempfile.TemporaryDirectory() as tmp:
        path = os.path.join(tmp, "m.json")
        with open(path, "wb") as fh:
            fh.write(data if isinstance(data, bytes) else data.encode())
        b = bw.Booster(model_file=path)
    margin = b.predict(X, output_margin=True)
    contribs = b.predict(X, pred_contribs=True)
    if not np.all(np.isfinite(margin)) or not np.all(np.isfinite(contribs)):
        raise _silent_wrong("a loaded model predicts non-finite values")
    if not np.allclose(contribs.sum(axis=-1), margin, rtol=1e-6, atol=1e-6):
        raise _silent_wrong("SHAP values do not add up to the margin")
    return "accepted"


def _write_parquet(path, kind):
    pa = pytest.importorskip("pyarrow")
    import pyarrow.parquet as pq
    cols = {"y": [1.0, 0.0, 1.0], "a": [0.5, 1.5, 2.5]}
    cols["b"] = {"nested": [[1, 2], [3], []], "string": ["x", "y", "z"], "ok": [1, 2, 3]}[kind]
    pq.write_table(pa.table(cols), path)


def cli_case(content, name, args):
    """Run the CLI in-process on a file with ``content``; exit 2 with one line is a clear
    error, a traceback (an exception escaping main) a crash."""
    from boostwood.cli import main
    with tempfile.TemporaryDirectory() as tmp:
        path = os.path.join(tmp, name)
        if content.startswith(b"PARQUET:"):
            _write_parquet(path, content[8:].decode())
        else:
            with open(path, "wb") as fh:
                fh.write(content)
        err = io.StringIO()
        with redirect_stderr(err), redirect_stdout(io.StringIO()):
            code = main(["train", "--data", path, "--label", "0", "--rounds", "1", "--quiet",
                         "--model", os.path.join(tmp, "m.json")] + args)
    lines = err.getvalue().strip().splitlines()
    if code == 0:
        return "accepted"
    if code == 2 and len(lines) == 1:
        raise ValueError(lines[0])
    raise RuntimeError(f"exit {code}: {err.getvalue()[-300:]}")


def _legal(value, kind):
    """A coarse oracle of legal argument types: a bool is only legal where a bool is
    asked for (it is never a number), NaN and infinity never; ``int`` arguments take
    integers only, ``dict`` / ``list`` arguments that container (or None); an
    ``optional_`` kind also takes None."""
    if kind.startswith("optional_"):
        return value is None or _legal(value, kind[len("optional_"):])
    is_bool = isinstance(value, (bool, np.bool_))
    if kind == "bool":
        return is_bool
    if is_bool or (isinstance(value, float) and not np.isfinite(value)):
        return kind == "bool_or_int" and is_bool
    if kind in ("int", "bool_or_int"):
        return isinstance(value, (int, np.integer))
    if kind == "dict":
        return value is None or isinstance(value, dict)
    if kind == "list":
        return value is None or isinstance(value, (list, tuple))
    return kind != "str" or isinstance(value, str)


_ESTIMATORS = ("AdaBoostClassifier", "AdaBoostRegressor", "DecisionTreeClassifier",
               "DecisionTreeRegressor", "ExtraTreesClassifier", "ExtraTreesRegressor",
               "GBDTClassifier", "GBDTRegressor", "RandomForestClassifier",
               "RandomForestRegressor")


def estimator_case(which, param_index, value):
    """Fit one scikit-learn estimator with one hyperparameter set to ``value``."""
    import inspect
    bs = pytest.importorskip("boostwood.sklearn")
    cls = getattr(bs, which)
    names = [n for n in inspect.signature(cls.__init__).parameters
             if n not in ("self", "estimator", "verbose")]
    name = names[param_index % len(names)]
    default = inspect.signature(cls.__init__).parameters[name].default
    X, y = _rng_data(5, n=60)
    small = {"n_estimators": 3} if name != "n_estimators" and "n_estimators" in names else {}
    est = cls(**small, **{name: value})
    with warnings.catch_warnings():
        warnings.simplefilter("ignore")
        p = est.fit(X, y if "Classifier" in which else X[:, 1]).predict(X)
    if not np.all(np.isfinite(np.asarray(p, dtype=float))):
        raise _silent_wrong("non-finite predictions")
    if not _legal(value, "bool" if isinstance(default, bool) else "any"):
        raise _silent_wrong(f"{which}({name}={value!r}) accepted")
    return "accepted"


def _method_calls():
    """(argument, its kind, call(value)) for Booster methods, train, cv, Dataset and the
    callbacks."""
    b, X, _ = _model("binary")
    d = bw.Dataset(X, _model_label("binary"))
    quiet = dict(verbose_eval=False)
    return [
        ("feature_importance", "str", lambda v: b.feature_importance(v)),
        ("dump_model.with_stats", "bool", lambda v: b.dump_model(None, "text", v)),
        ("export_text.tree_index", "int", lambda v: b.export_text(v)),
        ("export_text.decimals", "int", lambda v: b.export_text(0, v)),
        ("partial_dependence.feature", "int", lambda v: b.partial_dependence(v, [0.0, 1.0])),
        ("train.num_boost_round", "int", lambda v: bw.train({}, d, v, **quiet)),
        ("train.verbose_eval", "bool_or_int",
         lambda v: bw.train({"verbosity": 0}, d, 2, evals=[(d, "t")], verbose_eval=v)),
        ("train.early_stopping_rounds", "optional_int",
         lambda v: bw.train({}, d, 2, evals=[(d, "t")], early_stopping_rounds=v, **quiet)),
        ("train.evals", "list", lambda v: bw.train({}, d, 2, evals=v, **quiet)),
        ("train.callbacks", "list", lambda v: bw.train({}, d, 2, callbacks=v, **quiet)),
        ("cv.nfold", "int", lambda v: bw.cv({}, d, 2, nfold=v)),
        ("cv.stratified", "bool", lambda v: bw.cv({}, d, 2, stratified=v)),
        ("cv.shuffle", "bool", lambda v: bw.cv({}, d, 2, shuffle=v)),
        ("Dataset.seed", "int", lambda v: bw.Dataset(X, d.label, seed=v)),
        ("Dataset.max_bin", "int", lambda v: bw.Dataset(X, d.label, max_bin=v)),
        ("Dataset.bin_construct_sample_cnt", "int",
         lambda v: bw.Dataset(X, d.label, bin_construct_sample_cnt=v)),
        ("Booster.params", "dict", lambda v: bw.Booster(v)),
        ("EarlyStopping.rounds", "int", lambda v: bw.EarlyStopping(v)),
        ("EarlyStopping.maximize", "optional_bool", lambda v: bw.EarlyStopping(2, maximize=v)),
        ("EvaluationMonitor.period", "int", lambda v: bw.EvaluationMonitor(v)),
    ]


def _model_label(kind):
    _, X, _ = _model(kind)
    return (X[:, 0] > 0).astype(float)


def method_case(index, value):
    calls = _method_calls()
    name, kind, call = calls[index % len(calls)]
    with warnings.catch_warnings(), redirect_stdout(io.StringIO()):
        warnings.simplefilter("ignore")
        call(value)
    if not _legal(value, kind):
        raise _silent_wrong(f"{name}={value!r} accepted")
    return "accepted"


# -- strategies -----------------------------------------------------------------------------
_odd_floats = st.sampled_from([np.nan, np.inf, -np.inf, 0.0, 1e308, -1e-308, 5.0])
datasets = st.tuples(
    st.sampled_from(["float", "int", "bool", "object", "str", "complex", "float16", "3d",
                     "empty_rows", "empty_cols", "nan_col", "list"]),
    st.sampled_from(["ok", "nan", "inf", "short", "long", "2d", "str", "none_row"]),
    st.integers(0, 10_000))


_any_values = st.sampled_from([-1, 0, 1, 2, 3, 0.5, 1.5, 2**70, -0.5, 1e308, np.nan, np.inf,
                               True, False, "x", "sqrt", None, [1], {}, np.int64(2)])
estimators = st.tuples(st.sampled_from(_ESTIMATORS), st.integers(0, 40), _any_values)
methods = st.tuples(st.integers(0, 19), _any_values)


def build_dataset(kind, label_kind, seed):
    X, y = _rng_data(seed)
    data = {"float": X, "int": X.astype(np.int64), "bool": X > 0, "object": X.astype(object),
            "str": X.astype(str), "complex": X.astype(complex), "float16": X.astype(np.float16),
            "3d": X[:, :, None], "empty_rows": X[:0], "empty_cols": X[:, :0],
            "nan_col": np.column_stack([X, np.full(len(X), np.nan)]), "list": X.tolist()}[kind]
    label = {"ok": y, "nan": np.where(np.arange(len(y)) == 3, np.nan, y),
             "inf": np.where(np.arange(len(y)) == 3, np.inf, y), "short": y[:-1],
             "long": np.append(y, 1.0), "2d": np.column_stack([y, y]), "str": y.astype(str),
             "none_row": [None] + list(y[1:])}[label_kind]
    return data, label


param_values = st.one_of(st.integers(-2**70, 2**70), _odd_floats, st.text(max_size=5),
                         st.none(), st.booleans(), st.lists(st.integers(-3, 3), max_size=3))
params = st.tuples(st.sampled_from(sorted(PARAMS)), param_values)
predicts = st.tuples(
    st.sampled_from(["binary", "multi"]),
    st.sampled_from(["ok", "wide", "narrow", "1d", "nan", "str", "empty", "f32"]),
    st.fixed_dictionaries({}, optional={
        "output_margin": st.sampled_from([True, 2, "yes"]),
        "pred_leaf": st.sampled_from([True, 1.5]),
        "pred_contribs": st.sampled_from([True, "no"]),
        "iteration_range": st.sampled_from([(0, 2), (3, 1), (-1, 2), (0, 10**9), (0,), "x",
                                            (0.5, 2)]),
        "validate_features": st.sampled_from([False, "maybe"])}))


def build_predict_data(kind, which):
    _, X, _ = _model(kind)
    return {"ok": X, "wide": np.column_stack([X, X[:, :1]]), "narrow": X[:, :2], "1d": X[0],
            "nan": np.full_like(X, np.nan), "str": X.astype(str), "empty": X[:0],
            "f32": X.astype(np.float32)}[which]


models = st.tuples(st.sampled_from(["binary", "multi"]),
                   st.sampled_from(["truncate", "flip", "nest", "delete", "tamper", "meta",
                                    "link"]),
                   st.integers(0, 10**6))
cli_files = st.tuples(
    st.sampled_from([b"a,b\n1,2\n3,4\n", b"\xff\xfe\x00bad", b"\x1f\x8b\x08corrupt",
                     b"1 1:0.5 2:1e999999\n0 3:2\n", b"1 -1:2\n", b"x,y\n1,\n", b"",
                     b"1,2\n" * 3, b"a,a\n1,2\n0,1\n", b"0 qid:1 1:2\n1 qid:x 1:3\n",
                     b"1 99999999999999999999:1\n0 1:2\n", b"1 3:1 3:2\n0 1:1\n",
                     b"y,a\n1,1e400\n0,2\n", b"PARQUET:nested", b"PARQUET:string",
                     b"PARQUET:ok"]),
    st.sampled_from(["d.csv", "d.libsvm", "d.csv.gz", "d.parquet", "d.tsv"]),
    st.sampled_from([[], ["--param", "max_depth=-1"], ["--param", "eta=1e999"]]))


# -- tests ----------------------------------------------------------------------------------
def _outcome(fn, *args):
    try:
        return fn(*args)
    except AssertionError:
        return "silent wrong"
    except CLEAR:
        return "clear error"
    except Exception as exc:  # noqa: BLE001 - this is what the suite counts
        return f"crash ({type(exc).__name__}: {str(exc)[:80]})"


def _check(outcome):
    assert outcome in ("accepted", "clear error"), outcome


def _run(case):
    """The outcome of one generated case (tag, example)."""
    tag, c = case
    if tag == "d":
        return _outcome(dataset_case, *build_dataset(*c))
    if tag == "x":
        return _outcome(predict_case, c[0], build_predict_data(c[0], c[1]), c[2])
    return _outcome({"p": param_case, "m": model_file_case, "c": cli_case, "e": estimator_case,
                     "b": method_case}[tag], *c)


#: Each boundary: (tag, strategy, examples in the default run).
BOUNDARIES = (("d", datasets, 60), ("p", params, 120), ("x", predicts, 60), ("m", models, 80),
              ("c", cli_files, 40), ("e", estimators, 60), ("b", methods, 60))


@pytest.mark.parametrize("tag,strategy,n", BOUNDARIES, ids=[b[0] for b in BOUNDARIES])
def test_boundary(tag, strategy, n):
    @settings(max_examples=n, **FAST)
    @given(strategy)
    def check(c):
        _check(_run((tag, c)))

    check()


@pytest.mark.slow
@settings(max_examples=1500, **FAST)
@given(st.one_of([s.map(lambda c, t=t: (t, c)) for t, s, _ in BOUNDARIES]))
def test_every_boundary_larger_profile(case):
    _check(_run(case))


class _Hang(BaseException):
    pass


def _timed(case, seconds):
    """The outcome of a case, or "hang" past ``seconds`` (SIGALRM; the counter only)."""
    import signal

    def stop(*_):
        raise _Hang()

    old = signal.signal(signal.SIGALRM, stop)
    signal.alarm(seconds)
    try:
        return _run(case)
    except _Hang:
        return "hang"
    finally:
        signal.alarm(0)
        signal.signal(signal.SIGALRM, old)


def count_outcomes(n, seconds=60):
    """Outcome counts of n examples per boundary (a fixed seed: the same inputs each run);
    a case running past ``seconds`` counts as a hang."""
    from collections import Counter
    total = Counter()
    for tag, strat, _ in BOUNDARIES:
        seen = []

        @settings(max_examples=n, database=None, **FAST)
        @given(strat)
        def collect(c):
            seen.append(c)

        collect()
        for c in seen:
            out = _timed((tag, c), seconds)
            total[(tag, out.split(" (")[0])] += 1
            if out.startswith("crash") or out in ("silent wrong", "hang"):
                print(tag, c if tag != "m" else c, "->", out, file=sys.stderr)
    return total


if __name__ == "__main__":
    counts = count_outcomes(int(sys.argv[1]) if len(sys.argv) > 1 else 100)
    for (tag, out), k in sorted(counts.items()):
        print(f"{tag}\t{out}\t{k}")
    print("hash", hashlib.sha1(repr(sorted(counts.items())).encode()).hexdigest()[:8])
