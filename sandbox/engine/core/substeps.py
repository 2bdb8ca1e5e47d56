"""The response stage of a step: sub-steps of integration and the selected response method, in one
kernel (one call per step instead of dozens, which matters for small scenes).

The order within a sub-step is Box2D v3's "soft step" (see ``solver.py``): integrate velocities; warm
start; solve (with the soft position bias); integrate positions; relax (solve without bias); then bound
the speed at which deep overlaps come apart (``depenetration.py``). Restitution comes after the last
sub-step. Joints and mouse grabs are solved in the same passes, before the contacts. The projection and
penalty methods take the same loop, with their own contact treatment in place of the impulse solver.
"""

from __future__ import annotations

import time

from numba import njit, objmode

from .depenetration import limit_separation, record_speeds
from .integrate import integrate_positions, integrate_velocities
from .solver import (
    apply_restitution,
    penalty_contacts,
    project_contacts,
    solve_contacts,
    solve_distance_joints,
    solve_grab,
    warm_start,
)

IMPULSE = 0
PROJECTION = 1
PENALTY = 2


@njit(cache=True)
def clock():
    """Seconds of a monotonic clock (Python's ``perf_counter``, reached from compiled code)."""
    with objmode(t="float64"):
        t = time.perf_counter()
    return t


@njit(cache=True)
def solve_joints_and_grabs(joints, grabs, bodies, h, use_bias, settings):
    """One pass over the distance joints and the mouse grabs."""
    n, moving, pos, quat, vel, angvel = bodies[:6]
    inv_mass, inv_inertia = bodies[8], bodies[10]
    nj, jb, jla, jlb, jlen, jrope, jlam, jworld = joints
    joint_hertz, joint_zeta = settings[9], settings[10]
    if nj:
        solve_distance_joints(nj, jb, jla, jlb, jlen, jrope, jlam, jworld, pos, quat, vel, angvel, inv_mass,
                              inv_inertia, moving, h, use_bias, joint_hertz, joint_zeta, False)
    ng, gbody, glocal, gtarget, glam, gparams = grabs
    for g in range(ng):
        solve_grab(gbody[g], glocal[g], gtarget[g], glam[g], pos, quat, vel, angvel, inv_mass, inv_inertia,
                   h, gparams[g, 0], gparams[g, 1], gparams[g, 2], use_bias)


@njit(cache=True)
def run_substeps(mode, substeps, iterations, dt, bodies, contacts, joints, grabs, settings):
    """Advance the velocities and positions of the moving bodies by ``dt`` in ``substeps`` sub-steps,
    with the response method ``mode`` (IMPULSE, PROJECTION or PENALTY) and ``iterations`` velocity
    iterations per step shared over the sub-steps (the earlier sub-steps get the remainder).

    ``bodies = (n, moving, pos, quat, vel, angvel, force, torque, inv_mass, inv_inertia_local,
    inv_inertia, gravity_scale, radius, dpos, drot, speed, scratch)``; ``contacts = (npts, nb, B, mb_a,
    mb_b, S, V, D)`` as prepared by ``solver.color_contacts`` and ``solver.prepare_contacts``;
    ``joints = (nj, jb, jla, jlb, jlen, jrope, jlam, jworld)``; ``grabs = (ng, body, local anchor,
    target, impulse, (frequency, damping ratio, max force))``; ``settings = (gx, gy, gz, linear damping,
    angular damping, contact hertz, contact damping ratio, max push velocity, linear slop, joint hertz,
    joint damping ratio, penalty hertz, penalty damping ratio, restitution threshold)``.
    Returns the seconds spent integrating (the rest is the response's)."""
    (n, moving, pos, quat, vel, angvel, force, torque, inv_mass, inv_inertia_local, inv_inertia,
     gravity_scale, radius, dpos, drot, speed, scratch) = bodies
    npts, nb, B, mb_a, mb_b, S, V, D = contacts
    nj, jb, jla, jlb, jlen, jrope, jlam, jworld = joints
    gravity = (settings[0], settings[1], settings[2])
    linear_damping, angular_damping = settings[3], settings[4]
    # Box2D v3's rule: the contact spring may not be stiffer than a quarter of the sub-step rate
    h = dt / substeps
    hertz = min(settings[5], 0.25 / h)
    zeta, max_push, slop = settings[6], settings[7], settings[8]
    base = iterations // substeps
    extra = iterations % substeps
    for i in range(n):
        for k in range(3):
            dpos[i, k] = 0.0
            drot[i, k] = 0.0
    record_speeds(n, moving, vel, angvel, radius, speed)
    t_int = 0.0
    for sub in range(substeps):
        t0 = clock()
        integrate_velocities(n, moving, vel, angvel, quat, force, torque, inv_mass, inv_inertia_local,
                             gravity_scale, gravity, h, linear_damping, angular_damping)
        t_int += clock() - t0
        if mode == IMPULSE:
            warm_start(nb, B, mb_a, mb_b, S[4], V, vel, angvel, inv_mass, moving)
            if nj:
                solve_distance_joints(nj, jb, jla, jlb, jlen, jrope, jlam, jworld, pos, quat, vel, angvel,
                                      inv_mass, inv_inertia, moving, h, True, settings[9], settings[10],
                                      True)
            for _ in range(max(base + (sub < extra), 1)):
                solve_joints_and_grabs(joints, grabs, bodies, h, True, settings)
                solve_contacts(nb, B, mb_a, mb_b, S[4], V, D, dpos, drot, vel, angvel, inv_mass, moving, h,
                               True, hertz, zeta, max_push, slop)
        else:
            solve_joints_and_grabs(joints, grabs, bodies, h, True, settings)
            if mode == PENALTY:
                penalty_contacts(npts, S, pos, quat, vel, angvel, inv_mass, inv_inertia, moving, h,
                                 settings[11], settings[12])
        t0 = clock()
        integrate_positions(n, moving, pos, quat, vel, angvel, inv_inertia_local, inv_inertia, h, dpos, drot)
        t_int += clock() - t0
        if mode == IMPULSE:
            solve_joints_and_grabs(joints, grabs, bodies, h, False, settings)
            solve_contacts(nb, B, mb_a, mb_b, S[4], V, D, dpos, drot, vel, angvel, inv_mass, moving, h,
                           False, hertz, zeta, max_push, slop)
        elif mode == PROJECTION:
            project_contacts(npts, S, pos, quat, inv_mass, moving)
        limit_separation(n, npts, S, vel, angvel, inv_mass, moving, radius, speed, scratch, max_push)
    if mode == IMPULSE:
        apply_restitution(npts, S, vel, angvel, inv_mass, moving, settings[13])
    return t_int
