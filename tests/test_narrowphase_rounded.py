"""Pair tests of core/rounded.py (spheres and capsules): analytic cases, margins, and random poses
checked against slow numpy oracles (signed distances of points and segments to boxes and hulls)."""

from __future__ import annotations

import itertools
import math

import numpy as np
import pytest
from hypothesis import assume, given, settings
from hypothesis import strategies as st

from sandbox.engine.core import rounded
from sandbox.engine.core.narrow_trace import no_trace
from sandbox.engine.core.rounded import (
    box_capsule,
    capsule_capsule,
    capsule_hull,
    sphere_box,
    sphere_capsule,
    sphere_hull,
    sphere_sphere,
)
from sandbox.engine.shapes import ConvexHull, pack_hulls

IDENTITY = (0.0, 0.0, 0.0, 1.0)
S2 = math.sqrt(0.5)
ALONG_X = (0.0, 0.0, S2, S2)  # 90° about z: a capsule's local y axis becomes world -x
ALONG_Z = (S2, 0.0, 0.0, S2)  # 90° about x: local y becomes world +z

TETRA = ConvexHull([[-1.0, -1.0, -1.0], [1.0, -1.0, -1.0], [0.0, 1.0, -1.0], [0.0, 0.0, 1.0]])
CUBE = ConvexHull(list(itertools.product([-1.0, 1.0], repeat=3)))
BLOB = ConvexHull(np.random.default_rng(7).normal(size=(14, 3)))
H = pack_hulls([TETRA, CUBE, BLOB])
HULLS = {0: TETRA, 1: CUBE, 2: BLOB}


def collide(fn, pa, qa, prm_a, pb, qb, prm_b, margin=0.0):
    """Run pair test ``fn`` on fresh output arrays; returns (k, normal, pts_a, pts_b, depths) for k points."""
    normal = np.zeros(3)
    pts_a = np.zeros((4, 3))
    pts_b = np.zeros((4, 3))
    depths = np.zeros(4)
    prm_a = np.array(prm_a + (0.0,) * (4 - len(prm_a)), dtype=float)
    prm_b = np.array(prm_b + (0.0,) * (4 - len(prm_b)), dtype=float)
    k = fn(tuple(map(float, pa)), tuple(map(float, qa)), prm_a, tuple(map(float, pb)),
           tuple(map(float, qb)), prm_b, H, float(margin), normal, pts_a, pts_b, depths, no_trace())
    return k, normal, pts_a[:k], pts_b[:k], depths[:k]


def check_manifold(k, normal, pts_a, pts_b, depths, margin):
    """The invariants of every manifold: unit normal, depth = (pa - pb)·n, depths within the margin."""
    assert 1 <= k <= 4
    assert np.linalg.norm(normal) == pytest.approx(1.0, abs=1e-9)
    np.testing.assert_allclose(depths, (pts_a - pts_b) @ normal, atol=1e-9)
    assert np.all(depths >= -margin - 1e-9)


# ---------------------------------------------------------------------------------------------------
# Slow oracles (numpy, independent of the kernels).


def rot(q):
    """Rotation matrix of unit quaternion (x, y, z, w)."""
    x, y, z, w = q
    return np.array([
        [1 - 2 * (y * y + z * z), 2 * (x * y - w * z), 2 * (x * z + w * y)],
        [2 * (x * y + w * z), 1 - 2 * (x * x + z * z), 2 * (y * z - w * x)],
        [2 * (x * z - w * y), 2 * (y * z + w * x), 1 - 2 * (x * x + y * y)],
    ])


def to_local(p, pos, q):
    return rot(q).T @ (np.asarray(p, float) - np.asarray(pos, float))


def box_signed_distance(p, h):
    """Signed distance of local point ``p`` to the box of half extents ``h`` (negative inside)."""
    d = np.abs(p) - np.asarray(h)
    return float(np.linalg.norm(np.maximum(d, 0.0)) + min(d.max(), 0.0))


def point_triangles_distance(p, tris):
    """Distance from ``p`` to the nearest of triangles ``tris`` (T, 3, 3): for each, the plane where the
    projection falls inside it, else the nearest of its edges (vectorised over the triangles)."""
    a, b, c = tris[:, 0], tris[:, 1], tris[:, 2]
    best = np.full(len(tris), np.inf)
    for u, v in ((a, b), (b, c), (c, a)):
        e = v - u
        t = np.clip(((p - u) * e).sum(1) / np.maximum((e * e).sum(1), 1e-300), 0.0, 1.0)
        best = np.minimum(best, np.linalg.norm(p - (u + t[:, None] * e), axis=1))
    n = np.cross(b - a, c - a)
    nn = (n * n).sum(1)
    ok = nn > 1e-20
    height = ((p - a) * n).sum(1) / np.where(ok, nn, 1.0)
    proj = p - height[:, None] * n
    for u, v in ((a, b), (b, c), (c, a)):
        ok &= (np.cross(v - u, proj - u) * n).sum(1) >= 0.0
    plane = np.abs(height) * np.sqrt(nn)
    return float(np.where(ok, np.minimum(best, plane), best).min())


def all_triangles(hull):
    """Every triangle spanned by three of the hull's vertices, as a (T, 3, 3) array."""
    idx = np.array(list(itertools.combinations(range(len(hull.vertices)), 3)))
    return hull.vertices[idx]


