"""The history timeline of a session: every step of its simulation kept for the last ``seconds`` (60 by
default), a cursor that can go back to any kept step and play backwards and forwards, branches, and the
collision event log. No window and no OpenGL: the app's timeline strip and event log draw this model.

What it keeps, and what that costs:

- **Keyframes** (``RingHistory``, a ``snapshot.History``): a full snapshot of the world every
  ``KEYFRAME_EVERY`` steps, and one after every change made between steps (the user's), plus the ``dt`` of
  every step. Going to a step (``seek``) restores the last keyframe at or before it and steps the world
  forward to it, which gives that step's state bit for bit (the step is deterministic). Keyframes older
  than ``seconds`` are dropped, as are the oldest ones whenever the whole record grows past ``budget``
  bytes (the timeline then says how many seconds it really keeps).
- **Poses**: each kept step's body positions and orientations (float32, with each row's generation), so
  that a run the user abandons can still be drawn as ghosts. Poses that did not change from one step to
  the next (sleeping bodies) share their arrays.
- **The log**: the collision begin and end events of each recorded step (at most ``max_log`` of them),
  and the impacts, which the timeline marks: the begins whose bodies met at least as fast as the world's
  restitution threshold (``approach_speeds``: the speed at the moment of contact, as the restitution
  ledger ``sandbox/ledger.py`` reads it, for the begun pairs only; the begin's own impulse would not do,
  as a speculative contact's first push can be small whatever the speed).

Measured on the 2-core development machine, 60 s at 60 Hz: the showcase scene (46 bodies) keeps 4.1 MiB of
keyframes and 4.4 MiB of poses, the 1000-body pile 101 and 96 MiB; sleeping bodies cost nearly nothing
(the pyramid, asleep after a few seconds, 0.8 MiB in all). Recording takes 0.2 ms of CPU a step for the
showcase (whose step takes 0.6 ms) and 1.3 ms for the pile (7.4 ms): two fingerprints, the poses, the
events, and a snapshot every ``KEYFRAME_EVERY`` steps.

**Branches.** A change made while the cursor is at a past step (a setting through the panel, a body's
velocity or restitution, a spawn, a delete, a grab) starts a new run from that step: the recorded
future is cut off and kept as the *abandoned run* (its poses, drawn as faint ghosts while the cursor is
past the step), and the step is marked as where the two runs diverge (Box2D's replay marks its
divergence the same way). Changes are found by comparing the world with what it was after the last step
(``fingerprint``), so every path that changes the world is caught, the panel's, the mouse's and the
keyboard's alike. Running on from a past step without a change replays the recorded run: it reproduces
it bit for bit and keeps the future.

>>> from sandbox.session import Session
>>> from sandbox.engine import Sphere
>>> s = Session()
>>> ball = s.world.add_body(Sphere(0.5), position=(0, 3, 0))
>>> for _ in range(90):
...     s.single_step()
>>> s.timeline.seek(30)
>>> s.world.steps, s.sim.steps
(30, 30)
"""

from __future__ import annotations

import bisect
import math
import operator
from collections import deque
from typing import TYPE_CHECKING, NamedTuple

import numpy as np

from .engine import World
from .engine.bodies import STATE_FIELDS
from .engine.settings import SETTINGS
from .engine.snapshot import History, Snapshot

if TYPE_CHECKING:
    from .session import Session, Simulation

DEFAULT_SECONDS = 60.0
MIN_SECONDS, MAX_SECONDS = 1.0, 600.0
KEYFRAME_EVERY = 60
"""Steps between the regular keyframes: a seek replays at most this many steps less one."""
MAX_KEYFRAMES = 2000
"""At most this many keyframes (the regular ones of 60 s at 60 Hz are 60; every frame of a mouse drag
adds one): beyond, the oldest go, so that the memory check's walk over them stays short."""
MEMORY_BUDGET = 256 * 2**20
"""Bytes the keyframes and the poses may take together; beyond it the oldest are dropped."""
SEGMENT_CACHE_BYTES = 64 * 2**20
"""A seek keeps the snapshots of the steps it replays (within one keyframe interval), so that stepping
and playing backwards through that interval is a restore each, not a replay; where every step's would
take more than this, every second (third, ...) step's: a restore and a step or two."""
MAX_LOG = 5000


