"""Training state of one ``train`` call: binned data, margins, gradients, the grower.

This is the part of a boosting round that touches arrays; ``engine.train``
only sequences rounds and callbacks.
"""
import warnings
from dataclasses import replace

import numpy as np

from .._comm import LocalReducer, threadsafe_numba
from .._config import G_H_DTYPE, RAW_DTYPE, set_threads
from .._kernels.predict import add_class_columns, add_leaf_values, set_leaf_values
from .._kernels.random import STREAM_BAGGING, split_rows
from ..data.categories import check_unseen, recode
from ..data.dataset import default_feature_names
from ..data.queries import check_whole_queries
from ..data.validation import check_weight_range
from ..tree import GrowerParams
from ..tree.methods import make_tree_method
from ..objectives import CustomObjective
from ._side_by_side import ClassTreeWorkers, worker_count
from .gradient import GradientBoosting, LeafRows
from .metrics import custom_metric_values, get_metric
from .params import binning_args
from .rank_metrics import metric_names


def _grower_params(p):
    return GrowerParams(
        max_depth=p["max_depth"], max_leaves=p["max_leaves"], grow_policy=p["grow_policy"],
        reg_lambda=p["lambda"], reg_alpha=p["alpha"], max_delta_step=p["max_delta_step"],
        gamma=p["gamma"], min_child_weight=p["min_child_weight"],
        min_data_in_leaf=p["min_data_in_leaf"], colsample_bynode=p["colsample_bynode"],
        learning_rate=p["eta"], max_cat_to_onehot=p["max_cat_to_onehot"],
        cat_smooth=p["cat_smooth"], cat_l2=p["cat_l2"], max_cat_threshold=p["max_cat_threshold"],
        min_data_per_group=p["min_data_per_group"],
        min_data_per_category=p["min_data_per_category"])


def _tree_method(p, dtrain, reducer):
    """The run's tree method (:func:`boostwood.tree.methods.make_tree_method`)."""
    return make_tree_method(p["tree_method"], dtrain, _grower_params(p), reducer,
                            p["approx_proposal"], p["sketch_eps"],
                            (p["sketch_sample_cnt"], p["seed"]))


def _record_binning(booster, mapper):
    """The Dataset owns the binning (``max_bin`` in params is passed to it): the model
    records what the bins were made with, not a default the run did not use."""
    made = {"max_bin": mapper.max_bin, "bin_construct_sample_cnt": mapper.sample_cnt}
    changed = {k: v for k, v in made.items() if booster.params[k] != v}
    if changed:
        booster.params = booster.params.replace(**changed)


def _check_shardable(p, objective, obj, custom_metric):
    """Raise for what a run over several data shards cannot do (yet)."""
    if p["tree_method"] == "exact" or (p["tree_method"] == "approx"
                                       and p["approx_proposal"] == "local"):
        raise ValueError("tree_method='exact' and local approx proposals search one "
                         "machine's sorted columns; use 'hist' or global 'approx' on shards")
    if p["boosting"] == "gradient" or objective.line_search:
        raise ValueError(f"leaf line searches ({objective.name}, boosting='gradient') need "
                         "every row of a leaf and are not supported on several shards")
    if obj is not None or custom_metric is not None:
        raise ValueError("custom objectives and metrics see one shard's rows only and are "
                         "not supported on several shards")


def _check_ranking(p, objective, dtrain, evals, reducer):
    """Raise for ranking without queries, or with what would cut them: Friedman's
    boosting (line searches per leaf), queries split across shards."""
    if dtrain.queries is None:
        raise ValueError(f"objective {objective.name!r} ranks rows within queries: give the "
                         "training Dataset group= (query sizes) or qid= (a query id per row)")
    if p["boosting"] == "gradient":
        raise ValueError(f"objective {objective.name!r} needs boosting='newton': "
                         "boosting='gradient' fits least-squares trees to gradients whose "
                         "pairs span queries (not implemented for ranking)")
    check_whole_queries(dtrain.queries, reducer)
    for d, name in evals:
        if d is not dtrain:
            check_whole_queries(d.queries, reducer, f"evaluation set {name!r}")


def _rows_outside(rows, n):
    """The rows of 0..n-1 not in ``rows`` (ascending, int64)."""
    outside = np.ones(n, dtype=bool)
    outside[rows] = False
    return np.flatnonzero(outside)


