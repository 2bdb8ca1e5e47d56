"""Pair tests between polyhedra: box–box, box–hull and hull–hull, from the separating axis test's choice.

Every test follows the same plan (Box2D's ``b2CollidePolygons`` lifted to 3D, Gregorius, "The Separating
Axis Test between Convex Polyhedra", GDC 2013):

1. Work in A's local frame: B is placed there by the relative transform, so A's faces and vertices are
   read as stored.
2. The separating axis test (``sat.py``): face queries for the faces of A and of B, an edge query for
   the edge pairs that build faces of the Minkowski difference; any separation beyond ``margin`` means
   no contact. Boxes have their own closed-form 15-axis test; box–hull builds the box's vertices, faces
   and edges in the hull table's format and runs the hull–hull test.
3. Choose the axis with the largest separation, preferring face axes over edge axes unless the edge is
   clearly better (``sat.edge_wins``), so that a resting contact does not flicker between a face
   manifold and a single edge point from one step to the next. Between a face of A and a face of B the
   larger separation wins (ties: A): that keeps the result symmetric when A and B are exchanged, and
   nearly parallel faces clip to the same patch whichever is the reference.
4. Face axis: the face that won is the reference face; the face of the other body most anti-parallel to
   its normal is the incident face. Clip the incident polygon against the side planes of the reference face
   (Sutherland–Hodgman, ``clipping.py``), keep the points below the reference plane (within ``margin``)
   and reduce them to at most four (deepest point first, then the largest area). Edge axis: one point, at
   the closest points of the two edges (Ericson 2004, §5.1.9).

All tests share ``core.narrowphase``'s pair-test signature and conventions: normal from A to B, points on
both surfaces, ``depths[i] = dot(pts_a[i] - pts_b[i], normal)`` positive when overlapping.

Tracing (``narrow_trace.py``): when the ``trace`` buffer has rows, each test records, in A's frame, every
axis it tested with its separation (``sat.py``), the axis it chose, the reference and incident faces, the
polygon after each clip plane, the points removed above the reference face and by the reduction to four,
or the two edges of an edge contact. In an ordinary step the buffer has no rows and every
``if tracing(trace)`` is one branch not taken.
"""

from __future__ import annotations

import numpy as np
from numba import types

from .clipping import clip_against_plane, clip_to_face, reduce_to_four
from .jit import helper
from .narrow_trace import (
    ABOVE,
    CHOSEN,
    CLIP,
    EDGE,
    EDGE_A,
    EDGE_B,
    FACE_A,
    FACE_B,
    FALLBACK,
    IDENTITY,
    INCIDENT,
    KEPT,
    REDUCTION,
    REFERENCE,
    REMOVED,
    record,
    record_closest,
    record_frame,
    record_polygon,
    record_segment,
    tracing,
)
from .records import HullArrays
from .refcount import stack_matrix
from .rounded import closest_segment_segment
from .sat import box_box_axes, edge_query, edge_wins, face_query
from .vecmath import (
    add,
    cross,
    dot,
    length,
    length_sq,
    lerp,
    load3,
    mad,
    neg,
    quat_conj,
    quat_inv_rotate,
    quat_mul,
    quat_rotate,
    quat_to_mat,
    scale,
    store3,
    sub,
)

# The box as a polytope, vertex i at (±hx, ±hy, ±hz) with the sign of axis k positive when bit k of i is
# set; faces -x, +x, -y, +y, -z, +z, each counter-clockwise seen from outside.
_BOX_FACE_VERTS = np.array([2, 0, 4, 6, 7, 5, 1, 3, 4, 0, 1, 5, 7, 3, 2, 6, 1, 0, 2, 3, 7, 6, 4, 5],
                           dtype=np.int64)
_BOX_NORMALS = np.array([[-1.0, 0.0, 0.0], [1.0, 0.0, 0.0], [0.0, -1.0, 0.0], [0.0, 1.0, 0.0],
                         [0.0, 0.0, -1.0], [0.0, 0.0, 1.0]])


def _box_edges() -> tuple[np.ndarray, np.ndarray]:
    """Edges (a, b), a < b, of the box faces above, with the face running a → b first (as in ``hull.py``)."""
    directed = {}
    for f in range(6):
        loop = _BOX_FACE_VERTS[4 * f: 4 * f + 4]
        for k in range(4):
            directed[(int(loop[k]), int(loop[(k + 1) % 4]))] = f
    pairs = sorted((a, b) for (a, b) in directed if a < b)
    return (np.array(pairs, dtype=np.int64),
            np.array([(directed[(a, b)], directed[(b, a)]) for a, b in pairs], dtype=np.int64))


