"""The named records that cross from the Python layer into the kernels.

Every kernel of a step takes its data as one of these records and reads it by field name
(``bodies.vel``, ``settings.contact_hertz``), never by position: reordering a tuple can then no longer
change the physics silently. They are plain ``NamedTuple`` classes of numbers and numpy arrays, which
numba compiles as it does tuples (one type per record, so one compiled signature per kernel); the Python
layer builds them in ``World`` (``world.py``) once per step, or keeps them while their arrays do not
change. Each record's fields are documented where it is defined; the contact rows' layout (the wide array
``cw`` of ``ContactPoints``) is described in ``contact_rows.py``.
"""

from __future__ import annotations

from typing import NamedTuple

import numpy as np

# response methods (``StepSettings.response``)
IMPULSE = 0
PROJECTION = 1
PENALTY = 2

# contact solvers (``StepSettings.solver``)
WIDE = 0  # graph-coloured blocks of lanes, SIMD (contact_solver.py)
REFERENCE = 1  # one contact point after another, the seed's formula (contact_solver_reference.py)

# stages of the sub-step loop timed inside the kernel (rows of the ``times`` array of ``run_substeps``)
T_INTEGRATE_VELOCITIES = 0
T_WARM_START = 1
T_SOLVE = 2
T_INTEGRATE_POSITIONS = 3
T_RELAX = 4
T_RESTITUTION = 5
SUBSTEP_STAGES = ("integrate_velocities", "warm_start", "solve", "integrate_positions", "relax",
                  "restitution")


class StepSettings(NamedTuple):
    """What the response stage of one step reads from the world's settings (see ``World``'s properties
    for each one's meaning and units). Built by ``World._step_settings`` with every field converted to
    its type, so that numba compiles one signature whatever the user assigned."""

    dt: float  # s, the whole step
    substeps: int
    iterations: int  # velocity iterations per step, shared over the sub-steps
    response: int  # IMPULSE, PROJECTION or PENALTY
    solver: int  # WIDE or REFERENCE
    warm_starting: bool
    gravity: tuple  # (gx, gy, gz) m/s²
    linear_damping: float  # 1/s
    angular_damping: float  # 1/s
    contact_hertz: float
    contact_damping_ratio: float
    max_push_velocity: float  # m/s
    linear_slop: float  # m
    joint_hertz: float
    joint_damping_ratio: float
    penalty_hertz: float
    penalty_damping_ratio: float
    restitution_threshold: float  # m/s


class BodyState(NamedTuple):
    """The body arrays a step works on (rows ``[:n]`` of ``BodyArrays``), plus the per-step work
    arrays of the same length. ``moving[i]``: row i is alive, dynamic and awake this step."""

    n: int
    moving: np.ndarray  # (n,) bool
    pos: np.ndarray  # (n, 3) centre of mass
    quat: np.ndarray  # (n, 4) (x, y, z, w)
    vel: np.ndarray  # (n, 3)
    angvel: np.ndarray  # (n, 3)
    force: np.ndarray  # (n, 3) accumulated by the user since the last step
    torque: np.ndarray  # (n, 3)
    inv_mass: np.ndarray  # (n,)
    inv_inertia_local: np.ndarray  # (n, 3, 3) body frame
    inv_inertia: np.ndarray  # (n, 3, 3) world frame, R·I⁻¹·Rᵀ
    inv_inertia_start: np.ndarray  # (n, 3, 3) the world inverse inertia at the start of the step
    gravity_scale: np.ndarray  # (n,)
    radius: np.ndarray  # (n,) bounding radius
    restitution: np.ndarray  # (n,)
    friction: np.ndarray  # (n,)
    dpos: np.ndarray  # (n, 3) displacement since the step began
    drot: np.ndarray  # (n, 3) rotation vector since the step began
    speed: np.ndarray  # (n,) |v| + |ω|·r at the start of the step, for the speed caps
    scratch: np.ndarray  # (n,) work space
    solver: np.ndarray  # (n, 16) float32: the wide solver's copy of each body (contact_rows.py, SV...)


class Blocks(NamedTuple):
    """The colouring's result (``graph_color.color_contacts``): the manifolds in solving order and the
    blocks of up to ``L`` lanes cut from it. Block ``b`` holds the manifolds
    ``order[start[b] : start[b] + lanes[b]]``, has ``slots[b]`` point slots (its largest point count)
    and starts at ``offset[b]`` in the wide array ``cw``. ``color[i]``: manifold i's colour (``COLORS``
    for the overflow, −1 when neither body moves)."""

    order: np.ndarray
    start: np.ndarray
    lanes: np.ndarray
    slots: np.ndarray
    offset: np.ndarray
    color: np.ndarray


class ContactPoints(NamedTuple):
    """The solver's contact points, numbered manifold by manifold: point k joins bodies ``bodies[k]``
    (a, b), has its anchors in each body's frame (``local_a[k]``, ``local_b[k]``), and keeps its fields
    in the wide array ``cw`` from index ``row[k]`` on (see ``contact_rows.py``)."""

    bodies: np.ndarray  # (k, 2) int64
    local_a: np.ndarray  # (k, 3)
    local_b: np.ndarray  # (k, 3)
    row: np.ndarray  # (k,) int64
    cw: np.ndarray  # flat float64, the wide rows


