"""Cold compile time of the engine's kernels: ``python -m bench.compile``.

Runs, in a fresh process with an empty numba cache (``NUMBA_CACHE_DIR`` in a temporary folder, so the
project's own cache is untouched), one step of a scene with every shape kind under every broad phase,
response method and contact solver, with a joint and a mouse grab, plus a raycast: every kernel a session
can reach. Then runs the same again on the now warm cache. Prints both times (seconds); ``--repeats``
takes the median of several cold runs. Cold runs are reported in wall-clock and in CPU seconds (user +
system, of the process and its helpers): on a busy machine only the latter compares runs. Uses only the
public API, so it also measures older versions.

``--by-function`` reports, for one cold run, where the compile time goes: numba's compile events give each
kernel's compile time (its own, less that of the callees it compiled meanwhile) and each kernel's
specialisations (``dispatcher.signatures``; a kernel compiled for several argument types, e.g. for a
literal ``True`` and for a ``bool`` variable, is compiled again for each). It prints the 20 slowest
kernels and every kernel with more than one specialisation. The times printed are CPU seconds of the
compiling process (``time.process_time``), which other processes on a busy machine do not inflate.

``--warmup`` measures ``sandbox warmup`` instead (what the set-up step and the app's first launch run: the
kernels compiled by two processes at once, see ``sandbox/warmup.py``), cold and then warm, and after it
the serial script above on the cache it left, which must then only load (it shows what, if anything,
``sandbox warmup`` missed).
"""

from __future__ import annotations

import argparse
import json
import os
import resource
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
import os
PROFILE = os.environ.get("SANDBOX_COMPILE_PROFILE")
if PROFILE:
    import json
    from numba.core import event

    class Profile(event.Listener):
        def __init__(self):
            self.stack = []  # [name, start, seconds spent in nested compiles]
            self.own = {}
            self.count = {}

        def on_start(self, ev):
            f = ev.data["dispatcher"].py_func
            self.stack.append([f.__module__ + "." + f.__qualname__, time.process_time(), 0.0])

        def on_end(self, ev):
            name, start, nested = self.stack.pop()
            total = time.process_time() - start
            self.own[name] = self.own.get(name, 0.0) + total - nested
            self.count[name] = self.count.get(name, 0) + 1
            if self.stack:
                self.stack[-1][2] += total

    profile = Profile()
    event.register("numba:compile", profile)
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
if PROFILE:
    with open(PROFILE, "w") as f:
        json.dump({"own": profile.own, "count": profile.count}, f)
print(time.perf_counter() - t0)
"""


def _children_cpu() -> float:
    """CPU seconds (user + system) of every finished child process so far, and of their children."""
    usage = resource.getrusage(resource.RUSAGE_CHILDREN)
    return usage.ru_utime + usage.ru_stime


def _timed(args: list[str], cache: str, profile: str = "") -> tuple[float, float]:
    """Wall-clock and CPU seconds of ``python args`` on the numba cache in ``cache``."""
    env = {**os.environ, "NUMBA_CACHE_DIR": cache, "PYTHONPATH": str(ROOT), "NUMBA_NUM_THREADS": "1",
           "SANDBOX_COMPILE_PROFILE": profile}
    cpu = _children_cpu()
    start = time.perf_counter()
    subprocess.run([sys.executable, *args], env=env, capture_output=True, text=True, check=True, cwd=ROOT)
    return time.perf_counter() - start, _children_cpu() - cpu


def run(cache: str, profile: str = "") -> tuple[float, float]:
    """Wall-clock and CPU seconds of the script above on the numba cache in ``cache``; with ``profile``,
    the per-kernel compile report is written to that file as JSON."""
    return _timed(["-c", SCRIPT], cache, profile)


def run_warmup(cache: str) -> tuple[float, float]:
    """Wall-clock and CPU seconds (its helper processes' included) of ``python -m sandbox warmup`` on the
    numba cache in ``cache``."""
    return _timed(["-m", "sandbox", "warmup"], cache)


def report(profile: str) -> None:
    """Print the 20 kernels that took longest to compile and those compiled more than once."""
    with open(profile, encoding="utf-8") as f:
        data = json.load(f)
    own, count = data["own"], data["count"]
    print(f"{len(own)} kernels, {sum(count.values())} compiles, {sum(own.values()):.1f} CPU s in all")
    print("slowest (own CPU s, specialisations):")
    for name in sorted(own, key=own.get, reverse=True)[:20]:
        print(f"  {own[name]:7.2f}  {count[name]:2d}  {name}")
    several = sorted((name for name in count if count[name] > 1), key=lambda n: -count[n])
    print("compiled for more than one signature:" if several else "every kernel compiled once")
    for name in several:
        print(f"  {count[name]:2d}  {own[name]:7.2f}  {name}")


def main() -> None:
    ap = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    ap.add_argument("--repeats", type=int, default=1, help="cold runs (median reported)")
    ap.add_argument("--warmup", action="store_true", help="measure `sandbox warmup` (parallel) instead")
    ap.add_argument("--by-function", action="store_true", help="one cold run, compile time per kernel")
    a = ap.parse_args()
    if a.by_function:
        with tempfile.TemporaryDirectory() as cache:
            profile = os.path.join(cache, "profile.json")
            wall, cpu = run(cache, profile)
            print(f"cold cache {wall:.1f} s, {cpu:.1f} CPU s")
            report(profile)
        return
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
    walls = [w for w, _ in cold]
    cpus = [c for _, c in cold]
    print(f"{what}cold cache {statistics.median(walls):.1f} s, {statistics.median(cpus):.1f} CPU s "
          f"(runs: {', '.join(f'{w:.1f} s/{c:.1f} CPU s' for w, c in cold)}); "
          f"warm cache {statistics.median([w for w, _ in warm]):.1f} s"
          + (f"; the serial script after it {statistics.median([w for w, _ in after]):.1f} s"
             if after else ""))


if __name__ == "__main__":
    main()