def hull_signed_distance(p, hull):
    """Signed distance of local point ``p`` to ``hull``: the largest face-plane separation inside; outside,
    the distance to the nearest triangle spanned by any three vertices (all lie in the hull, and the
    boundary triangles are among them)."""
    sep = hull.face_normals @ p - hull.face_offsets
    if sep.max() <= 0.0:
        return float(sep.max())
    return point_triangles_distance(p, TRIANGLES[id(hull)])


TRIANGLES = {id(h): all_triangles(h) for h in HULLS.values()}


def segment_min(f, a, b, iters=90):
    """Minimum over t in [0, 1] of the convex function f(a + t(b - a)), by golden-section search."""
    a = np.asarray(a, float)
    b = np.asarray(b, float)
    lo, hi = 0.0, 1.0
    g = (math.sqrt(5.0) - 1.0) / 2.0
    for _ in range(iters):
        m1 = hi - g * (hi - lo)
        m2 = lo + g * (hi - lo)
        if f(a + m1 * (b - a)) <= f(a + m2 * (b - a)):
            hi = m2
        else:
            lo = m1
    return min(f(a), f(b), f(a + 0.5 * (lo + hi) * (b - a)))


def capsule_ends(pos, q, hh):
    axis = rot(q) @ np.array([0.0, hh, 0.0])
    return np.asarray(pos, float) - axis, np.asarray(pos, float) + axis


def point_segment_distance(p, a, b):
    e = b - a
    t = np.clip(np.dot(p - a, e) / np.dot(e, e), 0.0, 1.0)
    return float(np.linalg.norm(p - (a + t * e)))


def box_oracle(pos, q, h):
    """World vertices, face normals and signed distance function of the box ``h`` at ``pos, q``."""
    corners = np.array(list(itertools.product([-1.0, 1.0], repeat=3))) * np.asarray(h, float)
    return (corners @ rot(q).T + np.asarray(pos, float), np.vstack([np.eye(3), -np.eye(3)]) @ rot(q).T,
            lambda p: box_signed_distance(to_local(p, pos, q), h))


def hull_oracle(pos, q, hull):
    """World vertices, face normals and signed distance function of ``hull`` at ``pos, q``."""
    return (hull.vertices @ rot(q).T + np.asarray(pos, float), hull.face_normals @ rot(q).T,
            lambda p: hull_signed_distance(to_local(p, pos, q), hull))


# Unit directions spread over the sphere: a capsule pushed out of a polyhedron along any of them must
# move at least as far as along the contact normal.
DIRECTIONS = np.random.default_rng(5).normal(size=(500, 3))
DIRECTIONS /= np.linalg.norm(DIRECTIONS, axis=1)[:, None]


# ---------------------------------------------------------------------------------------------------
# Hypothesis strategies.

coord = st.floats(-2.5, 2.5, allow_nan=False)
vec3 = st.tuples(coord, coord, coord)
quat = (st.tuples(*[st.floats(-1.0, 1.0, allow_nan=False)] * 4)
        .filter(lambda q: sum(x * x for x in q) > 0.05)
        .map(lambda q: tuple(x / math.sqrt(sum(y * y for y in q)) for x in q)))
radius = st.floats(0.1, 1.0)
extent = st.floats(0.2, 1.5)
margin_st = st.sampled_from([0.0, 0.05, 0.3])
prop = settings(max_examples=150, deadline=None)


# ---------------------------------------------------------------------------------------------------
# Sphere–sphere.


def test_sphere_sphere_overlap():
    k, n, pa, pb, d = collide(sphere_sphere, (0, 0, 0), IDENTITY, (1.0,), (1.5, 0, 0), IDENTITY, (0.75,))
    assert k == 1
    np.testing.assert_allclose(n, [1, 0, 0])
    np.testing.assert_allclose(pa[0], [1, 0, 0])
    np.testing.assert_allclose(pb[0], [0.75, 0, 0])
    assert d[0] == pytest.approx(0.25)


def test_sphere_sphere_coincident_centres_give_up_normal():
    k, n, pa, pb, d = collide(sphere_sphere, (1, 2, 3), IDENTITY, (0.5,), (1, 2, 3), IDENTITY, (0.5,))
    assert k == 1
    np.testing.assert_allclose(n, [0, 1, 0])
    assert d[0] == pytest.approx(1.0)
    check_manifold(k, n, pa, pb, d, 0.0)


def test_sphere_sphere_margin():
    args = ((0, 0, 0), IDENTITY, (1.0,), (0, 2.05, 0), IDENTITY, (1.0,))
    k, n, pa, pb, d = collide(sphere_sphere, *args, margin=0.1)
    assert k == 1
    assert d[0] == pytest.approx(-0.05)
    check_manifold(k, n, pa, pb, d, 0.1)
    assert collide(sphere_sphere, *args, margin=0.01)[0] == 0
    assert collide(sphere_sphere, *args)[0] == 0


# ---------------------------------------------------------------------------------------------------
# Sphere–box.