class Poses(NamedTuple):
    """The bodies of one step as drawn: per row ``[:n]`` the centre of mass ``pos`` (n, 3) and the
    orientation ``quat`` (n, 4) as float32, the row's ``generation`` and whether it held a live
    dynamic body (``dynamic``)."""

    pos: np.ndarray
    quat: np.ndarray
    generation: np.ndarray
    dynamic: np.ndarray


class LogEntry(NamedTuple):
    """One collision event of the log: at step ``step`` (world time ``time``, s) the pair ``row_a``,
    ``row_b`` (with their generations: the bodies as they were then) began or ended touching
    (``kind``); a begin has the normal ``impulse`` of its first step (N·s) and, when the bodies met at
    least as fast as the world's restitution threshold, their approach speed ``impact_speed`` (m/s,
    ``approach_speeds``)."""

    step: int
    time: float
    kind: str
    row_a: int
    gen_a: int
    row_b: int
    gen_b: int
    impulse: float | None = None
    impact_speed: float | None = None

    @property
    def impact(self) -> bool:
        """Whether this begin was an impact."""
        return self.impact_speed is not None

    def involves(self, row: int, generation: int) -> bool:
        """Whether the body in ``row`` of ``generation`` is one of the pair."""
        return (self.row_a, self.gen_a) == (row, generation) or (self.row_b, self.gen_b) == (row, generation)


class RingHistory(History):
    """A ``History`` that can forget its oldest steps (the ring: ``forget_before``) and whose ``seek``
    keeps the snapshots of the steps it replays, so that a second seek into the same keyframe interval
    (stepping or playing backwards) restores one instead of replaying (``SEGMENT_CACHE_BYTES``). It
    reads ``History``'s lists: the keyframes' steps ``_at`` and snapshots ``_keyframes``, the ``_dts``
    from step ``_first`` on."""

    def __init__(self, world: World, every: int = KEYFRAME_EVERY, max_keyframes: int = 1000) -> None:
        self._cache: dict[int, Snapshot] = {}  # set before History's __init__, which calls mark
        super().__init__(world, every, max_keyframes)

    @property
    def keyframe_steps(self) -> list[int]:
        """The steps of the keyframes kept, ascending."""
        return list(self._at)

    @property
    def span(self) -> float:
        """The simulated seconds from the first step kept to the last (the sum of their ``dt``)."""
        return math.fsum(self._dts)

    def keyframe_at(self, step: int) -> Snapshot | None:
        """The keyframe taken at ``step`` (after its changes), or None."""
        k = bisect.bisect_left(self._at, step)
        return self._keyframes[k] if k < len(self._at) and self._at[k] == step else None

    def dt_at(self, step: int) -> float | None:
        """The ``dt`` of the recorded step from ``step`` to the next, or None when it was not recorded."""
        k = step - self._first
        return self._dts[k] if 0 <= k < len(self._dts) else None

    def forget_before(self, step: int) -> None:
        """Drop what only the steps before ``step`` need: the keyframes before the last one at or
        before ``step`` (which stays, so that ``step`` can still be reached), and their ``dt``."""
        k = bisect.bisect_right(self._at, step) - 1
        if k <= 0:
            return
        del self._at[:k], self._keyframes[:k]
        del self._dts[: self._at[0] - self._first]
        self._first = self._at[0]
        self._cache = {s: snap for s, snap in self._cache.items() if s >= self._first}

    def mark(self, world: World) -> None:
        self._cache.clear()  # a change at this step: the cached later states belong to the old run
        super().mark(world)

    def record(self, world: World, dt: float) -> None:
        if world.steps - 1 < self.last_step:
            self._cache.clear()
        super().record(world, dt)

    def seek(self, world: World, step: int) -> None:
        """Make ``world`` what it was after step ``step`` (``History.seek``), from the snapshot cache
        when it holds the step or an earlier step of the same keyframe interval."""
        if not isinstance(step, (int, np.integer)) or not self.first_step <= step <= self.last_step:
            raise ValueError(f"step must be an integer from {self.first_step} to {self.last_step}, "
                             f"got {step!r}")
        step = int(step)
        k = bisect.bisect_right(self._at, step) - 1
        base = self._at[k]
        start = max((s for s in self._cache if base <= s <= step), default=None)
        if start is None:
            self._cache = {}
            start, snap = base, self._keyframes[k]
        else:
            snap = self._cache[start]
        world.restore(snap)
        # every step's snapshot while the interval's fit in the cache's bytes, else every stride-th
        stride = max(1, math.ceil(snap.nbytes() * self.every / SEGMENT_CACHE_BYTES))
        callbacks = world._begin_callbacks, world._end_callbacks
        world._begin_callbacks, world._end_callbacks = [], []  # they ran the first time
        try:
            for s in range(start, step):
                world.step(self._dts[s - self._first])
                if (s + 1 - base) % stride == 0:
                    self._cache[s + 1] = world.snapshot()
        finally:
            world._begin_callbacks, world._end_callbacks = callbacks


