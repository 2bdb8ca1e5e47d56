"""Ray-casting kernels: a ray against each shape kind, and the closest hit in a scene through the
broad phase's uniform grid walked with a 3D DDA.

Conventions: the ray is ``o + t·d`` with ``d`` of unit length, so ``t`` is a distance in metres. Each
shape test returns ``(t, normal)``: ``t >= 0`` and the outward unit normal of the surface at the hit
(world frame), or ``t = -1`` for a miss. A ray that starts inside a shape, or on its surface, hits it
at ``t = 0`` with ``normal = -d``: for picking, the body the ray starts in is the one under the cursor.
"""

from __future__ import annotations

import math

import numpy as np

from .broadphase import cell_hash
from .jit import helper, kernel
from .layout import BOX, CAPSULE, SPHERE
from .vecmath import load3, load4, mad, neg, quat_inv_rotate, quat_rotate, scale, sub

MISS = (-1.0, (0.0, 0.0, 0.0))
PARALLEL = 1e-15


@helper
def ray_sphere(o, d, c, r):
    """Ray against the sphere of centre ``c`` and radius ``r``: the smaller root of
    |o + t·d − c|² = r² (Ericson 2004, §5.3.2)."""
    m = sub(o, c)
    cc = m[0] * m[0] + m[1] * m[1] + m[2] * m[2] - r * r
    if cc <= 0.0:
        return 0.0, neg(d)
    b = m[0] * d[0] + m[1] * d[1] + m[2] * d[2]
    disc = b * b - cc
    if b > 0.0 or disc < 0.0:
        return MISS
    t = max(-b - math.sqrt(disc), 0.0)
    return t, scale(sub(mad(o, d, t), c), 1.0 / r)


@helper
def ray_box(o, d, p, q, h):
    """Ray against the box of half extents ``h`` at ``p`` with orientation ``q``: the slab method in the
    box's frame (Kay and Kajiya 1986; Williams et al., "An efficient and robust ray–box intersection
    algorithm", 2005): the ray is inside the box where it is inside all three slabs, entering at the
    largest slab entry; the normal is that slab's face."""
    lo = quat_inv_rotate(q, sub(o, p))
    ld = quat_inv_rotate(q, d)
    t_near = -np.inf
    t_far = np.inf
    axis = -1
    sign = 0.0
    for k in range(3):
        if abs(ld[k]) < PARALLEL:
            if lo[k] < -h[k] or lo[k] > h[k]:
                return MISS
            continue
        inv = 1.0 / ld[k]
        t1 = (-h[k] - lo[k]) * inv
        t2 = (h[k] - lo[k]) * inv
        s = -1.0
        if t1 > t2:
            t1, t2 = t2, t1
            s = 1.0
        if t1 > t_near:
            t_near = t1
            axis = k
            sign = s
        t_far = min(t_far, t2)
        if t_near > t_far:
            return MISS
    if t_far < 0.0:
        return MISS
    if t_near <= 0.0:
        return 0.0, neg(d)
    n = (sign if axis == 0 else 0.0, sign if axis == 1 else 0.0, sign if axis == 2 else 0.0)
    return t_near, quat_rotate(q, n)


@helper
def ray_capsule(o, d, p, q, r, hh):
    """Ray against the capsule of radius ``r`` around the segment (0, ±hh, 0) of the frame (p, q).

    The capsule is the union of a cylinder and two spheres, so from outside the first entry is the
    earliest of: the infinite cylinder's entry where |y| <= hh (a quadratic in x, z), and the two caps'
    sphere entries (Ericson 2004, §5.3.7)."""
    lo = quat_inv_rotate(q, sub(o, p))
    ld = quat_inv_rotate(q, d)
    y = min(max(lo[1], -hh), hh)
    if lo[0] * lo[0] + (lo[1] - y) * (lo[1] - y) + lo[2] * lo[2] <= r * r:
        return 0.0, neg(d)
    best = np.inf
    n = (0.0, 0.0, 0.0)
    a = ld[0] * ld[0] + ld[2] * ld[2]
    if a > PARALLEL:
        b = lo[0] * ld[0] + lo[2] * ld[2]
        c = lo[0] * lo[0] + lo[2] * lo[2] - r * r
        disc = b * b - a * c
        if disc >= 0.0:
            t = (-b - math.sqrt(disc)) / a
            if t >= 0.0 and abs(lo[1] + t * ld[1]) <= hh:
                best = t
                n = ((lo[0] + t * ld[0]) / r, 0.0, (lo[2] + t * ld[2]) / r)
    for cap in (-hh, hh):
        t, nc = ray_sphere(lo, ld, (0.0, cap, 0.0), r)
        if t >= 0.0 and t < best:
            best = t
            n = nc
    if best == np.inf:
        return MISS
    return best, quat_rotate(q, n)


@helper
def ray_hull(o, d, p, q, H, h):
    """Ray against hull ``h`` of the table ``H`` at (p, q): Cyrus–Beck clipping of the ray against the
    face planes (Ericson 2004, §5.3.8). Planes the ray enters raise the entry parameter, planes it
    leaves lower the exit; the hit is the last entry, on that entry's face."""
    face_start, face_count = H.face_start, H.face_count
    face_normal, face_offset = H.face_normal, H.face_offset
    lo = quat_inv_rotate(q, sub(o, p))
    ld = quat_inv_rotate(q, d)
    t_near = -np.inf
    t_far = np.inf
    face = -1
    for f in range(face_start[h], face_start[h] + face_count[h]):
        nf = load3(face_normal, f)
        denom = nf[0] * ld[0] + nf[1] * ld[1] + nf[2] * ld[2]
        dist = face_offset[f] - (nf[0] * lo[0] + nf[1] * lo[1] + nf[2] * lo[2])
        if abs(denom) < PARALLEL:
            if dist < 0.0:
                return MISS
            continue
        t = dist / denom
        if denom < 0.0:
            if t > t_near:
                t_near = t
                face = f
        elif t < t_far:
            t_far = t
        if t_near > t_far:
            return MISS
    if t_far < 0.0:
        return MISS
    if t_near <= 0.0:
        return 0.0, neg(d)
    return t_near, quat_rotate(q, load3(face_normal, face))


