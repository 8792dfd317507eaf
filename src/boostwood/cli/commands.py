"""The subcommands: train, predict, eval, cv, importance, dump (report: :mod:`.report`)."""
import os
import sys
import time

import numpy as np

from ..boosting import Booster, EvaluationMonitor, TrainingCallback, cv, train
from ..boosting.callback import Checkpoint
from ..boosting.rank_metrics import metric_names
from ..boosting.metrics import get_metric
from ..boosting.params import binning_args, resolve_params
from ..data import Dataset
from .data import DataError, DataSpec, align_to_model, iter_chunks, read_table


class CLIError(Exception):
    """A user error: printed as one line, exit status 2."""


# -- configuration -------------------------------------------------------------------------------
def parse_value(text):
    """``--param`` values: int, float, true/false, a comma list, else the string."""
    low = text.strip().lower()
    if low in ("true", "false"):
        return low == "true"
    if "," in text:
        return [parse_value(t) for t in text.split(",") if t.strip()]
    for kind in (int, float):
        try:
            return kind(text)
        except ValueError:
            pass
    return text.strip()


def load_config(path, overrides):
    """The TOML config (sections ``data``, ``params``, ``train``) with ``--param key=value``
    overrides: ``data.label=y`` / ``train.num_boost_round=50`` address a section, a bare
    key is a training parameter."""
    cfg = {"data": {}, "params": {}, "train": {}}
    if path:
        try:
            import tomllib
        except ImportError:  # Python 3.10
            import tomli as tomllib
        try:
            with open(path, "rb") as fh:
                loaded = tomllib.load(fh)
        except FileNotFoundError:
            raise CLIError(f"{path}: no such config file") from None
        except tomllib.TOMLDecodeError as exc:
            raise CLIError(f"{path}: not valid TOML: {exc}") from None
        unknown = set(loaded) - set(cfg)
        if unknown:
            raise CLIError(f"{path}: unknown sections {sorted(unknown)} (data, params, train)")
        for k in cfg:
            cfg[k].update(loaded.get(k, {}))
    for item in overrides or []:
        key, sep, value = item.partition("=")
        if not sep or not key.strip():
            raise CLIError(f"--param {item!r}: expected key=value")
        section, dot, name = key.strip().partition(".")
        if dot and section in cfg:
            cfg[section][name] = parse_value(value)
        else:
            cfg["params"][key.strip()] = parse_value(value)
    return cfg


def data_spec(path, data_cfg, has_label=True):
    keys = ("format", "label", "header", "ignore", "missing", "zero_based", "categorical")
    extra = {k: data_cfg[k] for k in keys if k in data_cfg}
    for k in ("ignore", "categorical"):
        if k in extra and not isinstance(extra[k], list):
            extra[k] = [extra[k]]
    if "missing" in extra:
        extra["missing"] = tuple(extra["missing"])
    return DataSpec(path=str(path), has_label=has_label, **extra)


def data_config(args):
    """The [data] section of ``--config`` with ``--param`` and ``--label`` applied."""
    cfg = load_config(args.config, args.param)["data"]
    if getattr(args, "label", None) is not None:
        cfg["label"] = args.label
    return cfg


def load_dataset(path, data_cfg, reference=None, names=None, binning=None):
    """A labelled file as a Dataset. With ``names`` (a model's or the training set's
    features) its columns are matched to them by name (:func:`~.data.align_to_model`);
    ``binning``: the Dataset's binning arguments (see :func:`binning_args`)."""
    t = read_table(data_spec(path, data_cfg))
    if t.y is None or not np.all(np.isfinite(t.y)):
        raise CLIError(f"{path}: the label column has missing or non-numeric values")
    binning = binning or {}
    queries = {"group": t.query, "qid": t.qid}
    if names is None:
        return Dataset(t.features(), t.y, weight=t.weight, base_margin=t.init,
                       feature_names=t.feature_names, reference=reference, **queries,
                       **binning)
    return Dataset(align_to_model(t, names, path), t.y, weight=t.weight, base_margin=t.init,
                   feature_names=names, reference=reference, **queries, **binning)


