"""Generated tests (hypothesis) of the input checks: every setting and every ``add_body`` argument and
body setter accepts the values of its documented range and refuses everything else (NaN, infinities,
negatives, booleans, strings, huge values, ragged lists) with a ValueError, never another exception; the
scene-file loader either loads a generated document or raises ``SceneFileError``; and a generated world
survives the save/load round trip unchanged.

Under CI (the ``CI`` variable set) the examples are derandomized (see ``conftest.py``)."""

from __future__ import annotations

import json
import math
import tempfile
from pathlib import Path

import numpy as np
from hypothesis import HealthCheck, given, settings
from hypothesis import strategies as st

from sandbox.engine import Box, Capsule, ConvexHull, Sphere, World
from sandbox.engine import validate as v
from sandbox.engine.settings import SETTINGS
from sandbox.scene_file import SceneFileError, load_scene_file, save_scene_file

FAST = settings(max_examples=60, deadline=None, suppress_health_check=[HealthCheck.too_slow])
SCRATCH = Path(tempfile.mkdtemp(prefix="sandbox-properties-"))

# values that are never numbers, though Python would convert some of them
NOT_NUMBERS = st.sampled_from([True, False, np.bool_(True), "0.5", "1", "", None, b"1", [1.0], {"x": 1},
                               (1.0,), np.array([1.0]), object()])
NOT_FINITE = st.sampled_from([math.nan, math.inf, -math.inf, np.float64("nan")])
NOT_BOOLS = st.one_of(st.sampled_from(["false", "true", "no", "", None, 0, 1, 5, 0.0, 1.0, [True]]),
                      st.integers(), st.text(max_size=5))


def in_range(lo: float, hi: float) -> st.SearchStrategy:
    """Numbers from ``lo`` to ``hi`` as Python floats and ints and numpy floats."""
    floats = st.floats(lo, hi, allow_nan=False, allow_infinity=False)
    ints = st.integers(math.ceil(lo), math.floor(hi)) if math.ceil(lo) <= math.floor(hi) else floats
    return st.one_of(floats, ints, floats.map(np.float64))


def out_of_range(lo: float, hi: float) -> st.SearchStrategy:
    """Numbers below ``lo`` or above ``hi`` (huge ones included), and things that are not numbers."""
    below = st.floats(max_value=lo, exclude_max=True, allow_nan=False, allow_infinity=False)
    above = st.floats(min_value=hi, exclude_min=True, allow_nan=False, allow_infinity=False)
    return st.one_of(below, above, NOT_FINITE, NOT_NUMBERS, st.integers(min_value=10**400))


def vectors(limit: float, size: int = 3) -> st.SearchStrategy:
    return st.lists(in_range(-limit, limit), min_size=size, max_size=size)


def bad_vectors(limit: float, size: int = 3) -> st.SearchStrategy:
    """Vectors with one bad component, of the wrong length, ragged, or not vectors at all."""
    one_bad = st.tuples(vectors(limit, size), st.integers(0, size - 1), out_of_range(-limit, limit)).map(
        lambda t: [*t[0][: t[1]], t[2], *t[0][t[1] + 1:]])
    wrong_length = st.lists(in_range(-1, 1), max_size=6).filter(lambda x: len(x) != size)
    ragged = st.just([[0.0, 1.0], 1.0, 2.0][:size])
    return st.one_of(one_bad, wrong_length, ragged, NOT_NUMBERS, st.text(max_size=4))


# --- world settings -----------------------------------------------------------------------------------


def good_setting(name: str) -> st.SearchStrategy:
    s = SETTINGS[name]
    if s.kind == "bool":
        return st.sampled_from([True, False, np.bool_(True), np.bool_(False)])
    if s.kind == "choice":
        return st.sampled_from(s.choices)
    if s.kind == "int":
        return st.integers(int(s.min), int(s.max))
    return in_range(s.min, s.max)


def bad_setting(name: str) -> st.SearchStrategy:
    s = SETTINGS[name]
    if s.kind == "bool":
        return NOT_BOOLS
    if s.kind == "choice":
        return st.one_of(st.text(max_size=8).filter(lambda x: x not in s.choices), NOT_NUMBERS, st.integers())
    if s.kind == "int":
        return st.one_of(out_of_range(s.min, s.max), st.floats(s.min, s.max).filter(lambda x: x != int(x)))
    return out_of_range(s.min, s.max)


@FAST
@given(st.data())
def test_settings_take_their_range_and_refuse_everything_else(data):
    w = World()
    name = data.draw(st.sampled_from(sorted(SETTINGS)))
    good = data.draw(good_setting(name))
    setattr(w, name, good)
    assert getattr(w, name) == good
    bad = data.draw(bad_setting(name))
    try:
        setattr(w, name, bad)
    except ValueError as exc:
        assert name in str(exc)
    else:
        raise AssertionError(f"{name} = {bad!r} was accepted")
    assert getattr(w, name) == good