_settings_of = operator.attrgetter(*SETTINGS)


def fingerprint(world: World) -> tuple:
    """Everything the user can change in ``world`` between two steps, as comparable values: every body
    state field of the rows ``[:n]`` (as bytes: bit for bit), the settings and gravity, the grabs'
    targets and springs, the joints. Equal fingerprints before and after an action mean that the action
    changed nothing the next step depends on."""
    d = world.data
    n = d.n
    bodies = b"".join([getattr(d, name)[:n].tobytes() for name in STATE_FIELDS])
    grabs = tuple((id(g), g.body.index, g.body.generation, g.target.tobytes(), g.max_force, g.frequency,
                   g.damping_ratio) for g in world.grabs)
    joints = tuple((id(j), j.body_a.index, j.body_a.generation, -1 if j.body_b is None else j.body_b.index,
                    j.length, j.rope, j.local_a.tobytes(), j.local_b.tobytes()) for j in world.joints)
    return (n, bodies, _settings_of(world), world.gravity.tobytes(), grabs, joints,
            len(world.hulls.hull_list()))


def _shared(new: np.ndarray, old: np.ndarray | None) -> np.ndarray:
    """``old`` when it holds the same values as ``new`` (so that steps of resting bodies share their
    arrays), else ``new``."""
    return old if old is not None and old.shape == new.shape and np.array_equal(old, new) else new


def poses_of(world: World, previous: Poses | None = None) -> Poses:
    """The poses of ``world``'s rows now, sharing each array with ``previous`` where it is equal (the
    positions and orientations compared only while no body is awake: else they differ anyway)."""
    d = world.data
    n = d.n
    p = previous
    dynamic = d.alive[:n] & ~d.static[:n]
    still = p is not None and not bool((dynamic & d.awake[:n]).any())
    return Poses(_shared(d.pos[:n].astype(np.float32), p.pos if still else None),
                 _shared(d.quat[:n].astype(np.float32), p.quat if still else None),
                 _shared(d.generation[:n].copy(), p.generation if p else None),
                 _shared(dynamic, p.dynamic if p else None))


def _cross(u: np.ndarray, v: np.ndarray) -> np.ndarray:
    """Row-wise u × v of (k, 3) arrays (``np.cross`` costs several times more on short arrays)."""
    return np.stack([u[:, 1] * v[:, 2] - u[:, 2] * v[:, 1], u[:, 2] * v[:, 0] - u[:, 0] * v[:, 2],
                     u[:, 0] * v[:, 1] - u[:, 1] * v[:, 0]], axis=1)


