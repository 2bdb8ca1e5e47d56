"""Contact storage: the manifolds of the last step (``ContactArrays``), the solver's per-point state
(``ContactSolverData``), and the collision events built from them after the step."""

from __future__ import annotations

from dataclasses import dataclass

import numpy as np

from .bodies import Body, aligned_zeros
from .core.contact_rows import ND, NF, NI, NV, STRIDE, L
from .core.records import Blocks, CachedManifolds, ContactPoints, Manifolds, StoredImpulses
from .core.threads import available_threads

# a step whose work arrays took more than this releases them after it (ContactSolverData.release_scratch)
SCRATCH_KEPT = 64 * 2**20  # bytes


def grow(capacity: int, needed: int) -> int:
    """The capacity an array that holds ``capacity`` rows and must now hold ``needed`` grows to: by half
    again at least (so that a count rising step by step reallocates O(log n) times, at most half of the
    rows unused), and exactly ``needed`` when that is more (a pile's first step needs no slack)."""
    return max(needed, capacity + capacity // 2, 16)


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
        """Make room for ``capacity`` manifolds (``grow``; contents are not kept)."""
        if capacity <= self.capacity:
            return
        cap = grow(self.capacity, capacity)
        self.body_a = np.zeros(cap, np.int64)
        self.body_b = np.zeros(cap, np.int64)
        self.normal = np.zeros((cap, 3))
        self.npoints = np.zeros(cap, np.int64)
        self.points_a = np.zeros((cap, 4, 3))
        self.points_b = np.zeros((cap, 4, 3))
        self.depth = np.zeros((cap, 4))
        self.impulse = np.zeros((cap, 4))
        self.first = np.zeros(cap, np.int64)  # index of each manifold's first solver point
        # the row each manifold's normal, points and depths are in until the narrow phase's last pass
        # moves them (narrowphase.collide_pairs' row_of, World._move_rows)
        self.row = np.zeros(cap, np.int64)
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
    each grown geometrically (``grow``); and the persistent copy of last step's impulses that warm
    starting matches against."""

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
        # a block's lane rows, one set per thread (the solver runs the blocks of a colour side by side)
        threads = available_threads()
        # float32, as the wide rows: the lanes compute in single precision (contact_rows.py)
        # (64-byte aligned, as cw: a row of 32 lanes is then two whole cache lines)
        self.V = aligned_zeros(NV * STRIDE * threads, np.float32)  # a block's body velocities, inverse masses
        self.D = aligned_zeros(ND * STRIDE * threads, np.float32)  # a block's displacements since the step
        self.Inv = np.zeros(NI * STRIDE * threads)  # a block's inverse inertias and masses, for the Jacobians
        self.lane_body = np.zeros(2 * L, np.uint64)
        self.graph_count = np.full(1, -1, np.int64)  # manifolds of the last colouring (-1: none kept)
        self.colouring: tuple = ()  # what color_contacts returned for it, and the m_first it filled
        self.release_scratch()

    def lane_body_array(self, blocks: int) -> np.ndarray:
        """Room for the body rows of the lanes of ``blocks`` coloured blocks, a then b for each
        (``SolverContacts.lane_body``; contents not kept)."""
        if len(self.lane_body) < blocks * 2 * L:
            self.lane_body = np.zeros(grow(len(self.lane_body), blocks * 2 * L), np.uint64)
        return self.lane_body

    def lane_rows(self, threads: int) -> tuple[np.ndarray, np.ndarray]:
        """The first ``threads`` sets of a block's lane rows ``V`` and ``D`` (views): the solver runs a pass
        on one thread per set (``contact_solver.solve_colours``), so handing it only the sets of the
        threads in use keeps a step that runs on one thread (a world below ``PARALLEL_BODIES`` bodies)
        from launching a parallel loop per pass on a pool of several."""
        return self.V[:NV * STRIDE * threads], self.D[:ND * STRIDE * threads]

    def release_scratch(self) -> None:
        """Drop the step's work arrays (all but last step's impulses), keeping small ones in their place:
        after a step that needed hundreds of megabytes (a pile spawned at one point) they are not kept
        for steps that need a fraction of it, nor held while the step's events are made."""
        self.points = self.manifolds = self.bodies = 0
        self.cw = aligned_zeros(NF * STRIDE, np.float32)
        self.ensure(64, 16, 16)

    def scratch_bytes(self) -> int:
        """Bytes of the step's work arrays (``release_scratch``), counted when one of them was last
        reallocated (every step asks; summing thirteen arrays' sizes cost 5 µs of a 0.8 ms step)."""
        return self._scratch_bytes

    def _count_scratch(self) -> None:
        self._scratch_bytes = sum(a.nbytes for a in (
            self.cb, self.cla, self.clb, self.cidx, self.order, self.blk_start, self.blk_lanes,
            self.blk_slots, self.blk_off, self.color, self.match, self.mask, self.cw))

    def ensure(self, points: int, manifolds: int, bodies: int) -> None:
        """Make room for this many contact points, manifolds and bodies (contents are not kept)."""
        grew = points > self.points or manifolds > self.manifolds or bodies > self.bodies
        if points > self.points:
            cap = grow(self.points, points)
            # int32 where a value is a row (of bodies, manifolds, blocks) and not an offset into cw
            self.cb = np.zeros((cap, 2), np.int32)
            self.cla = np.zeros((cap, 3))
            self.clb = np.zeros((cap, 3))
            self.cidx = np.zeros(cap, np.int64)
            self.points = cap
        if manifolds > self.manifolds:
            cap = grow(self.manifolds, manifolds)
            self.order = np.zeros(cap, np.int32)
            self.blk_start = np.zeros(cap, np.int32)
            self.blk_lanes = np.zeros(cap, np.int32)
            self.blk_slots = np.zeros(cap, np.int32)
            self.blk_off = np.zeros(cap, np.int64)
            self.color = np.zeros(cap, np.int32)
            self.match = np.zeros(cap, np.int32)  # each manifold's row in last step's, or -1
            # the inputs of the last colouring, per manifold (graph_color.same_graph)
            self.graph_a, self.graph_b, self.graph_code = (np.zeros(cap, np.int64) for _ in range(3))
            self.manifolds = cap
        if bodies > self.bodies:
            self.mask = np.zeros(grow(self.bodies, bodies), np.int64)
            self.bodies = len(self.mask)
        if grew:
            self._count_scratch()
            self.graph_count[0] = -1  # the colouring's outputs were reallocated: colour afresh

    def ensure_wide(self, floats: int) -> None:
        """Make room for ``floats`` values in the wide array (contents are not kept)."""
        if floats > len(self.cw):
            self.cw = aligned_zeros(grow(len(self.cw), floats), np.float32)
            self._count_scratch()

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
        """The persistence arrays (key, first point, point count per manifold; anchor, normal and friction
        impulse per point) for ``store_impulses`` to fill with this step's impulses, big enough for them:
        last step's own, which the warm start has read by then (``prepare_contacts``), so one set serves
        both, grown geometrically; ``keep`` then makes them the set the next step matches against."""
        if len(self.prev_key) < manifolds:
            m = grow(len(self.prev_key), manifolds)
            self.prev_key, self.prev_first, self.prev_np = (np.zeros(m, np.int64) for _ in range(3))
        if len(self.prev_ln) < points:
            p = grow(len(self.prev_ln), points)
            self.prev_la, self.prev_ln, self.prev_lt = np.zeros((p, 3)), np.zeros(p), np.zeros((p, 3))
        self.prev_m = 0  # overwritten from here on
        return StoredImpulses(manifolds, self.prev_key, self.prev_first, self.prev_np, self.prev_la,
                              self.prev_ln, self.prev_lt)

    def keep(self, manifolds: int) -> None:
        """Make the arrays just filled by ``store_impulses`` last step's, for the next warm start."""
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
        ``keep_buffers`` writes into these arrays once its warm start has read them)."""
        self.prev_key, self.prev_first, self.prev_np, self.prev_la, self.prev_ln, self.prev_lt = (
            np.concatenate([a, np.zeros((1, *a.shape[1:]), a.dtype)]) for a in stored[1:])
        self.prev_m = stored.count


class ManifoldCache:
    """Last step's manifolds kept in their bodies' frames, for reuse while a pair hardly moves (see
    ``core/manifold_cache.py``): sorted pair keys, body pairs (A, B), the relative pose each was computed
    at, the normal in A's frame, point counts, each entry's first point and the points in A's and B's
    frames (``records.CachedManifolds``). One set of arrays, updated in place (``remember_manifolds``),
    grown geometrically."""

    def __init__(self) -> None:
        self.count = 0
        self.points = 0  # points of the current entries
        self.current = self._arrays(16, 16)

    @staticmethod
    def _arrays(manifolds: int, points: int) -> CachedManifolds:
        m, p = manifolds, points
        return CachedManifolds(np.zeros(m, np.int64), np.zeros((m, 2), np.int64), np.zeros((m, 7)),
                               np.zeros((m, 3)), np.zeros(m, np.int64), np.zeros(m, np.int64),
                               np.zeros((p, 3)), np.zeros((p, 3)))

    def reserve(self, manifolds: int, points: int) -> CachedManifolds:
        """The entries' arrays, with room for ``manifolds`` entries of ``points`` points in all (the
        current entries kept)."""
        cur = self.current
        m, p = len(cur.keys), len(cur.points_a)
        if m < manifolds or p < points:
            grown = self._arrays(grow(m, manifolds) if m < manifolds else m,
                                 grow(p, points) if p < points else p)
            for k, (new, old) in enumerate(zip(grown, cur, strict=True)):
                used = self.points if k >= len(grown) - 2 else self.count
                new[:used] = old[:used]
            self.current = grown
        return self.current

    def remembered(self, count: int, points: int) -> None:
        """Record that ``remember_manifolds`` made the entries ``count`` manifolds of ``points`` points."""
        self.count = count
        self.points = points

    def forget(self) -> None:
        """Drop every entry (after bodies were removed or rows reused)."""
        self.count = 0
        self.points = 0

    def entries(self) -> CachedManifolds:
        """The current entries, trimmed to the used rows (views)."""
        m, p = self.count, self.points
        return CachedManifolds(*(a[:m] for a in self.current[:-2]), *(a[:p] for a in self.current[-2:]))

    def set_entries(self, entries: CachedManifolds) -> None:
        """Make ``entries`` (a copy of an ``entries()``) the current set, copying it in."""
        self.current = CachedManifolds(*(np.concatenate([a, np.zeros((1, *a.shape[1:]), a.dtype)])
                                         for a in entries))
        self.count = len(entries.keys)
        self.points = len(entries.points_a)


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
