"""How many threads the kernels' parallel loops (``prange``) run on, and a pool of threads for the kernels
that Python shares out itself (``run_on_threads``).

Numba starts a pool of ``NUMBA_NUM_THREADS`` threads (the machine's cores unless that variable says
otherwise) and runs a ``prange`` loop on the first ``numba.get_num_threads()`` of them; that count is
set per calling thread, so the world sets it at the start of every step. The results do not depend on
it: every parallel loop writes only its own iteration's slots (see the kernels' docstrings).

Numba's OpenMP pool is told to let its idle threads spin for a short while only, some 20 µs
(``OMP_WAIT_POLICY=passive`` with ``GOMP_SPINCOUNT=2000``), unless the environment sets either. By
default GNU OpenMP's threads spin some 3 ms after each parallel loop; on a machine whose cores are busy
with other programs a spinning thread uses up its time slice and the next loop waits for it to be
scheduled again: on this project's 2-core machine under a load of 9, an empty parallel loop took
0.06-5 ms with spinning, 9-30 µs with sleeping threads (and a step makes a few hundred of them). A
spinning thread also slows the calling thread's serial work where the two cores share one physical
core: with 3 ms of spinning, the S1 pile of 1000 stepped 0.68x as fast on two threads as on one, its
serial stages 1.5-2.5x slower. Sleeping at once (no spin) made it 0.93-0.95x: each of the sub-steps'
some 180 colour loops then waits for a thread to wake. A spin of 20 µs bridges the short gaps between
one colour's loop and the next and bounds the damage of the long ones: 1.10x on the pile of 1000, and
17.3 ms a step on two threads for the pile of 4096 against 18.1-18.7 ms sleeping (``python -m
bench.threads``, the settings in turn in one sitting).
"""

from __future__ import annotations

import os
import threading
import time
from collections.abc import Callable

if "OMP_WAIT_POLICY" not in os.environ and "GOMP_SPINCOUNT" not in os.environ:
    # read when the pool starts: before numba's first parallel loop
    os.environ["OMP_WAIT_POLICY"] = "passive"
    os.environ["GOMP_SPINCOUNT"] = "2000"

import numba  # noqa: E402
import numpy as np  # noqa: E402

from .atomics import atomic_add, atomic_load, spin_pause  # noqa: E402
from .jit import kernel  # noqa: E402


def available_threads() -> int:
    """The most threads a parallel loop can use: the size of numba's thread pool."""
    return int(numba.config.NUMBA_NUM_THREADS)


_read_thread_count: Callable[[], int] | None = None


def threads_in_use() -> int:
    """How many threads the calling thread's next parallel loop runs on (``use_threads``).

    ``numba.get_num_threads`` takes a lock to check that the threading layer has started (1 µs, and a step
    asks five times); once it has, numba's own reader of the per-thread count, which that function
    calls after the check, is read directly where this numba has it."""
    global _read_thread_count
    if _read_thread_count is None:
        numba.get_num_threads()  # starts the threading layer
        from numba.np.ufunc import parallel

        _read_thread_count = getattr(parallel, "_get_num_threads", None) or numba.get_num_threads
    return int(_read_thread_count())


PARALLEL_BODIES = 2048
"""The fewest bodies for which a step runs its parallel loops on the threads asked for (``step_threads``);
a smaller world steps on one. Measured on the two-core development machine (``python -m bench.threads``,
fifteenth session, the settled piles): the S1 pile of 4096 stepped 1.41x faster on two threads than on
one, but the pile of 1000 0.86x, every stage slower: there each parallel loop has too little to do for
what it costs to move the bodies' and contacts' cache lines from one core to the other (the serial
integration of the positions, which touches every body once a sub-step, took 2.4 times as long after a
two-thread solve as after a one-thread one). The results are the same either way (see the module)."""


def step_threads(requested: int, bodies: int) -> int:
    """The threads a step of a world of ``bodies`` bodies runs its parallel loops on, ``requested``
    (``World.threads``) at most: all of them from ``PARALLEL_BODIES`` bodies up, else 1. ``bodies`` is the
    world's rows (``World.step`` passes ``data.n``, removed bodies' rows included): what the step's loops
    run over."""
    return requested if bodies >= PARALLEL_BODIES else 1


def use_threads(n: int) -> None:
    """Run the parallel loops that the calling thread starts next on ``n`` threads
    (1 ≤ n ≤ ``available_threads()``, checked by the caller)."""
    if threads_in_use() != n:
        numba.set_num_threads(n)


def share_out(count: int, threshold: int, shares: int) -> tuple[int, int]:
    """How ``run_on_threads`` shares out ``count`` items cut into ``shares`` fixed shares: (threads,
    shares), the threads in use (at most ``shares``) taking the ``shares`` shares; or (1, 1), one share on
    the calling thread, below ``threshold`` items (handing out the shares would cost more than it saves)
    or with one thread in use (one share does the work in one loop). The shares, not the threads, cut the
    work, so the result does not depend on the thread count."""
    threads = min(threads_in_use(), shares) if count >= threshold else 1
    return (threads, shares) if threads > 1 else (1, 1)


HANDOFF_SPINS = 32_000
"""How many times a pool worker checks for its next share, after one that another follows soon
(``run_on_threads(..., more=True)``), before it goes to sleep; and the calling thread for the workers'
ends, before it checks every 50 µs instead. Some 0.8 ms on the development machine (a check and the
processor's spin hint, ``atomics.spin_pause``, some 25 ns there): longer than the serial stages between one
hand-off of a step and the next (0.2-0.7 ms on S3 and the S1 pile of 4096)."""
GRACE_SPINS = 1000
"""How many times a pool worker checks for its next share after the last one of a run of hand-offs,
before it goes to sleep (some 25 µs): the calling thread takes the GIL back first (see ``_Pool``)."""
if numba.config.DISABLE_JIT:  # plain Python (a debugger, coverage): a spin would hold the GIL it waits on
    HANDOFF_SPINS = GRACE_SPINS = 1