@FAST
@given(good=vectors(v.MAX_GRAVITY), bad=bad_vectors(v.MAX_GRAVITY))
def test_gravity(good, bad):
    w = World(gravity=good)
    try:
        w.gravity = bad
    except ValueError as exc:
        assert "gravity" in str(exc)
    else:
        raise AssertionError(f"gravity = {bad!r} was accepted")
    np.testing.assert_array_equal(w.gravity, np.asarray(good, float))


@FAST
@given(dt=st.one_of(in_range(1e-6, 0.1), out_of_range(0.0, 0.1)))
def test_step_takes_only_a_sensible_time_step(dt):
    w = World()
    w.add_body(Sphere(0.5))
    ok = not isinstance(dt, (bool, np.bool_)) and isinstance(dt, (int, float)) and 0 < dt <= 0.1
    try:
        w.step(dt)
    except ValueError as exc:
        assert not ok and "dt" in str(exc)
    else:
        assert ok


# --- bodies -------------------------------------------------------------------------------------------

GOOD_ARGS = {
    "position": vectors(v.MAX_COORDINATE),
    "orientation": vectors(1.0, 4).filter(lambda q: np.linalg.norm(np.asarray(q, float)) > 1e-3),
    "mass": st.one_of(st.just(0.0), in_range(v.MIN_MASS, v.MAX_MASS)),
    "restitution": in_range(0.0, 1.0),
    "friction": in_range(0.0, v.MAX_FRICTION),
    "velocity": vectors(v.MAX_SPEED),
    "angular_velocity": vectors(v.MAX_ANGULAR_SPEED),
    "gravity_scale": in_range(-v.MAX_GRAVITY_SCALE, v.MAX_GRAVITY_SCALE),
    "lock_rotation": st.booleans(),
}
BAD_ARGS = {
    "position": bad_vectors(v.MAX_COORDINATE),
    "orientation": st.one_of(bad_vectors(1e150, 4), st.just([0, 0, 0, 0])),
    "mass": st.one_of(out_of_range(0.0, v.MAX_MASS), st.floats(0.0, v.MIN_MASS, exclude_min=True,
                                                               exclude_max=True)),
    "restitution": out_of_range(0.0, 1.0),
    "friction": out_of_range(0.0, v.MAX_FRICTION),
    "velocity": bad_vectors(v.MAX_SPEED),
    "angular_velocity": bad_vectors(v.MAX_ANGULAR_SPEED),
    "gravity_scale": out_of_range(-v.MAX_GRAVITY_SCALE, v.MAX_GRAVITY_SCALE),
    "lock_rotation": NOT_BOOLS,
}
SETTERS = {"position": "position", "orientation": "orientation", "mass": "mass",
           "restitution": "restitution", "friction": "friction", "velocity": "linear_velocity",
           "angular_velocity": "angular_velocity", "gravity_scale": "gravity_scale"}


def shapes() -> st.SearchStrategy:
    size = st.floats(v.MIN_LENGTH, 10.0)
    return st.one_of(size.map(Sphere), st.tuples(size, size, size).map(Box),
                     st.tuples(size, size).map(lambda t: Capsule(*t)),
                     st.just(ConvexHull([[0, 0, 0], [1, 0, 0], [0, 1, 0], [0, 0, 1]])))


@settings(max_examples=80, deadline=None)
@given(shape=shapes(), kwargs=st.fixed_dictionaries({}, optional=GOOD_ARGS), data=st.data())
def test_add_body_takes_good_arguments_and_refuses_a_bad_one(shape, kwargs, data):
    w = World()
    b = w.add_body(shape, **kwargs)
    if "mass" in kwargs:
        assert b.mass == float(kwargs["mass"]) and b.static == (kwargs["mass"] == 0)
    if "restitution" in kwargs:
        assert b.restitution == float(kwargs["restitution"])
    assert np.all(np.isfinite(w.data.inv_mass[: w.data.n])) and np.all(np.isfinite(w.data.inv_inertia))
    name = data.draw(st.sampled_from(sorted(BAD_ARGS)))
    bad = data.draw(BAD_ARGS[name])
    try:
        w.add_body(shape, **{**kwargs, name: bad})
    except ValueError as exc:
        assert name in str(exc)
    else:
        raise AssertionError(f"add_body({name}={bad!r}) was accepted")
    assert w.bodies == [b]
    if name in SETTERS and not (name == "mass" and bad == 0):
        before = body_state(b)
        try:
            setattr(b, SETTERS[name], bad)
        except ValueError as exc:
            assert SETTERS[name] in str(exc)
        else:
            raise AssertionError(f"body.{SETTERS[name]} = {bad!r} was accepted")
        after = body_state(b)
        assert all(np.array_equal(before[k], after[k]) for k in before)


