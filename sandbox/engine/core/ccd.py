"""Continuous collision detection by speculative contacts: nothing passes through anything.

A body that moves farther in one step than the thickness of what it hits would, in a purely discrete
engine, be in front of a wall at one step and behind it at the next, and never touch it (tunnelling).
Instead of sweeping every shape through its motion (time of impact, Box2D v3's continuous stage), the
sandbox makes contacts *before* the bodies touch (Catto, "Continuous Collision", GDC 2013: speculative
contacts): each body's bounding box, and the distance within which a pair is collided, is enlarged by the
distance the body can travel in the step, (|v| + |ω|·r)·dt, so a pair that may meet during the step
already has a manifold at its start, with a negative depth (the gap). The solver lets such a contact
close the gap within the sub-step but not more (``contact_solver.py``: v_n ≥ −gap/h), so the body stops
at the surface, whatever its speed. The narrow phase gives a full speculative manifold (face contacts
clipped as if touching, up to four points, and several points for a capsule), so the stopping impulse
does not spin the body about a single corner.

Without CCD the enlargement is capped (``World.max_speculative``): a fast bullet then tunnels, which the
tunnelling lesson shows on purpose. The cost of CCD is a larger box for fast bodies, hence more candidate
pairs while they fly.
"""

from __future__ import annotations

from .jit import kernel
from .vecmath import length, load3


@kernel(same_types=True)
def speculative_margins(n, vel, angvel, radius, dt, base, cap, out):
    """``out[i] = base + min((|v| + |ω|·r)·dt, cap)``: how far before touching body i's contacts are
    made: ``base`` always (contacts a little before touching keep resting contacts steady), plus the
    distance any point of the body can travel in the step ``dt`` (r its bounding radius), at most
    ``cap`` (infinite with CCD on)."""
    for i in range(n):
        travel = (length(load3(vel, i)) + length(load3(angvel, i)) * radius[i]) * dt
        out[i] = base + min(travel, cap)
