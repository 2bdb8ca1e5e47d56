"""Collision events are decoded once, at the step that saw them: they name the same bodies whatever
happens afterwards (bodies removed, added or reusing rows), and begins and ends come in balanced pairs,
also when a body is removed (pymunk's rule)."""

from __future__ import annotations

from collections import Counter

import numpy as np

from sandbox.engine import Box, Sphere, World

DT = 1 / 60


def stack() -> tuple[World, list]:
    """A ground and two boxes resting on each other, stepped until every contact has begun."""
    w = World()
    bodies = [w.add_body(Box((5, 0.5, 5)), position=(0, -0.5, 0), mass=0.0),
              w.add_body(Box((0.5, 0.5, 0.5)), position=(0, 0.5, 0)),
              w.add_body(Box((0.5, 0.5, 0.5)), position=(0, 1.5, 0))]
    for _ in range(5):
        w.step(DT)
    return w, bodies


def pairs(events, kind):
    return sorted(tuple(sorted((e.body_a.index, e.body_b.index))) for e in events if e.kind == kind)


def test_events_can_be_read_after_a_body_is_removed():
    w = World()
    ground = w.add_body(Box((5, 0.5, 5)), position=(0, -0.5, 0), mass=0.0)
    ball = w.add_body(Sphere(0.5), position=(3, 0.49, 0))
    box = w.add_body(Box((0.5, 0.5, 0.5)), position=(0, 0.5, 0))
    w.step(DT)
    w.remove_body(box)  # before the events were first read
    events = w.events
    assert pairs(events, "begin") == [(0, 1), (0, 2)]
    gone = [e for e in events if box in (e.body_a, e.body_b)]
    assert len(gone) == 1 and not (gone[0].body_a.alive and gone[0].body_b.alive)
    assert {gone[0].body_a, gone[0].body_b} == {ground, box}
    assert ball.alive


def test_adding_a_far_body_to_a_resting_stack_reports_nothing():
    w, _ = stack()
    w.add_body(Sphere(0.5), position=(100, 100, 0))
    w.step(DT)
    assert w.events == []
    w.step(DT)
    assert w.events == []


def test_removing_a_body_after_rows_were_added_ends_its_contacts():
    w, (ground, low, high) = stack()
    w.add_body(Sphere(0.5), position=(100, 100, 0))  # more rows: the pair keys' row count changed
    w.remove_body(high)
    w.step(DT)
    assert pairs(w.events, "end") == [(1, 2)]
    assert w.events[0].body_b == high or w.events[0].body_a == high


def test_events_keep_naming_the_removed_body_when_its_row_is_reused():
    w, (ground, low, high) = stack()
    w.step(DT)
    w.remove_body(high)
    newcomer = w.add_body(Sphere(0.5), position=(20, 0.5, 0))
    assert newcomer.index == high.index
    w.step(DT)
    (end,) = w.events
    assert end.kind == "end" and {end.body_a, end.body_b} == {low, high}
    assert newcomer not in (end.body_a, end.body_b)


def test_begins_and_ends_balance_through_removals_and_additions():
    rng = np.random.default_rng(3)
    w = World()
    w.add_body(Box((6, 0.5, 6)), position=(0, -0.5, 0), mass=0.0)
    open_pairs: Counter = Counter()
    for step in range(240):
        if step % 10 == 0:
            w.add_body(Sphere(0.4), position=(rng.uniform(-2, 2), 3.0, rng.uniform(-2, 2)),
                       restitution=0.5)
        if step % 25 == 24:
            dynamic = [b for b in w.bodies if not b.static]
            w.remove_body(dynamic[int(rng.integers(len(dynamic)))])
        if step == 120:
            w.add_body(Box(0.2), position=(50, 50, 50))  # far away: only grows the row count
        w.step(DT)
        for e in w.events:
            key = frozenset(((e.body_a.index, e.body_a.generation), (e.body_b.index, e.body_b.generation)))
            if e.kind == "begin":
                assert open_pairs[key] == 0, f"second begin for {key} at step {step}"
                open_pairs[key] += 1
            else:
                assert open_pairs[key] == 1, f"end without a begin for {key} at step {step}"
                open_pairs[key] -= 1
    w.clear()
    w.step(DT)
    for e in w.events:
        key = frozenset(((e.body_a.index, e.body_a.generation), (e.body_b.index, e.body_b.generation)))
        assert e.kind == "end" and open_pairs[key] == 1
        open_pairs[key] -= 1
    assert sum(open_pairs.values()) == 0  # every begin was ended once the dynamic bodies went


def test_callbacks_receive_the_same_events():
    w = World()
    seen = []
    w.on_collision_begin(seen.append)
    w.on_collision_end(seen.append)
    w.add_body(Box((5, 0.5, 5)), position=(0, -0.5, 0), mass=0.0)
    ball = w.add_body(Sphere(0.5), position=(0, 0.49, 0))
    w.step(DT)
    assert [e.kind for e in seen] == ["begin"] and seen == w.events
    assert seen[0].impulse is not None and np.isfinite(seen[0].point).all()
    w.remove_body(ball)
    w.step(DT)
    assert [e.kind for e in seen] == ["begin", "end"]


def test_touching_pairs_are_those_with_an_overlap_or_an_impulse():
    """A pair touches after a step when a point of its manifold overlaps or took an impulse
    (``contact_solver.store_impulses`` marks it, ``events.touching_keys`` reads the marks): a sleeping
    stack, whose manifolds get no solver points and so no impulse, touches by its overlaps; a box held
    just above it, within the speculative margin, has a manifold and does not touch."""
    w, bodies = stack()
    w.sleeping = True
    w.gravity = (0.0, -9.81, 0.0)
    hover = w.add_body(Box((0.5, 0.5, 0.5)), position=(0, 2.51, 0), mass=0.0)  # 1 cm above the stack
    for _ in range(240):
        w.step(DT)
    assert not any(b.awake for b in bodies[1:])  # the stack sleeps
    c = w.contacts
    n = w.data.n
    expected, speculative = set(), set()
    for i in range(c.count):
        k = c.npoints[i]
        a, b = sorted((int(c.body_a[i]), int(c.body_b[i])))
        if (c.depth[i, :k] > 0).any() or (c.impulse[i, :k] > 0).any():
            expected.add(a * n + b)
        else:
            speculative.add((a, b))
    assert (bodies[2].index, hover.index) in speculative
    assert {(0, 1), (1, 2)} <= {divmod(key, n) for key in expected}
    assert not (c.impulse[: c.count] > 0).any()  # asleep: the overlaps alone make them touch
    assert set(w._touching.tolist()) == expected
