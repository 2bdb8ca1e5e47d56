"""Collision response: the sequential-impulse contact solver, the projection and penalty methods, and the
joints solved with the contacts.

The impulse method is Catto's sequential impulses (GDC 2005) arranged as Box2D v3's "soft step"
(Catto, "Solver2D", 2024): per step the contacts are prepared once; per sub-step the velocities are
integrated, the accumulated impulses of the last sub-step applied again (warm starting), every contact
solved once with a soft position bias, the positions integrated, and the normals solved once more without
bias ("relax"), so that the push-out of overlaps never turns into kinetic energy. Restitution is applied
after the last sub-step from the approach speed recorded at impact. The soft constraint (a spring and
damper expressed through the constraint's effective mass) is why we prefer it to Baumgarte's bias: its
stiffness is bounded by the sub-step rate, so deep overlaps come apart smoothly instead of exploding, and
the relax pass removes the velocity that the bias added.

**Graph colouring and wide blocks** (Box2D v3, Rapier). Sequential impulses solve one contact after
another, each seeing the velocities the last one left, and a solver that does exactly that is bound by
the latency of that chain. But two manifolds that share no moving body do not interact within a pass, so
the order among them is free. ``color_contacts`` colours the manifolds greedily so that no two manifolds
of one colour share a moving body (static and sleeping bodies do not count: nothing writes their
velocities), and cuts each colour into blocks of up to ``L`` manifolds, the block's *lanes*. A pass
gathers a block's body velocities into lane rows, solves the block's first points of all lanes side by
side, then the second points, and so on, and scatters the velocities back. The lane loops have no
dependence from one lane to the next, which lets the compiler turn them into SIMD instructions: the same
Gauss–Seidel sweep as solving the manifolds one by one in colour order, computed several lanes at a time.
Manifolds that find no free colour (a body touching very many others) go to blocks of one lane, solved
one after another.

**Layout.** A block's data is ``slots`` (its largest point count) groups of ``NF`` rows of ``L`` floats in
the flat array ``cw``: field ``f`` of the point in slot ``p``, lane ``j`` of a block starting at ``off``
is ``cw[off + (p·NF + f)·L + j]``. The fields, named by the constants below: the unit normal (A to B) and
two tangents; twelve cached angular Jacobian rows, four per direction d ∈ (n, t1, t2): ra×d, rb×d,
Ia⁻¹(ra×d), Ib⁻¹(rb×d), so that a point's relative velocity along d is (vb − va)·d + ωb·(rb×d) − ωa·(ra×d)
and an impulse λ along d changes ωa by −λ·Ia⁻¹(ra×d), with no matrix product in the inner loop; the
effective masses along n, t1, t2; friction μ; restitution e; the normal velocity at the start of the step;
the approach speed at impact; the separation when the contact was made; the accumulated impulses along
n, t1, t2; the largest normal impulse of the step; and the anchors ra, rb (contact point minus centre of
mass, world frame). Contact point k (numbered manifold by manifold) keeps ``cidx[k]``, the index of its
field 0, so the once-per-step kernels reach any field as ``cw[cidx[k] + f·STRIDE]``; it also keeps its
bodies ``cb[k]`` and its anchors in each body's frame (``cla``, ``clb``). Slots beyond a manifold's point
count are zero (no mass, no impulse) and solve to nothing.

Indices into ``cw`` are converted to unsigned (``at``): numba wraps a negative signed index around, and
that check, in every access, hides from LLVM that the lanes are consecutive addresses.
"""

from __future__ import annotations

import math

import numpy as np
from numba import njit

from .layout import pair_key
from .vecmath import (
    add,
    cross,
    dot,
    length,
    load3,
    load4,
    load_mat,
    mad,
    mat_inverse,
    mat_vec,
    quat_inv_rotate,
    quat_rotate,
    scale,
    store3,
    sub,
    tangent_basis,
)

RULE_PRODUCT = 0
RULE_MIN = 1
RULE_MAX = 2
RULE_AVERAGE = 3

L = 32  # lanes per block
STRIDE = 36  # floats from one row to the next: not a power of two, or all rows would share a few cache sets
RESTITUTION_PASSES = 4  # Gauss–Seidel passes of ``apply_restitution``
COLORS = 32  # colours tried before a manifold goes to the overflow (one bit each in an int64 mask)

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
# rows of ``D``: displacement of b relative to a, and each body's rotation vector, since the step began
DX = 0
DRA = 3
DRB = 6
ND = 9
# rows of a block's gathered inverse inertias ``Inv``, for ``jacobian_lanes``: Ia⁻¹ and Ib⁻¹ (9 rows each,
# row-major), 1/ma, 1/mb
IIA = 0
IIB = 9
IMA2 = 18
IMB2 = 19
NI = 20


@njit(cache=True)
def combine_restitution(ea, eb, rule):
    """The pair's restitution from the two bodies' values under the selected rule (product by default)."""
    if rule == RULE_MIN:
        return min(ea, eb)
    if rule == RULE_MAX:
        return max(ea, eb)
    if rule == RULE_AVERAGE:
        return 0.5 * (ea + eb)
    return ea * eb


@njit(cache=True)
def soft_coefficients(hertz, zeta, h):
    """Soft constraint coefficients (bias rate, mass scale, impulse scale) of a spring of frequency
    ``hertz`` and damping ratio ``zeta`` integrated implicitly over ``h`` (Catto, "Soft Constraints",
    GDC 2011; Box2D v3 ``b2MakeSoft``)."""
    if hertz <= 0.0:
        return 0.0, 1.0, 0.0
    omega = 2.0 * math.pi * hertz
    a1 = 2.0 * zeta + h * omega
    a2 = h * omega * a1
    a3 = 1.0 / (1.0 + a2)
    return omega / a1, a2 * a3, a3


