"""Scenes stored as JSON files: load them into a ``World`` through its public API, and save a world back.

``docs/scene-files.md`` documents the format key by key (unit, default, range); in short::

    {
      "name": "bounce row", "description": "shown as the scene's help",
      "dt": 0.016666666666666666,
      "builder": "pile",
      "world": {"gravity": [0, -9.81, 0], "restitution_rule": "min", ...a setting of engine.SETTINGS},
      "camera": {"eye": [0, 2.3, 8.5], "target": [0, 1.6, 0], "fov_y_deg": 60},
      "lesson": {"title": "...", "concept": "...", "formula": "...", "try_this": "...", "look_at": "...",
                 "expect": "...", "presets": [{"label": "Combine rule: min",
                                              "settings": {"restitution_rule": "min"}}],
                 "check": "bounce_row", "labels": "bounce_row", "bodies": [1, 2], "engine_refs": ["..."]},
      "bodies": [
        {"shape": "box", "half_extents": [10, 0.5, 10], "position": [0, -0.5, 0], "mass": 0},
        {"shape": "sphere", "radius": 0.5, "position": [0, 4, 0], "mass": 2.0, "restitution": 0.8,
         "friction": 0.3, "velocity": [1, 0, 0], "angular_velocity": [0, 0, 0], "gravity_scale": 1,
         "lock_rotation": false, "awake": true},
        {"shape": "capsule", "radius": 0.3, "half_height": 0.6, "position": [1, 3, 0],
         "orientation": [0, 0, 0.7071068, 0.7071068]},
        {"shape": "hull", "points": [[0, 0, 0], [1, 0, 0], [0, 1, 0], [0, 0, 1]], "position": [2, 1, 0]}
      ],
      "joints": [
        {"a": 1, "b": 2, "anchor_a": [0, 4, 0], "anchor_b": [1, 3, 0], "length": 1.4, "rope": false},
        {"a": 3, "b": null, "anchor_a": [2, 1, 0], "anchor_b": [2, 5, 0]}
      ]
    }

Every key but ``bodies`` is optional, and a key left out takes its default (those of ``World`` and
``World.add_body``). Unknown keys are errors, so that typos do not pass silently, and every value is
checked by the API that takes it (``sandbox.engine.validate``, ``SETTINGS``): numbers must be JSON
numbers (``"0.5"`` and ``true`` are refused), booleans JSON booleans. Every error is a ``SceneFileError``
(a ``ValueError``) whose message names the file and the key.

``builder`` names a Python builder of ``scenes.BUILDERS`` (the standard scenes of thousands of bodies,
which would be megabytes of JSON): it builds first, then the file's settings and bodies are added. A
``lesson`` makes the scene a lesson (``sandbox.lessons.Lesson``): its text, its presets, its 3D labels and
its check, the last two named from the Python functions of ``lessons.LABELS`` and ``lessons.CHECKS``.

Limits, so that a file cannot hang the app (each is refused with a message naming it): at most
``MAX_FILE_BYTES`` of UTF-8 text, ``MAX_BODIES`` bodies, ``MAX_JOINTS`` joints, ``MAX_HULL_POINTS`` points
per hull and ``MAX_HULL_POINTS_TOTAL`` over the file's distinct hulls (a 1 000-point hull takes about 2 s
to build; identical point lists are built once).

Saving writes only what differs from the defaults, one body a line where it fits (``format_document``),
to a temporary file in the same folder, flushes it to disk and renames it over the old one, so that a
failure midway (a full disk) leaves the old file as it was; it refuses (``ValueError``) a world that the
loader would refuse, naming the body or setting. A file written by ``save_scene_file`` is read back to
the same world bit for bit, and a world loaded from it saves to the same text.
"""

from __future__ import annotations

import contextlib
import inspect
import json
import math
import os
import stat
import tempfile
from pathlib import Path

import numpy as np

from . import lessons, scenes
from .engine import Body, Box, Capsule, ConvexHull, Sphere, World
from .engine.settings import MAX_DT, SETTINGS, check_setting
from .engine.shapes import Shape
from .engine.validate import MAX_COORDINATE, MAX_GRAVITY, is_number, show, vec
from .engine.validate import points as check_points

