"""Collision shapes and their mass properties.

A shape is an immutable description in its own local frame (y is up). ``World.add_body`` copies what it
needs into the body arrays; the kernels never see these objects. All shapes are convex, and every local
frame has its origin at the shape's centre of mass, so that the solver can treat a body's position as
its centre of mass (a ``ConvexHull`` remembers where that centre was among the points it was given).
"""

from __future__ import annotations

import math

import numpy as np

from .core.layout import BOX, CAPSULE, HULL, SPHERE
from .core.records import HullArrays
from .hull import HullData, build_hull, hull_mass_properties
from .linalg3 import dot, norm
from .validate import is_number, length, vec
from .validate import points as validate_points


class Shape:
    """Base of the four shape kinds; ``kind`` is one of ``core.layout``'s constants."""

    kind: int = -1

    def params(self) -> tuple[float, float, float, float]:
        """The four floats stored in the body's ``params`` row (hull id filled in by the world)."""
        raise NotImplementedError

    def inertia(self, mass: float) -> np.ndarray:
        """Inertia tensor (3×3, body frame, about the centre of mass) of a solid of this shape."""
        raise NotImplementedError

    def bounding_radius(self) -> float:
        """Radius of a sphere about the centre of mass that holds the whole shape."""
        raise NotImplementedError


class Sphere(Shape):
    """A solid ball of ``radius``."""

    kind = SPHERE

    def __init__(self, radius: float) -> None:
        self.radius = length("radius", radius)

    def params(self) -> tuple[float, float, float, float]:
        return (self.radius, 0.0, 0.0, 0.0)

    def inertia(self, mass: float) -> np.ndarray:
        """Solid sphere: I = 2/5·m·r² about every axis."""
        return np.eye(3) * (0.4 * mass * self.radius**2)

    def bounding_radius(self) -> float:
        return self.radius

    def volume(self) -> float:
        return 4.0 / 3.0 * math.pi * self.radius**3

    def __repr__(self) -> str:
        return f"Sphere({self.radius:g})"


class Box(Shape):
    """An oriented box with ``half_extents`` (hx, hy, hz) along its local axes."""

    kind = BOX

    def __init__(self, half_extents) -> None:
        # a single number means a cube
        h = vec("half_extents", [half_extents] * 3 if is_number(half_extents) else half_extents)
        for axis, x in zip("xyz", h, strict=True):
            length(f"half_extents.{axis}", float(x))
        self.half_extents = h
        self.half_extents.setflags(write=False)

    def params(self) -> tuple[float, float, float, float]:
        hx, hy, hz = self.half_extents
        return (float(hx), float(hy), float(hz), 0.0)

    def inertia(self, mass: float) -> np.ndarray:
        """Solid cuboid: I_x = m/3·(hy² + hz²), and so on (full sides 2h)."""
        hx, hy, hz = self.half_extents
        return np.diag([mass / 3.0 * (hy * hy + hz * hz), mass / 3.0 * (hx * hx + hz * hz),
                        mass / 3.0 * (hx * hx + hy * hy)])

    def bounding_radius(self) -> float:
        return norm(self.half_extents)

    def volume(self) -> float:
        return float(8.0 * np.prod(self.half_extents))

    def __repr__(self) -> str:
        return f"Box({tuple(round(float(x), 6) for x in self.half_extents)})"


class Capsule(Shape):
    """A cylinder of ``radius`` and half height ``half_height`` along local y, capped by two hemispheres.

    The core segment runs from (0, -half_height, 0) to (0, half_height, 0)."""

    kind = CAPSULE

    def __init__(self, radius: float, half_height: float) -> None:
        self.radius = length("radius", radius)
        self.half_height = length("half_height", half_height)

    def params(self) -> tuple[float, float, float, float]:
        return (self.radius, self.half_height, 0.0, 0.0)

    def inertia(self, mass: float) -> np.ndarray:
        """Cylinder plus two hemispheres, each part's inertia shifted by the parallel-axis theorem.

        Masses split by volume; a hemisphere's centroid sits 3r/8 from its flat face, so about its own
        centroid I_perp = (83/320)·m·r², shifted to the capsule's centre by (h + 3r/8)."""
        r, h = self.radius, self.half_height
        v_cyl = math.pi * r * r * 2.0 * h
        v_caps = 4.0 / 3.0 * math.pi * r**3
        m_cyl = mass * v_cyl / (v_cyl + v_caps)
        m_hemi = 0.5 * mass * v_caps / (v_cyl + v_caps)
        i_axis = 0.5 * m_cyl * r * r + 2.0 * (0.4 * m_hemi * r * r)
        i_cyl_perp = m_cyl * (3.0 * r * r + 4.0 * h * h) / 12.0
        d = h + 3.0 * r / 8.0
        i_hemi_perp = 83.0 / 320.0 * m_hemi * r * r + m_hemi * d * d
        i_perp = i_cyl_perp + 2.0 * i_hemi_perp
        return np.diag([i_perp, i_axis, i_perp])

    def bounding_radius(self) -> float:
        return self.radius + self.half_height

    def volume(self) -> float:
        return math.pi * self.radius**2 * 2.0 * self.half_height + 4.0 / 3.0 * math.pi * self.radius**3

    def __repr__(self) -> str:
        return f"Capsule({self.radius:g}, {self.half_height:g})"


