"""Contact storage: the manifolds of the last step (``ContactArrays``), the solver's per-point state
(``ContactSolverData``), and the collision events built from them after the step."""

from __future__ import annotations

from dataclasses import dataclass

import numpy as np

from .core.solver import ROW


class ContactArrays:
    """The manifolds of the last step, rows ``[:count]``: bodies ``body_a``, ``body_b``, unit ``normal``
    (A to B), ``npoints`` (1–4), world ``points_a``/``points_b`` (on A and on B), ``depth`` (> 0 when
    overlapping, < 0 for speculative contacts), and ``impulse``, the normal impulse (N·s) each point took
    in the last step."""

    def __init__(self, capacity: int = 256) -> None:
        self.count = 0
        self.capacity = 0
        self.ensure(capacity)

    def ensure(self, capacity: int) -> None:
        """Make room for ``capacity`` manifolds (doubling; contents are not kept)."""
        if capacity <= self.capacity:
            return
        cap = max(capacity, 2 * self.capacity, 16)
        self.body_a = np.zeros(cap, np.int64)
        self.body_b = np.zeros(cap, np.int64)
        self.normal = np.zeros((cap, 3))
        self.npoints = np.zeros(cap, np.int64)
        self.points_a = np.zeros((cap, 4, 3))
        self.points_b = np.zeros((cap, 4, 3))
        self.depth = np.zeros((cap, 4))
        self.impulse = np.zeros((cap, 4))
        self.first = np.zeros(cap, np.int64)  # index of each manifold's first solver point
        self.capacity = cap

    def point_count(self) -> int:
        """Total number of contact points in the last step's manifolds."""
        return int(self.npoints[: self.count].sum())


class ContactSolverData:
    """Per-point solver state (see ``core/solver.py`` for the meaning of each array and of the columns
    of ``cp``), grown by doubling, plus the persistent copy of last step's impulses that warm starting
    matches against."""

    def __init__(self) -> None:
        self.capacity = 0
        self.prev_m = 0
        self.prev_key = np.zeros(1, np.int64)
        self.prev_first = np.zeros(1, np.int64)
        self.prev_np = np.zeros(1, np.int64)
        self.prev_la = np.zeros((1, 3))
        self.prev_ln = np.zeros(1)
        self.prev_lt = np.zeros((1, 3))
        self.ensure(64)

    def ensure(self, points: int) -> None:
        if points <= self.capacity:
            return
        cap = max(points, 2 * self.capacity)
        self.cb = np.zeros((cap, 2), np.int64)
        self.cm = np.zeros(cap, np.int64)
        self.cra = np.zeros((cap, 3))
        self.crb = np.zeros((cap, 3))
        self.cla = np.zeros((cap, 3))
        self.clb = np.zeros((cap, 3))
        self.cp = np.zeros((cap, ROW))
        self.capacity = cap

    def tuple(self) -> tuple:
        """The arrays in the order the kernels unpack them."""
        return (self.cb, self.cm, self.cra, self.crb, self.cla, self.clb, self.cp)

    def keep_buffers(self, manifolds: int, points: int) -> tuple:
        """Fresh arrays to receive this step's impulses for the next step's warm start."""
        return (np.zeros(max(manifolds, 1), np.int64), np.zeros(max(manifolds, 1), np.int64),
                np.zeros(max(manifolds, 1), np.int64), np.zeros((max(points, 1), 3)),
                np.zeros(max(points, 1)), np.zeros((max(points, 1), 3)))

    def forget(self) -> None:
        """Drop the persistent impulses (after bodies were removed or rows reused)."""
        self.prev_m = 0


@dataclass(frozen=True)
class CollisionEvent:
    """A collision begin or end between two bodies, reported after the step that saw it.

    For a begin event: a contact ``point`` (world), the ``normal`` from ``body_a`` to ``body_b`` and the
    total normal ``impulse`` (N·s) of that first step; for an end event those are None."""

    kind: str  # "begin" or "end"
    body_a: object
    body_b: object
    point: np.ndarray | None = None
    normal: np.ndarray | None = None
    impulse: float | None = None
