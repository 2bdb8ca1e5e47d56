"""Scene files as the source of the scenes: every file in assets/scenes loads, is in the form the saver
writes (load, build, save: the same text) and runs 300 steps without NaN, passing its lesson's check; each
built-in scene builds exactly the world its Python builder built before the scene became a file; a
malformed copy is refused with a message naming the file and the key; and a built-in scene is found by
its name with spaces or hyphens alike, in the app, on its command line and in ``sandbox run``."""

from __future__ import annotations

import copy
import hashlib
import json
import re
from pathlib import Path

import numpy as np
import pytest

from sandbox import headless, lessons, scenes
from sandbox.__main__ import parse_args
from sandbox.engine import Box, Capsule, Sphere, World
from sandbox.engine.settings import SETTINGS
from sandbox.scene_file import (
    BODY_KEYS,
    CAMERA_KEYS,
    JOINT_KEYS,
    LESSON_KEYS,
    PRESET_KEYS,
    SHAPE_KEYS,
    TOP_KEYS,
    SceneFileError,
    format_document,
    load_scene_file,
    save_scene_file,
)
from sandbox.scenes import SCENE_FOLDER, SCENE_NAMES, SCENES, built_in_name, scene_file_path
from sandbox.session import Session, resolve_scene, scene_files

ROOT = Path(__file__).resolve().parent.parent
FILES = sorted(SCENE_FOLDER.glob("*.json"))
STEPS = 300

# fingerprint(world, bodies) of each built-in scene as its Python builder made it on main before the
# scenes became files (commit 85e1251): the files must give the world the very same bodies, settings and
# joints, bit for bit, so that the simulation runs exactly as before (300 steps gave the same state_hash
# for every scene, checked when the files were written). Where a builder drew random numbers (the hulls of
# showcase, hulls and raycasts; the jitter of pile, spheres and broadphase, which keep their builders), the
# files hold the numbers it drew.
MAIN_FINGERPRINTS = {
    "showcase": "4ab01894c657ec3f63add03d0940467f381937112a84ab3cb00416eb843211d8",
    "empty": "b4a8fd022be987bcdeee58e327961675637fb3895f0bd84461dd87dd1e3ab4fb",
    "pile": "4178ac944a00021da1f941208b49e542d70be19af3fd29e3eee94d23df6715d3",
    "pyramid": "c6104f1164c17d575ecc1ae895966c44450958b1ccde08cdf504863860dec839",
    "spheres": "d40b1649c761716f3aef83082fa0986d576752d08a4cdff6a9d1de9ad428d271",
    "bullet": "f9fb0a1774ebaf9f91f88da2656c4ef0cce20fa49b5e6bb8c3bbf7c1e73ed960",
    "bounce": "e39a69b2c1310f6c3d1c71b921d392515ea7f7293e06edcce1e91f752beefecc",
    "bounce row": "6ff37db41ba0f35ef92214bff5fc10f39552c2222b397dfb849ba76aef0e3203",
    "cradle": "d55f526cd22af6dd8217c0e50f68e7322378795c158251a9c1c1dcf48a367f88",
    "incline": "2f0216f4ee457ef39d6d5629d743a9260ecd7365c842fec2d14d2c9a90a25af5",
    "dominoes": "c0647725a59e99cc64ff238d4d0490e94e406eb1525c3a7ed15b990320300eab",
    "tennis racket": "30987d30bdc42c2addb1909484d1a99f6540910f88078e164a2c9ffba99d0ef1",
    "sphere-sphere": "834a2791c867c4df088aa702c9f65000ed5d76928d442c4334ceb018d5d57503",
    "sphere-box": "f91fdd1be73e6a9d430b4ddec87f95ebbe37d67c87ab119d0fdd3eb9411699da",
    "box-box": "06bd76efb2e743f525ec0ee216938bb8dc24b297fcaacb1e240564f95140d938",
    "capsules": "65b91c68aa20ea2125f1858f9d1667e38ad79ff74e9beca8da8e50f2d711f64e",
    "hulls": "3f239deb23dca58b3f4880a18da4117d4c7b3789f15eb39b3e2a9b763c30b7d9",
    "broadphase": "72eaba597dfe023bd7e45ed6cc0be510db71053c2819a919b7f6e7989f0ec170",
    "manifold": "52d7cbb4f7dba824cccd02c4b14a42541a0684611a916eacca2a61a641000847",
    "responses": "7a23039c3d88f4effd774b9e87f5e79046591b067d8e463f7c595f7b34c23d19",
    "restitution": "c3daae027f7e48f259be64022c7859bebc35d0014d6f6ce64a423b1b3229c3ed",
    "head-on": "488d39cb55d0c69e8a04dfd7af3f7aeab5178206d78ad5632a05f3d68fa897e0",
    "snooker": "b03c6892b694d2c629ace8735b1ef8cd1fee731e4b3a042c871d8c005da75bcb",
    "tunnelling": "3b54168d02775538ac6b2cabd08099f0dc53430c82209cfa7fe48a8b83fed073",
    "stacking": "8a5ad013ac1de744b4588e5fc7ba74c188fadf4d4428f380dd50b0695f5f3c33",
    "raycasts": "32c59b154cf55fd3c572a92df027c4e5d834648d6d1aa9d4b0b40c4dba685a16",
    "events": "ac094aa86981b0cec501d8846db974870cee4f1aad8257016a9663eab8579877",
    "spinning-top": "9209f3992647e7c2fbb149bf840f9f194e758cc43735349b662a730ecdc9f224",
}