@pytest.mark.parametrize("qb", [IDENTITY, (0.0, S2, 0.0, S2)])
def test_sphere_resting_on_box_face(qb):
    k, n, pa, pb, d = collide(sphere_box, (0.3, 1.45, -0.2), IDENTITY, (0.5,), (0, 0, 0), qb, (1.0, 1.0, 1.0))
    assert k == 1
    np.testing.assert_allclose(n, [0, -1, 0], atol=1e-12)
    np.testing.assert_allclose(pa[0], [0.3, 0.95, -0.2], atol=1e-12)
    np.testing.assert_allclose(pb[0], [0.3, 1.0, -0.2], atol=1e-12)
    assert d[0] == pytest.approx(0.05)


def test_sphere_centre_inside_box_uses_face_of_least_penetration():
    # Box half extents (2, 1, 3); the centre is 0.3 below the top face, farther from all others.
    k, n, pa, pb, d = collide(sphere_box, (0.5, 0.7, 1.0), IDENTITY, (0.25,), (0, 0, 0), IDENTITY,
                              (2.0, 1.0, 3.0))
    assert k == 1
    np.testing.assert_allclose(n, [0, -1, 0], atol=1e-12)
    assert d[0] == pytest.approx(0.3 + 0.25)
    np.testing.assert_allclose(pb[0], [0.5, 1.0, 1.0], atol=1e-12)
    check_manifold(k, n, pa, pb, d, 0.0)


def test_sphere_centre_at_box_centre_has_unit_normal():
    k, n, pa, pb, d = collide(sphere_box, (0, 0, 0), IDENTITY, (0.5,), (0, 0, 0), IDENTITY, (1.0, 1.0, 1.0))
    assert k == 1
    check_manifold(k, n, pa, pb, d, 0.0)
    assert d[0] == pytest.approx(1.5)


def test_sphere_near_box_corner():
    c = np.array([1.0, 1.0, 1.0]) + 0.4 / math.sqrt(3.0)
    k, n, pa, pb, d = collide(sphere_box, c, IDENTITY, (0.5,), (0, 0, 0), IDENTITY, (1.0, 1.0, 1.0))
    assert k == 1
    np.testing.assert_allclose(n, -np.ones(3) / math.sqrt(3.0), atol=1e-12)
    np.testing.assert_allclose(pb[0], [1, 1, 1], atol=1e-12)
    assert d[0] == pytest.approx(0.1)


def test_sphere_box_margin():
    args = ((0, 1.6, 0), IDENTITY, (0.5,), (0, 0, 0), IDENTITY, (1.0, 1.0, 1.0))
    k, n, pa, pb, d = collide(sphere_box, *args, margin=0.2)
    assert k == 1
    assert d[0] == pytest.approx(-0.1)
    assert collide(sphere_box, *args, margin=0.05)[0] == 0


@prop
@given(c=vec3, pb=vec3, qb=quat, r=radius, h=st.tuples(extent, extent, extent), margin=margin_st)
def test_sphere_box_matches_signed_distance(c, pb, qb, r, h, margin):
    sd = box_signed_distance(to_local(c, pb, qb), h)
    expected = r - sd
    assume(abs(expected + margin) > 1e-6)
    k, n, pa_, pb_, d = collide(sphere_box, c, IDENTITY, (r,), pb, qb, h, margin)
    assert k == (1 if expected >= -margin else 0)
    if k:
        check_manifold(k, n, pa_, pb_, d, margin)
        assert d[0] == pytest.approx(expected, abs=1e-9)
        np.testing.assert_allclose(pa_[0], np.asarray(c) + r * n, atol=1e-9)
        assert box_signed_distance(to_local(pb_[0], pb, qb), h) == pytest.approx(0.0, abs=1e-9)


# ---------------------------------------------------------------------------------------------------
# Sphere–capsule.


def test_sphere_against_capsule_side_and_cap():
    k, n, pa, pb, d = collide(sphere_capsule, (0.9, 0.5, 0), IDENTITY, (0.5,), (0, 0, 0), IDENTITY,
                              (0.5, 1.0))
    assert k == 1
    np.testing.assert_allclose(n, [-1, 0, 0], atol=1e-12)
    np.testing.assert_allclose(pb[0], [0.5, 0.5, 0], atol=1e-12)
    assert d[0] == pytest.approx(0.1)
    k, n, pa, pb, d = collide(sphere_capsule, (0, 1.8, 0), IDENTITY, (0.5,), (0, 0, 0), IDENTITY, (0.5, 1.0))
    assert k == 1
    np.testing.assert_allclose(n, [0, -1, 0], atol=1e-12)
    assert d[0] == pytest.approx(0.2)


def test_sphere_centre_on_capsule_axis_has_unit_normal():
    k, n, pa, pb, d = collide(sphere_capsule, (0, 0.3, 0), IDENTITY, (0.5,), (0, 0, 0), IDENTITY, (0.25, 1.0))
    assert k == 1
    check_manifold(k, n, pa, pb, d, 0.0)
    assert abs(n[1]) < 1e-12  # perpendicular to the capsule's axis
    assert d[0] == pytest.approx(0.75)


def test_sphere_capsule_margin():
    args = ((2.55, 0, 0), IDENTITY, (1.0,), (0, 0, 0), ALONG_X, (1.0, 0.5))
    assert collide(sphere_capsule, *args)[0] == 0
    k, n, pa, pb, d = collide(sphere_capsule, *args, margin=0.1)
    assert k == 1
    assert d[0] == pytest.approx(-0.05)


