"""The public API refuses what it cannot simulate, with a ValueError naming the argument and the value:
restitution above 1, masses whose inverse is not finite, settings out of their documented ranges (the
``SETTINGS`` table), time steps too long to mean anything, strings and booleans where numbers belong,
ragged hull points, and body handles of another world."""

from __future__ import annotations

import math

import numpy as np
import pytest

from sandbox.engine import Box, Capsule, ConvexHull, Sphere, World
from sandbox.engine.settings import MAX_DT, SETTINGS, check_setting
from sandbox.engine.validate import MIN_MASS

CUBE = [[x, y, z] for x in (0, 1) for y in (0, 1) for z in (0, 1)]


def resting_box() -> tuple[World, object]:
    w = World()
    w.add_body(Box((5, 0.5, 5)), position=(0, -0.5, 0), mass=0.0)
    return w, w.add_body(Box((0.5, 0.5, 0.5)), position=(0, 0.5, 0))


# --- restitution --------------------------------------------------------------------------------------


def test_restitution_above_one_is_refused_everywhere():
    w = World()
    with pytest.raises(ValueError, match=r"restitution.*1\.5"):
        w.add_body(Sphere(0.5), restitution=1.5)
    assert w.bodies == []  # nothing was added
    b = w.add_body(Sphere(0.5), restitution=1.0)
    with pytest.raises(ValueError, match=r"restitution.*1\.01"):
        b.restitution = 1.01
    assert b.restitution == 1.0


def test_an_elastic_ball_never_rises_above_its_drop_height():
    w = World()
    w.sleeping = False
    w.add_body(Box((5, 0.5, 5)), position=(0, -0.5, 0), mass=0.0, restitution=1.0)
    ball = w.add_body(Sphere(0.5), position=(0, 2, 0), restitution=1.0)
    top = 0.0
    for _ in range(240):
        w.step(1 / 60)
        top = max(top, float(ball.position[1])) if w.steps > 30 else top
    assert top <= 2.0 + 1e-6


# --- masses ------------------------------------------------------------------------------------------


@pytest.mark.parametrize("mass", [1e-320, 5e-324, 1e-9, 1e12, -1.0, math.nan, math.inf])
def test_masses_whose_inverse_is_not_usable_are_refused(mass):
    w = World()
    with pytest.raises(ValueError, match="mass"):
        w.add_body(Sphere(0.5), mass=mass)
    b = w.add_body(Sphere(0.5), mass=1.0)
    with pytest.raises(ValueError, match="mass"):
        b.mass = mass
    assert b.mass == 1.0 and w.data.inv_mass[b.index] == 1.0


def test_a_subnormal_mass_cannot_spread_nan_to_the_body_beneath():
    w, box = resting_box()
    with pytest.raises(ValueError, match=r"mass.*1e-320"):
        w.add_body(Sphere(0.2), position=(0, 1.2, 0), mass=1e-320)
    w.add_body(Sphere(0.2), position=(0, 1.2, 0), mass=MIN_MASS)  # the lightest allowed is fine
    for _ in range(60):
        w.step(1 / 60)
    assert np.all(np.isfinite(w.data.pos[: w.data.n]))
    assert abs(box.position[1] - 0.5) < 0.01


# --- world settings -----------------------------------------------------------------------------------


@pytest.mark.parametrize("value", [-240.0, math.nan, math.inf, 1e9, True, "0.1", None])
@pytest.mark.parametrize("name", ["linear_damping", "angular_damping"])
def test_damping_out_of_range_is_refused(name, value):
    w = World()
    with pytest.raises(ValueError, match=name):
        setattr(w, name, value)
    assert getattr(w, name) == SETTINGS[name].default


def test_negative_damping_no_longer_reaches_the_kernel():
    w, _ = resting_box()
    with pytest.raises(ValueError, match="linear_damping"):
        w.linear_damping = -240.0
    w.step(1 / 60)  # used to raise ZeroDivisionError inside the integrator


@pytest.mark.parametrize("name", [n for n, s in SETTINGS.items() if s.kind == "float"])
def test_every_float_setting_is_checked_against_its_range(name):
    s = SETTINGS[name]
    w = World()
    assert getattr(w, name) == s.default and s.min <= s.default <= s.max
    for bad in (s.min - 1.0, s.max * 2 + 1.0, math.nan, -math.inf, True, "1", [1.0]):
        with pytest.raises(ValueError, match=name):
            setattr(w, name, bad)
    for good in (s.min, s.max, np.float32(s.default), int(s.max)):
        setattr(w, name, good)
        assert getattr(w, name) == float(good) and type(getattr(w, name)) is float


@pytest.mark.parametrize("name", ["ccd", "sleeping", "contact_cache"])
def test_boolean_settings_take_only_booleans(name):
    w = World()
    for bad in ("false", "no", 0, 1, 5, None, 0.0):
        with pytest.raises(ValueError, match=name):
            setattr(w, name, bad)
    assert getattr(w, name) is True
    setattr(w, name, np.bool_(False))
    assert getattr(w, name) is False