def load_for_model(path, data_cfg, booster):
    """:func:`load_dataset` for ``booster``: columns matched to its features, labels its
    objective accepts."""
    d = load_dataset(path, data_cfg, names=booster.feature_names)
    try:
        booster.objective.check_labels(d.label)
    except ValueError as exc:
        raise CLIError(f"{path}: label column {data_cfg.get('label')!r}: {exc}") from None
    return d


# -- callbacks -----------------------------------------------------------------------------------
class ProgressBar(TrainingCallback):
    """A one-line progress bar on a terminal (stderr)."""

    def __init__(self, total, stream=sys.stderr):
        self.total, self.stream, self.start = max(total, 1), stream, time.perf_counter()

    def after_iteration(self, model, epoch, evals_log):
        done = epoch + 1
        width = 30
        fill = int(width * done / self.total)
        rate = done / max(time.perf_counter() - self.start, 1e-9)
        self.stream.write(f"\r[{'#' * fill}{'.' * (width - fill)}] {done}/{self.total} "
                          f"rounds, {rate:.1f}/s")
        self.stream.flush()
        return False

    def after_training(self, model):
        self.stream.write("\n")
        return model


# -- train ---------------------------------------------------------------------------------------
def _mushroom_config():
    from ..demo import MUSHROOM_PARAMS, MUSHROOM_ROUNDS
    return {"data": {}, "params": dict(MUSHROOM_PARAMS),
            "train": {"num_boost_round": MUSHROOM_ROUNDS, "model": "mushroom.model.json",
                      "verbose_eval": 10}}


def _train_sets(cfg, p):
    """The training Dataset and the evaluation sets of ``cfg``, binned once with the
    binning of the resolved parameters ``p``."""
    data = cfg["data"]
    if "train" not in data:  # no data: the notes' mushroom demo on the bundled data
        from ..datasets import load_agaricus
        Xtr, ytr, Xte, yte, names = load_agaricus()
        dtrain = Dataset(Xtr, ytr, feature_names=names)
        return dtrain, [(dtrain, "train"), (Dataset(Xte, yte, feature_names=names,
                                                    reference=dtrain), "test")]
    # binned once, with the run's binning parameters
    dtrain = load_dataset(data["train"], data, binning=binning_args(p))
    valid = data.get("valid", [])
    valid = [valid] if isinstance(valid, str) else list(valid)
    evals = [(dtrain, "train")]
    for i, v in enumerate(valid):
        evals.append((load_dataset(v, data, reference=dtrain, names=dtrain.feature_names),
                      f"valid_{i}" if len(valid) > 1
                      else "valid"))
    return dtrain, evals


