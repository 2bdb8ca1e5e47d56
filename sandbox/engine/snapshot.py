"""Snapshots of a world: everything the next step depends on, copied into numpy arrays, and put back.

``World.snapshot()`` returns a ``Snapshot``; ``World.restore(snapshot)`` makes the world exactly what it
was when the snapshot was taken, so that stepping it again gives the same states bit for bit
(``World.state_hash``). That is what rewinding (scrub back and resume), branching (restore, change a
setting, step) and A/B comparisons (two worlds restored from one snapshot) rest on.

A snapshot holds:

- the bodies: every field of ``bodies.STATE_FIELDS`` for the rows ``[:n]`` (not the six work arrays of
  the step, which each step writes before it reads them), the row count ``n``, the capacity, the free list
  (in order: the next added body takes its last row) and the generations;
- per body, the shape (shared references: shapes are immutable), the mass a static body gets back when
  made dynamic, and whether its rotation is locked; the hull table (shared references too);
- every setting of ``settings.SETTINGS`` and the gravity;
- the joints and grabs, as the rows and generations of their bodies and copies of their numbers;
- the solver's persistent state: last step's impulses that warm starting matches against
  (``ContactSolverData``) and the manifold cache (``ManifoldCache``); last step's manifolds
  (``ContactArrays``: drawn and counted before the next step) and candidate pairs;
- the sleep islands (the island root of each row, which waking reads before the next step recomputes it);
- the event state: the touching pair keys and the row count they were made with, the end events waiting
  for the next step (bodies removed while touching), and last step's begin and end events;
- the time and the step counter.

It holds no Python object per body: the body fields are arrays, and the per-body dictionaries of the
world (shape, default mass) are shared with the previous snapshot of the same world whenever they did not
change. While every body sleeps, each array too is shared with the previous snapshot when its bits are
equal, so a history of a resting world costs almost nothing per step; a world in motion has its arrays
simply copied (comparing an array costs several times its copy, and most of them change every step).

What a restore does to handles: a ``Body`` handle taken while the snapshot's body was alive is valid
again (its row holds the same body with the same generation). A handle of a body added after the
snapshot reports ``alive`` False after the restore, and stays so when new bodies are added later: each
row's next body gets a generation above every handle given out for the row (``BodyArrays.
generation_floor``, which the restore raises; rows cut off beyond the snapshot's capacity keep theirs
there too), so a stale handle never names another body. Joint and grab objects of the snapshot's world
are the same objects again, their fields restored; restoring into another world makes new ones there.
Collision callbacks are not part of the state: a restore keeps the world's own.
"""

from __future__ import annotations

import bisect
from dataclasses import dataclass
from typing import TYPE_CHECKING, NamedTuple

import numpy as np

from .bodies import _FIELDS, STATE_FIELDS, Body
from .contacts import CollisionEvent
from .core.records import CachedManifolds, StoredImpulses
from .settings import SETTINGS
from .shapes import ConvexHull, Shape

if TYPE_CHECKING:
    from .world import DistanceJoint, Grab, World


class JointState(NamedTuple):
    """A distance joint as a snapshot keeps it: the joint object itself (made again only when restored
    into another world), its bodies' rows and generations (``row_b`` −1 for a world point) and copies of
    its numbers."""

    joint: DistanceJoint
    row_a: int
    gen_a: int
    row_b: int
    gen_b: int
    local_a: np.ndarray
    local_b: np.ndarray
    length: float
    rope: bool
    impulse: float


class GrabState(NamedTuple):
    """A grab as a snapshot keeps it: the grab object, its body's row and generation, copies of its
    numbers."""

    grab: Grab
    row: int
    gen: int
    local_anchor: np.ndarray
    target: np.ndarray
    max_force: float
    frequency: float
    damping_ratio: float
    impulse: np.ndarray
    force: np.ndarray


