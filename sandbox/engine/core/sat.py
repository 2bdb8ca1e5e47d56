"""The separating axis test (SAT) between convex polyhedra: which axis separates two boxes or two hulls,
or, when none does, along which axis they overlap least.

The separating axis theorem: two convex polyhedra are disjoint exactly when their projections on some
axis are disjoint, and it suffices to test the face normals of both and the cross products of one edge
of each (Gottschalk, Lin & Manocha 1996; Ericson 2004, §4.4 and §5.2.1). Each test works in A's local
frame (B placed there by the relative transform) and follows Gregorius, "The Separating Axis Test between
Convex Polyhedra" (GDC 2013), the plan of Box2D's ``b2CollidePolygons`` lifted to 3D:

1. Face queries (``face_query``): for every face of one body, the separation of the other body's deepest
   vertex below the face's plane.
2. Edge query (``edge_query``): for every pair of edges whose Gauss-map arcs cross (``is_minkowski_face``:
   the two edges then build a face of the Minkowski difference; the other pairs' axes cannot separate),
   the separation along their cross product.
3. Any separation beyond ``margin`` means no contact: the queries stop at the first one. Otherwise the
   axis of largest separation wins, faces preferred over edges unless the edge is clearly better
   (``edge_wins``), so that a resting contact does not flicker between a face manifold and a single edge
   point from one step to the next.

Boxes have their own closed-form 15-axis test (``box_box_axes``: the 3 + 3 face axes and 9 edge-pair axes
of two oriented boxes, Ericson 2004, §4.4.1), because box stacks are the common case. What the pair tests
build from the chosen axis (the reference and incident faces, clipping, the edge–edge point) is in
``polyhedra.py``.

Tracing (``narrow_trace.py``): each query records, in A's frame, every axis it tested with its separation
(up to the one that separates, where it stops), oriented from A to B.
"""

from __future__ import annotations

import math

import numpy as np
from numba import types

from .jit import helper
from .narrow_trace import (
    AXIS,
    EDGE,
    FACE_A,
    FACE_B,
    note_separation,
    record,
    record_axis,
    record_frame,
    tracing,
)
from .vecmath import cross, dot, length, load3, neg, scale, sub

REL_TOL = 0.98
"""An edge axis wins only if its separation beats the best face's by ``(1 − REL_TOL)·|best_face| + ABS_TOL``
(Box2D's bias towards faces). Written with ``|best_face|`` so that the bias favours the face for positive
(speculative) separations too: Box2D's ``REL_TOL * best_face`` is below ``best_face`` once it is positive,
and an edge axis that equals a face axis (every edge pair of two axis-aligned boxes) then won, collapsing
a face manifold to one edge point."""
ABS_TOL = 0.001
PARALLEL_TOL = 1e-6
"""Edge pairs whose directions' cross product is shorter than this (relative) are treated as parallel:
their axis is one of the face axes, already tested."""


@helper
def edge_wins(sep_face: float, sep_edge: float) -> bool:
    """Whether the best edge axis (separation ``sep_edge``) is chosen over the best face axis
    (``sep_face``): only when it is clearly larger (Box2D's relative and absolute tolerances,
    ``REL_TOL`` and ``ABS_TOL``)."""
    return sep_edge > sep_face + (1.0 - REL_TOL) * abs(sep_face) + ABS_TOL


@helper
def is_minkowski_face(a, b, c, d, b_x_a, d_x_c):
    """Do the Gauss-map arcs ab (edge of A, adjacent face normals a, b) and cd (edge of B, negated normals
    c, d) cross? Then the two edges build a face of the Minkowski difference (Gregorius 2013): the arcs'
    endpoints lie on opposite sides of each other's planes, on the same hemisphere."""
    cba = dot(c, b_x_a)
    dba = dot(d, b_x_a)
    adc = dot(a, d_x_c)
    bdc = dot(b, d_x_c)
    return cba * dba < 0.0 and adc * bdc < 0.0 and cba * bdc > 0.0


@helper
def face_query(normals, offsets, first, count, verts, vfirst, vcount, sign, margin, trace):
    """Gregorius's face query: for each face ``f`` of one body (unit normal row ``first + f`` of
    ``normals``, plane ``n·x = offsets[first + f]``), the separation of the other body's vertices
    (rows ``vfirst`` to ``vfirst + vcount`` of ``verts``) from its plane, the smallest ``n·x`` less the
    offset. Returns the largest separation and its face, or the first separation beyond ``margin`` and its
    face (the bodies are then apart). ``sign``: 1.0 for A's faces against B's vertices, −1.0 for B's
    against A's (traced as B's face axes, the axis reversed to point from A to B)."""
    best = -np.inf
    face = 0
    for f in range(count):
        n = load3(normals, first + f)
        lo = np.inf
        for k in range(vcount):
            lo = min(lo, dot(n, load3(verts, vfirst + k)))
        s = lo - offsets[first + f]
        if tracing(trace):
            if sign > 0.0:
                record_axis(trace, FACE_A, f, -1, n, sign, s)
            else:
                record_axis(trace, FACE_B, -1, f, n, sign, s)
        if s > margin:
            return s, f
        if s > best:
            best = s
            face = f
    return best, face


