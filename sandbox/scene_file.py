"""Scenes stored as JSON files: load them into a ``World`` through its public API, and save a world back.

The format (every key but ``bodies`` optional; unknown keys are errors, so that typos do not pass
silently)::

    {
      "world": {"gravity": [0, -9.81, 0], "substeps": 4, "iterations": 8, "broadphase": "sap",
                "response": "impulse", "ccd": true, "sleeping": true, "restitution_rule": "max"},
      "bodies": [
        {"shape": "box", "half_extents": [10, 0.5, 10], "position": [0, -0.5, 0], "mass": 0},
        {"shape": "sphere", "radius": 0.5, "position": [0, 4, 0], "mass": 2.0, "restitution": 0.8,
         "friction": 0.3, "velocity": [1, 0, 0], "angular_velocity": [0, 0, 0]},
        {"shape": "capsule", "radius": 0.3, "half_height": 0.6, "position": [1, 3, 0],
         "orientation": [0, 0, 0.7071068, 0.7071068]},
        {"shape": "hull", "points": [[0, 0, 0], [1, 0, 0], [0, 1, 0], [0, 0, 1]], "position": [2, 1, 0]}
      ]
    }

``mass`` 0 makes a static body; ``orientation`` is a quaternion (x, y, z, w); ``position`` is the origin
of the shape's frame (for a hull, the frame its ``points`` are given in). A body's defaults are those of
``World.add_body``.
"""

from __future__ import annotations

import json
from collections.abc import Callable
from pathlib import Path

import numpy as np

from .engine import Box, Capsule, ConvexHull, Sphere, World
from .engine.shapes import Shape

WORLD_KEYS = ("gravity", "substeps", "iterations", "broadphase", "response", "ccd", "sleeping",
              "restitution_rule")
BODY_KEYS = ("position", "orientation", "mass", "restitution", "friction", "velocity", "angular_velocity")
SHAPE_KEYS = {"sphere": ("radius",), "box": ("half_extents",), "capsule": ("radius", "half_height"),
              "hull": ("points",)}


class SceneFileError(ValueError):
    """A scene file that cannot be read, parsed or built; the message names the file and the entry."""


def _shape_from_entry(entry: dict, where: str) -> Shape:
    kind = entry.get("shape")
    if kind not in SHAPE_KEYS:
        raise SceneFileError(f"{where}: unknown shape {kind!r} (expected one of {', '.join(SHAPE_KEYS)})")
    allowed = {"shape", *SHAPE_KEYS[kind], *BODY_KEYS}
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
        return ConvexHull(np.asarray(entry["points"], dtype=np.float64))
    except (ValueError, TypeError) as exc:
        raise SceneFileError(f"{where}: {exc}") from None


def _apply(doc: dict, world: World, source: str) -> None:
    """Set ``world``'s settings and add the bodies described by the parsed document ``doc``."""
    settings = doc.get("world", {})
    for key, value in settings.items():
        try:
            setattr(world, key, value)
        except (ValueError, TypeError) as exc:
            raise SceneFileError(f"{source}: world.{key}: {exc}") from None
    for i, entry in enumerate(doc["bodies"]):
        where = f"{source}: bodies[{i}]"
        shape = _shape_from_entry(entry, where)
        kwargs = {k: entry[k] for k in BODY_KEYS if k in entry}
        try:
            world.add_body(shape, **kwargs)
        except (ValueError, TypeError) as exc:
            raise SceneFileError(f"{where}: {exc}") from None


def _check_document(doc: object, source: str) -> dict:
    if not isinstance(doc, dict):
        raise SceneFileError(f"{source}: the top level must be an object with a 'bodies' list")
    unknown = sorted(set(doc) - {"world", "bodies", "name", "description"})
    if unknown:
        raise SceneFileError(f"{source}: unknown top-level key(s) {', '.join(map(repr, unknown))}")
    if not isinstance(doc.get("bodies"), list):
        raise SceneFileError(f"{source}: 'bodies' must be a list of body objects")
    settings = doc.get("world", {})
    if not isinstance(settings, dict):
        raise SceneFileError(f"{source}: 'world' must be an object")
    unknown = sorted(set(settings) - set(WORLD_KEYS))
    if unknown:
        raise SceneFileError(f"{source}: unknown world setting(s) {', '.join(map(repr, unknown))} "
                             f"(known: {', '.join(WORLD_KEYS)})")
    for i, entry in enumerate(doc["bodies"]):
        if not isinstance(entry, dict):
            raise SceneFileError(f"{source}: bodies[{i}] must be an object, got {entry!r}")
    return doc


def load_scene_file(path: str | Path) -> Callable[[World], None]:
    """Read and check the JSON scene at ``path``; returns a scene builder ``build(world)``.

    The file is built once into a scratch world here, so that every error (a missing file, bad JSON, an
    unknown shape or key, a bad number) raises ``SceneFileError`` now, naming the file and the entry."""
    p = Path(path)
    source = str(p)
    try:
        text = p.read_text(encoding="utf-8")
    except OSError as exc:
        raise SceneFileError(f"cannot read scene file {source}: {exc.strerror or exc}") from None
    try:
        doc = json.loads(text)
    except json.JSONDecodeError as exc:
        raise SceneFileError(f"{source}: not valid JSON: {exc.msg} at line {exc.lineno}, "
                             f"column {exc.colno}") from None
    doc = _check_document(doc, source)
    _apply(doc, World(), source)

    def build(world: World) -> None:
        _apply(doc, world, source)

    build.__name__ = p.stem
    build.__doc__ = doc.get("description", f"scene file {source}")
    return build


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
        entry.update(shape="hull", points=(shape.vertices + shape.center).tolist())
    entry.update(position=body.position.tolist(), orientation=body.orientation.tolist(),
                 mass=0.0 if body.static else body.mass, restitution=body.restitution,
                 friction=body.friction, velocity=body.linear_velocity.tolist(),
                 angular_velocity=body.angular_velocity.tolist())
    return entry


def save_scene_file(world: World, path: str | Path) -> None:
    """Write every body of ``world`` and its settings to ``path`` in the format ``load_scene_file``
    reads; ``OSError`` if the file cannot be written."""
    settings = {"gravity": np.asarray(world.gravity, dtype=float).tolist(), "substeps": world.substeps,
                "iterations": world.iterations, "broadphase": world.broadphase,
                "response": world.response, "ccd": bool(world.ccd), "sleeping": bool(world.sleeping),
                "restitution_rule": world.restitution_rule}
    doc = {"world": settings, "bodies": [_body_entry(b) for b in world.bodies]}
    Path(path).write_text(json.dumps(doc, indent=1) + "\n", encoding="utf-8")
