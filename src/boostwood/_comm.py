"""Layer 1: where per-shard sums meet.

Training code never adds statistics across data shards itself; it hands them
to a reducer. Every shard runs the same training loop on its own rows and calls
the same collectives in the same order; the reducer makes each call return the
same result on every shard:

* ``allreduce_sum(array)``: the elementwise sum over shards (int64 arrays:
  fixed-point histograms and totals, exact-sum accumulators, row counts --
  exact in any order);
* ``allreduce_histograms(hist, slots)``: the same for some slots of a histogram pool;
* ``allreduce_max(array)``: the elementwise maximum (float64);
* ``allgather(obj)``: the list of every shard's ``obj``, in shard order.

One more is optional (:func:`combine` falls back to ``allgather`` without it):

* ``combine(obj, fn)``: ``fn(every shard's obj, in shard order)``, computed once (a
  distributed reducer computes it where the parts meet, so only that process ever holds
  them all) and returned on every shard. Metrics that are not sums of per-row terms
  (AUC), global ``approx`` proposals and the binning sample's edges reduce this way:
  what travels back is their small result (a value, the cuts, the edges), not every
  shard's rows.

Single-process training uses :class:`LocalReducer` (one shard, nothing to add).
:class:`SimulatedShards` runs k shards in k threads of one process and adds
their contributions in a shuffled order at every call, so tests show that a
model does not depend on how rows are split or in what order shards are added.
A distributed reducer (Dask) implements the same calls; the grower stays
the same.

Sums of floats that fixed point cannot hold (labels for the initial score,
metric terms) are exact too: :func:`exact_sums` accumulates them into integer
cells (:mod:`boostwood._kernels.exact_sum`), all-reduces the cells and rounds
the exact total once.
"""
import random
import threading
from fractions import Fraction

import numpy as np

from ._kernels.exact_sum import E0, SPLIT, accumulate, new_accumulator


#: What a reducer provides (besides the attributes ``n_shards`` and ``shard``).
REDUCER_METHODS = ("allreduce_histograms", "allreduce_sum", "allreduce_max", "allgather")


class LocalReducer:
    """Reducer of a single shard: every collective is the identity."""

    n_shards = 1
    shard = 0

    def allreduce_histograms(self, hist, slots):
        """Sum the histogram slots ``slots`` of ``hist`` across shards, in place."""
        return hist

    def allreduce_sum(self, array):
        """Sum a small array across shards, in place. int64 arrays (fixed-point totals,
        exact-sum accumulators, row counts) add up exactly in any order."""
        return array

    def allreduce_max(self, array):
        """Elementwise maximum of a small float64 array across shards, in place."""
        return array

    def allgather(self, obj):
        """Every shard's ``obj``, in shard order."""
        return [obj]

    def combine(self, obj, fn):
        """``fn`` of every shard's ``obj`` (in shard order), the same on every shard."""
        return fn([obj])


class _ShardReducer:
    """The reducer one shard of a :class:`SimulatedShards` group trains with."""

    def __init__(self, group, shard):
        self._group, self.shard = group, shard
        self.n_shards = group.n_shards

    def allreduce_histograms(self, hist, slots):
        # the slots are handed over as views, and their sums land in buffers of the
        # group: no array is made per call (a slot is 100s of KB)
        views = [hist[s] for s in np.asarray(slots, dtype=np.int64).tolist()]
        totals = self._group.collective(self.shard, views, self._group.sum_into_buffers)
        for view, total in zip(views, totals):
            np.copyto(view, total)
        return hist

    def allreduce_sum(self, array):
        array[...] = self._group.collective(self.shard, np.array(array), _shuffled_sum)
        return array

    def allreduce_max(self, array):
        array[...] = self._group.collective(self.shard, np.array(array),
                                            lambda parts, rng: np.max(np.stack(parts), axis=0))
        return array

    def allgather(self, obj):
        return self._group.collective(self.shard, obj, lambda parts, rng: list(parts))

    def combine(self, obj, fn):
        return self._group.collective(self.shard, obj, lambda parts, rng: fn(list(parts)))


def combine(reducer, obj, fn):
    """``fn(every shard's obj, in shard order)``, the same result on every shard of
    ``reducer`` (None: this process alone). A reducer without ``combine`` gathers every
    part onto every shard and applies ``fn`` there."""
    if reducer is None or reducer.n_shards == 1:
        return fn([obj])
    if callable(getattr(reducer, "combine", None)):
        return reducer.combine(obj, fn)
    return fn(reducer.allgather(obj))


def _shuffled_sum(parts, rng):
    """Sum of ``parts`` added in a random order (exact for integers, so order-free)."""
    order = list(range(len(parts)))
    rng.shuffle(order)
    total = np.array(parts[order[0]])
    for i in order[1:]:
        total += parts[i]
    return total