@dataclass(frozen=True, eq=False)
class Snapshot:
    """Everything the next step of a world depends on (see the module's docstring); made by
    ``World.snapshot``, put back by ``World.restore``. Its arrays are copies (or arrays shared with
    an earlier snapshot whose bits are equal): nothing the world does afterwards changes them."""

    n: int
    capacity: int
    free: np.ndarray  # (f,) int64, the free list in order
    bodies: dict[str, np.ndarray]  # STATE_FIELDS, rows [:n]
    shapes: dict[int, Shape]  # row -> shape
    default_masses: dict[int, float]  # row -> the mass ``Body.static = False`` gives back
    lock_rotation: frozenset[int]
    hulls: tuple[ConvexHull, ...]
    settings: dict[str, object]  # every setting of SETTINGS by name
    gravity: np.ndarray
    joints: tuple[JointState, ...]
    grabs: tuple[GrabState, ...]
    stored: StoredImpulses  # last step's impulses, for warm starting
    cache: CachedManifolds  # the manifold cache's entries
    contacts: dict[str, np.ndarray]  # last step's manifolds (ContactArrays.STATE)
    pairs: np.ndarray  # last step's candidate pairs
    cached_manifolds: int
    island: np.ndarray  # (n,) each row's island root
    touching: np.ndarray  # sorted pair keys touching after the last step
    touching_n: int  # the row count those keys were made with
    pending: tuple[CollisionEvent, ...]  # end events of removed bodies, reported with the next step
    removed_ends: tuple[CollisionEvent, ...]  # last step's events: ends of removed bodies' contacts
    begin_data: tuple  # last step's begin events, decoded (see World._emit_events)
    end_data: tuple  # last step's end events, decoded
    time: float
    steps: int

    def arrays(self) -> list[np.ndarray]:
        """Every numpy array the snapshot holds."""
        out = [self.free, self.gravity, self.pairs, self.island, self.touching]
        out += list(self.bodies.values()) + list(self.contacts.values())
        out += list(self.stored[1:]) + list(self.cache) + list(self.begin_data) + list(self.end_data)
        for j in self.joints:
            out += [j.local_a, j.local_b]
        for g in self.grabs:
            out += [g.local_anchor, g.target, g.impulse, g.force]
        return out

    def nbytes(self, since: Snapshot | None = None) -> int:
        """Bytes of array data the snapshot holds, leaving out the arrays it shares with ``since`` (the
        snapshot taken before it): what keeping it in a history costs. The per-body dictionaries are
        counted too when they are not shared (about 100 bytes an entry)."""
        shared = {id(a) for a in since.arrays()} if since is not None else set()
        total = sum(a.nbytes for a in {id(a): a for a in self.arrays()}.values() if id(a) not in shared)
        for name in ("shapes", "default_masses"):
            if since is None or getattr(self, name) is not getattr(since, name):
                total += 100 * len(getattr(self, name))
        return total


def _same_bits(a: np.ndarray, b: np.ndarray) -> bool:
    """Whether ``a`` and ``b`` hold the same bits (not the same values: −0.0 and 0.0 differ, and a NaN
    equals itself), compared as unsigned integers of the item size."""
    if a.dtype != b.dtype or a.shape != b.shape:
        return False
    as_int = np.dtype(f"u{a.dtype.itemsize}")
    return bool(np.array_equal(a.reshape(-1).view(as_int), b.reshape(-1).view(as_int)))


def _keep(new: np.ndarray, old: np.ndarray | None, compare: bool) -> np.ndarray:
    """A copy of ``new``, or, with ``compare``, ``old`` (the same array of the previous snapshot) when it
    holds the same bits, so that snapshots in a row share whatever did not change."""
    if compare and old is not None and _same_bits(new, old):
        return old
    return new.copy()


def _keep_all(new: tuple, old: tuple | None, compare: bool) -> tuple:
    """``_keep`` for each array of the tuple or named tuple ``new`` against the same place in ``old``
    (numbers are kept as they are)."""
    kept = [_keep(x, None if old is None else old[k], compare) if isinstance(x, np.ndarray) else x
            for k, x in enumerate(new)]
    return type(new)(*kept) if hasattr(new, "_fields") else tuple(kept)