def cmd_train(args):
    cfg = load_config(args.config, args.param)
    if not args.config and "train" not in cfg["data"] and not args.data:
        demo = _mushroom_config()
        for k in cfg:
            demo[k].update(cfg[k])
        cfg = demo
    tr = cfg["train"]
    for key, value in (("train", args.data), ("label", args.label)):
        if value is not None:
            cfg["data"][key] = value
    if args.valid:
        cfg["data"]["valid"] = args.valid
    if args.ignore:
        cfg["data"]["ignore"] = list(cfg["data"].get("ignore", [])) + args.ignore
    p = resolve_params(cfg["params"])  # (once: train takes the record as it is)
    for name, where in (("num_iterations", "train.num_boost_round"),
                        ("early_stopping_round", "train.early_stopping_rounds")):
        if p[name] is not None:  # (resume counts rounds: they come from [train])
            raise CLIError(f"{name} (or an alias of it) in [params]: give it as {where} here")
    rounds = int(args.rounds if args.rounds is not None else tr.get("num_boost_round", 100))
    model_path = args.model or tr.get("model", "model.json")
    every = args.checkpoint_every or tr.get("checkpoint_every")
    ckpt = model_path + ".checkpoint"
    dtrain, evals = _train_sets(cfg, p)
    init = None
    if args.resume and os.path.exists(ckpt):
        init = Booster(model_file=ckpt)
        if init.num_boosted_rounds() > rounds:
            raise CLIError(f"{ckpt} already holds {init.num_boosted_rounds()} rounds, more than "
                           f"the {rounds} asked for; ask for at least that many or remove it")
        print(f"resuming from {ckpt} ({init.num_boosted_rounds()} rounds done)")
    todo = rounds - (init.num_boosted_rounds() if init else 0)
    quiet = args.quiet
    period = int(tr.get("verbose_eval", 1))
    callbacks = []
    if not quiet:
        callbacks.append(EvaluationMonitor(period=period))
        if sys.stderr.isatty():
            callbacks.append(ProgressBar(todo))
    if every:
        callbacks.append(Checkpoint(ckpt, int(every)))
    early = args.early_stopping or tr.get("early_stopping_rounds")
    try:
        booster = train(p, dtrain, max(todo, 0), evals=evals, callbacks=callbacks,
                        early_stopping_rounds=early, verbose_eval=False, init_model=init)
    except (ValueError, TypeError) as exc:
        raise CLIError(str(exc)) from None
    booster.save_model(model_path)
    if every and os.path.exists(ckpt):
        os.remove(ckpt)
    _print_summary(booster, evals, model_path, quiet)
    return 0


def _print_summary(booster, evals, model_path, quiet):
    names = [n for _, n in evals]
    if "test" in names and booster.objective.name.startswith("binary"):
        dtest = evals[names.index("test")][0]
        error = float(np.mean((booster._metric_predictions(dtest) > 0.5) != dtest.label))
        print(f"test error: {error:.4f}")
    if not quiet:
        print(f"model ({booster.num_boosted_rounds()} rounds) saved to {model_path}")


# -- predict / eval ------------------------------------------------------------------------------
def _load_model(path):
    try:
        return Booster(model_file=path)
    except FileNotFoundError:
        raise CLIError(f"{path}: no such model file") from None
    except ValueError as exc:
        raise CLIError(str(exc)) from None


def _predict_chunk(booster, X, args):
    if args.pred_leaf:
        return booster.predict(X, pred_leaf=True, validate_features=False)
    if args.pred_contribs:
        out = booster.predict(X, pred_contribs=True, validate_features=False)
        return out.reshape(out.shape[0], -1)
    return booster.predict(X, output_margin=args.margin, validate_features=False)


def cmd_predict(args):
    """Predict ``--data`` in chunks of ``--chunk-size`` rows (CSV/TSV input is streamed,
    so memory stays bounded) and write CSV (or Parquet), atomically."""
    booster = _load_model(args.model)
    spec = data_spec(args.data, data_config(args), has_label=args.has_label)
    # the model's categorical features are read as categories, whatever their values
    spec.categorical = sorted(set(spec.categorical) | {
        booster.feature_names[f] for f in booster.category_dictionaries})
    out = args.output or "-"
    parquet = out.endswith(".parquet")
    if parquet and not _has_pyarrow():
        raise CLIError("Parquet output needs pyarrow (pip install pyarrow); write .csv instead")
    tmp = out + ".tmp"
    fh = sys.stdout if out == "-" else (None if parquet else open(tmp, "w", encoding="utf-8"))
    writer, n, done = None, 0, False
    try:
        for chunk in iter_chunks(spec, args.chunk_size):
            X = align_to_model(chunk, booster.feature_names, args.data)
            pred = np.asarray(_predict_chunk(booster, X, args))
            if pred.shape[0] != X.shape[0]:  # one prediction line per data row, always
                raise RuntimeError(f"{pred.shape[0]} predictions for {X.shape[0]} rows")
            pred = pred.reshape(pred.shape[0], -1)
            cols = ["prediction"] if pred.shape[1] == 1 else [
                f"prediction_{j}" for j in range(pred.shape[1])]
            if parquet:
                import pyarrow as pa
                import pyarrow.parquet as pq
                table = pa.table({c: pred[:, j] for j, c in enumerate(cols)})
                writer = writer or pq.ParquetWriter(tmp, table.schema)
                writer.write_table(table)
            else:
                if n == 0:
                    fh.write(",".join(cols) + "\n")
                np.savetxt(fh, pred, delimiter=",", fmt="%.9g")
            n += pred.shape[0]
        if n == 0:
            raise CLIError(f"{args.data} has no data rows to predict")
        done = True
    finally:
        if writer is not None:
            writer.close()
        if fh is not None and fh is not sys.stdout:
            fh.close()
        if not done and out != "-" and os.path.exists(tmp):
            os.unlink(tmp)  # a failed run leaves no partial output behind
    if out != "-":
        os.replace(tmp, out)
        print(f"{n} predictions written to {out}", file=sys.stderr)
    return 0