MAX_FILE_BYTES = 64 * 2**20
"""The largest scene file read (64 MiB, about 150 000 saved bodies' worth of text)."""
MAX_BODIES = 20_000
"""The most bodies a scene file may hold (building 20 000 takes a few seconds)."""
MAX_JOINTS = 20_000
"""The most joints a scene file may hold."""
MAX_HULL_POINTS = 1_000
"""The most points one hull may be given (its construction grows faster than linearly: ~2 s for 1 000)."""
MAX_HULL_POINTS_TOTAL = 10_000
"""The most points over all the distinct hulls of a file."""
CAMERA_DISTANCE = (0.3, 500.0)
"""How far apart a camera's eye and target may be (m): the app's orbit camera keeps its distance within
these (``render.camera.MIN_DISTANCE``, ``MAX_DISTANCE``)."""
CAMERA_FOV_DEG = (10.0, 120.0)
"""The vertical fields of view a camera may have (degrees)."""
LINE_WIDTH = 120
"""``format_document`` puts a list or object on one line when it fits in this many characters."""

TOP_KEYS = ("name", "description", "dt", "builder", "world", "camera", "lesson", "bodies", "joints")
"""The keys of a document, in the order ``save_scene_file`` writes them."""
INFO_KEYS = ("name", "description", "camera", "lesson")
"""What a file holds besides the world: kept by ``SceneFile.info`` and written back by ``save_scene_file``."""
WORLD_KEYS = ("gravity", *SETTINGS)
WORLD_DEFAULTS: dict[str, object] = {
    "gravity": list(inspect.signature(World).parameters["gravity"].default),
    **{name: s.default for name, s in SETTINGS.items()}}
"""What a world setting left out means: ``World``'s defaults."""
BODY_KEYS = ("position", "orientation", "mass", "restitution", "friction", "velocity", "angular_velocity",
             "gravity_scale", "lock_rotation")
"""The keys passed to ``World.add_body``; ``awake`` is set on the body afterwards."""
BODY_DEFAULTS: dict[str, object] = {
    **{k: p.default for k, p in inspect.signature(World.add_body).parameters.items() if k in BODY_KEYS},
    "awake": True}
"""What a body key left out means: ``World.add_body``'s defaults, and awake."""
SHAPE_KEYS = {"sphere": ("radius",), "box": ("half_extents",), "capsule": ("radius", "half_height"),
              "hull": ("points",)}
JOINT_KEYS = ("a", "b", "anchor_a", "anchor_b", "length", "rope")
CAMERA_KEYS = ("eye", "target", "fov_y_deg")
LESSON_TEXT_KEYS = ("title", "concept", "formula", "try_this", "look_at", "expect")
"""The lesson's text, every one required (``lessons.Lesson`` has the same fields)."""
LESSON_KEYS = (*LESSON_TEXT_KEYS, "presets", "check", "labels", "bodies", "engine_refs")
PRESET_KEYS = ("label", "settings")
COMPARE_PRESET_KEYS = ("label", "compare")
"""A preset that opens the scene in lanes side by side (``Session.open_compare``): 2 or 3 lanes, A first."""


class SceneFileError(ValueError):
    """A scene file that cannot be read, parsed or built; the message names the file and the entry."""


# ----------------------------------------------------------------------------------------------------
# checking a document


def _unknown(where: str, entry: dict, allowed: tuple[str, ...], what: str = "key(s)", of: str = "") -> None:
    """SceneFileError naming the keys of ``entry`` that are not ``allowed``, if any."""
    unknown = sorted(set(entry) - set(allowed))
    if unknown:
        raise SceneFileError(f"{where}: unknown {what} {', '.join(map(repr, unknown))}{of} "
                             f"(known: {', '.join(allowed)})")


