"""Ray casts: analytic hits on each shape kind, and ``BroadPhase.raycast`` against a loop over all bodies."""

from __future__ import annotations

import math

import numpy as np
import pytest
from hypothesis import given, settings
from hypothesis import strategies as st

from sandbox.engine.broadphase import BroadPhase
from sandbox.engine.core.layout import BOX, CAPSULE, HULL, SPHERE
from sandbox.engine.core.raycast import ray_body
from sandbox.engine.linalg3 import norm
from sandbox.engine.shapes import ConvexHull, pack_hulls

CUBE = ConvexHull([[x, y, z] for x in (-1, 1) for y in (-1, 1) for z in (-1, 1)])
TETRA = ConvexHull([[0, 0, 0], [1, 0, 0], [0, 1, 0], [0, 0, 1]])
H = pack_hulls([CUBE, TETRA])
IDENTITY = (0.0, 0.0, 0.0, 1.0)


def quat_axis_angle(axis, angle) -> tuple:
    a = np.asarray(axis, float) / np.linalg.norm(axis)
    s = math.sin(angle / 2)
    return (a[0] * s, a[1] * s, a[2] * s, math.cos(angle / 2))


def cast(kind, prm, origin, direction, pos=(0.0, 0.0, 0.0), quat=IDENTITY):
    d = np.asarray(direction, float)
    d = d / np.linalg.norm(d)
    t, n = ray_body(tuple(map(float, origin)), tuple(d), kind, np.asarray(prm, float),
                    tuple(map(float, pos)), tuple(map(float, quat)), H)
    return t, np.array(n)


def test_sphere():
    t, n = cast(SPHERE, [1, 0, 0, 0], (-5, 0, 0), (1, 0, 0), pos=(0, 0, 0))
    assert t == pytest.approx(4.0) and n == pytest.approx([-1, 0, 0])
    t, n = cast(SPHERE, [2, 0, 0, 0], (0, 10, 1), (0, -1, 0), pos=(0, 3, 0))
    assert t == pytest.approx(7.0 - math.sqrt(3.0))
    assert n == pytest.approx([0, math.sqrt(3.0) / 2, 0.5])
    assert cast(SPHERE, [1, 0, 0, 0], (-5, 1.01, 0), (1, 0, 0))[0] == -1.0  # passes above
    assert cast(SPHERE, [1, 0, 0, 0], (5, 0, 0), (1, 0, 0))[0] == -1.0  # pointing away


def test_box_axis_aligned_and_rotated():
    t, n = cast(BOX, [1, 2, 3, 0], (0, 10, 0), (0, -1, 0))
    assert t == pytest.approx(8.0) and n == pytest.approx([0, 1, 0])
    t, n = cast(BOX, [1, 2, 3, 0], (0.5, 0, -10), (0, 0, 1), pos=(0, 1, 0))
    assert t == pytest.approx(7.0) and n == pytest.approx([0, 0, -1])
    # A unit cube turned 45° about y shows an edge to a ray along x: the hit is at x = -√2·h.
    q = quat_axis_angle((0, 1, 0), math.pi / 4)
    t, n = cast(BOX, [1, 1, 1, 0], (-10, 0.3, 0.2), (1, 0, 0), quat=q)
    assert t == pytest.approx(10 - (math.sqrt(2) - 0.2))
    assert abs(n[1]) < 1e-12 and n[0] < 0
    # Turned 30° about z, the top face's normal is (−sin30, cos30, 0); a vertical ray meets its plane.
    q = quat_axis_angle((0, 0, 1), math.pi / 6)
    t, n = cast(BOX, [1, 0.5, 1, 0], (0, 5, 0), (0, -1, 0), quat=q)
    assert n == pytest.approx([-0.5, math.sqrt(3) / 2, 0])
    assert t == pytest.approx(5 - 0.5 / math.cos(math.pi / 6))
    assert cast(BOX, [1, 1, 1, 0], (0, 1.001, -5), (0, 0, 1))[0] == -1.0


def test_capsule_side_and_caps():
    t, n = cast(CAPSULE, [0.5, 1.0, 0, 0], (-4, 0.7, 0), (1, 0, 0))
    assert t == pytest.approx(3.5) and n == pytest.approx([-1, 0, 0])
    t, n = cast(CAPSULE, [0.5, 1.0, 0, 0], (0, 9, 0), (0, -1, 0))
    assert t == pytest.approx(7.5) and n == pytest.approx([0, 1, 0])
    t, n = cast(CAPSULE, [0.5, 1.0, 0, 0], (0.3, -9, 0), (0, 1, 0))
    assert t == pytest.approx(9 - 1 - 0.4) and n == pytest.approx([0.6, -0.8, 0])
    # Lying along x (90° about z), seen from above: a ray at z = 0.3 meets the side at y = 0.4.
    q = quat_axis_angle((0, 0, 1), math.pi / 2)
    t, n = cast(CAPSULE, [0.5, 1.0, 0, 0], (0.2, 5, 0.3), (0, -1, 0), pos=(0, 0, 0), quat=q)
    assert t == pytest.approx(4.6) and n == pytest.approx([0, 0.8, 0.6])
    assert cast(CAPSULE, [0.5, 1.0, 0, 0], (0.6, -9, 0), (0, 1, 0))[0] == -1.0