@kernel(same_types=True)
def _await_share(signals, w, taken, report, spins):
    """Worker ``w`` of the pool: count its last share done (with ``report``), then wait, spinning, until a
    share after the ``taken`` it has taken is posted (``signals[2w]``, counted by the calling thread), up
    to ``spins`` checks; returns whether one was. Both with the GIL released."""
    if report:
        atomic_add(signals, 2 * w + 1, 1)
    for _ in range(spins):
        if atomic_load(signals, 2 * w) > taken:
            return True
        spin_pause()
    return False


@kernel(same_types=True)
def _await_workers(signals, workers, spins):
    """The calling thread: wait, spinning with the GIL released, until workers 0 … ``workers`` − 1 of the
    pool have each done every share posted to them, up to ``spins`` checks; returns whether they have."""
    for _ in range(spins):
        w = 0
        while w < workers and atomic_load(signals, 2 * w + 1) >= atomic_load(signals, 2 * w):
            w += 1
        if w == workers:
            return True
        spin_pause()
    return False


class _Pool:
    """The worker threads of ``run_on_threads``. A worker waits for its next share, and the calling thread
    for the workers' ends, spinning in a kernel (``_await_share``, ``_await_workers``), not sleeping on a
    lock; a worker reports a share done from inside that kernel too.

    What it buys: a thread asleep on a lock wakes some 40 µs after it is signalled on the development
    machine (a virtual machine whose idle processors halt at once), and Python's executor of threads
    put that wait at both ends of every hand-off, four a step. Here the calling thread spins to the
    workers' ends, GIL released, and a worker counts its share done only once it has released the GIL
    itself: neither then waits for the GIL, which Python hands over by waking a sleeping thread. After a
    hand-off that another follows soon (``more``), a worker keeps spinning for ``HANDOFF_SPINS`` checks,
    so the next share finds it awake; after the last one it sleeps. Measured on S3 and the S1 pile of
    4096 on two threads: from the calling thread's share to the return, 5-20 µs where it was 22-48 µs,
    and from the call to the calling thread's share 5-7 µs where it was 16-40.

    One thread hands out shares at a time; a call from another thread meanwhile (a lesson's check,
    stepping its own world) runs its shares one after another itself."""

    def __init__(self, workers: int) -> None:
        self.workers = workers
        self.signals = np.zeros(2 * workers, np.int64)  # per worker: shares posted, shares reported done
        self.tasks: list = [None] * workers
        self.errors: list = [None] * workers
        self.busy = threading.Lock()
        self.wake = threading.Condition()
        for w in range(workers):
            threading.Thread(target=self._work, args=(w,), name=f"sandbox-kernels-{w}", daemon=True).start()

    def _work(self, w: int) -> None:
        """Worker ``w``'s loop: wait for a share, run it, report it."""
        taken = 0
        report = False
        spins = 0
        while True:
            if not _await_share(self.signals, w, taken, report, spins):
                with self.wake:
                    while self.signals[2 * w] <= taken:
                        self.wake.wait()
            taken += 1
            task, n, more = self.tasks[w]
            try:
                for i in range(w + 1, n, self.workers):
                    task(i, n)
            except BaseException as error:  # noqa: BLE001 - raised by the calling thread
                self.errors[w] = error
            report = True
            spins = HANDOFF_SPINS if more else GRACE_SPINS

    def run(self, task: Callable[[int, int], object], n: int, more: bool) -> None:
        """``run_on_threads``."""
        if not self.busy.acquire(blocking=False):
            for i in range(n):  # another thread is handing out shares
                task(i, n)
            return
        try:
            used = min(self.workers, n - 1)
            signals = self.signals
            for w in range(used):
                self.tasks[w] = (task, n, more)
                self.errors[w] = None
                signals[2 * w] += 1
            if used:
                with self.wake:
                    self.wake.notify_all()
            try:
                task(0, n)
            finally:
                # wait for every share, also when this thread's failed: none may still be writing
                while used and not _await_workers(signals, used, HANDOFF_SPINS):
                    time.sleep(50e-6)
            for error in self.errors[:used]:
                if error is not None:
                    raise error
        finally:
            self.busy.release()


_pool: _Pool | None = None
_pool_lock = threading.Lock()  # two threads' first calls start one pool


def _forget_pool() -> None:
    """In a child process made by ``fork``: the pool's threads were not copied, so start a new pool."""
    global _pool
    _pool = None


if hasattr(os, "register_at_fork"):
    os.register_at_fork(after_in_child=_forget_pool)


def run_on_threads(task: Callable[[int, int], object], n: int, more: bool = False) -> None:
    """Run ``task(i, n)`` for i = 0, …, n − 1 at the same time: i = 0 on the calling thread, the others
    on a pool of worker threads (``available_threads() − 1`` of them, started on first use; with more
    shares than workers, worker w runs shares w + 1, w + 1 + workers, …). Returns when every one has
    finished, raising the calling thread's error if its share failed, else the first worker's. Only
    worth it for a ``task`` that spends its time in a kernel (kernels release the GIL, ``jit.kernel``);
    each must write only its own part of the output. ``more``: another call follows soon (a later stage
    of the step), so the workers wait for it spinning rather than asleep (see ``_Pool``)."""
    global _pool
    if n < 1:
        raise ValueError(f"n must be at least 1, got {n}")
    if _pool is None:
        with _pool_lock:
            if _pool is None:
                _pool = _Pool(max(available_threads() - 1, 1))
    _pool.run(task, n, more)
