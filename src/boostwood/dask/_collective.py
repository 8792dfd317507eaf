"""The reducer of a training run on Dask: the shards' collectives meet at rank 0.

Every participating worker runs one long task, the ordinary ``train()`` with a
:class:`DaskReducer`. A collective is one message per rank to rank 0's worker, carried by
``distributed``'s own comms (a worker handler, as Dask's P2P shuffle carries its
messages): rank 0's task deposits its own part and waits for the others; each other
rank sends its part with an RPC whose answer is the combined result (or, within half the
timeout, a status that says to ask again). Rank 0 combines the
parts *in rank order* (sums of int64 fixed-point histograms and exact accumulators are
exact in any order anyway), so every rank gets the same numbers and the ranks step in
lockstep through the same training.

Messages carry the run's id and the collective's sequence number, so a late message of
another run never mixes in. Every wait is bounded by ``timeout`` seconds: a rank that
died or hangs makes the others fail with :class:`CollectiveTimeout` naming it, never
hang. The one longer wait is rank 0's work on a ``combine`` collective's parts, once they
are all in: the other ranks ask again every half timeout (each answer within it) and wait
up to ``COMBINE_TIMEOUTS`` timeouts for it.
"""
import asyncio
import collections
import threading
import time

import numpy as np

#: The worker handler that receives the other ranks' parts at rank 0.
HANDLER = "boostwood_collective"

#: Runs whose rank 0 lives in this process: run id -> :class:`_Hub`.
_HUBS = {}
_HUBS_LOCK = threading.Lock()
#: Runs of this process's rank 0 that ended (a late message is answered at once).
_ENDED = collections.deque(maxlen=256)


def _unwrap(value):
    """A message's payload: ``to_serialize`` wraps it, which in-process comms (workers
    of one process) pass on as it is, and the other comms unpack."""
    from distributed.protocol.serialize import Serialize
    return value.data if isinstance(value, Serialize) else value


#: How many timeouts rank 0 may spend combining one collective's parts (``combine``'s
#: function) before the other ranks give up on it: long work is not a lost rank, but a
#: hang must still end.
COMBINE_TIMEOUTS = 10


class CollectiveTimeout(RuntimeError):
    """A collective of a Dask training run waited longer than its timeout."""


def _combine(kind, parts):
    if callable(kind):  # ``combine``'s function (rank 0's own: it never travels)
        return kind(parts)
    if kind == "sum":
        out = np.array(parts[0], copy=True)
        for p in parts[1:]:
            out += p
        return out
    if kind == "max":
        out = np.array(parts[0], copy=True)
        for p in parts[1:]:
            np.maximum(out, p, out=out)
        return out
    return list(parts)  # "gather"