class SimulatedShards:
    """k data shards trained in k threads of this process, meeting in collectives.

    Parameters
    ----------
    n_shards : int
    seed : int, seeds the order in which contributions are added
    timeout : float, seconds a shard waits for the others at a collective

    Use :meth:`run` with a function ``fn(reducer, shard)``: it is called once per
    shard, each in its own thread, with that shard's reducer.
    """

    def __init__(self, n_shards, seed=0, timeout=600.0):
        if n_shards < 1:
            raise ValueError(f"n_shards must be >= 1, got {n_shards}")
        self.n_shards = int(n_shards)
        self._timeout = timeout
        self._cond = threading.Condition()
        self._slots = [None] * self.n_shards
        self._arrived = 0
        self._generation = 0  # collectives completed
        self._results = [None, None]  # by the parity of the generation
        self._broken = False
        self._rng = random.Random(seed)
        self._buffers = [[], []]  # sum_into_buffers', by the parity of the generation

    def reducer(self, shard):
        return _ShardReducer(self, shard)

    def sum_into_buffers(self, parts, rng):
        """:func:`_shuffled_sum` of each position of the shards' lists of arrays, into
        buffers of the group, one set per parity of the collective (see
        :meth:`collective`: a result is read before its cell is reused). The arrays may
        be views of the shards' own: every shard is still waiting in the collective while
        they are added."""
        if len({len(p) for p in parts}) > 1:  # the shards diverged: never a partial sum
            raise ValueError("shards all-reduced different numbers of histogram slots: "
                             + ", ".join(str(len(p)) for p in parts))
        cell = self._generation % 2
        out = self._buffers[cell]
        order = list(range(len(parts)))
        rng.shuffle(order)
        for j, first in enumerate(parts[order[0]]):
            if j == len(out):
                out.append(np.empty_like(first))
            elif out[j].shape != first.shape or out[j].dtype != first.dtype:
                out[j] = np.empty_like(first)
            np.copyto(out[j], first)
            for i in order[1:]:
                np.add(out[j], parts[i][j], out=out[j])
        return out[:len(parts[0])]

    def collective(self, shard, value, combine):
        """Deposit ``value``; once every shard has, one of them computes
        ``combine(values in shard order, rng)``; every shard returns that result.

        One meeting per call: the last shard to arrive combines and wakes the others.
        Results alternate between two cells, by the parity of the call: a shard can
        start call g + 1 before the others have read the result of call g, but call
        g + 2 cannot complete (and overwrite it) before every shard has arrived at
        g + 1, having read it. Raises ``threading.BrokenBarrierError`` when another
        shard failed (:meth:`run` re-raises the first failure) or after ``timeout``."""
        with self._cond:
            if self._broken:
                raise threading.BrokenBarrierError
            g = self._generation
            self._slots[shard] = value
            self._arrived += 1
            if self._arrived == self.n_shards:
                try:
                    self._results[g % 2] = combine(list(self._slots), self._rng)
                except BaseException:
                    self._break()
                    raise
                self._arrived = 0
                self._generation = g + 1
                self._cond.notify_all()
            elif not self._cond.wait_for(lambda: self._generation != g or self._broken,
                                         self._timeout) or self._generation == g:
                self._break()
                raise threading.BrokenBarrierError
            return self._results[g % 2]

    def _break(self):
        """Wake every waiting shard with ``BrokenBarrierError`` (the caller holds the lock)."""
        self._broken = True
        self._cond.notify_all()

    def run(self, fn):
        """``[fn(reducer(s), s) for each shard s]``, the shards in parallel threads.

        Kernels run concurrently from several threads, which numba's OpenMP and TBB
        threading layers support; under the workqueue layer this raises instead.
        """
        if not threadsafe_numba():
            raise RuntimeError("simulated shards need numba's OpenMP or TBB threading layer")
        results = [None] * self.n_shards
        errors = []

        def work(s):
            try:
                results[s] = fn(self.reducer(s), s)
            except threading.BrokenBarrierError:
                pass  # another shard failed first
            except BaseException as exc:  # noqa: BLE001 - re-raised in the caller
                errors.append(exc)
                with self._cond:
                    self._break()

        threads = [threading.Thread(target=work, args=(s,)) for s in range(self.n_shards)]
        for t in threads:
            t.start()
        for t in threads:
            t.join()
        if errors:
            raise errors[0]
        return results


def threadsafe_numba():
    """Whether numba's threading layer may be entered from several threads at once (its
    OpenMP and TBB layers may; the fallback workqueue layer may not)."""
    import numba
    try:
        return numba.threading_layer() in ("omp", "tbb")
    except ValueError:  # not chosen yet: run one tiny parallel kernel to choose it
        from ._kernels.fixed import max_abs_gh
        max_abs_gh(np.zeros((1, 2)), np.empty(2))
        return numba.threading_layer() in ("omp", "tbb")


def exact_value(acc):
    """The float64 nearest to the exact sum held by one accumulator (2, N_CELLS)."""
    total = 0
    for part, shift in ((0, SPLIT), (1, 0)):
        for cell in np.nonzero(acc[part])[0]:
            total += int(acc[part, cell]) << (int(cell) + shift)
    return float(Fraction(total) * Fraction(2) ** E0)


def exact_sums(values, reducer=None):
    """Exact column sums of ``values`` (n_rows, n_sums), summed across the reducer's
    shards, each rounded once to float64."""
    values = np.ascontiguousarray(values, dtype=np.float64)
    if values.ndim == 1:
        values = values[:, None]
    acc, flags = _accumulated(values, reducer)
    if flags.any():
        raise ValueError("cannot sum NaN or infinite values exactly")
    return _rounded(acc)


def exact_sums_of_finite(values, reducer=None):
    """Exact column sums of the finite entries of ``values`` (n_rows, n_sums), C-ordered
    float64, across the reducer's shards, each rounded once to float64; and flags
    (3,): whether any shard held a NaN, a +inf, a -inf (one pass over the values)."""
    acc, flags = _accumulated(values, reducer)
    return _rounded(acc), flags


def _accumulated(values, reducer):
    """The accumulators of the finite entries' column sums and the non-finite flags,
    both across shards (every shard takes part in both collectives)."""
    acc = new_accumulator(values.shape[1])
    flags = np.zeros(3)
    accumulate(values, acc, flags)
    if reducer is not None:
        reducer.allreduce_max(flags)
        reducer.allreduce_sum(acc)
    return acc, flags


def _rounded(acc):
    try:
        return np.array([exact_value(a) for a in acc])
    except OverflowError:
        raise ValueError("a sum of these values overflows float64 (values near 1e308: "
                         "rescale them)") from None
