"""The layout of the wide contact rows: where each field of a solver contact point lives.

The wide solver (``contact_solver.py``) solves up to ``L`` manifolds side by side, one per *lane*, so a
point's fields are stored lane-minor: a block's data is ``slots`` (its largest point count) groups of
``NF`` rows of ``L`` floats in the flat array ``cw``, and field ``f`` of the point in slot ``p``, lane
``j`` of a block starting at ``off`` is ``cw[off + (p·NF + f)·STRIDE + j]``. Contact point k (numbered
manifold by manifold) keeps ``row[k]``, the index of its field 0, so the once-per-step kernels (and the
reference solver) reach any field of it as ``cw[row[k] + f·STRIDE]``.

The fields, named by the constants below: the unit normal (A to B) and two tangents; twelve cached
angular Jacobian rows, four per direction d ∈ (n, t1, t2): ra×d, rb×d, Ia⁻¹(ra×d), Ib⁻¹(rb×d), so that a
point's relative velocity along d is (vb − va)·d + ωb·(rb×d) − ωa·(ra×d) and an impulse λ along d changes
ωa by −λ·Ia⁻¹(ra×d), with no matrix product in the inner loop; the effective masses along n, t1, t2;
friction μ; restitution e; the normal velocity at the start of the step; the approach speed at impact;
the separation when the contact was made; the accumulated impulses along n, t1, t2; the largest normal
impulse of the step; and the anchors ra, rb (contact point minus centre of mass, world frame). Slots
beyond a manifold's point count are zero (no mass, no impulse) and solve to nothing.

Indices into ``cw`` are converted to unsigned (``at``): numba wraps a negative signed index around, and
that check, in every access, hides from LLVM that the lanes are consecutive addresses.

**Single precision.** ``cw`` and a block's lane rows ``V`` and ``D`` are float32, and the wide solver's
lane loops compute in float32, as Box2D's and Rapier's solvers do; the constants ``F0``, ``F1``, ``FINF``
and ``FTINY`` are float32 so that numba does not widen a lane's arithmetic to float64 where a literal
meets it. What it buys: a point's rows take half the memory (the settled S1 pile of 4096 has 10.7 MB of
rows in float64, more than this machine's 8 MB L3 cache, and 5.4 MB in float32), and one AVX2
instruction works on eight lanes instead of four. Measured in the peers' harness on one thread, against
float64 rows and lanes in the same run: the step of S2 took 21 % less, S3 27 %, the S1 pile of 4096 32 %
and the pile of 1000 15 %. Float32 rows with float64 arithmetic were tried first and lost on the scenes
whose rows fit in cache (the conversion of every load; docs/architecture.md). Why it is correct: what the
rows hold is relative to the contact (unit directions, lever arms of at most a body's size, effective
masses, separations of centimetres, impulses of one sub-step), never a position in the world, and 24
bits resolve each to 10⁻⁷ of itself; positions and orientations stay float64, and so do the bodies'
velocity arrays, into which the velocities that the passes computed in float32 are written back
(``contact_solver.store_solver_velocities``; momentum is then kept to a part in 10⁶,
``contact_solver.scatter_velocities``) and which gravity and the integration then extend again. The
once-a-step kernels (prepare, restitution, events, the reference solver) read the rows into float64
arithmetic.
The quality figures of the standard scenes stay within their spread from seed to seed (README,
Benchmarks), and the results are still the same whatever the thread count: each lane does the same
float32 operations on any thread.
"""

from __future__ import annotations

import numpy as np

from .jit import helper, kernel
from .vecmath import add, dot, load3, load4, mad, quat_rotate, store3, sub

# The accessors below are called with constant field numbers and lanes (``at(c, LAM_N, 0)``). Numba compiles
# a kernel once per distinct literal constant it is called with, which made 43 copies of ``at`` alone; an
# explicit signature makes each accessor one compiled function whatever the constants (compile time,
# issue 14). LLVM still inlines them into their callers.
_ROW = "float32[::1]"  # the wide rows cw and the lane rows V, D (single precision: see the module)
_VEC = "UniTuple(float32, 3)"
# put3 takes float64 vectors, the lanes' float32 ones widened exactly on the way (LLVM folds the widening
# and the narrowing back away): one signature, one compiled copy. (The sixteenth session blamed the heap
# corruption of some app launches on put3's two signatures; it came from the narrow phase's freed scratch
# arrays, refcount.keep_alive, found in the eighteenth)
_VEC64 = "UniTuple(float64, 3)"

