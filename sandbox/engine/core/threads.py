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
from collections.abc import Callable
from concurrent.futures import ThreadPoolExecutor

if "OMP_WAIT_POLICY" not in os.environ and "GOMP_SPINCOUNT" not in os.environ:
    # read when the pool starts: before numba's first parallel loop
    os.environ["OMP_WAIT_POLICY"] = "passive"
    os.environ["GOMP_SPINCOUNT"] = "2000"

import numba  # noqa: E402


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


_pool: ThreadPoolExecutor | None = None


def run_on_threads(task: Callable[[int, int], object], n: int) -> None:
    """Run ``task(i, n)`` for i = 0, …, n − 1 at the same time: i = 0 on the calling thread, the others
    on a pool of worker threads (``available_threads() − 1`` of them, started on first use). Returns when
    every one has finished, raising the first error. Only worth it for a ``task`` that spends its time in
    a kernel that releases the GIL (``nogil=True``); each must write only its own part of the output."""
    global _pool
    if n < 1:
        raise ValueError(f"n must be at least 1, got {n}")
    if _pool is None:
        _pool = ThreadPoolExecutor(max_workers=max(available_threads() - 1, 1),
                                   thread_name_prefix="sandbox-kernels")
    futures = [_pool.submit(task, i, n) for i in range(1, n)]
    try:
        task(0, n)
    finally:
        # wait for every share, also when this thread's failed: none may still be writing afterwards
        errors = [f.exception() for f in futures]
    for error in errors:
        if error is not None:
            raise error
