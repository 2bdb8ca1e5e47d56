"""Narrow-phase pair tests for the rounded shapes: spheres and capsules against everything.

A sphere is a point and a capsule a segment, each inflated by its radius, so every test here finds the
closest points of the cores (point, segment, box or hull) and pushes them out by the radii.

All functions share the signature of ``docs/architecture.md`` ("Pair test signature"): shape A has the
lower kind, the unit ``normal`` points from A to B, ``pts_a``/``pts_b`` are world points on the surfaces
of A and of B, ``depths[i] = dot(pts_a[i] - pts_b[i], normal)`` is positive when overlapping and down to
``-margin`` for speculative contacts, and the return value is the number of points (0 when the shapes
are farther apart than ``margin``).

Polyhedra (box and hull) are handled by one routine, ``_polyhedron_segment``, through the accessors of
``core.gjk`` (``hid < 0`` is a box): GJK for the closest points while separated, the face of least
penetration (SAT face query, Gottschalk et al. 1996; Ericson 2004, §5.2.1) once the core segment
crosses the polyhedron, and a two-point manifold, the segment clipped by the side planes of the
reference face (Sutherland & Hodgman 1974, reduced to a segment: Cyrus & Beck 1978), when a capsule
lies flat on a face so that it rests there stably.
"""

from __future__ import annotations

import math

from numba import njit

from .gjk import gjk_segment_polyhedron
from .vecmath import (
    EPS,
    add,
    any_perpendicular,
    cross,
    dot,
    length,
    length_sq,
    lerp,
    load3,
    mad,
    neg,
    normalize,
    put3,
    quat_inv_rotate,
    quat_rotate,
    scale,
    store3,
    sub,
)

# A segment within this sine of a face plane (or of another segment) counts as parallel to it: about 3°.
PARALLEL_SIN = 0.05
# Below this distance (m) the cores are taken to touch, and the deep (SAT) branch gives the normal.
TOUCH_DIST = 1e-9
# The closest points count as lying on a face when the GJK normal is this close to the face normal.
FACE_COS = 1.0 - 1e-6


@njit(cache=True)
def _write_point(i, a, b, depth, pts_a, pts_b, depths):
    store3(pts_a, i, a)
    store3(pts_b, i, b)
    depths[i] = depth


@njit(cache=True)
def _capsule_segment(p, q, prm):
    """World end points of a capsule's core segment, from (0, -hh, 0) to (0, hh, 0) in its frame."""
    axis = quat_rotate(q, (0.0, prm[1], 0.0))
    return sub(p, axis), add(p, axis)


@njit(cache=True)
def _clamp01(x):
    return min(max(x, 0.0), 1.0)


@njit(cache=True)
def closest_segment_segment(p1, q1, p2, q2):
    """Parameters ``(s, t)`` of the closest points ``p1 + s(q1 - p1)`` and ``p2 + t(q2 - p2)`` of two
    segments, each in [0, 1] (Ericson 2004, §5.1.9). Degenerate segments (points) are allowed; for
    parallel segments one of the closest pairs is returned."""
    d1 = sub(q1, p1)
    d2 = sub(q2, p2)
    r = sub(p1, p2)
    a = length_sq(d1)
    e = length_sq(d2)
    f = dot(d2, r)
    if a <= EPS and e <= EPS:
        return 0.0, 0.0
    if a <= EPS:
        return 0.0, _clamp01(f / e)
    c = dot(d1, r)
    if e <= EPS:
        return _clamp01(-c / a), 0.0
    b = dot(d1, d2)
    denom = a * e - b * b
    # Parallel lines (denom 0) have no unique closest pair: start from s = 0 and let t decide.
    s = _clamp01((b * f - c * e) / denom) if denom > EPS * a * e else 0.0
    t = (b * s + f) / e
    if t < 0.0:
        return _clamp01(-c / a), 0.0
    if t > 1.0:
        return _clamp01((b - c) / a), 1.0
    return s, t


