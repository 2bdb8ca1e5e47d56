"""The wide contact solver: sequential impulses on graph-coloured blocks of lanes (Box2D v3's solver).

The impulse method is Catto's sequential impulses (GDC 2005) arranged as Box2D v3's "soft step"
(Catto, "Solver2D", 2024): per step the contacts are prepared once (``contact_prepare.py``); per sub-step
the velocities are integrated, the accumulated impulses of the last sub-step applied again (warm
starting), every contact solved once with a soft position bias (``soft_constraint.py``), the positions
integrated, and every contact solved once more without bias ("relax"), so that the push-out of
overlaps never turns into kinetic energy. Restitution follows the sub-steps (``restitution.py``).

**Wide blocks.** The manifolds come coloured and cut into blocks of up to ``L`` lanes
(``graph_color.py``), the manifolds of one block sharing no moving body. A pass gathers a block's body
velocities into lane rows (from the solver's own float32 copy of the bodies, ``load_solver_bodies``),
solves the block's first points of all lanes side by side, then the second points, and so on, and
scatters the velocities back. The lane loops have no dependence from one lane to
the next, which lets the compiler turn them into SIMD instructions. Before its points, each manifold of
two points or more is solved as one patch, a normal impulse at its centroid shared evenly by its
points (``patch.py``: a flat landing leaves without spin), in the first pass of each sub-step and in
its relax pass. It is the same
Gauss–Seidel sweep as solving the manifolds one by one in colour order — exactly what
``contact_solver_reference.py`` does, in the seed's plain notation, and what ``tests/test_solver.py``
checks this solver against (to float32's precision: the lanes compute in single precision, the
reference solver in double, from the same float32 rows; ``contact_rows.py`` says why and what it buys).
The fields of a point are laid out as ``contact_rows.py`` describes. The overflow manifolds (no free
colour) are left to the reference solver.
"""

from __future__ import annotations

import math
from typing import NamedTuple

import numpy as np
from numba import prange

from .atomics import atomic_add, atomic_load, new_counters
from .contact_rows import (
    APPROACH,
    DRA,
    DRB,
    DX,
    F0,
    F1,
    FINF,
    FTINY,
    IMA,
    IMB,
    LAM_MAX,
    LAM_N,
    LAM_T1,
    LAM_T2,
    MASS_N,
    MASS_T1,
    MASS_T2,
    MU,
    ND,
    NF,
    NV,
    PCOMP,
    PGRAD,
    PJAN,
    PJBN,
    PLOW,
    PM,
    PSAN,
    PSBN,
    PSTEP,
    SDR,
    SEP0,
    SIM,
    STRIDE,
    SV,
    SW,
    SWIDE,
    T1,
    T2,
    VA,
    VB,
    WA,
    WB,
    L,
    N,
    at,
    get3,
    jac,
    normal_bias,
    point_normal_velocity,
    put3,
    separation_now,
)
from .graph_color import PARALLEL_BLOCKS
from .impulse import push_pair
from .jit import helper, kernel
from .layout import pair_key
from .patch import normal_step, point_terms
from .records import Blocks
from .soft_constraint import soft_coefficients
from .vecmath import add, dot, load3, scale, store3, sub


class NormalCoefficients(NamedTuple):
    """What the normal constraint of a pass needs besides the point: 1/h, the soft constraint's bias rate,
    mass scale and impulse scale, the largest push-out speed and the overlap left alone (slop); and
    whether the pass starts each manifold with the patch step (``patch.py``)."""

    inv_h: float
    bias_rate: float
    mass_scale: float
    impulse_scale: float
    max_push: float
    linear_slop: float
    patch: bool


@helper
def normal_coefficients(h, use_bias, patch, settings):
    """The ``NormalCoefficients`` of a pass over sub-step ``h``: the soft spring of the contacts with
    bias (``settings.contact_hertz``, at most a quarter of the sub-step rate, Box2D v3's rule), or none
    for the relax pass; with the patch step when ``patch``."""
    if use_bias:
        hertz = min(settings.contact_hertz, 0.25 / h)
        bias_rate, mass_scale, impulse_scale = soft_coefficients(hertz, settings.contact_damping_ratio, h)
        return NormalCoefficients(1.0 / h, bias_rate, mass_scale, impulse_scale, settings.max_push_velocity,
                                  settings.linear_slop, patch)
    return NormalCoefficients(1.0 / h, 0.0, 1.0, 0.0, 0.0, settings.linear_slop, patch)


