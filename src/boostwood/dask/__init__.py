"""boostwood on Dask: train on a cluster's partitions, get the model one machine would train.

::

    from distributed import Client, LocalCluster
    import boostwood.dask as bwd

    client = Client(LocalCluster(n_workers=2, threads_per_worker=1))
    dtrain = bwd.DaskDataset(client, X, y)           # dask DataFrame / Array, Series / Array
    out = bwd.train(client, {"objective": "binary:logistic", "nthread": 1}, dtrain, 100)
    booster = out["booster"]                        # an ordinary Booster
    pred = bwd.predict(client, booster, X)          # lazy, one task per partition

**What runs where.** The collections are persisted on the workers; each worker that holds
training partitions runs one long task: the ordinary :func:`boostwood.train` on its own
rows, with a :class:`~boostwood.dask._collective.DaskReducer` in place of the local one.
Histograms, node totals, the binning sample, the initial score, bagging draws and metric
sums meet in its collectives, all exact or keyed by global row ids (a row's id is its
position in the collection, partition by partition), so **the model is byte-identical
to single-machine training on the concatenated partitions**, whatever the number of
workers or how the rows are spread (empty partitions included). Every rank builds the
same model; the driver checks their digests agree.

**Failures.** Every collective waits at most ``timeout`` seconds (default 60), and every
rank's task must start within it: a worker that dies or hangs ends the call with
:class:`CollectiveTimeout` naming what was missing, a few seconds after the timeout at
the most, never a hang; a rank that fails stops the others at once. ``timeout`` also
bounds how far one worker may fall behind the others (the first collective waits for
the slowest worker's data preparation).

**Threads.** Each worker's training runs numba's kernels on ``nthread`` threads: set it
to the worker's ``threads_per_worker`` (several Dask workers in one process share numba's
thread pools).

Estimators: :class:`~boostwood.dask.estimators.DaskGBDTRegressor`,
``DaskGBDTClassifier`` and ``DaskGBDTRanker``.

**Checkpoints.** ``train(..., checkpoint=path)`` saves the model every
``checkpoint_every`` rounds from the first worker; a run started again with the file
present resumes from it, on a cluster of any size, to the uninterrupted run's model.
"""
import hashlib
import os
import time
import uuid

import numpy as np

from ._collective import HANDLER, CollectiveTimeout, DaskReducer, collective_handler

__all__ = ["DaskDataset", "train", "predict", "inplace_predict", "CollectiveTimeout",
           "DaskReducer", "DaskGBDTRegressor", "DaskGBDTClassifier", "DaskGBDTRanker"]


def __getattr__(name):
    """The estimators load scikit-learn: only when asked for."""
    if name in ("DaskGBDTRegressor", "DaskGBDTClassifier", "DaskGBDTRanker"):
        from . import estimators
        return getattr(estimators, name)
    raise AttributeError(f"module 'boostwood.dask' has no attribute {name!r}")


def _require_distributed():
    try:
        import distributed  # noqa: F401
    except ImportError:
        raise ImportError("boostwood.dask needs dask[distributed]: pip install "
                          "'boostwood[dask]'") from None


def _partitions(collection, name):
    """The collection's partitions (Delayed), in order; None for None."""
    if collection is None:
        return None
    import dask.array as da
    if isinstance(collection, da.Array):
        if collection.ndim == 2:
            collection = collection.rechunk({1: -1})  # whole rows in a block
        return list(collection.to_delayed().ravel())
    if hasattr(collection, "to_delayed"):  # dask DataFrame / Series
        return list(collection.to_delayed())
    raise TypeError(f"{name} must be a dask Array, DataFrame or Series, got "
                    f"{type(collection).__name__}")


def _part(X, y, w, margin, qid):
    """One partition's rows, checked: its arrays all have its number of rows."""
    n = X.shape[0]
    for name, v in (("label", y), ("weight", w), ("base_margin", margin), ("qid", qid)):
        if v is not None and len(v) != n:
            raise ValueError(f"a partition of {name} has {len(v)} rows, the data's "
                             f"partition {n}: the collections must be partitioned alike")
    as_array = (lambda v: None if v is None else np.asarray(v, dtype=np.float64))
    return X, as_array(y), as_array(w), as_array(margin), \
        None if qid is None else np.asarray(qid)


def _query_ids(part):
    return np.unique(part[4])


