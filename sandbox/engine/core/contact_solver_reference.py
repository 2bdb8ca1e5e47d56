"""The reference contact solver: sequential impulses, one contact point after another, as the seed
tutorials write them.

This is the same method as the wide solver (``contact_solver.py``) without its data layout: for each
manifold in colour order, first one normal impulse at its centroid shared evenly by its points (the
patch step, ``patch.py``, which keeps a flat landing symmetric), then for each of its points,
first friction, then the normal impulse, each computed from the bodies' velocities with the impulse
formula of ``impulse.py`` written out. Read it first; the
wide solver computes the same sweep, only 32 manifolds at a time and in float32 (``contact_rows.py``),
and ``tests/test_solver.py`` checks that the two agree to float32's precision. It is used, not kept for
show: it solves the overflow manifolds that found no colour (Box2D v3's overflow constraints), and the
whole step when ``world.contact_solver`` is ``"reference"``.

For one contact point with anchors rA, rB (from each centre of mass), normal n (A to B):

    v_rel·n = (vB − vA)·n + ωB·(rB×n) − ωA·(rA×n)   relative normal velocity: ((vB + ωB×rB) − (vA + ωA×rA))·n
    K       = 1 / (1/mA + 1/mB + n·((IA⁻¹(rA×n))×rA) + n·((IB⁻¹(rB×n))×rB))   effective mass (impulse.py)
    Δλ      = −K·(v_rel·n + bias)                     impulse that stops the approach

applied as +Δλ·n to B at rB and −Δλ·n to A at rA: vA −= Δλ·n/mA, ωA −= Δλ·IA⁻¹(rA×n), and the same with
+ for B. The impulse is *accumulated* over the passes and the accumulated value λ clamped at ≥ 0
(contacts push, never pull), Catto's key to stable stacking. Friction does the same along the two
tangents, the accumulated tangential impulse clamped to the disc of radius μ·λ (Coulomb). The bias is
the soft step's: a speculative contact (gap s > 0) only stops the approach that would close the gap
within the sub-step; an overlap is pushed apart by a soft spring (``soft_constraint.py``), whose impulse
scale also relaxes the accumulated impulse a little each pass. Restitution is applied after the
sub-steps by ``restitution.py``, which both solvers share. The anchors, normal, tangents and inverse
inertias are those of the start of the step (the contact is linearised once per step, in both solvers),
and every quantity is computed with the same operations in the same order as the wide solver's lanes,
in float64 where the lanes use float32. The soft step switches formula where the gap crosses zero, so a
point whose gap sits at zero may take one branch here and the other in the lanes: the test allows that
point's jump in those scenes.
"""

from __future__ import annotations

import math

import numpy as np

from .contact_rows import (
    APPROACH,
    LAM_MAX,
    LAM_N,
    LAM_T1,
    LAM_T2,
    MU,
    RA,
    RB,
    SEP0,
    T1,
    T2,
    N,
    at,
    get3,
    normal_bias,
    separation_now,
)
from .impulse import effective_mass, push_pair
from .jit import helper
from .patch import solve_patch
from .vecmath import ZERO_MAT, cross, dot, load3, load_mat, mat_vec, store3, sub


@helper
def pair_masses(inv_mass, moving, inv_inertia_start, a, b):
    """The inverse masses and inverse inertias (those of the start of the step) of bodies ``a`` and
    ``b``; a body that does not move this step is immovable: no inverse mass, no inverse inertia. (The
    body arrays come one by one, not as the ``BodyState`` record: a compiled call counts a reference to
    every array of a record it is handed, which in a per-point loop costs more than the point.)"""
    ima = inv_mass[a] if moving[a] else 0.0
    imb = inv_mass[b] if moving[b] else 0.0
    ia = load_mat(inv_inertia_start, a) if moving[a] else ZERO_MAT
    ib = load_mat(inv_inertia_start, b) if moving[b] else ZERO_MAT
    return ima, imb, ia, ib


@helper
def store_pair_velocities(moving, vel, angvel, a, b, va, wa, vb, wb):
    """Write the new velocities of ``a`` and ``b`` back; a body that does not move keeps its own (it is
    immovable for this step)."""
    if moving[a]:
        store3(vel, a, va)
        store3(angvel, a, wa)
    if moving[b]:
        store3(vel, b, vb)
        store3(angvel, b, wb)