def _check_document(doc: object, source: str) -> dict:
    """``doc`` after checking its structure, its keys and the limits; the values are checked when the
    document is built (``_apply``, ``_camera``, ``_lesson``)."""
    if not isinstance(doc, dict):
        raise SceneFileError(f"{source}: the top level must be an object with a 'bodies' list")
    _unknown(source, doc, TOP_KEYS, "top-level key(s)")
    for key in ("name", "description"):
        if key in doc and not isinstance(doc[key], str):
            raise SceneFileError(f"{source}: '{key}' must be a string, got {show(doc[key])}")
    if "dt" in doc:
        dt = doc["dt"]
        if not is_number(dt) or not math.isfinite(dt) or not 0 < dt <= MAX_DT:
            raise SceneFileError(f"{source}: dt must be a number above 0 and at most {MAX_DT:g} s, "
                                 f"got {show(dt)}")
    if "builder" in doc and not _named(doc["builder"], scenes.BUILDERS):
        raise SceneFileError(f"{source}: builder must be one of {', '.join(scenes.BUILDERS)}, "
                             f"got {show(doc['builder'])}")
    if not isinstance(doc.get("bodies"), list):
        raise SceneFileError(f"{source}: 'bodies' must be a list of body objects")
    if len(doc["bodies"]) > MAX_BODIES:
        raise SceneFileError(f"{source}: a scene file may hold at most {MAX_BODIES} bodies, "
                             f"got {len(doc['bodies'])}")
    settings = doc.get("world", {})
    if not isinstance(settings, dict):
        raise SceneFileError(f"{source}: 'world' must be an object")
    _unknown(source, settings, WORLD_KEYS, "world setting(s)")
    for i, entry in enumerate(doc["bodies"]):
        if not isinstance(entry, dict):
            raise SceneFileError(f"{source}: bodies[{i}] must be an object, got {show(entry)}")
    joints = doc.get("joints", [])
    if not isinstance(joints, list):
        raise SceneFileError(f"{source}: 'joints' must be a list of joint objects")
    if len(joints) > MAX_JOINTS:
        raise SceneFileError(f"{source}: a scene file may hold at most {MAX_JOINTS} joints, "
                             f"got {len(joints)}")
    for k, joint in enumerate(joints):
        if not isinstance(joint, dict):
            raise SceneFileError(f"{source}: joints[{k}] must be an object, got {show(joint)}")
        _unknown(f"{source}: joints[{k}]", joint, JOINT_KEYS)
    for key, allowed in (("camera", CAMERA_KEYS), ("lesson", LESSON_KEYS)):
        if key in doc:
            if not isinstance(doc[key], dict):
                raise SceneFileError(f"{source}: '{key}' must be an object, got {show(doc[key])}")
            _unknown(f"{source}: {key}", doc[key], allowed)
    return doc


def _shape_from_entry(entry: dict, where: str, hulls: dict[bytes, ConvexHull]) -> Shape:
    """The shape of the body ``entry``; hulls with the same points come from ``hulls``, built once."""
    kind = entry.get("shape")
    if not isinstance(kind, str) or kind not in SHAPE_KEYS:
        raise SceneFileError(f"{where}: unknown shape {show(kind)} (expected one of {', '.join(SHAPE_KEYS)})")
    _unknown(where, entry, ("shape", *SHAPE_KEYS[kind], *BODY_KEYS, "awake"), of=f" for a {kind}")
    missing = [k for k in SHAPE_KEYS[kind] if k not in entry]
    if missing:
        raise SceneFileError(f"{where}: a {kind} needs {', '.join(map(repr, missing))}")
    try:
        if kind == "sphere":
            return Sphere(entry["radius"])
        if kind == "box":
            return Box(entry["half_extents"])
        if kind == "capsule":
            return Capsule(entry["radius"], entry["half_height"])
        raw = entry["points"]
        if isinstance(raw, list) and len(raw) > MAX_HULL_POINTS:
            raise ValueError(f"a hull may have at most {MAX_HULL_POINTS} points, got {len(raw)}")
        pts = check_points("points", raw)
        key = pts.tobytes()
        if key not in hulls:
            total = sum(len(h.points) for h in hulls.values()) + len(pts)
            if total > MAX_HULL_POINTS_TOTAL:
                raise ValueError(f"the file's hulls may have at most {MAX_HULL_POINTS_TOTAL} points in all")
            hulls[key] = ConvexHull(pts)
        return hulls[key]
    except ValueError as exc:
        raise SceneFileError(f"{where}: {exc}") from None