def shape_inputs(shape) -> tuple:
    """What a shape was made from: its kind and dimensions, or a hull's points as given."""
    if isinstance(shape, Sphere):
        return ("sphere", shape.radius)
    if isinstance(shape, Box):
        return ("box", shape.half_extents.tolist())
    if isinstance(shape, Capsule):
        return ("capsule", shape.radius, shape.half_height)
    return ("hull", shape.points.tolist())


def fingerprint(world: World, bodies: list) -> str:
    """A digest of everything a scene gives its world, bit for bit (floats by repr): the settings that
    differ from their defaults and the gravity, each body's shape and properties, each joint, and which
    bodies the scene returns (its lesson's)."""
    parts = [repr(sorted((k, v) for k, v in ((n, getattr(world, n)) for n in SETTINGS)
                         if v != SETTINGS[k].default)), repr(world.gravity.tolist())]
    rows = {b.index: k for k, b in enumerate(world.bodies)}
    for b in world.bodies:
        parts.append(repr((shape_inputs(b.shape), b.position.tolist(), b.orientation.tolist(),
                           b.linear_velocity.tolist(), b.angular_velocity.tolist(), b.mass, b.static,
                           b.restitution, b.friction, b.gravity_scale, b.lock_rotation, b.awake)))
    for j in world.joints:
        parts.append(repr((rows[j.body_a.index], None if j.body_b is None else rows[j.body_b.index],
                           j.local_a.tolist(), j.local_b.tolist(), j.length, j.rope)))
    parts.append(repr([rows[b.index] for b in bodies]))
    return hashlib.sha256("\n".join(parts).encode()).hexdigest()


# --- every file ------------------------------------------------------------------------------------


def test_every_built_in_scene_is_a_file_with_its_lesson():
    assert list(SCENES) == list(SCENE_NAMES) == list(MAIN_FINGERPRINTS)
    for name in SCENE_NAMES:
        scene = SCENES[name]
        assert scene.path == scene_file_path(name) and scene.path.is_file()
        assert scene.name == name and scene.lesson is not None and scene.lesson.name == name
        assert scene.camera == scene.lesson.camera
    assert [lesson.name for lesson in lessons.LESSONS] == list(SCENE_NAMES)


@pytest.mark.parametrize("path", FILES, ids=lambda p: p.name)
def test_a_file_loads_and_saves_back_to_the_same_text(path, tmp_path):
    scene = load_scene_file(path)
    text = path.read_text(encoding="utf-8")
    assert format_document(json.loads(text)) == text  # in the saver's form, key order included
    if "builder" in scene.document:  # a builder's bodies are not the file's: it saves them all
        return
    w = World()
    scene(w)
    out = tmp_path / path.name
    save_scene_file(w, out, dt=scene.dt, info=scene.info)
    assert out.read_text(encoding="utf-8") == text
    again = World()
    load_scene_file(out)(again)
    assert again.state_hash() == w.state_hash()