@helper
def point_friction(cw, c, ima, imb, ia, ib, ra, rb, va, wa, vb, wb):
    """Coulomb friction of the point whose fields start at ``c``: the tangential impulse that stops the
    sliding, the accumulated one kept inside the disc |λt| ≤ μ·λn. Returns the bodies' new velocities."""
    t1, t2 = get3(cw, c, T1, 0), get3(cw, c, T2, 0)
    rat1, rbt1, rat2, rbt2 = cross(ra, t1), cross(rb, t1), cross(ra, t2), cross(rb, t2)
    old1, old2 = cw[at(c, LAM_T1, 0)], cw[at(c, LAM_T2, 0)]
    dv = sub(vb, va)
    vt1 = dot(dv, t1) + dot(wb, rbt1) - dot(wa, rat1)  # the sliding velocity along t1 and t2
    vt2 = dot(dv, t2) + dot(wb, rbt2) - dot(wa, rat2)
    l1 = old1 - effective_mass(ima, imb, ia, ib, ra, rb, t1) * vt1
    l2 = old2 - effective_mass(ima, imb, ia, ib, ra, rb, t2) * vt2
    limit = cw[at(c, MU, 0)] * cw[at(c, LAM_N, 0)]
    shrink = min(1.0, limit / max(math.sqrt(l1 * l1 + l2 * l2), 1e-30))
    l1 *= shrink
    l2 *= shrink
    va, wa, vb, wb = push_pair(va, wa, vb, wb, ima, imb, t1, l1 - old1, mat_vec(ia, rat1), mat_vec(ib, rbt1))
    va, wa, vb, wb = push_pair(va, wa, vb, wb, ima, imb, t2, l2 - old2, mat_vec(ia, rat2), mat_vec(ib, rbt2))
    cw[at(c, LAM_T1, 0)] = l1
    cw[at(c, LAM_T2, 0)] = l2
    return va, wa, vb, wb


@helper
def friction_point(k, cw, row, pb, inv_mass, moving, inv_inertia_start, vel, angvel):
    """Solve the friction of contact point ``k`` once (``point_friction``), on the bodies' velocities
    (the contact and body arrays one by one, see ``pair_masses``)."""
    c = row[k]
    a = np.int64(pb[k, 0])
    b = np.int64(pb[k, 1])
    ima, imb, ia, ib = pair_masses(inv_mass, moving, inv_inertia_start, a, b)
    va, wa, vb, wb = point_friction(cw, c, ima, imb, ia, ib, get3(cw, c, RA, 0), get3(cw, c, RB, 0),
                                    load3(vel, a), load3(angvel, a), load3(vel, b), load3(angvel, b))
    store_pair_velocities(moving, vel, angvel, a, b, va, wa, vb, wb)


