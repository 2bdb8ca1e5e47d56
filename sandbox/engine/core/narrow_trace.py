"""The narrow phase's trace buffer: what a pair test computed on its way to the manifold, for the stepper.

Every pair test (``rounded.py``, ``polyhedra.py``, and through them ``gjk.py`` and ``clipping.py``) takes
one more argument, ``trace``: a float64 array of ``TRACE_WIDTH`` columns. In an ordinary step it has no
rows (``collide_pairs`` hands every test the same ``step_buffer()``), so nothing is recorded. The tests
have one signature either way: there is no second, tracing copy of detection.

What the untraced step pays, and why the code looks as it does. Measured on the settled S1 pile (best of
400 calls of ``collide_pairs``, 2 809 pairs), a first version made the narrow phase a fifth slower; with
the rules below it takes 0.86 ms against 0.80 ms without tracing code (box–box 609 against 562 ns a pair,
sphere–sphere and sphere–box within 8 ns), which a whole step (6.3 ms) does not show:

- Each place that records is written ``if tracing(trace): record...(...)``: one branch, always the same
  way, with everything the trace needs (the arguments, a polygon mapped back from a face's coordinates,
  a normalised edge axis) computed inside it.
- Inside the separating axis loops only short stores are recorded (``record``, ``record_axis``), which
  LLVM inlines: a call there that stays a call, even one never made, makes the compiler keep the loop's
  values in memory around it. Polygons, whose recording loops, are recorded by a call
  (``record_polygon``) outside those loops. The box–box
  test, the most frequent, stores only each separation in its loops (``note_separation``) and completes
  the rows (labels, axes) in one call when it leaves its axis tests.
- An array handed to a compiled function costs two atomic reference count updates per call, and the
  trace goes through one or two calls per pair; ``step_buffer()`` is an empty array with no owner (a
  null meminfo), for which numba's reference counting is a test of a null pointer.

``World.step_traced`` keeps the state before the step, and ``StepTrace.pair`` runs the pair's test
again on it (``narrowphase.collide_one``) with a buffer that has rows: the same code on the same
numbers, so it retraces exactly what the step computed. ``sandbox/engine/trace.py`` decodes the rows.

Layout: row 0 is the header, ``trace[0, 0]`` the number of rows written after it and ``trace[0, 1]``
1.0 when a row did not fit (the caller then runs the test again with a larger buffer). Each row is
``(tag, i, j, k, x, y, z, s)``: a tag below, three small integers, a 3-vector and a scalar. Geometry is
in the pair test's working frame, given by a ``FRAME_P``/``FRAME_Q`` pair of rows (the world frame when
there is none): A's frame for the separating axis tests, the polyhedron's for the polyhedron–segment
tests and the box's for sphere–box.

========== ===================================================================================
tag        row
========== ===================================================================================
FRAME_P    xyz: the working frame's origin (world)
FRAME_Q    x, y, z, s: the working frame's orientation, quaternion (x, y, z, w)
AXIS       a tested axis: i the group (FACE_A, FACE_B, EDGE), j A's feature, k B's (-1: none),
           xyz the unit axis pointing from A to B, s the separation along it (NaN: a parallel edge
           pair, not tested since a face axis covers it)
CHOSEN     the axis the manifold uses: i, j, k as for AXIS
POLYGON    header of a polygon: i its role (REFERENCE, INCIDENT, CLIP, KEPT, EDGE_A, EDGE_B), j the
           clip plane's number (CLIP), k the vertex count, xyz and s the clip plane (n·x <= s); its
           k vertices follow as VERTEX rows (s: the depth below the reference plane, for KEPT)
VERTEX     xyz a vertex, s a value that goes with it
REMOVED    a point left out: i the reason (ABOVE the reference face by more than the margin, or
           REDUCTION to four), xyz the point, s its depth
FALLBACK   clipping came out empty; xyz the incident body's deepest vertex, used alone
CLOSEST    a closest point of the two cores: i the body (0: A, 1: B), xyz the point, s the cores'
           distance (negative: by how much a sphere's centre lies inside a box)
SIMPLEX    one GJK iteration: i the iteration, k the simplex's vertex count, xyz the simplex's point
           nearest the origin (v, in the Minkowski difference), s |v|; then k VERTEX rows (j = 0: the
           polyhedron's support points, s their barycentric weights) and k VERTEX rows (j = 1: the
           segment's)
========== ===================================================================================
"""

from __future__ import annotations

import numpy as np
from numba import config, types
from numba.core import cgutils
from numba.extending import intrinsic
from numba.np.arrayobj import populate_array

from .jit import helper, kernel
from .vecmath import mad, scale

TRACE_WIDTH = 8

FRAME_P = 1
FRAME_Q = 2
AXIS = 3
CHOSEN = 4
POLYGON = 5
VERTEX = 6
REMOVED = 7
FALLBACK = 8
CLOSEST = 9
SIMPLEX = 10

# AXIS groups
FACE_A = 0
FACE_B = 1
EDGE = 2

# POLYGON roles
REFERENCE = 0
INCIDENT = 1
CLIP = 2
KEPT = 3
EDGE_A = 4
EDGE_B = 5

IDENTITY = ((0.0, 0.0, 0.0), (1.0, 0.0, 0.0), (0.0, 1.0, 0.0), (0.0, 0.0, 1.0))
"""The working frame as a ``record_polygon`` basis (origin, then the three axes)."""

# REMOVED reasons
ABOVE = 0
REDUCTION = 1


