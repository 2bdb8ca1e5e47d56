"""The contact solver stage: the wide (SIMD, graph-coloured) solver against the reference solver, the
graph colouring, warm starting, and the seed's impulse formula."""

from __future__ import annotations

import copy
import inspect

import numpy as np
import pytest

from sandbox import scenes
from sandbox.engine import Box, World
from sandbox.engine.core.graph_color import COLORS
from sandbox.engine.core.impulse import effective_mass
from sandbox.engine.core.soft_constraint import soft_coefficients

DT = 1.0 / 60.0

STANDARD = {
    "S1 pile": (lambda w: scenes.s1_pile(w, 343), 90),
    "S2 pyramid": (scenes.s2_pyramid, 60),
    "S3 spheres": (lambda w: scenes.s3_spheres(w, 1000), 100),
    "S5 bounce": (scenes.s5_bounce, 38),  # the next step is the impact
    "showcase": (scenes.SCENES["showcase"], 90),
}


def settled(build, steps: int) -> World:
    w = World()
    w.sleeping = False
    build(w)
    for _ in range(steps):
        w.step(DT)
    return w


def step_both(w: World) -> tuple[World, World]:
    """One step of copies of ``w``, one with each contact solver."""
    wide, ref = copy.deepcopy(w), copy.deepcopy(w)
    ref.contact_solver = "reference"
    wide.step(DT)
    ref.step(DT)
    return wide, ref


# How close the wide solver's step comes to the reference's. The lanes compute in float32 and the reference
# in float64 from the same float32 rows (contact_rows.py), so the two agree to float32's precision: a part
# in 10⁵ of the largest value, after the hundreds of impulses of a step. Except where a point's gap sits at
# zero: the soft step switches formula there (a speculative contact is rigid, an overlap soft), rounding
# picks the side, and that point's impulse differs by up to the soft impulse scale times its impulse
# (soft_constraint.py; 0.029 with the default contact hertz and sub-steps: the piles of spheres and the
# mixed showcase have such points, measured up to 0.02; the pyramid and the bounce have none).
FLOAT32 = 1e-5
_defaults = World()
_h = DT / _defaults.substeps
SWITCHED = soft_coefficients(min(_defaults.contact_hertz, 0.25 / _h), _defaults.contact_damping_ratio, _h)[2]
TOLERANCE = {"S1 pile": SWITCHED, "S2 pyramid": FLOAT32, "S3 spheres": SWITCHED, "S5 bounce": FLOAT32,
             "showcase": SWITCHED}


def assert_same_step(wide: World, ref: World, tol: float) -> None:
    """The two steps agree field by field to ``tol`` times the field's largest value, or times what
    gravity adds to a velocity in a step where everything is nearly at rest (the rounding comes with the
    impulses, whose size is set by the weights they hold up, not by how fast the bodies move)."""
    n = wide.data.n
    for field in ("vel", "angvel", "pos", "quat"):
        got, want = getattr(wide.data, field)[:n], getattr(ref.data, field)[:n]
        scale = max(np.abs(want).max(), 9.81 * DT)
        np.testing.assert_allclose(got, want, rtol=0, atol=tol * scale, err_msg=field)
    c = wide.contacts.count
    assert c == ref.contacts.count
    want = ref.contacts.impulse[:c]
    np.testing.assert_allclose(wide.contacts.impulse[:c], want, rtol=0, atol=tol * np.abs(want).max())


@pytest.mark.parametrize("scene", list(STANDARD))
def test_wide_solver_matches_the_reference(scene):
    build, steps = STANDARD[scene]
    w = settled(build, steps)
    wide, ref = step_both(w)
    assert wide.contacts.count > 0 and np.abs(wide.contacts.impulse).max() > 0
    assert_same_step(wide, ref, TOLERANCE[scene])


