"""The ``boostwood`` command line: train, predict, eval, cv, importance, dump, report,
compile.

    boostwood train                       # the notes' mushroom demo on the bundled data
    boostwood train config.toml --param eta=0.1 --param data.label=target
    boostwood predict --model model.json --data new.csv --output predictions.csv
    boostwood eval --model model.json --data test.csv --metric auc

Parameters come from a TOML config (sections ``[data]``, ``[params]``, ``[train]``)
and ``--param key=value`` overrides; every training parameter of
:func:`boostwood.train` is reachable. User errors (bad files, parameters) are
printed as one line with exit status 2, never a traceback.
"""
import argparse
import os
import sys

from .._version import __version__
from . import commands
from .data import DataError

EXAMPLE_CONFIG = """example config (TOML):
  [data]
  train = "train.csv"       # csv, tsv, libsvm, parquet (by extension or format=)
  valid = ["valid.csv"]
  label = "target"          # column name or index (libsvm: always the first field)
  ignore = ["id"]
  missing = ["", "NA", "?"]
  [params]
  objective = "binary:logistic"
  eta = 0.1
  max_depth = 6
  [train]
  num_boost_round = 200
  early_stopping_rounds = 20
  model = "model.json"
  checkpoint_every = 10
"""


def _common(p, model=False, data=False):
    p.add_argument("--param", action="append", default=[], metavar="KEY=VALUE",
                   help="override a config entry: a training parameter (eta=0.1) or "
                        "section.key (data.label=y, train.num_boost_round=50)")
    if model:
        p.add_argument("--model", required=True, help="model file (JSON)")
    if data:
        p.add_argument("--data", required=True, help="data file")
        p.add_argument("--config", help="TOML config (its [data] section: how to read --data)")
        p.add_argument("--label", help="label column name or index (overrides [data] label)")


def build_parser():
    ap = argparse.ArgumentParser(prog="boostwood",
                                 description=__doc__.split("\n")[0].replace("``", ""),
                                 formatter_class=argparse.RawDescriptionHelpFormatter,
                                 epilog=EXAMPLE_CONFIG)
    ap.add_argument("--version", action="version", version=f"boostwood {__version__}")
    sub = ap.add_subparsers(dest="command", required=True)
    t = sub.add_parser("train", help="train a model (no arguments: the mushroom demo)",
                       formatter_class=argparse.RawDescriptionHelpFormatter, epilog=EXAMPLE_CONFIG)
    t.add_argument("config", nargs="?", help="TOML config file")
    t.add_argument("--data", help="training file (overrides [data] train)")
    t.add_argument("--valid", action="append", help="validation file (repeatable)")
    t.add_argument("--label", help="label column name or index")
    t.add_argument("--ignore", action="append", help="column to leave out (repeatable)")
    t.add_argument("--model", help="where to write the model (default: model.json)")
    t.add_argument("--rounds", type=int, help="boosting rounds")
    t.add_argument("--early-stopping", type=int, help="stop after this many rounds without "
                                                      "improvement on the last validation set")
    t.add_argument("--checkpoint-every", type=int, help="save <model>.checkpoint every N rounds")
    t.add_argument("--resume", action="store_true", help="continue from <model>.checkpoint")
    t.add_argument("--quiet", action="store_true", help="no evaluation log, no progress bar")
    _common(t)
    t.set_defaults(func=commands.cmd_train)
    p = sub.add_parser("predict", help="predict a file in chunks")
    _common(p, model=True, data=True)
    p.add_argument("--output", help="CSV or .parquet file (default: standard output)")
    p.add_argument("--chunk-size", type=int, default=100_000, help="rows per chunk")
    p.add_argument("--has-label", action="store_true", help="the file has a label column")
    g = p.add_mutually_exclusive_group()
    g.add_argument("--margin", action="store_true", help="raw margins")
    g.add_argument("--pred-leaf", action="store_true", help="leaf index in every tree")
    g.add_argument("--pred-contribs", action="store_true", help="SHAP values (+ bias)")
    p.set_defaults(func=commands.cmd_predict)
    e = sub.add_parser("eval", help="evaluate a model on a labelled file")
    _common(e, model=True, data=True)
    e.add_argument("--metric", action="append", help="metric name (repeatable; default: the "
                                                     "objective's)")
    e.set_defaults(func=commands.cmd_eval)
    c = sub.add_parser("cv", help="k-fold cross-validation")
    c.add_argument("config", nargs="?", help="TOML config file")
    c.add_argument("--data", help="data file")
    c.add_argument("--nfold", type=int, default=5)
    c.add_argument("--rounds", type=int)
    c.add_argument("--seed", type=int, default=0)
    _common(c)
    c.set_defaults(func=commands.cmd_cv)
    i = sub.add_parser("importance", help="feature importance of a model")
    _common(i, model=True)
    i.add_argument("--type", default="gain", help="split, gain, total_gain, cover, total_cover")
    i.add_argument("--top", type=int, default=None)
    i.set_defaults(func=commands.cmd_importance)
    d = sub.add_parser("dump", help="the trees as text or JSON")
    _common(d, model=True)
    d.add_argument("--format", default="text", choices=("text", "json"))
    d.add_argument("--no-stats", action="store_true")
    d.add_argument("--output")
    d.set_defaults(func=commands.cmd_dump)
    r = sub.add_parser("report", help="one self-contained HTML report of a model")
    _common(r, model=True, data=True)
    r.add_argument("--output", default="report.html")
    r.add_argument("--trees", type=int, default=3, help="trees to draw")
    r.set_defaults(func=_report)
    k = sub.add_parser("compile", help="compile the kernels into numba's cache now (for "
                                       "an image build or CI), not on a first fit")
    k.add_argument("--quiet", action="store_true", help="print nothing")
    k.add_argument("--jobs", type=int, default=None,
                   help="processes that compile at once: 1 or 2; more act as 2 (default: 2 "
                        "where two cores are free to this process)")
    k.add_argument("--all", action="store_true",
                   help="also the paths few fits take (quantized gradients, pointwise "
                        "losses such as Poisson), which otherwise compile on first use")
    k.add_argument("--report", action="store_true",
                   help="compile in this process and print the seconds each kernel took "
                        "(on an empty NUMBA_CACHE_DIR: a warm cache compiles nothing)")
    k.set_defaults(func=_compile)
    return ap


