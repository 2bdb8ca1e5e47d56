"""Atomic counters: how the threads of one parallel loop share out work and wait for each other without
leaving the loop.

A parallel loop (``prange``) costs a launch: the calling thread hands the iterations out, wakes the pool
and waits for the last one to finish, some 5-8 µs on this project's two-core machine even while the
other thread is still spinning from the loop before. The contact solver needs its colours solved one
after another, and used to make one loop per colour: ten colours and eighteen passes a step made 180
launches. With these counters one loop runs a whole pass (``contact_solver.solve_colours``): the threads
take the next block of a colour by adding one to the colour's claim counter (whoever gets a number
solves that block), add what they solved to its done counter, and wait for that to reach the colour's
block count before they start on the next colour (Box2D v3's solver shares out its stages the same
way).

Why this cannot hang: a thread only waits for blocks that another thread has claimed, and a thread
that has claimed a block is running it. If the pool runs both of a loop's iterations one after the
other on one thread, the first claims and solves every block and the second finds nothing left to
claim and nothing to wait for.

The orders are LLVM's: ``add`` is sequentially consistent (so the writes of a block come before the
count that says it is done, for any thread that reads that count), ``load`` acquires (so what a thread
reads after seeing the count comes after the writes the count stands for). Under ``NUMBA_DISABLE_JIT``
(plain Python, where the loops run one iteration after another) they are ordinary reads and writes.
"""

from __future__ import annotations

import platform

import numpy as np
from llvmlite import ir
from numba import config, types
from numba.core import cgutils
from numba.extending import intrinsic

from .jit import helper


def _element_pointer(context, builder, array_type, array, index):
    """The address of ``array[index]`` (a 1-d array, an index already known to be in range)."""
    ary = context.make_array(array_type)(context, builder, array)
    return cgutils.get_item_pointer(context, builder, array_type, ary, [index], wraparound=False)


@intrinsic
def _atomic_add(typingctx, counters, index, value):
    """LLVM's ``atomicrmw add`` (sequentially consistent) on ``counters[index]``, an int64 array."""
    if not (isinstance(counters, types.Array) and counters.dtype == types.int64 and counters.ndim == 1):
        return None

    def codegen(context, builder, signature, args):
        ptr = _element_pointer(context, builder, signature.args[0], args[0], args[1])
        value = context.cast(builder, args[2], signature.args[2], types.int64)
        return builder.atomic_rmw("add", ptr, value, "seq_cst")

    return types.int64(counters, index, value), codegen


@intrinsic
def _atomic_load(typingctx, counters, index):
    """LLVM's ``load atomic`` (acquire) of ``counters[index]``, an int64 array."""
    if not (isinstance(counters, types.Array) and counters.dtype == types.int64 and counters.ndim == 1):
        return None

    def codegen(context, builder, signature, args):
        ptr = _element_pointer(context, builder, signature.args[0], args[0], args[1])
        return builder.load_atomic(ptr, "acquire", 8)

    return types.int64(counters, index), codegen


_PAUSE = {"x86_64": ("llvm.x86.sse2.pause", []), "AMD64": ("llvm.x86.sse2.pause", []),
          "arm64": ("llvm.aarch64.hint", [1]), "aarch64": ("llvm.aarch64.hint", [1])}.get(platform.machine())


@intrinsic
def _spin_pause(typingctx):
    """The processor's hint that it is in a spin-wait loop (x86 ``pause``, ARM ``yield``; nothing
    elsewhere): the loop then takes less from a thread sharing the core and less power."""
    def codegen(context, builder, signature, args):
        if _PAUSE is not None:
            name, operands = _PAUSE
            fnty = ir.FunctionType(ir.VoidType(), [ir.IntType(32)] * len(operands))
            fn = cgutils.get_or_insert_function(builder.module, fnty, name)
            builder.call(fn, [ir.Constant(ir.IntType(32), v) for v in operands])
        return context.get_dummy_value()

    return types.none(), codegen


def _plain_add(counters, index, value):
    """``_atomic_add`` in plain Python: the loops run one iteration after another there."""
    old = counters[index]
    counters[index] = old + value
    return old


def _plain_load(counters, index):
    """``_atomic_load`` in plain Python."""
    return counters[index]


def _plain_pause():
    """``_spin_pause`` in plain Python: nothing."""


if config.DISABLE_JIT:
    atomic_add = _plain_add
    atomic_load = _plain_load
    spin_pause = _plain_pause
else:
    atomic_add = _atomic_add
    atomic_load = _atomic_load
    spin_pause = _spin_pause


@helper
def new_counters(n):
    """``n`` counters, all zero, for the threads of a parallel loop to share. A function of its own, not
    ``np.zeros`` in the parallel kernel: there numba makes ``np.zeros`` a parallel loop of its own (a
    launch on the threads for a few numbers), and it once fused such a loop with the ``prange`` after it
    into a loop of one iteration (in ``substeps.begin_substeps``: its second part never ran, and the
    states on one and two threads differed). A function compiled apart is one call to it."""
    return np.zeros(n, np.int64)
