"""Contact storage: the manifolds of the last step (``ContactArrays``), the solver's per-point state
(``ContactSolverData``), and the collision events built from them after the step."""

from __future__ import annotations

from dataclasses import dataclass

import numpy as np

from .bodies import Body
from .core.contact_rows import ND, NF, NI, NV, STRIDE
from .core.records import Blocks, CachedManifolds, ContactPoints, Manifolds, StoredImpulses
from .core.threads import available_threads


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

    def manifolds(self) -> Manifolds:
        """The manifold arrays as the record the narrow phase and the manifold cache write into."""
        return Manifolds(self.body_a, self.body_b, self.normal, self.npoints, self.points_a, self.points_b,
                         self.depth)

    def point_count(self) -> int:
        """Total number of contact points in the last step's manifolds."""
        return int(self.npoints[: self.count].sum())

    # the fields a reader of the last step's contacts sees (``first`` is the next step's to write)
    STATE = ("body_a", "body_b", "normal", "npoints", "points_a", "points_b", "depth", "impulse")

    def state(self) -> dict[str, np.ndarray]:
        """The last step's manifolds, rows ``[:count]`` by field name (views: see ``STATE``)."""
        return {name: getattr(self, name)[: self.count] for name in self.STATE}

    def set_state(self, state: dict[str, np.ndarray]) -> None:
        """Make the manifolds those of ``state`` (copies of a ``state()``), copying them in."""
        count = len(state["body_a"])
        self.ensure(count)
        for name in self.STATE:
            getattr(self, name)[:count] = state[name]
        self.count = count


class ContactSolverData:
    """The solver's state (see ``core/contact_rows.py`` for the meaning of ``cw``): per contact point,
    per manifold (the colouring's order) and per block, plus the wide array ``cw`` of the points' fields,
    each grown by doubling; and the persistent copy of last step's impulses that warm starting matches
    against."""

    def __init__(self) -> None:
        self.points = 0
        self.manifolds = 0
        self.bodies = 0
        self.prev_m = 0
        self.prev_key = np.zeros(1, np.int64)
        self.prev_first = np.zeros(1, np.int64)
        self.prev_np = np.zeros(1, np.int64)
        self.prev_la = np.zeros((1, 3))
        self.prev_ln = np.zeros(1)
        self.prev_lt = np.zeros((1, 3))
        self._spare: tuple | None = None
        self.cw = np.zeros(NF * STRIDE)
        # a block's lane rows, one set per thread (the solver runs the blocks of a colour side by side)
        threads = available_threads()
        self.V = np.zeros(NV * STRIDE * threads)  # a block's gathered body velocities and inverse masses
        self.D = np.zeros(ND * STRIDE * threads)  # a block's displacements since the step began
        self.Inv = np.zeros(NI * STRIDE * threads)  # a block's inverse inertias and masses, for the Jacobians
        self.ensure(64, 16, 16)

    def ensure(self, points: int, manifolds: int, bodies: int) -> None:
        """Make room for this many contact points, manifolds and bodies (contents are not kept)."""
        if points > self.points:
            cap = max(points, 2 * self.points)
            self.cb = np.zeros((cap, 2), np.int64)
            self.cla = np.zeros((cap, 3))
            self.clb = np.zeros((cap, 3))
            self.cidx = np.zeros(cap, np.int64)
            self.points = cap
        if manifolds > self.manifolds:
            cap = max(manifolds, 2 * self.manifolds)
            self.order = np.zeros(cap, np.int64)
            self.blk_start = np.zeros(cap, np.int64)
            self.blk_lanes = np.zeros(cap, np.int64)
            self.blk_slots = np.zeros(cap, np.int64)
            self.blk_off = np.zeros(cap, np.int64)
            self.color = np.zeros(cap, np.int64)
            self.match = np.zeros(cap, np.int64)  # each manifold's row in last step's, or -1
            self.manifolds = cap
        if bodies > self.bodies:
            self.mask = np.zeros(max(bodies, 2 * self.bodies), np.int64)
            self.bodies = len(self.mask)

    def ensure_wide(self, floats: int) -> None:
        """Make room for ``floats`` values in the wide array (contents are not kept)."""
        if floats > len(self.cw):
            self.cw = np.zeros(max(floats, 2 * len(self.cw)))

    def points_record(self) -> ContactPoints:
        """The per-point arrays as the kernels' ``ContactPoints`` record."""
        return ContactPoints(self.cb, self.cla, self.clb, self.cidx, self.cw)

    def blocks_record(self) -> Blocks:
        """The colouring's order and the block tables as the kernels' ``Blocks`` record."""
        return Blocks(self.order, self.blk_start, self.blk_lanes, self.blk_slots, self.blk_off, self.color)

    def previous(self) -> StoredImpulses:
        """Last step's stored impulses, which this step's warm start matches against."""
        return StoredImpulses(self.prev_m, self.prev_key, self.prev_first, self.prev_np, self.prev_la,
                              self.prev_ln, self.prev_lt)

    def keep_buffers(self, manifolds: int, points: int) -> StoredImpulses:
        """The spare set of persistence arrays (key, first point, point count per manifold; anchor,
        normal and friction impulse per point), big enough for this step's impulses; ``keep`` then
        makes it the set that the next step matches against. Two sets take turns, so nothing is
        allocated in a steady state."""
        spare = self._spare
        if spare is None or len(spare[0]) < manifolds or len(spare[3]) < points:
            m = max(manifolds, 1, 2 * (0 if spare is None else len(spare[0])))
            p = max(points, 1, 2 * (0 if spare is None else len(spare[3])))
            spare = (np.zeros(m, np.int64), np.zeros(m, np.int64), np.zeros(m, np.int64), np.zeros((p, 3)),
                     np.zeros(p), np.zeros((p, 3)))
            self._spare = spare
        return StoredImpulses(manifolds, *spare)

    def keep(self, manifolds: int) -> None:
        """Make the spare set (just filled by ``store_impulses``) last step's, for the next warm start."""
        old = (self.prev_key, self.prev_first, self.prev_np, self.prev_la, self.prev_ln, self.prev_lt)
        self.prev_key, self.prev_first, self.prev_np, self.prev_la, self.prev_ln, self.prev_lt = self._spare
        self._spare = old
        self.prev_m = manifolds

    def forget(self) -> None:
        """Drop the persistent impulses (after bodies were removed or rows reused)."""
        self.prev_m = 0

    def stored(self) -> StoredImpulses:
        """Last step's stored impulses (the warm-start state), trimmed to the used rows (views)."""
        m = self.prev_m
        k = int((self.prev_first[:m] + self.prev_np[:m]).max()) if m else 0
        return StoredImpulses(m, self.prev_key[:m], self.prev_first[:m], self.prev_np[:m], self.prev_la[:k],
                              self.prev_ln[:k], self.prev_lt[:k])

    def set_stored(self, stored: StoredImpulses) -> None:
        """Make ``stored`` (a copy of a ``stored()``) last step's impulses, copying it in (the next step's
        ``keep`` hands these arrays on as its spare set and writes into them)."""
        self.prev_key, self.prev_first, self.prev_np, self.prev_la, self.prev_ln, self.prev_lt = (
            np.concatenate([a, np.zeros((1, *a.shape[1:]), a.dtype)]) for a in stored[1:])
        self.prev_m = stored.count


