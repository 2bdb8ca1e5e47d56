"""Narrow-phase pair tests for the rounded shapes: spheres and capsules against everything.

A sphere is a point and a capsule a segment, each inflated by its radius, so every test here finds the
closest points of the cores (point, segment, box or hull) and pushes them out by the radii.

All functions share the signature of ``docs/architecture.md`` ("Pair test signature"): shape A has the
lower kind, the unit ``normal`` points from A to B, ``pts_a``/``pts_b`` are world points on the surfaces
of A and of B, ``depths[i] = dot(pts_a[i] - pts_b[i], normal)`` is positive when overlapping and down to
``-margin`` for speculative contacts, and the return value is the number of points (0 when the shapes
are farther apart than ``margin``).

Polyhedra (box and hull) are handled by one routine, ``_polyhedron_segment``, through the accessors of
``core.gjk`` (``hid < 0`` is a box): GJK for the closest points while separated; once the core segment
crosses the polyhedron, the separating axis test over the faces of their Minkowski sum (the
polyhedron's faces and its edges crossed with the segment; Gottschalk et al. 1996; van den Bergen 2003,
§4.3.1), which gives the exact shortest way out; and a two-point manifold when a capsule lies along a
face, so that it rests there stably: the capsule's underside clipped by the side planes of the face
(Sutherland & Hodgman 1974, reduced to a segment: Cyrus & Beck 1978).

Every contact point lies exactly on its shape (within rounding), also for a capsule tilted on a face or
on another capsule, and the deepest point's depth is the exact overlap along the normal: moving B by
that depth along the normal leaves the shapes just touching.

Tracing (``narrow_trace.py``): when the ``trace`` buffer has rows, each test records the closest points
of the two cores and their distance (sphere–box in the box's frame, the polyhedron tests in the
polyhedron's, the others in the world), GJK its simplex at each iteration, and the penetration axis
search its every axis with the one it chose. An ordinary step passes a buffer without rows.
"""

from __future__ import annotations

import math

from .bounding_volumes import closest_point_aabb
from .gjk import gjk_segment_polyhedron
from .jit import helper
from .narrow_trace import AXIS, CHOSEN, EDGE, FACE_A, FACE_B, record, record_closest, record_frame, tracing
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
# Sine below which an edge counts as parallel to a capsule's core in the penetration axis search.
PARALLEL_EPS = 1e-9


@helper
def _write_point(i, a, b, depth, pts_a, pts_b, depths):
    store3(pts_a, i, a)
    store3(pts_b, i, b)
    depths[i] = depth


@helper
def _capsule_segment(p, q, prm):
    """World end points of a capsule's core segment, from (0, -hh, 0) to (0, hh, 0) in its frame."""
    axis = quat_rotate(q, (0.0, prm[1], 0.0))
    return sub(p, axis), add(p, axis)


@helper
def _clamp01(x):
    return min(max(x, 0.0), 1.0)


@helper
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


@helper
def _round_point(ca, ra, cb, rb, n_default, margin, normal, pts_a, pts_b, depths, trace):
    """One contact between balls of radii ``ra`` about ``ca`` and ``rb`` about ``cb`` (the closest points
    of the cores); ``n_default`` is the normal used when the centres coincide."""
    d = sub(cb, ca)
    dist = length(d)
    if tracing(trace):
        record_closest(trace, ca, cb, dist)
    if dist - ra - rb > margin:
        return 0
    n = scale(d, 1.0 / dist) if dist > EPS else n_default
    put3(normal, n)
    _write_point(int(0), mad(ca, n, ra), mad(cb, n, -rb), ra + rb - dist, pts_a, pts_b, depths)
    return 1


@helper
def sphere_sphere(pa, qa, prm_a, pb, qb, prm_b, H, margin, normal, pts_a, pts_b, depths, trace):
    """Two spheres: the normal joins the centres (+y when they coincide), depth ``ra + rb - |pb - pa|``."""
    return _round_point(pa, prm_a[0], pb, prm_b[0], (0.0, 1.0, 0.0), margin, normal, pts_a, pts_b, depths,
                        trace)