@njit(cache=True)
def _round_point(ca, ra, cb, rb, n_default, margin, normal, pts_a, pts_b, depths):
    """One contact between balls of radii ``ra`` about ``ca`` and ``rb`` about ``cb`` (the closest points
    of the cores); ``n_default`` is the normal used when the centres coincide."""
    d = sub(cb, ca)
    dist = length(d)
    if dist - ra - rb > margin:
        return 0
    n = scale(d, 1.0 / dist) if dist > EPS else n_default
    put3(normal, n)
    _write_point(0, mad(ca, n, ra), mad(cb, n, -rb), ra + rb - dist, pts_a, pts_b, depths)
    return 1


@njit(cache=True)
def sphere_sphere(pa, qa, prm_a, pb, qb, prm_b, H, margin, normal, pts_a, pts_b, depths):
    """Two spheres: the normal joins the centres (+y when they coincide), depth ``ra + rb - |pb - pa|``."""
    return _round_point(pa, prm_a[0], pb, prm_b[0], (0.0, 1.0, 0.0), margin, normal, pts_a, pts_b, depths)


@njit(cache=True)
def sphere_capsule(pa, qa, prm_a, pb, qb, prm_b, H, margin, normal, pts_a, pts_b, depths):
    """Sphere A against capsule B: the sphere centre against the point of the capsule's segment closest to
    it (Ericson 2004, §5.1.2). A centre on the segment is pushed out perpendicular to the axis."""
    b0, b1 = _capsule_segment(pb, qb, prm_b)
    ab = sub(b1, b0)
    t = _clamp01(dot(sub(pa, b0), ab) / length_sq(ab))
    n_default = neg(any_perpendicular(normalize(ab)))
    return _round_point(pa, prm_a[0], lerp(b0, b1, t), prm_b[0], n_default, margin,
                        normal, pts_a, pts_b, depths)


@njit(cache=True)
def sphere_box(pa, qa, prm_a, pb, qb, prm_b, H, margin, normal, pts_a, pts_b, depths):
    """Sphere A against box B (Ericson 2004, §5.1.3): the closest box point is the sphere centre clamped
    to the box in the box's frame. A centre inside the box is pushed out through the face of least
    penetration, with depth (distance to that face) + radius."""
    r = prm_a[0]
    h = (prm_b[0], prm_b[1], prm_b[2])
    c = quat_inv_rotate(qb, sub(pa, pb))
    q = (min(max(c[0], -h[0]), h[0]), min(max(c[1], -h[1]), h[1]), min(max(c[2], -h[2]), h[2]))
    d = sub(c, q)
    dist_sq = length_sq(d)
    if dist_sq > (r + margin) * (r + margin):
        return 0
    if dist_sq > EPS * EPS:
        dist = math.sqrt(dist_sq)
        out = scale(d, 1.0 / dist)
        depth = r - dist
    else:
        # Centre inside (or on) the box: leave through the nearest face.
        axis = 0
        gap = h[0] - abs(c[0])
        for k in range(1, 3):
            if h[k] - abs(c[k]) < gap:
                gap = h[k] - abs(c[k])
                axis = k
        sign = 1.0 if c[axis] >= 0.0 else -1.0
        if axis == 0:
            out = (sign, 0.0, 0.0)
            q = (sign * h[0], c[1], c[2])
        elif axis == 1:
            out = (0.0, sign, 0.0)
            q = (c[0], sign * h[1], c[2])
        else:
            out = (0.0, 0.0, sign)
            q = (c[0], c[1], sign * h[2])
        depth = gap + r
    # ``out`` points from the box to the sphere; the contact normal goes from A (sphere) to B (box).
    n = neg(quat_rotate(qb, out))
    put3(normal, n)
    _write_point(0, mad(pa, n, r), add(pb, quat_rotate(qb, q)), depth, pts_a, pts_b, depths)
    return 1