def approach_speeds(world: World, dt: float, before: tuple[np.ndarray, np.ndarray, np.ndarray],
                    a: np.ndarray, b: np.ndarray, point: np.ndarray, normal: np.ndarray) -> np.ndarray:
    """The speed (m/s) at which each pair of bodies ``a[k]``, ``b[k]`` (rows) that began touching in the
    step of ``dt`` seconds that ``world`` has just taken met, at the world point ``point[k]`` along
    ``normal[k]`` (A to B), from the state before the step, ``before`` = (centres of mass, velocities,
    angular velocities of the rows then). The relative normal velocity of the two material points at
    the start of the step,

        vₙ₀ = ((v_b + ω_b × r_b) − (v_a + ω_a × r_a)) · n,

    is carried forward to the moment of contact by the bodies' relative gravitational acceleration aₙ:
    the gap s₀ of the pair's manifold (from the start of the step) closes after t ≈ s₀ / (−vₙ₀), at most
    ``dt``, and the approach speed is −(vₙ₀ + aₙ·t), zero for bodies not closing. It is the restitution
    ledger's reading (``sandbox/ledger.py``, which also solves the quadratic and tracks what follows)
    for the begun pairs only, so that the steps without a begin cost nothing."""
    pos0, vel0, w0 = before
    d, c = world.data, world.contacts
    # (ω × r)·n = ω·(r × n): one cross product per body
    vn0 = ((vel0[b] - vel0[a]) * normal).sum(axis=1)
    vn0 += (w0[b] * _cross(point - pos0[b], normal)).sum(axis=1)
    vn0 -= (w0[a] * _cross(point - pos0[a], normal)).sum(axis=1)
    g = world.gravity @ normal.T  # (k,): gravity along each normal
    an = g * (np.where(d.static[b], 0.0, d.gravity_scale[b]) - np.where(d.static[a], 0.0, d.gravity_scale[a]))
    n = d.n
    # each pair's manifold (the events name A and B as it does): its deepest point, negative for a gap
    m = c.count
    gap = np.zeros(len(a))
    if m:
        keys = c.body_a[:m] * n + c.body_b[:m]
        order = np.argsort(keys)
        want = a * n + b
        at = np.minimum(np.searchsorted(keys[order], want), m - 1)
        found = keys[order][at] == want
        rows = order[at][found]
        live = np.arange(c.depth.shape[1])[None, :] < c.npoints[rows, None]
        gap[found] = np.maximum(-np.where(live, c.depth[rows], -np.inf).max(axis=1), 0.0)
    t = np.minimum(gap / np.maximum(-vn0, 1e-9), dt)
    return np.maximum(-(vn0 + an * t), 0.0)


def blend_poses(a: Poses, b: Poses, alpha: float) -> tuple[np.ndarray, np.ndarray]:
    """Positions lerped and orientations nlerped (along the shorter arc) from ``a`` to ``b`` at
    ``alpha`` in [0, 1], for the rows both have; float64."""
    m = min(len(a.pos), len(b.pos))
    p0, p1 = a.pos[:m].astype(float), b.pos[:m].astype(float)
    q0, q1 = a.quat[:m].astype(float), b.quat[:m].astype(float)
    q0[np.einsum("ij,ij->i", q0, q1) < 0.0] *= -1.0
    q = q0 + (q1 - q0) * alpha
    q /= np.linalg.norm(q, axis=1, keepdims=True)
    return p0 + (p1 - p0) * alpha, q


def _own_bytes(poses: Poses, previous: Poses | None) -> int:
    """Bytes of the arrays of ``poses`` that it does not share with ``previous``."""
    return sum(a.nbytes for k, a in enumerate(poses) if previous is None or a is not previous[k])