@helper
def load_solver_bodies(bodies, lo, hi):
    """Copy the velocities, inverse mass (0 unless it moves this step) and rotation vector since the step
    began of each of bodies ``lo`` to ``hi`` − 1 into its row of ``bodies.solver`` (``contact_rows.SV``...),
    rounded to float32: the state the wide solver's passes read and write in place of the float64 arrays,
    until ``store_solver_velocities`` copies the velocities back.

    What it buys: a block's gather reads one 64-byte line per body where it read a line from each of
    ``vel``, ``angvel``, ``inv_mass`` and ``drot`` (Box2D v3 keeps such a solver body state for the same
    reason), and its scatter writes one line where it wrote two, converting nothing. The displacement
    stays in float64 (``solve_block`` takes the difference of two bodies' before rounding it). Why it is
    correct: the lanes rounded the same float64 values to float32 on every gather before and wrote
    their float32 results back as they are; the copy in and out only moves those roundings from every
    block of every pass to twice a sub-step, and the results are the same to the last bit."""
    S, moving = bodies.solver, bodies.moving
    vel, angvel, drot, inv_mass = bodies.vel, bodies.angvel, bodies.drot, bodies.inv_mass
    for i in range(lo, hi):
        for k in range(3):
            S[i, SV + k] = vel[i, k]
            S[i, SW + k] = angvel[i, k]
            S[i, SDR + k] = drot[i, k]
        S[i, SIM] = inv_mass[i] if moving[i] else 0.0


@helper
def load_solver_rotations(bodies, lo, hi):
    """Copy only the rotation vectors since the step began of bodies ``lo`` to ``hi`` − 1 into their rows of
    ``bodies.solver`` (``SDR``): the load that follows ``integrate_positions`` in a run of passes. What it
    buys: a third of ``load_solver_bodies``' writes and none of its velocity reads, once per sub-step. Why
    it is correct: integrate_positions changes the rotation vectors and the positions only; the velocities
    in the rows are either those just stored back from them (``store_solver_velocities``, float32 values
    that float64 holds exactly) or the float32 of velocities nothing changed since the last full load, and
    the inverse masses do not change within a step, so a full load would write the same bits."""
    S, drot = bodies.solver, bodies.drot
    for i in range(lo, hi):
        for k in range(3):
            S[i, SDR + k] = drot[i, k]


@helper
def mark_wide_bodies(bodies, B, wide_blocks, body_a, body_b, LB):
    """Flag in ``bodies.solver`` (column ``SWIDE``) the bodies of the manifolds (``body_a``, ``body_b``) in
    the first ``wide_blocks`` blocks of ``B`` (a ``Blocks`` record), the coloured ones: the bodies whose
    velocities the wide solver's passes work on this step; and write each coloured block's lane bodies
    into ``LB`` (``SolverContacts.lane_body``, read by ``lane_bodies``)."""
    S = bodies.solver
    for i in range(bodies.n):
        S[i, SWIDE] = 0.0
    for blk in range(wide_blocks):
        s = B.start[blk]
        for j in range(B.lanes[blk]):
            i = B.order[s + j]
            a = body_a[i]
            b = body_b[i]
            S[a, SWIDE] = 1.0
            S[b, SWIDE] = 1.0
            LB[blk * 2 * L + j] = a
            LB[blk * 2 * L + L + j] = b


@helper
def store_solver_velocities(bodies, lo, hi):
    """Copy the velocities of the moving bodies among ``lo`` to ``hi`` − 1 of the coloured blocks
    (``mark_wide_bodies``) back from ``bodies.solver`` into the float64 arrays that the rest of the step
    reads (see ``load_solver_bodies``). Only theirs: a body that no contact of the blocks touches keeps
    its velocity to float64's precision (a falling ball's v = g·t)."""
    S, moving, vel, angvel = bodies.solver, bodies.moving, bodies.vel, bodies.angvel
    for i in range(lo, hi):
        if moving[i] and S[i, SWIDE] != 0.0:
            for k in range(3):
                vel[i, k] = S[i, SV + k]
                angvel[i, k] = S[i, SW + k]


@helper(inline="always")
def lane_bodies(LB, blk, j):
    """The rows of bodies a and b of lane ``j`` of coloured block ``blk``, from ``LB``
    (``SolverContacts.lane_body``, which ``mark_wide_bodies`` fills once a step: a block's L lanes' a,
    then their b), as unsigned integers. Why from there: a lane's bodies were two dependent loads away
    (the block's manifold order, then the manifold's bodies) in every gather, scatter and displacement row
    of every pass; one load now (a pass over the S2 pyramid about 1 µs faster, its step in the peers'
    harness 0.77-0.79 ms against 0.78-0.80, runs alternated). Why unsigned: numba wraps a negative signed
    index around, and that check (a shift, two ands and an add, with the array's length reloaded from the
    stack in a function as large as ``solve_colours``) came with every index of the gather, the scatter
    and the displacement rows. With unsigned rows a plain pass over the S2 pyramid's points took 19.7 µs
    instead of 22.0, its warm start 10.5 instead of 11.9, and its step in the peers' harness 0.79-0.80 ms
    instead of 0.84-0.86 (twentieth session, runs alternated). The rows are never negative, so the values
    are the same."""
    o = np.uint64(blk * 2 * L + j)
    return LB[o], LB[o + np.uint64(L)]


