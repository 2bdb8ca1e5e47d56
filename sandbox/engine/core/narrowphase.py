"""The narrow phase: one contact manifold per candidate pair, dispatched by the two shape kinds.

The dispatch is a table over ``kind_a * 4 + kind_b`` with ``kind_a <= kind_b`` (Box2D's
``s_registers[typeA][typeB]``); numba cannot call through an array of functions, so the table is
written out as one ``if`` chain in ``_dispatch``. Every pair test has the signature of
``docs/architecture.md`` ("Pair test signature").
"""

from __future__ import annotations

from numba import njit

from .layout import BOX, CAPSULE, HULL, SPHERE
from .polyhedra import box_box, box_hull, hull_hull
from .rounded import (
    box_capsule,
    capsule_capsule,
    capsule_hull,
    sphere_box,
    sphere_capsule,
    sphere_hull,
    sphere_sphere,
)
from .vecmath import load3, load4


@njit(cache=True)
def _dispatch(ka, kb, pa, qa, prm_a, pb, qb, prm_b, H, margin, normal, pts_a, pts_b, depths):
    """Call the pair test for kinds ``ka <= kb``; returns its point count."""
    code = ka * 4 + kb
    if code == SPHERE * 4 + SPHERE:
        return sphere_sphere(pa, qa, prm_a, pb, qb, prm_b, H, margin, normal, pts_a, pts_b, depths)
    if code == SPHERE * 4 + BOX:
        return sphere_box(pa, qa, prm_a, pb, qb, prm_b, H, margin, normal, pts_a, pts_b, depths)
    if code == SPHERE * 4 + CAPSULE:
        return sphere_capsule(pa, qa, prm_a, pb, qb, prm_b, H, margin, normal, pts_a, pts_b, depths)
    if code == SPHERE * 4 + HULL:
        return sphere_hull(pa, qa, prm_a, pb, qb, prm_b, H, margin, normal, pts_a, pts_b, depths)
    if code == BOX * 4 + BOX:
        return box_box(pa, qa, prm_a, pb, qb, prm_b, H, margin, normal, pts_a, pts_b, depths)
    if code == BOX * 4 + CAPSULE:
        return box_capsule(pa, qa, prm_a, pb, qb, prm_b, H, margin, normal, pts_a, pts_b, depths)
    if code == BOX * 4 + HULL:
        return box_hull(pa, qa, prm_a, pb, qb, prm_b, H, margin, normal, pts_a, pts_b, depths)
    if code == CAPSULE * 4 + CAPSULE:
        return capsule_capsule(pa, qa, prm_a, pb, qb, prm_b, H, margin, normal, pts_a, pts_b, depths)
    if code == CAPSULE * 4 + HULL:
        return capsule_hull(pa, qa, prm_a, pb, qb, prm_b, H, margin, normal, pts_a, pts_b, depths)
    if code == HULL * 4 + HULL:
        return hull_hull(pa, qa, prm_a, pb, qb, prm_b, H, margin, normal, pts_a, pts_b, depths)
    return 0


@njit(cache=True)
def collide_pairs(pairs, npairs, kind, params, pos, quat, H, margin_body, out_a, out_b, out_normal,
                  out_npoints, out_pa, out_pb, out_depth):
    """Manifolds of the candidate pairs ``pairs[:npairs]`` ((P, 2) body rows), written compactly into
    the ``out_*`` arrays (sized ≥ ``npairs`` by the caller); returns the number of manifolds.

    Each pair is ordered so that ``kind[a] <= kind[b]`` (``out_a``/``out_b`` record that order; the
    normal points from ``out_a`` to ``out_b``) and tested with margin ``margin_body[a] + margin_body[b]``:
    pairs farther apart than that give no manifold, closer ones give points with depth down to -margin.
    ``pos`` holds centres of mass, ``quat`` orientations (x, y, z, w), ``H`` the hull table."""
    m = 0
    for p in range(npairs):
        a = pairs[p, 0]
        b = pairs[p, 1]
        if kind[a] > kind[b]:
            a, b = b, a
        k = _dispatch(kind[a], kind[b], load3(pos, a), load4(quat, a), params[a], load3(pos, b),
                      load4(quat, b), params[b], H, margin_body[a] + margin_body[b], out_normal[m],
                      out_pa[m], out_pb[m], out_depth[m])
        if k > 0:
            out_a[m] = a
            out_b[m] = b
            out_npoints[m] = k
            m += 1
    return m


@njit(cache=True)
def collide_one(ka, pa, qa, prm_a, kb, pb, qb, prm_b, H, margin, normal, pts_a, pts_b, depths):
    """Manifold of one pair in either kind order: when ``ka > kb`` the pair test runs with the bodies
    exchanged and the result is turned back (normal flipped, point sets exchanged), so that the normal
    always points from the first body to the second. Returns the point count."""
    if ka <= kb:
        return _dispatch(ka, kb, pa, qa, prm_a, pb, qb, prm_b, H, margin, normal, pts_a, pts_b, depths)
    k = _dispatch(kb, ka, pb, qb, prm_b, pa, qa, prm_a, H, margin, normal, pts_b, pts_a, depths)
    for c in range(3):
        normal[c] = -normal[c]
    return k