@helper
def sphere_capsule(pa, qa, prm_a, pb, qb, prm_b, H, margin, normal, pts_a, pts_b, depths, trace):
    """Sphere A against capsule B: the sphere centre against the point of the capsule's segment closest to
    it (Ericson 2004, §5.1.2). A centre on the segment is pushed out perpendicular to the axis."""
    b0, b1 = _capsule_segment(pb, qb, prm_b)
    ab = sub(b1, b0)
    t = _clamp01(dot(sub(pa, b0), ab) / length_sq(ab))
    n_default = neg(any_perpendicular(normalize(ab)))
    return _round_point(pa, prm_a[0], lerp(b0, b1, t), prm_b[0], n_default, margin,
                        normal, pts_a, pts_b, depths, trace)


@helper
def sphere_box(pa, qa, prm_a, pb, qb, prm_b, H, margin, normal, pts_a, pts_b, depths, trace):
    """Sphere A against box B (Ericson 2004, §5.1.3): the closest box point is the sphere centre clamped
    to the box in the box's frame, where the oriented box is an AABB (``bounding_volumes``). A centre
    inside the box is pushed out through the face of least penetration, with depth (distance to that
    face) + radius. Traced in the box's frame: the centre, the closest box point and their distance
    (negative inside the box: the gap to the nearest face)."""
    if tracing(trace):
        record_frame(trace, pb, qb)
    r = prm_a[0]
    h = (prm_b[0], prm_b[1], prm_b[2])
    c = quat_inv_rotate(qb, sub(pa, pb))
    q = closest_point_aabb(c, neg(h), h)
    d = sub(c, q)
    dist_sq = length_sq(d)
    if dist_sq > (r + margin) * (r + margin):
        if tracing(trace):
            record_closest(trace, c, q, math.sqrt(dist_sq))
        return 0
    if dist_sq > EPS * EPS:
        dist = math.sqrt(dist_sq)
        out = scale(d, 1.0 / dist)
        depth = r - dist
        if tracing(trace):
            record_closest(trace, c, q, dist)
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
        if tracing(trace):
            record_closest(trace, c, q, -gap)
    # ``out`` points from the box to the sphere; the contact normal goes from A (sphere) to B (box).
    n = neg(quat_rotate(qb, out))
    put3(normal, n)
    _write_point(int(0), mad(pa, n, r), add(pb, quat_rotate(qb, q)), depth, pts_a, pts_b, depths)
    return 1


@helper
def _rim_point(p0, p1, s, r, d):
    """The point of the capsule (core ``p0 p1``, radius ``r``) farthest along unit ``d`` among those whose
    nearest core point is ``lerp(p0, p1, s)``: the pole of an end cap when ``s`` is an end and ``d``
    points away from the core there, else the point of that cross-section's rim nearest ``d``."""
    ax = sub(p1, p0)
    c = lerp(p0, p1, s)
    ad = dot(ax, d)
    if (s <= 0.0 and ad <= 0.0) or (s >= 1.0 and ad >= 0.0):
        return mad(c, d, r)
    return mad(c, normalize(mad(d, ax, -ad / length_sq(ax))), r)


@helper
def _nearest_param(p, q0, q1):
    """Parameter in [0, 1] of the point of segment ``q0 q1`` nearest the point ``p`` (Ericson 2004,
    §5.1.2)."""
    dq = sub(q1, q0)
    return _clamp01(dot(sub(p, q0), dq) / length_sq(dq))


