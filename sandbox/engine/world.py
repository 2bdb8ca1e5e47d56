"""The world: bodies, settings, and the step that runs the pipeline's stages in order.

``World.step`` reads as the pipeline: find pairs (broad phase), collide (narrow phase), then the response
method per sub-step, then sleeping and events. Every stage is a kernel over the arrays of ``BodyArrays``
and ``ContactArrays``; this module only owns the arrays, checks input, and times the stages.
"""

from __future__ import annotations

import hashlib
import math
import time
from collections.abc import Callable
from dataclasses import dataclass

import numpy as np

from .bodies import Body, BodyArrays, rotate, unrotate
from .broadphase import BroadPhase
from .collide import Manifold
from .contacts import SCRATCH_KEPT, CollisionEvent, ContactArrays, ContactSolverData, ManifoldCache
from .core import (
    block_solver,
    contact_prepare,
    contact_solver,
    events,
    graph_color,
    integrate,
    islands,
    manifold_cache,
    substeps,
)
from .core.ccd import speculative_margins
from .core.narrowphase import collide_pairs, move_rows
from .core.records import SUBSTEP_STAGES, BodyState, Grabs, Joints, SolverContacts, StepSettings
from .core.threads import available_threads, run_on_threads, step_threads, threads_in_use, use_threads
from .linalg3 import inverse, norm
from .settings import MAX_DT, SETTINGS, SettingAttribute
from .shapes import ConvexHull, HullTable, Shape
from .snapshot import Snapshot
from .snapshot import restore as restore_snapshot
from .snapshot import take as take_snapshot
from .trace import NarrowState, SolverPass, StepTrace, solver_pass_labels
from .validate import (
    MAX_ANGULAR_SPEED,
    MAX_COORDINATE,
    MAX_FRICTION,
    MAX_GRAVITY,
    MAX_GRAVITY_SCALE,
    MAX_SPEED,
    body_mass,
    boolean,
    float_in,
    is_number,
    positive_float,
    show,
    unit_quaternion,
    vec,
)

RESPONSES = SETTINGS["response"].choices  # in the order of core.records' IMPULSE, PROJECTION, PENALTY
RESTITUTION_RULES = SETTINGS["restitution_rule"].choices  # in the order of core/restitution.py's RULE_*
FRICTION_RULES = SETTINGS["friction_rule"].choices  # in the order of core/friction.py's RULE_*
CONTACT_SOLVERS = SETTINGS["contact_solver"].choices  # in the order of core.records' WIDE, REFERENCE
# the step's stages in the order they run (World.timings); the middle six run once per sub-step, their
# times summed over the sub-steps
STAGES = ("find_pairs", "collide", "prepare_contacts", *SUBSTEP_STAGES, "store_impulses", "sleep", "events")
# the stages grouped as the panel's tree shows them: collision detection, collision response, the rest
STAGE_GROUPS = (("detection", STAGES[:2]), ("response", STAGES[2:-2]), ("sleep and events", STAGES[-2:]))
SIDE_BY_SIDE = 2048
"""The fewest manifolds with which a step on more than one thread runs the colouring
(``graph_color.color_contacts``) on the calling thread while a worker of ``threads.run_on_threads``
finishes the narrow phase's compaction (``narrowphase.move_rows``: the manifolds' normals, points and
depths, which the colouring does not read), makes the manifolds the contact cache's entries
(``manifold_cache.remember_manifolds``, on that thread alone) and matches them with last step's
(``contact_prepare.match_previous``). The two write nothing the other reads, so the result is the same
bit for bit as one after the other. What it buys: all are serial passes over the manifolds, the
colouring some 210-240 µs a step on S3 and the S1 pile of 4096, the remembering and matching 60 and 300
µs there; one after the other on two threads (the remembering's frames then shared) they took some 550
µs a step on the pile. The move joined the worker's part in the twenty-seventh session (see
``narrowphase.collide_pairs``); it had run before both, on the calling thread."""


@dataclass(frozen=True)
class RayHit:
    """The closest body along a ray: the ``body``, the world ``point`` hit, the outward surface ``normal``
    there, and the ``distance`` from the ray's origin."""

    body: Body
    point: np.ndarray
    normal: np.ndarray
    distance: float


class DistanceJoint:
    """A rod (or, with ``rope``, a rope that only pulls) of ``length`` between an anchor on ``body_a`` and
    one on ``body_b``, or a fixed world point when ``body_b`` is None."""

    def __init__(self, world: World, body_a: Body, body_b: Body | None, local_a: np.ndarray,
                 local_b: np.ndarray, length: float, rope: bool) -> None:
        self._world = world
        self.body_a = body_a
        self.body_b = body_b
        self.local_a = local_a
        self.local_b = local_b  # for a world joint: the fixed world point
        self.length = length
        self.rope = rope
        self.impulse = 0.0

    def anchor_world_a(self) -> np.ndarray:
        """The anchor on body A, in world coordinates."""
        d = self._world.data
        return d.pos[self.body_a.index] + rotate(d.quat[self.body_a.index], self.local_a)

    def anchor_world_b(self) -> np.ndarray:
        """The anchor on body B (or the fixed world point), in world coordinates."""
        if self.body_b is None:
            return self.local_b.copy()
        d = self._world.data
        return d.pos[self.body_b.index] + rotate(d.quat[self.body_b.index], self.local_b)


class Grab:
    """A mouse grab: a soft spring from a point of ``body`` to ``target`` (see ``World.grab``)."""

    def __init__(self, world: World, body: Body, local_anchor: np.ndarray, target: np.ndarray,
                 max_force: float, frequency: float, damping_ratio: float) -> None:
        self._world = world
        self.body = body
        self.local_anchor = local_anchor
        self._target = target
        self.max_force = max_force
        self.frequency = frequency
        self.damping_ratio = damping_ratio
        self.impulse = np.zeros(3)
        self.force = np.zeros(3)

    @property
    def target(self) -> np.ndarray:
        """Where the grabbed point is pulled to (world coordinates); settable."""
        return self._target.copy()

    @target.setter
    def target(self, value) -> None:
        self._target = vec("target", value, limit=MAX_COORDINATE)
        self._world._touch(self.body.index)

    @property
    def anchor_world(self) -> np.ndarray:
        """The grabbed point of the body, in world coordinates, now."""
        d = self._world.data
        return d.pos[self.body.index] + rotate(d.quat[self.body.index], self.local_anchor)