@prop
@given(c=vec3, pb=vec3, qb=quat, r=radius, rb=radius, hh=extent, margin=margin_st)
def test_sphere_capsule_matches_segment_distance(c, pb, qb, r, rb, hh, margin):
    b0, b1 = capsule_ends(pb, qb, hh)
    expected = r + rb - point_segment_distance(np.asarray(c), b0, b1)
    assume(abs(expected + margin) > 1e-6)
    k, n, pa_, pb_, d = collide(sphere_capsule, c, IDENTITY, (r,), pb, qb, (rb, hh), margin)
    assert k == (1 if expected >= -margin else 0)
    if k:
        check_manifold(k, n, pa_, pb_, d, margin)
        assert d[0] == pytest.approx(expected, abs=1e-9)
        assert point_segment_distance(pb_[0], b0, b1) == pytest.approx(rb, abs=1e-9)


# ---------------------------------------------------------------------------------------------------
# Sphere–hull.


def test_sphere_on_tetrahedron_bottom_face():
    # The tetrahedron's vertices are re-centred on its centre of mass: the bottom face sits at z = -0.5.
    bottom = -1.0 - TETRA.center[2]
    k, n, pa, pb, d = collide(sphere_hull, (0.1, -0.2, bottom - 0.4), IDENTITY, (0.5,), (0, 0, 0), IDENTITY,
                              (0.0,))
    assert k == 1
    np.testing.assert_allclose(n, [0, 0, 1], atol=1e-12)
    np.testing.assert_allclose(pb[0], [0.1, -0.2, bottom], atol=1e-12)
    assert d[0] == pytest.approx(0.1)


def test_sphere_near_tetrahedron_apex_and_inside():
    apex = np.array([0.0, 0.0, 1.0]) - TETRA.center
    k, n, pa, pb, d = collide(sphere_hull, apex + [0, 0, 0.3], IDENTITY, (0.5,), (0, 0, 0), IDENTITY, (0.0,))
    assert k == 1
    np.testing.assert_allclose(n, [0, 0, -1], atol=1e-9)
    np.testing.assert_allclose(pb[0], apex, atol=1e-9)
    assert d[0] == pytest.approx(0.2)
    # Centre at the centre of mass: pushed out through the nearest face plane.
    k, n, pa, pb, d = collide(sphere_hull, (0, 0, 0), IDENTITY, (0.25,), (0, 0, 0), IDENTITY, (0.0,))
    assert k == 1
    check_manifold(k, n, pa, pb, d, 0.0)
    assert d[0] == pytest.approx(0.25 - hull_signed_distance(np.zeros(3), TETRA))


def test_sphere_hull_margin():
    bottom = -1.0 - TETRA.center[2]
    args = ((0, 0, bottom - 0.6), IDENTITY, (0.5,), (0, 0, 0), IDENTITY, (0.0,))
    assert collide(sphere_hull, *args)[0] == 0
    k, n, pa, pb, d = collide(sphere_hull, *args, margin=0.2)
    assert k == 1
    assert d[0] == pytest.approx(-0.1)


@prop
@given(c=vec3, pb=vec3, qb=quat, r=radius, hid=st.sampled_from([0, 1, 2]), margin=margin_st)
def test_sphere_hull_matches_signed_distance(c, pb, qb, r, hid, margin):
    hull = HULLS[hid]
    expected = r - hull_signed_distance(to_local(c, pb, qb), hull)
    assume(abs(expected + margin) > 1e-6)
    k, n, pa_, pb_, d = collide(sphere_hull, c, IDENTITY, (r,), pb, qb, (float(hid),), margin)
    assert k == (1 if expected >= -margin else 0)
    if k:
        check_manifold(k, n, pa_, pb_, d, margin)
        assert d[0] == pytest.approx(expected, abs=1e-8)
        np.testing.assert_allclose(pa_[0], np.asarray(c) + r * n, atol=1e-9)
        if expected < r:  # centre outside: the hull point is on its surface
            assert hull_signed_distance(to_local(pb_[0], pb, qb), hull) == pytest.approx(0.0, abs=1e-8)


# ---------------------------------------------------------------------------------------------------
# Box–capsule.


def test_capsule_lying_on_box_gives_two_points_clipped_to_the_face():
    # Segment x in [-1.5, 2.5] at height 1.4 over a unit box: the overhang is clipped at x = ±1.
    k, n, pa, pb, d = collide(box_capsule, (0, 0, 0), IDENTITY, (1.0, 1.0, 1.0), (0.5, 1.4, 0.3), ALONG_X,
                              (0.5, 2.0))
    assert k == 2
    np.testing.assert_allclose(n, [0, 1, 0], atol=1e-12)
    np.testing.assert_allclose(sorted(pa[:, 0]), [-1.0, 1.0], atol=1e-12)
    np.testing.assert_allclose(pa[:, 1:], [[1.0, 0.3], [1.0, 0.3]], atol=1e-12)
    np.testing.assert_allclose(pb[:, 1], [0.9, 0.9], atol=1e-12)
    np.testing.assert_allclose(d, [0.1, 0.1], atol=1e-12)
    check_manifold(k, n, pa, pb, d, 0.0)


