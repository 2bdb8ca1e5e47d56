"""Convex polyhedra (a box or a packed hull) seen through their support function, and the GJK distance
between a segment (or a point) and such a polyhedron.

A polyhedron is addressed by ``(H, hid, h)``: the packed hull table of ``core.layout``, a hull id, and
half extents. ``hid < 0`` means the box of half extents ``h`` (no table entry needed, so the box pair
tests share every compiled routine with the hull ones); otherwise ``h`` is ignored. Everything here works
in the polyhedron's local frame.

GJK (Gilbert, Johnson & Keerthi 1988; Ericson 2004, §9.5; van den Bergen 2003, §4.3) walks a simplex of
the Minkowski difference ``D = P - S`` towards the origin: the point of ``D`` nearest the origin is
``p - s`` for the closest pair ``p`` on the polyhedron and ``s`` on the segment. The sub-simplex nearest the
origin comes from the Voronoi-region tests of Ericson §5.1.5 (triangle) and §5.1.6 (tetrahedron).

Tracing (``narrow_trace.py``): when the ``trace`` buffer has rows, ``gjk_segment_polyhedron`` records the
simplex after each iteration (its support points on both shapes, their weights, and the point nearest
the origin); an ordinary step passes a buffer without rows.
"""

from __future__ import annotations

import math

import numpy as np

from .jit import helper
from .narrow_trace import SIMPLEX, VERTEX, record, tracing
from .vecmath import add, cross, dot, length_sq, lerp, load3, scale, store3, sub

GJK_MAX_ITERS = 64
# Stop when the support point improves the squared distance by less than this fraction (GJK's ε).
GJK_REL_TOL = 1e-12
# Squared distance below which the origin is taken to lie in D (the shapes touch or overlap).
GJK_TOUCH_SQ = 1e-24


@helper
def box_support(h, d):
    """The corner of the box of half extents ``h`` farthest along direction ``d``."""
    return (h[0] if d[0] >= 0.0 else -h[0], h[1] if d[1] >= 0.0 else -h[1], h[2] if d[2] >= 0.0 else -h[2])


@helper
def hull_support(H, hid, d):
    """The vertex of hull ``hid`` farthest along direction ``d`` (a linear scan of its vertices)."""
    verts = H.verts
    start = H.vert_start[hid]
    best = start
    best_dot = -math.inf
    for v in range(start, start + H.vert_count[hid]):
        s = verts[v, 0] * d[0] + verts[v, 1] * d[1] + verts[v, 2] * d[2]
        if s > best_dot:
            best_dot = s
            best = v
    return load3(verts, best)


@helper
def polyhedron_support(H, hid, h, d):
    """Support point along ``d`` of the box ``h`` (``hid < 0``) or of hull ``hid``."""
    if hid < 0:
        return box_support(h, d)
    return hull_support(H, hid, d)


@helper
def _segment_weights(a, b):
    """Barycentric weights ``(wa, wb)`` of the point of segment ``ab`` nearest the origin."""
    ab = sub(b, a)
    den = length_sq(ab)
    if den <= 0.0:
        return 1.0, 0.0
    t = -dot(a, ab) / den
    if t <= 0.0:
        return 1.0, 0.0
    if t >= 1.0:
        return 0.0, 1.0
    return 1.0 - t, t