@helper
def solve_point(k, contacts, bodies, coefficients, warm):
    """Solve contact point ``k`` once (or, with ``warm``, apply its accumulated impulses again)."""
    cw = contacts.pts.cw
    c = contacts.pts.row[k]  # where point k's fields are (contact_rows.py)
    # np.int64: the int32 body rows widened to the type solve_manifold_patch passes, so that numba
    # compiles pair_masses and store_pair_velocities once (int() would keep int32)
    a = np.int64(contacts.pts.bodies[k, 0])
    b = np.int64(contacts.pts.bodies[k, 1])
    vel, angvel = bodies.vel, bodies.angvel
    ima, imb, ia, ib = pair_masses(bodies.inv_mass, bodies.moving, bodies.inv_inertia_start, a, b)
    n, t1, t2 = get3(cw, c, N, 0), get3(cw, c, T1, 0), get3(cw, c, T2, 0)
    ra, rb = get3(cw, c, RA, 0), get3(cw, c, RB, 0)
    va, wa, vb, wb = load3(vel, a), load3(angvel, a), load3(vel, b), load3(angvel, b)
    # the angular terms of the formula, per direction: r×d and I⁻¹(r×d)
    ran, rbn = cross(ra, n), cross(rb, n)
    rat1, rbt1, rat2, rbt2 = cross(ra, t1), cross(rb, t1), cross(ra, t2), cross(rb, t2)
    if warm:  # the impulses of the last sub-step, along n, t1 and t2 in turn
        if cw[at(c, LAM_MAX, 0)] == 0.0:  # not yet struck: the approach speed, before anything pushes
            vn = dot(sub(vb, va), n) + dot(wb, rbn) - dot(wa, ran)
            cw[at(c, APPROACH, 0)] = max(-vn, 0.0)
        va, wa, vb, wb = push_pair(va, wa, vb, wb, ima, imb, n, cw[at(c, LAM_N, 0)], mat_vec(ia, ran),
                                   mat_vec(ib, rbn))
        va, wa, vb, wb = push_pair(va, wa, vb, wb, ima, imb, t1, cw[at(c, LAM_T1, 0)], mat_vec(ia, rat1),
                                   mat_vec(ib, rbt1))
        va, wa, vb, wb = push_pair(va, wa, vb, wb, ima, imb, t2, cw[at(c, LAM_T2, 0)], mat_vec(ia, rat2),
                                   mat_vec(ib, rbt2))
    else:
        # friction, in every pass (the relax pass too, see contact_solver.solve_contacts)
        va, wa, vb, wb = point_friction(cw, c, ima, imb, ia, ib, ra, rb, va, wa, vb, wb)
        # the gap now, to first order from how far each body moved and turned since the step began
        dx = sub(load3(bodies.dpos, b), load3(bodies.dpos, a))
        s = separation_now(cw[at(c, SEP0, 0)], n, ran, rbn, dx, load3(bodies.drot, a), load3(bodies.drot, b))
        vn = dot(sub(vb, va), n) + dot(wb, rbn) - dot(wa, ran)  # the relative normal velocity
        # speculative (s > 0): allow just the approach that closes the gap within the sub-step;
        # overlapping: a soft spring pushes the bodies apart, at most max_push m/s
        bias, mass_scale, impulse_scale = normal_bias(s, coefficients)
        old = cw[at(c, LAM_N, 0)]
        k_n = effective_mass(ima, imb, ia, ib, ra, rb, n)
        new = max(old - k_n * mass_scale * (vn + bias) - impulse_scale * old, 0.0)  # λ only pushes
        cw[at(c, LAM_N, 0)] = new
        cw[at(c, LAM_MAX, 0)] = max(cw[at(c, LAM_MAX, 0)], new)
        va, wa, vb, wb = push_pair(va, wa, vb, wb, ima, imb, n, new - old, mat_vec(ia, ran), mat_vec(ib, rbn))
    store_pair_velocities(bodies.moving, bodies.vel, bodies.angvel, a, b, va, wa, vb, wb)


@helper
def solve_manifold_patch(i, contacts, bodies, coefficients):
    """The patch step of manifold ``i`` (``patch.py``): one normal impulse at its centroid, shared evenly
    by its points, before they are solved one by one."""
    a, b = contacts.body_a[i], contacts.body_b[i]
    vel, angvel = bodies.vel, bodies.angvel
    ima, imb, ia, ib = pair_masses(bodies.inv_mass, bodies.moving, bodies.inv_inertia_start, a, b)
    dx = sub(load3(bodies.dpos, b), load3(bodies.dpos, a))
    va, wa, vb, wb = solve_patch(contacts.pts.cw, contacts.pts.row[contacts.first[i]], contacts.npoints[i],
                                 load3(vel, a), load3(angvel, a), load3(vel, b), load3(angvel, b), ima, imb,
                                 ia, ib, dx, load3(bodies.drot, a), load3(bodies.drot, b), coefficients)
    store_pair_velocities(bodies.moving, bodies.vel, bodies.angvel, a, b, va, wa, vb, wb)


@helper
def solve_blocks(contacts, bodies, coefficients, warm, first, last):
    """One pass over blocks ``first``…``last − 1`` of ``contacts``: every manifold in colour order, first
    as one patch (``solve_manifold_patch``, when it has two points or more and the pass's coefficients
    say so), then every point of it in turn (``solve_point``); with ``warm``, the warm start instead."""
    B = contacts.table
    for blk in range(first, last):
        for lane in range(B.lanes[blk]):
            i = B.order[B.start[blk] + lane]
            if not warm and coefficients.patch and contacts.npoints[i] > 1:
                solve_manifold_patch(i, contacts, bodies, coefficients)
            for p in range(contacts.npoints[i]):
                solve_point(contacts.first[i] + p, contacts, bodies, coefficients, warm)