@helper
def _overlap_end(a0, a1, b0, b1, w, upper):
    """Core parameters ``(s, t)`` and key of one end of the overlap of two nearly parallel cores along
    the unit axis ``w``: the lower ends' higher one (the upper ends' lower one when ``upper``), paired
    with the nearest point of the other core; the key is ``w`` dotted with the pair's sum."""
    wa0 = dot(w, a0)
    wa1 = dot(w, a1)
    wb0 = dot(w, b0)
    wb1 = dot(w, b1)
    sa = 1.0 if (wa1 > wa0) == upper else 0.0
    tb = 1.0 if (wb1 > wb0) == upper else 0.0
    end_a = wa1 if sa == 1.0 else wa0
    end_b = wb1 if tb == 1.0 else wb0
    if (end_a < end_b) == upper:
        s = sa
        t = _nearest_param(lerp(a0, a1, s), b0, b1)
    else:
        t = tb
        s = _nearest_param(lerp(b0, b1, t), a0, a1)
    return s, t, dot(w, add(lerp(a0, a1, s), lerp(b0, b1, t)))


@helper
def capsule_capsule(pa, qa, prm_a, pb, qb, prm_b, H, margin, normal, pts_a, pts_b, depths, trace):
    """Two capsules: closest points of their segments (Ericson 2004, §5.1.9), pushed out by the radii.

    When the segments are parallel (within ``PARALLEL_SIN``) and overlap along their length, the two ends
    of the overlap become contacts along the same normal, so that a capsule lying on another rests on
    two points; otherwise one point. Each end of the overlap along the cores' mean axis is an end of one
    core paired with its nearest point on the other (symmetric in A and B); when the closest pair has
    an end in it, it replaces the overlap end nearer to it, so that the deepest contact is exact. The
    surface points are the rim (or cap pole) points of those core points farthest along the normal,
    so that they lie exactly on the capsules."""
    ra = prm_a[0]
    rb = prm_b[0]
    a0, a1 = _capsule_segment(pa, qa, prm_a)
    b0, b1 = _capsule_segment(pb, qb, prm_b)
    s, t = closest_segment_segment(a0, a1, b0, b1)
    ca = lerp(a0, a1, s)
    cb = lerp(b0, b1, t)
    d = sub(cb, ca)
    dist = length(d)
    if tracing(trace):
        record_closest(trace, ca, cb, dist)
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
    lb_sq = length_sq(db)
    if length_sq(cross(da, db)) <= PARALLEL_SIN * PARALLEL_SIN * la_sq * lb_sq:
        ua = scale(da, 1.0 / math.sqrt(la_sq))
        ub = scale(db, 1.0 / math.sqrt(lb_sq))
        w = normalize(add(ua, ub) if dot(ua, ub) >= 0.0 else sub(ua, ub))
        s_lo, t_lo, key_lo = _overlap_end(a0, a1, b0, b1, w, bool(False))
        s_hi, t_hi, key_hi = _overlap_end(a0, a1, b0, b1, w, bool(True))
        # Keys are twice the position along w: the overlap must be longer than a thousandth of A.
        if key_hi - key_lo > 2e-3 * math.sqrt(la_sq):
            if not (0.0 < s < 1.0 and 0.0 < t < 1.0):
                key = dot(w, add(ca, cb))
                if key - key_lo <= key_hi - key:
                    s_lo, t_lo = s, t
                else:
                    s_hi, t_hi = s, t
            k = 0
            for i in range(2):
                ss = s_lo if i == 0 else s_hi
                tt = t_lo if i == 0 else t_hi
                on_a = _rim_point(a0, a1, ss, ra, n)
                on_b = _rim_point(b0, b1, tt, rb, neg(n))
                depth = dot(sub(on_a, on_b), n)
                if depth >= -margin:
                    _write_point(k, on_a, on_b, depth, pts_a, pts_b, depths)
                    k += 1
            if k == 2:
                return 2
    _write_point(int(0), mad(ca, n, ra), mad(cb, n, -rb), ra + rb - dist, pts_a, pts_b, depths)
    return 1


# ---------------------------------------------------------------------------------------------------
# Polyhedra (box: hid < 0 with half extents h; hull: hid into H), in the polyhedron's local frame.


@helper
def _face_count(H, hid):
    if hid < 0:
        return 6
    return H.face_count[hid]


