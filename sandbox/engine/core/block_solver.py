"""The block solver: the contact impulses of a small island with a large mass ratio, solved together.

Sequential impulses (``contact_solver_reference.py``) solve one contact at a time, each with a soft
spring built on its own pair's effective mass (``soft_constraint.py``). Under a heavy load that is the
wrong spring: a 1 kg box under 1000 kg gives way F/(m_eff·ω²) = 6.9 cm, because the spring that holds
it is as weak as the light box alone (``docs/architecture.md``). And stiffening it makes Gauss–Seidel
need about as many passes as the mass ratio, since each contact only learns of the others' impulses
one pass later.

Here the normal constraints of such an island are solved at once (a direct solve, as Box2D v2's block solver
did for the two points of one manifold, extended to the island). With A = J·M⁻¹·Jᵀ the island's
effective-mass matrix (A_pq: the change of point p's normal velocity per unit impulse at point q), one
pass finds the change Δλ of the accumulated normal impulses λ from

    (1 + c)·(A·Δλ)_p = −(v_p + b_p) − c·(A·λ)_p

for every point p, where v is the normal velocity, b the soft step's bias (speculative gap or soft
push-out) and c = impulse scale / mass scale the softness of the contact (0 for a speculative point and
in the relax pass). For a single point this is exactly the sequential-impulse formula
Δλ = −k·ms·(v + b) − is·λ (k = 1/A_pp, ms = 1/(1 + c), is = c/(1 + c)). For the island, the spring is
built on the coupled matrix A, so each contact is as stiff as the mass it actually holds up: at rest
v = 0, Δλ = 0 and b = −c·A·λ, and A·λ is the velocity change that all the contact impulses give the
bodies, which is the same for every body of a resting stack (it cancels gravity), so every contact sinks
g/ω² (0.07 mm at 60 Hz) whatever the masses.

A resting face has four coplanar points but only three degrees of freedom, so A is singular: the
system is solved in the least-squares sense, (A² + εI)·Δλ = A·(right side), which gives the least-norm
answer. It shares a load evenly between a face's points and leaves out any part of the right side that
no impulse could change (a bias that is not the gap pattern of a rigid motion).

Friction stays sequential impulses (``contact_solver_reference.friction_point``), point by point
before the normal solve of each pass, as in the wide solver. Contacts push and never pull: a point whose
λ + Δλ would be negative is let go (λ = 0) and the others solved again with it fixed (an active set,
one round per change). Only islands of at most ``MAX_POINTS`` points whose moving
bodies differ in mass by ``MASS_RATIO`` or more come here (``mark_stiff_islands``); the rest (piles of
alike bodies, where Gauss–Seidel converges fast) keep the wide solver.
"""

from __future__ import annotations

from typing import NamedTuple

import numpy as np

from .contact_rows import (
    LAM_MAX,
    LAM_N,
    SEP0,
    N,
    at,
    get3,
    jac,
    normal_bias,
    point_normal_velocity,
    separation_now,
)
from .contact_solver_reference import friction_point, pair_masses, store_pair_velocities
from .impulse import push_pair
from .islands import find, union
from .jit import helper, kernel
from .vecmath import dot, load3, mad, store3, sub

MASS_RATIO = 10.0  # islands whose heaviest moving body is at least this many times the lightest
MAX_POINTS = 64  # and that have at most this many contact points (a 64×64 system per pass)
SWEEPS = 4  # friction, then the normals, this many times per pass: an island is small, and the
# friction of a light body under a heavy one converges as slowly as its normals did
EPSILON = 1e-10  # the least-squares solve's damping, relative to the largest diagonal of the scaled A²


