"""Collision response and dynamics: the acceptance tests of the engine (part 2).

Each test would fail if the physics were wrong: bounce heights against e²·h, momentum exchange, friction
on an incline against g(sin θ − μ cos θ), rolling without slipping, the tennis-racket flip with conserved
energy and momentum, stacks that stand, no tunnelling, deterministic replay, no NaN."""

from __future__ import annotations

import math

import numpy as np
import pytest

from sandbox import scenes
from sandbox.engine import Box, Sphere, World
from sandbox.engine.world import STAGES

DT = 1.0 / 60.0


def run(world: World, seconds: float) -> None:
    for _ in range(round(seconds / DT)):
        world.step(DT)


def first_apex(world: World, ball, radius: float, max_steps: int = 600) -> float:
    """Highest bottom height between the first rebound and the next descent (SCENES.md S5)."""
    apex, bounced = None, False
    for _ in range(max_steps):
        world.step(DT)
        y = float(ball.position[1]) - radius
        vy = float(ball.linear_velocity[1])
        if not bounced and vy > 0:
            bounced, apex = True, y
        elif bounced:
            if vy <= 0 and y < apex:
                break
            apex = max(apex, y)
    return 0.0 if apex is None else apex


@pytest.mark.parametrize("e", [0.0, 0.5, 0.8, 1.0])
def test_s5_bounce_reaches_e_squared_h(e):
    w = World()
    w.sleeping = False
    scenes.ground(w, restitution=1.0)  # product rule: the pair's restitution is the ball's
    h = 2.0
    ball = w.add_body(Sphere(0.5), position=(0, h + 0.5, 0), restitution=e)
    apex = first_apex(w, ball, 0.5)
    assert abs(apex - e * e * h) <= 0.03 * h * max(e * e, 0.02) + 1e-9 if e > 0 else apex < 0.03 * h


def test_s5_scene_under_product_rule():
    w = World()
    ball = scenes.s5_bounce(w)[0]
    apex = first_apex(w, ball, 0.5)
    theory = (0.8 * 0.8) ** 2 * 2.0
    assert abs(apex / theory - 1.0) < 0.03


@pytest.mark.parametrize("rule,expected", [("min", 0.5), ("max", 0.9), ("average", 0.7)])
def test_restitution_rules(rule, expected):
    w = World()
    w.restitution_rule = rule
    scenes.ground(w, restitution=0.9)
    ball = w.add_body(Sphere(0.5), position=(0, 2.5, 0), restitution=0.5)
    apex = first_apex(w, ball, 0.5)
    assert abs(apex / (expected**2 * 2.0) - 1.0) < 0.03


def head_on(e: float):
    w = World(gravity=(0, 0, 0))
    a = w.add_body(Sphere(0.5), position=(-1.0, 0, 0), velocity=(2.0, 0, 0), restitution=e, mass=1.0)
    b = w.add_body(Sphere(0.5), position=(1.0, 0, 0), velocity=(-2.0, 0, 0), restitution=e, mass=1.0)
    w.linear_damping = 0.0
    p0 = w.momentum()
    run(w, 1.0)
    return w, a, b, p0


def test_elastic_head_on_exchanges_velocities():
    w, a, b, p0 = head_on(1.0)
    assert a.linear_velocity[0] == pytest.approx(-2.0, abs=0.02)
    assert b.linear_velocity[0] == pytest.approx(2.0, abs=0.02)
    assert np.linalg.norm(w.momentum() - p0) <= 1e-9 * 4.0


def test_inelastic_head_on_gives_common_velocity():
    w = World(gravity=(0, 0, 0))
    w.linear_damping = 0.0
    a = w.add_body(Sphere(0.5), position=(-1.0, 0, 0), velocity=(3.0, 0, 0), mass=1.0)
    b = w.add_body(Sphere(0.5), position=(1.0, 0, 0), velocity=(0.0, 0, 0), mass=2.0)
    p0 = w.momentum()
    run(w, 1.0)
    assert a.linear_velocity[0] == pytest.approx(1.0, abs=0.01)
    assert b.linear_velocity[0] == pytest.approx(1.0, abs=0.01)
    rel = np.linalg.norm(w.momentum() - p0) / np.linalg.norm(p0)
    assert rel <= 1e-6  # float32's precision: the solver's lanes compute in single precision