# the 4 000 spheres of S3 take half a minute for 300 steps and the check's 300: tests/test_lessons.py runs
# its check on 500 of them from the same builder (its file adds nothing to it but the lesson)
RUN = [p for p in FILES if p.stem != "spheres"]


@pytest.mark.parametrize("path", RUN, ids=lambda p: p.name)
def test_a_file_runs_300_steps_and_passes_its_lessons_check(path):
    scene = load_scene_file(path)
    w = World()
    bodies = scene(w)
    if scene.lesson is not None:
        verdict = scene.lesson.check(w, bodies)
        assert verdict.startswith("PASS: "), verdict
    while w.steps < STEPS:
        w.step(lessons.DT)
    assert lessons.finite(w)


@pytest.mark.parametrize("name", SCENE_NAMES)
def test_a_built_in_file_builds_the_world_its_builder_built(name):
    w = World()
    bodies = SCENES[name](w)
    assert fingerprint(w, bodies) == MAIN_FINGERPRINTS[name]


def test_the_heavy_on_light_stack_stands():
    """Stacking's 1, 10 and 100 kg boxes (a light box under a body a hundred times heavier) sink less
    than 3 cm in 5 s and stay upright: the lesson's check measures it."""
    w = World()
    bodies = SCENES["stacking"](w)
    stack = bodies[36:39]
    assert [b.mass for b in stack] == [1.0, 10.0, 100.0]
    start = np.array([b.position for b in stack])
    verdict = lessons.CHECKS["stacking"](w, bodies)
    sank = float((start[:, 1] - np.array([b.position[1] for b in stack])).max())
    assert verdict.startswith("PASS: ") and 0.0 <= sank < 0.03, (sank, verdict)


# --- malformed copies -----------------------------------------------------------------------------


def set_at(doc: dict, path: tuple, value: object) -> None:
    """Set the node at ``path`` (keys and indices) of ``doc`` to ``value``; ``DELETE`` removes it."""
    node = doc
    for key in path[:-1]:
        node = node[key]
    if value is DELETE:
        del node[path[-1]]
    else:
        node[path[-1]] = value


DELETE = object()