class IslandScratch(NamedTuple):
    """What ``solve_island`` works on for one island of up to ``MAX_POINTS`` points. First the island's own
    data, made once per step and kept for all its passes (its rows of an ``Islands`` record, see
    ``island_view``): A, the factor of the least-squares matrix and its Jacobi scales, whether that factor
    is the one for every point active, the island's bodies and each point's two bodies among them. Then
    the work arrays that every island shares, redone every pass: the right side, λ before the pass, the
    solution, Δλ, the active rows' right side, which points still push, the active points' numbers, and
    the velocity change of the accumulated impulses per island body."""

    A: np.ndarray
    M: np.ndarray
    r: np.ndarray
    y: np.ndarray
    x: np.ndarray
    dl: np.ndarray
    w: np.ndarray
    scale: np.ndarray
    active: np.ndarray
    idx: np.ndarray
    factored: np.ndarray  # one flag: M holds the factor for every point of the island active
    body: np.ndarray  # the island's bodies (rows), numbered in the order met
    nbodies: np.ndarray  # one count: how many
    la: np.ndarray  # each point's body a and b, numbered within the island
    lb: np.ndarray
    U: np.ndarray  # per island body: the velocity and spin change of the accumulated impulses
    W: np.ndarray


class Islands(NamedTuple):
    """The block solver's islands of one step (``build_islands``): island k has ``n[k]`` solver points
    ``pk[k, :n[k]]``; its matrix, factor, scales, flag, bodies and body numbering are row k of the arrays
    of the same names in ``IslandScratch``; the work arrays after them serve every island in turn. Built
    once per step: A depends only on the cached Jacobian rows and on the masses and inertias of the start
    of the step, so every pass would make the same matrix again, and the factor for all points active
    carries over from pass to pass (the results are the same, bit for bit)."""

    n: np.ndarray
    pk: np.ndarray
    A: np.ndarray
    M: np.ndarray
    scale: np.ndarray
    factored: np.ndarray
    body: np.ndarray
    nbodies: np.ndarray
    la: np.ndarray
    lb: np.ndarray
    r: np.ndarray
    y: np.ndarray
    x: np.ndarray
    dl: np.ndarray
    w: np.ndarray
    active: np.ndarray
    idx: np.ndarray
    U: np.ndarray
    W: np.ndarray


@helper
def island_view(isl, k):
    """Island ``k`` of ``isl`` (an ``Islands``) as the ``IslandScratch`` that ``solve_island`` reads."""
    return IslandScratch(isl.A[k], isl.M[k], isl.r, isl.y, isl.x, isl.dl, isl.w, isl.scale[k], isl.active,
                         isl.idx, isl.factored[k:k + 1], isl.body[k], isl.nbodies[k:k + 1], isl.la[k],
                         isl.lb[k], isl.U, isl.W)


@kernel(same_types=True)
def mark_stiff_islands(m, mb_a, mb_b, m_npoints, moving, inv_mass, parent, island):
    """``island[i]``: for each of the ``m`` manifolds, the number of the island of moving bodies it belongs
    to (union–find as in ``islands.py``, static bodies joining nothing; the islands numbered 0, 1, …)
    when that island has a mass ratio of at least ``MASS_RATIO`` and at most ``MAX_POINTS`` contact
    points, else −1. ``parent`` is a scratch array of at least one row per body (``moving`` has one).
    Returns how many islands were marked. Costs one pass over the bodies when the moving bodies' masses
    are all within ``MASS_RATIO`` of each other (every scene of like bodies), which is then the answer:
    nothing is marked."""
    nb = len(moving)
    lo, hi = np.inf, 0.0
    for i in range(nb):
        if moving[i] and inv_mass[i] > 0.0:
            lo = min(lo, inv_mass[i])
            hi = max(hi, inv_mass[i])
    for i in range(m):
        island[i] = -1
    if not hi >= MASS_RATIO * lo:
        return 0
    for i in range(nb):
        parent[i] = i
    for i in range(m):
        if m_npoints[i] > 0 and moving[mb_a[i]] and moving[mb_b[i]]:
            union(parent, mb_a[i], mb_b[i])
    # per island root: lightest and heaviest inverse mass, point count
    small = np.full(nb, np.inf)
    large = np.zeros(nb)
    points = np.zeros(nb, np.int64)
    for i in range(nb):
        if moving[i] and inv_mass[i] > 0.0:
            r = find(parent, i)
            small[r] = min(small[r], inv_mass[i])
            large[r] = max(large[r], inv_mass[i])
    for i in range(m):
        a = mb_a[i]
        r = find(parent, a if moving[a] else mb_b[i])
        points[r] += m_npoints[i]
    ident = np.full(nb, -1, np.int64)  # per root: the island's number, 0, 1, … in the order met
    marked = 0
    for i in range(m):
        a = mb_a[i]
        if not (moving[a] or moving[mb_b[i]]) or m_npoints[i] == 0:
            continue
        r = find(parent, a if moving[a] else mb_b[i])
        if large[r] >= MASS_RATIO * small[r] and points[r] <= MAX_POINTS:
            if ident[r] < 0:
                ident[r] = marked
                marked += 1
            island[i] = ident[r]
    return marked


