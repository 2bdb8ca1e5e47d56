"""The penalty method: every overlap is a damped spring that pushes the bodies apart.

Kept for teaching beside impulses and projection: a contact point that overlaps by x is a Hooke spring
with a damper, F = k·x − c·vₙ along the normal (it only pushes), plus Coulomb friction bounded by μ·F
that holds the point where it stuck (``penalty_contacts``).
The stiffness k = m_eff·ω² and damping c = 2ζ·m_eff·ω come from a frequency and a damping ratio through
the point's effective mass (``impulse.py``), so one setting suits light and heavy bodies. The force is
integrated explicitly over the sub-step (impulse F·h), so ω·h must stay well below 1; a stiff spring
sinks less but needs smaller steps, which is the method's trade-off. At the default step (24 Hz, 4
sub-steps of 1/240 s: ω·h ≈ 0.6) it is not far enough below: the springs of a face's four points do not
settle but keep pushing in turn, each point's force swinging by a third or more from sub-step to sub-step,
which is why friction holds each point to a fixed anchor rather than only stopping it.
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
    MASS_N,
    MASS_T1,
    MASS_T2,
    MU,
    RA,
    RB,
    T1,
    T2,
    N,
    anchor_offset,
    at,
    get3,
)
from .impulse import apply_impulse_pair, point_velocity
from .jit import helper
from .soft_constraint import soft_coefficients
from .vecmath import add, dot, load_mat, scale, sub


@helper
def penalty_contacts(c, pts, bodies, h, hertz, zeta, iterations, first):
    """One sub-step ``h`` of penalty springs at the ``c`` contact points: F = m_eff·ω·(ω·x − 2ζ·vₙ) with
    ω = 2π·``hertz``, applied as the impulse F·h when it pushes; then friction, clamped to μ·F·h.

    Friction holds each point to its anchor. A point's two anchors, one material point on each body
    (``anchor_offset``), coincide along the surface when its manifold is made (a face contact pairs each
    incident point with its projection on the reference face, an edge contact the edges' closest points;
    only a corner beside the reference face, ``polyhedra._fallback_contact``, and edges whose closest
    points fall at an end start apart), and stay fixed in their bodies while the contact cache reuses the
    manifold (until the pair has moved 1 mm or turned 2° relative to itself, ``manifold_cache.py``): their
    offset d along the surface is how far the point has slipped since it stuck. The friction passes solve
    each point's tangential velocity to −β·d, not to 0, so that a slip that got through is pulled back as
    the penalty spring would pull it: β·d = d·hω²/(1 + 2ζ·hω + (hω)²) is the speed that one implicit Euler
    step of a spring-damper of the penalty's frequency ω and damping ratio ζ gives a point at rest a
    distance d from where the spring is relaxed (``soft_constraint.py``: the mass scale times the bias
    rate of Box2D's soft step). The bias rate alone, ω/(2ζ + hω), pulls about twice as hard, and set a
    box's springs rocking at ω·h ≈ 0.8, where they still hold with β. The load itself is carried by the
    point's tangential impulse over the sub-step (``LAM_T1``, ``LAM_T2``), kept from sub-step to sub-step
    and, with the warm-start impulses, from step to step, and corrected in ``iterations`` Gauss–Seidel
    passes over the points (the points of a face disturb one another), each point's kept inside Coulomb's
    disc |λt| ≤ μ·F·h: a stuck point has no static give, and beyond the disc it slides.

    Why the anchor: the springs swing at the default step (see the module docstring), and in the
    sub-steps where a point's force dips, or a lightly pressed point lets go, the others saturate and
    slip. Friction that only stopped each point (λt grew by −m_t·v_t whenever the point slipped at v_t)
    could not undo a slip once made, and the slips added up: a box held by μ = 0.7 on a 30° slope crept
    1.7 mm/s at 4 sub-steps (and 16 mm in 2 s, issue 9, before λt was kept). The anchor takes each slip back
    when the force recovers (under 0.01 mm in 2 s); Coulomb's law holds on average over the swings, so a box
    on a slope steeper than its friction still slides at g·(sin θ − μ cos θ).

    The anchor lives no longer than its manifold: a pair collided afresh (after it has moved 1 mm or
    turned 2°, every step with ``world.contact_cache`` off, and always for spheres and capsules, whose
    contact point moves over their surface) starts from the points it touches now. So a body that slides
    and stops is pulled back by the distance it slid since its manifold was last made, under 1 mm.

    The normal impulse (``LAM_N``) is the step's own: on the ``first`` sub-step it starts from zero, not
    from the warm-start value, so that the contact reports F·dt of this step (m·g·dt for a resting box)
    rather than a sum over every step since the contact began."""
    cb, cla, clb, cidx, cw = pts.bodies, pts.local_a, pts.local_b, pts.row, pts.cw
    pos, quat, vel, angvel = bodies.pos, bodies.quat, bodies.vel, bodies.angvel
    inv_mass, inv_inertia = bodies.inv_mass, bodies.inv_inertia
    omega = 2.0 * math.pi * hertz
    bias_rate, mass_scale, _ = soft_coefficients(hertz, zeta, h)
    beta = bias_rate * mass_scale
    for k in range(c):
        # np.int64: the int32 body rows widened to the type the joints pass, so that numba compiles the
        # shared impulse and vector helpers once (int() would keep int32)
        a = np.int64(cb[k, 0])
        b = np.int64(cb[k, 1])
        i = cidx[k]
        if first:
            cw[at(i, LAM_N, 0)] = 0.0
            cw[at(i, LAM_MAX, 0)] = 0.0
        n = get3(cw, i, N, 0)
        ra = get3(cw, i, RA, 0)
        rb = get3(cw, i, RB, 0)
        x = -dot(anchor_offset(k, a, b, pos, quat, cla, clb), n)
        ia, ib = load_mat(inv_inertia, a), load_mat(inv_inertia, b)
        dv = sub(point_velocity(vel, angvel, b, rb), point_velocity(vel, angvel, a, ra))
        f = cw[at(i, MASS_N, 0)] * omega * (omega * x - 2.0 * zeta * dot(dv, n))
        lam = f * h if x > 0.0 and f > 0.0 else 0.0
        # this sub-step's normal impulse, the friction bound of the passes below (the approach speed is
        # restitution's, which the penalty method does not use)
        cw[at(i, APPROACH, 0)] = lam
        if lam == 0.0:
            # not pressed: no friction, and its impulse starts again from zero (the anchor stays)
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
            a = np.int64(cb[k, 0])
            b = np.int64(cb[k, 1])
            ra = get3(cw, i, RA, 0)
            rb = get3(cw, i, RB, 0)
            ia, ib = load_mat(inv_inertia, a), load_mat(inv_inertia, b)
            dv = sub(point_velocity(vel, angvel, b, rb), point_velocity(vel, angvel, a, ra))
            d = anchor_offset(k, a, b, pos, quat, cla, clb)
            t1 = get3(cw, i, T1, 0)
            t2 = get3(cw, i, T2, 0)
            old1 = cw[at(i, LAM_T1, 0)]
            old2 = cw[at(i, LAM_T2, 0)]
            # the impulse that makes the tangential velocity −β·d: back towards the anchor
            l1 = old1 - cw[at(i, MASS_T1, 0)] * (dot(dv, t1) + beta * dot(d, t1))
            l2 = old2 - cw[at(i, MASS_T2, 0)] * (dot(dv, t2) + beta * dot(d, t2))
            cap = cw[at(i, MU, 0)] * lam
            mag = math.sqrt(l1 * l1 + l2 * l2)
            if mag > cap:
                l1 *= cap / mag
                l2 *= cap / mag
            cw[at(i, LAM_T1, 0)] = l1
            cw[at(i, LAM_T2, 0)] = l2
            apply_impulse_pair(vel, angvel, a, b, inv_mass[a], inv_mass[b], ia, ib, ra, rb,
                               add(scale(t1, l1 - old1), scale(t2, l2 - old2)))
