"""scikit-learn style estimators on Dask: the local estimators' parameters, trained with
:func:`boostwood.dask.train`, predicting lazily.

``DaskGBDTRegressor``, ``DaskGBDTClassifier`` and ``DaskGBDTRanker`` take every parameter
of :class:`boostwood.GBDTRegressor` / ``GBDTClassifier`` / ``GBDTRanker``, plus ``client``
(None: the current default client) and ``timeout`` (seconds any collective may wait).
``fit`` takes dask collections; ``predict`` / ``predict_proba`` return dask Arrays, one
block per partition; ``to_local()`` gives the local estimator with the same model.
``n_jobs`` None runs each worker's training on as many threads as the workers have
(the smallest ``nthreads`` of the cluster). Not on Dask yet: ``early_stopping_rounds``
without an ``eval_set`` (an error), and ``categorical_features=None`` (categorical
features by dtype, by name, by index or by a boolean mask work). ``verbose`` prints nothing.
"""
import inspect

import numpy as np

from ..sklearn import GBDTClassifier, GBDTRanker, GBDTRegressor
from ..sklearn import _hyper
from ..sklearn._hyper import kept_on_error
from . import DaskDataset, predict, train

_DASK_DOC = """
    client : distributed.Client, optional
        The cluster to train on (None: ``distributed.default_client()``).
    timeout : float, default=60.0
        Seconds any collective may wait for the other workers before the fit fails.
"""


def _client(est):
    if est.client is not None:
        return est.client
    from distributed import default_client
    return default_client()


def _columns(X):
    names = getattr(X, "columns", None)
    return X.shape[1], (None if names is None else np.asarray([str(c) for c in names],
                                                             dtype=object))


class _DaskFit:
    """What both Dask estimators add to their local class."""

    def _dask_fit(self, X, y, sample_weight, eval_set, sample_weight_eval_set, qid=None,
                  eval_qid=None, group=None, eval_group=None):
        _hyper.check_hyperparameters(self)
        if self.early_stopping_rounds is not None and not eval_set:
            raise ValueError("early_stopping_rounds on Dask needs an eval_set (the local "
                             "estimators hold out validation_fraction instead)")
        if self.categorical_features is None:
            raise ValueError("categorical_features on Dask: 'from_dtype' (the partitions' "
                             "category and string columns), or a list of column names or "
                             "indices, or a boolean mask")
        client = _client(self)
        n_features, names = _columns(X)
        self.n_features_in_ = n_features
        if names is not None:
            self.feature_names_in_ = names
        elif hasattr(self, "feature_names_in_"):
            del self.feature_names_in_
        params = self._native_params()
        if self.n_jobs is None:
            params["nthread"] = int(min(client.nthreads().values()))
        feature_names = None if names is None else list(names)
        # the local rule (an array of this width stands in for the collection): None for
        # "from_dtype" (the partitions' own category columns), else names or indices
        categorical = _hyper.categorical_spec(self.categorical_features,
                                              np.empty((0, n_features)))
        if categorical is not None:  # checked here, before any worker starts
            from ..data.categories import resolve_categorical
            resolve_categorical(categorical, None if names is None else list(names),
                                n_features)
        dtrain = DaskDataset(client, X, self._dask_labels(y), weight=sample_weight,
                             feature_names=feature_names, qid=qid, group=group,
                             categorical_feature=categorical)
        evals = []
        weights = sample_weight_eval_set or [None] * len(eval_set or [])
        queries = eval_qid or [None] * len(eval_set or [])
        groups = eval_group or [None] * len(eval_set or [])
        for i, ((Xe, ye), we, qe, ge) in enumerate(zip(eval_set or [], weights, queries,
                                                       groups)):
            evals.append((DaskDataset(client, Xe, self._dask_labels(ye), weight=we,
                                      feature_names=feature_names, qid=qe, group=ge),
                          f"validation_{i}"))
        out = train(client, params, dtrain, self.n_estimators, evals=evals,
                    early_stopping_rounds=self.early_stopping_rounds if evals else None,
                    timeout=self.timeout)
        self.booster_ = out["booster"]
        self.evals_result_ = out["history"]
        self.best_iteration_ = self.booster_.best_iteration
        self.best_score_ = self.booster_.best_score
        self.n_estimators_ = self.booster_.num_boosted_rounds()
        return self

    def _dask_labels(self, y):
        return y

    def _lazy(self, X, **kwargs):
        from sklearn.utils.validation import check_is_fitted
        check_is_fitted(self, "booster_")
        return predict(_client(self), self.booster_, X, **kwargs)

    def __getstate__(self):
        """A pickled estimator leaves its ``client`` behind (a Client cannot be pickled):
        unpickled, it uses the default client."""
        state = dict(self.__dict__)
        state["client"] = None
        return state

    def __sklearn_clone__(self):
        """scikit-learn's ``clone``, keeping the same ``client`` (a Client cannot be
        deep-copied)."""
        from sklearn.base import clone
        return type(self)(**{k: v if k == "client" else clone(v, safe=False)
                             for k, v in self.get_params(deep=False).items()})

    def to_local(self):
        """The local estimator (:class:`boostwood.GBDTRegressor` / ``GBDTClassifier``) with
        this one's parameters and fitted model."""
        local = self._local_class(**{k: v for k, v in self.get_params().items()
                                     if k not in ("client", "timeout")})
        for k, v in vars(self).items():
            if k.endswith("_") and not k.startswith("_"):
                setattr(local, k, v)
        return local