@njit(cache=True)
def point_velocity(vel, angvel, i, r):
    """Velocity of the material point at offset ``r`` from body ``i``'s centre: v + ω × r."""
    return add(load3(vel, i), cross(load3(angvel, i), r))


@njit(cache=True)
def apply_impulse_pair(vel, angvel, inv_mass, inv_inertia, a, b, ra, rb, p):
    """Apply impulse ``p`` to body b at ``rb`` and ``-p`` to body a at ``ra``."""
    store3(vel, a, mad(load3(vel, a), p, -inv_mass[a]))
    store3(angvel, a, sub(load3(angvel, a), mat_vec(load_mat(inv_inertia, a), cross(ra, p))))
    store3(vel, b, mad(load3(vel, b), p, inv_mass[b]))
    store3(angvel, b, add(load3(angvel, b), mat_vec(load_mat(inv_inertia, b), cross(rb, p))))


@njit(cache=True)
def push_pair(va, wa, vb, wb, ima, imb, d, lam, ja, jb):
    """Velocities of bodies a and b after the impulse ``lam`` along ``d`` (−lam on a), with the cached
    angular responses ``ja`` = Ia⁻¹(ra×d) and ``jb`` = Ib⁻¹(rb×d)."""
    return (mad(va, d, -lam * ima), mad(wa, ja, -lam), mad(vb, d, lam * imb), mad(wb, jb, lam))


# ---------------------------------------------------------------------------------------------------
# The wide layout: rows of L lanes


@njit(cache=True)
def at(base, f, j):
    """Unsigned index of row ``f``, lane ``j`` of the rows starting at ``base``."""
    return np.uint64(base + f * STRIDE + j)


@njit(cache=True)
def get3(w, base, f, j):
    """Rows ``f``, ``f+1``, ``f+2`` of lane ``j`` as a vector."""
    return (w[at(base, f, j)], w[at(base, f + 1, j)], w[at(base, f + 2, j)])


@njit(cache=True)
def put3(w, base, f, j, v):
    w[at(base, f, j)] = v[0]
    w[at(base, f + 1, j)] = v[1]
    w[at(base, f + 2, j)] = v[2]


@njit(cache=True)
def jac(w, base, j, direction, which):
    """Cached Jacobian row of lane ``j``: ``direction`` 0, 1, 2 for n, t1, t2; ``which`` 0: ra×d,
    1: rb×d, 2: Ia⁻¹(ra×d), 3: Ib⁻¹(rb×d)."""
    return get3(w, base, JAC + 3 * (4 * direction + which), j)


# ---------------------------------------------------------------------------------------------------
# Contacts


@njit(cache=True)
def color_contacts(m, mb_a, mb_b, m_npoints, moving, m_first, cidx, order, blk_start, blk_lanes,
                   blk_slots, blk_off, mask):
    """Colour the manifolds and cut the colours into blocks (see the module's docstring).

    Greedy colouring (Box2D v3's graph colouring): manifold by manifold, the lowest colour that neither
    of its moving bodies already has (``mask`` holds a bit per colour per body). Within a colour the
    manifolds are ordered by point count, largest first, so that a block's lanes have like counts; runs
    of up to ``L`` make the blocks. ``m_first[i]`` receives the number of manifold i's first contact point
    (points are numbered manifold by manifold), or −1 for a manifold between two bodies that do not move
    (asleep or static): it gets no solver points. ``cidx[k]`` receives point k's place in ``cw``.
    Returns (blocks, floats of ``cw`` used, contact points)."""
    color = np.full(m, -1, np.int64)
    count = np.zeros((COLORS + 1) * 4, np.int64)
    for i in range(m):
        a = mb_a[i]
        b = mb_b[i]
        mask[a] = 0
        mask[b] = 0
    k = 0
    for i in range(m):
        a = mb_a[i]
        b = mb_b[i]
        if not (moving[a] or moving[b]):
            m_first[i] = -1
            continue
        m_first[i] = k
        k += m_npoints[i]
        used = (mask[a] if moving[a] else 0) | (mask[b] if moving[b] else 0)
        c = 0
        while c < COLORS and (used >> c) & 1:
            c += 1
        if c < COLORS:
            bit = np.int64(1) << c
            if moving[a]:
                mask[a] |= bit
            if moving[b]:
                mask[b] |= bit
        color[i] = c
        count[4 * c + 4 - m_npoints[i]] += 1
    # counting sort by (colour, point count descending)
    start = np.zeros(len(count) + 1, np.int64)
    for key in range(len(count)):
        start[key + 1] = start[key] + count[key]
    for i in range(m):
        if color[i] >= 0:
            key = 4 * color[i] + 4 - m_npoints[i]
            order[start[key]] = i
            start[key] += 1
    total = start[len(count)]
    nb = 0
    off = 0
    prev = -1
    shared = STRIDE  # overflow blocks placed in the current shared region
    region = 0
    for s in range(total):
        i = order[s]
        c = color[i]
        if c != prev or c == COLORS or blk_lanes[nb - 1] == L:
            blk_start[nb] = s
            blk_lanes[nb] = 0
            blk_slots[nb] = m_npoints[i]
            if c == COLORS:
                # An overflow block has one lane, so it uses one float of each row of STRIDE: STRIDE of
                # them share one region, each shifted by one float (lane 0 of block r sits where lane r
                # of a full block would). Given a region each, a pile where every body touches hundreds
                # of others (nearly all manifolds in the overflow) took STRIDE times the memory: 72 kB
                # per manifold, 16 GB for 1000 bodies spawned at one point. The region is sized for its
                # first block, the one with the most points (point counts descend within a colour).
                if shared == STRIDE:
                    shared = 0
                    region = off
                    off += m_npoints[i] * NF * STRIDE
                blk_off[nb] = region + shared
                shared += 1
            else:
                blk_off[nb] = off
                off += m_npoints[i] * NF * STRIDE
            nb += 1
            prev = c
        j = blk_lanes[nb - 1]
        for p in range(m_npoints[i]):
            cidx[m_first[i] + p] = blk_off[nb - 1] + p * NF * STRIDE + j
        blk_lanes[nb - 1] = j + 1
    return nb, off, k