def test_newtons_cradle_passes_the_speed_down_the_row():
    w = World()
    balls = scenes.SCENES["cradle"](w)
    first_speed = 0.0
    last_speed = 0.0
    for _ in range(90):
        w.step(DT)
        first_speed = max(first_speed, float(np.linalg.norm(balls[0].linear_velocity)))
        last_speed = max(last_speed, float(np.linalg.norm(balls[-1].linear_velocity)))
    assert first_speed > 1.0
    assert last_speed >= 0.95 * first_speed
    # the middle balls stay (nearly) still
    for b in balls[1:-1]:
        assert np.linalg.norm(b.linear_velocity) < 0.1 * first_speed


def incline_world(angle_deg: float, mu: float):
    w = World()
    w.sleeping = False
    a = math.radians(angle_deg)
    q = (0.0, 0.0, math.sin(a / 2), math.cos(a / 2))
    w.add_body(Box((20.0, 0.5, 2.0)), position=(0, 0, 0), orientation=q, mass=0.0, friction=mu)
    n = np.array([-math.sin(a), math.cos(a), 0.0])
    box = w.add_body(Box((0.25, 0.25, 0.25)), position=n * 0.75, orientation=q, friction=mu)
    return w, box, a


def test_box_stays_on_incline_below_friction_angle():
    w, box, a = incline_world(20.0, 0.5)  # tan 20° = 0.36 < 0.5
    run(w, 0.5)
    p0 = box.position.copy()
    run(w, 2.0)
    assert np.linalg.norm(box.position - p0) < 2e-3


def test_box_slides_with_coulomb_acceleration():
    angle, mu = 30.0, 0.3  # tan 30° = 0.58 > 0.3
    w, box, a = incline_world(angle, mu)
    w.linear_damping = 0.0
    run(w, 0.25)
    along = np.array([math.cos(a), math.sin(a), 0.0])
    v0 = float(box.linear_velocity @ along)
    run(w, 1.0)
    v1 = float(box.linear_velocity @ along)
    expected = 9.81 * (math.sin(a) - mu * math.cos(a))
    assert abs(-(v1 - v0) / 1.0 - expected) / expected < 0.03


def test_box_rests_on_ground_without_jitter():
    w = World()
    w.sleeping = False
    scenes.ground(w)
    box = w.add_body(Box((0.5, 0.5, 0.5)), position=(0, 0.52, 0))
    run(w, 2.0)
    assert np.linalg.norm(box.linear_velocity) < 1e-3
    assert 0.5 - box.position[1] < 5e-3


def test_sphere_rolls_without_slipping():
    w = World()
    w.sleeping = False
    w.linear_damping = 0.0
    w.angular_damping = 0.0
    scenes.ground(w, half=200.0)
    r = 0.5
    ball = w.add_body(Sphere(r), position=(0, r, 0), velocity=(3.0, 0, 0), friction=0.5)
    run(w, 2.0)
    v = ball.linear_velocity[0]
    omega = ball.angular_velocity[2]
    assert v > 1.0
    assert abs(v - (-omega) * r) / v < 0.02  # rolling along +x spins about −z