class _Run:
    """The poses of consecutive steps ``first``, ``first + 1``, …, with the bytes they take (each step's
    arrays shared with the step before counted once, at the first step that has them)."""

    def __init__(self, first: int, poses: list[Poses] | None = None) -> None:
        self.first = first
        self.poses: list[Poses] = poses or []
        self._costs = [_own_bytes(p, self.poses[k - 1] if k else None) for k, p in enumerate(self.poses)]
        self.nbytes = sum(self._costs)

    @property
    def last(self) -> int:
        return self.first + len(self.poses) - 1

    def at(self, step: int) -> Poses | None:
        k = step - self.first
        return self.poses[k] if 0 <= k < len(self.poses) else None

    def put(self, step: int, poses: Poses) -> None:
        """Set the poses of ``step``, which is at most one past the last (later ones are dropped)."""
        k = step - self.first
        if not 0 <= k <= len(self.poses):
            raise ValueError(f"poses of step {step} do not follow steps {self.first} to {self.last}")
        self._drop_from(k)
        self.poses.append(poses)
        self._costs.append(_own_bytes(poses, self.poses[k - 1] if k else None))
        self.nbytes += self._costs[-1]

    def _drop_from(self, k: int) -> None:
        self.nbytes -= sum(self._costs[k:])
        del self.poses[k:], self._costs[k:]

    def cut_after(self, step: int) -> _Run:
        """Remove the steps after ``step`` and return them as a run of their own."""
        k = max(step - self.first + 1, 0)
        tail = _Run(self.first + k, self.poses[k:])
        self._drop_from(k)
        return tail

    def forget_before(self, step: int) -> None:
        k = min(max(step - self.first, 0), len(self.poses))
        if not k:
            return
        dropped = sum(self._costs[:k])
        if k < len(self.poses):  # the new first step now owns the arrays it shared with the one before
            own = _own_bytes(self.poses[k], None)
            dropped -= own - self._costs[k]
            self._costs[k] = own
        self.nbytes -= dropped
        del self.poses[:k], self._costs[:k]
        self.first += k