@helper
def _box_plane(axis, sign, h):
    """The plane of the box face on ``axis`` (0, 1, 2) facing ``sign`` (±1): outward unit normal and
    offset, ``n·x = h[axis]``."""
    if axis == 0:
        return (sign, 0.0, 0.0), h[0]
    if axis == 1:
        return (0.0, sign, 0.0), h[1]
    return (0.0, 0.0, sign), h[2]


@helper
def _face_plane(H, hid, h, f):
    """Outward unit normal ``n`` and offset ``d`` (``n·x = d``) of face ``f`` (0-based within the shape).

    Box faces are ordered +x, -x, +y, -y, +z, -z."""
    if hid < 0:
        return _box_plane(f >> 1, 1.0 - 2.0 * (f & 1), h)
    g = H.face_start[hid] + f
    fn = H.face_normal
    return (fn[g, 0], fn[g, 1], fn[g, 2]), H.face_offset[g]


@helper
def _side_count(H, hid, f):
    if hid < 0:
        return 4
    return H.face_vcount[H.face_start[hid] + f]


@helper
def _side_plane(H, hid, h, f, j):
    """Plane ``(m, e)`` through edge ``j`` of face ``f``, perpendicular to the face, outward unit ``m``:
    points of the face's prism satisfy ``m·x <= e``. For a hull face (vertices counter-clockwise seen
    from outside) ``m = edge × n``."""
    if hid < 0:
        # The four side planes of a box face are the faces on its two tangent axes.
        return _box_plane(((f >> 1) + 1 + (j >> 1)) % 3, 1.0 - 2.0 * (j & 1), h)
    g = H.face_start[hid] + f
    n, _ = _face_plane(H, hid, h, f)
    vs = H.face_vstart[g]
    cnt = H.face_vcount[g]
    fv = H.face_verts
    verts = H.verts
    i0 = fv[vs + j]
    i1 = fv[vs + (j + 1) % cnt]
    v0 = (verts[i0, 0], verts[i0, 1], verts[i0, 2])
    v1 = (verts[i1, 0], verts[i1, 1], verts[i1, 2])
    m = normalize(cross(sub(v1, v0), n))
    return m, dot(m, v0)


@helper
def _edge_count(H, hid):
    if hid < 0:
        return 12
    return H.edge_count[hid]


@helper
def _cyclic(axis, t, a, b):
    """The vector with component ``t`` on ``axis`` and ``a``, ``b`` on the next two axes (cyclically)."""
    if axis == 0:
        return (t, a, b)
    if axis == 1:
        return (b, t, a)
    return (a, b, t)


@helper
def _edge(H, hid, h, k):
    """End points ``v0, v1`` of edge ``k`` and the outward unit normals ``n0, n1`` of its two faces.

    Box edge ``k`` runs along axis ``k >> 2`` at the signs ``k & 1`` and ``k & 2`` on the next two axes."""
    if hid < 0:
        axis = k >> 2
        si = 1.0 - 2.0 * (k & 1)
        sj = 1.0 - 2.0 * ((k >> 1) & 1)
        a = si * h[(axis + 1) % 3]
        b = sj * h[(axis + 2) % 3]
        return (_cyclic(axis, -h[axis], a, b), _cyclic(axis, h[axis], a, b), _cyclic(axis, 0.0, si, 0.0),
                _cyclic(axis, 0.0, 0.0, sj))
    e = H.edge_start[hid] + k
    v0 = load3(H.verts, H.edges[e, 0])
    v1 = load3(H.verts, H.edges[e, 1])
    return v0, v1, load3(H.face_normal, H.edge_faces[e, 0]), load3(H.face_normal, H.edge_faces[e, 1])


@helper
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