# (where, value, what the message must say): one of each kind of error, on a copy of the cradle's file
# (it has world settings, a camera, a lesson with presets and labels, bodies and joints)
MALFORMED = [
    (("colour",), "red", r"unknown top-level key\(s\) 'colour'"),
    (("name",), 5, r"'name' must be a string"),
    (("dt",), 0, r"dt must be a number above 0"),
    (("builder",), "castle", r"builder must be one of pile"),
    (("builder",), ["pile"], r"builder must be one of pile"),
    (("bodies",), {}, r"'bodies' must be a list"),
    (("world", "wind"), 3.0, r"unknown world setting\(s\) 'wind'"),
    (("world", "linear_damping"), -1.0, r"world\.linear_damping: linear_damping must be a number from 0"),
    (("world", "gravity"), [0, "down", 0], r"world\.gravity"),
    (("world", "ccd"), "yes", r"world\.ccd: ccd must be True or False"),
    (("bodies", 1, "colour"), "red", r"bodies\[1\]: unknown key\(s\) 'colour' for a sphere"),
    (("bodies", 1, "restitution"), 2.0, r"bodies\[1\]: restitution must be from 0 to 1"),
    (("bodies", 1, "mass"), True, r"bodies\[1\]: mass must be a number"),
    (("bodies", 1, "shape"), "cone", r"bodies\[1\]: unknown shape 'cone'"),
    (("bodies", 1, "radius"), DELETE, r"bodies\[1\]: a sphere needs 'radius'"),
    (("joints", 0, "spring"), 1.0, r"joints\[0\]: unknown key\(s\) 'spring'"),
    (("joints", 0, "length"), -1.0, r"joints\[0\]: length must be from 0"),
    (("joints", 0, "a"), 99, r"joints\[0\]: a must be the index of a body"),
    (("camera", "zoom"), 2.0, r"camera: unknown key\(s\) 'zoom'"),
    (("camera", "eye"), DELETE, r"camera needs 'eye'"),
    (("camera", "eye"), [0, 1], r"camera\.eye must have 3 components"),
    (("camera", "target"), [0.0, 2.2, 6.5], r"camera: eye and target must be 0.3 to 500 m apart"),
    (("camera", "fov_y_deg"), 200, r"camera\.fov_y_deg must be a number from 10 to 120"),
    (("lesson", "quiz"), "?", r"lesson: unknown key\(s\) 'quiz'"),
    (("lesson", "title"), "", r"lesson\.title must be a non-empty string"),
    (("lesson", "expect"), DELETE, r"lesson\.expect must be a non-empty string"),
    (("lesson", "check"), "cradel", r"lesson\.check must name one of showcase"),
    (("lesson", "labels"), 3, r"lesson\.labels must name one of bullet"),
    (("lesson", "check"), {"name": "cradle"}, r"lesson\.check must name one of showcase"),
    (("lesson", "presets"), {}, r"lesson\.presets must be a list"),
    (("lesson", "presets", 0, "colour"), 1, r"lesson\.presets\[0\]: unknown key\(s\) 'colour'"),
    (("lesson", "presets", 0, "label"), None, r"lesson\.presets\[0\]\.label must be a non-empty string"),
    (("lesson", "presets", 0, "settings"), {}, r"lesson\.presets\[0\]\.settings must be a non-empty"),
    (("lesson", "presets", 0, "settings", "wind"), 1, r"lesson\.presets\[0\]\.settings: unknown setting"),
    (("lesson", "presets", 0, "settings", "linear_damping"), "0.5",
     r"lesson\.presets\[0\]\.settings\.linear_damping: linear_damping must be a number"),
    (("lesson", "bodies"), [99], r"lesson\.bodies must be a list of indices into 'bodies'"),
    (("lesson", "engine_refs"), "world.py", r"lesson\.engine_refs must be a list"),
]


@pytest.mark.parametrize(("where", "value", "message"), MALFORMED, ids=[".".join(map(str, m[0])) + (
    "-removed" if m[1] is DELETE else "") for m in MALFORMED])
def test_a_malformed_copy_is_refused_naming_the_file_and_the_key(tmp_path, where, value, message):
    doc = json.loads(scene_file_path("cradle").read_text(encoding="utf-8"))
    assert {"world", "camera", "lesson", "bodies", "joints"} <= set(doc) and doc["lesson"]["presets"]
    doc = copy.deepcopy(doc)
    set_at(doc, where, value)
    path = tmp_path / "cradle-copy.json"
    path.write_text(json.dumps(doc), encoding="utf-8")
    with pytest.raises(SceneFileError) as err:
        load_scene_file(path)
    assert str(err.value).startswith(str(path)), err.value
    assert re.search(message, str(err.value)), err.value


def test_saving_refuses_a_lesson_the_loader_would_refuse(tmp_path):
    scene = SCENES["bounce row"]
    w = World()
    scene(w)
    info = copy.deepcopy(scene.info)
    info["lesson"]["check"] = "nonsense"
    path = tmp_path / "s.json"
    with pytest.raises(SceneFileError, match=r"lesson\.check"):
        save_scene_file(w, path, info=info)
    assert not path.exists()


# --- finding a scene by name --------------------------------------------------------------------


@pytest.mark.parametrize(("text", "name"), [("bounce-row", "bounce row"), ("bounce row", "bounce row"),
                                            ("tennis-racket", "tennis racket"), ("sphere-box", "sphere-box"),
                                            (str(scene_file_path("bounce row")), "bounce row")])
def test_a_built_in_scene_is_found_with_hyphens_or_spaces_or_by_its_file(text, name):
    found, builder = resolve_scene(text)
    assert found == name and builder is SCENES[name]
    assert built_in_name(text) == name
    assert headless.resolve_scene(text) == (name.replace(" ", "-"), builder)


@pytest.mark.parametrize("text", ["bounce-row", "bounce row"])
def test_the_apps_command_line_takes_hyphens_or_spaces(text):
    _, scene = parse_args(["--scene", text])
    assert scene == "bounce row"
    _, scene = parse_args(["--scene", str(SCENE_FOLDER / "example.json")])
    assert scene.path == SCENE_FOLDER / "example.json"