def test_capsule_standing_on_box_gives_one_point():
    k, n, pa, pb, d = collide(box_capsule, (0, 0, 0), IDENTITY, (1.0, 1.0, 1.0), (0.2, 2.4, 0), IDENTITY,
                              (0.5, 1.0))
    assert k == 1
    np.testing.assert_allclose(n, [0, 1, 0], atol=1e-12)
    np.testing.assert_allclose(pa[0], [0.2, 1.0, 0], atol=1e-12)
    np.testing.assert_allclose(pb[0], [0.2, 0.9, 0], atol=1e-12)
    assert d[0] == pytest.approx(0.1)


def test_capsule_across_box_edge_gives_one_point():
    # Lying along z above the box's top +x edge, displaced outwards along the diagonal.
    c = np.array([1.0, 1.0, 0.0]) + 0.4 * np.array([S2, S2, 0.0])
    k, n, pa, pb, d = collide(box_capsule, (0, 0, 0), IDENTITY, (1.0, 1.0, 1.0), c, ALONG_Z, (0.5, 0.5))
    assert k == 1
    np.testing.assert_allclose(n, [S2, S2, 0], atol=1e-9)
    assert d[0] == pytest.approx(0.1)


def test_capsule_segment_through_box_is_pushed_out_of_nearest_face():
    # The core runs along x at y = 0.8, through the box: least penetration through the top face.
    k, n, pa, pb, d = collide(box_capsule, (0, 0, 0), IDENTITY, (1.0, 1.0, 1.0), (0, 0.8, 0.1), ALONG_X,
                              (0.25, 2.0))
    assert k == 2
    np.testing.assert_allclose(n, [0, 1, 0], atol=1e-12)
    np.testing.assert_allclose(d, [0.45, 0.45], atol=1e-12)
    np.testing.assert_allclose(sorted(pa[:, 0]), [-1.0, 1.0], atol=1e-12)


def test_capsule_core_across_a_box_edge_is_pushed_out_over_the_edge():
    # The core runs along (1, -1, 0) through (0.9, 0.9, 0), cutting the top +x edge 0.1·√2 deep: out
    # over the edge (normal on the edge's diagonal) is shorter than through either face (0.1 + 0.354).
    q = (0.0, 0.0, -math.sin(3.0 * math.pi / 8.0), math.cos(3.0 * math.pi / 8.0))
    k, n, pa, pb, d = collide(box_capsule, (0, 0, 0), IDENTITY, (1.0, 1.0, 1.0), (0.9, 0.9, 0.0), q,
                              (0.25, 0.5))
    assert k == 1
    check_manifold(k, n, pa, pb, d, 0.0)
    np.testing.assert_allclose(n, [S2, S2, 0], atol=1e-12)
    np.testing.assert_allclose(pa[0], [1, 1, 0], atol=1e-12)
    np.testing.assert_allclose(pb[0], np.array([0.9, 0.9, 0]) - 0.25 * n, atol=1e-12)
    assert d[0] == pytest.approx(0.1 * math.sqrt(2.0) + 0.25)


def test_box_capsule_margin():
    args = ((0, 0, 0), IDENTITY, (1.0, 1.0, 1.0), (0, 1.6, 0), ALONG_X, (0.5, 0.5))
    assert collide(box_capsule, *args)[0] == 0
    k, n, pa, pb, d = collide(box_capsule, *args, margin=0.2)
    assert k == 2
    np.testing.assert_allclose(d, [-0.1, -0.1], atol=1e-12)
    assert collide(box_capsule, *args, margin=0.05)[0] == 0


def check_polyhedron_capsule(k, n, pts_poly, pts_cap, d, c0, c1, rc, dist, margin, oracle, iters=90):
    """Random-pose checks shared by box_capsule and capsule_hull (normal from polyhedron to capsule).

    ``dist`` is the oracle's signed distance of the core segment to the polyhedron; ``oracle`` holds its
    world vertices, face normals and signed distance function."""
    verts, face_normals, sd = oracle
    expected = rc - dist
    assert (k > 0) == (expected >= -margin)
    if not k:
        return
    check_manifold(k, n, pts_poly, pts_cap, d, margin)
    # Every point lies on its shape's surface, also for two points of a tilted capsule on a face.
    for p, q in zip(pts_poly, pts_cap, strict=True):
        assert sd(p) == pytest.approx(0.0, abs=1e-7)
        assert point_segment_distance(q, c0, c1) == pytest.approx(rc, abs=1e-7)
    if dist > 1e-6:
        # Separated cores: the deepest point is the closest one, and none is deeper than it.
        assert d.max() == pytest.approx(expected, abs=1e-7)
        assert np.all(d <= expected + 1e-7)
    if dist < 0.0:
        # Crossing cores: moving the capsule by the depth along the normal leaves it just touching, and
        # no other direction (a face normal or any of many others) gets it out by a shorter move.
        depth = d.max()
        moved = segment_min(sd, np.asarray(c0) + depth * n, np.asarray(c1) + depth * n, iters)
        assert moved == pytest.approx(rc, abs=1e-6)
        dirs = np.vstack([face_normals, DIRECTIONS])
        out = (verts @ dirs.T).max(0) - np.minimum(dirs @ c0, dirs @ c1) + rc
        assert depth <= out.min() + 1e-9


@prop
@given(pa=vec3, qa=quat, h=st.tuples(extent, extent, extent), pc=vec3, qc=quat, rc=radius, hh=extent,
       margin=margin_st)
