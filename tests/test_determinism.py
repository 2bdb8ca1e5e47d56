"""Determinism: the same scene gives the same state, bit for bit, in another process and another version.

The hash below was recorded from this engine; a change of the physics (or of numba or numpy changing a
result) changes it. When a change of results is intended, run this file, check that the scenes still
behave (the rest of the suite), and record the new hash printed in the failure: the point is that no
change of results goes unnoticed (Box2D's test_determinism.c does the same).
"""

from __future__ import annotations

import math
import os
import platform
import subprocess
import sys

import numpy as np
import pytest

from sandbox import scenes
from sandbox.engine import Box, Capsule, ConvexHull, Sphere, World

STEPS = 300
RECORDED = "03cc49c19be6981fae043cbe2694b5639c9c5eb0a7e5e7f93a4c3becf8779e15"


def mixed_pile(world: World, n: int = 300) -> None:
    """``n`` bodies of every shape kind dropped from a seeded jittered grid into a pile on the ground."""
    scenes.ground(world)
    rng = np.random.default_rng(11)
    side = 7
    for k in range(n):
        x, z, y = k % side, (k // side) % side, k // side**2
        p = ((x - 3) * 1.1 + rng.uniform(-0.1, 0.1), 0.6 + 1.1 * y, (z - 3) * 1.1 + rng.uniform(-0.1, 0.1))
        a = rng.uniform(0, math.pi)
        q = (0.0, math.sin(a / 2), 0.0, math.cos(a / 2))
        shape = (Sphere(0.4), Box((0.4, 0.3, 0.35)), Capsule(0.25, 0.25),
                 ConvexHull(scenes.random_hull_points(rng, 0.45)))[k % 4]
        world.add_body(shape, position=p, orientation=q, restitution=0.2 * (k % 3))


def run_mixed_pile() -> str:
    w = World()
    mixed_pile(w)
    for _ in range(STEPS):
        w.step(1.0 / 60.0)
    return w.state_hash()


def test_same_state_in_another_process_and_as_recorded():
    here = run_mixed_pile()
    code = "from tests.test_determinism import run_mixed_pile; print(run_mixed_pile())"
    other = subprocess.run([sys.executable, "-c", code], capture_output=True, text=True, check=True)
    assert other.stdout.strip() == here
    assert here == RECORDED, f"the results changed: new hash {here}"


def _openblas() -> bool:
    blas = np.show_config(mode="dicts")["Build Dependencies"]["blas"]
    return "openblas" in str(blas.get("name", "")).lower()


@pytest.mark.skipif(platform.machine().lower() not in ("x86_64", "amd64") or not _openblas(),
                    reason="OPENBLAS_CORETYPE picks x86 kernels of numpy's OpenBLAS")
def test_same_state_whatever_kernels_numpys_blas_picks_for_the_processor():
    """OpenBLAS picks its kernels for the processor (AVX-512 on one machine, AVX2 on another), and they
    round differently. The Python layer's small linear algebra (hull construction, inertias, lengths) goes
    through ``engine/linalg3.py`` and not the BLAS, so that told to use its oldest x86 kernels instead, the
    engine ends in the same state. (It did not: the hash moved with ``OPENBLAS_CORETYPE``.)"""
    here = run_mixed_pile()
    code = "from tests.test_determinism import run_mixed_pile; print(run_mixed_pile())"
    env = dict(os.environ, OPENBLAS_CORETYPE="Prescott")
    other = subprocess.run([sys.executable, "-c", code], capture_output=True, text=True, check=True, env=env)
    assert other.stdout.strip() == here
