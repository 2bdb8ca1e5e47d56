"""The seed's first overlap tests: AABB–AABB and sphere–AABB, against brute-force answers."""

from __future__ import annotations

import numpy as np

from sandbox.engine.core.bounding_volumes import aabb_aabb, closest_point_aabb, sphere_aabb
from sandbox.engine.core.narrow_trace import no_trace
from sandbox.engine.core.rounded import sphere_box
from sandbox.engine.shapes import pack_hulls


def test_aabb_aabb_is_interval_overlap_on_every_axis():
    rng = np.random.default_rng(1)
    for _ in range(500):
        a = np.sort(rng.uniform(-2, 2, (2, 3)), axis=0)
        b = np.sort(rng.uniform(-2, 2, (2, 3)), axis=0)
        expected = all(a[0, k] <= b[1, k] and b[0, k] <= a[1, k] for k in range(3))
        assert aabb_aabb(tuple(a[0]), tuple(a[1]), tuple(b[0]), tuple(b[1])) == expected
    # touching faces count as overlapping
    assert aabb_aabb((0, 0, 0), (1, 1, 1), (1, 0, 0), (2, 1, 1))


def test_sphere_aabb_against_sampled_box_points():
    rng = np.random.default_rng(2)
    lo, hi = np.array([-1.0, -0.5, -0.25]), np.array([1.0, 0.5, 0.25])
    grid = np.stack(np.meshgrid(*(np.linspace(lo[k], hi[k], 41) for k in range(3))), -1).reshape(-1, 3)
    for _ in range(200):
        c = rng.uniform(-2.5, 2.5, 3)
        r = rng.uniform(0.05, 1.0)
        q = np.array(closest_point_aabb(tuple(c), tuple(lo), tuple(hi)))
        assert np.linalg.norm(c - q) <= np.linalg.norm(grid - c, axis=1).min() + 1e-12
        nearest = np.linalg.norm(grid - c, axis=1).min()
        if abs(nearest - r) > 0.06:  # away from the boundary, the sampled answer is exact
            assert sphere_aabb(tuple(c), r, tuple(lo), tuple(hi)) == (nearest <= r)


def test_sphere_box_is_sphere_aabb_in_the_box_frame():
    """The narrow phase's sphere–OBB test agrees with sphere–AABB for an unrotated box, and finds the
    same closest point."""
    rng = np.random.default_rng(3)
    h = (1.0, 0.5, 0.25)
    H = pack_hulls([])
    for _ in range(200):
        c = rng.uniform(-2, 2, 3)
        r = 0.3
        normal, pa, pb, depths = np.zeros(3), np.zeros((4, 3)), np.zeros((4, 3)), np.zeros(4)
        k = sphere_box(tuple(c), (0.0, 0.0, 0.0, 1.0), (r, 0, 0, 0), (0.0, 0.0, 0.0), (0.0, 0.0, 0.0, 1.0),
                       (*h, 0.0), H, 0.0, normal, pa, pb, depths, no_trace())
        touching = sphere_aabb(tuple(c), r, tuple(-x for x in h), h)
        assert (k == 1 and depths[0] >= 0) == touching or abs(np.linalg.norm(
            c - np.array(closest_point_aabb(tuple(c), tuple(-x for x in h), h))) - r) < 1e-9
        outside = np.any(np.abs(c) > h)
        if k and outside:
            assert np.allclose(pb[0], closest_point_aabb(tuple(c), tuple(-x for x in h), h))