def take(world: World, previous: Snapshot | None = None) -> Snapshot:
    """A snapshot of ``world`` (see ``Snapshot``), sharing with ``previous`` (an earlier snapshot of the
    same world, or None) the arrays and dictionaries that did not change since.

    The per-body dictionaries, the hull table and the settings are always compared with ``previous``'s
    (comparing them is cheap). The arrays are compared only when no body is awake: while bodies move,
    most of them differ anyway, and comparing an array costs several times copying it (a snapshot taken
    every step of a moving pile would cost twice as much)."""
    d = world.data
    n = d.n
    p = previous
    same = p is not None and not bool((d.awake[:n] & d.alive[:n] & ~d.static[:n]).any())
    bodies = {name: _keep(getattr(d, name)[:n], p.bodies[name] if p else None, same) for name in STATE_FIELDS}
    # the per-body dictionaries change only when a body is added or removed, or a mass is set: compared
    # with the previous snapshot's (by identity of the shapes, C speed), they are shared in a steady state
    shapes = p.shapes if p is not None and p.shapes == world._shapes else dict(world._shapes)
    masses = (p.default_masses if p is not None and p.default_masses == world._default_masses
              else dict(world._default_masses))
    locked = frozenset(world._lock_rotation)
    if p is not None and p.lock_rotation == locked:
        locked = p.lock_rotation
    hulls = world.hulls.hull_list()
    if p is not None and p.hulls == hulls:
        hulls = p.hulls
    settings = {name: getattr(world, name) for name in SETTINGS}
    if p is not None and p.settings == settings:
        settings = p.settings
    joints = tuple(JointState(j, j.body_a.index, j.body_a.generation,
                              -1 if j.body_b is None else j.body_b.index,
                              -1 if j.body_b is None else j.body_b.generation,
                              j.local_a.copy(), j.local_b.copy(), float(j.length), bool(j.rope),
                              float(j.impulse))
                   for j in world.joints)
    grabs = tuple(GrabState(g, g.body.index, g.body.generation, g.local_anchor.copy(), g._target.copy(),
                            float(g.max_force), float(g.frequency), float(g.damping_ratio), g.impulse.copy(),
                            g.force.copy())
                  for g in world.grabs)
    contacts = {k: _keep(v, p.contacts[k] if p else None, same) for k, v in world.contacts.state().items()}
    return Snapshot(
        n=n, capacity=d.capacity, free=_keep(np.array(d.free, np.int64), p.free if p else None, same),
        bodies=bodies, shapes=shapes, default_masses=masses, lock_rotation=locked, hulls=hulls,
        settings=settings, gravity=_keep(world._gravity, p.gravity if p else None, same), joints=joints,
        grabs=grabs,
        stored=_keep_all(world._solver.stored(), p.stored if p else None, same),
        cache=_keep_all(world._manifold_cache.entries(), p.cache if p else None, same),
        contacts=contacts, pairs=_keep(np.asarray(world.pairs), p.pairs if p else None, same),
        cached_manifolds=int(world.cached_manifolds),
        island=_keep(world._island[:n], p.island if p else None, same),
        touching=_keep(world._touching, p.touching if p else None, same), touching_n=int(world._touching_n),
        pending=tuple(world._pending_events), removed_ends=tuple(world._removed_ends),
        begin_data=_keep_all(world._begin_data, p.begin_data if p else None, same),
        end_data=_keep_all(world._end_data, p.end_data if p else None, same),
        time=float(world.time), steps=int(world.steps))


def _restore_bodies(world: World, snap: Snapshot) -> None:
    """Put the body rows back: rows ``[:n]`` from the snapshot, the rest fresh, the capacity and free
    list as they were; generations as described in the module's docstring."""
    d = world.data
    n = snap.n
    # the lowest generation each row's next body may have: above every handle given out for it so far (a
    # live row's handles hold its generation, a free row's at most one less; rows beyond the capacity
    # keep theirs in the floor already). Rows free in the snapshot start there; the snapshot's live rows
    # get their own generation back and jump to the floor when they are freed (``BodyArrays.release``)
    floor = np.zeros(max(d.capacity, len(d.generation_floor)), np.int64)
    floor[: len(d.generation_floor)] = d.generation_floor
    np.maximum(floor[: d.capacity], d.generation + d.alive, out=floor[: d.capacity])
    d.generation_floor = floor
    if d.capacity != snap.capacity:
        d.reset(snap.capacity)
    else:
        for name, (_shape, _dtype, fill) in _FIELDS.items():
            getattr(d, name)[n:] = fill
    for name in STATE_FIELDS:
        getattr(d, name)[:n] = snap.bodies[name]
    k = min(len(floor), snap.capacity)
    gen = d.generation[:k]
    np.maximum(gen, np.where(d.alive[:k], 0, floor[:k]), out=gen)
    d.n = n
    d.free = snap.free.tolist()


