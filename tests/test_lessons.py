"""Lessons: every built-in scene has a lesson whose own check passes (the measured figures against the
formula a student would use), whose presets are real world settings, whose camera sees what matters, and
whose student page in docs/lessons/ is up to date."""

from __future__ import annotations

import math
import re
from pathlib import Path

import numpy as np
import pytest

from sandbox import lessons, scenes
from sandbox.engine import World
from sandbox.lessons import LESSONS, LESSONS_BY_NAME, Label, apply_preset, lesson_markdown
from sandbox.scenes import SCENES

ROOT = Path(__file__).resolve().parent.parent
STEPS = 300  # every scene runs at least this long without NaN

# smaller versions of the heavy scenes, so that the whole file stays well under three minutes
SMALL = {
    "pile": lambda w: scenes.s1_pile(w, 216),
    "pyramid": lambda w: scenes.s2_pyramid(w, 10),
    "spheres": lambda w: scenes.s3_spheres(w, 500),
    "broadphase": lambda w: scenes.broadphase_field(w, 300),
}


def build(name: str, small: bool = True):
    """A fresh world with scene ``name`` (its small version where there is one) and its bodies."""
    w = World()
    builder = SMALL.get(name, SCENES[name]) if small else SCENES[name]
    return w, builder(w)


def test_every_scene_has_a_lesson_in_the_same_order():
    assert [lesson.name for lesson in LESSONS] == list(SCENES)
    for name in ("bounce row", "cradle", "incline", "tennis racket"):  # the old names still work
        assert name in SCENES


@pytest.mark.parametrize("name", list(SCENES))
def test_scene_runs_and_passes_its_own_check(name):
    lesson = LESSONS_BY_NAME[name]
    w, bodies = build(name)
    result = lesson.check(w, bodies)
    assert result.startswith("PASS: "), result
    while w.steps < STEPS:
        w.step(lessons.DT)
    assert lessons.finite(w)
    for label in lesson.labels(w, bodies):
        assert isinstance(label, Label) and label.text
        assert np.isfinite(label.position).all()


# the checks that depend on a preset: each one's verdict follows the setting
PRESET_CASES = [
    ("bullet", "CCD off"), ("tunnelling", "CCD off"), ("tunnelling", "CCD on"),
    ("responses", "Projection instead of impulses"), ("responses", "Penalty springs"),
    ("restitution", "Combine rule: min"), ("restitution", "Combine rule: max"),
    ("restitution", "Combine rule: average"), ("bounce", "Combine rule: average"),
    ("incline", "Friction rule: geometric"), ("incline", "Friction rule: max"),
    ("pyramid", "Reference solver"),
]


@pytest.mark.parametrize(("name", "label"), PRESET_CASES)
def test_checks_follow_the_presets(name, label):
    lesson = LESSONS_BY_NAME[name]
    preset = next(p for p in lesson.presets if p["label"] == label)
    w, bodies = build(name)
    apply_preset(w, preset)
    result = lesson.check(w, bodies)
    assert result.startswith("PASS: "), result


@pytest.mark.parametrize(("name", "label", "bodies_moved", "least"), [
    ("pyramid", "No warm starting", slice(None), 0.2),  # it collapses
    ("stacking", "Block solver off", slice(36, 39), 0.015),  # the heavy-on-light stack sinks ~1 cm a contact
])
def test_presets_that_break_a_stack_do_break_it(name, label, bodies_moved, least):
    """The lessons say so: without warm starting the pyramid collapses; without the block solver the
    heavy-on-light stack sinks past the 1 cm bar."""
    lesson = LESSONS_BY_NAME[name]
    w, bodies = build(name)
    apply_preset(w, next(p for p in lesson.presets if p["label"] == label))
    result = lesson.check(w, bodies)
    assert result.startswith("FAIL: "), result
    start = start_positions(name)
    drift = max(float(np.linalg.norm(b.position - p))
                for b, p in zip(bodies[bodies_moved], start[bodies_moved], strict=True))
    assert drift > least, drift


def start_positions(name: str) -> list[np.ndarray]:
    """The bodies' starting positions of scene ``name`` (its small version)."""
    return [b.position.copy() for b in build(name)[1]]