class World:
    """A rigid-body world: add bodies, call ``step(dt)``, read the state.

    >>> from sandbox.engine import World, Sphere, Box
    >>> w = World()
    >>> ground = w.add_body(Box((10, 0.5, 10)), position=(0, -0.5, 0), mass=0)
    >>> ball = w.add_body(Sphere(0.5), position=(0, 2, 0))
    >>> for _ in range(120):
    ...     w.step(1 / 60)
    >>> round(float(ball.position[1]), 2)
    0.5
    """

    def __init__(self, gravity=(0.0, -9.81, 0.0)) -> None:
        self.data = BodyArrays()
        self.hulls = HullTable()
        self.contacts = ContactArrays()
        self.broad = BroadPhase("sap")
        self.pairs = np.zeros((0, 2), np.int64)
        self._events_cache: list[CollisionEvent] | None = []
        no_rows = np.zeros(0, np.int64)
        # the last step's events, decoded at the step into rows and generations (see _emit_events)
        self._no_begins: tuple = (no_rows, no_rows, no_rows, no_rows, np.zeros((0, 3)), np.zeros((0, 3)),
                                  np.zeros(0))
        self._begin_data: tuple = self._no_begins
        self._no_ends: tuple = (no_rows, no_rows, no_rows, no_rows)
        self._end_data: tuple = self._no_ends
        self._removed_ends: list[CollisionEvent] = []
        self.timings = dict.fromkeys(STAGES, 0.0)
        self.joints: list[DistanceJoint] = []
        self.grabs: list[Grab] = []
        self.time = 0.0
        self.steps = 0
        self._gravity = vec("gravity", gravity, limit=MAX_GRAVITY)
        self._shapes: dict[int, Shape] = {}
        self._default_masses: dict[int, float] = {}
        self._lock_rotation: set[int] = set()  # rows with infinite inertia
        self._solver = ContactSolverData()
        self._manifold_cache = ManifoldCache()
        self._joint_arrays: Joints | None = None
        self._begin_callbacks: list[Callable[[CollisionEvent], None]] = []
        self._end_callbacks: list[Callable[[CollisionEvent], None]] = []
        self._touching = np.zeros(0, np.int64)  # sorted pair keys touching after the last step
        self._touched = (np.zeros(1, np.int64), np.zeros(1, np.bool_))  # see _respond
        self._touching_n = 1  # the row count those keys were made with (pair_key's n)
        self._no_grabs: Grabs | None = None
        self._pending_events: list[CollisionEvent] = []
        self._island = np.arange(self.data.capacity)  # each body its own island until the first step
        self._island_min = np.zeros(self.data.capacity)
        # settings: every one of settings.SETTINGS (defaults, ranges and meanings are in that table), each
        # checked on assignment by the properties below
        for setting in SETTINGS.values():
            setattr(self, setting.name, setting.default)
        self._threads = available_threads()  # all of numba's threads (see the threads property)
        self.cached_manifolds = 0  # how many of the last step's manifolds came from the cache
        self._manifold_source = np.full(1, -1, np.int64)  # per manifold: its cache row, or -1 (collided)
        self._rows_moved = True  # whether the contacts' rows are in place (_move_rows)
        self._tracing: list[str] | None = None  # the solver pass labels while step_traced runs
        self._trace_lam = np.zeros((0, 1, 3))  # the solver trace (core/substeps.record_pass); no rows: off
        self._trace_vel = np.zeros((0, 1, 6))
        # the last snapshot taken or restored: the next one shares every array that has not changed since
        self._last_snapshot: Snapshot | None = None

    # -------------------------------------------------------------------------------------------------
    # settings

    # plain validated settings (see settings.SETTINGS); the ones whose change has side effects
    # (response, broadphase, gravity) are properties below
    substeps = SettingAttribute()
    iterations = SettingAttribute()
    restitution_rule = SettingAttribute()
    friction_rule = SettingAttribute()
    contact_solver = SettingAttribute()  # "wide" (SIMD lanes) or "reference" (one point after another)
    warm_starting = SettingAttribute()
    # small islands with a mass ratio solved as one block (core/block_solver.py); False: every contact by
    # sequential impulses, to show how a light body under a heavy one gives way
    block_solver = SettingAttribute()
    ccd = SettingAttribute()
    sleeping = SettingAttribute()
    # reuse a pair's manifold while the pair moves less than 1 mm / 2° relative to itself (Jolt's body
    # pair cache); False collides every pair afresh every step
    contact_cache = SettingAttribute()
    linear_damping = SettingAttribute()
    angular_damping = SettingAttribute()
    restitution_threshold = SettingAttribute()
    contact_hertz = SettingAttribute()
    contact_damping_ratio = SettingAttribute()
    max_push_velocity = SettingAttribute()
    linear_slop = SettingAttribute()
    speculative_distance = SettingAttribute()
    max_speculative = SettingAttribute()
    joint_hertz = SettingAttribute()
    joint_damping_ratio = SettingAttribute()
    penalty_hertz = SettingAttribute()
    penalty_damping_ratio = SettingAttribute()
    sleep_linear_threshold = SettingAttribute()
    sleep_angular_threshold = SettingAttribute()  # m/s at the body's rim
    time_to_sleep = SettingAttribute()

    @property
    def gravity(self) -> np.ndarray:
        """Gravity acceleration vector (m/s²)."""
        return self._gravity.copy()

    @gravity.setter
    def gravity(self, value) -> None:
        self._gravity = vec("gravity", value, limit=MAX_GRAVITY)
        self.wake_all()

    @property
    def response(self) -> str:
        """Collision response method: "impulse" (default), "projection" or "penalty"."""
        return self._response

    @response.setter
    def response(self, value: str) -> None:
        self._response = SETTINGS["response"].check(value)
        self._solver.forget()
        self._manifold_cache.forget()
        self.wake_all()

    @property
    def threads(self) -> int:
        """How many threads the step's parallel loops use (the broad phase's sweep, the narrow phase, the
        contact preparation, the solver's colours; see ``core/threads.py``): from 1 to
        the size of numba's thread pool (``NUMBA_NUM_THREADS``, the machine's cores by default), which is
        also the default. A world of fewer than ``core.threads.PARALLEL_BODIES`` bodies steps on one thread
        whatever the count: measured, its loops gain less on the threads than they lose moving its data
        between cores. The results are bit-identical whatever the count, so it is a property of the
        machine, not of the scene (scene files do not keep it)."""
        return self._threads

    @threads.setter
    def threads(self, value: int) -> None:
        top = available_threads()
        if not isinstance(value, (int, np.integer)) or isinstance(value, (bool, np.bool_)) \
                or not 1 <= value <= top:
            raise ValueError(f"threads must be an integer from 1 to {top} (numba's thread pool), "
                             f"got {show(value)}")
        self._threads = int(value)

    @property
    def max_threads(self) -> int:
        """The most threads ``threads`` accepts: the size of numba's thread pool."""
        return available_threads()

    @property
    def broadphase(self) -> str:
        """Broad-phase method: "brute", "sap" (default), "grid" or "octree"."""
        return self.broad.method

    @broadphase.setter
    def broadphase(self, value: str) -> None:
        self.broad.method = SETTINGS["broadphase"].check(value)

    # -------------------------------------------------------------------------------------------------
    # bodies

    def add_body(self, shape: Shape, position=(0.0, 0.0, 0.0), orientation=(0.0, 0.0, 0.0, 1.0),
                 mass: float = 1.0, restitution: float = 0.0, friction: float = 0.5,
                 velocity=(0.0, 0.0, 0.0), angular_velocity=(0.0, 0.0, 0.0),
                 gravity_scale: float = 1.0, lock_rotation: bool = False) -> Body:
        """Add a body of ``shape`` and return its handle. ``mass`` 0 makes it static (immovable);
        ``lock_rotation`` gives it infinite inertia (a box that never turns behaves as an AABB).

        Every argument is checked before anything changes (``ValueError`` naming it otherwise): a mass of
        0 or from ``validate.MIN_MASS`` to ``MAX_MASS``, restitution from 0 to 1 (above 1 a bounce would
        gain energy), friction from 0 to ``MAX_FRICTION``, and positions and velocities within the bounds
        documented in ``validate``."""
        if not isinstance(shape, Shape):
            raise ValueError(f"shape must be a Sphere, Box, Capsule or ConvexHull, got {show(shape)}")
        p = vec("position", position, limit=MAX_COORDINATE)
        q = unit_quaternion("orientation", orientation)
        m = body_mass("mass", mass)
        e = float_in("restitution", restitution, 0.0, 1.0)
        mu = float_in("friction", friction, 0.0, MAX_FRICTION)
        v = vec("velocity", velocity, limit=MAX_SPEED)
        w = vec("angular_velocity", angular_velocity, limit=MAX_ANGULAR_SPEED)
        gs = float_in("gravity_scale", gravity_scale, -MAX_GRAVITY_SCALE, MAX_GRAVITY_SCALE)
        lock = boolean("lock_rotation", lock_rotation)
        inv_inertia = self._inverse_inertia(shape, m, lock)  # raises before a row is taken
        d = self.data
        i = d.allocate()
        if d.capacity > len(self._island):
            self._island = np.arange(d.capacity)
            self._island_min = np.zeros(d.capacity)
        params = list(shape.params())
        if isinstance(shape, ConvexHull):
            params[0] = float(self.hulls.register(shape))
            d.com_offset[i] = shape.center
        d.kind[i] = shape.kind
        d.params[i] = params
        d.quat[i] = q
        d.pos[i] = p + rotate(q, d.com_offset[i])
        d.restitution[i] = e
        d.friction[i] = mu
        d.gravity_scale[i] = gs
        d.radius[i] = shape.bounding_radius()
        d.alive[i] = True
        d.awake[i] = True
        d.sleep_time[i] = 0.0
        self._shapes[i] = shape
        self._default_masses[i] = m if m > 0 else 1.0
        if lock:
            self._lock_rotation.add(i)
        else:
            self._lock_rotation.discard(i)
        self._set_mass(i, m, inv_inertia)
        if m > 0:
            d.vel[i] = v
            d.angvel[i] = 0.0 if lock else w
        self._solver.forget()
        self._manifold_cache.forget()
        return Body(self, i, int(d.generation[i]))

    @staticmethod
    def _inverse_inertia(shape: Shape, m: float, locked: bool) -> np.ndarray:
        """The body-frame inverse inertia of ``shape`` with mass ``m`` (zero when static or locked against
        rotation); ValueError when it is not finite, so that no infinity reaches the solver (the mass and
        length bounds of ``validate`` keep every shape inside, this is the check that they do)."""
        if m == 0.0 or locked:
            return np.zeros((3, 3))
        inv = inverse(shape.inertia(m))  # all ∞ when singular
        if not np.all(np.isfinite(inv)):
            raise ValueError(f"mass {m:g} kg gives {shape!r} an inertia whose inverse is not finite")
        return inv

    def _set_mass(self, i: int, m: float, inv_inertia: np.ndarray | None = None) -> None:
        """Mass and inertia of row ``i`` from its shape (``inv_inertia``, the body-frame inverse inertia,
        when the caller has it already); 0 makes it static (infinite mass and inertia). ``m`` has been
        checked by ``validate.body_mass``, so 1/m is finite; nothing changes on a ValueError."""
        d = self.data
        shape = self._shapes[i]
        if m > 0:
            if inv_inertia is None:
                inv_inertia = self._inverse_inertia(shape, m, i in self._lock_rotation)
            d.mass[i] = m
            d.inv_mass[i] = 1.0 / m
            d.static[i] = False
            self._default_masses[i] = m
            d.inv_inertia_local[i] = inv_inertia
        else:
            d.mass[i] = 0.0
            d.inv_mass[i] = 0.0
            d.static[i] = True
            d.inv_inertia_local[i] = 0.0
            d.vel[i] = 0.0
            d.angvel[i] = 0.0
        d.refresh_inertia(i)
        self._touch(i)

    def remove_body(self, body: Body) -> None:
        """Remove ``body``; other handles stay valid, this one raises from now on. Its joints and grabs
        go with it, and an end event is reported (with the next step's events) for every body it was
        touching, so that begin and end events always come in pairs."""
        i = self._row_of(body)
        d = self.data
        keys = self._touching
        n = self._touching_n  # the keys' own row count: rows may have been added since they were made
        mine = keys[(keys // n == i) | (keys % n == i)]
        for key in mine.tolist():
            a, b = divmod(key, n)
            self._pending_events.append(CollisionEvent("end", self.body(a) if a != i else body,
                                                       self.body(b) if b != i else body))
        self._touching = np.setdiff1d(keys, mine)
        self.joints = [j for j in self.joints if j.body_a != body and j.body_b != body]
        self.grabs = [g for g in self.grabs if g.body != body]
        self._joint_arrays = None
        self._touch(i)
        d.release(i)
        self._shapes.pop(i, None)
        self._default_masses.pop(i, None)
        self._lock_rotation.discard(i)
        self._solver.forget()
        self._manifold_cache.forget()

    def _row_of(self, body: object, name: str = "body") -> int:
        """The row of ``body`` after checking that it is a live body of this world; ValueError naming
        ``name`` otherwise (a handle of another world would address a row of this one that is some
        other body, or none)."""
        if not isinstance(body, Body):
            raise ValueError(f"{name} must be a Body, got {show(body)}")
        if body._world is not self:
            raise ValueError(f"{name} {body!r} belongs to another world")
        if not body.alive:
            raise ValueError(f"{name} {body!r} has been removed from this world")
        return body.index

    def body(self, index: int) -> Body:
        """The handle of the live body in row ``index``."""
        d = self.data
        if not 0 <= index < d.n or not d.alive[index]:
            raise ValueError(f"no body at index {index}")
        return Body(self, int(index), int(d.generation[index]))

    @property
    def bodies(self) -> list[Body]:
        """Handles of all live bodies, in row order."""
        d = self.data
        return [Body(self, int(i), int(d.generation[i])) for i in np.flatnonzero(d.alive[: d.n])]

    def clear(self, dynamic_only: bool = True) -> None:
        """Remove every dynamic body (or every body, with ``dynamic_only=False``)."""
        d = self.data
        for b in self.bodies:
            if not dynamic_only or not d.static[b.index]:
                self.remove_body(b)

    def _touch(self, i: int) -> None:
        """Wake body ``i`` and its island: something about it changed."""
        d = self.data
        if not d.alive[i] or d.static[i]:
            return
        if not d.awake[i] and i < len(self._island):
            root = self._island[i]
            same = (self._island[: d.n] == root) & d.alive[: d.n]
            d.awake[: d.n][same] = True
            d.sleep_time[: d.n][same] = 0.0
        d.awake[i] = True
        d.sleep_time[i] = 0.0

    def wake_all(self) -> None:
        """Wake every body (after a change of a global setting)."""
        d = self.data
        d.awake[: d.n] = True
        d.sleep_time[: d.n] = 0.0

    # -------------------------------------------------------------------------------------------------
    # joints and grabs

    def add_distance_joint(self, a: Body, b: Body | None, anchor_a=None, anchor_b=None,
                           length: float | None = None, rope: bool = False) -> DistanceJoint:
        """Join the world point ``anchor_a`` of body ``a`` to ``anchor_b`` of body ``b`` (or to the fixed
        world point ``anchor_b`` when ``b`` is None) by a rod of ``length`` (default: their current
        distance), or a rope that only pulls. Anchors default to the centres of mass. Both bodies must be
        live bodies of this world, and different."""
        ia = self._row_of(a, "a")
        da = self.data
        pa = vec("anchor_a", anchor_a, limit=MAX_COORDINATE) if anchor_a is not None else da.pos[ia].copy()
        la = unrotate(da.quat[ia], pa - da.pos[ia])
        if b is None:
            if anchor_b is None:
                raise ValueError("anchor_b (a world point) is required when b is None")
            pb = vec("anchor_b", anchor_b, limit=MAX_COORDINATE)
            lb = pb.copy()
        else:
            ib = self._row_of(b, "b")
            if ib == ia:
                raise ValueError(f"a and b must be different bodies, got {a!r} twice")
            pb = da.pos[ib].copy() if anchor_b is None else vec("anchor_b", anchor_b, limit=MAX_COORDINATE)
            lb = unrotate(da.quat[ib], pb - da.pos[ib])
        if length is None:
            length = norm(pb - pa)
        length = float_in("length", length, 0.0, 4.0 * MAX_COORDINATE, "m")
        joint = DistanceJoint(self, a, b, la, lb, length, boolean("rope", rope))
        self.joints.append(joint)
        self._joint_arrays = None
        self._touch(a.index)
        if b is not None:
            self._touch(b.index)
        return joint

    def remove_joint(self, joint: DistanceJoint) -> None:
        """Remove a joint made by ``add_distance_joint``; ValueError for one that is not in this world."""
        if not any(j is joint for j in self.joints):
            raise ValueError(f"joint {show(joint)} is not a joint of this world")
        self.joints.remove(joint)
        self._joint_arrays = None
        self._touch(joint.body_a.index)

    def grab(self, body: Body, world_point, max_force: float | None = None, frequency: float = 5.0,
             damping_ratio: float = 1.0) -> Grab:
        """Grab ``body`` at ``world_point`` with a soft spring (Box2D's mouse joint) whose target starts
        at that point; move it with ``grab.target = p``, let go with ``release``. The spring is critically
        damped by default, its stiffness follows the body's effective mass (so light and heavy bodies
        feel the same), and its force is capped at ``max_force`` (default 50·m·g)."""
        self._row_of(body)
        d = self.data
        if d.static[body.index]:
            raise ValueError(f"cannot grab the static body {body!r}")
        p = vec("world_point", world_point, limit=MAX_COORDINATE)
        g = float(np.linalg.norm(self._gravity)) or 9.81
        mf = (50.0 * d.mass[body.index] * g if max_force is None
              else float_in("max_force", max_force, 0.0, 1e15, "N"))
        local = unrotate(d.quat[body.index], p - d.pos[body.index])
        grab = Grab(self, body, local, p, mf, float_in("frequency", frequency, 1e-3, 1000.0, "Hz"),
                    float_in("damping_ratio", damping_ratio, 0.0, 1000.0))
        self.grabs.append(grab)
        self._touch(body.index)
        return grab

    def release(self, grab: Grab) -> None:
        """Let go of a grab; the body keeps the velocity it has."""
        if grab in self.grabs:
            self.grabs.remove(grab)

    def _joints_packed(self) -> Joints:
        if self._joint_arrays is None:
            nj = len(self.joints)
            m = max(nj, 1)
            jb = np.zeros((m, 2), np.int64)
            jla = np.zeros((m, 3))
            jlb = np.zeros((m, 3))
            jworld = np.zeros((m, 3))
            jlen = np.zeros(m)
            jrope = np.zeros(m, np.bool_)
            for k, j in enumerate(self.joints):
                jb[k] = (j.body_a.index, -1 if j.body_b is None else j.body_b.index)
                jla[k] = j.local_a
                jlb[k] = j.local_b
                jworld[k] = j.local_b
                jlen[k] = j.length
                jrope[k] = j.rope
            self._joint_arrays = Joints(nj, jb, jla, jlb, jlen, jrope, np.zeros(m), jworld)
        return self._joint_arrays

    def _grabs_packed(self) -> Grabs:
        """The grabs as the kernels' ``Grabs`` record; the impulses start at zero."""
        ng = len(self.grabs)
        if ng == 0:
            if self._no_grabs is None:
                self._no_grabs = Grabs(0, np.zeros(1, np.int64), np.zeros((1, 3)), np.zeros((1, 3)),
                                       np.zeros((1, 3)), np.zeros(1), np.zeros(1), np.zeros(1))
            return self._no_grabs
        return Grabs(ng, np.array([g.body.index for g in self.grabs], np.int64),
                     np.array([g.local_anchor for g in self.grabs], dtype=float),
                     np.array([g._target for g in self.grabs], dtype=float), np.zeros((ng, 3)),
                     np.array([g.frequency for g in self.grabs], dtype=float),
                     np.array([g.damping_ratio for g in self.grabs], dtype=float),
                     np.array([g.max_force for g in self.grabs], dtype=float))

    # -------------------------------------------------------------------------------------------------
    # the step

    def step(self, dt: float) -> None:
        """Advance the world by ``dt`` seconds, stage by stage (``STAGES``; each one's milliseconds in
        ``timings``): find the candidate pairs (broad phase), collide them (narrow phase), then respond
        (prepare the contacts, then per sub-step integrate velocities, warm start, solve, integrate
        positions, relax; then restitution and storing the impulses), then sleeping and events."""
        dt = positive_float("dt", dt)
        if dt > MAX_DT:  # see settings.MAX_DT: a longer step is no longer a small piece of motion
            raise ValueError(f"dt must be at most {MAX_DT:g} s (settings.MAX_DT), got {dt:g}")
        n = self.data.n
        t = self.timings
        # the last step's begin events are this step's to replace and nothing reads them during it: not
        # kept through it (a pile's first step begins every pair, 88 bytes each)
        self._begin_data, self._events_cache = self._no_begins, None
        use_threads(step_threads(self._threads, n))
        clock = time.perf_counter
        t0 = clock()
        margins = self._margins(n, dt)
        self.pairs = self._find_pairs(n, margins)
        t1 = clock()
        self._collide(self.pairs, margins)
        t2 = clock()
        t["find_pairs"], t["collide"] = 1e3 * (t1 - t0), 1e3 * (t2 - t1)
        self._respond(n, dt)
        t3 = clock()
        self._sleep(n, dt)
        integrate.clear_forces(n, self.data.force, self.data.torque)
        self.time += dt
        self.steps += 1
        t4 = clock()
        self._emit_events()
        t["sleep"], t["events"] = 1e3 * (t4 - t3), 1e3 * (clock() - t4)

    def step_traced(self, dt: float) -> StepTrace:
        """``step(dt)``, recording what each stage computed (``trace.StepTrace``): the world advances
        exactly as ``step`` would advance it, bit for bit, since the same code runs and the kernels only
        copy their results out. The narrow phase is traced per pair on demand (``StepTrace.pair``), from
        the state it read, kept here before the step: poses, shapes and the same margins ``step``
        computes (its first stage reads nothing else)."""
        n = self.data.n
        d = self.data
        before = (d.kind[:n].copy(), d.params[:n].copy(), d.pos[:n].copy(), d.quat[:n].copy(),
                  self._margins(n, positive_float("dt", dt)), self.hulls.arrays())
        labels = solver_pass_labels(self._response, self._substeps, self._iterations, self._warm_starting)
        self._tracing = labels
        try:
            self.step(dt)
        finally:
            self._tracing = None
            lam, vel = self._trace_lam, self._trace_vel
            self._trace_lam, self._trace_vel = np.zeros((0, 1, 3)), np.zeros((0, 1, 6))
        c = self.contacts
        k = int(sum(c.npoints[i] for i in range(c.count) if c.first[i] >= 0))
        point_manifold = np.full(k, -1, np.int64)
        point_slot = np.zeros(k, np.int64)
        for i in range(c.count):
            f = c.first[i]
            if f >= 0:
                point_manifold[f:f + c.npoints[i]] = i
                point_slot[f:f + c.npoints[i]] = np.arange(c.npoints[i])
        bodies = np.stack([c.body_a[point_manifold], c.body_b[point_manifold]], axis=1)
        passes = [SolverPass(label, lam[r, :k, 0].copy(), lam[r, :k, 1:].copy(), vel[r, :n, :3].copy(),
                             vel[r, :n, 3:].copy()) for r, label in enumerate(labels)]
        skipped = () if self._response == "impulse" else ("warm_start", "restitution")
        cached = self._manifold_source[: c.count] >= 0
        ends = c.body_a[: c.count][cached], c.body_b[: c.count][cached]
        narrow = NarrowState(*before, frozenset(zip(np.minimum(*ends).tolist(), np.maximum(*ends).tolist(),
                                                    strict=True)))
        return StepTrace(tuple(s for s in STAGES if s not in skipped), dict(self.timings), self.pairs.copy(),
                         self.manifolds, point_manifold, point_slot, bodies, passes, narrow)

    def _find_pairs(self, n: int, margins: np.ndarray) -> np.ndarray:
        """The broad phase: candidate pairs of bodies whose margin-enlarged bounding boxes overlap.
        Sleeping pairs are found (and collided) too, so their contacts stay visible and keep their
        islands together; the solver gives them no points, which is where sleeping saves the time."""
        d = self.data
        return self.broad.update(n, d.alive, d.static, d.kind, d.params, d.pos, d.quat, self.hulls.arrays(),
                                 margins)

    def _sleep(self, n: int, dt: float) -> None:
        """Sleeping (``core/islands.py``): islands of bodies that have rested long enough stop moving."""
        d = self.data
        c = self.contacts
        if len(self._island) < d.capacity:
            self._island = np.arange(d.capacity)
            self._island_min = np.zeros(d.capacity)
        if not self.sleeping:
            d.awake[:n] = True
            return
        joints = self._joints_packed()
        islands.update_sleep(n, d.alive, d.static, d.awake, d.vel, d.angvel, d.radius, d.sleep_time, c.count,
                             c.body_a, c.body_b, c.npoints, c.depth, joints.count, joints.bodies, dt,
                             self.sleep_linear_threshold, self.sleep_angular_threshold, self.time_to_sleep,
                             self._island, self._island_min)

    def _margins(self, n: int, dt: float) -> np.ndarray:
        """Per-body speculative margin: contacts are made this far before touching (Catto, "Continuous
        Collision", GDC 2013: speculative contacts). It includes the distance the body can travel in the
        step, (|v| + |ω|·r)·dt, so that an impact is seen in the step where it happens, not one step late
        and deep; without CCD that allowance is capped at ``max_speculative`` (a fast body then tunnels,
        as it would in an engine without CCD), with CCD it is not, so nothing passes through anything."""
        d = self.data
        out = np.empty(max(n, 1))
        cap = np.inf if self.ccd else float(self.max_speculative)
        speculative_margins(n, d.vel, d.angvel, d.radius, float(dt), 0.5 * float(self.speculative_distance),
                            cap, out)
        return out[:n]

    def _collide(self, pairs: np.ndarray, margins: np.ndarray) -> None:
        """The narrow phase: a manifold per touching candidate pair, into ``self.contacts``. With
        ``contact_cache``, pairs whose relative pose has hardly changed since their manifold was computed
        reuse it (see ``core/manifold_cache.py``); the others are collided afresh. An awake body touching
        a sleeping island wakes it."""
        d = self.data
        c = self.contacts
        mc = self._manifold_cache
        npairs = len(pairs)
        nbodies = max(d.n, 1)
        c.ensure(npairs)
        H = self.hulls.arrays()
        out = c.manifolds()
        source = np.empty(max(npairs, 1), np.int64)
        if not self.contact_cache:
            mc.forget()
        reused = 0
        if npairs:
            # the pairs whose manifold the cache can give get it; the narrow phase collides the others
            reused = manifold_cache.reuse_manifolds(pairs, npairs, d.kind, d.pos, d.quat, nbodies, mc.current,
                                                    mc.count, out, source)
            c.count = collide_pairs(pairs, npairs, d.kind, d.params, d.pos, d.quat, H, margins, *out, source,
                                    reused, c.row)
        else:
            c.count = 0
        self._rows_moved = reused == npairs  # every manifold from the cache, or none: nothing to move
        self.cached_manifolds = reused
        self._manifold_source = source  # per manifold, the cache row it came from or -1 (step_traced)
        if self.sleeping and c.count:
            islands.wake_touched(c.count, c.body_a, c.body_b, d.static, d.awake, d.sleep_time, self._island,
                                 d.n)

    def _move_rows(self) -> None:
        """The narrow phase's last pass, left to ``_respond`` to run beside the colouring, which does not
        read what it moves (``narrowphase.collide_pairs``): the manifolds' normals, points and depths
        moved down to their rows. Until then the contacts hold only their bodies and point counts."""
        if not self._rows_moved:
            c = self.contacts
            move_rows(c.count, c.row, c.normal, c.npoints, c.points_a, c.points_b, c.depth)
            self._rows_moved = True

    def _remember(self, shared: bool = True) -> Callable[[], None]:
        """The narrow phase's last part: make this step's manifolds the contact cache's entries
        (``core/manifold_cache.py``), for the next step to reuse; ``_respond`` runs it beside the colouring.
        Makes room for them here and returns the kernels' part, to call (on any thread); ``shared`` False
        keeps that part on the thread that calls it."""
        c = self.contacts
        d = self.data
        mc = self._manifold_cache
        if not self.contact_cache:
            return lambda: None
        cache = mc.reserve(max(c.count, 1), max(c.point_count(), 1))
        args = (c.count, c.manifolds(), self._manifold_source, d.kind, d.pos, d.quat, max(d.n, 1), cache,
                shared)

        def remember() -> None:
            mc.remembered(*manifold_cache.remember_manifolds(*args))

        return remember

    def _respond(self, n: int, dt: float) -> None:
        """Prepare the contacts (colour them, make solver points, warm start from last step's impulses),
        run the selected response method over the sub-steps, and keep the impulses for the next step."""
        d = self.data
        c = self.contacts
        s = self._solver
        t0 = time.perf_counter()
        moving = d.alive[:n] & ~d.static[:n] & d.awake[:n]
        s.ensure(max(c.point_count(), 1), max(c.count, 1), max(d.n, 1))
        blocks = s.blocks_record()
        island = np.empty(max(c.count, 1), np.int64)
        if self._response == "impulse" and self._block_solver:
            block_solver.mark_stiff_islands(c.count, c.body_a, c.body_b, c.npoints, moving, d.inv_mass[:n],
                                            np.empty(max(n, 1), np.int64), island)
        else:
            island[:] = -1
        previous = s.previous()
        recolour = not (graph_color.same_graph(c.count, c.body_a, c.body_b, c.npoints, moving, island,
                                               s.graph_count, s.graph_a, s.graph_b, s.graph_code)
                        and s.colouring[1] is c.first)  # else last step's colouring holds (same_graph)
        side_by_side = recolour and threads_in_use() > 1 and c.count >= SIDE_BY_SIDE
        remember = self._remember(not side_by_side)

        def colour() -> None:
            # a region of bodies per thread, each region's manifolds kept together in each colour (see
            # graph_color.body_regions); one thread: one region
            regions = max(1, min(threads_in_use(), c.count // graph_color.REGION_MANIFOLDS))
            region = graph_color.body_regions(n, moving, d.pos, regions)
            coloured = graph_color.color_contacts(c.count, c.body_a, c.body_b, c.npoints, moving, c.first,
                                                  s.cidx, blocks, s.mask, island, region, regions)
            s.colouring = (coloured, c.first)

        def remember_and_match() -> None:
            self._move_rows()
            remember()
            contact_prepare.match_previous(c.count, c.body_a, c.body_b, previous, max(d.n, 1), s.match)

        if side_by_side:
            # two serial passes that share nothing, at once (see SIDE_BY_SIDE); each thread's part is
            # kernels with next to no Python between them, so that neither waits for the other's GIL
            run_on_threads(lambda i, k: colour() if i == 0 else remember_and_match(), 2, more=True)
        else:
            remember_and_match()
            if recolour:
                colour()
        nb, wide, direct, floats, npts = s.colouring[0]
        s.ensure_wide(floats)
        points = s.points_record()
        bodies = BodyState(n, moving, d.pos, d.quat, d.vel, d.angvel, d.force, d.torque, d.inv_mass,
                           d.inv_inertia_local, d.inv_inertia, d.inv_inertia_start, d.gravity_scale, d.radius,
                           d.restitution, d.friction, d.dpos, d.drot, d.speed, d.scratch, d.solver)
        rules = (FRICTION_RULES.index(self._friction_rule), RESTITUTION_RULES.index(self._restitution_rule))
        contact_prepare.prepare_contacts(nb, blocks, c.manifolds(), c.first, bodies, rules, s.match,
                                         self._manifold_source, previous, self._warm_starting,
                                         self._response != "impulse", points, s.Inv)
        contacts = SolverContacts(npts, nb, wide, direct, blocks, c.body_a, c.body_b, c.first, c.npoints,
                                  points, *s.lane_rows(threads_in_use()), island, s.lane_body_array(wide))
        joints = self._joints_packed()
        joints.impulse[:] = 0.0
        grabs = self._grabs_packed()
        if self._tracing is not None:
            self._trace_lam = np.zeros((len(self._tracing), max(npts, 1), 3))
            self._trace_vel = np.zeros((len(self._tracing), max(n, 1), 6))
        t1 = time.perf_counter()
        times = np.zeros(len(SUBSTEP_STAGES))
        substeps.run_substeps(self._step_settings(dt), bodies, contacts, joints, grabs, times,
                              self._trace_lam, self._trace_vel)
        t2 = time.perf_counter()
        keep = s.keep_buffers(c.count, npts)
        store_shares = threads_in_use() if c.count >= contact_solver.PARALLEL_STORE else 1
        touching = np.empty(max(c.count, 1), np.bool_)
        contact_solver.store_impulses(c.count, c.body_a, c.body_b, c.first, c.npoints, points, c.impulse,
                                      keep, max(d.n, 1), store_shares, c.depth, touching)
        self._touched = (keep.keys, touching)  # this step's pair keys and which touch (_emit_events)
        s.keep(c.count)
        if s.scratch_bytes() > SCRATCH_KEPT:
            s.release_scratch()
        for k, j in enumerate(self.joints):
            j.impulse = float(joints.impulse[k])
        for k, grab in enumerate(self.grabs):
            grab.impulse = grabs.impulse[k].copy()
            grab.force = grab.impulse / dt
        self.timings["prepare_contacts"] = 1e3 * (t1 - t0)
        self.timings.update(zip(SUBSTEP_STAGES, (1e3 * times).tolist(), strict=True))
        self.timings["store_impulses"] = 1e3 * (time.perf_counter() - t2)

    def _step_settings(self, dt: float) -> StepSettings:
        """The settings the response stage reads, each converted to its type (so that numba compiles one
        signature whatever the user assigned)."""
        return StepSettings(
            dt=float(dt), substeps=int(self._substeps), iterations=int(self._iterations),
            response=RESPONSES.index(self._response), solver=CONTACT_SOLVERS.index(self._contact_solver),
            warm_starting=bool(self._warm_starting), gravity=tuple(self._gravity.tolist()),
            linear_damping=float(self.linear_damping), angular_damping=float(self.angular_damping),
            contact_hertz=float(self.contact_hertz), contact_damping_ratio=float(self.contact_damping_ratio),
            max_push_velocity=float(self.max_push_velocity), linear_slop=float(self.linear_slop),
            joint_hertz=float(self.joint_hertz), joint_damping_ratio=float(self.joint_damping_ratio),
            penalty_hertz=float(self.penalty_hertz), penalty_damping_ratio=float(self.penalty_damping_ratio),
            restitution_threshold=float(self.restitution_threshold))

    # -------------------------------------------------------------------------------------------------
    # results

    @property
    def manifolds(self) -> list[Manifold]:
        """The touching manifolds of the last step (points with depth ≥ 0; the speculative contacts the
        solver also used stay in ``contacts``), each with ``body_a`` and ``body_b``."""
        c = self.contacts
        out = []
        for i in range(c.count):
            k = c.npoints[i]
            keep = c.depth[i, :k] >= 0.0
            if not keep.any():
                continue
            out.append(Manifold(normal=c.normal[i].copy(), points_a=c.points_a[i, :k][keep].copy(),
                                points_b=c.points_b[i, :k][keep].copy(), depths=c.depth[i, :k][keep].copy(),
                                body_a=self.body(int(c.body_a[i])), body_b=self.body(int(c.body_b[i])),
                                impulses=c.impulse[i, :k][keep].copy()))
        return out

    def raycast(self, origin, direction, max_distance: float = float("inf")) -> RayHit | None:
        """The closest body hit by the ray from ``origin`` along ``direction`` within ``max_distance``,
        found through the broad phase's spatial structure; None when nothing is hit."""
        o = vec("origin", origin)
        dvec = vec("direction", direction)
        length = norm(dvec)
        if length < 1e-12:
            raise ValueError("direction must be a non-zero vector")
        md = float(max_distance) if is_number(max_distance) else math.nan  # no bools or strings
        if np.isnan(md) or md < 0:
            raise ValueError(f"max_distance must be non-negative, got {max_distance!r}")
        d = self.data
        hit = self.broad.raycast(o, dvec / length, md, d.n, d.alive, d.kind, d.params, d.pos, d.quat,
                                 self.hulls.arrays())
        if hit is None:
            return None
        i, t, point, normal = hit
        return RayHit(self.body(int(i)), np.asarray(point, float), np.asarray(normal, float), float(t))

    def on_collision_begin(self, callback: Callable[[CollisionEvent], None]) -> None:
        """Call ``callback(event)`` after each step for every pair that started touching."""
        self._begin_callbacks.append(callback)

    def on_collision_end(self, callback: Callable[[CollisionEvent], None]) -> None:
        """Call ``callback(event)`` after each step for every pair that stopped touching."""
        self._end_callbacks.append(callback)

    def _emit_events(self) -> None:
        """Compare the touching pairs with last step's (a merge of sorted keys, in a kernel) and record the
        begins and ends, decoded here into body rows and generations, so that they name the same bodies
        whatever happens afterwards (bodies removed or added); Python event objects are made from those
        only when asked for or when callbacks listen.

        Pair keys are ``min·n + max`` for the row count ``n`` of the step that made them (``pair_key``):
        last step's keys are re-keyed to this step's ``n`` before the merge, since an added body changes
        ``n`` and a key made with the old one decodes to another pair with the new one."""
        c = self.contacts
        d = self.data
        n = max(d.n, 1)
        m = c.count
        keys = np.empty(max(m, 1), np.int64)
        rows = np.empty(max(m, 1), np.int64)
        t = events.touching_keys(m, *self._touched, keys, rows)
        old = self._touching
        if self._touching_n != n:
            # (a, b) ↦ a·n + b keeps the lexicographic order, so the re-keyed list stays sorted
            a, b = np.divmod(old, self._touching_n)
            old = a * n + b
        out = np.empty(t + len(old), np.int64)
        begin_rows = np.empty(t, np.int64)
        end_keys = np.empty(len(old), np.int64)
        no, nb, ne = events.diff_touching(keys[:t], rows[:t], old, n, d.alive, d.awake, out, begin_rows,
                                          end_keys)
        del keys, rows
        self._touching = out[:no]
        self._touching_n = n
        # most steps of a settled scene begin and end nothing: the empty tuples then (gathering from empty
        # rows costs as much as the kernels above)
        if nb:
            br = begin_rows[:nb]
            ba, bb = c.body_a[br], c.body_b[br]
            impulse = c.impulse[br].sum(axis=1)  # store_impulses zeroes the slots beyond a manifold's points
            self._begin_data = (ba, bb, d.generation[ba], d.generation[bb], c.points_b[br, 0], c.normal[br],
                                impulse)
        else:
            self._begin_data = self._no_begins
        if ne:
            ea, eb = np.divmod(end_keys[:ne], n)
            self._end_data = (ea, eb, d.generation[ea], d.generation[eb])
        else:
            self._end_data = self._no_ends
        self._removed_ends, self._pending_events = self._pending_events, []
        self._events_cache = None
        if self._begin_callbacks or self._end_callbacks:
            for e in self.events:
                for cb in self._begin_callbacks if e.kind == "begin" else self._end_callbacks:
                    cb(e)

    @property
    def events(self) -> list[CollisionEvent]:
        """The collision begin and end events of the last step (ends of removed bodies' contacts first).

        They stay valid whatever happens after the step: their handles name the bodies as they were then
        (a removed body's handle reports ``alive`` False). Every end follows a begin of the same pair in an
        earlier step, also when a body is removed (its ends come with the next step's events)."""
        if self._events_cache is None:
            out = list(self._removed_ends)
            ba, bb, ga, gb, pts, nrm, imp = self._begin_data
            for k in range(len(ba)):
                out.append(CollisionEvent("begin", Body(self, int(ba[k]), int(ga[k])),
                                          Body(self, int(bb[k]), int(gb[k])), pts[k].copy(), nrm[k].copy(),
                                          float(imp[k])))
            ea, eb, ga, gb = self._end_data
            for k in range(len(ea)):
                out.append(CollisionEvent("end", Body(self, int(ea[k]), int(ga[k])),
                                          Body(self, int(eb[k]), int(gb[k]))))
            self._events_cache = out
        return self._events_cache

    # -------------------------------------------------------------------------------------------------
    # snapshots

    def snapshot(self) -> Snapshot:
        """A copy of everything the next step depends on (see ``snapshot.py``): ``restore`` brings the
        world back to it, and stepping on then gives the same states bit for bit. It shares with the
        previous snapshot every array whose bits did not change, so a history of them costs what changed.

        >>> from sandbox.engine import World, Sphere
        >>> w = World()
        >>> ball = w.add_body(Sphere(0.5), position=(0, 2, 0))
        >>> snap = w.snapshot()
        >>> w.step(1 / 60)
        >>> after = w.state_hash()
        >>> w.restore(snap)
        >>> w.step(1 / 60)
        >>> w.state_hash() == after
        True
        """
        snap = take_snapshot(self, self._last_snapshot)
        self._last_snapshot = snap
        return snap

    def restore(self, snapshot: Snapshot) -> None:
        """Make the world what it was when ``snapshot`` was taken (by this world or another: two worlds
        restored from one snapshot step identically). Handles of the snapshot's bodies are valid again;
        those of bodies added since report ``alive`` False and stay so."""
        if not isinstance(snapshot, Snapshot):
            raise ValueError(f"snapshot must be a Snapshot, got {show(snapshot)}")
        restore_snapshot(self, snapshot)
        self._last_snapshot = snapshot

    # -------------------------------------------------------------------------------------------------
    # diagnostics

    def kinetic_energy(self) -> float:
        """Σ ½·m·v² + ½·ω·I·ω over the dynamic bodies (J)."""
        d = self.data
        live = np.flatnonzero(d.alive[: d.n] & ~d.static[: d.n])
        v = d.vel[live]
        lin = 0.5 * float((d.mass[live] * (v * v).sum(axis=1)).sum())
        w = d.angvel[live]
        return lin + 0.5 * float(np.einsum("ni,ni->", w, self._world_inertia(live, w)))

    def _world_inertia(self, rows: np.ndarray, w: np.ndarray) -> np.ndarray:
        """I·ω per row (world frame) from the stored world inverse inertia A = I⁻¹, for all rows at once:
        I = adj(A)/det(A), the columns of the adjugate being the cross products of A's rows (a₁×a₂,
        a₂×a₀, a₀×a₁) and det(A) = a₀·(a₁×a₂). Rows locked against rotation have A = 0 and contribute
        nothing. The arithmetic runs on the matrices' entries across all rows (nine arrays of the row
        count): a batched ``np.linalg.solve``, or ``np.cross`` on (k, 3) arrays, loops over the rows
        with a few numbers each, some ten times slower for a thousand bodies."""
        a = np.take(self.data.inv_inertia, rows, axis=0).transpose(1, 2, 0)  # a[i][j]: entry (i, j) per row
        c = (_cross(a[1], a[2]), _cross(a[2], a[0]), _cross(a[0], a[1]))
        det = a[0][0] * c[0][0] + a[0][1] * c[0][1] + a[0][2] * c[0][2]
        ok = np.abs(det) > 1e-300
        scale = np.where(ok, 1.0 / np.where(ok, det, 1.0), 0.0)
        wt = w.T
        return np.stack([(c[0][j] * wt[0] + c[1][j] * wt[1] + c[2][j] * wt[2]) * scale for j in range(3)],
                        axis=1)

    def potential_energy(self) -> float:
        """Σ −m·g·x over the dynamic bodies (J), zero at the origin."""
        d = self.data
        live = np.flatnonzero(d.alive[: d.n] & ~d.static[: d.n])
        return -float((d.mass[live] * (d.pos[live] @ self._gravity) * d.gravity_scale[live]).sum())

    def momentum(self) -> np.ndarray:
        """Total linear momentum Σ m·v (kg·m/s)."""
        d = self.data
        live = np.flatnonzero(d.alive[: d.n] & ~d.static[: d.n])
        return (d.mass[live, None] * d.vel[live]).sum(axis=0)

    def angular_momentum(self, about=(0.0, 0.0, 0.0)) -> np.ndarray:
        """Total angular momentum about the point ``about``: Σ (x − about) × m·v + I·ω."""
        d = self.data
        live = np.flatnonzero(d.alive[: d.n] & ~d.static[: d.n])
        r = d.pos[live] - vec("about", about)
        orbital = np.cross(r, d.mass[live, None] * d.vel[live]).sum(axis=0)
        return orbital + self._world_inertia(live, d.angvel[live]).sum(axis=0)

    def memory_bytes(self) -> int:
        """Bytes of array data this world holds: every numpy array reachable from it (body arrays, the
        contacts, the solver's and the manifold cache's arrays, the broad phase, events, joints), each
        buffer once (a view counts as the array it views). Snapshots are left out (``Snapshot.nbytes``
        counts theirs): the world only keeps the last one to share arrays with the next."""
        seen: set[int] = set()
        buffers: dict[int, int] = {}
        todo: list[object] = [self]
        while todo:
            obj = todo.pop()
            if id(obj) in seen or isinstance(obj, Snapshot):
                continue
            seen.add(id(obj))
            if isinstance(obj, np.ndarray):
                while isinstance(obj.base, np.ndarray):
                    obj = obj.base
                buffers[id(obj)] = obj.nbytes
            elif isinstance(obj, (list, tuple, set, frozenset)):
                todo.extend(obj)
            elif isinstance(obj, dict):
                todo.extend(obj.values())
            elif type(obj).__module__.startswith("sandbox.engine"):
                todo.extend(getattr(obj, "__dict__", {}).values())
                todo.extend(getattr(obj, name, None) for name in getattr(type(obj), "__slots__", ()))
        return sum(buffers.values())

    def state_hash(self) -> str:
        """A SHA-256 digest (hex) of every live body's position, orientation, velocity and angular velocity,
        bit for bit: equal hashes mean identical states (Box2D's determinism test compares such a hash
        across processes, platforms and versions)."""
        d = self.data
        live = np.flatnonzero(d.alive[: d.n])
        h = hashlib.sha256(live.astype(np.int64).tobytes())
        for field in (d.pos, d.quat, d.vel, d.angvel):
            h.update(np.ascontiguousarray(field[live]).tobytes())
        return h.hexdigest()


def _cross(u, v) -> tuple[np.ndarray, np.ndarray, np.ndarray]:
    """u × v for 3-vectors given by components (each component an array over many rows)."""
    return u[1] * v[2] - u[2] * v[1], u[2] * v[0] - u[0] * v[2], u[0] * v[1] - u[1] * v[0]