_BOX_EDGES, _BOX_EDGE_FACES = _box_edges()


# ---------------------------------------------------------------------------------------------------
# Shared pieces: the two kinds of manifold (the clipping and the reduction to four points are in
# clipping.py).


@helper
def _store_normal(normal, n):
    """Write vector tuple ``n`` into the (3,) array ``normal``."""
    normal[0] = n[0]
    normal[1] = n[1]
    normal[2] = n[2]


@helper
def _closest_on_face(ref, nref, n, y):
    """The point of the convex polygon ``ref[:nref]`` (CCW around ``n``) closest to ``y``, a point of its
    plane: ``y`` itself when inside (always so after clipping), else the closest point of its edges."""
    best = y
    best_d = np.inf
    for i in range(nref):
        v0 = load3(ref, i)
        v1 = load3(ref, (i + 1) % nref)
        e = sub(v1, v0)
        if dot(cross(e, n), sub(y, v0)) > 0.0:
            t = min(max(dot(sub(y, v0), e) / max(dot(e, e), 1e-300), 0.0), 1.0)
            c = mad(v0, e, t)
            dist = length_sq(sub(y, c))
            if dist < best_d:
                best_d = dist
                best = c
    return best


@helper
def _emit_face_points(clipped, kept, n, flip, frame_p, frame_q, normal, pts_a, pts_b, depths, trace):
    """Write a face contact's manifold: the ``kept`` rows of ``clipped`` (x, y, z, depth: points of the
    incident body in a local frame, with their depths below the reference plane ``n``), reduced to at
    most four, mapped to the world by ``frame_p``, ``frame_q``. Each point's partner on the reference
    body is its projection on the reference plane, x + depth·n. ``flip``: the reference face belongs to
    B, so the normal is reversed and the two point sets exchanged. Returns the number of points.
    Traced: the kept points (KEPT) and those the reduction leaves out."""
    depth = clipped[:, 3]
    if tracing(trace):
        record_polygon(trace, KEPT, 0, clipped, kept, n, 0.0, IDENTITY)
    chosen = (0, 1, 2, 3) if kept <= 4 else reduce_to_four(clipped, kept, n)
    if kept > 4 and tracing(trace):
        for idx in range(kept):
            if idx != chosen[0] and idx != chosen[1] and idx != chosen[2] and idx != chosen[3]:
                record(trace, REMOVED, REDUCTION, 0, 0, load3(clipped, idx), depth[idx])
    nw = quat_rotate(frame_q, n)
    _store_normal(normal, neg(nw) if flip else nw)
    out = 0
    for slot in range(4):
        idx = chosen[slot]
        if idx < 0 or idx >= kept:
            continue
        repeated = False
        for prev in range(slot):
            repeated = repeated or chosen[prev] == idx
        if repeated:
            continue
        on_inc = add(frame_p, quat_rotate(frame_q, load3(clipped, idx)))
        on_ref = mad(on_inc, nw, depth[idx])
        if flip:
            store3(pts_a, out, on_inc)
            store3(pts_b, out, on_ref)
        else:
            store3(pts_a, out, on_ref)
            store3(pts_b, out, on_inc)
        depths[out] = depth[idx]
        out += 1
    return out


@helper
def _face_contact(ref, nref, n, d, poly, npoly, spare, margin, flip, frame_p, frame_q, normal, pts_a,
                  pts_b, depths, trace):
    """Manifold from a reference face (polygon ``ref[:nref]``, plane ``n·x = d``) and an incident polygon
    ``poly[:npoly]`` of the other body, all in one local frame (``frame_p``, ``frame_q`` map it to the
    world): Sutherland–Hodgman clipping, then the points within ``margin`` below the reference plane
    (``_emit_face_points``). The polygon arrays have four columns: the fourth of the clipped one
    receives the points' depths. Returns the number of points (0 when none is within ``margin``)."""
    clipped, m = clip_to_face(ref, nref, n, poly, npoly, spare, trace)
    depth = clipped[:, 3]
    kept = int(0)  # an int64 from the start: a literal 0 here compiles _emit_face_points twice
    for k in range(m):
        x = load3(clipped, k)
        s = d - dot(n, x)
        if s >= -margin:
            store3(clipped, kept, x)  # compacted in place: kept <= k
            depth[kept] = s
            kept += 1
        elif tracing(trace):
            record(trace, REMOVED, ABOVE, 0, 0, x, s)
    if kept == 0:
        return 0
    return _emit_face_points(clipped, kept, n, flip, frame_p, frame_q, normal, pts_a, pts_b, depths, trace)