def test_incline_teaches_coulomb_friction_under_the_min_rule():
    """Each box's effective μ is its label; μ < tan 20° slides with g(sin θ − μ cos θ), the others hold."""
    w, boxes = build("incline")
    assert w.friction_rule == "min"
    theta = math.radians(scenes.RAMP_ANGLE)
    _, _, down = scenes.ramp_frame(scenes.RAMP_ANGLE)
    lessons.run(w, 30)
    v0 = [float(b.linear_velocity @ down) for b in boxes]
    lessons.run(w, 60)
    for b, v in zip(boxes, v0, strict=True):
        a = float(b.linear_velocity @ down) - v
        if b.friction < math.tan(theta):
            assert a == pytest.approx(9.81 * (math.sin(theta) - b.friction * math.cos(theta)), rel=0.03)
        else:
            assert abs(a) < 0.02


def test_head_on_collisions_give_the_formulas_velocities():
    w, balls = build("head-on")
    p0 = w.momentum()
    lessons.run(w, 90)
    np.testing.assert_allclose(w.momentum(), p0, atol=1e-9)
    v = scenes.HEAD_ON_SPEED
    expected = {(1.0, 1.0, 1.0): (0.0, v), (1.0, 3.0, 1.0): (-v / 2, v / 2),
                (3.0, 1.0, 1.0): (v / 2, 1.5 * v), (1.0, 1.0, 0.0): (v / 2, v / 2),
                (1.0, 3.0, 0.0): (v / 4, v / 4)}  # worked by hand from v1' and v2' of the lesson's formula
    for k, (m1, m2, e, _) in enumerate(scenes.HEAD_ON_LANES):
        w1, w2 = expected[(m1, m2, e)]
        assert balls[2 * k].linear_velocity[0] == pytest.approx(w1, abs=0.02 * v)
        assert balls[2 * k + 1].linear_velocity[0] == pytest.approx(w2, abs=0.02 * v)


def test_manifold_points_face_edge_corner():
    w, cubes = build("manifold")
    w.step(lessons.DT)
    assert [lessons.ground_manifold_points(w, c) for c in cubes] == [4, 2, 1]


def test_tunnelling_ccd_off_lets_the_fast_bullets_through():
    w, bullets = build("tunnelling")
    w.ccd = False
    lessons.run(w, 90)
    through = [float(b.position[0]) > scenes.TUNNEL_WALL for b in bullets]
    assert through == [False, False, True, True, True]


@pytest.mark.parametrize("lesson", LESSONS, ids=lambda lesson: lesson.name)
def test_presets_are_real_world_settings(lesson):
    assert len(lesson.presets) <= 5
    for preset in lesson.presets:
        if "compare" in preset:  # lanes side by side: each lane's settings are real ones (test_compare.py)
            assert set(preset) == {"label", "compare"} and preset["label"]
            assert 2 <= len(preset["compare"]) <= 3
            for lane in preset["compare"]:
                w = World()
                apply_preset(w, {"label": lane["label"], "settings": lane["settings"]})
            continue
        assert set(preset) == {"label", "settings"} and preset["label"] and preset["settings"]
        w = World()
        apply_preset(w, preset)
        for key, value in preset["settings"].items():
            assert getattr(w, key) == value


def test_apply_preset_rejects_an_unknown_setting():
    with pytest.raises(AttributeError):
        apply_preset(World(), {"label": "bad", "settings": {"no_such_setting": 1}})


def project(camera: lessons.Camera, points: np.ndarray, aspect: float = 16 / 9) -> np.ndarray:
    """Normalised device coordinates (x, y in [−1, 1] when visible) and the depth in front of the eye of
    each point, for a perspective camera at ``camera.eye`` looking at ``camera.target`` with y up."""
    eye, target = np.asarray(camera.eye, float), np.asarray(camera.target, float)
    forward = (target - eye) / np.linalg.norm(target - eye)
    right = np.cross(forward, (0.0, 1.0, 0.0))
    right /= np.linalg.norm(right)
    up = np.cross(right, forward)
    rel = points - eye
    depth = rel @ forward
    t = math.tan(math.radians(camera.fov_y_deg) / 2)
    x = (rel @ right) / (depth * t * aspect)
    y = (rel @ up) / (depth * t)
    return np.stack([x, y, depth], axis=1)


