"""The projection method: resolve an overlap by moving the bodies apart, leaving velocities alone.

The simplest collision response, kept for teaching: each contact pushes its two bodies apart along the
normal by the current overlap, shared in proportion to the inverse masses (so a static body does not
move and two equal bodies move half each). It removes penetration but not the approach velocity, which
is the method's flaw: a body keeps its approach speed and pushes into the contact again every step (the
snooker ball that keeps pushing), and nothing bounces.
"""

from __future__ import annotations

from .contact_rows import N, anchor_offset, get3
from .jit import helper
from .vecmath import dot, load3, mad, store3


@helper
def project_contacts(c, pts, bodies):
    """Move each of the ``c`` contact points' bodies apart along the normal by the current overlap
    (depth = −(p_b − p_a)·n, from the anchors in the bodies' frames), shared in proportion to the inverse
    masses: body a moves by −n·depth·(1/ma)/(1/ma + 1/mb), body b by +n·depth·(1/mb)/(1/ma + 1/mb)."""
    cb, cla, clb, cidx, cw = pts.bodies, pts.local_a, pts.local_b, pts.row, pts.cw
    pos, quat, inv_mass, moving = bodies.pos, bodies.quat, bodies.inv_mass, bodies.moving
    for k in range(c):
        a = cb[k, 0]
        b = cb[k, 1]
        ima = inv_mass[a] if moving[a] else 0.0
        imb = inv_mass[b] if moving[b] else 0.0
        w = ima + imb
        if w == 0.0:
            continue
        n = get3(cw, cidx[k], N, 0)
        depth = -dot(anchor_offset(k, a, b, pos, quat, cla, clb), n)
        if depth <= 0.0:
            continue
        store3(pos, a, mad(load3(pos, a), n, -depth * ima / w))
        store3(pos, b, mad(load3(pos, b), n, depth * imb / w))
