"""Friction: how two bodies' friction coefficients combine into the one their contact uses.

Coulomb's law bounds the friction force by μ times the normal force, |Ft| ≤ μ·Fn: below that bound the
contact sticks, at it the contact slides (the solvers apply it as a clamp of the accumulated tangential
impulse to the disc of radius μ·λn, ``contact_solver.py`` and ``contact_solver_reference.py``). A body
has one coefficient, a contact needs one: engines combine the two by a rule, and the rule decides, for
instance, at what angle a box starts sliding down a ramp (tan θ = μ).
"""

from __future__ import annotations

import math

from .jit import kernel

# ``world.friction_rule``, in the order of ``FRICTION_RULES`` in world.py
RULE_GEOMETRIC = 0  # √(μa·μb): Box2D's and Bullet's default
RULE_MIN = 1
RULE_MAX = 2
RULE_AVERAGE = 3
RULE_PRODUCT = 4


@kernel
def combine_friction(mu_a, mu_b, rule):
    """The pair's friction coefficient from the two bodies' values under the selected rule."""
    if rule == RULE_MIN:
        return min(mu_a, mu_b)
    if rule == RULE_MAX:
        return max(mu_a, mu_b)
    if rule == RULE_AVERAGE:
        return 0.5 * (mu_a + mu_b)
    if rule == RULE_PRODUCT:
        return mu_a * mu_b
    return math.sqrt(mu_a * mu_b)