@helper
def _box_face_contact(cf, n, u, v, hu, hv, poly, spare, margin, flip, frame_p, frame_q, normal, pts_a,
                      pts_b, depths, trace):
    """Face contact of two boxes: the incident face ``poly[:4]`` clipped to the reference face, a
    rectangle of centre ``cf``, normal ``n`` and unit axes ``u``, ``v`` (half sizes ``hu``, ``hv``). In
    the face's own coordinates (x·u, x·v, x·n) the four side planes are x_u = ±hu and x_v = ±hv, so each
    Sutherland–Hodgman stage compares one coordinate (the 2D clipping of Box2D's polygon collider).
    Same conventions and result as ``_face_contact``; traced likewise (mapped back to A's frame)."""
    for c in range(4):
        x = sub(load3(poly, c), cf)
        store3(poly, c, (dot(x, u), dot(x, v), dot(x, n)))
    m = clip_against_plane(poly, int(4), spare, (1.0, 0.0, 0.0), hu)
    _trace_box_clip(trace, 0, spare, m, cf, u, v, n, hu)
    m = clip_against_plane(spare, m, poly, (-1.0, 0.0, 0.0), hu)
    _trace_box_clip(trace, 1, poly, m, cf, u, v, n, hu)
    m = clip_against_plane(poly, m, spare, (0.0, 1.0, 0.0), hv)
    _trace_box_clip(trace, 2, spare, m, cf, u, v, n, hv)
    m = clip_against_plane(spare, m, poly, (0.0, -1.0, 0.0), hv)
    _trace_box_clip(trace, 3, poly, m, cf, u, v, n, hv)
    kept = int(0)
    for k in range(m):
        x = load3(poly, k)
        if -x[2] >= -margin:
            store3(poly, kept, mad(mad(mad(cf, u, x[0]), v, x[1]), n, x[2]))  # kept <= k
            poly[kept, 3] = -x[2]
            kept += 1
        elif tracing(trace):
            record(trace, REMOVED, ABOVE, 0, 0, mad(mad(mad(cf, u, x[0]), v, x[1]), n, x[2]), -x[2])
    if kept == 0:
        return 0
    return _emit_face_points(poly, kept, n, flip, frame_p, frame_q, normal, pts_a, pts_b, depths, trace)


_V3 = types.UniTuple(types.float64, 3)


@helper(types.void(types.float64[:, ::1], types.int64, types.float64[:, :], types.int64, _V3, _V3, _V3, _V3,
                   types.float64))  # one copy for the four planes' constant numbers
def _trace_box_clip(trace, j, poly, m, cf, u, v, n, half):
    """Record the polygon ``poly[:m]`` (face coordinates of ``_box_face_contact``) after its side plane
    ``j`` (0: +u, 1: −u, 2: +v, 3: −v, at ``half`` from the centre ``cf``), plane and vertices in A's
    frame."""
    if not tracing(trace):
        return
    side = u if j < 2 else v
    if j == 1 or j == 3:
        side = scale(side, -1.0)
    record_polygon(trace, CLIP, j, poly, m, side, half + dot(side, cf), (cf, u, v, n))


@helper
def _fallback_contact(ref, nref, n, d, poly, margin, flip, frame_p, frame_q, normal, pts_a, pts_b, depths,
                      trace):
    """One point when clipping comes out empty (the bodies overlap only near a corner of the reference
    face): the deepest vertex ``poly[0]`` of the incident body, and the point of the reference face
    closest to it. Same conventions as ``_face_contact``."""
    x = load3(poly, 0)
    s = d - dot(n, x)
    if tracing(trace):
        record(trace, FALLBACK, 0, 0, 0, x, s)
    if s < -margin:
        return 0
    y = _closest_on_face(ref, nref, n, mad(x, n, s))
    nw = quat_rotate(frame_q, n)
    _store_normal(normal, neg(nw) if flip else nw)
    on_inc = add(frame_p, quat_rotate(frame_q, x))
    on_ref = add(frame_p, quat_rotate(frame_q, y))
    if flip:
        store3(pts_a, 0, on_inc)
        store3(pts_b, 0, on_ref)
    else:
        store3(pts_a, 0, on_ref)
        store3(pts_b, 0, on_inc)
    depths[0] = s
    return 1


