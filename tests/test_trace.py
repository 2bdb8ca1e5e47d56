"""The traced step (World.step_traced): it advances the world exactly as step does, and records the
stages, the candidate pairs and every pass of the solver."""

from __future__ import annotations

import copy

import numpy as np
import pytest

from sandbox import scenes
from sandbox.engine import Box, World
from sandbox.engine.world import STAGES

DT = 1.0 / 60.0


def settled_showcase() -> World:
    w = World()
    scenes.SCENES["showcase"](w)
    for _ in range(45):
        w.step(DT)
    return w


@pytest.mark.parametrize("response", ["impulse", "projection", "penalty"])
def test_traced_step_is_the_step_bit_for_bit(response):
    w = settled_showcase()
    w.response = response
    plain, traced = copy.deepcopy(w), copy.deepcopy(w)
    plain.step(DT)
    trace = traced.step_traced(DT)
    assert traced.state_hash() == plain.state_hash()
    for _ in range(30):  # and the runs stay together afterwards
        plain.step(DT)
        traced.step(DT)
    assert traced.state_hash() == plain.state_hash()
    skipped = () if response == "impulse" else ("warm_start", "restitution")
    assert trace.stages == tuple(s for s in STAGES if s not in skipped)


def test_trace_records_pairs_manifolds_and_every_solver_pass():
    w = settled_showcase()
    trace = w.step_traced(DT)
    assert np.array_equal(trace.pairs, w.pairs)
    assert len(trace.manifolds) == len(w.manifolds)
    labels = [p.label for p in trace.solver]
    # defaults: 4 sub-steps sharing 10 iterations as 3, 3, 2, 2, each with a warm start and a relax pass
    assert labels[:5] == ["substep 1 / warm start", "substep 1 / solve 1", "substep 1 / solve 2",
                          "substep 1 / solve 3", "substep 1 / relax"]
    assert len(labels) == 4 * 2 + 10 + 1 and labels[-1] == "restitution"
    # the last pass holds the impulses the step stored in world.contacts
    last = trace.solver[-1]
    c = w.contacts
    stored = c.impulse[trace.point_manifold, trace.point_slot]
    assert len(last.normal) > 0 and np.array_equal(last.normal, stored)
    assert np.array_equal(trace.point_bodies[:, 0], c.body_a[trace.point_manifold])
    # and the bodies' velocities after it are the world's
    live = np.flatnonzero(w.data.alive[: w.data.n])
    assert np.array_equal(last.velocity[live], w.data.vel[live])


def test_iterations_converge_within_a_sub_step():
    w = World()
    w.sleeping = False
    scenes.ground(w)
    for k in range(6):
        w.add_body(Box((0.5, 0.5, 0.5)), position=(0.02 * k, 0.5 + k, 0))
    for _ in range(20):
        w.step(DT)
    w.substeps, w.iterations = 1, 30
    trace = w.step_traced(DT)
    change = trace.largest_change()  # change from pass to pass; passes: warm start, solve 1..30, relax, …
    solves = change[:30]  # into solve 1 … solve 30
    assert solves[-1] < 0.2 * solves[:3].max()
