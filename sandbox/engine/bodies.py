"""Body storage: a structure of arrays with generational handles, and the ``Body`` view over one row.

Rows are addressed by index; a removed row goes on a free list and its generation is bumped, so that a
stale ``Body`` handle raises instead of silently reading the body that reused its row. The arrays grow by
doubling; kernels receive the arrays themselves (``BodyArrays`` never holds Python objects per body).
"""

from __future__ import annotations

from typing import TYPE_CHECKING

import numpy as np

from .core.contact_rows import NS
from .core.vecmath import quat_inv_rotate, quat_rotate, quat_to_mat
from .linalg3 import matmul, matvec
from .validate import (
    MAX_ANGULAR_SPEED,
    MAX_COORDINATE,
    MAX_FRICTION,
    MAX_GRAVITY_SCALE,
    MAX_SPEED,
    body_mass,
    boolean,
    float_in,
    unit_quaternion,
    vec,
)

if TYPE_CHECKING:
    from .world import World

MAX_LOAD = 1e15
"""The largest component of a force (N), torque (N·m) or impulse (N·s) applied in one call."""

# name -> (trailing shape, dtype, fill value for a fresh row)
_FIELDS: dict[str, tuple[tuple[int, ...], type, float]] = {
    "pos": ((3,), np.float64, 0.0),  # centre of mass, world frame
    "quat": ((4,), np.float64, 0.0),  # orientation (x, y, z, w)
    "vel": ((3,), np.float64, 0.0),
    "angvel": ((3,), np.float64, 0.0),
    "force": ((3,), np.float64, 0.0),  # accumulated until the next step, then cleared
    "torque": ((3,), np.float64, 0.0),
    "inv_mass": ((), np.float64, 0.0),
    "mass": ((), np.float64, 0.0),
    "inv_inertia_local": ((3, 3), np.float64, 0.0),
    "inv_inertia": ((3, 3), np.float64, 0.0),  # world frame, R·I⁻¹·Rᵀ, refreshed after each move
    "restitution": ((), np.float64, 0.0),
    "friction": ((), np.float64, 0.0),
    "gravity_scale": ((), np.float64, 1.0),
    "com_offset": ((3,), np.float64, 0.0),  # centre of mass in the shape's given frame (hulls)
    "kind": ((), np.int64, -1),
    "params": ((4,), np.float64, 0.0),
    "static": ((), np.bool_, False),
    "alive": ((), np.bool_, False),
    "awake": ((), np.bool_, True),
    "sleep_time": ((), np.float64, 0.0),
    "generation": ((), np.int64, 0),
    "radius": ((), np.float64, 0.0),  # bounding radius about the centre of mass
    # work space of the step's kernels (records.BodyState), not part of a body's state
    "dpos": ((3,), np.float64, 0.0),  # displacement since the step began
    "drot": ((3,), np.float64, 0.0),  # rotation vector since the step began
    "speed": ((), np.float64, 0.0),  # |v| + |ω|·r before the contacts of the step
    "scratch": ((), np.float64, 0.0),
    "inv_inertia_start": ((3, 3), np.float64, 0.0),  # world inverse inertia at the start of the step
    # the wide solver's single-precision copy of each body, one 64-byte row (contact_rows.py, SV...)
    "solver": ((NS,), np.float32, 0.0),
}
WORK_FIELDS = ("dpos", "drot", "speed", "scratch", "inv_inertia_start", "solver")
"""The step's work arrays: each step writes them before reading them, so no body state lives there."""
STATE_FIELDS = tuple(name for name in _FIELDS if name not in WORK_FIELDS)
"""The fields that hold the bodies' state (what ``World.snapshot`` copies)."""


def _aligned(shape: tuple[int, ...], dtype: type, align: int = 64) -> np.ndarray:
    """An uninitialised C-contiguous array whose first element starts on an ``align``-byte boundary, so
    that a row of 64 bytes (the ``solver`` field's) is one cache line, not two halves of neighbours."""
    size = int(np.prod(shape)) * np.dtype(dtype).itemsize
    raw = np.empty(size + align, np.uint8)
    skip = -raw.ctypes.data % align
    return raw[skip:skip + size].view(dtype).reshape(shape)


def aligned_zeros(size: int, dtype: type) -> np.ndarray:
    """A zeroed one-dimensional array of ``size`` values starting on a 64-byte boundary (``_aligned``)."""
    out = _aligned((size,), dtype)
    out[:] = 0
    return out


def rotate(q: np.ndarray, v: np.ndarray) -> np.ndarray:
    """Rotate ``v`` by quaternion ``q`` (the Python layer's occasional single vectors)."""
    return np.array(quat_rotate(tuple(q), tuple(v)))


def unrotate(q: np.ndarray, v: np.ndarray) -> np.ndarray:
    """Rotate ``v`` by the inverse of quaternion ``q`` (world to body frame)."""
    return np.array(quat_inv_rotate(tuple(q), tuple(v)))