@njit(cache=True)
def match_previous(m, mb_a, mb_b, m_first, prev_m, prev_key, nbodies, match):
    """``match[i]``: the row of last step's manifolds with manifold i's body pair, or −1. Both lists are
    sorted by pair, so this is one merge."""
    j = 0
    for i in range(m):
        a = mb_a[i]
        b = mb_b[i]
        key = pair_key(a, b, nbodies)
        while j < prev_m and prev_key[j] < key:
            j += 1
        match[i] = j if (j < prev_m and prev_key[j] == key and m_first[i] >= 0) else -1


@njit(cache=True)
def prepare_contacts(nb, B, mb_a, mb_b, m_normal, m_npoints, m_pa, m_pb, m_first, moving,
                     pos, quat, vel, angvel, inv_mass, inv_inertia, restitution, friction, rule,
                     match, prev_first, prev_npoints, prev_la, prev_ln, prev_lt, S, Inv):
    """Turn the manifolds into solver contact points (one per manifold point) and warm-start them.

    For each point: anchors relative to each centre of mass, the effective masses along the normal and
    two tangents, combined friction √(μa·μb) and restitution, the normal velocity at the start of the step,
    and the impulses of the matching point of the last step (the same body pair, found by
    ``match_previous``, and anchors within 5 cm in body A's frame: contact persistence by proximity). A
    body that does not move counts as immovable (no inverse mass or inertia), so that nothing the solver
    does can change it. Runs after ``color_contacts``, block by block so that the writes to ``cw`` stay
    close together; the slots of a lane beyond its manifold's points are zeroed. The Jacobian rows and
    effective masses are then computed for all lanes of a slot at once (``jacobian_lanes``), from the
    inverse inertias gathered into ``Inv``."""
    cb, cla, clb, cidx, cw = S
    order, blk_start, blk_lanes, blk_slots, blk_off = B
    zero = (0.0, 0.0, 0.0, 0.0, 0.0, 0.0, 0.0, 0.0, 0.0)
    for blk in range(nb):
        for lane in range(blk_lanes[blk]):
            i = order[blk_start[blk] + lane]
            a = mb_a[i]
            b = mb_b[i]
            n = load3(m_normal, i)
            t1, t2 = tangent_basis(n)
            xa = load3(pos, a)
            xb = load3(pos, b)
            qa = load4(quat, a)
            qb = load4(quat, b)
            ia = load_mat(inv_inertia, a) if moving[a] else zero
            ib = load_mat(inv_inertia, b) if moving[b] else zero
            for r in range(9):
                Inv[at(0, IIA + r, lane)] = ia[r]
                Inv[at(0, IIB + r, lane)] = ib[r]
            Inv[at(0, IMA2, lane)] = inv_mass[a] if moving[a] else 0.0
            Inv[at(0, IMB2, lane)] = inv_mass[b] if moving[b] else 0.0
            mu = math.sqrt(friction[a] * friction[b])
            e = combine_restitution(restitution[a], restitution[b], rule)
            j = match[i]
            for p in range(m_npoints[i]):
                k = m_first[i] + p
                c = cidx[k]
                pa = (m_pa[i, p, 0], m_pa[i, p, 1], m_pa[i, p, 2])
                pb = (m_pb[i, p, 0], m_pb[i, p, 1], m_pb[i, p, 2])
                ra = sub(pa, xa)
                rb = sub(pb, xb)
                la = quat_inv_rotate(qa, ra)
                cb[k, 0] = a
                cb[k, 1] = b
                store3(cla, k, la)
                store3(clb, k, quat_inv_rotate(qb, rb))
                put3(cw, c, N, 0, n)
                put3(cw, c, T1, 0, t1)
                put3(cw, c, T2, 0, t2)
                put3(cw, c, RA, 0, ra)
                put3(cw, c, RB, 0, rb)
                cw[at(c, MU, 0)] = mu
                cw[at(c, E, 0)] = e
                dv = sub(point_velocity(vel, angvel, b, rb), point_velocity(vel, angvel, a, ra))
                cw[at(c, VN0, 0)] = dot(dv, n)
                cw[at(c, APPROACH, 0)] = 0.0
                cw[at(c, SEP0, 0)] = dot(sub(pb, pa), n)
                cw[at(c, LAM_N, 0)] = 0.0
                cw[at(c, LAM_T1, 0)] = 0.0
                cw[at(c, LAM_T2, 0)] = 0.0
                cw[at(c, LAM_MAX, 0)] = 0.0
                if j >= 0:
                    best = 0.05 * 0.05
                    for q in range(prev_npoints[j]):
                        pk = prev_first[j] + q
                        d = sub(load3(prev_la, pk), la)
                        d2 = dot(d, d)
                        if d2 < best:
                            best = d2
                            cw[at(c, LAM_N, 0)] = prev_ln[pk]
                            ft = load3(prev_lt, pk)
                            cw[at(c, LAM_T1, 0)] = dot(ft, t1)
                            cw[at(c, LAM_T2, 0)] = dot(ft, t2)
            # the block's slots that this lane has no point for solve to nothing
            for p in range(m_npoints[i], blk_slots[blk]):
                base = blk_off[blk] + p * NF * STRIDE
                for f in range(NF):
                    cw[at(base, f, lane)] = 0.0
        for p in range(blk_slots[blk]):
            jacobian_lanes(blk_lanes[blk], cw, blk_off[blk] + p * NF * STRIDE, Inv)