def restore(world: World, snap: Snapshot) -> None:
    """Make ``world`` what it was when ``snap`` was taken (``snap`` may come from another world: the
    A/B start); ``snap`` itself is not changed, so it can be restored again."""
    from .world import DistanceJoint, Grab  # world imports this module

    # settings first, through their validation: their side effects (waking, dropping the warm start)
    # touch state that is restored below
    for name, value in snap.settings.items():
        setattr(world, name, value)
    world.gravity = snap.gravity
    world.hulls.set_hull_list(snap.hulls)
    _restore_bodies(world, snap)
    world._shapes = dict(snap.shapes)
    world._default_masses = dict(snap.default_masses)
    world._lock_rotation = set(snap.lock_rotation)
    cap = world.data.capacity
    world._island = np.arange(cap)
    world._island[: snap.n] = snap.island
    world._island_min = np.zeros(cap)  # recomputed by update_sleep before it is read

    def handle(row: int, gen: int) -> Body:
        return Body(world, row, gen)

    joints = []
    for s in snap.joints:
        body_b = None if s.row_b < 0 else handle(s.row_b, s.gen_b)
        j = s.joint
        if j._world is not world:
            j = DistanceJoint(world, handle(s.row_a, s.gen_a), body_b, s.local_a.copy(), s.local_b.copy(),
                              s.length, s.rope)
        j.body_a, j.body_b = handle(s.row_a, s.gen_a), body_b
        j.local_a, j.local_b, j.length, j.rope, j.impulse = s.local_a.copy(), s.local_b.copy(), s.length, \
            s.rope, s.impulse
        joints.append(j)
    world.joints = joints
    world._joint_arrays = None
    grabs = []
    for s in snap.grabs:
        g = s.grab
        if g._world is not world:
            g = Grab(world, handle(s.row, s.gen), s.local_anchor.copy(), s.target.copy(), s.max_force,
                     s.frequency, s.damping_ratio)
        g.body, g.local_anchor, g._target = handle(s.row, s.gen), s.local_anchor.copy(), s.target.copy()
        g.max_force, g.frequency, g.damping_ratio = s.max_force, s.frequency, s.damping_ratio
        g.impulse, g.force = s.impulse.copy(), s.force.copy()
        grabs.append(g)
    world.grabs = grabs
    world._solver.set_stored(snap.stored)
    world._manifold_cache.set_entries(snap.cache)
    world.contacts.set_state(snap.contacts)
    world.pairs = snap.pairs.copy()
    world.cached_manifolds = snap.cached_manifolds

    def rehome(e: CollisionEvent) -> CollisionEvent:
        """The event with handles of ``world`` (the snapshot's may name another world's bodies)."""
        if e.body_a._world is world:
            return e
        return CollisionEvent(e.kind, handle(e.body_a.index, e.body_a.generation),
                              handle(e.body_b.index, e.body_b.generation), e.point, e.normal, e.impulse)

    world._touching = snap.touching.copy()
    world._touching_n = snap.touching_n
    world._pending_events = [rehome(e) for e in snap.pending]
    world._removed_ends = [rehome(e) for e in snap.removed_ends]
    world._begin_data = tuple(a.copy() for a in snap.begin_data)
    world._end_data = tuple(a.copy() for a in snap.end_data)
    world._events_cache = None
    world.time = snap.time
    world.steps = snap.steps