def _shapes(doc: dict, source: str) -> list[Shape]:
    """The shape of every body of the checked document ``doc``, in order."""
    hulls: dict[bytes, ConvexHull] = {}
    return [_shape_from_entry(entry, f"{source}: bodies[{i}]", hulls)
            for i, entry in enumerate(doc["bodies"])]


def _apply(doc: dict, world: World, source: str, shapes: list[Shape], run_builder: bool = True
           ) -> tuple[list[Body], list[Body]]:
    """Build the checked document ``doc`` into ``world``: its ``builder`` (unless ``run_builder`` is
    False), then its settings (so that they win over what the builder sets), its bodies (with ``shapes``)
    and its joints. Every value is checked by the API that takes it, and a ValueError names the entry.
    Returns the bodies the builder returned and the file's own bodies."""
    made: list[Body] = []
    if run_builder and "builder" in doc:
        made = list(scenes.BUILDERS[doc["builder"]](world))
    for key, value in doc.get("world", {}).items():
        try:
            setattr(world, key, value)
        except ValueError as exc:
            raise SceneFileError(f"{source}: world.{key}: {exc}") from None
    bodies = []
    for i, (entry, shape) in enumerate(zip(doc["bodies"], shapes, strict=True)):
        kwargs = {k: entry[k] for k in BODY_KEYS if k in entry}
        try:
            body = world.add_body(shape, **kwargs)
            if "awake" in entry:
                body.awake = entry["awake"]
        except ValueError as exc:
            raise SceneFileError(f"{source}: bodies[{i}]: {exc}") from None
        bodies.append(body)
    for k, joint in enumerate(doc.get("joints", [])):
        where = f"{source}: joints[{k}]"
        ends = []
        for end in ("a", "b"):
            index = joint.get(end)
            if end == "b" and index is None:
                ends.append(None)
            elif _is_index(index, len(bodies)):
                ends.append(bodies[index])
            else:
                raise SceneFileError(f"{where}: {end} must be the index of a body (0 to {len(bodies) - 1}), "
                                     f"got {show(index)}")
        try:
            world.add_distance_joint(ends[0], ends[1], anchor_a=joint.get("anchor_a"),
                                     anchor_b=joint.get("anchor_b"), length=joint.get("length"),
                                     rope=joint.get("rope", False))
        except ValueError as exc:
            raise SceneFileError(f"{where}: {exc}") from None
    return made, bodies


def _named(value: object, table: dict) -> bool:
    """Whether ``value`` is a name in ``table`` (a list or an object is not: it cannot even be looked up)."""
    return isinstance(value, str) and value in table


def _is_index(value: object, n: int) -> bool:
    return isinstance(value, int) and not isinstance(value, bool) and 0 <= value < n


def _text(where: str, value: object) -> str:
    if not isinstance(value, str) or not value.strip():
        raise SceneFileError(f"{where} must be a non-empty string, got {show(value)}")
    return value


def _camera(doc: dict, source: str) -> lessons.Camera | None:
    """The checked document's ``camera`` (None when it has none)."""
    entry = doc.get("camera")
    if entry is None:
        return None
    where = f"{source}: camera"
    for key in ("eye", "target"):
        if key not in entry:
            raise SceneFileError(f"{where} needs '{key}'")
    try:
        eye = vec("eye", entry["eye"], limit=MAX_COORDINATE)
        target = vec("target", entry["target"], limit=MAX_COORDINATE)
    except ValueError as exc:
        raise SceneFileError(f"{where}.{exc}") from None
    lo, hi = CAMERA_DISTANCE
    distance = float(np.linalg.norm(eye - target))
    if not lo <= distance <= hi:
        raise SceneFileError(f"{where}: eye and target must be {lo:g} to {hi:g} m apart, got {distance:g} m")
    fov = entry.get("fov_y_deg", 60.0)
    lo, hi = CAMERA_FOV_DEG
    if not is_number(fov) or not lo <= fov <= hi:
        raise SceneFileError(f"{where}.fov_y_deg must be a number from {lo:g} to {hi:g} degrees, "
                             f"got {show(fov)}")
    return lessons.Camera(tuple(eye.tolist()), tuple(target.tolist()), float(fov))


