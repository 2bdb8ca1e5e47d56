"""Convex hull construction and the mass properties of a solid polyhedron.

``build_hull`` runs once per shape, when a ``ConvexHull`` is created, so it is plain numpy and Python:
an incremental hull of triangles (each new point replaces the faces it can see by a fan of triangles to
their horizon; Barber, Dobkin and Huhdanpaa's quickhull paper, 1996, §3, describes the same step), then
coplanar triangles merged into polygonal faces, and vertices that are not corners dropped. The result
is what the collision kernels want: few faces, each a convex polygon, and the edge–face adjacency that
SAT's Gauss-map pruning uses.
"""

from __future__ import annotations

from dataclasses import dataclass

import numpy as np

from .linalg3 import dot, norm
from .validate import MIN_LENGTH
from .validate import points as validate_points


@dataclass(frozen=True)
class HullData:
    """A convex polyhedron: ``vertices`` (V, 3); ``faces`` one int array of vertex indices per face,
    counter-clockwise seen from outside; outward unit ``face_normals`` (F, 3) and ``face_offsets`` (F,)
    with n·x = d on the face; ``edges`` (E, 2) vertex index pairs, each edge once; ``edge_faces`` (E, 2)
    the two faces adjacent to each edge."""

    vertices: np.ndarray
    faces: list[np.ndarray]
    face_normals: np.ndarray
    face_offsets: np.ndarray
    edges: np.ndarray
    edge_faces: np.ndarray


_DEGENERATE = "points must contain at least 4 non-coplanar points (fewer than 4 non-coplanar points given)"


def _check_points(points: object) -> np.ndarray:
    """``points`` as an (n, 3) float64 array of at least 4 finite points; ValueError naming the first bad
    point (a ragged list included) otherwise."""
    pts = validate_points("points", points)
    if len(pts) < 4:
        raise ValueError(f"points must hold at least 4 points, got {len(pts)}")
    # like every shape's dimensions, the hull's extent is at least MIN_LENGTH: far smaller clouds make
    # the tolerances, volume and inertia underflow (a 1e-110 m cube broke the construction itself)
    extent = float((pts.max(axis=0) - pts.min(axis=0)).max())
    if extent < MIN_LENGTH:
        raise ValueError(f"points must span at least {MIN_LENGTH:g} m (they all but coincide), "
                         f"got {extent!r}")
    return pts


def _initial_tetrahedron(pts: np.ndarray, eps: float) -> tuple[int, int, int, int]:
    """Four well-spread points: an extreme point, the farthest from it, the farthest from their line and
    the farthest from their plane. ValueError when they span no volume."""
    i0 = int(np.argmin(pts[:, 0]))
    d1 = np.linalg.norm(pts - pts[i0], axis=1)
    i1 = int(np.argmax(d1))
    if d1[i1] <= eps:
        raise ValueError(_DEGENERATE + ": all points coincide")
    u = (pts[i1] - pts[i0]) / d1[i1]
    rel = pts - pts[i0]
    d2 = np.linalg.norm(rel - np.outer(dot(rel, u), u), axis=1)
    i2 = int(np.argmax(d2))
    if d2[i2] <= eps:
        raise ValueError(_DEGENERATE + ": all points are collinear")
    n = np.cross(pts[i1] - pts[i0], pts[i2] - pts[i0])
    n /= norm(n)
    d3 = np.abs(dot(rel, n))
    i3 = int(np.argmax(d3))
    if d3[i3] <= eps:
        raise ValueError(_DEGENERATE + ": all points are coplanar")
    return i0, i1, i2, i3