def test_overflow_manifolds_are_solved_by_the_reference():
    # 48 balls resting on one free plank: the plank is in more manifolds than there are colours
    w = World()
    w.sleeping = False
    w.block_solver = False  # the plank weighs 40 balls: one island of 52 points, which it would take
    plank = scenes.plank_with_balls(w)
    for _ in range(30):
        w.step(DT)
    s = w._solver
    colors = s.color[: w.contacts.count]
    assert (colors == COLORS).sum() >= 48 - COLORS  # the overflow is in use
    wide, ref = step_both(w)
    assert_same_step(wide, ref, FLOAT32)
    for _ in range(60):
        w.step(DT)
    assert abs(plank.position[1] - 0.1) < 0.01 and np.linalg.norm(plank.linear_velocity) < 0.01
    balls = [b for b in w.bodies if b.mass == 0.5]
    assert min(b.position[1] for b in balls) > 0.39  # every ball rests on the plank


@pytest.mark.parametrize("scene", ["S1 pile", "S3 spheres", "showcase"])
def test_no_colour_holds_two_manifolds_of_one_moving_body(scene):
    build, steps = STANDARD[scene]
    w = settled(build, steps)
    w.step(DT)
    c = w.contacts
    d = w.data
    moving = d.alive & ~d.static & d.awake
    colors = w._solver.color[: c.count]
    assert colors.max() >= 1
    for k in range(min(colors.max() + 1, COLORS)):
        rows = np.flatnonzero(colors == k)
        bodies = np.concatenate([c.body_a[rows], c.body_b[rows]])
        bodies = bodies[moving[bodies]]
        assert len(bodies) == len(np.unique(bodies)), f"colour {k} holds two manifolds of one body"


def test_an_unchanged_contact_graph_keeps_its_colouring_and_a_changed_one_is_coloured_again(monkeypatch):
    """``graph_color.same_graph``: the pyramid at rest keeps its colouring from step to step, with the
    step's results bit for bit those of colouring afresh; a body that stops moving changes the graph, and
    the manifolds are coloured again."""
    from sandbox.engine.core import graph_color

    w = settled(scenes.s2_pyramid, 30)
    calls = []
    colour = graph_color.color_contacts

    def counted(*args):
        calls.append(args[0])
        return colour(*args)

    monkeypatch.setattr(graph_color, "color_contacts", counted)
    snap = w.snapshot()
    for _ in range(3):
        w.step(DT)
    assert calls == []  # the pyramid's graph stayed the same: its colouring was kept
    kept = w.state_hash()

    monkeypatch.setattr(graph_color, "same_graph", lambda *args: False)
    w.restore(snap)
    for _ in range(3):
        w.step(DT)
    assert len(calls) == 3 and w.state_hash() == kept  # coloured afresh every step: the same steps

    monkeypatch.undo()
    monkeypatch.setattr(graph_color, "color_contacts", counted)
    calls.clear()
    w.step(DT)
    assert calls == []
    top = max(w.bodies, key=lambda b: b.position[1])
    top.mass = 0.0  # now static: its manifold is no longer between two moving bodies
    w.step(DT)
    assert len(calls) == 1


def resting_stack_speed(warm: bool, iterations: int) -> float:
    """The fastest box of a settled tower of eight after one more step with ``iterations``."""
    w = World()
    w.sleeping = False
    scenes.ground(w)
    boxes = [w.add_body(Box((0.5, 0.5, 0.5)), position=(0, 0.5 + k, 0)) for k in range(8)]
    for _ in range(120):
        w.step(DT)
    w.warm_starting = warm
    w.iterations = iterations
    w.step(DT)
    return max(float(np.linalg.norm(b.linear_velocity)) for b in boxes)


def test_warm_starting_converges_in_fewer_passes():
    warm = resting_stack_speed(True, 4)
    assert warm < 0.005  # the tower is at rest after the minimum of passes
    cold = [resting_stack_speed(False, k) for k in (4, 16, 64)]
    assert cold[0] > cold[1] > cold[2]  # a cold start converges with more passes...
    assert cold[2] > 5 * warm  # ...and 16 times the passes still do not reach the warm start's answer