def test_hull():
    t, n = cast(HULL, [0, 0, 0, 0], (0.2, 0.3, -6), (0, 0, 1), pos=(0, 0, 1))
    assert t == pytest.approx(6.0) and n == pytest.approx([0, 0, -1])
    # The tetrahedron's slanted face x + y + z = 1 (relative to its corner at the origin).
    c = TETRA.center
    t, n = cast(HULL, [1, 0, 0, 0], (0.2, 0.2, 5.0), (0, 0, -1), pos=tuple(c))
    assert t == pytest.approx(5.0 - 0.6) and n == pytest.approx(np.ones(3) / math.sqrt(3))
    q = quat_axis_angle((1, 1, 0), 0.7)
    tb, nb = cast(BOX, [1, 1, 1, 0], (3, 4, 5), (-1, -1.2, -1.3), quat=q)
    th, nh = cast(HULL, [0, 0, 0, 0], (3, 4, 5), (-1, -1.2, -1.3), quat=q)
    assert th == pytest.approx(tb) and nh == pytest.approx(nb)
    assert cast(HULL, [1, 0, 0, 0], (0.6, 0.6, 5.0), (0, 0, -1), pos=tuple(c))[0] == -1.0


@pytest.mark.parametrize("kind,prm", [(SPHERE, [1, 0, 0, 0]), (BOX, [1, 1, 1, 0]), (CAPSULE, [0.5, 1, 0, 0]),
                                      (HULL, [0, 0, 0, 0])])
def test_start_inside_hits_at_zero(kind, prm):
    t, n = cast(kind, prm, (0.1, 0.2, 0.1), (0.3, -1, 0.2))
    assert t == 0.0
    np.testing.assert_allclose(n, -np.array([0.3, -1, 0.2]) / np.linalg.norm([0.3, -1, 0.2]))


def scene_arrays(bodies) -> tuple:
    """(n, alive, kind, params, pos, quat, H) of a list of (kind, params, pos, quat)."""
    n = len(bodies)
    kind = np.array([b[0] for b in bodies], np.int64)
    params = np.array([b[1] for b in bodies], float).reshape(n, 4)
    pos = np.array([b[2] for b in bodies], float).reshape(n, 3)
    quat = np.array([b[3] for b in bodies], float).reshape(n, 4)
    return n, np.ones(n, bool), kind, params, pos, quat, H


def test_raycast_scene_closest_and_cutoff():
    scene = scene_arrays([
        (BOX, [100, 1, 100, 0], (0, -1, 0), IDENTITY),  # ground, kept out of the grid
        (SPHERE, [0.5, 0, 0, 0], (0, 3, 0), IDENTITY),
        (SPHERE, [0.5, 0, 0, 0], (0, 1, 0), IDENTITY),
        (CAPSULE, [0.3, 0.5, 0, 0], (5, 1, 0), IDENTITY),
    ])
    bp = BroadPhase()
    hit = bp.raycast((0, 10, 0), (0, -2, 0), math.inf, *scene)
    assert hit.body == 1 and hit.distance == pytest.approx(6.5)
    np.testing.assert_allclose(hit.point, [0, 3.5, 0])
    np.testing.assert_allclose(hit.normal, [0, 1, 0])
    assert bp.raycast((0, 10, 0), (0, -1, 0), 6.4, *scene) is None
    assert bp.raycast((2, 10, 0), (0, -1, 0), 100.0, *scene).body == 0
    assert bp.raycast((-10, 1.2, 0), (1, 0, 0), 100.0, *scene).body == 2
    assert bp.raycast((0, 1, 0), (1, 0, 0), 100.0, *scene).distance == 0.0
    scene[1][2] = False  # a dead body is not hit
    assert bp.raycast((-10, 1.2, 0), (1, 0, 0), 100.0, *scene).body == 3
    assert bp.raycast((0, 10, 0), (0, 1, 0), math.inf, *scene) is None


