"""Impulses: what an impulse at a point does to two rigid bodies, and the impulse that a contact needs.

An impulse ``p`` applied at the offset ``r`` from a body's centre of mass changes its velocity by
``p/m`` and its angular velocity by ``I⁻¹(r × p)`` (world frame). Along a direction ``d`` the two
bodies of a contact then respond to a unit impulse with the relative velocity change

    1/K = 1/mA + 1/mB + d·((IA⁻¹(rA×d))×rA) + d·((IB⁻¹(rB×d))×rB),

so the impulse that changes the relative normal velocity from ``v_rel`` to ``−e·v_rel`` is the seed's
formula ``j = −(1 + e)·v_rel / (1/K)`` (Catto, "Iterative Dynamics", GDC 2005; Millington, "Game Physics
Engine Development", ch. 14). ``K`` is the *effective mass* along ``d``. The wide solver caches the rows
rA×d and IA⁻¹(rA×d) once per step (``contact_prepare.jacobian_lanes``); the reference solver
(``contact_solver_reference.py``) calls ``effective_mass`` as written here.
"""

from __future__ import annotations

from .jit import helper
from .vecmath import add, cross, dot, load3, mad, mat_vec, store3, sub


@helper
def point_velocity(vel, angvel, i, r):
    """Velocity of the material point at offset ``r`` from body ``i``'s centre: v + ω × r."""
    return add(load3(vel, i), cross(load3(angvel, i), r))


@helper
def effective_mass(ima, imb, ia, ib, ra, rb, d):
    """The effective mass K along the unit direction ``d`` of a contact between bodies of inverse masses
    ``ima``, ``imb`` and world inverse inertias ``ia``, ``ib`` (row-major 9-tuples) at the anchors
    ``ra``, ``rb``: 1/K = 1/mA + 1/mB + d·((IA⁻¹(rA×d))×rA) + d·((IB⁻¹(rB×d))×rB). Each angular term is
    computed in its equal form (rA×d)·IA⁻¹(rA×d) (the scalar triple product a·(b×c) = (c×a)·b), with the
    same operations as the wide solver's cached rows, so both solvers get the same K to the last bit.
    Zero when neither body can move."""
    rad = cross(ra, d)
    rbd = cross(rb, d)
    inv_k = ima + imb + dot(rad, mat_vec(ia, rad)) + dot(rbd, mat_vec(ib, rbd))
    return dot(d, d) / inv_k if inv_k > 0.0 else 0.0


@helper
def apply_impulse_pair(vel, angvel, a, b, ima, imb, ia, ib, ra, rb, p):
    """Apply impulse ``p`` to body b at ``rb`` and ``-p`` to body a at ``ra`` (Newton's third law), for
    bodies of inverse masses ``ima``, ``imb`` and world inverse inertias ``ia``, ``ib`` (row-major
    9-tuples): Δv = ±p/m, Δω = ±I⁻¹(r × p). b = −1 stands for the immovable world."""
    store3(vel, a, mad(load3(vel, a), p, -ima))
    store3(angvel, a, sub(load3(angvel, a), mat_vec(ia, cross(ra, p))))
    if b >= 0:
        store3(vel, b, mad(load3(vel, b), p, imb))
        store3(angvel, b, add(load3(angvel, b), mat_vec(ib, cross(rb, p))))


@helper
def push_pair(va, wa, vb, wb, ima, imb, d, lam, ja, jb):
    """Velocities of bodies a and b after the impulse ``lam`` along ``d`` (−lam on a), with the cached
    angular responses ``ja`` = Ia⁻¹(ra×d) and ``jb`` = Ib⁻¹(rb×d)."""
    return (mad(va, d, -lam * ima), mad(wa, ja, -lam), mad(vb, d, lam * imb), mad(wb, jb, lam))
