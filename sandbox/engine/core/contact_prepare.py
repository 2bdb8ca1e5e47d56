"""Preparing the contacts once per step: from manifolds to solver contact points.

For each manifold point: the anchors relative to each centre of mass, the normal and two tangents, the
cached Jacobian rows and effective masses (``impulse.py`` gives the formula), the combined friction and
restitution, the normal velocity at the start of the step, and the impulses of the matching point of the
last step (warm starting, Catto 2005: the solver starts from last step's answer, which is what makes
stacks converge in few iterations). Points are matched by contact persistence: the same body pair, and
anchors within 5 cm in body A's frame.
"""

from __future__ import annotations

import numpy as np

from .atomics import atomic_add
from .contact_rows import (
    APPROACH,
    IIA,
    IIB,
    IMA2,
    IMB2,
    JAC,
    LAM_MAX,
    LAM_N,
    LAM_T1,
    LAM_T2,
    MASS_N,
    MU,
    NF,
    NI,
    RA,
    RB,
    SEP0,
    STRIDE,
    T1,
    T2,
    VN0,
    E,
    N,
    at,
    get3,
    put3,
)
from .friction import combine_friction
from .graph_color import PARALLEL_BLOCKS
from .impulse import point_velocity
from .jit import helper, kernel
from .layout import pair_key
from .records import Blocks, BodyState, ContactPoints, Manifolds, StoredImpulses
from .restitution import combine_restitution
from .threads import run_on_threads, share_out
from .vecmath import (
    ZERO_MAT,
    cross,
    dot,
    load3,
    load4,
    load_mat,
    mat_vec,
    quat_inv_rotate,
    store3,
    sub,
    tangent_basis,
)

PERSISTENCE_DISTANCE = 0.05  # m: a point within this of last step's (in body A's frame) is the same point


@kernel(same_types=True)
def match_previous(m, mb_a, mb_b, previous, nbodies, match):
    """``match[i]``: the row of last step's manifolds (``previous``, a ``StoredImpulses``) with manifold
    i's body pair, or −1. Both lists are sorted by pair, so this is one merge. Only the manifolds that get
    solver points read theirs (``prepare_blocks``), so it needs nothing of the colouring and can run beside
    it (``World._respond``)."""
    prev_m, prev_key = previous.count, previous.keys
    j = 0
    for i in range(m):
        key = pair_key(mb_a[i], mb_b[i], nbodies)
        while j < prev_m and prev_key[j] < key:
            j += 1
        match[i] = j if (j < prev_m and prev_key[j] == key) else -1