@njit(cache=True, error_model="numpy")
def jacobian_lanes(nl, cw, base, Inv):
    """The cached Jacobian rows (ra×d, rb×d, Ia⁻¹(ra×d), Ib⁻¹(rb×d)) and the effective masses along
    d = n, t1, t2 of one slot of a block's lanes, from the anchors and directions already in ``cw`` and
    the lanes' inverse inertias and masses in ``Inv``. A lane loop without branches, compiled to SIMD
    instructions like ``solve_lanes``."""
    for j in range(nl):
        ra = get3(cw, base, RA, j)
        rb = get3(cw, base, RB, j)
        ia = (Inv[at(0, IIA, j)], Inv[at(0, IIA + 1, j)], Inv[at(0, IIA + 2, j)], Inv[at(0, IIA + 3, j)],
              Inv[at(0, IIA + 4, j)], Inv[at(0, IIA + 5, j)], Inv[at(0, IIA + 6, j)], Inv[at(0, IIA + 7, j)],
              Inv[at(0, IIA + 8, j)])
        ib = (Inv[at(0, IIB, j)], Inv[at(0, IIB + 1, j)], Inv[at(0, IIB + 2, j)], Inv[at(0, IIB + 3, j)],
              Inv[at(0, IIB + 4, j)], Inv[at(0, IIB + 5, j)], Inv[at(0, IIB + 6, j)], Inv[at(0, IIB + 7, j)],
              Inv[at(0, IIB + 8, j)])
        ims = Inv[at(0, IMA2, j)] + Inv[at(0, IMB2, j)]
        for direction in range(3):
            d = get3(cw, base, N + 3 * direction, j)
            rad = cross(ra, d)
            rbd = cross(rb, d)
            iad = mat_vec(ia, rad)
            ibd = mat_vec(ib, rbd)
            f = JAC + 12 * direction
            put3(cw, base, f, j, rad)
            put3(cw, base, f + 3, j, rbd)
            put3(cw, base, f + 6, j, iad)
            put3(cw, base, f + 9, j, ibd)
            # the effective mass along d: 1 / (1/ma + 1/mb + (ra×d)·Ia⁻¹(ra×d) + (rb×d)·Ib⁻¹(rb×d)),
            # the seed's impulse formula with its angular terms; 0 when both bodies are immovable, and
            # in an empty slot (d = 0)
            inv_k = ims + dot(rad, iad) + dot(rbd, ibd)
            cw[at(base, MASS_N + direction, j)] = dot(d, d) / inv_k if inv_k > 0.0 else 0.0


@njit(cache=True)
def gather_velocities(blk, B, mb_a, mb_b, moving, vel, angvel, inv_mass, V):
    """Copy the velocities and inverse masses of block ``blk``'s bodies into the lane rows ``V`` (a body
    that does not move gets no inverse mass)."""
    order, blk_start, blk_lanes = B[0], B[1], B[2]
    s = blk_start[blk]
    for j in range(blk_lanes[blk]):
        i = order[s + j]
        a = mb_a[i]
        b = mb_b[i]
        put3(V, 0, VA, j, load3(vel, a))
        put3(V, 0, WA, j, load3(angvel, a))
        put3(V, 0, VB, j, load3(vel, b))
        put3(V, 0, WB, j, load3(angvel, b))
        V[at(0, IMA, j)] = inv_mass[a] if moving[a] else 0.0
        V[at(0, IMB, j)] = inv_mass[b] if moving[b] else 0.0


@njit(cache=True)
def scatter_velocities(blk, B, mb_a, mb_b, moving, vel, angvel, V):
    """Write the lane rows ``V`` of block ``blk`` back to its moving bodies."""
    order, blk_start, blk_lanes = B[0], B[1], B[2]
    s = blk_start[blk]
    for j in range(blk_lanes[blk]):
        i = order[s + j]
        a = mb_a[i]
        b = mb_b[i]
        if moving[a]:
            store3(vel, a, get3(V, 0, VA, j))
            store3(angvel, a, get3(V, 0, WA, j))
        if moving[b]:
            store3(vel, b, get3(V, 0, VB, j))
            store3(angvel, b, get3(V, 0, WB, j))


@njit(cache=True)
def lane_state(V, j):
    """Lane ``j``'s body velocities and inverse masses: (va, wa, vb, wb, 1/ma, 1/mb)."""
    return (get3(V, 0, VA, j), get3(V, 0, WA, j), get3(V, 0, VB, j), get3(V, 0, WB, j),
            V[at(0, IMA, j)], V[at(0, IMB, j)])


@njit(cache=True)
def set_lane_velocities(V, j, va, wa, vb, wb):
    put3(V, 0, VA, j, va)
    put3(V, 0, WA, j, wa)
    put3(V, 0, VB, j, vb)
    put3(V, 0, WB, j, wb)


@njit(cache=True)
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
        fresh = cw[at(base, LAM_MAX, j)] == 0.0
        cw[at(base, APPROACH, j)] = max(-vn, 0.0) if fresh else cw[at(base, APPROACH, j)]
        va, wa, vb, wb = push_pair(va, wa, vb, wb, ima, imb, get3(cw, base, N, j), cw[at(base, LAM_N, j)],
                                   jac(cw, base, j, 0, 2), jac(cw, base, j, 0, 3))
        va, wa, vb, wb = push_pair(va, wa, vb, wb, ima, imb, get3(cw, base, T1, j), cw[at(base, LAM_T1, j)],
                                   jac(cw, base, j, 1, 2), jac(cw, base, j, 1, 3))
        va, wa, vb, wb = push_pair(va, wa, vb, wb, ima, imb, get3(cw, base, T2, j), cw[at(base, LAM_T2, j)],
                                   jac(cw, base, j, 2, 2), jac(cw, base, j, 2, 3))
        set_lane_velocities(V, j, va, wa, vb, wb)