def test_tennis_racket_flip_conserves_energy_and_momentum():
    w = World()
    b = scenes.SCENES["tennis racket"](w)[0]
    e0 = w.kinetic_energy()
    l0 = w.angular_momentum(about=b.position)
    flipped = False
    axis0 = None
    for _ in range(600):
        w.step(DT)
        # body y axis in the world frame: it turns over during the flip
        q = b.orientation
        y_axis = np.array([2 * (q[0] * q[1] - q[3] * q[2]), 1 - 2 * (q[0] ** 2 + q[2] ** 2),
                           2 * (q[1] * q[2] + q[3] * q[0])])
        if axis0 is None:
            axis0 = y_axis
        if y_axis @ axis0 < -0.9:
            flipped = True
    assert flipped
    assert abs(w.kinetic_energy() / e0 - 1.0) < 0.01
    l1 = w.angular_momentum(about=b.position)
    assert np.linalg.norm(l1 - l0) / np.linalg.norm(l0) < 0.01


def test_s2_pyramid_stands():
    w = World()
    w.sleeping = False
    cubes = scenes.s2_pyramid(w)
    start = np.array([c.position for c in cubes])
    run(w, 10.0)
    drift = np.linalg.norm(np.array([c.position for c in cubes]) - start, axis=1)
    assert drift.max() < 0.02


def test_s1_pile_settles_without_sinking():
    w = World()
    w.sleeping = False
    bodies = scenes.s1_pile(w, 1000)
    peak = 0.0
    for k in range(600):
        w.step(DT)
        if k % 10 == 0:
            peak = max(peak, float(0.5 - w.data.pos[[b.index for b in bodies], 1].min()))
    ys = np.array([b.position[1] for b in bodies])
    assert 0.5 - ys.min() < 0.01
    assert peak < 0.02  # no body sank 2 cm into the ground while the pile fell and settled
    assert np.isfinite(ys).all()


@pytest.mark.parametrize("ccd", [True, False])
def test_s4_bullet_tunnels_only_without_ccd(ccd):
    w = World()
    w.ccd = ccd
    ball = scenes.s4_bullet(w, gap=7.5)[0]
    run(w, 1.0)
    x = ball.position[0]
    if ccd:
        assert x < 0.0
    else:
        assert x > 0.1


def snapshot(world: World) -> bytes:
    d = world.data
    return b"".join(a[: d.n].tobytes() for a in (d.pos, d.quat, d.vel, d.angvel))


def test_deterministic_replay():
    states = []
    for _ in range(2):
        w = World()
        scenes.SCENES["showcase"](w)
        run(w, 1.5)
        states.append(snapshot(w))
    assert states[0] == states[1]


def test_overlapping_spawn_separates_without_explosion():
    w = World()
    scenes.ground(w)
    for k in range(1000):
        shape = Sphere(0.3) if k % 2 else Box((0.3, 0.3, 0.3))
        w.add_body(shape, position=(0.0, 3.0, 0.0))
    fastest = 0.0
    for _ in range(90):
        w.step(DT)
        d = w.data
        assert np.isfinite(d.pos[: d.n]).all() and np.isfinite(d.vel[: d.n]).all()
        fastest = max(fastest, float(np.linalg.norm(d.vel[: d.n], axis=1).max()))
    assert fastest < 50.0


def test_penalty_box_sinks_less_than_a_centimetre():
    w = World()
    w.response = "penalty"
    w.sleeping = False
    scenes.ground(w)
    box = w.add_body(Box((0.5, 0.5, 0.5)), position=(0, 0.5, 0))
    run(w, 2.0)
    assert 0.5 - box.position[1] < 0.01
    assert np.linalg.norm(box.linear_velocity) < 0.01


def test_projection_separates_but_keeps_velocity():
    w = World(gravity=(0, 0, 0))
    w.response = "projection"
    w.linear_damping = 0.0
    wall = w.add_body(Box((0.5, 2, 2)), position=(0, 0, 0), mass=0.0)
    ball = w.add_body(Sphere(0.5), position=(-1.2, 0, 0), velocity=(1.0, 0, 0))
    run(w, 1.0)
    assert wall.position[0] == 0.0
    assert ball.position[0] <= -1.0 + 0.02  # never left inside the wall
    assert ball.linear_velocity[0] == pytest.approx(1.0)  # the snooker ball keeps pushing