@helper
def _edge_contact(a0, a1, b0, b1, axis, frame_p, frame_q, normal, pts_a, pts_b, depths, trace):
    """One point at the closest points of edge a0a1 (on A) and edge b0b1 (on B), in a local frame mapped
    to the world by ``frame_p``, ``frame_q``; ``axis`` is the unit normal from A to B. Traced: the two
    edges and their closest points."""
    s, t = closest_segment_segment(a0, a1, b0, b1)
    ca = lerp(a0, a1, s)
    cb = lerp(b0, b1, t)
    if tracing(trace):
        record_segment(trace, EDGE_A, a0, a1)
        record_segment(trace, EDGE_B, b0, b1)
        record_closest(trace, ca, cb, length(sub(cb, ca)))
    _store_normal(normal, quat_rotate(frame_q, axis))
    store3(pts_a, 0, add(frame_p, quat_rotate(frame_q, ca)))
    store3(pts_b, 0, add(frame_p, quat_rotate(frame_q, cb)))
    depths[0] = dot(sub(ca, cb), axis)
    return 1


# ---------------------------------------------------------------------------------------------------
# Box–box.


@helper
def _box_face(c, n, e1, h1, h2, out):
    """The 4 corners of the box face with centre ``c``, outward normal ``n``, in-plane unit axis ``e1``
    (half size ``h1``) and ``n × e1`` (half size ``h2``), counter-clockwise seen from outside."""
    e2 = cross(n, e1)
    u = scale(e1, h1)
    v = scale(e2, h2)
    store3(out, 0, add(add(c, u), v))
    store3(out, 1, add(sub(c, u), v))
    store3(out, 2, sub(sub(c, u), v))
    store3(out, 3, sub(add(c, u), v))


@helper
def _box_support_edge(c, axes, h, skip, direction):
    """Centre of the edge of a box (centre ``c``, unit ``axes``, half extents ``h``) parallel to axis
    ``skip`` that lies farthest along ``direction``."""
    p = c
    for k in range(3):
        if k != skip:
            s = h[k] if dot(axes[k], direction) >= 0.0 else -h[k]
            p = mad(p, axes[k], s)
    return p