@njit(cache=True)
def warm_start(nb, B, mb_a, mb_b, cw, V, vel, angvel, inv_mass, moving):
    """Apply the accumulated impulses again (Catto 2005): the solver starts from last sub-step's answer,
    which is what makes stacks converge with few iterations."""
    blk_lanes, blk_slots, blk_off = B[2], B[3], B[4]
    for blk in range(nb):
        gather_velocities(blk, B, mb_a, mb_b, moving, vel, angvel, inv_mass, V)
        for p in range(blk_slots[blk]):
            warm_start_lanes(blk_lanes[blk], cw, blk_off[blk] + p * NF * STRIDE, V)
        scatter_velocities(blk, B, mb_a, mb_b, moving, vel, angvel, V)


@njit(cache=True)
def normal_row(cw, base, j):
    """The fields of lane ``j``'s point that its normal constraint reads: n, ra×n, rb×n, Ia⁻¹(ra×n),
    Ib⁻¹(rb×n), the effective mass, s₀, the accumulated and largest normal impulses, the approach
    speed."""
    return (get3(cw, base, N, j), jac(cw, base, j, 0, 0), jac(cw, base, j, 0, 1), jac(cw, base, j, 0, 2),
            jac(cw, base, j, 0, 3), cw[at(base, MASS_N, j)], cw[at(base, SEP0, j)], cw[at(base, LAM_N, j)],
            cw[at(base, LAM_MAX, j)], cw[at(base, APPROACH, j)])


@njit(cache=True)
def normal_update(row, va, wa, vb, wb, ima, imb, dx, dra, drb, coefficients):
    """Non-penetration of one point (see ``solve_contacts``), from its ``normal_row``, its bodies'
    velocities, inverse masses and displacements since the step began, and ``coefficients = (1/h, bias
    rate, mass scale, impulse scale, max push, linear slop)``. Returns the new velocities and the new
    accumulated normal impulse, largest normal impulse and approach speed."""
    n, ran, rbn, ian, ibn, mass, sep0, old, lam_max, approach = row
    inv_h, bias_rate, mass_scale, impulse_scale, max_push, linear_slop = coefficients
    # the separation now, from how far each body moved and turned since the contacts were made
    s = sep0 + dot(dx, n) + dot(drb, rbn) - dot(dra, ran)
    vn = dot(sub(vb, va), n) + dot(wb, rbn) - dot(wa, ran)
    speculative = s > 0.0
    bias = s * inv_h if speculative else max(bias_rate * min(s + linear_slop, 0.0), -max_push)
    ms = 1.0 if speculative else mass_scale
    isc = 0.0 if speculative else impulse_scale
    new = max(old - mass * ms * (vn + bias) - isc * old, 0.0)
    # the approach speed at impact, for restitution, was recorded by ``warm_start_lanes``
    va, wa, vb, wb = push_pair(va, wa, vb, wb, ima, imb, n, new - old, ian, ibn)
    return va, wa, vb, wb, new, max(lam_max, new), approach


@njit(cache=True)
def store_normal(cw, base, j, new, lam_max, approach):
    cw[at(base, LAM_N, j)] = new
    cw[at(base, LAM_MAX, j)] = lam_max
    cw[at(base, APPROACH, j)] = approach


@njit(cache=True, error_model="numpy")
def friction_lanes(nl, cw, base, V):
    """Coulomb friction of one slot of a block's lanes: the tangential impulse vector that stops the
    sliding, clamped to the disc of radius μ·λn. Written without branches (min/max), so that the loop
    over lanes compiles to SIMD instructions; the ``numpy`` error model lets a division by zero give inf
    instead of raising."""
    for j in range(nl):
        va, wa, vb, wb, ima, imb = lane_state(V, j)
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
        f = min(1.0, cap / max(math.sqrt(l1 * l1 + l2 * l2), 1e-30))
        l1 *= f
        l2 *= f
        va, wa, vb, wb = push_pair(va, wa, vb, wb, ima, imb, t1, l1 - lt1, jac(cw, base, j, 1, 2),
                                   jac(cw, base, j, 1, 3))
        va, wa, vb, wb = push_pair(va, wa, vb, wb, ima, imb, t2, l2 - lt2, jac(cw, base, j, 2, 2),
                                   jac(cw, base, j, 2, 3))
        cw[at(base, LAM_T1, j)] = l1
        cw[at(base, LAM_T2, j)] = l2
        set_lane_velocities(V, j, va, wa, vb, wb)


@njit(cache=True, error_model="numpy")
def normal_lanes(nl, cw, base, V, D, coefficients):
    """Non-penetration of one slot of a block's lanes (see ``normal_update``), compiled to SIMD
    instructions like ``friction_lanes``."""
    for j in range(nl):
        va, wa, vb, wb, ima, imb = lane_state(V, j)
        va, wa, vb, wb, new, lam_max, approach = normal_update(
            normal_row(cw, base, j), va, wa, vb, wb, ima, imb, get3(D, 0, DX, j), get3(D, 0, DRA, j),
            get3(D, 0, DRB, j), coefficients)
        store_normal(cw, base, j, new, lam_max, approach)
        set_lane_velocities(V, j, va, wa, vb, wb)


