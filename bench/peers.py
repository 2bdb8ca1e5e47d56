"""Where the peers' harness lives (``../shared/peers`` beside the repository) and how to run one scene."""

from __future__ import annotations

import json
import os
import subprocess
import sys
from pathlib import Path

ROOT = Path(__file__).resolve().parent.parent
PEERS_DIR = Path(os.environ.get("SANDBOX_PEERS", ROOT.parent / "shared" / "peers"))
ENV = {**os.environ, "OMP_NUM_THREADS": "1", "OPENBLAS_NUM_THREADS": "1", "RAYON_NUM_THREADS": "1",
       "NUMBA_NUM_THREADS": "1", "PYTHONPATH": os.pathsep.join([str(ROOT), str(PEERS_DIR)])}


def run_scene(engine: str, scene: str, n: int, steps: int, extra: list[str]) -> dict:
    """Run one scene on one engine in a fresh process and return its JSON line (or an error)."""
    if engine == "sandbox":
        cmd = [sys.executable, "-m", "bench.ours_peer"]
        cwd = ROOT
    else:
        cmd = [sys.executable, str(PEERS_DIR / f"{engine}_scenes.py")]
        cwd = PEERS_DIR
    cmd += [scene, "--n", str(n), "--steps", str(steps), *extra]
    proc = subprocess.run(cmd, capture_output=True, text=True, env=ENV, cwd=cwd)
    lines = [ln for ln in proc.stdout.splitlines() if ln.startswith("{")]
    if proc.returncode or not lines:
        return {"scene": scene, "error": (proc.stderr.strip().splitlines() or ["no output"])[-1]}
    return json.loads(lines[-1])