def body_state(b) -> dict:
    return {"position": b.position, "orientation": b.orientation, "velocity": b.linear_velocity,
            "angular_velocity": b.angular_velocity, "mass": b.mass, "static": b.static,
            "restitution": b.restitution, "friction": b.friction, "gravity_scale": b.gravity_scale,
            "lock_rotation": b.lock_rotation}


JSON_SCALARS = st.one_of(st.none(), st.booleans(), st.integers(-10**6, 10**6),
                         st.floats(allow_nan=False, allow_infinity=False), st.text(max_size=6))
JSON = st.recursive(JSON_SCALARS, lambda inner: st.one_of(st.lists(inner, max_size=4),
                                                           st.dictionaries(st.text(max_size=6), inner,
                                                                           max_size=4)), max_leaves=12)


# point clouds from 1e-300 m to 10 km across: the small ones must be refused, not break the construction
SCALED_CLOUDS = st.tuples(st.lists(st.tuples(*[st.floats(-1, 1)] * 3), min_size=4, max_size=10),
                          st.floats(-300, 4)).map(lambda t: np.array(t[0]).reshape(-1, 3) * 10.0 ** t[1])


@FAST
@given(points=st.one_of(st.lists(st.one_of(st.lists(st.floats(-5, 5), min_size=2, max_size=4), JSON),
                                 max_size=8), JSON, SCALED_CLOUDS))
def test_hulls_are_built_or_refused_with_a_value_error(points):
    try:
        hull = ConvexHull(points)
    except ValueError as exc:
        assert "points" in str(exc)
    else:
        assert len(hull.vertices) >= 4 and hull.volume() > 0 and np.all(np.isfinite(hull.inertia(1.0)))
        World().add_body(hull)


# --- scene files --------------------------------------------------------------------------------------

BODY_DOC = st.fixed_dictionaries(
    {"shape": st.just("sphere"), "radius": st.floats(0.01, 2.0)},
    optional={"position": vectors(100.0), "mass": st.floats(0.0, 10.0).filter(lambda m: m == 0 or m > 1e-3),
              "restitution": st.floats(0.0, 1.0), "friction": st.floats(0.0, 2.0),
              "velocity": vectors(10.0), "gravity_scale": st.floats(-2, 2), "lock_rotation": st.booleans(),
              "awake": st.booleans()})
SCENE_DOC = st.fixed_dictionaries(
    {"bodies": st.lists(BODY_DOC, max_size=4)},
    optional={"world": st.fixed_dictionaries({}, optional={n: good_setting(n).map(
        lambda x: x.item() if hasattr(x, "item") else x) for n in SETTINGS}),
        "dt": st.floats(0.001, 0.1), "name": st.text(max_size=5)})


def mutate(doc: object, path: list, value: object) -> object:
    """``doc`` with the node at ``path`` (indices chosen modulo each container's size) replaced."""
    if not path or not isinstance(doc, (dict, list)) or not doc:
        return value
    keys = list(doc) if isinstance(doc, dict) else list(range(len(doc)))
    key = keys[path[0] % len(keys)]
    out = dict(doc) if isinstance(doc, dict) else list(doc)
    out[key] = mutate(doc[key], path[1:], value)
    return out


@settings(max_examples=150, deadline=None)
@given(doc=SCENE_DOC, path=st.lists(st.integers(0, 20), max_size=5), value=JSON, raw=JSON)
def test_the_loader_loads_or_raises_scene_file_error(doc, path, value, raw):
    for candidate in (doc, mutate(doc, path, value), raw):
        p = SCRATCH / "generated.json"
        p.write_text(json.dumps(candidate), encoding="utf-8")
        try:
            build = load_scene_file(p)
        except SceneFileError:
            assert candidate is not doc, "a valid document was refused"
        else:
            w = World()
            build(w)
            assert len(w.bodies) == len(candidate["bodies"])


@settings(max_examples=40, deadline=None)
@given(doc=SCENE_DOC)
def test_a_generated_world_survives_the_round_trip(doc):
    p = SCRATCH / "source.json"
    p.write_text(json.dumps(doc), encoding="utf-8")
    w1 = World()
    load_scene_file(p)(w1)
    q = SCRATCH / "saved.json"
    save_scene_file(w1, q, dt=doc.get("dt"))
    w2 = World()
    build = load_scene_file(q)
    build(w2)
    assert build.dt == doc.get("dt")
    for name in ("gravity", *SETTINGS):
        np.testing.assert_array_equal(getattr(w1, name), getattr(w2, name))
    for b1, b2 in zip(w1.bodies, w2.bodies, strict=True):
        s1, s2 = body_state(b1), body_state(b2)
        assert b1.awake == b2.awake and repr(b1.shape) == repr(b2.shape)
        for key in s1:
            np.testing.assert_array_equal(s1[key], s2[key], err_msg=key)