@njit(cache=True)
def capsule_capsule(pa, qa, prm_a, pb, qb, prm_b, H, margin, normal, pts_a, pts_b, depths):
    """Two capsules: closest points of their segments (Ericson 2004, §5.1.9), pushed out by the radii.

    When the segments are parallel (within ``PARALLEL_SIN``) and overlap along their length, B's segment
    is clipped to the span of A's and both ends of the overlap become contacts (same normal), so that a
    capsule lying on another rests on two points; otherwise one point."""
    ra = prm_a[0]
    rb = prm_b[0]
    a0, a1 = _capsule_segment(pa, qa, prm_a)
    b0, b1 = _capsule_segment(pb, qb, prm_b)
    s, t = closest_segment_segment(a0, a1, b0, b1)
    ca = lerp(a0, a1, s)
    cb = lerp(b0, b1, t)
    d = sub(cb, ca)
    dist = length(d)
    if dist - ra - rb > margin:
        return 0
    da = sub(a1, a0)
    db = sub(b1, b0)
    if dist > EPS:
        n = scale(d, 1.0 / dist)
    else:
        # Crossing segments: the normal is perpendicular to both, turned to point from A towards B.
        n = normalize(cross(da, db))
        if length_sq(n) == 0.0:
            n = any_perpendicular(normalize(da))
        if dot(n, sub(pb, pa)) < 0.0:
            n = neg(n)
    put3(normal, n)
    la_sq = length_sq(da)
    if length_sq(cross(da, db)) <= PARALLEL_SIN * PARALLEL_SIN * la_sq * length_sq(db):
        # Range of t over which B's points project inside A's segment (the projection is linear in t).
        s0 = dot(sub(b0, a0), da) / la_sq
        s1 = dot(sub(b1, a0), da) / la_sq
        t_lo = 0.0
        t_hi = 1.0 if 0.0 <= s0 <= 1.0 else -1.0
        if s1 != s0:
            u0 = -s0 / (s1 - s0)
            u1 = (1.0 - s0) / (s1 - s0)
            t_lo = max(0.0, min(u0, u1))
            t_hi = min(1.0, max(u0, u1))
        if t_hi > t_lo and (t_hi - t_lo) * (t_hi - t_lo) * length_sq(db) > 1e-6 * la_sq:
            k = 0
            for tt in (t_lo, t_hi):
                qb_pt = lerp(b0, b1, tt)
                qa_pt = lerp(a0, a1, _clamp01(dot(sub(qb_pt, a0), da) / la_sq))
                depth = ra + rb - dot(sub(qb_pt, qa_pt), n)
                if depth >= -margin:
                    _write_point(k, mad(qa_pt, n, ra), mad(qb_pt, n, -rb), depth, pts_a, pts_b, depths)
                    k += 1
            if k == 2:
                return 2
    _write_point(0, mad(ca, n, ra), mad(cb, n, -rb), ra + rb - dist, pts_a, pts_b, depths)
    return 1


# ---------------------------------------------------------------------------------------------------
# Polyhedra (box: hid < 0 with half extents h; hull: hid into H), in the polyhedron's local frame.


@njit(cache=True)
def _face_count(H, hid):
    if hid < 0:
        return 6
    return H[4][hid]


@njit(cache=True)
def _face_plane(H, hid, h, f):
    """Outward unit normal ``n`` and offset ``d`` (``n·x = d``) of face ``f`` (0-based within the shape).

    Box faces are ordered +x, -x, +y, -y, +z, -z."""
    if hid < 0:
        axis = f >> 1
        sign = 1.0 - 2.0 * (f & 1)
        if axis == 0:
            return (sign, 0.0, 0.0), h[0]
        if axis == 1:
            return (0.0, sign, 0.0), h[1]
        return (0.0, 0.0, sign), h[2]
    g = H[3][hid] + f
    fn = H[5]
    return (fn[g, 0], fn[g, 1], fn[g, 2]), H[6][g]


@njit(cache=True)
def _side_count(H, hid, f):
    if hid < 0:
        return 4
    return H[8][H[3][hid] + f]


