"""Milliseconds per step, stage by stage, with one thread and with more: ``python -m bench.threads``.

Runs S1 pile 1000, S1 pile 4096 and S3 spheres of ``shared/SCENES.md`` (the peers' scene builders, through
``bench.ours_peer``'s engine, so the scenes are exactly those of ``bench.scenes``) with ``World.threads``
set to each of ``--threads`` (default 1 and 2), the thread counts one after another in one process and
the whole set ``--repeats`` times, so that a slow spell of a busy machine hits every count alike. Prints,
per scene and thread count, the median over the repeats of the ms per step (the harness's clock) and of
each stage's mean ms (``World.timings``), and the speed-up over the first thread count; the last row,
``cores``, is the CPU time the process got over the wall time (the cores' worth it had), and the load
average is printed with each scene: on a machine shared with other programs the parallel runs get less
than a core per thread. Every run's final ``state_hash`` must match the first count's: the engine's
results do not depend on the thread count.

Beside every run of a scene it measures what the machine itself gives at that moment (``Machine``): the
speed-up of two loops with nothing of the engine in them, each thread working on its own share, one
computing (no memory traffic) and one streaming arrays four times the size of the last-level cache
through memory, as the solver's passes stream the contact rows of a large scene; each scene's table
ends with their medians over the scene's repeats, and the engine's speed-up over the compute loop's.
The stages that stream memory cannot scale better than the second, whatever the engine does; and on a
machine shared with other programs (this project's two cores are a virtual machine's) the first moves
from run to run: on the development machine, 1.54x in one run of the script and 2.01x in the next, the
engine's speed-up moving with it, which is why the two are measured side by side.

A world of fewer than ``core.threads.PARALLEL_BODIES`` bodies steps on one thread whatever
``World.threads`` says (the S1 pile of 1000: its table then shows the serial step at every count, and
says so); ``--any-size`` lifts that rule, to measure what the threads would do there.
"""

from __future__ import annotations

import argparse
import math
import os
import statistics
import sys
import time

import numba
import numpy as np
from numba import njit, prange

from bench.ours_peer import Engine
from bench.peers import PEERS_DIR
from sandbox.engine.core import threads as engine_threads
from sandbox.engine.world import STAGES

sys.path.insert(0, str(PEERS_DIR))
from common import DT, JITTER, s1_pile, s3_spheres  # noqa: E402  (the harness lives outside the package)

RUNS = [  # (label, builder, n, steps)
    ("S1 pile 1000", s1_pile, 1000, 600),
    ("S1 pile 4096", s1_pile, 4096, 300),
    ("S3 spheres", s3_spheres, 4000, 600),
]


class ThreadedEngine(Engine):
    """``bench.ours_peer``'s engine with ``World.threads`` set, summing ``World.timings`` over the steps."""

    threads = 1
    last: ThreadedEngine | None = None

    def __init__(self, *args, **kwargs) -> None:
        super().__init__(*args, **kwargs)
        self.w.threads = self.threads
        self.stage_ms = dict.fromkeys(STAGES, 0.0)
        self.steps = 0
        self.cpu = self.wall = 0.0
        ThreadedEngine.last = self

    def step(self) -> None:
        c0, t0 = time.process_time(), time.perf_counter()
        self.w.step(DT)
        self.cpu += time.process_time() - c0
        self.wall += time.perf_counter() - t0
        for k, v in self.w.timings.items():
            self.stage_ms[k] += v
        self.steps += 1


