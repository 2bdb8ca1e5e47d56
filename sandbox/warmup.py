"""Compile the engine's kernels before they are needed, in parallel processes: ``sandbox warmup``.

numba compiles a kernel the first time it is called and keeps the machine code in its cache (one folder per
version of the kernels' sources, ``engine/core/kernel_cache.py``), so only the first launch of a version on a
machine pays for it, but that used to be minutes in one process. The kernels fall into two halves that share
little but the small vector helpers: **detection** (the narrow phase of every shape pair, the manifold cache,
raycasts) and **response** (contact preparation, the sub-steps of every response method with joints and
grabs, restitution, sleeping, events); the broad phases share nothing with either half and go with
detection, so that both take about as long. Each half is compiled by its own process, at the same
time, into the shared cache (numba writes its cache files atomically, so the two never see half a file); then
this process runs ``app.warm_up``'s full step, which loads everything from the cache and compiles whatever
neither half reached. On a two-core machine that halves the wait.

Progress: every child reports each function numba starts compiling (numba's compile events); the parent
prints one line per part with the count so far, out of about how many a cold cache needs
(``EXPECTED``, measured), and the function being compiled. A warm cache takes a few seconds.
"""

from __future__ import annotations

import argparse
import os
import queue
import re
import subprocess
import sys
import threading
import time
from collections.abc import Callable
from pathlib import Path

from .i18n import N_

PARTS = (N_("detection"), N_("response"))
EXPECTED = {"detection": 209, "response": 217}
"""About how many functions each part compiles from an empty cache (counted with ``--part``); only used
to say how far along the compile is."""
DT = 1.0 / 60.0

Progress = Callable[[str, int, int, str], None]
"""Called as progress(part, compiled so far, expected, name of the function now compiling)."""


def _world():
    """A small world with every shape kind resting on a ground box, a distance joint and a mouse grab:
    every pair kind and every constraint the engine has."""
    import numpy as np

    from .engine import Box, Capsule, ConvexHull, Sphere, World

    w = World()
    w.add_body(Box((4.0, 0.5, 4.0)), position=(0.0, -0.5, 0.0), mass=0.0)
    gem = ConvexHull(np.array([(0, 0.5, 0), (0.4, 0, 0), (-0.4, 0, 0.1), (0, 0, 0.4), (0, -0.4, -0.3)]))
    shapes = (Sphere(0.3), Box((0.3, 0.3, 0.3)), Capsule(0.2, 0.3), gem)
    for k, shape in enumerate(shapes):
        for j in range(2):
            w.add_body(shape, position=(0.5 * k - 0.75, 0.3 + 0.45 * j, 0.1 * j), mass=1.0)
    w.add_distance_joint(w.bodies[1], w.bodies[3])
    w.grab(w.bodies[-1], w.bodies[-1].center_of_mass)
    return w


def warm_up() -> float:
    """Run every kind of pair, a raycast and a grab once on a tiny world, so that numba compiles (or
    loads from its cache) every kernel a session reaches, in this process. Returns the seconds it took."""
    start = time.perf_counter()
    w = _world()
    for _ in range(3):
        w.step(DT)
    w.release(w.grabs[0])
    w.raycast((0.0, 5.0, 0.0), (0.0, -1.0, 0.0))
    return time.perf_counter() - start