@helper
def _triangle_weights(a, b, c):
    """Barycentric weights of the point of triangle ``abc`` nearest the origin (Ericson 2004, §5.1.5).

    Tests the vertex regions, then the edge regions, then the face; a zero weight means the point lies
    on the opposite feature. A degenerate (flat) triangle falls back to its nearest edge."""
    ab = sub(b, a)
    ac = sub(c, a)
    d1 = -dot(ab, a)
    d2 = -dot(ac, a)
    if d1 <= 0.0 and d2 <= 0.0:
        return 1.0, 0.0, 0.0
    d3 = -dot(ab, b)
    d4 = -dot(ac, b)
    if d3 >= 0.0 and d4 <= d3:
        return 0.0, 1.0, 0.0
    vc = d1 * d4 - d3 * d2
    if vc <= 0.0 and d1 >= 0.0 and d3 <= 0.0:
        v = d1 / (d1 - d3)
        return 1.0 - v, v, 0.0
    d5 = -dot(ab, c)
    d6 = -dot(ac, c)
    if d6 >= 0.0 and d5 <= d6:
        return 0.0, 0.0, 1.0
    vb = d5 * d2 - d1 * d6
    if vb <= 0.0 and d2 >= 0.0 and d6 <= 0.0:
        w = d2 / (d2 - d6)
        return 1.0 - w, 0.0, w
    va = d3 * d6 - d5 * d4
    if va <= 0.0 and d4 - d3 >= 0.0 and d5 - d6 >= 0.0:
        w = (d4 - d3) / ((d4 - d3) + (d5 - d6))
        return 0.0, 1.0 - w, w
    den = va + vb + vc
    if den <= 0.0:
        # Collinear corners: the nearest point is on one of the three edges.
        u0, u1 = _segment_weights(a, b)
        best = length_sq(add(scale(a, u0), scale(b, u1)))
        res = (u0, u1, 0.0)
        u0, u1 = _segment_weights(a, c)
        dd = length_sq(add(scale(a, u0), scale(c, u1)))
        if dd < best:
            best = dd
            res = (u0, 0.0, u1)
        u0, u1 = _segment_weights(b, c)
        if length_sq(add(scale(b, u0), scale(c, u1))) < best:
            res = (0.0, u0, u1)
        return res
    v = vb / den
    w = vc / den
    return 1.0 - v - w, v, w


@helper
def _origin_outside(a, b, c, d):
    """Whether the origin and ``d`` lie on opposite sides of plane ``abc`` (Ericson 2004, §5.1.6).

    A flat tetrahedron (``d`` in the plane) counts as outside, so that its faces are searched instead of
    reporting a containment that the volume cannot hold."""
    n = cross(sub(b, a), sub(c, a))
    sign_o = -dot(a, n)
    sign_d = dot(sub(d, a), n)
    return sign_o * sign_d < 0.0 or sign_d * sign_d <= 1e-28 * length_sq(n) * length_sq(sub(d, a))


@helper
def _tetrahedron_weights(a, b, c, d):
    """Barycentric weights of the point of tetrahedron ``abcd`` nearest the origin, and whether the origin
    is inside (Ericson 2004, §5.1.6: the nearest of the faces the origin lies outside of)."""
    best = math.inf
    res = (0.0, 0.0, 0.0, 0.0)
    inside = True
    if _origin_outside(a, b, c, d):
        inside = False
        u, v, w = _triangle_weights(a, b, c)
        dd = length_sq(add(add(scale(a, u), scale(b, v)), scale(c, w)))
        if dd < best:
            best = dd
            res = (u, v, w, 0.0)
    if _origin_outside(a, c, d, b):
        inside = False
        u, v, w = _triangle_weights(a, c, d)
        dd = length_sq(add(add(scale(a, u), scale(c, v)), scale(d, w)))
        if dd < best:
            best = dd
            res = (u, 0.0, v, w)
    if _origin_outside(a, d, b, c):
        inside = False
        u, v, w = _triangle_weights(a, d, b)
        dd = length_sq(add(add(scale(a, u), scale(d, v)), scale(b, w)))
        if dd < best:
            best = dd
            res = (u, w, 0.0, v)
    if _origin_outside(b, d, c, a):
        inside = False
        u, v, w = _triangle_weights(b, d, c)
        dd = length_sq(add(add(scale(b, u), scale(d, v)), scale(c, w)))
        if dd < best:
            res = (0.0, u, w, v)
    return res, inside


@helper
def _record_simplex(trace, iteration, n, P, S, lam, v):
    """Trace the simplex of ``n`` vertices (support points ``P`` on the polyhedron and ``S`` on the
    segment, weights ``lam``) and its point ``v`` nearest the origin."""
    if not tracing(trace):
        return
    record(trace, SIMPLEX, iteration, 0, n, v, math.sqrt(length_sq(v)))
    for i in range(n):
        record(trace, VERTEX, 0, 0, 0, load3(P, i), lam[i])
    for i in range(n):
        record(trace, VERTEX, 0, 1, 0, load3(S, i), lam[i])