def _preset(entry: object, where: str) -> dict:
    """A lesson preset ``{"label": text, "settings": {setting: value}}`` after checking every value
    against the world's settings, or a side-by-side one ``{"label": text, "compare": [lane, ...]}`` of 2
    or 3 lanes ``{"label": text, "settings": {...}}`` (A first); returned as a new dict of the same
    content."""
    if isinstance(entry, dict) and "compare" in entry:
        _unknown(where, entry, COMPARE_PRESET_KEYS)
        lanes = entry["compare"]
        if not isinstance(lanes, list) or not 2 <= len(lanes) <= 3:
            raise SceneFileError(f"{where}.compare must be a list of 2 or 3 lanes, got {show(lanes)}")
        return {"label": _text(f"{where}.label", entry.get("label")),
                "compare": tuple(_preset(lane, f"{where}.compare[{k}]") for k, lane in enumerate(lanes))}
    if not isinstance(entry, dict):
        raise SceneFileError(f"{where} must be an object with 'label' and 'settings', got {show(entry)}")
    _unknown(where, entry, PRESET_KEYS)
    label = _text(f"{where}.label", entry.get("label"))
    settings = entry.get("settings")
    if not isinstance(settings, dict) or not settings:
        raise SceneFileError(f"{where}.settings must be a non-empty object of world settings, "
                             f"got {show(settings)}")
    _unknown(f"{where}.settings", settings, WORLD_KEYS, "setting(s)")
    for key, value in settings.items():
        try:
            if key == "gravity":
                vec("gravity", value, limit=MAX_GRAVITY)
            else:
                check_setting(key, value)
        except ValueError as exc:
            raise SceneFileError(f"{where}.settings.{key}: {exc}") from None
    return {"label": label, "settings": dict(settings)}


def _lesson(doc: dict, source: str, name: str, camera: lessons.Camera | None) -> lessons.Lesson | None:
    """The checked document's ``lesson`` as a ``lessons.Lesson`` (None when it has none): its check and
    labels are looked up by name in ``lessons.CHECKS`` and ``lessons.LABELS``."""
    entry = doc.get("lesson")
    if entry is None:
        return None
    where = f"{source}: lesson"
    text = {key: _text(f"{where}.{key}", entry.get(key)) for key in LESSON_TEXT_KEYS}
    check = entry.get("check")
    if not _named(check, lessons.CHECKS):
        raise SceneFileError(f"{where}.check must name one of {', '.join(lessons.CHECKS)}, got {show(check)}")
    labels = entry.get("labels")
    if labels is not None and not _named(labels, lessons.LABELS):
        raise SceneFileError(f"{where}.labels must name one of {', '.join(lessons.LABELS)}, "
                             f"got {show(labels)}")
    presets = entry.get("presets", [])
    if not isinstance(presets, list):
        raise SceneFileError(f"{where}.presets must be a list, got {show(presets)}")
    refs = entry.get("engine_refs", [])
    if not isinstance(refs, list):
        raise SceneFileError(f"{where}.engine_refs must be a list of strings, got {show(refs)}")
    picked = entry.get("bodies")
    if picked is not None and (not isinstance(picked, list)
                               or not all(_is_index(i, len(doc["bodies"])) for i in picked)):
        raise SceneFileError(f"{where}.bodies must be a list of indices into 'bodies' "
                             f"(0 to {len(doc['bodies']) - 1}), got {show(picked)}")
    optional = {} if labels is None else {"labels": lessons.LABELS[labels]}
    return lessons.Lesson(
        name=name, **text, camera=camera if camera is not None else lessons.DEFAULT_CAMERA,
        engine_refs=tuple(_text(f"{where}.engine_refs[{k}]", r) for k, r in enumerate(refs)),
        check=lessons.CHECKS[check],
        presets=tuple(_preset(p, f"{where}.presets[{k}]") for k, p in enumerate(presets)), **optional)


# ----------------------------------------------------------------------------------------------------
# loading


def _refuse_constant(name: str) -> float:
    raise ValueError(f"{name} is not a number JSON allows")