class History:
    """A rewind history of a world stepped in fixed steps, at a memory cost a long run can afford: a full
    snapshot (a keyframe) every ``every`` steps and after every change made between steps, and the ``dt``
    of every step. ``seek(world, step)`` restores the last keyframe at or before ``step`` and steps the
    world forward to it, which gives that step's state bit for bit (the step is deterministic), at the
    cost of up to ``every`` steps. Recording on after a seek starts a new branch: the old branch's later
    keyframes are dropped.

    Call ``record(world, dt)`` after each ``world.step(dt)``, and ``mark(world)`` after anything else that
    changes the world (adding, removing or pushing a body, moving a grab, changing a setting): a replay
    only repeats steps, so each such change has to be in a keyframe. ``max_keyframes`` bounds the memory:
    the oldest keyframes are dropped first.

    >>> from sandbox.engine import World, Sphere
    >>> w = World()
    >>> ball = w.add_body(Sphere(0.5), position=(0, 2, 0))
    >>> history = History(w, every=10)
    >>> hashes = {}
    >>> for _ in range(30):
    ...     w.step(1 / 60)
    ...     history.record(w, 1 / 60)
    ...     hashes[w.steps] = w.state_hash()
    >>> history.seek(w, 17)
    >>> w.state_hash() == hashes[17]
    True
    """

    def __init__(self, world: World, every: int = 60, max_keyframes: int = 1000) -> None:
        if not isinstance(every, int) or every < 1:
            raise ValueError(f"every must be a positive integer, got {every!r}")
        if not isinstance(max_keyframes, int) or max_keyframes < 1:
            raise ValueError(f"max_keyframes must be a positive integer, got {max_keyframes!r}")
        self.every = every
        self.max_keyframes = max_keyframes
        self._at: list[int] = []  # the keyframes' step counters, ascending
        self._keyframes: list[Snapshot] = []
        self._first = world.steps  # the step counter of _dts[0]'s start
        self._dts: list[float] = []  # _dts[k]: the dt of the step from step _first + k to the next
        self.mark(world)

    @property
    def first_step(self) -> int:
        """The earliest step ``seek`` can go to (the oldest keyframe's)."""
        return self._at[0]

    @property
    def last_step(self) -> int:
        """The latest step recorded."""
        return max(self._first + len(self._dts), self._at[-1])

    def _drop_after(self, step: int) -> None:
        """Forget what was recorded after ``step`` (another branch's future)."""
        while self._at and self._at[-1] > step:
            self._at.pop()
            self._keyframes.pop()
        del self._dts[max(step - self._first, 0):]

    def _keep(self, step: int, snap: Snapshot) -> None:
        if self._at and self._at[-1] == step:  # a change after the step: its keyframe supersedes
            self._keyframes[-1] = snap
        else:
            self._at.append(step)
            self._keyframes.append(snap)
        if len(self._at) > self.max_keyframes:
            self._at.pop(0)
            self._keyframes.pop(0)
            cut = self._at[0] - self._first  # the steps before the oldest keyframe cannot be replayed
            del self._dts[:cut]
            self._first = self._at[0]

    def mark(self, world: World) -> None:
        """Record a change made to ``world`` since its last step (a keyframe of it as it is now)."""
        self._drop_after(world.steps)
        self._keep(world.steps, world.snapshot())

    def record(self, world: World, dt: float) -> None:
        """Record the step of ``dt`` seconds that ``world`` has just taken."""
        s = world.steps
        self._drop_after(s - 1)
        if s - 1 != self._first + len(self._dts):
            raise ValueError(f"step {s} does not follow the recorded steps (the last is {self.last_step}); "
                             "record every step")
        self._dts.append(float(dt))
        if s % self.every == 0:
            self._keep(s, world.snapshot())

    def seek(self, world: World, step: int) -> None:
        """Make ``world`` what it was after step ``step``: restore the last keyframe at or before it and
        replay the recorded steps (with the collision callbacks silent: they ran the first time)."""
        if not self.first_step <= step <= self.last_step:
            raise ValueError(f"step must be from {self.first_step} to {self.last_step}, got {step!r}")
        k = bisect.bisect_right(self._at, step) - 1
        world.restore(self._keyframes[k])
        callbacks = world._begin_callbacks, world._end_callbacks
        world._begin_callbacks, world._end_callbacks = [], []
        try:
            for s in range(self._at[k], step):
                world.step(self._dts[s - self._first])
        finally:
            world._begin_callbacks, world._end_callbacks = callbacks

    def nbytes(self) -> int:
        """Bytes of array data the keyframes hold (arrays shared between keyframes counted once)."""
        total, prev = 0, None
        for snap in self._keyframes:
            total += snap.nbytes(since=prev)
            prev = snap
        return total