@helper
def gather_velocities(blk, blocks, LB, S, V):
    """Copy the velocities and inverse masses of block ``blk``'s bodies from their rows of
    ``bodies.solver`` (``S``) into the lane rows ``V``."""
    for j in range(blocks.lanes[blk]):
        a, b = lane_bodies(LB, blk, j)
        for k in range(3):
            V[at(0, VA + k, j)] = S[a, SV + k]
            V[at(0, WA + k, j)] = S[a, SW + k]
            V[at(0, VB + k, j)] = S[b, SV + k]
            V[at(0, WB + k, j)] = S[b, SW + k]
        V[at(0, IMA, j)] = S[a, SIM]
        V[at(0, IMB, j)] = S[b, SIM]


@helper
def scatter_velocities(blk, blocks, LB, moving, S, V):
    """Write the lane rows ``V`` of block ``blk`` back to the ``bodies.solver`` rows (``S``) of its moving
    bodies.

    The lanes compute in float32, so the bodies' momentum is kept to a part in 10⁶ or so over a few
    hundred steps (a gas of 64 bodies: 7·10⁻⁷ of its momentum after 120 steps), not to float64's last
    bit. Writing back only what the lanes changed, as one impulse given to b and taken from a, to float64
    velocities kept it to 10⁻¹⁵, but S3's deepest overlap between spheres grew from 0.66 to 0.78 cm on
    average over eight starts (and the step took some 10 % longer), for a reason not found (sixteenth
    session)."""
    for j in range(blocks.lanes[blk]):
        a, b = lane_bodies(LB, blk, j)
        if moving[a]:
            for k in range(3):
                S[a, SV + k] = V[at(0, VA + k, j)]
                S[a, SW + k] = V[at(0, WA + k, j)]
        if moving[b]:
            for k in range(3):
                S[b, SV + k] = V[at(0, VB + k, j)]
                S[b, SW + k] = V[at(0, WB + k, j)]


@helper
def lane_state(V, j):
    """Lane ``j``'s body velocities and inverse masses: (va, wa, vb, wb, 1/ma, 1/mb)."""
    return (get3(V, 0, VA, j), get3(V, 0, WA, j), get3(V, 0, VB, j), get3(V, 0, WB, j),
            V[at(0, IMA, j)], V[at(0, IMB, j)])


@helper
def set_lane_velocities(V, j, va, wa, vb, wb):
    put3(V, 0, VA, j, va)
    put3(V, 0, WA, j, wa)
    put3(V, 0, VB, j, vb)
    put3(V, 0, WB, j, wb)


@helper
def warm_start_lanes(nl, cw, base, V):
    """Apply the accumulated impulses of one slot of a block's lanes again. A point not yet struck
    (largest impulse 0) also records here its approach speed for restitution: measured at the start of
    the sub-step, before any point of its manifold has pushed, so all the points of a face that lands
    flat get the same approach speed (measured inside the solve, each point saw the spin that the ones
    solved before it had added, and restitution then threw the body off spinning)."""
    for j in range(nl):
        va, wa, vb, wb, ima, imb = lane_state(V, j)
        vn = (dot(sub(vb, va), get3(cw, base, N, j)) + dot(wb, jac(cw, base, j, 0, 1))
              - dot(wa, jac(cw, base, j, 0, 0)))
        fresh = cw[at(base, LAM_MAX, j)] == F0
        cw[at(base, APPROACH, j)] = max(-vn, F0) if fresh else cw[at(base, APPROACH, j)]
        va, wa, vb, wb = push_pair(va, wa, vb, wb, ima, imb, get3(cw, base, N, j), cw[at(base, LAM_N, j)],
                                   jac(cw, base, j, 0, 2), jac(cw, base, j, 0, 3))
        va, wa, vb, wb = push_pair(va, wa, vb, wb, ima, imb, get3(cw, base, T1, j), cw[at(base, LAM_T1, j)],
                                   jac(cw, base, j, 1, 2), jac(cw, base, j, 1, 3))
        va, wa, vb, wb = push_pair(va, wa, vb, wb, ima, imb, get3(cw, base, T2, j), cw[at(base, LAM_T2, j)],
                                   jac(cw, base, j, 2, 2), jac(cw, base, j, 2, 3))
        set_lane_velocities(V, j, va, wa, vb, wb)


@helper
def colour_ends(blocks, wide):
    """Where each colour's run of blocks ends among the first ``wide`` blocks (the coloured blocks come
    in colour order, ``graph_color.color_contacts``): an int64 array, one end per colour, the last
    ``wide``."""
    order, start, color = blocks.order, blocks.start, blocks.color
    ends = np.empty(wide, np.int64)
    r = 0
    for blk in range(1, wide + 1):
        if blk == wide or color[order[start[blk]]] != color[order[start[blk - 1]]]:
            ends[r] = blk
            r += 1
    return ends[:r]