def _has_pyarrow():
    import importlib.util
    return importlib.util.find_spec("pyarrow") is not None


def cmd_eval(args):
    booster = _load_model(args.model)
    d = load_for_model(args.data, data_config(args), booster)
    names = metric_names(booster.params, booster.objective, args.metric)
    pred = booster._metric_predictions(d, validate_features=True)
    y = booster.objective.check_labels(d.label)
    info = d.row_info(y)  # (weights, and the queries of ranking metrics)
    for name in names:
        try:
            metric = get_metric(name, booster.params)
            metric.check(y, 1 if pred.ndim == 1 else pred.shape[1])
            value = metric.evaluate(info, pred)
        except ValueError as exc:
            raise CLIError(str(exc)) from None
        print(f"{name}: {value:.6g}")
    return 0


def cmd_cv(args):
    cfg = load_config(args.config, args.param)
    if args.data:
        cfg["data"]["train"] = args.data
    if "train" not in cfg["data"]:
        raise CLIError("cv needs --data or [data] train in the config")
    t = read_table(data_spec(cfg["data"]["train"], cfg["data"]))
    rounds = int(args.rounds or cfg["train"].get("num_boost_round", 100))
    try:
        data = Dataset(t.features(), t.y, weight=t.weight, feature_names=t.feature_names,
                       group=t.query, qid=t.qid)
        # (ranking data is dealt to folds by query)
        _, logs = cv(cfg["params"], data, rounds, nfold=args.nfold, seed=args.seed,
                     return_folds=True)
    except (ValueError, TypeError) as exc:
        raise CLIError(str(exc)) from None
    metric = list(logs[0]["test"])[-1]
    scores = [log["test"][metric][-1] for log in logs]
    for f, score in enumerate(scores):
        print(f"fold {f}: {metric} {score:.6g}")
    print(f"{args.nfold}-fold {metric}: {np.mean(scores):.6g} +- {np.std(scores):.6g}")
    return 0


def cmd_importance(args):
    booster = _load_model(args.model)
    try:
        scores = booster.get_score(args.type)
    except ValueError as exc:
        raise CLIError(str(exc)) from None
    for name, value in sorted(scores.items(), key=lambda kv: -kv[1])[:args.top]:
        print(f"{name}\t{value:.6g}")
    return 0


def cmd_dump(args):
    booster = _load_model(args.model)
    text = booster.dump_model(format=args.format, with_stats=not args.no_stats)
    if args.output:
        from ..boosting.model_io import write_atomic
        write_atomic(args.output, text)
    else:
        sys.stdout.write(text)
    return 0


__all__ = ["CLIError", "DataError", "cmd_cv", "cmd_dump", "cmd_eval", "cmd_importance",
           "cmd_predict", "cmd_train"]