def prepare_contacts(nb: int, blocks: Blocks, manifolds: Manifolds, m_first: np.ndarray, bodies: BodyState,
                     rules: tuple[int, int], match: np.ndarray, source: np.ndarray, previous: StoredImpulses,
                     warm_starting: bool, anchors_b: bool, pts: ContactPoints, Inv: np.ndarray) -> None:
    """``prepare_blocks`` over the ``nb`` blocks. Each block writes only its own points and lanes, so with
    ``PARALLEL_BLOCKS`` blocks or more they are shared out over the threads (``threads.run_on_threads``,
    ``prepare_blocks`` releasing the GIL): one share per set of lane rows in ``Inv`` (one set per thread
    of numba's pool), each taking the next block not yet taken, and the result is the serial one, bit for
    bit, whichever thread prepares which block. What it buys: ``prepare_blocks`` is most of the
    prepare_contacts stage, a tenth of the step; with two threads on two cores the stage went from 5.0 to
    3.2 ms per step on S3 and 4.7 to 3.2 ms on the S1 pile of 4096 (``python -m bench.threads``, as a
    ``prange``). A pool rather than a ``prange``, for the narrow phase's reason
    (``narrowphase.collide_pairs``): numba would compile the body three times more. Fewer blocks stay on
    the calling thread."""
    # one share per thread in use, each with its own set of lane rows in Inv, taking the blocks from one
    # counter (the first free thread takes the next block)
    shares, _ = share_out(nb, PARALLEL_BLOCKS, len(Inv) // (NI * STRIDE))
    claims = np.zeros(1, np.int64)

    def share(t: int, n: int) -> None:
        rows = Inv[t * NI * STRIDE:(t + 1) * NI * STRIDE]  # this share's own lane rows
        prepare_blocks(claims, nb, blocks, manifolds, m_first, bodies, rules, match, source, previous,
                       warm_starting, anchors_b, pts, rows)

    run_on_threads(share, shares)


@kernel(same_types=True)
def prepare_blocks(claims, nb, blocks, manifolds, m_first, bodies, rules, match, source, previous,
                   warm_starting, anchors_b, pts, Inv):
    """Turn the ``manifolds`` of the next block below ``nb`` not yet taken (counted in ``claims[0]``,
    ``atomics.py``), again until none is left, into solver contact points (one per manifold point, in
    ``pts``) and give them last step's impulses (``previous``) unless ``warm_starting`` is off. Each
    point's anchor on body B in B's frame (``pts.local_b``) is written only with ``anchors_b``: the
    projection and penalty methods measure the overlap from both anchors as the bodies move, the impulse
    method never reads it (its separation is tracked from ``cw``'s rows), and skipping it there saves a
    rotation and a 24-byte write per point: the stage on the settled S1 pile of 4096 took 6.2, 5.8 and 6.6
    ms a step against 6.8, 6.1 and 7.4 (one thread, runs alternated).

    A body that does not move counts as immovable (no inverse mass or inertia), so that nothing the solver
    does can change it. Friction and restitution combine by ``rules`` = (friction rule, restitution rule).
    Runs after ``color_contacts``, block by block so that the writes to ``cw`` stay close together; the
    slots of a lane beyond its manifold's points are zeroed. The Jacobian rows and effective masses are
    then computed for all lanes of a slot at once (``jacobian_lanes``), from the inverse inertias gathered
    into ``Inv``.

    Warm starting gives each point the impulses of last step's nearest point of the same pair within
    ``PERSISTENCE_DISTANCE`` (compared in body A's frame). A manifold taken from the contact cache
    (``source[i]`` ≥ 0, ``manifold_cache.reuse_rows``) needs no search: it has the points of the
    cache entry, which last step's manifold of the pair also had, in the same order (a reused manifold
    keeps its entry, a collided one is the entry), so point p's nearest last-step point is point p, up to
    rounding, and with as many points on both sides it takes point p's impulses. What it buys: the search
    compared every point with every point of last step's manifold, 16 distances for two resting boxes,
    some 20 µs of the S2 pyramid's 0.75 ms step, nearly all of whose manifolds come from the cache."""
    cb, cla, clb, cidx, cw = pts.bodies, pts.local_a, pts.local_b, pts.row, pts.cw
    order, blk_start, blk_lanes, blk_slots, blk_off = (blocks.order, blocks.start, blocks.lanes, blocks.slots,
                                                       blocks.offset)
    mb_a, mb_b, m_normal, m_npoints = manifolds.body_a, manifolds.body_b, manifolds.normal, manifolds.npoints
    m_pa, m_pb = manifolds.points_a, manifolds.points_b
    moving, pos, quat, vel, angvel = bodies.moving, bodies.pos, bodies.quat, bodies.vel, bodies.angvel
    inv_mass, inv_inertia = bodies.inv_mass, bodies.inv_inertia
    prev_first, prev_npoints = previous.first, previous.npoints
    prev_la, prev_ln, prev_lt = previous.anchor, previous.normal, previous.friction
    blk = atomic_add(claims, 0, 1)
    while blk < nb:
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
            ia = load_mat(inv_inertia, a) if moving[a] else ZERO_MAT
            ib = load_mat(inv_inertia, b) if moving[b] else ZERO_MAT
            for r in range(9):
                Inv[at(0, IIA + r, lane)] = ia[r]
                Inv[at(0, IIB + r, lane)] = ib[r]
            Inv[at(0, IMA2, lane)] = inv_mass[a] if moving[a] else 0.0
            Inv[at(0, IMB2, lane)] = inv_mass[b] if moving[b] else 0.0
            mu = combine_friction(bodies.friction[a], bodies.friction[b], rules[0])
            e = combine_restitution(bodies.restitution[a], bodies.restitution[b], rules[1])
            j = match[i] if warm_starting else -1
            same_points = j >= 0 and source[i] >= 0 and prev_npoints[j] == m_npoints[i]
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
                if anchors_b:
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
                if same_points:
                    pk = prev_first[j] + p
                    cw[at(c, LAM_N, 0)] = prev_ln[pk]
                    ft = load3(prev_lt, pk)
                    cw[at(c, LAM_T1, 0)] = dot(ft, t1)
                    cw[at(c, LAM_T2, 0)] = dot(ft, t2)
                elif j >= 0:
                    best = PERSISTENCE_DISTANCE * PERSISTENCE_DISTANCE
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
        blk = atomic_add(claims, 0, 1)


@helper(error_model="numpy")
def jacobian_lanes(nl, cw, base, Inv):
    """The cached Jacobian rows (ra×d, rb×d, Ia⁻¹(ra×d), Ib⁻¹(rb×d)) and the effective masses along
    d = n, t1, t2 of one slot of a block's lanes, from the anchors and directions already in ``cw`` and
    the lanes' inverse inertias and masses in ``Inv``. A lane loop without branches, compiled to SIMD
    instructions like the solver's lane loops: the lanes are the inner loop, the three directions the
    outer one. (The other way round, LLVM vectorised the loop over the three directions, which it cannot,
    and left the lanes one at a time: 28 ns a point, against some 3 ns now; the S2 pyramid's prepare took
    about 75 µs a step longer. Each lane's operations are the same, so are the numbers.)"""
    for direction in range(3):
        f = JAC + 12 * direction
        for j in range(nl):
            ra = get3(cw, base, RA, j)
            rb = get3(cw, base, RB, j)
            ia = (Inv[at(0, IIA, j)], Inv[at(0, IIA + 1, j)], Inv[at(0, IIA + 2, j)], Inv[at(0, IIA + 3, j)],
                  Inv[at(0, IIA + 4, j)], Inv[at(0, IIA + 5, j)], Inv[at(0, IIA + 6, j)],
                  Inv[at(0, IIA + 7, j)], Inv[at(0, IIA + 8, j)])
            ib = (Inv[at(0, IIB, j)], Inv[at(0, IIB + 1, j)], Inv[at(0, IIB + 2, j)], Inv[at(0, IIB + 3, j)],
                  Inv[at(0, IIB + 4, j)], Inv[at(0, IIB + 5, j)], Inv[at(0, IIB + 6, j)],
                  Inv[at(0, IIB + 7, j)], Inv[at(0, IIB + 8, j)])
            ims = Inv[at(0, IMA2, j)] + Inv[at(0, IMB2, j)]
            d = get3(cw, base, N + 3 * direction, j)
            rad = cross(ra, d)
            rbd = cross(rb, d)
            iad = mat_vec(ia, rad)
            ibd = mat_vec(ib, rbd)
            put3(cw, base, f, j, rad)
            put3(cw, base, f + 3, j, rbd)
            put3(cw, base, f + 6, j, iad)
            put3(cw, base, f + 9, j, ibd)
            # the effective mass along d: 1 / (1/ma + 1/mb + (ra×d)·Ia⁻¹(ra×d) + (rb×d)·Ib⁻¹(rb×d)),
            # the seed's impulse formula with its angular terms (impulse.py); 0 when both bodies are
            # immovable, and in an empty slot (d = 0)
            inv_k = ims + dot(rad, iad) + dot(rbd, ibd)
            cw[at(base, MASS_N + direction, j)] = dot(d, d) / inv_k if inv_k > 0.0 else 0.0