def _check_whole_queries(client, futures):
    """Each query's rows in one partition (a partition goes to one worker whole, and a
    query must not span workers): else a ValueError naming a query and its partitions."""
    ids = client.gather(client.map(_query_ids, futures))
    owner = {}
    for i, part_ids in enumerate(ids):
        for q in part_ids.tolist():
            if q in owner:
                raise ValueError(
                    f"query {q!r} has rows in partitions {owner[q]} and {i}: a query's rows "
                    "must be in one partition (repartition by the query id, e.g. "
                    "set_index on it)")
            owner[q] = i


def _group_parts(group, lengths):
    """Per partition (first query id, its queries' sizes) from the query sizes ``group``;
    a ValueError unless they are positive integers adding up to the rows, no query
    crossing a partition boundary."""
    from ..data.queries import queries_from
    total = int(lengths.sum())
    queries_from(total, group=group)  # (checks the sizes: integers, positive, the rows)
    sizes = np.asarray(group).astype(np.int64)
    ends = np.cumsum(sizes)
    bounds = np.cumsum(lengths)
    inside = np.searchsorted(ends, bounds)  # the query holding each partition's last row
    for i, (b, q) in enumerate(zip(bounds[:-1], inside[:-1])):
        if lengths[i] and ends[q] != b:
            raise ValueError(f"query {q} (rows {ends[q] - sizes[q]}..{ends[q] - 1}) crosses "
                             f"the end of partition {i} at row {b}: a query's rows must be "
                             "in one partition")
    first = np.searchsorted(ends, np.concatenate([[0], bounds[:-1]]), side="right")
    last = np.searchsorted(ends, bounds, side="left") + 1
    return [(int(a), sizes[a:z] if n else sizes[:0]) for a, z, n in zip(first, last, lengths)]


def _with_queries(part, first, sizes):
    """The partition with its rows' query ids (``first``, ``first + 1``, ... by ``sizes``)."""
    qid = np.repeat(np.arange(first, first + len(sizes), dtype=np.int64), sizes)
    return part[:4] + (qid,)


def _rows(part):
    return part[0].shape[0]


def _empty_part(part):
    """No rows, the columns of ``part``."""
    return tuple(None if v is None else v[:0] for v in part)


class DaskDataset:
    """Training or evaluation data held on a Dask cluster, partition by partition.

    Parameters
    ----------
    client : distributed.Client
    data : dask DataFrame (numeric, category and string columns) or 2-d dask Array
    label, weight, base_margin : dask Series or 1-d Array partitioned as ``data``, optional
    qid : dask Series or 1-d Array partitioned as ``data``, optional
        Each row's query id (ranking); a query's rows must be in one partition.
    group : array-like of int, optional
        Instead of ``qid``: the sizes of the queries, contiguous rows in collection order
        (LightGBM's ``group``, a small local array); no query may cross a partition
        boundary.
    feature_names : list of str, optional
    categorical_feature : list of names or indices, optional (as :class:`boostwood.Dataset`)

    The partitions are computed and kept on the workers (``client.compute``); nothing
    comes back to the client but their row counts (and, with ``qid``, each partition's
    query ids, to check that no query spans two).
    """

    def __init__(self, client, data, label=None, weight=None, base_margin=None,
                 feature_names=None, categorical_feature=None, qid=None, group=None):
        _require_distributed()
        import dask
        from distributed import wait
        parts = [_partitions(v, name) for v, name in ((data, "data"), (label, "label"),
                                                      (weight, "weight"),
                                                      (base_margin, "base_margin"),
                                                      (qid, "qid"))]
        n = len(parts[0])
        for p, name in zip(parts[1:], ("label", "weight", "base_margin", "qid")):
            if p is not None and len(p) != n:
                raise ValueError(f"{name} has {len(p)} partitions, data {n}: partition them "
                                 "alike")
        column = (lambda p, i: None if p is None else p[i])
        self.client = client
        self.futures = client.compute([dask.delayed(_part)(*(column(p, i) for p in parts))
                                       for i in range(n)])
        wait(self.futures)
        if qid is not None:
            _check_whole_queries(client, self.futures)
        self.lengths = np.array(client.gather(client.map(_rows, self.futures)), dtype=np.int64)
        self.offsets = np.concatenate([[0], np.cumsum(self.lengths)[:-1]]).astype(np.int64)
        if group is not None:
            if qid is not None:
                raise ValueError("give the queries once: group= (sizes of contiguous "
                                 "queries) or qid= (one query id per row), not both")
            self.futures = [client.submit(_with_queries, f, *q, pure=False)
                            for f, q in zip(self.futures, _group_parts(group, self.lengths))]
            wait(self.futures)
        who = client.who_has(self.futures)
        self.workers = [sorted(who[f.key])[0] for f in self.futures]
        self.feature_names = feature_names
        self.categorical_feature = categorical_feature
        self.has_label = label is not None

    @property
    def num_row(self):
        return int(self.lengths.sum())