def compile_part(part: str) -> None:
    """Call every kernel of one half (``PARTS``) once, so that numba compiles it into its cache. The
    stages are called one by one (``World._find_pairs``, ``_collide``, ``_respond``…) so that this half
    compiles only its own kernels: a full step would compile the other half's too."""
    import numpy as np

    from .engine import BROADPHASES, RESPONSES
    from .engine.core import integrate, manifold_cache

    if part not in PARTS:
        raise ValueError(f"unknown part {part!r}; expected one of {', '.join(PARTS)}")
    w = _world()
    n = w.data.n
    if part == "detection":
        # every pair of bodies, as the broad phase would hand them on (int64 rows): the broad phase's
        # kernels are the other half's, and the pair tests do not need the boxes to overlap
        pairs = np.array([(a, b) for a in range(n) for b in range(a + 1, n)], np.int64)
        # the manifold cache's passes on the threads too, which a world this small would not reach (on a
        # pool of one thread they are never used)
        saved = manifold_cache.PARALLEL_ROWS
        manifold_cache.PARALLEL_ROWS = 1
        try:
            for _ in range(2):  # the second time, pairs that hardly moved reuse the manifold cache
                w._collide(pairs, w._margins(n, DT))
                w._move_rows()
                w._remember()()
        finally:
            manifold_cache.PARALLEL_ROWS = saved
        w.raycast((0.0, 5.0, 0.0), (0.0, -1.0, 0.0))
        # the broad phases share nothing with the narrow phase: they all go in this half, so that the two
        # halves take about as long (measured cold on two cores at once: 56.7 and 54.4 s, against 52.6 and
        # 58.9 s with sort-and-sweep in the response half)
        _find_pairs(w, list(BROADPHASES))
        return
    # response: the solver (with no contacts yet, its kernels still compile for their argument types);
    # the contact cache's kernels, which _respond also calls, are the detection half's
    w.contact_cache = False
    for response in RESPONSES:
        w.response = response
        w._respond(n, DT)
    w._sleep(n, DT)
    integrate.clear_forces(n, w.data.force, w.data.torque)
    w._emit_events()


def _find_pairs(w, methods: list[str]) -> None:
    """Run the broad phase ``methods`` of world ``w`` twice each (the second time, sort-and-sweep re-sorts
    its previous order)."""
    n = w.data.n
    for method in methods:
        w.broadphase = method
        for _ in range(2):
            w._find_pairs(n, w._margins(n, DT))


def _child(part: str) -> int:
    """Compile one part, printing ``compiling <module.function>`` to stdout as numba starts each one."""
    from numba.core import event

    class Reporter(event.Listener):
        def on_start(self, ev: event.Event) -> None:
            func = ev.data["dispatcher"].py_func
            print(f"compiling {func.__module__.rsplit('.', 1)[-1]}.{func.__name__}", flush=True)

        def on_end(self, ev: event.Event) -> None:
            pass

    event.register("numba:compile", Reporter())
    compile_part(part)
    return 0


def cache_is_warm() -> bool:
    """Whether the kernel cache already holds the kernels of every engine module (an index file for each
    in this version's folder, ``engine/core/kernel_cache.py``): then a launch only loads them and needs no
    helpers. False when numba's own places hold the cache (``kernel_cache.cache_root``), which costs only
    the helpers' start-up."""
    from .engine.core import kernel_cache

    folder = kernel_cache.cache_folder()
    if folder is None:
        return False
    for source in kernel_cache.CORE.glob("*.py"):
        # only modules with a kernel numba caches on its own (every @kernel caches, no @helper does,
        # jit.py): one inlined everywhere (inline="always") is compiled into its callers, leaving no index
        text = source.read_text(encoding="utf-8")
        decorators = re.findall(r"^@kernel\b(.*)$", text, re.MULTILINE)
        if not any('inline="always"' not in args for args in decorators):
            continue
        if not any(folder.glob(f"{source.stem}.*.nbi")):
            return False
    return True