class ConvexHull(Shape):
    """The convex hull of ``points`` (at least 4 that are not coplanar), with faces and adjacency kept
    for clipping.

    The hull is re-centred on its centre of mass: ``vertices`` are relative to it, and ``center`` is where
    that centre lies in the frame of the given ``points`` (kept as given). A body or ``collide`` call placed
    at ``position`` puts the points' frame origin there, exactly as for the other shapes."""

    kind = HULL

    def __init__(self, points) -> None:
        pts = validate_points("points", points)  # names the first bad point, ragged lists included
        self.points = pts.copy()  # as given, so that a saved hull is rebuilt exactly (scene files)
        self.points.setflags(write=False)
        data: HullData = build_hull(pts)
        self.data = data
        volume, center, inertia_unit = hull_mass_properties(data.vertices, data.faces)
        self.center = center
        self._inertia_per_kg = inertia_unit
        self._volume = volume
        self.vertices = data.vertices - center
        self.vertices.setflags(write=False)
        self.faces = data.faces
        self.face_normals = data.face_normals
        self.face_offsets = data.face_offsets - dot(data.face_normals, center)
        self.edges = data.edges
        self.edge_faces = data.edge_faces

    def params(self) -> tuple[float, float, float, float]:
        return (0.0, 0.0, 0.0, 0.0)

    def inertia(self, mass: float) -> np.ndarray:
        """Solid polyhedron of uniform density (tetrahedron decomposition, see ``hull.py``)."""
        return self._inertia_per_kg * mass

    def bounding_radius(self) -> float:
        return float(np.sqrt((self.vertices**2).sum(axis=1)).max())

    def volume(self) -> float:
        return self._volume

    def __repr__(self) -> str:
        return f"ConvexHull({len(self.vertices)} vertices, {len(self.faces)} faces)"


class HullTable:
    """All hull shapes known to a world, packed into the flat arrays the kernels read (``core.layout``).

    A hull shape object is registered once, however many bodies use it; ``arrays()`` rebuilds the packed
    tuple only when a new hull has been added since the last call."""

    def __init__(self) -> None:
        self.shapes: list[ConvexHull] = []
        self._ids: dict[int, int] = {}
        self._packed: tuple | None = None

    def register(self, hull: ConvexHull) -> int:
        """The hull id of ``hull``, adding it to the table if new."""
        key = id(hull)
        if key not in self._ids:
            self._ids[key] = len(self.shapes)
            self.shapes.append(hull)
            self._packed = None
        return self._ids[key]

    def hull_list(self) -> tuple[ConvexHull, ...]:
        """The registered hulls in id order (shared references: shapes are immutable), for a snapshot."""
        return tuple(self.shapes)

    def set_hull_list(self, hulls: tuple[ConvexHull, ...]) -> None:
        """Make ``hulls`` (from ``hull_list``) the table, ids and all; the packed arrays are rebuilt only
        when the table changes."""
        if len(hulls) == len(self.shapes) and all(a is b for a, b in zip(hulls, self.shapes, strict=True)):
            return
        self.shapes = list(hulls)
        self._ids = {id(h): k for k, h in enumerate(hulls)}
        self._packed = None

    def arrays(self) -> HullArrays:
        """The packed table ``H`` of every hull (``core.records.HullArrays``, layout in ``core.layout``)."""
        if self._packed is None:
            self._packed = pack_hulls(self.shapes)
        return self._packed


def pack_hulls(hulls: list[ConvexHull]) -> HullArrays:
    """Concatenate the hulls' vertices, faces and edges into the flat arrays of ``core.layout``.

    With no hulls, returns arrays holding one dummy entry so that numba always sees the same types."""
    vert_start, vert_count, verts = [], [], []
    face_start, face_count, face_normal, face_offset = [], [], [], []
    face_vstart, face_vcount, face_verts = [], [], []
    edge_start, edge_count, edges, edge_faces = [], [], [], []
    nv = nf = ne = nfv = 0
    for h in hulls:
        vert_start.append(nv)
        vert_count.append(len(h.vertices))
        verts.append(h.vertices)
        face_start.append(nf)
        face_count.append(len(h.faces))
        face_normal.append(h.face_normals)
        face_offset.append(h.face_offsets)
        for f in h.faces:
            face_vstart.append(nfv)
            face_vcount.append(len(f))
            face_verts.append(np.asarray(f, dtype=np.int64) + nv)
            nfv += len(f)
        edge_start.append(ne)
        edge_count.append(len(h.edges))
        edges.append(np.asarray(h.edges, dtype=np.int64) + nv)
        edge_faces.append(np.asarray(h.edge_faces, dtype=np.int64) + nf)
        nv += len(h.vertices)
        nf += len(h.faces)
        ne += len(h.edges)
    if not hulls:
        i1 = np.zeros(1, np.int64)
        return HullArrays(i1, i1.copy(), np.zeros((1, 3)), i1.copy(), i1.copy(), np.zeros((1, 3)),
                          np.zeros(1), i1.copy(), i1.copy(), i1.copy(), i1.copy(), i1.copy(),
                          np.zeros((1, 2), np.int64), np.zeros((1, 2), np.int64))

    def ints(x):
        return np.asarray(x, dtype=np.int64)

    return HullArrays(ints(vert_start), ints(vert_count), np.ascontiguousarray(np.concatenate(verts)),
                      ints(face_start), ints(face_count), np.ascontiguousarray(np.concatenate(face_normal)),
                      np.ascontiguousarray(np.concatenate(face_offset)), ints(face_vstart), ints(face_vcount),
                      np.concatenate(face_verts), ints(edge_start), ints(edge_count),
                      np.ascontiguousarray(np.concatenate(edges)),
                      np.ascontiguousarray(np.concatenate(edge_faces)))