def _parse(data: bytes, source: str) -> object:
    """The JSON document in ``data``; SceneFileError for text that is not UTF-8, not JSON, or nested
    deeper than the parser can recurse."""
    try:
        text = data.decode("utf-8-sig")  # a byte-order mark is tolerated, nothing else but UTF-8
    except UnicodeDecodeError as exc:
        raise SceneFileError(f"{source}: not UTF-8 text (byte {exc.start}: {exc.reason}); save the file "
                             "as UTF-8") from None
    try:
        # NaN and Infinity are not JSON, though Python's parser accepts them by default
        return json.loads(text, parse_constant=_refuse_constant)
    except json.JSONDecodeError as exc:
        raise SceneFileError(f"{source}: not valid JSON: {exc.msg} at line {exc.lineno}, "
                             f"column {exc.colno}") from None
    except RecursionError:
        raise SceneFileError(f"{source}: not a scene: nested too deeply") from None
    except ValueError as exc:  # NaN, or an integer of more than 4 300 digits
        raise SceneFileError(f"{source}: not valid JSON: {exc}") from None


class SceneFile:
    """A scene read from a JSON file and checked: call it with a ``World`` to build the scene into it,
    which returns the scene's bodies (the lesson's ``bodies``, else the builder's and then the file's
    dynamic bodies, in order).

    ``name`` is the file's ``name`` (its file name without ``.json`` when it has none), ``path`` the file,
    ``dt`` its time step (None when it sets none), ``camera`` and ``lesson`` its camera
    (``lessons.Camera``) and lesson (``lessons.Lesson``) or None, ``info`` what it holds besides the world
    (for ``save_scene_file``). ``changed()`` tells whether the file on disk is no longer the one read."""

    def __init__(self, path: Path, doc: dict, shapes: list[Shape], signature: tuple[int, int]) -> None:
        source = str(path)
        self.path = path
        self.document = doc
        self._shapes = shapes
        self._signature = signature
        self.name: str = doc.get("name", path.stem)
        self.__name__ = self.name
        self.__doc__ = doc.get("description", f"scene file {source}")
        self.dt: float | None = doc.get("dt")
        self.camera = _camera(doc, source)
        self.lesson = _lesson(doc, source, self.name, self.camera)
        self.info = {k: doc[k] for k in INFO_KEYS if k in doc}

    def __call__(self, world: World) -> list[Body]:
        made, bodies = _apply(self.document, world, str(self.path), self._shapes)
        picked = self.document.get("lesson", {}).get("bodies")
        if picked is not None:
            return [bodies[i] for i in picked]
        return made + [b for b in bodies if not b.static]

    def __repr__(self) -> str:
        return f"SceneFile({str(self.path)!r})"

    def changed(self) -> bool:
        """Whether the file has been written (or removed) since it was read."""
        return _signature(self.path) != self._signature


def _signature(path: Path) -> tuple[int, int]:
    """The file's modification time (ns) and size; (-1, -1) when it cannot be read."""
    try:
        st = os.stat(path)
    except OSError:
        return (-1, -1)
    return (st.st_mtime_ns, st.st_size)


def load_scene_file(path: str | Path) -> SceneFile:
    """Read and check the JSON scene at ``path``; returns it as a ``SceneFile``, a scene builder.

    The file's own settings, bodies and joints are built once into a scratch world here (its builder, a
    trusted Python function, is not), and its camera and lesson are made, so that every error (a missing
    file, bad JSON, an unknown shape or key, a bad number, a limit passed, an unknown check) raises
    ``SceneFileError`` now, naming the file and the entry."""
    p = Path(path)
    source = str(p)
    signature = _signature(p)
    try:
        with open(p, "rb") as f:
            data = f.read(MAX_FILE_BYTES + 1)
    except OSError as exc:
        raise SceneFileError(f"cannot read scene file {source}: {exc.strerror or exc}") from None
    if len(data) > MAX_FILE_BYTES:
        raise SceneFileError(f"{source}: a scene file may be at most {MAX_FILE_BYTES // 2**20} MiB")
    doc = _check_document(_parse(data, source), source)
    shapes = _shapes(doc, source)  # shapes are immutable: the scratch world and every build share them
    _apply(doc, World(), source, shapes, run_builder=False)
    return SceneFile(p, doc, shapes, signature)


