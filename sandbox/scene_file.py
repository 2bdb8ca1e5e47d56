"""Scenes stored as JSON files: load them into a ``World`` through its public API, and save a world back.

The format (every key but ``bodies`` optional; unknown keys are errors, so that typos do not pass
silently)::

    {
      "name": "demo", "description": "shown as the scene's help",
      "dt": 0.016666,
      "world": {"gravity": [0, -9.81, 0], "substeps": 4, "iterations": 8, "broadphase": "sap",
                "response": "impulse", "ccd": true, "sleeping": true, "restitution_rule": "max",
                "linear_damping": 0.001, ...every setting of sandbox.engine.settings.SETTINGS},
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

``mass`` 0 makes a static body; ``orientation`` is a quaternion (x, y, z, w); ``position`` is the origin
of the shape's frame (for a hull, the frame its ``points`` are given in). A body's defaults are those of
``World.add_body``, and each value is checked by it (``sandbox.engine.validate``): numbers must be JSON
numbers (``"0.5"`` and ``true`` are refused), booleans JSON booleans. A joint joins bodies ``a`` and ``b``
(indices into ``bodies``; ``b`` null or absent: the fixed world point ``anchor_b``) at world anchors, as
``World.add_distance_joint`` does. ``dt`` is the scene's time step (s), given to the app as the builder's
``dt`` attribute.

Limits, so that a file cannot hang the app (each is refused with a message naming it): at most
``MAX_FILE_BYTES`` of UTF-8 text, ``MAX_BODIES`` bodies, ``MAX_JOINTS`` joints, ``MAX_HULL_POINTS`` points
per hull and ``MAX_HULL_POINTS_TOTAL`` over the file's distinct hulls (a 1 000-point hull takes about 2 s
to build; identical point lists are built once).

Saving writes a temporary file in the same folder, flushes it to disk and renames it over the old one, so
that a failure midway (a full disk) leaves the old file as it was; it refuses (``ValueError``) a world
that the loader would refuse, naming the body or setting.
"""

from __future__ import annotations

import contextlib
import json
import math
import os
import stat
import tempfile
from collections.abc import Callable
from pathlib import Path

import numpy as np

from .engine import Box, Capsule, ConvexHull, Sphere, World
from .engine.settings import MAX_DT, SETTINGS
from .engine.shapes import Shape
from .engine.validate import is_number, show
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

WORLD_KEYS = ("gravity", *SETTINGS)
BODY_KEYS = ("position", "orientation", "mass", "restitution", "friction", "velocity", "angular_velocity",
             "gravity_scale", "lock_rotation")
"""The keys passed to ``World.add_body``; ``awake`` is set on the body afterwards."""
SHAPE_KEYS = {"sphere": ("radius",), "box": ("half_extents",), "capsule": ("radius", "half_height"),
              "hull": ("points",)}
JOINT_KEYS = ("a", "b", "anchor_a", "anchor_b", "length", "rope")
TOP_KEYS = ("name", "description", "dt", "world", "bodies", "joints")


class SceneFileError(ValueError):
    """A scene file that cannot be read, parsed or built; the message names the file and the entry."""


def _shape_from_entry(entry: dict, where: str, hulls: dict[bytes, ConvexHull]) -> Shape:
    """The shape of the body ``entry``; hulls with the same points come from ``hulls``, built once."""
    kind = entry.get("shape")
    if not isinstance(kind, str) or kind not in SHAPE_KEYS:
        raise SceneFileError(f"{where}: unknown shape {show(kind)} (expected one of {', '.join(SHAPE_KEYS)})")
    allowed = {"shape", *SHAPE_KEYS[kind], *BODY_KEYS, "awake"}
    unknown = sorted(set(entry) - allowed)
    if unknown:
        raise SceneFileError(f"{where}: unknown key(s) {', '.join(map(repr, unknown))} for a {kind}")
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


def _apply(doc: dict, world: World, source: str, shapes: list[Shape]) -> None:
    """Set ``world``'s settings and add the bodies (with ``shapes``) and joints of the checked document
    ``doc``; every value is checked by the API that takes it, and a ValueError names the entry."""
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
            elif isinstance(index, int) and not isinstance(index, bool) and 0 <= index < len(bodies):
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