@helper
def edge_query(vert_a, norm_a, edges_a, faces_a, ea0, ean, vb, nb, edges_b, faces_b, eb0, ebn, vb0, fb0,
               margin, trace):
    """Gregorius's edge query between A's edges ``ea0 .. ea0 + ean`` (rows of ``edges_a``: vertex rows
    of ``vert_a``; ``faces_a``: their two faces, rows of ``norm_a``) and B's edges ``eb0 .. eb0 + ebn``
    (rows of ``edges_b``, whose vertex and face numbers less ``vb0`` and ``fb0`` are the rows of ``vb``
    and ``nb``, B's vertices and face normals in A's frame). Only the pairs that build a face of the
    Minkowski difference (``is_minkowski_face``) are tested, along the cross product of the two edges
    oriented away from A's centre (its frame's origin); nearly parallel pairs are skipped (their axis is
    a face axis). Returns ``(separation, edge of A, edge of B, unit axis)`` of the largest separation, or
    of the first one beyond ``margin``; edges -1 when no pair was tested."""
    sep = -np.inf
    best_ea = -1
    best_eb = -1
    best_axis = (0.0, 0.0, 0.0)
    for e in range(ea0, ea0 + ean):
        a0 = load3(vert_a, edges_a[e, 0])
        a1 = load3(vert_a, edges_a[e, 1])
        n0 = load3(norm_a, faces_a[e, 0])
        n1 = load3(norm_a, faces_a[e, 1])
        n1_x_n0 = cross(n1, n0)
        dir_a = sub(a1, a0)
        for g in range(eb0, eb0 + ebn):
            c = neg(load3(nb, faces_b[g, 0] - fb0))
            d = neg(load3(nb, faces_b[g, 1] - fb0))
            if not is_minkowski_face(n0, n1, c, d, n1_x_n0, cross(d, c)):
                continue
            b0 = load3(vb, edges_b[g, 0] - vb0)
            dir_b = sub(load3(vb, edges_b[g, 1] - vb0), b0)
            axis = cross(dir_a, dir_b)
            ln = length(axis)
            if ln < PARALLEL_TOL * length(dir_a) * length(dir_b):
                if tracing(trace):
                    record(trace, AXIS, EDGE, e - ea0, g - eb0, (0.0, 0.0, 0.0), np.nan)
                continue
            axis = scale(axis, 1.0 / ln)
            if dot(axis, a0) < 0.0:  # A's origin is its centre of mass, inside it
                axis = neg(axis)
            s = dot(axis, sub(b0, a0))
            if tracing(trace):
                record(trace, AXIS, EDGE, e - ea0, g - eb0, axis, s)
            if s > margin:
                return s, e, g, axis
            if s > sep:
                sep = s
                best_ea = e
                best_eb = g
                best_axis = axis
    return sep, best_ea, best_eb, best_axis


_V3 = types.UniTuple(types.float64, 3)


@helper(types.void(types.float64[:, ::1], types.int64, _V3, types.UniTuple(_V3, 3), _V3,
                   types.UniTuple(types.float64, 4)))
def _trace_box_axes(trace, tested, t, eb, pa, qa):
    """Complete the rows of the first ``tested`` axes of ``box_box_axes``, whose loops stored only their
    separations (``narrow_trace.note_separation``), in its order: A's face axes 0, 1, 2, B's, then the
    edge axes e_i × b_j (slot 6 + 3i + j; ``eb[j]`` = b_j in A's frame); each axis oriented from A to B
    (along the centres' offset ``t``), a parallel edge pair as a zero axis. Then the working frame."""
    r0 = int(trace[0, 0])
    room = trace.shape[0] - 1 - r0
    if tested > room:
        trace[0, 1] = 1.0  # the rows that did not fit
        tested = room
    for slot in range(tested):
        if slot < 3:
            group, fa, fb = FACE_A, slot, -1
            axis = (1.0 if slot == 0 else 0.0, 1.0 if slot == 1 else 0.0, 1.0 if slot == 2 else 0.0)
        elif slot < 6:
            group, fa, fb = FACE_B, -1, slot - 3
            axis = eb[slot - 3]
        else:
            group, fa, fb = EDGE, (slot - 6) // 3, (slot - 6) % 3
            e = (1.0 if fa == 0 else 0.0, 1.0 if fa == 1 else 0.0, 1.0 if fa == 2 else 0.0)
            axis = cross(e, eb[fb])
            ln = length(axis)
            axis = scale(axis, 1.0 / ln) if ln >= PARALLEL_TOL else (0.0, 0.0, 0.0)
        if dot(axis, t) < 0.0:
            axis = neg(axis)
        r = r0 + 1 + slot
        trace[r, 0] = AXIS
        trace[r, 1] = group
        trace[r, 2] = fa
        trace[r, 3] = fb
        trace[r, 4] = axis[0]
        trace[r, 5] = axis[1]
        trace[r, 6] = axis[2]
    trace[0, 0] = r0 + tested
    record_frame(trace, pa, qa)


