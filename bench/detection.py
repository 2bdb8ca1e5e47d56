"""Collision detection benchmark: ``python -m bench.detection``.

Prints: the time of each broad-phase method for 1 000, 4 000 and 16 000 bodies; narrow-phase throughput
per pair of shape kinds (pairs per second); broad plus narrow phase per step on the settled S1 pile of
``shared/SCENES.md`` (1 000 bodies); and the compile time of the kernels on a cold numba cache.
Targets on the 2-core development machine: settled S1 broad + narrow under 2 ms per step; sap on 16 000
spheres under 20 ms.
"""

from __future__ import annotations

import argparse
import os
import subprocess
import sys
import tempfile
import time
from functools import partial
from pathlib import Path

import numpy as np

from sandbox import scenes
from sandbox.engine import Box, Capsule, ConvexHull, Sphere, World
from sandbox.engine.core.layout import KIND_NAMES
from sandbox.engine.core.narrowphase import collide_pairs

ROOT = Path(__file__).resolve().parent.parent


def best_of(fn, repeats: int) -> float:
    """Smallest wall time of ``repeats`` calls, in milliseconds (the least disturbed run)."""
    best = float("inf")
    for _ in range(repeats):
        t = time.perf_counter()
        fn()
        best = min(best, time.perf_counter() - t)
    return best * 1e3


def sphere_pile(n: int, seed: int = 0) -> World:
    """``n`` spheres of radius 0.5 as in a settled pile: ten layers on a square grid of spacing 1.02 m
    (neighbours all but touching), each shifted by up to 5 cm, on a 400 m ground."""
    w = World()
    scenes.ground(w, half=200.0)
    per_row = int(np.ceil(np.sqrt(n / 10)))
    ball = Sphere(0.5)
    for p in scenes.grid_positions(n, per_row, 1.02, 0.5, 0.05, seed):
        w.add_body(ball, position=p)
    return w


def broad_phase_table(sizes: list[int], repeats: int) -> None:
    print("## Broad phase (ms per update, best of runs; a settled pile of spheres, 10 layers, + ground)\n")
    print("| bodies | " + " | ".join(("brute", "sap", "grid", "octree")) + " | pairs |")
    print("|---|---|---|---|---|---|")
    for n in sizes:
        w = sphere_pile(n)
        d = w.data
        margins = np.zeros(d.n)
        H = w.hulls.arrays()
        cells = []
        pairs = 0
        for method in ("brute", "sap", "grid", "octree"):
            w.broad.method = method
            reps = 1 if method == "brute" and n > 4000 else repeats
            update = partial(w.broad.update, d.n, d.alive, d.static, d.kind, d.params, d.pos, d.quat, H,
                             margins)
            update()  # compile / warm
            cells.append(f"{best_of(update, reps):.2f}")
            pairs = w.broad.pair_count
        print(f"| {n} | " + " | ".join(cells) + f" | {pairs} |", flush=True)
    print()


def random_quats(rng: np.random.Generator, k: int) -> np.ndarray:
    q = rng.normal(size=(k, 4))
    return q / np.linalg.norm(q, axis=1, keepdims=True)


