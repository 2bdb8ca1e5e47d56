"""Snapshot benchmark: ``python -m bench.snapshot``.

On the 1 000-body S1 pile (``scenes.s1_pile``), stepped at 60 Hz with a snapshot after every step (as a
rewind history would take them), prints per phase of the run (falling, settling, settled):

- the cost of one ``World.snapshot()`` as a percentage of one step (target: under 5 %);
- the memory a history of such snapshots costs: the bytes each snapshot adds to the one before it (arrays
  whose bits did not change are shared), as MB per minute of history at 60 Hz (target: under 50 MB/min);
- the same for the compact forms a history can keep instead: per step only the moving state (position,
  orientation, velocities, awake flag, rest timer) of the rows that changed, plus a full snapshot every
  ``--every`` steps to restore from and replay; or only the full snapshots (a seek replays up to
  ``--every`` steps).

The size of one full snapshot, the time of one ``World.restore`` and the keyframe spacing that keeps a
``History`` (``engine/snapshot.py``) under 50 MB/min are printed too.
"""

from __future__ import annotations

import argparse
import time

import numpy as np

from sandbox import scenes
from sandbox.engine import World
from sandbox.engine.snapshot import Snapshot

HZ = 60
COMPACT = ("pos", "quat", "vel", "angvel", "awake", "sleep_time")
"""What a per-step compact frame keeps: the moving state, enough to draw the step and to check a replay."""


def compact_bytes(snap: Snapshot, previous: Snapshot) -> int:
    """Bytes of a compact frame of ``snap`` after ``previous``: the ``COMPACT`` fields of the rows whose
    state changed (a sleeping body's row does not), plus those rows' indices."""
    a, b = snap.bodies, previous.bodies
    n = min(snap.n, previous.n)
    changed = np.zeros(snap.n, bool)
    changed[n:] = True
    for name in COMPACT:
        x, y = a[name][:n], b[name][:n]
        changed[:n] |= (x != y).reshape(n, -1).any(axis=1)
    rows = int(changed.sum())
    per_row = sum(a[name][0].nbytes if snap.n else 0 for name in COMPACT)
    return rows * (per_row + 8)


def run(n: int, seconds: float, every: int) -> None:
    w = World()
    scenes.s1_pile(w, n)
    dt = 1.0 / HZ
    for _ in range(3):  # compile and warm up outside the timing
        w.step(dt)
    w.snapshot()
    steps = int(seconds * HZ)
    step_ms = np.zeros(steps)
    snap_ms = np.zeros(steps)
    added = np.zeros(steps)  # bytes each snapshot adds to the previous one
    compact = np.zeros(steps)
    full = np.zeros(steps)  # bytes of a snapshot on its own
    awake = np.zeros(steps)
    prev = w.snapshot()
    clock = time.perf_counter
    for k in range(steps):
        t0 = clock()
        w.step(dt)
        t1 = clock()
        snap = w.snapshot()
        t2 = clock()
        step_ms[k], snap_ms[k] = 1e3 * (t1 - t0), 1e3 * (t2 - t1)
        added[k] = snap.nbytes(since=prev)
        full[k] = snap.nbytes()
        compact[k] = compact_bytes(snap, prev)
        awake[k] = int(w.data.awake[: w.data.n].sum())
        prev = snap
    t = clock()
    for _ in range(5):
        w.restore(prev)
    restore_ms = 1e3 * (clock() - t) / 5

    per_min = HZ * 60 / 1e6  # bytes per step -> MB per minute
    print(f"## Snapshots on the S1 pile: {n} bodies, {seconds:g} s at {HZ} Hz, a snapshot after every step\n")
    print("| phase | steps | awake | step ms | snapshot ms | snapshot / step | full snapshot MB | "
          "history MB/min | compact + full every "
          f"{every} MB/min | full every {every} MB/min |")
    print("|---|---|---|---|---|---|---|---|---|---|")
    cuts = sorted({0, min(steps, 2 * HZ), min(steps, 6 * HZ), steps})
    phases = list(zip(cuts[:-1], cuts[1:], strict=True)) + [(0, steps)]
    names = ["falling", "settling", "settled"][: len(cuts) - 1] + ["whole run"]
    for name, (a, b) in zip(names, phases, strict=True):
        s = slice(a, b)
        step, snapt = np.median(step_ms[s]), np.median(snap_ms[s])
        keyframes = full[s].mean() / every
        print(f"| {name} | {b - a} | {awake[s].mean():.0f} | {step:.2f} | {snapt:.3f} | "
              f"{100 * snapt / step:.1f} % | {full[s].mean() / 1e6:.2f} | {added[s].mean() * per_min:.0f} | "
              f"{(compact[s].mean() + keyframes) * per_min:.0f} | {keyframes * per_min:.0f} |")
    print(f"\nrestore: {restore_ms:.2f} ms; snapshot cost over the whole run (mean): "
          f"{100 * snap_ms.mean() / step_ms.mean():.1f} % of a step")
    # the keyframe spacing that keeps a ``History`` under 50 MB per minute, and what a seek then costs
    spacing = int(np.ceil(full.mean() * per_min / 50.0))
    print(f"a History with a keyframe every {spacing} steps stays under 50 MB/min "
          f"({full.mean() * per_min / spacing:.0f} MB/min); a seek then replays up to {spacing} steps "
          f"(about {spacing * np.median(step_ms) / 1e3:.1f} s at this step time, {spacing // 2} on average)")


def main() -> None:
    ap = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    ap.add_argument("--bodies", type=int, default=1000)
    ap.add_argument("--seconds", type=float, default=20.0, help="simulated seconds (default 20)")
    ap.add_argument("--every", type=int, default=60, help="steps between full snapshots in the compact forms")
    args = ap.parse_args()
    run(args.bodies, args.seconds, args.every)


if __name__ == "__main__":
    main()
