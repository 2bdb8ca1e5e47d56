"""Our engine as an engine of the peers' harness (``shared/peers/common.py``), with the settings of
``shared/SCENES.md``: sleeping off, friction 0.5, one step call per 1/60 s step (the engine's own
sub-steps inside, by design). Run by ``bench.scenes`` as ``python -m bench.ours_peer SCENE [--n N] ...``.

The harness is z-up and the engine y-up: harness (x, y, z) is our (x, z, −y)."""

from __future__ import annotations

import sys
from importlib.metadata import PackageNotFoundError, version

import numpy as np

from bench.peers import PEERS_DIR

sys.path.insert(0, str(PEERS_DIR))
from common import DT, FRICTION, G, main  # noqa: E402  (the harness lives outside the package)

from sandbox.engine import Box, Sphere, World  # noqa: E402


def to_ours(p) -> tuple[float, float, float]:
    x, y, z = p
    return (x, z, -y)


def to_harness(a: np.ndarray) -> np.ndarray:
    return np.stack([a[:, 0], -a[:, 2], a[:, 1]], axis=1)


def _version() -> str:
    try:
        return f"sandbox {version('sandbox')}"
    except PackageNotFoundError:
        return "sandbox (source tree)"


class Engine:
    name = "sandbox"
    version = _version()
    settings = {
        "solver": "soft-step sequential impulses: 4 sub-steps, 10 velocity iterations per step shared over "
                  "them (3, 3, 2, 2) + 1 relax each, warm starting, restitution after the sub-steps",
        "sleeping": "off",
        "friction_combine": "sqrt(a*b) (0.5 effective)",
        "restitution_combine": "product",
        "ccd": "speculative contacts with a margin of the step's travel",
        "ground": "static box 400 x 1 x 400 m, top at height 0",
        "threads": "1 (bench.peers sets NUMBA_NUM_THREADS=1: the parallel loops run on one thread)",
    }

    @staticmethod
    def combine_restitution(a: float, b: float) -> float:
        return a * b

    def __init__(self, gravity: float = -G, ccd: bool = False) -> None:
        self.w = World(gravity=(0.0, gravity, 0.0))
        self.w.ccd = ccd
        self.w.sleeping = False
        self.rows: list[int] = []

    def ground(self, restitution: float = 0.0) -> None:
        self.w.add_body(Box((200.0, 0.5, 200.0)), position=(0, -0.5, 0), mass=0.0, friction=FRICTION,
                        restitution=restitution)

    def _add(self, shape, pos, mass, restitution, vel) -> None:
        b = self.w.add_body(shape, position=to_ours(pos), mass=mass, friction=FRICTION,
                            restitution=restitution, velocity=to_ours(vel))
        if mass > 0:
            self.rows.append(b.index)

    def box(self, half, pos, mass=1.0, restitution=0.0, vel=(0, 0, 0)) -> None:
        hx, hy, hz = tuple(half) if np.ndim(half) else (half,) * 3
        self._add(Box((hx, hz, hy)), pos, mass, restitution, vel)

    def sphere(self, radius, pos, mass=1.0, restitution=0.0, vel=(0, 0, 0)) -> None:
        self._add(Sphere(radius), pos, mass, restitution, vel)

    def build(self) -> None:
        # load the compiled kernels outside the timed loop, on a throwaway world
        w = World(gravity=(0.0, -G, 0.0))
        w.sleeping = False
        w.add_body(Box((5, 0.5, 5)), position=(0, -0.5, 0), mass=0.0)
        w.add_body(Sphere(0.5), position=(0, 0.45, 0))
        w.add_body(Box((0.5, 0.5, 0.5)), position=(0.2, 1.4, 0))
        for _ in range(3):
            w.step(DT)
        self._rows = np.array(self.rows, dtype=np.int64)

    def step(self) -> None:
        self.w.step(DT)

    def state(self) -> tuple[np.ndarray, np.ndarray]:
        d = self.w.data
        return to_harness(d.pos[self._rows]), to_harness(d.vel[self._rows])


if __name__ == "__main__":
    main(Engine)