def _check_document(doc: object, source: str) -> dict:
    """``doc`` after checking its structure, its keys and the limits; the values are checked when the
    document is built."""
    if not isinstance(doc, dict):
        raise SceneFileError(f"{source}: the top level must be an object with a 'bodies' list")
    unknown = sorted(set(doc) - set(TOP_KEYS))
    if unknown:
        raise SceneFileError(f"{source}: unknown top-level key(s) {', '.join(map(repr, unknown))}")
    for key in ("name", "description"):
        if key in doc and not isinstance(doc[key], str):
            raise SceneFileError(f"{source}: '{key}' must be a string, got {show(doc[key])}")
    if "dt" in doc:
        dt = doc["dt"]
        if not is_number(dt) or not math.isfinite(dt) or not 0 < dt <= MAX_DT:
            raise SceneFileError(f"{source}: dt must be a number above 0 and at most {MAX_DT:g} s, "
                                 f"got {show(dt)}")
    if not isinstance(doc.get("bodies"), list):
        raise SceneFileError(f"{source}: 'bodies' must be a list of body objects")
    if len(doc["bodies"]) > MAX_BODIES:
        raise SceneFileError(f"{source}: a scene file may hold at most {MAX_BODIES} bodies, "
                             f"got {len(doc['bodies'])}")
    settings = doc.get("world", {})
    if not isinstance(settings, dict):
        raise SceneFileError(f"{source}: 'world' must be an object")
    unknown = sorted(set(settings) - set(WORLD_KEYS))
    if unknown:
        raise SceneFileError(f"{source}: unknown world setting(s) {', '.join(map(repr, unknown))} "
                             f"(known: {', '.join(WORLD_KEYS)})")
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
        unknown = sorted(set(joint) - set(JOINT_KEYS))
        if unknown:
            raise SceneFileError(f"{source}: joints[{k}]: unknown key(s) {', '.join(map(repr, unknown))}")
    return doc


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


def load_scene_file(path: str | Path) -> Callable[[World], None]:
    """Read and check the JSON scene at ``path``; returns a scene builder ``build(world)``, whose ``dt``
    attribute is the file's time step (None when it has none).

    The file is built once into a scratch world here, so that every error (a missing file, bad JSON, an
    unknown shape or key, a bad number, a limit passed) raises ``SceneFileError`` now, naming the file and
    the entry."""
    p = Path(path)
    source = str(p)
    try:
        with open(p, "rb") as f:
            data = f.read(MAX_FILE_BYTES + 1)
    except OSError as exc:
        raise SceneFileError(f"cannot read scene file {source}: {exc.strerror or exc}") from None
    if len(data) > MAX_FILE_BYTES:
        raise SceneFileError(f"{source}: a scene file may be at most {MAX_FILE_BYTES // 2**20} MiB")
    doc = _check_document(_parse(data, source), source)
    shapes = _shapes(doc, source)  # shapes are immutable: the scratch world and every build share them
    _apply(doc, World(), source, shapes)

    def build(world: World) -> None:
        _apply(doc, world, source, shapes)

    build.__name__ = p.stem
    build.__doc__ = doc.get("description", f"scene file {source}")
    build.dt = doc.get("dt")  # type: ignore[attr-defined]
    return build


def _hull_points(shape: ConvexHull) -> np.ndarray:
    """The points to save for a hull: those it was given, or its corners when they were too many for a
    file (the same solid)."""
    if len(shape.points) <= MAX_HULL_POINTS:
        return shape.points
    return shape.vertices + shape.center


def _body_entry(body) -> dict:
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
    entry.update(position=body.position.tolist(), orientation=body.orientation.tolist(),
                 mass=0.0 if body.static else body.mass, restitution=body.restitution,
                 friction=body.friction, velocity=body.linear_velocity.tolist(),
                 angular_velocity=body.angular_velocity.tolist(), gravity_scale=body.gravity_scale,
                 lock_rotation=body.lock_rotation, awake=body.awake)
    return entry


def _joint_entry(joint, rows: dict[int, int]) -> dict:
    """A joint as the file holds it: body indices into the file's list, world anchors."""
    return {"a": rows[joint.body_a.index], "b": None if joint.body_b is None else rows[joint.body_b.index],
            "anchor_a": joint.anchor_world_a().tolist(), "anchor_b": joint.anchor_world_b().tolist(),
            "length": joint.length, "rope": joint.rope}


def scene_document(world: World, dt: float | None = None) -> dict:
    """Everything ``world`` holds as a scene document: every setting of ``SETTINGS`` and the gravity,
    every body with all its properties, every joint, and the time step ``dt`` when given. Grabs (the
    mouse's springs) are not part of a scene."""
    settings: dict = {"gravity": world.gravity.tolist()}
    for name, setting in SETTINGS.items():
        value = getattr(world, name)
        settings[name] = float(value) if setting.kind == "float" else value
    bodies = world.bodies
    rows = {b.index: k for k, b in enumerate(bodies)}
    doc: dict = {}
    if dt is not None:
        doc["dt"] = float(dt) if is_number(dt) else dt  # anything else is refused by the check
    doc.update(world=settings, bodies=[_body_entry(b) for b in bodies],
               joints=[_joint_entry(j, rows) for j in world.joints])
    return doc


def save_scene_file(world: World, path: str | Path, dt: float | None = None) -> None:
    """Write everything ``world`` holds (see ``scene_document``) to ``path`` in the format
    ``load_scene_file`` reads, atomically: the old file stays whole if writing fails. ``ValueError``
    naming the body or setting when the world holds something the loader would refuse (a NaN, a value out
    of range, a limit passed); ``OSError`` if the file cannot be written."""
    p = Path(path)
    source = f"saving {p}"
    doc = _check_document(scene_document(world, dt), source)
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
    text = json.dumps(doc, indent=1, allow_nan=False) + "\n"
    data = text.encode("utf-8")
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
