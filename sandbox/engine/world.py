"""The world: bodies, settings, and the step that runs the pipeline's stages in order.

``World.step`` reads as the pipeline: find pairs (broad phase), collide (narrow phase), then the response
method per sub-step, then sleeping and events. Every stage is a kernel over the arrays of ``BodyArrays``
and ``ContactArrays``; this module only owns the arrays, checks input, and times the stages.
"""

from __future__ import annotations

import time
from collections.abc import Callable
from dataclasses import dataclass

import numpy as np

from .bodies import Body, BodyArrays, rotate, unrotate
from .broadphase import BroadPhase
from .collide import Manifold
from .contacts import CollisionEvent, ContactArrays, ContactSolverData, ManifoldCache
from .core import events, integrate, islands, manifold_cache, solver, substeps
from .core.broadphase import speculative_margins
from .core.narrowphase import collide_pairs
from .shapes import ConvexHull, HullTable, Shape
from .validate import finite_float, non_negative_float, positive_float, unit_quaternion, vec

RESPONSES = ("impulse", "projection", "penalty")
RESTITUTION_RULES = ("product", "min", "max", "average")


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
        self._target = vec("target", value)
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
        self._no_begins: tuple = (np.zeros(0, np.int64),) * 4
        self._no_impulses = np.zeros(0)
        self._begin_data = self._no_begins
        self._begin_impulse = self._no_impulses
        self._end_keys = np.zeros(0, np.int64)
        self._end_n = 1
        self._removed_ends: list[CollisionEvent] = []
        self.timings = {"broad": 0.0, "narrow": 0.0, "solve": 0.0, "integrate": 0.0}
        self.joints: list[DistanceJoint] = []
        self.grabs: list[Grab] = []
        self.time = 0.0
        self.steps = 0
        self._gravity = vec("gravity", gravity)
        self._shapes: dict[int, Shape] = {}
        self._default_masses: dict[int, float] = {}
        self._lock_rotation: set[int] = set()  # rows with infinite inertia
        self._solver = ContactSolverData()
        self._manifold_cache = ManifoldCache()
        self._fresh = ContactArrays()  # the manifolds collided afresh while the others come from the cache
        self._joint_arrays: tuple | None = None
        self._begin_callbacks: list[Callable[[CollisionEvent], None]] = []
        self._end_callbacks: list[Callable[[CollisionEvent], None]] = []
        self._touching = np.zeros(0, np.int64)  # sorted pair keys touching after the last step
        self._no_grabs: tuple | None = None
        self._pending_events: list[CollisionEvent] = []
        self._island = np.arange(self.data.capacity)  # each body its own island until the first step
        self._island_min = np.zeros(self.data.capacity)
        self._speed = np.zeros(self.data.capacity)  # per-body speed before contacts, each sub-step
        self._scratch = np.zeros(self.data.capacity)
        self._dpos = np.zeros((self.data.capacity, 3))  # displacement since the step began
        self._drot = np.zeros((self.data.capacity, 3))  # rotation vector since the step began
        # settings (validated through the properties below)
        self._substeps = 4
        self._iterations = 10
        self._response = "impulse"
        self._restitution_rule = "product"
        self.ccd = True
        self.sleeping = True
        self.linear_damping = 0.001  # 1/s: small, so bounces keep their height (e²·h)
        self.angular_damping = 0.02  # 1/s: lets rolling bodies come to rest eventually
        self.restitution_threshold = 1.0  # m/s: slower impacts do not bounce
        self.contact_hertz = 60.0  # stiffness of the soft contact (capped at a quarter of the sub-step rate)
        self.contact_damping_ratio = 10.0
        self.max_push_velocity = 3.0  # m/s: the fastest that overlaps are pushed apart
        self.linear_slop = 0.0  # m of overlap left alone by the push-out
        self.speculative_distance = 0.02  # m: contacts are made this far before touching
        # reuse a pair's manifold while the pair moves less than 1 mm / 2° relative to itself (Jolt's body
        # pair cache); False collides every pair afresh every step
        self.contact_cache = True
        self.cached_manifolds = 0  # how many of the last step's manifolds came from the cache
        self.max_speculative = 0.25  # m: the most a body's travel extends its margin when CCD is off
        self.joint_hertz = 60.0
        self.joint_damping_ratio = 5.0
        self.penalty_hertz = 24.0
        self.penalty_damping_ratio = 0.7
        self.sleep_linear_threshold = 0.05  # m/s
        self.sleep_angular_threshold = 0.05  # m/s at the body's rim
        self.time_to_sleep = 0.5  # s

    # -------------------------------------------------------------------------------------------------
    # settings

    @property
    def gravity(self) -> np.ndarray:
        """Gravity acceleration vector (m/s²)."""
        return self._gravity.copy()

    @gravity.setter
    def gravity(self, value) -> None:
        self._gravity = vec("gravity", value)
        self.wake_all()

    @property
    def substeps(self) -> int:
        """Sub-steps per ``step`` (default 4): the solver and the integrator run this many times per step."""
        return self._substeps

    @substeps.setter
    def substeps(self, value: int) -> None:
        if not isinstance(value, (int, np.integer)) or isinstance(value, bool) or not 1 <= value <= 64:
            raise ValueError(f"substeps must be an integer from 1 to 64, got {value!r}")
        self._substeps = int(value)

    @property
    def iterations(self) -> int:
        """Velocity iterations per step (default 10), shared out over the sub-steps (3, 3, 2, 2 with the
        default 4 sub-steps; at least one each), each sub-step then running one relax iteration."""
        return self._iterations

    @iterations.setter
    def iterations(self, value: int) -> None:
        if not isinstance(value, (int, np.integer)) or isinstance(value, bool) or not 1 <= value <= 1000:
            raise ValueError(f"iterations must be an integer from 1 to 1000, got {value!r}")
        self._iterations = int(value)

    @property
    def response(self) -> str:
        """Collision response method: "impulse" (default), "projection" or "penalty"."""
        return self._response

    @response.setter
    def response(self, value: str) -> None:
        if value not in RESPONSES:
            raise ValueError(f"unknown response method {value!r}; choose one of {', '.join(RESPONSES)}")
        self._response = value
        self._solver.forget()
        self._manifold_cache.forget()
        self.wake_all()

    @property
    def restitution_rule(self) -> str:
        """How two bodies' restitutions combine: "product" (default), "min", "max" or "average"."""
        return self._restitution_rule

    @restitution_rule.setter
    def restitution_rule(self, value: str) -> None:
        if value not in RESTITUTION_RULES:
            raise ValueError(f"unknown restitution rule {value!r}; choose one of "
                             f"{', '.join(RESTITUTION_RULES)}")
        self._restitution_rule = value

    @property
    def broadphase(self) -> str:
        """Broad-phase method: "brute", "sap" (default), "grid" or "octree"."""
        return self.broad.method

    @broadphase.setter
    def broadphase(self, value: str) -> None:
        self.broad.method = value

    # -------------------------------------------------------------------------------------------------
    # bodies

    def add_body(self, shape: Shape, position=(0.0, 0.0, 0.0), orientation=(0.0, 0.0, 0.0, 1.0),
                 mass: float = 1.0, restitution: float = 0.0, friction: float = 0.5,
                 velocity=(0.0, 0.0, 0.0), angular_velocity=(0.0, 0.0, 0.0),
                 gravity_scale: float = 1.0, lock_rotation: bool = False) -> Body:
        """Add a body of ``shape`` and return its handle. ``mass`` 0 makes it static (immovable);
        ``lock_rotation`` gives it infinite inertia (a box that never turns behaves as an AABB)."""
        if not isinstance(shape, Shape):
            raise ValueError(f"shape must be a Sphere, Box, Capsule or ConvexHull, got {shape!r}")
        p = vec("position", position)
        q = unit_quaternion("orientation", orientation)
        m = non_negative_float("mass", mass)
        e = non_negative_float("restitution", restitution)
        mu = non_negative_float("friction", friction)
        v = vec("velocity", velocity)
        w = vec("angular_velocity", angular_velocity)
        gs = finite_float("gravity_scale", gravity_scale)
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
        if lock_rotation:
            self._lock_rotation.add(i)
        else:
            self._lock_rotation.discard(i)
        self._set_mass(i, m)
        if m > 0:
            d.vel[i] = v
            d.angvel[i] = 0.0 if lock_rotation else w
        self._solver.forget()
        self._manifold_cache.forget()
        return Body(self, i, int(d.generation[i]))

    def _set_mass(self, i: int, m: float) -> None:
        """Mass and inertia of row ``i`` from its shape; 0 makes it static (infinite mass and inertia)."""
        d = self.data
        shape = self._shapes[i]
        if m > 0:
            d.mass[i] = m
            d.inv_mass[i] = 1.0 / m
            d.static[i] = False
            self._default_masses[i] = m
            if i in self._lock_rotation:
                d.inv_inertia_local[i] = 0.0
            else:
                d.inv_inertia_local[i] = np.linalg.inv(shape.inertia(m))
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
        go with it, and an end event is reported for every body it was touching."""
        d = body._data
        i = body.index
        keys = self._touching
        n = max(d.n, 1)
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
        distance), or a rope that only pulls. Anchors default to the centres of mass."""
        da = a._data
        pa = vec("anchor_a", anchor_a) if anchor_a is not None else da.pos[a.index].copy()
        la = unrotate(da.quat[a.index], pa - da.pos[a.index])
        if b is None:
            if anchor_b is None:
                raise ValueError("anchor_b (a world point) is required when b is None")
            pb = vec("anchor_b", anchor_b)
            lb = pb.copy()
        else:
            db = b._data
            pb = vec("anchor_b", anchor_b) if anchor_b is not None else db.pos[b.index].copy()
            lb = unrotate(db.quat[b.index], pb - db.pos[b.index])
        if length is None:
            length = float(np.linalg.norm(pb - pa))
        length = non_negative_float("length", length)
        joint = DistanceJoint(self, a, b, la, lb, length, bool(rope))
        self.joints.append(joint)
        self._joint_arrays = None
        self._touch(a.index)
        if b is not None:
            self._touch(b.index)
        return joint

    def remove_joint(self, joint: DistanceJoint) -> None:
        """Remove a joint made by ``add_distance_joint``."""
        self.joints.remove(joint)
        self._joint_arrays = None
        self._touch(joint.body_a.index)

    def grab(self, body: Body, world_point, max_force: float | None = None, frequency: float = 5.0,
             damping_ratio: float = 1.0) -> Grab:
        """Grab ``body`` at ``world_point`` with a soft spring (Box2D's mouse joint) whose target starts
        at that point; move it with ``grab.target = p``, let go with ``release``. The spring is critically
        damped by default, its stiffness follows the body's effective mass (so light and heavy bodies
        feel the same), and its force is capped at ``max_force`` (default 50·m·g)."""
        d = body._data
        if d.static[body.index]:
            raise ValueError("cannot grab a static body")
        p = vec("world_point", world_point)
        g = float(np.linalg.norm(self._gravity)) or 9.81
        mf = 50.0 * d.mass[body.index] * g if max_force is None else positive_float("max_force", max_force)
        local = unrotate(d.quat[body.index], p - d.pos[body.index])
        grab = Grab(self, body, local, p, mf, positive_float("frequency", frequency),
                    non_negative_float("damping_ratio", damping_ratio))
        self.grabs.append(grab)
        self._touch(body.index)
        return grab

    def release(self, grab: Grab) -> None:
        """Let go of a grab; the body keeps the velocity it has."""
        if grab in self.grabs:
            self.grabs.remove(grab)

    def _joints_packed(self) -> tuple:
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
            self._joint_arrays = (nj, jb, jla, jlb, jlen, jrope, np.zeros(m), jworld)
        return self._joint_arrays

    def _grabs_packed(self) -> tuple:
        """The grabs as arrays for the kernels: (count, body rows, local anchors, targets, impulses,
        (frequency, damping ratio, max force) rows); the impulses start at zero."""
        ng = len(self.grabs)
        if ng == 0:
            if self._no_grabs is None:
                self._no_grabs = (0, np.zeros(1, np.int64), np.zeros((1, 3)), np.zeros((1, 3)),
                                  np.zeros((1, 3)), np.zeros((1, 3)))
            return self._no_grabs
        return (ng, np.array([g.body.index for g in self.grabs], np.int64),
                np.array([g.local_anchor for g in self.grabs], dtype=float),
                np.array([g._target for g in self.grabs], dtype=float), np.zeros((ng, 3)),
                np.array([(g.frequency, g.damping_ratio, g.max_force) for g in self.grabs], dtype=float))

    # -------------------------------------------------------------------------------------------------
    # the step

    def step(self, dt: float) -> None:
        """Advance the world by ``dt`` seconds: broad phase, narrow phase, then the response method and
        integration over ``substeps`` sub-steps, then sleeping and collision events."""
        dt = positive_float("dt", dt)
        d = self.data
        n = d.n
        if len(self._island) < d.capacity:
            self._island = np.arange(d.capacity)
            self._island_min = np.zeros(d.capacity)
        t0 = time.perf_counter()
        margins = self._margins(n, dt)
        pairs = self.broad.update(n, d.alive, d.static, d.kind, d.params, d.pos, d.quat,
                                  self.hulls.arrays(), margins)
        # sleeping pairs are collided too (cheap), so their contacts stay visible and keep their islands
        # together; the solver gives them no points, which is where sleeping saves the time
        self.pairs = pairs
        t1 = time.perf_counter()
        self._collide(pairs, margins)
        c = self.contacts
        if self.sleeping and c.count:
            islands.wake_touched(c.count, c.body_a, c.body_b, d.static, d.awake, d.sleep_time,
                                 self._island, n)
        t2 = time.perf_counter()
        self.timings["broad"] = (t1 - t0) * 1e3
        self.timings["narrow"] = (t2 - t1) * 1e3
        self._respond(n, dt)
        if self.sleeping:
            nj, jb = self._joints_packed()[:2]
            islands.update_sleep(n, d.alive, d.static, d.awake, d.vel, d.angvel, d.radius, d.sleep_time,
                                 c.count, c.body_a, c.body_b, c.npoints, c.depth, nj, jb, dt,
                                 self.sleep_linear_threshold, self.sleep_angular_threshold,
                                 self.time_to_sleep, self._island, self._island_min)
        else:
            d.awake[:n] = True
        integrate.clear_forces(n, d.force, d.torque)
        self.time += dt
        self.steps += 1
        self._emit_events()

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
        reuse it (see ``core/manifold_cache.py``); the others are collided afresh."""
        d = self.data
        c = self.contacts
        mc = self._manifold_cache
        npairs = len(pairs)
        nbodies = max(d.n, 1)
        c.ensure(npairs)
        H = self.hulls.arrays()
        out = (c.body_a, c.body_b, c.normal, c.npoints, c.points_a, c.points_b, c.depth)
        source = np.full(max(npairs, 1), -1, np.int64)
        if not self.contact_cache:
            mc.forget()
        if npairs == 0:
            c.count = 0
        elif mc.count:
            reuse = np.empty(npairs, np.int64)
            todo = np.empty((npairs, 2), np.int64)
            ck, cab, cpose = mc.current[:3]
            nt = manifold_cache.find_reusable(pairs, npairs, d.pos, d.quat, nbodies, ck, cab, cpose, mc.count,
                                              reuse, todo)
            f = self._fresh
            f.ensure(max(nt, 1))
            fresh = (f.body_a, f.body_b, f.normal, f.npoints, f.points_a, f.points_b, f.depth)
            nf = collide_pairs(todo, nt, d.kind, d.params, d.pos, d.quat, H, margins, *fresh) if nt else 0
            c.count = manifold_cache.merge_manifolds(pairs, npairs, d.pos, d.quat, reuse, mc.current[1:],
                                                     fresh, nf, out, source)
        else:
            c.count = collide_pairs(pairs, npairs, d.kind, d.params, d.pos, d.quat, H, margins, *out)
        self.cached_manifolds = int((source[: c.count] >= 0).sum())
        if self.contact_cache:
            new = mc.spare_for(max(c.count, 1))
            manifold_cache.remember_manifolds(c.count, c.body_a, c.body_b, c.normal, c.npoints, c.points_a,
                                              c.points_b, source, d.pos, d.quat, nbodies, mc.current, new)
            mc.swap(c.count)

    def _respond(self, n: int, dt: float) -> None:
        """Prepare the contacts, then run the selected response method over the sub-steps."""
        d = self.data
        c = self.contacts
        s = self._solver
        moving = d.alive[:n] & ~d.static[:n] & d.awake[:n]
        ts = time.perf_counter()
        s.ensure(max(c.point_count(), 1), max(c.count, 1), max(d.n, 1))
        B = s.blocks_tuple()
        nb, floats, npts = solver.color_contacts(c.count, c.body_a, c.body_b, c.npoints, moving, c.first,
                                                 s.cidx, s.order, s.blk_start, s.blk_lanes, s.blk_slots,
                                                 s.blk_off, s.mask)
        s.ensure_wide(floats)
        S = s.points_tuple()
        rule = RESTITUTION_RULES.index(self._restitution_rule)
        solver.match_previous(c.count, c.body_a, c.body_b, c.first, s.prev_m, s.prev_key, max(d.n, 1),
                              s.match)
        solver.prepare_contacts(nb, B, c.body_a, c.body_b, c.normal, c.npoints, c.points_a, c.points_b,
                                c.first, moving, d.pos, d.quat, d.vel, d.angvel, d.inv_mass, d.inv_inertia,
                                d.restitution, d.friction, rule, s.match, s.prev_first, s.prev_np,
                                s.prev_la, s.prev_ln, s.prev_lt, S, s.Inv)
        joints = self._joints_packed()
        joints[6][:] = 0.0
        grabs = self._grabs_packed()
        if len(self._speed) < n:
            self._speed = np.zeros(d.capacity)
            self._scratch = np.zeros(d.capacity)
            self._dpos = np.zeros((d.capacity, 3))
            self._drot = np.zeros((d.capacity, 3))
        bodies = (n, moving, d.pos, d.quat, d.vel, d.angvel, d.force, d.torque, d.inv_mass,
                  d.inv_inertia_local, d.inv_inertia, d.gravity_scale, d.radius, self._dpos, self._drot,
                  self._speed, self._scratch)
        # all floats, whatever the user assigned: a tuple of another type would be compiled afresh
        settings = tuple(float(x) for x in (
            *self._gravity, self.linear_damping, self.angular_damping, self.contact_hertz,
            self.contact_damping_ratio, self.max_push_velocity, self.linear_slop, self.joint_hertz,
            self.joint_damping_ratio, self.penalty_hertz, self.penalty_damping_ratio,
            self.restitution_threshold))
        contacts = (npts, nb, B, c.body_a, c.body_b, S, s.V, s.D)
        t_int = substeps.run_substeps(RESPONSES.index(self._response), self._substeps, self._iterations,
                                      float(dt), bodies, contacts, joints, grabs, settings)
        keep = s.keep_buffers(c.count, npts)
        solver.store_impulses(c.count, c.body_a, c.body_b, c.first, c.npoints, S, c.impulse, *keep,
                              max(d.n, 1))
        s.keep(c.count)
        for k, j in enumerate(self.joints):
            j.impulse = float(joints[6][k])
        for k, grab in enumerate(self.grabs):
            grab.impulse = grabs[4][k].copy()
            grab.force = grab.impulse / dt
        self.timings["integrate"] = t_int * 1e3
        self.timings["solve"] = (time.perf_counter() - ts - t_int) * 1e3

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
        length = float(np.linalg.norm(dvec))
        if length < 1e-12:
            raise ValueError("direction must be a non-zero vector")
        md = float(max_distance)
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
        begins and ends; Python event objects are made only when asked for or when callbacks listen."""
        c = self.contacts
        d = self.data
        n = max(d.n, 1)
        m = c.count
        keys = np.empty(max(m, 1), np.int64)
        rows = np.empty(max(m, 1), np.int64)
        t = events.touching_keys(m, c.body_a, c.body_b, c.npoints, c.depth, c.impulse, n, keys, rows)
        old = self._touching
        out = np.empty(t + len(old), np.int64)
        begin_rows = np.empty(t, np.int64)
        end_keys = np.empty(len(old), np.int64)
        no, nb, ne = events.diff_touching(keys[:t], rows[:t], old, n, d.alive, d.awake, out, begin_rows,
                                          end_keys)
        self._touching = out[:no]
        br = begin_rows[:nb]
        if nb:
            self._begin_impulse = (c.impulse[br] * (np.arange(4)[None, :] < c.npoints[br, None])).sum(axis=1)
            self._begin_data = (c.body_a[br], c.body_b[br], c.points_b[br, 0], c.normal[br])
        else:
            self._begin_impulse = self._no_impulses
            self._begin_data = self._no_begins
        self._end_keys = end_keys[:ne]
        self._end_n = n
        self._removed_ends, self._pending_events = self._pending_events, []
        self._events_cache = None
        if self._begin_callbacks or self._end_callbacks:
            for e in self.events:
                for cb in self._begin_callbacks if e.kind == "begin" else self._end_callbacks:
                    cb(e)

    @property
    def events(self) -> list[CollisionEvent]:
        """The collision begin and end events of the last step (ends of removed bodies' contacts first)."""
        if self._events_cache is None:
            out = list(self._removed_ends)
            ba, bb, pts, nrm = self._begin_data
            for k in range(len(ba)):
                out.append(CollisionEvent("begin", self.body(int(ba[k])), self.body(int(bb[k])), pts[k],
                                          nrm[k], float(self._begin_impulse[k])))
            for key in self._end_keys.tolist():
                ia, ib = divmod(key, self._end_n)
                out.append(CollisionEvent("end", self.body(ia), self.body(ib)))
            self._events_cache = out
        return self._events_cache

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
        """I·ω per row (world frame), solving I⁻¹·x = ω instead of inverting (rows locked against rotation
        have I⁻¹ = 0 and contribute nothing)."""
        d = self.data
        out = np.zeros_like(w)
        inv = d.inv_inertia[rows]
        ok = np.abs(np.linalg.det(inv)) > 1e-300
        if ok.any():
            out[ok] = np.linalg.solve(inv[ok], w[ok][..., None])[..., 0]
        return out

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