def _concat_frames(frames):
    """The frames one after the other, a category column keeping its type: its partitions'
    category lists joined first (pandas turns categories of different lists into
    objects, and integer categories into numbers)."""
    import pandas as pd
    from pandas.api.types import union_categoricals
    if len(frames) == 1:
        return frames[0]
    frames = [f.copy(deep=False) for f in frames]
    for c in frames[0].columns:
        if all(isinstance(f[c].dtype, pd.CategoricalDtype) for f in frames):
            cats = union_categoricals([f[c] for f in frames], ignore_order=True).categories
            for f in frames:
                f[c] = f[c].cat.set_categories(cats)
    return pd.concat(frames, axis=0, ignore_index=True)


def _plain_numbers(frame):
    """Whether every column of a pandas frame is numeric or boolean (none categorical)."""
    from pandas.api.types import is_bool_dtype, is_numeric_dtype
    return all(is_numeric_dtype(t) or is_bool_dtype(t) for t in frame.dtypes)


def _local_dataset(parts, offsets, names, categorical, reference=None):
    """The Dataset of one rank's partitions (possibly none): its rows keep their global
    ids (their positions in the collection)."""
    from .. import Dataset
    from ..data.validation import FeatureMatrix, as_feature_matrix
    X = parts[0][0]
    frames = hasattr(X, "iloc")
    if categorical or (frames and not all(_plain_numbers(p[0]) for p in parts)):
        # categories are coded once, over the rank's rows (a partition's own dictionary
        # would code them differently)
        X = _concat_frames([p[0] for p in parts]) if frames else as_feature_matrix(
            np.concatenate([np.asarray(p[0]) for p in parts], axis=0), "data",
            allow_empty_rows=True, feature_names=names, categorical_feature=categorical)
    else:  # the partitions as row blocks of one validated FeatureMatrix, not joined: the
        # Dataset bins them block by block (an array's partitions are not copied, a
        # frame's are converted to numbers once); tree_method "hist" never joins them,
        # "approx" (which sorts each column) joins them once
        blocks = [as_feature_matrix(p[0] if frames else np.asarray(p[0]), "data",
                                    allow_empty_rows=True, feature_names=names)
                  for p in parts]
        X = FeatureMatrix.from_blocks([b.dense for b in blocks], blocks[0].feature_names)
    cat = (lambda i: None if parts[0][i] is None else np.concatenate([p[i] for p in parts]))
    ids = np.concatenate([o + np.arange(p[0].shape[0], dtype=np.int64)
                          for o, p in zip(offsets, parts)])
    return Dataset(X, cat(1), weight=cat(2), base_margin=cat(3), row_ids=ids, qid=cat(4),
                   feature_names=names, categorical_feature=categorical, reference=reference)


def _train_task(run, rank, params, train_parts, evals_parts, num_boost_round, early_stopping,
                resume):
    """One rank's training: the ordinary ``train`` on its rows, meeting the other ranks in
    the reducer's collectives. Returns (Booster, history, model digest)."""
    from .. import train as local_train
    from ..boosting import model_io
    from ..boosting.callback import Checkpoint
    run_id, n_ranks, hub, timeout, names, categorical = run
    init, path, every = resume
    callbacks = [Checkpoint(path, every)] if path is not None and rank == 0 else None
    reducer = DaskReducer(run_id, rank, n_ranks, hub, timeout)
    try:
        dtrain = _local_dataset(*train_parts, names, categorical)
        evals = [(_local_dataset(parts, offsets, names, None, reference=dtrain), name)
                 for (parts, offsets), name in evals_parts]
        history = {}
        booster = local_train(params, dtrain, num_boost_round, evals=evals,
                              early_stopping_rounds=early_stopping, verbose_eval=False,
                              evals_result=history, reducer=reducer, callbacks=callbacks,
                              init_model=init)
    except BaseException as exc:
        reducer.abort(exc)
        raise
    finally:
        reducer.close()
    digest = hashlib.sha256(model_io.dumps(booster._to_dict()).encode()).hexdigest()
    return booster, history, digest