def test_box_capsule_random_poses(pa, qa, h, pc, qc, rc, hh, margin):
    c0, c1 = capsule_ends(pc, qc, hh)
    oracle = box_oracle(pa, qa, h)
    dist = segment_min(oracle[2], c0, c1)
    assume(abs(rc - dist + margin) > 1e-5 and abs(dist) > 1e-5)
    k, n, pts_a, pts_b, d = collide(box_capsule, pa, qa, h, pc, qc, (rc, hh), margin)
    check_polyhedron_capsule(k, n, pts_a, pts_b, d, c0, c1, rc, dist, margin, oracle)


# ---------------------------------------------------------------------------------------------------
# Capsule–capsule.


def test_crossed_capsules_give_one_point():
    k, n, pa, pb, d = collide(capsule_capsule, (0, 0, 0), ALONG_X, (0.5, 1.0), (0.2, 0.9, 0.3), ALONG_Z,
                              (0.5, 1.0))
    assert k == 1
    np.testing.assert_allclose(n, [0, 1, 0], atol=1e-12)
    np.testing.assert_allclose(pa[0], [0.2, 0.5, 0], atol=1e-12)
    np.testing.assert_allclose(pb[0], [0.2, 0.4, 0], atol=1e-12)
    assert d[0] == pytest.approx(0.1)


def test_parallel_capsules_give_two_points_over_the_overlap():
    # B lies on A, shifted by 0.5 along the common axis: the overlap is x in [-0.5, 1].
    k, n, pa, pb, d = collide(capsule_capsule, (0, 0, 0), ALONG_X, (0.5, 1.0), (0.5, 0.9, 0), ALONG_X,
                              (0.5, 1.0))
    assert k == 2
    np.testing.assert_allclose(n, [0, 1, 0], atol=1e-12)
    np.testing.assert_allclose(sorted(pb[:, 0]), [-0.5, 1.0], atol=1e-12)
    np.testing.assert_allclose(pa[:, 1], [0.5, 0.5], atol=1e-12)
    np.testing.assert_allclose(d, [0.1, 0.1], atol=1e-12)
    check_manifold(k, n, pa, pb, d, 0.0)


def test_collinear_capsules_end_to_end_give_one_point():
    k, n, pa, pb, d = collide(capsule_capsule, (0, 0, 0), ALONG_X, (0.5, 1.0), (-2.9, 0, 0), ALONG_X,
                              (0.5, 1.0))
    assert k == 1
    np.testing.assert_allclose(n, [-1, 0, 0], atol=1e-12)
    assert d[0] == pytest.approx(0.1)


def test_intersecting_capsule_cores_have_unit_normal():
    k, n, pa, pb, d = collide(capsule_capsule, (0, 0, 0), ALONG_X, (0.5, 1.0), (0, 0, 0), ALONG_Z,
                              (0.5, 1.0))
    assert k == 1
    check_manifold(k, n, pa, pb, d, 0.0)
    assert d[0] == pytest.approx(1.0)
    assert abs(n[1]) == pytest.approx(1.0)  # perpendicular to both axes
    k, n, pa, pb, d = collide(capsule_capsule, (0, 0, 0), ALONG_X, (0.5, 1.0), (0.3, 0, 0), ALONG_X,
                              (0.5, 1.0))
    assert k >= 1
    check_manifold(k, n, pa, pb, d, 0.0)
    assert abs(n[0]) < 1e-12


def test_capsule_capsule_margin():
    args = ((0, 0, 0), ALONG_X, (0.5, 1.0), (0, 1.1, 0), ALONG_X, (0.5, 1.0))
    assert collide(capsule_capsule, *args)[0] == 0
    k, n, pa, pb, d = collide(capsule_capsule, *args, margin=0.2)
    assert k == 2
    np.testing.assert_allclose(d, [-0.1, -0.1], atol=1e-12)


@prop
@given(pa=vec3, qa=quat, ra=radius, ha=extent, pb=vec3, qb=quat, rb=radius, hb=extent, margin=margin_st)
def test_capsule_capsule_random_poses(pa, qa, ra, ha, pb, qb, rb, hb, margin):
    a0, a1 = capsule_ends(pa, qa, ha)
    b0, b1 = capsule_ends(pb, qb, hb)
    dist = segment_min(lambda p: point_segment_distance(p, b0, b1), a0, a1)
    expected = ra + rb - dist
    assume(abs(expected + margin) > 1e-6 and dist > 1e-6)
    k, n, pts_a, pts_b, d = collide(capsule_capsule, pa, qa, (ra, ha), pb, qb, (rb, hb), margin)
    assert k == (1 if expected >= -margin else 0) or (k == 2 and expected >= -margin)
    if not k:
        return
    check_manifold(k, n, pts_a, pts_b, d, margin)
    if k == 1:
        assert d[0] == pytest.approx(expected, abs=1e-8)
        assert point_segment_distance(pts_a[0], a0, a1) == pytest.approx(ra, abs=1e-8)
        assert point_segment_distance(pts_b[0], b0, b1) == pytest.approx(rb, abs=1e-8)
    else:
        check_parallel_capsules(n, pts_a, pts_b, d, a0, a1, ra, b0, b1, rb, expected)


