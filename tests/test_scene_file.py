"""Scene files: files that are not UTF-8 JSON or break a limit are refused with a message (and the command
line exits 2, not with a traceback); saving is atomic, saves everything the world holds, and refuses what
could not be loaded again."""

from __future__ import annotations

import builtins
import errno
import io
import json
import os
import subprocess
import sys
from pathlib import Path

import numpy as np
import pytest

from sandbox import scene_file
from sandbox.engine import Box, Capsule, ConvexHull, Sphere, World
from sandbox.engine.settings import SETTINGS
from sandbox.scene_file import SceneFileError, load_scene_file, save_scene_file

ROOT = Path(__file__).resolve().parents[1]
BALL = {"shape": "sphere", "radius": 0.5, "position": [0, 1, 0]}


def write(tmp_path: Path, doc: object, name: str = "scene.json") -> Path:
    path = tmp_path / name
    path.write_text(json.dumps(doc), encoding="utf-8")
    return path


# --- encodings and nesting ----------------------------------------------------------------------------


@pytest.mark.parametrize("encoding", ["latin-1", "utf-16"])
def test_a_file_that_is_not_utf8_is_refused_with_a_message(tmp_path, encoding):
    path = tmp_path / "bad.json"
    path.write_bytes('{"name": "café", "bodies": []}'.encode(encoding))
    with pytest.raises(SceneFileError, match="not UTF-8"):
        load_scene_file(path)


def test_deep_nesting_is_refused_with_a_message(tmp_path):
    path = tmp_path / "deep.json"
    path.write_text("[" * 100_000 + "]" * 100_000)
    with pytest.raises(SceneFileError, match="nested too deeply"):
        load_scene_file(path)


def test_nan_and_huge_integers_are_not_json(tmp_path):
    path = tmp_path / "nan.json"
    path.write_text('{"bodies": [{"shape": "sphere", "radius": NaN}]}')
    with pytest.raises(SceneFileError, match="NaN"):
        load_scene_file(path)
    path.write_text('{"bodies": [{"shape": "sphere", "radius": 1' + "0" * 5000 + "}]}")
    with pytest.raises(SceneFileError, match="not valid JSON"):
        load_scene_file(path)


@pytest.mark.parametrize("content", [b"\xff\xfe{\x00}\x00", b"[" * 100_000, b'{"bodies": [{"shape": [1]}]}'])
def test_the_command_line_exits_2_with_a_message(tmp_path, content):
    path = tmp_path / "bad.json"
    path.write_bytes(content)
    env = {**os.environ, "PYTHONPATH": str(ROOT)}
    env.pop("DISPLAY", None)  # the arguments are checked before any window opens
    run = subprocess.run([sys.executable, "-m", "sandbox", "--scene", str(path)], capture_output=True,
                         text=True, env=env, timeout=300, cwd=ROOT)
    assert run.returncode == 2, run.stderr
    assert "bad scene file" in run.stderr and "Traceback" not in run.stderr


# --- values Python would coerce -----------------------------------------------------------------------


@pytest.mark.parametrize(("doc", "word"), [
    ({"world": {"ccd": "no"}, "bodies": []}, "world.ccd"),
    ({"world": {"sleeping": 5}, "bodies": []}, "world.sleeping"),
    ({"world": {"linear_damping": -240}, "bodies": []}, "world.linear_damping"),
    ({"world": {"contact_hertz": "60"}, "bodies": []}, "world.contact_hertz"),
    ({"world": {"substeps": 4.5}, "bodies": []}, "world.substeps"),
    ({"bodies": [{**BALL, "radius": "0.5"}]}, "radius"),
    ({"bodies": [{**BALL, "radius": True}]}, "radius"),
    ({"bodies": [{**BALL, "mass": True}]}, "mass"),
    ({"bodies": [{**BALL, "mass": 1e-320}]}, "mass"),
    ({"bodies": [{**BALL, "position": [True, False, 0]}]}, "position"),
    ({"bodies": [{**BALL, "restitution": 1.5}]}, "restitution"),
    ({"bodies": [{**BALL, "lock_rotation": "true"}]}, "lock_rotation"),
    ({"bodies": [{**BALL, "awake": 0}]}, "awake"),
    ({"bodies": [{"shape": "hull", "points": [[0, 0, 0], [1, 0], [0, 1, 0], [0, 0, 1]]}]}, r"points\[1\]"),
    ({"bodies": [{"shape": ["sphere"]}]}, "unknown shape"),
    ({"bodies": [BALL], "joints": [{"a": 0, "b": 0}]}, "joints"),
    ({"bodies": [BALL], "joints": [{"a": True}]}, r"joints\[0\]: a must be the index"),
    ({"bodies": [BALL], "joints": [{"a": 0}]}, "anchor_b"),
    ({"bodies": [BALL], "dt": 10}, "dt"),
    ({"bodies": [], "description": 3}, "description"),
])
def test_values_of_the_wrong_type_or_range_are_refused(tmp_path, doc, word):
    with pytest.raises(SceneFileError, match=word):
        load_scene_file(write(tmp_path, doc))