@helper
def box_box(pa, qa, prm_a, pb, qb, prm_b, H, margin, normal, pts_a, pts_b, depths, trace):
    """Contact manifold of two oriented boxes: the 15-axis separating axis test (``sat.box_box_axes``,
    Ericson 2004, §4.4.1) in A's frame, then face clipping or an edge–edge point (see the module
    docstring). Traced (``narrow_trace.py``): the axes as ``box_box_axes`` records them, and what the
    module docstring lists."""
    ha = (prm_a[0], prm_a[1], prm_a[2])
    hb = (prm_b[0], prm_b[1], prm_b[2])
    q = quat_mul(quat_conj(qa), qb)
    t = quat_inv_rotate(qa, sub(pb, pa))
    r = quat_to_mat(q)
    eb = ((r[0], r[3], r[6]), (r[1], r[4], r[7]), (r[2], r[5], r[8]))  # B's axes in A's frame
    ea = ((1.0, 0.0, 0.0), (0.0, 1.0, 0.0), (0.0, 0.0, 1.0))

    separated, sep_a, face_a, sep_b, face_b, sep_e, edge_i, edge_j = box_box_axes(ha, hb, t, eb, margin, pa,
                                                                                  qa, trace)
    if separated:
        return 0
    use_b = sep_b > sep_a
    sep_face = sep_b if use_b else sep_a
    if edge_i >= 0 and edge_wins(sep_face, sep_e):
        axis = cross(ea[edge_i], eb[edge_j])
        axis = scale(axis, 1.0 / length(axis))
        if dot(axis, t) < 0.0:
            axis = neg(axis)
        ca = _box_support_edge((0.0, 0.0, 0.0), ea, ha, edge_i, axis)
        cb = _box_support_edge(t, eb, hb, edge_j, neg(axis))
        da = scale(ea[edge_i], ha[edge_i])
        db = scale(eb[edge_j], hb[edge_j])
        if tracing(trace):
            record(trace, CHOSEN, EDGE, edge_i, edge_j, axis, sep_e)
        return _edge_contact(sub(ca, da), add(ca, da), sub(cb, db), add(cb, db), axis, pa, qa, normal,
                             pts_a, pts_b, depths, trace)

    # Face contact, in A's frame: reference box R (axes er, half extents hr, centre cr), incident box I.
    if use_b:
        er, hr, cr, ei, hi, ci, k = eb, hb, t, ea, ha, (0.0, 0.0, 0.0), face_b
        n = eb[k] if dot(t, eb[k]) < 0.0 else neg(eb[k])
    else:
        er, hr, cr, ei, hi, ci, k = ea, ha, (0.0, 0.0, 0.0), eb, hb, t, face_a
        n = ea[k] if t[k] >= 0.0 else neg(ea[k])
    work = stack_matrix(22, 4)  # no allocation per pair of boxes (refcount.py)
    ref, poly, spare = work[:4], work[4:13], work[13:]
    u = (k + 1) % 3
    v = (k + 2) % 3
    cf = mad(cr, n, hr[k])
    j = 0
    best = -1.0
    for m in range(3):
        c = abs(dot(ei[m], n))
        if c > best:
            best = c
            j = m
    m_out = neg(ei[j]) if dot(ei[j], n) > 0.0 else ei[j]
    w = (j + 1) % 3
    _box_face(mad(ci, m_out, hi[j]), m_out, ei[w], hi[w], hi[(j + 2) % 3], poly)
    if tracing(trace):
        record(trace, CHOSEN, FACE_B if use_b else FACE_A, -1 if use_b else k, k if use_b else -1,
               neg(n) if use_b else n, sep_face)
        _box_face(cf, n, er[u], hr[u], hr[v], ref)
        record_polygon(trace, REFERENCE, 0, ref, 4, n, dot(n, cf), IDENTITY)
        record_polygon(trace, INCIDENT, 0, poly, 4, n, 0.0, IDENTITY)
    count = _box_face_contact(cf, n, er[u], er[v], hr[u], hr[v], poly, spare, margin, use_b, pa, qa, normal,
                              pts_a, pts_b, depths, trace)
    if count == 0:
        # Clipping can come out empty when the boxes overlap only near a corner of the reference face:
        # fall back on the incident box's deepest vertex.
        x = ci
        for m in range(3):
            x = mad(x, ei[m], -hi[m] if dot(ei[m], n) > 0.0 else hi[m])
        store3(poly, 0, x)
        _box_face(cf, n, er[u], hr[u], hr[v], ref)
        count = _fallback_contact(ref, int(4), n, dot(n, cf), poly, margin, use_b, pa, qa, normal, pts_a,
                                  pts_b, depths, trace)
    return count


# ---------------------------------------------------------------------------------------------------
# Hulls (and boxes as hulls).