@helper(inline="always")
def warm_start_block(blk, B, cw, LB, bodies, V):
    """The warm start of block ``blk`` (see ``warm_start``) of the blocks ``B``, with ``V`` as its lane
    rows. (The solver's arrays come one by one, not as the nested ``SolverContacts``: a parallel loop's
    body can take flat records only.) Inlined (numba's ``inline="always"``), as is ``solve_block``: called
    for every block of every pass, a compiled call counted references to each of its arrays and made the
    S1 pile of 1000 0.4 ms a step slower on one thread."""
    gather_velocities(blk, B, LB, bodies.solver, V)
    for p in range(B.slots[blk]):
        warm_start_lanes(B.lanes[blk], cw, B.offset[blk] + p * NF * STRIDE, V)
    scatter_velocities(blk, B, LB, bodies.moving, bodies.solver, V)


@helper(inline="always")
def warm_start(contacts, bodies):
    """Apply the accumulated impulses again (Catto 2005) to the coloured blocks of ``contacts`` (a
    ``SolverContacts``): the solver starts from last sub-step's answer, which is what makes stacks
    converge with few iterations. Colour by colour, on the threads: ``solve_colours``."""
    # inlined: as a compiled function of its own, this thin wrapper would have numba link and optimise
    # again the whole tree of kernels below it (see ``bench.compile --by-function``)
    solve_colours(contacts, bodies, NormalCoefficients(1.0, 0.0, 1.0, 0.0, 0.0, 0.0, bool(False)), bool(True))


@helper
def normal_row(cw, base, j):
    """The fields of lane ``j``'s point that its normal constraint reads: n, ra×n, rb×n, Ia⁻¹(ra×n),
    Ib⁻¹(rb×n), the effective mass, s₀, the accumulated and largest normal impulses."""
    return (get3(cw, base, N, j), jac(cw, base, j, 0, 0), jac(cw, base, j, 0, 1), jac(cw, base, j, 0, 2),
            jac(cw, base, j, 0, 3), cw[at(base, MASS_N, j)], cw[at(base, SEP0, j)], cw[at(base, LAM_N, j)],
            cw[at(base, LAM_MAX, j)])


@helper
def normal_update(row, va, wa, vb, wb, ima, imb, dx, dra, drb, coefficients):
    """Non-penetration of one point (see ``solve_contacts``), from its ``normal_row``, its bodies'
    velocities, inverse masses and displacements since the step began, and the pass's
    ``NormalCoefficients``. Returns the new velocities and the new accumulated and largest normal
    impulses (the approach speed at impact, for restitution, is recorded at the start of the sub-step by
    ``warm_start_lanes``)."""
    n, ran, rbn, ian, ibn, mass, sep0, old, lam_max = row
    bias, ms, isc = normal_bias(separation_now(sep0, n, ran, rbn, dx, dra, drb), coefficients)
    vn = dot(sub(vb, va), n) + dot(wb, rbn) - dot(wa, ran)
    new = max(old - mass * ms * (vn + bias) - isc * old, F0)
    va, wa, vb, wb = push_pair(va, wa, vb, wb, ima, imb, n, new - old, ian, ibn)
    return va, wa, vb, wb, new, max(lam_max, new)


@helper
def store_normal(cw, base, j, new, lam_max):
    """Store lane ``j``'s new accumulated and largest normal impulses."""
    cw[at(base, LAM_N, j)] = new
    cw[at(base, LAM_MAX, j)] = lam_max


@helper(error_model="numpy", inline="always")
def friction_update(cw, base, j, va, wa, vb, wb, ima, imb):
    """Coulomb friction of lane ``j``'s point (see ``solve_contacts``): the tangential impulse vector that
    stops the sliding, clamped to the disc of radius μ·λn. Returns the new velocities. Written without
    branches (min/max), so that the lane loop calling it compiles to SIMD instructions; the ``numpy``
    error model lets a division by zero give inf instead of raising."""
    # inlined into its one caller, point_lanes: compiled apart, LLVM left the call in the lane loop,
    # which then ran one lane at a time (the solve stage of S2 took twice as long)
    t1 = get3(cw, base, T1, j)
    t2 = get3(cw, base, T2, j)
    lt1 = cw[at(base, LAM_T1, j)]
    lt2 = cw[at(base, LAM_T2, j)]
    dv = sub(vb, va)
    l1 = lt1 - cw[at(base, MASS_T1, j)] * (dot(dv, t1) + dot(wb, jac(cw, base, j, 1, 1))
                                           - dot(wa, jac(cw, base, j, 1, 0)))
    l2 = lt2 - cw[at(base, MASS_T2, j)] * (dot(dv, t2) + dot(wb, jac(cw, base, j, 2, 1))
                                           - dot(wa, jac(cw, base, j, 2, 0)))
    cap = cw[at(base, MU, j)] * cw[at(base, LAM_N, j)]
    f = min(F1, cap / max(math.sqrt(l1 * l1 + l2 * l2), FTINY))
    l1 *= f
    l2 *= f
    va, wa, vb, wb = push_pair(va, wa, vb, wb, ima, imb, t1, l1 - lt1, jac(cw, base, j, 1, 2),
                               jac(cw, base, j, 1, 3))
    va, wa, vb, wb = push_pair(va, wa, vb, wb, ima, imb, t2, l2 - lt2, jac(cw, base, j, 2, 2),
                               jac(cw, base, j, 2, 3))
    cw[at(base, LAM_T1, j)] = l1
    cw[at(base, LAM_T2, j)] = l2
    return va, wa, vb, wb