@helper
def coupling(cw, cp, d, a, b, ima, imb, cq, e, aq, bq):
    """The change of point p's relative velocity along its direction ``d`` (0: n, 1: t1, 2: t2) per unit
    impulse of point q along its direction ``e`` (their fields at ``cp`` and ``cq`` in ``cw``, their
    bodies (a, b) and (aq, bq); ``ima``, ``imb`` the inverse masses of a and b, 0 for a body that does not
    move), summed over the bodies the two points share: for a body X on side σ ∈ {−1 (A), +1 (B)} of
    each, σ_p·σ_q·(d_p·e_q/m_X + (r_p×d_p)·I_X⁻¹(r_q×e_q)), from the cached Jacobian rows
    (``contact_rows.py``; a body that does not move has zero I⁻¹ rows)."""
    dd = dot(get3(cw, cp, N + 3 * d, 0), get3(cw, cq, N + 3 * e, 0))
    total = 0.0
    if a == aq:
        total += ima * dd + dot(jac(cw, cp, 0, d, 0), jac(cw, cq, 0, e, 2))
    if a == bq:
        total -= ima * dd + dot(jac(cw, cp, 0, d, 0), jac(cw, cq, 0, e, 3))
    if b == aq:
        total -= imb * dd + dot(jac(cw, cp, 0, d, 1), jac(cw, cq, 0, e, 2))
    if b == bq:
        total += imb * dd + dot(jac(cw, cp, 0, d, 1), jac(cw, cq, 0, e, 3))
    return total


@helper
def cholesky_factor(M, n):
    """Cholesky factorisation M = L·Lᵀ of the symmetric positive definite n×n leading block of ``M``,
    L written over M's lower triangle. Returns False when M is not positive definite to working
    precision."""
    for j in range(n):
        d = M[j, j]
        for k in range(j):
            d -= M[j, k] * M[j, k]
        if not d > 1e-300:
            return False
        d = np.sqrt(d)
        M[j, j] = d
        for i in range(j + 1, n):
            s = M[i, j]
            for k in range(j):
                s -= M[i, k] * M[j, k]
            M[i, j] = s / d
    return True


@helper
def cholesky_substitute(L, x, n):
    """x ← M⁻¹·x, with M = L·Lᵀ as ``cholesky_factor`` left it: forward, then back substitution."""
    for i in range(n):  # L·y = x
        s = x[i]
        for k in range(i):
            s -= L[i, k] * x[k]
        x[i] = s / L[i, i]
    for i in range(n - 1, -1, -1):  # Lᵀ·z = y
        s = x[i]
        for k in range(i + 1, n):
            s -= L[k, i] * x[k]
        x[i] = s / L[i, i]


