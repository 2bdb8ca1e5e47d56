"""Snapshots (``World.snapshot`` / ``World.restore``, ``engine/snapshot.py``): a restored world steps bit for
bit as the original did, whatever happened in between, and a snapshot is a set of copies.

Every run below records, per step, the state hash and the step's collision events (kind and the two
bodies' rows), so that the event state (touching keys, pending ends) is checked along with the bodies.
"""

from __future__ import annotations

import numpy as np
import pytest

from sandbox import scenes
from sandbox.engine import Box, Capsule, ConvexHull, Sphere, World
from sandbox.engine.bodies import STATE_FIELDS
from sandbox.engine.snapshot import History, Snapshot
from tests.test_determinism import mixed_pile

DT = 1.0 / 60.0
STEPS = 300


def mixed_world() -> World:
    """The 300-body pile of every shape kind (tests/test_determinism.py) with a rod between two bodies, a
    pendulum on a rope from a world point, and a mouse grab pulling one body aside."""
    w = World()
    mixed_pile(w, 300)
    bodies = w.bodies
    w.add_distance_joint(bodies[1], bodies[2])
    bob = w.add_body(Sphere(0.3), position=(6.0, 3.0, 0.0), restitution=0.5)
    w.add_distance_joint(bob, None, anchor_b=(6.0, 6.0, 1.0), rope=True)
    w.grab(bodies[40], bodies[40].position + (0.0, 1.0, 0.0)).target = (3.0, 4.0, 0.0)
    return w