@helper
def _penetration_axis(H, hid, h, s0, s1, flip, trace):
    """The shortest translation that moves segment ``s0 s1`` out of the polyhedron, by the separating
    axis test over the face normals of the Minkowski sum of the polyhedron and the reversed segment
    (Gottschalk et al. 1996; van den Bergen 2003, §4.3.1): the polyhedron's faces, and the edges whose
    normal arc (Gauss map) crosses the great circle perpendicular to the segment, with the normal on
    that arc. Returns ``(overlap, axis, face, edge)``: the segment moves out by ``overlap`` along the
    outward unit ``axis``; ``face`` (or ``edge``, the other one -1) is the feature it leaves through.
    Traced: every axis, from A to B (``flip``: the segment is A), with separation −overlap."""
    best = math.inf
    axis = (0.0, 1.0, 0.0)
    face = -1
    edge = -1
    for f in range(_face_count(H, hid)):
        fn, fd = _face_plane(H, hid, h, f)
        ov = fd - min(dot(fn, s0), dot(fn, s1))
        if tracing(trace):
            record(trace, AXIS, FACE_B if flip else FACE_A, -1 if flip else f, f if flip else -1,
                   neg(fn) if flip else fn, -ov)
        if ov < best:
            best, axis, face = ov, fn, f
    u = sub(s1, s0)
    for k in range(_edge_count(H, hid)):
        v0, _, n0, n1 = _edge(H, hid, h, k)
        c0 = dot(n0, u)
        c1 = dot(n1, u)
        # Skip an edge whose arc misses the circle, or meets it at a face normal (a face of the sum
        # already), or lies along the segment (its parallelogram is flat and the neighbours cover it).
        if c0 * c1 >= 0.0 or min(abs(c0), abs(c1)) <= PARALLEL_EPS * length(u):
            continue
        a = normalize(add(scale(n0, abs(c1)), scale(n1, abs(c0))))
        ov = dot(a, v0) - min(dot(a, s0), dot(a, s1))
        if tracing(trace):
            record(trace, AXIS, EDGE, -1 if flip else k, k if flip else -1, neg(a) if flip else a, -ov)
        if ov < best:
            best, axis, face, edge = ov, a, -1, k
    return best, axis, face, edge


@helper
def _face_pair(H, hid, h, f, s0, s1, r, margin, pts_poly, pts_cap, depths):
    """Two contacts of the capsule (core ``s0 s1``, radius ``r``) lying along face ``f``, or 0.

    Seen along the face normal ``n``, the capsule's underside is a profile over the line in the face
    that runs under the core from its lower end: the lower cap's arc from its pole, then the cylinder's
    lowest line. That line is clipped to the face's prism (its side planes; Cyrus & Beck 1978) and the
    profile points over the two ends of the clipped part are the contacts on the capsule, projected
    onto the face for the polyhedron. Returns 2 with local points written, or 0 when fewer than two
    points lie within ``margin`` or the clipping cuts away the deepest point (under the lower end)."""
    n, d = _face_plane(H, hid, h, f)
    rising = dot(n, s0) <= dot(n, s1)
    lo, hi = (s0, s1) if rising else (s1, s0)
    seg = sub(hi, lo)
    seg_len = length(seg)
    u = scale(seg, 1.0 / seg_len)
    sin_t = dot(n, u)
    cos_t = math.sqrt(1.0 - sin_t * sin_t)
    e = scale(mad(u, n, -sin_t), 1.0 / cos_t)  # the core's direction within the face plane
    m = sub(scale(n, cos_t), scale(e, sin_t))  # outward normal of the cylinder's lowest line
    x_cap = r * sin_t
    span = x_cap + seg_len * cos_t
    far = mad(lo, e, span)
    t_lo = 0.0
    t_hi = 1.0
    for j in range(_side_count(H, hid, f)):
        sm, se = _side_plane(H, hid, h, f, j)
        # The slop keeps a segment lying exactly in a side plane (along an edge) from flickering out.
        t_lo, t_hi = _clip_segment(lo, far, sm, se + TOUCH_DIST, t_lo, t_hi)
    if t_hi <= t_lo or (t_hi - t_lo) * span <= 1e-6:
        return 0
    # Written in the order of the core's ends (s0 first), which exact ties in height must not change.
    k = 0
    top = d - dot(n, lo) + r
    for i in range(2):
        t = t_lo if (i == 0) == rising else t_hi
        x = t * span
        if x < x_cap:
            sp = x / r
            p = add(lo, scale(sub(scale(e, sp), scale(n, math.sqrt(1.0 - sp * sp))), r))
        else:
            p = mad(mad(lo, u, (x - x_cap) / cos_t), m, -r)
        depth = d - dot(n, p)
        if t == t_lo and depth < top - TOUCH_DIST:
            return 0
        if depth >= -margin:
            _write_point(k, mad(p, n, depth), p, depth, pts_poly, pts_cap, depths)
            k += 1
    return 2 if k == 2 else 0