# --- limits -------------------------------------------------------------------------------------------


def test_too_many_bodies_are_refused_before_anything_is_built(tmp_path):
    doc = {"bodies": [BALL] * (scene_file.MAX_BODIES + 1)}
    with pytest.raises(SceneFileError, match=f"at most {scene_file.MAX_BODIES} bodies"):
        load_scene_file(write(tmp_path, doc))


def test_hull_point_limits(tmp_path, monkeypatch):
    big = np.random.default_rng(0).normal(size=(scene_file.MAX_HULL_POINTS + 1, 3)).tolist()
    with pytest.raises(SceneFileError, match=f"at most {scene_file.MAX_HULL_POINTS} points"):
        load_scene_file(write(tmp_path, {"bodies": [{"shape": "hull", "points": big}]}))
    monkeypatch.setattr(scene_file, "MAX_HULL_POINTS_TOTAL", 12)
    cube = [[x, y, z] for x in (0, 1) for y in (0, 1) for z in (0, 1)]
    same = [{"shape": "hull", "points": cube, "position": [3 * i, 1, 0]} for i in range(5)]
    build = load_scene_file(write(tmp_path, {"bodies": same}))  # one hull of 8 points, built once
    w = World()
    build(w)
    assert len(w.hulls.shapes) == 1
    other = {"shape": "hull", "points": (np.array(cube) * 2).tolist()}
    with pytest.raises(SceneFileError, match="at most 12 points in all"):
        load_scene_file(write(tmp_path, {"bodies": [*same, other]}))


def test_file_size_limit(tmp_path, monkeypatch):
    monkeypatch.setattr(scene_file, "MAX_FILE_BYTES", 100)
    with pytest.raises(SceneFileError, match="at most"):
        load_scene_file(write(tmp_path, {"bodies": [BALL] * 10}))


# --- saving -------------------------------------------------------------------------------------------


def every_feature_world() -> World:
    """A world using every body property, both joint kinds and non-default values of every setting."""
    w = World(gravity=(0.5, -9.0, 0.25))
    for name, s in SETTINGS.items():
        if s.kind == "float":
            setattr(w, name, s.min + 0.37 * (min(s.max, 10 * s.default + 1) - s.min))
    w.substeps, w.iterations = 6, 12
    w.response, w.restitution_rule, w.broadphase = "impulse", "average", "grid"
    w.ccd, w.sleeping, w.contact_cache = False, False, False
    w.add_body(Box((6, 0.5, 6)), position=(0, -0.5, 0), mass=0.0, friction=0.8, restitution=0.2)
    w.add_body(Sphere(0.3), position=(0.5, 2.0, 0.1), mass=2.5, restitution=0.7, friction=0.3,
               velocity=(1, 0, 0), angular_velocity=(0, 2, 0), gravity_scale=0.5)
    w.add_body(Box((0.4, 0.2, 0.3)), position=(-1, 1.0, 0), orientation=(0.1, 0.2, 0.3, 0.9), mass=1.5,
               lock_rotation=True)
    w.add_body(Capsule(0.2, 0.4), position=(1.5, 1.2, -0.5), orientation=(0, 0, 0.3826834, 0.9238795))
    hull = ConvexHull([[0, 0, 0], [1, 0, 0], [0, 1, 0], [0, 0, 1], [0.6, 0.6, 0.6], [0.2, 0.1, 0.1]])
    w.add_body(hull, position=(2.0, 3.0, 1.0), mass=0.8, gravity_scale=-0.2)
    bob = w.add_body(Sphere(0.2), position=(-2, 4, 0), velocity=(0, 0, 1))
    w.add_body(hull, position=(-3, 1, 2))  # the same hull twice
    sleeper = w.add_body(Box(0.25), position=(4, 0.25, 4))
    sleeper.awake = False
    b = w.bodies
    w.add_distance_joint(bob, None, anchor_b=(-2, 6, 0))
    w.add_distance_joint(b[1], b[3], anchor_a=(0.5, 2.2, 0.1), length=1.5, rope=True)
    return w


def body_state(b) -> dict:
    return {"shape": repr(b.shape), "position": b.position, "orientation": b.orientation,
            "com": b.center_of_mass, "velocity": b.linear_velocity, "angular_velocity": b.angular_velocity,
            "mass": b.mass, "static": b.static, "restitution": b.restitution, "friction": b.friction,
            "gravity_scale": b.gravity_scale, "lock_rotation": b.lock_rotation, "awake": b.awake}


