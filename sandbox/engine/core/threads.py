"""How many threads the kernels' parallel loops (``prange``) run on.

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

os.environ.setdefault("OMP_WAIT_POLICY", "passive")  # read when the pool starts: before numba's first loop

import numba  # noqa: E402


def available_threads() -> int:
    """The most threads a parallel loop can use: the size of numba's thread pool."""
    return int(numba.config.NUMBA_NUM_THREADS)


def use_threads(n: int) -> None:
    """Run the parallel loops that the calling thread starts next on ``n`` threads
    (1 ≤ n ≤ ``available_threads()``, checked by the caller)."""
    if numba.get_num_threads() != n:
        numba.set_num_threads(n)