def _signature(cls, local):
    return inspect.Signature(
        list(inspect.signature(local.__init__).parameters.values())
        + [inspect.Parameter("client", inspect.Parameter.KEYWORD_ONLY, default=None),
           inspect.Parameter("timeout", inspect.Parameter.KEYWORD_ONLY, default=60.0)])


class DaskGBDTRegressor(_DaskFit, GBDTRegressor):
    __doc__ = ("Gradient boosted trees for regression, trained on a Dask cluster.\n"
               + GBDTRegressor.__doc__.split("\n", 1)[1] + _DASK_DOC)
    _local_class = GBDTRegressor

    def __init__(self, *, client=None, timeout=60.0, **kwargs):
        super().__init__(**kwargs)
        self.client = client
        self.timeout = timeout

    def fit(self, X, y, sample_weight=None, eval_set=None, sample_weight_eval_set=None):
        """Fit on dask collections (``eval_set``: a list of (X, y) pairs of them)."""
        with kept_on_error(self):
            return self._dask_fit(X, y, sample_weight, eval_set, sample_weight_eval_set)

    def predict(self, X, output_margin=False, iteration_range=None):
        """Predictions as a dask Array (lazy), one block per partition of ``X``."""
        return self._lazy(X, output_margin=output_margin, iteration_range=iteration_range)


class DaskGBDTClassifier(_DaskFit, GBDTClassifier):
    __doc__ = ("Gradient boosted trees for classification, trained on a Dask cluster.\n"
               + GBDTClassifier.__doc__.split("\n", 1)[1] + _DASK_DOC)
    _local_class = GBDTClassifier

    def __init__(self, *, client=None, timeout=60.0, **kwargs):
        super().__init__(**kwargs)
        self.client = client
        self.timeout = timeout

    def fit(self, X, y, sample_weight=None, eval_set=None, sample_weight_eval_set=None):
        """Fit on dask collections (``eval_set``: a list of (X, y) pairs of them); the
        classes are the labels' distinct values (one pass over ``y``)."""
        import dask.array as da
        with kept_on_error(self):
            counts = y.value_counts() if hasattr(y, "value_counts") and not isinstance(
                y, da.Array) else da.unique(y, return_counts=True)
            client = _client(self)
            counts = client.gather(client.compute(counts))
            if isinstance(counts, (tuple, list)):  # (values, counts), sorted
                self.classes_, counts = np.asarray(counts[0]), np.asarray(counts[1])
            else:  # a pandas Series: counts by value
                counts = counts.sort_index()
                self.classes_, counts = counts.index.to_numpy(), counts.to_numpy()
            held = counts > 0  # (a categorical y also counts its unused categories)
            self.classes_, counts = self.classes_[held], counts[held]
            self.n_classes_ = len(self.classes_)
            if self.n_classes_ < 2:
                raise ValueError("the classifier needs samples of at least 2 classes, but y "
                                 "holds only one class")
            if self.class_weight is not None:
                sample_weight = self._dask_class_weights(y, counts, sample_weight)
            return self._dask_fit(X, y, sample_weight, eval_set, sample_weight_eval_set)

    def _dask_class_weights(self, y, counts, sample_weight):
        """The rows' weights (lazily) as the local estimator gives them: ``sample_weight``
        (or ones) times the weight of each row's class (``class_weight``; "balanced":
        n_samples / (n_classes * class count), from the counts of one pass over y)."""
        from sklearn.utils.class_weight import compute_class_weight
        if isinstance(self.class_weight, dict):
            unknown = [k for k in self.class_weight if not np.any(self.classes_ == k)]
            if unknown:
                raise ValueError(f"class_weight names classes that are not in y: {unknown}")
            table = compute_class_weight(self.class_weight, classes=self.classes_,
                                         y=self.classes_)
        else:  # "balanced" (checked with the other hyperparameters)
            counts = counts.astype(np.float64)
            table = np.sum(counts) / (len(self.classes_) * counts)
        weights = self._dask_labels(y)
        weights = weights.map_partitions(_take, table, meta=(weights.name, "f8")) \
            if hasattr(weights, "map_partitions") else \
            weights.map_blocks(_take, table, dtype=np.float64)
        if sample_weight is None:
            return weights
        if hasattr(weights, "map_partitions") or hasattr(sample_weight, "map_partitions"):
            # partition by partition, by position (an index would align by label)
            import dask
            import dask.array as da
            parts = [_partitions_of(v) for v in (sample_weight, weights)]
            if len(parts[0]) != len(parts[1]):
                raise ValueError(f"sample_weight has {len(parts[0])} partitions, y "
                                 f"{len(parts[1])}: partition them alike")
            return da.concatenate([da.from_delayed(dask.delayed(_times)(a, b), shape=(np.nan,),
                                                   dtype=np.float64)
                                   for a, b in zip(*parts)])
        return sample_weight * weights

    def _dask_labels(self, y):
        classes = self.classes_
        if hasattr(y, "map_partitions"):
            return y.map_partitions(_codes, classes, meta=(getattr(y, "name", None), "f8"))
        return y.map_blocks(_codes, classes, dtype=np.float64)

    def predict_proba(self, X, iteration_range=None):
        """Class probabilities as a dask Array (lazy), shape (n_samples, n_classes)."""
        p = self._lazy(X, iteration_range=iteration_range)
        if p.ndim == 1:
            return p.map_blocks(lambda b: np.column_stack([1.0 - b, b]), new_axis=1,
                                chunks=(p.chunks[0], (2,)), dtype=np.float64)
        return p

    def predict(self, X, iteration_range=None, *, output_margin=False):
        """Predicted class labels as a dask Array (lazy)."""
        if output_margin:
            return self._lazy(X, output_margin=True, iteration_range=iteration_range)
        classes = self.classes_
        return self.predict_proba(X, iteration_range).map_blocks(
            lambda b: classes[np.argmax(b, axis=1)], drop_axis=1, dtype=classes.dtype)