def test_a_cached_manifold_takes_its_points_impulses_as_the_nearest_point_search_would(monkeypatch):
    """``prepare_blocks`` gives a manifold merged from the contact cache last step's impulses point for
    point, without the nearest-point search: the step comes out bit for bit as with the search."""
    from sandbox.engine.core import contact_prepare

    w = settled(scenes.s2_pyramid, 30)
    snap = w.snapshot()
    w.step(DT)
    assert w.cached_manifolds > 100  # the shortcut is taken for most of the pyramid's manifolds
    shortcut = w.state_hash()

    search = contact_prepare.prepare_contacts

    def without_shortcut(*args):
        bound = inspect.signature(search).bind(*args)
        bound.arguments["source"] = np.full_like(bound.arguments["source"], -1)  # as if none were cached
        search(*bound.args)

    monkeypatch.setattr(contact_prepare, "prepare_contacts", without_shortcut)
    w.restore(snap)
    w.step(DT)
    assert w.state_hash() == shortcut


def test_effective_mass_is_the_seeds_formula():
    rng = np.random.default_rng(3)
    for _ in range(20):
        ima, imb = rng.uniform(0.1, 2.0, 2)
        ia = rng.normal(size=(3, 3))
        ia = ia @ ia.T + np.eye(3)
        ib = rng.normal(size=(3, 3))
        ib = ib @ ib.T + np.eye(3)
        ra, rb = rng.normal(size=3), rng.normal(size=3)
        n = rng.normal(size=3)
        n /= np.linalg.norm(n)
        # 1/K = 1/mA + 1/mB + n·((IA⁻¹(rA×n))×rA) + n·((IB⁻¹(rB×n))×rB)
        inv_k = ima + imb + n @ np.cross(ia @ np.cross(ra, n), ra) + n @ np.cross(ib @ np.cross(rb, n), rb)
        k = effective_mass(ima, imb, tuple(ia.ravel()), tuple(ib.ravel()), tuple(ra), tuple(rb), tuple(n))
        assert k == pytest.approx(1.0 / inv_k, rel=1e-12)


def test_off_centre_impact_takes_the_formulas_impulse():
    """A tilted box falls onto one edge: the total normal impulse of the edge's two points is the seed's
    j = −(1 + e)·v_rel·n / (1/m + n·((I⁻¹(r×n))×r)), r the lever arm to the edge's middle. The formula
    has no friction, so neither have the surfaces: with friction the edge is held from sliding during
    the impact too, and takes a larger normal impulse (3.9 N·s here with μ = 0.5)."""
    w = World(gravity=(0, 0, 0))
    w.linear_damping = w.angular_damping = 0.0
    w.iterations = 40
    scenes.ground(w, restitution=1.0, friction=0.0)
    angle = np.pi / 6  # 30° about z: the lowest edge runs along z, off to one side of the centre
    q = (0.0, 0.0, np.sin(angle / 2), np.cos(angle / 2))
    half = np.array([0.5, 0.25, 0.25])
    box = w.add_body(Box(tuple(half)), position=(0, 0.6, 0), orientation=q, mass=2.0, restitution=0.5,
                     velocity=(0, -2.0, 0), friction=0.0)
    for _ in range(60):
        before_x, before_v, before_w = box.position, box.linear_velocity, box.angular_velocity
        w.step(DT)
        if w.contacts.count and w.contacts.impulse[0, : w.contacts.npoints[0]].sum() > 0:
            break
    c = w.contacts
    assert c.count == 1 and c.npoints[0] == 2  # the edge
    n = c.normal[0]  # from the ground (A) up into the box (B)
    assert n == pytest.approx((0, 1, 0), abs=1e-9)
    r = c.points_b[0, :2].mean(axis=0) - before_x  # lever arm from the centre at the step's start
    m = 2.0
    inertia = m / 3 * np.diag([half[1] ** 2 + half[2] ** 2, half[0] ** 2 + half[2] ** 2,
                               half[0] ** 2 + half[1] ** 2])
    rot = np.array([[np.cos(angle), -np.sin(angle), 0], [np.sin(angle), np.cos(angle), 0], [0, 0, 1]])
    inv_i = rot @ np.linalg.inv(inertia) @ rot.T
    v_rel = before_v + np.cross(before_w, r)  # the ground is still
    j = -(1 + 0.5) * (v_rel @ n) / (1 / m + n @ np.cross(inv_i @ np.cross(r, n), r))
    assert c.impulse[0, :2].sum() == pytest.approx(j, rel=0.03)