@helper
def least_squares(A, idx, na, w, M, x, scale, factored):
    """x[:na] = the least-squares solution of A_FF·x = w[:na] over the rows and columns ``idx[:na]`` of the
    symmetric ``A``, damped and Jacobi-scaled: with S = diag(A_FF)^(−1/2) and B = S·A_FF·S, it solves
    (B² + εI)·z = B·S·w and returns x = S·z. The scaling makes the damping ε the same share of every row
    whatever its body's mass (a feather on a box is as well conditioned as a box on a box). With
    ``factored``, ``M`` and ``scale`` already hold the factor of (B² + εI) for these rows (from the last
    call), which costs n³ to make and n² to use. Returns False when the factorisation fails (not
    positive definite to working precision)."""
    if not factored:
        for i in range(na):
            d = A[idx[i], idx[i]]
            scale[i] = 1.0 / np.sqrt(d) if d > 0.0 else 1.0
        largest = 0.0
        for i in range(na):
            for j in range(i + 1):
                t = 0.0
                for h in range(na):
                    t += A[idx[i], idx[h]] * A[idx[h], idx[j]] * scale[h] * scale[h]
                M[i, j] = scale[i] * scale[j] * t
                M[j, i] = M[i, j]
            largest = max(largest, M[i, i])
        for i in range(na):
            M[i, i] += EPSILON * largest
        if not cholesky_factor(M, na):
            return False
    for i in range(na):
        t = 0.0
        for j in range(na):
            t += A[idx[i], idx[j]] * scale[j] * scale[j] * w[j]
        x[i] = scale[i] * t
    cholesky_substitute(M, x, na)
    for i in range(na):
        x[i] *= scale[i]
    return True


@helper
def island_matrix(pk, n, contacts, bodies, S):
    """``S.A[:n, :n]`` = J·M⁻¹·Jᵀ over the normals of the island's points ``pk[:n]`` (``coupling``); and
    each point's two bodies numbered within the island (``S.la``, ``S.lb``; ``S.nbodies[0]`` of them)."""
    cw, row, pb = contacts.pts.cw, contacts.pts.row, contacts.pts.bodies
    A, body = S.A, S.body
    count = 0
    for p in range(n):
        for side in range(2):
            i = pb[pk[p], side]
            j = 0
            while j < count and body[j] != i:
                j += 1
            if j == count:
                body[count] = i
                count += 1
            if side == 0:
                S.la[p] = j
            else:
                S.lb[p] = j
    S.nbodies[0] = count
    for p in range(n):
        k = pk[p]
        a, b = np.int64(pb[k, 0]), np.int64(pb[k, 1])
        ima, imb, _, _ = pair_masses(bodies.inv_mass, bodies.moving, bodies.inv_inertia_start, a, b)
        for q in range(p + 1):
            kq = pk[q]
            A[p, q] = coupling(cw, row[k], 0, a, b, ima, imb, row[kq], 0, np.int64(pb[kq, 0]),
                               np.int64(pb[kq, 1]))
            A[q, p] = A[p, q]


@helper
def solve_island(pk, n, contacts, bodies, coefficients, S):
    """One pass over one island's ``n`` points (solver point numbers ``pk[:n]``), ``SWEEPS`` times: the
    friction of every point by sequential impulses (``contact_solver_reference.friction_point``), then
    every normal impulse at once by the soft solve of the module's docstring, applied to the bodies; a
    point that would pull is let go and the others solved again (the active set). ``S`` is an
    ``IslandScratch`` whose ``A`` holds the island's matrix (``island_matrix``). The body arrays go one
    by one to the per-point functions (see ``contact_solver_reference.pair_masses``)."""
    cw, row, pb = contacts.pts.cw, contacts.pts.row, contacts.pts.bodies
    vel, angvel, dpos, drot = bodies.vel, bodies.angvel, bodies.dpos, bodies.drot
    inv_mass, moving, inv_start = bodies.inv_mass, bodies.moving, bodies.inv_inertia_start
    c_soft = coefficients.impulse_scale / coefficients.mass_scale
    for _ in range(SWEEPS):
        for p in range(n):
            friction_point(pk[p], cw, row, pb, inv_mass, moving, inv_start, vel, angvel)
        if not normal_sweep(pk, n, cw, row, pb, inv_mass, moving, inv_start, vel, angvel, dpos, drot,
                            coefficients, c_soft, S):
            return


