"""Triangle meshes of the shape kinds, built once with numpy and shared by every body of a kind.

Every mesh has the same vertex layout, ``VERTEX_FORMAT``: a position ``in_pos``, a unit normal
``in_normal`` and a float ``in_side``. The vertex shader turns it into the body's local frame with the
per-instance ``scale = (sx, sy, sz, half_height)``:

    local = in_pos * scale.xyz + (0, in_side * half_height, 0)

- sphere: the unit sphere (smooth normals), scale = (r, r, r, 0);
- box: the cube [-1, 1]³ (flat normals), scale = half extents;
- capsule: a unit sphere cut at its equator whose upper half has ``in_side = +1`` and lower half
  ``-1``, joined by a cylinder band: scale = (r, r, r, hh) moves the caps apart without squashing them,
  so one mesh serves every radius and half height;
- hull: the hull's faces fan-triangulated, with flat face normals, scale = (1, 1, 1, 0).

Triangles are counter-clockwise seen from outside (front faces for back-face culling).
"""

from __future__ import annotations

import numpy as np

VERTEX_FORMAT = "3f 3f 1f"
VERTEX_ATTRIBUTES = ("in_pos", "in_normal", "in_side")


class MeshData:
    """Vertices ``(V, 7)`` float32 in ``VERTEX_FORMAT`` and triangle indices ``(T·3,)`` int32."""

    def __init__(self, vertices: np.ndarray, indices: np.ndarray) -> None:
        self.vertices = np.ascontiguousarray(vertices, dtype=np.float32)
        self.indices = np.ascontiguousarray(indices, dtype=np.int32).reshape(-1)


def _outward(pos: np.ndarray, normal: np.ndarray, tris: np.ndarray) -> np.ndarray:
    """Triangles ``tris`` (T, 3) reordered so that each is counter-clockwise about its vertices' mean
    normal (degenerate triangles are left as they are)."""
    a, b, c = pos[tris[:, 0]], pos[tris[:, 1]], pos[tris[:, 2]]
    face = np.cross(b - a, c - a)
    n = normal[tris].sum(axis=1)
    flip = np.einsum("ij,ij->i", face, n) < 0.0
    out = tris.copy()
    out[flip, 1], out[flip, 2] = tris[flip, 2], tris[flip, 1]
    return out


def _grid_mesh(lat: np.ndarray, side: np.ndarray, segments: int) -> MeshData:
    """Rows of latitude ``lat`` (radians, top to bottom) of ``segments + 1`` vertices each (the seam is
    duplicated), row ``i`` carrying ``in_side = side[i]``; consecutive rows joined by quads."""
    lon = np.linspace(0.0, 2.0 * np.pi, segments + 1)
    la, lo = np.meshgrid(lat, lon, indexing="ij")
    n = np.stack([np.cos(la) * np.sin(lo), np.sin(la), np.cos(la) * np.cos(lo)], axis=-1).reshape(-1, 3)
    s = np.repeat(side, segments + 1)[:, None]
    rows, cols = len(lat) - 1, segments
    i, j = np.meshgrid(np.arange(rows), np.arange(cols), indexing="ij")
    v00 = (i * (segments + 1) + j).ravel()
    v01, v10 = v00 + 1, v00 + segments + 1
    v11 = v10 + 1
    tris = np.concatenate([np.stack([v00, v10, v11], 1), np.stack([v00, v11, v01], 1)])
    # the outward test needs the actual capsule geometry, where the band between the equators has area
    geometric = n + np.array([0.0, 1.0, 0.0]) * s
    tris = _outward(geometric, n, tris)
    return MeshData(np.hstack([n, n, s]), tris)


def sphere_mesh(segments: int = 40, rings: int = 20) -> MeshData:
    """The unit sphere as a latitude/longitude grid with smooth normals."""
    lat = np.linspace(0.5 * np.pi, -0.5 * np.pi, rings + 1)
    return _grid_mesh(lat, np.zeros(rings + 1), segments)


def capsule_mesh(segments: int = 32, rings: int = 16) -> MeshData:
    """Two unit hemispheres with ``in_side`` ±1 and the equator row duplicated, so that the band
    between the two copies becomes the capsule's cylinder once the shader moves the halves apart."""
    half = rings // 2
    top = np.linspace(0.5 * np.pi, 0.0, half + 1)
    lat = np.concatenate([top, -top[::-1]])
    side = np.concatenate([np.ones(half + 1), -np.ones(half + 1)])
    return _grid_mesh(lat, side, segments)


def box_mesh() -> MeshData:
    """The cube [-1, 1]³: 6 faces of 4 vertices each with flat normals."""
    verts, tris = [], []
    for axis in range(3):
        for sign in (-1.0, 1.0):
            n = np.zeros(3)
            n[axis] = sign
            u, v = np.zeros(3), np.zeros(3)
            u[(axis + 1) % 3], v[(axis + 2) % 3] = 1.0, 1.0
            base = len(verts)
            for du, dv in ((-1, -1), (1, -1), (1, 1), (-1, 1)):
                verts.append(np.concatenate([n + du * u + dv * v, n, [0.0]]))
            tris += [(base, base + 1, base + 2), (base, base + 2, base + 3)]
    v = np.array(verts)
    return MeshData(v, _outward(v[:, :3], v[:, 3:6], np.array(tris)))


def hull_mesh(vertices: np.ndarray, faces, face_normals: np.ndarray) -> MeshData:
    """A convex hull's faces (vertex index lists, counter-clockwise from outside) fan-triangulated,
    each face with its own copies of its vertices so that its normal is flat."""
    verts, tris = [], []
    for f, normal in zip(faces, face_normals, strict=True):
        idx = np.asarray(f, dtype=np.int64)
        base = sum(len(v) for v in verts)
        k = len(idx)
        verts.append(np.hstack([vertices[idx], np.tile(normal, (k, 1)), np.zeros((k, 1))]))
        fan = np.arange(1, k - 1)
        tris.append(np.stack([np.full(k - 2, base), base + fan, base + fan + 1], axis=1))
    v = np.concatenate(verts)
    return MeshData(v, _outward(v[:, :3], v[:, 3:6], np.concatenate(tris)))