def _resumed(checkpoint, every, num_boost_round, params):
    """((the checkpoint's Booster or None, its absolute path or None, the period), the
    rounds left to train)."""
    from ..boosting.params import resolve_params
    if checkpoint is not None and resolve_params(params)["num_iterations"] is not None:
        raise ValueError("with a checkpoint, give the rounds as num_boost_round, not as "
                         "num_iterations (or an alias of it) in params")
    init = None
    if checkpoint is not None and os.path.exists(checkpoint):
        from .. import Booster
        init = Booster(model_file=checkpoint)
        if init.num_boosted_rounds() > num_boost_round:
            raise ValueError(f"{checkpoint} already holds {init.num_boosted_rounds()} rounds, "
                             f"more than the {num_boost_round} asked for")
    todo = num_boost_round - (init.num_boosted_rounds() if init is not None else 0)
    return (init, None if checkpoint is None else os.path.abspath(checkpoint),
            max(1, int(every))), todo


def _holders(client, ds):
    """The worker holding each of ``ds``'s partitions now (Dask recomputes one that a
    worker lost), the first by address where several do."""
    from distributed import wait
    wait(ds.futures)
    who = client.who_has(ds.futures)
    alive = set(client.nthreads())
    out = []
    for i, f in enumerate(ds.futures):
        held = sorted(w for w in who.get(f.key, ()) if w in alive)
        if not held:
            raise RuntimeError(f"partition {i} is held by no live worker: build the "
                               "DaskDataset again")
        out.append(held[0])
    return out


def _assigned(client, ds, holders, ranks):
    """Per rank: (partitions, their offsets); a partition held by a worker outside the run
    goes to a rank by its index, and a rank without any gets an empty one."""
    from distributed import wait
    out = [([], []) for _ in ranks]
    for i, (fut, w) in enumerate(zip(ds.futures, holders)):
        r = ranks.index(w) if w in ranks else i % len(ranks)
        out[r][0].append(fut)
        out[r][1].append(int(ds.offsets[i]))
    if any(not parts for parts, _ in out):  # made now: once the training tasks hold the
        # workers' threads, a task computed on one of them would wait for the training
        part = client.submit(_empty_part, ds.futures[0], pure=False)
        wait([part])
        for parts, offsets in out:
            if not parts:
                parts.append(part)
                offsets.append(0)
    return out


def _task_states(dask_scheduler, keys):
    tasks = dask_scheduler.tasks
    return {k: tasks[k].state if k in tasks else "forgotten" for k in keys}


def _check_started(client, futures, timeout):
    """Every rank's task is on its worker within ``timeout`` seconds; one whose worker
    left before it started ("no-worker") would wait forever: the run is cancelled with
    an error instead."""
    keys = [f.key for f in futures]
    deadline = time.monotonic() + timeout
    while True:
        states = client.run_on_scheduler(_task_states, keys=keys)
        stuck = [k for k, v in states.items() if v == "no-worker"]  # ("forgotten": the
        # scheduler has not had the submission yet)
        if stuck or time.monotonic() > deadline:
            client.cancel(futures)
            raise CollectiveTimeout(
                f"{len(stuck) or len(keys)} training task(s) could not start on their "
                f"workers{' within %g s' % timeout if not stuck else ''} (a worker left?): "
                "run train again")
        if all(v in ("processing", "memory", "erred") for v in states.values()):
            return
        time.sleep(0.02)


def _gathered(client, futures):
    """The ranks' results; where some failed, the first failure that is not a collective
    timeout (the others' timeouts follow from it) is raised, and the rest cancelled."""
    from distributed import as_completed, wait
    for done in as_completed(futures):
        if done.status == "error":
            break
    else:
        return client.gather(futures)
    try:  # the others fail soon after (aborted); give them a moment
        wait(futures, timeout=5.0)
    except Exception:
        pass
    errors = [f.exception() for f in futures if f.status == "error"]
    client.cancel([f for f in futures if not f.done()])
    cause = next((e for e in errors if not isinstance(e, CollectiveTimeout)), errors[0])
    raise cause


def _register(dask_worker):
    dask_worker.handlers[HANDLER] = collective_handler