class SolverContacts(NamedTuple):
    """Everything the response stage needs about this step's contacts: ``points`` solver points in
    ``blocks`` blocks, of which the first ``wide_blocks`` are coloured, those up to ``direct_blocks`` the
    overflow (solved one manifold after another by the reference solver) and the rest the islands of the
    block solver (``block_solver.py``); the manifolds' bodies, first point and point count; the points
    (``ContactPoints``), two lane work arrays ``V`` (a block's velocities) and ``D`` (its displacements),
    each manifold's island for the block solver (−1: not one of its), and the coloured blocks' lane
    bodies (``lane_body``)."""

    points: int
    blocks: int
    wide_blocks: int
    direct_blocks: int
    table: Blocks
    body_a: np.ndarray
    body_b: np.ndarray
    first: np.ndarray  # each manifold's first point, −1 when it has none
    npoints: np.ndarray
    pts: ContactPoints
    V: np.ndarray
    D: np.ndarray
    island: np.ndarray
    lane_body: np.ndarray  # uint64: each coloured block's lanes' a, then b (contact_solver.lane_bodies)


class Joints(NamedTuple):
    """Distance joints: joint j links ``bodies[j]`` = (a, b), b = −1 for a fixed world point
    ``world_point[j]``, by a rod (or a rope where ``rope[j]``) of ``length[j]`` between the anchors
    ``local_a[j]`` and ``local_b[j]`` (each in its body's frame); ``impulse[j]`` accumulates."""

    count: int
    bodies: np.ndarray  # (j, 2) int64
    local_a: np.ndarray  # (j, 3)
    local_b: np.ndarray  # (j, 3)
    length: np.ndarray  # (j,)
    rope: np.ndarray  # (j,) bool
    impulse: np.ndarray  # (j,)
    world_point: np.ndarray  # (j, 3)


class Grabs(NamedTuple):
    """Mouse grabs: grab g pulls the point ``local_anchor[g]`` of body ``body[g]`` towards ``target[g]``
    with a soft spring of ``frequency[g]`` Hz and ``damping_ratio[g]``, at most ``max_force[g]`` N;
    ``impulse[g]`` (3,) accumulates."""

    count: int
    body: np.ndarray
    local_anchor: np.ndarray
    target: np.ndarray
    impulse: np.ndarray
    frequency: np.ndarray
    damping_ratio: np.ndarray
    max_force: np.ndarray


class CachedManifolds(NamedTuple):
    """The manifold cache's entries (``manifold_cache.py``), sorted by pair key: the body pair (A, B),
    the relative pose (t, q) it was computed at, the normal in A's frame, the point count, and the
    entry's first point in ``points_a`` and ``points_b``, its points in A's and B's frames (entry after
    entry, no unused slots: most manifolds of a pile have one or two points, not four)."""

    keys: np.ndarray  # (m,) int64
    bodies: np.ndarray  # (m, 2) int64
    pose: np.ndarray  # (m, 7)
    normal: np.ndarray  # (m, 3)
    npoints: np.ndarray  # (m,) int64
    first: np.ndarray  # (m,) int64
    points_a: np.ndarray  # (k, 3)
    points_b: np.ndarray  # (k, 3)


class Manifolds(NamedTuple):
    """Manifold arrays as the narrow phase writes them (``ContactArrays``' first seven fields)."""

    body_a: np.ndarray
    body_b: np.ndarray
    normal: np.ndarray
    npoints: np.ndarray
    points_a: np.ndarray
    points_b: np.ndarray
    depth: np.ndarray


class StoredImpulses(NamedTuple):
    """A step's accumulated impulses kept for the next step's warm start (``contact_solver.store_impulses``
    fills one, ``contact_prepare.prepare_contacts`` matches against the last one): ``count`` manifolds
    with their pair ``keys`` (sorted), first point and point count; per point the anchor in body A's
    frame, the normal impulse and the friction impulse as a world vector (the tangents are chosen afresh
    each step)."""

    count: int
    keys: np.ndarray  # (m,) int64
    first: np.ndarray  # (m,) int64
    npoints: np.ndarray  # (m,) int64
    anchor: np.ndarray  # (k, 3)
    normal: np.ndarray  # (k,)
    friction: np.ndarray  # (k, 3)


class HullArrays(NamedTuple):
    """The packed table of every convex hull's vertices, faces and edges (``shapes.HullTable.arrays``;
    layout described in ``layout.py``), indexed by hull id ``h``: vertices ``verts[vert_start[h] :
    vert_start[h] + vert_count[h]]``; faces ``face_start[h] …`` with outward unit ``face_normal``, plane
    offset ``face_offset`` and vertex indices ``face_verts[face_vstart[f] : face_vstart[f] +
    face_vcount[f]]`` (counter-clockwise from outside); edges ``edge_start[h] …`` as vertex pairs ``edges``
    and their two faces ``edge_faces``. Indices are global rows of these arrays."""

    vert_start: np.ndarray
    vert_count: np.ndarray
    verts: np.ndarray
    face_start: np.ndarray
    face_count: np.ndarray
    face_normal: np.ndarray
    face_offset: np.ndarray
    face_vstart: np.ndarray
    face_vcount: np.ndarray
    face_verts: np.ndarray
    edge_start: np.ndarray
    edge_count: np.ndarray
    edges: np.ndarray
    edge_faces: np.ndarray