@helper
def _polyhedron_segment(pp, qp, H, hid, h, c0, c1, r, margin, flip, normal, pts_a, pts_b, depths, trace):
    """Contacts between a polyhedron at ``pp, qp`` (box ``h`` if ``hid < 0``, else hull ``hid``) and the
    world segment ``c0 c1`` inflated by ``r`` (a capsule; a sphere when ``c0 == c1``).

    Separated cores: GJK closest points (Gilbert, Johnson & Keerthi 1988), one contact at depth
    ``r - distance``. Crossing cores: the penetration axis of ``_penetration_axis`` (exact for a
    segment, so that moving the capsule by the depth along the normal just separates the shapes), one
    contact at the lower end of the core (a face) or where the core passes under the edge. Shapes apart
    also get a speculative point under each end of the core within ``margin`` (up to 3 points). When the
    normal is a face's and the core lies parallel to it, two contacts from ``_face_pair`` instead, so
    that a capsule lying on a face rests there stably. The normal points from the polyhedron to the
    segment, reversed when ``flip`` (the segment is shape A). Traced in the polyhedron's frame: GJK's
    simplices and the closest points of the cores, or the penetration axes and the chosen one."""
    if tracing(trace):
        record_frame(trace, pp, qp)
    s0 = quat_inv_rotate(qp, sub(c0, pp))
    s1 = quat_inv_rotate(qp, sub(c1, pp))
    dist, on_seg, on_poly = gjk_segment_polyhedron(s0, s1, H, hid, h, trace)
    if dist > TOUCH_DIST and tracing(trace):
        record_closest(trace, on_seg if flip else on_poly, on_poly if flip else on_seg, dist)
    if dist - r > margin:
        return 0
    face = -1
    if dist > TOUCH_DIST:
        n = scale(sub(on_seg, on_poly), 1.0 / dist)
        best_cos = FACE_COS
        for f in range(_face_count(H, hid)):
            fn, _ = _face_plane(H, hid, h, f)
            if dot(fn, n) >= best_cos:
                best_cos = dot(fn, n)
                face = f
        on_cap = mad(on_seg, n, -r)
    else:
        ov, n, face, edge = _penetration_axis(H, hid, h, s0, s1, flip, trace)
        if tracing(trace):
            if face >= 0:
                record(trace, CHOSEN, FACE_B if flip else FACE_A, -1 if flip else face, face if flip else -1,
                       neg(n) if flip else n, -ov)
            else:
                record(trace, CHOSEN, EDGE, -1 if flip else edge, edge if flip else -1, neg(n) if flip else n,
                       -ov)
        if face >= 0:
            _, fd = _face_plane(H, hid, h, face)
            low = s0 if dot(n, s0) <= dot(n, s1) else s1
            on_poly = mad(low, n, fd - dot(n, low))
            on_cap = mad(low, n, -r)
        else:
            v0, v1, _, _ = _edge(H, hid, h, edge)
            te, ts = closest_segment_segment(v0, v1, s0, s1)
            on_poly = lerp(v0, v1, te)
            on_cap = mad(lerp(s0, s1, ts), n, -r)

    out_a = pts_b if flip else pts_a
    out_b = pts_a if flip else pts_b
    if face >= 0:
        fn, _ = _face_plane(H, hid, h, face)
        seg = sub(s1, s0)
        seg_sq = length_sq(seg)
        if seg_sq > 0.0 and dot(fn, seg) ** 2 <= PARALLEL_SIN * PARALLEL_SIN * seg_sq:
            if _face_pair(H, hid, h, face, s0, s1, r, margin, out_a, out_b, depths) == 2:
                wn = quat_rotate(qp, fn)
                put3(normal, neg(wn) if flip else wn)
                for i in range(2):
                    store3(out_a, i, add(pp, quat_rotate(qp, load3(out_a, i))))
                    store3(out_b, i, add(pp, quat_rotate(qp, load3(out_b, i))))
                return 2
    wn = quat_rotate(qp, n)
    put3(normal, neg(wn) if flip else wn)
    _write_point(int(0), add(pp, quat_rotate(qp, on_poly)), add(pp, quat_rotate(qp, on_cap)),
                 dot(sub(on_poly, on_cap), n), out_a, out_b, depths)
    k = 1
    if dist > r:
        # Apart (a speculative contact): a full speculative manifold, not just the closest point. The
        # plane through ``on_poly`` with normal n separates the shapes (n is the closest points'
        # direction), and the capsule is the hull of its two end spheres, so a point under each end
        # keeps the whole capsule on its side of that plane (Catto, "Continuous Collision", GDC 2013:
        # speculative contacts). With the closest point alone, a fast tilted capsule was stopped at one
        # end, turned about it, and its other end swept through a thin wall. The point under an end is
        # the end of the cylinder's lowest line (on the surface, r from the end across the axis); an end
        # straight behind the other along n adds nothing. Its partner on the polyhedron is ``on_poly``
        # (a surface point; the depth is measured along n).
        axis = sub(s1, s0)
        axis = scale(axis, 1.0 / math.sqrt(max(length_sq(axis), 1e-300)))
        across = mad(n, axis, -dot(n, axis))
        across_len = math.sqrt(length_sq(across))
        for i in range(2):
            s = s0 if i == 0 else s1
            if length_sq(sub(s, on_seg)) <= 1e-12 or across_len < 1e-9:
                continue
            p = mad(s, across, -r / across_len)
            sep = dot(n, sub(p, on_poly))
            if sep <= margin:
                _write_point(k, add(pp, quat_rotate(qp, on_poly)), add(pp, quat_rotate(qp, p)), -sep, out_a,
                             out_b, depths)
                k += 1
    return k