class DaskGBDTRanker(_DaskFit, GBDTRanker):
    __doc__ = ("Gradient boosted trees for learning to rank, trained on a Dask cluster.\n"
               + GBDTRanker.__doc__.split("\n", 1)[1] + _DASK_DOC)
    _local_class = GBDTRanker

    def __init__(self, *, client=None, timeout=60.0, **kwargs):
        super().__init__(**kwargs)
        self.client = client
        self.timeout = timeout

    def fit(self, X, y, *, qid=None, group=None, sample_weight=None, eval_set=None,
            eval_qid=None, eval_group=None, sample_weight_eval_set=None):
        """Fit on dask collections: ``qid`` each row's query id (a dask collection
        partitioned as ``X``, each query within one partition), or ``group`` the query
        sizes (a local array; contiguous rows, no query across partitions); ``eval_qid``
        or ``eval_group``, one per ``eval_set`` pair."""
        if (qid is None) == (group is None):
            raise ValueError("give the training queries as qid= or as group= (one of them)")
        queries = eval_qid if eval_qid is not None else eval_group
        if eval_set is not None and (queries is None or len(queries) != len(eval_set)
                                     or (eval_qid is not None and eval_group is not None)):
            raise ValueError("eval_qid or eval_group must give the queries of each "
                             "eval_set pair")
        with kept_on_error(self):
            return self._dask_fit(X, y, sample_weight, eval_set, sample_weight_eval_set,
                                  qid=qid, eval_qid=eval_qid, group=group,
                                  eval_group=eval_group)

    def predict(self, X, output_margin=False, iteration_range=None):
        """Scores as a dask Array (lazy): within a query, higher ranks first."""
        return self._lazy(X, output_margin=output_margin, iteration_range=iteration_range)


def _partitions_of(v):
    """A dask Series' or Array's partitions (Delayed), in order."""
    if hasattr(v, "to_delayed"):
        return list(np.ravel(v.to_delayed()))
    raise TypeError(f"sample_weight must be a dask collection, got {type(v).__name__}")


def _times(a, b):
    """The product of two partitions' values, by position."""
    a, b = np.asarray(a, dtype=np.float64), np.asarray(b, dtype=np.float64)
    if a.shape != b.shape:
        raise ValueError(f"a partition of sample_weight has {a.shape[0]} rows, y's "
                         f"{b.shape[0]}: partition them alike")
    return a * b


def _take(codes, table):
    """Each row's entry of ``table`` by its class code."""
    return table[np.asarray(codes, dtype=np.int64)]


def _codes(y, classes):
    """Labels as class codes (a label outside ``classes`` is an error)."""
    y = np.asarray(y)
    codes = np.clip(np.searchsorted(classes, y), 0, len(classes) - 1)
    if not np.all(classes[codes] == y):
        raise ValueError(f"y contains labels not among the classes: "
                         f"{np.unique(y[classes[codes] != y])[:5].tolist()}")
    return codes.astype(np.float64)


DaskGBDTRegressor.__init__.__signature__ = _signature(DaskGBDTRegressor, GBDTRegressor)
DaskGBDTClassifier.__init__.__signature__ = _signature(DaskGBDTClassifier, GBDTClassifier)
DaskGBDTRanker.__init__.__signature__ = _signature(DaskGBDTRanker, GBDTRanker)
