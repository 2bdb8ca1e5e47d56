"""The world's body storage and handles: arrays that grow, removal that keeps other handles valid, mass
properties in the arrays, static and rotation-locked bodies, and the public API's checks."""

from __future__ import annotations

import numpy as np
import pytest

from sandbox.engine import Box, Capsule, ConvexHull, Sphere, World


def test_add_and_read_back():
    w = World()
    b = w.add_body(Sphere(0.5), position=(1, 2, 3), orientation=(0, 0, 0, 2), mass=2.0, restitution=0.3,
                   friction=0.7, velocity=(1, 0, 0), angular_velocity=(0, 1, 0))
    assert np.allclose(b.position, (1, 2, 3))
    assert np.allclose(b.orientation, (0, 0, 0, 1))  # normalised
    assert np.allclose(b.linear_velocity, (1, 0, 0))
    assert np.allclose(b.angular_velocity, (0, 1, 0))
    assert b.mass == 2.0 and b.restitution == 0.3 and b.friction == 0.7
    d = w.data
    assert d.inv_mass[b.index] == 0.5
    assert np.allclose(d.inv_inertia[b.index], np.eye(3) / (0.4 * 2.0 * 0.25))


def test_arrays_grow_and_removal_keeps_handles():
    w = World()
    bodies = [w.add_body(Sphere(0.1), position=(i, 0, 0)) for i in range(300)]
    assert w.data.capacity >= 300
    w.remove_body(bodies[10])
    assert not bodies[10].alive
    with pytest.raises(ValueError):
        _ = bodies[10].position
    assert np.allclose(bodies[11].position, (11, 0, 0))
    again = w.add_body(Box(0.2), position=(-1, 0, 0))
    assert again.index == 10  # the row is reused, with a new generation
    assert again != bodies[10]
    with pytest.raises(ValueError):
        bodies[10].position = (0, 0, 0)
    assert len(w.bodies) == 300


def test_static_bodies_never_move():
    w = World()
    s = w.add_body(Box((1, 1, 1)), mass=0.0, velocity=(5, 0, 0))
    assert s.static
    assert np.allclose(s.linear_velocity, 0.0)
    w.step(1 / 60)
    assert np.allclose(s.position, 0.0)
    s.apply_impulse((10, 0, 0))
    assert np.allclose(s.linear_velocity, 0.0)
    s.static = False
    assert s.mass == 1.0 and not s.static


def test_locked_rotation_box_behaves_as_aabb():
    w = World()
    w.sleeping = False
    w.add_body(Box((5, 0.5, 5)), position=(0, -0.5, 0), mass=0.0)
    b = w.add_body(Box((0.5, 0.5, 0.5)), position=(0.45, 0.6, 0), lock_rotation=True)
    b.apply_impulse((0, 0, 1), point=b.position + (0.5, 0.5, 0))
    for _ in range(60):
        w.step(1 / 60)
    assert np.allclose(b.orientation, (0, 0, 0, 1))
    assert np.allclose(b.angular_velocity, 0.0)


def test_hull_body_position_is_its_points_frame():
    w = World(gravity=(0, 0, 0))
    pts = np.array([[x, y, z] for x in (0, 1) for y in (0, 1) for z in (0, 1)], float)
    b = w.add_body(ConvexHull(pts), position=(2, 0, 0))
    assert np.allclose(b.position, (2, 0, 0))
    assert np.allclose(b.center_of_mass, (2.5, 0.5, 0.5))
    b.orientation = (0, 0, np.sin(np.pi / 4), np.cos(np.pi / 4))
    assert np.allclose(b.position, (2, 0, 0))  # turning keeps the frame's origin in place


def test_mass_setter_rescales_inertia():
    w = World()
    b = w.add_body(Capsule(0.3, 0.5), mass=1.0)
    i1 = np.linalg.inv(w.data.inv_inertia_local[b.index])
    b.mass = 3.0
    i3 = np.linalg.inv(w.data.inv_inertia_local[b.index])
    assert np.allclose(i3, 3.0 * i1)


@pytest.mark.parametrize("kwargs,word", [
    ({"mass": -1.0}, "mass"), ({"position": (0, np.inf, 0)}, "position"), ({"velocity": (1, 2)}, "velocity"),
    ({"orientation": (0, 0, 0, 0)}, "orientation"), ({"restitution": -0.1}, "restitution"),
    ({"friction": float("nan")}, "friction"),
])
def test_add_body_rejects_bad_input(kwargs, word):
    with pytest.raises(ValueError, match=word):
        World().add_body(Sphere(1), **kwargs)


def test_add_body_rejects_non_shape():
    with pytest.raises(ValueError, match="shape"):
        World().add_body("sphere")


def test_raycast_through_world_and_bad_direction():
    w = World()
    w.add_body(Box((5, 0.5, 5)), position=(0, -0.5, 0), mass=0.0)
    ball = w.add_body(Sphere(0.5), position=(0, 2, 0))
    hit = w.raycast((0, 10, 0), (0, -2, 0))
    assert hit.body == ball
    assert hit.distance == pytest.approx(7.5)
    assert np.allclose(hit.normal, (0, 1, 0))
    assert w.raycast((0, 10, 0), (0, 1, 0)) is None
    assert w.raycast((0, 10, 0), (0, -1, 0), max_distance=5.0) is None
    with pytest.raises(ValueError, match="direction"):
        w.raycast((0, 0, 0), (0, 0, 0))


