"""Clipping: the contact patch of two faces, by Sutherland–Hodgman polygon clipping.

When two polyhedra touch face to face (the separating axis test chose a face axis, ``polyhedra.py``), the
contact is the part of the *incident* face (the other body's face most anti-parallel to the reference
face's normal) that lies over the *reference* face. Sutherland and Hodgman (1974) clip a convex polygon
against one plane at a time: each vertex inside the plane is kept, and each edge that crosses the plane
adds the crossing point. Clipping the incident face against the side planes of the reference face (the
planes through its edges, facing outwards) leaves the overlap; the points of it below the reference
plane are the contact points, and ``reduce_to_four`` keeps the four that hold the body best.

``clip_to_face`` writes the polygon after each plane into the pair test's trace buffer when it has rows
(``narrow_trace.py``; an ordinary step passes one without rows, and nothing is written).
"""

from __future__ import annotations

from .jit import helper
from .narrow_trace import CLIP, IDENTITY, record_polygon, tracing
from .vecmath import add, cross, dot, length_sq, load3, scale, store3, sub


@helper
def clip_against_plane(src, m, dst, side, off):
    """One Sutherland–Hodgman stage: the part of the convex polygon ``src[:m]`` where side·x <= off,
    written to ``dst`` (at most m + 1 vertices); returns its vertex count."""
    out = 0
    for k in range(m):
        p = load3(src, k)
        q = load3(src, (k + 1) % m)
        dp = dot(side, p) - off
        dq = dot(side, q) - off
        if dp <= 0.0:
            store3(dst, out, p)
            out += 1
        if (dp <= 0.0) != (dq <= 0.0):
            store3(dst, out, add(p, scale(sub(q, p), dp / (dp - dq))))
            out += 1
    return out


@helper
def clip_to_face(ref, nref, n, poly, npoly, spare, trace):
    """Sutherland–Hodgman: clip the convex polygon ``poly[:npoly]`` against the side planes of the
    reference polygon ``ref[:nref]`` (CCW around its normal ``n``). The planes pass through the reference
    edges, outward normal edge × n. ``spare`` has the same capacity (nref + npoly rows suffice, since each
    plane adds at most one vertex). Polygons are rows (x, y, z, ...): only the first three columns are
    read and written. Returns the array holding the result and its vertex count; records each plane's
    result in ``trace`` (a CLIP polygon, the plane unnormalised)."""
    src = poly
    dst = spare
    m = npoly
    for i in range(nref):
        v0 = load3(ref, i)
        side = cross(sub(load3(ref, (i + 1) % nref), v0), n)
        off = dot(side, v0)
        m = clip_against_plane(src, m, dst, side, off)
        if tracing(trace):
            record_polygon(trace, CLIP, i, dst, m, side, off, IDENTITY)
        src, dst = dst, src
        if m == 0:
            break
    return src, m


@helper
def reduce_to_four(pts, m, n):
    """Indices of at most 4 of the ``m`` contact points (rows of ``pts``: x, y, z, depth): the deepest,
    the farthest from it, then the two that span the largest triangles with those on either side of
    their line (the area of the contact patch is what keeps a resting body from rocking; Jolt's and
    Box2D v3's manifold reduction). Near ties go to the deeper point, so that the choice does not hang
    on rounding (or on the order of the points)."""
    depth = pts[:, 3]
    i1 = 0
    for k in range(1, m):
        if depth[k] > depth[i1]:
            i1 = k
    p1 = load3(pts, i1)
    i2 = -1
    best = -1.0
    for k in range(m):
        d2 = length_sq(sub(load3(pts, k), p1))
        if d2 > best * (1.0 + 1e-9) or (d2 >= best * (1.0 - 1e-9) and depth[k] > depth[i2]):
            best = d2
            i2 = k
    u = sub(load3(pts, i2), p1)
    tol = 1e-9 * best
    i3 = -1
    i4 = -1
    hi = tol
    lo = -tol
    for k in range(m):
        area = dot(cross(u, sub(load3(pts, k), p1)), n)
        if area > hi + tol or (area > hi - tol and i3 >= 0 and depth[k] > depth[i3]):
            hi = max(area, hi)
            i3 = k
        elif area < lo - tol or (area < lo + tol and i4 >= 0 and depth[k] > depth[i4]):
            lo = min(area, lo)
            i4 = k
    return i1, i2, i3, i4
