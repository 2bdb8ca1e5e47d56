"""Shapes: validation and mass properties against closed forms and a Monte Carlo oracle."""

from __future__ import annotations

import math

import numpy as np
import pytest

from sandbox.engine import Box, Capsule, ConvexHull, Sphere


def monte_carlo_inertia(inside, bound: float, mass: float, samples: int = 400_000,
                        seed: int = 0) -> np.ndarray:
    """Inertia tensor of a uniform solid from random samples of its bounding cube (the oracle)."""
    rng = np.random.default_rng(seed)
    p = rng.uniform(-bound, bound, (samples, 3))
    p = p[inside(p)]
    r2 = (p * p).sum(axis=1)
    tensor = np.eye(3) * r2.mean() - (p[:, :, None] * p[:, None, :]).mean(axis=0)
    return mass * tensor


def test_sphere_inertia():
    assert np.allclose(Sphere(2.0).inertia(3.0), np.eye(3) * 0.4 * 3.0 * 4.0)


def test_box_inertia():
    i = Box((1.0, 2.0, 3.0)).inertia(12.0)
    # full sides 2, 4, 6: I_x = m/12·(4² + 6²)
    assert np.allclose(np.diag(i), [52.0, 40.0, 20.0])


def test_capsule_inertia_matches_monte_carlo():
    r, hh, m = 0.5, 0.75, 2.0

    def inside(p):
        y = np.clip(p[:, 1], -hh, hh)
        return (p[:, 0] ** 2 + (p[:, 1] - y) ** 2 + p[:, 2] ** 2) <= r * r

    oracle = monte_carlo_inertia(inside, r + hh, m)
    assert np.allclose(Capsule(r, hh).inertia(m), oracle, rtol=0.02, atol=1e-3)


def test_capsule_volume():
    c = Capsule(0.5, 1.0)
    assert c.volume() == pytest.approx(math.pi * 0.25 * 2.0 + 4 / 3 * math.pi * 0.125)


def test_hull_of_cube_matches_box():
    pts = np.array([[x, y, z] for x in (-1, 1) for y in (-2, 2) for z in (-3, 3)], float)
    hull = ConvexHull(pts)
    assert np.allclose(hull.inertia(12.0), Box((1, 2, 3)).inertia(12.0))
    assert hull.volume() == pytest.approx(48.0)
    assert len(hull.faces) == 6


def test_off_centre_hull_remembers_its_centre():
    pts = np.array([[x, y, z] for x in (0, 1) for y in (0, 1) for z in (0, 1)], float) + (5, 0, 0)
    hull = ConvexHull(pts)
    assert np.allclose(hull.center, (5.5, 0.5, 0.5))
    assert np.allclose(hull.vertices.mean(axis=0), 0.0)


@pytest.mark.parametrize("make", [
    lambda: Sphere(0), lambda: Sphere(-1), lambda: Sphere(float("nan")), lambda: Sphere(float("inf")),
    lambda: Box((1, 0, 1)), lambda: Box((1, -2, 1)), lambda: Box((1, 1)), lambda: Capsule(0, 1),
    lambda: Capsule(1, -1), lambda: ConvexHull([[0, 0, 0], [1, 0, 0], [0, 1, 0]]),
    lambda: ConvexHull([[0, 0, 0], [1, 0, 0], [0, 1, 0], [1, 1, 0], [2, 3, 0]]),
])
def test_bad_shapes_raise_value_error(make):
    with pytest.raises(ValueError):
        make()


def test_error_names_the_value():
    with pytest.raises(ValueError, match="radius"):
        Sphere(-1.0)
    with pytest.raises(ValueError, match="half_extents"):
        Box((1.0, 0.0, 1.0))
    with pytest.raises(ValueError, match="non-coplanar"):
        ConvexHull([[0, 0, 0], [1, 0, 0], [0, 1, 0], [1, 1, 0]])