def _compile(args):
    import time

    from ..warmup import _ALL_WORKLOADS as _all, cache_folder, compile_kernels, kernel_report, \
        report_table
    t0 = time.perf_counter()
    try:
        if args.report:
            rows = kernel_report(None if not args.all else
                                 [w[0] for w in _all])
            print("\n".join(report_table(rows)) if rows else
                  "nothing compiled: every kernel came from the cache (run it with an "
                  "empty NUMBA_CACHE_DIR to time a cold compile)")
        else:
            compile_kernels(verbose=not args.quiet, jobs=args.jobs, everything=args.all)
    except (RuntimeError, ValueError) as exc:
        raise commands.CLIError(str(exc)) from None
    if not args.quiet:
        print(f"compiled or loaded in {time.perf_counter() - t0:.1f} s, cache "
              f"{cache_folder()}: later processes that can read it and run on this kind of "
              f"processor load these kernels from it")
    return 0


def _report(args):
    from .report import cmd_report
    return cmd_report(args)


def main(argv=None):
    """Entry point of the ``boostwood`` console script and ``python -m boostwood``."""
    args = build_parser().parse_args(argv)
    try:
        return args.func(args)
    except (commands.CLIError, DataError, ValueError, TypeError, OSError, OverflowError,
            MemoryError) as exc:
        # bad input: files, parameters, data (the library's errors name the argument)
        print(f"boostwood {args.command}: error: {_one_line(exc)}", file=sys.stderr)
        return 2
    except KeyboardInterrupt:
        print("interrupted", file=sys.stderr)
        return 130
    except Exception as exc:  # a bug: one line, the traceback on request
        if os.environ.get("BOOSTWOOD_TRACEBACK"):
            raise
        print(f"boostwood {args.command}: internal error ({type(exc).__name__}: "
              f"{_one_line(exc)}); please report it (BOOSTWOOD_TRACEBACK=1 shows where)",
              file=sys.stderr)
        return 1


def _one_line(exc):
    text = str(exc) or type(exc).__name__
    if isinstance(exc, OSError) and exc.filename is not None and exc.strerror:
        text = f"{exc.filename}: {exc.strerror}"
    return " ".join(text.split())


__all__ = ["build_parser", "main"]