class Timeline:
    """The history of the session's simulation (see the module's docstring).

    ``Session`` makes one and hands it every step (it is one of ``Simulation.watchers``: ``before_step`` and
    ``after_step``); ``attach`` starts it afresh on the session's current world (a scene loaded or
    reset). The cursor is the step the world is at (``cursor``, from ``first_step`` to ``last_step``);
    ``seek`` moves it, ``step_back`` and ``play_back`` go backwards (with ``tick`` each frame),
    ``Session.single_step`` and running go forwards. ``divergence`` is the step where the current run
    left the abandoned one (None before any branch), ``ghosts`` the abandoned run's poses for drawing;
    ``log`` the collision events and ``impacts`` the impacts as ``(step, row_a, row_b, approach speed
    m/s)``, in the order of their steps."""

    def __init__(self, session: Session, seconds: float = DEFAULT_SECONDS, every: int = KEYFRAME_EVERY,
                 budget: int = MEMORY_BUDGET, max_log: int = MAX_LOG) -> None:
        self.session = session
        self.every = every
        self.budget = budget
        self._seconds = DEFAULT_SECONDS
        self.seconds = seconds
        self.log: deque[LogEntry] = deque(maxlen=max_log)
        self.impacts: list[tuple[int, int, int, float]] = []  # (step, row_a, row_b, approach speed)
        self.playing_back = False
        self.show_ghosts = True
        self.memory_limited = False
        """Whether the budget (not ``seconds``) decided how far back the history reaches lately."""
        self.attach()

    # --- settings --------------------------------------------------------------------------------
    @property
    def seconds(self) -> float:
        """How far back the history reaches (simulated seconds); older steps are forgotten."""
        return self._seconds

    @seconds.setter
    def seconds(self, value: float) -> None:
        if isinstance(value, bool) or not isinstance(value, (int, float)) or not math.isfinite(value) \
                or not MIN_SECONDS <= value <= MAX_SECONDS:
            raise ValueError(f"seconds must be a number from {MIN_SECONDS:g} to {MAX_SECONDS:g}, "
                             f"got {value!r}")
        self._seconds = float(value)
        if hasattr(self, "history"):
            self._trim(check_budget=False)

    # --- the run being recorded ---------------------------------------------------------------------
    @property
    def sim(self) -> Simulation:
        return self.session.sim

    @property
    def world(self) -> World:
        return self.session.sim.world

    def attach(self) -> None:
        """Start a fresh history of the session's current simulation, from its world as it is now."""
        sim = self.sim
        if self not in sim.watchers:  # the first, so that it sees a step before anything else acts on it
            sim.watchers.insert(0, self)
        world = sim.world
        self.history = RingHistory(world, self.every, MAX_KEYFRAMES)
        self._world = world
        self._cursor = world.steps
        self._run = _Run(world.steps, [poses_of(world)])
        self.abandoned: _Run | None = None
        self.divergence: int | None = None
        self.log.clear()
        self.impacts = []
        self.playing_back = False
        self.memory_limited = False
        self._replaying = False
        self._back = 0.0
        self._before: tuple[np.ndarray, np.ndarray, np.ndarray] | None = None
        self._fingerprint = fingerprint(world)

    @property
    def cursor(self) -> int:
        """The step the world is at."""
        return self._cursor

    @property
    def first_step(self) -> int:
        """The earliest step kept."""
        return self.history.first_step

    @property
    def last_step(self) -> int:
        """The latest step of the current run."""
        return self.history.last_step

    @property
    def in_past(self) -> bool:
        """Whether the cursor is before the run's last step (running on replays the recorded steps)."""
        return self._cursor < self.history.last_step

    # --- the hooks ---------------------------------------------------------------------------------------
    def before_step(self, sim: Simulation) -> None:
        """Called by ``Simulation.step`` before the world steps: a change since the last step starts a
        branch; a step from the past without one replays the recorded step (with its keyframe, which
        holds the changes the user made at that step in the recorded run)."""
        if sim.world is not self._world or sim.world.steps != self._cursor:
            self.attach()  # the world was replaced, or stepped by someone else: start afresh
        self.playing_back = False
        self.poll()
        self._replaying = False
        if self.in_past:
            if self.history.dt_at(self._cursor) != sim.dt:
                self._branch()  # the step length changed: that is another run too
            else:
                keyframe = self.history.keyframe_at(self._cursor)
                if keyframe is not None:
                    sim.world.restore(keyframe)
                self._replaying = True
        if not self._replaying:  # the state the impacts' approach speeds are read from
            d = sim.world.data
            self._before = (d.pos[: d.n].copy(), d.vel[: d.n].copy(), d.angvel[: d.n].copy())

    def after_step(self, sim: Simulation) -> None:
        """Called by ``Simulation.step`` after the world stepped: record the step (unless it replayed
        a recorded one), its poses, its events and impacts; forget what is older than ``seconds``."""
        world = sim.world
        self._cursor = world.steps
        if not self._replaying:
            self.history.record(world, sim.dt)
            self._run.put(world.steps, poses_of(world, self._run.at(world.steps - 1)))
            self._log_events(world, sim.dt)
            self._trim(check_budget=world.steps % self.every == 0)
        self._replaying = False
        self._fingerprint = fingerprint(world)

    def poll(self) -> bool:
        """Look for a change made to the world since the last step or seek; record it (a branch when
        the cursor is in the past). Returns whether there was one. The app calls it every frame, so that
        a branch shows at once, not at the next step."""
        world = self.world
        if world is not self._world:
            self.attach()
            return False
        if fingerprint(world) == self._fingerprint:
            return False
        self._branch()
        return True

    def _branch(self) -> None:
        """Record the world as changed at the cursor's step: from the past, the recorded future becomes
        the abandoned run and the cursor's step the divergence; at the end, a keyframe."""
        world, step = self.world, self._cursor
        if self.in_past:
            self.abandoned = self._run.cut_after(step)
            self.divergence = step
            while self.log and self.log[-1].step > step:
                self.log.pop()
            self.impacts = [i for i in self.impacts if i[0] <= step]
            # a grab the recorded run made at this step and the user does not hold would pull forever
            for grab in list(world.grabs):
                if grab is not self.session.grab:
                    world.release(grab)
        self.history.mark(world)
        self._run.put(step, poses_of(world, self._run.at(step - 1)))
        self._fingerprint = fingerprint(world)

    def _log_events(self, world: World, dt: float) -> None:
        """Log the step's collision events (in ``World.events``' order), the begins with their approach
        speed when it makes them impacts (at least the world's restitution threshold), and keep the
        impacts. The events are read in bulk from the arrays the engine decoded them into
        (``World._emit_events``): ``World.events`` makes a Python object per event, some 14 µs each,
        which a pile's hundreds of events per step would turn into milliseconds."""
        removed = world._removed_ends
        ba, bb, ga, gb, points, normals, impulses = world._begin_data
        ea, eb, gea, geb = world._end_data
        if not (removed or len(ba) or len(ea)):
            return
        step, t = world.steps, world.time
        speeds = np.zeros(len(ba))
        n0 = len(self._before[0]) if self._before is not None else 0
        known = (ba < n0) & (bb < n0)  # (a body added since the step began has no state before it)
        if known.any():
            speeds[known] = approach_speeds(world, dt, self._before, ba[known], bb[known], points[known],
                                            normals[known])
        speeds = np.where(speeds >= float(world.restitution_threshold), speeds, np.nan)
        log = self.log
        for e in removed:
            log.append(LogEntry(step, t, "end", e.body_a.index, e.body_a.generation, e.body_b.index,
                                e.body_b.generation))
        for a, b, g1, g2, j, v in zip(ba.tolist(), bb.tolist(), ga.tolist(), gb.tolist(), impulses.tolist(),
                                      speeds.tolist(), strict=True):
            impact = None if math.isnan(v) else v
            log.append(LogEntry(step, t, "begin", a, g1, b, g2, j, impact))
            if impact is not None:
                self.impacts.append((step, a, b, impact))
        for a, b, g1, g2 in zip(ea.tolist(), eb.tolist(), gea.tolist(), geb.tolist(), strict=True):
            log.append(LogEntry(step, t, "end", a, g1, b, g2))

    def _trim(self, check_budget: bool) -> None:
        """Forget the steps older than ``seconds`` before the last one, and, with ``check_budget``, the
        oldest keyframes while the record takes more than ``budget`` bytes."""
        keep = max(round(self._seconds / self.sim.dt), 1)
        self._forget_before(max(self.history.last_step - keep, self.first_step))
        if not check_budget:
            return
        limited = False
        while len(self.history.keyframe_steps) > 2 and self.nbytes() > self.budget:
            self._forget_before(self.history.keyframe_steps[1])
            limited = True
        self.memory_limited = limited

    def _forget_before(self, step: int) -> None:
        self.history.forget_before(min(step, self._cursor))
        first = self.history.first_step
        self._run.forget_before(first)
        if self.abandoned is not None:
            self.abandoned.forget_before(first)
            if not self.abandoned.poses:
                self.abandoned = None
        if self.divergence is not None and self.divergence < first:
            self.divergence = None
        cut = bisect.bisect_left(self.impacts, (first,))
        del self.impacts[:cut]

    # --- moving the cursor -------------------------------------------------------------------------------
    def seek(self, step: int) -> None:
        """Pause and make the world what it was after ``step`` (from ``first_step`` to ``last_step``),
        bit for bit. A change made at the cursor before is recorded first (a branch from the past)."""
        self.poll()
        sim, world = self.sim, self.world
        self.history.seek(world, step)  # checks the step
        sim.paused = True
        sim.time, sim.steps, sim.accumulator = world.time, world.steps, 0.0
        sim.sync()
        self._cursor = world.steps
        self._fingerprint = fingerprint(world)
        # the mouse's grab goes with the state left behind unless this step has it too (a restore brings
        # the same grab object back); the selection may name a body not made yet
        if not any(g is self.session.grab for g in world.grabs):
            self.session.grab = None
        self.session.forget_removed()

    def step_back(self) -> None:
        """Pause and go one step back (nothing at the first kept step)."""
        self.playing_back = False
        self.sim.paused = True
        if self._cursor > self.first_step:
            self.seek(self._cursor - 1)

    def play_back(self) -> None:
        """Play backwards (``tick`` each frame) at the simulation's time scale, until the first kept step."""
        self.sim.paused = True
        self.playing_back = self._cursor > self.first_step
        self._back = 0.0

    def pause(self) -> None:
        """Stop playing in either direction."""
        self.playing_back = False
        self.sim.paused = True

    def tick(self, real_seconds: float) -> None:
        """Advance backward play by ``real_seconds`` of wall-clock time: back as many whole steps as
        that pays for at the time scale (at most ``Simulation.max_steps`` a frame, as forwards)."""
        sim = self.sim
        if not self.playing_back:
            return
        if not sim.paused:  # the user ran the simulation forwards
            self.playing_back = False
            return
        # as the forward clock does (Simulation.advance): whole steps of the scaled time, the rest kept
        self._back += max(real_seconds, 0.0) * sim.time_scale
        whole = int(self._back // sim.dt)
        self._back -= whole * sim.dt
        steps = min(whole, sim.max_steps)
        if steps:
            target = max(self._cursor - steps, self.first_step)
            self.seek(target)
            self.playing_back = target > self.first_step

    # --- the abandoned run --------------------------------------------------------------------------------
    def ghost_poses(self, step: int) -> Poses | None:
        """The abandoned run's poses at ``step`` (None when it has none there)."""
        return self.abandoned.at(step) if self.abandoned is not None else None

    def ghosts(self, alpha: float = 1.0) -> tuple[np.ndarray, np.ndarray, np.ndarray] | None:
        """What the renderer draws faintly: ``(rows, pos, quat)`` of the abandoned run's bodies at the
        drawn moment (``alpha`` of the way from the step before the cursor to the cursor, as the
        simulation's interpolation), for the rows of the current world that hold the same dynamic
        body (same generation) in both runs; None when there is nothing to draw."""
        if not self.show_ghosts or self.divergence is None or self._cursor <= self.divergence:
            return None
        now = self.ghost_poses(self._cursor)
        if now is None:
            return None
        before = self.ghost_poses(self._cursor - 1) if alpha < 1.0 else None
        pos, quat = blend_poses(before, now, alpha) if before is not None else blend_poses(now, now, 1.0)
        d = self.world.data
        m = min(len(pos), d.n)
        same = now.dynamic[:m] & d.alive[:m] & ~d.static[:m] & (now.generation[:m] == d.generation[:m])
        if before is not None:
            same &= before.generation[:m] == now.generation[:m]
        rows = np.flatnonzero(same)
        if not len(rows):
            return None
        return rows, pos[rows], quat[rows]

    def forget_abandoned(self) -> None:
        """Drop the abandoned run (its ghosts) and the divergence mark."""
        self.abandoned = None
        self.divergence = None

    # --- reading ------------------------------------------------------------------------------------------
    def nbytes(self) -> int:
        """Bytes the keyframes, the run's poses and the abandoned run's poses take."""
        total = self.history.nbytes() + self._run.nbytes
        return total + (self.abandoned.nbytes if self.abandoned is not None else 0)

    @property
    def kept_seconds(self) -> float:
        """The simulated time from the first kept step to the last."""
        return self.history.span

    def poses(self, step: int) -> Poses | None:
        """The current run's poses at ``step``, if kept."""
        return self._run.at(step)