def resume(world: World, steps: int = STEPS) -> list[tuple]:
    """``record`` with two bodies added halfway (into rows the free list picks)."""
    out = record(world, steps // 2)
    world.add_body(Box(0.3), position=(-3.0, 8.0, 0.0))
    hull = ConvexHull(scenes.random_hull_points(np.random.default_rng(3), 0.4))
    world.add_body(hull, position=(3.0, 8.0, 0.0))
    return out + record(world, steps - steps // 2)


def record(world: World, steps: int) -> list[tuple]:
    """Step ``world`` ``steps`` times; per step its state hash and its events (kind, rows of A and B)."""
    out = []
    for _ in range(steps):
        world.step(DT)
        events = tuple((e.kind, e.body_a.index, e.body_b.index) for e in world.events)
        out.append((world.state_hash(), events))
    return out


def disturb(world: World) -> list:
    """What a user may do between taking a snapshot and restoring it: remove bodies (one with a joint, one
    grabbed), add bodies of every kind (into the freed rows), change settings, step, add a body in a new
    row. Returns the handles of the bodies added."""
    rng = np.random.default_rng(5)
    bodies = world.bodies
    for b in bodies[3:30:3] + [bodies[1], bodies[40]]:
        world.remove_body(b)
    added = [world.add_body(shape, position=(k - 1.5, 12.0, 0.0), velocity=(0.0, -3.0, 0.0))
             for k, shape in enumerate((Sphere(0.3), Box(0.2), Capsule(0.2, 0.3),
                                        ConvexHull(scenes.random_hull_points(rng, 0.4))))]
    world.restitution_rule = "max"
    world.gravity = (0.0, -4.0, 0.0)
    bodies[100].restitution = 0.9
    record(world, 20)
    for k in range(20):
        added.append(world.add_body(Sphere(0.5), position=(1.1 * k, 20.0, 0.0), mass=0.0 if k == 0 else 1.0))
    return added


def arrays_of(snap: Snapshot) -> list[np.ndarray]:
    """Copies of every array of ``snap``, to compare it with later."""
    return [a.copy() for a in snap.arrays()]


def test_round_trip_is_bit_identical_after_adds_and_removes():
    w = mixed_world()
    record(w, 60)
    for b in w.bodies[200:203]:  # rows on the free list, which the next added bodies take
        w.remove_body(b)
    before = w.bodies
    snap = w.snapshot()
    h0 = w.state_hash()
    reference = resume(w)
    w.restore(snap)
    assert w.state_hash() == h0
    added = disturb(w)
    assert w.data.n > snap.n and any(b.index < snap.n for b in added)
    assert w.state_hash() != h0
    w.restore(snap)
    assert w.state_hash() == h0 and w.steps == snap.steps and w.time == snap.time
    # handles from before the snapshot are valid again (removed ones included), later ones are not
    assert w.bodies == before and all(b.alive for b in before)
    assert not any(b.alive for b in added)
    assert resume(w) == reference
    # later bodies in the same rows do not bring the stale handles back, also in the rows of restored
    # bodies (whose generation went back to the snapshot's) once those are removed again
    reused = {b.index for b in added}
    for b in before:
        if b.index in reused:
            w.remove_body(b)
    for _ in range(20):
        w.add_body(Sphere(0.1), position=(0.0, 30.0, 0.0))
    assert not any(b.alive for b in added)


def test_restore_twice_and_after_growing_past_the_capacity():
    w = World()
    scenes.ground(w)
    for k in range(50):
        w.add_body(Box(0.3) if k % 2 else Sphere(0.3), position=(0.0, 0.5 + 0.7 * k, 0.0))
    record(w, 30)
    snap = w.snapshot()
    reference = record(w, 120)
    w.restore(snap)
    extra = [w.add_body(Sphere(0.2), position=(k * 0.5, 40.0, 3.0)) for k in range(100)]  # grows the arrays
    record(w, 10)
    w.restore(snap)
    assert w.data.capacity == snap.capacity
    assert not any(b.alive for b in extra)
    assert record(w, 120) == reference
    w.restore(snap)
    assert record(w, 120) == reference
    for _ in range(100):  # the rows come back: the old handles must stay dead
        w.add_body(Sphere(0.2), position=(0.0, 60.0, 0.0))
    assert not any(b.alive for b in extra)


def test_scrub_back_and_resume_reproduces_the_run():
    w = mixed_world()
    history = []
    reference = []
    for _ in range(200):
        history.append(w.snapshot())
        reference += record(w, 1)
    for k in (150, 20, 120):
        w.restore(history[k])
        assert record(w, 200 - k) == reference[k:]


def test_every_step_restored_into_a_fresh_world_steps_as_the_original():
    """A snapshot of each step, restored into another world, gives the next step exactly: state that only
    the first step after a restore reads (the islands that waking follows, last step's touching pairs)
    is caught here. The scene: a sleeping row of boxes (one island) that a falling ball wakes."""
    w = World()
    scenes.ground(w)
    for k in range(5):
        w.add_body(Box(0.4), position=(0.8 * k, 0.4, 0.0))
    record(w, 90)
    assert not w.data.awake[1:6].any()
    w.add_body(Sphere(0.3), position=(0.0, 3.0, 0.0), velocity=(0.0, -2.0, 0.0), mass=5.0)
    other = World()
    for _ in range(40):
        snap = w.snapshot()
        expected = record(w, 1)
        other.restore(snap)
        assert record(other, 1) == expected
    assert w.data.awake[1:6].all()


def test_end_events_of_a_removed_body_survive_a_restore():
    """A body removed while touching owes an end event to the next step; a snapshot taken in between
    holds it, restored here or in another world."""
    w = World()
    scenes.ground(w)
    boxes = [w.add_body(Box(0.4), position=(1.0 * k, 0.4, 0.0)) for k in range(3)]
    record(w, 10)
    w.remove_body(boxes[1])
    snap = w.snapshot()
    expected = record(w, 1)
    assert ("end", 0, 2) in expected[0][1]
    for world in (w, World()):
        world.restore(snap)
        assert record(world, 1) == expected


def test_a_branch_differs_only_after_its_change():
    w = mixed_world()
    record(w, 30)
    snap = w.snapshot()
    reference = record(w, 120)
    w.restore(snap)
    assert record(w, 50) == reference[:50]
    w.gravity = (0.0, -3.0, 0.0)
    branch = record(w, 70)
    assert all(a[0] != b[0] for a, b in zip(branch, reference[50:], strict=True))
    w.restore(snap)
    assert record(w, 40) == reference[:40]
    w.bodies[7].restitution = 1.0
    w.restitution_rule = "max"
    bouncy = record(w, 80)
    assert bouncy[-1][0] != reference[-1][0]
    w.restore(snap)  # the branches left the snapshot as it was
    assert record(w, 120) == reference


def test_two_worlds_restored_from_one_snapshot_stay_identical():
    a = mixed_world()
    record(a, 40)
    a.contact_cache = True
    a.substeps = 6  # a setting away from its default: the other worlds must take it too
    snap = a.snapshot()
    b, c = World(), World()
    b.restore(snap)
    c.restore(snap)
    assert b.substeps == 6 and len(b.joints) == 2 and len(b.grabs) == 1
    assert b.state_hash() == c.state_hash() == a.state_hash()
    run_b, run_c = record(b, STEPS), record(c, STEPS)
    assert run_b == run_c == record(a, STEPS)
    # the A/B start: the same start with one setting changed goes its own way
    c.restore(snap)
    c.response = "penalty"
    assert record(c, 30)[-1][0] != run_b[29][0]


def test_a_snapshot_holds_copies():
    w = mixed_world()
    record(w, 30)
    snap = w.snapshot()
    saved = arrays_of(snap)
    reference = record(w, 60)
    disturb(w)
    w.snapshot()  # a later snapshot shares arrays with this one only where the bits are equal
    record(w, 30)
    assert all(np.array_equal(x, y) for x, y in zip(saved, snap.arrays(), strict=True))
    w.restore(snap)
    record(w, 5)
    assert all(np.array_equal(x, y) for x, y in zip(saved, snap.arrays(), strict=True))
    w.restore(snap)
    assert record(w, 60) == reference


def test_a_snapshot_is_compact_and_shares_what_did_not_change():
    w = World()
    scenes.ground(w)
    for k in range(30):  # boxes that come to rest and sleep
        w.add_body(Box(0.4), position=(1.2 * (k % 6), 0.5 + 1.2 * (k // 6), 0.0))
    record(w, 5)
    first = w.snapshot()
    n = w.data.n
    assert set(first.bodies) == set(STATE_FIELDS)
    assert all(isinstance(first.bodies[f], np.ndarray) and len(first.bodies[f]) == n for f in STATE_FIELDS)
    record(w, 1)
    second = w.snapshot()  # bodies move: arrays are copied, the dictionaries and settings shared
    assert second.bodies["pos"] is not first.bodies["pos"]
    assert second.shapes is first.shapes and second.settings is first.settings and second.hulls is first.hulls
    record(w, 600)
    assert not w.data.awake[1:n].any()
    third = w.snapshot()
    record(w, 1)
    fourth = w.snapshot()  # everything sleeps: every array is shared
    assert all(fourth.bodies[f] is third.bodies[f] for f in STATE_FIELDS)
    assert fourth.nbytes(since=third) == 0 < fourth.nbytes()
    # -0.0 and 0.0 are different bits: the snapshot must not share an array that only compares equal
    w.data.torque[3, 0] = -0.0
    fifth = w.snapshot()
    assert fifth.bodies["torque"] is not fourth.bodies["torque"]
    assert fifth.bodies["pos"] is fourth.bodies["pos"]
    assert np.signbit(fifth.bodies["torque"][3, 0])


def test_restore_rejects_what_is_not_a_snapshot():
    with pytest.raises(ValueError, match="Snapshot"):
        World().restore({"pos": np.zeros((1, 3))})


def test_history_seeks_any_step_by_replay():
    w = World()
    scenes.s1_pile(w, 64)
    history = History(w, every=25)
    hashes = {0: w.state_hash()}
    for _ in range(120):
        w.step(DT)
        history.record(w, DT)
        if w.steps == 70:  # a change between steps: a replay must not step past it
            w.bodies[5].linear_velocity = (0.0, 6.0, 0.0)
            history.mark(w)
        hashes[w.steps] = w.state_hash()
    assert history.first_step == 0 and history.last_step == 120
    for step in (120, 0, 10, 25, 69, 70, 71, 99, 33):
        history.seek(w, step)
        assert w.steps == step and w.state_hash() == hashes[step]
    # a new branch from step 40: its steps replace the old ones after 40
    history.seek(w, 40)
    w.gravity = (0.0, -2.0, 0.0)
    history.mark(w)
    branch = {}
    for _ in range(30):
        w.step(DT)
        history.record(w, DT)
        branch[w.steps] = w.state_hash()
    assert history.last_step == 70
    history.seek(w, 55)
    assert w.state_hash() == branch[55] != hashes[55]
    with pytest.raises(ValueError, match="step must be from 0 to 70"):
        history.seek(w, 100)
    # keyframes every 25 steps cost a fraction of a snapshot per step
    assert history.nbytes() < 10 * w.snapshot().nbytes()