class _TriangleHull:
    """The working triangle mesh of the incremental hull: faces with outward planes, and a map from each
    directed edge (a, b) to the face that holds it, so that (b, a) finds the neighbour across it."""

    def __init__(self, pts: np.ndarray) -> None:
        self.pts = pts
        cap = 2 * len(pts) + 8
        self.tris: list[tuple[int, int, int]] = []
        self.normals = np.zeros((cap, 3))
        self.offsets = np.full(cap, np.inf)  # dead faces: +inf offset, so never visible
        self.edge_face: dict[tuple[int, int], int] = {}

    def add(self, a: int, b: int, c: int) -> None:
        p = self.pts
        f = len(self.tris)
        if f == len(self.offsets):
            self.normals = np.concatenate([self.normals, np.zeros_like(self.normals)])
            self.offsets = np.concatenate([self.offsets, np.full(len(self.offsets), np.inf)])
        n = np.cross(p[b] - p[a], p[c] - p[a])
        n /= max(norm(n), 1e-300)
        self.tris.append((a, b, c))
        self.normals[f] = n
        self.offsets[f] = dot(n, p[a])
        for e in ((a, b), (b, c), (c, a)):
            self.edge_face[e] = f

    def remove(self, f: int) -> None:
        a, b, c = self.tris[f]
        self.offsets[f] = np.inf
        for e in ((a, b), (b, c), (c, a)):
            del self.edge_face[e]

    def insert(self, i: int, eps: float) -> None:
        """Add point ``i`` if it lies outside: flood the faces that see it from the one that sees it
        best, and replace them by triangles from their horizon edges to the point."""
        dist = dot(self.normals[: len(self.tris)], self.pts[i]) - self.offsets[: len(self.tris)]
        start = int(np.argmax(dist))
        if not dist[start] > eps:
            return
        visible = {start}
        stack = [start]
        horizon = []
        while stack:
            f = stack.pop()
            a, b, c = self.tris[f]
            for u, v in ((a, b), (b, c), (c, a)):
                g = self.edge_face[(v, u)]
                if g in visible:
                    continue
                if dist[g] > eps:
                    visible.add(g)
                    stack.append(g)
        for f in visible:
            a, b, c = self.tris[f]
            for u, v in ((a, b), (b, c), (c, a)):
                if self.edge_face[(v, u)] not in visible:
                    horizon.append((u, v))
        for f in visible:
            self.remove(f)
        for u, v in horizon:
            self.add(u, v, i)

    def live(self) -> list[int]:
        return [f for f in range(len(self.tris)) if np.isfinite(self.offsets[f])]


def _merge_coplanar(th: _TriangleHull, tol: float) -> list[list[int]]:
    """Polygons (vertex loops, CCW from outside) of the groups of adjacent triangles that lie in one
    plane, seeded from the largest triangles so that a group's plane is its best-conditioned one."""
    p = th.pts
    live = th.live()
    area = {f: norm(np.cross(p[th.tris[f][1]] - p[th.tris[f][0]],
                                       p[th.tris[f][2]] - p[th.tris[f][0]])) for f in live}
    group: dict[int, int] = {}
    loops = []
    for seed in sorted(live, key=lambda f: -area[f]):
        if seed in group:
            continue
        gid = len(loops)
        n, d = th.normals[seed], th.offsets[seed]
        group[seed] = gid
        members = [seed]
        stack = [seed]
        while stack:
            f = stack.pop()
            a, b, c = th.tris[f]
            for u, v in ((a, b), (b, c), (c, a)):
                g = th.edge_face[(v, u)]
                if g in group or th.normals[g] @ n <= 0.0:
                    continue
                if all(abs(p[w] @ n - d) <= tol for w in th.tris[g]):
                    group[g] = gid
                    members.append(g)
                    stack.append(g)
        nxt = {}
        for f in members:
            a, b, c = th.tris[f]
            for u, v in ((a, b), (b, c), (c, a)):
                if group.get(th.edge_face[(v, u)]) != gid:
                    nxt[u] = v
        start = next(iter(nxt))
        loop = [start]
        while nxt[loop[-1]] != start:
            loop.append(nxt[loop[-1]])
        loops.append(loop)
    return loops


