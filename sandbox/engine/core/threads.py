"""How many threads the kernels' parallel loops (``prange``) run on.

Numba starts a pool of ``NUMBA_NUM_THREADS`` threads (the machine's cores unless that variable says
otherwise) and runs a ``prange`` loop on the first ``numba.get_num_threads()`` of them; that count is
set per calling thread, so the world sets it at the start of every step. The results do not depend on
it: every parallel loop writes only its own iteration's slots (see the kernels' docstrings).
"""

from __future__ import annotations

import numba


def available_threads() -> int:
    """The most threads a parallel loop can use: the size of numba's thread pool."""
    return int(numba.config.NUMBA_NUM_THREADS)


def use_threads(n: int) -> None:
    """Run the parallel loops that the calling thread starts next on ``n`` threads
    (1 ≤ n ≤ ``available_threads()``, checked by the caller)."""
    if numba.get_num_threads() != n:
        numba.set_num_threads(n)