@njit(cache=True)
def _side_plane(H, hid, h, f, j):
    """Plane ``(m, e)`` through edge ``j`` of face ``f``, perpendicular to the face, outward unit ``m``:
    points of the face's prism satisfy ``m·x <= e``. For a hull face (vertices counter-clockwise seen
    from outside) ``m = edge × n``."""
    if hid < 0:
        # The four side planes of a box face are the faces on its two tangent axes.
        axis = ((f >> 1) + 1 + (j >> 1)) % 3
        sign = 1.0 - 2.0 * (j & 1)
        if axis == 0:
            return (sign, 0.0, 0.0), h[0]
        if axis == 1:
            return (0.0, sign, 0.0), h[1]
        return (0.0, 0.0, sign), h[2]
    g = H[3][hid] + f
    n, _ = _face_plane(H, hid, h, f)
    vs = H[7][g]
    cnt = H[8][g]
    fv = H[9]
    verts = H[2]
    i0 = fv[vs + j]
    i1 = fv[vs + (j + 1) % cnt]
    v0 = (verts[i0, 0], verts[i0, 1], verts[i0, 2])
    v1 = (verts[i1, 0], verts[i1, 1], verts[i1, 2])
    m = normalize(cross(sub(v1, v0), n))
    return m, dot(m, v0)


@njit(cache=True)
def _clip_segment(s0, s1, m, e, t_lo, t_hi):
    """Narrow the parameter range ``[t_lo, t_hi]`` of segment ``s0 s1`` to the half-space ``m·x <= e``
    (Cyrus & Beck 1978)."""
    a = dot(m, s0) - e
    b = dot(m, s1) - e
    if a > 0.0 and b > 0.0:
        return 1.0, 0.0
    if a > 0.0:
        t_lo = max(t_lo, a / (a - b))
    elif b > 0.0:
        t_hi = min(t_hi, a / (a - b))
    return t_lo, t_hi


@njit(cache=True)
def _face_pair(H, hid, h, f, s0, s1, r, margin, pts_poly, pts_cap, depths):
    """Up to two contacts of the segment ``s0 s1`` (radius ``r``) lying along face ``f``: the segment
    clipped to the face's prism (its side planes), each end measured against the face plane.

    Writes local points and returns how many lie within ``margin``; 2 means a two-point manifold."""
    n, d = _face_plane(H, hid, h, f)
    t_lo = 0.0
    t_hi = 1.0
    for j in range(_side_count(H, hid, f)):
        m, e = _side_plane(H, hid, h, f, j)
        # The slop keeps a segment lying exactly in a side plane (along an edge) from flickering out.
        t_lo, t_hi = _clip_segment(s0, s1, m, e + TOUCH_DIST, t_lo, t_hi)
    if t_hi <= t_lo or (t_hi - t_lo) * (t_hi - t_lo) * length_sq(sub(s1, s0)) <= 1e-12:
        return 0
    k = 0
    for t in (t_lo, t_hi):
        s = lerp(s0, s1, t)
        height = dot(n, s) - d
        if r - height >= -margin:
            _write_point(k, mad(s, n, -height), mad(s, n, -r), r - height, pts_poly, pts_cap, depths)
            k += 1
    return k