def check_parallel_capsules(n, pts_a, pts_b, d, a0, a1, ra, b0, b1, rb, expected):
    """Two points of nearly parallel capsules: on the surfaces, measured along one normal, the deeper
    one exactly as deep as the cores' closest points give."""
    axis_a = (a1 - a0) / np.linalg.norm(a1 - a0)
    assert abs(n @ axis_a) <= rounded.PARALLEL_SIN + 1e-9
    for p, q in zip(pts_a, pts_b, strict=True):
        assert point_segment_distance(p, a0, a1) == pytest.approx(ra, abs=1e-9)
        assert point_segment_distance(q, b0, b1) == pytest.approx(rb, abs=1e-9)
    assert d.max() == pytest.approx(expected, abs=1e-9)
    assert np.all(d <= expected + 1e-9)


@prop
@given(qa=quat, tilt=st.tuples(st.floats(-0.04, 0.04), st.floats(-0.04, 0.04)), along=st.floats(-2.0, 2.0),
       side=st.floats(-1.0, 1.0), ra=radius, ha=extent, rb=radius, hb=extent, gap=st.floats(-0.3, 0.1))
def test_nearly_parallel_capsules(qa, tilt, along, side, ra, ha, rb, hb, gap):
    """B nearly parallel to A (tilted by up to 0.04 rad), shifted along and beside it and stacked on it
    with a small gap or overlap: two points whenever both ends of the overlap touch, and the manifold
    is the same with A and B exchanged.

    The shift is nudged off zero: with the ends of A and B level, an end of each lies over the other
    core at the same place, and which of the two equal choices is taken is up to rounding."""
    along += math.sqrt(2.0) * 1e-3
    r = rot(qa)
    qb = quat_mul(qa, quat_mul((math.sin(tilt[0] / 2), 0.0, 0.0, math.cos(tilt[0] / 2)),
                               (0.0, 0.0, math.sin(tilt[1] / 2), math.cos(tilt[1] / 2))))
    pb = r @ np.array([0.3 * side, along, 0.0]) + r @ np.array([0.0, 0.0, ra + rb + gap])
    a0, a1 = capsule_ends((0, 0, 0), qa, ha)
    b0, b1 = capsule_ends(pb, qb, hb)
    dist = segment_min(lambda p: point_segment_distance(p, b0, b1), a0, a1)
    expected = ra + rb - dist
    assume(dist > 1e-6 and abs(expected) > 1e-6)
    k, n, pts_a, pts_b, d = collide(capsule_capsule, (0, 0, 0), qa, (ra, ha), pb, qb, (rb, hb))
    assert (k > 0) == (expected >= 0.0)
    if k == 0:
        return
    check_manifold(k, n, pts_a, pts_b, d, 0.0)
    if k == 1:
        assert d[0] == pytest.approx(expected, abs=1e-9)
    else:
        check_parallel_capsules(n, pts_a, pts_b, d, a0, a1, ra, b0, b1, rb, expected)
    kw, nw, wa, wb, dw = collide(capsule_capsule, pb, qb, (rb, hb), (0, 0, 0), qa, (ra, ha))
    assert kw == k
    np.testing.assert_allclose(nw, -n, atol=1e-9)
    np.testing.assert_allclose(np.sort(dw), np.sort(d), atol=1e-9)
    # The same points, in either order.
    gap_a = np.linalg.norm(pts_a[:, None] - wb[None], axis=2)
    gap_b = np.linalg.norm(pts_b[:, None] - wa[None], axis=2)
    assert gap_a.min(1).max() < 1e-9 and gap_a.min(0).max() < 1e-9
    assert gap_b.min(1).max() < 1e-9 and gap_b.min(0).max() < 1e-9


# ---------------------------------------------------------------------------------------------------
# Capsule–hull.


def test_capsule_lying_on_cube_hull_gives_two_points():
    k, n, pa, pb, d = collide(capsule_hull, (0.5, 1.4, 0.3), ALONG_X, (0.5, 2.0), (0, 0, 0), IDENTITY, (1.0,))
    assert k == 2
    np.testing.assert_allclose(n, [0, -1, 0], atol=1e-12)
    np.testing.assert_allclose(sorted(pb[:, 0]), [-1.0, 1.0], atol=1e-12)
    np.testing.assert_allclose(pb[:, 1], [1.0, 1.0], atol=1e-12)
    np.testing.assert_allclose(d, [0.1, 0.1], atol=1e-12)
    check_manifold(k, n, pa, pb, d, 0.0)


def test_capsule_under_tetrahedron_face():
    bottom = -1.0 - TETRA.center[2]
    # Lying flat under the bottom face (z = bottom), along x through the face's interior.
    k, n, pa, pb, d = collide(capsule_hull, (0, -0.5, bottom - 0.45), ALONG_X, (0.5, 0.25), (0, 0, 0),
                              IDENTITY, (0.0,))
    assert k == 2
    np.testing.assert_allclose(n, [0, 0, 1], atol=1e-12)
    np.testing.assert_allclose(d, [0.05, 0.05], atol=1e-12)
    np.testing.assert_allclose(sorted(pb[:, 0]), [-0.25, 0.25], atol=1e-12)
    # Pointing at the apex from above: one point.
    apex = np.array([0.0, 0.0, 1.0]) - TETRA.center
    k, n, pa, pb, d = collide(capsule_hull, apex + [0, 0, 1.4], ALONG_Z, (0.5, 1.0), (0, 0, 0), IDENTITY,
                              (0.0,))
    assert k == 1
    np.testing.assert_allclose(n, [0, 0, -1], atol=1e-9)
    np.testing.assert_allclose(pb[0], apex, atol=1e-9)
    assert d[0] == pytest.approx(0.1)