def no_trace() -> np.ndarray:
    """The buffer of an ordinary, untraced call from Python: no rows, so nothing is recorded."""
    return np.zeros((0, TRACE_WIDTH))


@intrinsic
def _ownerless_empty(typingctx):
    """A (0, TRACE_WIDTH) float64 C array with no data and no owner (null data pointer and meminfo)."""
    array = types.Array(types.float64, 2, "C")

    def codegen(context, builder, signature, args):
        out = context.make_array(array)(context, builder)
        intp = context.get_value_type(types.intp)
        populate_array(out, data=cgutils.get_null_value(out.data.type), shape=(intp(0), intp(TRACE_WIDTH)),
                       strides=(intp(8 * TRACE_WIDTH), intp(8)), itemsize=intp(8), meminfo=None)
        return out._getvalue()

    return array(), codegen


if config.DISABLE_JIT:  # plain Python (a debugger, coverage): an ordinary empty array
    def step_buffer():
        """The trace buffer of an ordinary step: no rows (see the module's docstring)."""
        return np.zeros((0, TRACE_WIDTH))
else:
    @helper(inline="always")
    def step_buffer():
        """The trace buffer of an ordinary step: no rows, and no owner, so that handing it to every
        pair test costs no reference counting (see the module's docstring)."""
        return _ownerless_empty()


def trace_buffer(rows: int) -> np.ndarray:
    """An empty buffer with room for ``rows`` rows after the header."""
    return np.zeros((rows + 1, TRACE_WIDTH))


# One compiled copy of each recorder: the explicit signatures take the tags and features as plain
# integers, where each call site's constants (``record(trace, FALLBACK, 0, 0, 0, ...)``) would otherwise
# compile a copy per combination of literal values.
_TRACE = types.float64[:, ::1]
_VEC = types.UniTuple(types.float64, 3)
_I = types.int64
_F = types.float64


@kernel(types.boolean(_TRACE))
def tracing(trace):
    """Whether ``trace`` records (has rows)."""
    return trace.shape[0] > 0


@kernel(types.void(_TRACE, _I, _I, _I, _I, _VEC, _F))
def record(trace, tag, i, j, k, x, s):
    """Append the row ``(tag, i, j, k, x, s)`` when ``trace`` has room (a vector ``x``, a scalar ``s``);
    mark the overflow when it has rows but none left."""
    if trace.shape[0] == 0:
        return
    r = int(trace[0, 0]) + 1
    if r >= trace.shape[0]:
        trace[0, 1] = 1.0
        return
    trace[r, 0] = tag
    trace[r, 1] = i
    trace[r, 2] = j
    trace[r, 3] = k
    trace[r, 4] = x[0]
    trace[r, 5] = x[1]
    trace[r, 6] = x[2]
    trace[r, 7] = s
    trace[0, 0] = r


@helper(types.void(_TRACE, _I, _F))
def note_separation(trace, slot, s):
    """Store the separation ``s`` (the last column) in the ``slot``-th row after those written so far; the
    test completes the row when it leaves its loop (``polyhedra._trace_box_axes``)."""
    r = int(trace[0, 0]) + 1 + slot
    if r < trace.shape[0]:
        trace[r, 7] = s


@helper(types.void(_TRACE, _VEC, types.UniTuple(_F, 4)))
def record_frame(trace, p, q):
    """The working frame: origin ``p``, orientation ``q`` (x, y, z, w)."""
    record(trace, FRAME_P, 0, 0, 0, p, 0.0)
    record(trace, FRAME_Q, 0, 0, 0, (q[0], q[1], q[2]), q[3])


@helper(types.void(_TRACE, _I, _I, _I, _VEC, _F, _F))
def record_axis(trace, group, fa, fb, axis, sign, s):
    """A tested axis, ``sign · axis``, with separation ``s``."""
    record(trace, AXIS, group, fa, fb, scale(axis, sign), s)


@helper(types.void(_TRACE, _I, _I, types.float64[:, :], _I, _VEC, _F, types.UniTuple(_VEC, 4)))
def record_polygon(trace, role, plane, poly, m, side, off, basis):
    """Polygon ``poly[:m]`` (rows x, y, z, depth) in the coordinates of ``basis = (origin, u, v, w)``
    (vertex ``origin + x·u + y·v + z·w``; ``IDENTITY`` for the working frame), after its header row;
    ``side``, ``off``: its clip plane. For the KEPT points the fourth column holds their depths."""
    origin, u, v, w = basis
    record(trace, POLYGON, role, plane, m, side, off)
    for r in range(m):
        p = mad(mad(mad(origin, u, poly[r, 0]), v, poly[r, 1]), w, poly[r, 2])
        record(trace, VERTEX, 0, 0, 0, p, poly[r, 3] if role == KEPT else 0.0)


@helper(types.void(_TRACE, _I, _VEC, _VEC))
def record_segment(trace, role, a, b):
    """A two-vertex polygon (an edge) from ``a`` to ``b``."""
    record(trace, POLYGON, role, 0, 2, (0.0, 0.0, 0.0), 0.0)
    record(trace, VERTEX, 0, 0, 0, a, 0.0)
    record(trace, VERTEX, 0, 0, 0, b, 0.0)


@helper(types.void(_TRACE, _VEC, _VEC, _F))
def record_closest(trace, on_a, on_b, dist):
    """The closest points of the two cores, ``on_a`` and ``on_b``, ``dist`` apart."""
    record(trace, CLOSEST, 0, 0, 0, on_a, dist)
    record(trace, CLOSEST, 1, 0, 0, on_b, dist)
