"""The penalty method: every overlap is a damped spring that pushes the bodies apart.

Kept for teaching beside impulses and projection: a contact point that overlaps by x is a Hooke spring
with a damper, F = k·x − c·vₙ along the normal (it only pushes), plus Coulomb friction bounded by μ·F
that holds the point where it stuck (``penalty_contacts``).
The stiffness k = m_eff·ω² and damping c = 2ζ·m_eff·ω come from a frequency and a damping ratio through
the point's effective mass (``impulse.py``), so one setting suits light and heavy bodies. The force is
integrated explicitly over the sub-step (impulse F·h), so ω·h must stay well below 1; a stiff spring
sinks less but needs smaller steps, which is the method's trade-off.
"""

from __future__ import annotations

import math

from numba import njit

from .contact_rows import (
    APPROACH,
    LAM_MAX,
    LAM_N,
    LAM_T1,
    LAM_T2,
    MASS_N,
    MASS_T1,
    MASS_T2,
    MU,
    RA,
    RB,
    T1,
    T2,
    N,
    at,
    get3,
)
from .impulse import apply_impulse_pair, point_velocity
from .vecmath import add, dot, load3, load4, load_mat, quat_rotate, scale, sub


@njit(cache=True)
def penalty_contacts(c, pts, bodies, h, hertz, zeta, iterations, first):
    """One sub-step ``h`` of penalty springs at the ``c`` contact points: F = m_eff·ω·(ω·x − 2ζ·vₙ) with
    ω = 2π·``hertz``, applied as the impulse F·h when it pushes; then friction, clamped to μ·F·h.

    Friction holds each point to where it stuck: its impulse over the sub-step is kept in the point's
    tangential impulses (``LAM_T1``, ``LAM_T2``), carried from sub-step to sub-step and, with the
    warm-start impulses, from step to step, so that it is the impulse of a tangential spring to the stick
    point (it grows by −m_t·v_t whenever the point slips at v_t, m_t the tangential effective mass). Each
    sub-step applies it again, then corrects it in ``iterations`` Gauss–Seidel passes over the points until
    no point slides, each point's kept inside Coulomb's disc |λt| ≤ μ·F·h (beyond it the point slides and
    its stick point with it). Friction that only stopped each point's sliding once per sub-step missed
    part of it (the points of a face disturb one another, and the lightly pressed ones saturate), and what
    it missed added up: a box held by μ = 0.7 on a 30° slope crept 16 mm in 2 s.

    The normal impulse (``LAM_N``) is the step's own: on the ``first`` sub-step it starts from zero, not
    from the warm-start value, so that the contact reports F·dt of this step (m·g·dt for a resting box)
    rather than a sum over every step since the contact began."""
    cb, cla, clb, cidx, cw = pts.bodies, pts.local_a, pts.local_b, pts.row, pts.cw
    pos, quat, vel, angvel = bodies.pos, bodies.quat, bodies.vel, bodies.angvel
    inv_mass, inv_inertia = bodies.inv_mass, bodies.inv_inertia
    omega = 2.0 * math.pi * hertz
    for k in range(c):
        a = cb[k, 0]
        b = cb[k, 1]
        i = cidx[k]
        if first:
            cw[at(i, LAM_N, 0)] = 0.0
            cw[at(i, LAM_MAX, 0)] = 0.0
        n = get3(cw, i, N, 0)
        ra = get3(cw, i, RA, 0)
        rb = get3(cw, i, RB, 0)
        pa = add(load3(pos, a), quat_rotate(load4(quat, a), load3(cla, k)))
        pb = add(load3(pos, b), quat_rotate(load4(quat, b), load3(clb, k)))
        x = -dot(sub(pb, pa), n)
        ia, ib = load_mat(inv_inertia, a), load_mat(inv_inertia, b)
        dv = sub(point_velocity(vel, angvel, b, rb), point_velocity(vel, angvel, a, ra))
        f = cw[at(i, MASS_N, 0)] * omega * (omega * x - 2.0 * zeta * dot(dv, n))
        lam = f * h if x > 0.0 and f > 0.0 else 0.0
        # this sub-step's normal impulse, the friction bound of the passes below (the approach speed is
        # restitution's, which the penalty method does not use)
        cw[at(i, APPROACH, 0)] = lam
        if lam == 0.0:
            # not pressed: the point has let go, and its stick point with it
            cw[at(i, LAM_T1, 0)] = 0.0
            cw[at(i, LAM_T2, 0)] = 0.0
            continue
        cw[at(i, LAM_N, 0)] += lam
        cw[at(i, LAM_MAX, 0)] = max(cw[at(i, LAM_MAX, 0)], cw[at(i, LAM_N, 0)])
        friction = add(scale(get3(cw, i, T1, 0), cw[at(i, LAM_T1, 0)]),
                       scale(get3(cw, i, T2, 0), cw[at(i, LAM_T2, 0)]))
        apply_impulse_pair(vel, angvel, a, b, inv_mass[a], inv_mass[b], ia, ib, ra, rb,
                           add(scale(n, lam), friction))
    for _ in range(iterations):
        for k in range(c):
            i = cidx[k]
            lam = cw[at(i, APPROACH, 0)]
            if lam == 0.0:
                continue
            a = cb[k, 0]
            b = cb[k, 1]
            ra = get3(cw, i, RA, 0)
            rb = get3(cw, i, RB, 0)
            ia, ib = load_mat(inv_inertia, a), load_mat(inv_inertia, b)
            dv = sub(point_velocity(vel, angvel, b, rb), point_velocity(vel, angvel, a, ra))
            t1 = get3(cw, i, T1, 0)
            t2 = get3(cw, i, T2, 0)
            old1 = cw[at(i, LAM_T1, 0)]
            old2 = cw[at(i, LAM_T2, 0)]
            l1 = old1 - cw[at(i, MASS_T1, 0)] * dot(dv, t1)
            l2 = old2 - cw[at(i, MASS_T2, 0)] * dot(dv, t2)
            cap = cw[at(i, MU, 0)] * lam
            mag = math.sqrt(l1 * l1 + l2 * l2)
            if mag > cap:
                l1 *= cap / mag
                l2 *= cap / mag
            cw[at(i, LAM_T1, 0)] = l1
            cw[at(i, LAM_T2, 0)] = l2
            apply_impulse_pair(vel, angvel, a, b, inv_mass[a], inv_mass[b], ia, ib, ra, rb,
                               add(scale(t1, l1 - old1), scale(t2, l2 - old2)))