@helper(error_model="numpy")
def point_lanes(nl, cw, base, V, D, coefficients):
    """One slot of a block's lanes: each lane's point gets its friction (``friction_update``), then its
    non-penetration (``normal_update``), on the lane's velocities in ``V``. The lanes are independent, so
    the loop compiles to SIMD instructions (four lanes at a time with AVX2). One loop for both, not a
    loop each: the lane's velocities are read from ``V`` and written back once instead of twice, which
    made a pass over the S2 pyramid's points some 4 % faster; each lane's operations are the same, in the
    same order, so the numbers are too."""
    for j in range(nl):
        va, wa, vb, wb, ima, imb = lane_state(V, j)
        va, wa, vb, wb = friction_update(cw, base, j, va, wa, vb, wb, ima, imb)
        va, wa, vb, wb, new, lam_max = normal_update(
            normal_row(cw, base, j), va, wa, vb, wb, ima, imb, get3(D, 0, DX, j), get3(D, 0, DRA, j),
            get3(D, 0, DRB, j), coefficients)
        store_normal(cw, base, j, new, lam_max)
        set_lane_velocities(V, j, va, wa, vb, wb)


@helper(error_model="numpy")
def patch_sums_lanes(nl, cw, base, D, coefficients):
    """The patch step (``patch.py``), first part, for one slot of a block's lanes: add the slot's point to
    its lane's sums (Σ ra×n, Σ rb×n, Σ Ia⁻¹(ra×n), Σ Ib⁻¹(rb×n), the count, Σ(b + Cλ), ΣC, min λ), as
    ``patch.solve_patch``'s first loop does; an empty slot (no effective mass) adds nothing. Written with
    selects, not branches, so that the lane loop compiles to SIMD instructions."""
    for j in range(nl):
        k = cw[at(base, MASS_N, j)]
        lam = cw[at(base, LAM_N, j)]
        real = k > F0
        n = get3(cw, base, N, j)
        ran, rbn = jac(cw, base, j, 0, 0), jac(cw, base, j, 0, 1)
        s = separation_now(cw[at(base, SEP0, j)], n, ran, rbn, get3(D, 0, DX, j), get3(D, 0, DRA, j),
                           get3(D, 0, DRB, j))
        g, soft = point_terms(s, k, lam, coefficients)
        put3(D, 0, PSAN, j, add(get3(D, 0, PSAN, j), ran))
        put3(D, 0, PSBN, j, add(get3(D, 0, PSBN, j), rbn))
        put3(D, 0, PJAN, j, add(get3(D, 0, PJAN, j), jac(cw, base, j, 0, 2)))
        put3(D, 0, PJBN, j, add(get3(D, 0, PJBN, j), jac(cw, base, j, 0, 3)))
        D[at(0, PM, j)] += F1 if real else F0
        D[at(0, PGRAD, j)] += g if real else F0
        D[at(0, PCOMP, j)] += soft if real else F0
        D[at(0, PLOW, j)] = min(D[at(0, PLOW, j)], lam if real else FINF)


@helper(error_model="numpy")
def patch_normal_lanes(nl, cw, off, V, D):
    """The patch step, second part: each lane's normal step from its sums (``patch.normal_step``)."""
    for j in range(nl):
        va, wa, vb, wb, ima, imb = lane_state(V, j)
        va, wa, vb, wb, step = normal_step(get3(D, 0, PSAN, j), get3(D, 0, PSBN, j), get3(D, 0, PJAN, j),
                                           get3(D, 0, PJBN, j), D[at(0, PM, j)], D[at(0, PGRAD, j)],
                                           D[at(0, PCOMP, j)], D[at(0, PLOW, j)], get3(cw, off, N, j), va, wa,
                                           vb, wb, ima, imb)
        D[at(0, PSTEP, j)] = step
        set_lane_velocities(V, j, va, wa, vb, wb)


@helper
def patch_impulse_lanes(nl, cw, base, D):
    """The patch step, last part, for one slot of a block's lanes: the point takes its lane's step. Only
    in a lane whose manifold has two points or more: a manifold of one point has no patch step (its step
    is 0), and its largest normal impulse must not take its warm-start impulse here, or it would differ
    with the block it shares (a block of one-point manifolds has no patch step at all) and from the
    reference solver, which steps only manifolds of two points or more. (Until the twentieth session it
    did: a one-point manifold in a block with larger ones counted its warm-start impulse as struck,
    which changed restitution's bookkeeping, and the results then depended on how the blocks were cut.)"""
    for j in range(nl):
        real = (cw[at(base, MASS_N, j)] > F0) & (D[at(0, PM, j)] > F1)
        lam = cw[at(base, LAM_N, j)] + D[at(0, PSTEP, j)]
        cw[at(base, LAM_N, j)] = lam if real else cw[at(base, LAM_N, j)]
        cw[at(base, LAM_MAX, j)] = max(cw[at(base, LAM_MAX, j)], lam) if real else cw[at(base, LAM_MAX, j)]


