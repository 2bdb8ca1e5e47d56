"""Convex hull construction and polyhedron mass properties (sandbox/engine/hull.py)."""

from itertools import combinations

import numpy as np
import pytest

from sandbox.engine.hull import build_hull, hull_mass_properties
from sandbox.engine.shapes import Box, ConvexHull

CUBE = np.array([[x, y, z] for x in (-1.0, 1.0) for y in (-1.0, 1.0) for z in (-1.0, 1.0)])


def check_structure(h, points, tol=1e-9):
    """Invariants every hull must satisfy: Euler's formula, closed CCW faces with outward supporting
    planes, every input point inside, every vertex a corner, edges listed once with their two faces."""
    v, e, f = len(h.vertices), len(h.edges), len(h.faces)
    assert v - e + f == 2
    scale = np.abs(points).max()
    assert np.all(points @ h.face_normals.T - h.face_offsets <= tol * scale)
    assert np.allclose(np.linalg.norm(h.face_normals, axis=1), 1.0)
    for k, face in enumerate(h.faces):
        assert len(face) >= 3
        p = h.vertices[face]
        assert np.allclose(p @ h.face_normals[k], h.face_offsets[k], atol=tol * scale * 10)
        turns = np.cross(np.roll(p, -1, 0) - p, np.roll(p, -2, 0) - np.roll(p, -1, 0))
        assert np.all(turns @ h.face_normals[k] > 0.0)  # convex, counter-clockwise from outside
    seen = set()
    for (a, b), (f0, f1) in zip(h.edges, h.edge_faces, strict=True):
        assert (a, b) not in seen
        seen.add((a, b))
        loop0 = list(h.faces[f0])
        loop1 = list(h.faces[f1])
        assert loop0[(loop0.index(a) + 1) % len(loop0)] == b
        assert loop1[(loop1.index(b) + 1) % len(loop1)] == a
    for i, x in enumerate(h.vertices):
        touching = [k for k, face in enumerate(h.faces) if i in face]
        assert len(touching) >= 3
        direction = h.face_normals[touching].sum(axis=0)
        others = np.delete(h.vertices, i, axis=0)
        assert np.all(others @ direction < x @ direction)


def supporting_triples(points, tol=1e-9):
    """Brute-force oracle: the triples of points whose plane has every point on one side."""
    triples = []
    for i, j, k in combinations(range(len(points)), 3):
        n = np.cross(points[j] - points[i], points[k] - points[i])
        if np.linalg.norm(n) < tol:
            continue
        s = (points - points[i]) @ n
        if np.all(s <= tol) or np.all(s >= -tol):
            triples.append((i, j, k))
    return triples


def test_cube_has_six_quads():
    h = build_hull(CUBE)
    assert (len(h.vertices), len(h.faces), len(h.edges)) == (8, 6, 12)
    assert all(len(f) == 4 for f in h.faces)
    assert np.allclose(np.sort(np.abs(h.face_normals).sum(axis=0)), [2, 2, 2])
    assert np.allclose(h.face_offsets, 1.0)
    check_structure(h, CUBE)


def test_tetrahedron():
    pts = np.array([[0.0, 0, 0], [1, 0, 0], [0, 1, 0], [0, 0, 1]])
    h = build_hull(pts)
    assert (len(h.vertices), len(h.faces), len(h.edges)) == (4, 4, 6)
    check_structure(h, pts)


@pytest.mark.parametrize("seed", range(5))
def test_random_points_match_the_supporting_plane_oracle(seed):
    rng = np.random.default_rng(seed)
    pts = rng.normal(size=(18, 3)) * [1.0, 2.0, 0.5] + rng.normal(size=3) * 10
    h = build_hull(pts)
    check_structure(h, pts)
    triples = supporting_triples(pts)
    corners = {i for t in triples for i in t}
    assert sorted(map(tuple, h.vertices)) == sorted(map(tuple, pts[sorted(corners)]))
    assert len(h.faces) == len(triples)  # general position: every face a triangle


