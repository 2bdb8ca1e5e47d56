"""The patch step: one normal impulse at a manifold's centroid before its points are solved one by one.

Sequential impulses solve a manifold's points one after another. When a box lands flat, the first of
its four corners solved takes the whole impact and tips the box; the tip gives the other corners a
sliding velocity, their friction impulses differ and have lever arms about the normal, and the box
leaves the ground spinning about the vertical and drifting sideways (issue 9: 0.7 rad/s of yaw from a
2 m drop). The iterations would take the asymmetry out only in the limit, and each sub-step stops after
a few. A symmetric rest (a ball on the middle of a box) got the same kind of kick.

So each manifold is first solved as one *patch*: the same impulse increment Δ on every point, which is
one impulse m·Δ at the points' centroid (m points sharing the normal). This is one more direction of
the same Gauss–Seidel descent, the "subspace correction" that multigrid adds to point relaxation (Xu,
"Iterative methods by space decomposition and subspace correction", SIAM Review 1992): the points' own
passes follow and converge to the same answer as before, but a symmetric impact or rest is solved
exactly by the patch, and the points are left nothing to make asymmetric. It runs in the first solve
pass of each sub-step and in its relax pass (``substeps.run_substeps``), the passes that take the
sub-step's gravity and its impacts; the passes between only take out what is left.

**Normal.** The points' passes minimise, Gauss–Seidel fashion, ½λᵀ(A + C)λ + λᵀ(v + b) over λ ≥ 0,
A the points' Delassus matrix (Aᵢⱼ = Jᵢ M⁻¹ Jⱼᵀ), v their normal velocities, b the soft step's biases
and C = diag(isc/(ms·Kᵢ)) the soft spring's compliance: the soft update Δλ = −ms·K·(v + b) − isc·λ is
exactly the Gauss–Seidel step of that problem, since ms + isc = 1 (``soft_constraint.py``). Along the
direction 1 (every point alike) the minimum is at

    Δ = −Σᵢ(vᵢ + bᵢ + Cᵢλᵢ) / (1ᵀA1 + ΣCᵢ),   1ᵀA1 = m²(1/ma + 1/mb) + Sa·Ia⁻¹Sa + Sb·Ib⁻¹Sb,

Sa = Σ raᵢ×n, Sb = Σ rbᵢ×n (the centroid's angular Jacobian rows times m), and Σ vᵢ = m(vb − va)·n +
ωb·Sb − ωa·Sa. Both are linear in the anchors, so they are the sums of the points' own cached rows
(raᵢ×n, Ia⁻¹(raᵢ×n), … of ``contact_prepare.jacobian_lanes``): no inertia is read.
Δ is kept ≥ −minᵢ λᵢ, so no point pulls: an exact line search inside the feasible set, which cannot
undo the points' convergence (at the points' answer the derivative along 1 is zero, and the step is 0).

**Friction** is left to the points. A patch friction step (the centroid's sliding stopped, each
point's share kept inside its Coulomb disc) was tried and dropped: it changed nothing measurable (a box
nudged along the ground at 0.05 to 1 m/s yawed at under 10⁻³ rad/s with it and without any patch:
sliding friction sits at every point's disc, where a patch step has no room, and sticking friction
converges with warm starting), for three more lane loops per pass. The asymmetric friction that spun a
flat landing came from the tilt that the points' normal impulses, solved one after another, gave the
box; the normal patch removes it.

The reference solver calls ``solve_patch`` per manifold; the wide solver does the same lane by lane,
through the same ``point_terms`` and ``normal_step`` in the same order (in float32), so the two agree to
float32's precision (``tests/test_solver.py``). Only manifolds of two or more points have a patch; one
point is its own patch. It reads each point's normal rows, separation and impulse, as the point's own
normal step does.
"""

from __future__ import annotations

import math

from .contact_rows import (
    F0,
    F1,
    LAM_MAX,
    LAM_N,
    MASS_N,
    NF,
    RA,
    RB,
    SEP0,
    STRIDE,
    N,
    at,
    get3,
    normal_bias,
    separation_now,
)
from .impulse import push_pair
from .jit import helper
from .vecmath import add, cross, dot, mat_vec, scale, sub

