"""Distance joints: rods and ropes between two bodies, or between a body and a fixed world point.

A distance joint keeps |p_b − p_a| = L between two anchors (Box2D's distance joint), solved as a soft
constraint (``soft_constraint.py``) in the same passes as the contacts: the relative velocity of the
anchors along the joint's axis u is driven to −bias·(|p_b − p_a| − L), with the effective mass
1/(1/ma + (ra×u)·Ia⁻¹(ra×u) + 1/mb + (rb×u)·Ib⁻¹(rb×u)). A rope only pulls, and while slack acts like a
speculative contact. Newton's cradle hangs its balls on such rods.
"""

from __future__ import annotations

from .impulse import apply_impulse_pair, point_velocity
from .jit import helper
from .soft_constraint import soft_coefficients
from .vecmath import (
    ZERO_MAT,
    add,
    cross,
    dot,
    length,
    load3,
    load4,
    load_mat,
    mat_vec,
    quat_rotate,
    scale,
    sub,
)


@helper
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


@helper
def solve_distance_joints(joints, bodies, h, use_bias, hertz, zeta, warm):
    """Distance joints: keep |p_b − p_a| = L between two anchors (Box2D's distance joint, soft).

    ``joints`` is a ``Joints`` record, ``bodies`` a ``BodyState``. A rod holds the length both ways; a rope
    only pulls (accumulated impulse ≤ 0) and, while slack, acts like a speculative contact: it lets the
    ends separate just up to the length within the sub-step. With ``warm`` the pass only re-applies the
    accumulated impulses ``joints.impulse``."""
    nj, jb, jla, jlb, jworld = joints.count, joints.bodies, joints.local_a, joints.local_b, joints.world_point
    jlen, jrope, jlam = joints.length, joints.rope, joints.impulse
    pos, quat, vel, angvel, moving = bodies.pos, bodies.quat, bodies.vel, bodies.angvel, bodies.moving
    inv_mass, inv_inertia = bodies.inv_mass, bodies.inv_inertia
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
        ima, ia = inv_mass[a], load_mat(inv_inertia, a)
        imb, ib = (inv_mass[b], load_mat(inv_inertia, b)) if b >= 0 else (0.0, ZERO_MAT)
        if warm:
            apply_impulse_pair(vel, angvel, a, b, ima, imb, ia, ib, ra, rb, scale(u, jlam[j]))
            continue
        rau = cross(ra, u)
        k = ima + dot(rau, mat_vec(ia, rau))
        vb = (0.0, 0.0, 0.0)
        if b >= 0:
            rbu = cross(rb, u)
            k += imb + dot(rbu, mat_vec(ib, rbu))
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
        apply_impulse_pair(vel, angvel, a, b, ima, imb, ia, ib, ra, rb, scale(u, lam))
