"""The reference contact solver: sequential impulses, one contact point after another, as the seed
tutorials write them.

This is the same method as the wide solver (``contact_solver.py``) without its data layout: for each
manifold in colour order, for each of its points, first friction, then the normal impulse, each computed
from the bodies' velocities with the impulse formula of ``impulse.py`` written out. Read it first; the
wide solver computes the same numbers (``tests/test_solver.py`` checks the two agree to 1e-9), only
32 manifolds at a time. It is used, not kept for show: it solves the overflow manifolds that found no
colour (Box2D v3's overflow constraints), and the whole step when ``world.contact_solver`` is
``"reference"``.

For one contact point with anchors rA, rB (from each centre of mass), normal n (A to B):

    v_rel = (vB + ωB × rB) − (vA + ωA × rA)                       relative velocity at the point
    K     = 1 / (1/mA + 1/mB + n·((IA⁻¹(rA×n))×rA) + n·((IB⁻¹(rB×n))×rB))   effective mass along n
    j     = −K·(v_rel·n + bias)                                   impulse that stops the approach

applied as +j·n to B at rB and −j·n to A at rA. The impulse is *accumulated* over the passes and the
accumulated value clamped at ≥ 0 (contacts push, never pull), Catto's key to stable stacking. Friction
does the same along the two tangents, the accumulated tangential impulse clamped to the disc of radius
μ·λₙ (Coulomb). The bias is the soft step's (see ``contact_solver.solve_contacts``): a speculative
contact (gap s > 0) only stops the approach that would close the gap within the sub-step; an overlap is
pushed apart by a soft spring. Restitution is applied after the sub-steps by ``restitution.py``, which
both solvers share. The anchors, normal, tangents and inverse inertias are those of the start of the
step (the contact is linearised once per step, in both solvers).
"""

from __future__ import annotations

import math

from numba import njit

from .contact_rows import APPROACH, LAM_MAX, LAM_N, LAM_T1, LAM_T2, MU, RA, RB, SEP0, T1, T2, N, at, get3
from .impulse import apply_impulse_pair, effective_mass, point_velocity
from .vecmath import ZERO_MAT, add, cross, dot, load3, load_mat, scale, sub


@njit(cache=True)
def solve_point(k, contacts, bodies, coefficients, use_bias, warm):
    """Solve contact point ``k`` once (or, with ``warm``, apply its accumulated impulses again)."""
    cw = contacts.pts.cw
    c = contacts.pts.row[k]  # where point k's fields are (contact_rows.py)
    a = contacts.pts.bodies[k, 0]
    b = contacts.pts.bodies[k, 1]
    vel, angvel = bodies.vel, bodies.angvel
    # a body that does not move this step is immovable: no inverse mass, no inverse inertia
    ima = bodies.inv_mass[a] if bodies.moving[a] else 0.0
    imb = bodies.inv_mass[b] if bodies.moving[b] else 0.0
    ia = load_mat(bodies.inv_inertia_start, a) if bodies.moving[a] else ZERO_MAT
    ib = load_mat(bodies.inv_inertia_start, b) if bodies.moving[b] else ZERO_MAT
    n, t1, t2 = get3(cw, c, N, 0), get3(cw, c, T1, 0), get3(cw, c, T2, 0)
    ra, rb = get3(cw, c, RA, 0), get3(cw, c, RB, 0)
    if warm:  # the impulses of the last sub-step, along n, t1 and t2 in turn
        apply_impulse_pair(vel, angvel, a, b, ima, imb, ia, ib, ra, rb, scale(n, cw[at(c, LAM_N, 0)]))
        apply_impulse_pair(vel, angvel, a, b, ima, imb, ia, ib, ra, rb, scale(t1, cw[at(c, LAM_T1, 0)]))
        apply_impulse_pair(vel, angvel, a, b, ima, imb, ia, ib, ra, rb, scale(t2, cw[at(c, LAM_T2, 0)]))
        return
    if use_bias:
        # friction: the tangential impulse that stops the sliding, inside the friction disc |λt| ≤ μ·λn
        v_rel = sub(point_velocity(vel, angvel, b, rb), point_velocity(vel, angvel, a, ra))
        old1, old2 = cw[at(c, LAM_T1, 0)], cw[at(c, LAM_T2, 0)]
        l1 = old1 - effective_mass(ima, imb, ia, ib, ra, rb, t1) * dot(v_rel, t1)
        l2 = old2 - effective_mass(ima, imb, ia, ib, ra, rb, t2) * dot(v_rel, t2)
        limit = cw[at(c, MU, 0)] * cw[at(c, LAM_N, 0)]
        size = math.sqrt(l1 * l1 + l2 * l2)
        if size > limit:
            l1 *= limit / size
            l2 *= limit / size
        cw[at(c, LAM_T1, 0)] = l1
        cw[at(c, LAM_T2, 0)] = l2
        apply_impulse_pair(vel, angvel, a, b, ima, imb, ia, ib, ra, rb,
                           add(scale(t1, l1 - old1), scale(t2, l2 - old2)))
    # the gap now, to first order from how far each body moved and turned since the step began
    dx = sub(load3(bodies.dpos, b), load3(bodies.dpos, a))
    s = (cw[at(c, SEP0, 0)] + dot(dx, n) + dot(load3(bodies.drot, b), cross(rb, n))
         - dot(load3(bodies.drot, a), cross(ra, n)))
    if s > 0.0:  # speculative: allow the approach that just closes the gap within the sub-step
        bias, mass_scale, impulse_scale = s * coefficients.inv_h, 1.0, 0.0
    else:  # overlapping: a soft spring pushes the bodies apart, at most max_push m/s
        bias = max(coefficients.bias_rate * min(s + coefficients.linear_slop, 0.0), -coefficients.max_push)
        mass_scale, impulse_scale = coefficients.mass_scale, coefficients.impulse_scale
    vn = dot(sub(point_velocity(vel, angvel, b, rb), point_velocity(vel, angvel, a, ra)), n)
    old = cw[at(c, LAM_N, 0)]
    j = -effective_mass(ima, imb, ia, ib, ra, rb, n) * mass_scale * (vn + bias) - impulse_scale * old
    new = max(old + j, 0.0)  # the accumulated impulse only pushes
    if new > 0.0 and cw[at(c, LAM_MAX, 0)] == 0.0:
        cw[at(c, APPROACH, 0)] = max(-vn, 0.0)  # the approach speed at impact, for restitution
    cw[at(c, LAM_N, 0)] = new
    cw[at(c, LAM_MAX, 0)] = max(cw[at(c, LAM_MAX, 0)], new)
    apply_impulse_pair(vel, angvel, a, b, ima, imb, ia, ib, ra, rb, scale(n, new - old))


@njit(cache=True)
def solve_blocks(contacts, bodies, coefficients, use_bias, warm, first, last):
    """One pass over blocks ``first``…``last − 1`` of ``contacts``: every manifold in colour order, every
    point of it in turn (``solve_point``); with ``warm``, the warm start instead."""
    B = contacts.table
    for blk in range(first, last):
        for lane in range(B.lanes[blk]):
            i = B.order[B.start[blk] + lane]
            for p in range(contacts.npoints[i]):
                solve_point(contacts.first[i] + p, contacts, bodies, coefficients, use_bias, warm)