class _Hub:
    """Rank 0's meeting point of one run: the parts of each collective, the results."""

    def __init__(self, n_ranks, timeout):
        self.n, self.timeout = n_ranks, timeout
        self.cond = threading.Condition()
        self.parts = {}  # seq -> [part or None] * n
        self.results = {}  # seq -> (result, readers left)
        self.waiters = {}  # seq -> [(event loop, asyncio.Event)] of the handlers waiting
        self.failed = None
        self.combining = None  # the collective whose parts rank 0 is combining now

    def deposit(self, seq, rank, part):
        with self.cond:
            self.parts.setdefault(seq, [None] * self.n)[rank] = (part,)
            self.cond.notify_all()

    def meet(self, seq, kind, part):
        """Rank 0: deposit its part, wait for every rank's, combine, publish."""
        self.deposit(seq, 0, part)
        deadline = time.monotonic() + self.timeout
        with self.cond:
            while True:
                missing = [r for r, p in enumerate(self.parts[seq]) if p is None]
                if not missing:
                    break
                left = deadline - time.monotonic()
                if self.failed or left <= 0:
                    self.failed = self.failed or f"rank(s) {missing} did not arrive"
                    self.cond.notify_all()
                    raise CollectiveTimeout(
                        f"collective {seq} of a Dask training run: {self.failed} within "
                        f"{self.timeout:g} s (a worker died, was restarted or is stuck)")
                self.cond.wait(left)
            parts = [p[0] for p in self.parts.pop(seq)]
            self.combining = seq  # (a long combine is work, not a missing rank)
        try:
            result = _combine(kind, parts)  # (outside the lock: the handlers may deposit)
        finally:
            self.combining = None
        with self.cond:
            self.results[seq] = [result, self.n - 1]
            self.cond.notify_all()
            self._wake(self.waiters.pop(seq, []))
        return result

    @staticmethod
    def _wake(waiters):
        for loop, event in waiters:
            loop.call_soon_threadsafe(event.set)

    def wait_on(self, seq, loop, event):
        """Set ``event`` (on ``loop``) when ``seq``'s result is published or the run
        fails; False where that has happened already."""
        with self.cond:
            if self.failed or seq in self.results:
                return False
            self.waiters.setdefault(seq, []).append((loop, event))
            return True

    def abort(self, reason):
        """A rank failed: every rank waiting, or coming, fails too."""
        with self.cond:
            self.failed = self.failed or reason
            self.cond.notify_all()
            for waiters in self.waiters.values():
                self._wake(waiters)
            self.waiters.clear()

    def result_for(self, seq):
        """Another rank's answer, once rank 0 combined ``seq`` (None: not yet)."""
        with self.cond:
            if self.failed:
                raise CollectiveTimeout(f"collective {seq}: {self.failed}")
            cell = self.results.get(seq)
            if cell is None:
                return None
            cell[1] -= 1
            if cell[1] == 0:
                del self.results[seq]
            return cell


async def collective_handler(run_id=None, seq=None, rank=None, part=None, timeout=60.0,
                             poll=False):
    """Rank 0's worker: take rank ``rank``'s part of collective ``seq`` (none with
    ``poll``: it was taken before) and answer ``(status, value)`` within half of
    ``timeout``: ("result", the combined result) once rank 0 has combined every part;
    else "absent" (rank 0's task has not started: send the part again), "waiting" (parts
    are missing) or "combining" (rank 0 works on them): ask again. The sending rank owns
    the deadline (:meth:`DaskReducer._send`)."""
    from distributed.protocol import to_serialize
    half = float(timeout) / 2
    start = time.monotonic()
    while (hub := _HUBS.get(run_id)) is None:  # rank 0's task may start a little later
        if run_id in _ENDED:
            raise CollectiveTimeout(f"the Dask training run {run_id!r} has ended at rank 0")
        if time.monotonic() - start > half:
            return to_serialize(("absent", None))
        await asyncio.sleep(0.001)
    if seq < 0:  # rank ``rank`` failed: ``part`` says why
        hub.abort(f"rank {rank} failed ({_unwrap(part)})")
        return to_serialize(("result", None))
    if not poll:
        hub.deposit(seq, rank, _unwrap(part))
    event = asyncio.Event()  # set by rank 0's thread once it has combined every part
    if hub.wait_on(seq, asyncio.get_running_loop(), event):
        try:
            await asyncio.wait_for(event.wait(), max(half - (time.monotonic() - start), 0.01))
        except asyncio.TimeoutError:
            return to_serialize(("combining" if hub.combining == seq else "waiting", None))
    cell = hub.result_for(seq)  # (raises if the run failed)
    if cell is None:
        raise CollectiveTimeout(f"collective {seq}: woken without a result")
    return to_serialize(("result", cell[0]))