@njit(cache=True)
def _polyhedron_segment(pp, qp, H, hid, h, c0, c1, r, margin, flip, normal, pts_a, pts_b, depths):
    """Contacts between a polyhedron at ``pp, qp`` (box ``h`` if ``hid < 0``, else hull ``hid``) and the
    world segment ``c0 c1`` inflated by ``r`` (a capsule; a sphere when ``c0 == c1``).

    Separated cores: GJK closest points (Gilbert, Johnson & Keerthi 1988), one contact; two when the
    closest points lie on a face the segment is parallel to (the segment clipped to that face's prism).
    Crossing cores: the part of the segment inside the polyhedron (clipped by every face plane) is pushed
    out through the face where it penetrates least (SAT face query), again with two points when parallel.
    The normal points from the polyhedron to the segment, reversed when ``flip`` (segment is shape A)."""
    s0 = quat_inv_rotate(qp, sub(c0, pp))
    s1 = quat_inv_rotate(qp, sub(c1, pp))
    dist, on_seg, on_poly = gjk_segment_polyhedron(s0, s1, H, hid, h)
    if dist - r > margin:
        return 0
    seg = sub(s1, s0)
    seg_sq = length_sq(seg)
    nf = _face_count(H, hid)
    if dist > TOUCH_DIST:
        n = scale(sub(on_seg, on_poly), 1.0 / dist)
        best = 0
        best_cos = -2.0
        for f in range(nf):
            fn, _ = _face_plane(H, hid, h, f)
            c = dot(fn, n)
            if c > best_cos:
                best_cos = c
                best = f
        on_face = best_cos >= FACE_COS
    else:
        # Deep: the part of the segment inside the polyhedron, then its face of least penetration.
        t_in0 = 0.0
        t_in1 = 1.0
        for f in range(nf):
            fn, fd = _face_plane(H, hid, h, f)
            t_in0, t_in1 = _clip_segment(s0, s1, fn, fd, t_in0, t_in1)
        if t_in0 > t_in1:
            t_in0 = t_in1 = _clamp01(dot(sub(on_seg, s0), seg) / seg_sq) if seg_sq > 0.0 else 0.0
        e0 = lerp(s0, s1, t_in0)
        e1 = lerp(s0, s1, t_in1)
        best = 0
        best_sep = -math.inf
        for f in range(nf):
            fn, fd = _face_plane(H, hid, h, f)
            sep = min(dot(fn, e0), dot(fn, e1)) - fd
            if sep > best_sep:
                best_sep = sep
                best = f
        n, fd = _face_plane(H, hid, h, best)
        deepest = e0 if dot(n, e0) <= dot(n, e1) else e1
        on_seg = deepest
        on_poly = mad(deepest, n, -(dot(n, deepest) - fd))
        dist = dot(n, deepest) - fd
        on_face = True

    wn = quat_rotate(qp, n)
    put3(normal, neg(wn) if flip else wn)
    out_a = pts_b if flip else pts_a
    out_b = pts_a if flip else pts_b
    fn, _ = _face_plane(H, hid, h, best)
    if on_face and seg_sq > 0.0 and dot(fn, seg) ** 2 <= PARALLEL_SIN * PARALLEL_SIN * seg_sq:
        if _face_pair(H, hid, h, best, s0, s1, r, margin, out_a, out_b, depths) == 2:
            put3(normal, neg(quat_rotate(qp, fn)) if flip else quat_rotate(qp, fn))
            for i in range(2):
                store3(out_a, i, add(pp, quat_rotate(qp, load3(out_a, i))))
                store3(out_b, i, add(pp, quat_rotate(qp, load3(out_b, i))))
            return 2
    on_cap = mad(on_seg, n, -r)
    _write_point(0, add(pp, quat_rotate(qp, on_poly)), add(pp, quat_rotate(qp, on_cap)), r - dist,
                 out_a, out_b, depths)
    return 1


@njit(cache=True)
def sphere_hull(pa, qa, prm_a, pb, qb, prm_b, H, margin, normal, pts_a, pts_b, depths):
    """Sphere A against hull B: the sphere centre as a zero-length segment in ``_polyhedron_segment``
    (GJK closest point while outside, face of least penetration inside)."""
    return _polyhedron_segment(pb, qb, H, int(prm_b[0]), (0.0, 0.0, 0.0), pa, pa, prm_a[0], margin, True,
                               normal, pts_a, pts_b, depths)


@njit(cache=True)
def box_capsule(pa, qa, prm_a, pb, qb, prm_b, H, margin, normal, pts_a, pts_b, depths):
    """Box A against capsule B, the box as a polyhedron in ``_polyhedron_segment`` (GJK while separated,
    face of least penetration when the segment crosses the box, two points when lying on a face)."""
    c0, c1 = _capsule_segment(pb, qb, prm_b)
    return _polyhedron_segment(pa, qa, H, -1, (prm_a[0], prm_a[1], prm_a[2]), c0, c1, prm_b[0], margin,
                               False, normal, pts_a, pts_b, depths)


@njit(cache=True)
def capsule_hull(pa, qa, prm_a, pb, qb, prm_b, H, margin, normal, pts_a, pts_b, depths):
    """Capsule A against hull B through ``_polyhedron_segment`` (as ``box_capsule``, normal reversed)."""
    c0, c1 = _capsule_segment(pa, qa, prm_a)
    return _polyhedron_segment(pb, qb, H, int(prm_b[0]), (0.0, 0.0, 0.0), c0, c1, prm_a[0], margin, True,
                               normal, pts_a, pts_b, depths)