@helper
def sphere_hull(pa, qa, prm_a, pb, qb, prm_b, H, margin, normal, pts_a, pts_b, depths, trace):
    """Sphere A against hull B: the sphere centre as a zero-length segment in ``_polyhedron_segment``
    (GJK closest point while outside, nearest face plane inside)."""
    return _polyhedron_segment(pb, qb, H, int(prm_b[0]), (0.0, 0.0, 0.0), pa, pa, prm_a[0], margin,
                               bool(True), normal, pts_a, pts_b, depths, trace)


@helper
def box_capsule(pa, qa, prm_a, pb, qb, prm_b, H, margin, normal, pts_a, pts_b, depths, trace):
    """Box A against capsule B, the box as a polyhedron in ``_polyhedron_segment`` (GJK while separated,
    penetration axis when the segment crosses the box, two points when lying on a face)."""
    c0, c1 = _capsule_segment(pb, qb, prm_b)
    return _polyhedron_segment(pa, qa, H, int(-1), (prm_a[0], prm_a[1], prm_a[2]), c0, c1, prm_b[0], margin,
                               bool(False), normal, pts_a, pts_b, depths, trace)


@helper
def capsule_hull(pa, qa, prm_a, pb, qb, prm_b, H, margin, normal, pts_a, pts_b, depths, trace):
    """Capsule A against hull B through ``_polyhedron_segment`` (as ``box_capsule``, normal reversed)."""
    c0, c1 = _capsule_segment(pa, qa, prm_a)
    return _polyhedron_segment(pb, qb, H, int(prm_b[0]), (0.0, 0.0, 0.0), c0, c1, prm_a[0], margin,
                               bool(True), normal, pts_a, pts_b, depths, trace)