def test_an_unknown_scene_is_refused_with_the_names_to_choose_from(capsys):
    with pytest.raises(ValueError, match="unknown scene 'bounce_row'"):
        resolve_scene("bounce_row")
    with pytest.raises(SystemExit) as exit_:
        parse_args(["--scene", "bounce_row"])
    assert exit_.value.code == 2
    assert "unknown scene 'bounce_row'" in capsys.readouterr().err
    assert built_in_name("bounce_row") is None and built_in_name("nowhere/bounce-row.json") is None


# --- the session ---------------------------------------------------------------------------------


def test_a_built_in_scene_comes_from_its_file_with_its_lesson_camera_and_step():
    session = Session()
    session.set_step_rate(120)
    assert session.load_scene("tunnelling")
    assert session.scene_path == str(scene_file_path("tunnelling"))
    assert session.lesson is lessons.LESSONS_BY_NAME["tunnelling"]
    assert session.scene_camera is session.lesson.camera
    assert session.sim.dt == 1 / 60  # the file's step: its bullets start where whole steps of it jump
    assert len(session.bodies) == 5
    assert session.load_scene(str(SCENE_FOLDER / "example.json"))
    assert session.lesson is None and session.scene_camera.eye == (-1.0, 4.5, 9.0)  # a file's own camera
    assert session.scene_name == "example.json"
    assert [p.name for p in scene_files()] == ["example.json"]  # the built-ins are listed by their names


def test_an_edited_built_in_file_is_read_again(tmp_path, monkeypatch):
    """A teacher's change to a built-in scene's file shows at the next load (the panel's Reload)."""
    (tmp_path / "bounce-row.json").write_bytes(scene_file_path("bounce row").read_bytes())
    monkeypatch.setattr(scenes, "SCENE_FOLDER", tmp_path)
    catalogue = scenes.BuiltInScenes()
    first = catalogue["bounce row"]
    assert first.path == tmp_path / "bounce-row.json" and catalogue.current("bounce row") is first
    doc = json.loads(first.path.read_text(encoding="utf-8"))
    doc["lesson"]["title"] = "Five balls"
    doc["bodies"].pop()
    first.path.write_text(format_document(doc), encoding="utf-8")
    edited = catalogue.current("bounce row")
    assert edited is not first and edited.lesson.title == "Five balls" and catalogue["bounce row"] is edited
    w = World()
    assert len(edited(w)) == 4
    first.path.write_text("{", encoding="utf-8")
    with pytest.raises(SceneFileError, match="not valid JSON"):
        catalogue.current("bounce row")
    assert catalogue["bounce row"] is edited  # a broken edit leaves the last good one


# --- the documentation --------------------------------------------------------------------------


def test_the_format_is_documented_key_by_key():
    doc = (ROOT / "docs" / "scene-files.md").read_text(encoding="utf-8")
    keys = {*TOP_KEYS, *BODY_KEYS, "awake", *(k for ks in SHAPE_KEYS.values() for k in ks), *SHAPE_KEYS,
            *JOINT_KEYS, *CAMERA_KEYS, *LESSON_KEYS, *PRESET_KEYS, "gravity", *lessons.CHECKS,
            *lessons.LABELS, *scenes.BUILDERS}
    missing = sorted(k for k in keys if f"`{k}`" not in doc and f'`"{k}"`' not in doc)
    assert not missing, f"docs/scene-files.md does not name {missing}"
    for s in SETTINGS.values():  # each setting's row gives its default, range and unit as SETTINGS does
        if s.kind in ("int", "float"):
            rng = f"{s.min:g} to {s.max:g}"
        else:
            rng = "true, false" if s.kind == "bool" else ", ".join(s.choices)
        default = json.dumps(s.default) if not isinstance(s.default, float) else f"{s.default:g}"
        row = f"| `{s.name}` | {default} | {rng} | {s.unit} |"
        assert row in doc, f"docs/scene-files.md: the row of {s.name} should start {row!r}"
    assert "docs/scene-files.md" in (ROOT / "README.md").read_text(encoding="utf-8")
