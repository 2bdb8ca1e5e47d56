"""Adding bodies from the app, through the public ``World`` API only: drop shapes, build a tower, a wall
or a pile, shoot a projectile, clear the dynamic bodies.

Every function takes the material and size from a ``SpawnSettings`` and returns the bodies it made.
"""

from __future__ import annotations

import math
from dataclasses import dataclass
from functools import lru_cache

import numpy as np

from ..engine import Box, Capsule, ConvexHull, Sphere, World
from ..engine.bodies import Body
from ..engine.shapes import Shape
from ..engine.validate import positive_float, vec

SHAPES = ("sphere", "box", "capsule", "hull", "mixed")
"""Spawn shape choices; "mixed" cycles through the four kinds."""


@dataclass
class SpawnSettings:
    """What the Spawn panel makes: ``size`` is the radius of a sphere, the half extent of a cube, the
    radius of a capsule (half height = size) and the circumradius of a hull."""

    shape: str = "box"
    size: float = 0.4
    mass: float = 1.0
    restitution: float = 0.2
    friction: float = 0.6
    count: int = 1
    tower_height: int = 10
    wall_width: int = 8
    wall_height: int = 6
    pile_count: int = 40
    shot_speed: float = 30.0


@lru_cache(maxsize=32)
def _gem(size: float) -> ConvexHull:
    """A hull shaped like a cut gem: two offset rings of seven points, a tip above and below. One
    object per size, so that a world's hull table keeps one entry however many are spawned."""
    pts = [(0.0, 1.0, 0.0), (0.0, -0.8, 0.0)]
    for k in range(7):
        a = 2.0 * math.pi * k / 7.0
        pts.append((math.cos(a), 0.25, math.sin(a)))
        pts.append((0.8 * math.cos(a + math.pi / 7.0), -0.3, 0.8 * math.sin(a + math.pi / 7.0)))
    return ConvexHull(np.array(pts) * size)


def make_shape(kind: str, size: float, index: int = 0) -> Shape:
    """A shape of ``kind`` (one of ``SHAPES``) and characteristic ``size`` metres; for "mixed", the
    kind is picked by ``index``."""
    s = positive_float("size", size)
    if kind == "mixed":
        kind = SHAPES[index % 4]
    if kind == "sphere":
        return Sphere(s)
    if kind == "box":
        return Box((s, s, s))
    if kind == "capsule":
        return Capsule(0.6 * s, s)
    if kind == "hull":
        return _gem(s)
    raise ValueError(f"shape must be one of {', '.join(SHAPES)}, got {kind!r}")


def _add(world: World, settings: SpawnSettings, shape: Shape, position, orientation=(0.0, 0.0, 0.0, 1.0),
         velocity=(0.0, 0.0, 0.0)) -> Body:
    return world.add_body(shape, position=position, orientation=orientation, mass=settings.mass,
                          restitution=settings.restitution, friction=settings.friction, velocity=velocity)


def _yaw_quat(angle: float) -> tuple[float, float, float, float]:
    return (0.0, math.sin(0.5 * angle), 0.0, math.cos(0.5 * angle))


def drop(world: World, settings: SpawnSettings, point) -> list[Body]:
    """``settings.count`` bodies in a column above ``point``, the lowest one clear of it by half a size,
    each turned a little so that they tumble."""
    p = vec("point", point)
    gap = 2.4 * settings.size + 0.05
    bodies = []
    for k in range(settings.count):
        shape = make_shape(settings.shape, settings.size, k)
        q = (math.sin(0.15 * (k + 1)), 0.0, math.sin(0.1 * (k + 1)), 1.0)
        pos = p + np.array([0.0, 1.5 * settings.size + 0.5 + k * gap, 0.0])
        bodies.append(_add(world, settings, shape, pos, np.array(q) / np.linalg.norm(q)))
    return bodies


def tower(world: World, settings: SpawnSettings, base) -> list[Body]:
    """A column of ``settings.tower_height`` cubes of half extent ``settings.size`` standing on
    ``base``, touching each other."""
    b = vec("base", base)
    s = settings.size
    shape = Box((s, s, s))
    return [_add(world, settings, shape, b + np.array([0.0, s + 2.0 * s * k, 0.0]))
            for k in range(settings.tower_height)]


def wall(world: World, settings: SpawnSettings, base) -> list[Body]:
    """A running-bond brick wall, ``settings.wall_width`` bricks wide and ``settings.wall_height``
    rows high, centred on ``base`` and facing the z axis; bricks are 4·size × 2·size × 2·size."""
    b = vec("base", base)
    s = settings.size
    brick = Box((2.0 * s, s, s))
    half = Box((s, s, s))
    bodies = []
    width = settings.wall_width
    x0 = -2.0 * s * width
    for row in range(settings.wall_height):
        y = s + 2.0 * s * row
        if row % 2 == 0:
            for k in range(width):
                bodies.append(_add(world, settings, brick, b + (x0 + 2.0 * s + 4.0 * s * k, y, 0.0)))
        else:
            # odd rows start and end with half bricks, so that joints do not line up
            bodies.append(_add(world, settings, half, b + (x0 + s, y, 0.0)))
            for k in range(width - 1):
                bodies.append(_add(world, settings, brick, b + (x0 + 4.0 * s + 4.0 * s * k, y, 0.0)))
            bodies.append(_add(world, settings, half, b + (-x0 - s, y, 0.0)))
    return bodies


def pile(world: World, settings: SpawnSettings, centre) -> list[Body]:
    """``settings.pile_count`` bodies of the spawn shape dropped in a loose jittered lattice above
    ``centre``, to fall into a heap (a fixed seed: the same pile each time)."""
    c = vec("centre", centre)
    rng = np.random.default_rng(7)
    n = settings.pile_count
    side = max(1, math.ceil(math.sqrt(n / 3.0)))
    spacing = 2.6 * settings.size + 0.1
    bodies = []
    for k in range(n):
        i, j, layer = k % side, (k // side) % side, k // (side * side)
        offset = np.array([(i - 0.5 * (side - 1)) * spacing, 1.5 * settings.size + 1.0 + layer * spacing,
                           (j - 0.5 * (side - 1)) * spacing])
        offset[[0, 2]] += rng.uniform(-0.15, 0.15, 2) * settings.size
        axis = rng.normal(size=3)
        axis /= np.linalg.norm(axis)
        angle = rng.uniform(0.0, math.pi)
        q = np.append(axis * math.sin(0.5 * angle), math.cos(0.5 * angle))
        bodies.append(_add(world, settings, make_shape(settings.shape, settings.size, k), c + offset, q))
    return bodies


def shoot(world: World, settings: SpawnSettings, origin, direction) -> Body:
    """One body of the spawn shape (a sphere for "mixed") launched from ``origin`` along ``direction``
    at ``settings.shot_speed`` m/s."""
    o = vec("origin", origin)
    d = vec("direction", direction)
    norm = float(np.linalg.norm(d))
    if norm < 1e-12:
        raise ValueError(f"direction must be non-zero, got {d.tolist()}")
    d = d / norm
    kind = "sphere" if settings.shape == "mixed" else settings.shape
    shape = make_shape(kind, settings.size)
    yaw = math.atan2(d[0], d[2])
    return _add(world, settings, shape, o, _yaw_quat(yaw), velocity=d * positive_float("shot speed",
                                                                                       settings.shot_speed))


def clear_dynamic(world: World) -> int:
    """Remove every dynamic body of ``world`` (static ones stay); returns how many were removed."""
    doomed = [b for b in world.bodies if not b.static]
    for b in doomed:
        world.remove_body(b)
    return len(doomed)