def narrow_phase_table(k: int, repeats: int) -> None:
    """Throughput of ``collide_pairs`` for each pair of kinds, on ``k`` overlapping random poses."""
    print(f"## Narrow phase (pairs per second; {k} overlapping pairs in random poses per kind)\n")
    print("| pair | pairs/s | µs/pair | manifolds |")
    print("|---|---|---|---|")
    rng = np.random.default_rng(1)
    hull = ConvexHull(scenes.random_hull_points(rng, 0.6, 16))
    shapes = {0: Sphere(0.5), 1: Box((0.5, 0.4, 0.3)), 2: Capsule(0.3, 0.4), 3: hull}
    for ka in range(4):
        for kb in range(ka, 4):
            w = World()
            for _ in range(k):
                c = rng.uniform(-50, 50, 3)
                w.add_body(shapes[ka], position=c, orientation=random_quats(rng, 1)[0])
                w.add_body(shapes[kb], position=c + rng.normal(size=3) * 0.3,
                           orientation=random_quats(rng, 1)[0])
            d = w.data
            c = w.contacts
            c.ensure(k)
            pairs = np.stack([np.arange(0, 2 * k, 2), np.arange(1, 2 * k, 2)], axis=1).astype(np.int64)
            margins = np.zeros(d.n)
            run = partial(collide_pairs, pairs, k, d.kind, d.params, d.pos, d.quat, w.hulls.arrays(), margins,
                          c.body_a, c.body_b, c.normal, c.npoints, c.points_a, c.points_b, c.depth)
            hits = run()
            ms = best_of(run, repeats)
            name = f"{KIND_NAMES[ka]}–{KIND_NAMES[kb]}"
            print(f"| {name} | {k / ms * 1e3:,.0f} | {ms * 1e3 / k:.2f} | {hits} |",
                  flush=True)
    print()


def settled_pile(steps: int) -> None:
    """Broad + narrow phase per step on S1 (1 000 bodies) after it has settled for ``steps`` steps."""
    w = World()
    w.sleeping = False
    scenes.s1_pile(w, 1000)
    for _ in range(steps):
        w.step(1 / 60)
    broad, narrow = [], []
    for _ in range(60):
        w.step(1 / 60)
        broad.append(w.timings["find_pairs"])
        narrow.append(w.timings["collide"])
    b, nphase = float(np.median(broad)), float(np.median(narrow))
    print("## Settled S1 pile, 1 000 bodies (median over 60 steps after settling)\n")
    print(f"broad {b:.2f} ms + narrow {nphase:.2f} ms = {b + nphase:.2f} ms per step "
          f"({len(w.pairs)} pairs, {w.contacts.count} manifolds, {w.contacts.point_count()} points); "
          f"target < 2 ms\n", flush=True)


COLD_SCRIPT = """
import time
t0 = time.perf_counter()
from sandbox.engine import World, Sphere, Box, Capsule, ConvexHull
w = World()
w.add_body(Box((5, 0.5, 5)), position=(0, -0.5, 0), mass=0)
for i, s in enumerate([Sphere(0.3), Box((0.3, 0.3, 0.3)), Capsule(0.2, 0.3),
                       ConvexHull([[0, 0, 0], [0.5, 0, 0], [0, 0.5, 0], [0, 0, 0.5]])]):
    w.add_body(s, position=(0.3 * i, 0.4 + 0.5 * i, 0))
for method in ("brute", "sap", "grid", "octree"):
    w.broadphase = method
    w.step(1 / 60)
w.raycast((0, 5, 0), (0, -1, 0))
print(time.perf_counter() - t0)
"""


def compile_time() -> None:
    """Time to import and run every detection kernel once, with a cold and then a warm numba cache."""
    with tempfile.TemporaryDirectory() as cache:
        env = {**os.environ, "NUMBA_CACHE_DIR": cache, "PYTHONPATH": str(ROOT)}
        times = []
        for _ in range(2):
            out = subprocess.run([sys.executable, "-c", COLD_SCRIPT], env=env, capture_output=True, text=True,
                                 check=True)
            times.append(float(out.stdout.strip().splitlines()[-1]))
    print("## Kernel compile time\n")
    print(f"cold cache {times[0]:.1f} s, warm cache {times[1]:.1f} s (import, one step with each broad phase "
          f"and shape kind, one raycast)\n")


def main() -> None:
    ap = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    ap.add_argument("--sizes", type=int, nargs="+", default=[1000, 4000, 16000])
    ap.add_argument("--repeats", type=int, default=5)
    ap.add_argument("--pairs", type=int, default=2000)
    ap.add_argument("--skip-compile", action="store_true", help="skip the cold-cache compile measurement")
    a = ap.parse_args()
    broad_phase_table(a.sizes, a.repeats)
    narrow_phase_table(a.pairs, a.repeats)
    settled_pile(600)
    if not a.skip_compile:
        compile_time()


if __name__ == "__main__":
    main()