def _balance_classes(info, p, objective, reducer):
    """``is_unbalance`` (LightGBM's): the rows of the rarer class of a binary objective
    weigh (majority rows / minority rows) times more, counted over every shard, the other
    class's as given, as LightGBM weighs them (so when positives are the majority, the
    negatives are scaled, not the positives down)."""
    if not p["is_unbalance"]:
        return info
    if isinstance(objective, CustomObjective) or not objective.name.startswith("binary:"):
        raise ValueError("is_unbalance applies to the built-in binary objectives only")
    if p["scale_pos_weight"] != 1.0:
        raise ValueError("is_unbalance and scale_pos_weight cannot be used together (as in "
                         "LightGBM): pick one")
    counts = np.array([np.sum(info.label == 1.0), np.sum(info.label != 1.0)], dtype=np.float64)
    reducer.allreduce_sum(counts)
    pos, neg = counts
    if pos == 0 or neg == 0:
        return info  # one class only: nothing to balance (LightGBM does the same)
    scale = np.where(info.label == 1.0, neg / pos, 1.0) if neg > pos else \
        np.where(info.label == 1.0, 1.0, pos / neg)
    return replace(info, weight=info.weight * scale)


def _scale_positives(info, p, objective):
    """The training rows as the objective sees them: with ``scale_pos_weight`` s != 1, a
    positive row's (label exactly 1, also under ``reg:logistic``'s labels in [0, 1], as
    XGBoost) weight times s (its gradient, hessian and share of the initial margin;
    evaluation sets keep their own weights, as in XGBoost). Other objectives refuse it
    (XGBoost also scales ``reg:squarederror``'s rows of label 1: a surprise, not copied)."""
    s = p["scale_pos_weight"]
    if s == 1.0:
        return info
    if isinstance(objective, CustomObjective) or not (objective.name.startswith("binary:")
                                                      or objective.name == "reg:logistic"):
        name = "a custom objective" if isinstance(objective, CustomObjective) else \
            repr(objective.name)
        raise ValueError(f"scale_pos_weight applies to the built-in binary objectives and "
                         f"reg:logistic only, not to {name}; weight the rows instead")
    return replace(info, weight=info.weight * np.where(info.label == 1.0, s, 1.0))


class _EvalSet:
    """An evaluation set with its running margins."""

    def __init__(self, dataset, name, objective, raw):
        self.dataset, self.name, self.raw = dataset, name, raw
        self.label = objective.check_labels(dataset.label)
        self.info = dataset.row_info(self.label)
        self.weight = self.info.weight


class _CustomMetric:
    """A user's ``f(preds, dataset) -> (name, value)`` or a list of such pairs."""

    def __init__(self, fn):
        self.fn = fn
        self.names = {}  # evaluation set -> the metric names of its first round

    def evaluate(self, pred, dataset, builtin, set_name):
        values = custom_metric_values(self.fn(pred, dataset))
        names = [n for n, _ in values]
        first = self.names.setdefault(set_name, names)
        if names != first:  # (the log's lists would no longer line up with the rounds)
            raise ValueError(f"custom_metric returned the metrics {names} for {set_name!r}, "
                             f"after {first} in earlier rounds: it must name the same ones "
                             "every round")
        taken = sorted(set(names) & set(builtin))
        if taken:  # (their values would interleave with eval_metric's in one log list)
            raise ValueError(f"custom_metric's metric names {taken} are eval_metric's too; "
                             "name them otherwise")
        return values