class ManifoldCache:
    """Last step's manifolds kept in their bodies' frames, for reuse while a pair hardly moves (see
    ``core/manifold_cache.py``): sorted pair keys, body pairs (A, B), the relative pose each was computed
    at, the normal in A's frame, point counts, points in A's and B's frames. Two sets take turns."""

    def __init__(self) -> None:
        self.count = 0
        self.current = self._arrays(16)
        self.spare = self._arrays(16)

    @staticmethod
    def _arrays(cap: int) -> CachedManifolds:
        return CachedManifolds(np.zeros(cap, np.int64), np.zeros((cap, 2), np.int64), np.zeros((cap, 7)),
                               np.zeros((cap, 3)), np.zeros(cap, np.int64), np.zeros((cap, 4, 3)),
                               np.zeros((cap, 4, 3)))

    def spare_for(self, manifolds: int) -> CachedManifolds:
        """The spare set, big enough for ``manifolds`` entries."""
        if len(self.spare.keys) < manifolds:
            self.spare = self._arrays(max(manifolds, 2 * len(self.spare.keys)))
        return self.spare

    def swap(self, count: int) -> None:
        """Make the spare set (just filled) the current one."""
        self.current, self.spare = self.spare, self.current
        self.count = count

    def forget(self) -> None:
        """Drop every entry (after bodies were removed or rows reused)."""
        self.count = 0

    def entries(self) -> CachedManifolds:
        """The current entries, trimmed to the used rows (views)."""
        return CachedManifolds(*(a[: self.count] for a in self.current))

    def set_entries(self, entries: CachedManifolds) -> None:
        """Make ``entries`` (a copy of an ``entries()``) the current set, copying it in."""
        self.current = CachedManifolds(*(np.concatenate([a, np.zeros((1, *a.shape[1:]), a.dtype)])
                                         for a in entries))
        self.count = len(entries.keys)


@dataclass(frozen=True, eq=False)
class CollisionEvent:
    """A collision begin or end between two bodies, reported after the step that saw it.

    For a begin event: a contact ``point`` (world), the ``normal`` from ``body_a`` to ``body_b`` and the
    total normal ``impulse`` (N·s) of that first step; for an end event those are None. The handles name
    the bodies as they were at that step, so an event stays readable after either body is removed (its
    handle then reports ``alive`` False). Events compare by identity: their arrays have no single truth
    value to compare by."""

    kind: str  # "begin" or "end"
    body_a: Body
    body_b: Body
    point: np.ndarray | None = None
    normal: np.ndarray | None = None
    impulse: float | None = None