@helper(inline="always")
def solve_block(blk, B, cw, LB, bodies, coefficients, V, D):
    """One pass of ``solve_contacts`` over block ``blk`` of the blocks ``B``, with ``V`` and ``D`` as its
    lane rows (the arrays come one by one, as in ``warm_start_block``): when the pass has it, the patch
    step of its manifolds of two points or more (``patch.py``, in three lane loops: ``patch_sums_lanes``,
    ``patch_normal_lanes``, ``patch_impulse_lanes``), then its points one slot after another."""
    blk_lanes, blk_slots, blk_off = B.lanes, B.slots, B.offset
    S, dpos = bodies.solver, bodies.dpos
    gather_velocities(blk, B, LB, S, V)
    patch = coefficients.patch and blk_slots[blk] > 1  # some lane has a manifold of two points or more
    for j in range(blk_lanes[blk]):
        a, b = lane_bodies(LB, blk, j)
        for k in range(3):
            # the float32 of the float64 difference, not the difference of two float32 displacements:
            # the separation then sees the relative motion to float32's precision of itself
            D[at(0, DX + k, j)] = dpos[b, k] - dpos[a, k]
            D[at(0, DRA + k, j)] = S[a, SDR + k]
            D[at(0, DRB + k, j)] = S[b, SDR + k]
        if patch:  # the patch's sums start from nothing
            for r in range(PSAN, PLOW):
                D[at(0, r, j)] = 0.0
            D[at(0, PLOW, j)] = math.inf
    if patch:
        slot = NF * STRIDE
        for p in range(blk_slots[blk]):
            patch_sums_lanes(blk_lanes[blk], cw, blk_off[blk] + p * slot, D, coefficients)
        patch_normal_lanes(blk_lanes[blk], cw, blk_off[blk], V, D)
        for p in range(blk_slots[blk]):
            patch_impulse_lanes(blk_lanes[blk], cw, blk_off[blk] + p * slot, D)
    for p in range(blk_slots[blk]):
        # each lane: friction first, then the normal. The relax pass solves friction too (Box2D v3):
        # its normal impulses are the final ones, and friction clamped by them is what makes a spinning
        # box slow down at Coulomb's rate (with friction only in the biased passes, 2-5 % slower)
        point_lanes(blk_lanes[blk], cw, blk_off[blk] + p * NF * STRIDE, V, D, coefficients)
    scatter_velocities(blk, B, LB, bodies.moving, S, V)


@helper(inline="always")
def solve_contacts(contacts, bodies, coefficients):
    """One sequential-impulse pass over the contact points (Catto 2005), soft-step variant, block by
    block (see the module's docstring).

    The separation is tracked to first order from each body's displacement ``dpos`` and rotation vector
    ``drot`` since the step began (s = s₀ + n·(Δx_b − Δx_a) + Δθ_b·(r_b×n) − Δθ_a·(r_a×n), as in Box2D v3
    and Rapier), which needs no quaternion work in the inner loop.

    Friction first: Coulomb, the tangential impulse vector clamped to the disc of radius μ·λn (last
    iteration's normal impulse), so that non-penetration, solved last, is the constraint that holds best
    when the iterations stop. Normal: s > 0 is a speculative contact that only stops the approach that
    would close the gap within the sub-step (v_n ≥ −s/h); an overlap gets a soft bias (a spring of
    contact hertz, pushing at most the max push velocity) given by ``coefficients`` (see
    ``normal_coefficients``); with the relax pass's coefficients there is no bias. The accumulated normal
    impulse is clamped at ≥ 0. Covers the coloured blocks; the overflow is the reference solver's.
    Colour by colour, on the threads: ``solve_colours``."""
    # inlined: as a compiled function of its own, this thin wrapper would have numba link and optimise
    # again the whole tree of kernels below it (see ``bench.compile --by-function``)
    solve_colours(contacts, bodies, coefficients, bool(False))


