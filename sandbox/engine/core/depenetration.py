"""The bound on how fast deep overlaps come apart, applied per contact so that momentum is conserved.

Sequential impulses push each overlap apart at up to ``max_push`` (the soft contact's bias is capped per
contact), but through a chain of deep overlaps (bodies spawned inside each other) those pushes add up body
after body: the outer bodies of a pile spawned at one point then leave at many times ``max_push``.
PhysX bounds this with a maximum depenetration velocity; here the bound acts on pairs, like the solver
itself: wherever a contact point was deeply overlapping when the step began and its two bodies now
separate faster than ``max_push`` along the normal, an equal and opposite impulse pair takes the excess
out. Impulse pairs conserve linear and angular momentum exactly. Since pairs alone still let a chain of
overlaps add up, the bodies with a deep overlap are then also held to their own speed at the start of the
step (or ``max_push``). The earlier per-body speed cap applied to every body in contact and lost momentum
in ordinary impacts (issue 9); ordinary impacts and resting contacts never overlap that deeply, so now
nothing here touches them.
"""

from __future__ import annotations

from .contact_rows import MASS_N, SEP0, at, point_normal_velocity, push_point_normal
from .jit import helper
from .vecmath import length, load3, scale, store3

DEEP_OVERLAP = 0.05
"""m: contact points overlapping deeper than this when the step began separate at most at ``max_push``.
Resting contacts overlap by millimetres, and the soft push-out of an overlap this shallow stays well below
``max_push`` anyway (bias rate · depth, about 1 m/s at the default stiffness)."""

PASSES = 2


@helper
def record_speeds(bodies):
    """``bodies.speed[i]`` = |v| + |ω|·r of each moving body (r its bounding radius): how fast any point of
    it moves, before contacts."""
    n, moving, vel, angvel, radius, speed = (bodies.n, bodies.moving, bodies.vel, bodies.angvel,
                                             bodies.radius, bodies.speed)
    for i in range(n):
        speed[i] = (length(load3(vel, i)) + length(load3(angvel, i)) * radius[i]) if moving[i] else 0.0


@helper
def deep_points(c, row, cw, deep):
    """The numbers of the ``c`` solver contact points (each point's place ``row`` in the wide array ``cw``,
    ``ContactPoints``) that overlapped by more than ``DEEP_OVERLAP`` when the step began, in order, written
    into ``deep``; returns how many: the only ones ``limit_separation`` bounds. Found once a step (the
    overlap at the start of the step does not change over its sub-steps), so that each sub-step's bound
    visits those few points, usually none, instead of reading every point's row (a cache miss each: the
    S1 pile of 4096 has 17 000 points)."""
    count = 0
    for k in range(c):
        if not cw[at(row[k], SEP0, 0)] > -DEEP_OVERLAP:  # NaN counts as deep, as it always did
            deep[count] = k
            count += 1
    return count


@helper
def limit_separation(bodies, deep_pts, pts, max_push):
    """Bound the speed at which deep overlaps come apart, in two stages.

    1. Pairs (momentum conserved): for each of the solver contact points (``pts``, as prepared by
       ``contact_prepare.prepare_contacts``) that overlapped by more than ``DEEP_OVERLAP`` at the start
       of the step (their numbers ``deep_pts``, from ``deep_points``), if the relative normal velocity
       vn = (v_b + ω_b × r_b − v_a − ω_a × r_a)·n exceeds ``max_push``, apply the impulse
       λ = −m_eff·(vn − max_push) along n (−λ on A), which makes it ``max_push`` (Gauss–Seidel,
       ``PASSES`` passes).
    2. Bodies: a pairwise bound lets a chain of overlaps add up (each body ``max_push`` faster than the
       one inside it), so a body with a deep overlap (flagged in ``bodies.scratch``) may also not come
       out of the sub-step faster than max(its speed at the start of the step, ``max_push``), where speed
       is |v| + |ω|·r (``record_speeds``): its velocities are scaled down. This stage alone changes
       momentum, and only for bodies that were spawned into or forced into each other, never in an
       impact between free bodies (speculative contacts stop those before they overlap this deeply).

    Returns the number of bodies scaled down."""
    if len(deep_pts) == 0:
        # nothing to bound (a step's usual case): no pass over the bodies, which only this function's
        # own flags could select
        return 0
    cb, cidx, cw = pts.bodies, pts.row, pts.cw
    n, moving, vel, angvel = bodies.n, bodies.moving, bodies.vel, bodies.angvel
    radius, speed, deep = bodies.radius, bodies.speed, bodies.scratch
    for i in range(n):
        deep[i] = 0.0
    for _ in range(PASSES):
        for k in deep_pts:
            i = cidx[k]
            a = cb[k, 0]
            b = cb[k, 1]
            deep[a] = 1.0
            deep[b] = 1.0
            vn = point_normal_velocity(cw, i, a, b, vel, angvel)
            if vn <= max_push:
                continue
            push_point_normal(cw, i, a, b, -cw[at(i, MASS_N, 0)] * (vn - max_push), bodies)
    capped = 0
    for i in range(n):
        if deep[i] == 0.0 or not moving[i]:
            continue
        bound = max(speed[i], max_push)
        v = length(load3(vel, i))
        w = length(load3(angvel, i)) * radius[i]
        if v + w > bound:
            f = bound / (v + w)
            store3(vel, i, scale(load3(vel, i), f))
            store3(angvel, i, scale(load3(angvel, i), f))
            capped += 1
    return capped