@pytest.mark.parametrize("lesson", LESSONS, ids=lambda lesson: lesson.name)
def test_camera_sees_the_bodies_that_matter(lesson):
    """Every body of the full scene but the ground slab, and every label, projects inside the picture."""
    w, bodies = build(lesson.name, small=False)
    d = w.data
    keep = d.alive[: d.n] & (d.radius[: d.n] < 10.0)  # all but the wide ground
    points = [d.pos[: d.n][keep]]
    if not keep.any():
        points.append(np.zeros((1, 3)))  # an empty scene: the ground's centre, where bodies get spawned
    labels = lesson.labels(w, bodies)
    if labels:
        points.append(np.array([label.position for label in labels], float))
    ndc = project(lesson.camera, np.concatenate(points))
    assert (ndc[:, 2] > 0.5).all(), "a body is behind the camera"
    worst = float(np.abs(ndc[:, :2]).max())
    assert worst < 0.97, f"a body or label is outside the view (|ndc| = {worst:.2f})"
    # and no static body (a wall, a pedestal) hides a moving one from the eye
    eye = np.asarray(lesson.camera.eye, float)
    for b in bodies:
        to = b.position - eye
        hit = w.raycast(eye, to, max_distance=float(np.linalg.norm(to)))
        hidden = hit is not None and hit.body != b and hit.body.static
        assert not hidden, f"body {b.index} is hidden behind static body {hit.body.index}"


def test_camera_projection_puts_the_target_in_the_middle():
    cam = lessons.Camera((0.0, 0.0, 10.0), (0.0, 0.0, 0.0))
    ndc = project(cam, np.array([[0.0, 0.0, 0.0], [0.0, 10 * math.tan(math.radians(30)), 0.0]]))
    np.testing.assert_allclose(ndc[:, :2], [[0.0, 0.0], [0.0, 1.0]], atol=1e-12)


@pytest.mark.parametrize("lesson", LESSONS, ids=lambda lesson: lesson.name)
def test_camera_as_orbit_parameters(lesson):
    """The orbit form (for the app's camera) gives back the eye, and stays within its limits."""
    o = lesson.camera.orbit()
    cp = math.cos(o["pitch"])
    eye = np.asarray(o["target"]) + o["distance"] * np.array([cp * math.sin(o["yaw"]), math.sin(o["pitch"]),
                                                             cp * math.cos(o["yaw"])])
    np.testing.assert_allclose(eye, lesson.camera.eye, atol=1e-12)
    assert abs(o["pitch"]) < math.radians(89.0) and 0.3 <= o["distance"] <= 500.0
    assert lesson.camera.target[1] >= 0.0 and lesson.camera.eye[1] > 0.05  # the camera stays above ground


@pytest.mark.parametrize("lesson", LESSONS, ids=lambda lesson: lesson.name)
def test_lesson_text_refs_and_page(lesson):
    for text in (lesson.title, lesson.formula, lesson.try_this, lesson.look_at, lesson.expect):
        assert text.strip()
    sentences = len(re.findall(r"[.!?](\s|$)", lesson.concept))
    assert 2 <= sentences <= 5, lesson.concept
    assert lesson.engine_refs
    for ref in lesson.engine_refs:
        path, _, func = ref.partition(": ")
        source = (ROOT / path).read_text(encoding="utf-8")
        name = func.split(".")[-1]
        assert re.search(rf"^\s*(def|class) {re.escape(name)}\b", source, re.M), ref
    page = ROOT / "docs" / "lessons" / lesson.doc_page
    assert page.read_text(encoding="utf-8") == lesson_markdown(lesson), \
        "docs/lessons is stale: run python -m sandbox.lessons docs/lessons"


def test_lessons_index_and_readme_link():
    index = (ROOT / "docs" / "lessons" / "index.md").read_text(encoding="utf-8")
    assert index == lessons.index_markdown()
    for lesson in LESSONS:
        assert f"]({lesson.doc_page})" in index
    assert "docs/lessons/index.md" in (ROOT / "README.md").read_text(encoding="utf-8")