@helper(parallel=True)
def solve_colours(contacts, bodies, coefficients, warm):
    """One pass over the coloured blocks of ``contacts``: the warm start of each block (``warm_start_block``)
    when ``warm``, else a solve with ``coefficients`` (``solve_block``).

    Colour by colour, the blocks of a colour side by side on the threads: they share no moving body, so
    each thread gathers, solves and scatters its own blocks' bodies and points with its own lane rows
    (``V`` and ``D`` hold a set per thread in use, ``ContactSolverData.lane_rows``), and the result is the
    serial one, bit for bit, whichever thread solves which block. One parallel loop (``prange``) runs the
    whole pass: its threads take a colour's blocks one at a time from shared counters, each first from
    its own contiguous part of the colour (a colour's blocks come region by region, one region of bodies
    per thread, ``graph_color.body_regions``, so a thread keeps mostly the same bodies from colour to
    colour), then from what is left of the others', and wait
    at the colour's end until all of them are solved (``atomics.py``), so a pass costs one launch, not one
    per colour. With a single set of lane rows (one thread in use) or fewer than ``PARALLEL_BLOCKS`` blocks
    the pass runs on the calling thread, with no launch.

    What it buys: warm start, solve and relax are some 60 % of the step. A launch costs some 5-8 µs even
    when the other thread is still spinning from the last (numba hands the iterations out and waits for
    them), and a step made one per colour and pass, some 10 colours × 18 passes with the default 4
    sub-steps and 10 iterations; the colours also went at the pace of the slower thread, where now the
    first free thread takes the next block. On the S3 box of 4000 spheres (382 blocks in 10 colours), a
    plain pass on two threads took 161 µs against 208 on one with a loop per colour, 147 with one loop a
    pass and the blocks taken in turn from one counter, and 118 with each thread first taking its own
    contiguous part of the colour (the warm start 121, 109 and 82 µs against 128 on one thread; the S1
    pile of 4096, 324 blocks in 12 colours: 141 and 95 µs against 199 and 123 on one thread, 155 and 111
    with a loop per colour; twenty-second session, each pass alone, repeated). Before the loops per colour
    (fourteenth session) a pass ran on the calling thread. What held the pile's passes back after that
    was not the memory the lanes stream but the bodies' rows going from one core's cache to the other's
    (twenty-fifth session: with a private copy of the bodies per thread and no waiting at the colours'
    ends, a pass on two threads took 68-73 µs for the warm start and 110-121 for a plain one; with the
    waits, 85-89 and 134-143; shared, as the solver must, 112-141 and 136-170); a
    colour's blocks now come region by region (``graph_color.body_regions``), and the shared pass takes
    80 and 121 µs."""
    c = coefficients  # in float32, as the lanes compute (a float64 field would widen their arithmetic)
    coefficients = NormalCoefficients(np.float32(c.inv_h), np.float32(c.bias_rate), np.float32(c.mass_scale),
                                      np.float32(c.impulse_scale), np.float32(c.max_push),
                                      np.float32(c.linear_slop), c.patch)
    T = contacts.table
    # a record made here, not read out of another: numba's parallel loops take only those
    B = Blocks(T.order, T.start, T.lanes, T.slots, T.offset, T.color)
    cw, V, D, LB = contacts.pts.cw, contacts.V, contacts.D, contacts.lane_body
    wide = contacts.wide_blocks
    shares = len(V) // (NV * STRIDE)
    if shares == 1 or wide < PARALLEL_BLOCKS:
        for b in range(wide):
            if warm:
                warm_start_block(b, B, cw, LB, bodies, V)
            else:
                solve_block(b, B, cw, LB, bodies, coefficients, V, D)
        return
    ends = colour_ends(B, wide)
    # per colour, a counter per share (the next block of the share's part of the colour, counted from the
    # part's first) and then one of the blocks solved; each on a cache line of its own (8 int64), so that
    # one thread's counting does not take the line from under another's
    per = 8 * (shares + 1)
    counters = new_counters(per * len(ends))
    for t in prange(shares):
        Vt = V[t * NV * STRIDE:(t + 1) * NV * STRIDE]
        Dt = D[t * ND * STRIDE:(t + 1) * ND * STRIDE]
        first = int(0)
        for c in range(len(ends)):
            end = ends[c]
            solved = int(0)
            # its own part first, then whatever is left of the others'
            for k in range(shares):
                part = (t + k) % shares
                lo = first + part * (end - first) // shares
                hi = first + (part + 1) * (end - first) // shares
                b = lo + atomic_add(counters, per * c + 8 * part, 1)
                while b < hi:
                    if warm:
                        warm_start_block(b, B, cw, LB, bodies, Vt)
                    else:
                        solve_block(b, B, cw, LB, bodies, coefficients, Vt, Dt)
                    solved += 1
                    b = lo + atomic_add(counters, per * c + 8 * part, 1)
            done = per * c + 8 * shares
            if solved > 0:
                atomic_add(counters, done, solved)
            # the next colour's blocks read the velocities this colour's blocks write
            while atomic_load(counters, done) < end - first:
                pass
            first = end


PARALLEL_STORE = 2048
"""The fewest manifolds whose impulses ``store_impulses`` copies out on the threads (``World`` passes it
one share below that)."""
STORE_ROWS = 512
"""The manifolds of a run that a thread of ``store_impulses`` takes at a time."""