def assert_same_world(w1: World, w2: World, atol: float = 1e-12) -> None:
    for name in ("gravity", *SETTINGS):
        np.testing.assert_array_equal(getattr(w1, name), getattr(w2, name), err_msg=name)
    assert len(w1.bodies) == len(w2.bodies)
    for b1, b2 in zip(w1.bodies, w2.bodies, strict=True):
        s1, s2 = body_state(b1), body_state(b2)
        for key in s1:
            np.testing.assert_allclose(s1[key], s2[key], atol=atol, err_msg=key) if key != "shape" \
                else assert_equal(s1[key], s2[key])
    assert len(w1.joints) == len(w2.joints)
    for j1, j2 in zip(w1.joints, w2.joints, strict=True):
        assert (j1.body_a.index, j1.body_b and j1.body_b.index, j1.rope) == \
            (j2.body_a.index, j2.body_b and j2.body_b.index, j2.rope)
        assert j1.length == j2.length
        np.testing.assert_allclose(j1.anchor_world_a(), j2.anchor_world_a(), atol=atol)
        np.testing.assert_allclose(j1.anchor_world_b(), j2.anchor_world_b(), atol=atol)


def assert_equal(a, b) -> None:
    assert a == b


def test_the_round_trip_keeps_everything_and_the_same_motion(tmp_path):
    w1 = every_feature_world()
    path = tmp_path / "all.json"
    save_scene_file(w1, path, dt=1 / 120)
    build = load_scene_file(path)
    assert build.dt == 1 / 120
    w2 = World()
    build(w2)
    assert_same_world(w1, w2)
    for _ in range(100):
        w1.step(1 / 120)
        w2.step(1 / 120)
    np.testing.assert_array_equal(w2.data.pos[: w2.data.n], w1.data.pos[: w1.data.n])  # identical
    assert len(w1.joints) == 2 and abs(np.linalg.norm(w1.joints[0].anchor_world_a() - (-2, 6, 0)) - 2) < 0.05


def test_a_saved_newtons_cradle_keeps_its_strings(tmp_path):
    w = World()
    w.linear_damping = 0.0
    for k in range(3):
        bob = w.add_body(Sphere(0.25), position=(0.5 * k, 1.0, 0), restitution=1.0)
        w.add_distance_joint(bob, None, anchor_b=(0.5 * k, 3.0, 0))
    save_scene_file(w, tmp_path / "cradle.json")
    w2 = World()
    load_scene_file(tmp_path / "cradle.json")(w2)
    assert w2.linear_damping == 0.0 and len(w2.joints) == 3
    for _ in range(60):
        w2.step(1 / 60)
    assert all(abs(b.position[1] - 1.0) < 0.01 for b in w2.bodies)  # hanging, not fallen


def test_saving_a_world_with_a_nan_is_refused_and_keeps_the_old_file(tmp_path):
    path = tmp_path / "s.json"
    w = every_feature_world()
    save_scene_file(w, path)
    before = path.read_bytes()
    w.data.vel[2, 1] = np.nan  # as a blown-up simulation would leave it
    with pytest.raises(ValueError, match=r"bodies\[2\]: velocity must be finite"):
        save_scene_file(w, path)
    assert path.read_bytes() == before
    assert sorted(os.listdir(tmp_path)) == ["s.json"]


class HalfWriter:
    """A file whose ``write`` stores half the data, then fails as a full disk does."""

    def __init__(self, f) -> None:
        self.f = f

    def write(self, data) -> int:
        self.f.write(data[: len(data) // 2])
        self.f.flush()
        raise OSError(errno.ENOSPC, "No space left on device")

    def __getattr__(self, name):
        return getattr(self.f, name)

    def __enter__(self):
        return self

    def __exit__(self, *exc) -> None:
        self.f.close()


def test_a_save_that_fails_midway_leaves_the_old_file_intact(tmp_path, monkeypatch):
    path = tmp_path / "s.json"
    save_scene_file(every_feature_world(), path)
    before = path.read_bytes()
    real_open = builtins.open

    def failing_open(file, mode="r", *args, **kwargs):
        f = real_open(file, mode, *args, **kwargs)
        return HalfWriter(f) if "w" in mode else f

    monkeypatch.setattr(builtins, "open", failing_open)
    monkeypatch.setattr(io, "open", failing_open)
    w = World()
    w.add_body(Sphere(0.5))
    with pytest.raises(OSError, match="No space left"):
        save_scene_file(w, path)
    monkeypatch.undo()
    assert path.read_bytes() == before
    assert sorted(os.listdir(tmp_path)) == ["s.json"]  # no temporary file left behind
    load_scene_file(path)


def test_saving_keeps_the_file_permissions(tmp_path):
    path = tmp_path / "s.json"
    path.write_text("{}")
    path.chmod(0o640)
    save_scene_file(every_feature_world(), path)
    assert path.stat().st_mode & 0o777 == 0o640
    load_scene_file(path)