# ----------------------------------------------------------------------------------------------------
# saving


def _hull_points(shape: ConvexHull) -> np.ndarray:
    """The points to save for a hull: those it was given, or its corners when they were too many for a
    file (the same solid)."""
    if len(shape.points) <= MAX_HULL_POINTS:
        return shape.points
    return shape.vertices + shape.center


def _is_default(value: object, default: object) -> bool:
    """Whether ``value`` is ``default`` exactly, bit for bit (−0.0 is not 0.0: it would not load back the
    same)."""
    if isinstance(default, bool):
        return value is default
    return np.asarray(value, np.float64).tobytes() == np.asarray(default, np.float64).tobytes()


def _body_entry(body: Body) -> dict:
    """A body as the file holds it: its shape, then each property that is not at its default."""
    shape = body.shape
    entry: dict = {}
    if isinstance(shape, Sphere):
        entry.update(shape="sphere", radius=shape.radius)
    elif isinstance(shape, Box):
        entry.update(shape="box", half_extents=[float(x) for x in shape.half_extents])
    elif isinstance(shape, Capsule):
        entry.update(shape="capsule", radius=shape.radius, half_height=shape.half_height)
    else:
        entry.update(shape="hull", points=_hull_points(shape).tolist())
    values = {"position": body.position.tolist(), "orientation": body.orientation.tolist(),
              "mass": 0.0 if body.static else body.mass, "restitution": body.restitution,
              "friction": body.friction, "velocity": body.linear_velocity.tolist(),
              "angular_velocity": body.angular_velocity.tolist(), "gravity_scale": body.gravity_scale,
              "lock_rotation": body.lock_rotation, "awake": body.awake}
    entry.update((k, v) for k, v in values.items() if not _is_default(v, BODY_DEFAULTS[k]))
    return entry


def _joint_entry(joint, rows: dict[int, int]) -> dict:
    """A joint as the file holds it: body indices into the file's list, world anchors."""
    return {"a": rows[joint.body_a.index], "b": None if joint.body_b is None else rows[joint.body_b.index],
            "anchor_a": joint.anchor_world_a().tolist(), "anchor_b": joint.anchor_world_b().tolist(),
            "length": joint.length, "rope": joint.rope}


def scene_document(world: World, dt: float | None = None, info: dict | None = None) -> dict:
    """Everything ``world`` holds as a scene document: the settings (gravity and every one of
    ``SETTINGS``) that differ from their defaults, every body with its properties that differ from
    theirs, every joint, the time step ``dt`` when given, and ``info``'s name, description, camera and
    lesson (``SceneFile.info``) when given. Grabs (the mouse's springs) are not part of a scene."""
    info = info or {}
    _unknown("scene_document info", info, INFO_KEYS)
    settings: dict = {}
    for name, default in WORLD_DEFAULTS.items():
        value = getattr(world, name)
        if isinstance(value, np.ndarray):
            value = value.tolist()
        elif SETTINGS[name].kind == "float":
            value = float(value)
        if not (_is_default(value, default) if name == "gravity" or SETTINGS[name].kind == "float"
                else value == default):
            settings[name] = value
    bodies = world.bodies
    rows = {b.index: k for k, b in enumerate(bodies)}
    parts: dict = {k: info[k] for k in ("name", "description") if k in info}
    if dt is not None:
        parts["dt"] = float(dt) if is_number(dt) else dt  # anything else is refused by the check
    if settings:
        parts["world"] = settings
    parts.update((k, info[k]) for k in ("camera", "lesson") if k in info)
    parts["bodies"] = [_body_entry(b) for b in bodies]
    if world.joints:
        parts["joints"] = [_joint_entry(j, rows) for j in world.joints]
    return {k: parts[k] for k in TOP_KEYS if k in parts}


def format_document(doc: object) -> str:
    """``doc`` as JSON text to read and edit: a list or object on one line where that line fits in
    ``LINE_WIDTH`` characters, else one item a line, indented by two spaces a level (so a body is one
    line, a hull's points one a line). Numbers are written as Python's shortest repr, which reads back
    to the same float."""
    return _format(doc, 0, 0) + "\n"