@helper
def store_run(lo, hi, mb_a, mb_b, m_first, m_npoints, pts, out_impulse, keep, nbodies, depth, touching):
    """``store_impulses``' work on manifolds ``lo`` to ``hi`` − 1."""
    cla, cidx, cw = pts.local_a, pts.row, pts.cw
    keep_key, keep_first, keep_np = keep.keys, keep.first, keep.npoints
    keep_la, keep_ln, keep_lt = keep.anchor, keep.normal, keep.friction
    for i in range(lo, hi):
        a = mb_a[i]
        b = mb_b[i]
        f = m_first[i]
        keep_key[i] = pair_key(a, b, nbodies)
        keep_first[i] = max(f, 0)
        keep_np[i] = m_npoints[i] if f >= 0 else 0
        touches = False
        for p in range(m_npoints[i]):
            touches = touches or depth[i, p] > 0.0
        for p in range(4):
            out_impulse[i, p] = 0.0
        if f >= 0:
            for p in range(m_npoints[i]):
                k = f + p
                c = cidx[k]
                out_impulse[i, p] = cw[at(c, LAM_N, 0)]
                touches = touches or out_impulse[i, p] > 0.0
                keep_ln[k] = cw[at(c, LAM_N, 0)]
                store3(keep_la, k, load3(cla, k))
                friction = add(scale(get3(cw, c, T1, 0), cw[at(c, LAM_T1, 0)]),
                               scale(get3(cw, c, T2, 0), cw[at(c, LAM_T2, 0)]))
                store3(keep_lt, k, friction)
        touching[i] = touches


@kernel(parallel=True, same_types=True)
def store_impulses(m, mb_a, mb_b, m_first, m_npoints, pts, out_impulse, keep, nbodies, shares, depth,
                   touching):
    """Copy the accumulated impulses of the ``m`` manifolds (bodies, first point and point count each;
    ``pts`` the ``ContactPoints`` record) out: per manifold point into ``out_impulse`` (for drawing and
    events), and into the persistence arrays that next step's ``prepare_contacts`` matches against
    (the friction impulse kept as a world vector, since the tangents are chosen afresh each step).
    A manifold that had no solver points (both bodies still) reports zero impulses. ``keep`` is the
    ``StoredImpulses`` record to fill. (The arrays, not the solver's ``SolverContacts`` record, whose
    some thirty arrays numba's dispatcher would inspect on every call: 2 µs a step.) ``touching[i]``
    receives whether manifold i touches after the step: a point overlaps (``depth`` > 0) or took an
    impulse, a bounce that started and ended within the step (``events.touching_keys`` reads it with the
    keys stored here: on the threads, where the events' own pass over the manifolds was serial, some
    90-110 µs a step on S3 and the S1 pile of 4096).

    With ``shares`` > 1 the threads (``prange``, one iteration each) take runs of ``STORE_ROWS`` manifolds
    from a shared counter (``atomics.py``) until none is left. Each manifold's rows are its own, so the
    result is the serial one whatever thread copies which run. What it buys: the copy reads a solver row
    per point, a cache miss each; on S3's 12,000 ball contacts on two threads it took 99-125 µs a step
    against 127-150 serially with one run per thread (three alternated runs, twenty-fourth session). Not
    half: the copy is bound by memory, and numba's worker thread has gone to sleep during the serial
    work before it, so that its run started some 50 µs late and the calling thread waited for it at the
    loop's end (on the S1 pile of 4096: 161 µs against 104 for the same copy made again at once). Taken
    from a counter, the runs that the worker has not yet started go to the calling thread."""
    if shares == 1:
        store_run(int(0), m, mb_a, mb_b, m_first, m_npoints, pts, out_impulse, keep, nbodies, depth, touching)
        return
    claims = new_counters(1)
    runs = (m + STORE_ROWS - 1) // STORE_ROWS
    for _ in prange(shares):
        r = atomic_add(claims, 0, 1)
        while r < runs:
            store_run(r * STORE_ROWS, min((r + 1) * STORE_ROWS, m), mb_a, mb_b, m_first, m_npoints, pts,
                      out_impulse, keep, nbodies, depth, touching)
            r = atomic_add(claims, 0, 1)


@helper
def reset_impulses(contacts, bodies):
    """Zero the accumulated impulses of every point: the cold start that takes the warm start's place
    when ``world.warm_starting`` is off (each sub-step then solves from nothing). Records the approach
    speed of the points not yet struck, as the warm start does."""
    cidx, cw, cb = contacts.pts.row, contacts.pts.cw, contacts.pts.bodies
    vel, angvel = bodies.vel, bodies.angvel
    for k in range(contacts.points):
        c = cidx[k]
        if cw[at(c, LAM_MAX, 0)] == 0.0:
            vn = point_normal_velocity(cw, c, cb[k, 0], cb[k, 1], vel, angvel)
            cw[at(c, APPROACH, 0)] = max(-vn, 0.0)
        cw[at(c, LAM_N, 0)] = 0.0
        cw[at(c, LAM_T1, 0)] = 0.0
        cw[at(c, LAM_T2, 0)] = 0.0