def compile_parallel(progress: Progress | None = None) -> float:
    """Compile both halves at once in child processes (``python -m sandbox.warmup --part P``), then run
    ``warm_up`` here, which loads them from the cache (and compiles whatever they left). ``progress`` is
    called in this thread, at most ten times a second. Returns the seconds it all took. A child that
    fails is reported on stderr and ``warm_up`` compiles its half here instead."""
    start = time.perf_counter()
    root = str(Path(__file__).resolve().parent.parent)
    env = {**os.environ, "PYTHONPATH": os.pathsep.join([root, *filter(None, [os.environ.get("PYTHONPATH")])])}
    children = {part: subprocess.Popen([sys.executable, "-m", "sandbox.warmup", "--part", part],
                                       stdout=subprocess.PIPE, stderr=subprocess.PIPE, text=True, env=env)
                for part in PARTS}
    lines: queue.Queue[tuple[str, str]] = queue.Queue()
    errors: dict[str, list[str]] = {part: [] for part in PARTS}

    def follow(part: str, child: subprocess.Popen) -> None:
        for line in child.stdout:
            lines.put((part, line.strip()))

    def drain(part: str, child: subprocess.Popen) -> None:
        errors[part] = child.stderr.read().splitlines()

    threads = [threading.Thread(target=f, args=(part, child), daemon=True)
               for part, child in children.items() for f in (follow, drain)]
    for t in threads:
        t.start()
    done = dict.fromkeys(PARTS, 0)
    last_call = 0.0
    while any(child.poll() is None for child in children.values()) or not lines.empty():
        try:
            part, line = lines.get(timeout=0.1)
        except queue.Empty:
            continue
        if not line.startswith("compiling "):
            continue
        done[part] += 1
        now = time.perf_counter()
        if progress is not None and now - last_call >= 0.1:
            last_call = now
            progress(part, done[part], max(EXPECTED[part], done[part]), line[len("compiling "):])
    for t in threads:
        t.join(timeout=5.0)
    for part, child in children.items():
        if child.returncode != 0:
            last = errors[part][-1] if errors[part] else f"exit status {child.returncode}"
            print(f"sandbox warmup: the {part} half failed ({last}); compiling it here instead",
                  file=sys.stderr)
    warm_up()
    return time.perf_counter() - start


class _Printer:
    """Progress on stderr: one line per part, rewritten in place on a terminal, else a line every 25."""

    def __init__(self) -> None:
        self.tty = sys.stderr.isatty()
        self.state = {part: (0, EXPECTED[part], "") for part in PARTS}
        self.lock = threading.Lock()
        self.printed: dict[str, int] = {}

    def __call__(self, part: str, done: int, expected: int, name: str) -> None:
        with self.lock:
            self.state[part] = (done, expected, name)
            if self.tty:
                text = "   ".join(f"{p} {d}/~{e} {n[:28]:<28}" for p, (d, e, n) in self.state.items())
                sys.stderr.write("\r" + text[:160])
                sys.stderr.flush()
            elif done // 25 > self.printed.get(part, 0):
                self.printed[part] = done // 25
                print(f"  {part}: {done} of about {expected} compiled (now {name})", file=sys.stderr,
                      flush=True)


def compile_on_terminal(heading: str) -> float:
    """``compile_parallel`` with its progress on stderr (``_Printer``) under the line ``heading…``: what
    ``sandbox warmup`` and a headless run's first launch show. Returns the seconds it took."""
    print(f"{heading}...", file=sys.stderr, flush=True)
    printer = _Printer()
    seconds = compile_parallel(printer)
    if printer.tty:
        sys.stderr.write("\n")
    return seconds


def main(argv: list[str] | None = None) -> int:
    """``sandbox warmup``: compile every kernel into numba's cache, both halves in parallel."""
    parser = argparse.ArgumentParser(prog="sandbox warmup", description=__doc__.splitlines()[0])
    parser.add_argument("--part", choices=PARTS, help=argparse.SUPPRESS)  # a child's half
    args = parser.parse_args(argv)
    if args.part:
        return _child(args.part)
    seconds = compile_on_terminal("sandbox: compiling the physics kernels in parallel (cached afterwards)")
    print(f"sandbox: physics kernels ready in {seconds:.1f} s", file=sys.stderr)
    from .engine.core import kernel_cache

    kernel_cache.prune()  # older versions' kernels, beyond the few most recently used
    return 0


if __name__ == "__main__":
    sys.exit(main())