class BodyArrays:
    """The engine's body state, one row per body slot; ``n`` is the number of slots ever used, and
    ``alive[:n]`` tells which of them hold a body. Every field listed in ``_FIELDS`` is an attribute."""

    def __init__(self, capacity: int = 64) -> None:
        self.n = 0
        self.capacity = 0
        self.free: list[int] = []
        # per row, the lowest generation its next body may have: above every handle given out for the row.
        # Only ``World.restore`` raises it (it brings back earlier generations, and may cut rows off
        # beyond the capacity); growing the arrays and freeing a row respect it, so that no handle of a
        # body added after a snapshot names another body once the world is restored to that snapshot
        self.generation_floor = np.zeros(0, np.int64)
        self._grow(capacity)

    def _grow(self, capacity: int) -> None:
        old = self.capacity
        for name, (shape, dtype, fill) in _FIELDS.items():
            new = _aligned((capacity, *shape), dtype)
            new[...] = fill
            if old:
                new[:old] = getattr(self, name)
            setattr(self, name, new)
        k = min(capacity, len(self.generation_floor))
        if k > old:
            self.generation[old:k] = self.generation_floor[old:k]
        self.capacity = capacity

    def reset(self, capacity: int) -> None:
        """Reallocate every field at ``capacity`` rows, all fresh (for ``World.restore``, which fills
        them); ``n``, ``free`` and the generations are the caller's to set."""
        self.capacity = 0
        self._grow(capacity)

    def allocate(self) -> int:
        """A free row index (reusing removed rows first), growing the arrays when full."""
        if self.free:
            return self.free.pop()
        if self.n == self.capacity:
            self._grow(2 * self.capacity)
        self.n += 1
        return self.n - 1

    def release(self, i: int) -> None:
        """Free row ``i``: reset it to the fresh-row values, keep and bump its generation."""
        gen = self.generation[i] + 1
        if i < len(self.generation_floor):
            gen = max(gen, self.generation_floor[i])
        for name, (_shape, _dtype, fill) in _FIELDS.items():
            getattr(self, name)[i] = fill
        self.generation[i] = gen
        self.free.append(i)

    def refresh_inertia(self, i: int) -> None:
        """World inverse inertia of row ``i`` from its orientation: R·I⁻¹_local·Rᵀ."""
        r = np.array(quat_to_mat(tuple(self.quat[i]))).reshape(3, 3)
        self.inv_inertia[i] = matmul(matmul(r, self.inv_inertia_local[i]), r.T)


