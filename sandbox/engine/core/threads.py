"""How many threads the kernels' parallel loops (``prange``) run on, and a pool of threads for the kernels
that Python shares out itself (``run_on_threads``).

Numba starts a pool of ``NUMBA_NUM_THREADS`` threads (the machine's cores unless that variable says
otherwise) and runs a ``prange`` loop on the first ``numba.get_num_threads()`` of them; that count is
set per calling thread, so the world sets it at the start of every step. The results do not depend on
it: every parallel loop writes only its own iteration's slots (see the kernels' docstrings).

Numba's OpenMP pool is told to let its idle threads sleep (``OMP_WAIT_POLICY=passive``) unless the
environment says otherwise. By default GNU OpenMP's threads spin a while after each parallel loop; on a
machine whose cores are busy with other programs a spinning thread uses up its time slice and the next
loop waits for it to be scheduled again: on this project's 2-core machine under a load of 9, an empty
parallel loop took 0.06-5 ms with spinning, 9-30 µs with sleeping threads (and a step makes a few hundred
of them). On an idle machine a spinning thread answers faster (about 2 µs against 5-10 µs).
"""

from __future__ import annotations

import os
from collections.abc import Callable
from concurrent.futures import ThreadPoolExecutor

os.environ.setdefault("OMP_WAIT_POLICY", "passive")  # read when the pool starts: before numba's first loop

import numba  # noqa: E402


def available_threads() -> int:
    """The most threads a parallel loop can use: the size of numba's thread pool."""
    return int(numba.config.NUMBA_NUM_THREADS)


def threads_in_use() -> int:
    """How many threads the calling thread's next parallel loop runs on (``use_threads``)."""
    return int(numba.get_num_threads())


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