class DaskReducer:
    """The collectives of :mod:`boostwood._comm` between the ranks of one Dask run.

    Parameters
    ----------
    run_id : str, the run's id (every rank the same)
    rank, n_ranks : int, this task's rank and the number of ranks
    hub : str, the address of rank 0's worker
    timeout : float, seconds any collective may wait
    """

    def __init__(self, run_id, rank, n_ranks, hub, timeout):
        from distributed import get_worker
        self.run_id, self.shard, self.n_shards = run_id, int(rank), int(n_ranks)
        self.hub_address, self.timeout = hub, float(timeout)
        self._seq = 0
        self._worker = get_worker()
        if self.shard == 0:
            with _HUBS_LOCK:
                _HUBS[run_id] = _Hub(self.n_shards, self.timeout)

    def abort(self, exc):
        """This rank failed with ``exc``: the others stop waiting for it (best effort)."""
        reason = f"{type(exc).__name__}: {exc}"[:300]
        if self.shard == 0:
            hub = _HUBS.get(self.run_id)
            if hub is not None:
                hub.abort(f"rank 0 failed ({reason})")
            return
        if isinstance(exc, CollectiveTimeout):
            return  # (rank 0 knows, or is gone)
        try:
            self._seq = -1  # (a negative sequence number: an abort)
            self._send("abort", reason)
        except Exception:
            pass

    def close(self):
        """Forget the run (rank 0)."""
        if self.shard == 0:
            with _HUBS_LOCK:
                _HUBS.pop(self.run_id, None)
                _ENDED.append(self.run_id)

    def _meet(self, kind, part):
        self._seq += 1
        if self.n_shards == 1:
            return _combine(kind, [part])
        if self.shard == 0:
            return _HUBS[self.run_id].meet(self._seq, kind, part)
        return self._send(kind, part)

    def _send(self, kind, part):
        from distributed.protocol import to_serialize
        from distributed.utils import sync
        worker = self._worker

        async def call(part, poll):
            return await asyncio.wait_for(
                worker.rpc(self.hub_address).boostwood_collective(
                    run_id=self.run_id, seq=self._seq, rank=self.shard,
                    part=to_serialize(part), timeout=self.timeout, poll=poll), self.timeout)
        now = time.monotonic()
        deadline, combine_end, poll = now + self.timeout, None, False
        while True:
            try:
                answer = _unwrap(sync(worker.loop, call, None if poll else part, poll))
            except (asyncio.TimeoutError, OSError) as exc:
                raise CollectiveTimeout(
                    f"collective {self._seq} of a Dask training run: rank 0 at "
                    f"{self.hub_address} did not answer within {self.timeout:g} s "
                    f"({type(exc).__name__}: a worker died, was restarted or is stuck)") from None
            if not (isinstance(answer, tuple) and len(answer) == 2):  # (a worker without
                if self._seq < 0:  # the handler answers None)
                    return None
                raise CollectiveTimeout(
                    f"collective {self._seq}: the worker at {self.hub_address} does not run "
                    "rank 0 of this Dask training run (was it restarted?)")
            status, value = answer
            if status == "result":
                return value
            now = time.monotonic()
            if status == "combining":  # every part is in: rank 0's work, not a lost rank
                combine_end = combine_end or now + COMBINE_TIMEOUTS * self.timeout
                deadline = now + self.timeout
                if now > combine_end:
                    raise CollectiveTimeout(
                        f"collective {self._seq} of a Dask training run: rank 0 combined "
                        f"the parts for over {COMBINE_TIMEOUTS} x {self.timeout:g} s")
            elif now > deadline:
                raise CollectiveTimeout(
                    f"collective {self._seq} of a Dask training run: "
                    + ("rank 0 did not start" if status == "absent" else
                       "the other ranks' parts did not arrive")
                    + f" within {self.timeout:g} s (a worker died, was restarted or is stuck)")
            poll = status != "absent"  # (absent: the part was not taken; send it again)

    def allreduce_histograms(self, hist, slots):
        slots = np.asarray(slots, dtype=np.int64)
        total = self._meet("sum", np.ascontiguousarray(hist[slots]))
        hist[slots] = total
        return hist

    def allreduce_sum(self, array):
        total = self._meet("sum", np.ascontiguousarray(array))
        array[...] = total
        return array

    def allreduce_max(self, array):
        top = self._meet("max", np.ascontiguousarray(array))
        array[...] = top
        return array

    def allgather(self, obj):
        return self._meet("gather", obj)

    def combine(self, obj, fn):
        """``fn`` of every rank's ``obj``, computed at rank 0 only, where the parts
        arrive: the other ranks receive the result, never the parts."""
        return self._meet(fn, obj)
