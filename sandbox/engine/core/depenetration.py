"""The bound on how fast deep overlaps come apart, applied per contact so that momentum is conserved.

Sequential impulses push each overlap apart at up to ``max_push`` (the soft contact's bias is capped per
contact), but through a chain of deep overlaps (bodies spawned inside each other) those pushes add up body
after body: the outer bodies of a pile spawned at one point then leave at many times ``max_push``.
PhysX bounds this with a maximum depenetration velocity; here the bound acts on pairs, like the solver
itself: wherever a contact point was deeply overlapping when the step began and its two bodies now
separate faster than ``max_push`` along the normal, an equal and opposite impulse pair takes the excess
out. Impulse pairs conserve linear and angular momentum exactly (the earlier per-body speed cap scaled a
body's velocity down, which lost momentum in ordinary impacts: issue 9), and ordinary impacts and resting
contacts never overlap that deeply, so they are not touched.
"""

from __future__ import annotations

from numba import njit

from .solver import MASS_N, SEP0, N, at, get3, jac, push_pair
from .vecmath import dot, load3, store3, sub

DEEP_OVERLAP = 0.05
"""m: contact points overlapping deeper than this when the step began separate at most at ``max_push``.
Resting contacts overlap by millimetres, and the soft push-out of an overlap this shallow stays well below
``max_push`` anyway (bias rate · depth, about 1 m/s at the default stiffness)."""

PASSES = 2


@njit(cache=True)
def limit_separation(c, S, vel, angvel, inv_mass, moving, max_push):
    """For each of the ``c`` solver contact points (``S = (cb, cla, clb, cidx, cw)`` as prepared by
    ``solver.prepare_contacts``) that overlapped by more than ``DEEP_OVERLAP`` at the start of the step:
    if the relative normal velocity vn = (v_b + ω_b × r_b − v_a − ω_a × r_a)·n exceeds ``max_push``,
    apply the impulse λ = −m_eff·(vn − max_push) along n (−λ on A), which makes it ``max_push``
    (Gauss–Seidel, ``PASSES`` passes). Returns the number of impulses applied."""
    cb, cidx, cw = S[0], S[3], S[4]
    applied = 0
    for _ in range(PASSES):
        for k in range(c):
            i = cidx[k]
            if cw[at(i, SEP0, 0)] > -DEEP_OVERLAP:
                continue
            a = cb[k, 0]
            b = cb[k, 1]
            n = get3(cw, i, N, 0)
            va, wa, vb, wb = load3(vel, a), load3(angvel, a), load3(vel, b), load3(angvel, b)
            vn = dot(sub(vb, va), n) + dot(wb, jac(cw, i, 0, 0, 1)) - dot(wa, jac(cw, i, 0, 0, 0))
            if vn <= max_push:
                continue
            lam = -cw[at(i, MASS_N, 0)] * (vn - max_push)
            ima = inv_mass[a] if moving[a] else 0.0
            imb = inv_mass[b] if moving[b] else 0.0
            va, wa, vb, wb = push_pair(va, wa, vb, wb, ima, imb, n, lam, jac(cw, i, 0, 0, 2),
                                       jac(cw, i, 0, 0, 3))
            if moving[a]:
                store3(vel, a, va)
                store3(angvel, a, wa)
            if moving[b]:
                store3(vel, b, vb)
                store3(angvel, b, wb)
            applied += 1
    return applied