def _format(value: object, indent: int, used: int) -> str:
    """``value`` as JSON starting ``used`` characters into a line whose items are indented by ``indent``."""
    flat = json.dumps(value, ensure_ascii=False, allow_nan=False)
    if not isinstance(value, (dict, list)) or not value or used + len(flat) + 1 <= LINE_WIDTH:
        return flat
    pad = " " * (indent + 2)
    if isinstance(value, list):
        items = [pad + _format(v, indent + 2, indent + 2) for v in value]
        return "[\n" + ",\n".join(items) + "\n" + " " * indent + "]"
    items = []
    for k, v in value.items():
        key = json.dumps(k, ensure_ascii=False) + ": "
        items.append(pad + key + _format(v, indent + 2, indent + 2 + len(key)))
    return "{\n" + ",\n".join(items) + "\n" + " " * indent + "}"


def save_scene_file(world: World, path: str | Path, dt: float | None = None, info: dict | None = None
                    ) -> None:
    """Write ``world`` (see ``scene_document``, with ``dt`` and ``info``) to ``path`` in the format
    ``load_scene_file`` reads, atomically: the old file stays whole if writing fails. ``ValueError``
    naming the body, setting or key when the document holds something the loader would refuse (a NaN, a
    value out of range, a limit passed, a bad lesson); ``OSError`` if the file cannot be written."""
    p = Path(path)
    source = f"saving {p}"
    doc = _check_document(scene_document(world, dt, info), source)
    # check the document exactly as the loader will, building it into a scratch world with the world's
    # own shapes (rebuilding the hulls would only repeat what they did)
    shapes = [b.shape for b in world.bodies]
    for i, shape in enumerate(shapes):
        if isinstance(shape, ConvexHull) and len(_hull_points(shape)) > MAX_HULL_POINTS:
            raise SceneFileError(f"{source}: bodies[{i}]: a hull of {len(shape.vertices)} corners is more "
                                 f"than a file may hold ({MAX_HULL_POINTS})")
    distinct = {id(s): len(_hull_points(s)) for s in shapes if isinstance(s, ConvexHull)}
    if sum(distinct.values()) > MAX_HULL_POINTS_TOTAL:
        raise SceneFileError(f"{source}: the hulls have more than {MAX_HULL_POINTS_TOTAL} points in all")
    _apply(doc, World(), source, shapes)
    _lesson(doc, source, doc.get("name", p.stem), _camera(doc, source))
    data = format_document(doc).encode("utf-8")
    if len(data) > MAX_FILE_BYTES:
        raise SceneFileError(f"{source}: the scene would take more than {MAX_FILE_BYTES // 2**20} MiB")
    _write_atomically(p, data)


def _write_atomically(path: Path, data: bytes) -> None:
    """Write ``data`` to ``path`` so that ``path`` holds either its old content or all of ``data``:
    write a temporary file in the same folder (a rename is atomic only within a file system), flush and
    fsync it, then ``os.replace`` it over ``path``."""
    folder = path.parent if str(path.parent) else Path(".")
    fd, tmp = tempfile.mkstemp(prefix=f".{path.name}.", suffix=".tmp", dir=folder)
    os.close(fd)
    try:
        try:  # keep the old file's permissions (mkstemp makes the file private)
            os.chmod(tmp, stat.S_IMODE(os.stat(path).st_mode))
        except FileNotFoundError:
            umask = os.umask(0)
            os.umask(umask)
            os.chmod(tmp, 0o666 & ~umask)
        with open(tmp, "wb") as f:
            f.write(data)
            f.flush()
            os.fsync(f.fileno())
        os.replace(tmp, path)
    except BaseException:
        with contextlib.suppress(OSError):
            os.unlink(tmp)
        raise
    with contextlib.suppress(OSError):  # make the rename itself durable where the platform allows
        dir_fd = os.open(folder, os.O_RDONLY)
        try:
            os.fsync(dir_fd)
        finally:
            os.close(dir_fd)