def test_ccd_false_as_a_string_no_longer_turns_ccd_on():
    w = World()
    w.ccd = False
    with pytest.raises(ValueError, match="ccd must be True or False, got 'false'"):
        w.ccd = "false"
    assert w.ccd is False


def test_int_and_choice_settings():
    w = World()
    for bad in (0, 65, 4.0, True, "4"):
        with pytest.raises(ValueError, match="substeps"):
            w.substeps = bad
    w.substeps = np.int64(8)
    assert w.substeps == 8 and type(w.substeps) is int
    with pytest.raises(ValueError, match="response"):
        w.response = "magic"
    with pytest.raises(ValueError, match="restitution_rule"):
        w.restitution_rule = ["max"]
    with pytest.raises(ValueError, match="broadphase"):
        w.broadphase = "bvh"
    with pytest.raises(ValueError, match="unknown setting"):
        check_setting("wind", 3)


def test_the_settings_table_describes_every_setting():
    for name, s in SETTINGS.items():
        assert s.name == name and s.help and s.kind in ("float", "int", "bool", "choice")
        assert s.check(s.default) == s.default
        if s.kind == "choice":
            assert s.default in s.choices
    assert "default 0.001" in type(World()).__dict__["linear_damping"].__doc__


# --- the time step ------------------------------------------------------------------------------------


@pytest.mark.parametrize("dt", [10.0, 0.5, MAX_DT * 1.0001, 0.0, -1 / 60, math.nan, True, "0.01"])
def test_time_steps_too_long_or_not_numbers_are_refused(dt):
    w, box = resting_box()
    with pytest.raises(ValueError, match="dt"):
        w.step(dt)
    assert w.steps == 0 and box.position[1] == 0.5


def test_the_longest_time_step_keeps_a_box_resting():
    w, box = resting_box()
    for _ in range(20):
        w.step(MAX_DT)
    assert abs(box.position[1] - 0.5) < 0.05


# --- numbers that Python would coerce -----------------------------------------------------------------


@pytest.mark.parametrize("make", [
    lambda: Sphere("0.5"), lambda: Sphere(True), lambda: Box(True), lambda: Box(("1", 1, 1)),
    lambda: Box((1, False, 1)), lambda: Capsule(0.5, "1"), lambda: Capsule(np.bool_(True), 1),
    lambda: Sphere(1e-300), lambda: Sphere(1e300), lambda: Box([[1, 1, 1]]),
])
def test_shapes_refuse_strings_booleans_and_absurd_sizes(make):
    with pytest.raises(ValueError, match="radius|half_extents|half_height"):
        make()


@pytest.mark.parametrize(("kwargs", "word"), [
    ({"mass": True}, "mass"), ({"mass": "2"}, "mass"), ({"position": (True, 0, 0)}, "position"),
    ({"position": ("1", "2", "3")}, "position"), ({"position": "abc"}, "position"),
    ({"position": (0, 1e300, 0)}, "position"), ({"velocity": (0, 0, np.bool_(True))}, "velocity"),
    ({"orientation": (0, 0, 0, True)}, "orientation"), ({"friction": "0.5"}, "friction"),
    ({"friction": 1e9}, "friction"), ({"gravity_scale": False}, "gravity_scale"),
    ({"lock_rotation": "yes"}, "lock_rotation"), ({"angular_velocity": [[0, 0, 0]]}, "angular_velocity"),
    ({"position": np.array(["1", "2", "3"])}, "position"),
])
def test_add_body_refuses_coerced_values(kwargs, word):
    w = World()
    with pytest.raises(ValueError, match=word):
        w.add_body(Sphere(0.5), **kwargs)
    assert w.bodies == []


def test_body_setters_refuse_coerced_values():
    b = World().add_body(Sphere(0.5))
    for name, bad in [("position", (0, True, 0)), ("linear_velocity", "abc"), ("friction", True),
                      ("gravity_scale", "1"), ("orientation", ("0", 0, 0, 1)), ("static", 1),
                      ("awake", "false"), ("mass", np.bool_(True))]:
        with pytest.raises(ValueError, match=name):
            setattr(b, name, bad)
    assert b.mass == 1.0 and not b.static and b.awake


def test_numpy_numbers_are_numbers():
    w = World()
    b = w.add_body(Sphere(np.float32(0.5)), position=np.array([0, 1, 0], np.int32), mass=np.float64(2.0),
                   restitution=np.float32(0.5), velocity=(np.int64(1), 0.0, 0))
    assert b.mass == 2.0 and np.allclose(b.position, (0, 1, 0)) and b.linear_velocity[0] == 1.0


# --- hull points --------------------------------------------------------------------------------------