def test_sleeping_islands_and_waking():
    w = World()
    scenes.ground(w)
    box = w.add_body(Box((0.5, 0.5, 0.5)), position=(0, 0.5, 0))
    run(w, 2.0)
    assert not box.awake
    resting = box.position
    run(w, 0.5)
    assert np.array_equal(box.position, resting)  # a sleeping body is not integrated or solved
    assert len(w.manifolds) == 1  # but its contact is still reported (and drawn)
    box.apply_impulse((0, 3.0, 0))
    assert box.awake
    run(w, 0.1)
    assert box.position[1] > 0.55
    # an awake body landing on a sleeper wakes it
    run(w, 2.0)
    assert not box.awake
    w.add_body(Sphere(0.3), position=(0, 2.5, 0))
    woke = False
    for _ in range(60):
        w.step(DT)
        woke = woke or bool(box.awake)
    assert woke
    w.sleeping = False
    run(w, 0.1)
    assert box.awake


def test_collision_events_begin_and_end():
    w = World()
    w.sleeping = False
    scenes.ground(w)
    begins, ends = [], []
    w.on_collision_begin(begins.append)
    w.on_collision_end(ends.append)
    ball = w.add_body(Sphere(0.5), position=(0, 1.5, 0), restitution=0.9)
    w.restitution_rule = "max"
    run(w, 0.6)
    assert len(begins) >= 1
    ev = begins[0]
    assert {ev.body_a, ev.body_b} >= {ball}
    assert ev.impulse > 0
    assert abs(abs(ev.normal[1]) - 1.0) < 1e-6
    assert len(ends) >= 1  # it bounced off again
    assert ends[0].body_a is not None
    assert all(e.kind in ("begin", "end") for e in w.events)


def test_end_event_when_a_touching_body_is_removed():
    w = World()
    scenes.ground(w)
    ends = []
    w.on_collision_end(ends.append)
    ball = w.add_body(Sphere(0.5), position=(0, 0.5, 0))
    run(w, 0.2)
    w.remove_body(ball)
    w.step(DT)
    assert len(ends) == 1


def test_pendulum_distance_joint_keeps_length():
    w = World()
    w.sleeping = False
    pivot = np.array([0.0, 5.0, 0.0])
    bob = w.add_body(Sphere(0.2), position=(2.0, 5.0, 0.0))
    joint = w.add_distance_joint(bob, None, anchor_b=pivot)
    for _ in range(240):
        w.step(DT)
        assert abs(np.linalg.norm(bob.position - pivot) - 2.0) < 0.01
    assert joint.length == pytest.approx(2.0)


def test_rope_only_pulls():
    w = World()
    w.sleeping = False
    scenes.ground(w)
    a = w.add_body(Sphere(0.2), position=(0.0, 0.2, 0.0))
    b = w.add_body(Sphere(0.2), position=(1.0, 0.2, 0.0))
    w.add_distance_joint(a, b, length=3.0, rope=True)
    run(w, 0.5)
    assert np.linalg.norm(a.position - b.position) == pytest.approx(1.0, abs=1e-3)  # slack: no pull
    b.linear_velocity = (5.0, 0.0, 0.0)
    run(w, 1.0)
    assert np.linalg.norm(a.position - b.position) < 3.0 + 0.02


def test_grab_drags_body_to_target_and_caps_force():
    w = World()
    w.sleeping = False
    scenes.ground(w)
    box = w.add_body(Box((0.5, 0.5, 0.5)), position=(0, 0.5, 0), mass=2.0)
    grab = w.grab(box, (0.0, 1.0, 0.0))
    grab.target = (2.0, 2.0, 0.0)
    run(w, 2.0)
    assert np.linalg.norm(grab.anchor_world - grab.target) < 0.1
    assert np.linalg.norm(grab.force) <= grab.max_force * 1.0001
    heavy = w.add_body(Box((0.5, 0.5, 0.5)), position=(-4, 0.5, 0), mass=1000.0)
    g2 = w.grab(heavy, heavy.position, max_force=10.0)
    g2.target = heavy.position + (0, 5, 0)
    run(w, 0.5)
    assert heavy.position[1] < 0.6  # 10 N cannot lift a tonne
    w.release(grab)
    w.release(g2)
    assert w.grabs == []


