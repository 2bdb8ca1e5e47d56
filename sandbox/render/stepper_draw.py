"""Drawing helpers of the pipeline stepper (``sandbox/ui/stepper.py``), beyond what a ``Batch`` draws.

``body_outlines`` gives the wire outline of bodies placed at any poses (the "ghosts" of where the bodies
were before the step, drawn over the bodies where they are after it): three great circles for a sphere,
the twelve edges of a box, the two rims, four side lines and four half circles of a capsule, and the edges
of a hull. Outlines are built per shape kind from one template of unit segments, scaled as the shape
meshes are (``meshes.py``: ``local = p·(sx, sy, sz) + side·half_height·ŷ``) and placed with numpy, with
no Python loop over bodies (only over the distinct hulls).

``fan_vectors`` turns a trace's friction impulses, given along each contact point's two tangents, into
world vectors.
"""

from __future__ import annotations

import numpy as np

from ..engine import BOX, CAPSULE, HULL, SPHERE
from ..ledger import _rotate as rotate_rows

CIRCLE_SEGMENTS = 24

_CUBE_EDGES = np.array([(0, 1), (2, 3), (4, 5), (6, 7), (0, 2), (1, 3), (4, 6), (5, 7),
                        (0, 4), (1, 5), (2, 6), (3, 7)])
_CUBE_CORNERS = np.array([[1.0 if c >> k & 1 else -1.0 for k in range(3)] for c in range(8)])


def _arc(u: int, v: int, start: float, stop: float, count: int) -> np.ndarray:
    """``count`` segments ((count, 2, 3)) of the unit circle in the plane of axes ``u`` and ``v``, from
    angle ``start`` to ``stop`` (radians)."""
    t = np.linspace(start, stop, count + 1)
    p = np.zeros((count + 1, 3))
    p[:, u], p[:, v] = np.cos(t), np.sin(t)
    return np.stack([p[:-1], p[1:]], axis=1)


def _templates() -> dict[int, tuple[np.ndarray, np.ndarray]]:
    """Per shape kind (hulls aside): unit segments (s, 2, 3) and each end's ``side`` (s, 2), the capsule
    half height's multiple added along y."""
    full = 2.0 * np.pi
    half = CIRCLE_SEGMENTS // 2
    sphere = np.concatenate([_arc(0, 1, 0.0, full, CIRCLE_SEGMENTS), _arc(1, 2, 0.0, full, CIRCLE_SEGMENTS),
                             _arc(2, 0, 0.0, full, CIRCLE_SEGMENTS)])
    box = _CUBE_CORNERS[_CUBE_EDGES]
    rims = [_arc(2, 0, 0.0, full, CIRCLE_SEGMENTS)] * 2
    sides = np.array([[(x, 0.0, z), (x, 0.0, z)] for x, z in ((1, 0), (-1, 0), (0, 1), (0, -1))])
    caps = [_arc(0, 1, 0.0, np.pi, half), _arc(2, 1, 0.0, np.pi, half),  # upper caps bulge up (+y)
            _arc(0, 1, np.pi, full, half), _arc(2, 1, np.pi, full, half)]
    capsule = np.concatenate([*rims, sides, *caps])
    side = np.concatenate([np.ones((CIRCLE_SEGMENTS, 2)), -np.ones((CIRCLE_SEGMENTS, 2)),
                           np.tile([1.0, -1.0], (4, 1)), np.ones((2 * half, 2)), -np.ones((2 * half, 2))])
    return {SPHERE: (sphere, np.zeros(sphere.shape[:2])), BOX: (box, np.zeros(box.shape[:2])),
            CAPSULE: (capsule, side)}


TEMPLATES = _templates()


def body_outlines(world, rows: np.ndarray, pos: np.ndarray,
                  quat: np.ndarray) -> tuple[np.ndarray, np.ndarray]:
    """The wire outlines of the bodies ``rows`` of ``world`` placed at ``pos[rows]`` (centres of mass) and
    ``quat[rows]``: segment start and end points, (m, 3) each."""
    d = world.data
    rows = np.asarray(rows, dtype=np.int64)
    starts, ends = [], []
    kind = d.kind[rows]
    for k, (template, side) in TEMPLATES.items():
        mine = rows[kind == k]
        if len(mine) == 0:
            continue
        prm = d.params[mine]
        scale = prm[:, 0:3] if k == BOX else np.repeat(prm[:, 0:1], 3, axis=1)
        hh = prm[:, 1] if k == CAPSULE else np.zeros(len(mine))
        local = template[None] * scale[:, None, None, :]
        local[..., 1] += side[None] * hh[:, None, None]
        starts_k, ends_k = _placed(local, pos[mine], quat[mine])
        starts.append(starts_k)
        ends.append(ends_k)
    hulls = rows[kind == HULL]
    if len(hulls):
        ids = d.params[hulls, 0].astype(np.int64)
        for hull_id in np.unique(ids):
            shape = world.hulls.shapes[int(hull_id)]
            mine = hulls[ids == hull_id]
            edges = shape.vertices[np.asarray(shape.edges)]
            local = np.broadcast_to(edges, (len(mine), *edges.shape))
            starts_k, ends_k = _placed(np.array(local), pos[mine], quat[mine])
            starts.append(starts_k)
            ends.append(ends_k)
    if not starts:
        return np.zeros((0, 3)), np.zeros((0, 3))
    return np.concatenate(starts), np.concatenate(ends)


def _placed(local: np.ndarray, pos: np.ndarray, quat: np.ndarray) -> tuple[np.ndarray, np.ndarray]:
    """Segments ``local`` (k, s, 2, 3) in each of k bodies' frames, rotated by ``quat`` (k, 4) and moved
    to ``pos`` (k, 3): their (k·s, 3) start and end points in the world."""
    k, s = local.shape[:2]
    q = np.repeat(quat, s * 2, axis=0)
    world = rotate_rows(q, local.reshape(-1, 3)).reshape(k, s, 2, 3) + pos[:, None, None, :]
    return world[:, :, 0].reshape(-1, 3), world[:, :, 1].reshape(-1, 3)


def tangent_basis(normal: np.ndarray) -> tuple[np.ndarray, np.ndarray]:
    """Two unit tangents per unit normal ((k, 3) each) making ``(t1, t2, n)`` right-handed: the basis the
    engine's solver gives each contact point (``tangent_basis`` of ``core/vecmath.py``, the same
    branch on the largest component; ``tests/test_stepper.py`` checks that the two agree), so that a
    trace's friction impulses, given along these tangents, can be drawn as world vectors."""
    n = np.asarray(normal, dtype=np.float64).reshape(-1, 3)
    t1 = np.where((np.abs(n[:, 0]) >= 0.57735)[:, None],
                  np.stack([n[:, 1], -n[:, 0], np.zeros(len(n))], axis=1),
                  np.stack([np.zeros(len(n)), n[:, 2], -n[:, 1]], axis=1))
    t1 /= np.maximum(np.linalg.norm(t1, axis=1, keepdims=True), 1e-300)
    return t1, np.cross(n, t1)


def fan_vectors(normal: np.ndarray, along: np.ndarray) -> np.ndarray:
    """World vectors (k, 3) of the tangential components ``along`` (k, 2) given in each point's tangent
    basis (``tangent_basis`` of its ``normal`` (k, 3))."""
    t1, t2 = tangent_basis(normal)
    along = np.asarray(along, dtype=np.float64).reshape(-1, 2)
    return along[:, 0:1] * t1 + along[:, 1:2] * t2