@helper
def ray_body(o, d, kind, prm, p, q, H):
    """Ray against one body's shape, dispatched on its kind: ``(t, normal)``, ``t = -1`` for a miss."""
    if kind == SPHERE:
        return ray_sphere(o, d, p, prm[0])
    if kind == BOX:
        return ray_box(o, d, p, q, (prm[0], prm[1], prm[2]))
    if kind == CAPSULE:
        return ray_capsule(o, d, p, q, prm[0], prm[1])
    return ray_hull(o, d, p, q, H, int(prm[0]))


@helper
def ray_aabb(o, d, lo, hi):
    """Parameters (t_enter, t_exit) of the ray in the box [lo, hi]; t_enter > t_exit when it misses."""
    t0 = -np.inf
    t1 = np.inf
    for k in range(3):
        if abs(d[k]) < PARALLEL:
            if o[k] < lo[k] or o[k] > hi[k]:
                return np.inf, -np.inf
            continue
        a = (lo[k] - o[k]) / d[k]
        b = (hi[k] - o[k]) / d[k]
        t0 = max(t0, min(a, b))
        t1 = min(t1, max(a, b))
    return t0, t1


@helper
def _closer(t, i, best_t, best_i):
    """Whether hit (t, i) beats the best so far: nearer, or as near from a lower body index (the order a
    loop over bodies would keep), so that the result never depends on the order of the search."""
    return t < best_t or (t == best_t and (best_i < 0 or i < best_i))


@kernel
def raycast_grid(o, d, max_t, n, kind, params, pos, quat, H, cell, ent_cell, ent_body, bucket_start,
                 oversize, n_over, bounds, tested):
    """Closest hit of the ray ``o + t·d``, ``0 <= t <= max_t``, among the bodies of a grid built by
    ``broadphase.grid_build``: returns (body, t, normal), body −1 for no hit.

    Oversize bodies are tested one by one; the hashed ones are met by walking the cells the ray crosses,
    nearest first, with the 3D DDA of Amanatides and Woo, "A fast voxel traversal algorithm for ray
    tracing", 1987: per axis, ``t_next`` is where the ray crosses the next cell boundary and ``t_delta``
    the distance between boundaries. The walk stops at the first cell entered beyond the best hit, since
    every body hit earlier covers a cell already visited. ``tested`` (n flags) keeps a body met in
    several cells from being tested twice."""
    best_i = int(-1)  # int(): a plain integer for _closer, not a literal (see contact_rows.py)
    best_t = max_t
    best_n = (0.0, 0.0, 0.0)
    tested[:n] = False
    for a in range(n_over):
        i = oversize[a]
        t, nrm = ray_body(o, d, kind[i], params[i], load3(pos, i), load4(quat, i), H)
        if 0.0 <= t <= max_t and _closer(t, i, best_t, best_i):
            best_i, best_t, best_n = i, t, nrm
    t0, t1 = ray_aabb(o, d, load3(bounds, 0), load3(bounds, 1))
    t0 = max(t0, 0.0)
    if t0 > min(t1, best_t):
        return best_i, best_t, best_n
    inv = 1.0 / cell
    mask = bucket_start.shape[0] - 2
    lo_cell = (math.floor(bounds[0, 0] * inv), math.floor(bounds[0, 1] * inv),
               math.floor(bounds[0, 2] * inv))
    hi_cell = (math.floor(bounds[1, 0] * inv), math.floor(bounds[1, 1] * inv),
               math.floor(bounds[1, 2] * inv))
    start = mad(o, d, t0)
    c = [0, 0, 0]
    step = [0, 0, 0]
    t_next = [np.inf, np.inf, np.inf]
    t_delta = [np.inf, np.inf, np.inf]
    for k in range(3):
        # Rounding may put the entry point a hair outside the bounds: clamp it into their cells.
        c[k] = min(max(math.floor(start[k] * inv), lo_cell[k]), hi_cell[k])
        if d[k] > PARALLEL:
            step[k] = 1
            t_next[k] = ((c[k] + 1) * cell - o[k]) / d[k]
            t_delta[k] = cell / d[k]
        elif d[k] < -PARALLEL:
            step[k] = -1
            t_next[k] = (c[k] * cell - o[k]) / d[k]
            t_delta[k] = -cell / d[k]
    t_enter = t0
    while t_enter <= best_t:
        hb = cell_hash(c[0], c[1], c[2], mask)
        for e in range(bucket_start[hb], bucket_start[hb + 1]):
            i = ent_body[e]
            if tested[i] or ent_cell[e, 0] != c[0] or ent_cell[e, 1] != c[1] or ent_cell[e, 2] != c[2]:
                continue
            tested[i] = True
            t, nrm = ray_body(o, d, kind[i], params[i], load3(pos, i), load4(quat, i), H)
            if 0.0 <= t <= max_t and _closer(t, i, best_t, best_i):
                best_i, best_t, best_n = i, t, nrm
        k = 0
        if t_next[1] < t_next[k]:
            k = 1
        if t_next[2] < t_next[k]:
            k = 2
        t_enter = t_next[k]
        c[k] += step[k]
        t_next[k] += t_delta[k]
        if step[k] == 0 or c[k] < lo_cell[k] or c[k] > hi_cell[k]:
            break
    return best_i, best_t, best_n