@njit(cache=True)
def solve_contacts(nb, B, mb_a, mb_b, cw, V, D, dpos, drot, vel, angvel, inv_mass, moving, h, use_bias,
                   contact_hertz, damping_ratio, max_push, linear_slop):
    """One sequential-impulse pass over the contact points (Catto 2005), soft-step variant, block by
    block (see the module's docstring).

    The separation is tracked to first order from each body's displacement ``dpos`` and rotation vector
    ``drot`` since the step began (s = s₀ + n·(Δx_b − Δx_a) + Δθ_b·(r_b×n) − Δθ_a·(r_a×n), as in Box2D v3
    and Rapier), which needs no quaternion work in the inner loop.

    Friction first: Coulomb, the tangential impulse vector clamped to the disc of radius μ·λn (last
    iteration's normal impulse), so that non-penetration, solved last, is the constraint that holds best
    when the iterations stop. Normal: s > 0 is a speculative contact that only stops the approach that
    would close the gap within the sub-step (v_n ≥ −s/h); an overlap gets a soft bias (a spring of
    ``contact_hertz``, pushing at most ``max_push`` m/s) when ``use_bias``. The accumulated normal
    impulse is clamped at ≥ 0. Without ``use_bias`` this is the relax pass: normals only, no bias."""
    order, blk_start, blk_lanes, blk_slots, blk_off = B
    if use_bias:
        bias_rate, mass_scale, impulse_scale = soft_coefficients(contact_hertz, damping_ratio, h)
    else:
        bias_rate, mass_scale, impulse_scale, max_push = 0.0, 1.0, 0.0, 0.0
    coefficients = (1.0 / h, bias_rate, mass_scale, impulse_scale, max_push, linear_slop)
    for blk in range(nb):
        gather_velocities(blk, B, mb_a, mb_b, moving, vel, angvel, inv_mass, V)
        s = blk_start[blk]
        for j in range(blk_lanes[blk]):
            i = order[s + j]
            a = mb_a[i]
            b = mb_b[i]
            put3(D, 0, DX, j, sub(load3(dpos, b), load3(dpos, a)))
            put3(D, 0, DRA, j, load3(drot, a))
            put3(D, 0, DRB, j, load3(drot, b))
        for p in range(blk_slots[blk]):
            base = blk_off[blk] + p * NF * STRIDE
            # each lane: friction first, then the normal (two loops, each short enough for the processor
            # to overlap the independent lanes); the relax pass does the normals only, without bias:
            # friction was solved in the biased passes (as in Rapier's stabilisation passes)
            if use_bias:
                friction_lanes(blk_lanes[blk], cw, base, V)
            normal_lanes(blk_lanes[blk], cw, base, V, D, coefficients)
        scatter_velocities(blk, B, mb_a, mb_b, moving, vel, angvel, V)


@njit(cache=True)
def apply_restitution(c, S, vel, angvel, inv_mass, moving, threshold):
    """Restitution after the sub-steps (Box2D v3): each point that was struck faster than ``threshold``
    gets the normal velocity e·v_approach, v_approach being the approach speed recorded at impact; the
    total normal impulse stays ≥ 0. Below the threshold nothing bounces, so resting contacts never jitter."""
    cb, cidx, cw = S[0], S[3], S[4]
    # a few Gauss–Seidel passes, not one: after one pass over a face's points the first ones solved have
    # their target and the body a spin, which the later passes take out again
    for _ in range(RESTITUTION_PASSES):
        for k in range(c):
            a = cb[k, 0]
            b = cb[k, 1]
            i = cidx[k]
            e = cw[at(i, E, 0)]
            if e == 0.0 or cw[at(i, LAM_MAX, 0)] == 0.0:
                continue
            approach = max(cw[at(i, APPROACH, 0)], -cw[at(i, VN0, 0)])
            if approach < threshold:
                continue
            n = get3(cw, i, N, 0)
            va, wa, vb, wb = load3(vel, a), load3(angvel, a), load3(vel, b), load3(angvel, b)
            vn = dot(sub(vb, va), n) + dot(wb, jac(cw, i, 0, 0, 1)) - dot(wa, jac(cw, i, 0, 0, 0))
            old = cw[at(i, LAM_N, 0)]
            new = max(old - cw[at(i, MASS_N, 0)] * (vn - e * approach), 0.0)
            cw[at(i, LAM_N, 0)] = new
            cw[at(i, LAM_MAX, 0)] = max(cw[at(i, LAM_MAX, 0)], new)
            ima = inv_mass[a] if moving[a] else 0.0
            imb = inv_mass[b] if moving[b] else 0.0
            va, wa, vb, wb = push_pair(va, wa, vb, wb, ima, imb, n, new - old, jac(cw, i, 0, 0, 2),
                                       jac(cw, i, 0, 0, 3))
            if moving[a]:
                store3(vel, a, va)
                store3(angvel, a, wa)
            if moving[b]:
                store3(vel, b, vb)
                store3(angvel, b, wb)