def test_manifolds_report_touching_pairs_with_bodies():
    w = World()
    ground = w.add_body(Box((5, 0.5, 5)), position=(0, -0.5, 0), mass=0.0)
    box = w.add_body(Box((0.5, 0.5, 0.5)), position=(0, 0.49, 0))
    w.step(1 / 60)
    ms = w.manifolds
    assert len(ms) == 1
    m = ms[0]
    assert {m.body_a, m.body_b} == {ground, box}
    assert len(m.depths) == 4 and (m.depths > 0).all()
    sign = 1 if m.body_a == ground else -1
    assert np.allclose(m.normal * sign, (0, 1, 0))


def test_clear_removes_dynamic_bodies():
    w = World()
    w.add_body(Box((5, 0.5, 5)), mass=0.0)
    for i in range(5):
        w.add_body(Sphere(0.2), position=(i, 3, 0))
    w.clear()
    assert len(w.bodies) == 1


def test_manifold_cache_reuses_resting_pairs_and_recollides_moved_ones():
    from sandbox.engine.collide import collide

    w = World()
    w.sleeping = False
    ground = w.add_body(Box((5, 0.5, 5)), position=(0, -0.5, 0), mass=0)
    box = w.add_body(Box((0.5, 0.5, 0.5)), position=(0, 0.5, 0), orientation=(0, 0.0436, 0, 0.999))
    for _ in range(60):
        w.step(1 / 60)
    assert w.cached_manifolds == 1  # the resting pair's manifold is reused
    (m,) = w.manifolds
    fresh = collide(ground.shape, ground.position, ground.orientation, box.shape, box.position,
                    box.orientation)
    assert fresh is not None and len(fresh.depths) == len(m.depths) == 4
    # the reused points are the fresh ones to within the cache's tolerance (1 mm)
    for p in m.points_b:
        assert np.min(np.linalg.norm(fresh.points_b - p, axis=1)) < 1e-3
    assert abs(m.depths.max() - fresh.depths.max()) < 1e-3

    box.position = box.position + np.array([0.01, 0.0, 0.0])  # 1 cm: beyond the tolerance
    w.step(1 / 60)
    assert w.cached_manifolds == 0
    w.step(1 / 60)
    assert w.cached_manifolds == 1

    w.contact_cache = False
    for _ in range(3):
        w.step(1 / 60)
        assert w.cached_manifolds == 0
    assert abs(box.position[1] - 0.5) < 5e-3


def test_manifold_cache_names_the_bodies_when_every_pair_is_reused():
    # three boxes resting apart on the ground: every pair's manifold comes from the cache. Lifting the
    # middle box away drops its pair, and the other two, still reused, must name their own bodies (a step
    # where every pair is reused runs no narrow phase, so the reuse pass writes them)
    w = World()
    w.sleeping = False
    ground = w.add_body(Box((10, 0.5, 10)), position=(0, -0.5, 0), mass=0)
    boxes = [w.add_body(Box((0.5, 0.5, 0.5)), position=(x, 0.5, 0)) for x in (-3.0, 0.0, 3.0)]
    for _ in range(60):
        w.step(1 / 60)
    assert w.cached_manifolds == 3
    boxes[1].position = (0.0, 20.0, 0.0)
    w.step(1 / 60)
    assert w.cached_manifolds == 2 == w.contacts.count
    pairs = {frozenset((m.body_a.index, m.body_b.index)) for m in w.manifolds}
    assert pairs == {frozenset((ground.index, boxes[0].index)), frozenset((ground.index, boxes[2].index))}
    for m in w.manifolds:
        box = m.body_b if m.body_a.index == ground.index else m.body_a
        assert np.all(np.abs(m.points_b[:, 0] - box.position[0]) < 0.6)


def test_manifold_cache_keeps_no_entry_for_a_pair_with_a_sphere_or_capsule():
    # such a pair is never reused (manifold_cache.reuse_rows), so remember_manifolds gives it no entry:
    # a ball and a capsule resting on the ground beside a box keep one entry, the box's, with its points
    w = World()
    w.sleeping = False
    w.add_body(Box((5, 0.5, 5)), position=(0, -0.5, 0), mass=0)
    box = w.add_body(Box((0.5, 0.5, 0.5)), position=(0, 0.5, 0))
    w.add_body(Sphere(0.5), position=(2, 0.5, 0))
    w.add_body(Capsule(0.3, 0.5), position=(-2, 0.3, 0), orientation=(0, 0, 0.7071068, 0.7071068))
    for _ in range(30):
        w.step(1 / 60)
    assert w.contacts.count == 3
    cache = w._manifold_cache
    entries = cache.entries()
    assert cache.count == 1 and cache.points == 4 == entries.npoints[0]
    assert set(entries.bodies[0]) == {0, box.index}
    assert w.cached_manifolds == 1