def test_duplicates_and_points_on_faces_and_edges_are_dropped():
    grid = np.linspace(-1.0, 1.0, 5)
    pts = np.array([[x, y, z] for x in grid for y in grid for z in grid])
    pts = np.concatenate([pts, pts[::3], CUBE, CUBE])
    h = build_hull(pts)
    assert (len(h.vertices), len(h.faces), len(h.edges)) == (8, 6, 12)
    check_structure(h, pts)


def test_coplanar_faces_merge_into_polygons():
    # A hexagonal prism: 2 hexagons and 6 quads, with extra points on the faces.
    ang = np.arange(6) * np.pi / 3
    ring = np.stack([np.cos(ang), np.zeros(6), np.sin(ang)], axis=1)
    pts = np.concatenate([ring + [0, -1, 0], ring + [0, 1, 0], 0.5 * ring + [0, 1, 0], ring * [1, 0, 1]])
    h = build_hull(pts)
    assert (len(h.vertices), len(h.faces), len(h.edges)) == (12, 8, 18)
    assert sorted(len(f) for f in h.faces) == [4] * 6 + [6, 6]
    check_structure(h, pts)


def test_many_points_on_a_sphere():
    rng = np.random.default_rng(7)
    pts = rng.normal(size=(300, 3))
    pts /= np.linalg.norm(pts, axis=1)[:, None]
    pts = np.concatenate([pts, 0.5 * pts[:100]])
    h = build_hull(pts)
    assert len(h.vertices) == 300
    check_structure(h, pts)


@pytest.mark.parametrize("bad, word", [
    (np.zeros((5, 2)), "shape"),
    ([[0, 0, 0], [1, 0, 0], [0, 1, 0]], "at least 4"),
    ([[0, 0, 0], [1, 0, 0], [0, 1, 0], [0, 0, np.nan]], "finite"),
    ([[0, 0, 0], [1, 0, 0], [0, 1, 0], [1, 1, 0], [2, 3, 0]], "coplanar"),
    ([[0, 0, 0], [1, 1, 1], [2, 2, 2], [3, 3, 3]], "collinear"),
    ([[1, 2, 3]] * 6, "coincide"),
    ("points", "points"),
])
def test_bad_points_raise(bad, word):
    with pytest.raises(ValueError, match=word):
        build_hull(bad)


def test_coplanar_message_names_the_problem():
    with pytest.raises(ValueError, match="fewer than 4 non-coplanar points"):
        build_hull(np.array([[0.0, 0, 0], [1, 0, 0], [0, 1, 0], [1, 1, 0]]))


def test_box_mass_properties_match_the_analytic_box():
    half = np.array([0.5, 1.0, 1.5])
    offset = np.array([3.0, -2.0, 1.0])
    h = build_hull(CUBE * half + offset)
    volume, center, inertia = hull_mass_properties(h.vertices, h.faces)
    assert volume == pytest.approx(8 * np.prod(half))
    assert np.allclose(center, offset)
    assert np.allclose(inertia, Box(half).inertia(1.0))


def test_tetrahedron_mass_properties():
    pts = np.array([[0.0, 0, 0], [1, 0, 0], [0, 1, 0], [0, 0, 1]])
    h = build_hull(pts)
    volume, center, inertia = hull_mass_properties(h.vertices, h.faces)
    assert volume == pytest.approx(1.0 / 6.0)
    assert np.allclose(center, 0.25)
    # Covariance per unit mass about the origin: E[x²] = 1/10, E[xy] = 1/20; shifted to the centroid.
    expected = np.full((3, 3), 1.0 / 80.0)
    np.fill_diagonal(expected, 3.0 / 40.0)
    assert np.allclose(inertia, expected)


def test_convex_hull_shape_is_centred_on_its_centre_of_mass():
    shape = ConvexHull(CUBE * [1, 2, 3] + [5, 0, 0])
    assert np.allclose(shape.center, [5, 0, 0])
    assert np.allclose(shape.vertices.mean(axis=0), 0.0)
    assert np.allclose(shape.face_offsets, np.abs(shape.face_normals @ [1, 2, 3]))
    assert shape.volume() == pytest.approx(48.0)