@njit(cache=True, parallel=True)
def _compute(shares, n, out):
    """Share t of ``shares`` adds up its n / ``shares`` sines into ``out[t]``: arithmetic only, no memory
    traffic."""
    for t in prange(shares):
        s = 0.0
        for i in range(n // shares):
            s += math.sin(1e-3 * i + t)
        out[t] = s


@njit(cache=True, parallel=True)
def _stream(shares, a, b):
    """Share t of ``shares`` streams its part of ``a`` into ``b`` (b ← 1.0001·a + b) four times: two
    loads and a store per element, as a solver pass's lane loops read and write the contact rows."""
    size = len(a) // shares
    for t in prange(shares):
        for _ in range(4):
            for i in range(t * size, (t + 1) * size):
                b[i] = 1.0001 * a[i] + b[i]


class Machine:
    """The machine's own speed-up (see the module): ``sample(t)`` times the two loops on ``t`` threads,
    the work the same at every count, split in as many shares."""

    def __init__(self, threads: list[int]) -> None:
        self.out = np.zeros(max(threads))
        self.a = np.random.default_rng(0).random(4 * 1024 * 1024)  # 32 MB: four times a typical 8 MB L3
        self.b = np.zeros_like(self.a)
        self.times: dict[str, dict[int, list[float]]] = {"compute": {t: [] for t in threads},
                                                         "streaming": {t: [] for t in threads}}
        for t in threads:  # compile (or load) and touch the arrays once, untimed
            numba.set_num_threads(t)
            _compute(t, 1000, self.out)
            _stream(t, self.a, self.b)
        numba.set_num_threads(numba.config.NUMBA_NUM_THREADS)

    def sample(self, t: int) -> None:
        """Time each loop once on ``t`` threads."""
        numba.set_num_threads(t)
        t0 = time.perf_counter()
        _compute(t, 10_000_000, self.out)
        t1 = time.perf_counter()
        _stream(t, self.a, self.b)
        t2 = time.perf_counter()
        numba.set_num_threads(numba.config.NUMBA_NUM_THREADS)
        self.times["compute"][t].append(t1 - t0)
        self.times["streaming"][t].append(t2 - t1)

    def take(self) -> dict[str, list[float]]:
        """The medians of the samples taken since the last ``take`` (seconds per thread count, per loop),
        and a fresh start."""
        out = {k: [statistics.median(v[t]) for t in v] for k, v in self.times.items()}
        for v in self.times.values():
            for samples in v.values():
                samples.clear()
        return out


def run(builder, n: int, steps: int, threads: int) -> tuple[float, dict[str, float], str]:
    """One run of a scene: (ms per step, mean ms per stage, final state hash). The stages include
    ``cores``: the process's CPU time over the wall time of the steps, the cores' worth it got (near the
    thread count on an idle machine; lower when other programs take the cores)."""
    ThreadedEngine.threads = threads
    result = builder(ThreadedEngine, n, steps, JITTER)
    e = ThreadedEngine.last
    stages = {k: v / e.steps for k, v in e.stage_ms.items()}
    stages["cores"] = e.cpu / max(e.wall, 1e-9)
    return result["ms_per_step"], stages, e.w.state_hash()


def main() -> None:
    ap = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    ap.add_argument("--threads", nargs="+", type=int, default=[1, 2])
    ap.add_argument("--repeats", type=int, default=3)
    ap.add_argument("--only", nargs="+", help="scene labels' first words, e.g. S1 or S3")
    ap.add_argument("--steps", type=float, default=1.0, help="fraction of each scene's steps to run")
    ap.add_argument("--any-size", action="store_true",
                    help="run every scene on the threads asked for, also one below PARALLEL_BODIES bodies")
    a = ap.parse_args()
    if a.any_size:
        engine_threads.PARALLEL_BODIES = 0
    machine = Machine(a.threads)
    for label, builder, n, steps in RUNS:
        if a.only and label.split()[0] not in a.only:
            continue
        k = max(1, round(steps * a.steps))
        per: dict[int, list[tuple[float, dict[str, float]]]] = {t: [] for t in a.threads}
        hashes = set()
        load = os.getloadavg()[0]
        for _ in range(a.repeats):
            for t in a.threads:
                machine.sample(t)
                ms, stages, h = run(builder, n, k, t)
                per[t].append((ms, stages))
                hashes.add(h)
        print(f"\n{label}, {k} steps, median of {a.repeats}; "
              f"final states {'identical' if len(hashes) == 1 else 'DIFFERENT'} across thread counts; "
              f"load average {load:.1f} before, {os.getloadavg()[0]:.1f} after")
        bodies = ThreadedEngine.last.w.data.n  # the world's own count, ground included
        if max(a.threads) > 1 and engine_threads.step_threads(max(a.threads), bodies) == 1:
            print(f"({bodies} bodies, fewer than PARALLEL_BODIES = {engine_threads.PARALLEL_BODIES}: every "
                  "count steps on one thread, core/threads.py; --any-size lifts the rule)")
        print("| stage | " + " | ".join(f"{t} thr ms" for t in a.threads) + " | speed-up |")
        print("|---|" + "---|" * (len(a.threads) + 1))
        rows = [("step (harness clock)", [statistics.median(ms for ms, _ in per[t]) for t in a.threads])]
        rows += [(s, [statistics.median(st[s] for _, st in per[t]) for t in a.threads])
                 for s in (*STAGES, "cores")]
        loops = machine.take()
        rows += [(f"machine: {name} loop (s)", vals) for name, vals in loops.items()]
        for name, vals in rows:
            speed = "" if name == "cores" else f"{vals[0] / vals[-1]:.2f}x" if vals[-1] > 0 else "-"
            print(f"| {name} | " + " | ".join(f"{v:.3f}" for v in vals) + f" | {speed} |")
        step, compute = rows[0][1], loops["compute"]
        if engine_threads.step_threads(max(a.threads), bodies) > 1:
            print(f"\nthe step's speed-up over the compute loop's, in the same runs: "
                  f"{(step[0] / step[-1]) / (compute[0] / compute[-1]):.2f}")


if __name__ == "__main__":
    main()