SLOT = NF * STRIDE  # from one point of a manifold to the next in ``cw`` (the same lane of the next slot)


@helper(error_model="numpy")
def point_terms(s, k, lam, coefficients):
    """A point's share of the patch's normal gradient, bᵢ + Cᵢλᵢ, and its compliance Cᵢ (see the module's
    docstring), from its separation ``s`` now, effective mass ``k`` and accumulated impulse ``lam``, with
    the bias and softness that the points' own pass gives it (``contact_solver.normal_update``). Selects,
    not branches, and the ``numpy`` error model, so that the wide solver's lane loops stay SIMD."""
    bias, mass_scale, impulse_scale = normal_bias(s, coefficients)
    soft = F0 if k <= F0 else impulse_scale / (mass_scale * k)
    return bias + soft * lam, soft


@helper(error_model="numpy")
def normal_step(san, sbn, jan, jbn, m, grad, compliance, lowest, n, va, wa, vb, wb, ima, imb):
    """The patch's normal step from its sums (Σ raᵢ×n, Σ rbᵢ×n, Σ Ia⁻¹(raᵢ×n), Σ Ib⁻¹(rbᵢ×n), m points,
    Σ(bᵢ + Cᵢλᵢ), ΣCᵢ, minᵢ λᵢ): the increment Δ of every point's impulse, and the velocities after
    m·Δ at the centroid. None (0) for fewer than two points."""
    grad += m * dot(sub(vb, va), n) + dot(wb, sbn) - dot(wa, san)
    curvature = m * m * (ima + imb) + dot(san, jan) + dot(sbn, jbn) + compliance
    step = max(-grad / curvature, -lowest) if curvature > F0 and m > F1 else F0  # m > 1: two points or more
    va, wa, vb, wb = push_pair(va, wa, vb, wb, ima, imb, scale(n, m), step, jan, jbn)
    return va, wa, vb, wb, step


@helper
def solve_patch(cw, c0, points, va, wa, vb, wb, ima, imb, ia, ib, dx, dra, drb, coefficients):
    """One patch step (see the module's docstring) of the manifold of ``points`` points whose fields start
    at ``c0``, ``c0 + SLOT``, …, between bodies of velocities ``va``, ``wa``, ``vb``, ``wb``, inverse
    masses ``ima``, ``imb`` and inverse inertias ``ia``, ``ib`` (those of the start of the step),
    displaced by ``dx``, ``dra``, ``drb`` since the step began, with the pass's ``NormalCoefficients``.
    Updates the points' accumulated normal impulses and returns the new velocities. The wide solver
    computes the same, lane by lane (``contact_solver.patch_sums_lanes`` and the two after it)."""
    n = get3(cw, c0, N, 0)
    zero = (0.0, 0.0, 0.0)
    san, sbn, jan, jbn = zero, zero, zero, zero
    m, grad, compliance, lowest = 0.0, 0.0, 0.0, math.inf
    for p in range(points):
        c = c0 + p * SLOT
        ran, rbn = cross(get3(cw, c, RA, 0), n), cross(get3(cw, c, RB, 0), n)
        s = separation_now(cw[at(c, SEP0, 0)], n, ran, rbn, dx, dra, drb)
        g, soft = point_terms(s, cw[at(c, MASS_N, 0)], cw[at(c, LAM_N, 0)], coefficients)
        san = add(san, ran)
        sbn = add(sbn, rbn)
        jan = add(jan, mat_vec(ia, ran))
        jbn = add(jbn, mat_vec(ib, rbn))
        m += 1.0
        grad += g
        compliance += soft
        lowest = min(lowest, cw[at(c, LAM_N, 0)])
    va, wa, vb, wb, step = normal_step(san, sbn, jan, jbn, m, grad, compliance, lowest, n, va, wa, vb, wb,
                                       ima, imb)
    for p in range(points):  # every point takes the step
        c = c0 + p * SLOT
        lam = cw[at(c, LAM_N, 0)] + step
        cw[at(c, LAM_N, 0)] = lam
        cw[at(c, LAM_MAX, 0)] = max(cw[at(c, LAM_MAX, 0)], lam)
    return va, wa, vb, wb