@njit(cache=True)
def store_impulses(m, mb_a, mb_b, m_first, m_npoints, S, out_impulse, keep_key, keep_first, keep_np,
                   keep_la, keep_ln, keep_lt, nbodies):
    """Copy the accumulated impulses out: per manifold point into ``out_impulse`` (for drawing and
    events), and into the persistence arrays that next step's ``prepare_contacts`` matches against
    (the friction impulse kept as a world vector, since the tangents are chosen afresh each step).
    A manifold that had no solver points (both bodies still) reports zero impulses."""
    cla, cidx, cw = S[1], S[3], S[4]
    for i in range(m):
        a = mb_a[i]
        b = mb_b[i]
        f = m_first[i]
        keep_key[i] = pair_key(a, b, nbodies)
        keep_first[i] = max(f, 0)
        keep_np[i] = m_npoints[i] if f >= 0 else 0
        for p in range(4):
            out_impulse[i, p] = 0.0
        if f < 0:
            continue
        for p in range(m_npoints[i]):
            k = f + p
            c = cidx[k]
            out_impulse[i, p] = cw[at(c, LAM_N, 0)]
            keep_ln[k] = cw[at(c, LAM_N, 0)]
            store3(keep_la, k, load3(cla, k))
            friction = add(scale(get3(cw, c, T1, 0), cw[at(c, LAM_T1, 0)]),
                           scale(get3(cw, c, T2, 0), cw[at(c, LAM_T2, 0)]))
            store3(keep_lt, k, friction)


# ---------------------------------------------------------------------------------------------------
# Projection and penalty: the two simpler response methods, kept for teaching.


@njit(cache=True)
def project_contacts(c, S, pos, quat, inv_mass, moving):
    """Projection method: move each pair apart along the normal by the current overlap, shared in
    proportion to the inverse masses. Velocities are left as they are, which is the method's flaw: a
    body keeps its approach speed and pushes into the contact again every step (the snooker ball that
    keeps pushing)."""
    cb, cla, clb, cidx, cw = S
    for k in range(c):
        a = cb[k, 0]
        b = cb[k, 1]
        ima = inv_mass[a] if moving[a] else 0.0
        imb = inv_mass[b] if moving[b] else 0.0
        w = ima + imb
        if w == 0.0:
            continue
        n = get3(cw, cidx[k], N, 0)
        pa = add(load3(pos, a), quat_rotate(load4(quat, a), load3(cla, k)))
        pb = add(load3(pos, b), quat_rotate(load4(quat, b), load3(clb, k)))
        depth = -dot(sub(pb, pa), n)
        if depth <= 0.0:
            continue
        store3(pos, a, mad(load3(pos, a), n, -depth * ima / w))
        store3(pos, b, mad(load3(pos, b), n, depth * imb / w))


@njit(cache=True)
def penalty_contacts(c, S, pos, quat, vel, angvel, inv_mass, inv_inertia, moving, h, hertz, zeta):
    """Penalty method: a damped Hooke spring per contact point, F = k·x − c·v_n along the normal (pushing
    only), with Coulomb friction from the spring force. The stiffness k = m_eff·ω² and damping
    c = 2ζ·m_eff·ω use the point's effective mass, so one ``hertz`` setting suits light and heavy bodies;
    the force is applied as the impulse F·h of the sub-step (explicit, so ω·h must stay well below 1)."""
    cb, cla, clb, cidx, cw = S
    omega = 2.0 * math.pi * hertz
    for k in range(c):
        a = cb[k, 0]
        b = cb[k, 1]
        i = cidx[k]
        n = get3(cw, i, N, 0)
        ra = get3(cw, i, RA, 0)
        rb = get3(cw, i, RB, 0)
        pa = add(load3(pos, a), quat_rotate(load4(quat, a), load3(cla, k)))
        pb = add(load3(pos, b), quat_rotate(load4(quat, b), load3(clb, k)))
        x = -dot(sub(pb, pa), n)
        if x <= 0.0:
            continue
        dv = sub(point_velocity(vel, angvel, b, rb), point_velocity(vel, angvel, a, ra))
        vn = dot(dv, n)
        f = cw[at(i, MASS_N, 0)] * omega * (omega * x - 2.0 * zeta * vn)
        if f <= 0.0:
            continue
        lam = f * h
        cw[at(i, LAM_N, 0)] += lam
        cw[at(i, LAM_MAX, 0)] = max(cw[at(i, LAM_MAX, 0)], cw[at(i, LAM_N, 0)])
        apply_impulse_pair(vel, angvel, inv_mass, inv_inertia, a, b, ra, rb, scale(n, lam))
        dv = sub(point_velocity(vel, angvel, b, rb), point_velocity(vel, angvel, a, ra))
        t1 = get3(cw, i, T1, 0)
        t2 = get3(cw, i, T2, 0)
        l1 = -cw[at(i, MASS_T1, 0)] * dot(dv, t1)
        l2 = -cw[at(i, MASS_T2, 0)] * dot(dv, t2)
        cap = cw[at(i, MU, 0)] * lam
        mag = math.sqrt(l1 * l1 + l2 * l2)
        if mag > cap:
            l1 *= cap / mag
            l2 *= cap / mag
        cw[at(i, LAM_T1, 0)] += l1
        cw[at(i, LAM_T2, 0)] += l2
        apply_impulse_pair(vel, angvel, inv_mass, inv_inertia, a, b, ra, rb,
                           add(scale(t1, l1), scale(t2, l2)))


# ---------------------------------------------------------------------------------------------------
# Joints: distance joints (rods and ropes) and the mouse grab, solved in the same passes as contacts.


@njit(cache=True)
def joint_anchors(j, jb, jla, jlb, jworld, pos, quat):
    """World anchors and lever arms of distance joint ``j``: (ra, pa, rb, pb); a world joint (b = −1)
    has its fixed point ``jworld[j]`` as pb and a zero lever arm."""
    a = jb[j, 0]
    b = jb[j, 1]
    ra = quat_rotate(load4(quat, a), load3(jla, j))
    pa = add(load3(pos, a), ra)
    if b >= 0:
        rb = quat_rotate(load4(quat, b), load3(jlb, j))
        return ra, pa, rb, add(load3(pos, b), rb)
    return ra, pa, (0.0, 0.0, 0.0), load3(jworld, j)