def build_hull(points: np.ndarray) -> HullData:
    """The convex hull of ``points`` ((n, 3), n ≥ 4, not all coplanar) as polygonal faces.

    Incremental construction over triangles (see the module docstring), points taken farthest-first from
    the initial tetrahedron's centre so that interior points are rejected cheaply. Points within a
    tolerance of 1e-9 × the cloud's size of the current hull count as on it. Coplanar triangles are
    merged into one face (a box gives 6 quads), vertices that touch fewer than 3 faces (on an edge or in
    a face) are dropped. Edges are listed once: ``edges[e] = (a, b)`` runs a → b in the counter-clockwise
    loop of face ``edge_faces[e, 0]`` and b → a in that of ``edge_faces[e, 1]``.

    >>> h = build_hull(np.array([[x, y, z] for x in (0, 1) for y in (0, 1) for z in (0, 1)], float))
    >>> len(h.vertices), len(h.faces), len(h.edges)
    (8, 6, 12)
    """
    pts = _check_points(points)
    extent = float(np.max(pts.max(axis=0) - pts.min(axis=0)))
    eps = 1e-9 * max(extent, float(np.max(np.abs(pts))))
    # a cloud is degenerate when it is thinner than ten times the tolerance that merges coplanar faces
    # (100·eps below): thinner ones pass the insertion but collapse into a hull of 2 or 3 vertices
    tet = _initial_tetrahedron(pts, 1000.0 * eps)
    inner = pts[list(tet)].mean(axis=0)
    th = _TriangleHull(pts)
    for a, b, c in ((tet[0], tet[1], tet[2]), (tet[0], tet[1], tet[3]),
                    (tet[0], tet[2], tet[3]), (tet[1], tet[2], tet[3])):
        n = np.cross(pts[b] - pts[a], pts[c] - pts[a])
        if dot(n, inner - pts[a]) > 0.0:
            b, c = c, b
        th.add(a, b, c)
    order = np.argsort(-np.linalg.norm(pts - inner, axis=1), kind="stable")
    for i in order:
        if int(i) not in tet:
            th.insert(int(i), eps)

    loops = _merge_coplanar(th, 100.0 * eps)
    faces_of: dict[int, set[int]] = {}
    for f, loop in enumerate(loops):
        for v in loop:
            faces_of.setdefault(v, set()).add(f)
    corners = sorted(v for v, fs in faces_of.items() if len(fs) >= 3)
    new_index = {v: k for k, v in enumerate(corners)}
    vertices = pts[corners].copy()
    faces = [np.array([new_index[v] for v in loop if v in new_index], dtype=np.int64) for loop in loops]

    normals = np.empty((len(faces), 3))
    offsets = np.empty(len(faces))
    for f, face in enumerate(faces):
        # Newell's method: the polygon's area vector, robust for any (near-)planar loop.
        v = vertices[face]
        w = np.roll(v, -1, axis=0)
        n = np.array([np.sum((v[:, 1] - w[:, 1]) * (v[:, 2] + w[:, 2])),
                      np.sum((v[:, 2] - w[:, 2]) * (v[:, 0] + w[:, 0])),
                      np.sum((v[:, 0] - w[:, 0]) * (v[:, 1] + w[:, 1]))])
        n /= norm(n)
        normals[f] = n
        offsets[f] = np.max(dot(v, n))

    directed = {}
    for f, face in enumerate(faces):
        for a, b in zip(face, np.roll(face, -1), strict=True):
            directed[(int(a), int(b))] = f
    edges = []
    edge_faces = []
    for (a, b), f in directed.items():
        if a < b:
            edges.append((a, b))
            edge_faces.append((f, directed[(b, a)]))
    return HullData(vertices=vertices, faces=faces, face_normals=normals, face_offsets=offsets,
                    edges=np.array(edges, dtype=np.int64).reshape(-1, 2),
                    edge_faces=np.array(edge_faces, dtype=np.int64).reshape(-1, 2))


def hull_mass_properties(vertices: np.ndarray, faces: list[np.ndarray]) -> tuple[float, np.ndarray,
                                                                                  np.ndarray]:
    """Volume, centre of mass (3,) and inertia tensor per unit mass (3×3, about the centre of mass) of
    the solid polyhedron of uniform density bounded by ``faces`` (CCW from outside) over ``vertices``.

    Tetrahedron decomposition with the canonical covariance matrix (Blow and Binstock, "How to find the
    inertia tensor (or other mass properties) of a 3D solid body represented by a triangle mesh", 2004):
    each face is fanned into triangles, each triangle with a reference point r inside makes a
    tetrahedron; for edges a, b, c from r, its volume is det[a b c]/6 and its second moment
    ∫ x xᵀ dV = det/120 · (a aᵀ + b bᵀ + c cᵀ + (a+b+c)(a+b+c)ᵀ). Summing, shifting the covariance to the
    centre of mass (parallel axis) and taking I = tr(C)·1 − C gives the inertia tensor.
    """
    v = np.asarray(vertices, dtype=np.float64)
    r = v.mean(axis=0)
    volume = 0.0
    first = np.zeros(3)
    cov = np.zeros((3, 3))
    for face in faces:
        for k in range(1, len(face) - 1):
            a, b, c = v[face[0]] - r, v[face[k]] - r, v[face[k + 1]] - r
            det = float(dot(a, np.cross(b, c)))
            s = a + b + c
            volume += det / 6.0
            first += det / 24.0 * s
            cov += det / 120.0 * (np.outer(a, a) + np.outer(b, b) + np.outer(c, c) + np.outer(s, s))
    center_rel = first / volume
    cov_c = cov - volume * np.outer(center_rel, center_rel)
    inertia = (np.trace(cov_c) * np.eye(3) - cov_c) / volume
    return volume, center_rel + r, inertia