class Body:
    """A handle to one body of a ``World``: properties read and write the body's row in the arrays.

    Values come back as fresh numpy arrays (changing them does not change the body); assign to the
    property to change the body, e.g. ``body.position = (0, 2, 0)``. Using a handle after its body was
    removed raises ``ValueError``."""

    __slots__ = ("_world", "index", "generation")

    def __init__(self, world: World, index: int, generation: int) -> None:
        self._world = world
        self.index = index
        self.generation = generation

    @property
    def _data(self) -> BodyArrays:
        d = self._world.data
        # a row beyond the capacity: the world was restored to a snapshot taken before the row existed
        if self.index >= d.capacity or not d.alive[self.index] or d.generation[self.index] != self.generation:
            raise ValueError("this body has been removed from its world")
        return d

    def __eq__(self, other: object) -> bool:
        return (isinstance(other, Body) and other._world is self._world and other.index == self.index
                and other.generation == self.generation)

    def __hash__(self) -> int:
        return hash((id(self._world), self.index, self.generation))

    def __repr__(self) -> str:
        return f"Body(index={self.index}, generation={self.generation})"

    @property
    def alive(self) -> bool:
        """False once the body has been removed."""
        d = self._world.data
        i = self.index
        return bool(i < d.capacity and d.alive[i] and d.generation[i] == self.generation)

    @property
    def shape(self):
        """The shape object the body was created with."""
        _ = self._data
        return self._world._shapes[self.index]

    @property
    def position(self) -> np.ndarray:
        """Origin of the shape's frame in world coordinates (the centre of mass, except for hulls built
        from off-centre points)."""
        d = self._data
        return d.pos[self.index] - rotate(d.quat[self.index], d.com_offset[self.index])

    @position.setter
    def position(self, value) -> None:
        d = self._data
        p = vec("position", value, limit=MAX_COORDINATE)
        d.pos[self.index] = p + rotate(d.quat[self.index], d.com_offset[self.index])
        self._world._touch(self.index)

    @property
    def center_of_mass(self) -> np.ndarray:
        """The centre of mass in world coordinates."""
        return self._data.pos[self.index].copy()

    @property
    def orientation(self) -> np.ndarray:
        """Unit quaternion (x, y, z, w)."""
        return self._data.quat[self.index].copy()

    @orientation.setter
    def orientation(self, value) -> None:
        d = self._data
        origin = self.position
        d.quat[self.index] = unit_quaternion("orientation", value)
        d.refresh_inertia(self.index)
        self.position = origin

    @property
    def linear_velocity(self) -> np.ndarray:
        """Velocity of the centre of mass, m/s."""
        return self._data.vel[self.index].copy()

    @linear_velocity.setter
    def linear_velocity(self, value) -> None:
        d = self._data
        x = vec("linear_velocity", value, limit=MAX_SPEED)  # checked even where it is ignored: a static body
        if not d.static[self.index]:
            d.vel[self.index] = x
        self._world._touch(self.index)

    @property
    def angular_velocity(self) -> np.ndarray:
        """Angular velocity in the world frame, rad/s."""
        return self._data.angvel[self.index].copy()

    @angular_velocity.setter
    def angular_velocity(self, value) -> None:
        d = self._data
        x = vec("angular_velocity", value, limit=MAX_ANGULAR_SPEED)  # checked even for a static body
        if not d.static[self.index]:
            d.angvel[self.index] = x
        self._world._touch(self.index)

    @property
    def mass(self) -> float:
        """Mass in kg; 0 for a static body. Setting it rescales the inertia to match."""
        return float(self._data.mass[self.index])

    @mass.setter
    def mass(self, value) -> None:
        m = body_mass("mass", value)
        _ = self._data
        self._world._set_mass(self.index, m)

    @property
    def static(self) -> bool:
        """True for an immovable body (infinite mass and inertia)."""
        return bool(self._data.static[self.index])

    @static.setter
    def static(self, value: bool) -> None:
        d = self._data
        if boolean("static", value):
            self._world._set_mass(self.index, 0.0)
        elif d.static[self.index]:
            self._world._set_mass(self.index, self._world._default_masses.get(self.index, 1.0))

    @property
    def restitution(self) -> float:
        """Bounciness from 0 (none) to 1 (elastic); combined with the other body's by the world's
        ``restitution_rule``. Above 1 a bounce would gain energy, so it is refused."""
        return float(self._data.restitution[self.index])

    @restitution.setter
    def restitution(self, value) -> None:
        self._data.restitution[self.index] = float_in("restitution", value, 0.0, 1.0)
        self._world._touch(self.index)

    @property
    def friction(self) -> float:
        """Coulomb friction coefficient, from 0 to ``validate.MAX_FRICTION``."""
        return float(self._data.friction[self.index])

    @friction.setter
    def friction(self, value) -> None:
        self._data.friction[self.index] = float_in("friction", value, 0.0, MAX_FRICTION)
        self._world._touch(self.index)

    @property
    def gravity_scale(self) -> float:
        """Multiplier on the world's gravity for this body (0: floats, -1: falls upwards)."""
        return float(self._data.gravity_scale[self.index])

    @gravity_scale.setter
    def gravity_scale(self, value) -> None:
        self._data.gravity_scale[self.index] = float_in("gravity_scale", value, -MAX_GRAVITY_SCALE,
                                                        MAX_GRAVITY_SCALE)
        self._world._touch(self.index)

    @property
    def lock_rotation(self) -> bool:
        """True for a body made with ``lock_rotation``: infinite inertia, so it never turns."""
        _ = self._data
        return self.index in self._world._lock_rotation

    @property
    def awake(self) -> bool:
        """False while the body sleeps (it costs nothing in the solver until something wakes it)."""
        return bool(self._data.awake[self.index])

    @awake.setter
    def awake(self, value: bool) -> None:
        d = self._data
        if boolean("awake", value):
            self._world._touch(self.index)
        elif not d.static[self.index]:
            d.awake[self.index] = False
            d.vel[self.index] = 0.0
            d.angvel[self.index] = 0.0

    def apply_force(self, force, point=None) -> None:
        """Add ``force`` (N) for the next step, at world ``point`` (default: the centre of mass, so no
        torque); a force off the centre also adds the torque (point − com) × force."""
        d = self._data
        f = vec("force", force, limit=MAX_LOAD)
        d.force[self.index] += f
        if point is not None:
            r = vec("point", point, limit=MAX_COORDINATE) - d.pos[self.index]
            d.torque[self.index] += np.cross(r, f)
        self._world._touch(self.index)

    def apply_torque(self, torque) -> None:
        """Add ``torque`` (N·m, world frame) for the next step."""
        d = self._data
        d.torque[self.index] += vec("torque", torque, limit=MAX_LOAD)
        self._world._touch(self.index)

    def apply_impulse(self, impulse, point=None) -> None:
        """Change the momentum at once by ``impulse`` (N·s) at world ``point`` (default: centre of mass):
        Δv = j/m, Δω = I⁻¹ (r × j)."""
        d = self._data
        i = self.index
        j = vec("impulse", impulse, limit=MAX_LOAD)
        if d.static[i]:
            return
        d.vel[i] += j * d.inv_mass[i]
        if point is not None:
            r = vec("point", point, limit=MAX_COORDINATE) - d.pos[i]
            d.angvel[i] += matvec(d.inv_inertia[i], np.cross(r, j))
        self._world._touch(i)

    def velocity_at(self, point) -> np.ndarray:
        """Velocity of the material point of the body at world ``point``: v + ω × (p − com)."""
        d = self._data
        r = vec("point", point, limit=MAX_COORDINATE) - d.pos[self.index]
        return d.vel[self.index] + np.cross(d.angvel[self.index], r)