@helper
def gjk_segment_polyhedron(s0, s1, H, hid, h, trace):
    """Closest points of segment ``s0 s1`` (a point when ``s0 == s1``) and a convex polyhedron.

    GJK distance algorithm (Gilbert, Johnson & Keerthi 1988; Ericson 2004, §9.5), all in the
    polyhedron's local frame. Returns ``(distance, on_segment, on_polyhedron)``; the distance is 0 when
    the segment touches or crosses the polyhedron, and both points are then ``s0`` (no closest pair).
    Traced: the starting simplex (iteration 0), then the simplex each iteration keeps (the full
    tetrahedron when it holds the origin)."""
    # Simplex rows: support points w = p - s of D and the p, s they came from (one scratch array).
    simplex = np.empty((3, 4, 3))
    W = simplex[0]
    P = simplex[1]
    S = simplex[2]
    lam = np.empty(4)

    mid = lerp(s0, s1, 0.5)
    d = mid if length_sq(mid) > 0.0 else (1.0, 0.0, 0.0)
    p = polyhedron_support(H, hid, h, d)
    store3(P, 0, p)
    store3(S, 0, s0)
    store3(W, 0, sub(p, s0))
    lam[0] = 1.0
    n = 1
    v = sub(p, s0)
    _record_simplex(trace, int(0), n, P, S, lam, v)
    touching = False
    for it in range(GJK_MAX_ITERS):
        vv = length_sq(v)
        if vv <= GJK_TOUCH_SQ:
            touching = True
            break
        # Support of D along -v: the polyhedron's point along -v minus the segment's end along +v.
        p = polyhedron_support(H, hid, h, (-v[0], -v[1], -v[2]))
        s = s0 if dot(s0, v) >= dot(s1, v) else s1
        w = sub(p, s)
        if vv - dot(v, w) <= GJK_REL_TOL * vv:
            break
        duplicate = False
        for i in range(n):
            if W[i, 0] == w[0] and W[i, 1] == w[1] and W[i, 2] == w[2]:
                duplicate = True
        if duplicate:
            break
        store3(W, n, w)
        store3(P, n, p)
        store3(S, n, s)
        n += 1
        if n == 2:
            u0, u1 = _segment_weights(load3(W, 0), load3(W, 1))
            weights = (u0, u1, 0.0, 0.0)
        elif n == 3:
            u0, u1, u2 = _triangle_weights(load3(W, 0), load3(W, 1), load3(W, 2))
            weights = (u0, u1, u2, 0.0)
        else:
            weights, inside = _tetrahedron_weights(load3(W, 0), load3(W, 1), load3(W, 2), load3(W, 3))
            if inside:
                touching = True
                if tracing(trace):
                    lam[:] = np.nan  # the origin is inside: there is no nearest point to weigh
                    _record_simplex(trace, it + 1, n, P, S, lam, (0.0, 0.0, 0.0))
                break
        # Keep the sub-simplex that supports the nearest point (the vertices with non-zero weight).
        m = 0
        for i in range(n):
            if weights[i] > 0.0:
                store3(W, m, load3(W, i))
                store3(P, m, load3(P, i))
                store3(S, m, load3(S, i))
                lam[m] = weights[i]
                m += 1
        n = m
        v_new = (0.0, 0.0, 0.0)
        for i in range(n):
            v_new = add(v_new, scale(load3(W, i), lam[i]))
        _record_simplex(trace, it + 1, n, P, S, lam, v_new)
        if length_sq(v_new) >= vv:
            # No progress: rounding has taken over, the current simplex is as close as it gets.
            v = v_new
            break
        v = v_new
    if touching:
        return 0.0, s0, s0
    on_poly = (0.0, 0.0, 0.0)
    on_seg = (0.0, 0.0, 0.0)
    for i in range(n):
        on_poly = add(on_poly, scale(load3(P, i), lam[i]))
        on_seg = add(on_seg, scale(load3(S, i), lam[i]))
    return math.sqrt(length_sq(sub(on_seg, on_poly))), on_seg, on_poly
