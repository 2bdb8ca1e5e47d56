"""Contact between two shapes placed anywhere, outside any world: the narrow phase as a function.

>>> import numpy as np
>>> from sandbox.engine.shapes import Box, Sphere
>>> m = collide(Box(0.5), (0, 0, 0), (0, 0, 0, 1), Sphere(0.5), (0, 0.9, 0), (0, 0, 0, 1))
>>> np.round(m.normal, 6).tolist(), np.round(m.depths, 6).tolist()
([0.0, 1.0, 0.0], [0.1])
"""

from __future__ import annotations

from dataclasses import dataclass

import numpy as np

from .core.layout import HULL, MAX_POINTS
from .core.narrow_trace import no_trace
from .core.narrowphase import collide_one
from .core.vecmath import quat_rotate
from .shapes import ConvexHull, Shape, pack_hulls
from .validate import unit_quaternion, vec


@dataclass(frozen=True)
class Manifold:
    """A contact between bodies (or shapes) A and B: unit ``normal`` (3,) from A to B, ``points_a`` and
    ``points_b`` (k, 3) world points on A and on B (1 ≤ k ≤ 4), ``depths`` (k,) with
    ``depths[i] = dot(points_a[i] - points_b[i], normal)``, positive when overlapping. ``body_a``,
    ``body_b`` and ``impulses`` (k,) (N·s) are filled in for the manifolds of a world's step."""

    normal: np.ndarray
    points_a: np.ndarray
    points_b: np.ndarray
    depths: np.ndarray
    body_a: object = None
    body_b: object = None
    impulses: np.ndarray | None = None


def _placed(name: str, shape: object, pos: object, quat: object) -> tuple[np.ndarray, np.ndarray]:
    """Validated centre of mass and orientation of ``shape`` placed with its frame origin at ``pos``."""
    if not isinstance(shape, Shape) or shape.kind < 0:
        raise ValueError(f"{name} must be a Sphere, Box, Capsule or ConvexHull, got {shape!r}")
    p = vec(f"pos_{name[-1]}", pos)
    q = unit_quaternion(f"quat_{name[-1]}", quat)
    if isinstance(shape, ConvexHull):
        p = p + np.array(quat_rotate(tuple(q), tuple(shape.center)))
    return p, q


def collide(shape_a: Shape, pos_a, quat_a, shape_b: Shape, pos_b, quat_b) -> Manifold | None:
    """The contact manifold of ``shape_a`` placed at ``pos_a`` with orientation ``quat_a`` (x, y, z, w)
    and ``shape_b`` likewise, or None when they do not overlap.

    ``pos`` is the origin of the shape's frame (for a ``ConvexHull``, of the points it was built from).
    The normal points from A to B; only points with positive depth are kept. Runs the same kernels as a
    world's narrow phase (``core.narrowphase.collide_one``), with zero margin."""
    pa, qa = _placed("shape_a", shape_a, pos_a, quat_a)
    pb, qb = _placed("shape_b", shape_b, pos_b, quat_b)
    hulls = list({id(s): s for s in (shape_a, shape_b) if isinstance(s, ConvexHull)}.values())
    table = pack_hulls(hulls)
    ids = {id(h): k for k, h in enumerate(hulls)}

    def params(shape: Shape) -> np.ndarray:
        prm = np.array(shape.params(), dtype=np.float64)
        if shape.kind == HULL:
            prm[0] = ids[id(shape)]
        return prm

    normal = np.zeros(3)
    pts_a = np.zeros((MAX_POINTS, 3))
    pts_b = np.zeros((MAX_POINTS, 3))
    depths = np.zeros(MAX_POINTS)
    k = collide_one(shape_a.kind, tuple(pa), tuple(qa), params(shape_a), shape_b.kind, tuple(pb),
                    tuple(qb), params(shape_b), table, 0.0, normal, pts_a, pts_b, depths, no_trace())
    keep = depths[:k] > 0.0
    if not keep.any():
        return None
    return Manifold(normal=normal, points_a=pts_a[:k][keep], points_b=pts_b[:k][keep],
                    depths=depths[:k][keep])