# float32 constants for the lane loops: a float64 literal would widen the arithmetic it meets
F0 = np.float32(0.0)
F1 = np.float32(1.0)
FINF = np.float32(np.inf)
FTINY = np.float32(1e-30)

L = 32  # lanes per block
# floats from one row to the next: exactly the lanes, so that a row of float32 is 128 bytes, two whole cache
# lines (cw, V and D start on a 64-byte boundary, bodies.aligned_zeros), a slot's rows follow one another
# with no gap, and no vector load of lanes straddles two lines. What it buys: it was 36 (144 bytes, rows
# off the lines), and a plain pass over the S2 pyramid's 2360 points took 38.8 µs, now 26.4 µs, its step
# 1.18 ms, now 0.97 ms (twentieth session, AVX-512 machine); the results are the same to the last bit
STRIDE = 32

# fields of a contact point: rows of L lanes
N = 0  # normal, 3 rows
T1 = 3  # first tangent, 3 rows
T2 = 6  # second tangent, 3 rows
JAC = 9  # 12 Jacobian rows of 3: JAC + 3·(4·direction + which)
MASS_N = 45
MASS_T1 = 46
MASS_T2 = 47
MU = 48
E = 49
VN0 = 50  # normal velocity at the start of the step
APPROACH = 51  # approach speed at impact
SEP0 = 52  # separation when the contact was made (−depth)
LAM_N = 53
LAM_T1 = 54
LAM_T2 = 55
LAM_MAX = 56
RA = 57  # anchor on A relative to its centre of mass (world frame), 3 rows
RB = 60  # anchor on B, 3 rows
NF = 63

# rows of a block's gathered body state ``V``: velocities and inverse masses of bodies a and b
VA = 0
WA = 3
VB = 6
WB = 9
IMA = 12
IMB = 13
NV = 14
# rows of ``D``: displacement of b relative to a, and each body's rotation vector, since the step began;
# then the patch step's sums (``patch.py``): Σ ra×n, Σ rb×n, Σ Ia⁻¹(ra×n), Σ Ib⁻¹(rb×n), the point count,
# the normal's gradient and compliance, the least normal impulse, and the patch's step
DX = 0
DRA = 3
DRB = 6
PSAN = 9
PSBN = 12
PJAN = 15
PJBN = 18
PM = 21
PGRAD = 22
PCOMP = 23
PLOW = 24
PSTEP = 25
ND = 26
# columns of a body's row in ``BodyState.solver``, the wide solver's own copy of the bodies (Box2D v3's
# b2BodyState): velocity, angular velocity, inverse mass (0 unless the body moves this step), whether a
# coloured block holds the body this step (``contact_solver.mark_wide_bodies``) and rotation vector since
# the step began, in float32, 16 to a row so that a row is one 64-byte cache line (``bodies._aligned``).
# A block's gather reads one line per body instead of one from each of four float64 arrays
# (``contact_solver.load_solver_bodies`` says what it buys)
SV = 0
SW = 3
SIM = 6
SWIDE = 7
SDR = 8
NS = 16
# rows of a block's gathered inverse inertias ``Inv``, for ``jacobian_lanes``: Ia⁻¹ and Ib⁻¹ (9 rows each,
# row-major), 1/ma, 1/mb
IIA = 0
IIB = 9
IMA2 = 18
IMB2 = 19
NI = 20


@kernel("uint64(int64, int64, int64)")
def at(base, f, j):
    """Unsigned index of row ``f``, lane ``j`` of the rows starting at ``base``."""
    return np.uint64(base + f * STRIDE + j)


@helper(f"{_VEC}({_ROW}, int64, int64, int64)")
def get3(w, base, f, j):
    """Rows ``f``, ``f+1``, ``f+2`` of lane ``j`` as a vector."""
    return (w[at(base, f, j)], w[at(base, f + 1, j)], w[at(base, f + 2, j)])


@helper(f"void({_ROW}, int64, int64, int64, {_VEC64})")
def put3(w, base, f, j, v):
    """Store the vector ``v`` in rows ``f``, ``f+1``, ``f+2`` of lane ``j``."""
    w[at(base, f, j)] = v[0]
    w[at(base, f + 1, j)] = v[1]
    w[at(base, f + 2, j)] = v[2]


