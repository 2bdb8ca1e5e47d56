"""Cold compile time of the engine's kernels: ``python -m bench.compile``.

Runs, in a fresh process with an empty numba cache (``NUMBA_CACHE_DIR`` in a temporary folder, so the
project's own cache is untouched), one step of a scene with every shape kind under every broad phase,
response method and contact solver, with a joint and a mouse grab, plus a raycast: every kernel a session
can reach. Then runs the same again on the now warm cache. Prints both times (seconds); ``--repeats``
takes the median of several cold runs. Uses only the public API, so it also measures older versions.

``--warmup`` measures ``sandbox warmup`` instead (what the set-up step and the app's first launch run: the
kernels compiled by two processes at once, see ``sandbox/warmup.py``), cold and then warm, and after it
the serial script above on the cache it left, which must then only load (it shows what, if anything,
``sandbox warmup`` missed).
"""

from __future__ import annotations

import argparse
import os
import statistics
import subprocess
import sys
import tempfile
import time
from pathlib import Path

ROOT = Path(__file__).resolve().parent.parent

SCRIPT = """
import time
t0 = time.perf_counter()
import numpy as np
from sandbox.engine import World, Sphere, Box, Capsule, ConvexHull
from sandbox import scenes

def build():
    w = World()
    scenes.ground(w)
    rng = np.random.default_rng(0)
    shapes = [Sphere(0.4), Box((0.4, 0.3, 0.35)), Capsule(0.25, 0.3),
              ConvexHull(scenes.random_hull_points(rng))]
    bodies = [w.add_body(s, position=(1.2 * i, 0.5 + 0.9 * j, 0.0))
              for i, s in enumerate(shapes) for j in range(2)]
    w.add_distance_joint(bodies[0], bodies[2])
    w.grab(bodies[3], bodies[3].position)
    return w

for response in ("impulse", "projection", "penalty"):
    for method in ("brute", "sap", "grid", "octree"):
        w = build()
        w.response = response
        w.broadphase = method
        w.step(1 / 60)
        w.step(1 / 60)
w = build()
for name, value in (("contact_solver", "reference"), ("warm_starting", False)):
    if hasattr(w, name):
        setattr(w, name, value)
        w.step(1 / 60)
w.raycast((0, 5, 0), (0, -1, 0))
print(time.perf_counter() - t0)
"""


def run(cache: str) -> float:
    env = {**os.environ, "NUMBA_CACHE_DIR": cache, "PYTHONPATH": str(ROOT), "NUMBA_NUM_THREADS": "1"}
    out = subprocess.run([sys.executable, "-c", SCRIPT], env=env, capture_output=True, text=True, check=True,
                         cwd=ROOT)
    return float(out.stdout.strip().splitlines()[-1])


def run_warmup(cache: str) -> float:
    """Wall-clock seconds of ``python -m sandbox warmup`` on the numba cache in ``cache``."""
    env = {**os.environ, "NUMBA_CACHE_DIR": cache, "PYTHONPATH": str(ROOT), "NUMBA_NUM_THREADS": "1"}
    start = time.perf_counter()
    subprocess.run([sys.executable, "-m", "sandbox", "warmup"], env=env, capture_output=True, text=True,
                   check=True, cwd=ROOT)
    return time.perf_counter() - start


def main() -> None:
    ap = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    ap.add_argument("--repeats", type=int, default=1, help="cold runs (median reported)")
    ap.add_argument("--warmup", action="store_true", help="measure `sandbox warmup` (parallel) instead")
    a = ap.parse_args()
    cold, warm, after = [], [], []
    for _ in range(a.repeats):
        with tempfile.TemporaryDirectory() as cache:
            if a.warmup:
                cold.append(run_warmup(cache))
                warm.append(run_warmup(cache))
                after.append(run(cache))
            else:
                cold.append(run(cache))
                warm.append(run(cache))
    what = "sandbox warmup: " if a.warmup else ""
    print(f"{what}cold cache {statistics.median(cold):.1f} s (runs: {', '.join(f'{t:.1f}' for t in cold)}); "
          f"warm cache {statistics.median(warm):.1f} s"
          + (f"; the serial script after it {statistics.median(after):.1f} s" if after else ""))


if __name__ == "__main__":
    main()