@helper
def box_box_axes(ha, hb, t, eb, margin, pa, qa, trace):
    """The 15-axis separating axis test of two oriented boxes (Gottschalk et al. 1996; Ericson 2004,
    §4.4.1) in A's frame: half extents ``ha``, ``hb``, B's centre ``t`` and unit axes ``eb`` (A's axes are
    the frame's). Returns ``(separated, sep_a, face_a, sep_b, face_b, sep_e, edge_i, edge_j)``: whether
    some axis separates the boxes by more than ``margin`` (then the rest is meaningless), the largest
    separation along A's face axes and its axis, the same for B's, and along the edge axes e_i × b_j
    (``edge_i = -1`` when every edge pair is parallel). Axis-aligned boxes make every edge axis a face
    axis, so the test reduces to the AABB overlap test's least-overlap axis. Traced: the 3 + 3 face axes
    (feature: the axis 0, 1, 2) and the 9 edge axes (features i, j of e_i × b_j), each oriented from A
    to B; ``pa``, ``qa``: A's pose, the working frame."""
    sep_a = -np.inf
    face_a = 0
    for i in range(3):
        s = abs(t[i]) - (ha[i] + hb[0] * abs(eb[0][i]) + hb[1] * abs(eb[1][i]) + hb[2] * abs(eb[2][i]))
        if tracing(trace):
            note_separation(trace, i, s)
        if s > margin:
            if tracing(trace):
                _trace_box_axes(trace, i + 1, t, eb, pa, qa)
            return True, sep_a, face_a, 0.0, 0, 0.0, -1, -1
        if s > sep_a:
            sep_a = s
            face_a = i
    sep_b = -np.inf
    face_b = 0
    for j in range(3):
        s = abs(dot(t, eb[j])) - (hb[j] + ha[0] * abs(eb[j][0]) + ha[1] * abs(eb[j][1])
                                  + ha[2] * abs(eb[j][2]))
        if tracing(trace):
            note_separation(trace, 3 + j, s)
        if s > margin:
            if tracing(trace):
                _trace_box_axes(trace, 4 + j, t, eb, pa, qa)
            return True, sep_a, face_a, sep_b, face_b, 0.0, -1, -1
        if s > sep_b:
            sep_b = s
            face_b = j
    sep_e = -np.inf
    edge_i = -1
    edge_j = -1
    for i in range(3):
        i1 = (i + 1) % 3
        i2 = (i + 2) % 3
        for j in range(3):
            # the axis e_i × b_j in closed form (Ericson 2004, §4.4.1), b_j = eb[j] having components
            # R[·][j] in A's frame: its length, the centres' distance along it and the two boxes'
            # projected radii, all unnormalised (scaled by the length)
            b = eb[j]
            ln = math.sqrt(b[i1] * b[i1] + b[i2] * b[i2])
            if ln < PARALLEL_TOL:
                if tracing(trace):
                    note_separation(trace, 6 + 3 * i + j, np.nan)
                continue
            j1 = (j + 1) % 3
            j2 = (j + 2) % 3
            ra = ha[i1] * abs(b[i2]) + ha[i2] * abs(b[i1])
            rb = hb[j1] * abs(eb[j2][i]) + hb[j2] * abs(eb[j1][i])
            gap = abs(t[i2] * b[i1] - t[i1] * b[i2]) - ra - rb
            if tracing(trace):
                note_separation(trace, 6 + 3 * i + j, gap / ln)
            if gap > margin * ln:
                if tracing(trace):
                    _trace_box_axes(trace, 7 + 3 * i + j, t, eb, pa, qa)
                return True, sep_a, face_a, sep_b, face_b, sep_e, edge_i, edge_j
            if gap > sep_e * ln:
                sep_e = gap / ln
                edge_i = i
                edge_j = j
    if tracing(trace):
        _trace_box_axes(trace, 15, t, eb, pa, qa)
    return False, sep_a, face_a, sep_b, face_b, sep_e, edge_i, edge_j