@helper(f"{_VEC}({_ROW}, int64, int64, int64, int64)")
def jac(w, base, j, direction, which):
    """Cached Jacobian row of lane ``j``: ``direction`` 0, 1, 2 for n, t1, t2; ``which`` 0: ra×d,
    1: rb×d, 2: Ia⁻¹(ra×d), 3: Ib⁻¹(rb×d)."""
    return get3(w, base, JAC + 3 * (4 * direction + which), j)


@helper
def point_normal_velocity(cw, c, a, b, vel, angvel):
    """The relative normal velocity of the solver point whose fields start at ``c`` (lane 0), between
    bodies ``a`` and ``b``: (vb − va)·n + ωb·(rb×n) − ωa·(ra×n), from its cached Jacobian rows."""
    return (dot(sub(load3(vel, b), load3(vel, a)), get3(cw, c, N, 0))
            + dot(load3(angvel, b), jac(cw, c, 0, 0, 1)) - dot(load3(angvel, a), jac(cw, c, 0, 0, 0)))


@helper
def separation_now(sep0, n, ran, rbn, dx, dra, drb):
    """The point's separation (gap, negative when overlapping) now, to first order from how far its bodies
    moved (``dx``, b relative to a) and turned (rotation vectors ``dra``, ``drb``) since its manifold was
    made with separation ``sep0``: s = s₀ + n·Δx + (rb×n)·Δθb − (ra×n)·Δθa. Every solver of the normal
    constraint reads the gap through this one formula (Box2D v3's relative-position update)."""
    return sep0 + dot(dx, n) + dot(drb, rbn) - dot(dra, ran)


@helper
def normal_bias(s, coefficients):
    """The bias, mass scale and impulse scale of a point's normal constraint in a pass with
    ``coefficients`` (``contact_solver.NormalCoefficients``), given its separation ``s``. A speculative
    point (s > 0, not yet touching) is rigid and allows just the approach that closes the gap within the
    sub-step (bias s/h); an overlap gets the soft spring's push-out, bias_rate·min(s + slop, 0), at most
    ``max_push`` m/s. Written with selects, not branches, so that the wide solver's lane loops stay SIMD."""
    speculative = s > F0
    push = max(coefficients.bias_rate * min(s + coefficients.linear_slop, F0), -coefficients.max_push)
    bias = s * coefficients.inv_h if speculative else push
    mass_scale = F1 if speculative else coefficients.mass_scale
    impulse_scale = F0 if speculative else coefficients.impulse_scale
    return bias, mass_scale, impulse_scale


@helper
def push_point_normal(cw, c, a, b, lam, bodies):
    """Apply the impulse ``lam`` along the point's normal (−lam on body a) through its cached rows
    (Δv = ±λ·n/m, Δω = ±λ·I⁻¹(r×n)), to whichever of the two bodies move this step."""
    vel, angvel, inv_mass, moving = bodies.vel, bodies.angvel, bodies.inv_mass, bodies.moving
    n = get3(cw, c, N, 0)
    ima = inv_mass[a] if moving[a] else 0.0
    imb = inv_mass[b] if moving[b] else 0.0
    if moving[a]:
        store3(vel, a, mad(load3(vel, a), n, -lam * ima))
        store3(angvel, a, mad(load3(angvel, a), jac(cw, c, 0, 0, 2), -lam))
    if moving[b]:
        store3(vel, b, mad(load3(vel, b), n, lam * imb))
        store3(angvel, b, mad(load3(angvel, b), jac(cw, c, 0, 0, 3), lam))


@helper(inline="always")
def anchor_offset(k, a, b, pos, quat, local_a, local_b):
    """pb − pa: the offset between contact point ``k``'s two anchors, the material points ``local_a[k]`` of
    body ``a`` and ``local_b[k]`` of body ``b`` (each in its body's frame) at the bodies' current poses.
    Along the normal it is minus the overlap (``projection.project_contacts``); along the surface, how far
    the point has slipped since its manifold was made (``penalty.penalty_contacts``)."""
    # inlined: each caller's loop gets it without a compiled function of its own
    pa = add(load3(pos, a), quat_rotate(load4(quat, a), load3(local_a, k)))
    pb = add(load3(pos, b), quat_rotate(load4(quat, b), load3(local_b, k)))
    return sub(pb, pa)