@helper
def _box_as_hull(h):
    """The box of half extents ``h`` in the packed hull-table format of ``core.layout``, as hull 0."""
    verts = np.empty((8, 3))
    for i in range(8):
        verts[i, 0] = h[0] if i & 1 else -h[0]
        verts[i, 1] = h[1] if i & 2 else -h[1]
        verts[i, 2] = h[2] if i & 4 else -h[2]
    offsets = np.empty(6)
    for f in range(6):
        offsets[f] = h[f // 2]
    zero = np.zeros(1, np.int64)
    return HullArrays(zero, np.full(1, 8, np.int64), verts, zero.copy(), np.full(1, 6, np.int64),
                      _BOX_NORMALS.copy(), offsets, np.arange(0, 24, 4).astype(np.int64),
                      np.full(6, 4, np.int64), _BOX_FACE_VERTS.copy(), zero.copy(), np.full(1, 12, np.int64),
                      _BOX_EDGES.copy(), _BOX_EDGE_FACES.copy())


@helper
def _polygon(HX, f, verts, base, out):
    """Copy the vertices of face ``f`` of table ``HX`` from ``verts`` (rows relative to ``base``) into
    ``out``; returns the vertex count."""
    fvs, fvc, fverts = HX.face_vstart, HX.face_vcount, HX.face_verts
    for k in range(fvc[f]):
        g = fverts[fvs[f] + k] - base
        out[k, 0] = verts[g, 0]
        out[k, 1] = verts[g, 1]
        out[k, 2] = verts[g, 2]
    return fvc[f]


@helper
def _incident_face(HX, h, verts, vrow0, normals, frow0, n):
    """The incident face of hull ``h`` of table ``HX`` against a reference normal ``n``: among the faces
    through the hull's deepest vertex along -n, the one most anti-parallel to ``n`` (Gregorius 2013).
    Vertex ``k`` of the hull is row ``vrow0 + k`` of ``verts`` and face ``f`` has normal row
    ``frow0 + f`` of ``normals`` (both in the reference frame). Returns the face (0-based within the hull)
    and the deepest vertex."""
    v0, vn, f0, fn = HX.vert_start[h], HX.vert_count[h], HX.face_start[h], HX.face_count[h]
    fvs, fvc, fverts = HX.face_vstart, HX.face_vcount, HX.face_verts
    low = 0
    lo = np.inf
    for k in range(vn):
        s = dot(n, load3(verts, vrow0 + k))
        if s < lo:
            lo = s
            low = k
    best = 0
    best_c = np.inf
    for f in range(fn):
        touches = False
        for j in range(fvs[f0 + f], fvs[f0 + f] + fvc[f0 + f]):
            touches = touches or fverts[j] == v0 + low
        c = dot(load3(normals, frow0 + f), n)
        if touches and c < best_c:
            best_c = c
            best = f
    return best, load3(verts, vrow0 + low)


@helper
def _hull_hull_tables(HA, ia, pa, qa, HB, ib, pb, qb, margin, normal, pts_a, pts_b, depths, trace):
    """SAT between hull ``ia`` of table ``HA`` (at ``pa``, ``qa``) and hull ``ib`` of ``HB``, in A's frame
    (Gregorius 2013; see the module docstring). Writes the manifold, returns its point count. Traced:
    every face axis (feature: the face within its hull) and every edge pair that passed the Gauss-map
    test (features: the edges within their hulls), each oriented from A to B."""
    if tracing(trace):
        record_frame(trace, pa, qa)
    va0, van, vert_a = HA.vert_start[ia], HA.vert_count[ia], HA.verts
    fa0, fan, norm_a, off_a = HA.face_start[ia], HA.face_count[ia], HA.face_normal, HA.face_offset
    ea0, ean, edges_a, ef_a = HA.edge_start[ia], HA.edge_count[ia], HA.edges, HA.edge_faces
    vb0, vbn, vert_b = HB.vert_start[ib], HB.vert_count[ib], HB.verts
    fb0, fbn, norm_b, off_b = HB.face_start[ib], HB.face_count[ib], HB.face_normal, HB.face_offset
    eb0, ebn, edges_b, ef_b = HB.edge_start[ib], HB.edge_count[ib], HB.edges, HB.edge_faces

    # B in A's frame: its vertices, face normals and plane offsets.
    q = quat_mul(quat_conj(qa), qb)
    t = quat_inv_rotate(qa, sub(pb, pa))
    vb = np.empty((vbn, 3))
    for k in range(vbn):
        store3(vb, k, add(t, quat_rotate(q, load3(vert_b, vb0 + k))))
    nb = np.empty((fbn, 3))
    db = np.empty(fbn)
    for g in range(fbn):
        n = quat_rotate(q, load3(norm_b, fb0 + g))
        store3(nb, g, n)
        db[g] = off_b[fb0 + g] + dot(n, t)

    sep_a, face_a = face_query(norm_a, off_a, fa0, fan, vb, int(0), vbn, 1.0, margin, trace)
    if sep_a > margin:
        return 0
    sep_b, face_b = face_query(nb, db, int(0), fbn, vert_a, va0, van, -1.0, margin, trace)
    if sep_b > margin:
        return 0
    sep_e, best_ea, best_eb, best_axis = edge_query(vert_a, norm_a, edges_a, ef_a, ea0, ean, vb, nb, edges_b,
                                                    ef_b, eb0, ebn, vb0, fb0, margin, trace)
    if sep_e > margin:
        return 0

    use_b = sep_b > sep_a
    sep_face = sep_b if use_b else sep_a
    if best_ea >= 0 and edge_wins(sep_face, sep_e):
        if tracing(trace):
            record(trace, CHOSEN, EDGE, best_ea - ea0, best_eb - eb0, best_axis, sep_e)
        return _edge_contact(load3(vert_a, edges_a[best_ea, 0]), load3(vert_a, edges_a[best_ea, 1]),
                             load3(vb, edges_b[best_eb, 0] - vb0), load3(vb, edges_b[best_eb, 1] - vb0),
                             best_axis, pa, qa, normal, pts_a, pts_b, depths, trace)

    # Face contact in A's frame: reference face on the body whose face axis won, incident face on the
    # other, through its deepest vertex below the reference plane.
    cap = HA.face_vcount[fa0:fa0 + fan].max() + HB.face_vcount[fb0:fb0 + fbn].max() + 1
    work = np.empty((3 * cap, 4))
    ref, poly, spare = work[:cap], work[cap:2 * cap], work[2 * cap:]
    if use_b:
        n = load3(nb, face_b)
        d = db[face_b]
        nref = _polygon(HB, fb0 + face_b, vb, vb0, ref)
        inc, deepest = _incident_face(HA, ia, vert_a, va0, norm_a, fa0, n)
        npoly = _polygon(HA, fa0 + inc, vert_a, int(0), poly)
    else:
        n = load3(norm_a, fa0 + face_a)
        d = off_a[fa0 + face_a]
        nref = _polygon(HA, fa0 + face_a, vert_a, int(0), ref)
        inc, deepest = _incident_face(HB, ib, vb, int(0), nb, int(0), n)
        npoly = _polygon(HB, fb0 + inc, vb, vb0, poly)
    if tracing(trace):
        record(trace, CHOSEN, FACE_B if use_b else FACE_A, -1 if use_b else face_a, face_b if use_b else -1,
               neg(n) if use_b else n, sep_face)
        record_polygon(trace, REFERENCE, 0, ref, nref, n, d, IDENTITY)
        record_polygon(trace, INCIDENT, 0, poly, npoly, n, 0.0, IDENTITY)
    count = _face_contact(ref, nref, n, d, poly, npoly, spare, margin, use_b, pa, qa, normal, pts_a,
                          pts_b, depths, trace)
    if count == 0:
        # Clipping can come out empty when the bodies overlap only near a corner of the reference face:
        # fall back on the deepest vertex alone.
        store3(poly, 0, deepest)
        count = _fallback_contact(ref, nref, n, d, poly, margin, use_b, pa, qa, normal, pts_a, pts_b,
                                  depths, trace)
    if sep_e < 0.0 and best_ea >= 0 and sep_e > sep_face and count > 0 and depths[:count].max() < -sep_e:
        # The bodies overlap, the face won on the bias only, and its incident face's deepest corner was
        # clipped off: the face points are shallower than the overlap along the edge axis, the bodies'
        # least overlap. Pushing them apart by the manifold's depth along the face normal would leave
        # them overlapping, so the edge contact, whose depth is that least overlap, is used instead.
        # (Not for speculative contacts, sep_e >= 0, where the bias keeps a resting face manifold.)
        if tracing(trace):
            record(trace, CHOSEN, EDGE, best_ea - ea0, best_eb - eb0, best_axis, sep_e)
        return _edge_contact(load3(vert_a, edges_a[best_ea, 0]), load3(vert_a, edges_a[best_ea, 1]),
                             load3(vb, edges_b[best_eb, 0] - vb0), load3(vb, edges_b[best_eb, 1] - vb0),
                             best_axis, pa, qa, normal, pts_a, pts_b, depths, trace)
    return count


@helper
def hull_hull(pa, qa, prm_a, pb, qb, prm_b, H, margin, normal, pts_a, pts_b, depths, trace):
    """Contact manifold of two convex hulls (ids ``prm[0]`` in the hull table ``H``): SAT over face
    normals and Gauss-map-pruned edge pairs (Gregorius 2013), face clipping or edge–edge closest points."""
    return _hull_hull_tables(H, int(prm_a[0]), pa, qa, H, int(prm_b[0]), pb, qb, margin, normal, pts_a,
                             pts_b, depths, trace)


@helper
def box_hull(pa, qa, prm_a, pb, qb, prm_b, H, margin, normal, pts_a, pts_b, depths, trace):
    """Contact manifold of a box (A) and a convex hull (B): the box is built as an 8-vertex, 6-face,
    12-edge hull and the hull–hull test runs."""
    box = _box_as_hull((prm_a[0], prm_a[1], prm_a[2]))
    return _hull_hull_tables(box, int(0), pa, qa, H, int(prm_b[0]), pb, qb, margin, normal, pts_a, pts_b,
                             depths, trace)