def test_forces_impulses_damping_and_gravity_scale():
    w = World(gravity=(0, 0, 0))
    w.linear_damping = 0.0
    w.angular_damping = 0.0
    b = w.add_body(Sphere(0.5), mass=2.0)
    b.apply_force((40.0, 0, 0))
    w.step(0.05)
    assert b.linear_velocity[0] == pytest.approx(1.0)
    w.step(0.05)
    assert b.linear_velocity[0] == pytest.approx(1.0)  # the force lasted one step
    b.apply_impulse((0, 0, 2.0), point=b.position + (0, 0.5, 0))
    assert b.linear_velocity[2] == pytest.approx(1.0)
    assert np.linalg.norm(b.angular_velocity) > 0
    spin = b.angular_velocity
    b.apply_torque((0, 10.0, 0))
    w.step(0.05)
    # a solid ball: I = 2/5·m·r² = 0.2, so 10 N·m for 0.05 s adds 2.5 rad/s about y
    assert b.angular_velocity - spin == pytest.approx((0, 2.5, 0))
    w2 = World()
    w2.linear_damping = 0.0
    floaty = w2.add_body(Sphere(0.5), gravity_scale=0.0)
    w2.step(0.1)
    assert np.allclose(floaty.linear_velocity, 0.0)
    w3 = World(gravity=(0, 0, 0))
    w3.linear_damping = 1.0
    s = w3.add_body(Sphere(0.5), velocity=(1.0, 0, 0))
    run(w3, 1.0)
    assert 0.3 < s.linear_velocity[0] < 0.45  # ≈ e^{-1}


def test_diagnostics_and_timings():
    w = World()
    scenes.ground(w)
    b = w.add_body(Sphere(0.5), position=(0, 3.0, 0), velocity=(1, 0, 0))
    assert w.kinetic_energy() == pytest.approx(0.5)
    assert w.potential_energy() == pytest.approx(9.81 * 3.0)
    assert np.allclose(w.momentum(), (1, 0, 0))
    b.angular_velocity = (0, 2.0, 0)
    assert w.angular_momentum(about=b.position)[1] == pytest.approx(0.4 * 0.25 * 2.0)
    w.step(DT)
    assert list(w.timings) == list(STAGES)
    assert all(v >= 0 for v in w.timings.values())
    assert w.timings["solve"] > 0 and w.timings["integrate_velocities"] > 0


def test_the_sub_steps_clock_reads_perf_counters_clock_from_compiled_code():
    # substeps.clock, which times the sub-step stages: on Linux and macOS it calls clock_gettime itself
    # (no trip back to Python), and reads the clock Python's perf_counter reads
    import sys
    import time

    from sandbox.engine.core import substeps

    if sys.platform.startswith(("linux", "darwin")):
        assert substeps.DIRECT_CLOCK
    for _ in range(3):
        before = time.perf_counter()
        now = substeps.clock()
        after = time.perf_counter()
        assert before <= now <= after and after - before < 0.5
    # in plain Python (NUMBA_DISABLE_JIT: a debugger, coverage) an intrinsic cannot run: perf_counter itself
    import os
    import subprocess

    script = ("import time\nfrom sandbox.engine.core import substeps\n"
              "a = time.perf_counter(); t = substeps.clock(); b = time.perf_counter()\n"
              "print(substeps.DIRECT_CLOCK, a <= t <= b)")
    out = subprocess.run([sys.executable, "-c", script], capture_output=True, text=True, check=True,
                         env={**os.environ, "NUMBA_DISABLE_JIT": "1"})
    assert out.stdout.split() == ["False", "True"]