@helper
def normal_sweep(pk, n, cw, row, pb, inv_mass, moving, inv_start, vel, angvel, dpos, drot, coefficients,
                 c_soft, S):
    """The normal solve of ``solve_island`` once. Returns False when the least-squares factorisation
    failed (not seen: the damping keeps the matrix positive definite); the sweep then leaves λ alone."""
    A, M, r, y, x, dl, w, active, idx = S.A, S.M, S.r, S.y, S.x, S.dl, S.w, S.active, S.idx
    la, lb, U, W = S.la, S.lb, S.U, S.W
    # A·λ of every point (for the soft rows' leak), through the velocity change that all the accumulated
    # impulses (normal and friction) give each body of the island: U linear, W angular, per local body
    for i in range(S.nbodies[0]):
        for j in range(3):
            U[i, j] = 0.0
            W[i, j] = 0.0
    for q in range(n):
        k = pk[q]
        c = row[k]
        ima, imb, _, _ = pair_masses(inv_mass, moving, inv_start, np.int64(pb[k, 0]), np.int64(pb[k, 1]))
        for e in range(3):
            lam = cw[at(c, LAM_N + e, 0)]
            d = get3(cw, c, N + 3 * e, 0)
            store3(U, la[q], mad(load3(U, la[q]), d, -lam * ima))
            store3(W, la[q], mad(load3(W, la[q]), jac(cw, c, 0, e, 2), -lam))
            store3(U, lb[q], mad(load3(U, lb[q]), d, lam * imb))
            store3(W, lb[q], mad(load3(W, lb[q]), jac(cw, c, 0, e, 3), lam))
    for p in range(n):
        k = pk[p]
        c = row[k]
        a, b = np.int64(pb[k, 0]), np.int64(pb[k, 1])
        y[p] = cw[at(c, LAM_N, 0)]  # λ before the pass
        active[p] = True
        # the gap now and the normal velocity, as the sequential solver computes them
        nrm = get3(cw, c, N, 0)
        ran, rbn = jac(cw, c, 0, 0, 0), jac(cw, c, 0, 0, 1)
        s = separation_now(cw[at(c, SEP0, 0)], nrm, ran, rbn, sub(load3(dpos, b), load3(dpos, a)),
                           load3(drot, a), load3(drot, b))
        vn = point_normal_velocity(cw, c, a, b, vel, angvel)
        bias, _, _ = normal_bias(s, coefficients)
        if s > 0.0:  # speculative: only the approach that closes the gap within the sub-step
            r[p] = -(vn + bias)
        else:
            # overlapping: the soft push-out, and the row asks
            # (1 + c)·(A·Δλ)_p = −(v + b)_p − c·(A·λ)_p, with A·λ over every impulse of every point, friction
            # too: the load that a light body passes on is part of what it holds up
            t = (dot(sub(load3(U, lb[p]), load3(U, la[p])), nrm) + dot(load3(W, lb[p]), rbn)
                 - dot(load3(W, la[p]), ran))
            r[p] = (-(vn + bias) - c_soft * t) / (1.0 + c_soft)
    for _ in range(n + 1):
        # the active points' system A_AA·Δ_A = r_A − A_AI·Δ_I, the others let go (Δλ = −λ)
        na = int(0)  # not a literal 0: least_squares would compile twice
        for p in range(n):
            if active[p]:
                idx[na] = p
                na += 1
            else:
                dl[p] = -y[p]
        if na == 0:
            break
        for i in range(na):
            t = r[idx[i]]
            for q in range(n):
                if not active[q]:
                    t -= A[idx[i], q] * dl[q]
            w[i] = t
        # every point active: the factor made for them earlier in this pass serves again
        if not least_squares(A, idx, na, w, M, x, S.scale, na == n and S.factored[0]):
            S.factored[0] = False
            return False
        S.factored[0] = na == n
        released = False
        for i in range(na):
            p = idx[i]
            dl[p] = x[i]
            if y[p] + x[i] < 0.0:  # it would pull: let go
                active[p] = False
                released = True
        if not released:
            break
    for p in range(n):
        k = pk[p]
        c = row[k]
        a, b = np.int64(pb[k, 0]), np.int64(pb[k, 1])
        ima, imb, _, _ = pair_masses(inv_mass, moving, inv_start, a, b)
        new = max(y[p] + dl[p], 0.0)
        va, wa, vb, wb = push_pair(load3(vel, a), load3(angvel, a), load3(vel, b), load3(angvel, b), ima, imb,
                                   get3(cw, c, N, 0), new - y[p], jac(cw, c, 0, 0, 2), jac(cw, c, 0, 0, 3))
        store_pair_velocities(moving, vel, angvel, a, b, va, wa, vb, wb)
        cw[at(c, LAM_N, 0)] = new
        cw[at(c, LAM_MAX, 0)] = max(cw[at(c, LAM_MAX, 0)], new)
    return True