@njit(cache=True)
def apply_joint_impulse(vel, angvel, inv_mass, inv_inertia, a, b, ra, rb, p):
    """Impulse ``p`` on body b at ``rb`` and ``-p`` on body a at ``ra``; b = −1 is the immovable world."""
    store3(vel, a, mad(load3(vel, a), p, -inv_mass[a]))
    store3(angvel, a, sub(load3(angvel, a), mat_vec(load_mat(inv_inertia, a), cross(ra, p))))
    if b >= 0:
        store3(vel, b, mad(load3(vel, b), p, inv_mass[b]))
        store3(angvel, b, add(load3(angvel, b), mat_vec(load_mat(inv_inertia, b), cross(rb, p))))


@njit(cache=True)
def solve_distance_joints(nj, jb, jla, jlb, jlen, jrope, jlam, jworld, pos, quat, vel, angvel, inv_mass,
                          inv_inertia, moving, h, use_bias, hertz, zeta, warm):
    """Distance joints: keep |p_b − p_a| = L between two anchors (Box2D's distance joint, soft).

    ``jb[j] = (a, b)``, with b = −1 for a joint to the fixed world point ``jworld[j]``; local anchors
    ``jla``, ``jlb``. A rod holds the length both ways; a rope (``jrope``) only pulls (accumulated impulse
    ≤ 0) and, while slack, acts like a speculative contact: it lets the ends separate just up to the
    length within the sub-step. With ``warm`` the pass only re-applies the accumulated impulses ``jlam``."""
    bias_rate, mass_scale, impulse_scale = soft_coefficients(hertz, zeta, h)
    for j in range(nj):
        a = jb[j, 0]
        b = jb[j, 1]
        if not (moving[a] or (b >= 0 and moving[b])):
            continue
        ra, pa, rb, pb = joint_anchors(j, jb, jla, jlb, jworld, pos, quat)
        d = sub(pb, pa)
        dist = length(d)
        if dist < 1e-9:
            continue
        u = scale(d, 1.0 / dist)
        if warm:
            apply_joint_impulse(vel, angvel, inv_mass, inv_inertia, a, b, ra, rb, scale(u, jlam[j]))
            continue
        rau = cross(ra, u)
        k = inv_mass[a] + dot(rau, mat_vec(load_mat(inv_inertia, a), rau))
        vb = (0.0, 0.0, 0.0)
        if b >= 0:
            rbu = cross(rb, u)
            k += inv_mass[b] + dot(rbu, mat_vec(load_mat(inv_inertia, b), rbu))
            vb = point_velocity(vel, angvel, b, rb)
        if k <= 0.0:
            continue
        c = dist - jlen[j]
        vrel = dot(sub(vb, point_velocity(vel, angvel, a, ra)), u)
        if jrope[j] and c < 0.0:
            lam = -(vrel + c / h) / k
        elif use_bias:
            lam = -mass_scale * (vrel + bias_rate * c) / k - impulse_scale * jlam[j]
        else:
            lam = -vrel / k
        total = jlam[j] + lam
        if jrope[j]:
            total = min(total, 0.0)
        lam = total - jlam[j]
        jlam[j] = total
        apply_joint_impulse(vel, angvel, inv_mass, inv_inertia, a, b, ra, rb, scale(u, lam))


@njit(cache=True)
def solve_grab(body, local_anchor, target, lam, pos, quat, vel, angvel, inv_mass, inv_inertia, h, hertz,
               zeta, max_force, use_bias):
    """Mouse grab: a soft point-to-point spring pulling the anchor of ``body`` towards ``target`` (Box2D's
    mouse joint). Its stiffness comes from a frequency and damping ratio through the body's 3×3 effective
    mass at the anchor, K = m⁻¹·E + [r]ᵀ·I⁻¹·[r], so light and heavy bodies respond alike; the accumulated
    impulse ``lam`` (3,) is clamped to ``max_force·h``, so nothing explodes. ``lam`` is updated in place."""
    i = body
    r = quat_rotate(load4(quat, i), (local_anchor[0], local_anchor[1], local_anchor[2]))
    c = sub(add(load3(pos, i), r), (target[0], target[1], target[2]))
    bias_rate, mass_scale, impulse_scale = soft_coefficients(hertz, zeta, h)
    if not use_bias:
        bias_rate, mass_scale, impulse_scale = 0.0, 1.0, 0.0
    ii = load_mat(inv_inertia, i)
    im = inv_mass[i]
    # column j of K is the anchor's velocity change per unit impulse along axis j: m⁻¹e + (I⁻¹(r×e))×r
    kx = add((im, 0.0, 0.0), cross(mat_vec(ii, cross(r, (1.0, 0.0, 0.0))), r))
    ky = add((0.0, im, 0.0), cross(mat_vec(ii, cross(r, (0.0, 1.0, 0.0))), r))
    kz = add((0.0, 0.0, im), cross(mat_vec(ii, cross(r, (0.0, 0.0, 1.0))), r))
    kinv = mat_inverse((kx[0], ky[0], kz[0], kx[1], ky[1], kz[1], kx[2], ky[2], kz[2]))
    rhs = add(point_velocity(vel, angvel, i, r), scale(c, bias_rate))
    old = (lam[0], lam[1], lam[2])
    new = sub(scale(old, 1.0 - impulse_scale), scale(mat_vec(kinv, rhs), mass_scale))
    cap = max_force * h
    mag = length(new)
    if mag > cap:
        new = scale(new, cap / mag)
    d = sub(new, old)
    lam[0] = new[0]
    lam[1] = new[1]
    lam[2] = new[2]
    store3(vel, i, mad(load3(vel, i), d, im))
    store3(angvel, i, add(load3(angvel, i), mat_vec(ii, cross(r, d))))