def train(client, params, dtrain, num_boost_round=10, evals=None, early_stopping_rounds=None,
          timeout=60.0, checkpoint=None, checkpoint_every=10):
    """Train on the cluster; returns ``{"booster": Booster, "history": {...}}`` as
    ``xgboost.dask.train`` does.

    Parameters
    ----------
    client : distributed.Client
    params : dict, :func:`boostwood.train`'s parameters
    dtrain : DaskDataset
    num_boost_round : int
    evals : list of (DaskDataset, str), optional; the last drives early stopping
    early_stopping_rounds : int, optional
    timeout : float, seconds any collective may wait for the other workers (default 60)
    checkpoint : str, optional
        A model file path the client and every worker share (the first worker of the run,
        by address, saves the model there every ``checkpoint_every`` rounds). When the file exists at the
        start (a run that failed), training resumes from it, on a cluster of any size, to
        the model an uninterrupted run gives (without early stopping, whose state the
        file does not hold); it is removed once training ends.
    checkpoint_every : int, default 10

    The model is byte-identical to ``boostwood.train`` on the concatenated partitions.
    """
    _require_distributed()
    if not isinstance(dtrain, DaskDataset):
        raise TypeError(f"dtrain must be a DaskDataset, got {type(dtrain).__name__}")
    if not dtrain.has_label:
        raise ValueError("dtrain has no label")
    if not (isinstance(timeout, (int, float)) and 0 < timeout < float("inf")):
        raise ValueError(f"timeout must be a positive number of seconds, got {timeout!r}")
    resume, todo = _resumed(checkpoint, checkpoint_every, num_boost_round, params)
    holders = _holders(client, dtrain)  # now: a worker may have left since the Dataset
    ranks = sorted(set(holders))  # the workers holding training rows
    run_id = uuid.uuid4().hex
    client.run(_register, workers=ranks)
    run = (run_id, len(ranks), ranks[0], float(timeout), dtrain.feature_names,
           dtrain.categorical_feature)
    train_parts = _assigned(client, dtrain, holders, ranks)
    evals = list(evals or [])
    eval_parts = [(_assigned(client, ds, _holders(client, ds), ranks), name)
                  for ds, name in evals]
    futures = [client.submit(_train_task, run, rank, dict(params), train_parts[rank],
                             [(parts[rank], name) for parts, name in eval_parts],
                             todo, early_stopping_rounds, resume,
                             workers=[addr], allow_other_workers=False, pure=False,
                             key=f"boostwood-train-{run_id}-{rank}")
               for rank, addr in enumerate(ranks)]
    _check_started(client, futures, timeout)
    results = _gathered(client, futures)
    if len({digest for _, _, digest in results}) != 1:
        raise RuntimeError("the workers of a Dask training run built different models: "
                           "a defect, please report it")
    booster, history, _ = results[0]
    if checkpoint is not None and os.path.exists(checkpoint):
        os.remove(checkpoint)
    return {"booster": booster, "history": history}


def _predict_part(part, booster, kwargs):
    return booster.predict(part, **kwargs)


def predict(client, booster, data, **kwargs):
    """``booster.predict`` per partition of ``data`` (a dask DataFrame or Array), lazily:
    a dask Array of one block per partition, aligned with them. ``kwargs`` go to
    :meth:`boostwood.Booster.predict` (not the leaf, contribution or interaction
    outputs yet)."""
    _require_distributed()
    import dask.array as da
    shaped = [k for k in ("pred_leaf", "pred_contribs", "pred_interactions") if kwargs.get(k)]
    if shaped:
        raise ValueError(f"{shaped[0]} is not supported on Dask yet: predict with the "
                         "Booster on each partition (data.map_partitions)")
    import dask
    n_out = booster.n_outputs
    model = dask.delayed(booster, pure=False)  # one task of the graph, which every block
    # reads (a worker fetches it once), not a copy of the model inside each block's task
    if isinstance(data, da.Array):
        data = data.rechunk({1: -1}) if data.ndim == 2 else data
        if n_out > 1 and not kwargs.get("pred_leaf"):
            return data.map_blocks(_predict_part, model, kwargs, dtype=np.float64,
                                   chunks=(data.chunks[0], (n_out,)),
                                   meta=np.empty((0, 0), dtype=np.float64))
        return data.map_blocks(_predict_part, model, kwargs, dtype=np.float64,
                               drop_axis=1, meta=np.empty((0,), dtype=np.float64))
    if hasattr(data, "to_delayed"):
        blocks = [da.from_delayed(dask.delayed(_predict_part)(p, model, kwargs),
                                  shape=(np.nan,) if n_out == 1 else (np.nan, n_out),
                                  dtype=np.float64)
                  for p in data.to_delayed()]
        return da.concatenate(blocks, axis=0)
    raise TypeError(f"data must be a dask DataFrame or Array, got {type(data).__name__}")


inplace_predict = predict