@helper
def build_islands(contacts, bodies):
    """The ``Islands`` of this step: the block solver's manifolds, blocks ``contacts.direct_blocks`` to
    ``contacts.blocks`` (one manifold each, ``graph_color.color_contacts``), gathered island by island (a
    counting sort on the islands' numbers, block order within one), each island's points listed and its
    matrix made (``island_matrix``). Called once per step, after the inertias of the start of the step
    are set; no islands when no manifold is in one."""
    B = contacts.table
    first, count = contacts.direct_blocks, contacts.blocks - contacts.direct_blocks
    islands = 0
    for j in range(count):
        islands = max(islands, contacts.island[B.order[B.start[first + j]]] + 1)
    start = np.zeros(islands + 1, np.int64)
    for j in range(count):
        start[contacts.island[B.order[B.start[first + j]]] + 1] += 1
    for k in range(islands):
        start[k + 1] += start[k]
    man = np.empty(max(count, 0), np.int64)
    fill = start[:islands].copy()
    for j in range(count):
        i = B.order[B.start[first + j]]
        man[fill[contacts.island[i]]] = i
        fill[contacts.island[i]] += 1
    m = MAX_POINTS
    mw = m if islands else 0  # the shared work arrays: none in a step without islands (most steps)
    isl = Islands(np.zeros(islands, np.int64), np.empty((islands, m), np.int64), np.empty((islands, m, m)),
                  np.empty((islands, m, m)), np.empty((islands, m)), np.zeros(islands, np.bool_),
                  np.empty((islands, 2 * m), np.int64), np.zeros(islands, np.int64),
                  np.empty((islands, m), np.int64), np.empty((islands, m), np.int64), np.empty(mw),
                  np.empty(mw), np.empty(mw), np.empty(mw), np.empty(mw), np.empty(mw, np.bool_),
                  np.empty(mw, np.int64), np.empty((2 * mw, 3)), np.empty((2 * mw, 3)))
    for k in range(islands):
        n = int(0)  # not a literal 0, which would compile island_matrix a second time
        for j in range(start[k], start[k + 1]):
            i = man[j]
            for p in range(contacts.npoints[i]):
                isl.pk[k, n] = contacts.first[i] + p  # mark_stiff_islands counted at most MAX_POINTS
                n += 1
        isl.n[k] = n
        island_matrix(isl.pk[k], n, contacts, bodies, island_view(isl, k))
    return isl


@helper
def solve_islands(contacts, bodies, coefficients, isl):
    """One solve pass over the islands ``isl`` (``build_islands``), island by island: the friction of
    every point by sequential impulses (``contact_solver_reference.friction_point``), then every normal
    impulse at once (``solve_island``)."""
    for k in range(len(isl.n)):
        solve_island(isl.pk[k], isl.n[k], contacts, bodies, coefficients, island_view(isl, k))
