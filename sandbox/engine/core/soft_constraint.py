"""Soft constraints: a constraint solved as a damped spring of a chosen frequency instead of rigidly.

A rigid velocity constraint removes the whole error at once and, fed a position error through
Baumgarte's bias, overshoots and jitters as the time step or the stiffness changes. Expressing the
correction as an implicitly integrated spring–damper of frequency f and damping ratio ζ gives three
coefficients that the solver uses in place of the bias (Catto, "Soft Constraints", GDC 2011; Box2D v3's
``b2MakeSoft``): its stiffness is bounded by the sub-step rate, so deep overlaps come apart smoothly. The
contacts, the distance joints and the mouse grab all use it.
"""

from __future__ import annotations

import math

from .jit import helper


@helper
def soft_coefficients(hertz, zeta, h):
    """Soft constraint coefficients (bias rate, mass scale, impulse scale) of a spring of frequency
    ``hertz`` and damping ratio ``zeta`` integrated implicitly over ``h``: with ω = 2πf,
    bias rate = ω / (2ζ + hω), mass scale = hω(2ζ + hω) / (1 + hω(2ζ + hω)), impulse scale = 1 / (1 +
    hω(2ζ + hω)). A frequency of 0 is a rigid constraint with no bias."""
    if hertz <= 0.0:
        return 0.0, 1.0, 0.0
    omega = 2.0 * math.pi * hertz
    a1 = 2.0 * zeta + h * omega
    a2 = h * omega * a1
    a3 = 1.0 / (1.0 + a2)
    return omega / a1, a2 * a3, a3