def test_raycast_uses_current_positions():
    n, alive, kind, params, pos, quat, H_ = scene_arrays([(SPHERE, [0.5, 0, 0, 0], (0, 0, 0), IDENTITY),
                                                         (SPHERE, [0.5, 0, 0, 0], (3, 0, 0), IDENTITY)])
    bp = BroadPhase()
    assert bp.raycast((0, 5, 0), (0, -1, 0), 10.0, n, alive, kind, params, pos, quat, H_).body == 0
    pos[0] = (20, 0, 0)
    assert bp.raycast((0, 5, 0), (0, -1, 0), 10.0, n, alive, kind, params, pos, quat, H_) is None


def test_raycast_rejects_bad_input():
    scene = scene_arrays([(SPHERE, [0.5, 0, 0, 0], (0, 0, 0), IDENTITY)])
    bp = BroadPhase()
    with pytest.raises(ValueError, match="direction"):
        bp.raycast((0, 0, 0), (0, 0, 0), 1.0, *scene)
    with pytest.raises(ValueError, match="direction"):
        bp.raycast((0, 0, 0), (0, math.nan, 1), 1.0, *scene)
    with pytest.raises(ValueError, match="max_distance"):
        bp.raycast((0, 0, 0), (0, 1, 0), -1.0, *scene)
    with pytest.raises(ValueError, match="max_distance"):
        bp.raycast((0, 0, 0), (0, 1, 0), math.nan, *scene)
    with pytest.raises(ValueError, match="origin"):
        bp.raycast((0, 0), (0, 1, 0), 1.0, *scene)


def brute_raycast(origin, direction, max_distance, n, alive, kind, params, pos, quat, H_):
    """The oracle: every live body's shape tested, the nearest hit kept (lowest index on ties)."""
    d = np.asarray(direction, float) / norm(direction)  # as BroadPhase.raycast normalises it, to the bit
    best = None
    for i in range(n):
        if not alive[i]:
            continue
        o = tuple(map(float, origin))
        t, _ = ray_body(o, tuple(d), kind[i], params[i], tuple(pos[i]), tuple(quat[i]), H_)
        if 0.0 <= t <= max_distance and (best is None or t < best[1]):
            best = (i, t)
    return best


@settings(max_examples=20, deadline=None)
@given(seed=st.integers(0, 2**31), n=st.integers(1, 80), spread=st.sampled_from([2.0, 6.0, 20.0]))
def test_raycast_matches_brute_force(seed, n, spread):
    rng = np.random.default_rng(seed)
    bodies = []
    for _ in range(n):
        k = int(rng.integers(0, 4))
        prm = [0.0, 0.0, 0.0, 0.0]
        if k == HULL:
            prm[0] = float(rng.integers(0, 2))
        else:
            prm[:3] = rng.uniform(0.1, 1.5, 3).tolist()
        q = rng.normal(size=4)
        bodies.append((k, prm, rng.uniform(-spread, spread, 3), q / np.linalg.norm(q)))
    if rng.random() < 0.5:
        bodies[0] = (BOX, [300, 1, 300, 0], (0, -spread - 1, 0), IDENTITY)
    scene = scene_arrays(bodies)
    scene[1][rng.random(n) < 0.1] = False
    bp = BroadPhase()
    for _ in range(10):
        origin = rng.uniform(-1.5 * spread, 1.5 * spread, 3)
        direction = rng.normal(size=3)
        max_distance = float(rng.choice([math.inf, spread]))
        hit = bp.raycast(origin, direction, max_distance, *scene)
        expected = brute_raycast(origin, direction, max_distance, *scene)
        if expected is None:
            assert hit is None
        else:
            assert hit is not None and hit.body == expected[0] and hit.distance == expected[1]
            np.testing.assert_allclose(np.linalg.norm(hit.normal), 1.0)


def test_raycast_axis_aligned_rays_on_cell_boundaries():
    # Boxes on a lattice: rays along the axes at coordinates where grid cell faces lie, and through the
    # lattice's touching faces, must still find what a loop over all bodies finds.
    g = np.arange(-3, 4, dtype=float)
    centres = np.stack(np.meshgrid(g, g, g, indexing="ij"), -1).reshape(-1, 3)
    keep = np.random.default_rng(1).random(len(centres)) < 0.3
    scene = scene_arrays([(BOX, [0.5, 0.5, 0.5, 0], c, IDENTITY) for c in centres[keep]])
    bp = BroadPhase()
    for a in (-2.5, -1.0, -0.5, 0.0, 1.5, 2.0):
        for b in (-1.5, 0.0, 0.5, 2.5):
            for origin, direction in (((-10, a, b), (1, 0, 0)), ((a, 10, b), (0, -1, 0)),
                                      ((a, b, 10), (0, 0, -1)), ((10, b, a), (-1, 0, 0))):
                hit = bp.raycast(origin, direction, math.inf, *scene)
                expected = brute_raycast(origin, direction, math.inf, *scene)
                assert (hit is None) == (expected is None)
                if hit is not None:
                    assert (hit.body, hit.distance) == expected
