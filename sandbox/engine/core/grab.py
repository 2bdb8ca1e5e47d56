"""The mouse grab: a soft spring from a point of a body to the cursor's target (Box2D's mouse joint).

Its stiffness comes from a frequency and a damping ratio through the body's 3×3 effective mass at the
anchor, K = m⁻¹·E + [r]ᵀ·I⁻¹·[r], so light and heavy bodies respond alike, and its force is capped, so
dragging a body into a wall cannot make anything explode.
"""

from __future__ import annotations

from .impulse import point_velocity
from .jit import helper
from .soft_constraint import soft_coefficients
from .vecmath import (
    add,
    cross,
    length,
    load3,
    load4,
    load_mat,
    mad,
    mat_inverse,
    mat_vec,
    quat_rotate,
    scale,
    store3,
    sub,
)


@helper
def solve_grabs(grabs, bodies, h, use_bias):
    """One pass over the mouse grabs (a ``Grabs`` record): each pulls its body's anchor towards its target
    with the impulse that the soft spring asks for, K⁻¹·(v_anchor + bias·C) scaled by the soft
    coefficients, accumulated in ``grabs.impulse[g]`` and clamped to ``max_force·h``."""
    pos, quat, vel, angvel = bodies.pos, bodies.quat, bodies.vel, bodies.angvel
    inv_mass, inv_inertia = bodies.inv_mass, bodies.inv_inertia
    for g in range(grabs.count):
        local_anchor = grabs.local_anchor[g]
        target = grabs.target[g]
        lam = grabs.impulse[g]
        hertz, zeta, max_force = grabs.frequency[g], grabs.damping_ratio[g], grabs.max_force[g]
        i = grabs.body[g]
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