def test_ragged_hull_points_name_the_bad_point():
    with pytest.raises(ValueError, match=r"points\[2\] must have 3 components"):
        ConvexHull([[0, 0, 0], [1, 0, 0], [0, 1], [0, 0, 1]])
    with pytest.raises(ValueError, match=r"points\[1\]"):
        ConvexHull([[0, 0, 0], [1, 0, "x"], [0, 1, 0], [0, 0, 1]])
    with pytest.raises(ValueError, match=r"points\[0\]"):
        ConvexHull([[True, 0, 0], [1, 0, 0], [0, 1, 0], [0, 0, 1]])
    with pytest.raises(ValueError, match="points"):
        ConvexHull([[[0, 0, 0]]] * 4)
    assert len(ConvexHull(CUBE).points) == 8


# --- handles of another world -------------------------------------------------------------------------


def two_worlds():
    w1, w2 = World(), World()
    a1 = w1.add_body(Sphere(0.5), position=(0, 1, 0))
    b1 = w1.add_body(Sphere(0.5), position=(3, 1, 0))
    a2 = w2.add_body(Box(0.5), position=(0, 5, 0))
    return w1, w2, a1, b1, a2


def test_removing_a_body_of_another_world_is_refused_and_changes_neither():
    w1, w2, a1, b1, a2 = two_worlds()
    with pytest.raises(ValueError, match="belongs to another world"):
        w2.remove_body(a1)
    assert a1.alive and a2.alive and len(w1.bodies) == 2 and len(w2.bodies) == 1
    w2.step(1 / 60)
    assert np.all(np.isfinite(a2.position))


def test_joints_and_grabs_refuse_bodies_of_another_world():
    w1, w2, a1, b1, a2 = two_worlds()
    with pytest.raises(ValueError, match="b .*belongs to another world"):
        w1.add_distance_joint(a1, a2)
    with pytest.raises(ValueError, match="a .*belongs to another world"):
        w1.add_distance_joint(a2, None, anchor_b=(0, 3, 0))
    with pytest.raises(ValueError, match="belongs to another world"):
        w1.grab(a2, (0, 5, 0))
    assert w1.joints == [] and w1.grabs == []
    joint = w2.add_distance_joint(a2, None, anchor_b=(0, 6, 0))
    with pytest.raises(ValueError, match="not a joint of this world"):
        w1.remove_joint(joint)
    with pytest.raises(ValueError, match="different bodies"):
        w1.add_distance_joint(a1, a1)
    with pytest.raises(ValueError, match="must be a Body"):
        w1.add_distance_joint(0, b1)


def test_removed_handles_are_refused_by_world_methods():
    w1, _, a1, b1, _ = two_worlds()
    w1.remove_body(a1)
    for call in (lambda: w1.remove_body(a1), lambda: w1.add_distance_joint(a1, b1),
                 lambda: w1.grab(a1, (0, 1, 0))):
        with pytest.raises(ValueError, match="removed"):
            call()
    assert len(w1.bodies) == 1 and b1.alive


def test_raycast_refuses_a_max_distance_that_is_not_a_number():
    w, _ = resting_box()
    for bad in ("5", True, -1.0, math.nan):
        with pytest.raises(ValueError, match="max_distance"):
            w.raycast((0, 5, 0), (0, -1, 0), max_distance=bad)
    assert w.raycast((0, 5, 0), (0, -1, 0), max_distance=10).distance == pytest.approx(4.0)


@pytest.mark.parametrize("scale", [1e-200, 1e-110, 1e-5])
def test_hulls_smaller_than_the_smallest_shape_are_refused(scale):
    with pytest.raises(ValueError, match="points must span at least"):
        ConvexHull(np.array(CUBE, float) * scale)
    assert ConvexHull(np.array(CUBE, float) * 1e-3).volume() == pytest.approx(1e-9)


NEEDLE = [[-6.079586741049, 2.8019e-08, 6.7695e-08], [4.178599337943, 6.2273e-08, 2.5902e-08],
          [-3.253221312684, 4.3373e-08, -4.6573e-08], [4.235488132709, -7.0634e-08, 5.2576e-08],
          [-4.289415744176, -2.0167e-08, -2.9602e-08], [2.446324493943, -5.192e-08, -1.6758e-08]]
SLIVER = [[-9.308780111565312, 1.2344647823066826e-06, 3.873043421674201e-07],
          [9.575973842777168, -4.0031255254257946e-07, 6.783385845730973e-07],
          [-9.312298186095564, -8.871738764072444e-07, -5.92344347014282e-07],
          [1.0781809675861884, 1.525837234148009e-07, -2.693849463867831e-09]]


@pytest.mark.parametrize("points", [NEEDLE, SLIVER])
def test_clouds_thinner_than_the_hull_tolerances_are_refused_as_degenerate(points):
    # these passed the degeneracy check, then collapsed into a hull of 2 vertices or broke numpy
    with pytest.raises(ValueError, match="non-coplanar"):
        ConvexHull(points)