class TrainingState:
    """Everything a boosting round reads and writes.

    Parameters
    ----------
    params : dict, resolved parameters
    dtrain : Dataset with labels
    evals : list of (Dataset, name)
    booster : Booster, receives the base score and the trees
    reducer : where the shards of a distributed run meet (see :mod:`boostwood._comm`);
        None for one process
    """

    def __init__(self, params, dtrain, evals, booster, obj=None, custom_metric=None,
                 init_model=None, reducer=None):
        self.params = p = params
        self.nthread = set_threads(p["nthread"])
        self.reducer = LocalReducer() if reducer is None else reducer
        if self.reducer.n_shards > 1:
            _check_shardable(p, booster.objective, obj, custom_metric)
        self.obj = booster.objective
        if obj is not None:
            if not callable(obj):
                raise TypeError(f"obj must be callable, got {type(obj).__name__}")
            self.obj = CustomObjective(booster.objective, obj, dtrain)
        self.booster = booster
        if dtrain.label is None:
            raise ValueError("the training Dataset has no label")
        if self.obj.needs_queries:
            _check_ranking(p, self.obj, dtrain, evals, self.reducer)
        dtrain.set_binning(**binning_args(p))
        dtrain.construct(self.reducer)
        _record_binning(booster, dtrain.bin_mapper)
        self.dtrain = dtrain
        self.y = self.obj.check_labels(dtrain.label)
        n, K = dtrain.num_row(), self.obj.n_outputs
        if K > 2:
            total = np.array([float(n)])
            self.reducer.allreduce_sum(total)
            if K > total[0]:
                raise ValueError(f"num_class={K} is more than the {int(total[0])} training rows: "
                                 "most classes could never be seen (a typo?)")
        self.info = _balance_classes(_scale_positives(dtrain.row_info(self.y), p, self.obj),
                                     p, self.obj, self.reducer)
        self.w = self.info.weight
        if self.w.strides[0] != 0:  # (unit weights: ones)
            check_weight_range(self.w)
        self.init_model, self.round = init_model, 0
        self._warned_hessians = False
        if init_model is not None:
            base = self._continue_from(init_model, dtrain)
        elif p["base_score"] is not None:
            base = self.obj.base_margin_from_score(p["base_score"])
        else:
            base = self.obj.init_score(self.info, self.reducer)
        if init_model is None:
            booster._start(base, dtrain.feature_names)
            booster.feature_types = dtrain.feature_types
            booster.category_dictionaries = {f: list(d) for f, d in dtrain.categories.items()}
        self.raw = self._initial_raw(dtrain, base)
        self.gh = np.empty((K, n, 2), dtype=G_H_DTYPE)
        self._columns = None  # see _class_columns
        self._side_by_side = None  # see _workers
        mapper = dtrain.bin_mapper
        missing = dtrain.has_missing().astype(np.float64)
        self.reducer.allreduce_max(missing)  # a feature missing on any shard
        trivial = (mapper.n_bins == 1) & ~(missing > 0)
        self.active = np.nonzero(~trivial)[0].astype(np.int64)
        self.method = _tree_method(p, dtrain, self.reducer)
        self.grower = self.method.grower
        if p["use_quantized_grad"]:
            self.method.stats.use_quantized(p["num_grad_quant_bins"], p["stochastic_rounding"],
                                            p["seed"])
        self.weighted_rows = None
        if self.method.drops_zero_weight and np.any(self.w == 0):  # (local rows: per shard)
            self.weighted_rows = np.nonzero(self.w > 0)[0].astype(np.int32)
        self.rng = None  # set per round by boost_round (see _round_rng)
        self._outside = None  # the rows outside this round's bag (set by _sample)
        self.friedman = None
        if p["boosting"] == "gradient":
            self.friedman = GradientBoosting(self.obj, p["line_search"], self.y, self.w)
        self.evals = []
        for d, name in evals:
            raw = self.raw if d is dtrain else self._initial_raw(d, base)
            self.evals.append(_EvalSet(d, name, self.obj, raw))
            if d is not dtrain:
                if p["unseen_category"] == "error":
                    _refuse_unseen(d, dtrain, name)
                if d.reference is not None:
                    d._bin()  # the training bins (binned again if dtrain was)
                self.evals[-1].add_tree = self.method.margin_adder(d)
        self.metrics = self._metrics(p, custom_metric)

    def _metrics(self, p, custom_metric):
        """The metrics of ``eval_metric`` (else the objective's), each checked once against
        every evaluation set's labels and the model's outputs, then the custom one."""
        metrics = [get_metric(m, p) for m in metric_names(p, self.obj)]
        names = [m.name for m in metrics]
        twice = sorted({n for n in names if names.count(n) > 1})
        if twice:  # (their values would interleave in one list of the log)
            raise ValueError(f"eval_metric names {twice} more than once")
        n = self.obj.n_outputs
        for m in metrics:  # class ids and probabilities come from softmax models alone
            if m.n_columns(n) and m.label_kind(n) == "classes" and self.obj.link != "softmax":
                raise ValueError(f"eval_metric {m.name!r} reads {n} columns as class "
                                 f"probabilities (multi:softprob or multi:softmax); the "
                                 f"{n} outputs of objective {self.obj.name!r} are not classes")
        for ev in self.evals:
            for m in metrics:
                try:
                    m.check(ev.label, n)
                except ValueError as exc:
                    raise ValueError(f"evaluation set {ev.name!r}: {exc}") from None
        if custom_metric is not None:
            if not callable(custom_metric):
                raise TypeError(f"custom_metric must be callable, got "
                                f"{type(custom_metric).__name__}")
            metrics.append(_CustomMetric(custom_metric))
        return metrics

    def _round_rng(self):
        """The random numbers of one round come from (seed, round number) alone, so a run
        resumed from a checkpoint draws exactly what the uninterrupted run drew."""
        seed = int(self.params["seed"])
        return np.random.default_rng([seed & 0xFFFFFFFF, (seed >> 32) & 0xFFFFFFFF, self.round])

    def _continue_from(self, init, dtrain):
        """Start from the trees of ``init`` (a Booster): same shape of model required."""
        if init.base_score is None:
            raise ValueError("init_model has no trees to continue from")
        if init.n_features != dtrain.features.shape[1] or init.n_outputs != self.obj.n_outputs:
            raise ValueError(f"init_model has {init.n_features} features and "
                             f"{init.n_outputs} outputs; the data and objective need "
                             f"{dtrain.features.shape[1]} and {self.obj.n_outputs}")
        if init.objective.link != self.obj.link:  # its margins are on another scale
            raise ValueError(f"init_model was trained with objective {init.objective.name!r}, "
                             f"whose margins are on the {init.objective.link} scale; "
                             f"{self.obj.name!r} reads them on the {self.obj.link} scale: continue "
                             "it with an objective of the same link")
        names = dtrain.feature_names
        if names != init.feature_names:
            # checked here, so that the message speaks of training (computing init's
            # margins on dtrain would refuse it in Booster.predict's words)
            given = ("has no feature names" if names == default_feature_names(len(names))
                     else f"has feature names {names[:5]}...")
            raise ValueError(f"init_model was trained on features {init.feature_names[:5]}... "
                             f"but dtrain {given}: its columns would be matched by position; "
                             "give dtrain the model's columns and names")
        if dtrain.categories != init.category_dictionaries:
            # the model's category sets are codes of its own dictionaries
            raise ValueError("init_model's categorical features or their categories differ "
                             "from dtrain's; continue training on data whose categorical "
                             "columns hold the same categories")
        self.booster._start(init.base_score, dtrain.feature_names)
        self.booster.trees = list(init.trees)
        self.booster._take_feature_types(init)
        self.round = init.num_boosted_rounds()
        return init.base_score

    def _newton_steps(self):
        """Whether leaves take Newton steps -G / (H + lambda) on the loss's hessians
        (first-order boosting with a global or no line search grows on h = w)."""
        return self.friedman is None or self.params["line_search"] == "leaf"

    def _check_hessians(self):
        """A custom objective's hessians: a total of 0 or less for an output leaves every
        Newton step undefined or of the wrong sign (the model learns nothing, or the
        opposite of the loss): an error. Some negative ones (focal or Cauchy losses,
        rounding just below 0) pass, as in XGBoost and LightGBM, with one warning."""
        hess = self.gh[:, :, 1]
        total = hess.sum(axis=1, dtype=np.float64)
        self.reducer.allreduce_sum(total)
        if np.any(total <= 0):
            raise ValueError(f"the custom objective's hessians sum to {total.min():.3g} <= 0 "
                             "over the rows: Newton steps need a positive curvature (a "
                             "convex loss); clip them, e.g. np.maximum(hess, 1e-6)")
        bad = np.count_nonzero(hess < 0)
        if bad and not self._warned_hessians:
            self._warned_hessians = True
            warnings.warn(f"the custom objective returned {bad} negative hessians in round "
                          f"{self.round}: a leaf whose hessians sum below 0 steps against "
                          "the loss; clip them if that is not meant", RuntimeWarning,
                          stacklevel=4)

    def _initial_raw(self, d, base):
        n, K = d.num_row(), self.obj.n_outputs
        if self.init_model is not None:  # the margins of every round of the model continued
            # from (not only to its best_iteration: all its trees stay in the new model)
            every = (0, self.init_model.num_boosted_rounds())
            return self.init_model.predict(d, output_margin=True, iteration_range=every).reshape(
                n, K).astype(RAW_DTYPE)
        raw = np.empty((n, K), dtype=RAW_DTYPE)
        if d.base_margin is not None:
            bm = d.base_margin.reshape(n, -1)
            if bm.shape[1] != K:
                raise ValueError(f"base_margin has {bm.shape[1]} columns, the objective needs {K}")
            raw[:] = bm
        else:
            raw[:] = base
        return raw

    def _sample(self):
        p, n = self.params, self.dtrain.num_row()
        rows = self._outside = None
        freq = p["bagging_freq"]
        if p["subsample"] < 1.0 and freq > 0:
            # a row is in the bag by a draw keyed by (seed, round, row id); with bagging_freq
            # k, the round that drew it: rounds 1..k keep round 1's bag, k+1..2k round k+1's
            inside, outside = np.empty(n, dtype=np.int32), np.empty(n, dtype=np.int64)
            ids = self.info.row_ids
            k = split_rows(int(p["seed"]) & 0x7FFFFFFFFFFFFFFF, STREAM_BAGGING,
                           (self.round - 1) // freq * freq + 1,
                           np.zeros(0, np.int64) if ids is None else ids, ids is None, n,
                           float(p["subsample"]), inside, outside)
            rows, self._outside = inside[:k], outside[:n - k]
        if self.weighted_rows is not None:
            # exact / approx: rows of weight 0 take no part in growing at all (their
            # values would otherwise place thresholds), exactly as if removed
            rows = self.weighted_rows if rows is None else np.intersect1d(rows,
                                                                          self.weighted_rows)
            self._outside = _rows_outside(rows, n)
        feats = self.active
        if p["colsample_bytree"] < 1.0 and feats.size:
            k = max(1, int(round(p["colsample_bytree"] * feats.size)))
            feats = np.sort(self.rng.choice(feats, k, replace=False))
        return rows, feats

    def boost_round(self):
        """Grow the trees of one round and update every set's margins."""
        set_threads(self.nthread)
        self.rng = self._round_rng()
        self.round += 1
        self.obj.start_round(self.params["seed"], self.round, self.reducer)
        self.obj.gradient(self.info, self.raw, self.gh)
        if isinstance(self.obj, CustomObjective) and self._newton_steps():
            self._check_hessians()
        if self.friedman is not None:
            self.friedman.prepare(self.gh)
        rows, feats = self._sample()
        columns = self._class_columns(rows)
        ids = self.info.row_ids  # None: 0..n-1 (no array of 8 bytes a row each round)
        K = self.obj.n_outputs

        def grow_one(method, k):  # keys the rounding of quantized gradients: (round, k)
            gh = method.stats.quantize(self.gh[k], ids, (self.round - 1) * K + k)
            return self._grow(method, gh, k, rows, feats, columns)

        workers = self._workers()
        if workers is not None:
            trees = workers.run(K, grow_one)
        else:
            trees = [grow_one(self.method, k) for k in range(K)]
        for k, tree in enumerate(trees):
            for ev in self.evals:
                if ev.raw is not self.raw:
                    ev.add_tree(tree, ev.raw, k)
        if columns is not None:
            add_class_columns(self.raw, columns)
        self.booster._append_round(trees)

    def _grow(self, method, gh, k, rows, feats, columns):
        """Grow tree ``k`` of the round with ``method`` and add its leaf values to the
        training margins (or to its column of ``columns``)."""
        tree, (sides, starts, counts, values) = method.grow(gh, rows, feats, self.rng)
        if self._leaves_read_margins:
            values = self._reestimate_leaves(tree, sides, starts, counts, k)
        if columns is not None:
            set_leaf_values(method.grower.buf, sides, starts, counts, values, columns[k])
        else:  # the partition knows the leaf of every row it was grown on
            add_leaf_values(method.grower.buf, sides, starts, counts, values, self.raw, k)
            if rows is not None:  # the rows outside the bag walk the tree
                method.add_to_margins(tree, self.raw, k, self.dtrain, rows=self._outside)
        return tree

    @property
    def _leaves_read_margins(self):
        """Are leaf values re-estimated from the margins after a tree is grown (Friedman's
        line searches, or a loss with an uninformative hessian)? Then each tree must see
        the trees of the round before it."""
        return self.friedman is not None or bool(self.obj.line_search)

    def _workers(self):
        """The workers that grow this round's trees side by side (see
        :mod:`._side_by_side`), or None: in turn. Side by side when no tree reads the
        margins (Friedman's and line searches' leaf values do: in turn, each sees the
        trees before it), the tree method grows side by side, no tree draws from the
        round's generator (per-node feature sampling), one process trains on two
        threads or more and the memory rule allows a second worker. Each tree adds to
        its own column of the margins (or of the round's class columns) only."""
        if self._side_by_side is None:
            p = self.params
            ok = (self.obj.n_outputs > 1 and not self._leaves_read_margins
                  and ClassTreeWorkers.enabled and self.nthread > 1
                  and self.method.grows_side_by_side and self.reducer.n_shards == 1
                  and p["colsample_bynode"] >= 1.0 and threadsafe_numba())
            state = self.gh.nbytes + self.raw.nbytes  # and the class columns, if any
            state += 0 if self._columns is None else self._columns.nbytes
            n = worker_count(self.obj.n_outputs, self.nthread, self.method.worker_bytes,
                             state) if ok else 1
            self._side_by_side = ClassTreeWorkers(self.method, n, self.nthread) if n > 1 \
                else False
        return self._side_by_side or None

    def _class_columns(self, rows):
        """Where a round of several trees puts its leaf values, one contiguous column per
        tree, before they are added to the margins at the round's end (None: straight to
        the margins). The margins are row-major, (n_rows, n_outputs): one tree's
        column there spreads over all of their memory (10 classes of 160k rows: 12.8 MB,
        1.1 ms a tree), its own column holds 1.3 MB. The same sums: each row gets
        one value per tree, added to its margin as before. Only when every row is in
        the tree's partition and no leaf is re-estimated from the margins. It costs a
        second array the size of the margins for the whole fit."""
        if self.obj.n_outputs < 2 or rows is not None or self._leaves_read_margins:
            return None
        if self._columns is None:
            self._columns = np.empty((self.obj.n_outputs, self.raw.shape[0]), dtype=RAW_DTYPE)
        return self._columns

    def _reestimate_leaves(self, tree, sides, starts, counts, k):
        """Leaf values set after the structure is grown: Friedman's line searches
        (``boosting="gradient"``, see :mod:`.gradient`), or, in Newton boosting, the
        line search of losses with an uninformative hessian (Friedman 2001, step 2.3):
        gamma_j = argmin sum w L(y, F + gamma). Both are shrunk by eta."""
        leaves = np.nonzero(tree.feature < 0)[0]
        rows = LeafRows(self.grower.buf, sides, starts, counts)
        eta = self.params["eta"]
        if self.friedman is not None:
            values = self.friedman.leaf_values(self.gh[k], rows, self.raw, k, eta)
        else:
            values = np.array([eta * self.obj.leaf_values(self.y[idx], self.raw[idx, k],
                                                          self.w[idx], output=k)
                               for idx in (rows.of(j) for j in range(leaves.size))])
        tree.value[leaves] = values
        return values

    def evaluate(self, evals_log):
        """Append this round's metric values to ``evals_log``."""
        for ev in self.evals:
            pred = self.obj.eval_transform(ev.raw)
            log = evals_log.setdefault(ev.name, {})
            for m in self.metrics:
                if isinstance(m, _CustomMetric):
                    builtin = [b.name for b in self.metrics if b is not m]
                    for name, value in m.evaluate(pred, ev.dataset, builtin, ev.name):
                        log.setdefault(name, []).append(value)
                    continue
                log.setdefault(m.name, []).append(m.evaluate(ev.info, pred, self.reducer))
        return evals_log


def _refuse_unseen(d, dtrain, name):
    """unseen_category="error": an evaluation set holding categories the training data
    lacks is refused as ``predict`` would refuse it, naming the set, column and values
    (a set made with ``reference=`` was coded when it was made, unseen ones as missing)."""
    try:
        if d.reference is not None:
            check_unseen(d.features)
        elif dtrain.categories or d.categories:
            recode(d.features, dtrain.categories, "error", names=d.feature_names)
    except ValueError as exc:
        raise ValueError(f"evaluation set {name!r}: {exc}") from None