def test_a_body_no_contact_touches_keeps_its_float64_velocity():
    """The wide solver works on a float32 copy of the bodies (``contact_solver.load_solver_bodies``); a
    ball falling clear of a resting box takes from it exactly the velocity it has in a world of its own."""
    alone, beside = World(), World()
    for w in (alone, beside):
        w.add_body(Box((0.3, 0.3, 0.3)), position=(30.0, 20.0, 0.0), angular_velocity=(0.3, 0.7, 0.1))
    scenes.ground(beside)
    beside.add_body(Box((0.5, 0.5, 0.5)), position=(0.0, 0.5, 0.0))
    for _ in range(30):
        alone.step(DT)
        beside.step(DT)
    assert beside.contacts.count > 0  # the wide solver ran
    assert np.float32(alone.data.vel[0, 1]) != alone.data.vel[0, 1]  # not a float32 value
    assert beside.data.vel[0].tolist() == alone.data.vel[0].tolist()
    assert beside.data.angvel[0].tolist() == alone.data.angvel[0].tolist()


def test_solver_rows_are_cache_lines():
    """Each body's row of the wide solver's copy is one 64-byte line (``bodies._aligned``)."""
    w = World()
    for k in range(100):
        w.add_body(Box((0.5, 0.5, 0.5)), position=(2.0 * k, 0.5, 0.0))
    assert w.data.solver.strides == (64, 4) and w.data.solver.ctypes.data % 64 == 0


def test_lane_rows_are_whole_cache_lines():
    """A field's row of lanes is exactly ``L`` float32 (128 bytes) and the wide rows ``cw`` and a block's
    lane rows ``V`` and ``D`` start on a 64-byte boundary, also after ``cw`` grows for a larger pile: no
    vector load of lanes straddles two lines (``contact_rows.STRIDE``)."""
    from sandbox.engine.core.contact_rows import STRIDE, L

    assert STRIDE == L and STRIDE * 4 % 64 == 0
    w = settled(lambda w: scenes.s1_pile(w, 125), 3)
    small = len(w._solver.cw)
    scenes.s1_pile(w, 343)
    for _ in range(30):
        w.step(DT)
    s = w._solver
    assert len(s.cw) > small  # it grew
    for rows in (s.cw, s.V, s.D):
        assert rows.dtype == np.float32 and rows.ctypes.data % 64 == 0


def test_a_one_point_manifold_takes_no_patch_step_in_a_block_with_larger_ones():
    """In a block whose lanes mix manifolds of one point and of more, the patch step's last part
    (``patch_impulse_lanes``) moves only the lanes of two points or more: a one-point manifold keeps its
    impulse and its largest impulse of the step, as in a block of its own and in the reference solver
    (which steps only manifolds of two points or more), so the results do not depend on how the blocks are
    cut. (It used to record the one-point lane's warm-start impulse as its largest, which restitution
    reads.)"""
    from sandbox.engine.core.contact_rows import LAM_MAX, LAM_N, MASS_N, ND, NF, PM, PSTEP, STRIDE, L
    from sandbox.engine.core.contact_solver import patch_impulse_lanes

    cw = np.zeros(NF * STRIDE, np.float32)
    D = np.zeros(ND * STRIDE, np.float32)
    cw[MASS_N * STRIDE:MASS_N * STRIDE + 2] = 1.0
    cw[LAM_N * STRIDE:LAM_N * STRIDE + 2] = 2.0  # both lanes warm started, nothing struck yet this step
    D[PM * STRIDE:PM * STRIDE + 2] = (1.0, 2.0)  # lane 0: a one-point manifold; lane 1: two points
    D[PSTEP * STRIDE:PSTEP * STRIDE + 2] = (0.0, 0.5)
    patch_impulse_lanes(L, cw, 0, D)
    assert cw[LAM_N * STRIDE:LAM_N * STRIDE + 2].tolist() == [2.0, 2.5]
    assert cw[LAM_MAX * STRIDE:LAM_MAX * STRIDE + 2].tolist() == [0.0, 2.5]
