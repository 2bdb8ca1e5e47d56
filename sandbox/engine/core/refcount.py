"""Borrowed and stack arrays: arrays that numba's reference counting and allocator pass over.

numba counts the references to every array it hands to a compiled function that it did not inline: an
atomic increment of the array's owner (its *meminfo*) before the call and a decrement after, each a call
into numba's runtime. For a call made once per contact pair with four scratch arrays, that is eight
atomic operations around a pair test that itself costs less: the sphere pairs of the S1 pile of 4096
spent some 160 ns each in the narrow phase, most of it there. A view with no owner (a null meminfo)
reduces each of those operations to the test of a null pointer, as ``narrow_trace.step_buffer`` does
for its empty trace buffer.

A borrowed view does not keep its memory alive: the caller keeps the array it was made from for as
long as the view is used. For an array the kernel allocates itself that takes ``keep_alive`` after the
last use of the view, because numba frees a local array right after the last statement that names it,
not at the end of the function: a scratch array borrowed and then never named again was freed at once,
the pair tests went on writing into the freed memory, and the next allocations that reused it (inside
the loop, or numba's and LLVM's own after it) were corrupted. That was the crash ("malloc(): smallbin
double linked list corrupted") that struck about one app launch in twenty-five, inside llvmlite, long
after the narrow phase had done the damage (eighteenth session; ``tests/test_jit.py`` and
``tests/test_narrowphase.py`` test it).

A small scratch array that a function needs for one call (the polygons of the box–box clipping) is best
not allocated at all: ``stack_matrix`` gives one on the function's stack, with no owner either, in place
of a call to numba's allocator and one to free it again for every pair of boxes.
"""

from __future__ import annotations

import numpy as np
from numba import config, types
from numba.core import cgutils
from numba.extending import intrinsic
from numba.np.arrayobj import populate_array

from .jit import helper


def _borrowable(typ) -> bool:
    """Whether ``_borrow`` takes a value of type ``typ``: an array, or a tuple or record (named tuple) of
    arrays and other borrowable or plain values."""
    if isinstance(typ, types.Array):
        return True
    if isinstance(typ, types.BaseTuple):
        return all(_borrowable(t) or not isinstance(t, types.Buffer) for t in typ.types)
    return False


def _borrowed(context, builder, typ, value):
    """The LLVM value of ``value`` (of type ``typ``) with every array in it made ownerless."""
    if isinstance(typ, types.Array):
        source = context.make_array(typ)(context, builder, value=value)
        view = context.make_array(typ)(context, builder)
        populate_array(view, data=source.data, shape=source.shape, strides=source.strides,
                       itemsize=source.itemsize, meminfo=None)
        return view._getvalue()
    if isinstance(typ, types.BaseTuple):
        for i, t in enumerate(typ.types):
            if _borrowable(t):
                value = builder.insert_value(value, _borrowed(context, builder, t,
                                                              builder.extract_value(value, i)), i)
    return value


@intrinsic
def _borrow(typingctx, value):
    """``value`` (an array, or a tuple or record of arrays) with each array's data, shape and strides in a
    view of the same type with no owner (null meminfo and parent)."""
    if not _borrowable(value):
        return None

    def codegen(context, builder, signature, args):
        return _borrowed(context, builder, value, args[0])

    return value(value), codegen


@intrinsic
def _keep_alive(typingctx, value):
    """Nothing, at run time: a statement that names ``value``, so that numba frees it only after this."""

    def codegen(context, builder, signature, args):
        return context.get_dummy_value()

    return types.none(value), codegen


@intrinsic(prefer_literal=True)
def _stack_matrix(typingctx, rows, cols):
    """A ``rows`` × ``cols`` float64 C array (both literal integers) on the calling function's stack,
    uninitialised, with no owner."""
    if not (isinstance(rows, types.IntegerLiteral) and isinstance(cols, types.IntegerLiteral)):
        return None
    r, c = rows.literal_value, cols.literal_value
    array = types.Array(types.float64, 2, "C")

    def codegen(context, builder, signature, args):
        data = cgutils.alloca_once(builder, context.get_value_type(types.float64), size=r * c)
        view = context.make_array(array)(context, builder)
        intp = context.get_value_type(types.intp)
        populate_array(view, data=data, shape=(intp(r), intp(c)), strides=(intp(8 * c), intp(8)),
                       itemsize=intp(8), meminfo=None)
        return view._getvalue()

    return array(rows, cols), codegen


if config.DISABLE_JIT:  # plain Python (a debugger, coverage): the array itself, a new array
    def borrow(array):
        """The array (or tuple of arrays) itself (no reference counting to avoid in plain Python)."""
        return array

    def stack_matrix(rows, cols):
        """An uninitialised ``rows`` × ``cols`` float64 array."""
        return np.empty((rows, cols))

    def keep_alive(value):
        """Nothing (plain Python frees nothing while a view of it lives)."""
else:
    @helper(inline="always")
    def borrow(array):
        """A view of ``array`` that numba's reference counting passes over (see the module's docstring);
        valid while ``array`` is. A tuple or record of arrays gives the same with a view of each."""
        return _borrow(array)

    @helper(inline="always")
    def keep_alive(value):
        """Keep ``value`` (an array, or a tuple of them) allocated up to this point of the calling kernel:
        call it after the last use of a view ``borrow`` made of it (see the module's docstring)."""
        _keep_alive(value)

    @helper(inline="always")
    def stack_matrix(rows, cols):
        """An uninitialised ``rows`` × ``cols`` float64 array (literal integers) on the stack of the
        function that calls this (see the module's docstring); valid until that function returns."""
        return _stack_matrix(rows, cols)