def test_capsule_hull_margin():
    args = ((0, 1.6, 0), ALONG_X, (0.5, 0.5), (0, 0, 0), IDENTITY, (1.0,))
    assert collide(capsule_hull, *args)[0] == 0
    k, n, pa, pb, d = collide(capsule_hull, *args, margin=0.2)
    assert k == 2
    np.testing.assert_allclose(d, [-0.1, -0.1], atol=1e-12)


@prop
@given(pc=vec3, qc=quat, rc=radius, hh=extent, pb=vec3, qb=quat, hid=st.sampled_from([0, 1, 2]),
       margin=margin_st)
def test_capsule_hull_random_poses(pc, qc, rc, hh, pb, qb, hid, margin):
    hull = HULLS[hid]
    c0, c1 = capsule_ends(pc, qc, hh)
    oracle = hull_oracle(pb, qb, hull)
    dist = segment_min(oracle[2], c0, c1, iters=60)
    assume(abs(rc - dist + margin) > 1e-5 and abs(dist) > 1e-5)
    k, n, pts_a, pts_b, d = collide(capsule_hull, pc, qc, (rc, hh), pb, qb, (float(hid),), margin)
    # Seen from the hull (A') the normal is reversed and the point sets swap.
    check_polyhedron_capsule(k, -n, pts_b, pts_a, d, c0, c1, rc, dist, margin, oracle, iters=60)


@prop
@given(pc=vec3, qc=quat, rc=radius, hh=extent, pb=vec3, qb=quat, margin=margin_st)
def test_capsule_hull_agrees_with_box_capsule_on_a_cube(pc, qc, rc, hh, pb, qb, margin):
    ka, na, _, _, da = collide(box_capsule, pb, qb, (1.0, 1.0, 1.0), pc, qc, (rc, hh), margin)
    kb, nb, _, _, db = collide(capsule_hull, pc, qc, (rc, hh), pb, qb, (1.0,), margin)
    assert (ka == 0) == (kb == 0)
    if ka and kb:
        assert da.max() == pytest.approx(db.max(), abs=1e-7)


def quat_mul(a, b):
    ax, ay, az, aw = a
    bx, by, bz, bw = b
    return (aw * bx + ax * bw + ay * bz - az * by, aw * by - ax * bz + ay * bw + az * bx,
            aw * bz + ax * by - ay * bx + az * bw, aw * bw - ax * bx - ay * by - az * bz)


@prop
@given(qa=quat, yaw=st.floats(0.0, 2.0 * math.pi), tilt=st.one_of(st.just(0.0), st.floats(-0.1, 0.1)),
       x=st.floats(-1.5, 1.5), z=st.floats(-1.5, 1.5), gap=st.floats(-0.3, 0.3), rc=radius, hh=extent,
       use_hull=st.booleans())
def test_capsule_nearly_lying_on_a_cube_face(qa, yaw, tilt, x, z, gap, rc, hh, use_hull):
    """Poses near the two-point case: a capsule almost parallel to the top face of a unit cube (a box or
    the cube hull), a little above or below contact."""
    u = np.array([math.cos(yaw) * math.cos(tilt), math.sin(tilt), math.sin(yaw) * math.cos(tilt)])
    axis = np.cross([0.0, 1.0, 0.0], u)
    half = 0.5 * math.acos(np.clip(u[1], -1.0, 1.0))
    q_local = tuple(axis / np.linalg.norm(axis) * math.sin(half)) + (math.cos(half),)
    qc = quat_mul(qa, q_local)
    pc = rot(qa) @ np.array([x, 1.0 + rc + gap, z])
    c0, c1 = capsule_ends(pc, qc, hh)
    oracle = box_oracle((0, 0, 0), qa, (1.0, 1.0, 1.0))
    dist = segment_min(oracle[2], c0, c1)
    assume(abs(rc - dist) > 1e-5 and abs(dist) > 1e-5)
    if use_hull:
        k, n, pts_a, pts_b, d = collide(capsule_hull, pc, qc, (rc, hh), (0, 0, 0), qa, (1.0,))
        k, n, pts_a, pts_b, d = k, -n, pts_b, pts_a, d
    else:
        k, n, pts_a, pts_b, d = collide(box_capsule, (0, 0, 0), qa, (1.0, 1.0, 1.0), pc, qc, (rc, hh))
    check_polyhedron_capsule(k, n, pts_a, pts_b, d, c0, c1, rc, dist, 0.0, oracle)
    ends = [to_local(c, (0, 0, 0), qa) for c in (c0, c1)]
    over_face = all(abs(e[0]) < 1.0 - 1e-6 and abs(e[2]) < 1.0 - 1e-6 for e in ends)
    if tilt == 0.0 and over_face and 0.0 <= -gap < rc:
        # Flat on the face with the whole core over it: both ends touch, at the same depth.
        assert k == 2
        np.testing.assert_allclose(n, rot(qa)[:, 1], atol=1e-9)
        np.testing.assert_allclose(d, [-gap, -gap], atol=1e-9)