@pytest.mark.parametrize("bad", [
    ("substeps", 0), ("iterations", -1), ("response", "magic"), ("restitution_rule", "sum"),
    ("broadphase", "kd"),
])
def test_bad_settings_raise(bad):
    w = World()
    name, value = bad
    with pytest.raises(ValueError, match=str(value) if isinstance(value, str) else name):
        setattr(w, name, value)


def test_bad_body_input_raises():
    w = World()
    with pytest.raises(ValueError, match="mass"):
        w.add_body(Sphere(1), mass=-1)
    with pytest.raises(ValueError, match="position"):
        w.add_body(Sphere(1), position=(0, float("nan"), 0))
    with pytest.raises(ValueError, match="dt"):
        w.step(0.0)
    b = w.add_body(Sphere(1))
    w.remove_body(b)
    with pytest.raises(ValueError, match="removed"):
        _ = b.position


def test_kinetic_energy_and_angular_momentum_use_the_world_inertia_tensor():
    """KE = Σ ½·m·v² + ½·ωᵀ·I·ω and L = Σ r × m·v + I·ω with I = R·I_body·Rᵀ for turned bodies whose
    world inertia is not diagonal (a box with three different sides, a hull), a body locked against
    rotation contributing no rotational part, and a static body none at all."""
    from sandbox.engine import ConvexHull

    def matrix(q):  # the rotation matrix of a unit quaternion (x, y, z, w)
        x, y, z, w_ = q
        return np.array([[1 - 2 * (y * y + z * z), 2 * (x * y - z * w_), 2 * (x * z + y * w_)],
                         [2 * (x * y + z * w_), 1 - 2 * (x * x + z * z), 2 * (y * z - x * w_)],
                         [2 * (x * z - y * w_), 2 * (y * z + x * w_), 1 - 2 * (x * x + y * y)]])

    w = World(gravity=(0, 0, 0))
    q1 = np.array([0.3, -0.5, 0.2, 0.8]) / np.linalg.norm([0.3, -0.5, 0.2, 0.8])
    q2 = np.array([-0.6, 0.1, 0.4, 0.5]) / np.linalg.norm([-0.6, 0.1, 0.4, 0.5])
    box_shape = Box((0.2, 0.5, 1.1))
    hull_shape = ConvexHull([(0, 0, 0), (1.2, 0, 0), (0, 0.7, 0), (0, 0, 0.4), (0.5, 0.5, 0.3)])
    box = w.add_body(box_shape, position=(1, 2, 3), orientation=q1, mass=2.5, velocity=(1, -2, 0.5),
                     angular_velocity=(3.0, -1.0, 2.0))
    hull = w.add_body(hull_shape, position=(-2, 1, 0), orientation=q2, mass=0.7, velocity=(0, 1, 0),
                      angular_velocity=(-1.5, 4.0, 0.5))
    locked = w.add_body(Box((0.5, 0.5, 0.5)), position=(0, 5, 0), mass=3.0, velocity=(2, 0, 0),
                        angular_velocity=(0, 1, 0), lock_rotation=True)
    w.add_body(Box((5, 0.5, 5)), mass=0.0)  # static: no energy, no momentum
    ke, ang = 0.0, np.zeros(3)
    about = np.array([0.5, -1.0, 2.0])
    for body, shape, q in ((box, box_shape, q1), (hull, hull_shape, q2)):
        r = matrix(q)
        inertia = r @ shape.inertia(body.mass) @ r.T
        omega, v = body.angular_velocity, body.linear_velocity
        ke += 0.5 * body.mass * v @ v + 0.5 * omega @ inertia @ omega
        ang += np.cross(body.center_of_mass - about, body.mass * v) + inertia @ omega
    ke += 0.5 * locked.mass * locked.linear_velocity @ locked.linear_velocity
    ang += np.cross(locked.center_of_mass - about, locked.mass * locked.linear_velocity)
    assert w.kinetic_energy() == pytest.approx(ke, rel=1e-12)
    assert np.allclose(w.angular_momentum(about=about), ang, rtol=1e-12, atol=1e-12)
